// SPDX-License-Identifier: GPL-2.0
/*
 * perf cpu-clock timers and their keepers (perf_timer.h).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "hvn.h"
#include "perf_timer.h"

#define TIMER_RING_PAGES	2	/* the header page and one data page */

void hvn_timer_stop(struct hvn_timer *t)
{
	/* Its history goes with it (the probe would read a freed timer). */
	if (t->fd >= 0 && t->gen)
		__atomic_add_fetch(t->gen, 2, __ATOMIC_SEQ_CST);
	if (t->stopfd >= 0) {
		uint64_t one = 1;

		if (write(t->stopfd, &one, sizeof(one)) == sizeof(one))
			pthread_join(t->keeper, NULL);
		close(t->stopfd);
		t->stopfd = -1;
	}
	if (t->ring)
		munmap(t->ring, TIMER_RING_PAGES * sysconf(_SC_PAGESIZE));
	t->ring = NULL;
	/* The link owns the perf fd: destroying it closes the fd. */
	if (t->link)
		bpf_link__destroy(t->link);
	else if (t->fd >= 0)
		close(t->fd);
	t->link = NULL;
	t->fd = -1;
}

/*
 * Whether @t's event still runs.  perf takes a CPU's events off it when
 * the CPU goes offline and does not put them back when it returns: the
 * timer then never fires again, and its time running stops.  Checked
 * between syncs (a CPU that went and came back meanwhile included).
 */
bool hvn_timer_alive(struct hvn_timer *t)
{
	uint64_t v[2];	/* count, time running (PERF_FORMAT_TOTAL_TIME_RUNNING) */
	bool alive;

	if (read(t->fd, v, sizeof(v)) != (ssize_t)sizeof(v))
		return false;
	alive = !t->ran_ns || v[1] != t->ran_ns;
	t->ran_ns = v[1];
	return alive;
}

static void keeper_start(struct hvn_timer *t);

int hvn_timer_start(struct hvn_timer *t, struct hvn_timer_stats *st, int cpu,
		    uint64_t period_ns, struct bpf_program *prog, uint32_t *gen,
		    uint64_t *period_out, uint8_t *busy)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(a),
		.sample_period = period_ns,
		/* Throttle records stamped in CLOCK_MONOTONIC. */
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.read_format = PERF_FORMAT_TOTAL_TIME_RUNNING,
		/* The keeper wakes at any record: a THROTTLE. */
		.watermark = 1,
		.wakeup_watermark = 1,
	};
	int e;

	t->period_ns = t->base_ns = period_ns;
	t->throttled_at = 0;
	t->ran_ns = 0;
	t->cpu = cpu;
	t->gen = gen;
	t->period_out = period_out;
	t->busy = busy;
	if (busy)
		*busy = 0;
	t->st = st;
	t->stopfd = -1;
	t->keeper_gone = 0;
	/* A new timer, maybe on a CPU still watched: no history to judge by. */
	if (gen)
		__atomic_add_fetch(gen, 2, __ATOMIC_SEQ_CST);
	if (period_out)
		__atomic_store_n(period_out, period_ns, __ATOMIC_RELEASE);
	t->fd = syscall(__NR_perf_event_open, &a, -1, cpu, -1,
			PERF_FLAG_FD_CLOEXEC);
	if (t->fd < 0)
		return -errno;
	t->ring = mmap(NULL, TIMER_RING_PAGES * sysconf(_SC_PAGESIZE),
		       PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
	if (t->ring == MAP_FAILED) {
		t->ring = NULL;
		e = -errno;
		hvn_timer_stop(t);
		return e;
	}
	t->link = bpf_program__attach_perf_event(prog, t->fd);
	if (!t->link) {
		e = -errno;
		hvn_timer_stop(t);
		return e;
	}
	keeper_start(t);
	return 0;
}

/*
 * Read @t's ring: each throttle counted, with the time until its CPU's
 * tick lifted it.  Returns when the one still on began, else 0.
 */
static uint64_t timer_throttled(struct hvn_timer *t)
{
	struct perf_event_mmap_page *m = t->ring;
	size_t psz = sysconf(_SC_PAGESIZE);
	const char *data;
	uint64_t head, tail;

	if (!m)
		return 0;
	data = (const char *)m + psz;
	head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
	tail = m->data_tail;
	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		uint64_t time = 0;	/* the record's first field */

		for (size_t i = 0; i < sizeof(h); i++)
			((char *)&h)[i] = data[(tail + i) % psz];
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		for (size_t i = 0; h.size >= sizeof(h) + sizeof(time) &&
				   i < sizeof(time); i++)
			((char *)&time)[i] = data[(tail + sizeof(h) + i) % psz];
		if (h.type == PERF_RECORD_THROTTLE && !t->throttled_at) {
			__atomic_add_fetch(&t->st->throttles, 1, __ATOMIC_RELAXED);
			t->throttled_at = time ? time : 1;
		} else if (h.type == PERF_RECORD_LOST && !t->throttled_at) {
			/* Records lost: a THROTTLE may be among them.  Lifted
			 * as if it were (a lift of a running timer only
			 * restarts it). */
			__atomic_add_fetch(&t->st->throttles, 1, __ATOMIC_RELAXED);
			t->throttled_at = hvn_now(CLOCK_MONOTONIC);
		} else if (h.type == PERF_RECORD_UNTHROTTLE && t->throttled_at) {
			if (time > t->throttled_at)
				__atomic_add_fetch(&t->st->throttled_ns, time - t->throttled_at,
						   __ATOMIC_RELAXED);
			t->throttled_at = 0;
		}
		tail += h.size;
	}
	__atomic_store_n(&m->data_tail, tail, __ATOMIC_RELEASE);
	return t->throttled_at;
}

/*
 * A timer still throttled is restarted (PERF_EVENT_IOC_PERIOD lifts the
 * throttle): its CPU may not tick for long.  @gen: the CPU's sampler
 * generation, bumped first, so that the probes do not read the stop as
 * time lost.
 */
static void timer_rearm(struct hvn_timer *t)
{
	uint64_t at = timer_throttled(t), now;
	uint32_t *gen = t->gen;

	if (!at)
		return;
	if (gen)
		__atomic_add_fetch(gen, 1, __ATOMIC_SEQ_CST);
	if (ioctl(t->fd, PERF_EVENT_IOC_PERIOD, &t->period_ns)) {
		hvn_warn("BPF: cannot restart a throttled perf timer: %s",
			 strerror(errno));
		return;
	}
	/* The ioctl is done on the CPU, synchronously: a run between the two
	 * bumps read the old history. */
	if (gen)
		__atomic_add_fetch(gen, 1, __ATOMIC_SEQ_CST);
	now = hvn_now(CLOCK_MONOTONIC);
	if (now > at)
		__atomic_add_fetch(&t->st->throttled_ns, now - at, __ATOMIC_RELAXED);
	t->throttled_at = 0;
}

/*
 * The keeper of @arg's timer, pinned to its CPU, woken by the THROTTLE
 * record (a one-byte watermark), lifts the throttle at once.  An idle
 * CPU's tick stays off (in high-resolution mode the idle tick does not
 * count hrtimers), so its timer throttles again after as many samples,
 * whatever the period: lifted each time.  A throttle with a task running
 * (the BPF program says, throttled_busy[]) came on a ticking CPU that
 * takes more samples a tick than perf allows (perf_event_max_sample_rate,
 * lowered by the kernel when perf interrupts run long): there the period
 * is doubled, up to 4 times the one asked for (TCG's irregular ticks
 * took it to 16 times, where pauses began long before the next sample),
 * and the BPF programs told, lest the keeper preempt the CPU's work every
 * tick.
 */
static void *keeper(void *arg)
{
	struct hvn_timer *t = arg;
	struct pollfd p[2] = {
		{ .fd = t->fd, .events = POLLIN },
		{ .fd = t->stopfd, .events = POLLIN },
	};
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR) {
			__atomic_store_n(&t->keeper_gone, 1, __ATOMIC_RELEASE);
			break;
		}
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		if (t->period_out && t->busy && timer_throttled(t) &&
		    __atomic_exchange_n(t->busy, 0, __ATOMIC_ACQ_REL) &&
		    t->period_ns < 4 * t->base_ns) {
			t->period_ns *= 2;
			__atomic_store_n(t->period_out, t->period_ns, __ATOMIC_RELEASE);
			if (!__atomic_exchange_n(&t->st->slowed, 1, __ATOMIC_RELAXED))
				hvn_warn("BPF: perf allows fewer samples a tick than the sampler takes (see /proc/sys/kernel/perf_event_max_sample_rate): CPU %d now samples every %llu us, and so may others",
					 t->cpu, (unsigned long long)t->period_ns / 1000);
		}
		timer_rearm(t);
	}
	return NULL;
}

/* The keeper of @t on its CPU; without one, the poll lifts throttles. */
static void keeper_start(struct hvn_timer *t)
{
	pthread_attr_t a;
	cpu_set_t set;

	t->stopfd = eventfd(0, EFD_CLOEXEC);
	if (t->stopfd < 0 || pthread_attr_init(&a))
		goto fail;
	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	if (pthread_attr_setaffinity_np(&a, sizeof(set), &set) ||
	    pthread_create(&t->keeper, &a, keeper, t)) {
		pthread_attr_destroy(&a);
		goto fail;
	}
	pthread_attr_destroy(&a);
	return;
fail:
	if (t->stopfd >= 0)
		close(t->stopfd);
	t->stopfd = -1;
}

static bool keeper_runs(const struct hvn_timer *t)
{
	return t->stopfd >= 0 && !__atomic_load_n(&t->keeper_gone, __ATOMIC_ACQUIRE);
}

void hvn_timer_lift(struct hvn_timer *t)
{
	if (t->fd >= 0 && !keeper_runs(t))
		timer_rearm(t);
}
