/* SPDX-License-Identifier: GPL-2.0 */
/*
 * correlate over many hosts: which host's noise stalled the job.
 *
 * Each host's trace is correlated alone first (analysis/stalls.h).  The
 * hosts' clocks are then aligned on the ends of implicit-sync collectives
 * (all-reduce, all-gather, reduce-scatter: every rank leaves within
 * microseconds of the others), never trusting NTP: a host's offset from
 * the reference host is the median of its ranks' ends minus the
 * reference's, with a drift where the samples span a minute or more, and
 * the 90th percentile of the residuals is the stated uncertainty.
 *
 * A collective the ranks of several hosts ran is a job stall when any
 * rank's copy stalled.  If one rank entered it well after all the others
 * (an arrival stall), that rank is the culprit, and the noise on its CPUs
 * while the others waited says why; otherwise (an in-flight stall) the
 * culprit is the rank whose own stall the most host noise explains, if
 * any does.
 */
#ifndef HVNOISE_ANALYSIS_FLEET_H
#define HVNOISE_ANALYSIS_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/stalls.h"

struct hvn_fleet_host {
	const char *path;
	char host[128];
	struct hvn_schema *schema;
	struct hvn_corr *x;
	uint32_t *stall_of;		/* per collective: its stall + 1, or 0 */
	/* Its CLOCK_REALTIME minus the reference's, at real time t:
	 * offset + drift * (t - t0) ns. */
	double offset, drift, unc;
	int64_t t0;
	size_t nsamples;
	bool aligned;			/* else its own CLOCK_REALTIME is used */
	bool disagrees;			/* its clock is off more than unc says */
};

enum hvn_fleet_class {
	HVN_FLEET_ARRIVAL = 1,		/* one rank entered late */
	HVN_FLEET_INFLIGHT,		/* all entered; one made no progress */
};

/* One rank's copy of a job stall. */
struct hvn_fleet_rank {
	uint32_t host, coll;		/* indexes into hosts, and its coll */
	int64_t arrive, end;		/* aligned CLOCK_REALTIME ns */
};

struct hvn_fleet_stall {
	uint64_t comm, seq;
	uint8_t func;
	enum hvn_fleet_class cls;
	uint64_t lost_ns;		/* the most any rank's copy lost */
	int64_t arrive;			/* the first arrival, aligned */
	double late_ns;			/* the last arrival after the others */
	double spread_ns;		/* the last arrival after the first */
	double unc;			/* its hosts' largest clock uncertainty */
	struct hvn_fleet_rank *r;	/* all ranks, the culprit first */
	uint32_t nr;
	bool culprit;			/* r[0] is the culprit */
	/* Noise on the culprit's CPUs over its critical interval: while
	 * the others waited for it (arrival), its own stall (in flight). */
	struct hvn_stall why;
	uint64_t why_start, why_end;	/* that interval, culprit's trace time */
	uint32_t *noisy;		/* other hosts whose copy noise explains */
	uint32_t nnoisy;
};

/* A communicator's ranks that no trace holds. */
struct hvn_fleet_missing {
	uint64_t comm;
	int32_t nranks, nseen;
	int32_t first_missing;
};

struct hvn_fleet {
	struct hvn_fleet_host *h;
	size_t nh;
	uint32_t ref;			/* the reference clock's host */
	size_t nsync;			/* collectives the alignment used */
	struct hvn_fleet_stall *st;	/* by time lost */
	size_t nst;
	struct hvn_fleet_missing *miss;
	size_t nmiss;
	size_t ncoll, nranks;
};

struct hvn_tdat;

/*
 * Pass 1 over one host's trace @t into a zeroed @x, its episodes kept, and
 * the host's name from its metadata: 0 or an HVN_EXIT_* code (said).
 * hvn_corr_analyse() next.
 */
int hvn_fleet_host_open(struct hvn_corr *x, struct hvn_schema *schema,
			struct hvn_tdat *t, char *host, size_t hlen);
/*
 * Open and correlate each of @paths (traces, or summaries) as a host: 0, or an HVN_EXIT_* code
 * with the reason said (a file that cannot be read, or two files of one
 * host).  hvn_fleet_free() after either.
 */
int hvn_fleet_open(struct hvn_fleet *f, char **paths, size_t n,
		   const struct hvn_corr_params *p);
/* Align the clocks, find the job stalls and their culprits. */
int hvn_fleet_analyse(struct hvn_fleet *f, const struct hvn_corr_params *p);
void hvn_fleet_free(struct hvn_fleet *f);

/* Its share of @s's interval that host noise explains (0..1). */
double hvn_fleet_share(const struct hvn_fleet_stall *s);

#endif
