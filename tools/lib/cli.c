// SPDX-License-Identifier: GPL-2.0
/*
 * One option parser for every command: getopt_long's short string and long
 * options, and the usage text, are made from the command's table.
 * Long-only options get keys above 255, never letters.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <tracefs.h>

#include "cli.h"

int hvn_cli_num(const char *opt, const char *arg, double lo, double hi,
		double *v)
{
	char *end;

	*v = strtod(arg, &end);
	if (end == arg || *end || !(*v >= lo && *v <= hi)) {
		hvn_err("%s %s: not a number from %g to %g", opt, arg, lo, hi);
		return -1;
	}
	return 0;
}

int hvn_cli_secs(const char *opt, const char *arg, double lo, double hi,
		 double *v)
{
	static const struct { const char *sfx; double mul; } unit[] = {
		{ "", 1 }, { "us", 1e-6 }, { "ms", 1e-3 }, { "s", 1 },
		{ "m", 60 }, { "h", 3600 }, { "d", 86400 },
	};
	char *end;
	double x = strtod(arg, &end);

	/* A decimal number: strtod also takes spaces, signs and hex. */
	if (!((*arg >= '0' && *arg <= '9') || *arg == '.') || strpbrk(arg, "xXpP"))
		end = (char *)arg;
	for (size_t k = 0; end != arg && k < sizeof(unit) / sizeof(unit[0]); k++) {
		if (strcmp(end, unit[k].sfx))
			continue;
		*v = x * unit[k].mul;
		if (*v >= lo && *v <= hi)
			return 0;
		break;
	}
	hvn_err("%s %s: not a time from %gs to %gs (seconds, or a number with us, ms, s, m, h or d)",
		opt, arg, lo, hi);
	return -1;
}

static void usage_opt(FILE *f, const struct hvn_opt *o)
{
	char head[64];
	const char *h = o->help;
	int n;

	if (o->letter)
		n = snprintf(head, sizeof(head), "  -%c, --%s%s%s", o->letter,
			     o->name, o->arg ? " " : "", o->arg ? o->arg : "");
	else
		n = snprintf(head, sizeof(head), "      --%s%s%s", o->name,
			     o->arg ? " " : "", o->arg ? o->arg : "");
	fprintf(f, "%s%*s", head, n < 23 ? 23 - n : 2, "");
	while (h) {
		const char *nl = strchr(h, '\n');

		fprintf(f, "%.*s\n", (int)(nl ? nl - h : (ptrdiff_t)strlen(h)),
			h);
		h = nl ? nl + 1 : NULL;
		if (h)
			fprintf(f, "%23s", "");
	}
}

/* What every command takes besides its table. */
static const struct hvn_opt common[] = {
	{ .name = "quiet", .letter = 'q', .help = "errors only: no warnings" },
	{ .name = "verbose", .letter = 'v',
	  .help = "debug lines, and libbpf's and libtracefs's logs\n(twice: theirs in full)" },
	{ .name = "help", .letter = 'h', .help = "this text" },
	HVN_OPT_END_ROW
};

static bool is_common(const struct hvn_opt *o)
{
	for (const struct hvn_opt *c = common; c->name; c++)
		if (c == o)
			return true;
	return false;
}

void hvn_cli_usage(const struct hvn_cmd *cmd, FILE *f)
{
	fprintf(f, "usage: hvnoise %s%s%s\n", cmd->name,
		cmd->synopsis[0] ? " " : "", cmd->synopsis);
	for (const struct hvn_opt *o = cmd->opts; o && o->name; o++)
		usage_opt(f, o);
	for (const struct hvn_opt *o = cmd->more; o && o->name; o++)
		usage_opt(f, o);
	for (const struct hvn_opt *o = common; o->name; o++)
		usage_opt(f, o);
	if (cmd->notes)
		fputs(cmd->notes, f);
}

/* The options of @cmd in one array, the common ones last. */
static int collect(const struct hvn_cmd *cmd, const struct hvn_opt ***all)
{
	const struct hvn_opt **a;
	int n = 0, i = 0;

	for (const struct hvn_opt *o = cmd->opts; o && o->name; o++)
		n++;
	for (const struct hvn_opt *o = cmd->more; o && o->name; o++)
		n++;
	for (const struct hvn_opt *o = common; o->name; o++)
		n++;
	a = calloc(n + 1, sizeof(*a));
	if (!a)
		return -1;
	for (const struct hvn_opt *o = cmd->opts; o && o->name; o++)
		a[i++] = o;
	for (const struct hvn_opt *o = cmd->more; o && o->name; o++)
		a[i++] = o;
	for (const struct hvn_opt *o = common; o->name; o++)
		a[i++] = o;
	*all = a;
	return i;
}

/* @o's value @arg into @vals; @spelled is the option as the user wrote it
 * ("-I" or "--interval"), for the messages. */
static int apply(const struct hvn_opt *o, const char *spelled,
		 const char *arg, void *vals, struct hvn_session_opts *so)
{
	char *p = (char *)vals + o->off;
	double v;

	switch (o->type) {
	case HVN_OPT_FLAG:
		*(bool *)p = true;
		return 0;
	case HVN_OPT_STR:
		*(const char **)p = arg;
		return 0;
	case HVN_OPT_NUM:
		if (hvn_cli_num(spelled, arg, o->lo, o->hi, &v))
			return -1;
		*(double *)p = v;
		return 0;
	case HVN_OPT_SECS:
		if (hvn_cli_secs(spelled, arg, o->lo, o->hi, &v))
			return -1;
		*(double *)p = v;
		return 0;
	case HVN_OPT_INT: {
		char *end;
		long long n;

		errno = 0;
		n = strtoll(arg, &end, 10);
		if (end == arg || *end || errno || n < o->lo || n > o->hi) {
			hvn_err("%s %s: not a whole number from %.0f to %.0f",
				spelled, arg, o->lo, o->hi);
			return -1;
		}
		*(long *)p = (long)n;
		return 0;
	}
	case HVN_OPT_SESSION:
		return o->sess(so, o->key, arg) == 1 ? 0 : -1;
	case HVN_OPT_CALL:
		return o->call(vals, o, arg);
	}
	return -1;
}

int hvn_cli_parse(const struct hvn_cmd *cmd, int argc, char **argv,
		  void *vals, struct hvn_session_opts *so, int *first)
{
	const struct hvn_opt **all = NULL;
	struct option *lo = NULL;
	char shorts[128];
	size_t ns = 0;
	int n, opt, ret = -1;

	n = collect(cmd, &all);
	lo = n < 0 ? NULL : calloc(n + 1, sizeof(*lo));
	if (!lo) {
		free(all);
		hvn_err("out of memory");
		return HVN_EXIT_FAIL;
	}
	/* '+': stop at the first operand; '-': operands in order, as option
	 * 1.  ':' reports a missing argument as ':'. */
	if (cmd->operand)
		shorts[ns++] = '-';
	else if (cmd->stop_at_operand)
		shorts[ns++] = '+';
	shorts[ns++] = ':';
	for (int i = 0; i < n; i++) {
		const struct hvn_opt *o = all[i];

		lo[i] = (struct option){ o->name,
					 o->arg ? required_argument : no_argument,
					 NULL, o->letter ? o->letter : 256 + i };
		if (o->letter && ns < sizeof(shorts) - 3) {
			shorts[ns++] = o->letter;
			if (o->arg)
				shorts[ns++] = ':';
		}
	}
	if (cmd->renamed_from && ns < sizeof(shorts) - 3) {
		shorts[ns++] = cmd->renamed_from;
		shorts[ns++] = ':';
	}
	shorts[ns] = '\0';
	optind = 0;		/* glibc: start over, in this order mode */
	opterr = 0;
	for (;;) {
		const struct hvn_opt *o = NULL;
		char spelled[72];
		int li = -1;

		opt = ret < 0 ? getopt_long(argc, argv, shorts, lo, &li) : -1;
		if (opt == -1)
			break;
		if (opt == 1) {
			if (cmd->operand(vals, optarg))
				ret = HVN_EXIT_USAGE;
			continue;
		}
		if (opt == '?' || opt == ':') {
			const char *what = argv[optind - 1];
			bool is_long = !strncmp(what, "--", 2);

			/* optopt: the short letter, or a known long option's
			 * key when it was given an argument it does not take. */
			if (opt == ':')
				hvn_err("%s needs an argument", what);
			else if (is_long && optopt)
				hvn_err("%.*s takes no argument",
					(int)strcspn(what, "="), what);
			else if (is_long)
				hvn_err("unknown option %s", what);
			else
				hvn_err("unknown option -%c", optopt);
			hvn_cli_usage(cmd, stderr);
			ret = HVN_EXIT_USAGE;
			break;
		}
		if (cmd->renamed_from && opt == cmd->renamed_from) {
			hvn_warn("%s", cmd->renamed_note);
			opt = cmd->renamed_to;
		}
		for (int i = 0; i < n && !o; i++)
			if (lo[i].val == opt)
				o = all[i];
		if (o && is_common(o)) {
			if (o->letter == 'h') {
				hvn_cli_usage(cmd, stdout);
				ret = HVN_EXIT_OK;
			} else if (o->letter == 'q') {
				hvn_verbosity = -1;
			} else if (hvn_verbosity < 2) {
				hvn_verbosity = hvn_verbosity < 0 ? 1 : hvn_verbosity + 1;
			}
			continue;
		}
		if (li >= 0 || !o || !o->letter)
			snprintf(spelled, sizeof(spelled), "--%s", o ? o->name : "?");
		else
			snprintf(spelled, sizeof(spelled), "-%c", o->letter);
		if (!o || apply(o, spelled, optarg, vals, so)) {
			ret = HVN_EXIT_USAGE;
		} else if (cmd->operand && o->type != HVN_OPT_CALL) {
			cmd->operand(vals, NULL);
		}
	}
	if (hvn_verbosity > 0)
		tracefs_set_loglevel(hvn_verbosity > 1 ? TEP_LOG_ALL : TEP_LOG_INFO);
	/* After "--", the rest are operands too. */
	while (ret < 0 && cmd->operand && optind < argc)
		if (cmd->operand(vals, argv[optind++]))
			ret = HVN_EXIT_USAGE;
	*first = optind;
	if (ret < 0 && optind < argc && !cmd->operands && !cmd->operand) {
		hvn_err("unexpected argument \"%s\"%s%s",
			argv[optind], cmd->no_operands ? ": " : "",
			cmd->no_operands ? cmd->no_operands : "");
		ret = HVN_EXIT_USAGE;
	}
	free(lo);
	free(all);
	/* The documentation's examples are run this far, as typed
	 * (tests/host/docs.py): the command line checked, nothing done. */
	if (ret < 0 && getenv("HVNOISE_CHECK_ARGS")) {
		hvn_warn("HVNOISE_CHECK_ARGS is set: the command line was checked, nothing done");
		ret = HVN_EXIT_OK;
	}
	return ret;
}
