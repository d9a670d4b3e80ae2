// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: any bytes as a host's summary (correlate --summary), read and
 * joined as correlate over many hosts does: the record reader's checks,
 * the clock alignment, the job stalls, the probes over its episodes and
 * the JSON writer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hvn.h"
#include "analysis/fleet.h"
#include "analysis/summary.h"
#include "out/correlate_json.h"

extern bool hvn_quiet;

/* A summary of @len bytes of @data, behind the magic: its fd. */
static int summary(const uint8_t *data, size_t len, char *path, size_t plen)
{
	int fd = memfd_create("summary", 0);

	if (fd < 0 || write(fd, HVN_SUMMARY_MAGIC, 8) != 8 ||
	    write(fd, data, len) != (ssize_t)len)
		abort();
	snprintf(path, plen, "/proc/self/fd/%d", fd);
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* correlate's defaults, but a join in slabs from 64 KiB of
	 * collectives on: both joins fuzzed. */
	struct hvn_corr_params p = HVN_CORR_PARAMS_DEFAULT;
	static bool once;
	char a[64], b[64], *paths[2] = { a, b };
	struct hvn_fleet f;
	size_t cut;
	int fa, fb;

	hvn_quiet = true;
	if (!once) {
		once = true;
		if (!freopen("/dev/null", "w", stdout))
			abort();
	}
	if (size < 2)
		return 0;
	p.memory_mib = 0.0625;
	/* Two hosts, for the join: the first two bytes say where the second
	 * host's summary begins. */
	cut = 2 + ((size_t)data[0] << 8 | data[1]) % (size - 1);
	fa = summary(data + 2, cut - 2, a, sizeof(a));
	fb = summary(data + cut, size - cut, b, sizeof(b));
	if (!hvn_fleet_open(&f, paths, 2, &p) && !hvn_fleet_analyse(&f, &p))
		hvn_fleet_write_json(stdout, &f, &p);
	hvn_fleet_free(&f);
	close(fa);
	close(fb);
	return 0;
}
