// SPDX-License-Identifier: GPL-2.0
/*
 * hoststops [MIN_US]: the VM tests' witness of this host's own stops.
 *
 * This host may itself be a VM whose hypervisor reports no steal: then
 * every vCPU of the test VM loses time that no counter here shows, and the
 * guest's detectors rightly report it.  One SCHED_FIFO thread per CPU this
 * process may run on, pinned, sleeps to a deadline every millisecond; a
 * wakeup later than MIN_US (default 2000) past its deadline means nothing
 * on that CPU could run for that long, the test VM's threads included.
 * Prints, in CLOCK_MONOTONIC ns:
 *
 *   ready NCPU                once every thread runs at its priority
 *   stop CPU FROM TO          each such interval, as it ends
 *
 * until killed, or its parent dies.  Above the hog's priority
 * (tests/vm/tools/hog.c), so an injected hog is not taken for a stop.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
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
	int cpu = (int)(long)arg;
	long long next, t;
	struct timespec d;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) ||
	    pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp)) {
		fprintf(stderr, "hoststops: cpu %d: cannot pin or raise to SCHED_FIFO\n", cpu);
		failed = 1;
	}
	pthread_barrier_wait(&started);	/* all placed */
	pthread_barrier_wait(&started);	/* "ready" printed */
	if (failed)
		return NULL;
	next = now_ns() + PERIOD_NS;
	for (;;) {
		d.tv_sec = next / 1000000000LL;
		d.tv_nsec = next % 1000000000LL;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, NULL);
		t = now_ns();
		if (t - next >= min_ns) {
			pthread_mutex_lock(&out_lock);
			printf("stop %d %lld %lld\n", cpu, next, t);
			fflush(stdout);
			pthread_mutex_unlock(&out_lock);
			/* Time spent printing is not a stop: measure from now. */
			t = now_ns();
		}
		next = t + PERIOD_NS;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	cpu_set_t cpus;
	pthread_t t;
	int n, i;

	min_ns = (argc > 1 ? atoll(argv[1]) : 2000) * 1000;
	if (min_ns <= 0 || sched_getaffinity(0, sizeof(cpus), &cpus)) {
		fprintf(stderr, "usage: hoststops [MIN_US]\n");
		return 2;
	}
	/* Not left behind at SCHED_FIFO if the test dies. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		return 1;
	/* A page fault in the loop would be a stop of our own. */
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		perror("hoststops: mlockall");
	n = CPU_COUNT(&cpus);
	pthread_barrier_init(&started, NULL, (unsigned int)n + 1);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &cpus) &&
		    pthread_create(&t, &attr, watch, (void *)(long)i)) {
			perror("hoststops: pthread_create");
			return 1;
		}
	pthread_barrier_wait(&started);
	if (failed)
		return 1;
	printf("ready %d\n", n);
	fflush(stdout);
	pthread_barrier_wait(&started);
	pause();
	return 0;
}
