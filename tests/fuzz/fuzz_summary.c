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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hvn_corr_params p = { .k = 3, .min_ms = 1, .min_share = 0.2,
				      .window = 32, .top = 20 };
	static bool once;
	char path[64], *paths[1] = { path };
	struct hvn_fleet f;
	int fd;

	hvn_quiet = true;
	if (!once) {
		once = true;
		if (!freopen("/dev/null", "w", stdout))
			abort();
	}
	fd = memfd_create("summary", 0);
	if (fd < 0 || write(fd, HVN_SUMMARY_MAGIC, 8) != 8 ||
	    write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (!hvn_fleet_open(&f, paths, 1, &p) && !hvn_fleet_analyse(&f, &p))
		hvn_fleet_write_json(stdout, &f, &p);
	hvn_fleet_free(&f);
	close(fd);
	return 0;
}
