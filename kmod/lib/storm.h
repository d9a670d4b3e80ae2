/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interrupt storm detection for one source (an IRQ, a vector, or all
 * interrupts) on one CPU.  Time is cut into windows that start at the
 * first interrupt after the previous one ended; a window with at least
 * @threshold interrupts is hot.  A storm begins the moment a window becomes
 * hot and ends with the first window that is not (or is empty); it spans
 * from the first interrupt of its first hot window to the last interrupt of
 * its last one.  O(1) per interrupt, no allocation: this is the hot path.
 */
#ifndef HVN_STORM_H
#define HVN_STORM_H

#include "hvn_types.h"

struct hvn_storm_cfg {
	u64 window_ns;
	u32 threshold;		/* interrupts in one window; >= 1 */
};

struct hvn_storm {
	u64 win_start;		/* first interrupt of the current window */
	u64 win_last;		/* last interrupt of the current window */
	u32 win_count;
	bool active;		/* a storm is under way */
	u64 start;		/* storm: first interrupt */
	u64 end;		/* storm: last interrupt of the last hot window */
	u64 count;		/* storm: interrupts in its hot windows */
	u32 peak;		/* storm: most interrupts in one window */
};

/* A finished storm. */
struct hvn_storm_report {
	u64 start, duration, count;
	u64 peak_rate;		/* interrupts per second in the busiest window */
};

#define HVN_STORM_BEGIN	0x1	/* a storm began with this interrupt */
#define HVN_STORM_END	0x2	/* a storm ended before it; see @ended */

/*
 * Count one interrupt at @now (monotonic ns, never before the previous
 * one).  Returns HVN_STORM_* flags; both may be set when one storm ended
 * and the next began at once.
 */
HVN_LIB unsigned int hvn_storm_irq(struct hvn_storm *s, const struct hvn_storm_cfg *c,
			   u64 now, struct hvn_storm_report *ended);

/*
 * End a storm whose windows are over by @now with no interrupt to tell
 * (the source went quiet), or unconditionally with @force (CPU going
 * offline, unload).  Returns true and fills @ended if a storm ended.
 */
HVN_LIB bool hvn_storm_expire(struct hvn_storm *s, const struct hvn_storm_cfg *c,
		      u64 now, bool force, struct hvn_storm_report *ended);

/*
 * Whether to walk a CPU's storms for hvn_storm_expire() at @now (@force:
 * always); @next holds when the next walk is due.  A storm ends two
 * windows after its last busy one at the earliest, and its report holds
 * its own times, so a walk once an eighth of a window finds each end as
 * surely as a walk on every interrupt, which under a storm cost about 570
 * instructions an interrupt (bench/instructions.sh).
 */
HVN_LIB bool hvn_storm_walk_due(u64 *next, u64 now, u64 window_ns, bool force);

/*
 * Device IRQs tracked per CPU at once: a small open-addressed table,
 * probed from irq % HVN_STORM_SLOTS, so that two IRQs of one CPU equal
 * modulo its size (a NIC's queues n and n + 16) each keep their window.
 */
#define HVN_STORM_SLOTS		16	/* power of two */
#define HVN_STORM_NAME_LEN	16	/* = HVN_IRQ_NAME_LEN */

struct hvn_storm_slot {
	int irq;			/* -1: free */
	char name[HVN_STORM_NAME_LEN];
	struct hvn_storm st;
};

/*
 * The slot counting @irq at @now: the one holding it, else a free one,
 * else one whose source is quiet (no storm and its window over: nothing
 * counted there is lost).  A slot given to @irq anew has its state cleared
 * and *@claimed set (the caller names it).  NULL: every slot is busy (the
 * caller counts the IRQ as untracked).
 */
HVN_LIB struct hvn_storm_slot *hvn_storm_slot(struct hvn_storm_slot *slots, int irq,
					      const struct hvn_storm_cfg *c, u64 now,
					      bool *claimed);

/* Interrupts per window for a rate per second; at least 1. */
HVN_LIB u32 hvn_storm_threshold(u64 rate_per_s, u64 window_ns);

#endif /* HVN_STORM_H */
