/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace.dat files (trace-cmd.dat(5), versions 6 and 7): a streaming reader
 * that never holds more than a chunk of event data, and the version 6
 * writer behind hvnoise record.
 */
#ifndef HVNOISE_TRACEDAT_H
#define HVNOISE_TRACEDAT_H

#include <stdbool.h>
#include <stdint.h>

#include "tracedat/pages.h"

struct tep_handle;

/* Option ids of trace-cmd.dat(5). */
#define TDAT_OPT_DONE		0
#define TDAT_OPT_DATE		1
#define TDAT_OPT_CPUSTAT	2
#define TDAT_OPT_BUFFER		3
#define TDAT_OPT_TRACECLOCK	4
#define TDAT_OPT_UNAME		5
#define TDAT_OPT_OFFSET		7
#define TDAT_OPT_CPUCOUNT	8
#define TDAT_OPT_VERSION	9
#define TDAT_OPT_TSC2NSEC	14
#define TDAT_OPT_HEADER_INFO	16
#define TDAT_OPT_FTRACE_EVENTS	17
#define TDAT_OPT_EVENT_FORMATS	18
#define TDAT_OPT_KALLSYMS	19
#define TDAT_OPT_PRINTK		20
#define TDAT_OPT_CMDLINES	21

struct hvn_tdat_cpu {
	int cpu;
	uint64_t off, size;
};

struct hvn_tdat {
	const char *path;
	int fd;
	uint64_t fsize;
	int version;
	uint32_t page_size;
	uint32_t commit_size;
	char comp[32];			/* v7 compression, "none" */
	struct tep_handle *tep;
	int ncpus;
	struct hvn_tdat_cpu *cpus;	/* flyrecord data, all buffers */
	int ncpu_data;
	char *uname, *clock, *meta;
	/* trace-cmd's OFFSET (ns, summed) and TSC2NSEC (a raw counter's
	 * ns: mult, shift) options, applied to every event's time. */
	int64_t ts_offset;
	uint32_t tsc_mult, tsc_shift;
	char **cpustat;
	int ncpustat;
	int bad_formats;		/* event formats libtraceevent refused */
	char stopped[256];		/* where streaming stopped early */
};

/* 0, or HVN_EXIT_BADFILE / HVN_EXIT_FAIL with the reason printed. */
int hvn_tdat_open(struct hvn_tdat *t, const char *path);
/* Feeds every page to @rb; returns 0, or HVN_EXIT_BADFILE after reading
 * what could be read (t->stopped says where and why). */
int hvn_tdat_stream(struct hvn_tdat *t, struct hvn_rb *rb);
void hvn_tdat_close(struct hvn_tdat *t);

struct hvn_tdat_writer;
struct hvn_tdat_meta {
	const char *uname;
	const char *clock;		/* content of trace_clock */
	const char *meta;		/* HVN_OPTION_META text */
	char **cpustat;			/* per CPU, may be NULL entries */
	int ncpus;
	bool hvnoise_formats;		/* add the hvnoise system from
					 * tracedat/evformat.h (the BPF source's) */
};

/* Assembles a version 6 file at @path from the tracefs formats of the
 * given event systems and the per-CPU page files. */
int hvn_tdat_write(const char *path, const char *tracing_dir,
		   char *const *systems, int nsystems,
		   const struct hvn_tdat_meta *m, char *const *cpu_files,
		   uint32_t page_size);

#endif
