/* SPDX-License-Identifier: GPL-2.0 */
/*
 * correlate's engine: which NCCL collectives stalled, and what host noise
 * on the CPUs that mattered explains each stall.
 *
 * Pass 1 reads the NCCL records (trace_marker_raw records in the trace,
 * and per-process files of the plugin's file mode, or PyTorch's files) and
 * the watched set; collectives end when their last proxy op or kernel
 * channel ends.  A stall is a collective slower than k times the rolling
 * median of its peers (same communicator, rank, function and size bucket);
 * a late rank is one that reaches a collective well after the other ranks.
 * Pass 2 streams the trace again and adds, for each stall, the overlap of
 * every lost, steal, storm and migration episode on its CPUs: the proxy
 * thread's CPUs, the enqueuing thread's CPU and the CPUs of the watched
 * devices' IRQs.  Memory holds the collectives, never the noise.
 */
#ifndef HVNOISE_ANALYSIS_STALLS_H
#define HVNOISE_ANALYSIS_STALLS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/episodes.h"

struct hvn_tdat;

struct hvn_proc {
	uint64_t comm;
	int32_t rank, nranks, pid;
	uint64_t mono, real;
	char host[33], name[33];
	const char *file;		/* the input file it came from, if any */
	uint64_t unc_ns;		/* how far its times may be off (its
					 * input's word): 0 exact, UINT64_MAX
					 * not known */
	uint8_t comm_digits;		/* comm is a prefix of this many hex digits */
};

struct hvn_contrib {
	int32_t cpu;
	uint8_t why;			/* 1 proxy, 2 enqueue, 4 IRQ */
	double unexpl, lsteal, lirq, steal, storm, dev_storm;
	int32_t storm_irq;
	char storm_name[HVN_NAME_LEN + 1];
	double storm_top;
	int nmig;
	struct hvn_episode mig;
};

struct hvn_coll {
	/* start: when its proxy work began (NCCL's start, when it has none);
	 * nccl_start: when NCCL started it, maybe queued behind others. */
	uint64_t comm, op_id, seq, start, nccl_start, enq, end, count;
	int32_t rank, cpu, peer;
	uint32_t tid;
	int32_t pcpu[4];
	uint8_t npcpu, func, is_p2p, dtype;
	uint32_t children;
	uint64_t median;
	int stall;			/* index into stalls + 1, or 0 */
};

struct hvn_stall {
	uint32_t coll;
	uint64_t lost_ns;		/* duration - median */
	/* Every CPU that served it (proxy, enqueue, each watched IRQ's
	 * CPU): no cap, a host may serve its NICs from any of them. */
	int ncpu, cpu_cap;
	struct hvn_contrib *c;
	char verdict[160];
	int cause;			/* 0 none, 1 hypervisor, 2 irq, 3 storm, 4 migration */
	double explained;		/* ns of it the cause explains */
};

struct hvn_agg {				/* a collective's children, joined */
	uint64_t comm, op_id;
	int32_t rank;
	bool used;
	uint64_t first, end;
	uint32_t n;
	int32_t cpus[4];
	uint8_t ncpu;
};

struct hvn_late {
	uint64_t comm, seq;
	uint8_t func;
	int32_t rank;
	double late_ms;
	int nranks;
};

/* A collective Flight Recorder saw scheduled or started, never completed:
 * what a hang leaves. */
struct hvn_unfinished {
	uint64_t comm, seq, start;	/* start: trace time */
	int64_t start_real;		/* CLOCK_REALTIME ns */
	int32_t rank;
	uint8_t func, is_p2p, state;	/* enum hvn_ext_state */
};

/* A rank that never scheduled a collective other ranks of its
 * communicator did (Flight Recorder's missing participant of a hang). */
struct hvn_unscheduled {
	uint64_t comm, seq;		/* the first collective it never had */
	int32_t rank, others;		/* ... and how many ranks had it */
};

/* A communicator's ranks that no input holds. */
struct hvn_missing {
	uint64_t comm;
	int32_t nranks, nseen;
	int32_t first_missing;
};

struct hvn_corr {
	const char *trace;		/* its path, for messages */
	const struct hvn_schema *schema;
	struct hvn_analysis an;
	struct hvn_coll *coll;
	size_t ncoll, coll_cap;
	struct hvn_agg *agg;
	size_t agg_cap, nagg;
	struct hvn_proc *proc;
	size_t nproc, proc_cap;
	struct hvn_stall *st;
	size_t nst;
	uint32_t *by_start;		/* stalls sorted by start */
	uint64_t max_stall_dur;
	uint8_t irq_cpu[HVN_MAX_CPUS];
	uint64_t nccl_records, nccl_bad, orphans;
	/* Collectives without a size in groups whose durations are of mixed
	 * operations: not judged for stalls. */
	uint64_t unjudged;
	/* What saw the host: the recording's source (module, bpf, kernel;
	 * "" unknown), and the detectors' records (watch, steal, lost,
	 * storms, moves) and the kernel's IRQ events read; UINT64_MAX
	 * detector events: not known (a summary older than the counts). */
	char source[16];
	/* The CPUs online when recorded (its metadata's list; ""
	 * unknown): what advice may name. */
	char online[1024];
	uint64_t detector_events, irq_events;
	struct hvn_late *late;
	size_t nlate;
	struct hvn_unfinished *unf;	/* by start */
	size_t nunf, unf_cap;
	/* With keep_episodes set before hvn_corr_open(): every lost, steal,
	 * storm and migration episode, for hvn_corr_probe() without the
	 * trace (correlate over many hosts, and their summaries). */
	bool keep_episodes;
	struct hvn_episode *ep;
	size_t nep, ep_cap;
	/* The communicators of other tools' files, and their ranks no file
	 * was given of (hvn_corr_analyse()). */
	struct hvn_missing *miss;
	size_t nmiss;
	/* In a communicator where some rank never completed a collective: the
	 * ranks that stopped before the others (hvn_corr_analyse()). */
	struct hvn_unscheduled *unsched;
	size_t nunsched;
};

struct hvn_corr_params {
	double k, min_ms, min_share;
	long window, top;
	double memory_mib;		/* the join's collectives held at once */
};

/* correlate's defaults (-k 3, --min-ms 1, --min-share 0.2, -w 32,
 * --top 20, --memory 512), which advise judges stalls with too. */
#define HVN_CORR_PARAMS_DEFAULT \
	{ .k = 3, .min_ms = 1, .min_share = 0.2, .window = 32, .top = 20, \
	  .memory_mib = 512 }

/* Where collectives come from besides the trace. */
enum hvn_corr_input {
	HVN_CORR_NCCL,			/* the plugin's files (HVNOISE_NCCL_DIR) */
	HVN_CORR_TORCH_FR,		/* PyTorch Flight Recorder dumps */
	HVN_CORR_KINETO,		/* PyTorch profiler traces */
	HVN_CORR_INSPECTOR,		/* NCCL Inspector output */
	HVN_CORR_INPUTS
};

/* Pass 1 over @t into a zeroed @x: 0; the trace's read error, an
 * HVN_EXIT_* code (what was read is kept: go on); or -ENOMEM (stop:
 * hvn_corr_free() only). */
int hvn_corr_open(struct hvn_corr *x, struct hvn_schema *schema,
		  struct hvn_tdat *t);
/* The collectives of one more file: 0 or an HVN_EXIT_* code. */
int hvn_corr_read(struct hvn_corr *x, enum hvn_corr_input kind,
		  const char *path);
/* Stalls, their causes (pass 2 over @t) and late ranks; stalls sorted by
 * time lost. */
void hvn_corr_analyse(struct hvn_corr *x, struct hvn_tdat *t,
		      const struct hvn_corr_params *p);
void hvn_corr_free(struct hvn_corr *x);
/* The ranks of each communicator none of @xs holds (with @files_only, of
 * the communicators read from other tools' files): their number, in a
 * malloc'd *@out, or -ENOMEM. */
long hvn_corr_missing(const struct hvn_corr *const *xs, size_t n,
		      bool files_only, struct hvn_missing **out);
/* Keep only the episodes on CPUs that serve a collective or a watched IRQ
 * (what a stall or a probe can be charged with). */
void hvn_corr_trim_episodes(struct hvn_corr *x);

/*
 * The noise on the CPUs of collective @coll (its proxy, enqueuing and IRQ
 * CPUs) over [@start, @end) of trace time, judged as a stall is: another
 * pass over @t after hvn_corr_analyse(), or over the kept episodes when
 * @t is NULL.  0 or -ENOMEM.
 */
int hvn_corr_probe(struct hvn_corr *x, struct hvn_tdat *t,
		   const struct hvn_corr_params *p, uint32_t coll,
		   uint64_t start, uint64_t end, struct hvn_stall *out);

/* What a stall owns (its CPUs), freed; the stall left empty of them. */
void hvn_stall_release(struct hvn_stall *s);
/* Room for @n CPUs in @s: 0 or -ENOMEM. */
int hvn_stall_reserve(struct hvn_stall *s, int n);

/* One collective on every rank: the order by communicator, function and
 * sequence number (rank left out); 0 for the same collective. */
int hvn_coll_key_cmp(const struct hvn_coll *a, const struct hvn_coll *b);
/* NCCL's name of a function code (include/hvnoise/nccl.h). */
const char *hvn_nccl_fn(unsigned int fn);
/* The process of rank @rank in communicator @comm, or NULL. */
const struct hvn_proc *hvn_corr_proc_of(const struct hvn_corr *x,
					uint64_t comm, int32_t rank);
/* When NCCL started @c, on CLOCK_REALTIME through its rank's clock pair
 * (trace time if the rank is unknown). */
int64_t hvn_corr_real_of(const struct hvn_corr *x, const struct hvn_coll *c);

/* Array growth (exits when out of memory), and a proxy op or kernel
 * channel of a collective. */
void *hvn_corr_grow(void *p, size_t *cap, size_t n, size_t size);
void hvn_corr_add_child(struct hvn_corr *x, uint64_t comm, int32_t rank,
			uint64_t op_id, uint64_t start, uint64_t end,
			int32_t cpu, int32_t cpu_end);

#endif
