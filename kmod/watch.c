// SPDX-License-Identifier: GPL-2.0
/*
 * The current watched set, and what keeps it current without a reload:
 * CPU hotplug callbacks, a PCI bus notifier for driver (un)bind and device
 * add/remove, and a slow poll for IRQ affinity changes (irqbalance, manual
 * writes to smp_affinity), which send no notification.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/kernel.h>
#include <linux/pci.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include "hvnoise.h"
#include "hvnoise_trace.h"
#include "lib/cpulist.h"

/* Kept for the hot paths to come; written under hvn_lock. */
static struct hvn_watchset __rcu *hvn_ws;

static void hvn_poll_fn(struct work_struct *w);
static void hvn_emit_fn(struct work_struct *w);
static DECLARE_DELAYED_WORK(hvn_poll_work, hvn_poll_fn);
static DECLARE_DELAYED_WORK(hvn_emit_work, hvn_emit_fn);
static unsigned int hvn_emit_tries;
static int hvn_cpuhp_online = -1, hvn_cpuhp_dead = -1;

static struct hvn_watchset *current_ws(void)
{
	return rcu_dereference_protected(hvn_ws, lockdep_is_held(&hvn_lock));
}

/* Called with hvn_lock held. */
int hvn_watch_update(const struct hvn_config *cfg, bool strict,
		     char *err, size_t errlen)
{
	struct hvn_watchset *old = current_ws(), *ws;

	ws = hvn_resolve(cfg, strict, err, errlen);
	if (IS_ERR(ws))
		return PTR_ERR(ws);
	if (old && hvn_ws_equal(old, ws)) {
		hvn_ws_free(ws);
		return 0;
	}
	ws->gen = old ? old->gen + 1 : 1;
	rcu_assign_pointer(hvn_ws, ws);
	hvn_trace_watch(ws);
	if (old) {
		synchronize_rcu();
		hvn_ws_free(old);
	}
	return 0;
}

/* The watched CPUs as a cpulist; called with hvn_lock held. */
int hvn_watch_format_cpus(char *buf, size_t len)
{
	struct hvn_watchset *ws = current_ws();
	unsigned long *map;
	int ret;

	if (!ws)
		return snprintf(buf, len, "none");
	map = bitmap_zalloc(ws->nbits, GFP_KERNEL);
	if (!map)
		return -ENOMEM;
	hvn_ws_cpumap(ws, map);
	ret = hvn_cpulist_format(buf, len, map, ws->nbits);
	bitmap_free(map);
	return ret;
}

/*
 * Run re-resolution away from the watched CPUs where possible: it must not
 * become the noise it measures.
 */
static int housekeeping_cpu(void)
{
	struct hvn_watchset *ws = current_ws();
	int cpu;

	if (ws)
		for_each_online_cpu(cpu)
			if ((unsigned int)cpu < ws->nbits && !ws->why[cpu])
				return cpu;
	return WORK_CPU_UNBOUND;
}

static void hvn_poll_fn(struct work_struct *w)
{
	char err[HVN_ERRLEN];
	unsigned int ms;
	int ret;

	mutex_lock(&hvn_lock);
	if (!hvn_live)
		goto out;
	ret = hvn_watch_update(hvn_config(), false, err, sizeof(err));
	if (ret)
		pr_warn_ratelimited("re-resolving the watched set: %s\n", err);
	ms = hvn_resolve_interval_ms();
	if (ms)
		mod_delayed_work_on(housekeeping_cpu(), system_wq,
				    &hvn_poll_work, msecs_to_jiffies(ms));
out:
	mutex_unlock(&hvn_lock);
}

/* Re-resolve after @delay jiffies (sooner if already due). */
void hvn_watch_kick(unsigned long delay)
{
	mod_delayed_work(system_wq, &hvn_poll_work, delay);
}

/* Re-emit the current set; called with hvn_lock held. */
void hvn_watch_emit(void)
{
	struct hvn_watchset *ws = current_ws();

	if (ws)
		hvn_trace_watch(ws);
}

/*
 * The event's reg callback runs just before the probe is attached, and
 * trace-cmd turns tracing_on only after enabling its events: wait (up to
 * 10 s) for both, so the re-emitted records are not dropped.
 */
#define EMIT_POLL_MS	100
#define EMIT_TRIES	100

static void hvn_emit_fn(struct work_struct *w)
{
	mutex_lock(&hvn_lock);
	if (!hvn_live)
		goto out;
	if ((!trace_watch_enabled() || !tracing_is_on()) &&
	    ++hvn_emit_tries < EMIT_TRIES) {
		queue_delayed_work_on(housekeeping_cpu(), system_wq,
				      &hvn_emit_work,
				      msecs_to_jiffies(EMIT_POLL_MS));
		goto out;
	}
	hvn_watch_emit();
out:
	mutex_unlock(&hvn_lock);
}

void hvn_watch_request_emit(void)
{
	mutex_lock(&hvn_lock);
	if (hvn_live) {
		hvn_emit_tries = 0;
		mod_delayed_work_on(housekeeping_cpu(), system_wq,
				    &hvn_emit_work, 0);
	}
	mutex_unlock(&hvn_lock);
}

static int hvn_cpu_online(unsigned int cpu)
{
	/* IRQs are already re-spread here: CPUHP_AP_IRQ_AFFINITY_ONLINE ran. */
	hvn_watch_kick(0);
	return 0;
}

static int hvn_cpu_dead(unsigned int cpu)
{
	/* The CPU is gone and its IRQs have moved: resolve now. */
	hvn_watch_kick(0);
	return 0;
}

static int hvn_pci_notify(struct notifier_block *nb, unsigned long action,
			  void *data)
{
	switch (action) {
	case BUS_NOTIFY_ADD_DEVICE:
	case BUS_NOTIFY_DEL_DEVICE:
	case BUS_NOTIFY_BOUND_DRIVER:
	case BUS_NOTIFY_UNBOUND_DRIVER:
		/* Let the driver finish setting up or tearing down IRQs. */
		hvn_watch_kick(msecs_to_jiffies(50));
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block hvn_pci_nb = {
	.notifier_call = hvn_pci_notify,
};

int hvn_watch_start(void)
{
	int ret;

	ret = bus_register_notifier(&pci_bus_type, &hvn_pci_nb);
	if (ret)
		return ret;
	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "hvnoise:online",
					hvn_cpu_online, NULL);
	if (ret < 0)
		goto fail_notifier;
	hvn_cpuhp_online = ret;
	ret = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "hvnoise:dead",
					NULL, hvn_cpu_dead);
	if (ret < 0)
		goto fail_online;
	hvn_cpuhp_dead = ret;
	hvn_watch_kick(msecs_to_jiffies(hvn_resolve_interval_ms() ?: 1000));
	return 0;

fail_online:
	cpuhp_remove_state_nocalls(hvn_cpuhp_online);
fail_notifier:
	bus_unregister_notifier(&pci_bus_type, &hvn_pci_nb);
	return ret;
}

/* After hvn_live went false: nothing queues new work past this point. */
void hvn_watch_stop(void)
{
	struct hvn_watchset *ws;

	if (hvn_cpuhp_dead >= 0)
		cpuhp_remove_state_nocalls(hvn_cpuhp_dead);
	if (hvn_cpuhp_online >= 0)
		cpuhp_remove_state_nocalls(hvn_cpuhp_online);
	bus_unregister_notifier(&pci_bus_type, &hvn_pci_nb);
	cancel_delayed_work_sync(&hvn_poll_work);
	cancel_delayed_work_sync(&hvn_emit_work);

	mutex_lock(&hvn_lock);
	ws = current_ws();
	RCU_INIT_POINTER(hvn_ws, NULL);
	mutex_unlock(&hvn_lock);
	synchronize_rcu();
	hvn_ws_free(ws);
}
