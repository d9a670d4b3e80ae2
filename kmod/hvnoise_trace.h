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
#include "hvnoise/events.h"
#include "hvnoise/watch.h"
#include "lib/watchset.h"

#include "lib/lost.h"
#include "lib/storm.h"

#define HVN_PRINT_SRC(src)					\
	__print_symbolic(src,					\
			 { HVN_SRC_IRQ, "irq" },		\
			 { HVN_SRC_ALL, "all" },		\
			 { HVN_SRC_TIMER, "local_timer" },	\
			 { HVN_SRC_RESCHED, "reschedule" },	\
			 { HVN_SRC_CALLFUNC, "call_function" },	\
			 { HVN_SRC_CALLFUNC1, "call_function_single" })

int hvn_watch_event_reg(void);
void hvn_watch_event_unreg(void);

/*
 * hvnoise:watch - one record of the watched set.  A set is emitted whole
 * at load and whenever the event is enabled; on a change, as the records
 * that changed (why has HVN_WATCH_DELTA) where they are few.  Records of
 * one emission share gen and are numbered idx of count.
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
		strscpy_pad(__entry->name, r->name, HVN_IRQ_NAME_LEN);
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
				{ HVN_WHY_NUMA, "numa" },
				{ HVN_IRQ_CHECKED, "checked" },
				{ HVN_IRQ_MANAGED, "managed" },
				{ HVN_IRQ_FIXED, "fixed" },
				{ HVN_WATCH_DELTA, "delta" },
				{ HVN_WATCH_GONE, "gone" }),
		  __entry->dev >> 16, (__entry->dev >> 8) & 0xff,
		  (__entry->dev >> 3) & 0x1f, __entry->dev & 0x7,
		  __entry->node, __entry->irq, __entry->nirqs, __entry->name),

	hvn_watch_event_reg, hvn_watch_event_unreg
);

/*
 * hvnoise:steal - time the hypervisor reported it took from a watched vCPU
 * within one sampling interval [start, start + window].
 */
TRACE_EVENT(steal,

	TP_PROTO(int cpu, u64 start, u64 window, u64 steal, u8 source),

	TP_ARGS(cpu, start, window, steal, source),

	TP_STRUCT__entry(
		__field(s32, cpu)
		__field(u8, source)
		__field(u64, start)
		__field(u64, window)
		__field(u64, duration)
	),

	TP_fast_assign(
		__entry->cpu = cpu;
		__entry->source = source;
		__entry->start = start;
		__entry->window = window;
		__entry->duration = steal;
	),

	TP_printk("cpu=%d start=%llu duration=%llu window=%llu source=%s",
		  __entry->cpu, __entry->start, __entry->duration,
		  __entry->window,
		  __print_symbolic(__entry->source,
				   { HVN_STEAL_KVM, "kvm" },
				   { HVN_STEAL_KCPUSTAT, "kcpustat" },
				   { HVN_STEAL_PVTIME, "pvtime" }))
);

/*
 * hvnoise:lost - a hard timer on a watched CPU fired late: duration ns
 * after start, of which irq_ns the guest spent in interrupts, steal_ns the
 * hypervisor reported as steal, and unexplained_ns nobody accounts for.
 */
TRACE_EVENT(lost,

	TP_PROTO(int cpu, const struct hvn_lost_report *r),

	TP_ARGS(cpu, r),

	TP_STRUCT__entry(
		__field(s32, cpu)
		__field(u64, start)
		__field(u64, duration)
		__field(u64, irq_ns)
		__field(u64, steal_ns)
		__field(u64, unexplained_ns)
	),

	TP_fast_assign(
		__entry->cpu = cpu;
		__entry->start = r->start;
		__entry->duration = r->duration;
		__entry->irq_ns = r->irq_ns;
		__entry->steal_ns = r->steal_ns;
		__entry->unexplained_ns = r->unexplained_ns;
	),

	TP_printk("cpu=%d start=%llu duration=%llu irq_ns=%llu steal_ns=%llu unexplained_ns=%llu",
		  __entry->cpu, __entry->start, __entry->duration,
		  __entry->irq_ns, __entry->steal_ns, __entry->unexplained_ns)
);

/* hvnoise:irq_storm_begin - a storm just began (its end comes as irq_storm). */
TRACE_EVENT(irq_storm_begin,

	TP_PROTO(int cpu, u8 source, int irq, const char *name, u64 start,
		 u32 threshold),

	TP_ARGS(cpu, source, irq, name, start, threshold),

	TP_STRUCT__entry(
		__field(s32, cpu)
		__field(u8, source)
		__field(s32, irq)
		__field(u32, threshold)
		__field(u64, start)
		__array(char, name, HVN_IRQ_NAME_LEN)
	),

	TP_fast_assign(
		__entry->cpu = cpu;
		__entry->source = source;
		__entry->irq = irq;
		__entry->threshold = threshold;
		__entry->start = start;
		strscpy_pad(__entry->name, name, HVN_IRQ_NAME_LEN);
	),

	TP_printk("cpu=%d source=%s irq=%d name=%s start=%llu threshold=%u",
		  __entry->cpu, HVN_PRINT_SRC(__entry->source), __entry->irq,
		  __entry->name, __entry->start, __entry->threshold)
);

/* hvnoise:irq_storm - a storm ended: when, how long, how many, how fast. */
TRACE_EVENT(irq_storm,

	TP_PROTO(int cpu, u8 source, int irq, const char *name,
		 const struct hvn_storm_report *r),

	TP_ARGS(cpu, source, irq, name, r),

	TP_STRUCT__entry(
		__field(s32, cpu)
		__field(u8, source)
		__field(s32, irq)
		__field(u64, start)
		__field(u64, duration)
		__field(u64, count)
		__field(u64, peak_rate)
		__array(char, name, HVN_IRQ_NAME_LEN)
	),

	TP_fast_assign(
		__entry->cpu = cpu;
		__entry->source = source;
		__entry->irq = irq;
		__entry->start = r->start;
		__entry->duration = r->duration;
		__entry->count = r->count;
		__entry->peak_rate = r->peak_rate;
		strscpy_pad(__entry->name, name, HVN_IRQ_NAME_LEN);
	),

	TP_printk("cpu=%d source=%s irq=%d name=%s start=%llu duration=%llu count=%llu peak_rate=%llu",
		  __entry->cpu, HVN_PRINT_SRC(__entry->source), __entry->irq,
		  __entry->name, __entry->start, __entry->duration,
		  __entry->count, __entry->peak_rate)
);

/* hvnoise:irq_migrate - a watched device's IRQ moved to another CPU. */
TRACE_EVENT(irq_migrate,

	TP_PROTO(int irq, const char *name, u32 dev, int from, int to, u8 how),

	TP_ARGS(irq, name, dev, from, to, how),

	TP_STRUCT__entry(
		__field(s32, irq)
		__field(u32, dev)
		__field(s32, from_cpu)
		__field(s32, to_cpu)
		__field(u8, how)
		__array(char, name, HVN_IRQ_NAME_LEN)
	),

	TP_fast_assign(
		__entry->irq = irq;
		__entry->dev = dev;
		__entry->from_cpu = from;
		__entry->to_cpu = to;
		__entry->how = how;
		strscpy_pad(__entry->name, name, HVN_IRQ_NAME_LEN);
	),

	TP_printk("irq=%d name=%s dev=%04x:%02x:%02x.%x from_cpu=%d to_cpu=%d how=%s",
		  __entry->irq, __entry->name, __entry->dev >> 16,
		  (__entry->dev >> 8) & 0xff, (__entry->dev >> 3) & 0x1f,
		  __entry->dev & 0x7, __entry->from_cpu, __entry->to_cpu,
		  __print_symbolic(__entry->how,
				   { HVN_MIG_VECTOR, "vector_update" },
				   { HVN_MIG_HANDLED, "handled" },
				   { HVN_MIG_POLL, "poll" }))
);

#endif /* HVNOISE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE hvnoise_trace
#include <trace/define_trace.h>
