// SPDX-License-Identifier: GPL-2.0
/* Cases for kmod/lib/watchset.c: composing, comparing and emitting. */
#include "hvn_test.h"
#include "watchset.h"

#define NB 16

struct fixture {
	u8 why[NB];
	struct hvn_wdev dev[4];
	struct hvn_wirq irq[8];
	struct hvn_watchset ws;
};

static void fx_init(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->ws.nbits = NB;
	f->ws.why = f->why;
	f->ws.dev = f->dev;
	f->ws.irq = f->irq;
}

static void fx_irq(struct fixture *f, u32 dev, int irq, int cpu,
		   const char *name)
{
	struct hvn_wirq *r = &f->irq[f->ws.nirq++];

	r->dev = dev;
	r->irq = irq;
	r->cpu = cpu;
	r->flags = 0;
	snprintf(r->name, sizeof(r->name), "%s", name);
}

static void fx_dev(struct fixture *f, u32 addr, int nirqs)
{
	struct hvn_wdev *d = &f->dev[f->ws.ndev++];

	d->addr = addr;
	d->present = nirqs >= 0;
	d->nirqs = nirqs > 0 ? (unsigned int)nirqs : 0;
	d->node = -1;
}

static unsigned long bits(unsigned int a, unsigned int b)
{
	unsigned long m = 0;
	unsigned int i;

	for (i = a; i <= b; i++)
		m |= 1UL << i;
	return m;
}

static void watchset_union_and_reasons(struct hvn_test *t)
{
	unsigned long listed = bits(2, 3), numa = bits(0, 7),
		      online = bits(0, 15);
	struct fixture f;

	fx_init(&f);
	fx_dev(&f, HVN_PCI_PACK(0, 0x17, 0), 2);
	fx_irq(&f, HVN_PCI_PACK(0, 0x17, 0), 40, 12, "mlx5_comp0");
	fx_irq(&f, HVN_PCI_PACK(0, 0x17, 0), 41, 3, "mlx5_comp1");
	hvn_ws_mark(&f.ws, &listed, &online, HVN_WHY_LISTED);
	hvn_ws_finish(&f.ws, &online);
	HT_EXPECT_EQ(t, hvn_ws_ncpus(&f.ws), 3);
	HT_EXPECT_EQ(t, f.why[2], HVN_WHY_LISTED);
	HT_EXPECT_EQ(t, f.why[3], HVN_WHY_LISTED | HVN_WHY_IRQ);
	HT_EXPECT_EQ(t, f.why[12], HVN_WHY_IRQ);
	HT_EXPECT_EQ(t, f.why[0], 0);

	hvn_ws_mark(&f.ws, &numa, &online, HVN_WHY_NUMA);
	HT_EXPECT_EQ(t, hvn_ws_ncpus(&f.ws), 9);
	HT_EXPECT_EQ(t, f.why[3], HVN_WHY_LISTED | HVN_WHY_IRQ | HVN_WHY_NUMA);
}

static void watchset_offline_cpus_not_watched(struct hvn_test *t)
{
	unsigned long listed = bits(2, 5), online = bits(0, 3);
	struct fixture f;

	fx_init(&f);
	fx_irq(&f, 1, 30, 7, "x");	/* routed to an offline CPU */
	hvn_ws_mark(&f.ws, &listed, &online, HVN_WHY_LISTED);
	hvn_ws_finish(&f.ws, &online);
	HT_EXPECT_EQ(t, hvn_ws_ncpus(&f.ws), 2);
	HT_EXPECT_EQ(t, f.why[4], 0);
	HT_EXPECT_EQ(t, f.why[7], 0);
}

static void watchset_irq_without_cpu(struct hvn_test *t)
{
	unsigned long online = bits(0, 15);
	struct fixture f;

	fx_init(&f);
	fx_irq(&f, 1, 30, -1, "unstarted");
	fx_irq(&f, 1, 31, NB + 5, "bogus");	/* beyond nbits: ignored */
	hvn_ws_finish(&f.ws, &online);
	HT_EXPECT_EQ(t, hvn_ws_ncpus(&f.ws), 0);
}

static void watchset_equal_ignores_order_and_gen(struct hvn_test *t)
{
	unsigned long online = bits(0, 15);
	struct fixture a, b;

	fx_init(&a);
	fx_init(&b);
	fx_dev(&a, 1, 2);
	fx_dev(&b, 1, 2);
	fx_irq(&a, 1, 30, 1, "q0");
	fx_irq(&a, 1, 31, 2, "q1");
	fx_irq(&b, 1, 31, 2, "q1");
	fx_irq(&b, 1, 30, 1, "q0");
	hvn_ws_finish(&a.ws, &online);
	hvn_ws_finish(&b.ws, &online);
	a.ws.gen = 1;
	b.ws.gen = 7;
	HT_EXPECT_TRUE(t, hvn_ws_equal(&a.ws, &b.ws));
	HT_EXPECT_EQ(t, b.irq[0].irq, 30);

	/* An IRQ moving to another CPU is a change. */
	b.irq[1].cpu = 5;
	HT_EXPECT_FALSE(t, hvn_ws_equal(&a.ws, &b.ws));
	b.irq[1].cpu = 2;
	/* So is a renamed IRQ (driver reloaded) or a device vanishing. */
	b.irq[0].name[1] = 'X';
	HT_EXPECT_FALSE(t, hvn_ws_equal(&a.ws, &b.ws));
	b.irq[0].name[1] = '0';
	/* And one whose affinity became the kernel's (re-requested). */
	b.irq[0].flags = HVN_IRQ_CHECKED | HVN_IRQ_MANAGED;
	HT_EXPECT_FALSE(t, hvn_ws_equal(&a.ws, &b.ws));
	b.irq[0].flags = a.irq[0].flags;
	b.dev[0].present = false;
	HT_EXPECT_FALSE(t, hvn_ws_equal(&a.ws, &b.ws));
	b.dev[0].present = true;
	b.why[9] = HVN_WHY_LISTED;
	HT_EXPECT_FALSE(t, hvn_ws_equal(&a.ws, &b.ws));
}

struct rec_log {
	unsigned int n;
	struct hvn_watch_rec r[16];
	char names[16][HVN_IRQ_NAME_LEN];
};

static void log_rec(void *ctx, const struct hvn_watch_rec *r)
{
	struct rec_log *l = ctx;

	if (l->n < 16) {
		l->r[l->n] = *r;
		snprintf(l->names[l->n], HVN_IRQ_NAME_LEN, "%s", r->name);
	}
	l->n++;
}

static void ignore_rec(void *ctx, const struct hvn_watch_rec *r)
{
	(void)ctx;
	(void)r;
}

#define NULL_REC ignore_rec

static void watchset_records(struct hvn_test *t)
{
	unsigned long listed = bits(1, 1), online = bits(0, 15);
	static struct rec_log log;	/* too big for a kernel stack frame */
	struct fixture f;
	unsigned int i;

	memset(&log, 0, sizeof(log));
	fx_init(&f);
	f.ws.gen = 4;
	fx_dev(&f, 0x1700, 1);
	fx_dev(&f, 0x3100, -1);		/* listed but absent */
	fx_irq(&f, 0x1700, 40, 6, "mlx5_comp0");
	f.irq[0].flags = HVN_IRQ_CHECKED | HVN_IRQ_MANAGED;
	hvn_ws_mark(&f.ws, &listed, &online, HVN_WHY_LISTED);
	hvn_ws_finish(&f.ws, &online);

	HT_EXPECT_EQ(t, hvn_ws_walk(&f.ws, log_rec, &log), 5);
	HT_EXPECT_EQ(t, log.n, 5);
	for (i = 0; i < 5; i++) {
		HT_EXPECT_EQ(t, log.r[i].idx, i);
		HT_EXPECT_EQ(t, log.r[i].count, 5);
		HT_EXPECT_EQ(t, log.r[i].gen, 4);
	}
	HT_EXPECT_EQ(t, log.r[0].kind, HVN_WATCH_CPU);
	HT_EXPECT_EQ(t, log.r[0].cpu, 1);
	HT_EXPECT_EQ(t, log.r[0].why, HVN_WHY_LISTED);
	HT_EXPECT_EQ(t, log.r[1].cpu, 6);
	HT_EXPECT_EQ(t, log.r[1].why, HVN_WHY_IRQ);
	HT_EXPECT_EQ(t, log.r[2].kind, HVN_WATCH_DEVICE);
	HT_EXPECT_EQ(t, log.r[2].why, 0);
	HT_EXPECT_EQ(t, log.r[2].dev, 0x1700);
	HT_EXPECT_EQ(t, log.r[2].nirqs, 1);
	HT_EXPECT_EQ(t, log.r[2].cpu, -1);
	HT_EXPECT_EQ(t, log.r[3].dev, 0x3100);
	HT_EXPECT_EQ(t, log.r[3].node, -1);
	HT_EXPECT_EQ(t, log.r[4].kind, HVN_WATCH_IRQ);
	HT_EXPECT_EQ(t, log.r[4].irq, 40);
	HT_EXPECT_EQ(t, log.r[4].cpu, 6);
	HT_EXPECT_EQ(t, log.r[4].dev, 0x1700);
	HT_EXPECT_STREQ(t, log.names[4], "mlx5_comp0");
	/* An IRQ record's why is its affinity's flags. */
	HT_EXPECT_EQ(t, log.r[4].why, HVN_IRQ_CHECKED | HVN_IRQ_MANAGED);
}

/* Two sets a move apart: IRQ 41 from CPU 6 to CPU 7, IRQ 42 renamed. */
static void fx_pair(struct fixture *a, struct fixture *b)
{
	unsigned long listed = bits(1, 1), online = bits(0, 15);
	struct fixture *f[2] = { a, b };
	int i;

	for (i = 0; i < 2; i++) {
		fx_init(f[i]);
		f[i]->ws.gen = 5 + i;
		fx_dev(f[i], 0x1700, 4);
		fx_irq(f[i], 0x1700, 40, 3, "mlx5_comp0");
		fx_irq(f[i], 0x1700, 41, i ? 7 : 6, "mlx5_comp1");
		fx_irq(f[i], 0x1700, 42, 3, i ? "mlx5_comp2" : "");
		fx_irq(f[i], 0x1700, 43, 4, "mlx5_comp3");
		hvn_ws_mark(&f[i]->ws, &listed, &online, HVN_WHY_LISTED);
		hvn_ws_finish(&f[i]->ws, &online);
	}
}

static void watchset_delta_of_a_move(struct hvn_test *t)
{
	static struct rec_log log;
	static struct fixture a, b;
	unsigned int i;

	memset(&log, 0, sizeof(log));
	fx_pair(&a, &b);
	HT_EXPECT_EQ(t, hvn_ws_walk_delta(&a.ws, &b.ws, NULL, NULL), 5);
	HT_EXPECT_EQ(t, hvn_ws_walk_delta(&a.ws, &b.ws, log_rec, &log), 5);
	HT_EXPECT_EQ(t, log.n, 5);
	for (i = 0; i < 5; i++) {
		HT_EXPECT_EQ(t, log.r[i].gen, 6);
		HT_EXPECT_EQ(t, log.r[i].idx, i);
		HT_EXPECT_EQ(t, log.r[i].count, 5);
		HT_EXPECT_TRUE(t, log.r[i].why & HVN_WATCH_DELTA);
	}
	/* CPU 6 left, CPU 7 came, in CPU order. */
	HT_EXPECT_EQ(t, log.r[0].kind, HVN_WATCH_CPU);
	HT_EXPECT_EQ(t, log.r[0].cpu, 6);
	HT_EXPECT_EQ(t, log.r[0].why, HVN_WATCH_DELTA | HVN_WATCH_GONE);
	HT_EXPECT_EQ(t, log.r[1].cpu, 7);
	HT_EXPECT_EQ(t, log.r[1].why, HVN_WATCH_DELTA | HVN_WHY_IRQ);
	/* Then the routes: 41 on 6 gone, 41 on 7 new, 42's new name. */
	HT_EXPECT_EQ(t, log.r[2].kind, HVN_WATCH_IRQ);
	HT_EXPECT_EQ(t, log.r[2].irq, 41);
	HT_EXPECT_EQ(t, log.r[2].cpu, 6);
	HT_EXPECT_EQ(t, log.r[2].why, HVN_WATCH_DELTA | HVN_WATCH_GONE);
	HT_EXPECT_EQ(t, log.r[3].irq, 41);
	HT_EXPECT_EQ(t, log.r[3].cpu, 7);
	HT_EXPECT_EQ(t, log.r[3].why, HVN_WATCH_DELTA);
	HT_EXPECT_EQ(t, log.r[4].irq, 42);
	HT_EXPECT_STREQ(t, log.names[4], "mlx5_comp2");
	/* A device's new state. */
	b.dev[0].nirqs = 3;
	HT_EXPECT_EQ(t, hvn_ws_walk_delta(&a.ws, &b.ws, NULL, NULL), 6);
	/* Other devices configured: no delta says that. */
	b.dev[0].addr = 0x1800;
	HT_EXPECT_EQ(t, hvn_ws_walk_delta(&a.ws, &b.ws, NULL, NULL), UINT_MAX);
}

static void watchset_change_delta_or_whole(struct hvn_test *t)
{
	static struct fixture a, b;
	unsigned int whole;

	fx_pair(&a, &b);
	whole = hvn_ws_walk(&b.ws, NULL_REC, NULL);
	HT_EXPECT_EQ(t, whole, 9);	/* 4 CPUs, a device, 4 routes */
	/* 5 of 9 records: under 60 %, over 50 %. */
	HT_EXPECT_EQ(t, hvn_ws_walk_change(&a.ws, &b.ws, 60, NULL_REC, NULL), 5);
	HT_EXPECT_EQ(t, hvn_ws_walk_change(&a.ws, &b.ws, 50, NULL_REC, NULL), 9);
	HT_EXPECT_EQ(t, hvn_ws_walk_change(&a.ws, &b.ws, 0, NULL_REC, NULL), 9);
	HT_EXPECT_EQ(t, hvn_ws_walk_change(NULL, &b.ws, 100, NULL_REC, NULL), 9);
	/*
	 * Not the generation after @a's (two changes, one emission): a
	 * delta would apply to a set no reader has.
	 */
	b.ws.gen = 7;
	HT_EXPECT_EQ(t, hvn_ws_walk_change(&a.ws, &b.ws, 100, NULL_REC, NULL), 9);
	/* Every 16th generation whole: a base to apply the deltas to. */
	a.ws.gen = HVN_WATCH_WHOLE_EVERY * 3 - 1;
	b.ws.gen = HVN_WATCH_WHOLE_EVERY * 3;
	HT_EXPECT_EQ(t, hvn_ws_walk_change(&a.ws, &b.ws, 100, NULL_REC, NULL), 9);
	/*
	 * To an empty set: its delta, every record gone (4 CPUs, 4 routes;
	 * the device stays, unchanged).
	 */
	memset(b.why, 0, sizeof(b.why));
	b.ws.nirq = 0;
	b.ws.gen = HVN_WATCH_WHOLE_EVERY * 3;
	b.ws.ndev = 1;
	HT_EXPECT_EQ(t, hvn_ws_walk_change(&a.ws, &b.ws, 50, NULL_REC, NULL), 1);
	b.ws.ndev = 0;
	a.ws.ndev = 0;
	HT_EXPECT_EQ(t, hvn_ws_walk(&b.ws, NULL_REC, NULL), 0);
	HT_EXPECT_EQ(t, hvn_ws_walk_change(&a.ws, &b.ws, 50, NULL_REC, NULL), 8);
}

static void watchset_cpumap(struct hvn_test *t)
{
	unsigned long listed = bits(1, 2) | bits(9, 9), online = bits(0, 15);
	unsigned long map = ~0UL;
	struct fixture f;

	fx_init(&f);
	hvn_ws_mark(&f.ws, &listed, &online, HVN_WHY_LISTED);
	hvn_ws_cpumap(&f.ws, &map);
	HT_EXPECT_EQ(t, map, listed);
}

static struct ht_case watchset_cases[] = {
	HT_CASE(watchset_union_and_reasons),
	HT_CASE(watchset_offline_cpus_not_watched),
	HT_CASE(watchset_irq_without_cpu),
	HT_CASE(watchset_equal_ignores_order_and_gen),
	HT_CASE(watchset_records),
	HT_CASE(watchset_delta_of_a_move),
	HT_CASE(watchset_change_delta_or_whole),
	HT_CASE(watchset_cpumap),
	{}
};

HT_SUITE(watchset, watchset_cases);
