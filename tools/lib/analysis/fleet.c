// SPDX-License-Identifier: GPL-2.0
/* correlate over many hosts (analysis/fleet.h). */
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hvn.h"
#include "hvnoise/nccl.h"
#include "analysis/fleet.h"
#include "analysis/summary.h"
#include "tracedat/meta.h"
#include "tracedat/tracedat.h"

/* Fewer shared collectives than this align nothing. */
#define MIN_SYNC	3
/* A drift is kept only where it leaves the residuals this much smaller. */
#define DRIFT_GAIN	0.75
/* Clock pairs further apart than this: CLOCK_REALTIME stepped. */
#define STEP_NS		1000000ll
/* Noise is a host's guilt for an in-flight stall only where it explains
 * at least this share of the time the job lost: less, and the rest of the
 * delay had another cause that would have held the job anyway. */
#define HOLD_SHARE	0.5
/* How far back a wait is followed, collective to collective. */
#define MAX_HOPS	64
/*
 * What the join holds of a collective's copy, with its tables: the
 * collective (120 bytes), its place in the join, its process's order.
 */
#define COPY_BYTES	200

/* A collective across hosts: where its copies lie in hvn_fleet.all. */
struct hvn_fleet_grp {
	uint32_t first, n;
	uint32_t host, coll;		/* its first copy, kept past the join */
	uint32_t last;			/* its last arrival's entry */
	uint32_t nhosts;
	int64_t ok;			/* the on-time hosts' arrival */
	double late;			/* its latest host after that */
	uint64_t lost;			/* the most a copy's own stall lost */
	int64_t min_dur;		/* its fastest copy */
};

/* An implicit-sync collective's end, as the alignment matches it. */
struct hvn_fleet_sample {
	uint64_t comm, seq;
	uint64_t start, end;		/* trace time */
	uint8_t func;
	uint8_t bits;			/* its sampling: the hash's low bits */
};

static bool implicit_sync(const struct hvn_coll *c)
{
	return !c->is_p2p && c->seq != UINT64_MAX &&
	       (c->func == HVN_FN_ALLREDUCE || c->func == HVN_FN_ALLGATHER ||
		c->func == HVN_FN_REDUCESCATTER);
}

/*
 * A host's trace time on its CLOCK_REALTIME: one base for the whole host,
 * so that a step of CLOCK_REALTIME (a clock pair taken before it, another
 * after) moves no collective against another; the alignment then works
 * on time that never steps.
 */
static int64_t real_of(const struct hvn_fleet_host *h, uint64_t mono)
{
	return (int64_t)(mono + (uint64_t)h->base);
}

/*
 * Times are a file's word: every sum and difference of them below wraps
 * (unsigned) or is taken in double, never overflows a signed one, and an
 * offset is bounded before it becomes an integer.
 */
#define OFFSET_MAX	4.6e18		/* about 2^62 ns */

static int64_t host_offset(const struct hvn_fleet_host *h, int64_t real)
{
	double o = h->offset + h->drift * ((double)real - (double)h->t0);

	if (!h->aligned || isnan(o))
		return 0;
	if (o > OFFSET_MAX)
		o = OFFSET_MAX;
	if (o < -OFFSET_MAX)
		o = -OFFSET_MAX;
	return (int64_t)(o < 0 ? o - 0.5 : o + 0.5);
}

static int64_t wrap_sub(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}

/* Aligned: on the reference host's clock. */
static int64_t aligned(const struct hvn_fleet_host *h, int64_t real)
{
	return wrap_sub(real, host_offset(h, real));
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The base most of the host's clock pairs agree on, and how far the
 * others are from it: a CLOCK_REALTIME step. */
static int host_base(struct hvn_fleet_host *h)
{
	const struct hvn_corr *x = h->x;
	size_t n = 0;
	int64_t *v = malloc((x->an.nclk + x->nproc + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (int i = 0; i < x->an.nclk; i++)
		v[n++] = (int64_t)(x->an.clk[i].real - x->an.clk[i].mono);
	for (size_t i = 0; i < x->nproc; i++)
		if (x->proc[i].real)
			v[n++] = (int64_t)(x->proc[i].real - x->proc[i].mono);
	h->base = 0;
	h->step_ns = 0;
	if (n) {
		qsort(v, n, sizeof(*v), cmp_i64);
		h->base = v[(n - 1) / 2];
		if ((uint64_t)v[n - 1] - (uint64_t)v[0] > (uint64_t)STEP_NS)
			h->step_ns = (int64_t)((uint64_t)v[n - 1] - (uint64_t)v[0]);
	}
	free(v);
	return 0;
}

/* --- the clock alignment ----------------------------------------------- */

struct key_end {
	uint64_t comm, seq;
	uint8_t func;
	int64_t end;			/* CLOCK_REALTIME */
};

static int cmp_key(const void *a, const void *b)
{
	const struct key_end *x = a, *y = b;

	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The @k-th smallest of @v[0..n) (k < n), @v reordered about it: the
 * order statistic a sort would give, in linear time. */
static int64_t kth(int64_t *v, size_t n, size_t k)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, want = (ptrdiff_t)k;

	while (lo < hi) {
		int64_t a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi], pivot, t;
		ptrdiff_t i = lo, j = hi;

		/* the median of three: sorted input stays linear */
		pivot = a < b ? (b < c ? b : (a < c ? c : a)) :
				(a < c ? a : (b < c ? c : b));
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				t = v[i];
				v[i++] = v[j];
				v[j--] = t;
			}
		}
		if (want <= j)
			hi = j;
		else if (want >= i)
			lo = i;
		else
			break;		/* between: equal to the pivot */
	}
	return v[k];
}

/* A double as an int64 that orders alike (IEEE 754: a negative's
 * magnitude bits flipped), so that one selection serves both. */
static int64_t dkey(double x)
{
	int64_t i;

	memcpy(&i, &x, sizeof(i));
	return i < 0 ? i ^ INT64_MAX : i;
}

static double dval(int64_t i)
{
	double x;

	if (i < 0)
		i ^= INT64_MAX;
	memcpy(&x, &i, sizeof(x));
	return x;
}

/* The median of the doubles whose dkey()s are @v[0..n). */
static double median(int64_t *v, size_t n)
{
	double a = dval(kth(v, n, (n - 1) / 2));
	int64_t b;

	if (n % 2)
		return a;
	/* the other middle: the least of what lies above */
	b = v[n / 2];
	for (size_t i = n / 2 + 1; i < n; i++)
		if (v[i] < b)
			b = v[i];
	return (a + dval(b)) / 2;
}

/* @h's implicit-sync collectives' ends (aligned: on the reference's
 * clock) appended to *@v of *@n: 0 or -ENOMEM. */
static int add_ends(struct key_end **v, size_t *n, const struct hvn_fleet_host *h)
{
	struct key_end *g = realloc(*v, (*n + h->nsamp + 1) * sizeof(*g));

	if (!g)
		return -ENOMEM;
	*v = g;
	for (size_t i = 0; i < h->nsamp; i++) {
		const struct hvn_fleet_sample *c = &h->samp[i];

		g[(*n)++] = (struct key_end){ c->comm, c->seq, c->func,
					      aligned(h, real_of(h, c->end)) };
	}
	return 0;
}

/*
 * The table a host is aligned against: each collective's end on the
 * reference clock, the median of the ends of the ranks aligned so far,
 * hashed by key (a lookup per collective: no sort of any host's).
 */
struct ref_table {
	struct key_end *e;		/* open addressing; comm 0 seq 0 func 0
					 * is a key too: used[] says */
	uint8_t *used;
	size_t mask;
};

/* Every bit of the input in every bit of the output: keys from a file
 * that differ only in high bits must not share a probe chain. */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static size_t key_hash(const struct key_end *k)
{
	return (size_t)mix64(k->comm ^ mix64(k->seq ^ ((uint64_t)k->func << 56)));
}

static bool same_key(const struct key_end *a, const struct key_end *b)
{
	return a->comm == b->comm && a->seq == b->seq && a->func == b->func;
}

/* The sorted @v of @n into @t: the median end per key. */
static int table_build(struct ref_table *t, const struct key_end *v, size_t n)
{
	size_t cap = 16;

	while (cap < 2 * n)
		cap *= 2;
	free(t->e);
	free(t->used);
	t->e = malloc(cap * sizeof(*t->e));
	t->used = calloc(cap, 1);
	t->mask = cap - 1;
	if (!t->e || !t->used)
		return -ENOMEM;
	for (size_t a = 0, b; a < n; a = b) {
		size_t i;

		for (b = a; b < n && same_key(&v[a], &v[b]); b++)
			;
		/* sorted by end within a key */
		for (i = key_hash(&v[a]) & t->mask; t->used[i]; i = (i + 1) & t->mask)
			;
		t->used[i] = 1;
		t->e[i] = v[a + (b - a - 1) / 2];
	}
	return 0;
}

static const struct key_end *table_find(const struct ref_table *t,
					const struct key_end *k)
{
	for (size_t i = key_hash(k) & t->mask; t->used[i]; i = (i + 1) & t->mask)
		if (same_key(&t->e[i], k))
			return &t->e[i];
	return NULL;
}

/* The residuals' 90th percentile of @d against a line. */
static double q90(const double *d, const double *t, size_t m, double off,
		  double drift, double mid, int64_t *r)
{
	for (size_t i = 0; i < m; i++)
		r[i] = dkey(fabs(d[i] - (off + drift * (t[i] - mid))));
	return dval(kth(r, m, (size_t)(0.9 * (m - 1))));
}

static int align_host(struct hvn_fleet_host *h, const struct ref_table *ref)
{
	double *d, *t;
	int64_t *r;
	size_t m = 0;
	int64_t tmin = INT64_MAX, tmax = INT64_MIN;

	d = malloc((h->nsamp + 1) * sizeof(*d));
	t = malloc((h->nsamp + 1) * sizeof(*t));
	r = malloc((h->nsamp + 1) * sizeof(*r));
	if (!d || !t || !r) {
		free(d);
		free(t);
		free(r);
		return -ENOMEM;
	}
	for (size_t i = 0; i < h->nsamp; i++) {
		const struct hvn_fleet_sample *c = &h->samp[i];
		struct key_end k = { c->comm, c->seq, c->func, 0 };
		const struct key_end *e;
		int64_t end;

		e = table_find(ref, &k);
		if (!e)
			continue;
		end = real_of(h, c->end);
		d[m] = (double)end - (double)e->end;
		t[m] = (double)end;
		if (end < tmin)
			tmin = end;
		if (end > tmax)
			tmax = end;
		m++;
	}
	h->nsamples = m;
	if (m >= MIN_SYNC) {
		int64_t *tmp = malloc(m * sizeof(*tmp));
		int64_t mid = (int64_t)(((double)tmin + (double)tmax) / 2);
		size_t n1 = 0, n2 = 0;
		double unc0;

		if (!tmp) {
			free(d);
			free(t);
			free(r);
			return -ENOMEM;
		}
		h->aligned = true;
		h->t0 = mid;
		for (size_t i = 0; i < m; i++)
			tmp[i] = dkey(d[i]);
		h->offset = median(tmp, m);
		h->drift = 0;
		h->unc = unc0 = q90(d, t, m, h->offset, 0, mid, r);
		/*
		 * A drift wherever the samples show one, however short the
		 * span: two halves' medians, a line the noise cannot bend,
		 * kept if it leaves the residuals clearly smaller.
		 */
		if (m >= 2 * MIN_SYNC && tmax > tmin) {
			double m1, m2, c1 = 0, c2 = 0, drift, off, unc1;

			for (size_t i = 0; i < m; i++)
				if (t[i] < mid) {
					tmp[n1++] = dkey(d[i]);
					c1 += t[i];
				}
			m1 = n1 ? median(tmp, n1) : 0;
			for (size_t i = 0; i < m; i++)
				if (t[i] >= mid) {
					tmp[n2++] = dkey(d[i]);
					c2 += t[i];
				}
			m2 = n2 ? median(tmp, n2) : 0;
			if (n1 >= MIN_SYNC && n2 >= MIN_SYNC) {
				c1 /= n1;
				c2 /= n2;
			}
			if (n1 >= MIN_SYNC && n2 >= MIN_SYNC && c2 > c1) {
				drift = (m2 - m1) / (c2 - c1);
				off = m1 + drift * (mid - c1);
				unc1 = q90(d, t, m, off, drift, mid, r);
				if (unc1 < DRIFT_GAIN * unc0) {
					h->drift = drift;
					h->offset = off;
					h->unc = unc1;
				}
			}
		}
		free(tmp);
	}
	free(d);
	free(t);
	free(r);
	return 0;
}

/* Samples the alignment keeps of a communicator and function on a host,
 * at most (a join in slabs): ample for a median and its spread. */
#define SAMPLES		1024

/* Each communicator and function's count, hashed: a host has few. */
struct cf_count {
	uint64_t comm;
	uint8_t func;
	bool used;
	size_t n;
	uint64_t bits;			/* then: the sampling's */
};

static uint64_t sample_hash(const struct hvn_fleet_sample *c)
{
	return mix64(c->seq ^ mix64(c->comm));
}

static struct cf_count *cf_get(struct cf_count *t, size_t mask, uint64_t comm,
			       uint8_t func)
{
	size_t i = mix64(comm ^ ((uint64_t)func << 56)) & mask;

	while (t[i].used && (t[i].comm != comm || t[i].func != func))
		i = (i + 1) & mask;
	return &t[i];
}

/*
 * @h's implicit-sync collectives' ends (its x holding all of them), and
 * how many there are.  With @few, an even share of each communicator and
 * function's: those whose hashed sequence number has its low bits clear,
 * as few bits as leave SAMPLES or fewer.  Every host hashes alike, and a
 * host keeping fewer bits keeps a subset of another's: the hosts still
 * share the collectives the one with the most sampled.
 */
static int host_samples(struct hvn_fleet_host *h, bool few)
{
	const struct hvn_corr *x = h->x;
	struct cf_count *cf = NULL;
	size_t mask = 15, ncf = 0, n = 0;
	uint32_t *pick;

	free(h->samp);
	h->samp = NULL;
	h->nsamp = h->nsync = 0;
	/* Each communicator and function's count, where samples are few. */
	if (few) {
		cf = calloc(mask + 1, sizeof(*cf));
		if (!cf)
			return -ENOMEM;
	}
	for (size_t i = 0; i < x->ncoll; i++) {
		const struct hvn_coll *c = &x->coll[i];
		struct cf_count *e;

		if (!implicit_sync(c) || c->end <= c->start)
			continue;
		h->nsync++;
		if (!cf)
			continue;
		e = cf_get(cf, mask, c->comm, c->func);
		if (!e->used && 2 * ++ncf > mask + 1) {
			/* Half full: twice the room, each count placed again. */
			struct cf_count *t = calloc(2 * (mask + 1), sizeof(*t));

			for (size_t j = 0; t && j <= mask; j++)
				if (cf[j].used)
					*cf_get(t, 2 * mask + 1, cf[j].comm, cf[j].func) = cf[j];
			free(cf);
			cf = t;
			mask = 2 * mask + 1;
			if (!cf)
				return -ENOMEM;
			e = cf_get(cf, mask, c->comm, c->func);
		}
		*e = (struct cf_count){ c->comm, c->func, true, e->n + 1, 0 };
	}
	/* As few as there are: every one kept. */
	if (h->nsync <= SAMPLES) {
		free(cf);
		cf = NULL;
	}
	for (size_t j = 0; cf && j <= mask; j++)
		while (cf[j].used && cf[j].n / (cf[j].bits + 1) > SAMPLES)
			cf[j].bits = 2 * cf[j].bits + 1;
	/* Chosen, then placed in room of their number (what a host keeps
	 * for the whole join, amid what it read and let go). */
	pick = malloc((h->nsync + 1) * sizeof(*pick));
	if (!pick) {
		free(cf);
		return -ENOMEM;
	}
	for (size_t i = 0; i < x->ncoll; i++) {
		const struct hvn_coll *c = &x->coll[i];

		if (!implicit_sync(c) || c->end <= c->start)
			continue;
		if (cf) {
			struct hvn_fleet_sample v = { .comm = c->comm, .seq = c->seq };
			uint64_t bits = cf_get(cf, mask, c->comm, c->func)->bits;

			if (bits && (sample_hash(&v) & bits))
				continue;
		}
		pick[n++] = (uint32_t)i;
	}
	h->samp = malloc((n + 1) * sizeof(*h->samp));
	for (size_t k = 0; h->samp && k < n; k++) {
		const struct hvn_coll *c = &x->coll[pick[k]];

		h->samp[k] = (struct hvn_fleet_sample){ c->comm, c->seq, c->start,
							c->end, c->func, 0 };
		if (cf)
			h->samp[k].bits = (uint8_t)__builtin_popcountll(
				cf_get(cf, mask, c->comm, c->func)->bits);
	}
	free(pick);
	free(cf);
	if (!h->samp)
		return -ENOMEM;
	h->nsamp = n;
	return 0;
}

/*
 * Every host that @r's clock can reach, aligned on it: the hosts that
 * share collectives with @r, then in rounds those that share them only
 * with hosts aligned before (a chain of data-parallel groups), each
 * round's uncertainty added to the next.  A round's hosts are all aligned
 * against the same table: the order of the files changes nothing.
 * *@joined: the hosts aligned besides @r.
 */
static int align_island(struct hvn_fleet *f, uint32_t r, size_t *joined)
{
	struct ref_table tab = { 0 };
	struct key_end *ends = NULL;
	size_t nends = 0;
	double chain_unc = 0;
	bool more = true;
	int ret;

	*joined = 0;
	f->h[r].aligned = true;
	f->h[r].island = (int32_t)r;
	ret = add_ends(&ends, &nends, &f->h[r]);
	f->h[r].nsamples = nends;
	for (int round = 0; more && !ret; round++) {
		double round_unc = 0;
		size_t left = 0;

		qsort(ends, nends, sizeof(*ends), cmp_key);
		ret = table_build(&tab, ends, nends);
		more = false;
		for (size_t i = 0; i < f->nh && !ret; i++) {
			struct hvn_fleet_host *h = &f->h[i];

			if (h->aligned)
				continue;
			ret = align_host(h, &tab);
			if (!h->aligned) {
				left++;
				continue;
			}
			h->island = (int32_t)r;
			h->unc += chain_unc;
			if (round)
				h->via = (int32_t)r;
			h->align_round = round + 1;
			f->nsync += h->nsamples;
			(*joined)++;
			/* NTP's word against the collectives': 1 ms slack. */
			h->disagrees = fabs(h->offset) > 3 * h->unc + 1e6;
			if (h->unc > round_unc)
				round_unc = h->unc;
			more = true;
		}
		chain_unc = round_unc;
		/* The next round's table: only when some host is left. */
		for (size_t i = 0; i < f->nh && more && left && !ret; i++)
			if (f->h[i].island == (int32_t)r &&
			    f->h[i].align_round == round + 1)
				ret = add_ends(&ends, &nends, &f->h[i]);
		more &= left > 0;
	}
	free(ends);
	free(tab.e);
	free(tab.used);
	return ret;
}

static int align(struct hvn_fleet *f)
{
	size_t best = 0, joined;
	/* Each host's collectives to match, counted once; 0 once tried as
	 * a clock of its own. */
	size_t *nsync = calloc(f->nh + 1, sizeof(*nsync));
	int ret = nsync ? 0 : -ENOMEM;

	for (size_t i = 0; i < f->nh && !ret; i++) {
		f->h[i].via = -1;
		f->h[i].island = -1;
		/* Held whole: every end, taken now. */
		if (!f->nslab)
			ret = host_samples(&f->h[i], false);
		nsync[i] = f->h[i].nsync;
		ret = ret ?: host_base(&f->h[i]);
	}
	/* The reference: the host with the most collectives to match. */
	for (size_t i = 0; i < f->nh && !ret; i++)
		if (nsync[i] > best) {
			best = nsync[i];
			f->ref = i;
		}
	ret = ret ?: align_island(f, f->ref, &joined);
	/*
	 * Hosts that share nothing with the reference's (data-parallel
	 * groups of different pipeline stages): each such group on a clock
	 * of its own, so that a stall among them is judged on their
	 * alignment; against other hosts their times stay as NTP set them.
	 * A host that shares with nobody stays not aligned.
	 */
	while (!ret) {
		size_t had;
		int32_t b = -1;

		best = 0;
		for (size_t i = 0; i < f->nh; i++)
			if (!f->h[i].aligned && nsync[i] > best) {
				best = nsync[i];
				b = (int32_t)i;
			}
		if (b < 0 || best < MIN_SYNC)
			break;
		nsync[b] = 0;
		had = f->h[b].nsamples;
		ret = align_island(f, b, &joined);
		if (!ret && !joined) {
			f->h[b].aligned = false;
			f->h[b].island = -1;
			f->h[b].nsamples = had;
		}
	}
	free(nsync);
	return ret;
}

/* --- job stalls ------------------------------------------------------- */

static const struct hvn_coll *coll_of(const struct hvn_fleet *f,
				      const struct hvn_fleet_rank *r)
{
	return &f->h[r->host].x->coll[r->coll];
}

static int cmp_host_rank(const void *a, const void *b, void *arg)
{
	const struct hvn_fleet *f = arg;
	const struct hvn_fleet_rank *p = a, *q = b;
	int32_t x = coll_of(f, p)->rank, y = coll_of(f, q)->rank;

	if (p->host != q->host)
		return p->host < q->host ? -1 : 1;
	return (x > y) - (x < y);
}

static const struct hvn_stall *stall_of(const struct hvn_fleet *f,
					const struct hvn_fleet_rank *r)
{
	uint32_t s = f->h[r->host].stall_of[r->coll];

	return s ? &f->h[r->host].x->st[s - 1] : NULL;
}

/* Back from aligned time to @h's trace time. */
static uint64_t mono_of(const struct hvn_fleet_host *h, int64_t al)
{
	/* real = al + offset(real): twice is exact to drift squared. */
	int64_t real = wrap_sub(al, -host_offset(h, wrap_sub(al, -host_offset(h, al))));

	return (uint64_t)real - (uint64_t)h->base;
}

/* A process: its pid where the records give one, else its rank. */
static uint64_t proc_key(const struct hvn_corr *x, const struct hvn_coll *c)
{
	const struct hvn_proc *p = hvn_corr_proc_of(x, c->comm, c->rank);

	if (p && p->pid > 0)
		return (uint64_t)(uint32_t)p->pid;
	return (1ull << 63) | ((c->comm * 0x9e3779b97f4a7c15ull) ^ (uint32_t)c->rank);
}

static bool sequenced(const struct hvn_coll *c)
{
	return !c->is_p2p && c->seq != UINT64_MAX;
}

struct ord {
	uint64_t proc;
	uint64_t start;
	uint32_t i;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* @k's index in the sorted, distinct @keys of @n (it is there). */
static size_t bucket(const uint64_t *keys, size_t n, uint64_t k)
{
	size_t lo = 0, hi = n;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (keys[mid] <= k)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_ord(const void *a, const void *b)
{
	const struct ord *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

struct walk {
	uint64_t comm, seq, end;	/* seq UINT64_MAX: not sequenced */
};

struct pkey {
	uint64_t comm, key;
	int32_t rank;
	bool used;
};

static bool ord_le(const struct ord *a, const struct ord *b)
{
	return cmp_ord(a, b) <= 0;
}

/*
 * @o[0..n) in cmp_ord's order.  A host has a few processes, each one's
 * collectives mostly in time already: placed by process (stable), each
 * run sorted only where it is not in order.  @pk holds every process
 * key unless more ranks than it holds came (@npk past half its @cap):
 * then a plain sort.  0 or -ENOMEM.
 */
static int by_proc(struct ord *o, size_t n, const struct pkey *pk, size_t cap,
		   size_t npk)
{
	uint64_t *keys = malloc((npk + 1) * sizeof(*keys));
	size_t *at = calloc(npk + 2, sizeof(*at));
	struct ord *t = malloc((n + 1) * sizeof(*t));
	size_t nb = 0;

	if (!keys || !at || !t) {
		free(keys);
		free(at);
		free(t);
		return -ENOMEM;
	}
	if (2 * (npk + 1) > cap) {
		qsort(o, n, sizeof(*o), cmp_ord);
		goto out;
	}
	for (size_t j = 0; j < cap; j++)
		if (pk[j].used)
			keys[nb++] = pk[j].key;
	qsort(keys, nb, sizeof(*keys), cmp_u64);
	for (size_t j = 0, m = 0, all = nb; j < all; j++)
		if (!m || keys[j] != keys[m - 1])
			keys[m++] = keys[j], nb = m;
	for (size_t i = 0; i < n; i++)
		at[bucket(keys, nb, o[i].proc) + 1]++;
	for (size_t b = 0; b < nb; b++)
		at[b + 1] += at[b];
	for (size_t i = 0; i < n; i++)
		t[at[bucket(keys, nb, o[i].proc)]++] = o[i];
	memcpy(o, t, n * sizeof(*o));
	for (size_t a = 0, b; a < n; a = b) {
		bool sorted = true;

		for (b = a + 1; b < n && o[b].proc == o[a].proc; b++)
			sorted &= ord_le(&o[b - 1], &o[b]);
		if (!sorted)
			qsort(o + a, b - a, sizeof(*o), cmp_ord);
	}
out:
	free(keys);
	free(at);
	free(t);
	return 0;
}

/*
 * For each collective of @h, the one its process ran before it (the
 * latest to end before it began, among the last few: communicators on
 * other streams overlap), and the process's usual time between them.
 */
static int host_order(struct hvn_fleet_host *h)
{
	const struct hvn_corr *x = h->x;
	struct ord *o = malloc((x->ncoll + 1) * sizeof(*o));
	int64_t *gaps = malloc((x->ncoll + 1) * sizeof(*gaps));
	struct walk *w = malloc((x->ncoll + 1) * sizeof(*w));
	uint64_t *top = malloc((x->ncoll + 1) * sizeof(*top));
	/* Each communicator rank's process, looked up once. */
	size_t cap = 16, mask, npk = 0;
	struct pkey *pk;

	while (cap < 2 * x->nproc + 2)
		cap *= 2;
	mask = cap - 1;
	pk = calloc(cap, sizeof(*pk));
	h->prev = malloc((x->ncoll + 1) * sizeof(*h->prev));
	h->tgap = calloc(x->ncoll + 1, sizeof(*h->tgap));
	if (!o || !gaps || !w || !top || !pk || !h->prev || !h->tgap) {
		free(o);
		free(gaps);
		free(w);
		free(top);
		free(pk);
		return -ENOMEM;
	}
	for (size_t i = 0; i < x->ncoll; i++) {
		const struct hvn_coll *c = &x->coll[i];
		size_t j = (size_t)((c->comm ^ (uint32_t)c->rank) * 0x9e3779b97f4a7c15ull >> 40) & mask;
		uint64_t key;

		while (pk[j].used && (pk[j].comm != c->comm || pk[j].rank != c->rank))
			j = (j + 1) & mask;
		if (pk[j].used) {
			key = pk[j].key;
		} else {
			key = proc_key(x, c);
			/* ranks no record names: looked up each time once
			 * the table is half full */
			if (2 * ++npk <= cap)
				pk[j] = (struct pkey){ c->comm, key, c->rank, true };
			else
				npk--;
		}
		o[i] = (struct ord){ key, c->start, i };
		h->prev[i] = UINT32_MAX;
	}
	if (by_proc(o, x->ncoll, pk, cap, npk) < 0) {
		free(o);
		free(gaps);
		free(w);
		free(top);
		free(pk);
		return -ENOMEM;
	}
	/* What the walk back reads, in the sorted order: no jumps through
	 * the collectives. */
	for (size_t k = 0; k < x->ncoll; k++) {
		const struct hvn_coll *c = &x->coll[o[k].i];

		w[k] = (struct walk){ c->comm, sequenced(c) ? c->seq : UINT64_MAX,
				      c->end };
	}
	for (size_t g = 0; g < x->ncoll;) {
		size_t e = g, ng = 0;
		int64_t typ;

		while (e < x->ncoll && o[e].proc == o[g].proc)
			e++;
		/* top[k]: the latest end among w[g..k]; the walk back stops
		 * where nothing before can end later than what it found. */
		top[g] = w[g].end;
		for (size_t k = g + 1; k < e; k++)
			top[k] = w[k].end > top[k - 1] ? w[k].end : top[k - 1];
		for (size_t k = g + 1; k < e; k++) {
			const struct walk *c = &w[k];
			size_t best = SIZE_MAX;

			for (size_t j = k; j > g && k - j < 16; j--) {
				const struct walk *p = &w[j - 1];

				if (best != SIZE_MAX && top[j - 1] <= w[best].end)
					break;
				/* Never a later one of its communicator
				 * (records of a rank's ops out of order). */
				if (p->comm == c->comm && p->seq != UINT64_MAX &&
				    c->seq != UINT64_MAX && p->seq >= c->seq)
					continue;
				if (p->end <= o[k].start &&
				    (best == SIZE_MAX || p->end > w[best].end))
					best = j - 1;
			}
			if (best == SIZE_MAX)
				continue;
			h->prev[o[k].i] = o[best].i;
			gaps[ng++] = (int64_t)(o[k].start - w[best].end);
		}
		typ = ng ? kth(gaps, ng, (ng - 1) / 2) : 0;
		for (size_t k = g; k < e; k++)
			h->tgap[o[k].i] = typ;
		g = e;
	}
	free(o);
	free(gaps);
	free(w);
	free(top);
	free(pk);
	return 0;
}

/* Threads for a join's work: the CPUs there are, up to a few. */
static int workers(size_t jobs)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n > 8)
		n = 8;
	if (n < 1)
		n = 1;
	return (size_t)n < jobs ? (int)n : (int)(jobs ? jobs : 1);
}

/* @fn(@ctx, i) for each i < @n, shared among a worker a CPU. */
struct par {
	int (*fn)(void *ctx, size_t i, int worker);
	void *ctx;
	size_t n, next, failed;		/* failed: the least i that did */
	int ret;
	pthread_mutex_t lock;
};

struct par_arg {
	struct par *w;
	int worker;
};

static void *par_worker(void *arg)
{
	struct par_arg *a = arg;
	struct par *w = a->w;

	for (;;) {
		size_t i;
		int r;

		pthread_mutex_lock(&w->lock);
		i = w->ret ? w->n : w->next++;
		pthread_mutex_unlock(&w->lock);
		if (i >= w->n)
			break;
		r = w->fn(w->ctx, i, a->worker);
		pthread_mutex_lock(&w->lock);
		if (r && i < w->failed) {
			w->failed = i;
			w->ret = r;
		}
		pthread_mutex_unlock(&w->lock);
	}
	return NULL;
}

/* 0, or what the least i that failed returned (once one failed, no
 * other is started).  @fn is told its worker (0 .. workers(@n) - 1). */
static int par_for(size_t n, int (*fn)(void *ctx, size_t i, int worker),
		   void *ctx)
{
	struct par w = { .fn = fn, .ctx = ctx, .n = n, .failed = SIZE_MAX };
	struct par_arg a[8];
	pthread_t tid[8];
	int nw = workers(n), started = 0;

	pthread_mutex_init(&w.lock, NULL);
	for (int i = 0; i < nw; i++)
		a[i] = (struct par_arg){ &w, i };
	for (int i = 1; i < nw; i++)
		if (!pthread_create(&tid[started], NULL, par_worker, &a[i]))
			started++;
	par_worker(&a[0]);
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	pthread_mutex_destroy(&w.lock);
	return w.ret;
}

/* Host @i's order, and its collectives' times aligned (what the join
 * places them by), on a worker of its own. */
static int order_one(void *ctx, size_t i, int worker)
{
	struct hvn_fleet *f = ctx;
	struct hvn_fleet_host *h = &f->h[i];
	const struct hvn_corr *x = h->x;

	(void)worker;
	h->al = malloc((2 * x->ncoll + 1) * sizeof(*h->al));
	if (!h->al)
		return -ENOMEM;
	for (size_t k = 0; k < x->ncoll; k++) {
		h->al[2 * k] = aligned(h, real_of(h, x->coll[k].start));
		h->al[2 * k + 1] = aligned(h, real_of(h, x->coll[k].end));
	}
	return host_order(h);
}

static double host_unc(const struct hvn_fleet_host *h)
{
	return h->aligned ? h->unc : INFINITY;
}

/* The clocks' uncertainty between two hosts: unknown across islands. */
static double pair_unc(const struct hvn_fleet *f, uint32_t a, uint32_t b)
{
	const struct hvn_fleet_host *x = &f->h[a], *y = &f->h[b];

	if (x->island != y->island)
		return INFINITY;
	return host_unc(x) > host_unc(y) ? host_unc(x) : host_unc(y);
}

/* A collective's key while its copies are counted: hashed to its group. */
struct gkey {
	uint64_t comm, seq;
	uint8_t func;
	uint32_t n;			/* its copies */
	uint32_t first;			/* then: its first entry in all */
};

struct gtab {
	struct gkey *k;
	uint32_t *slot;			/* into k, + 1; 0 empty */
	size_t mask, nk, cap;
};

static size_t gkey_hash(const struct hvn_coll *c)
{
	struct key_end k = { c->comm, c->seq, c->func, 0 };

	return key_hash(&k);
}

/* @c's group in @t, added if new: its index, or UINT32_MAX (no memory). */
static uint32_t gtab_get(struct gtab *t, const struct hvn_coll *c)
{
	size_t i;

	if (2 * (t->nk + 1) > t->mask + 1) {
		size_t cap = 2 * (t->mask + 1);
		uint32_t *slot = calloc(cap, sizeof(*slot));

		if (!slot)
			return UINT32_MAX;
		for (size_t j = 0; j < t->nk; j++) {
			struct hvn_coll x = { .comm = t->k[j].comm,
					      .seq = t->k[j].seq,
					      .func = t->k[j].func };

			for (i = gkey_hash(&x) & (cap - 1); slot[i]; i = (i + 1) & (cap - 1))
				;
			slot[i] = j + 1;
		}
		free(t->slot);
		t->slot = slot;
		t->mask = cap - 1;
	}
	for (i = gkey_hash(c) & t->mask; t->slot[i]; i = (i + 1) & t->mask) {
		struct gkey *k = &t->k[t->slot[i] - 1];

		if (k->comm == c->comm && k->seq == c->seq && k->func == c->func)
			return t->slot[i] - 1;
	}
	if (t->nk == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		void *g = realloc(t->k, cap * sizeof(*t->k));

		if (!g)
			return UINT32_MAX;
		t->k = g;
		t->cap = cap;
	}
	t->k[t->nk] = (struct gkey){ c->comm, c->seq, c->func, 0, 0 };
	t->slot[i] = t->nk + 1;
	return t->nk++;
}

static int cmp_gkey(const void *a, const void *b, void *arg)
{
	const struct gkey *k = arg;
	const struct gkey *x = &k[*(const uint32_t *)a], *y = &k[*(const uint32_t *)b];

	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/*
 * Every sequenced collective's copies, by collective, and the groups (by
 * key: a communicator and function's together).  The copies are counted
 * per key through a hash, then placed: no sort of every rank's copy.
 * Within a group they lie by host, each host's in its own order.
 */
static int build_all(struct hvn_fleet *f)
{
	struct gtab t = { .mask = 1023 };
	uint32_t *order = NULL, *rank = NULL;
	int ret = -ENOMEM;

	t.slot = calloc(t.mask + 1, sizeof(*t.slot));
	if (!t.slot)
		return -ENOMEM;
	/* Each host's order on its own: a worker a CPU. */
	if (par_for(f->nh, order_one, f))
		goto out;
	for (size_t i = 0; i < f->nh; i++) {
		struct hvn_fleet_host *h = &f->h[i];
		const struct hvn_corr *x = h->x;

		/* at[]: the group's key index for now, its entry later */
		h->at = malloc((x->ncoll + 1) * sizeof(*h->at));
		if (!h->at)
			goto out;
		for (size_t k = 0; k < x->ncoll; k++) {
			uint32_t g = UINT32_MAX;

			if (sequenced(&x->coll[k])) {
				g = gtab_get(&t, &x->coll[k]);
				if (g == UINT32_MAX)
					goto out;
				t.k[g].n++;
				f->nall++;
			}
			h->at[k] = g;
		}
	}
	/* Room kept from slab to slab: a slab's copies take hundreds of
	 * MiB, and pages mapped afresh are zeroed by the kernel each time. */
	if (f->nall + 1 > f->all_cap) {
		free(f->all);
		f->all_cap = f->nall + 1 + f->nall / 8;
		f->all = malloc(f->all_cap * sizeof(*f->all));
		if (!f->all)
			f->all_cap = 0;
	}
	f->grp = calloc(t.nk + 1, sizeof(*f->grp));
	order = malloc((t.nk + 1) * sizeof(*order));
	rank = malloc((t.nk + 1) * sizeof(*rank));
	if (!f->all || !f->grp || !order || !rank)
		goto out;
	for (uint32_t g = 0; g < t.nk; g++)
		order[g] = g;
	qsort_r(order, t.nk, sizeof(*order), cmp_gkey, t.k);
	for (uint32_t r = 0, first = 0; r < t.nk; r++) {
		struct hvn_fleet_grp *g = &f->grp[r];

		rank[order[r]] = r;
		t.k[order[r]].first = first;
		*g = (struct hvn_fleet_grp){ .first = first, .last = first,
					     .min_dur = INT64_MAX };
		first += t.k[order[r]].n;
	}
	f->ngrp = t.nk;
	for (size_t i = 0; i < f->nh; i++) {
		struct hvn_fleet_host *h = &f->h[i];
		const struct hvn_corr *x = h->x;

		for (size_t k = 0; k < x->ncoll; k++) {
			const struct hvn_coll *c = &x->coll[k];
			struct hvn_fleet_grp *g;
			struct hvn_fleet_rank *r;
			const struct hvn_stall *st;
			int64_t dur;
			uint32_t e, gi;

			if (h->at[k] == UINT32_MAX)
				continue;
			gi = rank[h->at[k]];
			g = &f->grp[gi];
			e = g->first + g->n++;
			r = &f->all[e];
			*r = (struct hvn_fleet_rank){
				.host = i, .coll = k, .rank = c->rank, .grp = gi,
				/* Entered: when its proxy work began (NCCL's
				 * start when none): queued ahead is not there. */
				.arrive = h->al[2 * k],
				.end = h->al[2 * k + 1],
			};
			h->at[k] = e;
			if (g->n == 1) {
				g->host = i;
				g->coll = k;
			}
			st = stall_of(f, r);
			dur = wrap_sub(r->end, r->arrive);
			if (r->arrive >= f->all[g->last].arrive)
				g->last = e;
			if (st && st->lost_ns > g->lost)
				g->lost = st->lost_ns;
			if (dur < g->min_dur)
				g->min_dur = dur;
		}
	}
	ret = 0;
out:
	free(t.k);
	free(t.slot);
	free(order);
	free(rank);
	return ret;
}

/* A host's arrival in a group: its last rank in. */
struct harr {
	uint32_t host, e;		/* e: that rank's entry */
	int64_t arrive;
};

static int cmp_harr(const void *a, const void *b)
{
	const struct harr *x = a, *y = b;

	return (x->arrive > y->arrive) - (x->arrive < y->arrive);
}

static int cmp_harr_host(const void *a, const void *b)
{
	const struct harr *x = a, *y = b;

	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	return (x->arrive > y->arrive) - (x->arrive < y->arrive);
}

/*
 * Group @g's hosts by arrival into @v (room for g->n): the count.  The
 * on-time arrival is the first quarter's (the first of up to 4 hosts):
 * a few late hosts move it not at all.
 */
static uint32_t host_arrivals(const struct hvn_fleet *f,
			      const struct hvn_fleet_grp *g, struct harr *v)
{
	uint32_t n = 0;

	for (uint32_t k = 0; k < g->n; k++) {
		const struct hvn_fleet_rank *r = &f->all[g->first + k];

		v[k] = (struct harr){ r->host, g->first + k, r->arrive };
	}
	qsort(v, g->n, sizeof(*v), cmp_harr_host);
	for (uint32_t k = 0; k < g->n; k++)
		if (k + 1 == g->n || v[k + 1].host != v[k].host)
			v[n++] = v[k];		/* each host's last */
	qsort(v, n, sizeof(*v), cmp_harr);
	return n;
}

/* The interval [a0, a1) of aligned time on @h's trace time, probed on the
 * CPUs of its copy @coll: 0 or -ENOMEM. */
static int probe(struct hvn_fleet *f, uint32_t host, uint32_t coll,
		 int64_t a0, int64_t a1, const struct hvn_corr_params *p,
		 struct hvn_fleet_culprit *out)
{
	struct hvn_fleet_host *h = &f->h[host];

	out->host = host;
	out->coll = coll;
	out->why_start = mono_of(h, a0);
	out->why_end = mono_of(h, a1);
	/* An interval of a file's word: never empty, never wrapped. */
	if (!out->why_end)
		out->why_end = 1;
	if (out->why_end <= out->why_start)
		out->why_start = out->why_end - 1;
	return hvn_corr_probe(h->x, NULL, p, coll, out->why_start, out->why_end,
			      &out->why);
}

/* What of it host noise explains, by the probe's own verdict. */
static double explained(const struct hvn_fleet_culprit *c)
{
	return c->why.cause ? c->why.explained : 0;
}

/* A rank's copy of an op: its host, and the op's index there. */
struct copy {
	uint32_t host, coll;
};

static int cmp_copy(const void *a, const void *b)
{
	const struct copy *x = a, *y = b;

	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	return (x->coll > y->coll) - (x->coll < y->coll);
}

/*
 * Of the copies @cand (sorted here by host), the hosts whose noise over
 * [a0, a1) stalled the transfer: each explaining HOLD_SHARE of @excess or
 * more, the most first, into @out (room for @nc).  The count, or -ENOMEM.
 */
static int holders(struct hvn_fleet *f, struct copy *cand, uint32_t nc,
		   uint32_t root, int64_t a0, int64_t a1, double excess,
		   const struct hvn_corr_params *p, struct hvn_fleet_culprit *out)
{
	int n = 0;

	qsort(cand, nc, sizeof(*cand), cmp_copy);
	for (uint32_t k = 0, next; k < nc; k = next) {
		struct hvn_fleet_culprit c = { 0 };

		/* A host: the most any of its ranks' CPUs explain (its
		 * ranks' proxy threads run on different CPUs). */
		for (next = k; next < nc && cand[next].host == cand[k].host; next++) {
			struct hvn_fleet_culprit t = { 0 };
			uint32_t j = next;

			if (probe(f, cand[j].host, cand[j].coll, a0, a1, p, &t)) {
				hvn_stall_release(&c.why);
				return -ENOMEM;
			}
			if (j == k || explained(&t) > explained(&c)) {
				hvn_stall_release(&c.why);
				c = t;
			} else {
				hvn_stall_release(&t.why);
			}
		}
		if (explained(&c) >= HOLD_SHARE * excess && explained(&c) > 0) {
			c.how = HVN_HOLD_TRANSFER;
			c.root = root;
			c.judged_ns = excess;
			c.delay_ns = explained(&c) < excess ? explained(&c) : excess;
			out[n++] = c;
		} else {
			hvn_stall_release(&c.why);
		}
	}
	/* The most first. */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && explained(&out[j]) > explained(&out[j - 1]); j--) {
			struct hvn_fleet_culprit t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

/* Group @g's copies as candidates: a malloc'd array (NULL: no memory). */
static struct copy *grp_copies(const struct hvn_fleet *f, uint32_t g)
{
	const struct hvn_fleet_grp *gr = &f->grp[g];
	struct copy *v = malloc((gr->n + 1) * sizeof(*v));

	for (uint32_t k = 0; v && k < gr->n; k++)
		v[k] = (struct copy){ f->all[gr->first + k].host,
				      f->all[gr->first + k].coll };
	return v;
}

/* The usual time of entry @e's collective on its host. */
static double usual(const struct hvn_fleet *f, uint32_t e)
{
	const struct hvn_coll *c = coll_of(f, &f->all[e]);
	const struct hvn_fleet_grp *g = &f->grp[f->all[e].grp];

	if (c->median)
		return (double)c->median;
	return g->min_dur == INT64_MAX ? 0 : (double)g->min_dur;
}

static int64_t arrive_of(const struct hvn_fleet *f, uint32_t host, uint32_t coll)
{
	const struct hvn_fleet_host *h = &f->h[host];

	return aligned(h, real_of(h, h->x->coll[coll].start));
}

static int64_t end_of(const struct hvn_fleet *f, uint32_t host, uint32_t coll)
{
	const struct hvn_fleet_host *h = &f->h[host];

	return aligned(h, real_of(h, h->x->coll[coll].end));
}

/*
 * The other side of point-to-point op @coll of @host: the peer rank's op
 * toward it whose time overlaps it most (the same op, seen from there).
 */
struct hvn_fleet_p2p {
	uint64_t comm;
	int32_t rank, peer;
	uint32_t host, coll;
};

static int cmp_p2p(const void *a, const void *b)
{
	const struct hvn_fleet_p2p *x = a, *y = b;

	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->peer != y->peer)
		return x->peer < y->peer ? -1 : 1;
	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	return (x->coll > y->coll) - (x->coll < y->coll);
}

/* Host @h's sends and receives, counted once. */
static size_t count_p2p(struct hvn_fleet_host *h)
{
	if (!h->p2p_counted) {
		h->np2p = 0;
		for (size_t k = 0; k < h->x->ncoll; k++)
			h->np2p += h->x->coll[k].is_p2p != 0;
		h->p2p_counted = true;
	}
	return h->np2p;
}

/* The sends and receives of every host, sorted for p2p_peer(). */
static int build_p2p(struct hvn_fleet *f)
{
	size_t n = 0;

	for (size_t i = 0; i < f->nh; i++)
		n += count_p2p(&f->h[i]);
	f->p2p = malloc((n + 1) * sizeof(*f->p2p));
	if (!f->p2p)
		return -ENOMEM;
	for (size_t i = 0; i < f->nh; i++)
		for (size_t k = 0; f->h[i].np2p && k < f->h[i].x->ncoll; k++) {
			const struct hvn_coll *q = &f->h[i].x->coll[k];

			if (q->is_p2p)
				f->p2p[f->np2p++] = (struct hvn_fleet_p2p){
					q->comm, q->rank, q->peer, i, k };
		}
	qsort(f->p2p, f->np2p, sizeof(*f->p2p), cmp_p2p);
	return 0;
}

/* The first of f->p2p not before @k (binary search). */
static size_t p2p_first(const struct hvn_fleet *f, const struct hvn_fleet_p2p *k)
{
	size_t lo = 0, hi = f->np2p;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (cmp_p2p(&f->p2p[mid], k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether rank @rank of communicator @comm sent or received anything in
 * the traces given (its host's may be missing). */
static bool p2p_rank_seen(const struct hvn_fleet *f, uint64_t comm, int32_t rank)
{
	struct hvn_fleet_p2p k = { comm, rank, INT32_MIN, 0, 0 };
	size_t i = p2p_first(f, &k);

	if (i < f->np2p && f->p2p[i].comm == comm && f->p2p[i].rank == rank)
		return true;
	/* A slab holds part of the window: a rank with no send or receive
	 * there is still in these traces if a host knows its process. */
	for (size_t h = 0; f->nslab && h < f->nh; h++)
		if (hvn_corr_proc_of(f->h[h].x, comm, rank))
			return true;
	return false;
}

/*
 * The other side of send or receive @host/@coll: of the copies its peer
 * rank ran towards it, the one whose time overlaps it most (the first of
 * equals, by host and collective).
 */
static bool p2p_peer(const struct hvn_fleet *f, uint32_t host, uint32_t coll,
		     struct copy *out)
{
	const struct hvn_coll *c = &f->h[host].x->coll[coll];
	int64_t a = arrive_of(f, host, coll), e = end_of(f, host, coll);
	struct hvn_fleet_p2p k = { c->comm, c->peer, c->rank, 0, 0 };
	double best = -1;
	size_t lo;

	if (c->peer < 0)
		return false;
	for (lo = p2p_first(f, &k); lo < f->np2p && f->p2p[lo].comm == k.comm &&
	       f->p2p[lo].rank == k.rank && f->p2p[lo].peer == k.peer; lo++) {
		uint32_t i = f->p2p[lo].host, q = f->p2p[lo].coll;
		int64_t qa = arrive_of(f, i, q), qe = end_of(f, i, q);
		double ov = (double)(qe < e ? qe : e) - (double)(qa > a ? qa : a);

		if (ov > best) {
			best = ov;
			*out = (struct copy){ i, q };
		}
	}
	return best >= 0;
}

/*
 * Rank @host/@coll itself came late by @late: its noise since it could
 * have gone on (the end of the op before it) explains it, at least
 * min_share of @late.
 */
static int own(struct hvn_fleet *f, uint32_t host, uint32_t coll, double late,
	       bool carried, const struct hvn_corr_params *p,
	       struct hvn_fleet_culprit *out)
{
	const struct hvn_fleet_host *h = &f->h[host];
	int64_t a = arrive_of(f, host, coll), a0 = wrap_sub(a, (int64_t)late);
	uint32_t e = h->at[coll], pc = h->prev[coll];
	struct hvn_corr_params q = *p;
	int ret;

	if (pc != UINT32_MAX && end_of(f, host, pc) < a0)
		a0 = end_of(f, host, pc);
	q.min_share = p->min_share * late / ((double)a - (double)a0);
	ret = probe(f, host, coll, a0, a, &q, out);
	out->how = HVN_HOLD_LATE;
	out->root = e == UINT32_MAX ? UINT32_MAX : f->all[e].grp;
	out->carried = carried;
	out->delay_ns = out->judged_ns = late;
	return ret;
}

/* The holder of a stalled transfer into @out: the best, or none (how
 * 0). */
static int held_by(struct hvn_fleet *f, struct copy *cand, uint32_t nc,
		   uint32_t root, int64_t a0, int64_t a1, double excess,
		   const struct hvn_corr_params *p, struct hvn_fleet_culprit *out)
{
	struct hvn_fleet_culprit *v = calloc(nc + 1, sizeof(*v));
	int n;

	memset(out, 0, sizeof(*out));
	if (!v)
		return -ENOMEM;
	n = holders(f, cand, nc, root, a0, a1, excess, p, v);
	if (n < 0) {
		free(v);
		return -ENOMEM;
	}
	if (n > 0)
		*out = v[0];
	else
		out->root = root;
	for (int k = 1; k < n; k++)
		hvn_stall_release(&v[k].why);
	free(v);
	return 0;
}

/* Held by a stalled transfer before it: what held that one held it. */
static int held_before(struct hvn_fleet *f, struct copy *cand, uint32_t nc,
		       uint32_t root, int64_t a0, int64_t a1, double excess,
		       double late, const struct hvn_corr_params *p,
		       struct hvn_fleet_culprit *out)
{
	int ret = held_by(f, cand, nc, root, a0, a1, excess, p, out);

	out->carried = true;
	out->delay_ns = late;
	return ret;
}

/*
 * Who made rank @host/@coll enter @late ns late: its wait followed back,
 * collective to collective (point-to-point ops too).  Fills @out (its
 * noise probed) and returns 0, or -ENOMEM.  out->carried says whether the
 * wait led to an earlier collective; out->how is 0 where it led to a
 * stalled transfer no host noise explains (compute, the network or a GPU).
 */
static int resolve(struct hvn_fleet *f, uint32_t host, uint32_t coll,
		   double late, const struct hvn_corr_params *p,
		   struct hvn_fleet_culprit *out)
{
	memset(out, 0, sizeof(*out));
	for (int hop = 0; hop < MAX_HOPS; hop++) {
		struct hvn_fleet_host *h = &f->h[host];
		const struct hvn_coll *c = &h->x->coll[coll];
		uint32_t pc = h->prev[coll];
		double gap = pc == UINT32_MAX ? 0 :
			     (double)c->start - (double)h->x->coll[pc].end;

		/* The first op its process recorded: whether it came late
		 * or only began there, nothing says. */
		if (pc == UINT32_MAX) {
			out->carried = hop > 0;
			out->root = UINT32_MAX;
			return 0;
		}
		/* Its own lateness: its process took its time after the op
		 * before. */
		if (gap - (double)h->tgap[coll] >= late / 2)
			return own(f, host, coll, late, hop > 0, p, out);
		if (h->at[pc] != UINT32_MAX) {
			/* A collective: its stalled transfer, or its last
			 * arrival (followed back in turn). */
			uint32_t pe = h->at[pc];
			uint32_t gi = f->all[pe].grp;
			const struct hvn_fleet_grp *g = &f->grp[gi];
			const struct hvn_fleet_rank *last = &f->all[g->last];
			double inflight = (double)f->all[pe].end -
					  (double)last->arrive - usual(f, pe);

			if (inflight >= late / 2) {
				struct copy *cand = grp_copies(f, gi);
				int ret;

				if (!cand)
					return -ENOMEM;
				ret = held_before(f, cand, g->n, gi, last->arrive,
						  f->all[pe].end, inflight, late, p, out);
				free(cand);
				return ret;
			}
			host = last->host;
			coll = last->coll;
			continue;
		}
		/* A send or receive: its peer came late, or the transfer
		 * between the two stalled. */
		{
			struct copy pair[2] = { { host, pc } };
			int64_t a0 = arrive_of(f, host, pc), e = end_of(f, host, pc);
			int64_t pa;

			if (!h->x->coll[pc].is_p2p)
				return own(f, host, coll, late, hop > 0, p, out);
			if (!p2p_peer(f, host, pc, &pair[1])) {
				/* Its peer's host is not among the traces:
				 * whoever held it there is not seen, and
				 * this rank only waited.  Nobody is named. */
				if (h->x->coll[pc].peer >= 0 &&
				    !p2p_rank_seen(f, h->x->coll[pc].comm,
						   h->x->coll[pc].peer)) {
					out->carried = true;
					out->root = UINT32_MAX;
					return 0;
				}
				return own(f, host, coll, late, hop > 0, p, out);
			}
			pa = arrive_of(f, pair[1].host, pair[1].coll);
			if ((double)pa - (double)a0 >= late / 2) {
				host = pair[1].host;
				coll = pair[1].coll;
				continue;
			}
			/* It came late to the send or receive itself (a
			 * pipeline stage held by the stage before it): what
			 * held it there. */
			if ((double)a0 - (double)pa >= late / 2) {
				coll = pc;
				continue;
			}
			if (arrive_of(f, pair[1].host, pair[1].coll) > a0)
				a0 = arrive_of(f, pair[1].host, pair[1].coll);
			if ((double)e - (double)a0 -
			    (double)h->x->coll[pc].median >= late / 2)
				return held_before(f, pair, 2, UINT32_MAX, a0, e,
						   (double)e - (double)a0, late, p, out);
			return own(f, host, coll, late, hop > 0, p, out);
		}
	}
	/* A wait longer than that: judged where the following stopped. */
	out->carried = true;
	out->root = UINT32_MAX;
	return 0;
}

/* Late enough to have held the job: over the threshold, the clocks'
 * uncertainty and the share of what the job lost. */
static bool is_late(const struct hvn_corr_params *p, double late, double unc,
		    uint64_t lost)
{
	return late >= p->min_ms * 1e6 && late > 3 * unc &&
	       late >= p->min_share * lost;
}

/* A new job stall of @nr ranks for @c's op, zeroed past its key: NULL
 * when out of memory. */
static struct hvn_fleet_stall *new_stall(struct hvn_fleet *f,
					 const struct hvn_coll *c, uint32_t nr)
{
	struct hvn_fleet_stall *s;
	void *grown = realloc(f->st, (f->nst + 1) * sizeof(*f->st));

	if (!grown)
		return NULL;
	f->st = grown;
	s = &f->st[f->nst++];
	memset(s, 0, sizeof(*s));
	s->comm = c->comm;
	s->seq = c->seq;
	s->func = c->func;
	s->nr = nr;
	s->r = calloc(nr, sizeof(*s->r));
	return s->r ? s : NULL;
}

static int add_culprit(struct hvn_fleet_stall *s, const struct hvn_fleet_culprit *c)
{
	void *g;

	/* The same host holding it twice (two late hosts' waits led to
	 * it): one culprit, the shares added, the larger one's noise. */
	for (uint32_t i = 0; i < s->ncul; i++)
		if (s->cul[i].host == c->host) {
			double sum = s->cul[i].delay_ns + c->delay_ns;

			if (c->delay_ns > s->cul[i].delay_ns) {
				hvn_stall_release(&s->cul[i].why);
				s->cul[i] = *c;
			} else {
				struct hvn_stall w = c->why;

				hvn_stall_release(&w);
			}
			s->cul[i].delay_ns = sum;
			return 0;
		}
	g = realloc(s->cul, (s->ncul + 1) * sizeof(*s->cul));
	if (!g)
		return -ENOMEM;
	s->cul = g;
	s->cul[s->ncul++] = *c;
	return 0;
}

/* Whether @host is a culprit of @s, or a maybe. */
static bool named(const struct hvn_fleet_stall *s, uint32_t host)
{
	for (uint32_t k = 0; k < s->ncul; k++)
		if (s->cul[k].host == host)
			return true;
	for (uint32_t k = 0; k < s->nmaybe; k++)
		if (s->maybe[k].host == host)
			return true;
	return false;
}

static int add_maybe(struct hvn_fleet_stall *s, const struct hvn_fleet_culprit *c)
{
	void *g = realloc(s->maybe, (s->nmaybe + 1) * sizeof(*s->maybe));

	if (!g)
		return -ENOMEM;
	s->maybe = g;
	s->maybe[s->nmaybe++] = *c;
	return 0;
}

static int judge(struct hvn_fleet *f, struct hvn_fleet_stall *s, uint32_t gi,
		 const struct hvn_corr_params *p)
{
	const struct hvn_fleet_grp *g = &f->grp[gi];
	struct harr *v = malloc(g->n * sizeof(*v));
	uint32_t nh, nlate = 0;
	double unc = 0;
	int ret = 0;

	if (!v)
		return -ENOMEM;
	nh = host_arrivals(f, g, v);
	for (uint32_t i = 0; i < s->nr; i++)
		if (pair_unc(f, s->r[0].host, s->r[i].host) > unc)
			unc = pair_unc(f, s->r[0].host, s->r[i].host);
	s->unc = unc;
	s->arrive = v[0].arrive;
	for (uint32_t i = 0; i < s->nr; i++)
		if (s->r[i].arrive < s->arrive)
			s->arrive = s->r[i].arrive;
	s->late_ns = g->late;
	s->spread_ns = (double)f->all[g->last].arrive - (double)s->arrive;
	/* Late hosts, the latest first: each may have held the job. */
	for (uint32_t i = nh; i-- > 0;) {
		double l = (double)v[i].arrive - (double)g->ok;

		if (!is_late(p, l, unc, s->lost_ns))
			break;
		nlate++;
	}
	s->cls = nlate ? HVN_FLEET_ARRIVAL : HVN_FLEET_INFLIGHT;
	for (uint32_t k = 0; k < nlate && !ret; k++) {
		/*
		 * v[nh - 1 - k], late by l.  What each late host cost the job
		 * is split as a runway is among the planes that need it: the
		 * stretch from one lateness to the next is shared by the
		 * hosts at least that late (two hosts stopped together share
		 * the delay; one 18 ms late beside one 40 ms late gets 9).
		 */
		const struct harr *a = &v[nh - 1 - k];
		double l = (double)a->arrive - (double)g->ok, share = 0, below = 0;
		struct hvn_fleet_culprit c;

		for (uint32_t j = nh - nlate; j <= nh - 1 - k; j++) {
			double lj = (double)v[j].arrive - (double)g->ok;

			share += (lj - below) / (nh - j);
			below = lj;
		}
		ret = resolve(f, f->all[a->e].host, f->all[a->e].coll, l, p, &c);
		if (ret)
			break;
		/* Late only because another host held them. */
		for (uint32_t i = 0; i < s->nr; i++)
			if (s->r[i].host == a->host && (!c.how || c.host != a->host) &&
			    (double)s->r[i].arrive - (double)g->ok >= l / 2)
				s->r[i].late = true;
		if (!c.how) {
			hvn_stall_release(&c.why);
			continue;	/* nothing said who held it */
		}
		c.delay_ns = share;
		ret = add_culprit(s, &c);
	}
	if (!ret && !nlate) {
		/* In flight: whoever stalled the transfer, on any host. */
		struct hvn_fleet_culprit *c = calloc(g->n, sizeof(*c));
		struct copy *cand = grp_copies(f, gi);
		int64_t end = f->all[g->last].arrive;
		int n;

		for (uint32_t i = 0; i < s->nr; i++)
			if (stall_of(f, &s->r[i]) && s->r[i].end > end)
				end = s->r[i].end;
		n = c && cand ? holders(f, cand, g->n, gi, f->all[g->last].arrive,
					end, (double)s->lost_ns, p, c) : -ENOMEM;
		free(cand);
		if (n < 0)
			ret = -ENOMEM;
		for (int k = 0; k < n && !ret; k++)
			ret = add_culprit(s, &c[k]);
		free(c);
	}
	/* Nobody plainly late, but hosts came late by what the clocks'
	 * uncertainty may hide: each whose noise before it came explains
	 * that is named as maybe having held the job, not drained. */
	for (uint32_t i = nh; !ret && !nlate && i-- > 0;) {
		double l = (double)v[i].arrive - (double)g->ok;
		struct hvn_fleet_culprit c;

		if (l < p->min_ms * 1e6 || l < p->min_share * s->lost_ns)
			break;
		ret = resolve(f, f->all[v[i].e].host, f->all[v[i].e].coll, l, p, &c);
		if (ret)
			break;
		if (!c.how || !c.why.cause || named(s, c.host)) {
			hvn_stall_release(&c.why);
			continue;
		}
		/* Its own lateness, or a transfer it stalled before: what
		 * its noise had to explain stays as resolve() judged it. */
		c.delay_ns = l;
		ret = add_maybe(s, &c);
		if (ret)
			hvn_stall_release(&c.why);
	}
	free(v);
	return ret;
}

/* Moves the ranks of @c[0..nc) (each one's host and rank) that are in
 * s->r[n..nr) to s->r[n..], in @c's order; returns n plus those moved. */
static uint32_t move_ranks(const struct hvn_fleet *f, struct hvn_fleet_stall *s,
			   const struct hvn_fleet_culprit *c, uint32_t nc, uint32_t n)
{
	for (uint32_t k = 0; k < nc; k++)
		for (uint32_t i = n; i < s->nr; i++) {
			const struct hvn_coll *a = coll_of(f, &s->r[i]);
			const struct hvn_coll *b = &f->h[c[k].host].x->coll[c[k].coll];

			if (s->r[i].host == c[k].host && a->rank == b->rank) {
				struct hvn_fleet_rank t = s->r[i];

				s->r[i] = s->r[n];
				s->r[n++] = t;
				break;
			}
		}
	return n;
}

/* Culprits' ranks first (their order), then the others by host and rank;
 * noisy and unseen hosts. */
static int arrange(struct hvn_fleet *f, struct hvn_fleet_stall *s)
{
	uint32_t n;

	s->culprit = s->ncul > 0;
	s->nguilty = move_ranks(f, s, s->cul, s->ncul, 0);
	/* Then the maybes' ranks: neither culprits nor waiting. */
	n = move_ranks(f, s, s->maybe, s->nmaybe, s->nguilty);
	s->nmaybe_r = n - s->nguilty;
	/* The rest by host and rank, for people to read. */
	qsort_r(&s->r[n], s->nr - n, sizeof(*s->r), cmp_host_rank, f);
	s->noisy = calloc(s->nr, sizeof(*s->noisy));
	s->unseen = calloc(s->nr, sizeof(*s->unseen));
	if (!s->noisy || !s->unseen)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->nr; i++) {
		const struct hvn_stall *st = stall_of(f, &s->r[i]);
		uint32_t h = s->r[i].host;
		bool seen = false;

		seen = named(s, h);
		for (uint32_t k = 0; k < s->nnoisy && !seen; k++)
			seen = s->noisy[k] == h;
		if (st && st->cause && !seen)
			s->noisy[s->nnoisy++] = h;
		seen = false;
		for (uint32_t k = 0; k < s->nunseen && !seen; k++)
			seen = s->unseen[k] == h;
		if (!seen && f->h[h].seen == HVN_SEEN_NOTHING)
			s->unseen[s->nunseen++] = h;
	}
	return 0;
}

static int cmp_fleet_lost(const void *a, const void *b)
{
	const struct hvn_fleet_stall *x = a, *y = b;

	if (x->lost_ns != y->lost_ns)
		return x->lost_ns < y->lost_ns ? 1 : -1;
	return (x->arrive > y->arrive) - (x->arrive < y->arrive);
}

static int p2p_stalls(struct hvn_fleet *f, const struct hvn_corr_params *p);

static int cmp_double_desc(const void *a, const void *b)
{
	return -cmp_double(a, b);
}

/* A communicator and function's usual lateness over the whole window
 * (a join in slabs: from the samples), and over how many collectives. */
struct hvn_fleet_usual {
	uint64_t comm;
	uint8_t func;
	double late;
	size_t n;
};

static int cmp_usual(const void *a, const void *b)
{
	const struct hvn_fleet_usual *x = a, *y = b;

	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	return (x->func > y->func) - (x->func < y->func);
}

/* A sampled copy's arrival, for the usual lateness. */
struct sarr {
	uint64_t comm, seq;
	uint8_t func, bits;
	uint32_t host;
	int64_t arrive;
};

static int cmp_sarr(const void *a, const void *b)
{
	const struct sarr *x = a, *y = b;

	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	return (x->arrive > y->arrive) - (x->arrive < y->arrive);
}

/*
 * Over slabs, a slab may hold too few of a communicator's collectives to
 * know its usual lateness: it is taken over the whole window from the
 * samples instead, as job_stalls() takes it, on the collectives every
 * host sampled (the most bits any host used).
 */
static int usual_from_samples(struct hvn_fleet *f)
{
	size_t n = 0, m = 0, nu = 0;
	struct sarr *v;
	int64_t *arr;
	double *lat;

	for (size_t i = 0; i < f->nh; i++)
		n += f->h[i].nsamp;
	v = malloc((n + 1) * sizeof(*v));
	arr = malloc((f->nh + 1) * sizeof(*arr));
	lat = malloc((n + 1) * sizeof(*lat));
	f->usual = malloc((n + 1) * sizeof(*f->usual));
	if (!v || !arr || !lat || !f->usual) {
		free(v);
		free(arr);
		free(lat);
		return -ENOMEM;
	}
	for (size_t i = 0; i < f->nh; i++) {
		const struct hvn_fleet_host *h = &f->h[i];

		for (size_t k = 0; k < h->nsamp; k++) {
			const struct hvn_fleet_sample *c = &h->samp[k];

			v[m++] = (struct sarr){ c->comm, c->seq, c->func, c->bits, i,
						aligned(h, real_of(h, c->start)) };
		}
	}
	qsort(v, m, sizeof(*v), cmp_sarr);
	for (size_t a = 0, b; a < m; a = b) {
		uint8_t bits = 0;
		size_t nl = 0;
		uint64_t mask;

		for (b = a; b < m && v[b].comm == v[a].comm && v[b].func == v[a].func; b++)
			if (v[b].bits > bits)
				bits = v[b].bits;
		mask = bits ? (~0ull >> (64 - bits)) : 0;
		for (size_t g = a, e; g < b; g = e) {
			struct hvn_fleet_sample key = { .comm = v[g].comm, .seq = v[g].seq };
			size_t nh = 0;
			int64_t top, ok;

			for (e = g; e < b && v[e].seq == v[g].seq; e++)
				if (nh && v[e].host == v[e - 1].host)
					arr[nh - 1] = v[e].arrive;	/* sorted: its last */
				else
					arr[nh++] = v[e].arrive;
			if (nh < 2 || (sample_hash(&key) & mask))
				continue;
			top = arr[0];
			for (size_t k = 1; k < nh; k++)
				if (arr[k] > top)
					top = arr[k];
			ok = kth(arr, nh, (nh - 1) / 4);
			lat[nl++] = (double)((uint64_t)top - (uint64_t)ok);
		}
		qsort(lat, nl, sizeof(*lat), cmp_double_desc);
		f->usual[nu++] = (struct hvn_fleet_usual){
			v[a].comm, v[a].func, nl ? lat[nl / 2] : 0, nl };
	}
	f->nusual = nu;
	free(v);
	free(arr);
	free(lat);
	return 0;
}

/*
 * Each group's on-time arrival and lateness, and the job stalls: a group
 * on two hosts or more where a copy stalled, or whose latest host came
 * k times that communicator and function's usual lateness late.
 */
static int job_stalls(struct hvn_fleet *f, const struct hvn_corr_params *p)
{
	size_t most = 0;
	int64_t *v;
	double *lat = malloc((f->ngrp + 1) * sizeof(*lat));
	int ret = 0;

	for (size_t i = 0; i < f->ngrp; i++)
		if (f->grp[i].n > most)
			most = f->grp[i].n;
	v = malloc((most + 1) * sizeof(*v));
	if (!v || !lat) {
		free(v);
		free(lat);
		return -ENOMEM;
	}
	/* Each host's last rank in (a group's copies lie by host), the
	 * on-time one as host_arrivals() says, without its sorts. */
	for (size_t i = 0; i < f->ngrp; i++) {
		struct hvn_fleet_grp *g = &f->grp[i];
		const struct hvn_fleet_rank *r = &f->all[g->first];
		uint32_t nh = 0;
		int64_t top;

		for (uint32_t k = 0; k < g->n; k++)
			if (k && r[k].host == r[k - 1].host) {
				if (r[k].arrive > v[nh - 1])
					v[nh - 1] = r[k].arrive;
			} else {
				v[nh++] = r[k].arrive;
			}
		top = v[0];
		for (uint32_t k = 1; k < nh; k++)
			if (v[k] > top)
				top = v[k];
		g->nhosts = nh;
		g->ok = kth(v, nh, (nh - 1) / 4);
		/* top >= ok: their distance, exact, however far apart */
		g->late = (double)((uint64_t)top - (uint64_t)g->ok);
	}
	for (size_t i = 0; i < f->ngrp && !ret;) {
		size_t j = i, n = 0;
		const struct hvn_coll *a = coll_of(f, &f->all[f->grp[i].first]);
		double usual_late;

		/* One communicator and function: its usual lateness. */
		while (j < f->ngrp) {
			const struct hvn_coll *b = coll_of(f, &f->all[f->grp[j].first]);

			if (b->comm != a->comm || b->func != a->func)
				break;
			if (f->grp[j].nhosts > 1)
				lat[n++] = f->grp[j].late;
			j++;
		}
		qsort(lat, n, sizeof(*lat), cmp_double_desc);
		usual_late = n ? lat[n / 2] : 0;
		{
			const struct hvn_fleet_usual k = { a->comm, a->func, 0, 0 };
			const struct hvn_fleet_usual *u = f->nusual ?
				bsearch(&k, f->usual, f->nusual, sizeof(k), cmp_usual) : NULL;

			/* Too few sampled: the slab's own, as held whole. */
			if (u && u->n >= 8) {
				usual_late = u->late;
				n = u->n;
			}
		}
		for (size_t k = i; k < j && !ret; k++) {
			struct hvn_fleet_grp *g = &f->grp[k];
			struct hvn_fleet_stall *s;
			bool late = g->late >= p->min_ms * 1e6 &&
				    g->late > p->k * usual_late && n >= 8;

			if (g->nhosts < 2 || (!g->lost && !late))
				continue;
			s = new_stall(f, coll_of(f, &f->all[g->first]), g->n);
			if (!s) {
				ret = -ENOMEM;
				break;
			}
			s->lost_ns = g->lost > g->late ? g->lost : (uint64_t)g->late;
			memcpy(s->r, &f->all[g->first], s->nr * sizeof(*s->r));
			ret = judge(f, s, k, p);
			ret = ret ?: arrange(f, s);
		}
		i = j;
	}
	free(v);
	free(lat);
	ret = ret ?: p2p_stalls(f, p);
	if (!ret && f->nst)
		qsort(f->st, f->nst, sizeof(*f->st), cmp_fleet_lost);
	return ret;
}

/*
 * Sends and receives across hosts: a pair whose copy stalled is a job
 * stall of two ranks, its late side followed back as a collective's, or
 * its transfer judged on both hosts.
 */
static int p2p_stalls(struct hvn_fleet *f, const struct hvn_corr_params *p)
{
	for (size_t hi = 0; hi < f->nh; hi++) {
		const struct hvn_corr *x = f->h[hi].x;

		for (size_t k = 0; k < x->nst; k++) {
			uint32_t ci = x->st[k].coll;
			const struct hvn_coll *c = &x->coll[ci];
			struct copy peer, side[2];
			struct hvn_fleet_stall *s;
			struct hvn_fleet_culprit cul;
			double late, unc;
			int64_t a[2];
			int ret, l;

			if (!c->is_p2p || !p2p_peer(f, hi, ci, &peer) || peer.host == hi)
				continue;
			/* Once a pair: from the stalled copy that sorts
			 * first when both stalled. */
			if (f->h[peer.host].stall_of[peer.coll] &&
			    (peer.host < hi || (peer.host == hi && peer.coll < ci)))
				continue;
			side[0] = (struct copy){ hi, ci };
			side[1] = peer;
			a[0] = arrive_of(f, hi, ci);
			a[1] = arrive_of(f, peer.host, peer.coll);
			l = a[1] > a[0];
			late = (double)a[l] - (double)a[!l];
			unc = pair_unc(f, hi, peer.host);
			s = new_stall(f, c, 2);
			if (!s)
				return -ENOMEM;
			s->lost_ns = x->st[k].lost_ns;
			s->unc = unc;
			for (int i = 0; i < 2; i++)
				s->r[i] = (struct hvn_fleet_rank){
					.host = side[i].host, .coll = side[i].coll,
					.rank = f->h[side[i].host].x->coll[side[i].coll].rank,
					.arrive = a[i],
					.end = end_of(f, side[i].host, side[i].coll) };
			s->arrive = a[!l];
			s->spread_ns = s->late_ns = late;
			if (is_late(p, late, unc, s->lost_ns)) {
				s->cls = HVN_FLEET_ARRIVAL;
				ret = resolve(f, side[l].host, side[l].coll, late, p, &cul);
				s->r[l].late = !ret && (!cul.how || cul.host != side[l].host);
			} else {
				int64_t e = s->r[0].end > s->r[1].end ? s->r[0].end : s->r[1].end;

				s->cls = HVN_FLEET_INFLIGHT;
				ret = held_by(f, side, 2, UINT32_MAX, a[l], e,
					      (double)s->lost_ns, p, &cul);
			}
			if (ret)
				return ret;
			if (cul.how)
				ret = add_culprit(s, &cul);
			else
				hvn_stall_release(&cul.why);
			ret = ret ?: arrange(f, s);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* --- a join in slabs ---------------------------------------------------- */

/* A slab's margin on each side, at least: room for a rank's waits to be
 * followed back, and for its copies' arrivals to differ. */
#define MARGIN_NS	250000000ll

/* A host's part of a slab: a copy of its analysis but for the
 * collectives (those of the slab, each one's index in the summary in
 * fidx[]) and its stalls among them. */
struct slab_host {
	struct hvn_corr x;
	uint32_t *fidx;
	size_t fcap;
	struct hvn_coll *buf;		/* x.coll's room, kept for the next */
	size_t bufcap;
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* What a join in slabs keeps of a host past its slabs: the collectives
 * its verdicts name, besides its own stalls' (appended to its x once
 * every slab is done: its x is read by every worker meanwhile). */
struct kept_list {
	struct hvn_coll *c;
	uint32_t *fi;			/* each one's index in the summary */
	size_t n, cap;
};

/* Collective @k of slab host @sh of host @h kept: its index in @h's x
 * once the kept are appended (UINT32_MAX: no memory). */
static uint32_t keep_coll(const struct hvn_fleet_host *h, struct kept_list *kl,
			  const struct slab_host *sh, uint32_t k)
{
	uint32_t fi = sh->fidx[k];

	/* Its own stalls' first: x holds those from the start. */
	for (size_t i = 0; i < h->x->nst; i++)
		if (h->kept[i] == fi)
			return i;
	for (size_t i = 0; i < kl->n; i++)
		if (kl->fi[i] == fi)
			return h->x->nst + i;
	if (kl->n == kl->cap) {
		size_t cap = kl->cap ? 2 * kl->cap : 16;
		void *c = realloc(kl->c, cap * sizeof(*kl->c));
		void *i = c ? realloc(kl->fi, cap * sizeof(*kl->fi)) : NULL;

		if (c)
			kl->c = c;
		if (!i)
			return UINT32_MAX;
		kl->fi = i;
		kl->cap = cap;
	}
	kl->c[kl->n] = sh->x.coll[k];
	kl->fi[kl->n] = fi;
	return h->x->nst + kl->n++;
}

static int keep_culprit(struct hvn_fleet *f, struct kept_list *kl,
			const struct hvn_fleet *sf, const struct slab_host *sh,
			struct hvn_fleet_culprit *c)
{
	c->coll = keep_coll(&f->h[c->host], &kl[c->host], &sh[c->host], c->coll);
	c->why.coll = c->coll;
	if (c->coll == UINT32_MAX)
		return -ENOMEM;
	if (c->root < sf->ngrp) {
		const struct hvn_fleet_grp *g = &sf->grp[c->root];
		void *grown = realloc(f->grp, (f->ngrp + 1) * sizeof(*f->grp));
		uint32_t k;

		if (!grown)
			return -ENOMEM;
		f->grp = grown;
		k = keep_coll(&f->h[g->host], &kl[g->host], &sh[g->host], g->coll);
		if (k == UINT32_MAX)
			return -ENOMEM;
		f->grp[f->ngrp] = (struct hvn_fleet_grp){ .host = g->host, .coll = k };
		c->root = f->ngrp++;
	} else {
		c->root = UINT32_MAX;
	}
	return 0;
}

static void stall_free(struct hvn_fleet_stall *s)
{
	for (uint32_t k = 0; k < s->ncul; k++)
		hvn_stall_release(&s->cul[k].why);
	free(s->cul);
	for (uint32_t k = 0; k < s->nmaybe; k++)
		hvn_stall_release(&s->maybe[k].why);
	free(s->maybe);
	free(s->r);
	free(s->noisy);
	free(s->unseen);
}

/* Job stall @s of slab @sf moved into @f: what it names kept in @kl. */
static int keep_stall(struct hvn_fleet *f, struct kept_list *kl,
		      const struct hvn_fleet *sf, const struct slab_host *sh,
		      struct hvn_fleet_stall *s)
{
	void *grown = realloc(f->st, (f->nst + 1) * sizeof(*f->st));
	int ret = 0;

	if (!grown) {
		stall_free(s);
		return -ENOMEM;
	}
	f->st = grown;
	for (uint32_t k = 0; k < s->nr; k++)
		s->r[k].coll = s->r[k].grp = UINT32_MAX;
	for (uint32_t k = 0; k < s->ncul && !ret; k++)
		ret = keep_culprit(f, kl, sf, sh, &s->cul[k]);
	for (uint32_t k = 0; k < s->nmaybe && !ret; k++)
		ret = keep_culprit(f, kl, sf, sh, &s->maybe[k]);
	f->st[f->nst++] = *s;
	return ret;
}

/*
 * A slab's margin: where its stalls' waits are followed back, and where
 * one collective's copies may differ.  A wait goes back only while the
 * ranks stay late, as long as the stop that held them: 3x the longest
 * stall any host saw, and SLAB_HOPS collectives of the slowest process
 * for chains of small delays.
 */
#define SLAB_HOPS	16
/* The most slabs a join is cut into (a day of 1,024 hosts at 100 Hz
 * would want more: their slabs are wider than asked). */
#define MAX_SLABS	4096

static double slab_margin(const struct hvn_fleet *f)
{
	double m = MARGIN_NS;

	for (size_t i = 0; i < f->nh; i++) {
		const struct hvn_fleet_host *h = &f->h[i];
		size_t per = h->x->nproc ? h->ncoll / h->x->nproc : h->ncoll;

		if (per && h->last > h->first &&
		    (double)(h->last - h->first) / per * SLAB_HOPS > m)
			m = (double)(h->last - h->first) / per * SLAB_HOPS;
		for (size_t k = 0; k < h->x->nst; k++)
			if (3.0 * h->x->st[k].lost_ns > m)
				m = 3.0 * h->x->st[k].lost_ns;
	}
	return m;
}

/* @a + @d, at most INT64_MAX and at least INT64_MIN: a file's times
 * bound the slabs, whatever they are. */
static int64_t sat_add(int64_t a, double d)
{
	int64_t i;

	if (d >= 9.2e18)
		return INT64_MAX;
	if (d <= -9.2e18)
		return INT64_MIN;
	i = (int64_t)d;
	if (i > 0 && a > INT64_MAX - i)
		return INT64_MAX;
	if (i < 0 && a < INT64_MIN - i)
		return INT64_MIN;
	return a + i;
}

/* Aligned time @al on @h's trace time, none before its start. */
static uint64_t trace_at(const struct hvn_fleet_host *h, int64_t al, bool end)
{
	uint64_t t;

	/* A bound saturated: the host's whole trace on that side. */
	if (al == INT64_MAX || al == INT64_MIN)
		return al == INT64_MAX ? UINT64_MAX : 0;
	t = mono_of(h, al);
	if ((int64_t)t < 0)
		return end ? UINT64_MAX : 0;
	return t;
}

/* Slab host @sh of @h for [@a0, @a1] of its trace time: 0 or an
 * HVN_EXIT_* code / -ENOMEM. */
static int slab_host_read(struct hvn_fleet_host *h, struct slab_host *sh,
			  uint64_t a0, uint64_t a1)
{
	const struct hvn_corr *x = h->x;
	int r;

	sh->x = *x;
	sh->x.coll = sh->buf;
	sh->x.coll_cap = sh->bufcap;
	sh->x.st = NULL;
	sh->x.nst = 0;
	r = hvn_summary_colls(h->path, &h->ix, a0, a1, &sh->x, &sh->fidx, &sh->fcap);
	sh->buf = sh->x.coll;
	sh->bufcap = sh->x.coll_cap;
	if (r)
		return r;
	/* Its own stalls there, by their index in the slab (the stall's
	 * CPUs stay the host's). */
	sh->x.st = malloc((x->nst + 1) * sizeof(*sh->x.st));
	if (!sh->x.st)
		return -ENOMEM;
	for (size_t k = 0; k < x->nst; k++) {
		uint32_t fi = h->kept[x->st[k].coll];
		uint32_t *at = bsearch(&fi, sh->fidx, sh->x.ncoll, sizeof(fi), cmp_u32);

		if (!at)
			continue;
		sh->x.st[sh->x.nst] = x->st[k];
		sh->x.st[sh->x.nst++].coll = at - sh->fidx;
	}
	return 0;
}

/* A join in slabs: what each slab's work shares. */
struct slab_work {
	struct hvn_fleet *f;
	const struct hvn_corr_params *p;
	struct kept_list *kl;		/* a host's */
	struct slab_host *sh;		/* the slab's part of each host */
	struct hvn_fleet sf;		/* the slab's join */
	int64_t lo, t0, t1;
	double w, m;
};

/* Host @i's part of the slab [t0, t1] and its margins. */
static int slab_read_one(void *ctx, size_t i, int worker)
{
	struct slab_work *sw = ctx;
	struct hvn_fleet_host *h = &sw->f->h[i];
	struct hvn_fleet_host *s = &sw->sf.h[i];
	struct slab_host *sh = &sw->sh[i];
	int ret;

	(void)worker;
	ret = slab_host_read(h, sh, trace_at(h, sat_add(sw->t0, -sw->m), false),
			     trace_at(h, sat_add(sw->t1, sw->m), true));
	*s = *h;
	s->x = &sh->x;
	s->samp = NULL;
	s->kept = NULL;
	s->prev = s->at = NULL;
	s->tgap = NULL;
	s->al = NULL;
	s->p2p_counted = false;
	count_p2p(s);
	s->stall_of = calloc(sh->x.ncoll + 1, sizeof(*s->stall_of));
	if (!ret && !s->stall_of)
		ret = -ENOMEM;
	for (size_t k = 0; !ret && k < sh->x.nst; k++)
		s->stall_of[sh->x.st[k].coll] = k + 1;
	return ret;
}

/* Slab @n: its job stalls, those it owns kept.  0, or an HVN_EXIT_*
 * code / -ENOMEM. */
static int slab_run(struct slab_work *sw, size_t n)
{
	struct hvn_fleet *f = sw->f, *sf = &sw->sf;
	int ret;

	sw->t0 = sat_add(sw->lo, n * sw->w);
	sw->t1 = sat_add(sw->lo, (n + 1) * sw->w);
	ret = par_for(f->nh, slab_read_one, sw);
	ret = ret ?: build_all(sf);
	ret = ret ?: build_p2p(sf);
	ret = ret ?: job_stalls(sf, sw->p);
	for (size_t k = 0; k < sf->nst; k++) {
		struct hvn_fleet_stall *st = &sf->st[k];
		bool mine = (n == 0 || st->arrive >= sw->t0) &&
			    (n + 1 == f->nslab || st->arrive < sw->t1);

		if (mine && !ret)
			ret = keep_stall(f, sw->kl, sf, sw->sh, st);
		else
			stall_free(st);
	}
	free(sf->st);
	free(sf->grp);
	free(sf->p2p);
	sf->st = NULL;
	sf->grp = NULL;
	sf->p2p = NULL;
	sf->nst = sf->nall = sf->ngrp = sf->np2p = 0;
	for (size_t i = 0; i < f->nh; i++) {
		struct hvn_fleet_host *s = &sf->h[i];
		struct slab_host *sh = &sw->sh[i];

		sh->buf = sh->x.coll;
		sh->bufcap = sh->x.coll_cap;
		free(sh->x.st);
		sh->x.st = NULL;
		free(s->stall_of);
		free(s->prev);
		free(s->tgap);
		free(s->at);
		free(s->al);
		s->stall_of = s->prev = s->at = NULL;
		s->tgap = NULL;
		s->al = NULL;
	}
	return ret;
}

/*
 * Summaries too many to hold: the job stalls found a slab of aligned time
 * at a time, each slab read with a margin on both sides (where the waits
 * of its stalls are followed back), a stall kept by the slab its first
 * arrival lies in.  What the verdicts name is kept past each slab.  The
 * slab's reading and its hosts' order are shared among a worker a CPU.
 */
static int slabs(struct hvn_fleet *f, const struct hvn_corr_params *p)
{
	struct slab_work sw = { .f = f, .p = p };
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	double per, total = 0, w, m;
	int ret = 0;

	for (size_t i = 0; i < f->nh; i++) {
		const struct hvn_fleet_host *h = &f->h[i];
		int64_t a, b;

		if (!h->ncoll)
			continue;
		a = hvn_fleet_time(f, i, h->first);
		b = hvn_fleet_time(f, i, h->last);
		lo = a < lo ? a : lo;
		hi = b > hi ? b : hi;
		total += h->ncoll;
	}
	if (!total)
		return 0;		/* no collective: no job stall */
	if (usual_from_samples(f))
		return -ENOMEM;
	m = slab_margin(f);
	per = p->memory_mib * 1048576.0 / COPY_BYTES;
	w = hi > lo ? ((double)hi - (double)lo) * per / total - 2 * m : 1;
	/* Too little asked for the margins: more is held (said by the
	 * count), each slab still a fair share of what is read. */
	if (w < m / 4)
		w = m / 4;
	/* Times a file made far apart: slabs as wide as it takes. */
	if (((double)hi - (double)lo + 1) / w > MAX_SLABS)
		w = ((double)hi - (double)lo + 1) / MAX_SLABS;
	f->slab_ns = w;
	f->margin_ns = m;
	f->nslab = hi > lo ? (size_t)ceil(((double)hi - (double)lo + 1) / w) : 1;
	if (f->nslab > MAX_SLABS)
		f->nslab = MAX_SLABS;
	sw.lo = lo;
	sw.w = w;
	sw.m = m;
	sw.kl = calloc(f->nh + 1, sizeof(*sw.kl));
	sw.sh = calloc(f->nh + 1, sizeof(*sw.sh));
	sw.sf = (struct hvn_fleet){ .nh = f->nh, .ref = f->ref, .nslab = f->nslab,
				    .usual = f->usual, .nusual = f->nusual };
	sw.sf.h = calloc(f->nh + 1, sizeof(*sw.sf.h));
	if (!sw.kl || !sw.sh || !sw.sf.h)
		ret = -ENOMEM;
	for (size_t n = 0; n < f->nslab && !ret; n++)
		ret = slab_run(&sw, n);
	/* What the verdicts name, after each host's own stalls'. */
	for (size_t i = 0; sw.kl && i < f->nh; i++) {
		struct hvn_corr *x = f->h[i].x;
		struct kept_list *kl = &sw.kl[i];
		uint32_t *kept = NULL;

		size_t n = x->nst + kl->n;
		void *c = NULL;

		/* Room for hvn_corr_probe()'s one more, as shrink() leaves. */
		if (!ret && kl->n) {
			c = realloc(x->coll, (n + 1) * sizeof(*x->coll));
			if (c)
				x->coll = c;
			kept = c ? realloc(f->h[i].kept, (n + 1) * sizeof(*kept)) : NULL;
			if (kept)
				f->h[i].kept = kept;
			else
				ret = -ENOMEM;
		}
		if (!ret && kl->n) {
			x->coll_cap = n + 1;
			memcpy(x->coll + x->nst, kl->c, kl->n * sizeof(*kl->c));
			memcpy(kept + x->nst, kl->fi, kl->n * sizeof(*kl->fi));
			x->ncoll = n;
		}
		free(kl->c);
		free(kl->fi);
	}
	for (size_t i = 0; sw.sh && i < f->nh; i++) {
		free(sw.sh[i].buf);
		free(sw.sh[i].fidx);
	}
	free(sw.kl);
	free(sw.sh);
	free(sw.sf.h);
	free(sw.sf.all);
	if (!ret && f->nst)
		qsort(f->st, f->nst, sizeof(*f->st), cmp_fleet_lost);
	return ret;
}

/* --- which hosts to drain ---------------------------------------------- */

struct held {
	uint32_t host;
	uint64_t start, end;		/* the interval judged, its trace time */
	double delay;
	uint32_t stall;
};

static int cmp_held(const void *a, const void *b)
{
	const struct held *x = a, *y = b;

	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

static int cmp_blame(const void *a, const void *b)
{
	const struct hvn_fleet_blame *x = a, *y = b;

	if (x->delay_ns != y->delay_ns)
		return x->delay_ns < y->delay_ns ? 1 : -1;
	return (x->host > y->host) - (x->host < y->host);
}

/*
 * A host's holdings of the job, each counted once: the stalls that one
 * stop of its held (a transfer it stalled, and the later collectives and
 * receives whose ranks came late for it) were judged over the same time
 * of that host, so holdings whose intervals overlap are one delay, the
 * largest of them.
 */
static int blame(struct hvn_fleet *f)
{
	size_t n = 0, cap = 0;
	struct held *v;
	uint64_t end = 0;		/* the current holding's, so far */
	double cur = 0;			/* and its delay */

	for (size_t i = 0; i < f->nst; i++)
		cap += f->st[i].ncul;
	v = malloc((cap + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < f->nst; i++)
		for (uint32_t k = 0; k < f->st[i].ncul; k++) {
			const struct hvn_fleet_culprit *c = &f->st[i].cul[k];

			v[n++] = (struct held){ c->host, c->why_start, c->why_end,
						c->delay_ns, i };
		}
	qsort(v, n, sizeof(*v), cmp_held);
	f->blame = calloc(f->nh + 1, sizeof(*f->blame));
	if (!f->blame) {
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct hvn_fleet_blame *b;
		bool same = i && v[i].host == v[i - 1].host && v[i].start < end;

		if (!f->nblame || f->blame[f->nblame - 1].host != v[i].host)
			f->blame[f->nblame++] = (struct hvn_fleet_blame){
				.host = v[i].host, .worst = v[i].stall };
		b = &f->blame[f->nblame - 1];
		if (!same) {
			b->nheld++;
			b->delay_ns += v[i].delay;
			end = v[i].end;
			cur = v[i].delay;
		} else if (v[i].delay > cur) {
			/* The same stop: its largest delay counts. */
			b->delay_ns += v[i].delay - cur;
			cur = v[i].delay;
		}
		if (v[i].end > end)
			end = v[i].end;
		if (v[i].delay > b->worst_ns) {
			b->worst_ns = v[i].delay;
			b->worst = v[i].stall;
		}
	}
	free(v);
	qsort(f->blame, f->nblame, sizeof(*f->blame), cmp_blame);
	return 0;
}

/* Ranks of each communicator that no trace holds. */
static int missing(struct hvn_fleet *f)
{
	const struct hvn_corr **xs = malloc((f->nh + 1) * sizeof(*xs));
	long n;

	if (!xs)
		return -ENOMEM;
	for (size_t i = 0; i < f->nh; i++)
		xs[i] = f->h[i].x;
	n = hvn_corr_missing(xs, f->nh, false, &f->miss);
	free(xs);
	if (n < 0)
		return -ENOMEM;
	f->nmiss = n;
	return 0;
}

/*
 * The join holds every host at once: no growth slack, no join tables,
 * but room for the one collective hvn_corr_probe() appends for its pass
 * (without it, the first probe of a host doubled its collectives).
 */
static void shrink(struct hvn_corr *x)
{
	void *p;

	free(x->agg);
	x->agg = NULL;
	x->agg_cap = x->nagg = 0;
	p = realloc(x->coll, (x->ncoll + 1) * sizeof(*x->coll));
	if (p) {
		x->coll = p;
		x->coll_cap = x->ncoll + 1;
	}
	p = x->nep ? realloc(x->ep, x->nep * sizeof(*x->ep)) : NULL;
	if (p) {
		x->ep = p;
		x->ep_cap = x->nep;
	}
	p = x->nproc ? realloc(x->proc, x->nproc * sizeof(*x->proc)) : NULL;
	if (p) {
		x->proc = p;
		x->proc_cap = x->nproc;
	}
}

int hvn_fleet_host_open(struct hvn_corr *x, struct hvn_schema *schema,
			struct hvn_tdat *t, char *host, size_t hlen)
{
	struct hvn_meta meta;
	int r;

	if (hvn_meta_read(&meta, t)) {
		hvn_meta_free(&meta);
		hvn_err("out of memory");
		return HVN_EXIT_FAIL;
	}
	snprintf(host, hlen, "%s", meta.host[0] ? meta.host : t->path);
	snprintf(x->source, sizeof(x->source), "%s", meta.source);
	snprintf(x->online, sizeof(x->online), "%s", meta.online);
	hvn_meta_free(&meta);
	x->keep_episodes = true;
	r = hvn_corr_open(x, schema, t);
	if (r < 0) {
		hvn_err("out of memory");
		return HVN_EXIT_FAIL;
	}
	x->detector_events = x->an.by_kind[HVN_EV_WATCH] +
			     x->an.by_kind[HVN_EV_STEAL] +
			     x->an.by_kind[HVN_EV_LOST] +
			     x->an.by_kind[HVN_EV_STORM_BEGIN] +
			     x->an.by_kind[HVN_EV_STORM] +
			     x->an.by_kind[HVN_EV_MIGRATE];
	x->irq_events = x->an.by_kind[HVN_EV_IRQ];
	return 0;
}

/*
 * Whether @paths are summaries whose collectives would not fit in
 * @p->memory_mib held at once (as many as their sizes allow): then they
 * are joined in slabs of time.
 */
static bool too_many(char **paths, size_t n, const struct hvn_corr_params *p)
{
	double copies = 0;

	for (size_t i = 0; i < n; i++) {
		struct stat sb;

		if (!hvn_summary_is(paths[i]) || stat(paths[i], &sb))
			return false;
		copies += (double)sb.st_size / (8 + sizeof(struct hvn_sum_coll));
	}
	return copies * COPY_BYTES > p->memory_mib * 1048576.0;
}

/*
 * A summary to be joined in slabs: only what the alignment needs of its
 * collectives (samples of their ends), and the collectives of its own
 * stalls, are kept; the rest is read again slab by slab.
 */
static int open_slabbed(struct hvn_fleet_host *h, struct hvn_schema *schema,
			struct hvn_coll **room, size_t *cap)
{
	struct hvn_corr *x = h->x;
	struct hvn_coll *keep;
	int r;

	/* Read into @room, which is handed back, grown or not. */
	x->coll = *room;
	x->coll_cap = *cap;
	r = hvn_summary_read_index(h->path, x, schema, h->host,
				   sizeof(h->host), &h->ix);
	/* Counts per CPU are a trace's: a summary has none to keep. */
	free(x->an.cpu);
	x->an.cpu = NULL;
	x->an.ncpu = 0;
	*room = x->coll;
	*cap = x->coll_cap;
	if (!r && host_samples(h, true))
		r = HVN_EXIT_FAIL;
	x->coll = NULL;
	x->coll_cap = 0;
	if (r) {
		x->ncoll = 0;
		return r;
	}
	keep = malloc((x->nst + 1) * sizeof(*keep));
	h->kept = malloc((x->nst + 1) * sizeof(*h->kept));
	if (!keep || !h->kept) {
		free(keep);
		return HVN_EXIT_FAIL;
	}
	for (size_t k = 0; k < x->nst; k++) {
		keep[k] = (*room)[x->st[k].coll];
		h->kept[k] = x->st[k].coll;
		x->st[k].coll = k;
	}
	x->coll = keep;
	x->coll_cap = x->nst + 1;
	x->ncoll = x->nst;
	return 0;
}

/* Hosts opened for a join in slabs: each worker reads a host's
 * collectives into room of its own, let go only at the end. */
struct open_work {
	struct hvn_fleet *f;
	struct scratch {
		struct hvn_coll *c;
		size_t cap;
	} w[8];
};

static int open_one(void *ctx, size_t i, int worker)
{
	struct open_work *ow = ctx;
	struct scratch *s = &ow->w[worker];

	return open_slabbed(&ow->f->h[i], ow->f->schema, &s->c, &s->cap);
}

/* Every host of a join in slabs opened, a worker a CPU: 0, or the first
 * host's failure. */
static int open_all(struct hvn_fleet *f, char **paths, size_t n)
{
	struct open_work ow = { .f = f };
	int ret;

	/* A summary's analysis reads no trace: one schema serves all. */
	f->schema = calloc(1, sizeof(*f->schema));
	if (!f->schema)
		return HVN_EXIT_FAIL;
	for (size_t i = 0; i < n; i++) {
		f->h[i].path = paths[i];
		f->h[i].x = calloc(1, sizeof(*f->h[i].x));
		if (!f->h[i].x)
			return HVN_EXIT_FAIL;
	}
	ret = par_for(n, open_one, &ow);
	for (int i = 0; i < 8; i++)
		free(ow.w[i].c);
	return ret;
}

/* A host held whole: its summary read, or its trace correlated. */
static int open_whole(struct hvn_fleet_host *h, const struct hvn_corr_params *p)
{
	struct hvn_tdat t;
	int r;

	h->schema = calloc(1, sizeof(*h->schema));
	h->x = calloc(1, sizeof(*h->x));
	if (!h->schema || !h->x)
		return HVN_EXIT_FAIL;
	if (hvn_summary_is(h->path))
		return hvn_summary_read(h->path, h->x, h->schema, h->host,
					sizeof(h->host));
	r = hvn_tdat_open(&t, h->path);
	if (r) {
		hvn_tdat_close(&t);
		return r;
	}
	r = hvn_fleet_host_open(h->x, h->schema, &t, h->host, sizeof(h->host));
	if (!r)
		hvn_corr_analyse(h->x, &t, p);
	hvn_tdat_close(&t);
	if (!r)
		hvn_corr_trim_episodes(h->x);
	return r;
}

int hvn_fleet_open(struct hvn_fleet *f, char **paths, size_t n,
		   const struct hvn_corr_params *p)
{
	bool slabs = too_many(paths, n, p);

	memset(f, 0, sizeof(*f));
	f->h = calloc(n, sizeof(*f->h));
	if (!f->h)
		return HVN_EXIT_FAIL;
	/* Set now, to say how: the slabs are counted when analysed. */
	f->nslab = slabs;
	if (slabs) {
		int r = open_all(f, paths, n);

		f->nh = n;
		if (r)
			return r;
		f->nh = 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct hvn_fleet_host *h = &f->h[f->nh];
		size_t whole;
		int r;

		h->path = paths[i];
		f->nh++;
		if (!slabs) {
			r = open_whole(h, p);
			if (r)
				return r;
		}
		for (size_t k = 0; k + 1 < f->nh; k++)
			if (!strcmp(f->h[k].host, h->host)) {
				hvn_err("%s and %s are both of host %s: one trace per host",
					f->h[k].path, h->path, h->host);
				return HVN_EXIT_USAGE;
			}
		/* The detectors leave watch records at least; a recording of
		 * the kernel's IRQ events sees storms and moves, no lost time. */
		if (h->x->detector_events || h->x->nep)
			h->seen = HVN_SEEN_DETECTORS;
		else if (h->x->irq_events)
			h->seen = HVN_SEEN_IRQ;
		else
			h->seen = HVN_SEEN_NOTHING;
		shrink(h->x);
		whole = slabs ? h->ix.nblk : h->x->ncoll;
		h->first = UINT64_MAX;
		for (size_t k = 0; k < whole; k++) {
			uint64_t lo = slabs ? h->ix.blk[k].lo : h->x->coll[k].start;
			uint64_t hi = slabs ? h->ix.blk[k].hi : h->x->coll[k].end;

			if (lo < h->first)
				h->first = lo;
			if (hi > h->last)
				h->last = hi;
		}
		h->ncoll = slabs ? (h->ix.nblk ? h->ix.blk[h->ix.nblk - 1].first +
				    h->ix.blk[h->ix.nblk - 1].n : 0) : h->x->ncoll;
		if (!slabs) {
			h->stall_of = calloc(h->x->ncoll + 1, sizeof(*h->stall_of));
			if (!h->stall_of)
				return HVN_EXIT_FAIL;
			for (size_t k = 0; k < h->x->nst; k++)
				h->stall_of[h->x->st[k].coll] = k + 1;
		}
		f->ncoll += h->ncoll;
		f->nranks += h->x->nproc;
	}
	return 0;
}

int hvn_fleet_analyse(struct hvn_fleet *f, const struct hvn_corr_params *p)
{
	int ret = align(f);

	if (f->nslab) {
		ret = ret ?: slabs(f, p);
	} else {
		ret = ret ?: build_all(f);
		ret = ret ?: build_p2p(f);
		ret = ret ?: job_stalls(f, p);
	}
	ret = ret ?: blame(f);
	ret = ret ?: missing(f);
	/* The join's tables: not needed past the verdicts. */
	free(f->all);
	f->all = NULL;
	f->nall = f->all_cap = 0;
	free(f->p2p);
	f->p2p = NULL;
	f->np2p = 0;
	free(f->usual);
	f->usual = NULL;
	f->nusual = 0;
	for (size_t i = 0; i < f->nh; i++) {
		free(f->h[i].samp);
		f->h[i].samp = NULL;
		f->h[i].nsamp = 0;
		free(f->h[i].prev);
		free(f->h[i].tgap);
		free(f->h[i].at);
		free(f->h[i].al);
		f->h[i].prev = f->h[i].at = NULL;
		f->h[i].tgap = NULL;
		f->h[i].al = NULL;
	}
	if (ret < 0) {
		hvn_err("%s", ret == -ENOMEM ? "out of memory" : "the join failed: a probe of a host's noise was refused");
		return HVN_EXIT_FAIL;
	}
	return ret;
}

double hvn_fleet_share(const struct hvn_fleet_culprit *c)
{
	double d = c->judged_ns;

	if (!c->why.cause || d <= 0)
		return 0;
	return c->why.explained / d > 1 ? 1 : c->why.explained / d;
}

int64_t hvn_fleet_time(const struct hvn_fleet *f, uint32_t host, uint64_t mono)
{
	return aligned(&f->h[host], real_of(&f->h[host], mono));
}

const struct hvn_missing *hvn_fleet_missing(const struct hvn_fleet *f,
					    uint64_t comm)
{
	for (size_t i = 0; i < f->nmiss; i++)
		if (f->miss[i].comm == comm && f->miss[i].nseen < f->miss[i].nranks)
			return &f->miss[i];
	return NULL;
}

const struct hvn_coll *hvn_fleet_grp_coll(const struct hvn_fleet *f, uint32_t g)
{
	/* Kept past the join: the group's first copy, by host and index. */
	return g < f->ngrp ? &f->h[f->grp[g].host].x->coll[f->grp[g].coll] : NULL;
}

void hvn_fleet_free(struct hvn_fleet *f)
{
	for (size_t i = 0; i < f->nh; i++) {
		if (f->h[i].x)
			hvn_corr_free(f->h[i].x);
		free(f->h[i].x);
		free(f->h[i].schema);
		free(f->h[i].stall_of);
		free(f->h[i].prev);
		free(f->h[i].tgap);
		free(f->h[i].at);
		free(f->h[i].al);
		free(f->h[i].samp);
		free(f->h[i].kept);
		hvn_sum_index_free(&f->h[i].ix);
	}
	for (size_t i = 0; i < f->nst; i++)
		stall_free(&f->st[i]);
	free(f->h);
	free(f->st);
	free(f->blame);
	free(f->all);
	free(f->grp);
	free(f->miss);
	free(f->usual);
	free(f->schema);
	memset(f, 0, sizeof(*f));
}

static int add_path(char ***paths, size_t *n, const char *path)
{
	char **l = realloc(*paths, (*n + 1) * sizeof(*l));

	if (!l)
		return -1;
	*paths = l;
	l[*n] = strdup(path);
	if (!l[*n])
		return -1;
	(*n)++;
	return 0;
}

int hvn_fleet_inputs(const char *arg, char ***paths, size_t *n, bool *dir)
{
	struct stat st;
	glob_t g;
	char *pat, esc[8200];
	int ret = 0;

	if (stat(arg, &st) || !S_ISDIR(st.st_mode))
		return add_path(paths, n, arg);
	*dir = true;
	hvn_glob_escape(arg, esc, sizeof(esc));
	if (asprintf(&pat, "%s/*.dat", esc) < 0)
		return -1;
	ret = glob(pat, 0, NULL, &g);
	free(pat);
	if (asprintf(&pat, "%s/*.sum", esc) < 0) {
		if (!ret)
			globfree(&g);
		return -1;
	}
	if (glob(pat, ret ? 0 : GLOB_APPEND, NULL, &g) && ret) {
		hvn_err("%s: a directory without traces (*.dat) or summaries (*.sum)", arg);
		free(pat);
		return -1;
	}
	ret = 0;
	for (size_t i = 0; i < g.gl_pathc && !ret; i++)
		ret = add_path(paths, n, g.gl_pathv[i]);
	globfree(&g);
	free(pat);
	return ret;
}
