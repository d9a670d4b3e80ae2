/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lifecycle the long-running commands share (record, flight-recorder,
 * top, exporter), as rtla's struct tool_ops: each command says what it
 * does at each step, and hvn_tool_main() runs the steps in one order:
 *
 *   parse    the command's options and the session's (cli.c)
 *   apply    check them; the command may end here (record --recover)
 *   start    the session: hvnoise's events, the BPF source or the kernel's
 *   init     buffers, files, the analysis
 *   enable   signals caught, a child started, one line said
 *   loop     tick, then wait, until a stop signal or a tick says done
 *   finish   the rest read, the output written: the exit status
 *   free     the command's state; then the session ends
 */
#ifndef HVNOISE_TOOL_OPS_H
#define HVNOISE_TOOL_OPS_H

#include "session.h"
#include "tracedat/pages.h"

/* What a tick asks of the loop. */
enum hvn_tick {
	HVN_TICK_WAIT,		/* wait, then tick again */
	HVN_TICK_AGAIN,		/* tick again at once */
	HVN_TICK_DONE,		/* leave the loop (a failure sets ret first) */
};

struct hvn_tool;

struct hvn_tool_ops {
	const struct hvn_cmd *cmd;
	const char *prefix;		/* the instance is PREFIX-PID */
	bool wait_first;		/* the loop waits before its first tick */
	/* Each 0 (or -1 for apply: go on) or the command's exit status;
	 * NULL: nothing to do at that step. */
	int (*apply)(struct hvn_tool *t);
	int (*init)(struct hvn_tool *t);
	int (*enable)(struct hvn_tool *t);
	enum hvn_tick (*tick)(struct hvn_tool *t);
	/* Until the next tick; NULL: HVN_TOOL_POLL_MS. */
	void (*wait)(struct hvn_tool *t);
	/* After the loop; the exit status, from t->ret. */
	int (*finish)(struct hvn_tool *t);
	void (*free)(struct hvn_tool *t);
};

#define HVN_TOOL_POLL_MS	200

struct hvn_tool {
	const struct hvn_tool_ops *ops;
	struct hvn_session *s;		/* the command's; started here */
	struct hvn_session_opts o;
	void *args;			/* the command's options, parsed */
	void *priv;			/* the command's state */
	int argc, first;		/* argv[first..argc): the operands */
	char **argv;
	int ret;			/* the exit status so far */
};

/* Run @ops with the command's @args (defaults set), @priv and session @s. */
int hvn_tool_main(const struct hvn_tool_ops *ops, void *args, void *priv,
		  struct hvn_session *s, int argc, char **argv);

/*
 * Every page the session's CPUs hold now, each to @fn(@ctx, cpu, page)
 * (@page: a buffer of a page): 0; -1 when @fn failed; -2 when a CPU's
 * buffer cannot be read (nothing said): with @bad, stopping there (*@bad:
 * which), else after reading the other CPUs.
 */
int hvn_tool_read(struct hvn_session *s, void *page,
		  int (*fn)(void *ctx, int cpu, const void *page), void *ctx,
		  int *bad);
/* Everything the session holds now, its CPUs' pages and the BPF source's
 * records, into @rb's event callback. */
void hvn_tool_feed(struct hvn_session *s, void *page, struct hvn_rb *rb);

#endif
