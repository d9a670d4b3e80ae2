/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The NCCL profiler plugin's records (include/hvnoise/nccl.h), decoded
 * from the trace (trace_marker_raw) or read from the plugin's per-process
 * files.  A reader returns records; what they mean is the analysis'
 * (analysis/stalls.c).
 */
#ifndef HVNOISE_INPUTS_NCCL_H
#define HVNOISE_INPUTS_NCCL_H

#include <stdint.h>

#include "hvnoise/nccl.h"

/* One record, checked: its type (HVN_NCCL_COMM, ...) and its struct. */
struct hvn_nccl_rec {
	uint32_t type;
	union {
		struct hvn_nccl_comm comm;	/* host, name printable */
		struct hvn_nccl_coll coll;
		struct hvn_nccl_proxyop proxyop;
		struct hvn_nccl_kernch kernch;
	} u;
};

/* Record @id's @len bytes at @p into @r: 0, or -1 if it is malformed or
 * of a type this version does not know. */
int hvn_nccl_decode(uint32_t id, const uint8_t *p, uint32_t len,
		    struct hvn_nccl_rec *r);

/* The plugin's file @path ("HVNNCCL1", then header + record to the end):
 * @fn(@ctx, record) for each, in order.  0, or HVN_EXIT_BADFILE with the
 * reason printed (what came before a bad record was handed over). */
int hvn_nccl_read_file(const char *path,
		       void (*fn)(void *ctx, const struct hvn_nccl_rec *r),
		       void *ctx);

#endif
