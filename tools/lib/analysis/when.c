// SPDX-License-Identifier: GPL-2.0
/* --since and --until: the forms of WHEN in hvnoise(8), to trace time. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/episodes.h"
#include "analysis/when.h"

/* DIGITS[.DIGITS] at @s: its length, or 0.  No sign, exponent, hex, inf
 * or nan, which strtod() would take. */
static size_t decimal_len(const char *s)
{
	size_t n = strspn(s, "0123456789");

	if (n && s[n] == '.')
		n += 1 + strspn(s + n + 1, "0123456789");
	return n;
}

/* The decimal at *@s, advancing it; -1 if there is none or it is longer
 * than any time written by hand. */
static int decimal(const char **s, double *v)
{
	size_t n = decimal_len(*s);
	char buf[32];

	if (!n || n >= sizeof(buf))
		return -1;
	memcpy(buf, *s, n);
	buf[n] = '\0';
	*v = strtod(buf, NULL);
	*s += n;
	return 0;
}

/* Seconds with an optional fraction and 's', to ns; -1 if malformed or
 * beyond what 64-bit nanoseconds hold (about 584 years). */
int hvn_when_secs(const char *s, uint64_t *ns)
{
	double v;

	if (decimal(&s, &v))
		return -1;
	if (*s == 's')
		s++;
	if (*s || v >= 18446744073.0)
		return -1;
	*ns = (uint64_t)(v * 1e9 + 0.5);
	return 0;
}

/* One or two digits at *@p, advancing it, no more than @max. */
static int two_digits(const char **p, int max, int *v)
{
	size_t n = strspn(*p, "0123456789");

	if (n < 1 || n > 2)
		return -1;
	*v = n == 1 ? (*p)[0] - '0' : ((*p)[0] - '0') * 10 + (*p)[1] - '0';
	*p += n;
	return *v > max ? -1 : 0;
}

/* A wall-clock time in local time, to CLOCK_REALTIME ns; -1 if malformed. */
int hvn_when_wall(const char *s, uint64_t day_of, uint64_t *ns)
{
	struct tm tm = { 0 };
	const char *p;
	double sec = 0;
	time_t t;

	if (strlen(s) > 10 && s[4] == '-' && (s[10] == ' ' || s[10] == 'T')) {
		p = strptime(s, "%Y-%m-%d", &tm);
		if (!p || p != s + 10)
			return -1;
		p++;
	} else {
		time_t d = day_of / 1000000000ull;

		localtime_r(&d, &tm);
		p = s;
	}
	if (two_digits(&p, 23, &tm.tm_hour) || *p++ != ':' ||
	    two_digits(&p, 59, &tm.tm_min))
		return -1;
	if (*p == ':') {
		p++;
		if (decimal(&p, &sec) || sec >= 61)
			return -1;
	}
	if (*p)
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
