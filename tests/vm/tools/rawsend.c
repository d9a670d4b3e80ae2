// SPDX-License-Identifier: GPL-2.0
/*
 * rawsend IFACE COUNT [RATE]: send COUNT broadcast Ethernet frames (an
 * experimental EtherType, 0x88b5) out of IFACE through AF_PACKET, at about
 * RATE frames/s (0: as fast as possible).  For the VM tests: the frames
 * cross a QEMU-internal hub to the peer NIC and make it interrupt; nothing
 * leaves the VM.
 *
 * rawsend IFACE --irq IRQ CPU N WINDOW_MS: drive the receiving NIC's IRQ
 * to N interrupts on CPU (irqdrive.h): a frame, then its interrupt, one
 * at a time, so NAPI cannot take several frames an interrupt; then the
 * DRIVE line.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "irqdrive.h"

static int send_frame(int fd, const unsigned char *frame, size_t len,
		      const struct sockaddr_ll *to)
{
	if (sendto(fd, frame, len, 0, (const struct sockaddr *)to, sizeof(*to)) ==
	    (ssize_t)len)
		return 1;
	if (errno != ENOBUFS)
		perror("rawsend: sendto");
	return 0;
}

/*
 * One frame, then its interrupt (or 2 ms: NAPI still polling took it),
 * then 200 us for NAPI to finish and re-enable the queue's interrupt.
 */
static int drive(int fd, const unsigned char *frame, size_t len,
		 const struct sockaddr_ll *to, char **argv)
{
	struct irqdrive d;
	long n = atol(argv[5]);

	if (n <= 0 || irqdrive_open(&d, atoi(argv[3]), atoi(argv[4]), n))
		return 2;
	while (d.got < n) {
		long long t = irqdrive_now();
		long had = d.got;

		send_frame(fd, frame, len, to);
		while (irqdrive_poll(&d) == had && irqdrive_now() - t < 2000000)
			;
		if (d.got < 0)
			return 1;
		t = irqdrive_now();
		while (irqdrive_now() - t < 200000)
			;
	}
	irqdrive_report(&d, "rawsend", atol(argv[6]));
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char frame[128];
	struct sockaddr_ll to;
	long count, rate, i, sent = 0;
	struct timespec t0, now;
	int fd;

	if (argc < 3 || (!strcmp(argv[2], "--irq") && argc != 7)) {
		fprintf(stderr, "usage: rawsend IFACE COUNT [RATE]\n"
			"       rawsend IFACE --irq IRQ CPU N WINDOW_MS\n");
		return 2;
	}
	count = atol(argv[2]);
	rate = argc > 3 ? atol(argv[3]) : 0;
	fd = socket(AF_PACKET, SOCK_RAW, htons(0x88b5));
	if (fd < 0) {
		perror("rawsend: socket");
		return 1;
	}
	memset(&to, 0, sizeof(to));
	to.sll_family = AF_PACKET;
	to.sll_ifindex = (int)if_nametoindex(argv[1]);
	to.sll_halen = ETH_ALEN;
	memset(to.sll_addr, 0xff, ETH_ALEN);
	if (!to.sll_ifindex) {
		fprintf(stderr, "rawsend: no interface %s\n", argv[1]);
		return 1;
	}
	memset(frame, 0, sizeof(frame));
	memset(frame, 0xff, 6);				/* broadcast */
	frame[6] = 0x02;				/* local MAC */
	frame[12] = 0x88;
	frame[13] = 0xb5;
	if (!strcmp(argv[2], "--irq"))
		return drive(fd, frame, sizeof(frame), &to, argv);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < count; i++) {
		sent += send_frame(fd, frame, sizeof(frame), &to);
		if (rate) {
			double due = (double)(i + 1) / (double)rate, el;

			do {
				clock_gettime(CLOCK_MONOTONIC, &now);
				el = (double)(now.tv_sec - t0.tv_sec) +
				     (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
			} while (el < due);
		}
	}
	printf("rawsend: %ld of %ld frames sent\n", sent, count);
	return sent ? 0 : 1;
}
