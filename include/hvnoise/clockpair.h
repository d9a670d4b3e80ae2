/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A pair of clocks read together, for userspace: the tool's recordings
 * and the NCCL plugin's communicator records.  The wall clock is read
 * between two reads of the other; a vCPU preempted between them (steal of
 * milliseconds on a busy host) would shift the pair by up to half the
 * stop, and later readers take a shift of a millisecond for a step of
 * CLOCK_REALTIME.  So the tightest of a few brackets is kept.
 */
#ifndef HVNOISE_CLOCKPAIR_H
#define HVNOISE_CLOCKPAIR_H

#include <stdint.h>
#include <time.h>

#define HVN_PAIR_TRIES		8
/* A bracket this tight is not bettered by trying again. */
#define HVN_PAIR_GOOD_NS	2000

static inline uint64_t hvn_pair_read(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * (@id, CLOCK_REALTIME) in ns into *@c and *@real; returns the width of
 * the bracket kept, the pair's uncertainty.
 */
static inline uint64_t hvn_clock_pair(clockid_t id, uint64_t *c,
				      uint64_t *real)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < HVN_PAIR_TRIES && best > HVN_PAIR_GOOD_NS; i++) {
		uint64_t a = hvn_pair_read(id);
		uint64_t r = hvn_pair_read(CLOCK_REALTIME);
		uint64_t b = hvn_pair_read(id);

		if (b - a < best) {
			best = b - a;
			*c = a + (b - a) / 2;
			*real = r;
		}
	}
	return best;
}

#endif
