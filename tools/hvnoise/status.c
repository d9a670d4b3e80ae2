// SPDX-License-Identifier: GPL-2.0
/*
 * hvnoise status: what is there, what is missing, and the fix for each.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs/tracefs.h>

#include "builtin.h"
#include "cpulist.h"
#include "hvn.h"
#include "hvnoise/tunables.h"
#include "session.h"
#include "out/jsonw.h"

/* The module's parameters: the watched set's, then the tunables. */
#define HVN_STR(x) #x
static const char *const params[] = {
	"devices", "cpus", "local_cpus",
#define HVN_TUNABLE(n, lo, hi, def, off, what) HVN_STR(n),
#include "hvnoise/tunable-list.h"
#undef HVN_TUNABLE
};

static const char *const events[] = {
	"watch", "steal", "lost", "irq_storm_begin", "irq_storm",
	"irq_migrate",
};

struct status_args {
	bool json;
};

static const struct hvn_opt status_opts[] = {
	HVN_OPT_FLAG_ROW("json", 0, struct status_args, json,
			 "machine-readable output (schema \"hvnoise-status\" 1)"),
	HVN_OPT_END_ROW
};

static const struct hvn_cmd status_cmd = {
	.name = "status",
	.synopsis = "[--json]",
	.opts = status_opts,
	.notes =
"  whether hvnoise.ko is loaded, what it watches, its parameters, which\n"
"  source record and top would use and why, whether tracefs is usable, and\n"
"  the fix for whatever is missing.\n"
"  Exit: 0 ready (module or BPF), 4 neither the module nor BPF, 1 tracefs\n"
"  unusable.\n",
};

#define MAX_INST	64
#define MAX_FIXES	(MAX_INST + 4)	/* source, tracefs, events; each instance */

/* What status found, then printed as text or JSON. */
struct status {
	bool mod, writable;
	char *version, *watched, *stats, *steal_src, *param[sizeof(params) / sizeof(*params)];
	enum hvn_source src;
	char why[256], runs[256];
	const char *tdir;
	bool event_ok[sizeof(events) / sizeof(*events)];
	struct { char name[256]; int pid; } inst[MAX_INST];	/* pid -1: left over */
	int ninst;
	char fix[MAX_FIXES][300];	/* the commands, in the text's order */
	int nfix;
};

static void add_fix(struct status *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_fix(struct status *st, const char *fmt, ...)
{
	va_list ap;

	if (st->nfix == MAX_FIXES)
		return;
	va_start(ap, fmt);
	vsnprintf(st->fix[st->nfix++], sizeof(st->fix[0]), fmt, ap);
	va_end(ap);
}

/* hvnoise instances: in use, or left by a killed recorder. */
static void find_instances(struct status *st)
{
	char path[4096];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/instances", st->tdir);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)) && st->ninst < MAX_INST) {
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
		snprintf(st->inst[st->ninst].name, sizeof(st->inst[0].name), "%s",
			 de->d_name);
		st->inst[st->ninst++].pid = pid > 0 ? pid : -1;
	}
	closedir(d);
}

/* Where record, top, the exporter and the flight recorder would run: the
 * CPUs this process may run on that are not watched. */
static void housekeeping(struct status *st)
{
	static unsigned long w[HVN_BITS_TO_LONGS(HVN_MAX_CPUS)];
	static unsigned long run[HVN_BITS_TO_LONGS(HVN_MAX_CPUS)];
	int n;

	if (!st->watched || hvn_cpulist_parse(st->watched, w, HVN_MAX_CPUS, NULL, 0))
		return;
	n = hvn_cpus_allowed(w, true, run);
	if (n < 0)
		return;
	if (n)
		hvn_cpulist_format(st->runs, sizeof(st->runs), run, HVN_MAX_CPUS);
	else
		snprintf(st->runs, sizeof(st->runs), "all");
}

static void gather(struct status *st)
{
	st->mod = hvn_module_loaded();
	if (st->mod) {
		st->version = hvn_read_file("/sys/module/hvnoise/version", NULL);
		if (st->version)
			st->version[strcspn(st->version, "\n")] = 0;
		/* The events' layout is the module's: a tool of another
		 * version may decode them wrongly. */
		if (st->version && strcmp(st->version, HVN_VERSION))
			add_fix(st, "hvnoise.ko %s is loaded but this hvnoise is %s: load the module of the same version (rmmod hvnoise; insmod the new hvnoise.ko)",
				st->version, HVN_VERSION);
	}
	st->src = hvn_source_auto(st->why, sizeof(st->why));
	if (st->src == HVN_SRC_KERNEL)
		add_fix(st, "insmod hvnoise.ko [cpus=LIST] [devices=BDF,...] (see hvnoise(8)), or make BPF usable; until then record and top see the kernel's irq events only");
	st->tdir = tracefs_tracing_dir();
	if (!st->tdir) {
		add_fix(st, "mount -t tracefs nodev /sys/kernel/tracing");
		return;
	}
	st->writable = geteuid() == 0 && !access(st->tdir, W_OK);
	if (!st->writable)
		add_fix(st, "run hvnoise as root");
	if (st->mod) {
		char path[4200];
		bool missing = false;

		for (size_t i = 0; i < sizeof(events) / sizeof(*events); i++) {
			snprintf(path, sizeof(path), "%s/events/hvnoise/%s",
				 st->tdir, events[i]);
			st->event_ok[i] = !access(path, F_OK);
			missing |= !st->event_ok[i];
		}
		if (missing)
			add_fix(st, "reload hvnoise.ko; its events did not register (see dmesg)");
		st->watched = hvn_module_param("watched");
		st->steal_src = hvn_module_param("steal_source");
		housekeeping(st);
		for (size_t i = 0; i < sizeof(params) / sizeof(*params); i++)
			st->param[i] = hvn_module_param(params[i]);
		st->stats = hvn_module_param("stats");
		if (st->stats)
			for (char *p = st->stats; *p; p++)
				if (*p == '\n')
					*p = ' ';
	}
	find_instances(st);
	for (int i = 0; i < st->ninst; i++)
		if (st->inst[i].pid < 0)
			add_fix(st, "rmdir %s/instances/%s", st->tdir, st->inst[i].name);
}

static void print_text(const struct status *st)
{
	const char (*fix)[sizeof(st->fix[0])] = st->fix;

	if (st->mod)
		printf("module     hvnoise loaded%s%s\n", st->version ? ", version " : "",
		       st->version ? st->version : "");
	else
		printf("module     hvnoise is not loaded\n");
	printf("source     %s: %s", hvn_source_names[st->src], st->why);
	if (st->src == HVN_SRC_BPF)
		printf(" (steal read through %s)", hvn_bpf_steal_probe());
	else if (st->src == HVN_SRC_MODULE && st->steal_src && strcmp(st->steal_src, "none"))
		printf(" (steal read through %s)", st->steal_src);
	printf("\n");
	if (st->src == HVN_SRC_KERNEL)
		printf("           fix: %s\n", *fix++);
	if (!st->tdir) {
		printf("tracefs    not mounted\n           fix: %s\n", *fix);
		return;
	}
	printf("tracefs    %s, %s\n", st->tdir, st->writable ? "writable" :
	       "not writable by this user");
	if (!st->writable)
		printf("           fix: %s\n", *fix++);
	if (st->mod) {
		bool missing = false;

		printf("events    ");
		for (size_t i = 0; i < sizeof(events) / sizeof(*events); i++) {
			printf(st->event_ok[i] ? " hvnoise:%s" : " %s(missing)", events[i]);
			missing |= !st->event_ok[i];
		}
		printf("\n");
		if (missing)
			printf("           fix: %s\n", *fix++);
		printf("watched    CPUs %s\n", st->watched && *st->watched ? st->watched : "(none)");
		if (st->runs[0])
			printf("runs on    CPUs %s (record, top, exporter, flight-recorder: off the watched CPUs; --housekeeping to choose)\n",
			       strcmp(st->runs, "all") ? st->runs : "all: every CPU is watched");
		printf("parameters");
		for (size_t i = 0; i < sizeof(params) / sizeof(*params); i++)
			if (st->param[i])
				printf(" %s=%s", params[i], st->param[i]);
		printf("\n");
		if (st->stats)
			printf("stats      %s\n", st->stats);
	}
	for (int i = 0; i < st->ninst; i++)
		if (st->inst[i].pid > 0)
			printf("instance   %s (in use by process %d)\n", st->inst[i].name,
			       st->inst[i].pid);
		else
			printf("instance   %s is left over from a killed recorder\n"
			       "           fix: %s\n", st->inst[i].name, *fix++);
}

static void json_kv(const char *sep, const char *key, const char *v)
{
	printf("%s\"%s\":", sep, key);
	if (v)
		hvn_json_str(stdout, v);
	else
		printf("null");
}

static void print_json(const struct status *st, int exit_code)
{
	printf("{\"schema\":\"hvnoise-status\",\"schema_version\":1,\"exit\":%d,\"module\":{\"loaded\":%s",
	       exit_code, st->mod ? "true" : "false");
	json_kv(",", "version", st->version);
	printf("},\"source\":{\"name\":\"%s\"", hvn_source_names[st->src]);
	json_kv(",", "why", st->why);
	json_kv(",", "steal_probe", st->src == HVN_SRC_BPF ? hvn_bpf_steal_probe() :
		st->src == HVN_SRC_MODULE ? st->steal_src : NULL);
	printf("},\"tracefs\":{");
	json_kv("", "dir", st->tdir);
	printf(",\"writable\":%s}", st->writable ? "true" : "false");
	printf(",\"events\":{");
	for (size_t i = 0; st->mod && i < sizeof(events) / sizeof(*events); i++)
		printf("%s\"%s\":%s", i ? "," : "", events[i], st->event_ok[i] ? "true" : "false");
	printf("}");
	json_kv(",", "watched", st->mod ? (st->watched ? st->watched : "") : NULL);
	json_kv(",", "runs_on", st->runs[0] ? st->runs : NULL);
	printf(",\"parameters\":{");
	for (size_t i = 0, n = 0; i < sizeof(params) / sizeof(*params); i++)
		if (st->param[i]) {
			json_kv(n++ ? "," : "", params[i], st->param[i]);
		}
	printf("}");
	json_kv(",", "stats", st->stats);
	printf(",\"instances\":[");
	for (int i = 0; i < st->ninst; i++) {
		json_kv(i ? ",{" : "{", "name", st->inst[i].name);
		if (st->inst[i].pid > 0)
			printf(",\"pid\":%d,\"left_over\":false}", st->inst[i].pid);
		else
			printf(",\"pid\":null,\"left_over\":true}");
	}
	printf("],\"fixes\":[");
	for (int i = 0; i < st->nfix; i++) {
		if (i)
			printf(",");
		hvn_json_str(stdout, st->fix[i]);
	}
	printf("]}\n");
}

int cmd_status(int argc, char **argv)
{
	struct status_args a = { 0 };
	struct status *st;
	int first, ret;

	ret = hvn_cli_parse(&status_cmd, argc, argv, &a, NULL, &first);
	if (ret >= 0)
		return ret;
	st = calloc(1, sizeof(*st));
	if (!st) {
		hvn_err("out of memory");
		return HVN_EXIT_FAIL;
	}
	gather(st);
	ret = !st->tdir || !st->writable ? HVN_EXIT_FAIL :
	      st->src == HVN_SRC_KERNEL ? HVN_EXIT_NOMODULE : HVN_EXIT_OK;
	if (a.json)
		print_json(st, ret);
	else
		print_text(st);
	free(st->version);
	free(st->watched);
	free(st->steal_src);
	free(st->stats);
	for (size_t i = 0; i < sizeof(params) / sizeof(*params); i++)
		free(st->param[i]);
	free(st);
	return ret;
}
