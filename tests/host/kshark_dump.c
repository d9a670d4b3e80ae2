// SPDX-License-Identifier: GPL-2.0
/*
 * What KernelShark shows of a trace.dat, through its own data library
 * (libkshark, as the GUI loads it): one line per entry, "CPU TS EVENT INFO",
 * TS in ns as KernelShark holds it (the DATE option applied).  For
 * tests/host/kernelshark.sh, which checks the hvnoise events' fields.
 *
 * usage: kshark_dump FILE
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#include <libkshark.h>

int main(int argc, char **argv)
{
	struct kshark_context *ctx = NULL;
	struct kshark_entry **rows = NULL;
	ssize_t n;
	int sd;

	if (argc != 2) {
		fprintf(stderr, "usage: kshark_dump FILE\n");
		return 2;
	}
	if (!kshark_instance(&ctx))
		return 1;
	sd = kshark_open(ctx, argv[1]);
	if (sd < 0) {
		fprintf(stderr, "kshark_dump: libkshark cannot open %s\n", argv[1]);
		kshark_free(ctx);
		return 1;
	}
	n = kshark_load_entries(ctx, sd, &rows);
	for (ssize_t i = 0; i < n; i++) {
		char *ev = kshark_get_event_name(rows[i]);
		char *info = kshark_get_info(rows[i]);

		printf("%d %lld %s %s\n", rows[i]->cpu, (long long)rows[i]->ts,
		       ev ? ev : "?", info ? info : "");
		free(ev);
		free(info);
		free(rows[i]);
	}
	free(rows);
	kshark_close(ctx, sd);
	kshark_free(ctx);
	return n < 0;
}
