/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The watched set read from sysfs and /proc/irq: userspace's twin of the
 * module's kmod/resolve.c, on the same library (kmod/lib/watchset.h).
 */
#ifndef HVNOISE_BPF_RESOLVE_H
#define HVNOISE_BPF_RESOLVE_H

#include <stdbool.h>

struct hvn_devlist;
struct hvn_watchset;

/*
 * The CPUs of @listed (a bitmap of @ncpus), and those the IRQs of @devs go
 * to, among the online CPUs: @online_now when the caller just read
 * /sys/devices/system/cpu/online, else read here.  NULL and errno.
 */
struct hvn_watchset *hvn_sysfs_resolve(const struct hvn_devlist *devs,
				       const unsigned long *listed,
				       unsigned int ncpus,
				       const char *online_now);
void hvn_sysfs_ws_free(struct hvn_watchset *ws);
/* Whether @cpu is present and online. */
bool hvn_sysfs_cpu_online(unsigned int cpu);

#endif
