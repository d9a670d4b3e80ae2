// SPDX-License-Identifier: GPL-2.0
/*
 * libnccl-profiler-hvnoise.so: NCCL's collectives, proxy operations and
 * kernel channels, timestamped with CLOCK_MONOTONIC and the thread and CPU
 * that saw them, written into the ftrace ring buffer (trace_marker_raw) so
 * they share hvnoise record's trace and clock, or into a per-process file.
 *
 * On NCCL's paths: no lock, no allocation (preallocated pools of event
 * slots taken with atomics), one write() per finished operation in marker
 * mode, a per-thread buffer in file mode.  A collective's slot stays
 * readable after NCCL stops it, until the pool comes round to it again:
 * its proxy ops and kernel channels may start after the stop, on the proxy
 * thread, and copy its op_id and seq then.  It never fails NCCL: every
 * function returns success; a problem is logged once and turns recording
 * off (or, for a recorder that is not running, drops the records).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hvnoise/clockpair.h"
#include "hvnoise/nccl.h"
#include "nccl_abi.h"
#include "trigger.h"

#define POOL		(1 << 15)	/* proxy ops, steps, channels in flight */
#define CPOOL		(1 << 14)	/* collectives, reused round-robin */
#define TBUFS		256		/* threads with a file buffer */
#define TBUF_SIZE	(256 << 10)
#define EXPORT		__attribute__((visibility("default")))

enum { MODE_OFF, MODE_MARKER, MODE_FILE };
enum { K_COLL = 1, K_PROXYOP, K_STEP, K_KERNCH };

struct comm_ctx {
	uint64_t comm;
	int rank;
};

/* Slot states: a stopped collective can still be read by its children. */
enum { S_FREE, S_USED, S_STOPPED };

struct ev {
	atomic_uint used;
	uint8_t kind;
	struct comm_ctx *ctx;
	struct ev *parent;
	int state;			/* step: current wait state, -1 none */
	uint64_t state_ns;
	union {
		struct hvn_nccl_coll coll;
		struct hvn_nccl_proxyop op;
		struct hvn_nccl_kernch kch;
	};
};

struct tbuf {
	atomic_uint taken;
	atomic_size_t len;
	char data[TBUF_SIZE];
};

static struct ev pool[POOL], cpool[CPOOL];
static atomic_uint pool_next, cpool_next;
static atomic_ullong op_ids;
static struct tbuf tbufs[TBUFS];
static atomic_uint tbuf_next;
static __thread struct tbuf *my_tbuf;
static __thread uint32_t my_tid;

static int mode = MODE_OFF;
static int out_fd = -1;
static int act_mask;
static nccl_logger_t logger;
static atomic_int warned;
static atomic_ullong dropped;
static atomic_int ncomms;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool configured;
/* The flight recorder's trigger file, touched on a stall (HVNOISE_NCCL_TRIGGER). */
static const char *trigger_path;
static uint64_t stall_ns;
static atomic_ullong last_trigger_ns;

#define warn_once(...)							\
	do {								\
		if (!atomic_exchange(&warned, 1) && logger)		\
			logger(NCCL_LOG_WARN, NCCL_SUBSYS_PROFILE,	\
			       __FILE__, __LINE__, __VA_ARGS__);	\
	} while (0)

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline uint32_t tid(void)
{
	if (!my_tid)
		my_tid = syscall(SYS_gettid);
	return my_tid;
}

static uint8_t func_code(const char *f)
{
	static const char *const names[HVN_FN_N] = {
		[HVN_FN_ALLGATHER] = "AllGather", [HVN_FN_ALLREDUCE] = "AllReduce",
		[HVN_FN_ALLTOALL] = "AlltoAll", [HVN_FN_BROADCAST] = "Broadcast",
		[HVN_FN_GATHER] = "Gather", [HVN_FN_RECV] = "Recv",
		[HVN_FN_REDUCE] = "Reduce",
		[HVN_FN_REDUCESCATTER] = "ReduceScatter",
		[HVN_FN_SCATTER] = "Scatter", [HVN_FN_SENDRECV] = "SendRecv",
		[HVN_FN_SEND] = "Send", [HVN_FN_COALESCED] = "Coalesced",
	};

	for (int i = 1; f && i < HVN_FN_N; i++)
		if (!strcmp(f, names[i]))
			return i;
	return HVN_FN_UNKNOWN;
}

static uint8_t dtype_bytes(const char *t)
{
	if (!t || strncmp(t, "nccl", 4))
		return 0;
	t += 4;
	if (!strcmp(t, "Int8") || !strcmp(t, "Uint8") || !strncmp(t, "Float8", 6))
		return 1;
	if (!strcmp(t, "Float16") || !strcmp(t, "Bfloat16"))
		return 2;
	if (!strcmp(t, "Int32") || !strcmp(t, "Uint32") || !strcmp(t, "Float32"))
		return 4;
	if (!strcmp(t, "Int64") || !strcmp(t, "Uint64") || !strcmp(t, "Float64"))
		return 8;
	return 0;
}

/* --- output ------------------------------------------------------------- */

static void file_flush(struct tbuf *b)
{
	size_t len = atomic_load(&b->len);

	if (len && write(out_fd, b->data, len) != (ssize_t)len) {
		warn_once("hvnoise profiler: writing its file failed (%s); recording off",
			  strerror(errno));
		mode = MODE_OFF;
	}
	atomic_store(&b->len, 0);
}

static void emit(uint32_t type, const void *rec, size_t size)
{
	char buf[256];

	if (mode == MODE_MARKER) {
		uint32_t id = HVN_NCCL_ID(type);

		memcpy(buf, &id, 4);
		memcpy(buf + 4, rec, size);
		if (write(out_fd, buf, size + 4) < 0) {
			/* EBADF: no recorder has tracing on; not an error. */
			if (errno != EBADF && errno != EINTR) {
				warn_once("hvnoise profiler: trace_marker_raw write failed (%s); recording off",
					  strerror(errno));
				mode = MODE_OFF;
			}
			atomic_fetch_add(&dropped, 1);
		}
		return;
	}
	if (mode != MODE_FILE)
		return;
	if (!my_tbuf) {
		unsigned int i = atomic_fetch_add(&tbuf_next, 1);

		if (i >= TBUFS) {
			atomic_fetch_add(&dropped, 1);
			warn_once("hvnoise profiler: more than %d threads; records of the others dropped",
				  TBUFS);
			return;
		}
		my_tbuf = &tbufs[i];
		atomic_store(&my_tbuf->taken, 1);
	}

	struct hvn_nccl_file_rec h = { .id = HVN_NCCL_ID(type), .size = size };
	size_t len = atomic_load(&my_tbuf->len);

	if (len + sizeof(h) + size > TBUF_SIZE) {
		file_flush(my_tbuf);
		len = 0;
	}
	memcpy(my_tbuf->data + len, &h, sizeof(h));
	memcpy(my_tbuf->data + len + sizeof(h), rec, size);
	atomic_store(&my_tbuf->len, len + sizeof(h) + size);
}

/* --- the event pool ------------------------------------------------------ */

static struct ev *ev_alloc(uint8_t kind, struct comm_ctx *ctx)
{
	bool coll = kind == K_COLL;

	for (int tries = 0; tries < 64; tries++) {
		unsigned int i = atomic_fetch_add(coll ? &cpool_next : &pool_next, 1);
		struct ev *e = coll ? &cpool[i % CPOOL] : &pool[i % POOL];
		unsigned int st = S_FREE;

		if (atomic_compare_exchange_strong(&e->used, &st, S_USED) ||
		    (coll && st == S_STOPPED &&
		     atomic_compare_exchange_strong(&e->used, &st, S_USED))) {
			e->kind = kind;
			e->ctx = ctx;
			e->parent = NULL;
			e->state = -1;
			return e;
		}
	}
	atomic_fetch_add(&dropped, 1);
	warn_once("hvnoise profiler: more than %d events in flight; some dropped",
		  coll ? CPOOL : POOL);
	return NULL;
}

/* Our event behind a handle NCCL passes back, or NULL. */
static inline struct ev *handle_ev(void *h)
{
	struct ev *e = h;

	if (!((e >= pool && e < pool + POOL) || (e >= cpool && e < cpool + CPOOL)))
		return NULL;
	return atomic_load(&e->used) == S_USED ? e : NULL;
}

static void ev_free(struct ev *e)
{
	atomic_store(&e->used, e->kind == K_COLL ? S_STOPPED : S_FREE);
}

/* --- configuration ------------------------------------------------------- */

static int parse_events(const char *s, int *mask)
{
	char buf[256], *tok, *save;

	*mask = NCCL_EV_COLL | NCCL_EV_P2P | NCCL_EV_PROXYOP |
		NCCL_EV_PROXYSTEP | NCCL_EV_KERNELCH;
	if (!s || !*s)
		return 0;
	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	*mask = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "coll"))
			*mask |= NCCL_EV_COLL | NCCL_EV_P2P;
		else if (!strcmp(tok, "proxyop"))
			*mask |= NCCL_EV_PROXYOP;
		else if (!strcmp(tok, "step"))
			*mask |= NCCL_EV_PROXYOP | NCCL_EV_PROXYSTEP;
		else if (!strcmp(tok, "kernelch"))
			*mask |= NCCL_EV_KERNELCH;
		else if (!strcmp(tok, "all"))
			*mask |= NCCL_EV_COLL | NCCL_EV_P2P | NCCL_EV_PROXYOP |
				 NCCL_EV_PROXYSTEP | NCCL_EV_KERNELCH;
		else if (strcmp(tok, "none"))
			return -1;
	}
	return 0;
}

static int open_marker(void)
{
	const char *dir = getenv("HVNOISE_NCCL_TRACEFS");
	static const char *const dflt[] = { "/sys/kernel/tracing",
					    "/sys/kernel/debug/tracing" };
	char path[PATH_MAX];

	for (unsigned int i = 0; i < (dir ? 1 : 2); i++) {
		snprintf(path, sizeof(path), "%s/trace_marker_raw",
			 dir ? dir : dflt[i]);
		out_fd = open(path, O_WRONLY | O_CLOEXEC);
		if (out_fd >= 0)
			return 0;
	}
	return -1;
}

static int open_file(const char *dir)
{
	char path[PATH_MAX], host[64] = "";

	gethostname(host, sizeof(host) - 1);
	snprintf(path, sizeof(path), "%s/hvnoise-nccl-%s-%d.bin", dir, host,
		 getpid());
	out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
		      0644);
	if (out_fd < 0)
		return -1;
	if (write(out_fd, HVN_NCCL_FILE_MAGIC, 8) != 8) {
		close(out_fd);
		out_fd = -1;
		return -1;
	}
	return 0;
}

/* Once per process: the mode, the output and the events to record. */
static void configure(void)
{
	const char *dir = getenv("HVNOISE_NCCL_DIR");
	const char *ev = getenv("HVNOISE_NCCL_EVENTS");
	const char *trig = getenv("HVNOISE_NCCL_TRIGGER");
	const char *stall = getenv("HVNOISE_NCCL_STALL_MS");

	configured = true;
	if (trig && *trig) {
		char *end = NULL;
		double ms = stall && *stall ? strtod(stall, &end) : 100;

		if ((end && *end) || !(ms >= 0.01 && ms <= 3600000)) {
			warn_once("hvnoise profiler: HVNOISE_NCCL_STALL_MS=\"%s\" is not 0.01..3600000 ms; no stall trigger",
				  stall);
		} else {
			trigger_path = trig;
			stall_ns = ms * 1e6;
		}
	}
	if (parse_events(ev, &act_mask)) {
		warn_once("hvnoise profiler: HVNOISE_NCCL_EVENTS=\"%s\" is not a list of coll, proxyop, step, kernelch, all, none; recording off",
			  ev);
		act_mask = 0;
		return;
	}
	if (dir && *dir) {
		if (open_file(dir)) {
			warn_once("hvnoise profiler: cannot write in HVNOISE_NCCL_DIR=%s (%s); recording off",
				  dir, strerror(errno));
			act_mask = 0;
			return;
		}
		mode = MODE_FILE;
	} else if (!open_marker()) {
		mode = MODE_MARKER;
	} else {
		warn_once("hvnoise profiler: cannot open trace_marker_raw (%s); set HVNOISE_NCCL_DIR to record into files; recording off",
			  strerror(errno));
		act_mask = 0;
		return;
	}
	if (logger)
		logger(NCCL_LOG_INFO, NCCL_SUBSYS_INIT, __FILE__, __LINE__,
		       "hvnoise profiler: recording into %s",
		       mode == MODE_FILE ? dir : "trace_marker_raw");
}

static nccl_result_t init_common(void **ctx, uint64_t comm, int *mask,
				 const char *name, int nnodes, int nranks,
				 int rank, nccl_logger_t log)
{
	struct comm_ctx *c;
	struct hvn_nccl_comm rec = { 0 };

	pthread_mutex_lock(&init_lock);
	if (!logger)
		logger = log;
	if (!configured)
		configure();
	pthread_mutex_unlock(&init_lock);
	*ctx = NULL;
	if (mask)
		*mask = act_mask;
	if (mode == MODE_OFF)
		return NCCL_SUCCESS;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NCCL_SUCCESS;
	c->comm = comm;
	c->rank = rank;
	*ctx = c;
	atomic_fetch_add(&ncomms, 1);

	rec.comm = comm;
	rec.rank = rank;
	rec.nranks = nranks;
	rec.nnodes = nnodes;
	rec.pid = getpid();
	hvn_clock_pair(CLOCK_MONOTONIC, &rec.mono_ns, &rec.real_ns);
	snprintf(rec.name, sizeof(rec.name), "%s", name ? name : "");
	gethostname(rec.host, sizeof(rec.host) - 1);
	emit(HVN_NCCL_COMM, &rec, sizeof(rec));
	return NCCL_SUCCESS;
}

static nccl_result_t init_v5(void **ctx, uint64_t comm, int *mask,
			     const char *name, int nnodes, int nranks, int rank,
			     nccl_logger_t log)
{
	return init_common(ctx, comm, mask, name, nnodes, nranks, rank, log);
}

static nccl_result_t init_v4(void **ctx, int *mask, const char *name,
			     uint64_t comm, int nnodes, int nranks, int rank,
			     nccl_logger_t log)
{
	return init_common(ctx, comm, mask, name, nnodes, nranks, rank, log);
}

/* --- events ---------------------------------------------------------------- */

static void start_coll(struct comm_ctx *ctx, void **h,
		       const struct nccl_event_descr_v6 *d, bool v4)
{
	struct ev *e = ev_alloc(K_COLL, ctx);
	struct hvn_nccl_coll *c;

	if (!e)
		return;
	c = &e->coll;
	memset(c, 0, sizeof(*c));
	c->comm = ctx->comm;
	c->op_id = atomic_fetch_add(&op_ids, 1) + 1;
	c->start_ns = now_ns();
	c->rank = ctx->rank;
	c->tid = tid();
	c->cpu = sched_getcpu();
	if (d->type == NCCL_EV_COLL) {
		c->seq = d->coll.seq;
		c->func = func_code(d->coll.func);
		c->count = d->coll.count;
		c->peer = d->coll.root;
		c->dtype_bytes = dtype_bytes(d->coll.datatype);
		c->nchannels = d->coll.nchannels;
		snprintf(c->algo, sizeof(c->algo), "%s",
			 d->coll.algo ? d->coll.algo : "");
		snprintf(c->proto, sizeof(c->proto), "%s",
			 d->coll.proto ? d->coll.proto : "");
	} else {
		c->is_p2p = 1;
		c->func = func_code(d->p2p.func);
		c->count = d->p2p.count;
		c->peer = d->p2p.peer;
		c->dtype_bytes = dtype_bytes(d->p2p.datatype);
		/* NCCL's v4 adapter leaves p2p.nChannels unset. */
		c->nchannels = v4 ? 0 : d->p2p.nchannels;
		c->seq = UINT64_MAX;	/* p2p carry no sequence number */
	}
	*h = e;
}

/* The collective of a proxy op or kernel channel: only when it is ours
 * (with PXN the parent belongs to another process), stopped or not. */
static struct ev *coll_parent(void *parent, pid_t pid)
{
	struct ev *p = parent;

	if (p < cpool || p >= cpool + CPOOL || atomic_load(&p->used) == S_FREE ||
	    (pid && pid != getpid()))
		return NULL;
	return p;
}

static void child_of(struct ev *p, struct comm_ctx *ctx, uint64_t *op_id,
		     uint64_t *seq, uint8_t *func, int32_t *rank)
{
	*op_id = p ? p->coll.op_id : 0;
	*seq = p ? p->coll.seq : UINT64_MAX;
	*func = p ? p->coll.func : 0;
	*rank = p ? p->coll.rank : ctx->rank;
}

static nccl_result_t start_event(void *vctx, void **h, const struct nccl_event_descr_v6 *d,
				 bool v4)
{
	struct comm_ctx *ctx = vctx;
	struct ev *e;

	*h = NULL;		/* always: NCCL reuses stale handles otherwise */
	if (!ctx || mode == MODE_OFF)
		return NCCL_SUCCESS;
	switch (d->type) {
	case NCCL_EV_COLL:
	case NCCL_EV_P2P:
		start_coll(ctx, h, d, v4);
		break;
	case NCCL_EV_PROXYOP:
		e = ev_alloc(K_PROXYOP, ctx);
		if (!e)
			break;
		memset(&e->op, 0, sizeof(e->op));
		child_of(coll_parent(d->parent, d->proxyop.pid), ctx,
			 &e->op.op_id, &e->op.seq, &e->op.func, &e->op.rank);
		e->op.comm = ctx->comm;
		e->op.start_ns = now_ns();
		e->op.tid = tid();
		e->op.cpu = sched_getcpu();
		e->op.peer = d->proxyop.peer;
		e->op.nsteps = d->proxyop.nsteps;
		e->op.chunk = d->proxyop.chunk;
		e->op.channel = d->proxyop.channel;
		e->op.is_send = d->proxyop.is_send;
		*h = e;
		break;
	case NCCL_EV_PROXYSTEP:
		e = ev_alloc(K_STEP, ctx);
		if (!e)
			break;
		e->parent = handle_ev(d->parent);
		if (e->parent && e->parent->kind != K_PROXYOP)
			e->parent = NULL;
		*h = e;
		break;
	case NCCL_EV_KERNELCH:
		e = ev_alloc(K_KERNCH, ctx);
		if (!e)
			break;
		memset(&e->kch, 0, sizeof(e->kch));
		child_of(coll_parent(d->parent, 0), ctx, &e->kch.op_id,
			 &e->kch.seq, &e->kch.func, &e->kch.rank);
		e->kch.comm = ctx->comm;
		e->kch.start_ns = now_ns();
		e->kch.gpu_start = d->kernelch.ptimer;
		e->kch.tid = tid();
		e->kch.cpu = sched_getcpu();
		e->kch.channel = d->kernelch.channel;
		*h = e;
		break;
	default:
		/* groups, API events, proxy control, net; copy-engine
		 * collectives, never asked for: NCCL starts and stops them
		 * around their launch, so they carry no completion. */
		break;
	}
	return NCCL_SUCCESS;
}

static nccl_result_t start_v6(void *ctx, void **h, struct nccl_event_descr_v6 *d)
{
	return start_event(ctx, h, d, false);
}

static nccl_result_t start_v5(void *ctx, void **h, struct nccl_event_descr_v5 *d5)
{
	struct nccl_event_descr_v6 d;

	/* v5's layout is v6's without the copy-engine members. */
	memcpy(&d, d5, sizeof(*d5));
	return start_event(ctx, h, &d, false);
}

static nccl_result_t start_v4(void *ctx, void **h, struct nccl_event_descr_v4 *d4)
{
	struct nccl_event_descr_v6 d;

	/* v4's layout is v5's without the API members and parent_group. */
	memset(&d, 0, sizeof(d));
	d.type = d4->type;
	d.parent = d4->parent;
	d.rank = d4->rank;
	memcpy(&d.coll, &d4->coll, sizeof(*d4) - offsetof(struct nccl_event_descr_v4, coll));
	return start_event(ctx, h, &d, true);
}

/* Close the step's current wait state into its proxy op's totals. */
static int wait_slot(int state)
{
	switch (state) {
	case NCCL_ST_STEP_SEND_GPU_WAIT: return HVN_WAIT_SEND_GPU;
	case NCCL_ST_STEP_SEND_PEER_WAIT: return HVN_WAIT_SEND_PEER;
	case NCCL_ST_STEP_SEND_WAIT: return HVN_WAIT_SEND;
	case NCCL_ST_STEP_RECV_WAIT: return HVN_WAIT_RECV;
	case NCCL_ST_STEP_RECV_FLUSH_WAIT: return HVN_WAIT_RECV_FLUSH;
	case NCCL_ST_STEP_RECV_GPU_WAIT: return HVN_WAIT_RECV_GPU;
	}
	return -1;
}

static void step_account(struct ev *s, uint64_t t)
{
	int slot = wait_slot(s->state);

	if (s->parent && slot >= 0)
		s->parent->op.wait_ns[slot] += t - s->state_ns;
}

/*
 * A proxy operation or kernel channel that took HVNOISE_NCCL_STALL_MS or
 * more: write what stalled into the trigger file, so that hvnoise record
 * --flight-recorder --trigger-file writes an incident.  At most once a
 * second: a stall spans many operations.
 */
static void stall_check(const char *what, uint8_t func, uint64_t comm,
			int rank, uint64_t seq, uint64_t start, uint64_t end)
{
	static const char *const fn[HVN_FN_N] = {
		"Unknown", "AllGather", "AllReduce", "AlltoAll", "Broadcast",
		"Gather", "Recv", "Reduce", "ReduceScatter", "Scatter",
		"SendRecv", "Send", "Coalesced",
	};
	unsigned long long last = atomic_load(&last_trigger_ns);
	struct hvn_trigger t = { 0 };
	struct stat st;
	int err;

	if (!trigger_path || end < start || end - start < stall_ns ||
	    /* signed: another thread may have stored a later time */
	    (long long)(end - last) < 1000000000ll ||
	    !atomic_compare_exchange_strong(&last_trigger_ns, &last, end))
		return;
	snprintf(t.why, sizeof(t.why),
		 "nccl stall: %s %s comm %016llx rank %d seq %llu took %.3f ms",
		 fn[func < HVN_FN_N ? func : 0], what,
		 (unsigned long long)comm, rank, (unsigned long long)seq,
		 (end - start) / 1e6);
	/* Written whole, renamed into place: the recorder, polling, must
	 * not read it empty (an incident without its why).  In the sticky
	 * directory another user's trigger, not yet taken, cannot be
	 * replaced (EPERM): that one asks for the incident already. */
	if (!hvn_trigger_write(trigger_path, &t, NULL))
		return;
	err = errno;
	if (err == EPERM && !lstat(trigger_path, &st))
		return;
	warn_once("hvnoise profiler: cannot write HVNOISE_NCCL_TRIGGER=%s (%s): no incident for this stall (hvnoise-flight-recorder.service makes /run/hvnoise writable by jobs: mode 1733)",
		  trigger_path, strerror(err));
}

static nccl_result_t stop_event(void *h)
{
	struct ev *e = handle_ev(h);
	uint64_t t;

	if (!e)
		return NCCL_SUCCESS;
	t = now_ns();
	switch (e->kind) {
	case K_COLL:
		e->coll.enqueued_ns = t;
		emit(HVN_NCCL_COLL, &e->coll, sizeof(e->coll));
		break;
	case K_PROXYOP:
		e->op.end_ns = t;
		e->op.cpu_end = sched_getcpu();
		emit(HVN_NCCL_PROXYOP, &e->op, sizeof(e->op));
		stall_check("proxy op", e->op.func, e->op.comm, e->op.rank,
			    e->op.seq, e->op.start_ns, t);
		break;
	case K_STEP:
		step_account(e, t);
		break;
	case K_KERNCH:
		e->kch.end_ns = t;
		emit(HVN_NCCL_KERNCH, &e->kch, sizeof(e->kch));
		stall_check("kernel channel", e->kch.func, e->kch.comm,
			    e->kch.rank, e->kch.seq, e->kch.start_ns, t);
		break;
	}
	ev_free(e);
	return NCCL_SUCCESS;
}

static nccl_result_t record_state(void *h, int state, union nccl_state_args *a)
{
	struct ev *e = handle_ev(h);
	uint64_t t;

	if (!e)
		return NCCL_SUCCESS;
	if (e->kind == K_STEP) {
		t = now_ns();
		step_account(e, t);
		e->state = state;
		e->state_ns = t;
	} else if (e->kind == K_KERNCH && state == NCCL_ST_KERNELCH_STOP && a) {
		e->kch.gpu_end = a->kernelch.ptimer;
	}
	return NCCL_SUCCESS;
}

static nccl_result_t finalize(void *vctx)
{
	struct comm_ctx *ctx = vctx;

	if (!ctx)
		return NCCL_SUCCESS;
	free(ctx);
	/* The last communicator: flush every thread's buffer (their threads
	 * are done with NCCL by now). */
	if (atomic_fetch_sub(&ncomms, 1) == 1 && mode == MODE_FILE) {
		unsigned int n = atomic_load(&tbuf_next);

		for (unsigned int i = 0; i < n && i < TBUFS; i++)
			file_flush(&tbufs[i]);
	}
	if (atomic_load(&dropped) && logger)
		logger(NCCL_LOG_INFO, NCCL_SUBSYS_PROFILE, __FILE__, __LINE__,
		       "hvnoise profiler: %llu records dropped",
		       (unsigned long long)atomic_load(&dropped));
	return NCCL_SUCCESS;
}

/* NCCL 2.29 and later load v6 first, then v5, then v4. */
EXPORT const struct nccl_profiler_v6 ncclProfiler_v6 = {
	.name = "hvnoise",
	.init = init_v5,
	.start_event = start_v6,
	.stop_event = stop_event,
	.record_state = record_state,
	.finalize = finalize,
};

EXPORT const struct nccl_profiler_v5 ncclProfiler_v5 = {
	.name = "hvnoise",
	.init = init_v5,
	.start_event = start_v5,
	.stop_event = stop_event,
	.record_state = record_state,
	.finalize = finalize,
};

EXPORT const struct nccl_profiler_v4 ncclProfiler_v4 = {
	.name = "hvnoise",
	.init = init_v4,
	.start_event = start_v4,
	.stop_event = stop_event,
	.record_state = record_state,
	.finalize = finalize,
};
