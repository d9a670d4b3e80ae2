// SPDX-License-Identifier: GPL-2.0
/*
 * The watched set from sysfs and /proc/irq (resolve.h), with the library
 * code the module's kmod/resolve.c uses on the kernel's own structures
 * (kmod/lib/watchset.c, devlist.c).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "hvn.h"
#include "cpulist.h"
#include "devlist.h"
#include "watchset.h"
#include "bpf_config.h"
#include "resolve.h"

static long read_long(const char *path, long dflt)
{
	char *s = hvn_read_file(path, NULL);
	long v = dflt;

	if (s)
		v = strtol(s, NULL, 0);
	free(s);
	return v;
}

/* The action name of @irq: the directory /proc/irq/N/NAME. */
static void irq_name(int irq, char *name)
{
	char dir[64];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/irq/%d", irq);
	name[0] = 0;
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (de->d_type == DT_DIR && de->d_name[0] != '.') {
			/* Truncated as the module's strscpy() does. */
			size_t n = strnlen(de->d_name, HVN_IRQ_NAME_LEN - 1);

			memcpy(name, de->d_name, n);
			name[n] = 0;
			break;
		}
	}
	if (d)
		closedir(d);
}

static int push_irq(struct hvn_watchset *ws, unsigned int *cap, u32 dev,
		    int irq, s32 cpu, const char *name)
{
	if (ws->nirq == *cap) {
		struct hvn_wirq *n = realloc(ws->irq, 2 * *cap * sizeof(*n));

		if (!n)
			return -1;
		ws->irq = n;
		*cap *= 2;
	}
	ws->irq[ws->nirq] = (struct hvn_wirq){ .dev = dev, .irq = irq, .cpu = cpu };
	memcpy(ws->irq[ws->nirq++].name, name, HVN_IRQ_NAME_LEN);
	return 0;
}

#define NWORDS	HVN_BITS_TO_LONGS(HVN_BPF_MAX_CPUS)

static int add_irq(struct hvn_watchset *ws, u32 dev, int irq,
		   unsigned int *cap, bool need_action, const unsigned long *online)
{
	unsigned long eff[NWORDS] = { 0 }, aff[NWORDS] = { 0 };
	char path[96], name[HVN_IRQ_NAME_LEN], *s;
	bool any = false, both = false;

	irq_name(irq, name);
	if (need_action && !name[0])
		return 0;
	/*
	 * No handler (a vector an ifdown freed): on no CPU, as the module
	 * has it; its effective affinity names a CPU it never fires on.
	 */
	if (!name[0])
		return push_irq(ws, cap, dev, irq, -1, name) ? -1 : 1;
	snprintf(path, sizeof(path), "/proc/irq/%d/effective_affinity_list",
		 irq);
	s = hvn_read_file(path, NULL);
	both = s;
	if (s) {
		s[strcspn(s, "\n")] = 0;
		if (hvn_cpulist_parse(s, eff, HVN_BPF_MAX_CPUS, NULL, 0))
			memset(eff, 0, sizeof(eff));
	}
	free(s);
	snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq);
	s = hvn_read_file(path, NULL);
	if (s) {
		s[strcspn(s, "\n")] = 0;
		if (hvn_cpulist_parse(s, aff, HVN_BPF_MAX_CPUS, NULL, 0))
			s[0] = 0;
	}
	if (!both && s && s[0])
		memcpy(eff, aff, sizeof(eff));
	/*
	 * Not started (a managed IRQ whose CPUs all went offline, shut
	 * down): on x86 its effective CPU, the first online one, is outside
	 * its affinity, which the kernel never makes of a live IRQ.  On no
	 * CPU, as the module has it (irqd_is_started()).
	 */
	if (both && s && s[0]) {
		bool inside = false;

		for (unsigned int w = 0; w < NWORDS; w++)
			inside |= !!(eff[w] & aff[w]);
		if (!inside)
			memset(eff, 0, sizeof(eff));
	}
	free(s);
	/* arm64 keeps a shut-down managed IRQ's offline CPU effective. */
	for (unsigned int w = 0; w < NWORDS; w++)
		eff[w] &= online[w];
	/* The set bits only: walking every possible CPU for every IRQ, each
	 * poll, was most of the tool's own instructions with 1,014 IRQs
	 * (bench/instructions.sh scale). */
	for (unsigned int w = 0; w < NWORDS; w++)
		for (unsigned long bits = eff[w]; bits; bits &= bits - 1) {
			s32 cpu = w * 8 * sizeof(long) + __builtin_ctzl(bits);

			if (push_irq(ws, cap, dev, irq, cpu, name))
				return -1;
			any = true;
		}
	/* In no CPU's affinity: one record, on CPU -1. */
	if (!any && push_irq(ws, cap, dev, irq, -1, name))
		return -1;
	return 1;
}

static int add_device(struct hvn_watchset *ws, u32 a, unsigned int *cap,
		      const unsigned long *online)
{
	struct hvn_wdev *d = &ws->dev[ws->ndev++];
	char dir[128], path[192];
	struct dirent *de;
	DIR *m;
	int n = 0, r;

	snprintf(dir, sizeof(dir), "/sys/bus/pci/devices/%04x:%02x:%02x.%x",
		 HVN_PCI_DOMAIN(a), HVN_PCI_BUS(a), HVN_PCI_SLOT(a),
		 HVN_PCI_FUNC(a));
	*d = (struct hvn_wdev){ .addr = a, .node = -1 };
	if (access(dir, F_OK))
		return 0;
	d->present = true;
	snprintf(path, sizeof(path), "%s/numa_node", dir);
	d->node = read_long(path, -1);
	snprintf(path, sizeof(path), "%s/msi_irqs", dir);
	m = opendir(path);
	while (m && (de = readdir(m))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		r = add_irq(ws, a, atoi(de->d_name), cap, false, online);
		if (r < 0) {
			closedir(m);
			return -1;
		}
		n += r;
	}
	if (m)
		closedir(m);
	if (!n) {
		/* A legacy INTx line counts only with a handler on it. */
		snprintf(path, sizeof(path), "%s/irq", dir);
		r = read_long(path, 0);
		if (r > 0)
			r = add_irq(ws, a, r, cap, true, online);
		if (r < 0)
			return -1;
		if (r > 0)
			n += r;
	}
	d->nirqs = n;
	return 0;
}

static bool listed_dev(const struct hvn_devlist *l, u32 a)
{
	for (unsigned int i = 0; i < l->n; i++)
		if (l->addr[i] == a)
			return true;
	return false;
}

struct hvn_watchset *hvn_sysfs_resolve(const struct hvn_devlist *devs,
				       const unsigned long *listed,
				       unsigned int ncpus, const char *online_now)
{
	unsigned long online[HVN_BITS_TO_LONGS(HVN_BPF_MAX_CPUS)] = { 0 };
	struct hvn_watchset *ws = calloc(1, sizeof(*ws));
	unsigned int cap = 64, nauto = 0;
	char *s = online_now ? strdup(online_now) :
		  hvn_read_file("/sys/devices/system/cpu/online", NULL);
	bool known = false;

	if (s) {
		s[strcspn(s, "\n")] = 0;
		known = !hvn_cpulist_parse(s, online, HVN_BPF_MAX_CPUS, NULL, 0);
		free(s);
	}
	/* Unknown: every CPU taken as online (add_irq() masks with it). */
	if (!known)
		memset(online, 0xff, sizeof(online));
	if (!ws)
		return NULL;
	/* bpf_ktime_get_ns() is this clock: moves the probes stamp later
	 * than this are newer than what is read below. */
	ws->as_of = hvn_now(CLOCK_MONOTONIC);
	ws->nbits = ncpus;
	ws->why = calloc(ncpus, 1);
	ws->dev = calloc(HVN_MAX_DEVICES + HVN_MAX_AUTO, sizeof(*ws->dev));
	ws->irq = calloc(cap, sizeof(*ws->irq));
	if (!ws->why || !ws->dev || !ws->irq)
		goto fail;
	hvn_ws_mark(ws, listed, online, HVN_WHY_LISTED);
	for (unsigned int i = 0; i < devs->n; i++)
		if (add_device(ws, devs->addr[i], &cap, online))
			goto fail;
	if (devs->autodetect) {
		/* In address order, as the module walks the PCI devices: the
		 * same first HVN_MAX_AUTO where more match. */
		struct dirent **de = NULL;
		int n = scandir("/sys/bus/pci/devices", &de, NULL, alphasort);
		bool failed = false;

		for (int i = 0; i < n && !failed; i++) {
			unsigned int dom, bus, slot, fn;
			char path[300];
			long vendor, class;
			u32 a;

			if (sscanf(de[i]->d_name, "%x:%x:%x.%x", &dom, &bus,
				   &slot, &fn) != 4 || dom > 0xffff)
				continue;
			a = HVN_PCI_PACK(dom, bus, slot << 3 | fn);
			snprintf(path, sizeof(path),
				 "/sys/bus/pci/devices/%s/vendor", de[i]->d_name);
			vendor = read_long(path, 0);
			snprintf(path, sizeof(path),
				 "/sys/bus/pci/devices/%s/class", de[i]->d_name);
			class = read_long(path, 0);
			if (!hvn_pci_auto_match(vendor, class) ||
			    listed_dev(devs, a))
				continue;
			if (nauto == HVN_MAX_AUTO) {
				/* As the module: said once, not each poll. */
				static bool said;

				if (!said)
					hvn_warn("devices=auto: watching only the first %d matching devices",
						 HVN_MAX_AUTO);
				said = true;
				break;
			}
			failed = add_device(ws, a, &cap, online) != 0;
			nauto++;
		}
		for (int i = 0; i < n; i++)
			free(de[i]);
		free(de);
		if (failed)
			goto fail;
	}
	hvn_ws_finish(ws, online);
	return ws;
fail:
	hvn_sysfs_ws_free(ws);
	return NULL;
}

void hvn_sysfs_ws_free(struct hvn_watchset *ws)
{
	if (!ws)
		return;
	free(ws->why);
	free(ws->dev);
	free(ws->irq);
	free(ws);
}

bool hvn_sysfs_cpu_online(unsigned int cpu)
{
	char p[96];

	/*
	 * A possible CPU that is not present (a VM's hotplug slot) has no
	 * directory; one that cannot go offline (often CPU 0) has no
	 * "online" file.
	 */
	snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%u", cpu);
	if (access(p, F_OK))
		return false;
	snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%u/online", cpu);
	return read_long(p, 1) == 1;
}
