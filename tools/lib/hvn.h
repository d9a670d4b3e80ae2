/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hvnoise(8): shared declarations of the command's parts.
 */
#ifndef HVNOISE_TOOL_H
#define HVNOISE_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HVN_VERSION		"0.4"

/* Exit codes, documented in hvnoise(8). */
#define HVN_EXIT_OK		0
#define HVN_EXIT_FAIL		1	/* tracefs, permission, I/O */
#define HVN_EXIT_USAGE		2	/* bad command line */
#define HVN_EXIT_BADFILE	3	/* missing, truncated or corrupt input */
#define HVN_EXIT_NOMODULE	4	/* hvnoise.ko is needed and not loaded */

#define HVN_MAX_CPUS		8192
#define HVN_NAME_LEN		16	/* HVN_IRQ_NAME_LEN in the module */

/* Our own option in trace.dat: clock pairs and the recording's context. */
#define HVN_OPTION_META		0x4856	/* "HV" */

void hvn_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hvn_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern const char *hvn_prog;

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_correlate(int argc, char **argv);
int cmd_exporter(int argc, char **argv);
/* hvnoise record --flight-recorder (flight.c) */
int hvn_flight_recorder(int argc, char **argv);

/* util.c */
char *hvn_read_file(const char *path, size_t *len);
int hvn_write_str(const char *path, const char *val);
bool hvn_module_loaded(void);
char *hvn_module_param(const char *name);
int hvn_parse_cpulist(const char *s, uint8_t *mask, int max);
void hvn_format_cpulist(const uint8_t *mask, int max, char *buf, size_t len);
uint64_t hvn_now(int clock);
int hvn_list_events(const char *sysdir, char ***names);

#endif
