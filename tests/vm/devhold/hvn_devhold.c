// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: holds a PCI device's lock as a driver probing for seconds
 * does (mlx5 at boot, a devlink reload).  Writing "DDDD:BB:DD.F MS" to
 * "hold" takes device_lock() of that device for MS ms in a kernel thread;
 * "held" reads 1 while it is held.  hvnoise's re-resolution waits on that
 * lock, holding its own; what must not wait behind it is tested with it.
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/pci.h>

static struct pci_dev *hold_dev;
static unsigned int hold_ms;
static atomic_t held;
static struct completion done;

static int hold_fn(void *arg)
{
	device_lock(&hold_dev->dev);
	atomic_set(&held, 1);
	msleep(hold_ms);
	atomic_set(&held, 0);
	device_unlock(&hold_dev->dev);
	pci_dev_put(hold_dev);
	hold_dev = NULL;
	/* Out of this module's text before rmmod may free it. */
	kthread_complete_and_exit(&done, 0);
}

static int hold_set(const char *val, const struct kernel_param *kp)
{
	unsigned int dom, bus, slot, fn, ms;
	struct task_struct *t;

	if (sscanf(val, "%x:%x:%x.%x %u", &dom, &bus, &slot, &fn, &ms) != 5 ||
	    !ms || ms > 60000)
		return -EINVAL;
	/* One hold at a time: a write waits for the last to end. */
	if (wait_for_completion_killable(&done))
		return -EINTR;
	hold_dev = pci_get_domain_bus_and_slot(dom, bus, PCI_DEVFN(slot, fn));
	if (!hold_dev) {
		complete(&done);	/* the next write, or the unload, goes on */
		return -ENODEV;
	}
	hold_ms = ms;
	reinit_completion(&done);
	t = kthread_run(hold_fn, NULL, "hvn_devhold");
	if (IS_ERR(t)) {
		pci_dev_put(hold_dev);
		hold_dev = NULL;
		complete(&done);
		return PTR_ERR(t);
	}
	return 0;
}

static int held_get(char *buf, const struct kernel_param *kp)
{
	return sprintf(buf, "%d\n", atomic_read(&held));
}

static const struct kernel_param_ops hold_ops = {
	.set = hold_set,
};
module_param_cb(hold, &hold_ops, NULL, 0200);

static const struct kernel_param_ops held_ops = {
	.get = held_get,
};
module_param_cb(held, &held_ops, NULL, 0444);

static int __init hvn_devhold_init(void)
{
	init_completion(&done);
	complete(&done);
	return 0;
}

static void __exit hvn_devhold_exit(void)
{
	wait_for_completion(&done);
}

module_init(hvn_devhold_init);
module_exit(hvn_devhold_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("hvnoise test: hold a PCI device's lock for a while");
