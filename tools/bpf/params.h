/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF source's tunables: the module's parameters under their names
 * and with their ranges, from the one list in include/hvnoise/.
 */
#ifndef HVNOISE_BPF_PARAMS_H
#define HVNOISE_BPF_PARAMS_H

#include "hvnoise/tunables.h"

/* The collector's configuration; a tunable of 0 stands for its default. */
struct hvn_bpf_cfg {
	const char *cpus;		/* cpulist, or NULL */
	const char *devices;		/* PCI addresses, "auto", "none" */
#define HVN_TUNABLE(n, lo, hi, def, off, what) unsigned int n;
#include "hvnoise/tunable-list.h"
#undef HVN_TUNABLE
};

/* Take a "NAME=VALUE" tunable (--param); -1 with the reason printed. */
int hvn_bpf_cfg_param(struct hvn_bpf_cfg *c, const char *nv);
/* The value in force: the default where unset, 0 where turned off. */
unsigned int hvn_bpf_tunable(const struct hvn_bpf_cfg *c, enum hvn_tunable t);

#endif
