// SPDX-License-Identifier: GPL-2.0
/* The one place hvnoise's trace events are instantiated. */
#include "hvnoise.h"

#define CREATE_TRACE_POINTS
#include "hvnoise_trace.h"
#include "hvnoise/event_layout.h"

/*
 * The records these events write are the ones the BPF collector writes and
 * the tool describes (include/hvnoise/event_layout.h): same fields, same
 * offsets, same size.
 */
#define HVN_CHECK_FIELD(n)						\
	static_assert(offsetof(HVN_RAW, n) == offsetof(HVN_EV, n) &&	\
		      sizeof_field(HVN_RAW, n) == sizeof_field(HVN_EV, n));
#define HVN_CHECK_FIELD_T(t, n)		HVN_CHECK_FIELD(n)
#define HVN_CHECK_ARRAY_T(t, n, len)	HVN_CHECK_FIELD(n)
#define HVN_CHECK_SIZE							\
	static_assert(sizeof(HVN_RAW) == sizeof(HVN_EV));

#define HVN_RAW struct trace_event_raw_watch
#define HVN_EV struct hvn_ev_watch
HVN_FIELDS_watch(HVN_CHECK_FIELD_T, HVN_CHECK_ARRAY_T)
HVN_CHECK_SIZE
#undef HVN_RAW
#undef HVN_EV
#define HVN_RAW struct trace_event_raw_steal
#define HVN_EV struct hvn_ev_steal
HVN_FIELDS_steal(HVN_CHECK_FIELD_T, HVN_CHECK_ARRAY_T)
HVN_CHECK_SIZE
#undef HVN_RAW
#undef HVN_EV
#define HVN_RAW struct trace_event_raw_lost
#define HVN_EV struct hvn_ev_lost
HVN_FIELDS_lost(HVN_CHECK_FIELD_T, HVN_CHECK_ARRAY_T)
HVN_CHECK_SIZE
#undef HVN_RAW
#undef HVN_EV
#define HVN_RAW struct trace_event_raw_irq_storm_begin
#define HVN_EV struct hvn_ev_irq_storm_begin
HVN_FIELDS_irq_storm_begin(HVN_CHECK_FIELD_T, HVN_CHECK_ARRAY_T)
HVN_CHECK_SIZE
#undef HVN_RAW
#undef HVN_EV
#define HVN_RAW struct trace_event_raw_irq_storm
#define HVN_EV struct hvn_ev_irq_storm
HVN_FIELDS_irq_storm(HVN_CHECK_FIELD_T, HVN_CHECK_ARRAY_T)
HVN_CHECK_SIZE
#undef HVN_RAW
#undef HVN_EV
#define HVN_RAW struct trace_event_raw_irq_migrate
#define HVN_EV struct hvn_ev_irq_migrate
HVN_FIELDS_irq_migrate(HVN_CHECK_FIELD_T, HVN_CHECK_ARRAY_T)
HVN_CHECK_SIZE
#undef HVN_RAW
#undef HVN_EV

static void emit_watch_rec(void *ctx, const struct hvn_watch_rec *r)
{
	trace_watch(r);
}

void hvn_trace_watch(const struct hvn_watchset *ws)
{
	hvn_ws_walk(ws, emit_watch_rec, NULL);
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
