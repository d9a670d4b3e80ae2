// SPDX-License-Identifier: GPL-2.0
/*
 * Drives libnccl-profiler-hvnoise.so as NCCL 2.27 to 2.30 do, from the
 * host side of an NCCL job: no GPU, no network.
 *
 *   nccl_fake abi PLUGIN DIR       the ABI test: v6, v5 and v4 tables, three
 *                                  communicators on three threads, every event
 *                                  kind nested as NCCL nests them, handles
 *                                  NCCL misuses; then reads the records back
 *                                  from the plugin's file and checks them
 *   nccl_fake badenv PLUGIN        a bad HVNOISE_NCCL_EVENTS: logged once,
 *                                  recording off, NCCL never sees an error
 *   nccl_fake work PLUGIN SECONDS PROXY_CPU WORK_US
 *                                  an all-reduce after another for SECONDS:
 *                                  the proxy thread, pinned to PROXY_CPU,
 *                                  does WORK_US of spinning per collective
 *                                  (a fixed number of iterations, so time
 *                                  taken from the CPU lengthens it)
 *   nccl_fake bench PLUGIN N       ns per callback over N collectives
 *   nccl_fake trigger PLUGIN DIR   the stall trigger (HVNOISE_NCCL_TRIGGER=
 *                                  DIR/trigger) as a polling recorder sees
 *                                  it: renamed into place whole, never
 *                                  created and then written
 *   nccl_fake tcp PLUGIN SECONDS CPU WORK_US RANK ADDR PORT
 *                                  one rank of a two-rank job across two
 *                                  hosts: rank 0 listens on ADDR:PORT, rank
 *                                  1 connects; first a clock exchange (rank
 *                                  1 prints the peer's CLOCK_REALTIME offset
 *                                  and the round trip), then all-reduces
 *                                  until rank 0 has run SECONDS: each the
 *                                  WORK_US spin and a byte each way, so a
 *                                  rank waits for the other's arrival
 *   nccl_fake tcp3 PLUGIN SECONDS CPU WORK_US RANK ADDR_AB ADDR_AC PORT
 *                                  one rank of a three-rank job on three
 *                                  hosts: rank 0 listens on ADDR_AB:PORT
 *                                  (rank 1 connects) and ADDR_AC:PORT
 *                                  (rank 2); each step an all-reduce of
 *                                  ranks 0 and 1 only, then one of all
 *                                  three through rank 0
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hvnoise/nccl.h"
#include "../../tools/nccl-plugin/nccl_abi.h"

static int failures;
static atomic_int log_warns, log_infos;

/*
 * KTAP, numbered on from the test that started this one: the counter file
 * HVN_KTAP_COUNTER (tests/host/hvntest.sh), else from 1.
 */
static unsigned int ktap_next(void)
{
	const char *path = getenv("HVN_KTAP_COUNTER");
	static unsigned int local;
	unsigned int n = 0;
	FILE *f;

	if (!path || !*path) {
		if (!local)
			printf("KTAP version 1\n");
		return ++local;
	}
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%u", &n) != 1)
			n = 0;
		fclose(f);
	} else {
		printf("KTAP version 1\n");
	}
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%u\n", n + 1);
		fclose(f);
	}
	return n + 1;
}

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %u nccl/", ok ? "ok" : "not ok", ktap_next());
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failures += !ok;
}

static void logger(int level, unsigned long flags, const char *file, int line,
		   const char *fmt, ...)
{
	va_list ap;

	(void)flags;
	(void)file;
	(void)line;
	if (level == NCCL_LOG_WARN)
		atomic_fetch_add(&log_warns, 1);
	else
		atomic_fetch_add(&log_infos, 1);
	va_start(ap, fmt);
	fprintf(stderr, "  [nccl log %d] ", level);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

static uint64_t now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ull + t.tv_nsec;
}

static const struct nccl_profiler_v6 *p6;
static const struct nccl_profiler_v5 *p5;
static const struct nccl_profiler_v4 *p4;

static void load(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		exit(2);
	}
	p6 = dlsym(h, "ncclProfiler_v6");
	p5 = dlsym(h, "ncclProfiler_v5");
	p4 = dlsym(h, "ncclProfiler_v4");
	if (!p6 || !p5 || !p4) {
		fprintf(stderr, "%s: no ncclProfiler_v6/v5/v4\n", path);
		exit(2);
	}
}

/* An event as NCCL @ver (5 or 6) passes it; v6's descriptor is v5's with
 * the copy-engine members after, NCCL 2.29+ filling it as v5's. */
static void ev_start(int ver, void *ctx, void **h, struct nccl_event_descr_v5 *d)
{
	struct nccl_event_descr_v6 d6;

	if (ver == 6) {
		memset(&d6, 0, sizeof(d6));
		d6.type = d->type;
		d6.parent = d->parent;
		d6.rank = d->rank;
		memcpy(&d6.coll, &d->coll, sizeof(*d) - offsetof(struct nccl_event_descr_v5, coll));
		p6->start_event(ctx, h, &d6);
	} else {
		p5->start_event(ctx, h, d);
	}
}

static void ev_stop(int ver, void *h)
{
	(ver == 6 ? p6->stop_event : ver == 5 ? p5->stop_event : p4->stop_event)(h);
}

static void ev_state(int ver, void *h, int state, union nccl_state_args *a)
{
	(ver == 6 ? p6->record_state : ver == 5 ? p5->record_state : p4->record_state)(h, state, a);
}

/* --- one collective, as NCCL 2.28 calls the v5 plugin ------------------ */

struct coll_job {
	void *ctx;
	void *coll;
	uint64_t seq;
	int work_iters;
	int rank;
};

static volatile uint64_t sink;

static void spin(int iters)
{
	for (int i = 0; i < iters; i++)
		sink += i;
}

/* The proxy progress thread's part: a send proxy op with one step, and a
 * kernel channel, around the work. */
static void proxy_part(struct coll_job *j, int ver)
{
	struct nccl_event_descr_v5 d;
	struct nccl_event_descr_v4 d4;
	union nccl_state_args a;
	void *op = NULL, *step = NULL, *kch = NULL;

	memset(&d, 0, sizeof(d));
	d.type = NCCL_EV_PROXYOP;
	d.parent = j->coll;
	d.rank = j->rank;
	d.proxyop.pid = getpid();
	d.proxyop.channel = 1;
	d.proxyop.peer = 1 - j->rank;
	d.proxyop.nsteps = 1;
	d.proxyop.chunk = 4096;
	d.proxyop.is_send = 1;
	if (ver == 4) {
		memset(&d4, 0, sizeof(d4));
		d4.type = d.type;
		d4.parent = d.parent;
		d4.rank = d.rank;
		d4.proxyop = d.proxyop;
		p4->start_event(j->ctx, &op, &d4);
	} else {
		ev_start(ver, j->ctx, &op, &d);
	}
	ev_state(ver, op, NCCL_ST_PROXYOP_IN_PROGRESS, NULL);

	memset(&d, 0, sizeof(d));
	d.type = NCCL_EV_PROXYSTEP;
	d.parent = op;
	d.rank = j->rank;
	d.proxystep.step = 0;
	ev_start(ver, j->ctx, &step, &d);
	a.proxystep.trans_size = 4096;
	ev_state(ver, step, NCCL_ST_STEP_SEND_GPU_WAIT, &a);

	memset(&d, 0, sizeof(d));
	d.type = NCCL_EV_KERNELCH;
	d.parent = j->coll;
	d.kernelch.channel = 1;
	d.kernelch.ptimer = now() + 1000;	/* the GPU's globaltimer */
	ev_start(ver, j->ctx, &kch, &d);
	spin(j->work_iters);
	ev_state(ver, step, NCCL_ST_STEP_SEND_PEER_WAIT, &a);
	ev_state(ver, step, NCCL_ST_STEP_SEND_WAIT, &a);
	ev_stop(ver, step);
	a.kernelch.ptimer = now() + 2000;
	ev_state(ver, kch, NCCL_ST_KERNELCH_STOP, &a);
	ev_stop(ver, kch);
	ev_stop(ver, op);
}

/* The application thread's part, v5 and v6: API events, group, coll; the coll is
 * stopped (enqueued) before the proxy runs it. */
static void app_part(struct coll_job *j, int ver)
{
	struct nccl_event_descr_v5 d;
	struct nccl_event_descr_v4 d4;
	void *gapi = NULL, *capi = NULL, *kl = NULL, *grp = NULL;

	memset(&d, 0, sizeof(d));
	if (ver > 4) {
		d.type = NCCL_EV_GROUPAPI;
		ev_start(ver, j->ctx, &gapi, &d);
		ev_state(ver, gapi, 23, NULL);
		d.type = NCCL_EV_COLLAPI;
		d.parent = gapi;
		ev_start(ver, j->ctx, &capi, &d);
		ev_stop(ver, capi);
		ev_state(ver, gapi, 24, NULL);
		d.type = NCCL_EV_KERNELLAUNCH;
		ev_start(ver, j->ctx, &kl, &d);
		ev_stop(ver, kl);
	}
	memset(&d, 0, sizeof(d));
	d.type = NCCL_EV_GROUP;
	if (ver == 4) {
		memset(&d4, 0, sizeof(d4));
		d4.type = NCCL_EV_GROUP;
		p4->start_event(j->ctx, &grp, &d4);
	} else {
		ev_start(ver, j->ctx, &grp, &d);
	}
	memset(&d, 0, sizeof(d));
	d.type = NCCL_EV_COLL;
	d.parent = ver == 4 ? grp : capi;
	d.rank = j->rank;
	d.coll.seq = j->seq;
	d.coll.func = "AllReduce";
	d.coll.count = 262144;
	d.coll.root = 0;
	d.coll.datatype = "ncclFloat32";
	d.coll.nchannels = 2;
	d.coll.algo = "RING";
	d.coll.proto = "SIMPLE";
	d.coll.parent_group = grp;
	if (ver == 4) {
		memset(&d4, 0, sizeof(d4));
		d4.type = NCCL_EV_COLL;
		d4.parent = grp;
		d4.rank = j->rank;
		memcpy(&d4.coll, &d.coll, sizeof(d4.coll));
		p4->start_event(j->ctx, &j->coll, &d4);
	} else {
		ev_start(ver, j->ctx, &j->coll, &d);
	}
	ev_stop(ver, j->coll);		/* enqueued to the proxy */
	ev_stop(ver, grp);
	if (ver > 4)
		ev_stop(ver, gapi);
}

/* --- the ABI test ------------------------------------------------------------ */

struct comm_thread {
	int ver;
	uint64_t hash;
	int rank, ncoll;
	void *ctx;
};

static void *comm_main(void *arg)
{
	struct comm_thread *t = arg;
	int mask = 0;

	if (t->ver == 4)
		p4->init(&t->ctx, &mask, "fake-v4", t->hash, 1, 3, t->rank, logger);
	else
		(t->ver == 6 ? p6->init : p5->init)(&t->ctx, t->hash, &mask, "fake", 1, 3,
						     t->rank, logger);
	check(mask & NCCL_EV_COLL && mask & NCCL_EV_PROXYOP && mask & NCCL_EV_KERNELCH &&
	      !(mask & (NCCL_EV_CECOLL | NCCL_EV_CESYNC | NCCL_EV_CEBATCH)),
	      "v%d init sets the activation mask, no copy-engine events (0x%x)", t->ver, mask);
	for (int i = 0; i < t->ncoll; i++) {
		struct coll_job j = { .ctx = t->ctx, .seq = i, .work_iters = 1000,
				      .rank = t->rank };

		app_part(&j, t->ver);
		proxy_part(&j, t->ver);
	}
	return NULL;
}

struct readback {
	int comm, coll, op, kch, bad;
	int seq_ok, link_ok, time_ok, wait_ok, gpu_ok, v4_p2p_ok;
};

static void read_records(const char *dir, struct readback *r)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	uint64_t op_ids[3][64] = { { 0 } };

	memset(r, 0, sizeof(*r));
	while (d && (de = readdir(d))) {
		char path[4096], magic[8];
		struct hvn_nccl_file_rec h;
		uint8_t buf[512];
		FILE *f;

		if (strncmp(de->d_name, "hvnoise-nccl-", 13))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "rb");
		if (!f || fread(magic, 8, 1, f) != 1 ||
		    memcmp(magic, HVN_NCCL_FILE_MAGIC, 8)) {
			r->bad++;
			if (f)
				fclose(f);
			continue;
		}
		while (fread(&h, sizeof(h), 1, f) == 1) {
			if (h.size > sizeof(buf) || fread(buf, h.size, 1, f) != 1) {
				r->bad++;
				break;
			}
			switch (HVN_NCCL_TYPE(h.id)) {
			case HVN_NCCL_COMM:
				r->comm++;
				break;
			case HVN_NCCL_COLL: {
				struct hvn_nccl_coll c;

				memcpy(&c, buf, sizeof(c));
				r->coll++;
				r->seq_ok += c.seq < 64 && c.func == HVN_FN_ALLREDUCE &&
					     c.count == 262144 && c.dtype_bytes == 4 &&
					     !strcmp(c.algo, "RING") &&
					     !strcmp(c.proto, "SIMPLE") && c.nchannels == 2;
				r->time_ok += c.start_ns && c.enqueued_ns >= c.start_ns &&
					      c.cpu >= 0 && c.tid > 0;
				if (c.seq < 64 && c.rank >= 0 && c.rank < 3)
					op_ids[c.rank][c.seq] = c.op_id;
				break;
			}
			case HVN_NCCL_PROXYOP: {
				struct hvn_nccl_proxyop o;

				memcpy(&o, buf, sizeof(o));
				r->op++;
				r->link_ok += o.seq < 64 && o.rank >= 0 && o.rank < 3 &&
					      o.op_id && o.op_id == op_ids[o.rank][o.seq] &&
					      o.is_send && o.channel == 1 && o.nsteps == 1;
				r->wait_ok += o.wait_ns[HVN_WAIT_SEND_GPU] > 0 &&
					      o.end_ns >= o.start_ns && o.cpu >= 0;
				break;
			}
			case HVN_NCCL_KERNCH: {
				struct hvn_nccl_kernch k;

				memcpy(&k, buf, sizeof(k));
				r->kch++;
				r->gpu_ok += k.gpu_end > k.gpu_start &&
					     k.end_ns >= k.start_ns && k.op_id &&
					     k.channel == 1;
				break;
			}
			default:
				r->bad++;
			}
		}
		fclose(f);
	}
	if (d)
		closedir(d);
}

static int cmd_abi(const char *plugin, const char *dir)
{
	struct comm_thread t[3] = {
		{ .ver = 5, .hash = 0x1111, .rank = 0, .ncoll = 40 },
		{ .ver = 4, .hash = 0x2222, .rank = 1, .ncoll = 40 },
		{ .ver = 6, .hash = 0x3333, .rank = 2, .ncoll = 40 },
	};
	pthread_t th[3];
	struct readback r;
	struct nccl_event_descr_v5 d;
	void *h = (void *)0x1;

	setenv("HVNOISE_NCCL_DIR", dir, 1);
	unsetenv("HVNOISE_NCCL_EVENTS");
	load(plugin);
	check(!strcmp(p6->name, "hvnoise") && !strcmp(p5->name, "hvnoise") &&
	      !strcmp(p4->name, "hvnoise"), "the tables are named");
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, comm_main, &t[i]);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	{
		/* A copy-engine collective as NCCL 2.30 would pass it had
		 * the mask asked: nothing recorded, a NULL handle. */
		struct nccl_event_descr_v6 d6;

		memset(&d6, 0, sizeof(d6));
		d6.type = NCCL_EV_CECOLL;
		d6.rank = 2;
		d6.cecoll.func = "AllGather";
		d6.cecoll.count = 1024;
		d6.cecoll.datatype = "ncclFloat32";
		d6.cecoll.sync_strategy = "MC";
		p6->start_event(t[2].ctx, &h, &d6);
		check(h == NULL, "a copy-engine collective (v6) gets a NULL handle");
		p6->stop_event(h);
	}

	/* What NCCL does wrong or unusually must not hurt. */
	check(p5->stop_event(NULL) == NCCL_SUCCESS &&
	      p5->record_state(NULL, 21, NULL) == NCCL_SUCCESS,
	      "stopEvent and recordEventState accept NULL (net plugin path)");
	check(p5->stop_event(&d) == NCCL_SUCCESS &&
	      p5->record_state(&d, 8, NULL) == NCCL_SUCCESS,
	      "a handle that is not the plugin's is ignored");
	memset(&d, 0, sizeof(d));
	d.type = NCCL_EV_PROXYCTRL;
	p5->start_event(t[0].ctx, &h, &d);
	check(h == NULL, "startEvent writes NULL for events it does not record");
	memset(&d, 0, sizeof(d));
	d.type = NCCL_EV_COLL;
	d.coll.func = "AllReduce";
	h = (void *)0x1;
	p5->start_event(NULL, &h, &d);
	check(h == NULL, "startEvent with a NULL context (failed init) records nothing");
	{
		void *c = NULL, *op = NULL;

		d.coll.seq = 99;
		p5->start_event(t[0].ctx, &c, &d);
		p5->stop_event(c);
		p5->stop_event(c);	/* stale handle: NCCL may stop twice */
		memset(&d, 0, sizeof(d));
		d.type = NCCL_EV_PROXYOP;
		d.parent = c;
		d.proxyop.pid = getpid() + 1;	/* PXN: another process's parent */
		p5->start_event(t[0].ctx, &op, &d);
		p5->stop_event(op);
	}
	p5->finalize(t[0].ctx);
	p4->finalize(t[1].ctx);
	p6->finalize(t[2].ctx);
	check(p5->finalize(NULL) == NCCL_SUCCESS, "finalize(NULL) is harmless");

	read_records(dir, &r);
	printf("  records: comm %d, coll %d, proxyop %d, kernch %d, bad %d\n",
	       r.comm, r.coll, r.op, r.kch, r.bad);
	check(r.comm == 3 && r.bad == 0, "one comm record per communicator, no bad records");
	check(r.coll == 121 && r.seq_ok == 120,
	      "every collective with its seq, func, count, type, algo, proto (%d, %d)",
	      r.coll, r.seq_ok);
	check(r.time_ok == 121, "collectives carry start <= enqueued, CPU and thread (%d)", r.time_ok);
	check(r.op == 121 && r.link_ok == 120,
	      "proxy ops link to their collective by op_id and seq, v4, v5 and v6 (%d of %d); the PXN one is unlinked",
	      r.link_ok, r.op);
	check(r.wait_ok == 120, "proxy ops carry their steps' GPU wait (%d)", r.wait_ok);
	check(r.kch == 120 && r.gpu_ok == 120, "kernel channels carry host and GPU times (%d)",
	      r.gpu_ok);
	check(atomic_load(&log_warns) == 0, "no warning logged (%d)", atomic_load(&log_warns));
	return failures ? 1 : 0;
}

static int cmd_badenv(const char *plugin)
{
	void *ctx = (void *)0x1, *h = (void *)0x1;
	int mask = -1;
	struct nccl_event_descr_v5 d;

	setenv("HVNOISE_NCCL_EVENTS", "coll,bogus", 1);
	load(plugin);
	check(p5->init(&ctx, 1, &mask, "x", 1, 1, 0, logger) == NCCL_SUCCESS,
	      "init succeeds with a bad HVNOISE_NCCL_EVENTS");
	p5->init(&ctx, 2, &mask, "y", 1, 1, 0, logger);
	memset(&d, 0, sizeof(d));
	d.type = NCCL_EV_COLL;
	p5->start_event(ctx, &h, &d);
	check(mask == 0 && ctx == NULL && h == NULL,
	      "... recording is off (mask 0x%x)", mask);
	check(atomic_load(&log_warns) == 1, "... and it is logged once (%d)",
	      atomic_load(&log_warns));
	return failures ? 1 : 0;
}

/* --- the NCCL-like workload ------------------------------------------------- */

/* Up to 32 collectives in flight, as an application that enqueues ahead:
 * the proxy always has one to work on and the next ones wait, so time taken
 * from the VM at any moment lengthens a collective.  With 4 (8 ms of work
 * at 2 ms each) the proxy ran dry while the enqueuer's vCPU waited for one
 * of the 2 host cores its 4 vCPU threads share: 2 of 8 injections once
 * landed between collectives. */
#define DEPTH 32
static struct coll_job jobs[DEPTH];
static atomic_long posted, finished;
static atomic_int stop_work;
static int proxy_cpu;

static void *proxy_main(void *arg)
{
	cpu_set_t set;

	(void)arg;
	CPU_ZERO(&set);
	CPU_SET(proxy_cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	while (!atomic_load(&stop_work)) {
		long n = atomic_load(&finished);

		if (n == atomic_load(&posted)) {
			sched_yield();
			continue;
		}
		proxy_part(&jobs[n % DEPTH], 5);
		atomic_store(&finished, n + 1);
	}
	return NULL;
}

static int calibrate(int work_us)
{
	uint64_t t0 = now();
	int n = 1000000;

	spin(n);
	return (double)n * work_us * 1000 / (now() - t0 + 1);
}

static int cmd_work(const char *plugin, double seconds, int cpu, int work_us)
{
	void *ctx = NULL;
	int mask, iters;
	pthread_t th;
	uint64_t end;
	long n = 0;
	bool said = false;

	load(plugin);
	proxy_cpu = cpu;
	iters = calibrate(work_us);
	p5->init(&ctx, 0x5eedull, &mask, "fake-job", 1, 1, 0, logger);
	pthread_create(&th, NULL, proxy_main, NULL);
	end = now() + seconds * 1e9;
	while (now() < end) {
		struct coll_job *j = &jobs[n % DEPTH];

		/* The slot is free once the collective DEPTH back is done. */
		while (n - atomic_load(&finished) >= DEPTH)
			sched_yield();
		j->ctx = ctx;
		j->seq = n;
		j->work_iters = iters;
		j->rank = 0;
		app_part(j, 5);
		atomic_store(&posted, ++n);
		/* What a test waits for before it stops the job: the proxy
		 * has done some, so one is in its hands. */
		if (!said && atomic_load(&finished) >= 8) {
			said = true;
			printf("nccl_fake: collectives running\n");
			fflush(stdout);
		}
	}
	while (atomic_load(&finished) < n)
		sched_yield();
	atomic_store(&stop_work, 1);
	pthread_join(th, NULL);
	p5->finalize(ctx);
	printf("nccl_fake: %ld collectives in %.1f s, proxy on CPU %d, %d iterations each\n",
	       n, seconds, cpu, iters);
	return 0;
}

/* --- the stall trigger ------------------------------------------------------ */

/*
 * A stall of one collective (HVNOISE_NCCL_STALL_MS=0.01, its proxy op 1 ms
 * long) writes the trigger file.  The recorder polls it: a file created
 * and then written can be taken empty in between (an incident without its
 * why, as a CI run once saw), so the name must only ever appear by a
 * rename (IN_MOVED_TO), never be created or written in place; and no
 * temporary file may stay beside it.
 */
static int cmd_trigger(const char *plugin, const char *dir)
{
	char trig[4096], rec[4096], text[300] = "";
	char ev[sizeof(struct inotify_event) + NAME_MAX + 1]
		__attribute__((aligned(__alignof__(struct inotify_event))));
	int in, mask, moved = 0, in_place = 0, others = 0;
	struct coll_job j = { 0 };
	struct dirent *e;
	ssize_t n;
	FILE *f;
	DIR *d;

	snprintf(trig, sizeof(trig), "%s/trigger", dir);
	snprintf(rec, sizeof(rec), "%s/rec", dir);
	mkdir(rec, 0755);
	setenv("HVNOISE_NCCL_TRIGGER", trig, 1);
	setenv("HVNOISE_NCCL_STALL_MS", "0.01", 1);
	setenv("HVNOISE_NCCL_DIR", rec, 1);
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (in < 0 || inotify_add_watch(in, dir, IN_CREATE | IN_MODIFY |
					IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
		check(0, "inotify on %s: %s", dir, strerror(errno));
		return 1;
	}
	load(plugin);
	j.work_iters = calibrate(1000);
	p5->init(&j.ctx, 0x7e1ull, &mask, "trigger", 1, 1, 0, logger);
	app_part(&j, 5);
	proxy_part(&j, 5);
	p5->finalize(j.ctx);
	while ((n = read(in, ev, sizeof(ev))) > 0)
		for (char *p = ev; p < ev + n;) {
			struct inotify_event *ie = (struct inotify_event *)p;

			if (ie->len && !strcmp(ie->name, "trigger")) {
				moved += !!(ie->mask & IN_MOVED_TO);
				in_place += !(ie->mask & IN_MOVED_TO);
			}
			p += sizeof(*ie) + ie->len;
		}
	f = fopen(trig, "r");
	if (f) {
		if (!fgets(text, sizeof(text), f))
			text[0] = 0;
		fclose(f);
	}
	d = opendir(dir);
	while (d && (e = readdir(d)))
		others += e->d_name[0] != '.' && strcmp(e->d_name, "trigger") &&
			  strcmp(e->d_name, "rec");
	if (d)
		closedir(d);
	check(moved == 1 && in_place == 0,
	      "the stall trigger appears whole, renamed into place (%d renames, %d creations or writes of it)",
	      moved, in_place);
	check(!strncmp(text, "nccl stall: AllReduce ", 22) &&
	      strchr(text, '\n') && others == 0,
	      "... its line says what stalled (%.*s), no temporary file beside it (%d)",
	      (int)strcspn(text, "\n"), text, others);
	check(atomic_load(&log_warns) == 0, "... and nothing is warned (%d)",
	      atomic_load(&log_warns));
	return failures ? 1 : 0;
}

/* --- two hosts over TCP ---------------------------------------------------------- */

static uint64_t real_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int full(int fd, void *buf, size_t n, bool out)
{
	for (size_t d = 0; d < n;) {
		ssize_t r = out ? write(fd, (char *)buf + d, n - d) :
				  read(fd, (char *)buf + d, n - d);

		if (r <= 0)
			return -1;
		d += r;
	}
	return 0;
}

static int tcp_link(int rank, const char *addr, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, fd, l;

	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		return -1;
	if (rank == 0) {
		l = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) ||
		    listen(l, 1))
			return -1;
		fd = accept(l, NULL, NULL);
		close(l);
	} else {
		/* The peer may still be booting: a minute to come up. */
		for (int i = 0;; i++) {
			fd = socket(AF_INET, SOCK_STREAM, 0);
			if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
				break;
			close(fd);
			if (i == 600)
				return -1;
			usleep(100000);
		}
	}
	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Rank 1 asks, rank 0 answers with its CLOCK_REALTIME: the peer's offset
 * from the exchange with the shortest round trip. */
static void clock_exchange(int fd, int rank)
{
	uint64_t t1, t2, t3, best_rtt = UINT64_MAX;
	int64_t off = 0;

	for (int i = 0; i < 32; i++) {
		if (rank == 0) {
			if (full(fd, &t1, 8, false))
				return;
			t2 = real_now();
			if (full(fd, &t2, 8, true))
				return;
			continue;
		}
		t1 = real_now();
		if (full(fd, &t1, 8, true) || full(fd, &t2, 8, false))
			return;
		t3 = real_now();
		if (t3 - t1 < best_rtt) {
			best_rtt = t3 - t1;
			off = (int64_t)(t2 - (t1 + t3) / 2);
		}
	}
	if (rank == 1)
		printf("nccl_fake: peer clock offset %lld ns rtt %llu ns\n",
		       (long long)off, (unsigned long long)best_rtt);
}

/* One all-reduce of the TCP jobs: NCCL's events around the work and
 * @xchg, the exchange with the other ranks (0, or -1 on an error). */
static int tcp_coll(void *ctx, int rank, uint64_t seq, int work_iters, int peer,
		    int (*xchg)(void *arg), void *arg)
{
	struct coll_job j = { .ctx = ctx, .rank = rank, .seq = seq,
			      .work_iters = work_iters };
	struct nccl_event_descr_v5 d;
	void *op = NULL;
	int r;

	app_part(&j, 5);
	memset(&d, 0, sizeof(d));
	d.type = NCCL_EV_PROXYOP;
	d.parent = j.coll;
	d.rank = rank;
	d.proxyop.pid = getpid();
	d.proxyop.peer = peer;
	d.proxyop.nsteps = 1;
	d.proxyop.chunk = 4096;
	d.proxyop.is_send = 1;
	p5->start_event(ctx, &op, &d);
	p5->record_state(op, NCCL_ST_PROXYOP_IN_PROGRESS, NULL);
	spin(work_iters);
	r = xchg(arg);
	p5->stop_event(op);
	return r;
}

/* Two ranks: each sends its byte (rank 0's says whether to go on) and
 * reads the other's. */
struct pair {
	int fd, rank;
	uint64_t end;
	char go, peer;
};

static int pair_xchg(void *arg)
{
	struct pair *x = arg;

	/* Rank 0 says when to stop; the other goes on to that one. */
	if (x->rank == 0 && x->end && now() >= x->end)
		x->go = 2;
	return full(x->fd, &x->go, 1, true) || full(x->fd, &x->peer, 1, false) ? -1 : 0;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static int cmd_tcp(const char *plugin, double seconds, int cpu, int work_us,
		   int rank, const char *addr, int port)
{
	struct pair x = { .rank = rank, .go = 1, .peer = 1 };
	void *ctx = NULL;
	int mask, iters;
	long n = 0;

	load(plugin);
	pin(cpu);
	iters = calibrate(work_us);
	x.fd = tcp_link(rank, addr, port);
	if (x.fd < 0) {
		perror("nccl_fake: tcp");
		return 1;
	}
	clock_exchange(x.fd, rank);
	p5->init(&ctx, 0xf1ee7ull, &mask, "fleet-job", 2, 2, rank, logger);
	x.end = now() + seconds * 1e9;
	while (x.go == 1 && x.peer == 1) {
		if (tcp_coll(ctx, rank, n++, iters, 1 - rank, pair_xchg, &x)) {
			perror("nccl_fake: tcp exchange");
			return 1;
		}
		if (n == 8) {
			printf("nccl_fake: collectives running\n");
			fflush(stdout);
		}
	}
	p5->finalize(ctx);
	close(x.fd);
	printf("nccl_fake: rank %d ran %ld collectives with its peer\n", rank, n);
	return 0;
}

/*
 * Three ranks on three hosts, A (rank 0) linked to B (1) and to C (2):
 * each step an all-reduce of "dp", A and B only (the narrow
 * communicator), then one of "world", all three through A, which says
 * when to stop.
 */
struct star {
	int fd[3];			/* A's to B and to C; B's, C's to A */
	int rank;
	uint64_t end;
	char go;
};

static int star_xchg(void *arg)
{
	struct star *x = arg;
	char b = 1, c = 1;

	if (x->rank) {
		b = 1;
		return full(x->fd[0], &b, 1, true) || full(x->fd[0], &x->go, 1, false) ? -1 : 0;
	}
	if (full(x->fd[1], &b, 1, false) || full(x->fd[2], &c, 1, false))
		return -1;
	if (now() >= x->end)
		x->go = 2;
	return full(x->fd[1], &x->go, 1, true) || full(x->fd[2], &x->go, 1, true) ? -1 : 0;
}

static int cmd_tcp3(const char *plugin, double seconds, int cpu, int work_us,
		    int rank, const char *ab, const char *ac, int port)
{
	struct star w = { .rank = rank, .go = 1 };
	struct pair dp = { .rank = rank, .go = 1, .peer = 1 };
	void *wctx = NULL, *dctx = NULL;
	int mask, iters;
	long n = 0;

	load(plugin);
	pin(cpu);
	iters = calibrate(work_us);
	if (rank == 0) {
		w.fd[1] = tcp_link(0, ab, port);
		w.fd[2] = w.fd[1] < 0 ? -1 : tcp_link(0, ac, port);
		if (w.fd[2] >= 0)
			clock_exchange(w.fd[1], 0), clock_exchange(w.fd[2], 0);
	} else {
		w.fd[0] = tcp_link(1, rank == 1 ? ab : ac, port);
		if (w.fd[0] >= 0)
			clock_exchange(w.fd[0], 1);
	}
	if (w.fd[rank ? 0 : 2] < 0) {
		perror("nccl_fake: tcp3");
		return 1;
	}
	dp.fd = rank == 0 ? w.fd[1] : w.fd[0];
	p5->init(&wctx, 0xf1ee73ull, &mask, "world", 3, 3, rank, logger);
	if (rank < 2)
		p5->init(&dctx, 0xd9ull, &mask, "dp", 2, 2, rank, logger);
	w.end = now() + seconds * 1e9;
	while (w.go == 1) {
		if ((rank < 2 && tcp_coll(dctx, rank, n, iters, 1 - rank, pair_xchg, &dp)) ||
		    tcp_coll(wctx, rank, n, iters, rank ? 0 : 1, star_xchg, &w)) {
			perror("nccl_fake: tcp3 exchange");
			return 1;
		}
		if (++n == 8) {
			printf("nccl_fake: collectives running\n");
			fflush(stdout);
		}
	}
	if (dctx)
		p5->finalize(dctx);
	p5->finalize(wctx);
	printf("nccl_fake: rank %d ran %ld collectives with its peer\n", rank, n);
	return 0;
}

/* --- the callback cost ---------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmd_bench(const char *plugin, long n)
{
	void *ctx = NULL;
	int mask;
	uint64_t *per = malloc(n * sizeof(*per)), t0, total = 0;
	/* Callbacks per collective in app_part + proxy_part (v5). */
	const int calls = 23;

	load(plugin);
	p5->init(&ctx, 0xbe7cull, &mask, "bench", 1, 1, 0, logger);
	for (long i = 0; i < n; i++) {
		struct coll_job j = { .ctx = ctx, .seq = i, .work_iters = 0 };

		t0 = now();
		app_part(&j, 5);
		proxy_part(&j, 5);
		per[i] = now() - t0;
		total += per[i];
	}
	p5->finalize(ctx);
	qsort(per, n, sizeof(*per), cmp_u64);
	printf("%ld collectives, %d callbacks each (3 records written)\n", n, calls);
	printf("per callback (a collective's time / %d): median %.0f ns, p99 %.0f ns, mean %.0f ns\n", calls,
	       (double)per[n / 2] / calls, (double)per[n * 99 / 100] / calls,
	       (double)total / n / calls);
	printf("callbacks per second on one thread: %.2f M\n",
	       n * calls / (total / 1e9) / 1e6);
	free(per);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "abi"))
		return cmd_abi(argv[2], argv[3]);
	if (argc >= 3 && !strcmp(argv[1], "badenv"))
		return cmd_badenv(argv[2]);
	if (argc >= 6 && !strcmp(argv[1], "work"))
		return cmd_work(argv[2], atof(argv[3]), atoi(argv[4]), atoi(argv[5]));
	if (argc >= 9 && !strcmp(argv[1], "tcp"))
		return cmd_tcp(argv[2], atof(argv[3]), atoi(argv[4]), atoi(argv[5]),
			       atoi(argv[6]), argv[7], atoi(argv[8]));
	if (argc >= 10 && !strcmp(argv[1], "tcp3"))
		return cmd_tcp3(argv[2], atof(argv[3]), atoi(argv[4]), atoi(argv[5]),
				atoi(argv[6]), argv[7], argv[8], atoi(argv[9]));
	if (argc >= 4 && !strcmp(argv[1], "trigger"))
		return cmd_trigger(argv[2], argv[3]);
	if (argc >= 4 && !strcmp(argv[1], "bench"))
		return cmd_bench(argv[2], atol(argv[3]));
	fprintf(stderr, "usage: see the comment at the top of nccl_fake.c\n");
	return 2;
}
