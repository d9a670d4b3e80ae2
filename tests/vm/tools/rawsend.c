// SPDX-License-Identifier: GPL-2.0
/*
 * rawsend IFACE COUNT [RATE]: send COUNT broadcast Ethernet frames (an
 * experimental EtherType, 0x88b5) out of IFACE through AF_PACKET, at about
 * RATE frames/s (0: as fast as possible).  For the VM tests: the frames
 * cross a QEMU-internal hub to the peer NIC and make it interrupt; nothing
 * leaves the VM.
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

int main(int argc, char **argv)
{
	unsigned char frame[128];
	struct sockaddr_ll to;
	long count, rate, i, sent = 0;
	struct timespec t0, now;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: rawsend IFACE COUNT [RATE]\n");
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
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < count; i++) {
		if (sendto(fd, frame, sizeof(frame), 0, (struct sockaddr *)&to,
			   sizeof(to)) == (ssize_t)sizeof(frame))
			sent++;
		else if (errno != ENOBUFS)
			perror("rawsend: sendto");
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
