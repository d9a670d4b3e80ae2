/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Definitions shared by hvnoise.ko and the hvnoise tools: what the
 * hvnoise:watch trace event says about the watched set.
 *
 * Plain #defines, not enums: they appear as numbers in the event's format
 * file, which is what libtraceevent needs to decode __print_symbolic().
 */
#ifndef HVNOISE_WATCH_H
#define HVNOISE_WATCH_H

/* hvnoise:watch "kind": what one record describes. */
#define HVN_WATCH_CPU		0	/* a watched CPU and why */
#define HVN_WATCH_DEVICE	1	/* a configured PCI device */
#define HVN_WATCH_IRQ		2	/* one IRQ of a device and a CPU it goes to */

/* hvnoise:watch "why": reasons a CPU is watched (bit flags). */
#define HVN_WHY_LISTED		0x1	/* in the cpus= parameter */
#define HVN_WHY_IRQ		0x2	/* a watched device's IRQ is routed to it */
#define HVN_WHY_NUMA		0x4	/* NUMA-local to a device (local_cpus=1) */
#define HVN_WHY_ALL		0x7

/*
 * IRQ records' "why": whether userspace may set the IRQ's affinity, as the
 * module saw it (the BPF source cannot tell: none of these).  CHECKED with
 * neither of the others: /proc/irq/N/smp_affinity takes a write.
 */
#define HVN_IRQ_CHECKED		0x8	/* the module looked */
#define HVN_IRQ_MANAGED		0x10	/* the kernel places it (a managed queue) */
/*
 * Not managed, but not settable either (per-CPU, not balanced, no chip
 * support).
 */
#define HVN_IRQ_FIXED		0x20

/*
 * Any record's "why": the record is one of a delta, the changes that turn
 * generation gen - 1 into gen (idx of count numbers the delta's records).
 * A CPU record of a delta states its new reasons; a device record its new
 * state; an IRQ record adds or changes that (device, IRQ, CPU) route.
 * With GONE, the CPU is no longer watched, or the route is no more.
 */
#define HVN_WATCH_DELTA		0x40
#define HVN_WATCH_GONE		0x80

/* Fixed size of the IRQ name field (the irqaction name, truncated). */
#define HVN_IRQ_NAME_LEN	16

/* Most PCI devices the devices= parameter takes. */
#define HVN_MAX_DEVICES		32
/* Most devices devices=auto adds beyond the listed ones (both sources). */
#define HVN_MAX_AUTO		64

/*
 * A PCI address packed in 32 bits as it appears in the "dev" field:
 * domain (16 bits), bus (8), device (5), function (3).
 */
#define HVN_PCI_PACK(dom, bus, devfn) \
	(((unsigned int)(dom) << 16) | ((unsigned int)(bus) << 8) | (devfn))
#define HVN_PCI_DOMAIN(a)	(((a) >> 16) & 0xffff)
#define HVN_PCI_BUS(a)		(((a) >> 8) & 0xff)
#define HVN_PCI_SLOT(a)		(((a) >> 3) & 0x1f)
#define HVN_PCI_FUNC(a)		((a) & 0x7)

#endif /* HVNOISE_WATCH_H */
