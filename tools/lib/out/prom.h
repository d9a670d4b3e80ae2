/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Counters of an analysis in the Prometheus text exposition format (0.0.4),
 * shared by hvnoise report --prom (node_exporter's textfile collector) and
 * hvnoise exporter (GET /metrics).
 */
#ifndef HVNOISE_PROM_H
#define HVNOISE_PROM_H

#include <stdint.h>
#include <stdio.h>

struct hvn_analysis;

struct hvn_prom_info {
	uint64_t overrun_events;	/* the kernel overwrote or dropped */
	uint64_t missed_pages;		/* pages read after lost events */
	uint64_t bad_pages;		/* unreadable pages */
	/* Where the detector events come from ("module", "bpf", "kernel";
	 * NULL or "": not known), whether hvnoise.ko was loaded (-1: not
	 * known), and when these counters were last brought up to date
	 * (CLOCK_REALTIME ns; 0: not known): the exporter's now, a
	 * recording's end. */
	const char *source;
	int module_loaded;
	uint64_t updated_real;
};

void hvn_prom_write(FILE *f, const struct hvn_analysis *an,
		    const struct hvn_prom_info *pi);

#endif
