/* SPDX-License-Identifier: GPL-2.0 */
/* hvnoise.ko internals shared between its files. */
#ifndef HVNOISE_H
#define HVNOISE_H

#include <linux/mutex.h>
#include <linux/workqueue.h>
#include "lib/devlist.h"
#include "lib/watchset.h"

/* Room for one error line from parsing or resolving. */
#define HVN_ERRLEN	192

/* The configuration the module parameters set. */
struct hvn_config {
	struct hvn_devlist devs;
	const unsigned long *cpus;	/* nr_cpu_ids bits */
	bool local_cpus;
};

/*
 * hvn_lock serialises parameter writes, re-resolution of the watched set
 * and its emission.  hvn_live is true between a successful init and the
 * start of exit: outside it, parameter writes only store their value.
 */
extern struct mutex hvn_lock;
extern bool hvn_live;

/* params.c */
const struct hvn_config *hvn_config(void);
unsigned int hvn_resolve_interval_ms(void);

/* resolve.c: build the watched set from PCI and IRQ state. */
struct hvn_watchset *hvn_resolve(const struct hvn_config *cfg, bool strict,
				 char *err, size_t errlen);
void hvn_ws_free(struct hvn_watchset *ws);

/* watch.c: the current watched set and what keeps it up to date. */
int hvn_watch_update(const struct hvn_config *cfg, bool strict,
		     char *err, size_t errlen);
int hvn_watch_init(void);
int hvn_watch_start(void);
void hvn_watch_stop(void);
void hvn_watch_exit(void);
void hvn_watch_kick(unsigned long delay);
void hvn_watch_redetect(void);
void hvn_queue_housekeeping(struct delayed_work *dw, unsigned long delay);
void hvn_watch_request_emit(void);
void hvn_watch_emit(void);
int hvn_watch_format_cpus(char *buf, size_t len);

/* trace.c */
void hvn_trace_watch(const struct hvn_watchset *ws);
/* A change from @old (NULL: the first set): its delta, or @ws whole. */
void hvn_trace_watch_change(const struct hvn_watchset *old,
			    const struct hvn_watchset *ws);

#endif /* HVNOISE_H */
