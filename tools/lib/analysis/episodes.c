// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU accounting of hvnoise events, shared by report and top.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <traceevent/event-parse.h>

#include "hvnoise/events.h"
#include "hvnoise/watch.h"
#include "analysis/episodes.h"

/* 0.5 ms to 5 s: the lost threshold's default is 1 ms, a stall's tens of ms. */
const uint64_t hvn_lost_bucket_ns[HVN_LOST_BUCKETS] = {
	500000, 1000000, 2000000, 5000000, 10000000, 20000000, 50000000,
	100000000, 200000000, 500000000, 1000000000, 2000000000, 5000000000ull,
};

/* Field names per event, in the order of the indexes below. */
static const char *const field_names[HVN_EV_NR][HVN_MAX_FIELDS + 1] = {
	[HVN_EV_WATCH] = { "gen", "idx", "count", "kind", "why", "node",
			   "cpu", "irq", "dev", "nirqs", "name" },
	[HVN_EV_STEAL] = { "cpu", "source", "start", "window", "duration" },
	[HVN_EV_LOST] = { "cpu", "start", "duration", "irq_ns", "steal_ns",
			  "unexplained_ns" },
	[HVN_EV_STORM_BEGIN] = { "cpu", "source", "irq", "threshold", "start",
				 "name" },
	[HVN_EV_STORM] = { "cpu", "source", "irq", "start", "duration",
			   "count", "peak_rate", "name" },
	[HVN_EV_MIGRATE] = { "irq", "dev", "from_cpu", "to_cpu", "how",
			     "name" },
	[HVN_EV_IRQ] = { "irq" },
	[HVN_EV_RAW] = { "id", "buf" },
};

enum { W_GEN, W_IDX, W_COUNT, W_KIND, W_WHY, W_NODE, W_CPU, W_IRQ, W_DEV,
       W_NIRQS, W_NAME };
enum { S_CPU, S_SOURCE, S_START, S_WINDOW, S_DUR };
enum { L_CPU, L_START, L_DUR, L_IRQ, L_STEAL, L_UNEXPL };
enum { T_CPU, T_SOURCE, T_IRQ, T_START, T_DUR, T_COUNT, T_PEAK, T_NAME };
enum { M_IRQ, M_DEV, M_FROM, M_TO, M_HOW, M_NAME };

static const struct {
	const char *sys, *name;
} event_names[HVN_EV_NR] = {
	[HVN_EV_WATCH] = { "hvnoise", "watch" },
	[HVN_EV_STEAL] = { "hvnoise", "steal" },
	[HVN_EV_LOST] = { "hvnoise", "lost" },
	[HVN_EV_STORM_BEGIN] = { "hvnoise", "irq_storm_begin" },
	[HVN_EV_STORM] = { "hvnoise", "irq_storm" },
	[HVN_EV_MIGRATE] = { "hvnoise", "irq_migrate" },
	[HVN_EV_IRQ] = { "irq", "irq_handler_entry" },
	[HVN_EV_RAW] = { "ftrace", "raw_data" },
};

int hvn_schema_bind(struct hvn_schema *s, struct tep_handle *tep)
{
	memset(s, 0, sizeof(*s));
	for (int k = HVN_EV_WATCH; k < HVN_EV_NR; k++) {
		struct tep_event *ev;

		ev = tep_find_event_by_name(tep, event_names[k].sys,
					    event_names[k].name);
		if (!ev || ev->id < 0 || ev->id > 65535)
			continue;
		s->kind[ev->id] = k;
		if (k != HVN_EV_RAW)
			s->found++;
		for (int i = 0; field_names[k][i]; i++) {
			struct tep_format_field *f;

			f = tep_find_field(ev, field_names[k][i]);
			/* A field we cannot read as a plain number or array
			 * stays absent: reading it yields 0 and counts. */
			if (!f || f->offset < 0 || f->offset > 65535 ||
			    f->size < 0 || f->size > 65535 ||
			    (f->flags & TEP_FIELD_IS_DYNAMIC))
				continue;
			/* A trailing char buf[] (size 0): the rest of the
			 * record, read by its user; mark it present. */
			if (!f->size && !(f->flags & TEP_FIELD_IS_ARRAY))
				continue;
			s->f[k][i].off = f->offset;
			s->f[k][i].size = f->size;
			s->f[k][i].is_signed = f->flags & TEP_FIELD_IS_SIGNED;
		}
	}
	return s->found;
}

/* A field's value; a record too short for its format reads as 0. */
static inline uint64_t fld(const struct hvn_field *f, const uint8_t *d,
			   uint32_t len, bool *bad)
{
	uint64_t v = 0;

	if (!f->size || (uint32_t)f->off + f->size > len) {
		*bad = true;
		return 0;
	}
	switch (f->size) {
	case 1:
		return f->is_signed ? (uint64_t)(int64_t)(int8_t)d[f->off] :
				      d[f->off];
	case 2: {
		uint16_t x;

		memcpy(&x, d + f->off, 2);
		return f->is_signed ? (uint64_t)(int64_t)(int16_t)x : x;
	}
	case 4: {
		uint32_t x;

		memcpy(&x, d + f->off, 4);
		return f->is_signed ? (uint64_t)(int64_t)(int32_t)x : x;
	}
	case 8:
		memcpy(&v, d + f->off, 8);
		return v;
	}
	*bad = true;
	return 0;
}

static void fld_str(const struct hvn_field *f, const uint8_t *d, uint32_t len,
		    char *out, size_t outlen, bool *bad)
{
	size_t n;

	out[0] = 0;
	if (!f->size || (uint32_t)f->off + f->size > len) {
		*bad = true;
		return;
	}
	n = f->size < outlen - 1 ? f->size : outlen - 1;
	memcpy(out, d + f->off, n);
	out[n] = 0;
	/* Names come from the kernel: keep them printable. */
	for (char *p = out; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
}

int hvn_an_init(struct hvn_analysis *an, const struct hvn_schema *s)
{
	memset(an, 0, sizeof(*an));
	an->schema = s;
	an->until = UINT64_MAX;
	an->top_max = 10;
	an->max_cpu = -1;
	an->ncpu = 64;
	an->cpu = calloc(an->ncpu, sizeof(*an->cpu));
	return an->cpu ? 0 : -1;
}

void hvn_an_free(struct hvn_analysis *an)
{
	free(an->cpu);
	free(an->watch);
	free(an->wpend);
	free(an->irq_count);
	free(an->clk);
	free(an->mig);
	memset(an, 0, sizeof(*an));
}

/* Counters only: top keeps the watched set and the clock pairs. */
void hvn_an_reset_counts(struct hvn_analysis *an)
{
	memset(an->cpu, 0, an->ncpu * sizeof(*an->cpu));
	if (an->irq_count)
		memset(an->irq_count, 0, an->irq_cap * sizeof(*an->irq_count));
	memset(an->by_kind, 0, sizeof(an->by_kind));
	an->records = an->in_window = an->bad_records = 0;
	an->first_ts = an->last_ts = 0;
	an->ntop = 0;
	an->nmig = 0;
	an->max_cpu = -1;
}

/* The accounting slot of @cpu, or NULL for a CPU number no machine has. */
static struct hvn_cpu *cpu_slot(struct hvn_analysis *an, int64_t cpu)
{
	if (cpu < 0 || cpu >= HVN_MAX_CPUS)
		return NULL;
	if (cpu >= an->ncpu) {
		int n = an->ncpu;
		struct hvn_cpu *c;

		while (n <= cpu)
			n *= 2;
		c = realloc(an->cpu, n * sizeof(*c));
		if (!c)
			return NULL;
		memset(c + an->ncpu, 0, (n - an->ncpu) * sizeof(*c));
		an->cpu = c;
		an->ncpu = n;
	}
	if (cpu > an->max_cpu)
		an->max_cpu = cpu;
	an->cpu[cpu].seen = true;
	return &an->cpu[cpu];
}

static void top_add(struct hvn_analysis *an, const struct hvn_episode *e)
{
	int i;

	if (an->ntop == an->top_max && e->dur <= an->top[an->ntop - 1].dur)
		return;
	if (an->ntop < an->top_max)
		an->ntop++;
	for (i = an->ntop - 1; i > 0 && an->top[i - 1].dur < e->dur; i--)
		an->top[i] = an->top[i - 1];
	an->top[i] = *e;
}

static void worst(struct hvn_cpu *c, int slot, const struct hvn_episode *e)
{
	if (e->dur > c->worst[slot].dur)
		c->worst[slot] = *e;
}

/*
 * Array *@p of *@cap elements of @size, doubled from @min until @idx fits,
 * the new ones zeroed; false (the array untouched) out of memory.
 */
static bool grow_zeroed(void **p, int *cap, int min, size_t size, int64_t idx)
{
	int n = *cap ? *cap : min;
	char *q;

	if (idx < *cap)
		return true;
	while (n <= idx)
		n *= 2;
	q = realloc(*p, (size_t)n * size);
	if (!q)
		return false;
	memset(q + (size_t)*cap * size, 0, (size_t)(n - *cap) * size);
	*p = q;
	*cap = n;
	return true;
}

/* One record of an emission not applied yet. */
struct hvn_watch_pend {
	uint32_t gen, idx, count;
	bool delta;
	struct hvn_watch_rec r;
};

static int cmp_pend(const void *a, const void *b)
{
	const struct hvn_watch_pend *x = a, *y = b;

	/* modulo 2^32: a module's generations start at its load's ms */
	if (x->gen != y->gen)
		return (int32_t)(x->gen - y->gen) < 0 ? -1 : 1;
	if (x->delta != y->delta)
		return x->delta ? 1 : -1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* The same record of the set: a CPU, a device, an IRQ route. */
static bool same_watch(const struct hvn_watch_rec *a, const struct hvn_watch_rec *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case HVN_WATCH_CPU:
		return a->cpu == b->cpu;
	case HVN_WATCH_DEVICE:
		return a->dev == b->dev;
	default:
		return a->dev == b->dev && a->irq == b->irq && a->cpu == b->cpu;
	}
}

/* The order a whole set is emitted in; devices keep theirs (equal here,
 * the sort stable). */
static int cmp_watch(const struct hvn_watch_rec *a, const struct hvn_watch_rec *b)
{
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->kind == HVN_WATCH_CPU)
		return (a->cpu > b->cpu) - (a->cpu < b->cpu);
	if (a->kind != HVN_WATCH_IRQ)
		return 0;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->irq != b->irq)
		return a->irq < b->irq ? -1 : 1;
	return (a->cpu > b->cpu) - (a->cpu < b->cpu);
}

static bool watch_room(struct hvn_analysis *an, int n)
{
	struct hvn_watch_rec *w;

	if (n <= an->watch_cap)
		return true;
	w = realloc(an->watch, (size_t)n * sizeof(*w));
	if (!w)
		return false;
	an->watch = w;
	an->watch_cap = n;
	return true;
}

/* Emission @p[0..n) (one gen, one kind, idx ascending, no repeats) made
 * the set: a whole one replaces it, a delta changes it. */
static bool watch_take(struct hvn_analysis *an, const struct hvn_watch_pend *p,
		       int n)
{
	if (!p->delta) {
		if (!watch_room(an, n))
			return false;
		an->nwatch = 0;
		for (int i = 0; i < n; i++)
			an->watch[an->nwatch++] = p[i].r;
	} else {
		if (!watch_room(an, an->nwatch + n))
			return false;
		for (int i = 0; i < n; i++) {
			struct hvn_watch_rec r = p[i].r;
			int k = 0;

			while (k < an->nwatch && !same_watch(&an->watch[k], &r))
				k++;
			if (r.why & HVN_WATCH_GONE) {
				if (k < an->nwatch)	/* the order kept */
					memmove(&an->watch[k], &an->watch[k + 1],
						(size_t)(--an->nwatch - k) * sizeof(*an->watch));
				continue;
			}
			r.why &= ~(HVN_WATCH_DELTA | HVN_WATCH_GONE);
			an->watch[k == an->nwatch ? an->nwatch++ : k] = r;
		}
		/* Back in the emitted order: insertion sort, stable, the
		 * set mostly in order already. */
		for (int i = 1; i < an->nwatch; i++) {
			struct hvn_watch_rec t = an->watch[i];
			int j = i;

			for (; j > 0 && cmp_watch(&an->watch[j - 1], &t) > 0; j--)
				an->watch[j] = an->watch[j - 1];
			an->watch[j] = t;
		}
	}
	an->watch_gen = p->gen;
	an->watch_seen = true;
	an->watch_part = false;
	return true;
}

/* Generation @gen is behind the set: its records are of no use.  A set
 * taken in part still takes the rest of its records. */
static bool watch_passed(const struct hvn_analysis *an, uint32_t gen)
{
	return an->watch_seen &&
	       ((int32_t)(gen - an->watch_gen) < 0 ||
		(gen == an->watch_gen && !an->watch_part));
}

/*
 * Apply what the pending records allow, in generation order (they come
 * per CPU, not in time order): the newest whole set that came complete,
 * then each complete delta that follows on.  Records of a generation
 * already passed are dropped.  @last: nothing more will come, so where no
 * set came complete, the newest is taken as far as it came.
 */
static void watch_apply(struct hvn_analysis *an, bool last)
{
	struct hvn_watch_pend *p = an->wpend;
	int n = 0;

	if (!an->npend)
		return;
	qsort(p, an->npend, sizeof(*p), cmp_pend);
	for (int i = 0; i < an->npend; i++)	/* each record once */
		if (!n || cmp_pend(&p[n - 1], &p[i]))
			p[n++] = p[i];
	an->npend = n;
	for (;;) {
		int take = -1, ntake = 0, part = -1, npart = 0;
		int next = -1, nnext = 0;

		/* Each emission: one gen, whole or delta (cmp_pend's order). */
		for (int a = 0, b; a < an->npend; a = b) {
			bool complete;

			for (b = a; b < an->npend && p[b].gen == p[a].gen &&
			     p[b].delta == p[a].delta; b++)
				;
			if (watch_passed(an, p[a].gen))
				continue;
			complete = (uint32_t)(b - a) == p[a].count;
			if (!p[a].delta && complete)
				take = a, ntake = b - a;	/* the newest last */
			else if (!p[a].delta)
				part = a, npart = b - a;
			else if (complete && an->watch_seen && !an->watch_part &&
				 p[a].gen == an->watch_gen + 1)
				next = a, nnext = b - a;
		}
		if (take < 0)
			take = next, ntake = nnext;
		if (take < 0 && last && part >= 0 &&
		    (!an->watch_seen || an->watch_part) &&
		    (!an->watch_seen || (int32_t)(p[part].gen - an->watch_gen) > 0 ||
		     npart > an->nwatch)) {
			if (!watch_take(an, &p[part], npart))
				break;
			an->watch_part = true;
			continue;
		}
		if (take < 0 || !watch_take(an, &p[take], ntake))
			break;
	}
	n = 0;
	for (int i = 0; i < an->npend; i++)
		if (!watch_passed(an, p[i].gen))
			p[n++] = p[i];
	an->npend = n;
}

static void watch_rec(struct hvn_analysis *an, const uint8_t *d, uint32_t len,
		      bool *bad)
{
	const struct hvn_field *f = an->schema->f[HVN_EV_WATCH];
	struct hvn_watch_pend *p;
	struct hvn_watch_rec *w;

	if (an->npend == an->pend_cap) {
		int cap = an->pend_cap ? 2 * an->pend_cap : 64;

		/* Applied as far as they go before growing: a long
		 * recording of many changes holds few records. */
		watch_apply(an, false);
		if (an->npend > an->pend_cap / 2 && cap > 1 << 22) {
			/* Full of what cannot be placed: the older half of
			 * it (sorted by generation) goes. */
			int keep = an->npend / 2;

			memmove(an->wpend, an->wpend + an->npend - keep,
				(size_t)keep * sizeof(*an->wpend));
			an->npend = keep;
		} else if (an->npend > an->pend_cap / 2 || !an->pend_cap) {
			p = realloc(an->wpend, (size_t)cap * sizeof(*p));
			if (!p)
				return;
			an->wpend = p;
			an->pend_cap = cap;
		}
	}
	p = &an->wpend[an->npend];
	p->gen = fld(&f[W_GEN], d, len, bad);
	p->idx = fld(&f[W_IDX], d, len, bad);
	p->count = fld(&f[W_COUNT], d, len, bad);
	if (p->idx >= p->count || watch_passed(an, p->gen))
		return;
	w = &p->r;
	w->kind = fld(&f[W_KIND], d, len, bad);
	w->why = fld(&f[W_WHY], d, len, bad);
	w->cpu = fld(&f[W_CPU], d, len, bad);
	w->irq = fld(&f[W_IRQ], d, len, bad);
	w->node = fld(&f[W_NODE], d, len, bad);
	w->dev = fld(&f[W_DEV], d, len, bad);
	w->nirqs = fld(&f[W_NIRQS], d, len, bad);
	fld_str(&f[W_NAME], d, len, w->name, sizeof(w->name), bad);
	p->delta = w->why & HVN_WATCH_DELTA;
	an->npend++;
}

static void irq_count(struct hvn_analysis *an, int64_t irq)
{
	if (irq < 0 || irq >= 1 << 20 ||
	    !grow_zeroed((void **)&an->irq_count, &an->irq_cap, 256,
			 sizeof(*an->irq_count), irq))
		return;
	an->irq_count[irq]++;
}

static void mig_add(struct hvn_analysis *an, const struct hvn_episode *e)
{
	if (an->nmig == an->mig_cap) {
		int n = an->mig_cap ? an->mig_cap * 2 : 16;
		struct hvn_episode *p;

		if (n > 1 << 20)
			return;
		p = realloc(an->mig, n * sizeof(*p));
		if (!p)
			return;
		an->mig = p;
		an->mig_cap = n;
	}
	an->mig[an->nmig++] = *e;
}

int hvn_episode_decode(const struct hvn_schema *s, uint64_t ts,
		       const uint8_t *d, uint32_t len, struct hvn_episode *e)
{
	uint16_t id;
	bool bad = false;
	int k;

	if (len < 2)
		return -1;
	memcpy(&id, d, 2);
	k = s->kind[id];

	const struct hvn_field *f = s->f[k];

	memset(e, 0, sizeof(*e));
	switch (k) {
	case HVN_EV_STEAL:
		e->kind = HVN_EP_STEAL;
		e->cpu = fld(&f[S_CPU], d, len, &bad);
		e->source = fld(&f[S_SOURCE], d, len, &bad);
		e->start = fld(&f[S_START], d, len, &bad);
		e->a = fld(&f[S_WINDOW], d, len, &bad);
		e->dur = fld(&f[S_DUR], d, len, &bad);
		break;
	case HVN_EV_LOST:
		e->kind = HVN_EP_LOST;
		e->cpu = fld(&f[L_CPU], d, len, &bad);
		e->start = fld(&f[L_START], d, len, &bad);
		e->dur = fld(&f[L_DUR], d, len, &bad);
		e->c = fld(&f[L_IRQ], d, len, &bad);
		e->b = fld(&f[L_STEAL], d, len, &bad);
		e->a = fld(&f[L_UNEXPL], d, len, &bad);
		break;
	case HVN_EV_STORM:
		e->kind = HVN_EP_STORM;
		e->cpu = fld(&f[T_CPU], d, len, &bad);
		e->source = fld(&f[T_SOURCE], d, len, &bad);
		e->irq = fld(&f[T_IRQ], d, len, &bad);
		e->start = fld(&f[T_START], d, len, &bad);
		e->dur = fld(&f[T_DUR], d, len, &bad);
		e->a = fld(&f[T_COUNT], d, len, &bad);
		e->b = fld(&f[T_PEAK], d, len, &bad);
		fld_str(&f[T_NAME], d, len, e->name, sizeof(e->name), &bad);
		break;
	case HVN_EV_MIGRATE:
		e->kind = HVN_EP_MIGRATE;
		e->irq = fld(&f[M_IRQ], d, len, &bad);
		e->cpu2 = fld(&f[M_FROM], d, len, &bad);
		e->cpu = fld(&f[M_TO], d, len, &bad);
		e->source = fld(&f[M_HOW], d, len, &bad);
		e->start = ts;
		fld_str(&f[M_NAME], d, len, e->name, sizeof(e->name), &bad);
		break;
	}
	return bad ? -1 : k;
}

void hvn_an_event(void *ctx, int rcpu, uint64_t ts, const uint8_t *d,
		  uint32_t len)
{
	struct hvn_analysis *an = ctx;
	const struct hvn_schema *s = an->schema;
	struct hvn_episode e;
	struct hvn_cpu *c;
	uint16_t id;
	bool bad = false;
	int k;

	an->records++;
	if (ts < an->since || ts >= an->until || len < 2)
		return;
	an->in_window++;
	if (!an->first_ts || ts < an->first_ts)
		an->first_ts = ts;
	if (ts > an->last_ts)
		an->last_ts = ts;
	c = cpu_slot(an, rcpu);
	if (c)
		c->records++;
	memcpy(&id, d, 2);
	k = s->kind[id];
	an->by_kind[k]++;
	switch (k) {
	case HVN_EV_OTHER:
	case HVN_EV_STORM_BEGIN:	/* counted; the end event has the numbers */
	case HVN_EV_RAW:
		return;
	case HVN_EV_IRQ:
		if (c)
			c->irqs++;
		irq_count(an, (int64_t)fld(&s->f[k][0], d, len, &bad));
		break;
	case HVN_EV_WATCH:
		watch_rec(an, d, len, &bad);
		break;
	default:
		if (hvn_episode_decode(s, ts, d, len, &e) < 0) {
			bad = true;
			break;
		}
		c = cpu_slot(an, e.cpu);
		if (!c)
			break;
		if (e.kind == HVN_EP_STEAL) {
			c->steal_ns += e.dur;
			c->steal_n++;
			worst(c, 0, &e);
			top_add(an, &e);
		} else if (e.kind == HVN_EP_LOST) {
			c->lost_ns += e.dur;
			c->lost_unexpl_ns += e.a;
			c->lost_steal_ns += e.b;
			c->lost_irq_ns += e.c;
			c->lost_n++;
			{
				int b = 0;

				while (b < HVN_LOST_BUCKETS && e.dur > hvn_lost_bucket_ns[b])
					b++;
				c->lost_hist[b]++;
			}
			worst(c, 1, &e);
			top_add(an, &e);
		} else if (e.kind == HVN_EP_STORM) {
			c->storms++;
			c->storm_irqs += e.a;
			worst(c, 2, &e);
			top_add(an, &e);
		} else {
			struct hvn_cpu *from;

			c->mig_in++;
			mig_add(an, &e);
			/* from_cpu is -1 when the IRQ had no CPU before. */
			from = e.cpu2 >= 0 ? cpu_slot(an, e.cpu2) : NULL;
			if (from)
				from->mig_out++;
		}
	}
	if (bad)
		an->bad_records++;
}

void hvn_an_add_clock(struct hvn_analysis *an, uint64_t mono, uint64_t real)
{
	if (an->nclk == an->clk_cap) {
		int n = an->clk_cap ? an->clk_cap * 2 : 16;
		struct hvn_clock_pair *p = realloc(an->clk, n * sizeof(*p));

		if (!p)
			return;
		an->clk = p;
		an->clk_cap = n;
	}
	an->clk[an->nclk].mono = mono;
	an->clk[an->nclk].real = real;
	an->nclk++;
}

/* The pair nearest to @t on the given side (0 mono, 1 real). */
static const struct hvn_clock_pair *nearest(const struct hvn_analysis *an,
					    uint64_t t, int real)
{
	const struct hvn_clock_pair *best = NULL;
	uint64_t bd = UINT64_MAX;

	for (int i = 0; i < an->nclk; i++) {
		uint64_t v = real ? an->clk[i].real : an->clk[i].mono;
		uint64_t dist = v > t ? v - t : t - v;

		if (dist < bd) {
			bd = dist;
			best = &an->clk[i];
		}
	}
	return best;
}

uint64_t hvn_an_mono_to_real(const struct hvn_analysis *an, uint64_t mono)
{
	const struct hvn_clock_pair *p = nearest(an, mono, 0);

	return p ? p->real + (mono - p->mono) : 0;
}

uint64_t hvn_an_real_to_mono(const struct hvn_analysis *an, uint64_t real)
{
	const struct hvn_clock_pair *p = nearest(an, real, 1);

	return p ? p->mono + (real - p->real) : 0;
}

/* A trace time as local time ("2026-11-30 14:02:07.123456") or as ISO 8601
 * UTC ("2026-11-30T13:02:07.123456Z"); "mono S.us" without clock pairs.
 * Returns where the time of day starts in @buf. */
static size_t fmt_real(const struct hvn_analysis *an, uint64_t mono, char *buf,
		       size_t len, bool utc)
{
	uint64_t real = hvn_an_mono_to_real(an, mono);
	struct tm tm;
	time_t t;

	if (!real) {
		snprintf(buf, len, "mono %llu.%06llu",
			 (unsigned long long)(mono / 1000000000ull),
			 (unsigned long long)(mono % 1000000000ull / 1000));
		return 0;
	}
	t = real / 1000000000ull;
	if (utc)
		gmtime_r(&t, &tm);
	else
		localtime_r(&t, &tm);
	snprintf(buf, len, "%04d-%02d-%02d%c%02d:%02d:%02d.%06llu%s",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, utc ? 'T' : ' ',
		 tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned long long)(real % 1000000000ull / 1000), utc ? "Z" : "");
	return 11;
}

void hvn_fmt_time(const struct hvn_analysis *an, uint64_t mono, char *buf,
		  size_t len, bool date)
{
	size_t tod = fmt_real(an, mono, buf, len, false);

	if (!date && tod)
		memmove(buf, buf + tod, strlen(buf + tod) + 1);
}

void hvn_fmt_utc(const struct hvn_analysis *an, uint64_t mono, char *buf,
		 size_t len)
{
	fmt_real(an, mono, buf, len, true);
}

/* Fill in what each CPU is watched for and the IRQs it serves. */
void hvn_an_finish(struct hvn_analysis *an)
{
	watch_apply(an, true);
	for (int i = 0; i < an->ncpu; i++) {
		an->cpu[i].serves[0] = 0;
		an->cpu[i].watched = false;
	}
	for (int i = 0; i < an->nwatch; i++) {
		const struct hvn_watch_rec *w = &an->watch[i];
		struct hvn_cpu *c;
		size_t l;

		if (w->kind != HVN_WATCH_CPU && w->kind != HVN_WATCH_IRQ)
			continue;
		c = cpu_slot(an, w->cpu);
		if (!c)
			continue;
		if (w->kind == HVN_WATCH_CPU) {
			c->watched = true;
			c->why = w->why;
			continue;
		}
		l = strlen(c->serves);
		/* Once per name: a device may list an IRQ on a CPU twice. */
		{
			size_t nl = strlen(w->name);
			const char *p = c->serves;
			bool dup = false;

			while (!dup && (p = strstr(p, w->name))) {
				dup = (p == c->serves || p[-1] == ',') &&
				      (p[nl] == ',' || !p[nl]);
				p++;
			}
			if (dup || !nl)
				continue;
		}
		if (l + strlen(w->name) + 2 < sizeof(c->serves))
			snprintf(c->serves + l, sizeof(c->serves) - l, "%s%s",
				 l ? "," : "", w->name);
	}
}
