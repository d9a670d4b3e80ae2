// SPDX-License-Identifier: GPL-2.0
/* The watched set: composition, comparison and record walk. */
#include "watchset.h"

void hvn_ws_mark(struct hvn_watchset *ws, const unsigned long *map,
		 const unsigned long *online, u8 reason)
{
	unsigned int cpu;

	for (cpu = 0; cpu < ws->nbits; cpu++)
		if (hvn_bit_test(map, cpu) && hvn_bit_test(online, cpu))
			ws->why[cpu] |= reason;
}

static int irq_cmp(const struct hvn_wirq *a, const struct hvn_wirq *b)
{
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->irq != b->irq)
		return a->irq < b->irq ? -1 : 1;
	if (a->cpu != b->cpu)
		return a->cpu < b->cpu ? -1 : 1;
	return 0;
}

void hvn_ws_finish(struct hvn_watchset *ws, const unsigned long *online)
{
	unsigned int i, j;

	/* Insertion sort: a few hundred IRQs at most, usually in order. */
	for (i = 1; i < ws->nirq; i++) {
		struct hvn_wirq t = ws->irq[i];

		for (j = i; j > 0 && irq_cmp(&ws->irq[j - 1], &t) > 0; j--)
			ws->irq[j] = ws->irq[j - 1];
		ws->irq[j] = t;
	}
	for (i = 0; i < ws->nirq; i++) {
		s32 cpu = ws->irq[i].cpu;

		if (cpu >= 0 && (unsigned int)cpu < ws->nbits &&
		    hvn_bit_test(online, (unsigned int)cpu))
			ws->why[cpu] |= HVN_WHY_IRQ;
	}
}

/* A device's state, and an IRQ route's flags and name, alike. */
static bool dev_same(const struct hvn_wdev *x, const struct hvn_wdev *y)
{
	return x->node == y->node && x->present == y->present &&
	       x->nirqs == y->nirqs;
}

static bool irq_same(const struct hvn_wirq *x, const struct hvn_wirq *y)
{
	return x->flags == y->flags &&
	       !strncmp(x->name, y->name, HVN_IRQ_NAME_LEN);
}

/* The records of @ws whole. */
static unsigned int ws_nrecs(const struct hvn_watchset *ws)
{
	return hvn_ws_ncpus(ws) + ws->ndev + ws->nirq;
}

unsigned int hvn_ws_ncpus(const struct hvn_watchset *ws)
{
	unsigned int cpu, n = 0;

	for (cpu = 0; cpu < ws->nbits; cpu++)
		n += ws->why[cpu] != 0;
	return n;
}

bool hvn_ws_equal(const struct hvn_watchset *a, const struct hvn_watchset *b)
{
	unsigned int i;

	if (a->nbits != b->nbits || a->ndev != b->ndev || a->nirq != b->nirq)
		return false;
	if (memcmp(a->why, b->why, a->nbits))
		return false;
	for (i = 0; i < a->ndev; i++) {
		const struct hvn_wdev *x = &a->dev[i], *y = &b->dev[i];

		if (x->addr != y->addr || !dev_same(x, y))
			return false;
	}
	for (i = 0; i < a->nirq; i++) {
		const struct hvn_wirq *x = &a->irq[i], *y = &b->irq[i];

		if (irq_cmp(x, y) || !irq_same(x, y))
			return false;
	}
	return true;
}

void hvn_ws_cpumap(const struct hvn_watchset *ws, unsigned long *map)
{
	unsigned int cpu;

	memset(map, 0, HVN_BITS_TO_LONGS(ws->nbits) * sizeof(long));
	for (cpu = 0; cpu < ws->nbits; cpu++)
		if (ws->why[cpu])
			hvn_bit_set(map, cpu);
}

unsigned int hvn_ws_walk(const struct hvn_watchset *ws, hvn_watch_rec_fn fn,
			 void *ctx)
{
	struct hvn_watch_rec r;
	unsigned int i;

	memset(&r, 0, sizeof(r));
	r.gen = ws->gen;
	r.count = ws_nrecs(ws);

	r.kind = HVN_WATCH_CPU;
	r.node = -1;
	r.irq = -1;
	r.name = "";
	for (i = 0; i < ws->nbits; i++) {
		if (!ws->why[i])
			continue;
		r.cpu = (s32)i;
		r.why = ws->why[i];
		fn(ctx, &r);
		r.idx++;
	}

	r.kind = HVN_WATCH_DEVICE;
	r.why = 0;
	r.cpu = -1;
	for (i = 0; i < ws->ndev; i++) {
		r.dev = ws->dev[i].addr;
		r.node = ws->dev[i].present ? ws->dev[i].node : -1;
		r.nirqs = ws->dev[i].nirqs;
		fn(ctx, &r);
		r.idx++;
	}

	r.kind = HVN_WATCH_IRQ;
	r.node = -1;
	r.nirqs = 0;
	for (i = 0; i < ws->nirq; i++) {
		r.dev = ws->irq[i].dev;
		r.irq = ws->irq[i].irq;
		r.cpu = ws->irq[i].cpu;
		r.why = ws->irq[i].flags;
		r.name = ws->irq[i].name;
		fn(ctx, &r);
		r.idx++;
	}
	return r.count;
}

/* Emits or counts the records of a delta. */
struct delta_out {
	hvn_watch_rec_fn fn;
	void *ctx;
	struct hvn_watch_rec r;		/* gen and count set */
};

static void delta_put(struct delta_out *o, u8 kind, u8 why, s32 cpu, u32 dev,
		      s32 irq, s32 node, u32 nirqs, const char *name)
{
	o->r.kind = kind;
	o->r.why = why | HVN_WATCH_DELTA;
	o->r.cpu = cpu;
	o->r.dev = dev;
	o->r.irq = irq;
	o->r.node = node;
	o->r.nirqs = nirqs;
	o->r.name = name;
	if (o->fn)
		o->fn(o->ctx, &o->r);
	o->r.idx++;
}

static void delta_irq(struct delta_out *o, const struct hvn_wirq *w, u8 why)
{
	delta_put(o, HVN_WATCH_IRQ, why, w->cpu, w->dev, w->irq, -1, 0, w->name);
}

static unsigned int delta_walk(const struct hvn_watchset *a,
			       const struct hvn_watchset *b,
			       struct delta_out *o)
{
	unsigned int i, j;

	o->r.idx = 0;
	for (i = 0; i < b->nbits; i++)
		if (a->why[i] != b->why[i])
			delta_put(o, HVN_WATCH_CPU,
				  b->why[i] ?: HVN_WATCH_GONE, (s32)i, 0, -1,
				  -1, 0, "");
	for (i = 0; i < b->ndev; i++) {
		const struct hvn_wdev *x = &a->dev[i], *y = &b->dev[i];

		if (!dev_same(x, y))
			delta_put(o, HVN_WATCH_DEVICE, 0, -1, y->addr, -1,
				  y->present ? y->node : -1, y->nirqs, "");
	}
	/* Both sorted by (device, irq, cpu): one merge. */
	for (i = 0, j = 0; i < a->nirq || j < b->nirq;) {
		int c = i == a->nirq ? 1 : j == b->nirq ? -1 :
			irq_cmp(&a->irq[i], &b->irq[j]);

		if (c < 0) {
			delta_irq(o, &a->irq[i++], HVN_WATCH_GONE);
		} else if (c > 0) {
			delta_irq(o, &b->irq[j], b->irq[j].flags);
			j++;
		} else {
			if (!irq_same(&a->irq[i], &b->irq[j]))
				delta_irq(o, &b->irq[j], b->irq[j].flags);
			i++;
			j++;
		}
	}
	return o->r.idx;
}

unsigned int hvn_ws_walk_delta(const struct hvn_watchset *old,
			       const struct hvn_watchset *new,
			       hvn_watch_rec_fn fn, void *ctx)
{
	struct delta_out o;
	unsigned int i;

	if (old->nbits != new->nbits || old->ndev != new->ndev)
		return UINT_MAX;
	for (i = 0; i < new->ndev; i++)
		if (old->dev[i].addr != new->dev[i].addr)
			return UINT_MAX;
	memset(&o, 0, sizeof(o));
	o.r.gen = new->gen;
	o.r.count = delta_walk(old, new, &o);
	if (!fn)
		return o.r.count;
	o.fn = fn;
	o.ctx = ctx;
	return delta_walk(old, new, &o);
}

unsigned int hvn_ws_walk_change(const struct hvn_watchset *old,
				const struct hvn_watchset *new,
				unsigned int pct, hvn_watch_rec_fn fn,
				void *ctx)
{
	unsigned int whole = ws_nrecs(new);
	unsigned int n;

	/*
	 * Every HVN_WATCH_WHOLE_EVERY'th whole, deltas or not: a ring that
	 * overwrites still holds a base to apply the deltas after it to.
	 */
	if (old && pct && (new->gen % HVN_WATCH_WHOLE_EVERY || !whole)) {
		n = hvn_ws_walk_delta(old, new, NULL, NULL);
		/*
		 * Only from the generation before (a delta applies to it
		 * alone) and only of something; an empty set has no whole
		 * records to say it.  In 64 bits: whole * pct overflows at
		 * 43 million records.
		 */
		if (n != UINT_MAX && n && new->gen == old->gen + 1 &&
		    ((u64)n * 100 < (u64)whole * pct || !whole))
			return hvn_ws_walk_delta(old, new, fn, ctx);
	}
	return hvn_ws_walk(new, fn, ctx);
}
