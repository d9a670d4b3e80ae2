// SPDX-License-Identifier: GPL-2.0
/*
 * Capability checks of the BPF source (probe.h, and hvn_bpf_usable() and
 * hvn_bpf_steal_probe() of loader.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>
#include "hvn.h"
#include "loader.h"
#include "probe.h"

const char *hvn_bpf_btf_path(void)
{
	const char *p = getenv("HVNOISE_BTF");

	return p && *p ? p : "/sys/kernel/btf/vmlinux";
}

bool hvn_bpf_usable(char *why, size_t len)
{
	char *lock;

	if (access(hvn_bpf_btf_path(), R_OK)) {
		if (getenv("HVNOISE_BTF"))
			snprintf(why, len, "HVNOISE_BTF=%s: %s",
				 hvn_bpf_btf_path(), strerror(errno));
		else
			snprintf(why, len,
				 "the kernel has no BTF (%s: %s; it needs CONFIG_DEBUG_INFO_BTF, or a BTF file for this kernel in HVNOISE_BTF)",
				 hvn_bpf_btf_path(), strerror(errno));
		return false;
	}
	if (geteuid() != 0) {
		snprintf(why, len,
			 "loading BPF programs needs root (CAP_BPF and CAP_PERFMON)");
		return false;
	}
	lock = hvn_read_file("/sys/kernel/security/lockdown", NULL);
	if (lock && strstr(lock, "[confidentiality]")) {
		snprintf(why, len,
			 "kernel lockdown=confidentiality forbids BPF reading kernel memory");
		free(lock);
		return false;
	}
	free(lock);
	return true;
}

bool hvn_bpf_has_tracepoint(const struct btf *btf, const char *tp)
{
	char name[128];

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	return btf && btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) > 0;
}

/* Whether kallsyms holds data symbols, which typed ksyms resolve through. */
static bool have_data_ksyms(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256];
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char *sp = strrchr(line, ' ');

		found = sp && !strcmp(sp + 1, "kernel_cpustat\n");
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * /proc/timer_list gives each CPU's resolution: 1 ns in high-resolution
 * mode, the tick in low-resolution mode (highres=off, no oneshot clock
 * event device).  The collector adds it to every hard timer's due time.
 */
uint64_t hvn_bpf_tick_ns(void)
{
	FILE *f = fopen("/proc/timer_list", "r");
	unsigned long long res, max = 0;
	char line[256];

	if (!f) {
		hvn_warn("BPF: cannot read /proc/timer_list (%s): hrtimers taken as high-resolution",
			 strerror(errno));
		return 0;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " .resolution: %llu nsecs", &res) == 1 && res > max)
			max = res;
	fclose(f);
	return max > 1 ? max : 0;
}

bool hvn_bpf_has_kprobes(void)
{
	return !access("/sys/bus/event_source/devices/kprobe", F_OK);
}

enum hvn_steal_way hvn_bpf_steal_way(void)
{
	if (have_data_ksyms())
		return HVN_STEAL_KSYMS;
	if (hvn_bpf_has_kprobes())
		return HVN_STEAL_KPROBE;
	return HVN_STEAL_PROCSTAT;
}

const char *hvn_bpf_steal_name(enum hvn_steal_way w)
{
	static const char *const names[] = { "ksyms", "kprobe", "procstat" };

	return names[w];
}

const char *hvn_bpf_steal_probe(void)
{
	return hvn_bpf_steal_name(hvn_bpf_steal_way());
}
