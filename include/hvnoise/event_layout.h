/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The binary layout of the hvnoise events, written once for everything
 * that produces or reads them:
 *
 *  - hvnoise.ko's TRACE_EVENT()s (kmod/hvnoise_trace.h) declare the same
 *    fields; kmod/trace.c asserts at build time that their offsets and
 *    sizes equal these;
 *  - the BPF collector (tools/bpf/) fills these structs;
 *  - the hvnoise tool writes the matching tracefs format files for what the
 *    BPF collector recorded, so a trace.dat reads the same whichever source
 *    fed it.
 *
 * Each struct is a whole ring-buffer record: the kernel's common header
 * (struct trace_entry, 8 bytes) then the fields in declaration order with
 * natural alignment, as TRACE_EVENT() lays them out.  The field lists are
 * repeated where they must be walked (the format files the tool writes,
 * the module's asserts); each repetition is checked against these.
 */
#ifndef HVNOISE_EVENT_LAYOUT_H
#define HVNOISE_EVENT_LAYOUT_H

#include "events.h"
#include "watch.h"

/*
 * Fixed-size types under the names the format files print.  The module
 * takes them from the kernel, the BPF programs from vmlinux.h.
 */
#if !defined(__KERNEL__) && !defined(__VMLINUX_H__)
#include <stdint.h>
typedef uint8_t u8;
typedef uint32_t u32;
typedef int32_t s32;
typedef uint64_t u64;
#endif

/* struct trace_entry as the format files describe it. */
struct hvn_ev_common {
	unsigned short type;
	unsigned char flags;
	unsigned char preempt_count;
	int pid;
};

/* hvnoise:watch, one record of the watched set (see watch.h). */
struct hvn_ev_watch {
	struct hvn_ev_common common;
	u32 gen;
	u32 idx;
	u32 count;
	u8 kind;
	u8 why;
	s32 node;
	s32 cpu;
	s32 irq;
	u32 dev;
	u32 nirqs;
	char name[HVN_IRQ_NAME_LEN];
};

/* hvnoise:steal, steal the hypervisor reported in one sampling window. */
struct hvn_ev_steal {
	struct hvn_ev_common common;
	s32 cpu;
	u8 source;
	u64 start;
	u64 window;
	u64 duration;
};

/* hvnoise:lost, a late hard timer and how its lateness splits. */
struct hvn_ev_lost {
	struct hvn_ev_common common;
	s32 cpu;
	u64 start;
	u64 duration;
	u64 irq_ns;
	u64 steal_ns;
	u64 unexplained_ns;
};

/* hvnoise:irq_storm_begin, a storm just began. */
struct hvn_ev_irq_storm_begin {
	struct hvn_ev_common common;
	s32 cpu;
	u8 source;
	s32 irq;
	u32 threshold;
	u64 start;
	char name[HVN_IRQ_NAME_LEN];
};

/* hvnoise:irq_storm, a storm ended. */
struct hvn_ev_irq_storm {
	struct hvn_ev_common common;
	s32 cpu;
	u8 source;
	s32 irq;
	u64 start;
	u64 duration;
	u64 count;
	u64 peak_rate;
	char name[HVN_IRQ_NAME_LEN];
};

/* hvnoise:irq_migrate, a watched device's IRQ moved. */
struct hvn_ev_irq_migrate {
	struct hvn_ev_common common;
	s32 irq;
	u32 dev;
	s32 from_cpu;
	s32 to_cpu;
	u8 how;
	char name[HVN_IRQ_NAME_LEN];
};

/* Every hvnoise event, numbered for the BPF collector's messages. */
enum hvn_ev_id {
	HVN_EV_watch,
	HVN_EV_steal,
	HVN_EV_lost,
	HVN_EV_irq_storm_begin,
	HVN_EV_irq_storm,
	HVN_EV_irq_migrate,
	HVN_NR_EVENTS
};

/*
 * Their ids in the files the BPF collector fed (the common type field):
 * far above the ids the kernel hands out, so they never meet a real event.
 */
#define HVN_BPF_EVID_BASE	0xfe00u
#define HVN_BPF_EVID(ev)	(HVN_BPF_EVID_BASE + (unsigned int)(ev))

/*
 * What the BPF collector sends through its ring buffer: which event, the
 * CPU whose buffer it belongs in, when (CLOCK_MONOTONIC), then the record.
 */
struct hvn_bpf_msg {
	u64 ts;
	u32 cpu;
	u32 event;		/* enum hvn_ev_id */
	union {
		struct hvn_ev_common common;
		struct hvn_ev_watch watch;
		struct hvn_ev_steal steal;
		struct hvn_ev_lost lost;
		struct hvn_ev_irq_storm_begin irq_storm_begin;
		struct hvn_ev_irq_storm irq_storm;
		struct hvn_ev_irq_migrate irq_migrate;
	} rec;
};

#endif /* HVNOISE_EVENT_LAYOUT_H */
