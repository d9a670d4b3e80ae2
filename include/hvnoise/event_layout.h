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
 * natural alignment, as TRACE_EVENT() lays them out.
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

/*
 * FIELD(type, name) and ARRAY(type, name, len) per event, in the order of
 * TP_STRUCT__entry().
 */
#define HVN_FIELDS_watch(FIELD, ARRAY)			\
	FIELD(u32, gen) FIELD(u32, idx) FIELD(u32, count)	\
	FIELD(u8, kind) FIELD(u8, why) FIELD(s32, node)		\
	FIELD(s32, cpu) FIELD(s32, irq) FIELD(u32, dev)		\
	FIELD(u32, nirqs) ARRAY(char, name, HVN_IRQ_NAME_LEN)

#define HVN_FIELDS_steal(FIELD, ARRAY)			\
	FIELD(s32, cpu) FIELD(u8, source) FIELD(u64, start)	\
	FIELD(u64, window) FIELD(u64, duration)

#define HVN_FIELDS_lost(FIELD, ARRAY)			\
	FIELD(s32, cpu) FIELD(u64, start) FIELD(u64, duration)	\
	FIELD(u64, irq_ns) FIELD(u64, steal_ns)			\
	FIELD(u64, unexplained_ns)

#define HVN_FIELDS_irq_storm_begin(FIELD, ARRAY)		\
	FIELD(s32, cpu) FIELD(u8, source) FIELD(s32, irq)	\
	FIELD(u32, threshold) FIELD(u64, start)			\
	ARRAY(char, name, HVN_IRQ_NAME_LEN)

#define HVN_FIELDS_irq_storm(FIELD, ARRAY)			\
	FIELD(s32, cpu) FIELD(u8, source) FIELD(s32, irq)	\
	FIELD(u64, start) FIELD(u64, duration) FIELD(u64, count)	\
	FIELD(u64, peak_rate) ARRAY(char, name, HVN_IRQ_NAME_LEN)

#define HVN_FIELDS_irq_migrate(FIELD, ARRAY)		\
	FIELD(s32, irq) FIELD(u32, dev) FIELD(s32, from_cpu)	\
	FIELD(s32, to_cpu) FIELD(u8, how)			\
	ARRAY(char, name, HVN_IRQ_NAME_LEN)

/* EVENT(name, id): every hvnoise event, with a small id of its own. */
#define HVN_EVENT_LIST(EVENT)					\
	EVENT(watch, 0) EVENT(steal, 1) EVENT(lost, 2)		\
	EVENT(irq_storm_begin, 3) EVENT(irq_storm, 4)		\
	EVENT(irq_migrate, 5)
#define HVN_NR_EVENTS	6

/* struct trace_entry as the format files describe it. */
struct hvn_ev_common {
	unsigned short type;
	unsigned char flags;
	unsigned char preempt_count;
	int pid;
};

#define HVN_EV_FIELD_DECL(t, n)		t n;
#define HVN_EV_ARRAY_DECL(t, n, len)	t n[len];
#define HVN_EV_STRUCT(ev, id)						\
	struct hvn_ev_##ev {						\
		struct hvn_ev_common common;				\
		HVN_FIELDS_##ev(HVN_EV_FIELD_DECL, HVN_EV_ARRAY_DECL)	\
	};
HVN_EVENT_LIST(HVN_EV_STRUCT)
#undef HVN_EV_STRUCT

#define HVN_EV_ID_ENUM(ev, id)	HVN_EV_##ev = id,
enum hvn_ev_id { HVN_EVENT_LIST(HVN_EV_ID_ENUM) };
#undef HVN_EV_ID_ENUM

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

/* The module's parameter defaults, which the BPF collector shares. */
#define HVN_DEF_STORM_RATE		20000	/* IRQs/s of one source */
#define HVN_DEF_STORM_ALL_RATE		100000	/* IRQs/s of a whole CPU */
#define HVN_DEF_STORM_WINDOW_MS		100
#define HVN_DEF_LOST_THRESHOLD_US	1000
#define HVN_DEF_SAMPLE_US		0	/* no sampling timer */
#define HVN_DEF_STEAL_MS		100
#define HVN_DEF_STEAL_THRESHOLD_US	1000

#endif /* HVNOISE_EVENT_LAYOUT_H */
