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
#include <linux/timekeeping.h>
#include <linux/workqueue.h>
#include "compat.h"
#include "detect.h"
#include "hvnoise.h"
#include "hvnoise_trace.h"
#include "lib/cpulist.h"

/* Kept for the hot paths to come; written under hvn_lock. */
static struct hvn_watchset __rcu *hvn_ws;

static void hvn_poll_fn(struct work_struct *w);
static void hvn_emit_fn(struct work_struct *w);
static DECLARE_DELAYED_WORK(hvn_poll_work, hvn_poll_fn);
static DECLARE_DELAYED_WORK(hvn_emit_work, hvn_emit_fn);
static int hvn_cpuhp_online = -1, hvn_cpuhp_dead = -1;

/*
 * Our own workqueue: re-resolution sleeps in device_lock(), and a driver
 * flushing system_wq under its device lock must not wait on us.
 */
static struct workqueue_struct *hvn_wq;

/*
 * The event's reg callback runs under event_mutex and tracepoints_mutex,
 * which a module load (trace_module_notify) also takes; it must not take
 * hvn_lock, held across device_lock().  It queues the re-emission under
 * this spinlock instead.
 */
static DEFINE_SPINLOCK(hvn_emit_lock);
static bool hvn_emit_allowed;
static unsigned long hvn_emit_deadline;

static struct hvn_watchset *current_ws(void)
{
	return rcu_dereference_protected(hvn_ws, lockdep_is_held(&hvn_lock));
}

/* Called with hvn_lock held. */
int hvn_watch_update(const struct hvn_config *cfg, bool strict,
		     char *err, size_t errlen)
{
	struct hvn_watchset *old = current_ws(), *ws;
	u64 as_of = hvn_detect_moves();

	ws = hvn_resolve(cfg, strict, err, errlen);
	if (IS_ERR(ws))
		return PTR_ERR(ws);
	ws->as_of = as_of;
	if (old && hvn_ws_equal(old, ws)) {
		hvn_ws_free(ws);
		return 0;
	}
	/*
	 * A load's first generation: the milliseconds since boot, so that a
	 * recording across a reload sees the new load's sets as the newer
	 * ones (a change takes more than a millisecond; readers compare
	 * generations modulo 2^32).
	 */
	ws->gen = old ? old->gen + 1 :
		  (u32)div_u64(ktime_get_boottime_ns(), NSEC_PER_MSEC) + 1;
	rcu_assign_pointer(hvn_ws, ws);
	hvn_trace_watch_change(old, ws);
	hvn_detect_update(ws);
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

/* Queue @dw on a housekeeping CPU; called with hvn_lock held. */
void hvn_queue_housekeeping(struct delayed_work *dw, unsigned long delay)
{
	queue_delayed_work_on(housekeeping_cpu(), hvn_wq, dw, delay);
}

/* Re-apply the current set to the detectors (a setting changed). */
void hvn_watch_redetect(void)
{
	struct hvn_watchset *ws = current_ws();

	if (ws)
		hvn_detect_update(ws);
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
	/* queue_, not mod_: keep a kick that arrived while we resolved. */
	if (ms)
		queue_delayed_work_on(housekeeping_cpu(), hvn_wq,
				      &hvn_poll_work, msecs_to_jiffies(ms));
out:
	mutex_unlock(&hvn_lock);
}

/* Re-resolve in @delay jiffies; the periodic poll re-arms afterwards. */
void hvn_watch_kick(unsigned long delay)
{
	mod_delayed_work(hvn_wq, &hvn_poll_work, delay);
}

/*
 * Re-emit the current set.  Under RCU, not hvn_lock: a re-resolution holds
 * that across device_lock(), which a driver probing for seconds keeps, and
 * a recorder starting then must still learn the set.  An update racing
 * with this emits its newer generation itself; readers keep the newest.
 */
void hvn_watch_emit(void)
{
	struct hvn_watchset *ws;

	rcu_read_lock();
	ws = rcu_dereference(hvn_ws);
	if (ws)
		hvn_trace_watch(ws);
	rcu_read_unlock();
}

/*
 * The event's reg callback runs just before the probe is attached, and
 * trace-cmd turns tracing_on only after enabling its events: wait (up to
 * 10 s) for both, so the re-emitted records are not dropped.
 */
#define EMIT_POLL_MS	100
#define EMIT_WAIT_MS	10000

static void hvn_emit_fn(struct work_struct *w)
{
	bool ready = trace_watch_enabled() && tracing_is_on();
	unsigned long flags;

	if (!ready) {
		spin_lock_irqsave(&hvn_emit_lock, flags);
		if (hvn_emit_allowed &&
		    time_before(jiffies, READ_ONCE(hvn_emit_deadline)))
			queue_delayed_work(hvn_wq, &hvn_emit_work,
					   msecs_to_jiffies(EMIT_POLL_MS));
		spin_unlock_irqrestore(&hvn_emit_lock, flags);
		if (time_before(jiffies, READ_ONCE(hvn_emit_deadline)))
			return;
	}
	/* A set is published before emission is allowed, freed after. */
	hvn_watch_emit();
}

/* From the event's reg callback: takes no sleeping lock. */
void hvn_watch_request_emit(void)
{
	unsigned long flags;

	spin_lock_irqsave(&hvn_emit_lock, flags);
	if (hvn_emit_allowed) {
		WRITE_ONCE(hvn_emit_deadline,
			   jiffies + msecs_to_jiffies(EMIT_WAIT_MS));
		mod_delayed_work(hvn_wq, &hvn_emit_work, 0);
	}
	spin_unlock_irqrestore(&hvn_emit_lock, flags);
}

static int hvn_cpu_online(unsigned int cpu)
{
	/* IRQs are already re-spread here: CPUHP_AP_IRQ_AFFINITY_ONLINE ran. */
	hvn_watch_kick(0);
	return 0;
}

static int hvn_cpu_dead(unsigned int cpu)
{
	/* End its storms; the CPU is gone and its IRQs have moved. */
	hvn_detect_cpu_dead(cpu);
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

static void allow_emit(bool on)
{
	unsigned long flags;

	spin_lock_irqsave(&hvn_emit_lock, flags);
	hvn_emit_allowed = on;
	spin_unlock_irqrestore(&hvn_emit_lock, flags);
}

/* Allocate what the watched set needs; before the first hvn_watch_update(). */
int hvn_watch_init(void)
{
	hvn_wq = alloc_workqueue("hvnoise", HVN_WQ_PERCPU, 0);
	return hvn_wq ? 0 : -ENOMEM;
}

int hvn_watch_start(void)
{
	int ret;

	allow_emit(true);
	ret = bus_register_notifier(&pci_bus_type, &hvn_pci_nb);
	if (ret)
		goto fail;
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
	hvn_cpuhp_online = -1;
fail_notifier:
	bus_unregister_notifier(&pci_bus_type, &hvn_pci_nb);
fail:
	allow_emit(false);
	return ret;
}

/* Undo hvn_watch_start(). */
void hvn_watch_stop(void)
{
	allow_emit(false);
	if (hvn_cpuhp_dead >= 0)
		cpuhp_remove_state_nocalls(hvn_cpuhp_dead);
	hvn_cpuhp_dead = -1;
	if (hvn_cpuhp_online >= 0)
		cpuhp_remove_state_nocalls(hvn_cpuhp_online);
	hvn_cpuhp_online = -1;
	bus_unregister_notifier(&pci_bus_type, &hvn_pci_nb);
}

/*
 * After hvn_live went false and hvn_watch_stop(): nothing queues work any
 * more.  Frees the watched set and the workqueue.
 */
void hvn_watch_exit(void)
{
	struct hvn_watchset *ws;

	cancel_delayed_work_sync(&hvn_poll_work);
	cancel_delayed_work_sync(&hvn_emit_work);
	if (hvn_wq)
		destroy_workqueue(hvn_wq);
	hvn_wq = NULL;

	mutex_lock(&hvn_lock);
	ws = current_ws();
	RCU_INIT_POINTER(hvn_ws, NULL);
	mutex_unlock(&hvn_lock);
	synchronize_rcu();
	hvn_ws_free(ws);
}
