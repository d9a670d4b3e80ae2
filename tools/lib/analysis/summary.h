/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A host's summary for correlate over many hosts: what the fleet join
 * needs of one host's trace (its communicators' ranks and clock pairs, its
 * collectives' arrivals and ends, its own stalls and their causes, the
 * noise episodes on the CPUs that serve them), a hundredth of the trace or
 * less.  Made where the trace is (hvnoise correlate --summary), read by the
 * join as a trace would be.  The format is inputs/summary.h's, described
 * in Documentation/nccl.rst.
 */
#ifndef HVNOISE_ANALYSIS_SUMMARY_H
#define HVNOISE_ANALYSIS_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/stalls.h"
#include "inputs/summary.h"

/*
 * @x, analysed with its episodes kept, of @host into @path (written whole
 * or not at all): 0, or an HVN_EXIT_* code with the reason said.
 */
int hvn_summary_write(const char *path, const char *host,
		      const struct hvn_corr *x);
/*
 * @path into a zeroed @x (bound to the zeroed @schema) and @host: 0, or
 * HVN_EXIT_BADFILE with the record and offset named.
 */
int hvn_summary_read(const char *path, struct hvn_corr *x,
		     struct hvn_schema *schema, char *host, size_t hlen);

#endif
