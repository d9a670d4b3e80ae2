// SPDX-License-Identifier: GPL-2.0
/* The long-running commands' lifecycle (tool.h). */
#include <poll.h>

#include "tool.h"

int hvn_tool_main(const struct hvn_tool_ops *ops, void *args, void *priv,
		  struct hvn_session *s, int argc, char **argv)
{
	struct hvn_tool t = {
		.ops = ops, .s = s, .args = args, .priv = priv,
		.argc = argc, .argv = argv, .o = { .prefix = ops->prefix },
	};
	bool waited = !ops->wait_first, running;
	int ret;

	ret = hvn_cli_parse(ops->cmd, argc, argv, args, &t.o, &t.first);
	if (ret < 0 && ops->apply)
		ret = ops->apply(&t);
	if (ret >= 0) {
		hvn_session_opts_free(&t.o);
		return ret;
	}
	/* A killed or crashed predecessor's instance holds its rings: gone
	 * (its PID no longer runs). */
	if (ops->prefix)
		hvn_session_reap(ops->prefix);
	t.ret = hvn_session_start(s, &t.o);
	if (!t.ret && ops->init)
		t.ret = ops->init(&t);
	if (!t.ret && ops->enable)
		t.ret = ops->enable(&t);
	running = !t.ret;
	while (running && !t.ret && !hvn_stop_sig) {
		enum hvn_tick r = HVN_TICK_WAIT;

		if (waited)
			r = ops->tick(&t);
		if (r == HVN_TICK_DONE || t.ret)
			break;
		waited = true;
		if (r == HVN_TICK_AGAIN || hvn_stop_sig)
			continue;
		if (ops->wait)
			ops->wait(&t);
		else
			poll(NULL, 0, HVN_TOOL_POLL_MS);
	}
	/* A failed start has nothing to finish. */
	ret = t.ret;
	if (running && ops->finish)
		ret = ops->finish(&t);
	if (ops->free)
		ops->free(&t);
	hvn_session_end(s);
	hvn_session_opts_free(&t.o);
	return ret;
}

int hvn_tool_read(struct hvn_session *s, void *page,
		  int (*fn)(void *ctx, int cpu, const void *page), void *ctx,
		  int *bad)
{
	int ret = 0;

	for (int c = 0; c < s->ncpus; c++) {
		int r;

		while ((r = hvn_session_read(s, c, page)) > 0)
			if (fn(ctx, c, page))
				return -1;
		if (r < 0 && !ret) {
			if (bad)
				*bad = c;
			ret = -2;
		}
		/* Without @bad, the other CPUs are read all the same. */
		if (ret && bad)
			return ret;
	}
	return ret;
}

static int feed_page(void *ctx, int cpu, const void *page)
{
	hvn_rb_page(ctx, cpu, page);
	return 0;
}

static int feed_rec(void *ctx, int cpu, uint64_t ts, const void *rec,
		    uint32_t len)
{
	struct hvn_rb *rb = ctx;

	rb->event(rb->ctx, cpu, ts, rec, len);
	return 0;
}

void hvn_tool_feed(struct hvn_session *s, void *page, struct hvn_rb *rb)
{
	/* A CPU whose buffer cannot be read has nothing to give now; the
	 * others are read all the same. */
	hvn_tool_read(s, page, feed_page, rb, NULL);
	if (s->bpf)
		hvn_bpf_poll(s->bpf, feed_rec, rb);
}
