// SPDX-License-Identifier: GPL-2.0
/*
 * Steal time of the watched CPUs, sampled every steal_ms from a
 * housekeeping CPU (never adding work to a watched one).  On an x86 KVM
 * guest with steal time the exact per-vCPU area the host updates is read
 * (under its version seqlock, as the kernel's kvm_steal_clock() does);
 * elsewhere, arm64 included, the tick-granular CPUTIME_STEAL counter.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/io.h>
#include <linux/kernel_stat.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>
#include "compat.h"
#include "detect.h"
#include "hvnoise.h"
#include "hvnoise_trace.h"
#include "lib/steal.h"

struct hvn_steal_state {
	struct hvn_steal_cpu sc;
	void *area;		/* struct kvm_steal_time, or NULL */
	bool probed;		/* the MSR was looked at */
};

static struct hvn_steal_state *hvn_steal;	/* [nr_cpu_ids] */
static cpumask_var_t hvn_steal_cpus;		/* under hvn_lock */

static void hvn_steal_fn(struct work_struct *w);
static DECLARE_DELAYED_WORK(hvn_steal_work, hvn_steal_fn);

#if HVN_KVM_STEAL_MSR
static u32 area_version(const void *a)
{
	return READ_ONCE(((const struct kvm_steal_time *)a)->version);
}

static u64 area_steal(const void *a)
{
	return READ_ONCE(((const struct kvm_steal_time *)a)->steal);
}

static void area_rmb(void)
{
	virt_rmb();
}

static const struct hvn_steal_area_ops kvm_area_ops = {
	.version = area_version, .steal = area_steal, .read_barrier = area_rmb,
};

/*
 * Map @cpu's steal-time area if the host gave it one.  The MSR read is
 * "safe": off KVM, or without steal time, it faults and we get an error
 * (the feature-bit helpers are not exported to modules).
 */
static void *map_area(unsigned int cpu)
{
	u64 msr;

	if (hvn_rdmsr_safe_on_cpu(cpu, MSR_KVM_STEAL_TIME, &msr) ||
	    !(msr & KVM_MSR_ENABLED))
		return NULL;
	return memremap(msr & KVM_STEAL_VALID_BITS, sizeof(struct kvm_steal_time),
			MEMREMAP_WB);
}
#else
static void *map_area(unsigned int cpu)
{
	return NULL;
}
#endif

/*
 * The steal counter of @cpu in ns; @source (may be NULL) says which.
 * Safe from any context, including the hrtimer probe.
 */
u64 hvn_steal_read_cpu(unsigned int cpu, u8 *source)
{
	u64 v;
#if HVN_KVM_STEAL_MSR
	void *area = hvn_steal ? READ_ONCE(hvn_steal[cpu].area) : NULL;

	if (area && hvn_steal_area_read(&kvm_area_ops, area, 4, &v)) {
		if (source)
			*source = HVN_STEAL_KVM;
		return v;
	}
#endif
	if (source)
		*source = HVN_STEAL_KCPUSTAT;
	v = hvn_kcpustat_steal(cpu);
	return v;
}

static void hvn_steal_fn(struct work_struct *w)
{
	struct hvn_steal_report rep;
	unsigned int ms;
	u64 thr, now, v;
	u8 src;
	int cpu;

	mutex_lock(&hvn_lock);
	if (!hvn_live)
		goto out;
	thr = (u64)READ_ONCE(hvn_dcfg.steal_threshold_us) * 1000;
	for_each_cpu(cpu, hvn_steal_cpus) {
		v = hvn_steal_read_cpu(cpu, &src);
		now = ktime_get_mono_fast_ns();
		if (hvn_steal_sample(&hvn_steal[cpu].sc, now, v, thr, &rep))
			trace_steal(cpu, rep.start, rep.window, rep.steal, src);
	}
	ms = READ_ONCE(hvn_dcfg.steal_ms);
	if (ms)
		hvn_queue_housekeeping(&hvn_steal_work, msecs_to_jiffies(ms));
out:
	mutex_unlock(&hvn_lock);
}

/* The watched set changed (hvn_lock held). */
void hvn_steal_watch(const struct hvn_watchset *ws)
{
	unsigned int cpu;

	/*
	 * A CPU new to the set starts a fresh interval; one that stays keeps
	 * its own (a set change, each IRQ move included, must not drop one).
	 */
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		bool want = cpu < ws->nbits && ws->why[cpu];

		if (!want) {
			cpumask_clear_cpu(cpu, hvn_steal_cpus);
			continue;
		}
		if (!hvn_steal[cpu].probed) {
			hvn_steal[cpu].probed = true;
			WRITE_ONCE(hvn_steal[cpu].area, map_area(cpu));
		}
		if (!cpumask_test_cpu(cpu, hvn_steal_cpus))
			hvn_steal[cpu].sc.primed = false;
		cpumask_set_cpu(cpu, hvn_steal_cpus);
	}
}

/* Start or re-arm the sampler (hvn_lock held). */
void hvn_steal_kick(void)
{
	if (READ_ONCE(hvn_dcfg.steal_ms))
		hvn_queue_housekeeping(&hvn_steal_work, 0);
}

int hvn_steal_init(void)
{
	hvn_steal = kcalloc(nr_cpu_ids, sizeof(*hvn_steal), GFP_KERNEL);
	if (!hvn_steal || !zalloc_cpumask_var(&hvn_steal_cpus, GFP_KERNEL)) {
		kfree(hvn_steal);
		hvn_steal = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* After the probes are detached and hvn_live is false. */
void hvn_steal_exit(void)
{
	unsigned int cpu;

	cancel_delayed_work_sync(&hvn_steal_work);
	if (!hvn_steal)
		return;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (hvn_steal[cpu].area)
			memunmap(hvn_steal[cpu].area);
	kfree(hvn_steal);
	hvn_steal = NULL;
	free_cpumask_var(hvn_steal_cpus);
}
