// SPDX-License-Identifier: GPL-2.0
/*
 * hvnoise top: a live per-CPU view from our own instance, refreshed every
 * interval, in 80 columns; q or Ctrl-C quits.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "builtin.h"
#include "tool.h"
#include "analysis/episodes.h"
#include "out/human.h"
#include "tracedat/pages.h"
#include "session.h"

static bool quit;			/* 'q' pressed */
static struct termios saved_tty;
static bool tty_raw;

static void restore_tty(void)
{
	if (tty_raw)
		tcsetattr(0, TCSANOW, &saved_tty);
	tty_raw = false;
}

struct top_args {
	double interval;
	long count;
};

static const struct hvn_opt top_opts[] = {
	HVN_OPT_SECS_ROW("interval", 'I', struct top_args, interval,
			0.1, 3600, "refresh period (default 1 s)"),
	HVN_OPT_INT_ROW("count", 'n', "N", struct top_args, count, 1, 1e9,
			"quit after N refreshes"),
	HVN_OPT_END_ROW
};

static const struct hvn_cmd top_cmd = {
	.name = "top",
	.synopsis =
"[-I TIME] [-n COUNT] [--cpus LIST] [--devices LIST]\n"
"                   [--source SRC] [--param N=V]... [-e SYS[:EVENT]]... [-b KB]",
	.opts = top_opts,
	.more = hvn_session_options,
	.notes = "  q or Ctrl-C quits\n",
	.renamed_from = 'i',
	.renamed_to = 'I',
	.renamed_note = HVN_I_IS_INPUT,
};

struct both {
	struct hvn_analysis cur, tot;
};

static void feed(void *ctx, int cpu, uint64_t ts, const uint8_t *d,
		 uint32_t len)
{
	struct both *b = ctx;

	hvn_an_event(&b->cur, cpu, ts, d, len);
	hvn_an_event(&b->tot, cpu, ts, d, len);
}

static void draw(const struct hvn_session *s, struct both *b, double ivl,
		 uint64_t elapsed, uint64_t missed)
{
	const struct hvn_analysis *cur = &b->cur, *tot = &b->tot;
	char now[32], line[256];
	time_t t = time(NULL);
	struct tm tm;
	int rows = 0;

	localtime_r(&t, &tm);
	strftime(now, sizeof(now), "%H:%M:%S", &tm);
	/* A terminal gets a screen; a pipe or a file one frame after another
	 * (batch, as top -b), without escape sequences. */
	static unsigned long frames;

	if (isatty(STDOUT_FILENO))
		printf("\033[H\033[2J");
	else if (frames++)
		printf("\n");
	printf("hvnoise top  %s  every %.1f s  up %llus  %s  q quits\n", now,
	       ivl, (unsigned long long)(elapsed / 1000000000ull),
	       s->source == HVN_SRC_MODULE ?
	       (s->mod_gone ? "MODULE UNLOADED" : "module loaded") :
	       s->source == HVN_SRC_BPF ? "BPF source" : "no module: IRQs only");
	printf(" CPU  steal ms/s  lost ms/s  worst ms  storms  migr  IRQ/s   lost ms total\n");
	for (int i = 0; i <= tot->max_cpu && rows < 40; i++) {
		const struct hvn_cpu *c = &tot->cpu[i];
		const struct hvn_cpu *n = i <= cur->max_cpu ? &cur->cpu[i] :
				NULL;
		static const struct hvn_cpu zero;

		if (!c->seen || !(c->watched || c->lost_n || c->steal_n ||
				  c->storms || c->irqs || c->mig_in))
			continue;
		if (!n)
			n = &zero;
		rows++;
		printf("%4d%c %10.2f %10.2f %9.2f %7llu %5llu %7.0f %15.2f\n", i,
		       c->watched ? '*' : ' ', n->steal_ns / 1e6 / ivl,
		       n->lost_ns / 1e6 / ivl, c->worst[1].dur / 1e6,
		       (unsigned long long)c->storms,
		       (unsigned long long)(c->mig_in + c->mig_out) / 1,
		       n->irqs / ivl, c->lost_ns / 1e6);
	}
	if (!rows)
		printf("   (no events yet)\n");
	printf("\nLast worst episodes:\n");
	for (int i = 0; i < tot->ntop && i < 5; i++) {
		hvn_fmt_episode(tot, &tot->top[i], line, sizeof(line));
		printf("  %.76s\n", line);
	}
	if (!tot->ntop)
		printf("  none\n");
	if (missed)
		printf("\nOVERRUN: %llu pages came after lost events\n",
		       (unsigned long long)missed);
	fflush(stdout);
}

/* The BPF source's records go where the pages' events go. */
/* A top under way. */
struct topst {
	struct top_args a;
	struct hvn_session s;
	struct hvn_schema *schema;
	struct hvn_rb rb;
	struct tep_handle *tep;
	struct both b;
	bool an_ready;
	long done;
	uint64_t start;
	void *page;
};

static int top_init(struct hvn_tool *t)
{
	struct topst *p = t->priv;

	p->tep = hvn_session_tep(t->s);
	p->schema = calloc(1, sizeof(*p->schema));
	p->page = malloc(t->s->page_size);
	if (!p->tep || !p->schema || !p->page || hvn_an_init(&p->b.cur, p->schema) ||
	    hvn_an_init(&p->b.tot, p->schema)) {
		hvn_err("cannot read the event formats from tracefs");
		return HVN_EXIT_FAIL;
	}
	p->an_ready = true;
	hvn_schema_bind(p->schema, p->tep);
	p->b.tot.top_max = 5;
	p->rb = (struct hvn_rb){ .event = feed, .ctx = &p->b,
				 .page_size = t->s->page_size };
	p->rb.commit_size = tep_get_header_page_size(p->tep);
	if (p->rb.commit_size != 4 && p->rb.commit_size != 8)
		p->rb.commit_size = sizeof(long);
	return 0;
}

static int top_enable(struct hvn_tool *t)
{
	struct topst *p = t->priv;

	hvn_catch_stop();
	if (isatty(0) && !tcgetattr(0, &saved_tty)) {
		struct termios raw = saved_tty;

		raw.c_lflag &= ~(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tty_raw = !tcsetattr(0, TCSANOW, &raw);
		atexit(restore_tty);
	}
	p->start = hvn_now(CLOCK_MONOTONIC);
	return 0;
}

/* Wait out the interval, watching for q. */
static void top_wait(struct hvn_tool *t)
{
	struct topst *p = t->priv;
	uint64_t until = hvn_now(CLOCK_MONOTONIC) + p->a.interval * 1e9;
	struct pollfd pfd = { .fd = 0, .events = POLLIN };

	for (;;) {
		uint64_t now = hvn_now(CLOCK_MONOTONIC);
		char ch;

		if (quit || hvn_stop_sig || now >= until)
			break;
		if (poll(&pfd, tty_raw ? 1 : 0, (until - now) / 1000000 + 1) > 0) {
			if (read(0, &ch, 1) == 1 && (ch == 'q' || ch == 'Q'))
				quit = 1;
			else if (!tty_raw)
				pfd.fd = -1;
		}
	}
}

static enum hvn_tick top_tick(struct hvn_tool *t)
{
	struct topst *p = t->priv;
	uint64_t a, z;

	if (quit)
		return HVN_TICK_DONE;
	hvn_an_reset_counts(&p->b.cur);
	/* On the screen, not stderr. */
	t->s->mod_quiet = true;
	hvn_session_module_check(t->s, &a, &z);
	hvn_tool_feed(t->s, p->page, &p->rb);
	hvn_an_finish(&p->b.cur);
	hvn_an_finish(&p->b.tot);
	draw(t->s, &p->b, p->a.interval, hvn_now(CLOCK_MONOTONIC) - p->start,
	     p->rb.missed_pages);
	if (p->a.count && ++p->done >= p->a.count)
		return HVN_TICK_DONE;
	return HVN_TICK_WAIT;
}

static int top_finish(struct hvn_tool *t)
{
	(void)t;
	restore_tty();
	return HVN_EXIT_OK;
}

static void top_free(struct hvn_tool *t)
{
	struct topst *p = t->priv;

	if (p->an_ready) {
		hvn_an_free(&p->b.cur);
		hvn_an_free(&p->b.tot);
	}
	free(p->schema);
	free(p->page);
	if (p->tep)
		tep_free(p->tep);
}

static const struct hvn_tool_ops top_ops = {
	.cmd = &top_cmd,
	.prefix = "hvnoise-top",
	.wait_first = true,
	.init = top_init,
	.enable = top_enable,
	.tick = top_tick,
	.wait = top_wait,
	.finish = top_finish,
	.free = top_free,
};

int cmd_top(int argc, char **argv)
{
	struct topst p = { .a = { .interval = 1 } };

	return hvn_tool_main(&top_ops, &p.a, &p, &p.s, argc, argv);
}
