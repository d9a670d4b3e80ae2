/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The command line: one option table
 * type from which getopt's strings and each command's usage are made, so
 * that the two cannot drift apart.  A command may take a second table
 * after its own (the session's options: session.h).
 */
#ifndef HVNOISE_CLI_H
#define HVNOISE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "msg.h"

struct hvn_session_opts;

enum hvn_opt_type {
	HVN_OPT_FLAG,		/* bool at @off becomes true */
	HVN_OPT_STR,		/* const char * at @off: the argument */
	HVN_OPT_NUM,		/* double at @off: a number in [@lo, @hi] */
	HVN_OPT_SECS,		/* double at @off: seconds in [@lo, @hi], with
				 * rtla's suffixes (500ms, 30s, 10m, 2h, 1d) */
	HVN_OPT_INT,		/* long at @off: a whole number in [@lo, @hi] */
	HVN_OPT_SESSION,	/* a session option: @sess(so, @key, arg) */
	HVN_OPT_CALL,		/* @call(values, option, argument) */
};

struct hvn_opt {
	const char *name;	/* the long name */
	char letter;		/* the short one, or 0 */
	const char *arg;	/* its argument's name in usage; NULL: none */
	const char *help;	/* usage text; '\n' starts an indented line */
	enum hvn_opt_type type;
	size_t off;		/* where in the command's values */
	double lo, hi;		/* HVN_OPT_NUM's range */
	int key;		/* HVN_OPT_SESSION's option */
	int (*call)(void *vals, const struct hvn_opt *o, const char *arg);
	/* HVN_OPT_SESSION's taker (hvn_session_opt()): 1 if taken. */
	int (*sess)(struct hvn_session_opts *so, int key, const char *arg);
};

/* Table rows: the option NAME (short letter L or 0) stores into FIELD of
 * the command's values of type T. */
#define HVN_OPT_STR_ROW(name_, l, arg_, t, field, help_) \
	{ .name = name_, .letter = l, .arg = arg_, .help = help_, \
	  .type = HVN_OPT_STR, .off = offsetof(t, field) }
#define HVN_OPT_NUM_ROW(name_, l, arg_, t, field, lo_, hi_, help_) \
	{ .name = name_, .letter = l, .arg = arg_, .help = help_, \
	  .type = HVN_OPT_NUM, .off = offsetof(t, field), .lo = lo_, .hi = hi_ }
#define HVN_OPT_SECS_ROW(name_, l, t, field, lo_, hi_, help_) \
	{ .name = name_, .letter = l, .arg = "TIME", .help = help_, \
	  .type = HVN_OPT_SECS, .off = offsetof(t, field), .lo = lo_, .hi = hi_ }
#define HVN_OPT_INT_ROW(name_, l, arg_, t, field, lo_, hi_, help_) \
	{ .name = name_, .letter = l, .arg = arg_, .help = help_, \
	  .type = HVN_OPT_INT, .off = offsetof(t, field), .lo = lo_, .hi = hi_ }
#define HVN_OPT_FLAG_ROW(name_, l, t, field, help_) \
	{ .name = name_, .letter = l, .help = help_, \
	  .type = HVN_OPT_FLAG, .off = offsetof(t, field) }
#define HVN_OPT_CALL_ROW(name_, l, arg_, fn, help_) \
	{ .name = name_, .letter = l, .arg = arg_, .help = help_, \
	  .type = HVN_OPT_CALL, .call = fn }
#define HVN_OPT_END_ROW { .name = NULL }

/* top's and the exporter's note for -i (struct hvn_cmd.renamed_note). */
#define HVN_I_IS_INPUT "-i TIME is -I TIME (--interval) now: -i is the input file in hvnoise's commands (report -i FILE, as in trace-cmd and perf); taken as -I this time, refused in a later release"

struct hvn_cmd {
	const char *name;
	const char *synopsis;		/* usage's first lines, after the name */
	const struct hvn_opt *opts;	/* ends with a NULL name */
	/* More options after its own: the session's (session.h's
	 * hvn_session_options), or NULL. */
	const struct hvn_opt *more;
	const char *notes;		/* usage's last lines, or NULL */
	bool operands;			/* takes operands (else an error) */
	const char *no_operands;	/* why not, in that error, or NULL */
	/* Options end at the first operand (record's CMD [ARGS]); else
	 * they may follow operands. */
	bool stop_at_operand;
	/* Operands in order among options (correlate's FILE lists); called
	 * with NULL after each option but HVN_OPT_CALL's, which ends a list. */
	int (*operand)(void *vals, const char *arg);
	/* A short letter it took before it was renamed (top's and the
	 * exporter's "i", now "I": -i is an input file elsewhere), still
	 * taken as the new one with @renamed_note warned once; or 0. */
	char renamed_from, renamed_to;
	const char *renamed_note;
};

/* Parse @argv into @vals (and @so for the session options).  Returns -1 to
 * go on with argv[*first] the first operand, or an exit code: HVN_EXIT_OK
 * after --help, HVN_EXIT_USAGE with the error printed. */
int hvn_cli_parse(const struct hvn_cmd *cmd, int argc, char **argv,
		  void *vals, struct hvn_session_opts *so, int *first);
void hvn_cli_usage(const struct hvn_cmd *cmd, FILE *f);
/* @arg as a number in [@lo, @hi]; -1 with the error printed (@opt names
 * the option in it). */
int hvn_cli_num(const char *opt, const char *arg, double lo, double hi,
		double *v);
/* @arg as seconds in [@lo, @hi]: a number, or one with us, ms, s, m, h or d
 * after it, as rtla takes them; -1 with the error printed. */
int hvn_cli_secs(const char *opt, const char *arg, double lo, double hi,
		 double *v);

#endif
