/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hvnoise(8): shared declarations of the command's parts.
 */
#ifndef HVNOISE_TOOL_H
#define HVNOISE_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>

#include "msg.h"

#include "hvnoise/version.h"

#define HVN_MAX_CPUS		8192
#define HVN_NAME_LEN		16	/* HVN_IRQ_NAME_LEN in the module */

/* Our own option in trace.dat: clock pairs and the recording's context. */
#define HVN_OPTION_META		0x4856	/* "HV" */

/* sys.c: files, the module, clocks */
char *hvn_read_file(const char *path, size_t *len);
int hvn_write_str(const char *path, const char *val);
bool hvn_module_loaded(void);
char *hvn_module_param(const char *name);
uint64_t hvn_now(int clock);
int hvn_list_events(const char *sysdir, char ***names);
/*
 * A new file, 0600: recordings hold IRQ names, device addresses and
 * timings of a production host.  Never through a symlink someone planted
 * in a shared directory: a file of that name is removed first (@replace;
 * the link, not its target) or refused (EEXIST).  The fd, or -1 and errno.
 */
int hvn_create(const char *path, bool replace);
/* The soft limit of open files raised (the hard one too where root may)
 * to what @ncpus CPUs' buffers, pieces and timers take: the default of
 * 1,024 runs out at a few hundred CPUs. */
void hvn_nofile_for(int ncpus);
/* @s with glob(3)'s special characters escaped into @out (@len bytes,
 * cut short if it must): a path the user gave is a name, not a pattern. */
void hvn_glob_escape(const char *s, char *out, size_t len);
/* SIGINT, SIGTERM and SIGHUP set hvn_stop_sig (to the signal) from
 * hvn_catch_stop() on: the long-running commands stop cleanly. */
extern volatile sig_atomic_t hvn_stop_sig;
void hvn_catch_stop(void);

#endif
