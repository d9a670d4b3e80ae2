/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF collector (tools/bpf/hvnoise.bpf.c) as an event source: the
 * module's detectors where hvnoise.ko cannot be loaded.  It hands out the
 * very records the module's events carry, common header included, with
 * the ids of HVN_BPF_EVID() (hvnoise/event_layout.h).
 */
#ifndef HVNOISE_BPF_SOURCE_H
#define HVNOISE_BPF_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "params.h"

struct hvn_bpf;

/* Whether BPF can be used here; if not, @why says what is missing. */
bool hvn_bpf_usable(char *why, size_t len);

/* Load and attach; 0 or an HVN_EXIT_* code with the reason printed. */
int hvn_bpf_start(struct hvn_bpf **b, const struct hvn_bpf_cfg *c);

/* One record: the CPU whose buffer it belongs in, its time (mono ns). */
typedef int (*hvn_bpf_rec_fn)(void *ctx, int cpu, uint64_t ts,
			      const void *rec, uint32_t len);
/* Deliver what is ready, and re-check IRQ affinities when due; the number
 * of records, or -1 when @fn failed. */
int hvn_bpf_poll(struct hvn_bpf *b, hvn_bpf_rec_fn fn, void *ctx);
/* Detach the probes, then deliver the rest, with the storms still under
 * way ended as the module ends them at unload. */
int hvn_bpf_finish(struct hvn_bpf *b, hvn_bpf_rec_fn fn, void *ctx);
void hvn_bpf_free(struct hvn_bpf *b);

/* The watched set emitted whole at the next poll (a flight recorder's
 * ring must hold one to apply the deltas after it to). */
void hvn_bpf_emit_whole(struct hvn_bpf *b);
/* The watched CPUs as a cpulist, and what was lost. */
const char *hvn_bpf_watched(const struct hvn_bpf *b);
uint64_t hvn_bpf_dropped(const struct hvn_bpf *b);
/* Times perf throttled a timer of the source; *ns: how long they stopped. */
uint64_t hvn_bpf_throttled(const struct hvn_bpf *b, uint64_t *ns);
uint64_t hvn_bpf_untracked(const struct hvn_bpf *b);
/* "ksyms", "kprobe" or "procstat": how steal is read, by @b or here. */
const char *hvn_bpf_steal_method(const struct hvn_bpf *b);
const char *hvn_bpf_steal_probe(void);

#endif
