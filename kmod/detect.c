// SPDX-License-Identifier: GPL-2.0
/*
 * The hot-path detectors, attached to the kernel's own tracepoints by name
 * (for_each_kernel_tracepoint(), as lttng-modules does; they are not
 * exported to modules):
 *
 *  - interrupt storms per device IRQ, per x86 system vector and for all
 *    interrupts of a CPU (irq_handler_entry, irq_vectors:*_entry);
 *  - lost time: lateness of hard hrtimers minus the interrupt and NMI
 *    time the guest spent meanwhile (hrtimer_expire_entry);
 *  - IRQ migrations of watched device IRQs (irq_vectors:vector_update, the
 *    first interrupt handled on a new CPU, and the watched-set poll).
 *
 * A CPU outside the watched set pays one per-CPU load per event.  A
 * watched CPU pays O(1) per-CPU updates with interrupts off: no lock, no
 * allocation, no event unless a threshold is crossed.  One clock
 * throughout, CLOCK_MONOTONIC through ktime_get_mono_fast_ns() (NMI-safe,
 * the TSC where there is one): the hrtimers' own clock, so a timer's
 * lateness and the interrupt intervals that explain it are measured alike
 * even where sched_clock is unstable.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
/* The tracepoints' prototypes, for check_probe_types() only. */
#include <trace/events/cpuhp.h>
#include <trace/events/irq.h>
#include <trace/events/nmi.h>
#include <trace/events/timer.h>
#ifdef CONFIG_X86
#include <asm/trace/irq_vectors.h>
#endif
#include "compat.h"
#include "detect.h"
#include "hvnoise.h"
#include "hvnoise_trace.h"
#include "hvnoise/event_layout.h"
#include "hvnoise/tunables.h"
#include "lib/lost.h"
#include "lib/storm.h"

#define NSEC_PER_MSEC_ULL	1000000ULL

#define HVN_NR_VEC		4	/* timer, resched, callfunc, callfunc1 */

struct hvn_pcpu {
	bool watched;			/* the one check unwatched CPUs pay */
	unsigned int nactive;		/* storms under way on this CPU */
	u64 expire_walk;		/* when storm_expire() next walks */
	struct hvn_ivl_ring ivl;	/* irq and system vector intervals */
	struct hvn_ivl_ring nmi;	/* NMI intervals, written from NMI only */
	struct hvn_lost_cpu lost;
	struct hvn_storm all;
	struct hvn_storm vec[HVN_NR_VEC];
	struct hvn_storm_slot slot[HVN_STORM_SLOTS];
	struct hrtimer sampler;
	u64 sampler_now;		/* the probe's clock at its expiry */
	bool sampler_ready;
};

/*
 * Allocated, not DEFINE_PER_CPU: a module's static per-CPU data comes from
 * the small reserve every module shares, and insmod fails on a busy host
 * when it runs out; this struct is a few KB per CPU.  Lives from
 * hvn_detect_alloc() to hvn_detect_free(), the first and last steps of
 * load and unload, so no callback ever sees it missing.
 */
static struct hvn_pcpu __percpu *hvn_pcpu __read_mostly;

/*
 * The one check every probe makes, first: the per-CPU area's pointer and
 * one per-CPU load (%gs-relative on x86), so that a CPU not watched pays
 * little more than the call (an early exit is 6 instructions on x86, the
 * __fentry__ nop and the return included; 5 with static per-CPU data,
 * 7 to 9 before that: bench/instructions.sh).
 */
static __always_inline bool watched_here(void)
{
	/*
	 * raw_: probes run where the CPU cannot change under them, and
	 * arm64's this_cpu_read() would add preempt bookkeeping.
	 */
	return raw_cpu_read(hvn_pcpu->watched);
}

struct hvn_detect_cfg hvn_dcfg = {
#define HVN_TUNABLE(n, lo, hi, def, off, what) .n = def,
#include "hvnoise/tunable-list.h"
#undef HVN_TUNABLE
};

/* Derived from hvn_dcfg; read racily by the hot path (word-sized fields). */
static struct hvn_storm_cfg storm_cfg, storm_all_cfg;
static struct hvn_lost_cfg lost_cfg;

/* Counted, never silent: what the detectors could not do. */
static atomic64_t hvn_untracked;	/* IRQs with no free storm slot */

/* Watched device IRQs, indexed by IRQ number: their last known CPU. */
struct hvn_irqent {
	atomic_t cpu;			/* -1: unknown */
	atomic64_t moved;		/* hvn_moves at a probe's last move */
	u32 dev;
	bool used;
	char name[HVN_IRQ_NAME_LEN];
};

struct hvn_irqtab {
	struct rcu_head rcu;
	unsigned int n;
	unsigned int nused;		/* IRQs in it */
	struct hvn_irqent e[];
};

static struct hvn_irqtab __rcu *hvn_irqtab;
/*
 * Moves the probes reported, counted: a watched set resolved before one
 * (hvn_watchset.as_of) must not undo it with the CPU it read.
 */
static atomic64_t hvn_moves;
static bool hvn_have_vector_update;

static const char * const vec_names[HVN_NR_VEC] = {
	"local_timer", "reschedule", "call_function", "call_function_single",
};

static const u8 vec_src[HVN_NR_VEC] = {
	HVN_SRC_TIMER, HVN_SRC_RESCHED, HVN_SRC_CALLFUNC, HVN_SRC_CALLFUNC1,
};

void hvn_detect_cfg_changed(void)
{
	u64 win = (u64)READ_ONCE(hvn_dcfg.storm_window_ms) * NSEC_PER_MSEC_ULL;

	/* Word-sized and read racily by the probes: no torn values. */
	WRITE_ONCE(storm_cfg.threshold,
		   hvn_storm_threshold(READ_ONCE(hvn_dcfg.storm_rate), win));
	WRITE_ONCE(storm_all_cfg.threshold,
		   hvn_storm_threshold(READ_ONCE(hvn_dcfg.storm_all_rate), win));
	WRITE_ONCE(storm_cfg.window_ns, win);
	WRITE_ONCE(storm_all_cfg.window_ns, win);
	WRITE_ONCE(lost_cfg.threshold_ns,
		   (u64)READ_ONCE(hvn_dcfg.lost_threshold_us) * 1000);
	lost_cfg.tick_ns = TICK_NSEC;
	lost_cfg.settle_ns = 2 * TICK_NSEC;
}

static inline u64 hvn_clock(void)
{
	return ktime_get_mono_fast_ns();
}

/* --- storms ------------------------------------------------------------ */

static void emit_storm_end(int cpu, u8 src, int irq, const char *name,
			   struct hvn_storm_report *rep)
{
	trace_irq_storm(cpu, src, irq, name, rep);
}

static void storm_count(struct hvn_pcpu *p, struct hvn_storm *st,
			const struct hvn_storm_cfg *c, u8 src, int irq,
			const char *name, u64 now)
{
	struct hvn_storm_report rep;
	unsigned int f;
	int cpu = smp_processor_id();

	f = hvn_storm_irq(st, c, now, &rep);
	if (f & HVN_STORM_END) {
		p->nactive--;
		emit_storm_end(cpu, src, irq, name, &rep);
	}
	if (f & HVN_STORM_BEGIN) {
		p->nactive++;
		trace_irq_storm_begin(cpu, src, irq, name,
				      st->start, c->threshold);
	}
}

/* End storms whose windows are over (@force: all of them). */
static void storm_expire(struct hvn_pcpu *p, int cpu, u64 now, bool force)
{
	struct hvn_storm_report rep;
	unsigned int i;

	if (!p->nactive)
		return;
	if (!hvn_storm_walk_due(&p->expire_walk, now,
				READ_ONCE(storm_cfg.window_ns), force))
		return;
	if (hvn_storm_expire(&p->all, &storm_all_cfg, now, force, &rep)) {
		p->nactive--;
		emit_storm_end(cpu, HVN_SRC_ALL, -1, "all", &rep);
	}
	for (i = 0; i < HVN_NR_VEC; i++)
		if (hvn_storm_expire(&p->vec[i], &storm_cfg, now, force, &rep)) {
			p->nactive--;
			emit_storm_end(cpu, vec_src[i], -1, vec_names[i], &rep);
		}
	for (i = 0; i < HVN_STORM_SLOTS; i++) {
		struct hvn_storm_slot *s = &p->slot[i];

		if (hvn_storm_expire(&s->st, &storm_cfg, now, force, &rep)) {
			p->nactive--;
			emit_storm_end(cpu, HVN_SRC_IRQ, s->irq, s->name, &rep);
		}
	}
}

static void count_all(struct hvn_pcpu *p, u64 now)
{
	storm_expire(p, smp_processor_id(), now, false);
	storm_count(p, &p->all, &storm_all_cfg, HVN_SRC_ALL, -1, "all", now);
}

/* --- migrations ---------------------------------------------------------- */

u64 hvn_detect_moves(void)
{
	return atomic64_read(&hvn_moves);
}

/*
 * @irq was seen on @cpu: by a probe, or by the poll through a set resolved
 * at @as_of.  A probe's word is the latest; the poll's only stands when no
 * probe moved the IRQ since the set was resolved.
 */
static void migrate_seen(int irq, int cpu, u8 how, u64 as_of)
{
	struct hvn_irqtab *t;
	struct hvn_irqent *e;
	int old;

	rcu_read_lock();
	t = rcu_dereference(hvn_irqtab);
	if (!t || irq < 0 || (unsigned int)irq >= t->n || !t->e[irq].used)
		goto out;
	e = &t->e[irq];
	old = atomic_read(&e->cpu);
	if (old == cpu)
		goto out;	/* the hot path: where it was */
	if (how != HVN_MIG_POLL) {
		/* Stamped before the CPU changes: see the poll's side. */
		atomic64_set(&e->moved, atomic64_inc_return(&hvn_moves));
		old = atomic_xchg(&e->cpu, cpu);
	} else {
		smp_rmb();	/* @old read before the stamp */
		if ((u64)atomic64_read(&e->moved) > as_of ||
		    atomic_cmpxchg(&e->cpu, old, cpu) != old)
			goto out;
	}
	if (old >= 0 && old != cpu)
		trace_irq_migrate(irq, e->name, e->dev, old, cpu, how);
out:
	rcu_read_unlock();
}

/* --- probes -------------------------------------------------------------- */

/*
 * Out of line: an unwatched CPU pays only probe_irq_entry()'s check, not
 * this function's prologue (28 instructions an interrupt when it was one
 * function, bench/instructions.sh).
 */
static noinline void irq_entry_watched(struct hvn_pcpu *p, int irq,
				       struct irqaction *action)
{
	struct hvn_storm_slot *s;
	bool claimed;
	u64 now;

	now = hvn_clock();
	hvn_ivl_enter(&p->ivl, now);
	count_all(p, now);
	s = hvn_storm_slot(p->slot, irq, &storm_cfg, now, &claimed);
	if (!s && p->nactive) {
		/*
		 * Every slot held: a storm ended since the last walk may
		 * free one (the walk runs an eighth of a window apart).
		 */
		p->expire_walk = 0;
		storm_expire(p, smp_processor_id(), now, false);
		s = hvn_storm_slot(p->slot, irq, &storm_cfg, now, &claimed);
	}
	if (!s) {
		atomic64_inc(&hvn_untracked);
		goto migrate;
	}
	if (claimed)
		strscpy(s->name, action && action->name ? action->name : "",
			sizeof(s->name));
	storm_count(p, &s->st, &storm_cfg, HVN_SRC_IRQ, irq, s->name, now);
migrate:
	/*
	 * Where vector_update reports moves, the old CPU may still handle an
	 * interrupt or two after it: only that observer then counts.
	 */
	if (!hvn_have_vector_update)
		migrate_seen(irq, smp_processor_id(), HVN_MIG_HANDLED, 0);
}

static void probe_irq_entry(void *data, int irq, struct irqaction *action)
{
	if (watched_here())
		irq_entry_watched(this_cpu_ptr(hvn_pcpu), irq, action);
}

static void probe_irq_exit(void *data, int irq, struct irqaction *action,
			   int ret)
{
	if (watched_here())
		hvn_ivl_exit(&this_cpu_ptr(hvn_pcpu)->ivl, hvn_clock());
}

static void probe_nmi(void *data, void *handler, s64 delta_ns, int handled)
{
	u64 now;

	if (!watched_here() || delta_ns <= 0)
		return;
	now = hvn_clock();
	hvn_lost_nmi(&this_cpu_ptr(hvn_pcpu)->ivl, &this_cpu_ptr(hvn_pcpu)->nmi,
		     now, delta_ns);
}

static void vec_entry(int i)
{
	struct hvn_pcpu *p;
	u64 now;

	if (!watched_here())
		return;
	p = this_cpu_ptr(hvn_pcpu);
	now = hvn_clock();
	hvn_ivl_enter(&p->ivl, now);
	count_all(p, now);
	storm_count(p, &p->vec[i], &storm_cfg, vec_src[i], -1, vec_names[i],
		    now);
}

static void vec_exit(void)
{
	if (watched_here())
		hvn_ivl_exit(&this_cpu_ptr(hvn_pcpu)->ivl, hvn_clock());
}

static void probe_timer_entry(void *data, int vector) { vec_entry(0); }
static void probe_resched_entry(void *data, int vector) { vec_entry(1); }
static void probe_callfunc_entry(void *data, int vector) { vec_entry(2); }
static void probe_callfunc1_entry(void *data, int vector) { vec_entry(3); }
static void probe_vec_exit(void *data, int vector) { vec_exit(); }

static void probe_vector_update(void *data, unsigned int irq,
				unsigned int vector, unsigned int cpu,
				unsigned int prev_vector, unsigned int prev_cpu)
{
	/* prev_vector 0: first activation, not a move. */
	if (prev_vector && cpu != prev_cpu)
		migrate_seen(irq, cpu, HVN_MIG_VECTOR, 0);
}

/* The expiry of @t in CLOCK_MONOTONIC: its base's offset maps it. */
static inline u64 mono_expiry(const struct hrtimer *t)
{
	return ktime_to_ns(ktime_sub(hrtimer_get_expires(t), t->base->offset));
}

/*
 * A hard timer armed already due fires at once: hvn_lost_judge() counts
 * its lateness from here.  Re-armed by its own callback (base->running is
 * the timer) it is the timer's own period, judged from its expiry: the
 * sampler, re-armed from a clock read before a stop, must show the stop.
 */
static void probe_hrtimer_start(void *data, struct hrtimer *t,
				enum hrtimer_mode mode
#if HVN_HAVE_HRTIMER_START_WAS_ARMED
				, bool was_armed
#endif
				)
{
	if (!watched_here() || t->is_soft || t->base->running == t ||
	    !hvn_lost_clock_judged(t->base->clockid))
		return;
	hvn_lost_armed(&this_cpu_ptr(hvn_pcpu)->lost, (unsigned long)t,
		       mono_expiry(t), hvn_clock());
}

/*
 * Taking a CPU down keeps interrupts off where the kernel did it, not the
 * host: stop_machine() in CPUHP_TEARDOWN_CPU stops every CPU, and the dead
 * CPU's hrtimers, moved to the CPU doing it (inside stop_machine() from
 * 6.8 and in backports, at CPUHP_HRTIMERS_PREPARE before), fire late
 * there.  The span from that step through the control CPU's steps after
 * it is the guest's own on every CPU (hvn_lost_timer.hold_from).  Only
 * the hotplug lock's holder writes it.
 */
static u64 hvn_hold_from, hvn_hold_to;
static int hvn_hold_step = -1;	/* the step holding now, -1: none */

/* Steps of one take-down follow each other within this. */
#define HVN_HOLD_GAP_NS	(10 * NSEC_PER_MSEC)

static void probe_cpuhp_enter(void *data, unsigned int cpu, int target,
			      int idx, int (*fun)(unsigned int))
{
	u64 now, to = READ_ONCE(hvn_hold_to);

	/*
	 * Bringing up, the dying CPU's own steps inside stop_machine(), or
	 * a step of the control CPU other than the take-down and those
	 * right after it (a rollback long after): none starts or goes on.
	 */
	if (target >= idx || idx > CPUHP_TEARDOWN_CPU || READ_ONCE(hvn_hold_step) >= 0)
		return;
	now = hvn_clock();
	if (idx == CPUHP_TEARDOWN_CPU) {
		WRITE_ONCE(hvn_hold_from, now);
		smp_wmb();	/* a reader seeing it running sees its start */
	} else if (!READ_ONCE(hvn_hold_from) || now - to > HVN_HOLD_GAP_NS) {
		return;
	}
	WRITE_ONCE(hvn_hold_step, idx);
	WRITE_ONCE(hvn_hold_to, 0);
}

static void probe_cpuhp_exit(void *data, unsigned int cpu, int state,
			     int idx, int ret)
{
	if (idx != READ_ONCE(hvn_hold_step))
		return;
	WRITE_ONCE(hvn_hold_to, hvn_clock());
	WRITE_ONCE(hvn_hold_step, -1);
}

#if HVN_HAVE_HRTIMER_EXPIRE_NOW_VALUE
static void probe_hrtimer_expire(void *data, struct hrtimer *t, ktime_t now)
#else
static void probe_hrtimer_expire(void *data, struct hrtimer *t, ktime_t *now)
#endif
{
	struct hvn_lost_timer tm;
	struct hvn_lost_report rep;
	struct hvn_pcpu *p;
	u8 src;
	int cpu;

	if (!watched_here() || t->is_soft)
		return;
	p = this_cpu_ptr(hvn_pcpu);
	if (!hvn_lost_clock_judged(t->base->clockid))
		return;
	/*
	 * The clock read here, not the interrupt's *now: a vCPU stopped
	 * after the interrupt read the clock lost that time too.
	 */
	cpu = smp_processor_id();
	tm.timer = (unsigned long)t;
	tm.now = hvn_clock();
	tm.expiry = mono_expiry(t);
	tm.steal = hvn_steal_read_cpu(cpu, &src);
	/* Late only where steal is accounted at all (not on bare metal). */
	tm.steal_late = src != HVN_STEAL_KVM && tm.steal;
	tm.from_tick = !t->base->cpu_base->hres_active;
	tm.boottime = t->base->clockid == CLOCK_BOOTTIME;
	tm.boot_off = ktime_to_ns(ktime_mono_to_any(0, TK_OFFS_BOOT));
#ifdef CONFIG_HIGH_RES_TIMERS
	tm.hangs = t->base->cpu_base->nr_hangs;
	tm.max_hang_ns = t->base->cpu_base->max_hang_time;
#else
	tm.hangs = 0;
	tm.max_hang_ns = 0;
#endif
	tm.hold_to = READ_ONCE(hvn_hold_to);
	smp_rmb();	/* see probe_cpuhp_enter() */
	tm.hold_from = READ_ONCE(hvn_hold_from);
	if (t == &p->sampler)
		p->sampler_now = tm.now;	/* it re-arms from this read */
	if (hvn_lost_judge(&p->lost, &p->ivl, &p->nmi, &lost_cfg, &tm, &rep))
		trace_lost(cpu, &rep);
}

struct hvn_probe {
	const char *name;
	void *fn;
	bool x86_only;
	struct tracepoint *tp;
	bool registered;
};

static struct hvn_probe hvn_probes[] = {
	{ "irq_handler_entry", probe_irq_entry },
	{ "irq_handler_exit", probe_irq_exit },
	{ "hrtimer_start", probe_hrtimer_start },
	{ "hrtimer_expire_entry", probe_hrtimer_expire },
	{ "nmi_handler", probe_nmi, true },
	{ "cpuhp_enter", probe_cpuhp_enter },
	{ "cpuhp_exit", probe_cpuhp_exit },
	{ "local_timer_entry", probe_timer_entry, true },
	{ "local_timer_exit", probe_vec_exit, true },
	{ "reschedule_entry", probe_resched_entry, true },
	{ "reschedule_exit", probe_vec_exit, true },
	{ "call_function_entry", probe_callfunc_entry, true },
	{ "call_function_exit", probe_vec_exit, true },
	{ "call_function_single_entry", probe_callfunc1_entry, true },
	{ "call_function_single_exit", probe_vec_exit, true },
	{ "vector_update", probe_vector_update, true },
};

/*
 * The probes attach by name, through void *: a tracepoint whose prototype
 * changes in a new kernel would have its arguments misread.  Checked
 * against the kernel's own declarations here, at build time.
 */
static void __maybe_unused check_probe_types(void)
{
	check_trace_callback_type_irq_handler_entry(probe_irq_entry);
	check_trace_callback_type_irq_handler_exit(probe_irq_exit);
	check_trace_callback_type_hrtimer_start(probe_hrtimer_start);
	check_trace_callback_type_hrtimer_expire_entry(probe_hrtimer_expire);
	check_trace_callback_type_nmi_handler(probe_nmi);
	check_trace_callback_type_cpuhp_enter(probe_cpuhp_enter);
	check_trace_callback_type_cpuhp_exit(probe_cpuhp_exit);
#ifdef CONFIG_X86
	check_trace_callback_type_local_timer_entry(probe_timer_entry);
	check_trace_callback_type_local_timer_exit(probe_vec_exit);
	check_trace_callback_type_reschedule_entry(probe_resched_entry);
	check_trace_callback_type_reschedule_exit(probe_vec_exit);
	check_trace_callback_type_call_function_entry(probe_callfunc_entry);
	check_trace_callback_type_call_function_exit(probe_vec_exit);
	check_trace_callback_type_call_function_single_entry(probe_callfunc1_entry);
	check_trace_callback_type_call_function_single_exit(probe_vec_exit);
	check_trace_callback_type_vector_update(probe_vector_update);
#endif
}

static void find_tp(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(hvn_probes); i++)
		if (!hvn_probes[i].tp && !strcmp(tp->name, hvn_probes[i].name))
			hvn_probes[i].tp = tp;
}

/* --- the sampling timer -------------------------------------------------- */

static enum hrtimer_restart sampler_fn(struct hrtimer *t)
{
	struct hvn_pcpu *p = container_of(t, struct hvn_pcpu, sampler);
	unsigned int us = READ_ONCE(hvn_dcfg.sample_us);
	u64 seen = p->sampler_now;

	/* Migrated off its dead CPU, unwatched, or turned off: stop. */
	if (p != this_cpu_ptr(hvn_pcpu) || !READ_ONCE(p->watched) || !us)
		return HRTIMER_NORESTART;
	/*
	 * Re-armed from the probe's clock read, not a fresh one: a vCPU
	 * stopped in between leaves the next expiry in the past, so the
	 * timer fires late at once and the stop shows as lateness.
	 */
	p->sampler_now = 0;
	if (seen >= ktime_to_ns(hrtimer_get_expires(t)))
		hrtimer_forward(t, ns_to_ktime(seen), ns_to_ktime((u64)us * 1000));
	else
		hrtimer_forward_now(t, ns_to_ktime((u64)us * 1000));
	return HRTIMER_RESTART;
}

/* --- watched set changes (IPIs only on a change) ------------------------- */

static void cpu_enter(void *unused)
{
	struct hvn_pcpu *p = this_cpu_ptr(hvn_pcpu);
	unsigned int us = READ_ONCE(hvn_dcfg.sample_us);
	unsigned int i;

	if (!p->watched) {
		memset(&p->ivl, 0, sizeof(p->ivl));
		memset(&p->nmi, 0, sizeof(p->nmi));
		memset(&p->lost, 0, sizeof(p->lost));
		memset(&p->all, 0, sizeof(p->all));
		memset(&p->vec, 0, sizeof(p->vec));
		for (i = 0; i < HVN_STORM_SLOTS; i++) {
			memset(&p->slot[i].st, 0, sizeof(p->slot[i].st));
			p->slot[i].irq = -1;
		}
		p->nactive = 0;
		p->expire_walk = 0;
		p->lost.steal_snap = hvn_steal_read_cpu(smp_processor_id(), NULL);
		p->lost.snap_valid = true;
		WRITE_ONCE(p->watched, true);
	}
	if (us && p->sampler_ready && !hrtimer_active(&p->sampler))
		hrtimer_start(&p->sampler, ns_to_ktime((u64)us * 1000),
			      HRTIMER_MODE_REL_PINNED_HARD);
}

static void cpu_leave(void *unused)
{
	struct hvn_pcpu *p = this_cpu_ptr(hvn_pcpu);

	if (!p->watched)
		return;
	WRITE_ONCE(p->watched, false);
	storm_expire(p, smp_processor_id(), hvn_clock(), true);
}

/*
 * The IRQ table of @ws.  Where a probe moved an IRQ of the old table @ot
 * after @ws was resolved, the probe's CPU is carried over.  (A probe that
 * moves one between this copy and the switch is lost to the new table; the
 * next poll reports that move.)
 */
static struct hvn_irqtab *build_irqtab(const struct hvn_watchset *ws,
				       struct hvn_irqtab *ot)
{
	struct hvn_irqtab *t;
	unsigned int i, n = 0;

	for (i = 0; i < ws->nirq; i++)
		if (ws->irq[i].irq >= 0 && (unsigned int)ws->irq[i].irq + 1 > n)
			n = ws->irq[i].irq + 1;
	/* By the highest IRQ number: thousands on a big host, too large for
	 * a high-order allocation to be sure of; vmalloc behind it. */
	t = kvzalloc(struct_size(t, e, n), GFP_KERNEL);
	if (!t)
		return NULL;
	t->n = n;
	for (i = 0; i < n; i++)
		atomic_set(&t->e[i].cpu, -1);
	for (i = 0; i < ws->nirq; i++) {
		struct hvn_irqent *e;

		if (ws->irq[i].irq < 0)
			continue;
		e = &t->e[ws->irq[i].irq];
		if (e->used)
			continue;	/* first CPU of a multi-CPU IRQ */
		e->used = true;
		t->nused++;
		e->dev = ws->irq[i].dev;
		atomic_set(&e->cpu, ws->irq[i].cpu);
		strscpy(e->name, ws->irq[i].name, sizeof(e->name));
		if (ot && ws->irq[i].irq < ot->n) {
			struct hvn_irqent *o = &ot->e[ws->irq[i].irq];
			u64 moved = atomic64_read(&o->moved);

			if (o->used && o->dev == e->dev) {
				atomic64_set(&e->moved, moved);
				/*
				 * A probe's later word, or, for a vector on no
				 * CPU now (freed, shut down), where it last
				 * was: back elsewhere, that is a move.
				 */
				if (moved > ws->as_of || ws->irq[i].cpu < 0)
					atomic_set(&e->cpu, atomic_read(&o->cpu));
				if (ws->irq[i].cpu < 0 && !e->name[0])
					strscpy(e->name, o->name, sizeof(e->name));
			}
		}
	}
	return t;
}

/*
 * Whether @t has @ws's IRQs, each of the same device and name: then a
 * change of the set moved IRQs only, which migrate_seen() has written
 * into @t in place, and the table (sized by the highest IRQ number, kB
 * on a big host) is not built again.
 */
static bool irqtab_same(const struct hvn_irqtab *t,
			const struct hvn_watchset *ws)
{
	unsigned int i, n = 0;

	for (i = 0; i < ws->nirq; i++) {
		const struct hvn_wirq *w = &ws->irq[i];
		const struct hvn_irqent *e;

		if (w->irq < 0 || (i && ws->irq[i - 1].irq == w->irq))
			continue;
		if ((unsigned int)w->irq >= t->n)
			return false;
		e = &t->e[w->irq];
		/* A freed vector (no CPU, no name) keeps its last name, as
		 * build_irqtab() keeps it. */
		if (!e->used || e->dev != w->dev ||
		    (strncmp(e->name, w->name, sizeof(e->name)) &&
		     (w->cpu >= 0 || w->name[0])))
			return false;
		n++;
	}
	return n == t->nused;
}

void hvn_detect_update(const struct hvn_watchset *ws)
{
	struct hvn_irqtab *t, *ot;
	unsigned int i;
	int cpu;

	/*
	 * Moves the poll saw and no probe reported yet; an IRQ routed to
	 * several CPUs counts by its first (records are sorted by irq, cpu).
	 */
	for (i = 0; i < ws->nirq; i++)
		if (ws->irq[i].cpu >= 0 &&
		    (!i || ws->irq[i - 1].irq != ws->irq[i].irq))
			migrate_seen(ws->irq[i].irq, ws->irq[i].cpu, HVN_MIG_POLL,
				     ws->as_of);

	ot = rcu_dereference_protected(hvn_irqtab, lockdep_is_held(&hvn_lock));
	if (ot && irqtab_same(ot, ws))
		goto irqs_done;
	t = build_irqtab(ws, ot);
	if (t || !ot) {
		rcu_assign_pointer(hvn_irqtab, t);
		if (ot)
			kvfree_rcu(ot, rcu);
	} else {
		/* Migrations go on against the old set's IRQs: say so. */
		pr_warn_ratelimited("no memory for the IRQ table of the new watched set (%u IRQs); IRQ moves are judged against the previous set\n",
				    ws->nirq);
	}
irqs_done:
	hvn_steal_watch(ws);
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		bool want = (unsigned int)cpu < ws->nbits && ws->why[cpu];
		struct hvn_pcpu *p = per_cpu_ptr(hvn_pcpu, cpu);

		/*
		 * IPI a watched CPU only when cpu_enter() has work there (first
		 * watch, or a sampler to arm): a set change must not become
		 * noise on the CPUs it watches.
		 */
		if (want) {
			if (!READ_ONCE(p->watched) ||
			    (READ_ONCE(hvn_dcfg.sample_us) && p->sampler_ready &&
			     !hrtimer_active(&p->sampler)))
				smp_call_function_single(cpu, cpu_enter, NULL, 1);
		} else if (READ_ONCE(p->watched))
			smp_call_function_single(cpu, cpu_leave, NULL, 1);
		if ((!want || !READ_ONCE(hvn_dcfg.sample_us)) &&
		    p->sampler_ready)
			hrtimer_try_to_cancel(&p->sampler);
	}
	cpus_read_unlock();
}

/* From the CPU hotplug "dead" callback: the CPU is gone, touch its state. */
void hvn_detect_cpu_dead(unsigned int cpu)
{
	struct hvn_pcpu *p = per_cpu_ptr(hvn_pcpu, cpu);

	if (!p->watched)
		return;
	WRITE_ONCE(p->watched, false);
	storm_expire(p, cpu, hvn_clock(), true);
}

int hvn_detect_format_stats(char *buf, size_t len)
{
	return snprintf(buf, len, "untracked_irqs=%lld\n",
			(long long)atomic64_read(&hvn_untracked));
}

int hvn_detect_alloc(void)
{
	hvn_pcpu = alloc_percpu(struct hvn_pcpu);
	return hvn_pcpu ? 0 : -ENOMEM;
}

void hvn_detect_free(void)
{
	free_percpu(hvn_pcpu);
	hvn_pcpu = NULL;
}

int hvn_detect_init(void)
{
	unsigned int i;
	int cpu, ret;

	BUILD_BUG_ON(HVN_STORM_NAME_LEN != HVN_IRQ_NAME_LEN);
	hvn_detect_cfg_changed();
	for_each_possible_cpu(cpu) {
		struct hvn_pcpu *p = per_cpu_ptr(hvn_pcpu, cpu);

		hvn_hrtimer_setup(&p->sampler, sampler_fn, CLOCK_MONOTONIC,
				  HRTIMER_MODE_REL_PINNED_HARD);
		p->sampler_ready = true;
	}
	for_each_kernel_tracepoint(find_tp, NULL);
	for (i = 0; i < ARRAY_SIZE(hvn_probes); i++) {
		struct hvn_probe *pr = &hvn_probes[i];

		if (!pr->tp) {
			if (!pr->x86_only || IS_ENABLED(CONFIG_X86))
				pr_warn("tracepoint %s not found; its detector is off\n",
					pr->name);
			continue;
		}
		ret = tracepoint_probe_register(pr->tp, pr->fn, NULL);
		if (ret) {
			pr_err("cannot attach to tracepoint %s (%d)\n",
			       pr->name, ret);
			hvn_detect_exit();
			return ret;
		}
		pr->registered = true;
		if (pr->fn == probe_vector_update)
			hvn_have_vector_update = true;
	}
	return 0;
}

void hvn_detect_exit(void)
{
	struct hvn_irqtab *t;
	unsigned int i;
	int cpu;

	/*
	 * Every CPU unwatched first: each probe's unregistering patches
	 * text with IPIs to all CPUs, which the probes still attached would
	 * count as a call_function storm of our own making.
	 */
	for_each_possible_cpu(cpu)
		WRITE_ONCE(per_cpu_ptr(hvn_pcpu, cpu)->watched, false);
	for (i = 0; i < ARRAY_SIZE(hvn_probes); i++) {
		int ret = 0;

		if (hvn_probes[i].registered)
			ret = tracepoint_probe_unregister(hvn_probes[i].tp,
							  hvn_probes[i].fn,
							  NULL);
		/* Only -ENOMEM (a copy of the probe array) fails here. */
		if (ret)
			pr_err("cannot detach from tracepoint %s (%d)\n",
			       hvn_probes[i].name, ret);
		hvn_probes[i].registered = false;
	}
	/* No probe runs past this point. */
	tracepoint_synchronize_unregister();
	/*
	 * The CPU-dead callback (hvn_detect_cpu_dead) is still registered:
	 * with hotplug held off, a CPU going away now cannot end the same
	 * storms a second time.
	 */
	cpus_read_lock();
	for_each_possible_cpu(cpu) {
		struct hvn_pcpu *p = per_cpu_ptr(hvn_pcpu, cpu);

		if (p->sampler_ready)
			hrtimer_cancel(&p->sampler);
		/*
		 * Report storms cut short by the unload: by those under way,
		 * as every CPU was unwatched above (a CPU that died since
		 * left its storms to this loop).
		 */
		storm_expire(p, cpu, hvn_clock(), true);
	}
	cpus_read_unlock();
	t = rcu_dereference_protected(hvn_irqtab, 1);
	RCU_INIT_POINTER(hvn_irqtab, NULL);
	synchronize_rcu();
	kvfree(t);
	rcu_barrier();	/* kvfree_rcu() of older tables */
}
