/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version differences hvnoise depends on, decided by what the
 * headers define (feature probes), not by version numbers, so distro
 * backports are honoured.  Kernels covered: 5.10 to 7.2 on x86-64, and
 * 6.1 and 7.2 on arm64.
 */
#ifndef HVNOISE_COMPAT_H
#define HVNOISE_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/kernel_stat.h>
#include <linux/msi.h>
#include <linux/workqueue.h>

/*
 * Before 5.17 a device's MSI descriptors are a list walked with
 * for_each_pci_msi_entry(), and pci_irq_vector() WARNs when asked past the
 * allocated MSI-X vectors.  Later kernels keep them in an xarray and
 * pci_irq_vector() returns -EINVAL for a hole.
 */
#ifdef for_each_pci_msi_entry
#define HVN_HAVE_MSI_ENTRY_LIST	1
#else
#define HVN_HAVE_MSI_ENTRY_LIST	0
#endif

/* A hrtimer with its callback; HVN_HAVE_HRTIMER_SETUP comes from Kbuild. */
static inline void hvn_hrtimer_setup(struct hrtimer *t,
				     enum hrtimer_restart (*fn)(struct hrtimer *),
				     clockid_t clock, enum hrtimer_mode mode)
{
#if HVN_HAVE_HRTIMER_SETUP
	hrtimer_setup(t, fn, clock, mode);
#else
	hrtimer_init(t, clock, mode);
	t->function = fn;
#endif
}

/*
 * kcpustat_field() lost its struct kernel_cpustat * argument (the CPU's
 * own was the only one passed) after 6.19 (sched/cputime, 2026; 7.2 has
 * it); HVN_HAVE_KCPUSTAT_FIELD_CPU comes from Kbuild.
 */
static inline u64 hvn_kcpustat_steal(int cpu)
{
#if HVN_HAVE_KCPUSTAT_FIELD_CPU
	return kcpustat_field(CPUTIME_STEAL, cpu);
#else
	return kcpustat_field(&kcpustat_cpu(cpu), CPUTIME_STEAL, cpu);
#endif
}

/*
 * A workqueue whose work runs on the CPU it is queued on: the default
 * with no flag before 6.17 added WQ_PERCPU (Debian's 6.12.117 has it too,
 * backported, with no effect).  7.2 WARNs at alloc_workqueue() when neither
 * WQ_PERCPU nor WQ_UNBOUND is given.  WQ_PERCPU is an enumerator:
 * HVN_HAVE_WQ_PERCPU comes from Kbuild.
 */
#if HVN_HAVE_WQ_PERCPU
#define HVN_WQ_PERCPU	WQ_PERCPU
#else
#define HVN_WQ_PERCPU	0
/* The one probe whose miss would still compile (and WARN at load). */
#include <linux/version.h>
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 17, 0)
#error "WQ_PERCPU not found in <linux/workqueue.h> of a 6.17+ kernel: fix HVN_HAVE_WQ_PERCPU in kmod/Kbuild"
#endif
#endif

/*
 * The KVM steal-time area is found through an x86 MSR (MSR_KVM_STEAL_TIME,
 * read with rdmsr*_safe_on_cpu()): only x86 with KVM guest support has it.
 * Elsewhere (arm64, and powerpc whose CONFIG_KVM_GUEST means another
 * thing) steal time comes from the CPUTIME_STEAL counter.
 */
#if defined(CONFIG_X86) && defined(CONFIG_KVM_GUEST)
#define HVN_KVM_STEAL_MSR	1
#include <linux/kvm_para.h>
#include <asm/msr.h>

/*
 * rdmsrl_safe_on_cpu() was renamed rdmsrq_safe_on_cpu() in 6.16;
 * HVN_HAVE_RDMSRQ comes from Kbuild.
 */
static inline int hvn_rdmsr_safe_on_cpu(unsigned int cpu, u32 msr, u64 *v)
{
#if HVN_HAVE_RDMSRQ
	return rdmsrq_safe_on_cpu(cpu, msr, v);
#else
	return rdmsrl_safe_on_cpu(cpu, msr, v);
#endif
}
#else
#define HVN_KVM_STEAL_MSR	0
#endif

/*
 * arm64's paravirtualized time (SMCCC PV_TIME_*, Arm DEN0057A):
 * asked for whether it is offered, never called (see steal.c); without
 * CONFIG_PARAVIRT the kernel does not feed CPUTIME_STEAL from it.
 */
#if defined(CONFIG_ARM64) && defined(CONFIG_PARAVIRT) && \
	defined(CONFIG_HAVE_ARM_SMCCC_DISCOVERY)
#define HVN_ARM64_PVTIME	1
#include <linux/arm-smccc.h>
#else
#define HVN_ARM64_PVTIME	0
#endif

#endif /* HVNOISE_COMPAT_H */
