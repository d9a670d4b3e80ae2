// SPDX-License-Identifier: GPL-2.0
/* --since and --until: the forms of WHEN in hvnoise(8), to trace time. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/episodes.h"
#include "analysis/when.h"

/* Seconds with an optional fraction, to ns; -1 if malformed. */
int hvn_when_secs(const char *s, uint64_t *ns)
{
	char *end;
	double v;

	if (!isdigit((unsigned char)*s))
		return -1;
	v = strtod(s, &end);
	if (*end == 's')
		end++;
	if (*end || v < 0 || v > 1e11)
		return -1;
	*ns = (uint64_t)(v * 1e9 + 0.5);
	return 0;
}

/* A wall-clock time in local time, to CLOCK_REALTIME ns; -1 if malformed. */
int hvn_when_wall(const char *s, uint64_t day_of, uint64_t *ns)
{
	struct tm tm = { 0 };
	const char *p;
	double sec = 0;
	char *end;
	time_t t;

	if (strlen(s) > 10 && s[4] == '-' && (s[10] == ' ' || s[10] == 'T')) {
		p = strptime(s, "%Y-%m-%d", &tm);
		if (!p)
			return -1;
		p++;
	} else {
		time_t d = day_of / 1000000000ull;

		localtime_r(&d, &tm);
		p = s;
	}
	if (!isdigit((unsigned char)p[0]))
		return -1;
	tm.tm_hour = strtol(p, &end, 10);
	if (*end != ':')
		return -1;
	tm.tm_min = strtol(end + 1, &end, 10);
	if (*end == ':') {
		sec = strtod(end + 1, &end);
		if (sec < 0 || sec >= 61)
			return -1;
	}
	if (*end || tm.tm_hour > 23 || tm.tm_min > 59)
		return -1;
	tm.tm_sec = 0;
	tm.tm_isdst = -1;
	t = mktime(&tm);
	if (t == (time_t)-1)
		return -1;
	*ns = (uint64_t)t * 1000000000ull + (uint64_t)(sec * 1e9 + 0.5);
	return 0;
}

/* WHEN to a trace timestamp (ns), or an error message. */
const char *hvn_when_parse(const char *w, uint64_t start,
			   const struct hvn_analysis *an, uint64_t *out)
{
	uint64_t ns;

	if (w[0] == '+') {
		if (hvn_when_secs(w + 1, &ns))
			return "not +SECONDS";
		if (!start)
			return "the file has no recording start (not written by hvnoise record): use mono:SECONDS";
		*out = start + ns;
		return NULL;
	}
	if (!strncmp(w, "mono:", 5)) {
		if (hvn_when_secs(w + 5, &ns))
			return "not mono:SECONDS";
		*out = ns;
		return NULL;
	}
	if (w[0] == '@') {
		if (hvn_when_secs(w + 1, &ns))
			return "not @EPOCH";
	} else if (hvn_when_wall(w, an->nclk ? an->clk[0].real : 0, &ns)) {
		return "not a time (see --help)";
	}
	if (!an->nclk)
		return "the file has no clock pairs (not written by hvnoise record): use mono:SECONDS";
	*out = hvn_an_real_to_mono(an, ns);
	return NULL;
}
