// SPDX-License-Identifier: GPL-2.0
/*
 * From what a recording found to what removes it.  The CPUs that matter
 * are those that serve the job: where its ranks' NCCL proxy and enqueuing
 * threads ran (or, without NCCL records, the watched CPUs).  Interrupts
 * that stormed or were moved there should go elsewhere; a rank that shares
 * its CPU with a device's interrupts may move instead; interrupt work on
 * those CPUs that no storm explains calls for isolating them; time the
 * hypervisor took is the provider's to fix, and gets its evidence.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/advise.h"
#include "cpulist.h"
#include "hvnoise/watch.h"

#define LBITS		(8 * sizeof(unsigned long))
#define MAP_LONGS	(HVN_MAX_CPUS / LBITS)

static void set_bit_(unsigned long *m, int c)
{
	m[c / LBITS] |= 1UL << (c % LBITS);
}

static bool test_bit_(const unsigned long *m, int c)
{
	return c >= 0 && c < HVN_MAX_CPUS && (m[c / LBITS] >> (c % LBITS)) & 1;
}

static bool map_empty(const unsigned long *m)
{
	for (size_t i = 0; i < MAP_LONGS; i++)
		if (m[i])
			return false;
	return true;
}

const char *hvn_adv_kind_name(unsigned int k)
{
	static const char *const n[HVN_ADV_KINDS] = {
		[HVN_ADV_IRQ] = "irq-affinity",
		[HVN_ADV_PIN] = "pin-threads",
		[HVN_ADV_ISOLATE] = "isolate-cpus",
		[HVN_ADV_PROVIDER] = "provider",
	};

	return k < HVN_ADV_KINDS ? n[k] : "?";
}

/* @m as a CPU list into @buf; a list that does not fit is an error, never
 * a cut one (a cut list would name other CPUs). */
static int list_of(char *buf, size_t len, const unsigned long *m)
{
	return hvn_cpulist_format(buf, len, m, HVN_MAX_CPUS) < 0 ? -ENOSPC : 0;
}

struct ctx {
	const struct hvn_corr *x;
	const struct hvn_advise_params *p;
	struct hvn_advise *out;
	int ncpu;
	unsigned long *serving, *irqcpu, *avoid, *one;
	unsigned long *present;		/* CPUs that are there */
	uint8_t *rwhy;			/* per CPU: 1 proxy, 2 enqueue */
	int32_t *rrank;			/* per CPU: a rank's coll index + 1 */
	/* Per CPU: ns of storms of one device's IRQ (not the local timer's,
	 * nor all sources together: those are the housekeeping noise
	 * isolation is for). */
	uint64_t *dev_storm_ns;
	double stall_total;		/* ns the stalls lost */
};

static struct hvn_advice *add(struct ctx *k, unsigned int kind)
{
	struct hvn_advise *o = k->out;
	struct hvn_advice *a;

	if (o->nadv == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 8;
		void *n = realloc(o->adv, cap * sizeof(*o->adv));

		if (!n)
			return NULL;
		o->adv = n;
		o->cap = cap;
	}
	a = &o->adv[o->nadv++];
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	a->irq = a->cpu = a->target = a->rank = a->pid = -1;
	a->share = k->stall_total > 0 ? 0 : -1;
	return a;
}

/* A CPU's NUMA node as the watched set says, or -1. */
static int node_of_cpu(const struct hvn_analysis *an, int cpu)
{
	for (int i = 0; i < an->nwatch; i++)
		if (an->watch[i].kind == HVN_WATCH_CPU && an->watch[i].cpu == cpu)
			return an->watch[i].node;
	return -1;
}

static int node_of_irq(const struct hvn_analysis *an, int irq)
{
	for (int i = 0; i < an->nwatch; i++)
		if (an->watch[i].kind == HVN_WATCH_IRQ && an->watch[i].irq == irq)
			return an->watch[i].node;
	return -1;
}

/*
 * Where to move something off the serving CPUs: a CPU of the recording
 * that serves no rank (nor any in @k->avoid), by preference one that takes
 * no watched IRQ, then one of NUMA node @node where the watched set says
 * so, then the quietest (fewest interrupts, least lost time), the lowest
 * numbered among equals.  -1 if there is none; *@irqs: it takes a watched
 * IRQ.
 */
static int pick_target(struct ctx *k, int node, bool *local, bool *irqs)
{
	const struct hvn_analysis *an = &k->x->an;
	int best = -1, best_free = 0, best_local = 0;
	uint64_t best_cost = 0;

	for (int c = 0; c < k->ncpu; c++) {
		uint64_t cost = 0;
		int loc, free_;

		if (test_bit_(k->serving, c) || test_bit_(k->avoid, c) ||
		    !test_bit_(k->present, c))
			continue;
		free_ = !test_bit_(k->irqcpu, c);
		loc = node >= 0 && node_of_cpu(an, c) == node;
		if (c <= an->max_cpu)
			cost = an->cpu[c].irqs + an->cpu[c].storm_irqs +
			       an->cpu[c].lost_ns / 1000;
		if (best < 0 || free_ > best_free ||
		    (free_ == best_free && loc > best_local) ||
		    (free_ == best_free && loc == best_local && cost < best_cost)) {
			best = c;
			best_free = free_;
			best_local = loc;
			best_cost = cost;
		}
	}
	*local = best_local;
	*irqs = best >= 0 && !best_free;
	return best;
}

/*
 * Of the stalls' lost time, what this cause was charged with, into
 * @a->share: in each stall, the most any one of its CPUs in @cpus (NULL:
 * any) was charged with of the kinds @pick takes (a stall's CPUs wait
 * together: their charges overlap, they do not add), at most the stall's
 * own lost time.
 */
enum { SH_STORM = 1, SH_IRQ = 2, SH_HV = 4 };

static void add_share(struct ctx *k, struct hvn_advice *a,
		      const unsigned long *cpus, int irq, int pick)
{
	const struct hvn_corr *x = k->x;
	double ns = 0;

	if (k->stall_total <= 0)
		return;
	for (size_t i = 0; i < x->nst; i++) {
		double best = 0;

		for (int j = 0; j < x->st[i].ncpu; j++) {
			const struct hvn_contrib *c = &x->st[i].c[j];
			double v = 0;

			if (cpus && !test_bit_(cpus, c->cpu))
				continue;
			if ((pick & SH_STORM) && (irq < 0 || c->storm_irq == irq))
				v += c->storm;
			if (pick & SH_IRQ)
				v += c->lirq;
			/* Steal inside lost episodes and steal episodes are the
			 * same stolen time: the larger, once. */
			if (pick & SH_HV)
				v += c->unexpl + (c->lsteal > c->steal ? c->lsteal : c->steal);
			if (v > best)
				best = v;
		}
		ns += best < x->st[i].lost_ns ? best : x->st[i].lost_ns;
	}
	a->share = ns / k->stall_total;
}

static void span_of(struct hvn_advice *a, uint64_t start, uint64_t end)
{
	if (!a->first || start < a->first)
		a->first = start;
	if (end > a->last)
		a->last = end;
}

/* Where the newest watched set routes @irq: a serving CPU it is on, -2
 * when it is on none of them, -1 when the set does not hold it. */
static int where_now(const struct hvn_analysis *an, const unsigned long *serving,
		     int irq)
{
	bool seen = false;

	for (int i = 0; i < an->nwatch; i++) {
		const struct hvn_watch_rec *w = &an->watch[i];

		if (w->kind != HVN_WATCH_IRQ || w->irq != irq)
			continue;
		if (test_bit_(serving, w->cpu))
			return w->cpu;
		seen = true;
	}
	return seen ? -2 : -1;
}

/* Whether @irq's affinity may be set, as the newest watched set says
 * (HVN_IRQ_*; 0 where it does not know). */
static uint8_t affinity_of(const struct hvn_analysis *an, int irq)
{
	for (int i = 0; i < an->nwatch; i++)
		if (an->watch[i].kind == HVN_WATCH_IRQ && an->watch[i].irq == irq)
			return an->watch[i].why & (HVN_IRQ_CHECKED | HVN_IRQ_MANAGED |
						   HVN_IRQ_FIXED);
	return 0;
}

/* IRQs that stormed on, or were moved onto, a serving CPU, and are still
 * routed there. */
static int irq_advice(struct ctx *k)
{
	const struct hvn_corr *x = k->x;
	size_t first = k->out->nadv, n;

	for (size_t i = 0; i < x->nep; i++) {
		const struct hvn_episode *e = &x->ep[i];
		struct hvn_advice *a = NULL;

		if ((e->kind != HVN_EP_STORM && e->kind != HVN_EP_MIGRATE) ||
		    e->irq < 0 || !test_bit_(k->serving, e->cpu))
			continue;
		for (size_t j = first; j < k->out->nadv; j++)
			if (k->out->adv[j].irq == e->irq)
				a = &k->out->adv[j];
		if (!a) {
			a = add(k, HVN_ADV_IRQ);
			if (!a)
				return -ENOMEM;
			a->irq = e->irq;
		}
		/* A name once known stays (a later record may lack it). */
		if (e->name[0]) {
			memcpy(a->name, e->name, sizeof(a->name));
			a->name[HVN_NAME_LEN] = 0;
		}
		if (e->kind == HVN_EP_STORM) {
			a->storms++;
			a->storm_irqs += e->a;
			a->storm_ns += e->dur;
		} else {
			a->moves++;
		}
		/* Where it hurt last: where it is now. */
		if (e->start + e->dur >= a->last)
			a->cpu = e->cpu;
		span_of(a, e->start, e->start + e->dur);
	}
	n = first;
	for (size_t j = first; j < k->out->nadv; j++) {
		struct hvn_advice *a = &k->out->adv[j];
		int now = where_now(&k->x->an, k->serving, a->irq);

		/* The newest watched set has it off the serving CPUs already:
		 * nothing to change. */
		if (now == -2)
			continue;
		if (now >= 0)
			a->cpu = now;
		a->affinity = affinity_of(&k->x->an, a->irq);
		/* One the kernel places (or cannot move) goes nowhere. */
		if (a->affinity & (HVN_IRQ_MANAGED | HVN_IRQ_FIXED))
			a->target = -1;
		else
			a->target = pick_target(k, node_of_irq(&k->x->an, a->irq),
						&a->target_local, &a->target_irqs);
		add_share(k, a, NULL, a->irq, SH_STORM);
		k->out->adv[n++] = *a;
	}
	k->out->nadv = n;
	return 0;
}

/* The device IRQ that stormed longest on @cpu names @a (if any did; of
 * the first 32 IRQs that stormed there). */
static void worst_storm(const struct hvn_corr *x, int cpu, struct hvn_advice *a)
{
	struct { int irq; uint64_t ns; size_t ep; } t[32];
	int n = 0, best = -1;

	for (size_t i = 0; i < x->nep; i++) {
		const struct hvn_episode *e = &x->ep[i];
		int j;

		if (e->kind != HVN_EP_STORM || e->cpu != cpu || e->irq < 0)
			continue;
		for (j = 0; j < n && t[j].irq != e->irq; j++)
			;
		if (j == n) {
			if (n == 32)
				continue;
			t[n].irq = e->irq;
			t[n].ns = 0;
			t[n++].ep = i;
		}
		t[j].ns += e->dur;
		if (x->ep[i].name[0])
			t[j].ep = i;
	}
	for (int j = 0; j < n; j++)
		if (best < 0 || t[j].ns > t[best].ns)
			best = j;
	if (best < 0)
		return;
	a->irq = t[best].irq;
	if (x->ep[t[best].ep].name[0]) {
		memcpy(a->name, x->ep[t[best].ep].name, sizeof(a->name));
		a->name[HVN_NAME_LEN] = 0;
	}
}

/* The first watched IRQ routed to @cpu, or -1. */
static const struct hvn_watch_rec *irq_on(const struct hvn_analysis *an,
					  int cpu)
{
	for (int i = 0; i < an->nwatch; i++)
		if (an->watch[i].kind == HVN_WATCH_IRQ && an->watch[i].cpu == cpu)
			return &an->watch[i];
	return NULL;
}

/* A rank's thread on a CPU that also takes a device's interrupts, where
 * they cost it: storms there, or interrupt time in its lost episodes. */
static int pin_advice(struct ctx *k)
{
	const struct hvn_corr *x = k->x;
	const struct hvn_analysis *an = &x->an;
	uint64_t min = k->p->min_ms * 1e6;

	if (!k->out->from_ranks)
		return 0;
	for (int c = 0; c < k->ncpu && c <= an->max_cpu; c++) {
		const struct hvn_watch_rec *w;
		const struct hvn_coll *cl;
		const struct hvn_proc *pr;
		struct hvn_advice *a;
		uint64_t storm_ns = k->dev_storm_ns[c];

		if (!k->rwhy[c] || !test_bit_(k->irqcpu, c))
			continue;
		if (storm_ns < min && an->cpu[c].lost_irq_ns < min)
			continue;
		w = irq_on(an, c);
		a = add(k, HVN_ADV_PIN);
		if (!a)
			return -ENOMEM;
		a->cpu = c;
		a->irq = w->irq;
		memcpy(a->name, w->name, sizeof(a->name));
		a->name[HVN_NAME_LEN] = 0;
		worst_storm(x, c, a);
		a->irqs = an->cpu[c].irqs;
		a->storm_ns = storm_ns;
		a->storms = an->cpu[c].storms;
		a->lost_irq_ns = an->cpu[c].lost_irq_ns;
		a->why = k->rwhy[c];
		cl = &x->coll[k->rrank[c] - 1];
		a->rank = cl->rank;
		pr = hvn_corr_proc_of(x, cl->comm, cl->rank);
		a->pid = pr ? pr->pid : -1;
		a->target = pick_target(k, node_of_cpu(an, c), &a->target_local,
					&a->target_irqs);
		/* Where the rank may go: every CPU of the recording but those
		 * the watched IRQs go to (else but this one): several, a
		 * rank has more threads than its proxy. */
		memset(k->one, 0, MAP_LONGS * sizeof(long));
		for (int t = 0; t < k->ncpu; t++)
			if (!test_bit_(k->irqcpu, t) && test_bit_(k->present, t))
				set_bit_(k->one, t);
		if (map_empty(k->one))
			for (int t = 0; t < k->ncpu; t++)
				if (t != c && test_bit_(k->present, t))
					set_bit_(k->one, t);
		if (list_of(a->cpus, sizeof(a->cpus), k->one))
			return -ENOSPC;
		a->first = an->first_ts;
		a->last = an->last_ts;
		memset(k->one, 0, MAP_LONGS * sizeof(long));
		set_bit_(k->one, c);
		add_share(k, a, k->one, -1, SH_STORM | SH_IRQ);
	}
	return 0;
}

/* Interrupt work in the serving CPUs' lost time that no storm there
 * explains: the tick, RCU, other devices.  One piece of advice for all. */
static int isolate_advice(struct ctx *k)
{
	const struct hvn_analysis *an = &k->x->an;
	unsigned long *m = k->avoid;	/* reused: the CPUs concerned */
	uint64_t lost = 0, irq = 0, min = k->p->min_ms * 1e6;
	struct hvn_advice *a;

	memset(m, 0, MAP_LONGS * sizeof(*m));
	for (int c = 0; c <= an->max_cpu && c < k->ncpu; c++) {
		uint64_t storm_ns = k->dev_storm_ns[c];

		if (!test_bit_(k->serving, c) || !an->cpu[c].lost_irq_ns)
			continue;
		if (an->cpu[c].lost_irq_ns <= storm_ns)
			continue;
		set_bit_(m, c);
		lost += an->cpu[c].lost_ns;
		irq += an->cpu[c].lost_irq_ns - storm_ns;
	}
	if (irq < min)
		goto out;
	a = add(k, HVN_ADV_ISOLATE);
	if (!a)
		return -ENOMEM;
	a->lost_ns = lost;
	a->lost_irq_ns = irq;
	a->first = an->first_ts;
	a->last = an->last_ts;
	if (list_of(a->cpus, sizeof(a->cpus), m))
		return -ENOSPC;
	add_share(k, a, m, -1, SH_IRQ);
out:
	memset(m, 0, MAP_LONGS * sizeof(*m));
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct hvn_episode *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The hypervisor's share: steal, and lost time with no cause in the
 * guest, on any vCPU (every vCPU of a VM is the provider's to schedule). */
static int provider_advice(struct ctx *k)
{
	const struct hvn_corr *x = k->x;
	const struct hvn_analysis *an = &x->an;
	struct hvn_advise *o = k->out;
	uint64_t min = k->p->min_ms * 1e6;
	unsigned long *m = k->avoid;
	struct hvn_advice *a;
	size_t nq = 0;

	o->vcpu = calloc(an->max_cpu + 1 > 0 ? an->max_cpu + 1 : 1, sizeof(*o->vcpu));
	if (!o->vcpu)
		return -ENOMEM;
	for (int c = 0; c <= an->max_cpu; c++)
		o->vcpu[c].cpu = c;
	for (size_t i = 0; i < x->nep; i++) {
		const struct hvn_episode *e = &x->ep[i];
		struct hvn_adv_vcpu *v;
		uint64_t d;

		if (e->cpu < 0 || e->cpu > an->max_cpu)
			continue;
		if (e->kind == HVN_EP_STEAL)
			d = e->dur;
		else if (e->kind == HVN_EP_LOST && e->a)
			d = e->a;
		else
			continue;
		v = &o->vcpu[e->cpu];
		v->n++;
		if (e->kind == HVN_EP_STEAL)
			v->steal_ns += d;
		else
			v->unexpl_ns += d;
		if (d > v->longest) {
			v->longest = d;
			v->longest_start = e->start;
		}
		if (d > o->worst_hv)
			o->worst_hv = d;
	}
	memset(m, 0, MAP_LONGS * sizeof(*m));
	for (int c = 0; c <= an->max_cpu; c++) {
		struct hvn_adv_vcpu *v = &o->vcpu[c];

		/* An episode of --min-ms, or 1% of the span in all. */
		if (v->n && (v->longest >= min ||
			     (o->span && (v->steal_ns + v->unexpl_ns) * 100 >= o->span))) {
			o->vcpu[nq++] = *v;
			set_bit_(m, c);
		}
	}
	o->nvcpu = nq;
	if (!nq)
		return 0;
	a = add(k, HVN_ADV_PROVIDER);
	if (!a)
		return -ENOMEM;
	if (list_of(a->cpus, sizeof(a->cpus), m))
		return -ENOSPC;
	for (int pass = 0; pass < 2; pass++) {
		size_t n = 0;

		for (size_t i = 0; i < x->nep; i++) {
			const struct hvn_episode *e = &x->ep[i];

			if (!test_bit_(m, e->cpu) ||
			    !(e->kind == HVN_EP_STEAL || (e->kind == HVN_EP_LOST && e->a)))
				continue;
			if (pass) {
				o->hv[n] = *e;
				span_of(a, e->start, e->start + e->dur);
			}
			n++;
		}
		if (!pass) {
			o->hv = calloc(n ? n : 1, sizeof(*o->hv));
			if (!o->hv)
				return -ENOMEM;
		}
		o->nhv = n;
	}
	if (o->nhv)
		qsort(o->hv, o->nhv, sizeof(*o->hv), by_start);
	for (size_t i = 0; i < nq; i++)
		a->lost_ns += o->vcpu[i].unexpl_ns;
	add_share(k, a, m, -1, SH_HV);
	memset(m, 0, MAP_LONGS * sizeof(*m));
	return 0;
}

static int by_cost(const void *pa, const void *pb)
{
	const struct hvn_advice *a = pa, *b = pb;
	uint64_t ca = a->storm_ns + a->moves + a->lost_irq_ns + a->lost_ns;
	uint64_t cb = b->storm_ns + b->moves + b->lost_irq_ns + b->lost_ns;

	if (a->kind != b->kind)
		return a->kind - b->kind;
	if (ca != cb)
		return ca > cb ? -1 : 1;
	return a->irq - b->irq;
}

uint64_t hvn_advise_span(const struct hvn_analysis *an)
{
	uint64_t lo = an->first_ts, hi = an->last_ts;

	/* The recorder's clock pairs bound the recording itself, events or
	 * none. */
	for (int i = 0; i < an->nclk; i++) {
		if (!lo || an->clk[i].mono < lo)
			lo = an->clk[i].mono;
		if (an->clk[i].mono > hi)
			hi = an->clk[i].mono;
	}
	return hi > lo ? hi - lo : 0;
}

int hvn_advise(const struct hvn_corr *x, const struct hvn_advise_params *p,
	       struct hvn_advise *out)
{
	const struct hvn_analysis *an = &x->an;
	struct ctx k = { .x = x, .p = p, .out = out };
	int ret = -ENOMEM;

	k.ncpu = p->ncpus > an->max_cpu + 1 ? p->ncpus : an->max_cpu + 1;
	if (k.ncpu > HVN_MAX_CPUS)
		k.ncpu = HVN_MAX_CPUS;
	k.present = calloc(MAP_LONGS, sizeof(long));
	if (!k.present)
		goto out;
	/*
	 * The CPUs that are there: the recording's online list, else those
	 * it saw (the trace's CPUs may include a VM's hotplug slots, which
	 * no IRQ or thread can go to).
	 */
	out->online_known = x->online[0] &&
			    !hvn_cpulist_parse(x->online, k.present, HVN_MAX_CPUS,
					       NULL, 0);
	if (!out->online_known) {
		memset(k.present, 0, MAP_LONGS * sizeof(long));
		for (int c = 0; c <= an->max_cpu && c < HVN_MAX_CPUS; c++)
			set_bit_(k.present, c);
	}
	for (int c = 0; c < HVN_MAX_CPUS; c++)
		if (test_bit_(k.present, c) && c >= k.ncpu)
			k.ncpu = c + 1;
	if (list_of(out->present, sizeof(out->present), k.present)) {
		ret = -ENOSPC;
		goto out;
	}
	k.serving = calloc(MAP_LONGS, sizeof(long));
	k.irqcpu = calloc(MAP_LONGS, sizeof(long));
	k.avoid = calloc(MAP_LONGS, sizeof(long));
	k.one = calloc(MAP_LONGS, sizeof(long));
	k.rwhy = calloc(HVN_MAX_CPUS, 1);
	k.rrank = calloc(HVN_MAX_CPUS, sizeof(*k.rrank));
	k.dev_storm_ns = calloc(HVN_MAX_CPUS, sizeof(*k.dev_storm_ns));
	if (!k.serving || !k.irqcpu || !k.avoid || !k.one || !k.rwhy || !k.rrank ||
	    !k.dev_storm_ns)
		goto out;
	for (size_t i = 0; i < x->nep; i++) {
		const struct hvn_episode *e = &x->ep[i];

		if (e->kind == HVN_EP_STORM && e->irq >= 0 && e->cpu >= 0 &&
		    e->cpu < HVN_MAX_CPUS)
			k.dev_storm_ns[e->cpu] += e->dur;
	}
	out->span = hvn_advise_span(an);
	for (size_t i = 0; i < x->ncoll; i++) {
		const struct hvn_coll *c = &x->coll[i];

		if (c->cpu >= 0 && c->cpu < HVN_MAX_CPUS) {
			k.rwhy[c->cpu] |= 2;
			if (!k.rrank[c->cpu])
				k.rrank[c->cpu] = i + 1;
		}
		for (int j = 0; j < c->npcpu; j++) {
			int cpu = c->pcpu[j];

			if (cpu < 0 || cpu >= HVN_MAX_CPUS)
				continue;
			/* The proxy thread names the rank a CPU serves. */
			if (!(k.rwhy[cpu] & 1))
				k.rrank[cpu] = i + 1;
			k.rwhy[cpu] |= 1;
		}
	}
	for (int c = 0; c < HVN_MAX_CPUS; c++)
		if (k.rwhy[c])
			set_bit_(k.serving, c);
	out->from_ranks = !map_empty(k.serving);
	if (out->from_ranks && list_of(out->rank_cpus, sizeof(out->rank_cpus), k.serving)) {
		ret = -ENOSPC;
		goto out;
	}
	if (!out->from_ranks)
		for (int c = 0; c <= an->max_cpu; c++)
			if (an->cpu[c].watched)
				set_bit_(k.serving, c);
	if (list_of(out->serving, sizeof(out->serving), k.serving)) {
		ret = -ENOSPC;
		goto out;
	}
	for (int i = 0; i < an->nwatch; i++)
		if (an->watch[i].kind == HVN_WATCH_IRQ && an->watch[i].cpu >= 0 &&
		    an->watch[i].cpu < HVN_MAX_CPUS)
			set_bit_(k.irqcpu, an->watch[i].cpu);
	for (size_t i = 0; i < x->nst; i++)
		k.stall_total += x->st[i].lost_ns;
	ret = irq_advice(&k);
	if (!ret)
		ret = pin_advice(&k);
	if (!ret)
		ret = isolate_advice(&k);
	if (!ret)
		ret = provider_advice(&k);
	if (ret)
		goto out;
	if (out->nadv)
		qsort(out->adv, out->nadv, sizeof(*out->adv), by_cost);
	ret = 0;
out:
	free(k.present);
	free(k.serving);
	free(k.irqcpu);
	free(k.avoid);
	free(k.one);
	free(k.rwhy);
	free(k.rrank);
	free(k.dev_storm_ns);
	return ret;
}

void hvn_advise_free(struct hvn_advise *a)
{
	free(a->adv);
	free(a->vcpu);
	free(a->hv);
	memset(a, 0, sizeof(*a));
}
