// SPDX-License-Identifier: GPL-2.0
/*
 * dread DEV COUNT: COUNT synchronous 4 KiB O_DIRECT reads from DEV, wrapping
 * at its end: one disk interrupt per read, for the VM storm test.
 *
 * dread DEV N --irq IRQ CPU WINDOW_MS: read until the disk's IRQ has fired
 * N times on CPU (irqdrive.h), then the DRIVE line.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "irqdrive.h"

int main(int argc, char **argv)
{
	long count, i, done = 0;
	struct timespec t0, t1;
	off_t size, off = 0;
	double ns;
	void *buf;
	int fd;

	struct irqdrive d = { .fd = -1 };

	if (argc != 3 && (argc != 7 || strcmp(argv[3], "--irq"))) {
		fprintf(stderr, "usage: dread DEV COUNT\n"
			"       dread DEV N --irq IRQ CPU WINDOW_MS\n");
		return 2;
	}
	count = atol(argv[2]);
	if (argc == 7 && irqdrive_open(&d, atoi(argv[4]), atoi(argv[5]), count))
		return 1;
	fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (fd < 0) {
		perror("dread: open");
		return 1;
	}
	size = lseek(fd, 0, SEEK_END);
	if (size < 4096 || posix_memalign(&buf, 4096, 4096)) {
		fprintf(stderr, "dread: %s too small or no memory\n", argv[1]);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; d.fd >= 0 ? d.got < count : i < count; i++) {
		if (pread(fd, buf, 4096, off) == 4096)
			done++;
		off += 4096;
		if (off + 4096 > size)
			off = 0;
		if (d.fd >= 0 && irqdrive_poll(&d) < 0)
			return 1;
	}
	if (d.fd >= 0) {
		irqdrive_report(&d, "dread", atol(argv[6]));
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
	printf("dread: %ld of %ld reads, %.0f ns/read\n", done, count,
	       count ? ns / (double)count : 0.0);
	return done == count ? 0 : 1;
}
