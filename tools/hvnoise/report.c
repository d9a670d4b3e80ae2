// SPDX-License-Identifier: GPL-2.0
/*
 * hvnoise report: per-CPU totals and the worst episodes from trace.dat
 * files, as text or as JSON (schema in hvnoise(8)).  One streaming pass per
 * file; a file that stops early is reported up to where it stops.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "builtin.h"
#include "hvnoise/events.h"
#include "hvnoise/watch.h"
#include "analysis/episodes.h"
#include "out/prom.h"
#include "out/human.h"
#include "out/jsonw.h"
#include "out/perfetto.h"
#include "analysis/when.h"
#include "tracedat/meta.h"
#include "tracedat/tracedat.h"

#define SCHEMA_VERSION	1

#define MAX_INPUTS	256
#define MAX_GATES	16

/* report --fail-if NAME>VALUE: what a health check gates on. */
enum gate_kind { G_LOST, G_LOST_TOTAL, G_UNEXPLAINED, G_STEAL, G_STORMS,
		 G_MIGRATIONS, G_OVERRUNS };

static const struct {
	const char *name;
	bool time;
	const char *what;
} gate_names[] = {
	[G_LOST] = { "lost", true, "the longest lost episode of a CPU" },
	[G_LOST_TOTAL] = { "lost-total", true, "a CPU's lost time" },
	[G_UNEXPLAINED] = { "unexplained", true, "a CPU's unexplained lost time" },
	[G_STEAL] = { "steal", true, "a CPU's steal" },
	[G_STORMS] = { "storms", false, "interrupt storms" },
	[G_MIGRATIONS] = { "migrations", false, "IRQ migrations" },
	[G_OVERRUNS] = { "overruns", false, "events lost to overruns" },
};

struct gate {
	enum gate_kind kind;
	double limit;			/* seconds, or a count */
	const char *spec;
};

struct report_args {
	bool json, prom, hist;
	const char *since, *until, *perfetto;
	long top;
	const char *input[MAX_INPUTS];	/* -i FILE, as trace-cmd and perf */
	int ninput;
	struct gate gate[MAX_GATES];
	int ngate;
};

static int add_gate(void *vals, const struct hvn_opt *o, const char *arg)
{
	struct report_args *a = vals;
	const char *gt = strchr(arg, '>');
	struct gate *g;
	char opt[40];
	size_t k;

	(void)o;
	if (a->ngate == MAX_GATES) {
		hvn_err("--fail-if: at most %d conditions", MAX_GATES);
		return -1;
	}
	g = &a->gate[a->ngate];
	for (k = 0; gt && k < sizeof(gate_names) / sizeof(gate_names[0]); k++)
		if (strlen(gate_names[k].name) == (size_t)(gt - arg) &&
		    !strncmp(arg, gate_names[k].name, gt - arg))
			break;
	if (!gt || k == sizeof(gate_names) / sizeof(gate_names[0])) {
		hvn_err("--fail-if %s: not NAME>VALUE with NAME one of lost, lost-total, unexplained, steal (TIME), storms, migrations, overruns (counts)",
			arg);
		return -1;
	}
	g->kind = k;
	g->spec = arg;
	snprintf(opt, sizeof(opt), "--fail-if %s>", gate_names[k].name);
	if (gate_names[k].time ? hvn_cli_secs(opt, gt + 1, 0, 86400, &g->limit) :
	    hvn_cli_num(opt, gt + 1, 0, 1e15, &g->limit))
		return -1;
	a->ngate++;
	return 0;
}

/* The first condition of @a that holds for @an, said on stderr; or 0. */
static int gates(const char *path, const struct report_args *a,
		 const struct hvn_analysis *an, uint64_t overruns)
{
	for (int i = 0; i < a->ngate; i++) {
		const struct gate *g = &a->gate[i];
		uint64_t sum = 0;

		for (int c = 0; c <= an->max_cpu; c++) {
			const struct hvn_cpu *cpu = &an->cpu[c];
			uint64_t v = 0;

			switch (g->kind) {
			case G_LOST:
				v = cpu->worst[1].dur;
				break;
			case G_LOST_TOTAL:
				v = cpu->lost_ns;
				break;
			case G_UNEXPLAINED:
				v = cpu->lost_unexpl_ns;
				break;
			case G_STEAL:
				v = cpu->steal_ns;
				break;
			case G_STORMS:
				sum += cpu->storms;
				continue;
			case G_MIGRATIONS:
				sum += cpu->mig_in;
				continue;
			case G_OVERRUNS:
				continue;
			}
			if (v / 1e9 > g->limit) {
				hvn_err("%s: --fail-if %s: CPU %d: %s %.3f ms", path, g->spec,
					c, gate_names[g->kind].what, v / 1e6);
				return HVN_EXIT_THRESHOLD;
			}
		}
		if (g->kind == G_OVERRUNS)
			sum = overruns;
		if (!gate_names[g->kind].time && sum > g->limit) {
			hvn_err("%s: --fail-if %s: %llu %s", path, g->spec,
				(unsigned long long)sum, gate_names[g->kind].what);
			return HVN_EXIT_THRESHOLD;
		}
	}
	return 0;
}

static int add_input(void *vals, const struct hvn_opt *o, const char *arg)
{
	struct report_args *a = vals;

	(void)o;
	if (a->ninput == MAX_INPUTS) {
		hvn_err("-i: at most %d files", MAX_INPUTS);
		return -1;
	}
	a->input[a->ninput++] = arg;
	return 0;
}

static const struct hvn_opt report_opts[] = {
	HVN_OPT_FLAG_ROW("json", 0, struct report_args, json,
			 "machine-readable output (schema \"hvnoise-report\" 1)"),
	HVN_OPT_FLAG_ROW("prom", 0, struct report_args, prom,
			 "per-CPU counters in Prometheus text format, for\nnode_exporter's textfile collector (one FILE)"),
	HVN_OPT_STR_ROW("perfetto", 0, "FILE", struct report_args, perfetto,
			"also write the noise as Chrome trace events for\nui.perfetto.dev, a track per CPU (one FILE)"),
	HVN_OPT_FLAG_ROW("hist", 0, struct report_args, hist,
			 "after the report, each CPU's lost episodes by\nlength, as rtla osnoise hist"),
	HVN_OPT_STR_ROW("since", 0, "WHEN", struct report_args, since,
			"only events from WHEN: +SECONDS after the start,\nHH:MM[:SS[.frac]] or 'YYYY-MM-DD HH:MM[:SS[.frac]]' local\ntime, @EPOCH seconds, or mono:SECONDS (a trace timestamp)"),
	HVN_OPT_STR_ROW("until", 0, "WHEN", struct report_args, until,
			"only events before WHEN (one exactly at WHEN is\nleft out)"),
	HVN_OPT_INT_ROW("top", 0, "N", struct report_args, top, 1, HVN_TOP_MAX,
			"episodes listed (default 10, at most 50)"),
	HVN_OPT_CALL_ROW("fail-if", 0, "COND", add_gate,
			 "exit 5 when COND holds in a file: lost>TIME (the\nlongest episode of a CPU), lost-total>TIME,\nunexplained>TIME, steal>TIME (a CPU's totals),\nstorms>N, migrations>N, overruns>N; repeatable"),
	HVN_OPT_CALL_ROW("input", 'i', "FILE", add_input,
			 "read FILE (as trace-cmd report -i); repeatable,\nbefore any FILE operands"),
	HVN_OPT_END_ROW
};

static const struct hvn_cmd report_cmd = {
	.name = "report",
	.synopsis = "[--json | --prom | --hist] [--perfetto OUT] [--since WHEN]\n"
		    "                      [--until WHEN] [--top N] [--fail-if COND]...\n"
		    "                      [-i FILE]... [FILE...]\n"
		    "  FILE          trace.dat from hvnoise record or trace-cmd record\n"
		    "                (default trace.dat)",
	.opts = report_opts,
	.operands = true,
};

static double ms(uint64_t ns)
{
	return ns / 1e6;
}

static bool cpu_active(const struct hvn_cpu *c)
{
	return c->seen && (c->watched || c->steal_n || c->lost_n ||
			   c->storms || c->mig_in || c->mig_out || c->irqs);
}

static int cmp_mig(const void *a, const void *b)
{
	const struct hvn_episode *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_irq_desc(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[1] < y[1] ? 1 : x[1] > y[1] ? -1 : 0;
}

static void print_text(const struct hvn_tdat *t, const struct hvn_rb *rb,
		       const struct hvn_analysis *an, const struct hvn_meta *cx)
{
	char a[40], b[40], line[256];
	int shown = 0;

	printf("hvnoise report: %s\n", t->path);
	printf("  host %s, kernel %s, trace_clock %s, recorded by %s\n",
	       cx->host[0] ? cx->host : "?", cx->kernel[0] ? cx->kernel : "?",
	       cx->clock, cx->recorder);
	if (an->in_window) {
		hvn_fmt_time(an, an->first_ts, a, sizeof(a), true);
		hvn_fmt_time(an, an->last_ts, b, sizeof(b), false);
		printf("  events %s .. %s (%.3f s), %llu records",
		       a, b, (an->last_ts - an->first_ts) / 1e9,
		       (unsigned long long)an->in_window);
		if (an->in_window != an->records)
			printf(" in the window (of %llu)",
			       (unsigned long long)an->records);
		printf("\n");
	} else {
		printf("  no events%s\n", an->records ? " in the window" : "");
	}
	/* The recording's own span, which its events need not fill: from
	 * its start (or first clock pair) to its last clock pair. */
	if (cx->nclk >= 2) {
		uint64_t r0 = cx->start ? cx->start : cx->clk[0].mono;
		uint64_t r1 = cx->clk[cx->nclk - 1].mono;

		hvn_fmt_time(an, r0, a, sizeof(a), true);
		hvn_fmt_time(an, r1, b, sizeof(b), false);
		printf("  recorded %s .. %s (%.3f s)\n", a, b,
		       r1 > r0 ? (r1 - r0) / 1e9 : 0);
	}
	if (cx->watched[0] || an->watch_seen)
		printf("  watched CPUs %s%s%s\n",
		       cx->watched[0] ? cx->watched : "(see below)",
		       cx->devices[0] ? ", devices " : "",
		       cx->devices[0] ? cx->devices : "");
	if (cx->source[0])
		printf("  detector events from %s\n",
		       !strcmp(cx->source, "bpf") ? "the BPF collector" :
		       !strcmp(cx->source, "module") ? "hvnoise.ko" :
		       "nowhere (the kernel's irq events only)");
	if (cx->flight[0])
		printf("  a flight-recorder incident: %s\n", cx->flight);
	/* No event then means nothing seen, not nothing lost. */
	for (int i = 0; i < cx->ngaps && i < (int)(sizeof(cx->gaps) / sizeof(cx->gaps[0])); i++) {
		hvn_fmt_time(an, cx->gaps[i].start, a, sizeof(a), true);
		printf("  GAP: hvnoise.ko was not loaded for %.3f s from %s: no detector events then\n",
		       (cx->gaps[i].end - cx->gaps[i].start) / 1e9, a);
	}
	if (cx->ngaps > (int)(sizeof(cx->gaps) / sizeof(cx->gaps[0])))
		printf("  GAP: %d more times without hvnoise.ko\n",
		       cx->ngaps - (int)(sizeof(cx->gaps) / sizeof(cx->gaps[0])));
	if (cx->flight_unwritten)
		printf("  INCOMPLETE: before it, the flight recorder could not write %llu incidents (%llu pages lost; see its log)\n",
		       (unsigned long long)cx->flight_unwritten,
		       (unsigned long long)cx->flight_unwritten_pages);
	/* Unsampled time is time the lost-time detector could not see. */
	if (cx->bpf_throttled)
		printf("  THROTTLED: perf throttled the BPF source's timers %llu times, %.3f ms unsampled\n",
		       (unsigned long long)cx->bpf_throttled,
		       cx->bpf_throttled_ns / 1e6);
	if (!cx->overrun && !cx->dropped && !rb->missed_pages)
		printf("  overruns: none\n");
	else
		printf("  OVERRUNS: %llu events overwritten, %llu dropped (CPUs %s), %llu pages after lost events (%llu counted)\n",
		       (unsigned long long)cx->overrun,
		       (unsigned long long)cx->dropped,
		       cx->overrun_cpus[0] ? cx->overrun_cpus : "-",
		       (unsigned long long)rb->missed_pages,
		       (unsigned long long)rb->missed_events);
	if (rb->bad_pages || an->bad_records)
		printf("  CORRUPT: %llu unreadable pages, %llu short records skipped\n",
		       (unsigned long long)rb->bad_pages,
		       (unsigned long long)an->bad_records);
	if (t->stopped[0])
		printf("  INCOMPLETE: %s; the numbers cover what was read\n",
		       t->stopped);
	if (!an->schema->found) {
		printf("  the file holds neither hvnoise nor irq_handler_entry events\n");
	} else {
		uint64_t n = 0;

		for (int k = HVN_EV_WATCH; k <= HVN_EV_IRQ; k++)
			n += an->by_kind[k];
		/* Their formats are there, but nothing of theirs came. */
		if (!n && !an->records)
			printf("  the file holds no events: it was recorded with hvnoise's or irq_handler_entry's formats, but none of their events came\n");
		else if (!n)
			printf("  the file holds no hvnoise or irq_handler_entry events (their formats are there; %llu records of other events)\n",
			       (unsigned long long)an->records);
	}

	printf("\n CPU   steal ms    lost ms  unexpl ms  storms  storm IRQs  migr in/out  serves\n");
	for (int i = 0; i <= an->max_cpu; i++) {
		const struct hvn_cpu *c = &an->cpu[i];

		if (!cpu_active(c))
			continue;
		shown++;
		printf("%4d%c %9.3f %10.3f %10.3f %7llu %11llu %7llu/%-4llu %s\n",
		       i, c->watched ? '*' : ' ', ms(c->steal_ns),
		       ms(c->lost_ns), ms(c->lost_unexpl_ns),
		       (unsigned long long)c->storms,
		       (unsigned long long)c->storm_irqs,
		       (unsigned long long)c->mig_in,
		       (unsigned long long)c->mig_out, c->serves);
	}
	if (!shown)
		printf("   (no CPU has events)\n");
	else
		printf("  * watched\n");

	printf("\nWorst episode per CPU and kind:\n");
	shown = 0;
	for (int i = 0; i <= an->max_cpu; i++)
		for (int k = 0; k < 3; k++) {
			if (!an->cpu[i].worst[k].dur)
				continue;
			hvn_fmt_episode(an, &an->cpu[i].worst[k], line,
					sizeof(line));
			printf("  %s\n", line);
			shown++;
		}
	if (!shown)
		printf("  none\n");

	printf("\nTop episodes:\n");
	for (int i = 0; i < an->ntop; i++) {
		hvn_fmt_episode(an, &an->top[i], line, sizeof(line));
		printf("  %2d. %s\n", i + 1, line);
	}
	if (!an->ntop)
		printf("  none\n");

	if (an->nmig) {
		printf("\nIRQ migrations:\n");
		for (int i = 0; i < an->nmig && i < 50; i++) {
			hvn_fmt_episode(an, &an->mig[i], line, sizeof(line));
			printf("  %s\n", line);
		}
		if (an->nmig > 50)
			printf("  ... %d more (--json lists all)\n",
			       an->nmig - 50);
	}
	if (an->by_kind[HVN_EV_IRQ]) {
		uint64_t (*top)[2] = calloc(an->irq_cap, sizeof(*top));
		int n = 0;

		printf("\nIRQs (irq:irq_handler_entry): %llu\n  per CPU:",
		       (unsigned long long)an->by_kind[HVN_EV_IRQ]);
		for (int i = 0; i <= an->max_cpu; i++)
			if (an->cpu[i].irqs)
				printf(" %d:%llu", i,
				       (unsigned long long)an->cpu[i].irqs);
		for (int i = 0; top && i < an->irq_cap; i++)
			if (an->irq_count[i]) {
				top[n][0] = i;
				top[n++][1] = an->irq_count[i];
			}
		if (top)
			qsort(top, n, sizeof(*top), cmp_irq_desc);
		printf("\n  busiest:");
		for (int i = 0; i < n && i < 8; i++)
			printf(" irq %llu:%llu", (unsigned long long)top[i][0],
			       (unsigned long long)top[i][1]);
		printf("\n");
		free(top);
	}
}

static void json_episode(const struct hvn_analysis *an,
			 const struct hvn_episode *e)
{
	uint64_t real = hvn_an_mono_to_real(an, e->start);

	printf("{\"kind\":\"%s\",\"cpu\":%d,\"start_ns\":%llu,",
	       hvn_ep_kind(e->kind), e->cpu, (unsigned long long)e->start);
	if (real)
		printf("\"start_realtime_ns\":%llu,", (unsigned long long)real);
	switch (e->kind) {
	case HVN_EP_LOST:
		printf("\"duration_ns\":%llu,\"unexplained_ns\":%llu,\"steal_ns\":%llu,\"irq_ns\":%llu}",
		       (unsigned long long)e->dur, (unsigned long long)e->a,
		       (unsigned long long)e->b, (unsigned long long)e->c);
		break;
	case HVN_EP_STEAL:
		printf("\"duration_ns\":%llu,\"window_ns\":%llu,\"source\":\"%s\"}",
		       (unsigned long long)e->dur, (unsigned long long)e->a,
		       hvn_steal_source(e->source));
		break;
	case HVN_EP_STORM:
		printf("\"duration_ns\":%llu,\"source\":\"%s\",\"irq\":%d,\"name\":",
		       (unsigned long long)e->dur,
		       hvn_storm_source(e->source), e->irq);
		hvn_json_str(stdout, e->name);
		printf(",\"count\":%llu,\"peak_rate\":%llu}",
		       (unsigned long long)e->a, (unsigned long long)e->b);
		break;
	default:
		printf("\"from_cpu\":%d,\"irq\":%d,\"name\":", e->cpu2, e->irq);
		hvn_json_str(stdout, e->name);
		printf(",\"how\":\"%s\"}", hvn_mig_how(e->source));
	}
}

/*
 * report --hist: each CPU's lost episodes by length, a row per bucket of
 * hvn_lost_bucket_ns (up to and including), as rtla osnoise hist prints
 * its latencies; the CPUs that lost time only.
 */
static void print_hist(const struct hvn_analysis *an)
{
	static const char *const rows[HVN_LOST_BUCKETS + 1] = {
		"<=0.5ms", "<=1ms", "<=2ms", "<=5ms", "<=10ms", "<=20ms",
		"<=50ms", "<=100ms", "<=200ms", "<=500ms", "<=1s", "<=2s",
		"<=5s", ">5s",
	};
	uint64_t total;
	int n = 0;

	for (int c = 0; c <= an->max_cpu; c++)
		n += an->cpu[c].lost_n > 0;
	printf("\nLost episodes by length, per CPU%s\n",
	       n ? "" : ": none");
	if (!n)
		return;
	printf("%-8s", "length");
	for (int c = 0; c <= an->max_cpu; c++)
		if (an->cpu[c].lost_n)
			printf("  CPU-%-4d", c);
	printf("  %8s\n", "total");
	for (int b = 0; b <= HVN_LOST_BUCKETS; b++) {
		total = 0;
		printf("%-8s", rows[b]);
		for (int c = 0; c <= an->max_cpu; c++)
			if (an->cpu[c].lost_n) {
				printf("  %8llu", (unsigned long long)an->cpu[c].lost_hist[b]);
				total += an->cpu[c].lost_hist[b];
			}
		printf("  %8llu\n", (unsigned long long)total);
	}
	total = 0;
	printf("%-8s", "count");
	for (int c = 0; c <= an->max_cpu; c++)
		if (an->cpu[c].lost_n) {
			printf("  %8llu", (unsigned long long)an->cpu[c].lost_n);
			total += an->cpu[c].lost_n;
		}
	printf("  %8llu\n", (unsigned long long)total);
}

static void print_json(const struct hvn_tdat *t, const struct hvn_rb *rb,
		       const struct hvn_analysis *an, const struct hvn_meta *cx,
		       bool first)
{
	bool sep = false;

	printf("%s{\"file\":", first ? "" : ",\n");
	hvn_json_str(stdout, t->path);
	printf(",\"trace_version\":%d,\"host\":", t->version);
	hvn_json_str(stdout, cx->host);
	printf(",\"kernel\":");
	hvn_json_str(stdout, cx->kernel);
	printf(",\"trace_clock\":");
	hvn_json_str(stdout, cx->clock);
	printf(",\"recorded_by\":");
	hvn_json_str(stdout, cx->recorder);
	printf(",\"source\":");
	if (cx->source[0])
		hvn_json_str(stdout, cx->source);
	else
		printf("null");
	printf(",\"complete\":%s,", t->stopped[0] ? "false" : "true");
	if (t->stopped[0]) {
		printf("\"stopped\":");
		hvn_json_str(stdout, t->stopped);
		putchar(',');
	}
	printf("\"records\":%llu,\"records_in_window\":%llu,\"first_ns\":%llu,\"last_ns\":%llu,",
	       (unsigned long long)an->records,
	       (unsigned long long)an->in_window,
	       (unsigned long long)an->first_ts,
	       (unsigned long long)an->last_ts);
	printf("\"window\":{\"since_ns\":%llu,\"until_ns\":",
	       (unsigned long long)an->since);
	if (an->until == UINT64_MAX)
		printf("null},");
	else
		printf("%llu},", (unsigned long long)an->until);
	printf("\"clock_pairs\":[");
	for (int i = 0; i < an->nclk; i++)
		printf("%s[%llu,%llu]", i ? "," : "",
		       (unsigned long long)an->clk[i].mono,
		       (unsigned long long)an->clk[i].real);
	printf("],\"flight_recorder\":");
	if (cx->flight[0])
		hvn_json_str(stdout, cx->flight);
	else
		printf("null");
	printf(",\"module_gaps\":{\"count\":%d,\"gaps\":[", cx->ngaps);
	for (int i = 0; i < cx->ngaps && i < (int)(sizeof(cx->gaps) / sizeof(cx->gaps[0])); i++)
		printf("%s{\"start_ns\":%llu,\"end_ns\":%llu}", i ? "," : "",
		       (unsigned long long)cx->gaps[i].start,
		       (unsigned long long)cx->gaps[i].end);
	printf("]}");
	printf(",\"flight_recorder_unwritten\":{\"incidents\":%llu,\"pages\":%llu}",
	       (unsigned long long)cx->flight_unwritten,
	       (unsigned long long)cx->flight_unwritten_pages);
	printf(",\"bpf_throttled\":{\"count\":%llu,\"unsampled_ns\":%llu}",
	       (unsigned long long)cx->bpf_throttled,
	       (unsigned long long)cx->bpf_throttled_ns);
	printf(",\"overruns\":{\"overwritten\":%llu,\"dropped\":%llu,\"pages_after_lost_events\":%llu,\"lost_events_counted\":%llu,\"unreadable_pages\":%llu,\"short_records\":%llu},",
	       (unsigned long long)cx->overrun, (unsigned long long)cx->dropped,
	       (unsigned long long)rb->missed_pages,
	       (unsigned long long)rb->missed_events,
	       (unsigned long long)rb->bad_pages,
	       (unsigned long long)an->bad_records);
	printf("\"watched\":[");
	for (int i = 0; i < an->nwatch; i++) {
		const struct hvn_watch_rec *w = &an->watch[i];

		printf("%s{\"kind\":\"%s\",\"cpu\":%d,\"why\":%u,\"dev\":\"%04x:%02x:%02x.%x\",\"irq\":%d,\"name\":",
		       i ? "," : "", hvn_watch_kind(w->kind), w->cpu, w->why,
		       HVN_PCI_DOMAIN(w->dev), HVN_PCI_BUS(w->dev),
		       HVN_PCI_SLOT(w->dev), HVN_PCI_FUNC(w->dev), w->irq);
		hvn_json_str(stdout, w->name);
		putchar('}');
	}
	printf("],\"events\":{\"watch\":%llu,\"steal\":%llu,\"lost\":%llu,\"irq_storm_begin\":%llu,\"irq_storm\":%llu,\"irq_migrate\":%llu,\"irq_handler_entry\":%llu,\"raw_data\":%llu,\"other\":%llu},",
	       (unsigned long long)an->by_kind[HVN_EV_WATCH],
	       (unsigned long long)an->by_kind[HVN_EV_STEAL],
	       (unsigned long long)an->by_kind[HVN_EV_LOST],
	       (unsigned long long)an->by_kind[HVN_EV_STORM_BEGIN],
	       (unsigned long long)an->by_kind[HVN_EV_STORM],
	       (unsigned long long)an->by_kind[HVN_EV_MIGRATE],
	       (unsigned long long)an->by_kind[HVN_EV_IRQ],
	       (unsigned long long)an->by_kind[HVN_EV_RAW],
	       (unsigned long long)an->by_kind[HVN_EV_OTHER]);
	printf("\"cpus\":[");
	for (int i = 0; i <= an->max_cpu; i++) {
		const struct hvn_cpu *c = &an->cpu[i];

		if (!cpu_active(c))
			continue;
		printf("%s{\"cpu\":%d,\"watched\":%s,\"serves\":", sep ? "," : "",
		       i, c->watched ? "true" : "false");
		sep = true;
		hvn_json_str(stdout, c->serves);
		printf(",\"steal_ns\":%llu,\"steal_events\":%llu,\"lost_ns\":%llu,\"lost_unexplained_ns\":%llu,\"lost_steal_ns\":%llu,\"lost_irq_ns\":%llu,\"lost_events\":%llu,\"storms\":%llu,\"storm_irqs\":%llu,\"migrations_in\":%llu,\"migrations_out\":%llu,\"irqs\":%llu,\"worst\":{",
		       (unsigned long long)c->steal_ns,
		       (unsigned long long)c->steal_n,
		       (unsigned long long)c->lost_ns,
		       (unsigned long long)c->lost_unexpl_ns,
		       (unsigned long long)c->lost_steal_ns,
		       (unsigned long long)c->lost_irq_ns,
		       (unsigned long long)c->lost_n,
		       (unsigned long long)c->storms,
		       (unsigned long long)c->storm_irqs,
		       (unsigned long long)c->mig_in,
		       (unsigned long long)c->mig_out,
		       (unsigned long long)c->irqs);
		for (int k = 0; k < 3; k++) {
			printf("%s\"%s\":", k ? "," : "", hvn_ep_kind(k));
			if (c->worst[k].dur)
				json_episode(an, &c->worst[k]);
			else
				printf("null");
		}
		printf("}}");
	}
	printf("],\"top\":[");
	for (int i = 0; i < an->ntop; i++) {
		if (i)
			putchar(',');
		json_episode(an, &an->top[i]);
	}
	printf("],\"migrations\":[");
	for (int i = 0; i < an->nmig; i++) {
		if (i)
			putchar(',');
		json_episode(an, &an->mig[i]);
	}
	printf("],\"irqs\":{");
	sep = false;
	for (int i = 0; i < an->irq_cap; i++)
		if (an->irq_count[i]) {
			printf("%s\"%d\":%llu", sep ? "," : "", i,
			       (unsigned long long)an->irq_count[i]);
			sep = true;
		}
	printf("}}");
}

static int report_file(const char *path, const struct report_args *a,
		       const char *since, const char *until, int top, bool json,
		       bool prom, bool first, bool *printed)
{
	struct hvn_schema *schema = malloc(sizeof(*schema));
	struct hvn_analysis an;
	struct hvn_meta cx;
	struct hvn_tdat t;
	struct hvn_rb rb = { .event = hvn_an_event };
	int ret, sret;

	if (!schema)
		return HVN_EXIT_FAIL;
	ret = hvn_tdat_open(&t, path);
	if (ret)
		goto out_t;
	hvn_schema_bind(schema, t.tep);
	if (hvn_an_init(&an, schema)) {
		ret = HVN_EXIT_FAIL;
		goto out_t;
	}
	an.top_max = top;
	rb.ctx = &an;
	if (hvn_meta_read(&cx, &t)) {
		ret = HVN_EXIT_FAIL;
		goto out_an;
	}
	for (int i = 0; i < cx.nclk; i++)
		hvn_an_add_clock(&an, cx.clk[i].mono, cx.clk[i].real);
	for (int i = 0; i < 2; i++) {
		const char *w = i ? until : since;
		const char *err;

		if (!w)
			continue;
		err = hvn_when_parse(w, cx.start, &an, i ? &an.until : &an.since);
		if (err) {
			hvn_err("%s %s: %s", i ? "--until" : "--since", w, err);
			ret = HVN_EXIT_USAGE;
			goto out_an;
		}
	}
	sret = hvn_tdat_stream(&t, &rb);
	hvn_an_finish(&an);
	if (an.nmig)
		qsort(an.mig, an.nmig, sizeof(*an.mig), cmp_mig);
	if (prom) {
		/* The gaps meta keeps: the first ones. */
		enum { NGAPS = sizeof(cx.gaps) / sizeof(*cx.gaps) };
		struct hvn_prom_info pi = {
			.overrun_events = cx.overrun + cx.dropped,
			.missed_pages = rb.missed_pages,
			.bad_pages = rb.bad_pages,
			.source = cx.source,
			.module_loaded = -1,
		};

		/* As fresh as the recording's end, its last clock pair; the
		 * module loaded if it was its source and no gap ran to the
		 * end. */
		if (cx.nclk)
			pi.updated_real = cx.clk[cx.nclk - 1].real;
		if (cx.source[0])
			pi.module_loaded = !strcmp(cx.source, "module") &&
					   (!cx.ngaps || !cx.nclk ||
					    cx.gaps[(cx.ngaps < NGAPS ? cx.ngaps : NGAPS) - 1].end <
					    cx.clk[cx.nclk - 1].mono);
		hvn_prom_write(stdout, &an, &pi);
	} else if (json) {
		print_json(&t, &rb, &an, &cx, first);
	} else {
		print_text(&t, &rb, &an, &cx);
		if (a->hist)
			print_hist(&an);
	}
	*printed = true;
	if (sret) {
		hvn_err("%s: %s", path, t.stopped[0] ? t.stopped : "read error");
		ret = sret;
	}
	if (!ret && a->perfetto) {
		struct hvn_pf p;
		char name[160];

		ret = hvn_pf_open(&p, a->perfetto);
		if (!ret) {
			snprintf(name, sizeof(name), "%s: CPUs (hvnoise)",
				 cx.host[0] ? cx.host : path);
			hvn_pf_name(&p, 1, -1, name);
			hvn_pf_noise(&p, &t, schema, &an, 1);
			ret = hvn_pf_close(&p);
		}
	}
	if (!ret)
		ret = gates(path, a, &an, cx.overrun + cx.dropped);
out_an:
	hvn_meta_free(&cx);
	hvn_an_free(&an);
out_t:
	hvn_tdat_close(&t);
	free(schema);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = { .top = 10 };
	const char *def[] = { "trace.dat" }, **files;
	int first, top, nfiles, ret;
	bool json, prom;
	const char *since, *until;

	ret = hvn_cli_parse(&report_cmd, argc, argv, &a, NULL, &first);
	if (ret >= 0)
		return ret;
	ret = 0;
	json = a.json;
	prom = a.prom;
	since = a.since;
	until = a.until;
	top = a.top;
	nfiles = a.ninput + argc - first;
	files = nfiles ? calloc(nfiles, sizeof(*files)) : def;
	if (!files) {
		hvn_err("out of memory");
		return HVN_EXIT_FAIL;
	}
	memcpy(files, a.input, a.ninput * sizeof(*files));
	for (int i = first; i < argc; i++)
		files[a.ninput + i - first] = argv[i];
	if (!nfiles)
		nfiles = 1;
	if (a.hist && (prom || json)) {
		hvn_err("--hist is text: not with --%s", prom ? "prom" : "json");
		ret = HVN_EXIT_USAGE;
		goto out;
	}
	if (prom && json) {
		hvn_err("--prom and --json: choose one");
		ret = HVN_EXIT_USAGE;
		goto out;
	}
	/* One file: a metric family may appear only once in a text file. */
	if ((prom || a.perfetto) && nfiles > 1) {
		hvn_err("--%s reads one file, not %d", prom ? "prom" : "perfetto", nfiles);
		ret = HVN_EXIT_USAGE;
		goto out;
	}
	if (json)
		printf("{\"schema\":\"hvnoise-report\",\"schema_version\":%d,\"reports\":[",
		       SCHEMA_VERSION);
	for (int i = 0, printed = 0; i < nfiles; i++) {
		bool done = false;
		int r;

		if (!json && printed)
			printf("\n");
		r = report_file(files[i], &a, since, until, top, json, prom,
				!printed, &done);
		printed += done;
		if (r && (!ret || r == HVN_EXIT_BADFILE))
			ret = r;
	}
	if (json)
		printf("]}\n");
out:
	if (files != def)
		free(files);
	return ret;
}
