/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What this kernel offers the BPF source: BTF, privileges, tracepoints,
 * how steal can be read and how hrtimers run.
 */
#ifndef HVNOISE_BPF_PROBE_H
#define HVNOISE_BPF_PROBE_H

#include <stdbool.h>
#include <stdint.h>

struct btf;

/* How steal is read (see hvnoise.bpf.c), in the order tried. */
enum hvn_steal_way { HVN_STEAL_KSYMS, HVN_STEAL_KPROBE, HVN_STEAL_PROCSTAT };

/* The kernel's BTF: HVNOISE_BTF, else /sys/kernel/btf/vmlinux. */
const char *hvn_bpf_btf_path(void);
bool hvn_bpf_has_tracepoint(const struct btf *btf, const char *tp);
/* Whether this kernel takes kprobes (perf's kprobe PMU). */
bool hvn_bpf_has_kprobes(void);
/* Reads kallsyms once (120k lines on a big kernel). */
enum hvn_steal_way hvn_bpf_steal_way(void);
const char *hvn_bpf_steal_name(enum hvn_steal_way w);
/* The tick where hrtimers run from it (highres=off), else 0. */
uint64_t hvn_bpf_tick_ns(void);

#endif
