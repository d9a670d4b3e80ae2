// SPDX-License-Identifier: GPL-2.0
/*
 * hoststops [MIN_US]: the VM tests' witness of this host's own stops.
 *
 * This host may itself be a VM whose hypervisor reports no steal: then
 * every vCPU of the test VM loses time that no counter here shows, and the
 * guest's detectors rightly report it.  One SCHED_FIFO thread per host CPU,
 * pinned, wakes every millisecond; a wakeup later than MIN_US (default
 * 2000) beyond its period means nothing on that CPU could run for that
 * long, the test VM's threads included.  Prints, in CLOCK_MONOTONIC ns:
 *
 *   ready NCPU                once every thread runs at its priority
 *   stop CPU FROM TO          each such interval, as it ends
 *
 * until killed.  Above the hog's priority (tests/vm/tools/hog.c), so an
 * injected hog is not taken for a stop.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PERIOD_NS 1000000LL

static long long min_ns;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t started;
static int failed;

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void *watch(void *arg)
{
	struct sched_param sp = { .sched_priority = 90 };
	struct timespec period = { 0, PERIOD_NS };
	int cpu = (int)(long)arg;
	long long prev, t;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) ||
	    pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp)) {
		fprintf(stderr, "hoststops: cpu %d: cannot pin or raise to SCHED_FIFO\n", cpu);
		failed = 1;
	}
	pthread_barrier_wait(&started);
	if (failed)
		return NULL;
	prev = now_ns();
	for (;;) {
		nanosleep(&period, NULL);
		t = now_ns();
		if (t - prev - PERIOD_NS >= min_ns) {
			pthread_mutex_lock(&out_lock);
			printf("stop %d %lld %lld\n", cpu, prev + PERIOD_NS, t);
			fflush(stdout);
			pthread_mutex_unlock(&out_lock);
		}
		prev = t;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN), i;
	pthread_t t;

	min_ns = (argc > 1 ? atoll(argv[1]) : 2000) * 1000;
	if (n < 1 || min_ns <= 0) {
		fprintf(stderr, "usage: hoststops [MIN_US]\n");
		return 2;
	}
	/* A page fault in the loop would be a stop of our own. */
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		perror("hoststops: mlockall");
	pthread_barrier_init(&started, NULL, (unsigned int)n + 1);
	for (i = 0; i < n; i++)
		if (pthread_create(&t, NULL, watch, (void *)i)) {
			perror("hoststops: pthread_create");
			return 1;
		}
	pthread_barrier_wait(&started);
	if (failed)
		return 1;
	printf("ready %ld\n", n);
	fflush(stdout);
	pause();
	return 0;
}
