// SPDX-License-Identifier: GPL-2.0
/* The one place hvnoise's trace events are instantiated. */
#include "detect.h"
#include "hvnoise.h"

#define CREATE_TRACE_POINTS
#include "hvnoise_trace.h"
#include "hvnoise/event_layout.h"

/*
 * The records these events write are the ones the BPF collector writes and
 * the tool describes (include/hvnoise/event_layout.h): same fields at the
 * same offsets, same sizes.
 */
#define HVN_SAME(ev, f)							\
	static_assert(offsetof(struct trace_event_raw_##ev, f) ==	\
		      offsetof(struct hvn_ev_##ev, f) &&		\
		      sizeof_field(struct trace_event_raw_##ev, f) ==	\
		      sizeof_field(struct hvn_ev_##ev, f))
#define HVN_SAME_SIZE(ev)						\
	static_assert(sizeof(struct trace_event_raw_##ev) ==		\
		      sizeof(struct hvn_ev_##ev))

HVN_SAME(watch, gen);
HVN_SAME(watch, idx);
HVN_SAME(watch, count);
HVN_SAME(watch, kind);
HVN_SAME(watch, why);
HVN_SAME(watch, node);
HVN_SAME(watch, cpu);
HVN_SAME(watch, irq);
HVN_SAME(watch, dev);
HVN_SAME(watch, nirqs);
HVN_SAME(watch, name);
HVN_SAME_SIZE(watch);
HVN_SAME(steal, cpu);
HVN_SAME(steal, source);
HVN_SAME(steal, start);
HVN_SAME(steal, window);
HVN_SAME(steal, duration);
HVN_SAME_SIZE(steal);
HVN_SAME(lost, cpu);
HVN_SAME(lost, start);
HVN_SAME(lost, duration);
HVN_SAME(lost, irq_ns);
HVN_SAME(lost, steal_ns);
HVN_SAME(lost, unexplained_ns);
HVN_SAME_SIZE(lost);
HVN_SAME(irq_storm_begin, cpu);
HVN_SAME(irq_storm_begin, source);
HVN_SAME(irq_storm_begin, irq);
HVN_SAME(irq_storm_begin, threshold);
HVN_SAME(irq_storm_begin, start);
HVN_SAME(irq_storm_begin, name);
HVN_SAME_SIZE(irq_storm_begin);
HVN_SAME(irq_storm, cpu);
HVN_SAME(irq_storm, source);
HVN_SAME(irq_storm, irq);
HVN_SAME(irq_storm, start);
HVN_SAME(irq_storm, duration);
HVN_SAME(irq_storm, count);
HVN_SAME(irq_storm, peak_rate);
HVN_SAME(irq_storm, name);
HVN_SAME_SIZE(irq_storm);
HVN_SAME(irq_migrate, irq);
HVN_SAME(irq_migrate, dev);
HVN_SAME(irq_migrate, from_cpu);
HVN_SAME(irq_migrate, to_cpu);
HVN_SAME(irq_migrate, how);
HVN_SAME(irq_migrate, name);
HVN_SAME_SIZE(irq_migrate);

static void emit_watch_rec(void *ctx, const struct hvn_watch_rec *r)
{
	trace_watch(r);
}

void hvn_trace_watch(const struct hvn_watchset *ws)
{
	hvn_ws_walk(ws, emit_watch_rec, NULL);
}

void hvn_trace_watch_change(const struct hvn_watchset *old,
			    const struct hvn_watchset *ws)
{
	hvn_ws_walk_change(old, ws, READ_ONCE(hvn_dcfg.watch_delta_pct),
			   emit_watch_rec, NULL);
}

/*
 * Enabling hvnoise:watch re-emits the current set, so a recording started
 * after the module loaded still learns what is watched.
 */
int hvn_watch_event_reg(void)
{
	hvn_watch_request_emit();
	return 0;
}

void hvn_watch_event_unreg(void)
{
}
