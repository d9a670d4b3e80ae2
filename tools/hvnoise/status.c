// SPDX-License-Identifier: GPL-2.0
/*
 * hvnoise status: what is there, what is missing, and the fix for each.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs/tracefs.h>

#include "builtin.h"
#include "cpulist.h"
#include "hvn.h"
#include "session.h"

static const char *const params[] = {
	"devices", "cpus", "local_cpus", "resolve_ms", "storm_rate",
	"storm_all_rate", "storm_window_ms", "lost_threshold_us", "sample_us",
	"steal_ms", "steal_threshold_us",
};

static const char *const events[] = {
	"watch", "steal", "lost", "irq_storm_begin", "irq_storm",
	"irq_migrate",
};

static const struct hvn_cmd status_cmd = {
	.name = "status",
	.synopsis = "",
	.notes =
"  whether hvnoise.ko is loaded, what it watches, its parameters, which\n"
"  source record and top would use and why, whether tracefs is usable, and\n"
"  the fix for whatever is missing.\n"
"  Exit: 0 ready (module or BPF), 4 neither the module nor BPF, 1 tracefs\n"
"  unusable.\n",
};

/* hvnoise instances whose recorder is gone (killed with SIGKILL). */
static void stale_instances(const char *tdir)
{
	char path[4096];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/instances", tdir);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		const char *dash = strrchr(de->d_name, '-');
		char prefix[256];
		int pid;

		if (strncmp(de->d_name, "hvnoise-", 8) || !dash ||
		    (size_t)(dash - de->d_name) >= sizeof(prefix))
			continue;
		snprintf(prefix, sizeof(prefix), "%.*s",
			 (int)(dash - de->d_name), de->d_name);
		pid = hvn_instance_pid(de->d_name, prefix);
		if (!pid)
			continue;
		if (pid > 0) {
			printf("instance   %s (in use by process %d)\n",
			       de->d_name, pid);
			continue;
		}
		printf("instance   %s is left over from a killed recorder\n"
		       "           fix: rmdir %s/%s\n", de->d_name, path,
		       de->d_name);
	}
	closedir(d);
}

/* Where record, top, the exporter and the flight recorder would run: the
 * CPUs this process may run on that are not watched. */
static void print_housekeeping(const char *watched)
{
	static unsigned long w[HVN_BITS_TO_LONGS(HVN_MAX_CPUS)];
	static unsigned long run[HVN_BITS_TO_LONGS(HVN_MAX_CPUS)];
	char list[256];
	int n;

	if (!watched || hvn_cpulist_parse(watched, w, HVN_MAX_CPUS, NULL, 0))
		return;
	n = hvn_cpus_allowed(w, true, run);
	if (n < 0)
		return;
	hvn_cpulist_format(list, sizeof(list), run, HVN_MAX_CPUS);
	printf("runs on    CPUs %s (record, top, exporter, flight-recorder: off the watched CPUs; --housekeeping to choose)\n",
	       n ? list : "all: every CPU is watched");
}

int cmd_status(int argc, char **argv)
{
	const char *tdir;
	int first, ret;
	bool mod;

	ret = hvn_cli_parse(&status_cmd, argc, argv, NULL, NULL, &first);
	if (ret >= 0)
		return ret;
	ret = HVN_EXIT_OK;

	mod = hvn_module_loaded();
	if (mod) {
		char *v = hvn_read_file("/sys/module/hvnoise/version", NULL);

		printf("module     hvnoise loaded%s%.*s\n", v ? ", version " : "",
		       v ? (int)strcspn(v, "\n") : 0, v ? v : "");
		free(v);
	} else {
		printf("module     hvnoise is not loaded\n");
	}
	{
		char why[256];
		enum hvn_source src = hvn_source_auto(why, sizeof(why));

		printf("source     %s: %s", hvn_source_names[src], why);
		if (src == HVN_SRC_BPF)
			printf(" (steal read through %s)", hvn_bpf_steal_probe());
		printf("\n");
		if (src == HVN_SRC_KERNEL) {
			printf("           fix: insmod hvnoise.ko [cpus=LIST] [devices=BDF,...] (see hvnoise(8)), or make BPF usable; until then record and top see the kernel's irq events only\n");
			ret = HVN_EXIT_NOMODULE;
		}
	}

	tdir = tracefs_tracing_dir();
	if (!tdir) {
		printf("tracefs    not mounted\n"
		       "           fix: mount -t tracefs nodev /sys/kernel/tracing\n");
		return HVN_EXIT_FAIL;
	}
	if (geteuid() != 0 || access(tdir, W_OK)) {
		printf("tracefs    %s, not writable by this user\n"
		       "           fix: run hvnoise as root\n", tdir);
		ret = HVN_EXIT_FAIL;
	} else {
		printf("tracefs    %s, writable\n", tdir);
	}

	if (mod) {
		char path[4200];
		int missing = 0;

		printf("events    ");
		for (size_t i = 0; i < sizeof(events) / sizeof(*events); i++) {
			snprintf(path, sizeof(path), "%s/events/hvnoise/%s",
				 tdir, events[i]);
			if (access(path, F_OK)) {
				missing++;
				printf(" %s(missing)", events[i]);
			} else {
				printf(" hvnoise:%s", events[i]);
			}
		}
		printf("\n");
		if (missing)
			printf("           fix: reload hvnoise.ko; its events did not register (see dmesg)\n");

		char *w = hvn_module_param("watched");

		printf("watched    CPUs %s\n", w && *w ? w : "(none)");
		print_housekeeping(w);
		free(w);
		printf("parameters");
		for (size_t i = 0; i < sizeof(params) / sizeof(*params); i++) {
			char *v = hvn_module_param(params[i]);

			if (v)
				printf(" %s=%s", params[i], v);
			free(v);
		}
		printf("\n");

		char *st = hvn_module_param("stats");

		if (st) {
			for (char *p = st; *p; p++)
				if (*p == '\n')
					*p = ' ';
			printf("stats      %s\n", st);
		}
		free(st);
	}
	stale_instances(tdir);
	return ret;
}
