/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host summary's format (Documentation/nccl.rst): "HVNSUMM1", then
 * records (inputs/recfile.h), each a packed little-endian body.  A reader
 * skips the types it does not know and takes the known prefix of a longer
 * body, so that newer writers only add types, or fields at a body's end.
 * This is its one reader and writer; what goes into a summary, and what
 * is made of one, is analysis/summary.c's.
 */
#ifndef HVNOISE_INPUTS_SUMMARY_H
#define HVNOISE_INPUTS_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hvn.h"
#include "inputs/recfile.h"

#define HVN_SUMMARY_MAGIC	"HVNSUMM1"	/* 8 bytes, at the start */

enum hvn_sum_type {
	HVN_SUM_HOST = 1, HVN_SUM_CLOCK, HVN_SUM_IRQCPU, HVN_SUM_PROC,
	HVN_SUM_COLL, HVN_SUM_STALL, HVN_SUM_EPISODE, HVN_SUM_COUNTS,
	HVN_SUM_SEEN,
	HVN_SUM_END,		/* last: what came before, counted */
};

/* What saw the host (hvn_corr.source and its counts). */
struct __attribute__((packed)) hvn_sum_seen {
	char source[16];
	uint64_t detector_events, irq_events;
};

/* HVN_SUM_END's body: a summary cut on a record boundary is still refused. */
struct __attribute__((packed)) hvn_sum_end {
	uint64_t nproc, ncoll, nst, nep;
};

struct __attribute__((packed)) hvn_sum_clock {
	uint64_t mono, real;
};

struct __attribute__((packed)) hvn_sum_proc {
	uint64_t comm, mono, real;
	int32_t rank, nranks, pid;
	uint8_t comm_digits;
	char host[33], name[33];
};

struct __attribute__((packed)) hvn_sum_coll {
	uint64_t comm, seq, nccl_start, start, end, median;
	int32_t rank, cpu, pcpu[4];
	uint8_t npcpu, func, is_p2p, dtype;
	int32_t peer;			/* added: older summaries lack it */
};

struct __attribute__((packed)) hvn_sum_episode {
	uint8_t kind, source;
	int32_t cpu, cpu2, irq;
	uint64_t start, dur, a, b, c;
	char name[HVN_NAME_LEN + 1];
};

struct __attribute__((packed)) hvn_sum_contrib {
	int32_t cpu, storm_irq, nmig;
	uint8_t why;
	double unexpl, lsteal, lirq, steal, storm, dev_storm, storm_top;
	char storm_name[HVN_NAME_LEN + 1];
	struct hvn_sum_episode mig;
};

/* A stall's CPUs follow its fixed part: a field for it needs a new type. */
struct __attribute__((packed)) hvn_sum_stall {
	uint32_t coll;
	int32_t cause, ncpu;
	uint64_t lost_ns;
	double explained;
	char verdict[160];
	/* then ncpu struct hvn_sum_contrib */
};

/* One record as read: its type and body, the known prefix of it. */
struct hvn_sum_rec {
	enum hvn_sum_type type;
	union {
		char host[129];		/* NUL-terminated */
		uint64_t counts[2];	/* NCCL records, and bad ones */
		struct hvn_sum_seen seen;
		struct hvn_sum_clock clk;
		int32_t cpu;		/* a CPU IRQs of the job went to */
		struct hvn_sum_proc proc;
		struct hvn_sum_coll coll;
		struct hvn_sum_stall stall;
		struct hvn_sum_episode ep;
		struct hvn_sum_end end;
	} u;
	/* HVN_SUM_STALL: its CPUs (unaligned: memcpy each), valid until the
	 * next record. */
	const struct hvn_sum_contrib *contrib;
};

struct hvn_sum_reader {
	struct hvn_recfile f;
	const char *path;
	bool ended;		/* its end record was read */
};

/* Whether @path begins as a summary does (false if it cannot be read). */
bool hvn_summary_is(const char *path);
/* 0, or HVN_EXIT_BADFILE with the reason said. */
int hvn_summary_open(struct hvn_sum_reader *r, const char *path);
/* The next record of a type this version knows: 1; 0 after the end
 * record, at the file's end; -1 with the record and its offset named. */
int hvn_summary_next(struct hvn_sum_reader *r, struct hvn_sum_rec *rec);
/* Say that the record last read is bad: @what it holds. */
void hvn_summary_bad(const struct hvn_sum_reader *r, const char *what);
/* Read on from the record at @off (its offset when it was read): 0, or
 * -1 with why said. */
int hvn_summary_seek(struct hvn_sum_reader *r, uint64_t off);
void hvn_summary_close(struct hvn_sum_reader *r);

/* Writing: the magic, then each record (@a, then @b: a stall's CPUs). */
int hvn_summary_start(FILE *f);
int hvn_summary_put(FILE *f, enum hvn_sum_type type, const void *a,
		    uint32_t alen, const void *b, uint32_t blen);

#endif
