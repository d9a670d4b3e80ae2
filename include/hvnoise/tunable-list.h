/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tunables (tunables.h says how they are used): included where each
 * is needed, with HVN_TUNABLE(name, least, most, default, zero_off, what)
 * defined to make what that place needs of each, as the kernel's
 * kvm-x86-ops.h is.  No include guard: it is meant to be included again.
 */
HVN_TUNABLE(resolve_ms, 10, 3600000, HVN_DEF_RESOLVE_MS, 1,
	    "period of the watched set and IRQ affinity re-check in ms")
HVN_TUNABLE(watch_delta_pct, 1, 100, HVN_DEF_WATCH_DELTA_PCT, 1,
	    "a watched-set change is emitted as a delta when under this % of the set")
HVN_TUNABLE(storm_rate, 1, 100000000, HVN_DEF_STORM_RATE, 0,
	    "interrupts/s of one IRQ or vector on a CPU that make a storm")
HVN_TUNABLE(storm_all_rate, 1, 100000000, HVN_DEF_STORM_ALL_RATE, 0,
	    "interrupts/s of all sources on a CPU that make a storm")
HVN_TUNABLE(storm_window_ms, 1, 10000, HVN_DEF_STORM_WINDOW_MS, 0,
	    "storm detection window in ms")
HVN_TUNABLE(lost_threshold_us, 10, 10000000, HVN_DEF_LOST_THRESHOLD_US, 0,
	    "smallest lost time reported, in us")
HVN_TUNABLE(sample_us, 100, 1000000, HVN_DEF_SAMPLE_US, 1,
	    "period of a pinned sampling timer on watched CPUs in us")
HVN_TUNABLE(steal_ms, 10, 60000, HVN_DEF_STEAL_MS, 1,
	    "steal sampling period in ms")
HVN_TUNABLE(steal_threshold_us, 1, 10000000, HVN_DEF_STEAL_THRESHOLD_US, 0,
	    "smallest steal per sampling period reported, in us")
