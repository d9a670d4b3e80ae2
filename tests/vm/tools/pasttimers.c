// SPDX-License-Identifier: GPL-2.0
/*
 * pasttimers SECONDS AGE_MS: for SECONDS, on every CPU, arm timers whose
 * deadline passed AGE_MS ago, as real-time loops that overrun do:
 * clock_nanosleep(TIMER_ABSTIME) on CLOCK_MONOTONIC and CLOCK_BOOTTIME,
 * a timerfd and a POSIX timer, each set to an absolute time in the past,
 * 200 times a second.  Each fires at once, AGE_MS after its expiry; none
 * is time the vCPU lost.  Prints how many of each fired.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static long secs, age_ns;
static long fired[4];	/* nanosleep mono, nanosleep boot, timerfd, POSIX */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static long long ns_of(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct timespec ts_of(long long ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL };

	return ts;
}

static void *loop(void *arg)
{
	long cpu = (long)arg, n[4] = { 0 };
	struct itimerspec its = { 0 };
	struct sigevent sev = { .sigev_notify = SIGEV_NONE };
	long long end = ns_of(CLOCK_MONOTONIC) + secs * 1000000000LL;
	cpu_set_t set;
	timer_t pt;
	int tfd;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	tfd = timerfd_create(CLOCK_MONOTONIC, 0);
	if (tfd < 0 || timer_create(CLOCK_MONOTONIC, &sev, &pt)) {
		perror("pasttimers: timerfd/timer_create");
		exit(1);
	}
	while (ns_of(CLOCK_MONOTONIC) < end) {
		struct timespec t = ts_of(ns_of(CLOCK_MONOTONIC) - age_ns);
		unsigned long long exp;
		long long due;

		if (!clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL))
			n[0]++;
		t = ts_of(ns_of(CLOCK_BOOTTIME) - age_ns);
		if (!clock_nanosleep(CLOCK_BOOTTIME, TIMER_ABSTIME, &t, NULL))
			n[1]++;
		its.it_value = ts_of(ns_of(CLOCK_MONOTONIC) - age_ns);
		if (!timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL) &&
		    read(tfd, &exp, sizeof(exp)) == sizeof(exp))
			n[2]++;
		its.it_value = ts_of(ns_of(CLOCK_MONOTONIC) - age_ns);
		if (!timer_settime(pt, TIMER_ABSTIME, &its, NULL))
			n[3]++;
		/* 200 rounds a second: sleep to the next 5 ms. */
		due = ns_of(CLOCK_MONOTONIC) + 5000000;
		t = ts_of(due);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
	}
	pthread_mutex_lock(&lock);
	for (int i = 0; i < 4; i++)
		fired[i] += n[i];
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN), i;
	pthread_t *th;

	secs = argc == 3 ? atol(argv[1]) : 0;
	if (secs <= 0 || atol(argv[2]) <= 0) {
		fprintf(stderr, "usage: pasttimers SECONDS AGE_MS\n");
		return 2;
	}
	age_ns = atol(argv[2]) * 1000000L;
	th = calloc((size_t)ncpu, sizeof(*th));
	for (i = 0; i < ncpu; i++)
		if (pthread_create(&th[i], NULL, loop, (void *)i))
			return 1;
	for (i = 0; i < ncpu; i++)
		pthread_join(th[i], NULL);
	printf("pasttimers: %ld CPUs, deadlines %s ms past: %ld+%ld clock_nanosleep (mono+boot), %ld timerfd, %ld POSIX timer\n",
	       ncpu, argv[2], fired[0], fired[1], fired[2], fired[3]);
	return fired[0] && fired[2] ? 0 : 1;
}
