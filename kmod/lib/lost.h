/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Lost time: how late a hard timer fired on a CPU, minus what the guest
 * itself spent in interrupts, softirqs and NMIs meanwhile; the rest was
 * taken from the vCPU outside the guest (hypervisor, SMI, host contention).
 *
 * Per CPU, the outermost interrupt-context intervals are kept in a small
 * ring; a late timer asks how much of [expiry, now] they cover.  Intervals
 * are added only from the CPU they belong to (IRQs off), and read from the
 * timer interrupt on the same CPU: no locks.
 */
#ifndef HVN_LOST_H
#define HVN_LOST_H

#include "hvn_types.h"

#define HVN_IVL_RING	32	/* power of two */

struct hvn_ivl_ring {
	u64 start[HVN_IVL_RING];
	u64 end[HVN_IVL_RING];
	u32 head;		/* next slot to write */
	u32 depth;		/* interrupt-context nesting now */
	u64 open_start;		/* start of the outermost open interval */
};

/* Interrupt-context entry and exit at @now; only the outermost counts. */
HVN_LIB void hvn_ivl_enter(struct hvn_ivl_ring *r, u64 now);
HVN_LIB void hvn_ivl_exit(struct hvn_ivl_ring *r, u64 now);
/* A finished interval of known length (an NMI: end and duration). */
HVN_LIB void hvn_ivl_add(struct hvn_ivl_ring *r, u64 start, u64 end);

/*
 * A hard timer runs late only while interrupts are off or the vCPU is not
 * running, and a guest handler with interrupts off for milliseconds is
 * rare; a vCPU stopped by its host inside a handler is not.  So an
 * interval is kept as its first HVN_IVL_CAP_NS at most: the rest of a
 * longer one is taken as time the vCPU did not run.
 */
#define HVN_IVL_CAP_NS	(4ULL * 1000 * 1000)

/*
 * Time in [from, to] covered by finished intervals.  Intervals older than
 * the ring are forgotten: the result is then a lower bound, and the caller
 * reports the gap as unexplained.
 */
HVN_LIB u64 hvn_ivl_covered(const struct hvn_ivl_ring *r, u64 from, u64 to);

struct hvn_lost_cfg {
	u64 threshold_ns;	/* report when lateness - explained >= this */
};

struct hvn_lost_report {
	u64 start;		/* when the timer should have fired */
	u64 duration;		/* how late it fired */
	u64 irq_ns;		/* of which: guest IRQ/softirq/NMI time */
	u64 steal_ns;		/* of which: steal the hypervisor reported */
	u64 unexplained_ns;	/* the rest */
};

struct hvn_lost_cpu {
	u64 last_batch;		/* the interrupt batch last reported */
};

/*
 * A hard timer fired at @now, @lateness ns after its expiry; @steal_ns was
 * reported as steal meanwhile.  Timers expiring in one hrtimer interrupt
 * share @batch (the expiry clock the interrupt read once): only the first
 * of a batch, the earliest expiry, is reported.  Returns true and fills
 * @rep if the time lost reaches the threshold.
 */
HVN_LIB bool hvn_lost_check(struct hvn_lost_cpu *lc, const struct hvn_ivl_ring *r,
		    const struct hvn_lost_cfg *c, u64 now, u64 batch,
		    u64 lateness, u64 steal_ns, struct hvn_lost_report *rep);

#endif /* HVN_LOST_H */
