// SPDX-License-Identifier: GPL-2.0
/*
 * An event source at a set rate for the readers' benchmark
 * (bench/guest-instructions.sh): getppid() RATE times a second for SECONDS,
 * in 1 ms steps, so that syscalls:sys_enter_getppid records RATE events a
 * second.  Prints the calls made and the rate reached.  Static, for the
 * initramfs.
 *
 * usage: evgen RATE SECONDS
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
	long long rate, secs, done = 0, t0, end, next;
	char *e1, *e2;

	if (argc != 3)
		goto usage;
	rate = strtoll(argv[1], &e1, 10);
	secs = strtoll(argv[2], &e2, 10);
	if (*e1 || *e2 || rate < 1000 || rate > 10000000 || secs < 1 || secs > 3600)
		goto usage;
	t0 = now_ns();
	end = t0 + secs * 1000000000LL;
	for (next = t0; next < end; next += 1000000) {
		/* The calls due by the end of this millisecond. */
		long long due = rate * (next + 1000000 - t0) / 1000000000LL;
		struct timespec ts;

		while (done < due) {
			syscall(SYS_getppid);	/* not cached by the C library */
			done++;
		}
		ts.tv_sec = (next + 1000000) / 1000000000LL;
		ts.tv_nsec = (next + 1000000) % 1000000000LL;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	printf("evgen: %lld calls in %.3f s: %.0f a second\n", done,
	       (now_ns() - t0) / 1e9, done / ((now_ns() - t0) / 1e9));
	return 0;
usage:
	fprintf(stderr, "usage: evgen RATE SECONDS (RATE 1000 to 10000000 a second, SECONDS 1 to 3600)\n");
	return 2;
}
