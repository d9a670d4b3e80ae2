// SPDX-License-Identifier: GPL-2.0
/*
 * Resolve the configuration into a watched set: look up each device, list
 * its MSI-X, MSI or legacy IRQs and the CPUs their effective affinity
 * points at, and add the listed and NUMA-local CPUs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irqdesc.h>
#include <linux/msi.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include "compat.h"
#include "hvnoise.h"

struct hvn_build {
	struct hvn_watchset *ws;
	unsigned int irq_cap;
	cpumask_var_t eff;	/* scratch: one IRQ's effective affinity */
};

static int add_irq_rec(struct hvn_build *b, u32 dev, int irq, int cpu,
		       u8 flags, const char *name)
{
	struct hvn_watchset *ws = b->ws;
	struct hvn_wirq *r;

	if (ws->nirq == b->irq_cap) {
		unsigned int cap = b->irq_cap ? 2 * b->irq_cap : 16;
		struct hvn_wirq *n;

		n = krealloc(ws->irq, cap * sizeof(*n), GFP_KERNEL);
		if (!n)
			return -ENOMEM;
		ws->irq = n;
		b->irq_cap = cap;
	}
	r = &ws->irq[ws->nirq++];
	r->dev = dev;
	r->irq = irq;
	r->cpu = cpu;
	r->flags = flags;
	strscpy(r->name, name, sizeof(r->name));
	return 0;
}

/*
 * Record @irq of device @dev with each CPU of its effective affinity (one
 * record with cpu -1 when it has none yet).  A legacy INTx line counts only
 * with a handler (@need_action): its number is set even with no driver.
 * A vector with no handler (freed by an ifdown) or not started (a managed
 * IRQ whose CPUs all went offline) is on no CPU either: its effective
 * affinity then names a CPU it never fires on (the first online one), which
 * would be watched for nothing and read as a move there and back.
 * Returns 1 if recorded, 0 if not, or -ENOMEM.
 */
static int add_irq(struct hvn_build *b, u32 dev, int irq, bool need_action)
{
	char name[HVN_IRQ_NAME_LEN] = "";
	struct irq_data *d;
	struct irq_desc *desc;
	unsigned long irqflags;
	bool has_action, live;
	u8 flags = HVN_IRQ_CHECKED;
	int cpu, ret;

	rcu_read_lock();	/* irq descs are freed after a grace period */
	d = irq_get_irq_data(irq);
	if (!d) {
		rcu_read_unlock();
		return 0;
	}
	desc = irq_data_to_desc(d);
	/* desc->lock keeps the action, and the name it points to, alive. */
	raw_spin_lock_irqsave(&desc->lock, irqflags);
	cpumask_copy(b->eff, irq_data_get_effective_affinity_mask(d));
	has_action = desc->action;
	live = has_action && irqd_is_started(d);
	if (desc->action && desc->action->name)
		strscpy(name, desc->action->name, sizeof(name));
	/*
	 * What a write of /proc/irq/N/smp_affinity meets (it fails with
	 * EIO for both), for hvnoise advise to know before it plans one.
	 */
	if (irqd_affinity_is_managed(d))
		flags |= HVN_IRQ_MANAGED;
	else if (!irqd_can_balance(d) || !d->chip || !d->chip->irq_set_affinity)
		flags |= HVN_IRQ_FIXED;
	raw_spin_unlock_irqrestore(&desc->lock, irqflags);
	rcu_read_unlock();

	if (need_action && !has_action)
		return 0;
	cpumask_and(b->eff, b->eff, cpu_online_mask);
	if (!live || cpumask_empty(b->eff))
		return add_irq_rec(b, dev, irq, -1, flags, name) ?: 1;
	for_each_cpu(cpu, b->eff) {
		ret = add_irq_rec(b, dev, irq, cpu, flags, name);
		if (ret)
			return ret;
	}
	return 1;
}

#if HVN_HAVE_MSI_ENTRY_LIST
/* The MSI-X or MSI vectors: each descriptor covers nvec_used consecutive IRQs. */
static int add_msi_irqs(struct hvn_build *b, struct pci_dev *pdev, u32 dev)
{
	struct msi_desc *md;
	int i, n = 0, ret;

	for_each_pci_msi_entry(md, pdev) {
		for (i = 0; i < md->nvec_used; i++) {
			ret = add_irq(b, dev, md->irq + i, false);
			if (ret < 0)
				return ret;
			n += ret;
		}
	}
	return n;
}
#else
static int add_msi_irqs(struct hvn_build *b, struct pci_dev *pdev, u32 dev)
{
	int i, n = 0, nvec, irq, ret;

	if (pdev->msix_enabled) {
		nvec = pci_msix_vec_count(pdev);
		for (i = 0; i < nvec; i++) {
			irq = pci_irq_vector(pdev, i);
			if (irq <= 0)
				continue;	/* unallocated entry */
			ret = add_irq(b, dev, irq, false);
			if (ret < 0)
				return ret;
			n += ret;
		}
		return n;
	}
	/* Multi-MSI vectors are consecutive after the first. */
	nvec = pci_msi_vec_count(pdev);
	for (i = 0; i < nvec; i++) {
		irq = pci_irq_vector(pdev, i);
		if (irq <= 0)
			break;
		ret = add_irq(b, dev, irq, false);
		if (ret < 0)
			return ret;
		n += ret;
	}
	return n;
}
#endif

/* The IRQs a bound driver set up for @pdev; returns how many, or -ENOMEM. */
static int add_device_irqs(struct hvn_build *b, struct pci_dev *pdev, u32 dev)
{
	int ret = 0;

	device_lock(&pdev->dev);	/* no driver (un)bind while we look */
	if (pdev->msix_enabled || pdev->msi_enabled)
		ret = add_msi_irqs(b, pdev, dev);
	else if (pdev->irq > 0)
		ret = add_irq(b, dev, pdev->irq, true);
	device_unlock(&pdev->dev);
	return ret;
}

static const struct cpumask *node_cpus(int node)
{
	return node == NUMA_NO_NODE ? cpu_online_mask : cpumask_of_node(node);
}

/* Fill in device @slot; @pdev may be NULL for an absent listed device. */
static int add_device(struct hvn_build *b, const struct hvn_config *cfg,
		      struct pci_dev *pdev, u32 addr)
{
	struct hvn_watchset *ws = b->ws;
	struct hvn_wdev *wd = &ws->dev[ws->ndev++];
	int n;

	wd->addr = addr;
	wd->node = -1;
	if (!pdev)
		return 0;
	wd->present = true;
	wd->node = dev_to_node(&pdev->dev);
	n = add_device_irqs(b, pdev, addr);
	if (n < 0)
		return n;
	wd->nirqs = n;
	if (cfg->local_cpus)
		hvn_ws_mark(ws, cpumask_bits(node_cpus(wd->node)),
			    cpumask_bits(cpu_online_mask), HVN_WHY_NUMA);
	return 0;
}

static u32 pci_dev_addr(struct pci_dev *pdev)
{
	return HVN_PCI_PACK(pci_domain_nr(pdev->bus), pdev->bus->number,
			    pdev->devfn);
}

static bool listed(const struct hvn_devlist *l, u32 addr)
{
	unsigned int i;

	for (i = 0; i < l->n; i++)
		if (l->addr[i] == addr)
			return true;
	return false;
}

static int add_auto_devices(struct hvn_build *b, const struct hvn_config *cfg,
			    unsigned int *found)
{
	struct pci_dev *pdev = NULL;
	int ret;

	*found = 0;
	for_each_pci_dev(pdev) {
		u32 addr = pci_dev_addr(pdev);

		if (!hvn_pci_auto_match(pdev->vendor, pdev->class) ||
		    listed(&cfg->devs, addr))
			continue;
		if (pci_domain_nr(pdev->bus) > 0xffff) {
			/* e.g. behind Intel VMD: not expressible in "dev" */
			pr_warn_once("devices=auto: skipping %s, PCI domain above 0xffff\n",
				     pci_name(pdev));
			continue;
		}
		if (*found == HVN_MAX_AUTO) {
			pr_warn_once("devices=auto: watching only the first %d matching devices\n",
				     HVN_MAX_AUTO);
			pci_dev_put(pdev);
			break;
		}
		ret = add_device(b, cfg, pdev, addr);
		if (ret) {
			pci_dev_put(pdev);
			return ret;
		}
		(*found)++;
	}
	return 0;
}

void hvn_ws_free(struct hvn_watchset *ws)
{
	if (!ws)
		return;
	kfree(ws->irq);
	kfree(ws->dev);
	kfree(ws->why);
	kfree(ws);
}

static void fmt_addr(char *buf, size_t len, u32 a)
{
	snprintf(buf, len, "%04x:%02x:%02x.%x", HVN_PCI_DOMAIN(a),
		 HVN_PCI_BUS(a), HVN_PCI_SLOT(a), HVN_PCI_FUNC(a));
}

/*
 * Build the watched set for @cfg.  With @strict (a devices= write or the
 * load), every listed device must exist and have IRQs, and "auto" must find
 * something; a violation returns -EINVAL with the reason in @err.
 */
struct hvn_watchset *hvn_resolve(const struct hvn_config *cfg, bool strict,
				 char *err, size_t errlen)
{
	struct hvn_build b = { };
	struct hvn_watchset *ws;
	unsigned int i, nauto = 0;
	char addr[16];
	int ret = -ENOMEM;

	if (!zalloc_cpumask_var(&b.eff, GFP_KERNEL))
		goto fail_nomem;
	ws = kzalloc(sizeof(*ws), GFP_KERNEL);
	if (!ws)
		goto fail_nomem;
	b.ws = ws;
	ws->nbits = nr_cpu_ids;
	ws->why = kzalloc(nr_cpu_ids, GFP_KERNEL);
	ws->dev = kcalloc(HVN_MAX_DEVICES + HVN_MAX_AUTO, sizeof(*ws->dev),
			  GFP_KERNEL);
	if (!ws->why || !ws->dev)
		goto fail;

	hvn_ws_mark(ws, cfg->cpus, cpumask_bits(cpu_online_mask),
		    HVN_WHY_LISTED);

	for (i = 0; i < cfg->devs.n; i++) {
		u32 a = cfg->devs.addr[i];
		struct pci_dev *pdev;

		pdev = pci_get_domain_bus_and_slot(HVN_PCI_DOMAIN(a),
						   HVN_PCI_BUS(a), a & 0xff);
		ret = add_device(&b, cfg, pdev, a);
		pci_dev_put(pdev);
		if (ret)
			goto fail;
		if (!strict)
			continue;
		fmt_addr(addr, sizeof(addr), a);
		if (!pdev) {
			snprintf(err, errlen, "devices: %s: no such PCI device",
				 addr);
			ret = -EINVAL;
			goto fail;
		}
		if (!ws->dev[ws->ndev - 1].nirqs) {
			snprintf(err, errlen,
				 "devices: %s: device has no IRQs (no MSI-X, MSI or legacy IRQ with a handler; is its driver bound?)",
				 addr);
			ret = -EINVAL;
			goto fail;
		}
	}
	if (cfg->devs.autodetect) {
		ret = add_auto_devices(&b, cfg, &nauto);
		if (ret)
			goto fail;
		if (strict && !nauto) {
			snprintf(err, errlen,
				 "devices=auto: no NVIDIA GPU or network/InfiniBand controller found");
			ret = -EINVAL;
			goto fail;
		}
	}
	hvn_ws_finish(ws, cpumask_bits(cpu_online_mask));
	free_cpumask_var(b.eff);
	return ws;

fail:
	hvn_ws_free(ws);
fail_nomem:
	free_cpumask_var(b.eff);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory resolving the watched set");
	return ERR_PTR(ret);
}
