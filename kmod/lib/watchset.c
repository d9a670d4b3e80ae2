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

		if (x->addr != y->addr || x->node != y->node ||
		    x->present != y->present || x->nirqs != y->nirqs)
			return false;
	}
	for (i = 0; i < a->nirq; i++) {
		const struct hvn_wirq *x = &a->irq[i], *y = &b->irq[i];

		if (irq_cmp(x, y) || x->flags != y->flags ||
		    strncmp(x->name, y->name, HVN_IRQ_NAME_LEN))
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
	r.count = hvn_ws_ncpus(ws) + ws->ndev + ws->nirq;

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
