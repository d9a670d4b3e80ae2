// SPDX-License-Identifier: GPL-2.0
/*
 * dread DEV COUNT: COUNT synchronous 4 KiB O_DIRECT reads from DEV, wrapping
 * at its end: one disk interrupt per read, for the VM storm test.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long count, i, done = 0;
	off_t size, off = 0;
	void *buf;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: dread DEV COUNT\n");
		return 2;
	}
	count = atol(argv[2]);
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
	for (i = 0; i < count; i++) {
		if (pread(fd, buf, 4096, off) == 4096)
			done++;
		off += 4096;
		if (off + 4096 > size)
			off = 0;
	}
	printf("dread: %ld of %ld reads\n", done, count);
	return done == count ? 0 : 1;
}
