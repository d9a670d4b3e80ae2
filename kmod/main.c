// SPDX-License-Identifier: GPL-2.0
/*
 * hvnoise: find why GPU training stalls on virtualised and bare-metal
 * hosts.  This file loads and unloads the module; see
 * Documentation/admin-guide.rst.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include "detect.h"
#include "hvnoise.h"
#include "hvnoise/version.h"

static int __init hvn_init(void)
{
	char err[HVN_ERRLEN], cpus[128];
	int ret;

	ret = hvn_detect_alloc();
	if (ret)
		return ret;
	ret = hvn_watch_init();
	if (ret)
		goto fail_alloc;
	ret = hvn_steal_init();
	if (ret)
		goto fail_watch;
	ret = hvn_detect_init();
	if (ret)
		goto fail_steal;
	mutex_lock(&hvn_lock);
	ret = hvn_watch_update(hvn_config(), true, err, sizeof(err));
	if (ret) {
		mutex_unlock(&hvn_lock);
		pr_err("not loaded: %s\n", err);
		ret = ret == -ENOMEM ? ret : -EINVAL;
		goto fail_detect;
	}
	hvn_live = true;
	hvn_steal_kick();
	if (hvn_watch_format_cpus(cpus, sizeof(cpus)) < 0)
		strscpy(cpus, "(too many to list)", sizeof(cpus));
	mutex_unlock(&hvn_lock);

	ret = hvn_watch_start();
	if (ret) {
		mutex_lock(&hvn_lock);
		hvn_live = false;
		mutex_unlock(&hvn_lock);
		pr_err("not loaded: cannot register hotplug/PCI callbacks (%d)\n",
		       ret);
		goto fail_detect;
	}
	pr_info("loaded, watching CPUs %s\n", cpus);
	return 0;

fail_detect:
	hvn_detect_exit();
fail_steal:
	hvn_steal_exit();
fail_watch:
	hvn_watch_exit();
fail_alloc:
	hvn_detect_free();
	return ret;
}

static void __exit hvn_exit(void)
{
	mutex_lock(&hvn_lock);
	hvn_live = false;
	mutex_unlock(&hvn_lock);
	hvn_detect_exit();	/* probes off first: nothing fires after */
	hvn_watch_stop();
	hvn_steal_exit();
	hvn_watch_exit();
	hvn_detect_free();
}

module_init(hvn_init);
module_exit(hvn_exit);

MODULE_DESCRIPTION("Timestamp hypervisor steal, lost vCPU time and IRQ noise on the CPUs serving GPUs and NICs");
MODULE_AUTHOR("The hvnoise developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(HVN_VERSION);
