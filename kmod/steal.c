// SPDX-License-Identifier: GPL-2.0
/*
 * Steal time of the watched CPUs, sampled every steal_ms from a
 * housekeeping CPU (never adding work to a watched one).  On an x86 KVM
 * guest with steal time the exact per-vCPU area the host updates is read
 * (under its version seqlock, as the kernel's kvm_steal_clock() does);
 * elsewhere the tick-granular CPUTIME_STEAL counter, which on an arm64
 * guest with paravirtualized time the kernel feeds from its stolen-time
 * structures.  That structure is not read here: the kernel's mapping is
 * not exported, and SMCCC's PV_TIME_ST, the only way to find it, makes
 * KVM zero it, under the kernel's own accounting.
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
	void *area;		/* the hypervisor's steal-time area, or NULL */
	bool probed;		/* the area was looked for */
};

static struct hvn_steal_state *hvn_steal;	/* [nr_cpu_ids] */
static cpumask_var_t hvn_steal_cpus;		/* under hvn_lock */

/* arm64: the hypervisor offers paravirtualized time, which feeds kcpustat. */
static bool hvn_pvtime __read_mostly;

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
#define AREA_SOURCE	HVN_STEAL_KVM
#define AREA_OPS	kvm_area_ops
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
#ifdef AREA_SOURCE
	void *area = hvn_steal ? READ_ONCE(hvn_steal[cpu].area) : NULL;

	if (area && hvn_steal_area_read(&AREA_OPS, area, 4, &v)) {
		if (source)
			*source = AREA_SOURCE;
		return v;
	}
#endif
	if (source)
		*source = hvn_pvtime ? HVN_STEAL_PVTIME : HVN_STEAL_KCPUSTAT;
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

/* Where @cpu's steal is read from, as long as its area is read without fail. */
static u8 cpu_source(unsigned int cpu)
{
#ifdef AREA_SOURCE
	if (hvn_steal[cpu].area)
		return AREA_SOURCE;
#endif
	return hvn_pvtime ? HVN_STEAL_PVTIME : HVN_STEAL_KCPUSTAT;
}

/*
 * Where the watched CPUs' steal is read from, into @buf (@len bytes), as
 * "SOURCE:CPULIST" per source in use ("kcpustat:0-3", "pvtime:0-1
 * kcpustat:2"), or "none" with nothing watched (hvn_lock held).  Returns
 * the length or a negative errno.
 */
int hvn_steal_format_sources(char *buf, size_t len)
{
	static const char *const name[] = {
		[HVN_STEAL_KVM] = "kvm", [HVN_STEAL_KCPUSTAT] = "kcpustat",
		[HVN_STEAL_PVTIME] = "pvtime",
	};
	cpumask_var_t mask;
	unsigned int cpu;
	int n = 0;
	u8 src;

	if (!hvn_steal || cpumask_empty(hvn_steal_cpus))
		return scnprintf(buf, len, "none");
	if (!zalloc_cpumask_var(&mask, GFP_KERNEL))
		return -ENOMEM;
	for (src = 0; src < ARRAY_SIZE(name); src++) {
		cpumask_clear(mask);
		for_each_cpu(cpu, hvn_steal_cpus)
			if (cpu_source(cpu) == src)
				cpumask_set_cpu(cpu, mask);
		if (!cpumask_empty(mask))
			n += scnprintf(buf + n, len - n, "%s%s:%*pbl", n ? " " : "", name[src],
				       cpumask_pr_args(mask));
	}
	free_cpumask_var(mask);
	/* Filled to the last byte: cut, as "watched" says, not a wrong list. */
	return n >= (int)len - 1 ? -ENOSPC : n;
}

/* Start or re-arm the sampler (hvn_lock held). */
void hvn_steal_kick(void)
{
	if (READ_ONCE(hvn_dcfg.steal_ms))
		hvn_queue_housekeeping(&hvn_steal_work, 0);
}

/*
 * arm64: whether the hypervisor offers paravirtualized time, as the
 * kernel's has_pv_steal_clock() asks at boot (SMCCC 1.1 discovery; these
 * two calls only answer; without a conduit they return NOT_SUPPORTED).
 */
static bool pvtime_offered(void)
{
#if HVN_ARM64_PVTIME
	struct arm_smccc_res res;

	arm_smccc_1_1_invoke(ARM_SMCCC_ARCH_FEATURES_FUNC_ID,
			     ARM_SMCCC_HV_PV_TIME_FEATURES, &res);
	if (res.a0 != SMCCC_RET_SUCCESS)
		return false;
	arm_smccc_1_1_invoke(ARM_SMCCC_HV_PV_TIME_FEATURES, ARM_SMCCC_HV_PV_TIME_ST, &res);
	return res.a0 == SMCCC_RET_SUCCESS;
#else
	return false;
#endif
}

int hvn_steal_init(void)
{
	struct hvn_steal_state *st;

	hvn_pvtime = pvtime_offered();
	if (!zalloc_cpumask_var(&hvn_steal_cpus, GFP_KERNEL))
		return -ENOMEM;
	st = kcalloc(nr_cpu_ids, sizeof(*st), GFP_KERNEL);
	if (!st) {
		free_cpumask_var(hvn_steal_cpus);
		return -ENOMEM;
	}
	/*
	 * Published last, under the lock steal_source's reader takes: its
	 * sysfs file is there before init and after exit.
	 */
	mutex_lock(&hvn_lock);
	hvn_steal = st;
	mutex_unlock(&hvn_lock);
	return 0;
}

/* After the probes are detached and hvn_live is false. */
void hvn_steal_exit(void)
{
	struct hvn_steal_state *st;
	unsigned int cpu;

	cancel_delayed_work_sync(&hvn_steal_work);
	mutex_lock(&hvn_lock);
	st = hvn_steal;
	hvn_steal = NULL;
	mutex_unlock(&hvn_lock);
	if (!st)
		return;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (st[cpu].area)
			memunmap(st[cpu].area);
	kfree(st);
	free_cpumask_var(hvn_steal_cpus);
}
