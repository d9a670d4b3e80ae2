/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Limits and map values the BPF collector (hvnoise.bpf.c) and the tool
 * (tools/bpf/) share.
 */
#ifndef HVNOISE_BPF_CONFIG_H
#define HVNOISE_BPF_CONFIG_H

#include "hvnoise/events.h"
#include "lost.h"
#include "storm.h"

/*
 * CPUs the collector can watch: a power of two (indices are masked with
 * it).  The verifier walks the steal sampler's loop once per possible CPU
 * (nr_cpus, fixed at load): at 2048 it gives up ("the sequence of 8193
 * jumps is too complex"), at 1024 it takes the collector, tested by
 * tests/host/bpf.sh (HVNOISE_BPF_LOAD_CPUS).  The CPU-indexed maps are
 * sized from the possible CPUs at load.
 */
#define HVN_BPF_MAX_CPUS	1024
/* Watched device IRQs: a host of 384 CPUs, eight NICs with a queue per
 * CPU and eight GPUs has several thousand vectors. */
#define HVN_BPF_MAX_IRQS	8192
#define HVN_BPF_RINGBUF_BYTES	(4 << 20)

/*
 * A CPU's two flags, bytes apart: the tool writes watched, the CPU's own
 * probes storms (it has storms under way, to end once it is unwatched),
 * so neither write undoes the other, and an interrupt on a CPU with
 * neither costs one 16-bit load.
 */
struct hvn_bpf_cpu_flags {
	unsigned char watched;
	unsigned char storms;
} __attribute__((aligned(2)));

/* A watched device IRQ: where it was last seen. */
struct hvn_bpf_irq {
	int cpu;			/* -1: not yet known */
	unsigned int dev;		/* HVN_PCI_PACK() address */
	char name[HVN_IRQ_NAME_LEN];
	/* CLOCK_MONOTONIC ns of a probe's last move (hvn_watchset.as_of) */
	unsigned long long moved_ns;
};

/*
 * What a storm counter counts, with the name truncated as the module's
 * strscpy() truncates it: the CPU's total and the x86 system vectors, in
 * the order of hvn_bpf_pcpu.vec[].
 */
struct hvn_bpf_who {
	int irq;
	unsigned char src;
	char name[HVN_IRQ_NAME_LEN];
};

#define HVN_BPF_NR_VEC		4	/* timer, resched, callfunc, callfunc1 */

static const struct hvn_bpf_who hvn_bpf_all_who = { -1, HVN_SRC_ALL, "all" };
static const struct hvn_bpf_who hvn_bpf_vec_who[HVN_BPF_NR_VEC] = {
	{ -1, HVN_SRC_TIMER, "local_timer" },
	{ -1, HVN_SRC_RESCHED, "reschedule" },
	{ -1, HVN_SRC_CALLFUNC, "call_function" },
	{ -1, HVN_SRC_CALLFUNC1, "call_function_s" },
};

/* Storm and lost-time state of one watched CPU (a per-CPU map value). */
struct hvn_bpf_pcpu {
	unsigned int nactive;		/* storms under way on this CPU */
	u64 expire_walk;		/* when storm_expire() next walks */
	struct hvn_ivl_ring ivl;	/* irq and system vector intervals */
	struct hvn_ivl_ring nmi;	/* NMI intervals */
	struct hvn_lost_cpu lost;
	unsigned int gen;		/* enter_gen[] this state was reset for */
	struct hvn_storm all;
	struct hvn_storm vec[HVN_BPF_NR_VEC];
	struct hvn_storm_slot slot[HVN_STORM_SLOTS];
	/*
	 * The sampler's hrtimer, told by its perf program; the last hard
	 * hrtimer the probe saw; the sampler_gen[] the history is for.
	 */
	u64 sampler_timer, last_timer;
	unsigned int sampler_gen;
};

#endif
