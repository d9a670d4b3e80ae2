// SPDX-License-Identifier: GPL-2.0
/*
 * hvnoise's detectors as BPF programs, for hosts where hvnoise.ko cannot be
 * loaded.  The same detection code as the module (kmod/lib/storm.c,
 * lost.c, steal.c are compiled in), the same thresholds and the same
 * event records (include/hvnoise/event_layout.h), sent through a BPF ring
 * buffer; the hvnoise tool writes them into trace.dat as hvnoise events.
 *
 * Differences from the module, all documented in Documentation/bpf.rst:
 * times come from bpf_ktime_get_ns() (CLOCK_MONOTONIC) instead of
 * local_clock(); probes cannot mask interrupts, but every probe that
 * updates the per-CPU state runs in hard interrupt context; steal is sampled
 * from a perf cpu-clock event on a housekeeping CPU.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "hvnoise/event_layout.h"
#include "lib/storm.c"
#include "lib/lost.c"
#include "lib/steal.c"
#include "bpf_config.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the tool before loading. */
const volatile u32 nr_cpus = 1;
const volatile bool have_vector_update;
struct hvn_storm_cfg storm_cfg = { .window_ns = 100000000, .threshold = 2000 };
struct hvn_storm_cfg storm_all_cfg = { .window_ns = 100000000, .threshold = 10000 };
struct hvn_lost_cfg lost_cfg = { .threshold_ns = 1000000 };
u64 steal_threshold_ns = 1000000;

/*
 * Written by the tool at any time: the watched set, and a generation per
 * CPU bumped each time the CPU joins it, after which its first probe starts
 * from a clean state (the module's cpu_enter()).
 */
struct hvn_bpf_cpu_flags cpu_flags[HVN_BPF_MAX_CPUS];
u32 enter_gen[HVN_BPF_MAX_CPUS];
/*
 * The sample_us timers: their period, and a generation per CPU bumped by
 * the tool before it re-arms one (a throttled timer), after which the
 * sampler's history on that CPU starts over.
 */
const volatile u64 sample_ns;
u32 sampler_gen[HVN_BPF_MAX_CPUS];
/* Each CPU's sampler period now: a keeper lengthens it (loader.c). */
u64 sample_period[HVN_BPF_MAX_CPUS];
u64 backup_period[HVN_BPF_MAX_CPUS];	/* the backup's: the tool's own */
/*
 * The sampler's [0] and its backup's [1] last throttle came with a task
 * running (the CPU ticks: perf allows fewer samples a tick than the
 * timer takes), not in the idle task (a tickless idle CPU throttles any
 * period sooner or later): the keeper then lengthens the period.
 */
u8 throttled_busy[HVN_BPF_MAX_CPUS][2];

/* Counted, never silent. */
u64 dropped;		/* records the ring buffer had no room for */
u64 untracked;		/* IRQs with no free storm slot */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct hvn_bpf_pcpu);
} pcpu_map SEC(".maps");

/* Steal sampling state, per watched CPU, touched by the sampler only. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, HVN_BPF_MAX_CPUS);
	__type(key, u32);
	__type(value, struct hvn_steal_cpu);
} steal_map SEC(".maps");

/* Watched device IRQs: their last known CPU (filled by the tool). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HVN_BPF_MAX_IRQS);
	__type(key, s32);
	__type(value, struct hvn_bpf_irq);
} irq_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, HVN_BPF_RINGBUF_BYTES);
} events SEC(".maps");

extern struct kernel_cpustat kernel_cpustat __ksym;
/* perf's hrtimer callback: what the sampler's hrtimer runs. */
extern const void perf_swevent_hrtimer __ksym __weak;
#define perf_hrtimer_fn	(&perf_swevent_hrtimer)
#define HRTIMER_STATE_ENQUEUED	0x01
#ifdef __TARGET_ARCH_x86
extern struct kvm_steal_time steal_time __ksym __weak;
#endif
#ifdef __TARGET_ARCH_arm64
/* arm64's pvtime area a CPU, set when the hypervisor offers one. */
extern struct pv_time_stolen_time_region stolen_time_region __ksym __weak;
#endif


static __always_inline void reset_pcpu(struct hvn_bpf_pcpu *p, u32 gen)
{
	u32 i;

	/* An empty ring: its slots count only up to head. */
	p->ivl.head = p->ivl.depth = 0;
	p->ivl.open_start = p->ivl.open_nmi = 0;
	p->nmi.head = p->nmi.depth = 0;
	p->nmi.open_start = 0;
	__builtin_memset(&p->lost, 0, sizeof(p->lost));
	__builtin_memset(&p->all, 0, sizeof(p->all));
	for (i = 0; i < HVN_BPF_NR_VEC; i++)
		__builtin_memset(&p->vec[i], 0, sizeof(p->vec[i]));
	for (i = 0; i < HVN_STORM_SLOTS; i++) {
		__builtin_memset(&p->slot[i].st, 0, sizeof(p->slot[i].st));
		p->slot[i].irq = -1;
	}
	p->nactive = 0;
	p->expire_walk = 0;
	p->sampler_timer = p->last_timer = 0;
	p->gen = gen;
}

/* This CPU's state, reset when the CPU (re)joins the watched set. */
static __always_inline struct hvn_bpf_pcpu *this_pcpu(u32 cpu)
{
	u32 zero = 0, gen = enter_gen[cpu & (HVN_BPF_MAX_CPUS - 1)];
	struct hvn_bpf_pcpu *p = bpf_map_lookup_elem(&pcpu_map, &zero);

	if (p && p->gen != gen)
		reset_pcpu(p, gen);
	return p;
}

static struct hvn_bpf_msg *msg_new(u32 cpu, u32 event)
{
	struct hvn_bpf_msg *m = bpf_ringbuf_reserve(&events, sizeof(*m), 0);

	if (!m) {
		__sync_fetch_and_add(&dropped, 1);
		return NULL;
	}
	__builtin_memset(m, 0, sizeof(*m));
	m->ts = bpf_ktime_get_ns();
	m->cpu = cpu;
	m->event = event;
	m->rec.common.pid = (u32)bpf_get_current_pid_tgid();
	return m;
}

/*
 * Steal, three ways.  Where the kernel resolves data symbols (kallsyms with
 * its variables, as Debian's kernels have), the per-CPU counters are read
 * through BTF: the KVM steal-time area when the guest has one, else
 * kcpustat.  Elsewhere steal_sum[] holds the counter: added up by a kprobe
 * on account_steal_time() (what kcpustat would say), or, on kernels
 * without kprobes, written by the tool from /proc/stat.  The tool loads
 * the programs of one way.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, HVN_BPF_MAX_CPUS);
	__type(key, u32);
	__type(value, u64);
} steal_sum SEC(".maps");	/* [cpu], written by that CPU only */

SEC("kprobe/account_steal_time")
int BPF_KPROBE(acct_steal, u64 cputime)
{
	u32 cpu = bpf_get_smp_processor_id();
	u64 *v = bpf_map_lookup_elem(&steal_sum, &cpu);

	if (v)
		*v += cputime;
	return 0;
}

/*
 * The hypervisor's own steal count for @cpu, where this architecture has
 * one the kernel shares: x86's KVM steal-time area, exact.  arm64's pvtime
 * is not read here: as in the module, it only names kcpustat's source.
 */
static __always_inline bool read_pv_steal(u32 cpu, u8 *src, u64 *steal)
{
#ifdef __TARGET_ARCH_x86
	struct kvm_steal_time *st;
	u32 v1, v2, i;
	u64 s;

	if (!bpf_core_type_exists(struct kvm_steal_time) || !&steal_time)
		return false;
	st = bpf_per_cpu_ptr(&steal_time, cpu);
	/* The hypervisor bumps version around an update (odd: busy). */
	for (i = 0; st && i < 4; i++) {
		/* Three loads in this order, none merged (READ_ONCE). */
		v1 = *(volatile u32 *)&st->version;
		asm volatile("" ::: "memory");
		s = *(volatile u64 *)&st->steal;
		asm volatile("" ::: "memory");
		v2 = *(volatile u32 *)&st->version;
		if (v1 == v2 && !(v1 & 1) && v1) {
			*src = HVN_STEAL_KVM;
			*steal = s;
			return true;
		}
	}
#elif defined(__TARGET_ARCH_arm64)
	struct pv_time_stolen_time_region *r;

	if (bpf_core_type_exists(struct pv_time_stolen_time_region) &&
	    &stolen_time_region) {
		r = bpf_per_cpu_ptr(&stolen_time_region, cpu);
		if (r && BPF_CORE_READ(r, kaddr))
			*src = HVN_STEAL_PVTIME;
	}
#endif
	return false;
}

static __always_inline u64 read_steal(u32 cpu, u8 *src, bool ksyms)
{
	struct kernel_cpustat *kc;
	u32 key = cpu;
	u64 *acc, s;

	*src = HVN_STEAL_KCPUSTAT;
	if (!ksyms) {
		acc = bpf_map_lookup_elem(&steal_sum, &key);
		return acc ? *acc : 0;
	}
	if (read_pv_steal(cpu, src, &s))
		return s;
	kc = bpf_per_cpu_ptr(&kernel_cpustat, cpu);
	return kc ? kc->cpustat[CPUTIME_STEAL] : 0;
}

/* --- storms ------------------------------------------------------------ */

static void emit_storm_end(u32 cpu, const struct hvn_bpf_who *w,
			   const struct hvn_storm_report *rep)
{
	struct hvn_bpf_msg *m = msg_new(cpu, HVN_EV_irq_storm);

	if (!m)
		return;
	m->rec.irq_storm.cpu = cpu;
	m->rec.irq_storm.source = w->src;
	m->rec.irq_storm.irq = w->irq;
	m->rec.irq_storm.start = rep->start;
	m->rec.irq_storm.duration = rep->duration;
	m->rec.irq_storm.count = rep->count;
	m->rec.irq_storm.peak_rate = rep->peak_rate;
	__builtin_memcpy(m->rec.irq_storm.name, w->name, HVN_IRQ_NAME_LEN);
	bpf_ringbuf_submit(m, 0);
}

static void storm_count(struct hvn_bpf_pcpu *p, struct hvn_storm *st,
			const struct hvn_storm_cfg *c, const struct hvn_bpf_who *w,
			u64 now)
{
	u32 cpu = bpf_get_smp_processor_id();
	struct hvn_storm_report rep;
	struct hvn_bpf_msg *m;
	unsigned int f;

	f = hvn_storm_irq(st, c, now, &rep);
	if (f & HVN_STORM_END) {
		p->nactive--;
		emit_storm_end(cpu, w, &rep);
	}
	if (!(f & HVN_STORM_BEGIN)) {
		if (f & HVN_STORM_END)
			cpu_flags[cpu & (HVN_BPF_MAX_CPUS - 1)].storms = p->nactive != 0;
		return;
	}
	p->nactive++;
	cpu_flags[cpu & (HVN_BPF_MAX_CPUS - 1)].storms = 1;
	m = msg_new(cpu, HVN_EV_irq_storm_begin);
	if (!m)
		return;
	m->rec.irq_storm_begin.cpu = cpu;
	m->rec.irq_storm_begin.source = w->src;
	m->rec.irq_storm_begin.irq = w->irq;
	m->rec.irq_storm_begin.threshold = c->threshold;
	m->rec.irq_storm_begin.start = st->start;
	__builtin_memcpy(m->rec.irq_storm_begin.name, w->name, HVN_IRQ_NAME_LEN);
	bpf_ringbuf_submit(m, 0);
}

/* End storms whose windows are over (@force: all of them). */
static void storm_expire(struct hvn_bpf_pcpu *p, u32 cpu, u64 now, bool force)
{
	struct hvn_storm_report rep;
	struct hvn_bpf_who w;
	unsigned int i;

	if (!p->nactive && !force)
		return;
	if (!hvn_storm_walk_due(&p->expire_walk, now, storm_cfg.window_ns, force))
		return;
	if (hvn_storm_expire(&p->all, &storm_all_cfg, now, force, &rep)) {
		p->nactive--;
		emit_storm_end(cpu, &hvn_bpf_all_who, &rep);
	}
	for (i = 0; i < HVN_BPF_NR_VEC; i++)
		if (hvn_storm_expire(&p->vec[i], &storm_cfg, now, force, &rep)) {
			p->nactive--;
			emit_storm_end(cpu, &hvn_bpf_vec_who[i], &rep);
		}
	for (i = 0; i < HVN_STORM_SLOTS; i++) {
		struct hvn_storm_slot *s = &p->slot[i];

		if (hvn_storm_expire(&s->st, &storm_cfg, now, force, &rep)) {
			p->nactive--;
			w.irq = s->irq;
			w.src = HVN_SRC_IRQ;
			__builtin_memcpy(w.name, s->name, HVN_IRQ_NAME_LEN);
			emit_storm_end(cpu, &w, &rep);
		}
	}
	if (force)
		p->nactive = 0;
	cpu_flags[cpu & (HVN_BPF_MAX_CPUS - 1)].storms = p->nactive != 0;
}

/* The CPU left the watched set: end its storms now (cpu_leave()). */
static __noinline void leave_cpu(u32 cpu)
{
	u32 zero = 0;
	struct hvn_bpf_pcpu *p = bpf_map_lookup_elem(&pcpu_map, &zero);

	cpu_flags[cpu & (HVN_BPF_MAX_CPUS - 1)].storms = 0;
	if (p)
		storm_expire(p, cpu, bpf_ktime_get_ns(), true);
}

/*
 * Whether @cpu is watched: all a probe does on a CPU that is not (one
 * 16-bit load; its storms ended if it just left the set).  Every CPU's
 * interrupts pay it, so a probe's watched work is a subprogram of its
 * own (an *_on() below): the probe itself then saves no registers and
 * has no stack to set up.
 */
static __always_inline bool cpu_watched(u32 cpu)
{
	/* Masked, not compared: the loader refuses a host with more
	 * possible CPUs, and the mask is the zero-extension too. */
	struct hvn_bpf_cpu_flags *f = &cpu_flags[cpu & (HVN_BPF_MAX_CPUS - 1)];

	if (!*(volatile u16 *)f)
		return false;
	if (f->watched)
		return true;
	leave_cpu(cpu);
	return false;
}

/*
 * The exit probes' test: an interval is closed only where it was opened,
 * and a CPU's storms end at its next entry, not here.
 */
static __always_inline bool cpu_watched_exit(u32 cpu)
{
	return cpu_flags[cpu & (HVN_BPF_MAX_CPUS - 1)].watched;
}

/* The state of a watched CPU; NULL for one not watched. */
static __always_inline struct hvn_bpf_pcpu *watched_pcpu(u32 cpu)
{
	return cpu_watched(cpu) ? this_pcpu(cpu) : NULL;
}

static void count_all(struct hvn_bpf_pcpu *p, u64 now, u32 cpu)
{
	storm_expire(p, cpu, now, false);
	storm_count(p, &p->all, &storm_all_cfg, &hvn_bpf_all_who, now);
}

/* --- migrations ---------------------------------------------------------- */

static void migrate_seen(int irq, u32 cpu, u8 how)
{
	struct hvn_bpf_irq *e = bpf_map_lookup_elem(&irq_map, &irq);
	struct hvn_bpf_msg *m;
	int old;

	if (!e)
		return;
	old = e->cpu;
	if (old == (int)cpu)
		return;
	/*
	 * Stamped before the CPU changes, for the tool's poll (apply()).
	 * Racing probes may both report one move (no atomic exchange on
	 * 5.10): benign, and rare.
	 */
	e->moved_ns = bpf_ktime_get_ns();
	asm volatile("" ::: "memory");
	e->cpu = cpu;
	if (old < 0)
		return;
	m = msg_new(cpu, HVN_EV_irq_migrate);
	if (!m)
		return;
	m->rec.irq_migrate.irq = irq;
	m->rec.irq_migrate.dev = e->dev;
	m->rec.irq_migrate.from_cpu = old;
	m->rec.irq_migrate.to_cpu = cpu;
	m->rec.irq_migrate.how = how;
	__builtin_memcpy(m->rec.irq_migrate.name, e->name, HVN_IRQ_NAME_LEN);
	bpf_ringbuf_submit(m, 0);
}

/* --- probes -------------------------------------------------------------- */

static __noinline int irq_entry_on(u32 cpu, int irq, struct irqaction *action)
{
	struct hvn_storm_slot *s;
	struct hvn_bpf_pcpu *p;
	struct hvn_bpf_who w;
	bool claimed;
	u64 now;

	p = this_pcpu(cpu);
	if (!p)
		return 0;
	now = bpf_ktime_get_ns();
	hvn_ivl_enter(&p->ivl, now);
	count_all(p, now, cpu);
	s = hvn_storm_slot(p->slot, irq, &storm_cfg, now, &claimed);
	if (!s && p->nactive) {
		/* Every slot held: a storm ended since the last walk may
		 * free one (the walk runs an eighth of a window apart). */
		p->expire_walk = 0;
		storm_expire(p, cpu, now, false);
		s = hvn_storm_slot(p->slot, irq, &storm_cfg, now, &claimed);
	}
	if (!s) {
		__sync_fetch_and_add(&untracked, 1);
		goto migrate;
	}
	if (claimed) {
		__builtin_memset(s->name, 0, sizeof(s->name));
		bpf_probe_read_kernel_str(s->name, sizeof(s->name),
					  BPF_CORE_READ(action, name));
	}
	w.irq = irq;
	w.src = HVN_SRC_IRQ;
	__builtin_memcpy(w.name, s->name, HVN_IRQ_NAME_LEN);
	storm_count(p, &s->st, &storm_cfg, &w, now);
migrate:
	if (!have_vector_update)
		migrate_seen(irq, cpu, HVN_MIG_HANDLED);
	return 0;
}

/* (BPF_PROG's arguments are read only where a CPU is watched.) */
SEC("tp_btf/irq_handler_entry")
int irq_entry(u64 *ctx)
{
	u32 cpu = bpf_get_smp_processor_id();

	if (!cpu_watched(cpu))
		return 0;
	return irq_entry_on(cpu, (int)ctx[0], (struct irqaction *)ctx[1]);
}

static __noinline int ivl_exit_on(u32 cpu)
{
	struct hvn_bpf_pcpu *p = this_pcpu(cpu);

	if (p)
		hvn_ivl_exit(&p->ivl, bpf_ktime_get_ns());
	return 0;
}

static __always_inline void ivl_exit(void)
{
	u32 cpu = bpf_get_smp_processor_id();

	if (cpu_watched_exit(cpu))
		ivl_exit_on(cpu);
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(irq_exit, int irq, struct irqaction *action, int ret)
{
	ivl_exit();
	return 0;
}

/*
 * Taking a CPU down keeps interrupts off where the kernel did it: the span
 * of CPUHP_TEARDOWN_CPU (stop_machine()) and of the control CPU's steps
 * right after it (where the dead CPU's hrtimers move), as the module
 * keeps it (kmod/detect.c probe_cpuhp_enter(), hvn_lost_timer.hold_from).
 * BPF has no barriers: on arm64 a timer judged within nanoseconds of a
 * take-down's start may see it running with the last one's start.
 */
u64 hold_from, hold_to;
int hold_step = -1;

#define HOLD_GAP_NS	(10ULL * 1000 * 1000)

SEC("tp_btf/cpuhp_enter")
int BPF_PROG(cpuhp_enter, unsigned int cpu, int target, int idx, void *fun)
{
	int teardown = bpf_core_enum_value(enum cpuhp_state, CPUHP_TEARDOWN_CPU);
	u64 now, to = *(volatile u64 *)&hold_to;
	u32 zero = 0;

	/*
	 * A CPU coming up runs its own steps outside any interrupt: what it
	 * had open when it went down (an interval never closed) and its
	 * timers' history are gone.  The module starts such a CPU afresh
	 * from its online callback; the tool's poll may not see the CPU
	 * gone at all (down and up within a second).  In one run such a
	 * CPU then reported its NMI bursts as lost time, irq_ns 0.
	 */
	if (target > idx && cpu == bpf_get_smp_processor_id()) {
		struct hvn_bpf_pcpu *p = bpf_map_lookup_elem(&pcpu_map, &zero);

		if (p)
			reset_pcpu(p, p->gen);
	}

	if (target >= idx || idx > teardown || *(volatile int *)&hold_step >= 0)
		return 0;
	now = bpf_ktime_get_ns();
	if (idx == teardown)
		*(volatile u64 *)&hold_from = now;
	else if (!*(volatile u64 *)&hold_from || now - to > HOLD_GAP_NS)
		return 0;
	*(volatile int *)&hold_step = idx;
	*(volatile u64 *)&hold_to = 0;
	return 0;
}

SEC("tp_btf/cpuhp_exit")
int BPF_PROG(cpuhp_exit, unsigned int cpu, int state, int idx, int ret)
{
	if (idx != *(volatile int *)&hold_step)
		return 0;
	*(volatile u64 *)&hold_to = bpf_ktime_get_ns();
	*(volatile int *)&hold_step = -1;
	return 0;
}

SEC("tp_btf/nmi_handler")
int BPF_PROG(nmi, void *handler, s64 delta_ns, int handled)
{
	u32 cpu = bpf_get_smp_processor_id();
	struct hvn_bpf_pcpu *p;
	u64 now;

	if (delta_ns <= 0)
		return 0;
	p = watched_pcpu(cpu);
	if (!p)
		return 0;
	now = bpf_ktime_get_ns();
	hvn_lost_nmi(&p->ivl, &p->nmi, now, delta_ns);
	return 0;
}

static __noinline int vec_entry_on(u32 cpu, int i)
{
	struct hvn_bpf_pcpu *p = this_pcpu(cpu);
	u64 now;

	if (!p || i < 0 || i >= HVN_BPF_NR_VEC)
		return 0;
	now = bpf_ktime_get_ns();
	hvn_ivl_enter(&p->ivl, now);
	count_all(p, now, cpu);
	storm_count(p, &p->vec[i], &storm_cfg, &hvn_bpf_vec_who[i], now);
	return 0;
}

static __always_inline void vec_entry(int i)
{
	u32 cpu = bpf_get_smp_processor_id();

	if (cpu_watched(cpu))
		vec_entry_on(cpu, i);
}

SEC("tp_btf/local_timer_entry")
int BPF_PROG(timer_entry, int vector) { vec_entry(0); return 0; }
SEC("tp_btf/reschedule_entry")
int BPF_PROG(resched_entry, int vector) { vec_entry(1); return 0; }
SEC("tp_btf/call_function_entry")
int BPF_PROG(callfunc_entry, int vector) { vec_entry(2); return 0; }
SEC("tp_btf/call_function_single_entry")
int BPF_PROG(callfunc1_entry, int vector) { vec_entry(3); return 0; }
SEC("tp_btf/local_timer_exit")
int BPF_PROG(timer_exit, int vector) { ivl_exit(); return 0; }
SEC("tp_btf/reschedule_exit")
int BPF_PROG(resched_exit, int vector) { ivl_exit(); return 0; }
SEC("tp_btf/call_function_exit")
int BPF_PROG(callfunc_exit, int vector) { ivl_exit(); return 0; }
SEC("tp_btf/call_function_single_exit")
int BPF_PROG(callfunc1_exit, int vector) { ivl_exit(); return 0; }

/*
 * x86: the IRQs changed (any IRQ's: a new IRQ is not yet watched),
 * counted for the tool, which reads /proc/irq again only after a change
 * (loader.c resolve_due()).  vector_config follows each write of a vector
 * domain IRQ's effective affinity; activation and deactivation come with
 * a handler's request and free in reservation mode.
 */
u64 vec_changes;

SEC("tp_btf/vector_config")
int BPF_PROG(vector_config, unsigned int irq, unsigned int vector,
	     unsigned int cpu, unsigned int apicdest)
{
	__sync_fetch_and_add(&vec_changes, 1);
	return 0;
}

SEC("tp_btf/vector_activate")
int BPF_PROG(vector_activate, unsigned int irq, bool is_managed,
	     bool can_reserve, bool reserve)
{
	__sync_fetch_and_add(&vec_changes, 1);
	return 0;
}

SEC("tp_btf/vector_deactivate")
int BPF_PROG(vector_deactivate, unsigned int irq, bool is_managed,
	     bool can_reserve, bool reserve)
{
	__sync_fetch_and_add(&vec_changes, 1);
	return 0;
}

/*
 * A handler's /proc/irq/N/NAME made or removed, by every request_irq()
 * and free_irq(), with or without a vector change (an MSI without mask
 * bits has its vector from allocation).
 */
SEC("kprobe/register_handler_proc")
int BPF_KPROBE(handler_add)
{
	__sync_fetch_and_add(&vec_changes, 1);
	return 0;
}

SEC("kprobe/unregister_handler_proc")
int BPF_KPROBE(handler_del)
{
	__sync_fetch_and_add(&vec_changes, 1);
	return 0;
}

SEC("tp_btf/vector_update")
int BPF_PROG(vector_update, unsigned int irq, unsigned int vector,
	     unsigned int cpu, unsigned int prev_vector, unsigned int prev_cpu)
{
	/* prev_vector 0: first activation, not a move. */
	if (prev_vector && cpu != prev_cpu)
		migrate_seen(irq, cpu, HVN_MIG_VECTOR);
	return 0;
}

static __always_inline void hrtimer_expire(u32 cpu, struct hrtimer *t, bool ksyms)
{
	u32 gen;
	struct hvn_lost_timer tm = { .timer = (u64)t };
	u64 period;
	struct hvn_lost_report rep;
	struct hrtimer_cpu_base *cb;
	u64 now, expiry, irqs;
	struct perf_event *ev;
	struct hvn_bpf_msg *m;
	struct hvn_bpf_pcpu *p;
	struct hrtimer *st;
	u8 src;

	p = this_pcpu(cpu);
	if (!p || BPF_CORE_READ(t, is_soft))
		return;
	if (!hvn_lost_clock_judged(BPF_CORE_READ(t, base, clockid)))
		return;
	/*
	 * The clock read here, not the interrupt's *now: a vCPU stopped
	 * after the interrupt read the clock lost that time too.  The
	 * expiry is in the timer's clock base; its offset maps it to
	 * CLOCK_MONOTONIC.
	 */
	now = bpf_ktime_get_ns();
	/* Next to it: a stop between the two reads is no suspend. */
	tm.boot_off = bpf_ktime_get_boot_ns() - now;
	expiry = BPF_CORE_READ(t, node.expires) - BPF_CORE_READ(t, base, offset);
	gen = sampler_gen[cpu & (HVN_BPF_MAX_CPUS - 1)];
	period = sample_period[cpu & (HVN_BPF_MAX_CPUS - 1)] ?: sample_ns;
	if (p->sampler_gen != gen) {
		p->sampler_gen = gen;
		p->lost.sampler_seen = 0;
	}
	st = (void *)p->sampler_timer;
	/* perf re-arms its timer from a clock read after this one. */
	if ((u64)t == p->sampler_timer) {
		ev = (void *)(p->sampler_timer -
			      bpf_core_field_offset(struct perf_event, hw.hrtimer));
		irqs = BPF_CORE_READ(ev, hw.interrupts);
		/* Restarted after a throttle (by a tick or the tool): perf
		 * zeroed the count; throttled: ~0.  No history either way. */
		if (!irqs || irqs == ~0ULL)
			p->lost.sampler_seen = 0;
		expiry = hvn_lost_due(&p->lost, expiry, period);
		p->lost.sampler_seen = now;
	} else if (p->lost.sampler_seen && st &&
		   (BPF_CORE_READ(st, state) & HRTIMER_STATE_ENQUEUED)) {
		/* Only a sampler still queued is due (not a throttled one). */
		expiry = hvn_lost_due(&p->lost, expiry, period);
	}
	p->last_timer = (u64)t;
	tm.hold_to = *(volatile u64 *)&hold_to;
	tm.hold_from = *(volatile u64 *)&hold_from;
	tm.steal = read_steal(cpu, &src, ksyms);
	/* Late only where steal is accounted at all (not on bare metal). */
	tm.steal_late = src != HVN_STEAL_KVM && tm.steal;
	tm.expiry = expiry;
	tm.now = now;
	tm.boottime = BPF_CORE_READ(t, base, clockid) == HVN_CLOCK_BOOTTIME;
	/*
	 * The loader sets lost_cfg.tick_ns only where hrtimers run from
	 * the tick (clang 14 cannot relocate 6.1's hres_active bitfield).
	 */
	tm.from_tick = true;
	cb = BPF_CORE_READ(t, base, cpu_base);
	/* Read by their size, whatever the kernel makes them. */
	if (bpf_core_field_exists(cb->nr_hangs)) {
		tm.hangs = BPF_CORE_READ_BITFIELD_PROBED(cb, nr_hangs);
		tm.max_hang_ns = BPF_CORE_READ_BITFIELD_PROBED(cb, max_hang_time);
	}
	if (hvn_lost_judge(&p->lost, &p->ivl, &p->nmi, &lost_cfg, &tm, &rep)) {
		m = msg_new(cpu, HVN_EV_lost);
		if (m) {
			m->rec.lost.cpu = cpu;
			m->rec.lost.start = rep.start;
			m->rec.lost.duration = rep.duration;
			m->rec.lost.irq_ns = rep.irq_ns;
			m->rec.lost.steal_ns = rep.steal_ns;
			m->rec.lost.unexplained_ns = rep.unexplained_ns;
			bpf_ringbuf_submit(m, 0);
		}
	}
}

/*
 * A hard timer armed already due fires at once: hvn_lost_judge() counts
 * its lateness from here.  Re-armed by its own callback (base->running is
 * the timer) it is the timer's own period, judged from its expiry: a
 * sampler re-armed from a clock read before a stop must show the stop.
 */
static __noinline int hrtimer_start_on(u32 cpu, struct hrtimer *t)
{
	struct hvn_bpf_pcpu *p;
	u64 expiry;

	p = this_pcpu(cpu);
	if (!p || BPF_CORE_READ(t, is_soft) ||
	    !hvn_lost_clock_judged(BPF_CORE_READ(t, base, clockid)) ||
	    (u64)BPF_CORE_READ(t, base, running) == (u64)t)
		return 0;
	expiry = BPF_CORE_READ(t, node.expires) - BPF_CORE_READ(t, base, offset);
	hvn_lost_armed(&p->lost, (u64)t, expiry, bpf_ktime_get_ns());
	return 0;
}

/* Timers run on every CPU: as the IRQ probes, watched work apart. */
SEC("tp_btf/hrtimer_start")
int hrtimer_start(u64 *ctx)
{
	u32 cpu = bpf_get_smp_processor_id();

	if (!cpu_watched(cpu))
		return 0;
	return hrtimer_start_on(cpu, (struct hrtimer *)ctx[0]);
}

/* One each: a program of one way calls only its own. */
static __noinline int hrtimer_ksyms_on(u32 cpu, struct hrtimer *t)
{
	hrtimer_expire(cpu, t, true);
	return 0;
}

static __noinline int hrtimer_acct_on(u32 cpu, struct hrtimer *t)
{
	hrtimer_expire(cpu, t, false);
	return 0;
}

SEC("tp_btf/hrtimer_expire_entry")
int hrtimer_ksyms(u64 *ctx)
{
	u32 cpu = bpf_get_smp_processor_id();

	if (!cpu_watched(cpu))
		return 0;
	return hrtimer_ksyms_on(cpu, (struct hrtimer *)ctx[0]);
}

SEC("tp_btf/hrtimer_expire_entry")
int hrtimer_acct(u64 *ctx)
{
	u32 cpu = bpf_get_smp_processor_id();

	if (!cpu_watched(cpu))
		return 0;
	return hrtimer_acct_on(cpu, (struct hrtimer *)ctx[0]);
}

/*
 * Steal sampling, from a perf cpu-clock event on one housekeeping CPU every
 * steal_ms: the watched CPUs are not woken for it.
 */
static __always_inline void steal_sample(bool ksyms)
{
	struct hvn_steal_report rep;
	struct hvn_steal_cpu *sc;
	struct hvn_bpf_msg *m;
	u32 cpu, key;
	u64 v;
	u8 src;

	for (cpu = 0; cpu < HVN_BPF_MAX_CPUS; cpu++) {
		if (cpu >= nr_cpus)
			break;
		if (!cpu_flags[cpu].watched)
			continue;
		/* A copy: a key passed by address loses the loop's bound. */
		key = cpu;
		sc = bpf_map_lookup_elem(&steal_map, &key);
		if (!sc)
			continue;
		v = read_steal(cpu, &src, ksyms);
		if (!hvn_steal_sample(sc, bpf_ktime_get_ns(), v,
				      steal_threshold_ns, &rep))
			continue;
		m = msg_new(cpu, HVN_EV_steal);
		if (!m)
			continue;
		m->rec.steal.cpu = cpu;
		m->rec.steal.source = src;
		m->rec.steal.start = rep.start;
		m->rec.steal.window = rep.window;
		m->rec.steal.duration = rep.steal;
		bpf_ringbuf_submit(m, 0);
	}
}

SEC("perf_event")
int steal_ksyms(void *ctx)
{
	steal_sample(true);
	return 0;
}

SEC("perf_event")
int steal_acct(void *ctx)
{
	steal_sample(false);
	return 0;
}

/*
 * A perf timer's run on watched CPU @cpu, from its hrtimer's callback
 * right after the hrtimer probe saw that timer (p->last_timer): the
 * CPU's state, or NULL where the timer is not perf's (the watched set
 * changed between).
 */
static __always_inline struct hvn_bpf_pcpu *perf_run(u32 cpu)
{
	struct hvn_bpf_pcpu *p;
	struct hrtimer *t;
	u32 zero = 0;

	if (cpu >= HVN_BPF_MAX_CPUS || !cpu_flags[cpu].watched)
		return NULL;
	p = bpf_map_lookup_elem(&pcpu_map, &zero);
	if (!p || !p->last_timer)
		return NULL;
	t = (void *)p->last_timer;
	if (perf_hrtimer_fn &&
	    (u64)BPF_CORE_READ(t, function) != (u64)perf_hrtimer_fn)
		return NULL;
	return p;
}

/*
 * Whether this run throttled its event (perf counted one interrupt too
 * many since its CPU's last tick, and set the count to ~0): its timer
 * stops until a tick or the tool restarts it.  Says then whether a task
 * ran (throttled_busy[][@k], for the keeper).
 */
static __always_inline bool perf_run_throttled(struct hvn_bpf_pcpu *p, u32 cpu, int k)
{
	struct perf_event *ev = (void *)(p->last_timer -
		bpf_core_field_offset(struct perf_event, hw.hrtimer));

	if (BPF_CORE_READ(ev, hw.interrupts) != ~0ULL)
		return false;
	throttled_busy[cpu & (HVN_BPF_MAX_CPUS - 1)][k] =
		bpf_get_current_pid_tgid() >> 32 != 0;
	return true;
}

/*
 * The backup of a CPU's sampler (loader.c, sync_timers()): only a hard
 * timer to be late, judged as any other.  Returns 0: no sample written.
 */
SEC("perf_event")
int backup(void *ctx)
{
	u32 cpu = bpf_get_smp_processor_id();
	struct hvn_bpf_pcpu *p = perf_run(cpu);

	if (p)
		perf_run_throttled(p, cpu, 1);
	return 0;
}

/*
 * The sample_us timer of a watched CPU, run from its hrtimer's callback
 * right after the hrtimer probe saw that timer: it names the timer for
 * the probe, and drops the history of one it throttled.  Returns 0: no
 * sample is written to the event's ring, which carries only throttle
 * records for the tool.
 */
SEC("perf_event")
int sampler(void *ctx)
{
	u32 cpu = bpf_get_smp_processor_id();
	struct hvn_bpf_pcpu *p = perf_run(cpu);

	if (!p)
		return 0;
	if (p->sampler_timer != p->last_timer) {
		p->sampler_timer = p->last_timer;
		p->lost.sampler_seen = 0;	/* a new timer: no history */
	}
	/*
	 * Throttled: forget the history now, not at its next run: a tick
	 * that restarts it and fires first would judge by it.
	 */
	if (perf_run_throttled(p, cpu, 0))
		p->lost.sampler_seen = 0;
	return 0;
}
