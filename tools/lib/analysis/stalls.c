// SPDX-License-Identifier: GPL-2.0
/*
 * correlate's engine (analysis/stalls.h): collectives joined with their
 * children, stalls against the rolling median, their attribution to the
 * noise on their CPUs, and late ranks.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hvnoise/nccl.h"
#include "hvnoise/watch.h"
#include "analysis/stalls.h"
#include "inputs/nccl.h"
#include "inputs/torch.h"
#include "tracedat/meta.h"
#include "tracedat/tracedat.h"

static const char *const fn_names[HVN_FN_N] = {
	"Unknown", "AllGather", "AllReduce", "AlltoAll", "Broadcast", "Gather",
	"Recv", "Reduce", "ReduceScatter", "Scatter", "SendRecv", "Send",
	"Coalesced",
};

const char *hvn_nccl_fn(unsigned int fn)
{
	return fn < HVN_FN_N ? fn_names[fn] : "?";
}

void *hvn_corr_grow(void *p, size_t *cap, size_t n, size_t size)
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

static struct hvn_agg *agg_find(struct hvn_corr *x, uint64_t comm, int32_t rank,
			    uint64_t op_id, bool add)
{
	size_t i;

	if (add && (x->nagg + 1) * 2 > x->agg_cap) {
		struct hvn_agg *old = x->agg;
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
				struct hvn_agg *a = agg_find(x, old[j].comm,
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
		struct hvn_agg *a = &x->agg[i];

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

void hvn_corr_add_child(struct hvn_corr *x, uint64_t comm, int32_t rank,
		      uint64_t op_id, uint64_t start, uint64_t end, int32_t cpu,
		      int32_t cpu2)
{
	struct hvn_agg *a;
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

/* A collective from another tool: CLOCK_REALTIME, mapped onto the trace. */
static void ext_add(struct hvn_corr *x, const struct hvn_ext_coll *e,
		    const char *file)
{
	struct hvn_coll *c;
	struct hvn_proc *pr = NULL;

	for (size_t i = 0; i < x->nproc && !pr; i++)
		if (x->proc[i].comm == e->comm && x->proc[i].rank == e->rank)
			pr = &x->proc[i];
	if (!pr) {
		x->proc = hvn_corr_grow(x->proc, &x->proc_cap, x->nproc, sizeof(*x->proc));
		pr = &x->proc[x->nproc++];
		memset(pr, 0, sizeof(*pr));
		pr->comm = e->comm;
		pr->rank = e->rank;
		pr->pid = -1;
		/* Its times are mapped through the trace's pairs: keep one. */
		pr->real = x->an.clk[0].real;
		pr->mono = x->an.clk[0].mono;
		snprintf(pr->host, sizeof(pr->host), "%s", e->host);
		pr->file = file;
		pr->comm_digits = e->comm_digits;
	}
	/* What the file says of its communicator and process, and how far
	 * its times may be off. */
	if (e->nranks > pr->nranks)
		pr->nranks = e->nranks;
	if (e->unc_ns > pr->unc_ns)
		pr->unc_ns = e->unc_ns;
	if (e->pid > 0)
		pr->pid = e->pid;
	if (e->state != HVN_EXT_COMPLETED) {
		struct hvn_unfinished *u;

		x->unf = hvn_corr_grow(x->unf, &x->unf_cap, x->nunf, sizeof(*x->unf));
		u = &x->unf[x->nunf++];
		*u = (struct hvn_unfinished){
			.comm = e->comm, .seq = e->seq, .rank = e->rank,
			.func = e->func, .is_p2p = e->is_p2p, .state = e->state,
			.start_real = (int64_t)e->start_real,
			.start = hvn_an_real_to_mono(&x->an, (uint64_t)e->start_real),
		};
		return;
	}
	x->coll = hvn_corr_grow(x->coll, &x->coll_cap, x->ncoll, sizeof(*x->coll));
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

/* One file's collectives, held until the file is known to be new. */
struct ext_file {
	struct hvn_ext_coll *v;
	size_t n, cap;
};

static void ext_stage(void *vf, const struct hvn_ext_coll *e)
{
	struct ext_file *f = vf;

	f->v = hvn_corr_grow(f->v, &f->cap, f->n, sizeof(*f->v));
	f->v[f->n++] = *e;
}

/* Whether @full's hex digits are more than @pre's and begin with them
 * (an id Inspector printed cut short, against the whole hash). */
static bool hex_prefix(uint64_t pre, uint64_t full)
{
	char a[24], b[24];

	snprintf(a, sizeof(a), "%llx", (unsigned long long)pre);
	snprintf(b, sizeof(b), "%llx", (unsigned long long)full);
	return strlen(b) > strlen(a) && !strncmp(a, b, strlen(a));
}

/* Whether @e's communicator is @pr's: the same hash, or (Inspector's
 * ids cut to 14 hex digits) the first digits of it. */
static bool same_comm(const struct hvn_proc *pr, const struct hvn_ext_coll *e)
{
	if (pr->comm == e->comm)
		return true;
	return e->comm_digits && !pr->comm_digits && hex_prefix(e->comm, pr->comm);
}

/*
 * A rank of a communicator comes from one source: a second is the same
 * file given twice, files of two jobs whose ranks would be paired as one,
 * or a file of a rank the trace's own NCCL records (the plugin's) hold.
 */
static const char *ext_clash(const struct hvn_corr *x, const struct ext_file *f,
			     const char *path, const struct hvn_ext_coll **at)
{
	for (size_t i = 0; i < f->n; i++) {
		/* A file's records are mostly of one rank: each pair once. */
		if (i && f->v[i].comm == f->v[i - 1].comm && f->v[i].rank == f->v[i - 1].rank)
			continue;
		for (size_t k = 0; k < x->nproc; k++) {
			const struct hvn_proc *pr = &x->proc[k];

			if (pr->rank != f->v[i].rank || pr->file == path ||
			    !same_comm(pr, &f->v[i]))
				continue;
			*at = &f->v[i];
			return pr->file ? pr->file : "the trace's NCCL records (the plugin's)";
		}
	}
	return NULL;
}

static int ext_read(struct hvn_corr *x, const char *path,
		    int (*rd)(const char *, hvn_ext_add, void *))
{
	struct ext_file f = { 0 };
	const struct hvn_ext_coll *e;
	const char *other = NULL;
	int64_t lo = INT64_MAX, hi = 0;
	int ret = rd(path, ext_stage, &f);

	/* What a reader gave is good (an Inspector file's good lines, when
	 * others were bad). */
	other = ext_clash(x, &f, path, &e);
	if (other) {
		hvn_err("%s: rank %d of communicator %016llx was read from %s already (the same file twice, two jobs' files, or two kinds of file for one rank: give one per rank); the file is skipped",
			path, e->rank, (unsigned long long)e->comm, other);
		ret = HVN_EXIT_BADFILE;
		f.n = 0;
	}
	for (size_t i = 0; i < f.n; i++) {
		ext_add(x, &f.v[i], path);
		if (f.v[i].start_real < lo)
			lo = f.v[i].start_real;
		if (f.v[i].end_real > hi)
			hi = f.v[i].end_real;
	}
	/* Mapped through the trace's clock pairs, a file of another day is
	 * nothing the trace can explain. */
	if (f.n && x->an.last_ts) {
		uint64_t a = hvn_an_real_to_mono(&x->an, lo);
		uint64_t b = hvn_an_real_to_mono(&x->an, hi > lo ? hi : lo);

		if ((int64_t)b < (int64_t)x->an.first_ts ||
		    (int64_t)a > (int64_t)x->an.last_ts) {
			char fa[48], fb[48], ta[48], tb[48];

			hvn_fmt_time(&x->an, a, fa, sizeof(fa), true);
			hvn_fmt_time(&x->an, b, fb, sizeof(fb), true);
			hvn_fmt_time(&x->an, x->an.first_ts, ta, sizeof(ta), true);
			hvn_fmt_time(&x->an, x->an.last_ts, tb, sizeof(tb), true);
			hvn_warn("%s: its collectives (%s to %s) are outside %s (%s to %s): no noise of this trace can explain them",
				path, fa, fb, x->trace, ta, tb);
		}
	}
	free(f.v);
	return ret;
}

/* --- stalls ----------------------------------------------------------------- */

static int size_bucket(const struct hvn_coll *c)
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
	const struct hvn_coll *x = &((struct hvn_coll *)arg)[*(const uint32_t *)a];
	const struct hvn_coll *y = &((struct hvn_coll *)arg)[*(const uint32_t *)b];
	int bx = size_bucket(x), by = size_bucket(y);

#define CMP(f) do { if (x->f != y->f) return x->f < y->f ? -1 : 1; } while (0)
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

static bool same_group(const struct hvn_coll *a, const struct hvn_coll *b)
{
	return a->comm == b->comm && a->rank == b->rank && a->func == b->func &&
	       a->is_p2p == b->is_p2p && size_bucket(a) == size_bucket(b);
}

/*
 * A group of collectives with no size (inputs that do not say it) holds
 * every size of its function: where more than a tenth of it would be
 * stalls, the durations are of different operations, not stalls.  They
 * are withdrawn and counted as not judged.
 */
static void unsized_group(struct hvn_corr *x, const uint32_t *idx, size_t g0,
			  size_t g1, size_t st0)
{
	if (g1 - g0 < 8 || (x->nst - st0) * 10 <= g1 - g0)
		return;
	for (size_t k = g0; k < g1; k++)
		if (x->coll[idx[k]].count)
			return;
	for (size_t k = st0; k < x->nst; k++)
		x->coll[x->st[k].coll].stall = 0;
	x->unjudged += g1 - g0;
	x->nst = st0;
}

static void find_stalls(struct hvn_corr *x, const struct hvn_corr_params *p)
{
	uint32_t *idx = malloc(x->ncoll * sizeof(*idx) + 1);
	uint64_t *win = malloc((p->window + 1) * sizeof(*win));
	size_t g0 = 0, st0 = 0;

	for (size_t i = 0; i < x->ncoll; i++)
		idx[i] = i;
	qsort_r(idx, x->ncoll, sizeof(*idx), cmp_group, x->coll);
	x->st = calloc(x->ncoll ? x->ncoll : 1, sizeof(*x->st));
	x->unjudged = 0;
	for (size_t i = 0; i < x->ncoll; i++) {
		struct hvn_coll *c = &x->coll[idx[i]];
		size_t n = 0;
		uint64_t dur, med;

		if (i && !same_group(&x->coll[idx[i - 1]], c)) {
			unsized_group(x, idx, g0, i, st0);
			g0 = i;
			st0 = x->nst;
		}
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
			struct hvn_stall *s = &x->st[x->nst++];

			s->coll = idx[i];
			s->lost_ns = dur - med;
			c->stall = x->nst;
		}
	}
	unsized_group(x, idx, g0, x->ncoll, st0);
	free(idx);
	free(win);
}

int hvn_stall_reserve(struct hvn_stall *s, int n)
{
	struct hvn_contrib *c;
	int cap = s->cpu_cap ? s->cpu_cap : 8;

	if (n <= s->cpu_cap)
		return 0;
	while (cap < n)
		cap *= 2;
	c = realloc(s->c, cap * sizeof(*c));
	if (!c)
		return -ENOMEM;
	memset(c + s->cpu_cap, 0, (cap - s->cpu_cap) * sizeof(*c));
	s->c = c;
	s->cpu_cap = cap;
	return 0;
}

void hvn_stall_release(struct hvn_stall *s)
{
	free(s->c);
	s->c = NULL;
	s->ncpu = s->cpu_cap = 0;
}

static void add_cpu(struct hvn_stall *s, int32_t cpu, uint8_t why)
{
	if (cpu < 0)
		return;
	for (int i = 0; i < s->ncpu; i++)
		if (s->c[i].cpu == cpu) {
			s->c[i].why |= why;
			return;
		}
	if (hvn_stall_reserve(s, s->ncpu + 1)) {
		hvn_err("out of memory");
		exit(HVN_EXIT_FAIL);
	}
	memset(&s->c[s->ncpu], 0, sizeof(s->c[0]));
	s->c[s->ncpu].cpu = cpu;
	s->c[s->ncpu].why = why;
	s->ncpu++;
}

/* By their collectives' start: @arg the analysis (probes of a join run
 * in several threads at once). */
static int cmp_stall_start(const void *a, const void *b, void *arg)
{
	const struct hvn_corr *c = arg;
	const struct hvn_coll *x = &c->coll[c->st[*(const uint32_t *)a].coll];
	const struct hvn_coll *y = &c->coll[c->st[*(const uint32_t *)b].coll];

	return x->start < y->start ? -1 : x->start > y->start;
}

static void prepare_stalls(struct hvn_corr *x)
{
	x->by_start = malloc((x->nst + 1) * sizeof(*x->by_start));
	for (size_t i = 0; i < x->nst; i++) {
		struct hvn_stall *s = &x->st[i];
		struct hvn_coll *c = &x->coll[s->coll];

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
	qsort_r(x->by_start, x->nst, sizeof(*x->by_start), cmp_stall_start, x);
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

static void attribute(struct hvn_corr *x, const struct hvn_episode *e)
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
		const struct hvn_coll *c = &x->coll[x->st[x->by_start[mid]].coll];

		if (c->start + x->max_stall_dur < s0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < x->nst; i++) {
		struct hvn_stall *s = &x->st[x->by_start[i]];
		const struct hvn_coll *c = &x->coll[s->coll];
		uint64_t ov;
		double f;

		if (c->start >= s1)
			break;
		ov = overlap(c->start, c->end, s0, s1);
		if (!ov)
			continue;
		for (int j = 0; j < s->ncpu; j++) {
			struct hvn_contrib *k = &s->c[j];

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
	struct hvn_corr *x = vx;
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
 * it is the one whose delay stalls the collective.  Near is within a tenth
 * of the stall (@slack): episodes' edges are loose by a few ms (a whole VM
 * paused 40 ms took 41.2 ms from CPU 0 and 37.0 from the proxy's CPU 1 of
 * one 46 ms stall), whatever share of the stall they explain.
 */
static const struct hvn_contrib *best_cpu(const struct hvn_stall *s,
				      double (*val)(const struct hvn_contrib *),
				      double slack, double *best)
{
	const struct hvn_contrib *b = NULL;

	*best = 0;
	for (int j = 0; j < s->ncpu; j++) {
		double v = val(&s->c[j]);
		bool proxy = s->c[j].why & 1, bproxy = b && (b->why & 1);

		if ((!b && v > 0) ||
		    (b && proxy && !bproxy && v > 0 && v >= *best - slack) ||
		    (b && !(bproxy && !proxy && v <= *best + slack) && v > *best)) {
			b = &s->c[j];
			*best = v;
		}
	}
	return b;
}

static double v_hv(const struct hvn_contrib *k)
{
	return k->unexpl + (k->lsteal > k->steal ? k->lsteal : k->steal);
}

static double v_irq(const struct hvn_contrib *k)
{
	return k->lirq;
}

static double v_dev_storm(const struct hvn_contrib *k)
{
	return k->dev_storm;
}

static double v_storm(const struct hvn_contrib *k)
{
	return k->storm;
}

/* The CPU whose @fn explains the most of a stall of @dur ns, if at
 * least @need. */
static const struct hvn_contrib *explains(const struct hvn_stall *s,
					  double (*fn)(const struct hvn_contrib *),
					  double dur, double need, double *v)
{
	const struct hvn_contrib *b = best_cpu(s, fn, 0.1 * dur, v);

	return b && *v >= need ? b : NULL;
}

static void verdicts(struct hvn_corr *x, const struct hvn_corr_params *p)
{
	for (size_t i = 0; i < x->nst; i++) {
		struct hvn_stall *s = &x->st[i];
		const struct hvn_coll *c = &x->coll[s->coll];
		double dur = c->end - c->start, v;
		double need = p->min_share * dur;
		const struct hvn_contrib *b;

		/* The first cause that explains enough, in this order. */
		b = explains(s, v_hv, dur, need, &v);
		s->cause = b ? 1 : 0;
		if (!b) {
			b = explains(s, v_irq, dur, need, &v);
			s->cause = b ? 2 : 0;
		}
		if (!b) {
			b = explains(s, v_dev_storm, dur, need, &v);
			if (!b)
				b = explains(s, v_storm, dur, need, &v);
			s->cause = b ? 3 : 0;
		}
		s->explained = s->cause ? v : 0;
		switch (s->cause) {
		case 1:
			snprintf(s->verdict, sizeof(s->verdict),
				 "%s of CPU %d: %.1f ms of %.1f ms",
				 b->steal > 0 || b->lsteal > 0 ?
				 "hypervisor preemption (steal)" :
				 "time taken from the vCPU (hypervisor, SMI or host contention)",
				 b->cpu, v / 1e6, dur / 1e6);
			break;
		case 2:
			snprintf(s->verdict, sizeof(s->verdict),
				 "interrupt handling on CPU %d: %.1f ms of %.1f ms",
				 b->cpu, v / 1e6, dur / 1e6);
			break;
		case 3:
			snprintf(s->verdict, sizeof(s->verdict),
				 "IRQ storm of %s (IRQ %d) on CPU %d during %.1f ms of %.1f ms",
				 b->storm_name, b->storm_irq, b->cpu,
				 (v < dur ? v : dur) / 1e6, dur / 1e6);
			break;
		default:
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
		/*
		 * Measured time comes first, but a device's storm on that CPU
		 * through more of the stall is said too: emulating the device
		 * can be that very time (a VM's disk storm took 17.2 ms of a
		 * 59.8 ms stall from the vCPU, the storm ran through all of it).
		 */
		if ((s->cause == 1 || s->cause == 2) && b && b->storm_irq >= 0 &&
		    b->dev_storm >= need && b->dev_storm > v) {
			size_t n = strlen(s->verdict);

			snprintf(s->verdict + n, sizeof(s->verdict) - n,
				 ", in a storm of %s (IRQ %d) there",
				 b->storm_name, b->storm_irq);
		}
		if (!s->cause)
			snprintf(s->verdict, sizeof(s->verdict),
				 "no host noise explains this");
	}
}

const struct hvn_proc *hvn_corr_proc_of(const struct hvn_corr *x, uint64_t comm,
				  int32_t rank)
{
	for (size_t i = 0; i < x->nproc; i++)
		if (x->proc[i].comm == comm && x->proc[i].rank == rank)
			return &x->proc[i];
	return NULL;
}

/* A rank's time on CLOCK_REALTIME, through its own clock pair. */
int64_t hvn_corr_real_of(const struct hvn_corr *x, const struct hvn_coll *c)
{
	const struct hvn_proc *p = hvn_corr_proc_of(x, c->comm, c->rank);

	return p ? (int64_t)(c->nccl_start - p->mono + p->real) :
		   (int64_t)c->nccl_start;
}

int hvn_coll_key_cmp(const struct hvn_coll *a, const struct hvn_coll *b)
{
	if (a->comm != b->comm)
		return a->comm < b->comm ? -1 : 1;
	if (a->func != b->func)
		return a->func < b->func ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return 0;
}

static int cmp_seq(const void *a, const void *b, void *arg)
{
	const struct hvn_coll *x = &((struct hvn_coll *)arg)[*(const uint32_t *)a];
	const struct hvn_coll *y = &((struct hvn_coll *)arg)[*(const uint32_t *)b];
	int k = hvn_coll_key_cmp(x, y);

	/* ranks come from files: any int32, no subtraction */
	return k ? k : (x->rank > y->rank) - (x->rank < y->rank);
}

/* Raise the highest sequence number @comm's @rank had to @seq (@top, @any:
 * per rank of @x). */
static void seq_top(const struct hvn_corr *x, uint64_t comm, int32_t rank,
		    uint64_t seq, uint64_t *top, bool *any)
{
	for (size_t i = 0; i < x->nproc; i++)
		if (x->proc[i].comm == comm && x->proc[i].rank == rank &&
		    (!any[i] || seq > top[i])) {
			top[i] = seq;
			any[i] = true;
		}
}

/*
 * Where a communicator hung (a rank never completed a collective), the
 * ranks whose records stop before the others': the first collective
 * such a rank never had, which others did, names the missing
 * participant, as PyTorch's fr_trace looks for it.
 */
static void find_unscheduled(struct hvn_corr *x)
{
	struct hvn_unscheduled *u;
	uint64_t *top;
	bool *any, *hung;

	free(x->unsched);
	x->unsched = NULL;
	x->nunsched = 0;
	if (!x->nunf)
		return;
	top = calloc(x->nproc + 1, sizeof(*top));
	any = calloc(x->nproc + 1, sizeof(*any));
	hung = calloc(x->nproc + 1, sizeof(*hung));
	if (!top || !any || !hung)
		goto out;
	for (size_t i = 0; i < x->nproc; i++)
		for (size_t k = 0; k < x->nunf && !hung[i]; k++)
			hung[i] = x->unf[k].comm == x->proc[i].comm && !x->unf[k].is_p2p;
	for (size_t k = 0; k < x->ncoll; k++)
		if (!x->coll[k].is_p2p)
			seq_top(x, x->coll[k].comm, x->coll[k].rank, x->coll[k].seq, top, any);
	for (size_t k = 0; k < x->nunf; k++)
		if (!x->unf[k].is_p2p)
			seq_top(x, x->unf[k].comm, x->unf[k].rank, x->unf[k].seq, top, any);
	/* Sequence numbers follow one another: a rank that reached a higher
	 * one had this rank's next. */
	for (size_t i = 0; i < x->nproc; i++) {
		int32_t others = 0;

		if (!hung[i] || !any[i])
			continue;
		for (size_t q = 0; q < x->nproc; q++)
			others += q != i && x->proc[q].comm == x->proc[i].comm &&
				  any[q] && top[q] > top[i];
		if (!others)
			continue;
		u = realloc(x->unsched, (x->nunsched + 1) * sizeof(*u));
		if (!u)
			break;
		x->unsched = u;
		x->unsched[x->nunsched++] = (struct hvn_unscheduled){
			.comm = x->proc[i].comm, .seq = top[i] + 1,
			.rank = x->proc[i].rank, .others = others,
		};
	}
out:
	free(top);
	free(any);
	free(hung);
}

static uint64_t unc_of(const struct hvn_corr *x, uint64_t comm, int32_t rank)
{
	const struct hvn_proc *pr = hvn_corr_proc_of(x, comm, rank);

	return pr ? pr->unc_ns : 0;
}

static void find_late(struct hvn_corr *x, const struct hvn_corr_params *p)
{
	uint32_t *idx = malloc((x->ncoll + 1) * sizeof(*idx));
	size_t n = 0;

	for (size_t i = 0; i < x->ncoll; i++)
		if (!x->coll[i].is_p2p)
			idx[n++] = i;
	qsort_r(idx, n, sizeof(*idx), cmp_seq, x->coll);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		const struct hvn_coll *a = &x->coll[idx[i]];
		int64_t first = INT64_MAX, last = INT64_MIN, second = INT64_MIN;
		int32_t last_rank = -1, second_rank = -1;
		uint64_t thr = p->min_ms * 1e6, u1, u2;

		while (j < n && !hvn_coll_key_cmp(&x->coll[idx[j]], a))
			j++;
		for (size_t m = i; j - i >= 2 && m < j; m++) {
			int64_t t = hvn_corr_real_of(x, &x->coll[idx[m]]);

			if (t < first)
				first = t;
			if (t > last) {
				second = last;
				second_rank = last_rank;
				last = t;
				last_rank = x->coll[idx[m]].rank;
			} else if (t > second) {
				second = t;
				second_rank = x->coll[idx[m]].rank;
			}
		}
		/* Never within what the two ranks' inputs may be off by
		 * (Inspector's times without verbose output: a dump
		 * interval). */
		u1 = unc_of(x, a->comm, last_rank);
		u2 = unc_of(x, a->comm, second_rank);
		if (u1 > UINT64_MAX - u2)
			thr = UINT64_MAX;
		else if (u1 + u2 > thr)
			thr = u1 + u2;
		/* Late: after every other rank by the threshold. */
		if (j - i >= 2 && (uint64_t)(last - second) >= thr) {
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

/* --- the NCCL plugin's records (inputs/nccl.h) -------------------------- */

/* One record into the model. */
static void take_nccl(void *vx, const struct hvn_nccl_rec *r)
{
	struct hvn_corr *x = vx;

	switch (r->type) {
	case HVN_NCCL_COMM: {
		const struct hvn_nccl_comm *m = &r->u.comm;
		struct hvn_proc *pr;

		x->proc = hvn_corr_grow(x->proc, &x->proc_cap, x->nproc, sizeof(*x->proc));
		pr = &x->proc[x->nproc++];
		/* No file, no uncertainty: the trace's own. */
		memset(pr, 0, sizeof(*pr));
		pr->comm = m->comm;
		pr->rank = m->rank;
		pr->nranks = m->nranks;
		pr->pid = m->pid;
		pr->mono = m->mono_ns;
		pr->real = m->real_ns;
		snprintf(pr->host, sizeof(pr->host), "%.32s", m->host);
		snprintf(pr->name, sizeof(pr->name), "%.32s", m->name);
		break;
	}
	case HVN_NCCL_COLL: {
		const struct hvn_nccl_coll *m = &r->u.coll;
		struct hvn_coll *c;

		x->coll = hvn_corr_grow(x->coll, &x->coll_cap, x->ncoll, sizeof(*x->coll));
		c = &x->coll[x->ncoll++];
		memset(c, 0, sizeof(*c));
		c->comm = m->comm;
		c->op_id = m->op_id;
		c->seq = m->seq;
		c->start = m->start_ns;
		c->enq = m->enqueued_ns;
		c->count = m->count;
		c->rank = m->rank;
		c->cpu = m->cpu;
		c->peer = m->peer;
		c->tid = m->tid;
		c->func = m->func;
		c->is_p2p = m->is_p2p;
		c->dtype = m->dtype_bytes;
		break;
	}
	case HVN_NCCL_PROXYOP: {
		const struct hvn_nccl_proxyop *m = &r->u.proxyop;

		hvn_corr_add_child(x, m->comm, m->rank, m->op_id, m->start_ns,
				   m->end_ns, m->cpu, m->cpu_end);
		break;
	}
	case HVN_NCCL_KERNCH: {
		const struct hvn_nccl_kernch *m = &r->u.kernch;

		hvn_corr_add_child(x, m->comm, m->rank, m->op_id, m->start_ns,
				   m->end_ns, m->cpu, -1);
		break;
	}
	}
}

/* Pass 1's callback: the trace's NCCL records, and its noise's totals. */
static void corr_event(void *vx, int cpu, uint64_t ts, const uint8_t *d,
		       uint32_t len)
{
	struct hvn_corr *x = vx;
	const struct hvn_field *f;
	struct hvn_nccl_rec r;
	uint16_t id16;
	uint32_t id;

	if (len >= 2) {
		memcpy(&id16, d, 2);
		if (x->schema->kind[id16] == HVN_EV_RAW) {
			f = x->schema->f[HVN_EV_RAW];
			if (f[0].size == 4 && f[1].off && f[1].off <= len &&
			    f[0].off + 4u <= len) {
				memcpy(&id, d + f[0].off, 4);
				if (HVN_NCCL_IS(id)) {
					x->nccl_records++;
					if (hvn_nccl_decode(id, d + f[1].off,
							    len - f[1].off, &r))
						x->nccl_bad++;
					else
						take_nccl(x, &r);
				}
			}
		}
	}
	hvn_an_event(&x->an, cpu, ts, d, len);
	if (x->keep_episodes) {
		struct hvn_episode e;
		int k = hvn_episode_decode(x->schema, ts, d, len, &e);

		if (k == HVN_EV_LOST || k == HVN_EV_STEAL || k == HVN_EV_STORM ||
		    k == HVN_EV_MIGRATE) {
			x->ep = hvn_corr_grow(x->ep, &x->ep_cap, x->nep, sizeof(*x->ep));
			x->ep[x->nep++] = e;
		}
	}
}

/* The plugin's per-process file. */
static void take_nccl_file(void *vx, const struct hvn_nccl_rec *r)
{
	struct hvn_corr *x = vx;

	x->nccl_records++;
	take_nccl(x, r);
}

static int cmp_stall_lost(const void *a, const void *b)
{
	const struct hvn_stall *x = a, *y = b;

	return x->lost_ns < y->lost_ns ? 1 : x->lost_ns > y->lost_ns ? -1 : 0;
}

int hvn_corr_open(struct hvn_corr *x, struct hvn_schema *schema,
		  struct hvn_tdat *t)
{
	struct hvn_rb rb = { .event = corr_event, .ctx = x };
	struct hvn_meta meta;
	int r;

	x->trace = t->path;
	hvn_schema_bind(schema, t->tep);
	x->schema = schema;
	if (hvn_an_init(&x->an, schema))
		return -ENOMEM;
	if (hvn_meta_read(&meta, t)) {
		hvn_meta_free(&meta);
		return -ENOMEM;
	}
	/* Clock pairs of hvnoise record, for wall-clock times. */
	for (int i = 0; i < meta.nclk; i++)
		hvn_an_add_clock(&x->an, meta.clk[i].mono, meta.clk[i].real);
	hvn_meta_free(&meta);
	r = hvn_tdat_stream(t, &rb);
	if (r)
		hvn_err("%s: %s; correlating what was read", t->path, t->stopped);
	return r;
}

int hvn_corr_read(struct hvn_corr *x, enum hvn_corr_input kind,
		  const char *path)
{
	static int (*const rd[HVN_CORR_INPUTS])(const char *, hvn_ext_add,
						void *) = {
		[HVN_CORR_TORCH_FR] = hvn_read_torch_fr,
		[HVN_CORR_KINETO] = hvn_read_kineto,
		[HVN_CORR_INSPECTOR] = hvn_read_inspector,
	};

	if (kind == HVN_CORR_NCCL)
		return hvn_nccl_read_file(path, take_nccl_file, x);
	if (!x->an.nclk) {
		hvn_err("%s: its times are CLOCK_REALTIME and %s has no clock pairs (record with hvnoise record); skipped",
			path, x->trace);
		return HVN_EXIT_BADFILE;
	}
	return ext_read(x, path, rd[kind]);
}

/*
 * NCCL Inspector cuts communicator hashes to their first 14 hex digits:
 * such a prefix is the communicator of the plugin's (or another input's)
 * whose hash it begins, when exactly one does.
 */
static void unify_comms(struct hvn_corr *x)
{
	for (size_t i = 0; i < x->nproc; i++) {
		struct hvn_proc *pr = &x->proc[i];
		uint64_t pre = pr->comm, full = 0;
		int n = 0;

		if (!pr->comm_digits)
			continue;
		for (size_t k = 0; k < x->nproc; k++) {
			const struct hvn_proc *q = &x->proc[k];

			if (!q->comm_digits && hex_prefix(pre, q->comm) && q->comm != full) {
				full = q->comm;
				n++;
			}
		}
		if (n != 1)
			continue;
		for (size_t k = 0; k < x->nproc; k++)
			if (x->proc[k].comm == pre && x->proc[k].comm_digits) {
				x->proc[k].comm = full;
				x->proc[k].comm_digits = 0;
			}
		for (size_t k = 0; k < x->ncoll; k++)
			if (x->coll[k].comm == pre)
				x->coll[k].comm = full;
		for (size_t k = 0; k < x->nunf; k++)
			if (x->unf[k].comm == pre)
				x->unf[k].comm = full;
	}
}

/* The oldest first: the rank that never went on is the one to look at. */
static int cmp_unfinished(const void *a, const void *b)
{
	const struct hvn_unfinished *x = a, *y = b;

	if (x->start_real != y->start_real)
		return x->start_real < y->start_real ? -1 : 1;
	/* ranks come from files: any int32, no subtraction */
	return (x->rank > y->rank) - (x->rank < y->rank);
}

void hvn_corr_analyse(struct hvn_corr *x, struct hvn_tdat *t,
		      const struct hvn_corr_params *p)
{
	struct hvn_rb rb = { .event = pass2, .ctx = x };

	hvn_an_finish(&x->an);
	unify_comms(x);
	for (int i = 0; i < x->an.nwatch; i++) {
		const struct hvn_watch_rec *w = &x->an.watch[i];

		if (w->kind == HVN_WATCH_IRQ && w->cpu >= 0 &&
		    w->cpu < HVN_MAX_CPUS)
			x->irq_cpu[w->cpu] = 1;
	}
	/* Join each collective with its children. */
	for (size_t i = 0; i < x->ncoll; i++) {
		struct hvn_coll *c = &x->coll[i];
		struct hvn_agg *a = agg_find(x, c->comm, c->rank, c->op_id, false);

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
	find_stalls(x, p);
	find_late(x, p);
	prepare_stalls(x);
	if (x->nst)
		hvn_tdat_stream(t, &rb);
	verdicts(x, p);
	/* By time lost; coll->stall indexes are not needed past here. */
	qsort(x->st, x->nst, sizeof(*x->st), cmp_stall_lost);
	if (x->nunf)
		qsort(x->unf, x->nunf, sizeof(*x->unf), cmp_unfinished);
	find_unscheduled(x);
	/* A rank whose file was not given: said, as over many hosts. */
	{
		const struct hvn_corr *one = x;
		long n;

		free(x->miss);
		x->miss = NULL;
		n = hvn_corr_missing(&one, 1, true, &x->miss);
		x->nmiss = n > 0 ? n : 0;
	}
}

struct comm_rank {
	uint64_t comm;
	int32_t rank, nranks;
};

static int cmp_comm_rank(const void *a, const void *b)
{
	const struct comm_rank *x = a, *y = b;

	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

/* One sort of every (communicator, rank), whatever the ranks' numbers
 * say. */
long hvn_corr_missing(const struct hvn_corr *const *xs, size_t nx,
		      bool files_only, struct hvn_missing **out)
{
	struct hvn_missing *miss = NULL;
	struct comm_rank *v;
	size_t n = 0, total = 0, nmiss = 0;

	for (size_t i = 0; i < nx; i++)
		total += xs[i]->nproc;
	v = malloc((total + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < nx; i++)
		for (size_t k = 0; k < xs[i]->nproc; k++) {
			const struct hvn_proc *p = &xs[i]->proc[k];

			if (p->nranks > 0 && (!files_only || p->file))
				v[n++] = (struct comm_rank){ p->comm, p->rank, p->nranks };
		}
	qsort(v, n, sizeof(*v), cmp_comm_rank);
	for (size_t i = 0; i < n;) {
		struct hvn_missing m = { v[i].comm, v[i].nranks, 0, -1 };
		int32_t next = 0;		/* the lowest rank not seen yet */
		size_t j = i;
		void *g;

		for (; j < n && v[j].comm == v[i].comm; j++) {
			if (v[j].nranks > m.nranks)
				m.nranks = v[j].nranks;
			if (j > i && v[j].rank == v[j - 1].rank)
				continue;		/* a rank in two files */
			if (v[j].rank < 0 || v[j].rank >= m.nranks)
				continue;
			if (m.first_missing < 0 && v[j].rank > next)
				m.first_missing = next;
			next = v[j].rank + 1;
			m.nseen++;
		}
		if (m.first_missing < 0 && next < m.nranks)
			m.first_missing = next;
		if (m.nseen > m.nranks)
			m.nseen = m.nranks;
		i = j;
		g = realloc(miss, (nmiss + 1) * sizeof(*miss));
		if (!g) {
			free(v);
			free(miss);
			return -ENOMEM;
		}
		miss = g;
		miss[nmiss++] = m;
	}
	free(v);
	*out = miss;
	return nmiss;
}

void hvn_corr_free(struct hvn_corr *x)
{
	for (size_t i = 0; x->st && i < x->nst; i++)
		hvn_stall_release(&x->st[i]);
	hvn_an_free(&x->an);
	free(x->coll);
	free(x->agg);
	free(x->proc);
	free(x->st);
	free(x->by_start);
	free(x->late);
	free(x->unf);
	free(x->ep);
	free(x->miss);
	free(x->unsched);
}

void hvn_corr_trim_episodes(struct hvn_corr *x)
{
	uint8_t *serves = calloc(HVN_MAX_CPUS, 1);
	size_t n = 0;

	if (!serves)
		return;
	memcpy(serves, x->irq_cpu, HVN_MAX_CPUS);
	for (size_t i = 0; i < x->ncoll; i++) {
		const struct hvn_coll *c = &x->coll[i];

		if (c->cpu >= 0 && c->cpu < HVN_MAX_CPUS)
			serves[c->cpu] = 1;
		for (int j = 0; j < c->npcpu; j++)
			if (c->pcpu[j] >= 0 && c->pcpu[j] < HVN_MAX_CPUS)
				serves[c->pcpu[j]] = 1;
	}
	for (size_t i = 0; i < x->nep; i++) {
		const struct hvn_episode *e = &x->ep[i];
		bool on = e->cpu >= 0 && e->cpu < HVN_MAX_CPUS && serves[e->cpu];

		if (e->kind == HVN_EP_MIGRATE && e->cpu2 >= 0 &&
		    e->cpu2 < HVN_MAX_CPUS)
			on |= serves[e->cpu2];
		if (on)
			x->ep[n++] = *e;
	}
	x->nep = n;
	free(serves);
}

int hvn_corr_probe(struct hvn_corr *x, struct hvn_tdat *t,
		   const struct hvn_corr_params *p, uint32_t coll,
		   uint64_t start, uint64_t end, struct hvn_stall *out)
{
	struct hvn_rb rb = { .event = pass2, .ctx = x };
	struct hvn_stall *st = x->st;
	uint32_t *by_start = x->by_start;
	size_t nst = x->nst, ncoll = x->ncoll;
	uint64_t max = x->max_stall_dur;
	struct hvn_coll *c;

	if (coll >= ncoll || end <= start)
		return -EINVAL;
	/* A collective and a stall of their own, for the pass only. */
	x->coll = hvn_corr_grow(x->coll, &x->coll_cap, x->ncoll, sizeof(*x->coll));
	c = &x->coll[x->ncoll++];
	*c = x->coll[coll];
	c->start = start;
	c->end = end;
	x->st = calloc(1, sizeof(*x->st));
	if (!x->st) {
		x->st = st;
		x->ncoll = ncoll;
		return -ENOMEM;
	}
	x->st[0].coll = ncoll;
	x->st[0].lost_ns = end - start;
	x->nst = 1;
	x->max_stall_dur = 0;
	prepare_stalls(x);
	if (t)
		hvn_tdat_stream(t, &rb);
	for (size_t i = 0; !t && i < x->nep; i++)
		attribute(x, &x->ep[i]);
	verdicts(x, p);
	*out = x->st[0];
	out->coll = coll;
	free(x->st);
	free(x->by_start);
	x->st = st;
	x->by_start = by_start;
	x->nst = nst;
	x->ncoll = ncoll;
	x->max_stall_dur = max;
	return 0;
}
