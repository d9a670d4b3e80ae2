/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Driving an IRQ to a target, for the VM storm tests (rawsend, dread):
 * the tool makes interrupts until IRQ has fired N times on CPU, as
 * /sys/kernel/irq/IRQ/per_cpu_count says, and notes when each came.  A
 * storm test then knows how many it made, and whether each window of the
 * detector's length inside the drive held enough of them for the storm
 * to stay one episode: a busy machine (TCG slowed, NAPI taking several
 * frames an interrupt) can then be told from a wrong count.
 */
#ifndef IRQDRIVE_H
#define IRQDRIVE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct irqdrive {
	int fd, irq, cpu;
	long base, got, target;
	long long *t;		/* when each interrupt was seen, ns */
};

static long long irqdrive_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The IRQ's count on the CPU now; -1 on error. */
static long irqdrive_read(struct irqdrive *d)
{
	char buf[4096], *p = buf;
	ssize_t n = pread(d->fd, buf, sizeof(buf) - 1, 0);
	int c;

	if (n <= 0)
		return -1;
	buf[n] = 0;
	for (c = 0; c < d->cpu && p; c++) {
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return p ? atol(p) : -1;
}

static int irqdrive_open(struct irqdrive *d, int irq, int cpu, long target)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/kernel/irq/%d/per_cpu_count", irq);
	d->irq = irq;
	d->cpu = cpu;
	d->target = target;
	d->got = 0;
	d->fd = open(path, O_RDONLY);
	d->t = calloc((size_t)target + 64, sizeof(*d->t));
	d->base = d->fd < 0 || !d->t ? -1 : irqdrive_read(d);
	if (d->base < 0) {
		perror(path);
		return -1;
	}
	return 0;
}

/* Interrupts seen so far; notes the new ones' time.  -1 on error. */
static long irqdrive_poll(struct irqdrive *d)
{
	long n = irqdrive_read(d);
	long long now;

	if (n < 0)
		return -1;
	now = irqdrive_now();
	while (d->base + d->got < n && d->got < d->target + 64)
		d->t[d->got++] = now;
	return d->got;
}

/*
 * DRIVE line: interrupts made, and the fewest in any @window_ms window
 * that began at one of them and ended inside the drive (each detector
 * window begins at an interrupt).
 */
static void irqdrive_report(struct irqdrive *d, const char *what, long window_ms)
{
	long long w = window_ms * 1000000LL, last = d->got ? d->t[d->got - 1] : 0;
	long i, j = 0, least = -1;

	for (i = 0; i < d->got && d->t[i] + w <= last; i++) {
		while (j < d->got && d->t[j] < d->t[i] + w)
			j++;
		if (least < 0 || j - i < least)
			least = j - i;
	}
	printf("DRIVE %s irq=%d cpu=%d irqs=%ld seconds=%.3f least_per_window=%ld window_ms=%ld\n",
	       what, d->irq, d->cpu, d->got,
	       d->got ? (double)(last - d->t[0]) / 1e9 : 0.0, least, window_ms);
}

#endif
