// SPDX-License-Identifier: GPL-2.0
/*
 * hvnoise(8): record, report and watch live the noise hvnoise.ko sees on
 * the CPUs that serve GPUs and NICs.
 */
#include <string.h>

#include "builtin.h"
#include "hvn.h"

static const char usage[] =
"usage: hvnoise COMMAND [ARGS]\n"
"  record   record hvnoise (and kernel) events into a trace.dat\n"
"  flight-recorder  always on: the last seconds, written on a trigger\n"
"  report   per-CPU steal, lost time, storms and migrations from trace.dat\n"
"  top      live per-CPU view\n"
"  status   module, watched set, parameters, tracefs, and what is missing\n"
"  correlate  NCCL collectives that stalled, and the host noise behind each\n"
"  exporter per-CPU counters for Prometheus, served over HTTP\n"
"  trigger  ask the flight recorder for an incident, or a past window\n"
"  incidents  the flight recorder's incidents, newest first\n"
"  advise   what to change so that the noise found stops, with its evidence\n"
"  version  print the version\n"
"hvnoise help COMMAND (or COMMAND --help) for a command's options; man hvnoise\n"
"for the rest.\n";

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "record", cmd_record },
		{ "flight-recorder", cmd_flight_recorder },
		{ "report", cmd_report },
		{ "top", cmd_top },
		{ "status", cmd_status },
		{ "correlate", cmd_correlate },
		{ "exporter", cmd_exporter },
		{ "trigger", cmd_trigger },
		{ "incidents", cmd_incidents },
		{ "advise", cmd_advise },
	};

	static char prog[64];

	if (argc < 2) {
		fputs(usage, stderr);
		return HVN_EXIT_USAGE;
	}
	/* "hvnoise help CMD" is "hvnoise CMD --help", as git and perf. */
	if (!strcmp(argv[1], "help") && argc > 3) {
		hvn_err("help: one command at a time");
		return HVN_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "help") && argc == 3) {
		char *a[] = { argv[2], "--help", NULL };

		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			if (!strcmp(argv[2], cmds[i].name))
				return cmds[i].fn(2, a);
		hvn_err("help: no command \"%s\"", argv[2]);
		fputs(usage, stderr);
		return HVN_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    (!strcmp(argv[1], "help") && argc == 2)) {
		fputs(usage, stdout);
		return HVN_EXIT_OK;
	}
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("hvnoise %s\n", HVN_VERSION);
		return HVN_EXIT_OK;
	}
	/* "record --flight-recorder" is the flight-recorder command. */
	if (!strcmp(argv[1], "record"))
		for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
			if (!strcmp(argv[i], "--flight-recorder")) {
				memmove(argv + i, argv + i + 1,
					(argc - i) * sizeof(*argv));
				argv[1] = "flight-recorder";
				hvn_prog = "hvnoise flight-recorder";
				return cmd_flight_recorder(argc - 2, argv + 1);
			}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name)) {
			/* Every message of the command says which it is. */
			snprintf(prog, sizeof(prog), "hvnoise %s", cmds[i].name);
			hvn_prog = prog;
			return cmds[i].fn(argc - 1, argv + 1);
		}
	hvn_err("unknown command \"%s\"", argv[1]);
	fputs(usage, stderr);
	return HVN_EXIT_USAGE;
}
