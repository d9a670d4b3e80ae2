// SPDX-License-Identifier: GPL-2.0
/* The one place hvnoise's trace events are instantiated. */
#include "hvnoise.h"

#define CREATE_TRACE_POINTS
#include "hvnoise_trace.h"

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
