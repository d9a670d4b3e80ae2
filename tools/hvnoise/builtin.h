/* SPDX-License-Identifier: GPL-2.0 */
/* The commands of hvnoise(8), one file each; main.c dispatches. */
#ifndef HVNOISE_BUILTIN_H
#define HVNOISE_BUILTIN_H

#include "cli.h"	/* every command has its option table */


int cmd_record(int argc, char **argv);
int cmd_flight_recorder(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_correlate(int argc, char **argv);
int cmd_exporter(int argc, char **argv);
int cmd_trigger(int argc, char **argv);
int cmd_incidents(int argc, char **argv);
int cmd_advise(int argc, char **argv);

#endif
