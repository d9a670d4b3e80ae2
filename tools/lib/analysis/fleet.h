/* SPDX-License-Identifier: GPL-2.0 */
/*
 * correlate over many hosts: which host's noise stalled the job.
 *
 * Each host's trace is correlated alone first (analysis/stalls.h).  The
 * hosts' clocks are then aligned on the ends of implicit-sync collectives
 * (all-reduce, all-gather, reduce-scatter: every rank leaves within
 * microseconds of the others), never trusting NTP: a host's offset from
 * the reference host is the median of its ranks' ends minus the
 * reference's, with a drift wherever the samples show one, and the 90th
 * percentile of the residuals is the stated uncertainty.  A host sharing
 * nothing with the reference is aligned in a later round on the hosts
 * aligned before it, its uncertainty added to theirs.
 *
 * A collective the ranks of several hosts ran is a job stall when any
 * rank's copy stalled, or when a host's ranks entered it later than the
 * others by k times that communicator's usual spread.  Its verdict follows
 * the wait back to whoever held the job:
 *
 * - an arrival stall (some hosts entered late): each late rank is traced
 *   back through the collectives it came from.  A rank that left its
 *   previous collective late, and went on at its usual pace, was held by
 *   that collective: by its last arrival (followed back in turn) or, when
 *   every rank was in and the transfer stalled, by the host whose noise
 *   stalled it.  Where the rank itself was slow to come, it is the
 *   culprit, and its noise before it arrived says why.
 * - an in-flight stall (every rank in): the hosts whose noise over the
 *   stalled transfer explains most of the time lost, on any host of the
 *   collective, whether or not its own copy still ran.
 *
 * Where nobody came plainly late, a host late by less than the clocks can
 * tell whose own noise explains its lateness is named as maybe, never as
 * a culprit to drain.
 *
 * Noise a rank had while it only waited is never its guilt.  Each culprit
 * gets the share of the stall it caused; the hosts are ranked by what
 * their noise cost the job over the whole window, a delay counted once
 * however many later collectives it held up.
 */
#ifndef HVNOISE_ANALYSIS_FLEET_H
#define HVNOISE_ANALYSIS_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/stalls.h"
#include "analysis/summary.h"

struct hvn_fleet_sample;

struct hvn_fleet_host {
	const char *path;
	char host[128];
	struct hvn_schema *schema;
	struct hvn_corr *x;
	uint32_t *stall_of;		/* per collective: its stall + 1, or 0 */
	/* Trace time (CLOCK_MONOTONIC, which never steps) + base is this
	 * host's CLOCK_REALTIME, as its clock pairs mostly say; aligned, on
	 * the reference host's: real - (offset + drift * (real - t0)). */
	int64_t base;
	double offset, drift, unc;
	int64_t t0;
	size_t nsamples;
	int32_t via;			/* aligned through this host, or -1 */
	/* The host whose clock it is aligned on: the reference, or, for a
	 * group of hosts sharing no collective with the reference's, one of
	 * theirs (-1: not aligned). */
	int32_t island;
	int align_round;		/* the round it was aligned in, from 1 */
	bool aligned;			/* else its own CLOCK_REALTIME is used */
	bool disagrees;			/* its clock is off more than unc says */
	/* CLOCK_REALTIME stepped within the recording (the clock pairs
	 * disagree by more than 1 ms): by up to this much. */
	int64_t step_ns;
	/* What hvnoise could see there: the detectors (module or BPF), the
	 * kernel's IRQ events only, or nothing at all. */
	enum { HVN_SEEN_DETECTORS, HVN_SEEN_IRQ, HVN_SEEN_NOTHING } seen;
	/* Per collective: the one its process ran before it (UINT32_MAX
	 * none), and the process's usual time between the two. */
	uint32_t *prev;
	int64_t *tgap;
	uint32_t *at;			/* its entry in hvn_fleet.all, or UINT32_MAX */
	int64_t *al;			/* each one's start and end, aligned
					 * (while joining) */
	/* Its collectives: how many, the first start and last end (trace
	 * time), and how many the clocks can be aligned on. */
	size_t ncoll, nsync;
	uint64_t first, last;
	/* The implicit-sync collectives' ends the alignment uses: all of
	 * them, or (a join in slabs) an even share of each communicator's. */
	struct hvn_fleet_sample *samp;
	size_t nsamp;
	/* A join in slabs: where the summary's collectives lie, read again
	 * for each slab; x holds only the collectives the verdicts name,
	 * each one's index in the summary in kept[]. */
	struct hvn_sum_index ix;
	uint32_t *kept;
	/* Its sends and receives, where counted as read (a slab's). */
	bool p2p_counted;
	size_t np2p;
};

enum hvn_fleet_class {
	HVN_FLEET_ARRIVAL = 1,		/* one rank entered late */
	HVN_FLEET_INFLIGHT,		/* all entered; one made no progress */
};

/* One rank's copy of a collective, the job's view. */
struct hvn_fleet_rank {
	uint32_t host, coll;		/* indexes into hosts, and its coll
					 * (UINT32_MAX past a join in slabs) */
	int32_t rank;			/* its communicator rank */
	int64_t arrive, end;		/* aligned CLOCK_REALTIME ns */
	uint32_t grp;			/* its collective across hosts (while
					 * analysing) */
	bool late;			/* in a job stall: entered late only
					 * because another host held it */
};

enum hvn_fleet_how {
	HVN_HOLD_LATE = 1,		/* its rank entered late */
	HVN_HOLD_TRANSFER,		/* its noise stalled the transfer */
};

/* Who held the job in a stall, and what it cost the job there. */
struct hvn_fleet_culprit {
	uint32_t host, coll;		/* its rank's copy of the collective
					 * where it held the job */
	uint8_t how;			/* enum hvn_fleet_how */
	bool carried;			/* held an earlier collective, whose
					 * end made this one's ranks late */
	uint32_t root;			/* that collective's group */
	double delay_ns;		/* its share of the stall */
	double judged_ns;		/* what its noise had to explain: how
					 * late it came, or the transfer's excess */
	/* Its noise over the interval it held the job: before it arrived
	 * (late), or over the stalled transfer. */
	struct hvn_stall why;
	uint64_t why_start, why_end;	/* that interval, its trace time */
};

struct hvn_fleet_stall {
	uint64_t comm, seq;
	uint8_t func;
	enum hvn_fleet_class cls;
	uint64_t lost_ns;		/* the most any rank's copy lost */
	int64_t arrive;			/* the first arrival, aligned */
	double late_ns;			/* the last arrival after the on-time ones */
	double spread_ns;		/* the last arrival after the first */
	double unc;			/* its hosts' largest clock uncertainty */
	struct hvn_fleet_rank *r;	/* all ranks: the culprits', the maybes',
					 * then those that waited */
	uint32_t nr;
	uint32_t nguilty;		/* r[0..nguilty): the culprits' ranks */
	bool culprit;			/* some host held it: cul[0] the most */
	struct hvn_fleet_culprit *cul;
	uint32_t ncul;
	/* Hosts that seemed to come late by less than the clocks can tell
	 * (within 3 x the uncertainty, where nobody was plainly late),
	 * whose noise before they came explains it: they may have held the
	 * job, or the clocks mislead.  Named as such, never drained. */
	struct hvn_fleet_culprit *maybe;
	uint32_t nmaybe;
	uint32_t nmaybe_r;		/* r[nguilty..+nmaybe_r): their ranks */
	uint32_t *noisy;		/* other hosts whose copy noise explains */
	uint32_t nnoisy;
	uint32_t *unseen;		/* its hosts hvnoise saw nothing on */
	uint32_t nunseen;
};

/* Over the whole window: what each host's noise cost the job. */
struct hvn_fleet_blame {
	uint32_t host;
	double delay_ns;		/* each holding counted once */
	uint32_t nheld;			/* times it held the job */
	uint32_t worst;			/* its largest: index into st */
	double worst_ns;
};

struct hvn_fleet_grp;
struct hvn_fleet_p2p;
struct hvn_fleet_usual;

struct hvn_fleet {
	struct hvn_fleet_host *h;
	size_t nh;
	uint32_t ref;			/* the reference clock's host */
	size_t nsync;			/* collectives the alignment used */
	struct hvn_fleet_stall *st;	/* by time lost */
	size_t nst;
	struct hvn_fleet_blame *blame;	/* the hosts to drain, worst first */
	size_t nblame;
	/* Every sequenced collective's copies, by collective (while
	 * analysing): the waits are followed through them. */
	struct hvn_fleet_rank *all;
	size_t nall, all_cap;		/* all_cap: room in all, kept
					 * from slab to slab */
	struct hvn_fleet_grp *grp;
	size_t ngrp;
	/* Every send and receive, by communicator, rank and peer (while
	 * analysing): a pair's other side found without a scan. */
	struct hvn_fleet_p2p *p2p;
	size_t np2p;
	struct hvn_missing *miss;
	size_t nmiss;
	size_t ncoll, nranks;
	/* Summaries too many to hold at once are joined a slab of time at
	 * a time: how many, each this long (0: held whole). */
	size_t nslab;
	double slab_ns, margin_ns;
	/* Over slabs: each communicator and function's usual lateness over
	 * the whole window (from the alignment's samples), by key. */
	struct hvn_fleet_usual *usual;
	size_t nusual;
	struct hvn_schema *schema;	/* over slabs: every host's */
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
/* A host's trace or summary @arg, or a directory's *.dat and *.sum (by
 * name; *@dir set), appended to the malloc'd list *@paths of *@n: 0, or -1
 * (said, or out of memory). */
int hvn_fleet_inputs(const char *arg, char ***paths, size_t *n, bool *dir);
/* Align the clocks, find the job stalls and their culprits. */
int hvn_fleet_analyse(struct hvn_fleet *f, const struct hvn_corr_params *p);
void hvn_fleet_free(struct hvn_fleet *f);

/* Its share of @c's interval that host noise explains (0..1). */
double hvn_fleet_share(const struct hvn_fleet_culprit *c);
/* Trace time @mono of host @host on the reference host's CLOCK_REALTIME
 * (after hvn_fleet_analyse()). */
int64_t hvn_fleet_time(const struct hvn_fleet *f, uint32_t host, uint64_t mono);
/* Communicator @comm's ranks that no trace holds, or NULL: all are held. */
const struct hvn_missing *hvn_fleet_missing(const struct hvn_fleet *f,
					    uint64_t comm);
/* The collective of group @g, for people: its key. */
const struct hvn_coll *hvn_fleet_grp_coll(const struct hvn_fleet *f, uint32_t g);

#endif
