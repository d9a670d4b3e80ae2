// SPDX-License-Identifier: GPL-2.0
/*
 * --param for the BPF source: each tunable of include/hvnoise/tunables.h,
 * checked against the module's own ranges.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "msg.h"
#include "params.h"

static const struct tunable {
	const char *name;
	size_t off;
	unsigned int min, max, def;
	bool zero_off;
} tunables[] = {
#define HVN_TUNABLE(n, lo, hi, d, z, what) \
	[HVN_TUN_##n] = { #n, offsetof(struct hvn_bpf_cfg, n), lo, hi, d, z },
#include "hvnoise/tunable-list.h"
#undef HVN_TUNABLE
};

/* Their names, for the message that lists them. */
static const char tunable_names[] =
#define HVN_TUNABLE(n, lo, hi, d, z, what) ", " #n
#include "hvnoise/tunable-list.h"
#undef HVN_TUNABLE
	;

#define TVAL(c, t) ((unsigned int *)((char *)(c) + (t)->off))

int hvn_bpf_cfg_param(struct hvn_bpf_cfg *c, const char *nv)
{
	const char *eq = strchr(nv, '=');
	unsigned long v;
	char *end;

	for (size_t i = 0; eq && i < HVN_NTUNABLES; i++) {
		const struct tunable *t = &tunables[i];

		if (strlen(t->name) != (size_t)(eq - nv) ||
		    strncmp(nv, t->name, eq - nv))
			continue;
		errno = 0;
		v = strtoul(eq + 1, &end, 10);
		if (errno || end == eq + 1 || *end ||
		    ((v || !t->zero_off) && (v < t->min || v > t->max))) {
			hvn_err("--param %s: want %s%u..%u", nv,
				t->zero_off ? HVN_TUN_RANGE_1 : "", t->min,
				t->max);
			return -1;
		}
		/* 0 means "default" in the struct: store off as UINT_MAX. */
		*TVAL(c, t) = v ? (unsigned int)v : ~0u;
		return 0;
	}
	hvn_err("--param %s: not NAME=VALUE with NAME one of %s", nv,
		tunable_names + 2);
	return -1;
}

unsigned int hvn_bpf_tunable(const struct hvn_bpf_cfg *c, enum hvn_tunable t)
{
	unsigned int v = *TVAL(c, &tunables[t]);

	return v == ~0u ? 0 : v ? v : tunables[t].def;
}
