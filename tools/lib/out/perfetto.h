/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Chrome trace events (the JSON that ui.perfetto.dev and Perfetto's
 * trace_processor open): the one writer of correlate's and report's
 * pictures.  Every name is written JSON-escaped; tracks are named.
 */
#ifndef HVNOISE_OUT_PERFETTO_H
#define HVNOISE_OUT_PERFETTO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct hvn_analysis;
struct hvn_corr;
struct hvn_episode;
struct hvn_fleet;
struct hvn_schema;
struct hvn_tdat;

struct hvn_pf {
	FILE *o;
	const char *path;
	uint8_t *named;			/* CPU tracks named, by pid's CPU */
	int named_pid;
};

/* Thread ids of the CPU tracks, past any rank's. */
#define HVN_PF_CPU_TID	1000000

/* 0, or HVN_EXIT_FAIL with the reason said. */
int hvn_pf_open(struct hvn_pf *p, const char *path);
int hvn_pf_close(struct hvn_pf *p);
/* A process's name (@tid < 0), or a track's. */
void hvn_pf_name(struct hvn_pf *p, int pid, int tid, const char *name);
/* A slice; @args: a JSON object's members (numbers only), or NULL. */
void hvn_pf_slice(struct hvn_pf *p, int pid, int tid, double ts_us,
		  double dur_us, const char *name, const char *args);
/* An arrow from the slice at (@pid0, @tid0, @ts0) to the one enclosing
 * (@pid1, @tid1, @ts1). */
void hvn_pf_flow(struct hvn_pf *p, uint64_t id, const char *name, int pid0,
		 int tid0, double ts0, int pid1, int tid1, double ts1);
/* A noise episode on its CPU's track of process @pid (named "CPU N" the
 * first time), at @ts_us. */
void hvn_pf_episode(struct hvn_pf *p, int pid, const struct hvn_episode *e,
		    double ts_us);
/* Every noise episode of @t (in @an's window) on process @pid, on
 * CLOCK_REALTIME through @an's clock pairs: 0 or the stream's error. */
int hvn_pf_noise(struct hvn_pf *p, struct hvn_tdat *t,
		 const struct hvn_schema *s, const struct hvn_analysis *an,
		 int pid);

/* @x's collectives, one track per rank, and the noise of @t, one track per
 * CPU, into the file @out: 0 or HVN_EXIT_FAIL. */
int hvn_corr_write_perfetto(struct hvn_corr *x, struct hvn_tdat *t,
			    const char *out);
/* Every host a process: a track per rank (its collectives) and per CPU
 * (its noise), on the reference host's clock, and an arrow from each
 * culprit's noise to the stall it caused: 0 or HVN_EXIT_FAIL. */
int hvn_fleet_write_perfetto(const struct hvn_fleet *f, const char *out);

#endif
