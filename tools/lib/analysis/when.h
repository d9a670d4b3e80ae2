/* SPDX-License-Identifier: GPL-2.0 */
/*
 * WHEN, as --since and --until take it: +SECONDS after the recording's start,
 * HH:MM[:SS[.frac]] or 'YYYY-MM-DD HH:MM[:SS[.frac]]' local time, @EPOCH
 * seconds, or mono:SECONDS (a trace timestamp).
 */
#ifndef HVNOISE_ANALYSIS_WHEN_H
#define HVNOISE_ANALYSIS_WHEN_H

#include <stdint.h>

struct hvn_analysis;

/* WHEN to a trace timestamp (ns) in *@out: NULL, or why it cannot be.
 * @start is the recording's start (0: unknown); wall-clock forms need
 * @an's clock pairs. */
const char *hvn_when_parse(const char *w, uint64_t start,
			   const struct hvn_analysis *an, uint64_t *out);
/* Seconds with an optional fraction and 's', to ns; -1 if malformed. */
int hvn_when_secs(const char *s, uint64_t *ns);
/* A local wall-clock time to CLOCK_REALTIME ns; the date, when not given,
 * is that of @day_of (CLOCK_REALTIME ns).  -1 if malformed. */
int hvn_when_wall(const char *s, uint64_t day_of, uint64_t *ns);

#endif
