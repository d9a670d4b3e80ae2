/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What hvnoise report and top compute from a stream of events: per-CPU
 * totals, the worst episode of each kind, the top episodes overall, the
 * watched set, IRQ counts and the clock pairs.  Fed by hvn_an_event() one
 * record at a time, in any CPU order: nothing here needs the events sorted.
 */
#ifndef HVNOISE_ANALYSIS_H
#define HVNOISE_ANALYSIS_H

#include <stdbool.h>
#include <stdint.h>

#include "hvn.h"

struct tep_handle;

enum hvn_ev {
	HVN_EV_OTHER,
	HVN_EV_WATCH,
	HVN_EV_STEAL,
	HVN_EV_LOST,
	HVN_EV_STORM_BEGIN,
	HVN_EV_STORM,
	HVN_EV_MIGRATE,
	HVN_EV_IRQ,		/* irq:irq_handler_entry */
	HVN_EV_RAW,		/* ftrace:raw_data (trace_marker_raw) */
	HVN_EV_NR
};

#define HVN_MAX_FIELDS	11

struct hvn_field {
	uint16_t off;
	uint16_t size;		/* 0: the format lacks the field */
	bool is_signed;
};

struct hvn_schema {
	uint8_t kind[65536];	/* event id -> enum hvn_ev */
	struct hvn_field f[HVN_EV_NR][HVN_MAX_FIELDS];
	int found;		/* how many of our events the formats hold */
};

/* Binds the formats in @tep; returns how many known events were found. */
int hvn_schema_bind(struct hvn_schema *s, struct tep_handle *tep);

enum hvn_ep_kind { HVN_EP_STEAL, HVN_EP_LOST, HVN_EP_STORM, HVN_EP_MIGRATE };

struct hvn_episode {
	uint8_t kind;		/* enum hvn_ep_kind */
	uint8_t source;		/* steal source, storm source, migrate how */
	int32_t cpu;		/* the CPU concerned (migrate: to-CPU) */
	int32_t cpu2;		/* migrate: from-CPU */
	int32_t irq;
	uint64_t start;		/* CLOCK_MONOTONIC ns, from the event */
	uint64_t dur;		/* ns; storm: ns; migrate: 0 */
	uint64_t a, b, c;	/* lost: unexplained, steal, irq; storm: count,
				 * peak rate; steal: window */
	char name[HVN_NAME_LEN + 1];
};

/* Upper bounds of the lost-episode histogram's buckets, ns (then +Inf). */
#define HVN_LOST_BUCKETS	13
extern const uint64_t hvn_lost_bucket_ns[HVN_LOST_BUCKETS];

struct hvn_cpu {
	bool seen;
	bool watched;
	uint8_t why;
	uint64_t steal_ns, steal_n;
	uint64_t lost_ns, lost_unexpl_ns, lost_steal_ns, lost_irq_ns, lost_n;
	uint64_t lost_hist[HVN_LOST_BUCKETS + 1];	/* per bucket; last: beyond */
	uint64_t storms, storm_irqs;
	uint64_t mig_in, mig_out;
	uint64_t irqs;			/* irq_handler_entry on this CPU */
	uint64_t records;		/* records in this CPU's buffer */
	struct hvn_episode worst[3];	/* steal, lost, storm; dur 0: none */
	char serves[48];		/* watched IRQ names */
};

struct hvn_watch_rec {
	uint8_t kind, why;
	int32_t cpu, irq, node;
	uint32_t dev, nirqs;
	char name[HVN_NAME_LEN + 1];
};

struct hvn_watch_pend;

struct hvn_clock_pair {
	uint64_t mono, real;
};

#define HVN_TOP_MAX	50

struct hvn_analysis {
	const struct hvn_schema *schema;
	uint64_t since, until;		/* window on event timestamps */
	int top_max;

	struct hvn_cpu *cpu;
	int ncpu;			/* allocated */
	int max_cpu;			/* highest CPU seen, -1 none */
	uint64_t records, in_window;
	uint64_t first_ts, last_ts;
	uint64_t bad_records;		/* too short for their format */
	uint64_t by_kind[HVN_EV_NR];

	struct hvn_episode top[HVN_TOP_MAX];
	int ntop;

	/* The watched set of generation watch_gen (after hvn_an_finish()):
	 * its newest whole set, its deltas applied. */
	struct hvn_watch_rec *watch;
	int nwatch, watch_cap;
	uint32_t watch_gen;
	bool watch_seen;
	bool watch_part;		/* that set came in part (so far) */
	/* Records not applied yet: newer sets and deltas, perhaps in part. */
	struct hvn_watch_pend *wpend;
	int npend, pend_cap;

	uint64_t *irq_count;		/* irq_handler_entry per IRQ number */
	int irq_cap;

	struct hvn_clock_pair *clk;
	int nclk, clk_cap;

	struct hvn_episode *mig;	/* every migration, unsorted */
	int nmig, mig_cap;
};

/* A steal, lost, irq_storm or irq_migrate record as an episode: returns
 * its enum hvn_ev kind (HVN_EV_OTHER and others leave @e empty), -1 for a
 * record too short for its format. */
int hvn_episode_decode(const struct hvn_schema *s, uint64_t ts,
		       const uint8_t *d, uint32_t len, struct hvn_episode *e);
int hvn_an_init(struct hvn_analysis *an, const struct hvn_schema *s);
void hvn_an_free(struct hvn_analysis *an);
void hvn_an_reset_counts(struct hvn_analysis *an);
void hvn_an_event(void *an, int cpu, uint64_t ts, const uint8_t *d,
		  uint32_t len);
void hvn_an_add_clock(struct hvn_analysis *an, uint64_t mono, uint64_t real);
/* CLOCK_REALTIME ns for a CLOCK_MONOTONIC one, or 0 without clock pairs. */
uint64_t hvn_an_mono_to_real(const struct hvn_analysis *an, uint64_t mono);
uint64_t hvn_an_real_to_mono(const struct hvn_analysis *an, uint64_t real);
/* "14:02:07.123456" (with @date, "2026-11-30 14:02:07.123456") for a
 * trace timestamp, or "mono 1234.567890" when the file has no clock pairs. */
void hvn_fmt_time(const struct hvn_analysis *an, uint64_t mono, char *buf,
		  size_t len, bool date);
/* ISO 8601 UTC, "2026-11-30T13:02:07.123456Z" (or "mono ..."). */
void hvn_fmt_utc(const struct hvn_analysis *an, uint64_t mono, char *buf,
		 size_t len);
void hvn_an_finish(struct hvn_analysis *an);

#endif
