// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: a vCPU stopped by its host at a chosen instruction, on demand.
 *
 * A kprobe on @symbol busy-waits @spin_us on CPU @cpu, once per write of 1
 * to "arm".  The probed code runs in hard interrupt context (a timer's
 * callback), so nothing else runs on that CPU meanwhile while its clock
 * moves on: to the guest this is the host stopping the vCPU at that point,
 * and unlike a host stop it lands in the same window every time.
 * "spun" reads back "<start ns> <ns>" (CLOCK_MONOTONIC) of the last spin.
 */
#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>

static char *symbol = "sampler_fn";
module_param(symbol, charp, 0444);
MODULE_PARM_DESC(symbol, "function to stop in (sampler_fn, perf_swevent_hrtimer)");

static unsigned int spin_us = 30000;
module_param(spin_us, uint, 0644);

static int cpu = 1;
module_param(cpu, int, 0644);

static atomic_t armed;
static u64 spun_start, spun_ns;

static int arm_set(const char *val, const struct kernel_param *kp)
{
	atomic_set(&armed, 1);
	return 0;
}

static int arm_get(char *buf, const struct kernel_param *kp)
{
	return sprintf(buf, "%d\n", atomic_read(&armed));
}

static const struct kernel_param_ops arm_ops = {
	.set = arm_set,
	.get = arm_get,
};
module_param_cb(arm, &arm_ops, NULL, 0644);

static int spun_get(char *buf, const struct kernel_param *kp)
{
	return sprintf(buf, "%llu %llu\n", READ_ONCE(spun_start), READ_ONCE(spun_ns));
}

static const struct kernel_param_ops spun_ops = {
	.get = spun_get,
};
module_param_cb(spun, &spun_ops, NULL, 0444);

static int pre(struct kprobe *kp, struct pt_regs *regs)
{
	u64 t0, t;

	if (smp_processor_id() != READ_ONCE(cpu) ||
	    atomic_cmpxchg(&armed, 1, 0) != 1)
		return 0;
	t0 = ktime_get_mono_fast_ns();
	do {
		cpu_relax();
		t = ktime_get_mono_fast_ns();
	} while (t - t0 < (u64)READ_ONCE(spin_us) * 1000);
	WRITE_ONCE(spun_start, t0);
	WRITE_ONCE(spun_ns, t - t0);
	return 0;
}

static struct kprobe kp = { .pre_handler = pre };

static int __init spin_init(void)
{
	kp.symbol_name = symbol;
	return register_kprobe(&kp);
}

static void __exit spin_exit(void)
{
	unregister_kprobe(&kp);
}

module_init(spin_init);
module_exit(spin_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("hvnoise test: a host stop inside a chosen function, on demand");
