/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hvnoise advise's model: from one recording's collectives, watched set and
 * episodes (struct hvn_corr with keep_episodes), the changes that remove
 * the noise found on the CPUs that serve the job, each with its evidence.
 * Nothing here reads the system or prints: the command does both.
 */
#ifndef HVNOISE_ANALYSIS_ADVISE_H
#define HVNOISE_ANALYSIS_ADVISE_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/stalls.h"

enum hvn_adv_kind {
	HVN_ADV_IRQ,		/* move an IRQ off the CPUs that serve ranks */
	HVN_ADV_PIN,		/* move a rank's threads off a CPU taking IRQs */
	HVN_ADV_ISOLATE,	/* interrupt work on serving CPUs: isolate them */
	HVN_ADV_PROVIDER,	/* time the hypervisor took: evidence for it */
	HVN_ADV_KINDS
};

/* A vCPU's time taken by the hypervisor, for the provider. */
struct hvn_adv_vcpu {
	int32_t cpu;
	uint64_t steal_ns, unexpl_ns;	/* steal reported; lost, unreported */
	uint64_t n;			/* episodes */
	uint64_t longest, longest_start;	/* ns; mono ns */
};

struct hvn_advice {
	uint8_t kind;			/* enum hvn_adv_kind */
	int32_t irq;			/* IRQ, PIN: the IRQ; else -1 */
	char name[HVN_NAME_LEN + 1];	/* its name */
	int32_t cpu;			/* IRQ, PIN: the serving CPU it hit */
	/* IRQ: the CPU to move it to; PIN: one to move the rank to; -1:
	 * none this recording knows of (every CPU serves a rank), or an IRQ
	 * that cannot be moved (@affinity). */
	int32_t target;
	bool target_local;		/* the target's NUMA node is known to be
					 * the IRQ's (else: not known) */
	bool target_irqs;		/* the target takes a watched IRQ (every
					 * CPU serving no rank does) */
	/* IRQ: whether its affinity may be set, as the newest watched set
	 * had it (HVN_IRQ_* of include/hvnoise/watch.h; 0: not known, as
	 * from the BPF source). */
	uint8_t affinity;
	uint64_t storms, storm_irqs, storm_ns;	/* on serving CPUs */
	uint64_t moves;			/* IRQ: moves onto serving CPUs */
	uint64_t irqs;			/* PIN: interrupts on that CPU */
	uint64_t lost_ns, lost_irq_ns;	/* ISOLATE: on the CPUs of @cpus */
	uint64_t first, last;		/* mono ns of the evidence */
	/* Of the stalls' time lost, what this cause was charged with (0..1),
	 * or -1 with no stall. */
	double share;
	int32_t rank, pid;		/* PIN: the rank (its first process) */
	uint8_t why;			/* PIN: 1 proxy, 2 enqueue thread */
	char cpus[4096];		/* ISOLATE: the CPUs; PROVIDER: vCPUs;
					 * PIN: where the rank may go */
};

struct hvn_advise_params {
	double min_ms;			/* the least noise worth a change */
	int ncpus;			/* CPUs the recording had (0: known ones) */
};

struct hvn_advise {
	struct hvn_advice *adv;		/* most costly first, within a kind */
	size_t nadv, cap;
	/* The CPUs that serve the job: its ranks' proxy and enqueuing
	 * threads, or (no NCCL records) the watched CPUs. */
	char serving[8192];
	/* The CPUs advice may name: those online when recorded, or (a
	 * recording that does not say) 0 to the highest it saw events on. */
	char present[8192];
	bool online_known;
	bool from_ranks;		/* serving came from the ranks' records */
	char rank_cpus[8192];		/* the ranks' CPUs alone */
	struct hvn_adv_vcpu *vcpu;	/* PROVIDER: each vCPU that qualified */
	size_t nvcpu;
	struct hvn_episode *hv;		/* PROVIDER: its episodes, by time */
	size_t nhv;
	uint64_t span;			/* ns the recording covers */
	uint64_t worst_hv;		/* the longest hypervisor episode seen */
};

/* The advice for @x (after hvn_corr_analyse(), episodes kept) into a
 * zeroed @out: 0, -ENOMEM, or -ENOSPC when a CPU list does not fit in
 * its text (hvn_advise_free() either way). */
int hvn_advise(const struct hvn_corr *x, const struct hvn_advise_params *p,
	       struct hvn_advise *out);
void hvn_advise_free(struct hvn_advise *a);
/* The ns a recording covers: its clock pairs' span, or its events'. */
uint64_t hvn_advise_span(const struct hvn_analysis *an);
/* "irq-affinity", "pin-threads", "isolate-cpus", "provider". */
const char *hvn_adv_kind_name(unsigned int k);

#endif
