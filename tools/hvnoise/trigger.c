// SPDX-License-Identifier: GPL-2.0
/*
 * hvnoise trigger: ask this host's flight recorder for an incident now, or
 * for a past window it still holds (--at), through its trigger file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "builtin.h"
#include "cli.h"
#include "analysis/when.h"
#include "session.h"
#include "trigger.h"

/* How long a recorder may take to answer: it polls every 0.2 s, and
 * reads the file after the incident it may be writing (seconds). */
#define ANSWER_MS	10000
#define BUSY_MS		60000	/* ... with a recorder running */

struct trigger_args {
	const char *file, *at;
	double window;
	bool window_given;
	char why[200];
};

static int set_window(void *vals, const struct hvn_opt *o, const char *arg)
{
	struct trigger_args *a = vals;

	a->window_given = true;
	(void)o;
	return hvn_cli_secs("--window", arg, 0.001, 3600, &a->window);
}

static int why_word(void *vals, const char *arg)
{
	struct trigger_args *a = vals;
	size_t l = strlen(a->why);

	if (arg)
		snprintf(a->why + l, sizeof(a->why) - l, "%s%s", l ? " " : "", arg);
	return 0;
}

static const struct hvn_opt trigger_opts[] = {
	HVN_OPT_STR_ROW("trigger-file", 0, "PATH", struct trigger_args, file,
			"the flight recorder's --trigger-file\n(default /run/hvnoise/trigger)"),
	HVN_OPT_STR_ROW("at", 0, "WHEN", struct trigger_args, at,
			"the window around WHEN, not the last seconds:\nHH:MM[:SS[.frac]], 'YYYY-MM-DD HH:MM[:SS]' or @EPOCH"),
	HVN_OPT_CALL_ROW("window", 0, "TIME", set_window,
			 "with --at: TIME before and after it (default 30 s)"),
	HVN_OPT_END_ROW
};

static const struct hvn_cmd trigger_cmd = {
	.name = "trigger",
	.synopsis = "[--trigger-file PATH] [--at WHEN [--window TIME]] [WHY...]",
	.opts = trigger_opts,
	.operand = why_word,
	.notes = "  The recorder writes the incident when the window has passed; the\n"
		 "  seconds its ring no longer holds are said to be gone.\n",
};

/* @EPOCH[.frac], or a local wall-clock time (today's, if no date). */
static int parse_at(const char *s, uint64_t *ns)
{
	struct timespec now;
	char *end;
	double v;

	clock_gettime(CLOCK_REALTIME, &now);
	uint64_t t = now.tv_sec * 1000000000ull + now.tv_nsec;

	if (s[0] == '@') {
		errno = 0;
		v = strtod(s + 1, &end);
		if (errno || end == s + 1 || *end || v <= 0 || v >= 1e10)
			return -1;
		*ns = (uint64_t)(v * 1e9);
		return 0;
	}
	if (hvn_when_wall(s, t, ns))
		return -1;
	/* 23:59 asked at 00:01 is yesterday's: a time of day without a
	 * date is the latest one not ahead by more than a minute. */
	if (*ns > t + 60000000000ull && !strchr(s, '-'))
		*ns -= 86400000000000ull;
	return 0;
}

/*
 * The recorder's answer (it reads the file every 0.2 s; one writing an
 * incident reads it after), or why none came: no recorder runs, or one
 * that does not read @file.  Unanswered, the file is taken back: a
 * recorder started later takes a file already there for no trigger.
 */
static int answered(const char *file, uint64_t ino, const struct hvn_trigger *t,
		    const char *at, double window)
{
	char what[256];
	struct stat st;
	int pid = 0;

	/* A running recorder may be writing an incident (seconds of a big
	 * ring): waited for longer. */
	for (int i = 0; i < ANSWER_MS / 50 ||
	     (i < BUSY_MS / 50 && (pid = hvn_session_live("hvnoise-fr")) > 0); i++) {
		if (hvn_trigger_answered(file, ino, what, sizeof(what))) {
			if (t->at)
				hvn_info("+-%.3f s around %s %s: written when the window has passed\n",
					 window, at, what);
			else
				hvn_info("an incident %s\n", what);
			return HVN_EXIT_OK;
		}
		usleep(50000);
	}
	/* Ours only: a job's trigger written since is another's request. */
	if (!lstat(file, &st) && (uint64_t)st.st_ino == ino)
		unlink(file);
	pid = hvn_session_live("hvnoise-fr");
	if (pid > 0)
		hvn_err("the flight recorder (pid %d) did not take %s in %d s: is it started with --trigger-file %s?",
			pid, file, BUSY_MS / 1000, file);
	else if (pid < 0)
		hvn_err("no flight recorder took %s in %d s (whether one runs cannot be told here: tracefs is not readable)",
			file, ANSWER_MS / 1000);
	else
		hvn_err("no flight recorder took %s in %d s: none runs here (start hvnoise-flight-recorder.service, or hvnoise flight-recorder --trigger-file %s)",
			file, ANSWER_MS / 1000, file);
	return HVN_EXIT_FAIL;
}

int cmd_trigger(int argc, char **argv)
{
	struct trigger_args a = { .file = "/run/hvnoise/trigger", .window = 30 };
	struct hvn_trigger t = { 0 };
	uint64_t ino = 0;
	int first, ret;

	ret = hvn_cli_parse(&trigger_cmd, argc, argv, &a, NULL, &first);
	if (ret >= 0)
		return ret;
	if (a.window_given && !a.at) {
		hvn_err("--window is the time around --at WHEN: give --at too");
		return HVN_EXIT_USAGE;
	}
	if (a.at) {
		if (parse_at(a.at, &t.at)) {
			hvn_err("--at %s: not HH:MM[:SS[.frac]], 'YYYY-MM-DD HH:MM[:SS]' or @EPOCH",
				a.at);
			return HVN_EXIT_USAGE;
		}
		t.window = (uint64_t)(a.window * 1e9);
	}
	snprintf(t.why, sizeof(t.why), "%s", a.why[0] ? a.why : "hvnoise trigger");
	if (hvn_trigger_write(a.file, &t, &ino)) {
		hvn_err("cannot write %s: %s (is the flight recorder started with --trigger-file %s, and are you root?)",
			a.file, strerror(errno), a.file);
		return HVN_EXIT_FAIL;
	}
	return answered(a.file, ino, &t, a.at, a.window);
}
