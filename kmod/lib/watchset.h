/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The watched set: which CPUs hvnoise watches and why, and the devices and
 * IRQs that put them there.  Built by the module from PCI and IRQ state,
 * compared with the previous one to detect changes, and walked record by
 * record to emit hvnoise:watch.  Kernel-independent so it is unit-tested.
 */
#ifndef HVN_WATCHSET_H
#define HVN_WATCHSET_H

#include "hvn_types.h"
#include "hvnoise/watch.h"

struct hvn_wdev {
	u32 addr;		/* HVN_PCI_PACK() */
	s32 node;		/* NUMA node, -1 if none or not present */
	bool present;		/* the device exists now */
	unsigned int nirqs;	/* IRQs found for it */
};

/* One IRQ of a device and one CPU its effective affinity includes. */
struct hvn_wirq {
	u32 dev;
	s32 irq;
	s32 cpu;
	u8 flags;		/* HVN_IRQ_*: its "why" */
	char name[HVN_IRQ_NAME_LEN];	/* NUL-terminated */
};

struct hvn_watchset {
	u32 gen;		/* bumped by the module on each change */
	/*
	 * The probes' move stamp when resolution began (the module: moves
	 * counted; BPF: CLOCK_MONOTONIC ns): a move they report after it is
	 * newer than this set's CPU for that IRQ.
	 */
	u64 as_of;
	unsigned int nbits;	/* CPUs described by why[] (nr_cpu_ids) */
	unsigned int ndev, nirq;
	u8 *why;		/* HVN_WHY_* per CPU; 0: not watched */
	struct hvn_wdev *dev;
	struct hvn_wirq *irq;
};

/* One hvnoise:watch record; see Documentation/events.rst. */
struct hvn_watch_rec {
	u32 gen, idx, count;
	u8 kind, why;
	s32 node;
	s32 cpu, irq;
	u32 dev;
	u32 nirqs;		/* device records: IRQs found */
	const char *name;	/* IRQ records: the irqaction name */
};

/* why[cpu] |= @reason for each CPU set in both @map and @online. */
void hvn_ws_mark(struct hvn_watchset *ws, const unsigned long *map,
		 const unsigned long *online, u8 reason);

/*
 * Once devices and IRQs are filled in: sort IRQs by (device, irq, cpu) so
 * that equal sets compare equal, and mark the online CPUs they go to.
 */
void hvn_ws_finish(struct hvn_watchset *ws, const unsigned long *online);

unsigned int hvn_ws_ncpus(const struct hvn_watchset *ws);

/* Same CPUs, reasons, devices and IRQs (the generation is not compared). */
bool hvn_ws_equal(const struct hvn_watchset *a, const struct hvn_watchset *b);

/* The watched CPUs as a bitmap of ws->nbits bits. */
void hvn_ws_cpumap(const struct hvn_watchset *ws, unsigned long *map);

typedef void (*hvn_watch_rec_fn)(void *ctx, const struct hvn_watch_rec *rec);

/*
 * Call @fn for every record, in order: watched CPUs (ascending), devices,
 * IRQs.  idx counts from 0 and count is the total, so a reader can tell
 * whether it saw the whole set.  Returns the number of records.
 */
unsigned int hvn_ws_walk(const struct hvn_watchset *ws, hvn_watch_rec_fn fn,
			 void *ctx);

/*
 * The delta from @old to @new (see HVN_WATCH_DELTA): CPUs, then devices,
 * then IRQ routes, each that changed, with new's gen.  Returns the number
 * of records; @fn NULL only counts them.  UINT_MAX if none can say it:
 * the configured devices differ, or the CPUs described do.
 */
unsigned int hvn_ws_walk_delta(const struct hvn_watchset *old,
			       const struct hvn_watchset *new,
			       hvn_watch_rec_fn fn, void *ctx);

#define HVN_WATCH_WHOLE_EVERY	16

/*
 * What a change from @old (NULL: none before) to @new emits: its delta
 * where that takes fewer than @pct percent of the records of the whole
 * set, else the whole set (@pct 0: always; and for each generation that
 * is a multiple of HVN_WATCH_WHOLE_EVERY, or not the one after @old's).
 * A change to an empty set is always its delta.  Returns the records
 * emitted.
 */
unsigned int hvn_ws_walk_change(const struct hvn_watchset *old,
				const struct hvn_watchset *new,
				unsigned int pct, hvn_watch_rec_fn fn,
				void *ctx);

#endif /* HVN_WATCHSET_H */
