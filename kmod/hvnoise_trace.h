/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hvnoise's trace events (system "hvnoise").  Fixed-size fields only, and
 * TP_printk() limited to what libtraceevent parses, so that trace-cmd and
 * the hvnoise tool decode every field.  Field reference:
 * Documentation/events.rst.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM hvnoise

#if !defined(HVNOISE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define HVNOISE_TRACE_H

#include <linux/tracepoint.h>
#include "hvnoise/watch.h"
#include "lib/watchset.h"

int hvn_watch_event_reg(void);
void hvn_watch_event_unreg(void);

/*
 * hvnoise:watch - one record of the watched set.  A set is emitted whole
 * at load, on every change and whenever the event is enabled; records of
 * one set share gen and are numbered idx of count.
 */
TRACE_EVENT_FN(watch,

	TP_PROTO(const struct hvn_watch_rec *r),

	TP_ARGS(r),

	TP_STRUCT__entry(
		__field(u32, gen)
		__field(u32, idx)
		__field(u32, count)
		__field(u8, kind)
		__field(u8, why)
		__field(s32, node)
		__field(s32, cpu)
		__field(s32, irq)
		__field(u32, dev)
		__field(u32, nirqs)
		__array(char, name, HVN_IRQ_NAME_LEN)
	),

	TP_fast_assign(
		__entry->gen = r->gen;
		__entry->idx = r->idx;
		__entry->count = r->count;
		__entry->kind = r->kind;
		__entry->why = r->why;
		__entry->node = r->node;
		__entry->cpu = r->cpu;
		__entry->irq = r->irq;
		__entry->dev = r->dev;
		__entry->nirqs = r->nirqs;
		strscpy(__entry->name, r->name, HVN_IRQ_NAME_LEN);
	),

	TP_printk("gen=%u %u/%u %s cpu=%d why=%s dev=%04x:%02x:%02x.%x node=%d irq=%d nirqs=%u name=%s",
		  __entry->gen, __entry->idx + 1, __entry->count,
		  __print_symbolic(__entry->kind,
				   { HVN_WATCH_CPU, "cpu" },
				   { HVN_WATCH_DEVICE, "device" },
				   { HVN_WATCH_IRQ, "irq" }),
		  __entry->cpu,
		  __print_flags(__entry->why, "|",
				{ HVN_WHY_LISTED, "listed" },
				{ HVN_WHY_IRQ, "irq" },
				{ HVN_WHY_NUMA, "numa" }),
		  __entry->dev >> 16, (__entry->dev >> 8) & 0xff,
		  (__entry->dev >> 3) & 0x1f, __entry->dev & 0x7,
		  __entry->node, __entry->irq, __entry->nirqs, __entry->name),

	hvn_watch_event_reg, hvn_watch_event_unreg
);

#endif /* HVNOISE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE hvnoise_trace
#include <trace/define_trace.h>
