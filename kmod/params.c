// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameters: the configuration and its validation.  The same set
 * callbacks serve insmod and runtime writes under
 * /sys/module/hvnoise/parameters/; a rejected write leaves the previous
 * configuration in force and says why in one dmesg line.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/cpumask.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include "detect.h"
#include "hvnoise.h"
#include "lib/cpulist.h"

DEFINE_MUTEX(hvn_lock);
bool hvn_live;

/* Static, not allocated: a parameter write may still arrive during exit. */
static DECLARE_BITMAP(cfg_cpus, NR_CPUS);
static DECLARE_BITMAP(new_cpus, NR_CPUS);
static struct hvn_config cfg = { .cpus = cfg_cpus };

const struct hvn_config *hvn_config(void)
{
	return &cfg;
}

unsigned int hvn_resolve_interval_ms(void)
{
	return READ_ONCE(hvn_dcfg.resolve_ms);
}

/* A parameter value as the user wrote it, for messages: no newline. */
static int vlen(const char *val)
{
	size_t n = strlen(val);

	if (n && val[n - 1] == '\n')
		n--;
	return n > 64 ? 64 : (int)n;
}

/* One dmesg line: which parameter, the value written, and why it failed. */
static void reject(const char *param, const char *val, const char *why)
{
	pr_err("%s=%.*s rejected: %s%s\n", param, vlen(val), val, why,
	       hvn_live ? "; configuration unchanged" : "");
}

/*
 * Apply @next if the module is live (resolving it; @strict checks the
 * devices).  Called with hvn_lock held.  On failure logs one line naming
 * the parameter, the value and why, and returns -EINVAL.
 */
static int apply(const char *param, const char *val,
		 const struct hvn_config *next, bool strict)
{
	char err[HVN_ERRLEN];
	int ret;

	if (!hvn_live)
		return 0;	/* insmod: init resolves all parameters at once */
	ret = hvn_watch_update(next, strict, err, sizeof(err));
	if (ret) {
		reject(param, val, err);
		return ret == -ENOMEM ? ret : -EINVAL;
	}
	return 0;
}

static int devices_set(const char *val, const struct kernel_param *kp)
{
	struct hvn_config next;
	char err[HVN_ERRLEN];
	int ret;

	mutex_lock(&hvn_lock);
	next = cfg;
	ret = hvn_devlist_parse(val, &next.devs, err, sizeof(err));
	if (ret) {
		reject("devices", val, err);
		goto out;
	}
	ret = apply("devices", val, &next, true);
	if (!ret)
		cfg.devs = next.devs;
out:
	mutex_unlock(&hvn_lock);
	return ret;
}

static int devices_get(char *buf, const struct kernel_param *kp)
{
	int ret;

	mutex_lock(&hvn_lock);
	ret = hvn_devlist_format(buf, PAGE_SIZE - 1, &cfg.devs);
	mutex_unlock(&hvn_lock);
	if (ret < 0)
		return ret;
	buf[ret++] = '\n';
	return ret;
}

static int cpus_set(const char *val, const struct kernel_param *kp)
{
	struct hvn_config next;
	char err[HVN_ERRLEN];
	int ret;

	mutex_lock(&hvn_lock);
	ret = hvn_cpulist_parse(val, new_cpus, nr_cpu_ids, err, sizeof(err));
	if (ret) {
		reject("cpus", val, err);
		goto out;
	}
	next = cfg;
	next.cpus = new_cpus;
	ret = apply("cpus", val, &next, false);
	if (!ret)
		bitmap_copy(cfg_cpus, new_cpus, nr_cpu_ids);
out:
	mutex_unlock(&hvn_lock);
	return ret;
}

static int cpus_get(char *buf, const struct kernel_param *kp)
{
	int ret;

	mutex_lock(&hvn_lock);
	ret = hvn_cpulist_format(buf, PAGE_SIZE - 1, cfg_cpus, nr_cpu_ids);
	mutex_unlock(&hvn_lock);
	if (ret < 0)
		return ret;
	buf[ret++] = '\n';
	return ret;
}

static int local_cpus_set(const char *val, const struct kernel_param *kp)
{
	struct hvn_config next;
	bool on;
	int ret;

	ret = kstrtobool(val, &on);
	if (ret) {
		reject("local_cpus", val, "not a boolean (0/1, y/n)");
		return -EINVAL;
	}
	mutex_lock(&hvn_lock);
	next = cfg;
	next.local_cpus = on;
	ret = apply("local_cpus", val, &next, false);
	if (!ret)
		cfg.local_cpus = on;
	mutex_unlock(&hvn_lock);
	return ret;
}

static int local_cpus_get(char *buf, const struct kernel_param *kp)
{
	return sprintf(buf, "%d\n", READ_ONCE(cfg.local_cpus));
}

/* A read-only parameter's line: @format's text under hvn_lock, and a newline. */
static int locked_line(char *buf, int (*format)(char *buf, size_t len))
{
	int ret;

	mutex_lock(&hvn_lock);
	ret = format(buf, PAGE_SIZE - 1);
	mutex_unlock(&hvn_lock);
	if (ret < 0)
		return ret;
	buf[ret++] = '\n';
	return ret;
}

static int watched_get(char *buf, const struct kernel_param *kp)
{
	return locked_line(buf, hvn_watch_format_cpus);
}

/* Where each watched CPU's steal is read from (hvnoise status shows it). */
static int steal_source_get(char *buf, const struct kernel_param *kp)
{
	return locked_line(buf, hvn_steal_format_sources);
}

/* Writing 1 re-emits the watched set, e.g. once a recorder has started. */
static int emit_set(const char *val, const struct kernel_param *kp)
{
	bool on;

	if (kstrtobool(val, &on) || !on) {
		reject("emit", val, "write 1 to re-emit the watched set");
		return -EINVAL;
	}
	hvn_watch_emit();	/* RCU: not behind a re-resolution */
	return 0;
}

/* A tunable: an unsigned int within [min, max], or 0 if it turns it off. */
struct uint_param {
	unsigned int *val;
	unsigned int min, max;
	bool zero_off;
	enum hvn_tunable id;
};

/* The watched set re-checked at the new period. */
static void resolve_changed(void)
{
	hvn_watch_kick(0);
}

/* What a tunable's change must redo, with hvn_lock held, when live. */
static void (*const changed[HVN_NTUNABLES])(void) = {
	[HVN_TUN_resolve_ms] = resolve_changed,
	[HVN_TUN_sample_us] = hvn_watch_redetect,
	[HVN_TUN_steal_ms] = hvn_steal_kick,
};

static int uint_set(const char *val, const struct kernel_param *kp)
{
	const struct uint_param *u = kp->arg;
	char why[80];
	unsigned int v;

	if (kstrtouint(val, 10, &v) || ((v || !u->zero_off) &&
					 (v < u->min || v > u->max))) {
		snprintf(why, sizeof(why), "want %s%u..%u",
			 u->zero_off ? HVN_TUN_RANGE_1 : "", u->min, u->max);
		reject(kp->name, val, why);
		return -EINVAL;
	}
	mutex_lock(&hvn_lock);
	WRITE_ONCE(*u->val, v);
	if (hvn_live) {
		hvn_detect_cfg_changed();
		if (changed[u->id])
			changed[u->id]();
	}
	mutex_unlock(&hvn_lock);
	return 0;
}

static int uint_get(char *buf, const struct kernel_param *kp)
{
	const struct uint_param *u = kp->arg;

	return sprintf(buf, "%u\n", READ_ONCE(*u->val));
}

static const struct kernel_param_ops uint_ops = {
	.set = uint_set,
	.get = uint_get,
};

static int stats_get(char *buf, const struct kernel_param *kp)
{
	return hvn_detect_format_stats(buf, PAGE_SIZE);
}

static const struct kernel_param_ops stats_ops = {
	.get = stats_get,
};

/* Each tunable of include/hvnoise/tunables.h, a parameter. */
#define HVN_TUNABLE(n, lo, hi, def, off, what)				\
	static const struct uint_param n##_p = {			\
		.val = &hvn_dcfg.n, .min = lo, .max = hi,		\
		.zero_off = off, .id = HVN_TUN_##n,			\
	};								\
	module_param_cb(n, &uint_ops, (void *)&n##_p, 0600);		\
	MODULE_PARM_DESC(n, what " (" HVN_TUN_RANGE_##off __stringify(lo) \
			 ".." __stringify(hi) "; default " __stringify(def) ")");
#include "hvnoise/tunable-list.h"
#undef HVN_TUNABLE

static const struct kernel_param_ops devices_ops = {
	.set = devices_set,
	.get = devices_get,
};

static const struct kernel_param_ops cpus_ops = {
	.set = cpus_set,
	.get = cpus_get,
};

static const struct kernel_param_ops local_cpus_ops = {
	.set = local_cpus_set,
	.get = local_cpus_get,
};

static const struct kernel_param_ops emit_ops = {
	.set = emit_set,
};

static const struct kernel_param_ops watched_ops = {
	.get = watched_get,
};

static const struct kernel_param_ops steal_source_ops = {
	.get = steal_source_get,
};

/* Root only: the configuration says which CPUs serve which device. */
module_param_cb(devices, &devices_ops, NULL, 0600);
MODULE_PARM_DESC(devices,
		 "PCI addresses (DDDD:BB:DD.F) of GPUs/NICs to watch, \"auto\", or \"none\" (default)");
module_param_cb(cpus, &cpus_ops, NULL, 0600);
MODULE_PARM_DESC(cpus, "cpulist of CPUs to watch, or \"none\" (default)");
module_param_cb(local_cpus, &local_cpus_ops, NULL, 0600);
MODULE_PARM_DESC(local_cpus, "also watch each device's NUMA-local CPUs (default 0)");
module_param_cb(emit, &emit_ops, NULL, 0200);
MODULE_PARM_DESC(emit, "write 1 to emit hvnoise:watch for the current set");
module_param_cb(watched, &watched_ops, NULL, 0400);
module_param_cb(steal_source, &steal_source_ops, NULL, 0400);
MODULE_PARM_DESC(steal_source,
		 "where each watched CPU's steal is read: kvm, pvtime or kcpustat, with CPUs (read-only)");
module_param_cb(stats, &stats_ops, NULL, 0400);
MODULE_PARM_DESC(stats, "what the detectors could not do, counted (read-only)");
MODULE_PARM_DESC(watched, "the CPUs watched now (read-only)");
