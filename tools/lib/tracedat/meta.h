/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a recording says about itself: the header options trace-cmd writes
 * (uname, trace clock, per-CPU stats) and our own option 0x4856, a text of
 * "KEY VALUE" lines (Documentation/file-format.rst).  This file is the one
 * reader and the one writer of both.
 */
#ifndef HVNOISE_TRACEDAT_META_H
#define HVNOISE_TRACEDAT_META_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct hvn_tdat;

/* One CPU's ring-buffer statistics (per_cpu/cpuN/stats, CPUSTAT option). */
struct hvn_cpustat {
	int cpu;			/* -1 if the text names none */
	uint64_t entries, overrun, commit_overrun, dropped, read_events;
};

/* 0, or -1 if @text is not a stats text. */
int hvn_cpustat_parse(const char *text, struct hvn_cpustat *st);
/* Events the kernel lost: overwritten (overrun) or refused (dropped). */
static inline uint64_t hvn_cpustat_lost(const struct hvn_cpustat *st)
{
	return st->overrun + st->dropped;
}

struct hvn_meta_clock {
	uint64_t mono, real;
};

struct hvn_meta {
	char host[128], kernel[128], recorder[64], clock[32];
	char watched[256], devices[256];
	char source[16];		/* module, bpf, kernel; "" if unknown */
	/* The CPUs online when recorded (the last "online" line: a flight
	 * incident's are as it was written), a list; "" if unknown
	 * (an older recorder, or a list too long to keep). */
	char online[1024];
	char flight[128];		/* the flight recorder's trigger, or "" */
	/* Incidents the flight recorder could not write before this one,
	 * and the pages they held (lost). */
	uint64_t flight_unwritten, flight_unwritten_pages;
	/* When hvnoise.ko was not loaded (mono ns): no detector events. */
	struct hvn_meta_gap {
		uint64_t start, end;
	} gaps[16];
	int ngaps;			/* beyond 16: counted only */
	uint64_t overrun, dropped;	/* all CPUs, and BPF's ring */
	char overrun_cpus[256];		/* CPUs that lost events */
	uint64_t bpf_throttled, bpf_throttled_ns;
	uint64_t start;			/* recording start, mono ns; 0 unknown */
	struct hvn_meta_clock *clk;	/* (CLOCK_MONOTONIC, CLOCK_REALTIME) */
	int nclk;
};

/* Everything @t says about itself; 0 or -ENOMEM.  hvn_meta_free() after. */
int hvn_meta_read(struct hvn_meta *m, const struct hvn_tdat *t);
void hvn_meta_free(struct hvn_meta *m);

/* The UNAME option's text: "sysname nodename release version machine". */
void hvn_meta_uname(char *buf, size_t len);

/* Writers of the 0x4856 text. */
/* The CPUs online now ("online LIST"; the reader takes the last such
 * line): advise names no other. */
void hvn_meta_put_online(FILE *f);
void hvn_meta_put_clock(FILE *f);
/* Who recorded, where, from which source, watching what: the values a
 * session has (session.c hvn_session_meta()); NULL leaves a key out. */
struct hvn_meta_rec {
	const char *source, *source_why;
	const char *watched, *devices, *bpf_steal;
	const char *const *events;
	int nevents;
	const char *housekeeping;
};
void hvn_meta_put_recorder(FILE *f, const struct hvn_meta_rec *r);
/* What the BPF source lost: ring overflows, untracked IRQs, throttling
 * (@throttled times, @throttled_ns unsampled). */
void hvn_meta_put_bpf(FILE *f, uint64_t dropped, uint64_t untracked,
		      uint64_t throttled, uint64_t throttled_ns);
/* hvnoise.ko was unloaded from @start to @end (mono ns). */
void hvn_meta_put_gap(FILE *f, uint64_t start, uint64_t end);
/* An incident of the flight recorder: its trigger, --keep, and the
 * incidents (and their pages) it could not write since it started. */
void hvn_meta_put_flight(FILE *f, const char *why, double keep,
			 uint64_t unwritten, uint64_t unwritten_pages);

#endif
