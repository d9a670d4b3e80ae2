/* SPDX-License-Identifier: GPL-2.0 */
#ifndef HVNOISE_OUT_CORRELATE_JSON_H
#define HVNOISE_OUT_CORRELATE_JSON_H

#include <stdio.h>

struct hvn_corr;
struct hvn_corr_params;
struct hvn_fleet;

/* correlate's result as JSON into @o; @path is the trace's. */
void hvn_corr_write_json(FILE *o, const struct hvn_corr *x,
			 const struct hvn_corr_params *p, const char *path);

/* correlate over many hosts: schema "hvnoise-correlate" version 2, with
 * "hosts" (clock offsets) and "job_stalls" (culprits). */
void hvn_fleet_write_json(FILE *o, const struct hvn_fleet *f,
			  const struct hvn_corr_params *p);

#endif
