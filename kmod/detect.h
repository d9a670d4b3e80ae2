/* SPDX-License-Identifier: GPL-2.0 */
/* The detectors: interrupt storms, IRQ migrations, lost time, steal. */
#ifndef HVNOISE_DETECT_H
#define HVNOISE_DETECT_H

#include "hvnoise/tunables.h"
#include "lib/watchset.h"

/* The tunables (include/hvnoise/tunables.h), as the module's parameters. */
struct hvn_detect_cfg {
#define HVN_TUNABLE(n, lo, hi, def, off, what) unsigned int n;
#include "hvnoise/tunable-list.h"
#undef HVN_TUNABLE
};

extern struct hvn_detect_cfg hvn_dcfg;

int hvn_detect_alloc(void);		/* per-CPU state, before all else */
void hvn_detect_free(void);		/* after all else */
int hvn_detect_init(void);		/* attach probes */
void hvn_detect_exit(void);		/* detach, end storms, free */
/* The watched set changed (hvn_lock held, process context). */
void hvn_detect_update(const struct hvn_watchset *ws);
u64 hvn_detect_moves(void);		/* for hvn_watchset.as_of */
void hvn_detect_cpu_dead(unsigned int cpu);
void hvn_detect_cfg_changed(void);
int hvn_detect_format_stats(char *buf, size_t len);

/* steal.c */
int hvn_steal_init(void);
void hvn_steal_exit(void);
void hvn_steal_watch(const struct hvn_watchset *ws);
void hvn_steal_kick(void);
u64 hvn_steal_read_cpu(unsigned int cpu, u8 *source);
int hvn_steal_format_sources(char *buf, size_t len);

#endif /* HVNOISE_DETECT_H */
