/* SPDX-License-Identifier: GPL-2.0 */
#ifndef HVNOISE_OUT_PERFETTO_H
#define HVNOISE_OUT_PERFETTO_H

struct hvn_corr;
struct hvn_tdat;

/* @x's collectives, one track per rank, and the noise of @t, one track per
 * CPU, as Chrome trace events into the file @out: 0 or HVN_EXIT_FAIL. */
int hvn_corr_write_perfetto(struct hvn_corr *x, struct hvn_tdat *t,
			    const char *out);

#endif
