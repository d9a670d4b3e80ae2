// SPDX-License-Identifier: GPL-2.0
/*
 * hvnoise correlate: which NCCL collectives stalled, and what host noise
 * on the CPUs that mattered explains each stall.
 *
 * Pass 1 reads the NCCL records (trace_marker_raw records in the trace,
 * and per-process files of the plugin's file mode) and the watched set;
 * collectives end when their last proxy op or kernel channel ends.  A
 * stall is a collective slower than k times the rolling median of its
 * peers (same communicator, rank, function and size bucket); a late rank
 * is one that reaches a collective well after the other ranks.  Pass 2
 * streams the trace again and adds, for each stall, the overlap of every
 * lost, steal, storm and migration episode on its CPUs: the proxy thread's
 * CPUs, the enqueuing thread's CPU and the CPUs of the watched devices'
 * IRQs.  Memory holds the collectives, never the noise.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "builtin.h"
#include "hvnoise/nccl.h"
#include "hvnoise/watch.h"
#include "analysis/episodes.h"
#include "inputs/torch.h"
#include "out/human.h"
#include "tracedat/meta.h"
#include "tracedat/tracedat.h"

#define MAX_CPUSET	16
#define SCHEMA_VERSION	1


static const char *const fn_names[HVN_FN_N] = {
	"Unknown", "AllGather", "AllReduce", "AlltoAll", "Broadcast", "Gather",
	"Recv", "Reduce", "ReduceScatter", "Scatter", "SendRecv", "Send",
};

struct proc {
	uint64_t comm;
	int32_t rank, nranks, pid;
	uint64_t mono, real;
	char host[33], name[33];
};

struct contrib {
	int32_t cpu;
	uint8_t why;			/* 1 proxy, 2 enqueue, 4 IRQ */
	double unexpl, lsteal, lirq, steal, storm, dev_storm;
	int32_t storm_irq;
	char storm_name[HVN_NAME_LEN + 1];
	double storm_top;
	int nmig;
	struct hvn_episode mig;
};

struct coll {
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

struct stall {
	uint32_t coll;
	uint64_t lost_ns;		/* duration - median */
	int ncpu;
	struct contrib c[MAX_CPUSET];
	char verdict[160];
	int cause;			/* 0 none, 1 hypervisor, 2 irq, 3 storm, 4 migration */
};

struct agg {				/* a collective's children, joined */
	uint64_t comm, op_id;
	int32_t rank;
	bool used;
	uint64_t first, end;
	uint32_t n;
	int32_t cpus[4];
	uint8_t ncpu;
};

struct late {
	uint64_t comm, seq;
	uint8_t func;
	int32_t rank;
	double late_ms;
	int nranks;
};

struct ctx {
	const struct hvn_schema *schema;
	struct hvn_analysis an;
	struct coll *coll;
	size_t ncoll, coll_cap;
	struct agg *agg;
	size_t agg_cap, nagg;
	struct proc *proc;
	size_t nproc, proc_cap;
	struct stall *st;
	size_t nst;
	uint32_t *by_start;		/* stalls sorted by start */
	uint64_t max_stall_dur;
	uint8_t irq_cpu[HVN_MAX_CPUS];
	uint64_t nccl_records, nccl_bad, orphans;
	struct late *late;
	size_t nlate;
};

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap;

	if (n < c)
		return p;
	c = c ? c * 2 : 1024;
	p = realloc(p, c * size);
	if (!p) {
		hvn_err("out of memory");
		exit(HVN_EXIT_FAIL);
	}
	*cap = c;
	return p;
}

static uint64_t hash3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ b * 0xc2b2ae3d27d4eb4full ^
		     c * 0x165667b19e3779f9ull;

	return h ^ (h >> 29);
}

static struct agg *agg_find(struct ctx *x, uint64_t comm, int32_t rank,
			    uint64_t op_id, bool add)
{
	size_t i;

	if (add && (x->nagg + 1) * 2 > x->agg_cap) {
		struct agg *old = x->agg;
		size_t oldcap = x->agg_cap;

		x->agg_cap = oldcap ? oldcap * 2 : 4096;
		x->agg = calloc(x->agg_cap, sizeof(*x->agg));
		if (!x->agg) {
			hvn_err("out of memory");
			exit(HVN_EXIT_FAIL);
		}
		x->nagg = 0;
		for (size_t j = 0; j < oldcap; j++)
			if (old[j].used) {
				struct agg *a = agg_find(x, old[j].comm,
							 old[j].rank,
							 old[j].op_id, true);
				*a = old[j];
			}
		free(old);
	}
	if (!x->agg_cap)
		return NULL;
	i = hash3(comm, rank, op_id) & (x->agg_cap - 1);
	for (;; i = (i + 1) & (x->agg_cap - 1)) {
		struct agg *a = &x->agg[i];

		if (!a->used) {
			if (!add)
				return NULL;
			a->used = true;
			a->comm = comm;
			a->rank = rank;
			a->op_id = op_id;
			x->nagg++;
			return a;
		}
		if (a->comm == comm && a->rank == rank && a->op_id == op_id)
			return a;
	}
}

static void add_child(struct ctx *x, uint64_t comm, int32_t rank,
		      uint64_t op_id, uint64_t start, uint64_t end, int32_t cpu,
		      int32_t cpu2)
{
	struct agg *a;
	int32_t cpus[2] = { cpu, cpu2 };

	if (!op_id)
		return;
	a = agg_find(x, comm, rank, op_id, true);
	if (end > a->end)
		a->end = end;
	if (!a->first || start < a->first)
		a->first = start;
	a->n++;
	for (int k = 0; k < 2; k++) {
		bool have = cpus[k] < 0;

		for (int j = 0; j < a->ncpu && !have; j++)
			have = a->cpus[j] == cpus[k];
		if (!have && a->ncpu < 4)
			a->cpus[a->ncpu++] = cpus[k];
	}
}

/* One NCCL record, from the trace or a file; false if malformed. */
static bool nccl_record(struct ctx *x, uint32_t id, const uint8_t *p,
			uint32_t len)
{
	x->nccl_records++;
	switch (HVN_NCCL_TYPE(id)) {
	case HVN_NCCL_COMM: {
		struct hvn_nccl_comm r;
		struct proc *pr;

		if (len < sizeof(r))
			return false;
		memcpy(&r, p, sizeof(r));
		x->proc = grow(x->proc, &x->proc_cap, x->nproc, sizeof(*x->proc));
		pr = &x->proc[x->nproc++];
		pr->comm = r.comm;
		pr->rank = r.rank;
		pr->nranks = r.nranks;
		pr->pid = r.pid;
		pr->mono = r.mono_ns;
		pr->real = r.real_ns;
		snprintf(pr->host, sizeof(pr->host), "%.32s", r.host);
		snprintf(pr->name, sizeof(pr->name), "%.32s", r.name);
		for (char *c = pr->host; *c; c++)
			if (*c < 0x20 || *c > 0x7e)
				*c = '?';
		for (char *c = pr->name; *c; c++)
			if (*c < 0x20 || *c > 0x7e)
				*c = '?';
		return true;
	}
	case HVN_NCCL_COLL: {
		struct hvn_nccl_coll r;
		struct coll *c;

		if (len < sizeof(r))
			return false;
		memcpy(&r, p, sizeof(r));
		if (r.enqueued_ns < r.start_ns || r.func >= HVN_FN_N)
			return false;
		x->coll = grow(x->coll, &x->coll_cap, x->ncoll, sizeof(*x->coll));
		c = &x->coll[x->ncoll++];
		memset(c, 0, sizeof(*c));
		c->comm = r.comm;
		c->op_id = r.op_id;
		c->seq = r.seq;
		c->start = r.start_ns;
		c->enq = r.enqueued_ns;
		c->count = r.count;
		c->rank = r.rank;
		c->cpu = r.cpu;
		c->peer = r.peer;
		c->tid = r.tid;
		c->func = r.func;
		c->is_p2p = r.is_p2p;
		c->dtype = r.dtype_bytes;
		return true;
	}
	case HVN_NCCL_PROXYOP: {
		struct hvn_nccl_proxyop r;

		if (len < sizeof(r))
			return false;
		memcpy(&r, p, sizeof(r));
		add_child(x, r.comm, r.rank, r.op_id, r.start_ns, r.end_ns,
			  r.cpu, r.cpu_end);
		return true;
	}
	case HVN_NCCL_KERNCH: {
		struct hvn_nccl_kernch r;

		if (len < sizeof(r))
			return false;
		memcpy(&r, p, sizeof(r));
		add_child(x, r.comm, r.rank, r.op_id, r.start_ns, r.end_ns,
			  r.cpu, -1);
		return true;
	}
	}
	return false;
}

static void pass1(void *vx, int cpu, uint64_t ts, const uint8_t *d,
		  uint32_t len)
{
	struct ctx *x = vx;
	const struct hvn_field *f;
	uint16_t id16;
	uint32_t id;

	if (len >= 2) {
		memcpy(&id16, d, 2);
		if (x->schema->kind[id16] == HVN_EV_RAW) {
			f = x->schema->f[HVN_EV_RAW];
			if (f[0].size == 4 && f[1].off && f[1].off <= len &&
			    f[0].off + 4u <= len) {
				memcpy(&id, d + f[0].off, 4);
				if (HVN_NCCL_IS(id) &&
				    !nccl_record(x, id, d + f[1].off,
						 len - f[1].off))
					x->nccl_bad++;
			}
		}
	}
	hvn_an_event(&x->an, cpu, ts, d, len);
}

/* The plugin's file: "HVNNCCL1", then header + record, to the end. */
static int read_nccl_file(struct ctx *x, const char *path)
{
	FILE *f = fopen(path, "rb");
	char magic[8];
	uint8_t buf[512];
	struct hvn_nccl_file_rec h;
	uint64_t off = 8, n = 0;

	if (!f) {
		hvn_err("%s: %s", path, strerror(errno));
		return HVN_EXIT_BADFILE;
	}
	if (fread(magic, 1, 8, f) != 8 || memcmp(magic, HVN_NCCL_FILE_MAGIC, 8)) {
		hvn_err("%s: not an hvnoise NCCL file (no %s magic)", path,
			HVN_NCCL_FILE_MAGIC);
		fclose(f);
		return HVN_EXIT_BADFILE;
	}
	for (;;) {
		size_t got = fread(&h, 1, sizeof(h), f);

		if (!got && feof(f))
			break;
		if (got != sizeof(h) || !HVN_NCCL_IS(h.id) || h.size > sizeof(buf) ||
		    fread(buf, 1, h.size, f) != h.size ||
		    !nccl_record(x, h.id, buf, h.size)) {
			hvn_err("%s: bad record at offset %llu (after %llu records); the rest is skipped",
				path, (unsigned long long)off,
				(unsigned long long)n);
			fclose(f);
			return HVN_EXIT_BADFILE;
		}
		off += sizeof(h) + h.size;
		n++;
	}
	fclose(f);
	return 0;
}

/* A collective from another tool: CLOCK_REALTIME, mapped onto the trace. */
static void ext_add(void *vx, const struct hvn_ext_coll *e)
{
	struct ctx *x = vx;
	struct coll *c;
	struct proc *pr = NULL;

	for (size_t i = 0; i < x->nproc && !pr; i++)
		if (x->proc[i].comm == e->comm && x->proc[i].rank == e->rank)
			pr = &x->proc[i];
	if (!pr) {
		x->proc = grow(x->proc, &x->proc_cap, x->nproc, sizeof(*x->proc));
		pr = &x->proc[x->nproc++];
		memset(pr, 0, sizeof(*pr));
		pr->comm = e->comm;
		pr->rank = e->rank;
		pr->pid = -1;
		/* Its times are mapped through the trace's pairs: keep one. */
		pr->real = x->an.clk[0].real;
		pr->mono = x->an.clk[0].mono;
		snprintf(pr->host, sizeof(pr->host), "%s", e->host);
	}
	x->coll = grow(x->coll, &x->coll_cap, x->ncoll, sizeof(*x->coll));
	c = &x->coll[x->ncoll++];
	memset(c, 0, sizeof(*c));
	c->comm = e->comm;
	c->rank = e->rank;
	c->seq = e->is_p2p ? UINT64_MAX : e->seq;
	c->func = e->func;
	c->is_p2p = e->is_p2p;
	c->count = e->bytes;
	c->dtype = 1;
	c->cpu = -1;
	c->peer = -1;
	c->start = hvn_an_real_to_mono(&x->an, (uint64_t)e->start_real);
	c->enq = hvn_an_real_to_mono(&x->an, (uint64_t)e->end_real);
}

/* --- stalls ----------------------------------------------------------------- */

static int size_bucket(const struct coll *c)
{
	uint64_t b = c->count * (c->dtype ? c->dtype : 1);
	int k = 0;

	while (b > 1) {
		b >>= 1;
		k++;
	}
	return k;
}

static int cmp_group(const void *a, const void *b, void *arg)
{
	const struct coll *x = &((struct coll *)arg)[*(const uint32_t *)a];
	const struct coll *y = &((struct coll *)arg)[*(const uint32_t *)b];
	int bx = size_bucket(x), by = size_bucket(y);

#define CMP(f) if (x->f != y->f) return x->f < y->f ? -1 : 1
	CMP(comm);
	CMP(rank);
	CMP(func);
	CMP(is_p2p);
	if (bx != by)
		return bx < by ? -1 : 1;
	CMP(start);
	return 0;
#undef CMP
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool same_group(const struct coll *a, const struct coll *b)
{
	return a->comm == b->comm && a->rank == b->rank && a->func == b->func &&
	       a->is_p2p == b->is_p2p && size_bucket(a) == size_bucket(b);
}

struct params {
	double k, min_ms, min_share;
	long window, top;
};

static void find_stalls(struct ctx *x, const struct params *p)
{
	uint32_t *idx = malloc(x->ncoll * sizeof(*idx) + 1);
	uint64_t *win = malloc((p->window + 1) * sizeof(*win));
	size_t g0 = 0;

	for (size_t i = 0; i < x->ncoll; i++)
		idx[i] = i;
	qsort_r(idx, x->ncoll, sizeof(*idx), cmp_group, x->coll);
	x->st = calloc(x->ncoll ? x->ncoll : 1, sizeof(*x->st));
	for (size_t i = 0; i < x->ncoll; i++) {
		struct coll *c = &x->coll[idx[i]];
		size_t n = 0;
		uint64_t dur, med;

		if (i && !same_group(&x->coll[idx[i - 1]], c))
			g0 = i;
		/* The previous collectives of its group, stalls included: a
		 * median is robust to them. */
		for (size_t j = i; j > g0 && n < (size_t)p->window; j--)
			win[n++] = x->coll[idx[j - 1]].end -
				   x->coll[idx[j - 1]].start;
		if (n < 8)
			continue;
		qsort(win, n, sizeof(*win), cmp_u64);
		med = win[n / 2];
		c->median = med;
		dur = c->end - c->start;
		if (dur > p->k * med && dur - med >= p->min_ms * 1e6) {
			struct stall *s = &x->st[x->nst++];

			s->coll = idx[i];
			s->lost_ns = dur - med;
			c->stall = x->nst;
		}
	}
	free(idx);
	free(win);
}

static void add_cpu(struct stall *s, int32_t cpu, uint8_t why)
{
	if (cpu < 0)
		return;
	for (int i = 0; i < s->ncpu; i++)
		if (s->c[i].cpu == cpu) {
			s->c[i].why |= why;
			return;
		}
	if (s->ncpu < MAX_CPUSET) {
		s->c[s->ncpu].cpu = cpu;
		s->c[s->ncpu].why = why;
		s->ncpu++;
	}
}

static struct ctx *sort_ctx;

static int cmp_stall_start(const void *a, const void *b)
{
	const struct coll *x = &sort_ctx->coll[sort_ctx->st[*(const uint32_t *)a].coll];
	const struct coll *y = &sort_ctx->coll[sort_ctx->st[*(const uint32_t *)b].coll];

	return x->start < y->start ? -1 : x->start > y->start;
}

static void prepare_stalls(struct ctx *x)
{
	x->by_start = malloc((x->nst + 1) * sizeof(*x->by_start));
	for (size_t i = 0; i < x->nst; i++) {
		struct stall *s = &x->st[i];
		struct coll *c = &x->coll[s->coll];

		x->by_start[i] = i;
		if (c->end - c->start > x->max_stall_dur)
			x->max_stall_dur = c->end - c->start;
		for (int j = 0; j < c->npcpu; j++)
			add_cpu(s, c->pcpu[j], 1);
		add_cpu(s, c->cpu, 2);
		for (int cpu = 0; cpu < HVN_MAX_CPUS; cpu++)
			if (x->irq_cpu[cpu])
				add_cpu(s, cpu, 4);
	}
	sort_ctx = x;
	qsort(x->by_start, x->nst, sizeof(*x->by_start), cmp_stall_start);
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

static void attribute(struct ctx *x, const struct hvn_episode *e)
{
	uint64_t s0 = e->start, s1;
	size_t lo = 0, hi = x->nst;

	if (e->kind == HVN_EP_STEAL)
		s1 = s0 + e->a;			/* the sampling window */
	else
		s1 = s0 + e->dur;
	if (e->kind == HVN_EP_MIGRATE)
		s1 = s0 + 1;
	/* First stall that may overlap: starts after s0 - longest stall. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct coll *c = &x->coll[x->st[x->by_start[mid]].coll];

		if (c->start + x->max_stall_dur < s0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < x->nst; i++) {
		struct stall *s = &x->st[x->by_start[i]];
		const struct coll *c = &x->coll[s->coll];
		uint64_t ov;
		double f;

		if (c->start >= s1)
			break;
		ov = overlap(c->start, c->end, s0, s1);
		if (!ov)
			continue;
		for (int j = 0; j < s->ncpu; j++) {
			struct contrib *k = &s->c[j];

			if (e->kind == HVN_EP_MIGRATE) {
				if (k->cpu != e->cpu && k->cpu != e->cpu2)
					continue;
				if (!k->nmig++)
					k->mig = *e;
				continue;
			}
			if (k->cpu != e->cpu)
				continue;
			f = (double)ov / (s1 - s0);
			switch (e->kind) {
			case HVN_EP_LOST:
				k->unexpl += f * e->a;
				k->lsteal += f * e->b;
				k->lirq += f * e->c;
				break;
			case HVN_EP_STEAL:
				k->steal += f * e->dur;
				break;
			case HVN_EP_STORM:
				k->storm += ov;
				if (e->irq >= 0)
					k->dev_storm += ov;
				/* Name the device IRQ's storm over a vector's. */
				if (!k->storm_top ||
				    (e->irq >= 0 && k->storm_irq < 0) ||
				    ((e->irq >= 0) == (k->storm_irq >= 0) &&
				     ov > k->storm_top)) {
					k->storm_top = ov;
					k->storm_irq = e->irq;
					snprintf(k->storm_name,
						 sizeof(k->storm_name), "%s",
						 e->name);
				}
				break;
			}
		}
	}
}

static void pass2(void *vx, int cpu, uint64_t ts, const uint8_t *d,
		  uint32_t len)
{
	struct ctx *x = vx;
	struct hvn_episode e;
	int k;

	(void)cpu;
	k = hvn_episode_decode(x->schema, ts, d, len, &e);
	if (k == HVN_EV_LOST || k == HVN_EV_STEAL || k == HVN_EV_STORM ||
	    k == HVN_EV_MIGRATE)
		attribute(x, &e);
}

/*
 * The verdict: time taken from a vCPU first (lost time not explained by
 * IRQs, or steal), then time in interrupts, then a storm's presence (a
 * device IRQ's before a system vector's: the count says how busy, not how
 * long), then a migration.  Among CPUs, the proxy thread's wins a near tie:
 * it is the one whose delay stalls the collective.
 */
static const struct contrib *best_cpu(const struct stall *s,
				      double (*val)(const struct contrib *),
				      double *best)
{
	const struct contrib *b = NULL;

	*best = 0;
	for (int j = 0; j < s->ncpu; j++) {
		double v = val(&s->c[j]);
		bool proxy = s->c[j].why & 1, bproxy = b && (b->why & 1);

		if ((!b && v > 0) || (b && proxy && !bproxy && v >= 0.9 * *best) ||
		    (b && !(bproxy && !proxy && v < 1.1 * *best) && v > *best)) {
			b = &s->c[j];
			*best = v;
		}
	}
	return b;
}

static double v_hv(const struct contrib *k)
{
	return k->unexpl + (k->lsteal > k->steal ? k->lsteal : k->steal);
}

static double v_irq(const struct contrib *k)
{
	return k->lirq;
}

static double v_dev_storm(const struct contrib *k)
{
	return k->dev_storm;
}

static double v_storm(const struct contrib *k)
{
	return k->storm;
}

static void verdicts(struct ctx *x, const struct params *p)
{
	for (size_t i = 0; i < x->nst; i++) {
		struct stall *s = &x->st[i];
		const struct coll *c = &x->coll[s->coll];
		double dur = c->end - c->start, v;
		const struct contrib *b;

		if ((b = best_cpu(s, v_hv, &v)) && v >= p->min_share * dur) {
			s->cause = 1;
			snprintf(s->verdict, sizeof(s->verdict),
				 "%s of CPU %d: %.1f ms of %.1f ms",
				 b->steal > 0 || b->lsteal > 0 ?
				 "hypervisor preemption (steal)" :
				 "time taken from the vCPU (hypervisor, SMI or host contention)",
				 b->cpu, v / 1e6, dur / 1e6);
		} else if ((b = best_cpu(s, v_irq, &v)) && v >= p->min_share * dur) {
			s->cause = 2;
			snprintf(s->verdict, sizeof(s->verdict),
				 "interrupt handling on CPU %d: %.1f ms of %.1f ms",
				 b->cpu, v / 1e6, dur / 1e6);
		} else if (((b = best_cpu(s, v_dev_storm, &v)) && v >= p->min_share * dur) ||
			   ((b = best_cpu(s, v_storm, &v)) && v >= p->min_share * dur)) {
			s->cause = 3;
			snprintf(s->verdict, sizeof(s->verdict),
				 "IRQ storm of %s (IRQ %d) on CPU %d during %.1f ms of %.1f ms",
				 b->storm_name, b->storm_irq, b->cpu,
				 (v < dur ? v : dur) / 1e6, dur / 1e6);
		} else {
			for (int j = 0; j < s->ncpu; j++)
				if (s->c[j].nmig) {
					s->cause = 4;
					snprintf(s->verdict, sizeof(s->verdict),
						 "IRQ %d (%s) moved from CPU %d to CPU %d during the stall",
						 s->c[j].mig.irq, s->c[j].mig.name,
						 s->c[j].mig.cpu2, s->c[j].mig.cpu);
					break;
				}
		}
		if (!s->cause)
			snprintf(s->verdict, sizeof(s->verdict),
				 "no host noise explains this");
	}
}

/* --- late ranks --------------------------------------------------------------- */

static const struct proc *proc_of(const struct ctx *x, uint64_t comm,
				  int32_t rank)
{
	for (size_t i = 0; i < x->nproc; i++)
		if (x->proc[i].comm == comm && x->proc[i].rank == rank)
			return &x->proc[i];
	return NULL;
}

/* A rank's time on CLOCK_REALTIME, through its own clock pair. */
static int64_t real_of(const struct ctx *x, const struct coll *c)
{
	const struct proc *p = proc_of(x, c->comm, c->rank);

	return p ? (int64_t)(c->nccl_start - p->mono + p->real) :
		   (int64_t)c->nccl_start;
}

static int cmp_seq(const void *a, const void *b, void *arg)
{
	const struct coll *x = &((struct coll *)arg)[*(const uint32_t *)a];
	const struct coll *y = &((struct coll *)arg)[*(const uint32_t *)b];

	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->rank - y->rank;
}

static void find_late(struct ctx *x, const struct params *p)
{
	uint32_t *idx = malloc((x->ncoll + 1) * sizeof(*idx));
	size_t n = 0;

	for (size_t i = 0; i < x->ncoll; i++)
		if (!x->coll[i].is_p2p)
			idx[n++] = i;
	qsort_r(idx, n, sizeof(*idx), cmp_seq, x->coll);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		const struct coll *a = &x->coll[idx[i]];
		int64_t first = INT64_MAX, last = INT64_MIN, second = INT64_MIN;
		int32_t last_rank = -1;

		while (j < n && x->coll[idx[j]].comm == a->comm &&
		       x->coll[idx[j]].func == a->func &&
		       x->coll[idx[j]].seq == a->seq)
			j++;
		for (size_t m = i; j - i >= 2 && m < j; m++) {
			int64_t t = real_of(x, &x->coll[idx[m]]);

			if (t < first)
				first = t;
			if (t > last) {
				second = last;
				last = t;
				last_rank = x->coll[idx[m]].rank;
			} else if (t > second) {
				second = t;
			}
		}
		/* Late: after every other rank by the threshold. */
		if (j - i >= 2 && last - second >= p->min_ms * 1e6) {
			x->late = realloc(x->late, (x->nlate + 1) * sizeof(*x->late));
			x->late[x->nlate].comm = a->comm;
			x->late[x->nlate].seq = a->seq;
			x->late[x->nlate].func = a->func;
			x->late[x->nlate].rank = last_rank;
			x->late[x->nlate].late_ms = (last - second) / 1e6;
			x->late[x->nlate].nranks = j - i;
			x->nlate++;
		}
		i = j;
	}
	free(idx);
}

/* --- output ------------------------------------------------------------------- */

static int cmp_stall_lost(const void *a, const void *b)
{
	const struct stall *x = a, *y = b;

	return x->lost_ns < y->lost_ns ? 1 : x->lost_ns > y->lost_ns ? -1 : 0;
}

static void fmt_when(const struct ctx *x, const struct coll *c, char *buf,
		     size_t len)
{
	if (x->an.nclk) {
		hvn_fmt_time(&x->an, c->start, buf, len, false);
		return;
	}
	const struct proc *p = proc_of(x, c->comm, c->rank);

	if (p) {
		struct hvn_analysis tmp = { 0 };
		struct hvn_clock_pair pair = { p->mono, p->real };

		tmp.clk = &pair;
		tmp.nclk = 1;
		hvn_fmt_time(&tmp, c->start, buf, len, false);
		return;
	}
	hvn_fmt_time(&x->an, c->start, buf, len, false);
}

static void print_text(struct ctx *x, const struct params *p,
		       const char *path)
{
	size_t ncomm = 0;

	for (size_t i = 0; i < x->nproc; i++) {
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = x->proc[j].comm == x->proc[i].comm;
		ncomm += !seen;
	}
	printf("hvnoise correlate: %s\n", path);
	printf("  %zu collectives from %zu communicator ranks on %zu communicators; %zu stalls, %zu late arrivals\n",
	       x->ncoll, x->nproc, ncomm, x->nst, x->nlate);
	printf("  stall: more than %.1f x the median of the last %ld of its communicator, rank, function and size, and %.3f ms over it\n",
	       p->k, p->window, p->min_ms);
	if (x->nccl_bad)
		printf("  CORRUPT: %llu NCCL records could not be read\n",
		       (unsigned long long)x->nccl_bad);
	if (!x->ncoll)
		printf("  no NCCL records: run the job with NCCL_PROFILER_PLUGIN=hvnoise (see hvnoise(8))\n");
	printf("\nStalls, by time lost:\n");
	for (size_t i = 0; i < x->nst && i < (size_t)p->top; i++) {
		const struct stall *s = &x->st[i];
		const struct coll *c = &x->coll[s->coll];
		char when[40];

		fmt_when(x, c, when, sizeof(when));
		printf("%3zu. %s  comm %016llx rank %d  %s seq %lld  %llu B\n",
		       i + 1, when, (unsigned long long)c->comm, c->rank,
		       fn_names[c->func],
		       c->seq == UINT64_MAX ? -1 : (long long)c->seq,
		       (unsigned long long)(c->count * (c->dtype ? c->dtype : 1)));
		printf("     %.3f ms (median %.3f, lost %.3f)", (c->end - c->start) / 1e6,
		       c->median / 1e6, s->lost_ns / 1e6);
		printf("  proxy CPU");
		for (int j = 0; j < c->npcpu; j++)
			printf("%s%d", j ? "," : " ", c->pcpu[j]);
		if (!c->npcpu)
			printf(" -");
		printf(", enqueued on CPU %d\n", c->cpu);
		for (int j = 0; j < s->ncpu; j++) {
			const struct contrib *k = &s->c[j];
			double dur = c->end - c->start;

			if (!(k->unexpl + k->lsteal + k->lirq + k->steal +
			      k->storm) && !k->nmig)
				continue;
			printf("     CPU %d (%s%s%s): lost %.1f ms (unexplained %.1f, steal %.1f, irq %.1f), steal %.1f, storm %.1f%s%s, migrations %d; %.0f%%\n",
			       k->cpu, k->why & 1 ? "proxy " : "",
			       k->why & 2 ? "enqueue " : "",
			       k->why & 4 ? "irq" : "",
			       (k->unexpl + k->lsteal + k->lirq) / 1e6,
			       k->unexpl / 1e6, k->lsteal / 1e6, k->lirq / 1e6,
			       k->steal / 1e6, k->storm / 1e6,
			       k->storm ? " " : "", k->storm ? k->storm_name : "",
			       k->nmig,
			       100 * (k->unexpl + (k->lsteal > k->steal ?
						   k->lsteal : k->steal) +
				      k->lirq) / dur);
		}
		printf("     verdict: %s\n", s->verdict);
	}
	if (!x->nst)
		printf("  none\n");
	if (x->nlate) {
		printf("\nLate ranks:\n");
		for (size_t i = 0; i < x->nlate && i < (size_t)p->top; i++) {
			const struct late *l = &x->late[i];
			const struct proc *pr = proc_of(x, l->comm, l->rank);

			printf("  comm %016llx %s seq %llu: rank %d (host %s) arrived %.3f ms after the other %d ranks\n",
			       (unsigned long long)l->comm, fn_names[l->func],
			       (unsigned long long)l->seq, l->rank,
			       pr ? pr->host : "?", l->late_ms, l->nranks - 1);
		}
	}
}

static void json_s(FILE *o, const char *s)
{
	fputc('"', o);
	for (; *s; s++)
		if (*s == '"' || *s == '\\')
			fprintf(o, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(o, "\\u%04x", *s);
		else
			fputc(*s, o);
	fputc('"', o);
}

static void print_json(struct ctx *x, const struct params *p, const char *path)
{
	static const char *const causes[] = { "none", "hypervisor", "irq",
					      "storm", "migration" };

	printf("{\"schema\":\"hvnoise-correlate\",\"schema_version\":%d,\"trace\":",
	       SCHEMA_VERSION);
	json_s(stdout, path);
	printf(",\"params\":{\"factor\":%g,\"window\":%ld,\"min_ms\":%g,\"min_share\":%g},",
	       p->k, p->window, p->min_ms, p->min_share);
	{
		uint64_t first = UINT64_MAX, last = 0;

		for (size_t i = 0; i < x->ncoll; i++) {
			if (x->coll[i].start < first)
				first = x->coll[i].start;
			if (x->coll[i].end > last)
				last = x->coll[i].end;
		}
		printf("\"first_ns\":%llu,\"last_ns\":%llu,",
		       (unsigned long long)(x->ncoll ? first : 0),
		       (unsigned long long)last);
	}
	printf("\"collectives\":%zu,\"nccl_records\":%llu,\"bad_records\":%llu,\"ranks\":[",
	       x->ncoll, (unsigned long long)x->nccl_records,
	       (unsigned long long)x->nccl_bad);
	for (size_t i = 0; i < x->nproc; i++) {
		printf("%s{\"comm\":\"%016llx\",\"rank\":%d,\"nranks\":%d,\"pid\":%d,\"host\":",
		       i ? "," : "", (unsigned long long)x->proc[i].comm,
		       x->proc[i].rank, x->proc[i].nranks, x->proc[i].pid);
		json_s(stdout, x->proc[i].host);
		printf(",\"name\":");
		json_s(stdout, x->proc[i].name);
		printf("}");
	}
	printf("],\"stalls\":[");
	for (size_t i = 0; i < x->nst; i++) {
		const struct stall *s = &x->st[i];
		const struct coll *c = &x->coll[s->coll];
		int64_t real = real_of(x, c);

		printf("%s{\"comm\":\"%016llx\",\"rank\":%d,\"func\":\"%s\",\"seq\":%lld,\"bytes\":%llu,\"nccl_start_ns\":%llu,\"start_ns\":%llu,\"start_realtime_ns\":%lld,\"duration_ns\":%llu,\"median_ns\":%llu,\"lost_ns\":%llu,\"proxy_cpus\":[",
		       i ? "," : "", (unsigned long long)c->comm, c->rank,
		       fn_names[c->func],
		       c->seq == UINT64_MAX ? -1 : (long long)c->seq,
		       (unsigned long long)(c->count * (c->dtype ? c->dtype : 1)),
		       (unsigned long long)c->nccl_start,
		       (unsigned long long)c->start,
		       (long long)(real + (int64_t)(c->start - c->nccl_start)),
		       (unsigned long long)(c->end - c->start),
		       (unsigned long long)c->median,
		       (unsigned long long)s->lost_ns);
		for (int j = 0; j < c->npcpu; j++)
			printf("%s%d", j ? "," : "", c->pcpu[j]);
		printf("],\"enqueue_cpu\":%d,\"cause\":\"%s\",\"verdict\":",
		       c->cpu, causes[s->cause]);
		json_s(stdout, s->verdict);
		printf(",\"cpus\":[");
		for (int j = 0; j < s->ncpu; j++) {
			const struct contrib *k = &s->c[j];

			printf("%s{\"cpu\":%d,\"proxy\":%s,\"enqueue\":%s,\"irq\":%s,\"lost_unexplained_ns\":%.0f,\"lost_steal_ns\":%.0f,\"lost_irq_ns\":%.0f,\"steal_ns\":%.0f,\"storm_ns\":%.0f,\"storm_irq\":%d,\"storm_name\":",
			       j ? "," : "", k->cpu, k->why & 1 ? "true" : "false",
			       k->why & 2 ? "true" : "false",
			       k->why & 4 ? "true" : "false", k->unexpl,
			       k->lsteal, k->lirq, k->steal, k->storm,
			       k->storm ? k->storm_irq : -1);
			json_s(stdout, k->storm_name);
			printf(",\"migrations\":%d}", k->nmig);
		}
		printf("]}");
	}
	printf("],\"late\":[");
	for (size_t i = 0; i < x->nlate; i++) {
		const struct late *l = &x->late[i];
		const struct proc *pr = proc_of(x, l->comm, l->rank);

		printf("%s{\"comm\":\"%016llx\",\"func\":\"%s\",\"seq\":%llu,\"rank\":%d,\"host\":",
		       i ? "," : "", (unsigned long long)l->comm,
		       fn_names[l->func], (unsigned long long)l->seq, l->rank);
		json_s(stdout, pr ? pr->host : "");
		printf(",\"late_ns\":%.0f,\"ranks\":%d}", l->late_ms * 1e6,
		       l->nranks);
	}
	printf("]}\n");
}

/* Chrome trace events: a track per rank (collectives), per CPU (noise). */
struct perfetto {
	FILE *o;
	struct ctx *x;
	bool first;
};

static double us_of(const struct ctx *x, uint64_t mono)
{
	uint64_t r = x->an.nclk ? hvn_an_mono_to_real(&x->an, mono) : mono;

	return r / 1e3;
}

static void pf_noise(void *vp, int cpu, uint64_t ts, const uint8_t *d,
		     uint32_t len)
{
	struct perfetto *p = vp;
	struct hvn_episode e;
	static const char *const names[] = { "steal", "lost", "storm",
					     "migrate" };
	int k = hvn_episode_decode(p->x->schema, ts, d, len, &e);

	(void)cpu;
	if (k != HVN_EV_LOST && k != HVN_EV_STEAL && k != HVN_EV_STORM &&
	    k != HVN_EV_MIGRATE)
		return;
	if (e.kind == HVN_EP_MIGRATE)
		fprintf(p->o, ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":2,\"tid\":%d,\"ts\":%.3f,\"name\":\"IRQ %d %s from CPU %d\"}",
			e.cpu, us_of(p->x, e.start), e.irq, e.name, e.cpu2);
	else
		fprintf(p->o, ",\n{\"ph\":\"X\",\"pid\":2,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"name\":\"%s%s%s\",\"args\":{\"unexplained_ms\":%.3f}}",
			e.cpu, us_of(p->x, e.start),
			(e.kind == HVN_EP_STEAL ? e.a : e.dur) / 1e3,
			names[e.kind], e.kind == HVN_EP_STORM ? " " : "",
			e.kind == HVN_EP_STORM ? e.name : "",
			e.kind == HVN_EP_LOST ? e.a / 1e6 : 0.0);
}

static int write_perfetto(struct ctx *x, struct hvn_tdat *t, const char *out)
{
	struct perfetto p = { .x = x };
	struct hvn_rb rb = { .event = pf_noise, .ctx = &p };

	p.o = fopen(out, "w");
	if (!p.o) {
		hvn_err("cannot write %s: %s", out, strerror(errno));
		return HVN_EXIT_FAIL;
	}
	fprintf(p.o, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
		"{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"NCCL ranks\"}},\n"
		"{\"ph\":\"M\",\"pid\":2,\"name\":\"process_name\",\"args\":{\"name\":\"CPUs (hvnoise)\"}}");
	for (size_t i = 0; i < x->ncoll; i++) {
		const struct coll *c = &x->coll[i];

		fprintf(p.o, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"name\":\"%s%s\",\"args\":{\"seq\":%lld,\"comm\":\"%016llx\",\"median_ms\":%.3f}}",
			c->rank, us_of(x, c->start), (c->end - c->start) / 1e3,
			c->stall ? "STALL " : "", fn_names[c->func],
			c->seq == UINT64_MAX ? -1 : (long long)c->seq,
			(unsigned long long)c->comm, c->median / 1e6);
	}
	hvn_tdat_stream(t, &rb);
	fprintf(p.o, "\n]}\n");
	if (fclose(p.o)) {
		hvn_err("writing %s: %s", out, strerror(errno));
		return HVN_EXIT_FAIL;
	}
	return 0;
}

/* Input files by kind: the plugin's, FR, Kineto, Inspector. */
enum { IN_NCCL, IN_TORCH_FR, IN_KINETO, IN_INSPECTOR, IN_KINDS };

struct correlate_args {
	struct params prm;
	bool json;
	const char *perfetto, *trace;
	int in;				/* the list operands go to, or -1 */
	char **files[IN_KINDS];
	int nfiles[IN_KINDS];
};

/* "--nccl A B C": files until the next option. */
static int list_start(void *vals, const struct hvn_opt *o, const char *arg)
{
	static const char *const names[IN_KINDS] = {
		"nccl", "fr", "kineto", "inspector",
	};
	struct correlate_args *a = vals;

	(void)arg;
	for (int k = 0; k < IN_KINDS; k++)
		if (!strcmp(o->name, names[k]))
			a->in = k;
	return 0;
}

static int operand(void *vals, const char *arg)
{
	struct correlate_args *a = vals;
	char **l;

	if (!arg) {
		a->in = -1;
	} else if (a->in >= 0) {
		l = realloc(a->files[a->in], (a->nfiles[a->in] + 1) * sizeof(*l));
		if (!l)
			return -1;
		a->files[a->in] = l;
		l[a->nfiles[a->in]++] = (char *)arg;
	} else if (!a->trace) {
		a->trace = arg;
	} else {
		hvn_err("one trace at a time (%s, %s); other files follow --nccl, --fr, --kineto or --inspector",
			a->trace, arg);
		return -1;
	}
	return 0;
}

#define PRM(f) prm.f
static const struct hvn_opt correlate_opts[] = {
	HVN_OPT_CALL_ROW("nccl", 0, NULL, list_start,
			 "FILE...: the plugin's per-process files (HVNOISE_NCCL_DIR)"),
	HVN_OPT_CALL_ROW("fr", 0, NULL, list_start,
			 "FILE...: PyTorch Flight Recorder dumps, JSON, one per\nrank (the rank from the name: nccl_trace_rank_<N>)"),
	HVN_OPT_CALL_ROW("kineto", 0, NULL, list_start,
			 "FILE...: PyTorch profiler (Kineto) Chrome traces"),
	HVN_OPT_CALL_ROW("inspector", 0, NULL, list_start,
			 "FILE...: NCCL Inspector output (JSON lines)"),
	HVN_OPT_NUM_ROW("factor", 'k', "K", struct correlate_args, PRM(k),
			1.000001, 1e6,
			"a stall lasts more than K x the rolling median (3)"),
	HVN_OPT_INT_ROW("window", 'w', "N", struct correlate_args, PRM(window),
			8, 4096,
			"the median is over the last N of the same kind (32)"),
	HVN_OPT_NUM_ROW("min-ms", 0, "MS", struct correlate_args, PRM(min_ms),
			0, 1e9, "and at least MS over the median (1)"),
	HVN_OPT_NUM_ROW("min-share", 0, "F", struct correlate_args,
			PRM(min_share), 0, 1,
			"noise explains a stall from F of its time (0.2)"),
	HVN_OPT_INT_ROW("top", 0, "N", struct correlate_args, PRM(top), 1, 1e9,
			"stalls listed (20)"),
	HVN_OPT_FLAG_ROW("json", 0, struct correlate_args, json,
			 "machine-readable output (schema \"hvnoise-correlate\" 1)"),
	HVN_OPT_STR_ROW("perfetto", 0, "FILE", struct correlate_args, perfetto,
			"Chrome trace events for ui.perfetto.dev"),
	HVN_OPT_END_ROW
};

static const struct hvn_cmd correlate_cmd = {
	.name = "correlate",
	.synopsis = "[options] TRACE.dat [--nccl FILE...] [--fr FILE...]\n"
		    "                         [--kineto FILE...] [--inspector FILE...]",
	.opts = correlate_opts,
	.operand = operand,
};

int cmd_correlate(int argc, char **argv)
{
	struct correlate_args a = {
		.prm = { .k = 3, .min_ms = 1, .min_share = 0.2, .window = 32,
			 .top = 20 },
		.in = -1,
	};
	struct params prm;
	struct hvn_schema *schema = calloc(1, sizeof(*schema));
	struct ctx *x = calloc(1, sizeof(*x));
	struct hvn_tdat t;
	struct hvn_meta meta;
	struct hvn_rb rb = { 0 };
	const char *trace, *pf;
	char ***files = a.files;
	int *nfiles = a.nfiles, first, ret = 0, r;
	bool json;

	if (!schema || !x) {
		free(schema);
		free(x);
		return HVN_EXIT_FAIL;
	}
	ret = hvn_cli_parse(&correlate_cmd, argc, argv, &a, NULL, &first);
	if (ret < 0 && !a.trace) {
		hvn_err("correlate: which TRACE.dat?");
		hvn_cli_usage(&correlate_cmd, stderr);
		ret = HVN_EXIT_USAGE;
	}
	if (ret >= 0)
		goto out;
	ret = 0;
	prm = a.prm;
	trace = a.trace;
	pf = a.perfetto;
	json = a.json;
	ret = hvn_tdat_open(&t, trace);
	if (ret) {
		hvn_tdat_close(&t);
		goto out;
	}
	hvn_schema_bind(schema, t.tep);
	x->schema = schema;
	hvn_an_init(&x->an, schema);
	if (hvn_meta_read(&meta, &t)) {
		ret = HVN_EXIT_FAIL;
		goto out;
	}
	/* Clock pairs of hvnoise record, for wall-clock times. */
	for (int i = 0; i < meta.nclk; i++)
		hvn_an_add_clock(&x->an, meta.clk[i].mono, meta.clk[i].real);
	hvn_meta_free(&meta);
	rb.event = pass1;
	rb.ctx = x;
	r = hvn_tdat_stream(&t, &rb);
	if (r) {
		hvn_err("%s: %s; correlating what was read", trace, t.stopped);
		ret = r;
	}
	for (int i = 0; i < nfiles[0]; i++) {
		r = read_nccl_file(x, files[0][i]);
		if (r && !ret)
			ret = r;
	}
	for (int k = 1; k < 4; k++) {
		static int (*const rd[4])(const char *, hvn_ext_add, void *) = {
			NULL, hvn_read_fr, hvn_read_kineto, hvn_read_inspector,
		};

		for (int i = 0; i < nfiles[k]; i++) {
			if (!x->an.nclk) {
				hvn_err("%s: its times are CLOCK_REALTIME and %s has no clock pairs (record with hvnoise record); skipped",
					files[k][i], trace);
				r = HVN_EXIT_BADFILE;
			} else {
				r = rd[k](files[k][i], ext_add, x);
			}
			if (r && !ret)
				ret = r;
		}
	}
	hvn_an_finish(&x->an);
	for (int i = 0; i < x->an.nwatch; i++) {
		const struct hvn_watch_rec *w = &x->an.watch[i];

		if (w->kind == HVN_WATCH_IRQ && w->cpu >= 0 &&
		    w->cpu < HVN_MAX_CPUS)
			x->irq_cpu[w->cpu] = 1;
	}
	/* Join each collective with its children. */
	for (size_t i = 0; i < x->ncoll; i++) {
		struct coll *c = &x->coll[i];
		struct agg *a = agg_find(x, c->comm, c->rank, c->op_id, false);

		c->end = c->enq;
		c->nccl_start = c->start;
		if (!a)
			continue;
		if (a->end > c->end)
			c->end = a->end;
		/* Judge the work, not the wait behind earlier collectives. */
		if (a->first > c->start && a->first < c->end)
			c->start = a->first;
		c->children = a->n;
		c->npcpu = a->ncpu;
		memcpy(c->pcpu, a->cpus, sizeof(c->pcpu));
	}
	find_stalls(x, &prm);
	find_late(x, &prm);
	prepare_stalls(x);
	if (x->nst) {
		rb = (struct hvn_rb){ .event = pass2, .ctx = x };
		hvn_tdat_stream(&t, &rb);
	}
	verdicts(x, &prm);
	/* By time lost; coll->stall indexes are not needed past here. */
	qsort(x->st, x->nst, sizeof(*x->st), cmp_stall_lost);
	if (json)
		print_json(x, &prm, trace);
	else
		print_text(x, &prm, trace);
	if (pf) {
		r = write_perfetto(x, &t, pf);
		if (r && !ret)
			ret = r;
	}
	hvn_tdat_close(&t);
	hvn_an_free(&x->an);
	free(x->coll);
	free(x->agg);
	free(x->proc);
	free(x->st);
	free(x->by_start);
	free(x->late);
out:
	free(x);
	free(schema);
	for (int k = 0; k < 4; k++)
		free(files[k]);
	return ret;
}
