// SPDX-License-Identifier: GPL-2.0
/*
 * Test only (x86): NMI bursts, as a heavy perf NMI program or an
 * nmi_backtrace makes them.  Writing N to "burst" sends N NMIs back to
 * back (each once the last was handled) to every other online CPU; each
 * CPU's handler busy-waits "nmi_us" before it returns, so a CPU spends
 * N * nmi_us in NMIs on end, and its timers fire that late.  That time is
 * the guest's own, in NMI context (nmi:nmi_handler reports it), never
 * time its host took.
 * "handled" reads back how many of the bursts' NMIs ran.
 */
#include <linux/atomic.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>
#include <asm/apic.h>
#include <asm/nmi.h>

static unsigned int nmi_us = 1500;
module_param(nmi_us, uint, 0644);
MODULE_PARM_DESC(nmi_us, "how long each NMI handler busy-waits (default 1500)");

static DEFINE_PER_CPU(atomic_t, pending);
static atomic_t handled;

static int hvn_nmi(unsigned int type, struct pt_regs *regs)
{
	u64 t0 = ktime_get_mono_fast_ns();

	if (!atomic_xchg(this_cpu_ptr(&pending), 0))
		return NMI_DONE;
	while (ktime_get_mono_fast_ns() - t0 < (u64)READ_ONCE(nmi_us) * 1000)
		cpu_relax();
	atomic_inc(&handled);
	return NMI_HANDLED;
}

/* Whether an NMI sent to @to is still unhandled somewhere. */
static bool unhandled(const struct cpumask *to)
{
	int cpu;

	for_each_cpu(cpu, to)
		if (atomic_read(per_cpu_ptr(&pending, cpu)))
			return true;
	return false;
}

static int burst_set(const char *val, const struct kernel_param *kp)
{
	cpumask_var_t to;
	unsigned int n, i;
	int cpu, ret;
	u64 t0;

	ret = kstrtouint(val, 0, &n);
	if (ret)
		return ret;
	if (n > 100)
		return -EINVAL;
	if (!zalloc_cpumask_var(&to, GFP_KERNEL))
		return -ENOMEM;
	cpus_read_lock();
	preempt_disable();
	cpumask_copy(to, cpu_online_mask);
	cpumask_clear_cpu(smp_processor_id(), to);
	/* Back to back: each CPU spends n * nmi_us in NMIs, a stretch. */
	for (i = 0; i < n; i++) {
		for_each_cpu(cpu, to)
			atomic_set(per_cpu_ptr(&pending, cpu), 1);
		apic->send_IPI_mask(to, NMI_VECTOR);
		t0 = ktime_get_mono_fast_ns();
		while (unhandled(to) &&
		       ktime_get_mono_fast_ns() - t0 < 100 * NSEC_PER_MSEC)
			cpu_relax();
	}
	preempt_enable();
	cpus_read_unlock();
	free_cpumask_var(to);
	return 0;
}

static int handled_get(char *buf, const struct kernel_param *kp)
{
	return sprintf(buf, "%d\n", atomic_read(&handled));
}

static const struct kernel_param_ops burst_ops = {
	.set = burst_set,
};
module_param_cb(burst, &burst_ops, NULL, 0200);

static const struct kernel_param_ops handled_ops = {
	.get = handled_get,
};
module_param_cb(handled, &handled_ops, NULL, 0444);

static int __init hvn_nmi_init(void)
{
	return register_nmi_handler(NMI_LOCAL, hvn_nmi, 0, "hvn_nmi");
}

static void __exit hvn_nmi_exit(void)
{
	unregister_nmi_handler(NMI_LOCAL, "hvn_nmi");
}

module_init(hvn_nmi_init);
module_exit(hvn_nmi_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("hvnoise test: NMI bursts with handlers of a chosen length");
