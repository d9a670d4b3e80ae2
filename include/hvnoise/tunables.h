/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The detectors' tunables, once: the module's parameters (kmod/params.c),
 * the BPF source's --param (tools/bpf/params.c), hvnoise status and the
 * table in Documentation/detectors.rst (scripts/tunables.py) are made from
 * the one list in tunable-list.h.  Each entry is
 * HVN_TUNABLE(name, least, most, default, zero_off, what): a value outside
 * least..most is refused, except 0 where zero_off says 0 turns it off.
 */
#ifndef HVNOISE_TUNABLES_H
#define HVNOISE_TUNABLES_H

#define HVN_DEF_RESOLVE_MS		1000
#define HVN_DEF_WATCH_DELTA_PCT		50	/* 0: whole sets only */
#define HVN_DEF_STORM_RATE		20000	/* IRQs/s of one source */
#define HVN_DEF_STORM_ALL_RATE		100000	/* IRQs/s of a whole CPU */
#define HVN_DEF_STORM_WINDOW_MS		100
#define HVN_DEF_LOST_THRESHOLD_US	1000
#define HVN_DEF_SAMPLE_US		0	/* no sampling timer */
#define HVN_DEF_STEAL_MS		100
#define HVN_DEF_STEAL_THRESHOLD_US	1000

/* How a range reads: HVN_TUN_RANGE_##zero_off "least..most". */
#define HVN_TUN_RANGE_0 ""
#define HVN_TUN_RANGE_1 "0 (off) or "

/* One index per tunable: HVN_TUN_storm_rate, ... */
enum hvn_tunable {
#define HVN_TUNABLE(n, lo, hi, def, off, what) HVN_TUN_##n,
#include "tunable-list.h"
#undef HVN_TUNABLE
	HVN_NTUNABLES
};

#endif /* HVNOISE_TUNABLES_H */
