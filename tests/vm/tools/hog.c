// SPDX-License-Identifier: GPL-2.0
/*
 * hog CORE MS [GAP_MS COUNT]: on the host, take CPU CORE away from whatever
 * else runs there (a pinned vCPU thread) for MS milliseconds, COUNT times,
 * GAP_MS apart, by spinning at SCHED_FIFO priority.  Prints each burst's
 * measured length and its start (CLOCK_MONOTONIC ns): the injected noise
 * the VM test compares against.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
	struct sched_param sp = { .sched_priority = 50 };
	int core, count, i;
	double ms, gap;
	long long t0, t;
	cpu_set_t set;

	if (argc < 3) {
		fprintf(stderr, "usage: hog CORE MS [GAP_MS COUNT]\n");
		return 2;
	}
	core = atoi(argv[1]);
	ms = atof(argv[2]);
	gap = argc > 3 ? atof(argv[3]) : 0;
	count = argc > 4 ? atoi(argv[4]) : 1;
	CPU_ZERO(&set);
	CPU_SET(core, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("hog: sched_setaffinity");
		return 1;
	}
	for (i = 0; i < count; i++) {
		if (i)
			usleep((useconds_t)(gap * 1000));
		if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
			perror("hog: sched_setscheduler");
			return 1;
		}
		t0 = now_ns();
		do
			t = now_ns();
		while (t - t0 < ms * 1e6);
		sp.sched_priority = 0;
		sched_setscheduler(0, SCHED_OTHER, &sp);
		sp.sched_priority = 50;
		printf("hog: burst %d on core %d: %.3f ms from %lld ns\n", i, core,
		       (double)(t - t0) / 1e6, t0);
		fflush(stdout);
	}
	return 0;
}
