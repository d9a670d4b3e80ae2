/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A perf cpu-clock event run as a timer for a BPF program.  perf throttles
 * an event that overflows more than perf_event_max_sample_rate / HZ times
 * between two ticks of its CPU, and only that CPU's tick lifts it: on a
 * tickless idle CPU the timer then stops until the CPU next ticks,
 * silently, and the BPF source is blind there.  The one trace is a
 * THROTTLE record in the event's ring, mapped for that (samples go to the
 * BPF program, not the ring).  A keeper thread pinned to the timer's CPU
 * sleeps on the ring and wakes at that record: running there takes the
 * CPU out of idle, which restarts its tick, and it lifts the throttle at
 * once.
 */
#ifndef HVNOISE_BPF_PERF_TIMER_H
#define HVNOISE_BPF_PERF_TIMER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct bpf_link;
struct bpf_program;

/* What perf's throttling cost, for all timers of a source (atomic: the
 * keepers add). */
struct hvn_timer_stats {
	uint64_t throttles;		/* how often */
	uint64_t throttled_ns;		/* how long in all */
	int slowed;			/* a keeper lengthened a period */
};

struct hvn_timer {
	int fd;				/* -1: none */
	void *ring;			/* 1 + 1 pages */
	struct bpf_link *link;
	uint64_t period_ns;
	uint64_t base_ns;		/* the period asked for */
	uint64_t throttled_at;		/* CLOCK_MONOTONIC; 0: running */
	uint64_t ran_ns;		/* its time running at the last check */
	int cpu;
	uint32_t *gen;			/* its CPU's sampler_gen[], or NULL */
	uint64_t *period_out;		/* its CPU's sample_period[], or NULL */
	uint8_t *busy;			/* its throttled_busy[cpu][k], or NULL */
	struct hvn_timer_stats *st;
	int stopfd;			/* eventfd: the keeper's stop; -1: none */
	int keeper_gone;		/* it ended on an error: the poll lifts */
	pthread_t keeper;
};

/* A timer not started (hvn_timer_stop() leaves it so too). */
#define HVN_TIMER_INIT	((struct hvn_timer){ .fd = -1, .stopfd = -1 })

/*
 * A timer on @cpu every @period_ns running @prog, its keeper beside it;
 * @gen, @period_out and @busy: the CPU's sampler_gen[], sample_period[]
 * and throttled_busy[][] of the collector (NULL where not its sampler).
 * 0 or -errno.
 */
int hvn_timer_start(struct hvn_timer *t, struct hvn_timer_stats *st, int cpu,
		    uint64_t period_ns, struct bpf_program *prog, uint32_t *gen,
		    uint64_t *period_out, uint8_t *busy);
void hvn_timer_stop(struct hvn_timer *t);
/* Whether it still runs: perf drops a CPU's events when it goes offline. */
bool hvn_timer_alive(struct hvn_timer *t);
/* Lift a throttle where no keeper does (at each poll). */
void hvn_timer_lift(struct hvn_timer *t);

#endif
