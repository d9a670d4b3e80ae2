// SPDX-License-Identifier: GPL-2.0
/*
 * hvnoise incidents: the flight recorder's incidents, newest first, each
 * with when it was written, its trigger and why; --latest prints the
 * newest one's path alone, for hvnoise report or trace-cmd report -i.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "hvn.h"
#include "tracedat/meta.h"
#include "tracedat/tracedat.h"

struct incidents_args {
	const char *prefix, *trigger;
	bool latest;
};

static const struct hvn_opt incidents_opts[] = {
	HVN_OPT_STR_ROW("output", 'o', "PREFIX", struct incidents_args, prefix,
			"the flight recorder's -o (default\n/var/lib/hvnoise/incident, the service's)"),
	HVN_OPT_STR_ROW("trigger", 0, "NAME", struct incidents_args, trigger,
			"only those of one trigger: signal, file, stall, at,\nlost or storm"),
	HVN_OPT_FLAG_ROW("latest", 0, struct incidents_args, latest,
			 "print only the newest incident's path"),
	HVN_OPT_END_ROW
};

static const struct hvn_cmd incidents_cmd = {
	.name = "incidents",
	.synopsis = "[-o PREFIX] [--trigger NAME] [--latest]",
	.opts = incidents_opts,
	.no_operands = "incidents takes no file: -o PREFIX says where they are",
};

/* One incident: PREFIX-YYYYmmdd-HHMMSS.mmm-TRIGGER.dat. */
struct incident {
	const char *path;
	char stamp[20];			/* YYYYmmdd-HHMMSS.mmm */
	char trigger[16];
};

/* @path's stamp and trigger, after @plen bytes of prefix: 0, or -1 if
 * the name is not an incident's. */
static int parse_name(const char *path, size_t plen, struct incident *in)
{
	const char *s = path + plen;
	size_t n;

	if (s[0] != '-' || strlen(s + 1) < 19 + 1 + 4 || s[20] != '-')
		return -1;
	memcpy(in->stamp, s + 1, 19);
	in->stamp[19] = 0;
	n = strlen(s + 21);
	if (n < 5 || n - 4 >= sizeof(in->trigger) || strcmp(s + 21 + n - 4, ".dat"))
		return -1;
	memcpy(in->trigger, s + 21, n - 4);
	in->trigger[n - 4] = 0;
	if (strspn(in->stamp, "0123456789") != 8 || in->stamp[8] != '-' ||
	    strspn(in->stamp + 9, "0123456789") != 6 || in->stamp[15] != '.')
		return -1;
	in->path = path;
	return 0;
}

static int newest_first(const void *a, const void *b)
{
	const struct incident *x = a, *y = b;
	int c = strcmp(y->stamp, x->stamp);

	return c ? c : strcmp(y->path, x->path);
}

/* Why it was written, from the file itself ("?" if it cannot be read). */
static void why_of(const char *path, char *why, size_t len)
{
	bool quiet = hvn_quiet;
	struct hvn_tdat t;
	struct hvn_meta m;

	/* Said here, once, not as the reader's errors. */
	snprintf(why, len, "? (not readable: hvnoise report %s says why)", path);
	hvn_quiet = true;
	if (!hvn_tdat_open(&t, path)) {
		if (!hvn_meta_read(&m, &t)) {
			snprintf(why, len, "%s", m.flight[0] ? m.flight : "?");
			hvn_meta_free(&m);
		}
		hvn_tdat_close(&t);
	}
	hvn_quiet = quiet;
}

int cmd_incidents(int argc, char **argv)
{
	struct incidents_args a = { .prefix = "/var/lib/hvnoise/incident" };
	struct incident *v = NULL;
	char pattern[8400], esc[8200], trig[128], why[160];
	size_t n = 0;
	glob_t g;
	int first, ret;

	ret = hvn_cli_parse(&incidents_cmd, argc, argv, &a, NULL, &first);
	if (ret >= 0)
		return ret;
	hvn_glob_escape(a.prefix, esc, sizeof(esc));
	hvn_glob_escape(a.trigger ? a.trigger : "", trig, sizeof(trig));
	snprintf(pattern, sizeof(pattern), "%s-*-%s.dat", esc, a.trigger ? trig : "*");
	ret = glob(pattern, 0, NULL, &g);
	if (!ret)
		v = calloc(g.gl_pathc, sizeof(*v));
	for (size_t i = 0; v && i < g.gl_pathc; i++)
		if (!parse_name(g.gl_pathv[i], strlen(a.prefix), &v[n]) &&
		    (!a.trigger || !strcmp(v[n].trigger, a.trigger)))
			n++;
	if (!n) {
		if (a.latest)
			hvn_err("no incident matches %s", pattern);
		else
			hvn_info("no incident matches %s\n", pattern);
		ret = a.latest ? HVN_EXIT_BADFILE : HVN_EXIT_OK;
		goto out;
	}
	qsort(v, n, sizeof(*v), newest_first);
	if (a.latest) {
		printf("%s\n", v[0].path);
		ret = HVN_EXIT_OK;
		goto out;
	}
	printf("%-23s  %-7s  %s\n", "WRITTEN", "TRIGGER", "FILE, WHY");
	for (size_t i = 0; i < n; i++) {
		const char *s = v[i].stamp;

		why_of(v[i].path, why, sizeof(why));
		printf("%.4s-%.2s-%.2s %.2s:%.2s:%.2s%.4s  %-7s  %s\n    %s\n",
		       s, s + 4, s + 6, s + 9, s + 11, s + 13, s + 15,
		       v[i].trigger, v[i].path, why);
	}
	ret = HVN_EXIT_OK;
out:
	free(v);
	if (g.gl_pathv)
		globfree(&g);
	return ret;
}
