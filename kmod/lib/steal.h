/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Steal time: reading a KVM steal-time area consistently, and turning
 * successive readings of a steal counter into steal episodes.
 */
#ifndef HVN_STEAL_H
#define HVN_STEAL_H

#include "hvn_types.h"

/*
 * The fields of struct kvm_steal_time hvnoise reads, with the accessors
 * the caller supplies (READ_ONCE on a memremap()ed area in the kernel, a
 * fake in the tests).
 */
struct hvn_steal_area_ops {
	u32 (*version)(const void *area);
	u64 (*steal)(const void *area);
	void (*read_barrier)(void);
};

/*
 * Read the steal counter under the area's version seqlock: the host makes
 * the version odd while it writes and bumps it again after.  Retries at
 * most @max_tries times; returns false if the host kept writing.
 */
HVN_LIB bool hvn_steal_area_read(const struct hvn_steal_area_ops *ops, const void *area,
			 unsigned int max_tries, u64 *steal);

struct hvn_steal_cpu {
	bool primed;		/* last_* hold a reading */
	u64 last_steal;		/* counter at the last sample, ns */
	u64 last_time;		/* when it was taken, monotonic ns */
};

struct hvn_steal_report {
	u64 start;		/* the sampling interval that saw it */
	u64 window;
	u64 steal;		/* ns of steal in it */
};

/*
 * A new sample of the counter at @now.  Returns true and fills @rep when
 * the steal since the last sample reaches @threshold_ns.  A counter that
 * went backwards (host reset, CPU replugged) re-primes instead.
 */
HVN_LIB bool hvn_steal_sample(struct hvn_steal_cpu *sc, u64 now, u64 steal,
		      u64 threshold_ns, struct hvn_steal_report *rep);

#endif /* HVN_STEAL_H */
