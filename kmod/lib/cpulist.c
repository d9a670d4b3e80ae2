// SPDX-License-Identifier: GPL-2.0
/*
 * cpulist parsing and formatting, shared by hvnoise.ko (cpus= parameter)
 * and its userspace tests.  The kernel's bitmap_parselist() would do, but
 * its errors say only -EINVAL or -ERANGE; an operator needs to be told which
 * item is wrong and why.
 */
#include "cpulist.h"

/* Longest item quoted back in an error message. */
#define ITEM_QUOTE	24

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Parse a decimal number at *p; fails on no digits or above UINT_MAX - 1. */
static bool parse_num(const char **p, const char *end, unsigned int *out)
{
	unsigned long long v = 0;
	const char *q = *p;

	if (q >= end || !is_digit(*q))
		return false;
	while (q < end && is_digit(*q)) {
		v = v * 10 + (unsigned int)(*q - '0');
		if (v >= 0xffffffffULL)
			return false;
		q++;
	}
	*p = q;
	*out = (unsigned int)v;
	return true;
}

static int item_error(char *err, size_t errlen, const char *item, size_t n,
		      const char *why)
{
	if (n > ITEM_QUOTE)
		n = ITEM_QUOTE;
	snprintf(err, errlen, "\"%.*s\": %s", (int)n, item, why);
	return -EINVAL;
}

/* One item: N, N-M or N-M:USED/GROUP. */
static int parse_item(const char *item, const char *end, unsigned long *map,
		      unsigned int nbits, char *err, size_t errlen)
{
	size_t n = (size_t)(end - item);
	unsigned int a, b, used = 1, group = 1, cpu;
	const char *p = item;
	char why[64];

	if (item == end)
		return item_error(err, errlen, item, n, "empty item");
	if (!parse_num(&p, end, &a))
		return item_error(err, errlen, item, n, "not a CPU number or range");
	b = a;
	if (p < end && *p == '-') {
		p++;
		if (!parse_num(&p, end, &b))
			return item_error(err, errlen, item, n, "bad range end");
		if (p < end && *p == ':') {
			p++;
			if (!parse_num(&p, end, &used) || p >= end || *p != '/')
				return item_error(err, errlen, item, n,
						  "bad stride (expected N-M:USED/GROUP)");
			p++;
			if (!parse_num(&p, end, &group))
				return item_error(err, errlen, item, n,
						  "bad stride (expected N-M:USED/GROUP)");
			if (!used || !group || used > group)
				return item_error(err, errlen, item, n,
						  "stride needs 0 < USED <= GROUP");
		}
	}
	if (p != end)
		return item_error(err, errlen, item, n, "unexpected characters");
	if (a > b)
		return item_error(err, errlen, item, n, "range is reversed");
	if (b >= nbits) {
		snprintf(why, sizeof(why), "CPU %u is out of range (0-%u)",
			 b, nbits - 1);
		return item_error(err, errlen, item, n, why);
	}
	for (cpu = a; cpu <= b; cpu++)
		if ((cpu - a) % group < used)
			hvn_bit_set(map, cpu);
	return 0;
}

int hvn_cpulist_parse(const char *s, unsigned long *map, unsigned int nbits,
		      char *err, size_t errlen)
{
	size_t len = strlen(s);
	const char *p = s, *end;
	int ret;

	memset(map, 0, HVN_BITS_TO_LONGS(nbits) * sizeof(long));
	if (len && s[len - 1] == '\n')
		len--;
	end = s + len;
	if (!len) {
		snprintf(err, errlen,
			 "empty cpulist (write \"none\" to list no CPUs)");
		return -EINVAL;
	}
	if (len == 4 && !memcmp(s, "none", 4))
		return 0;
	if (!nbits) {
		snprintf(err, errlen, "no possible CPUs");
		return -EINVAL;
	}
	for (;;) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *stop = comma ? comma : end;

		ret = parse_item(p, stop, map, nbits, err, errlen);
		if (ret)
			return ret;
		if (!comma)
			return 0;
		p = comma + 1;
		if (p == end)
			return item_error(err, errlen, s, len,
					  "trailing comma");
	}
}

/* Append ",a" or ",a-b" (no comma first) at *pos; -ENOSPC if it does not fit. */
static int append_range(char *buf, size_t len, size_t *pos, bool first,
			unsigned int a, unsigned int b)
{
	const char *sep = first ? "" : ",";
	size_t room = len - *pos;
	int n;

	if (a == b)
		n = snprintf(buf + *pos, room, "%s%u", sep, a);
	else
		n = snprintf(buf + *pos, room, "%s%u-%u", sep, a, b);
	if (n < 0 || (size_t)n >= room)
		return -ENOSPC;
	*pos += (size_t)n;
	return 0;
}

int hvn_cpulist_format(char *buf, size_t len, const unsigned long *map,
		       unsigned int nbits)
{
	unsigned int cpu = 0, start;
	size_t pos = 0;
	bool first = true;

	if (!len)
		return -ENOSPC;
	buf[0] = '\0';
	while (cpu < nbits) {
		if (!hvn_bit_test(map, cpu)) {
			cpu++;
			continue;
		}
		start = cpu;
		while (cpu + 1 < nbits && hvn_bit_test(map, cpu + 1))
			cpu++;
		if (append_range(buf, len, &pos, first, start, cpu))
			return -ENOSPC;
		first = false;
		cpu++;
	}
	if (first) {
		if (len < 5)
			return -ENOSPC;
		memcpy(buf, "none", 5);
		return 4;
	}
	return (int)pos;
}
