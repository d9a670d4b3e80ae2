/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Constants of the detector events (hvnoise:steal, lost, irq_storm_begin,
 * irq_storm, irq_migrate), shared by hvnoise.ko and the tools.  #defines so
 * that they reach the format files as numbers.
 */
#ifndef HVNOISE_EVENTS_H
#define HVNOISE_EVENTS_H

/* hvnoise:steal "source": where the steal figure came from. */
#define HVN_STEAL_KVM		0	/* the KVM steal-time area, exact */
#define HVN_STEAL_KCPUSTAT	1	/* CPUTIME_STEAL, tick-granular */
#define HVN_STEAL_PVTIME	2	/* CPUTIME_STEAL fed by arm64 pvtime, tick-granular */

/* hvnoise:irq_storm* "source": what stormed. */
#define HVN_SRC_IRQ		0	/* one device IRQ, see "irq" */
#define HVN_SRC_ALL		1	/* all interrupts of the CPU together */
#define HVN_SRC_TIMER		2	/* x86 local APIC timer vector */
#define HVN_SRC_RESCHED		3	/* x86 reschedule IPI */
#define HVN_SRC_CALLFUNC	4	/* x86 call-function IPI */
#define HVN_SRC_CALLFUNC1	5	/* x86 call-function-single IPI */
#define HVN_NR_SRC		6

/* hvnoise:irq_migrate "how": what saw the move. */
#define HVN_MIG_VECTOR		0	/* x86 irq_vectors:vector_update */
#define HVN_MIG_HANDLED		1	/* first interrupt handled on a new CPU */
#define HVN_MIG_POLL		2	/* effective affinity changed (poll) */

#endif /* HVNOISE_EVENTS_H */
