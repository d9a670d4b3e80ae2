/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tracing session of record or top: our own tracefs instance with the
 * events enabled, read a page at a time per CPU.  The instance is removed
 * on every exit path (atexit), never touching the top-level buffer.
 */
#ifndef HVNOISE_SESSION_H
#define HVNOISE_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "hvn.h"
#include "loader.h"

struct tracefs_instance;
struct tracefs_cpu;
struct tep_handle;

struct hvn_session_opts {
	const char *prefix;		/* instance name prefix */
	char **events;			/* SYS or SYS:EVENT; NULL: defaults */
	int nevents;
	const char *cpus;		/* module cpus= to set, or NULL */
	const char *devices;		/* module devices= to set, or NULL */
	int buffer_kb;			/* per CPU, 0: kernel default */
	const char *source;		/* "module", "bpf", "kernel", NULL: auto */
	struct hvn_bpf_cfg bpf;		/* --param, for the BPF source */
	char **params;			/* --param NAME=VALUE, as given */
	int nparams;
	const char *housekeeping;	/* where the tool runs; NULL: auto */
};

/* Where the detector events come from. */
enum hvn_source { HVN_SRC_MODULE, HVN_SRC_BPF, HVN_SRC_KERNEL };
extern const char *const hvn_source_names[];

struct hvn_session {
	struct tracefs_instance *inst;
	char name[64];
	const char *tdir;
	char **systems;			/* systems with enabled events */
	int nsystems;
	char **enabled;			/* "sys:event" or "sys" as enabled */
	int nenabled;
	int ncpus;
	struct tracefs_cpu **tcpu;
	/* CPUs possible but never online have no buffer (reads: ENODEV):
	 * probed again once a second, in case one comes online. */
	bool *nobuf;
	uint64_t nobuf_probe;
	uint32_t page_size;
	unsigned long filter_cpus[HVN_MAX_CPUS / (8 * sizeof(long))];
	bool have_filter;		/* kernel events of filter_cpus only */
	bool module;
	enum hvn_source source;
	char source_why[256];		/* why this source was chosen */
	struct hvn_bpf *bpf;		/* the BPF source, when chosen */
	/* The module's parameters this session changed, and their values
	 * before: hvn_session_end() puts them back. */
	char **saved_name, **saved_val;
	int nsaved;
	/* hvnoise.ko under the session (hvn_session_module_check()): when
	 * its events were last seen enabled, and whether they are gone. */
	uint64_t mod_seen;
	bool mod_gone;
	bool mod_quiet;			/* the caller says it */
	bool mod_renumbered;		/* its event ids changed at the reload */
	char *mod_ids;			/* its events' ids at the start */
};

/* 0 or an HVN_EXIT_* code, with the reason printed. */
int hvn_session_check_access(void);
/* The options record and top share (-e, --cpus, --devices, -b, --source,
 * --param): 1 taken, 0 not one of them, -1 a bad value (printed). */
enum hvn_session_opt {
	HVN_SO_CPUS, HVN_SO_DEVICES, HVN_SO_EVENT, HVN_SO_BUFFER,
	HVN_SO_SOURCE, HVN_SO_PARAM, HVN_SO_HOUSEKEEPING,
};
int hvn_session_opt(struct hvn_session_opts *o, int opt, const char *arg);
/* Those options, as a command's second table (struct hvn_cmd's @more). */
extern const struct hvn_opt hvn_session_options[];
/* The session, as the recording describes itself (tracedat/meta.h). */
void hvn_session_put_meta(FILE *f, const struct hvn_session *s,
			  const struct hvn_session_opts *o);
void hvn_session_put_bpf_meta(FILE *f, const struct hvn_bpf *b);
/* The CPUs the tool runs on since the first session started ("" if it was
 * not pinned), and the CPU mask it had before: a command it runs gets that
 * back (hvn_unpin(), in the child). */
const char *hvn_housekeeping(void);
/* The CPUs this process may run on that are in @map (HVN_MAX_CPUS bits),
 * or not in it (@invert), into @out; how many, or -1. */
int hvn_cpus_allowed(const unsigned long *map, bool invert,
		     unsigned long *out);
void hvn_unpin(void);
/*
 * hvnoise.ko unloaded, or unloaded and loaded again, under a running
 * session: the kernel takes a module's events out of every instance and
 * brings them back disabled.  Call it every poll: it says so once
 * (HVN_MOD_GONE), and when the module is back enables the session's
 * hvnoise events again (HVN_MOD_BACK) and gives the gap, in
 * CLOCK_MONOTONIC ns, during which no detector event could come.
 */
enum { HVN_MOD_SAME, HVN_MOD_GONE, HVN_MOD_BACK };
/* The watched set emitted whole again into the session (hvnoise.ko's goes
 * into every buffer recording hvnoise:watch). */
void hvn_session_emit_watch(struct hvn_session *s);
int hvn_session_module_check(struct hvn_session *s, uint64_t *gap_start,
			     uint64_t *gap_end);
/* What hvn_session_module_check() says unless mod_quiet: for a caller
 * that has more than one session to set right before it says so. */
void hvn_session_module_say(const struct hvn_session *s, int what,
			    uint64_t gap_start, uint64_t gap_end);
/* Whether the instance @name is "@prefix-PID": 0 not, PID if that process
 * lives, -PID if it is gone (killed, its instance left behind). */
int hvn_instance_pid(const char *name, const char *prefix);
/* The PID of a live process with an instance "@prefix-PID", 0 if none,
 * -1 if tracefs cannot be read (not root). */
int hvn_session_live(const char *prefix);
/* Remove the instances "@prefix-PID" whose process is gone (a service
 * restarted after a kill); how many, said on stderr. */
int hvn_session_reap(const char *prefix);
/* What hvn_session_opt() allocated. */
void hvn_session_opts_free(struct hvn_session_opts *o);
/* Which source "auto" picks here, and why (for status). */
enum hvn_source hvn_source_auto(char *why, size_t len);
int hvn_session_start(struct hvn_session *s,
		      const struct hvn_session_opts *o);
/* One page of @cpu into @page (page_size bytes): 1, 0 if none, -1. */
int hvn_session_read(struct hvn_session *s, int cpu, void *page);
int hvn_session_stop(struct hvn_session *s);
char *hvn_session_cpustat(struct hvn_session *s, int cpu);
/* A libtraceevent handle holding the formats of the enabled systems. */
struct tep_handle *hvn_session_tep(struct hvn_session *s);
void hvn_session_end(struct hvn_session *s);

#endif
