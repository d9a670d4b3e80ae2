// SPDX-License-Identifier: GPL-2.0
/* correlate over many hosts (analysis/fleet.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hvn.h"
#include "hvnoise/nccl.h"
#include "analysis/fleet.h"
#include "analysis/summary.h"
#include "tracedat/meta.h"
#include "tracedat/tracedat.h"

/* Drift is fitted only over this span: below it an offset is all. */
#define DRIFT_SPAN_NS	60000000000ll
/* Fewer shared collectives than this align nothing. */
#define MIN_SYNC	3

static bool implicit_sync(const struct hvn_coll *c)
{
	return !c->is_p2p && c->seq != UINT64_MAX &&
	       (c->func == HVN_FN_ALLREDUCE || c->func == HVN_FN_ALLGATHER ||
		c->func == HVN_FN_REDUCESCATTER);
}

/* A rank's trace time on its host's CLOCK_REALTIME: its own clock pair
 * (taken when its communicator began), else the trace's nearest. */
static int64_t real_of(const struct hvn_corr *x, const struct hvn_coll *c,
		       uint64_t mono)
{
	const struct hvn_proc *p = hvn_corr_proc_of(x, c->comm, c->rank);

	if (p && p->real)
		return (int64_t)(mono - p->mono + p->real);
	if (x->an.nclk)
		return (int64_t)hvn_an_mono_to_real(&x->an, mono);
	return (int64_t)mono;
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

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One host's implicit-sync collectives' ends, sorted by key. */
static struct key_end *ends_of(const struct hvn_fleet_host *h, size_t *n)
{
	const struct hvn_corr *x = h->x;
	struct key_end *v = malloc((x->ncoll + 1) * sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < x->ncoll; i++) {
		const struct hvn_coll *c = &x->coll[i];

		if (implicit_sync(c) && c->end > c->start)
			v[(*n)++] = (struct key_end){ c->comm, c->seq, c->func,
						      real_of(x, c, c->end) };
	}
	qsort(v, *n, sizeof(*v), cmp_key);
	return v;
}

static const struct key_end *find_key(const struct key_end *v, size_t n,
				      const struct key_end *k)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		struct key_end a = v[mid], b = *k;

		a.end = b.end = 0;
		if (cmp_key(&a, &b) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && v[lo].comm == k->comm && v[lo].func == k->func &&
	    v[lo].seq == k->seq)
		return &v[lo];
	return NULL;
}

/* The reference's end of a collective: the median of its ranks' ends. */
static int64_t ref_end(const struct key_end *v, size_t n, const struct key_end *at)
{
	size_t a = at - v, b = a;

	while (b < n && v[b].comm == at->comm && v[b].func == at->func &&
	       v[b].seq == at->seq)
		b++;
	return v[a + (b - a - 1) / 2].end;	/* sorted by end within a key */
}

static int align_host(struct hvn_fleet_host *h, const struct key_end *ref,
		      size_t nref)
{
	struct key_end *v;
	double *d, *t, *r;
	size_t n, m = 0;
	int64_t tmin = INT64_MAX, tmax = INT64_MIN;

	v = ends_of(h, &n);
	d = malloc((n + 1) * sizeof(*d));
	t = malloc((n + 1) * sizeof(*t));
	r = malloc((n + 1) * sizeof(*r));
	if (!v || !d || !t || !r) {
		free(v);
		free(d);
		free(t);
		free(r);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct key_end *k = find_key(ref, nref, &v[i]);
		int64_t e;

		if (!k)
			continue;
		e = ref_end(ref, nref, k);
		d[m] = (double)v[i].end - (double)e;
		t[m] = (double)v[i].end;
		if (v[i].end < tmin)
			tmin = v[i].end;
		if (v[i].end > tmax)
			tmax = v[i].end;
		m++;
	}
	h->nsamples = m;
	if (m >= MIN_SYNC) {
		double *tmp = malloc(m * sizeof(*tmp));
		int64_t mid = (int64_t)(((double)tmin + (double)tmax) / 2);
		size_t n1 = 0, n2 = 0;

		if (!tmp) {
			free(v);
			free(d);
			free(t);
			free(r);
			return -ENOMEM;
		}
		h->aligned = true;
		h->t0 = mid;
		memcpy(tmp, d, m * sizeof(*tmp));
		h->offset = median(tmp, m);
		h->drift = 0;
		if ((double)tmax - (double)tmin >= DRIFT_SPAN_NS) {
			/* Two halves' medians: a line the noise cannot bend. */
			double m1, m2, c1 = 0, c2 = 0;

			for (size_t i = 0; i < m; i++)
				if (t[i] < mid) {
					tmp[n1++] = d[i];
					c1 += t[i];
				}
			m1 = median(tmp, n1);
			for (size_t i = 0; i < m; i++)
				if (t[i] >= mid) {
					tmp[n2++] = d[i];
					c2 += t[i];
				}
			m2 = median(tmp, n2);
			c1 /= n1;
			c2 /= n2;
			if (n1 >= MIN_SYNC && n2 >= MIN_SYNC && c2 > c1) {
				h->drift = (m2 - m1) / (c2 - c1);
				h->offset = m1 + h->drift * (mid - c1);
			}
		}
		for (size_t i = 0; i < m; i++)
			r[i] = fabs(d[i] - (h->offset + h->drift * (t[i] - mid)));
		qsort(r, m, sizeof(*r), cmp_double);
		h->unc = r[(size_t)(0.9 * (m - 1))];
		free(tmp);
	}
	free(v);
	free(d);
	free(t);
	free(r);
	return 0;
}

static int align(struct hvn_fleet *f)
{
	struct key_end *ref;
	size_t nref, best = 0;
	int ret = 0;

	/* The reference: the host with the most collectives to match. */
	for (size_t i = 0; i < f->nh; i++) {
		const struct hvn_corr *x = f->h[i].x;
		size_t n = 0;

		for (size_t k = 0; k < x->ncoll; k++)
			n += implicit_sync(&x->coll[k]) &&
			     x->coll[k].end > x->coll[k].start;
		if (n > best) {
			best = n;
			f->ref = i;
		}
	}
	ref = ends_of(&f->h[f->ref], &nref);
	if (!ref)
		return -ENOMEM;
	for (size_t i = 0; i < f->nh && !ret; i++) {
		struct hvn_fleet_host *h = &f->h[i];

		if (i == f->ref) {
			h->aligned = true;
			h->nsamples = nref;
			continue;
		}
		ret = align_host(h, ref, nref);
		if (h->aligned) {
			f->nsync += h->nsamples;
			/* NTP's word against the collectives': 1 ms slack. */
			h->disagrees = fabs(h->offset) > 3 * h->unc + 1e6;
		}
	}
	free(ref);
	return ret;
}

/* --- job stalls ------------------------------------------------------- */

static int cmp_rank_key(const void *a, const void *b, void *arg)
{
	const struct hvn_fleet *f = arg;
	const struct hvn_fleet_rank *p = a, *q = b;
	int k = hvn_coll_key_cmp(&f->h[p->host].x->coll[p->coll],
				 &f->h[q->host].x->coll[q->coll]);

	return k ? k : (p->arrive > q->arrive) - (p->arrive < q->arrive);
}

static int cmp_host_rank(const void *a, const void *b, void *arg)
{
	const struct hvn_fleet *f = arg;
	const struct hvn_fleet_rank *p = a, *q = b;
	int32_t x = f->h[p->host].x->coll[p->coll].rank;
	int32_t y = f->h[q->host].x->coll[q->coll].rank;

	if (p->host != q->host)
		return p->host < q->host ? -1 : 1;
	return (x > y) - (x < y);
}

static const struct hvn_coll *coll_of(const struct hvn_fleet *f,
				      const struct hvn_fleet_rank *r)
{
	return &f->h[r->host].x->coll[r->coll];
}

static const struct hvn_stall *stall_of(const struct hvn_fleet *f,
					const struct hvn_fleet_rank *r)
{
	uint32_t s = f->h[r->host].stall_of[r->coll];

	return s ? &f->h[r->host].x->st[s - 1] : NULL;
}

/* Back from aligned time to @h's trace time, through rank @c's clock. */
static uint64_t mono_of(const struct hvn_fleet_host *h,
			const struct hvn_coll *c, int64_t al)
{
	/* real = al + offset(real): twice is exact to drift squared. */
	int64_t real = wrap_sub(al, -host_offset(h, wrap_sub(al, -host_offset(h, al))));

	return c->start + (uint64_t)real - (uint64_t)real_of(h->x, c, c->start);
}

static int judge(struct hvn_fleet *f, struct hvn_fleet_stall *s,
		 const struct hvn_corr_params *p)
{
	struct hvn_fleet_rank *r = s->r, *last = &r[s->nr - 1];
	double unc = 0, best = 0;
	int64_t second = INT64_MIN;
	uint32_t culprit = UINT32_MAX;

	/* Late after the other hosts: a paused host's ranks are all late
	 * together, and compare only with each other's clock. */
	for (uint32_t i = 0; i < s->nr; i++) {
		const struct hvn_fleet_host *h = &f->h[r[i].host];

		if (r[i].host != last->host && r[i].arrive > second)
			second = r[i].arrive;
		/* A host not aligned has NTP's word only: no bound. */
		if (!h->aligned)
			unc = INFINITY;
		else if (h->unc > unc)
			unc = h->unc;
	}
	s->arrive = r[0].arrive;
	s->unc = unc;
	s->late_ns = (double)last->arrive - (double)second;
	s->spread_ns = (double)last->arrive - (double)r[0].arrive;
	if (s->late_ns >= p->min_ms * 1e6 && s->late_ns > 3 * unc &&
	    s->late_ns >= p->min_share * s->lost_ns) {
		s->cls = HVN_FLEET_ARRIVAL;
		culprit = s->nr - 1;
	} else {
		s->cls = HVN_FLEET_INFLIGHT;
		for (uint32_t i = 0; i < s->nr; i++) {
			const struct hvn_stall *st = stall_of(f, &r[i]);

			if (st && st->cause && st->explained > best) {
				best = st->explained;
				culprit = i;
			}
		}
	}
	if (culprit != UINT32_MAX) {
		struct hvn_fleet_rank c = r[culprit];
		struct hvn_fleet_host *h = &f->h[c.host];
		const struct hvn_coll *cc = coll_of(f, &c);
		const struct hvn_stall *own = stall_of(f, &c);

		memmove(&r[1], &r[0], culprit * sizeof(*r));
		r[0] = c;
		s->culprit = true;
		if (s->cls == HVN_FLEET_ARRIVAL) {
			/* What it did while the others waited for it. */
			s->why_start = mono_of(h, cc, second);
			s->why_end = cc->start;
			if (s->why_end <= s->why_start)
				s->why_start = s->why_end - 1;
			if (hvn_corr_probe(h->x, NULL, p, c.coll, s->why_start,
					   s->why_end, &s->why) == -ENOMEM)
				return -ENOMEM;
		} else if (own) {
			s->why = *own;
			s->why_start = cc->start;
			s->why_end = cc->end;
		}
	}
	/* The others by host and rank, for people to read. */
	qsort_r(&r[s->culprit], s->nr - s->culprit, sizeof(*r), cmp_host_rank, f);
	/* Others whose own copy noise explains: a shared hypervisor? */
	s->noisy = calloc(s->nr, sizeof(*s->noisy));
	if (!s->noisy)
		return -ENOMEM;
	for (uint32_t i = s->culprit; i < s->nr; i++) {
		const struct hvn_stall *st = stall_of(f, &r[i]);
		bool seen = r[i].host == r[0].host && s->culprit;

		for (uint32_t k = 0; k < s->nnoisy && !seen; k++)
			seen = s->noisy[k] == r[i].host;
		if (st && st->cause && !seen)
			s->noisy[s->nnoisy++] = r[i].host;
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

static int job_stalls(struct hvn_fleet *f)
{
	struct hvn_fleet_rank *all;
	struct key_end *keys;
	size_t n = 0, cap = 0, nkeys = 0;

	/* Only the collectives some host's copy stalled in: their keys. */
	for (size_t i = 0; i < f->nh; i++)
		cap += f->h[i].x->nst;
	keys = malloc((cap + 1) * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < f->nh; i++)
		for (size_t k = 0; k < f->h[i].x->nst; k++) {
			const struct hvn_coll *c = &f->h[i].x->coll[f->h[i].x->st[k].coll];

			if (!c->is_p2p && c->seq != UINT64_MAX)
				keys[nkeys++] = (struct key_end){ c->comm, c->seq, c->func, 0 };
		}
	qsort(keys, nkeys, sizeof(*keys), cmp_key);
	cap = 0;
	for (size_t i = 0; i < f->nh; i++)
		for (size_t k = 0; k < f->h[i].x->ncoll; k++) {
			const struct hvn_coll *c = &f->h[i].x->coll[k];
			struct key_end key = { c->comm, c->seq, c->func, 0 };

			cap += !c->is_p2p && find_key(keys, nkeys, &key);
		}
	all = malloc((cap + 1) * sizeof(*all));
	if (!all) {
		free(keys);
		return -ENOMEM;
	}
	for (size_t i = 0; i < f->nh; i++) {
		const struct hvn_corr *x = f->h[i].x;

		for (size_t k = 0; k < x->ncoll; k++) {
			const struct hvn_coll *c = &x->coll[k];
			struct key_end key = { c->comm, c->seq, c->func, 0 };

			if (c->is_p2p || c->seq == UINT64_MAX ||
			    !find_key(keys, nkeys, &key))
				continue;
			all[n++] = (struct hvn_fleet_rank){
				.host = i, .coll = k,
				/* Entered: when its proxy work began (NCCL's
				 * start when none): queued ahead is not there. */
				.arrive = aligned(&f->h[i], real_of(x, c, c->start)),
				.end = aligned(&f->h[i], real_of(x, c, c->end)),
			};
		}
	}
	qsort_r(all, n, sizeof(*all), cmp_rank_key, f);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		const struct hvn_coll *a = coll_of(f, &all[i]);
		uint64_t lost = 0;
		bool hosts = false;

		while (j < n && !hvn_coll_key_cmp(coll_of(f, &all[j]), a)) {
			const struct hvn_stall *st = stall_of(f, &all[j]);

			if (st && st->lost_ns > lost)
				lost = st->lost_ns;
			hosts |= all[j].host != all[i].host;
			j++;
		}
		if (lost && hosts) {
			struct hvn_fleet_stall *s;
			void *grown = realloc(f->st, (f->nst + 1) * sizeof(*f->st));

			if (!grown) {
				free(all);
				free(keys);
				return -ENOMEM;
			}
			f->st = grown;
			s = &f->st[f->nst++];
			memset(s, 0, sizeof(*s));
			s->comm = a->comm;
			s->seq = a->seq;
			s->func = a->func;
			s->lost_ns = lost;
			s->arrive = all[i].arrive;	/* ties, by time */
			s->nr = j - i;
			s->r = malloc(s->nr * sizeof(*s->r));
			if (!s->r) {
				free(all);
				free(keys);
				return -ENOMEM;
			}
			memcpy(s->r, &all[i], s->nr * sizeof(*s->r));
		}
		i = j;
	}
	free(all);
	free(keys);
	if (f->nst)
		qsort(f->st, f->nst, sizeof(*f->st), cmp_fleet_lost);
	return 0;
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

/* Ranks of each communicator that no trace holds: one sort of every
 * (communicator, rank), whatever the ranks' numbers say. */
static int missing(struct hvn_fleet *f)
{
	struct comm_rank *v;
	size_t n = 0, total = 0;

	for (size_t i = 0; i < f->nh; i++)
		total += f->h[i].x->nproc;
	v = malloc((total + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < f->nh; i++)
		for (size_t k = 0; k < f->h[i].x->nproc; k++) {
			const struct hvn_proc *p = &f->h[i].x->proc[k];

			if (p->nranks > 0)
				v[n++] = (struct comm_rank){ p->comm, p->rank, p->nranks };
		}
	qsort(v, n, sizeof(*v), cmp_comm_rank);
	for (size_t i = 0; i < n;) {
		struct hvn_fleet_missing m = { v[i].comm, v[i].nranks, 0, -1 };
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
		g = realloc(f->miss, (f->nmiss + 1) * sizeof(*f->miss));
		if (!g) {
			free(v);
			return -ENOMEM;
		}
		f->miss = g;
		f->miss[f->nmiss++] = m;
	}
	free(v);
	return 0;
}

/* The join holds every host at once: no growth slack, no join tables. */
static void shrink(struct hvn_corr *x)
{
	void *p;

	free(x->agg);
	x->agg = NULL;
	x->agg_cap = x->nagg = 0;
	p = x->ncoll ? realloc(x->coll, x->ncoll * sizeof(*x->coll)) : NULL;
	if (p) {
		x->coll = p;
		x->coll_cap = x->ncoll;
	}
	p = x->nep ? realloc(x->ep, x->nep * sizeof(*x->ep)) : NULL;
	if (p) {
		x->ep = p;
		x->ep_cap = x->nep;
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
	hvn_meta_free(&meta);
	x->keep_episodes = true;
	r = hvn_corr_open(x, schema, t);
	if (r < 0) {
		hvn_err("out of memory");
		return HVN_EXIT_FAIL;
	}
	return 0;
}

int hvn_fleet_open(struct hvn_fleet *f, char **paths, size_t n,
		   const struct hvn_corr_params *p)
{
	memset(f, 0, sizeof(*f));
	f->h = calloc(n, sizeof(*f->h));
	if (!f->h)
		return HVN_EXIT_FAIL;
	for (size_t i = 0; i < n; i++) {
		struct hvn_fleet_host *h = &f->h[f->nh];
		struct hvn_tdat t;
		int r;

		h->path = paths[i];
		h->schema = calloc(1, sizeof(*h->schema));
		h->x = calloc(1, sizeof(*h->x));
		f->nh++;
		if (!h->schema || !h->x)
			return HVN_EXIT_FAIL;
		if (hvn_summary_is(h->path)) {
			r = hvn_summary_read(h->path, h->x, h->schema, h->host,
					     sizeof(h->host));
			if (r)
				return r;
		} else {
			r = hvn_tdat_open(&t, h->path);
			if (r) {
				hvn_tdat_close(&t);
				return r;
			}
			r = hvn_fleet_host_open(h->x, h->schema, &t, h->host,
						sizeof(h->host));
			if (!r)
				hvn_corr_analyse(h->x, &t, p);
			hvn_tdat_close(&t);
			if (r)
				return r;
			hvn_corr_trim_episodes(h->x);
		}
		for (size_t k = 0; k + 1 < f->nh; k++)
			if (!strcmp(f->h[k].host, h->host)) {
				hvn_err("%s and %s are both of host %s: one trace per host",
					f->h[k].path, h->path, h->host);
				return HVN_EXIT_USAGE;
			}
		shrink(h->x);
		h->stall_of = calloc(h->x->ncoll + 1, sizeof(*h->stall_of));
		if (!h->stall_of)
			return HVN_EXIT_FAIL;
		for (size_t k = 0; k < h->x->nst; k++)
			h->stall_of[h->x->st[k].coll] = k + 1;
		f->ncoll += h->x->ncoll;
		f->nranks += h->x->nproc;
	}
	return 0;
}

int hvn_fleet_analyse(struct hvn_fleet *f, const struct hvn_corr_params *p)
{
	int ret = align(f);

	ret = ret ?: job_stalls(f);
	for (size_t i = 0; i < f->nst && !ret; i++)
		ret = judge(f, &f->st[i], p);
	ret = ret ?: missing(f);
	if (ret == -ENOMEM) {
		hvn_err("out of memory");
		return HVN_EXIT_FAIL;
	}
	return 0;
}

double hvn_fleet_share(const struct hvn_fleet_stall *s)
{
	double d = (double)(s->why_end - s->why_start);

	if (!s->culprit || !s->why.cause || d <= 0)
		return 0;
	return s->why.explained / d > 1 ? 1 : s->why.explained / d;
}

void hvn_fleet_free(struct hvn_fleet *f)
{
	for (size_t i = 0; i < f->nh; i++) {
		if (f->h[i].x)
			hvn_corr_free(f->h[i].x);
		free(f->h[i].x);
		free(f->h[i].schema);
		free(f->h[i].stall_of);
	}
	for (size_t i = 0; i < f->nst; i++) {
		free(f->st[i].r);
		free(f->st[i].noisy);
	}
	free(f->h);
	free(f->st);
	free(f->miss);
	memset(f, 0, sizeof(*f));
}
