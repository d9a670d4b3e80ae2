/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Messages and exit codes: the bottom of the tools' library, which every
 * other part may call and which calls nothing of theirs.  A program
 * changes where messages go by defining its own hvn_vmessage() (as
 * trace-cmd's library lets its users override tracecmd_warning()).
 */
#ifndef HVNOISE_MSG_H
#define HVNOISE_MSG_H

#include <stdarg.h>
#include <stdbool.h>

/* Exit codes, documented in hvnoise(8). */
#define HVN_EXIT_OK		0
#define HVN_EXIT_FAIL		1	/* tracefs, permission, I/O */
#define HVN_EXIT_USAGE		2	/* bad command line */
#define HVN_EXIT_BADFILE	3	/* missing, truncated or corrupt input */
#define HVN_EXIT_NOMODULE	4	/* hvnoise.ko is needed and not loaded */
#define HVN_EXIT_THRESHOLD	5	/* report --fail-if: a condition held */

/* "hvnoise CMD: ..." and "hvnoise CMD: warning: ..." on stderr (hvn_prog
 * names the command); "hvnoise CMD: debug: ..." only with -v. */
void hvn_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hvn_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hvn_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* What a command says it is doing, on stderr after "hvnoise CMD: " (the
 * text brings its newline); nothing with -q. */
void hvn_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern const char *hvn_prog;
extern bool hvn_quiet;			/* the fuzzers: no messages */
/* Every command's -q (-1: errors only) and -v (1: debug lines, and the
 * libraries' logs: libbpf's, libtracefs's; 2: theirs at debug level). */
extern int hvn_verbosity;

/* Where every message above goes: "hvnoise CMD: KIND..." on stderr, with
 * a newline unless @kind is NULL (hvn_info()'s text brings its own).
 * Weak: a program may define its own. */
void hvn_vmessage(const char *kind, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

#endif
