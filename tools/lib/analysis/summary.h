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

/*
 * Where a summary's collectives lie, a block of them at a time: what the
 * join of many hosts reads again for each slab of time it holds.
 */
struct hvn_sum_block {
	uint64_t off;			/* its first collective's record */
	uint32_t first, n;		/* its collectives' indexes */
	uint64_t lo, hi;		/* their least start and greatest end */
};

struct hvn_sum_index {
	struct hvn_sum_block *blk;
	size_t nblk;
};

/* hvn_summary_read(), and where its collectives lie into the zeroed @ix
 * (hvn_sum_index_free() after, whatever it returns).  Room @x has for
 * collectives already is used. */
int hvn_summary_read_index(const char *path, struct hvn_corr *x,
			   struct hvn_schema *schema, char *host, size_t hlen,
			   struct hvn_sum_index *ix);
/*
 * The collectives of @path (indexed in @ix) whose [start, end] meets
 * [@lo, @hi], in the file's order, into @x's (emptied first), and each
 * one's index in the file into *@fidx (grown as @x's are, its room in
 * *@fcap): 0, or HVN_EXIT_BADFILE / HVN_EXIT_FAIL with the reason said.
 */
int hvn_summary_colls(const char *path, const struct hvn_sum_index *ix,
		      uint64_t lo, uint64_t hi, struct hvn_corr *x,
		      uint32_t **fidx, size_t *fcap);
void hvn_sum_index_free(struct hvn_sum_index *ix);

#endif
