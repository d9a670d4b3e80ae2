/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Lost time: how late a hard timer fired on a CPU, minus what the guest
 * itself spent in hard interrupts and NMIs meanwhile; the rest was
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
	u64 open_nmi;		/* NMI time inside it so far */
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

/*
 * Clock ids (uapi, the same on every architecture) whose timers are not
 * judged: a clock step (NTP, a restored VM) makes them late by the step.
 */
#define HVN_CLOCK_REALTIME	0
#define HVN_CLOCK_BOOTTIME	7
#define HVN_CLOCK_TAI		11

static inline bool hvn_lost_clock_judged(int clockid)
{
	return clockid != HVN_CLOCK_REALTIME && clockid != HVN_CLOCK_TAI;
}

struct hvn_lost_cfg {
	u64 threshold_ns;	/* report when lateness - explained >= this */
	/*
	 * How late the kernel runs a hard timer by design where hrtimers
	 * are not in high-resolution mode (highres=off, no oneshot clock
	 * event device): from the tick, up to a tick late.  0: unknown.
	 */
	u64 tick_ns;
	/*
	 * How long a report waits for steal that is accounted late (see
	 * hvn_lost_timer.steal_late): two ticks, the tick after a stop
	 * accounts it.
	 */
	u64 settle_ns;
};

struct hvn_lost_report {
	u64 start;		/* when the timer should have fired */
	u64 duration;		/* how late it fired */
	u64 irq_ns;		/* of which: guest IRQ, NMI and hotplug time */
	u64 steal_ns;		/* of which: steal the hypervisor reported */
	u64 unexplained_ns;	/* the rest */
};

/* Timers armed already due, remembered until they fire (see armed). */
#define HVN_ARMED_SLOTS	4

struct hvn_lost_cpu {
	u64 reported_until;	/* lost time up to here has been reported */
	u64 sampler_seen;	/* the probe's clock at the sampler's last expiry */
	u64 steal_snap;		/* steal counter at the last hard timer */
	bool snap_valid;	/* steal_snap read since the CPU was watched */
	u32 armed_next;
	u64 armed_timer[HVN_ARMED_SLOTS];	/* its address */
	u64 armed_at[HVN_ARMED_SLOTS];		/* when it was armed */
	u64 tick_seen;		/* low-resolution mode: a tick ran timers then */
	u64 boot_off;		/* CLOCK_BOOTTIME - CLOCK_MONOTONIC then */
	u64 resumed_at;		/* when a suspend was last seen ended */
	u64 suspended_ns;	/* how long that suspend lasted */
	u32 hangs;		/* the kernel's hang count at the last timer */
	u64 max_hang_ns;	/* the longest hang then */
	u64 last_now;		/* the probe's clock at the last timer */
	u64 last_entry;		/* its interrupt's entry, 0: not known */
	u64 defer_until;	/* timers deferred by the kernel until then */
	/* A report waiting for its steal (hvn_lost_timer.steal_late). */
	bool pending;
	u64 pend_until;		/* reported then, whatever steal came */
	u64 pend_nmi;		/* of pend.irq_ns: NMI time, which steal may take */
	struct hvn_lost_report pend;
};

/* The shortest suspend told from the offset's jitter. */
#define HVN_SUSPEND_MIN_NS	(1000ULL * 1000)

/* The longest the kernel defers a CPU's timers after a hang. */
#define HVN_HANG_DEFER_MAX_NS	(100ULL * 1000 * 1000)

/*
 * A hard timer due at @expiry (CLOCK_MONOTONIC) was seen expiring by a
 * probe that read the clock at @now; @steal_ns was reported as steal
 * meanwhile.  Lateness is measured against the probe's own clock read, not
 * the one the timer interrupt took before running its timers: a vCPU
 * stopped between the two lost that time too.  Time already reported is
 * not reported again, whatever timer or clock base saw it: several timers
 * due in one stop give one episode.  Returns true and fills @rep if the
 * time lost reaches the threshold.  The core of hvn_lost_judge(), without
 * NMIs, armed timers or the tick.
 */
HVN_LIB bool hvn_lost_check(struct hvn_lost_cpu *lc, const struct hvn_ivl_ring *r,
			    const struct hvn_lost_cfg *c, u64 now, u64 expiry,
			    u64 steal_ns, struct hvn_lost_report *rep);

/*
 * NMIs nest anywhere.  One outside an interrupt-context interval is kept
 * in a ring of its own (@nmi); one inside is that interval's time, beyond
 * its 4 ms cap (a burst of NMIs in one handler), and counted even while
 * the interval is still open when a timer in it is judged (a burst at a
 * timer interrupt's entry: 18 ms of NMIs were reported lost, irq_ns 0, in
 * a test guest).  Call from the NMI: @delta_ns it ran, ending at @now.
 */
HVN_LIB void hvn_lost_nmi(struct hvn_ivl_ring *ivl, struct hvn_ivl_ring *nmi,
			  u64 now, u64 delta_ns);

/*
 * A hard timer @timer (its address) was armed at @now to expire at
 * @expiry (CLOCK_MONOTONIC), not by its own callback.  One armed already
 * due (an overrun absolute deadline, a past timerfd or POSIX timer) fires
 * at once: its lateness counts from @now, not from a deadline that passed
 * while the CPU ran.  Re-armed in the future, it is forgotten.
 */
HVN_LIB void hvn_lost_armed(struct hvn_lost_cpu *lc, u64 timer, u64 expiry, u64 now);

/* What a probe saw of a hard timer expiring. */
struct hvn_lost_timer {
	u64 timer;		/* its address */
	u64 expiry;		/* due, CLOCK_MONOTONIC (a sampler's: hvn_lost_due) */
	u64 now;		/* the probe's clock read */
	u64 steal;		/* the CPU's steal counter, read now */
	bool from_tick;		/* low-resolution mode: run from the tick */
	/*
	 * hrtimer_interrupt() hangs of this CPU so far (nr_hangs), and the
	 * longest one (max_hang_time): after a hang (a vCPU stopped inside
	 * the interrupt makes one) the kernel defers the CPU's timers by
	 * the hang's length, 100 ms at most, on purpose.
	 */
	u32 hangs;
	u64 max_hang_ns;
	/*
	 * CLOCK_BOOTTIME - CLOCK_MONOTONIC now (0: unknown): a suspend adds
	 * its length.  A BOOTTIME timer armed before one is mapped to
	 * MONOTONIC with the offset of after it, too early by the suspend.
	 */
	u64 boot_off;
	bool boottime;		/* the timer is on CLOCK_BOOTTIME */
	/*
	 * @steal is kernel accounting (kcpustat's CPUTIME_STEAL: arm64
	 * pvtime, Xen, VMware, the BPF source's kprobe): the tick after a
	 * stop accounts its steal, after the timer that saw the stop.  A
	 * report then waits, until the steal since the last timer before
	 * the stop covers it or cfg->settle_ns passed, and is returned by a
	 * later call: split, not all unexplained.
	 */
	bool steal_late;
	/*
	 * The guest's last CPU hotplug step that keeps CPUs' interrupts off
	 * (0: none): bringing a CPU up (x86's TSC check spins up to 20 ms
	 * with interrupts off) or taking one down (stop_machine() on every
	 * CPU).  From @hold_from to @hold_to, 0 while it runs: guest time,
	 * on every CPU alike.
	 */
	u64 hold_from, hold_to;
};

/*
 * The one lost-time judgement, for the module and the BPF programs: the
 * timer's due time (armed already due: when armed; run from the tick: the
 * first tick at or after its expiry, on the grid of the last tick seen to
 * run timers on time, else a whole tick after it), steal since the last
 * hard timer, the guest's
 * interrupt and NMI time subtracted before the threshold, the kernel's
 * own deferral after an interrupt hang not counted, nor a suspend (a
 * BOOTTIME timer due before or during one is due at the latest when the
 * suspend was seen ended).  NMI time is
 * taken only from what steal leaves: an NMI stopped by the host lasts the
 * stop.  Returns true and fills @rep if the time lost reaches the
 * threshold; with @t->steal_late, that of an earlier timer, once its
 * steal is known.
 */
HVN_LIB bool hvn_lost_judge(struct hvn_lost_cpu *lc, const struct hvn_ivl_ring *ivl,
			    const struct hvn_ivl_ring *nmi, const struct hvn_lost_cfg *c,
			    const struct hvn_lost_timer *t, struct hvn_lost_report *rep);

/*
 * For a periodic sampler that re-arms itself from a clock read of its own
 * after the probe's (the kernel's perf cpu-clock timer does): a vCPU
 * stopped between the probe and that read pushes the next expiry back by
 * the stop, which then never shows as lateness.  Its next expiry is due
 * at the latest lc->sampler_seen (the probe's clock at its last expiry)
 * plus @period, so any hard timer of the CPU (the tick may fire first
 * after such a stop) is judged from that if it is earlier than its own
 * @expires.  The caller sets lc->sampler_seen at each of the sampler's
 * expiries, and clears it whenever the sampler stops or is re-armed
 * otherwise (a throttled perf event).
 */
HVN_LIB u64 hvn_lost_due(const struct hvn_lost_cpu *lc, u64 expires, u64 period);

#endif /* HVN_LOST_H */
