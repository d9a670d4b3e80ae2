/* SPDX-License-Identifier: GPL-2.0 */
/* Collectives from Flight Recorder, Kineto and NCCL Inspector files. */
#ifndef HVNOISE_INPUTS_H
#define HVNOISE_INPUTS_H

#include <stdint.h>

#include "hvn.h"

/* How far a collective got (Flight Recorder's states). */
enum hvn_ext_state { HVN_EXT_COMPLETED, HVN_EXT_STARTED, HVN_EXT_SCHEDULED };

struct hvn_ext_coll {
	uint64_t comm, seq, bytes;
	int32_t rank;
	uint8_t func, is_p2p, state;
	uint8_t comm_digits;		/* comm's hex digits known (a prefix); 0: all */
	int64_t start_real, end_real;	/* CLOCK_REALTIME ns; end: completed only */
	int32_t nranks;			/* the communicator's ranks; 0: not said */
	int32_t pid;			/* the rank's process; 0: not said */
	uint64_t unc_ns;		/* how far its times may be off: 0 exact,
					 * UINT64_MAX not known */
	char host[33];
};

typedef void (*hvn_ext_add)(void *ctx, const struct hvn_ext_coll *c);

/* 0, or HVN_EXIT_BADFILE with the file and key printed.  Flight Recorder
 * dumps are read as PyTorch writes them, pickle or JSON. */
int hvn_read_torch_fr(const char *path, hvn_ext_add add, void *ctx);
int hvn_read_kineto(const char *path, hvn_ext_add add, void *ctx);
int hvn_read_inspector(const char *path, hvn_ext_add add, void *ctx);

#endif
