/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The NCCL profiler plugin ABI, versions 4 (NCCL 2.27), 5 (2.28) and 6
 * (2.29, 2.30), as NCCL lays it out on x86_64
 * (src/include/plugin/profiler/profiler_v4.h and profiler_v5.h at
 * v2.28.9-1, profiler_v6.h at v2.30.7-1).  Written here from that layout:
 * the offsets, measured on NCCL's own headers, are checked by static
 * asserts below.  v6 is v5 with the copy-engine collectives' events added
 * at the union's end: the same size, every v5 member where it was.
 */
#ifndef HVNOISE_NCCL_ABI_H
#define HVNOISE_NCCL_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef int nccl_result_t;			/* ncclResult_t */
#define NCCL_SUCCESS		0

/* ncclDebugLogger_t and the values we use. */
typedef void (*nccl_logger_t)(int level, unsigned long flags, const char *file,
			      int line, const char *fmt, ...);
#define NCCL_LOG_WARN		2
#define NCCL_LOG_INFO		3
#define NCCL_SUBSYS_INIT	0x1
#define NCCL_SUBSYS_PROFILE	0x4000

/* Event types (one bit each). */
#define NCCL_EV_GROUP		(1 << 0)
#define NCCL_EV_COLL		(1 << 1)
#define NCCL_EV_P2P		(1 << 2)
#define NCCL_EV_PROXYOP		(1 << 3)
#define NCCL_EV_PROXYSTEP	(1 << 4)
#define NCCL_EV_PROXYCTRL	(1 << 5)
#define NCCL_EV_KERNELCH	(1 << 6)
#define NCCL_EV_NETPLUGIN	(1 << 7)
#define NCCL_EV_GROUPAPI	(1 << 8)	/* v5 */
#define NCCL_EV_COLLAPI		(1 << 9)	/* v5 */
#define NCCL_EV_P2PAPI		(1 << 10)	/* v5 */
#define NCCL_EV_KERNELLAUNCH	(1 << 11)	/* v5 */
#define NCCL_EV_CECOLL		(1 << 12)	/* v6 */
#define NCCL_EV_CESYNC		(1 << 13)	/* v6 */
#define NCCL_EV_CEBATCH		(1 << 14)	/* v6 */

/* Event states (ncclProfilerEventState_t), by number. */
#define NCCL_ST_PROXYOP_IN_PROGRESS	19
#define NCCL_ST_STEP_SEND_GPU_WAIT	8
#define NCCL_ST_STEP_SEND_PEER_WAIT	20
#define NCCL_ST_STEP_SEND_WAIT		9
#define NCCL_ST_STEP_RECV_WAIT		10
#define NCCL_ST_STEP_RECV_FLUSH_WAIT	11
#define NCCL_ST_STEP_RECV_GPU_WAIT	12
#define NCCL_ST_KERNELCH_STOP		22

/* The "coll" and "p2p" members: v5 appends parent_group to v4's. */
#define NCCL_COLL_FIELDS \
	uint64_t seq; const char *func; const void *send_buff; \
	void *recv_buff; size_t count; int root; const char *datatype; \
	uint8_t nchannels; uint8_t nwarps; const char *algo; \
	const char *proto;
#define NCCL_P2P_FIELDS \
	const char *func; void *buff; const char *datatype; size_t count; \
	int peer; uint8_t nchannels;

struct nccl_coll_descr { NCCL_COLL_FIELDS void *parent_group; };
struct nccl_coll_descr_v4 { NCCL_COLL_FIELDS };
struct nccl_p2p_descr { NCCL_P2P_FIELDS void *parent_group; };
struct nccl_p2p_descr_v4 { NCCL_P2P_FIELDS };

struct nccl_proxyop_descr {
	pid_t pid;
	uint8_t channel;
	int peer;
	int nsteps;
	int chunk;
	int is_send;
};

struct nccl_event_descr_v5 {
	uint64_t type;
	void *parent;
	int rank;
	union {
		struct nccl_coll_descr coll;
		struct nccl_p2p_descr p2p;
		struct nccl_proxyop_descr proxyop;
		struct { int step; } proxystep;
		struct { uint8_t channel; uint64_t ptimer; } kernelch;
		struct { int64_t id; void *data; } netplugin;
		uint8_t api[88];	/* groupApi, collApi, p2pApi, kernelLaunch */
	};
};

/* v6's copy-engine collective (AllGather, AlltoAll, Scatter, Gather on
 * symmetric memory): started and stopped around its launch on the CPU. */
struct nccl_cecoll_descr {
	uint64_t seq;			/* the communicator's CE sequence */
	const char *func;
	const void *send_buff;
	void *recv_buff;
	size_t count;
	int root;
	const char *datatype;
	const char *sync_strategy;
	bool intra_batch_sync;
	uint32_t batch_size;
	uint32_t num_batches;
	uint32_t ce_seq;
	void *stream;
};

struct nccl_event_descr_v6 {
	uint64_t type;
	void *parent;
	int rank;
	union {
		struct nccl_coll_descr coll;
		struct nccl_p2p_descr p2p;
		struct nccl_proxyop_descr proxyop;
		struct { int step; } proxystep;
		struct { uint8_t channel; uint64_t ptimer; } kernelch;
		struct { int64_t id; void *data; } netplugin;
		uint8_t api[88];	/* groupApi, collApi, p2pApi, kernelLaunch */
		struct nccl_cecoll_descr cecoll;
		struct { bool is_complete; int nranks; } cesync;
		struct { int nops; size_t total_bytes; bool intra_sync; } cebatch;
	};
};

struct nccl_event_descr_v4 {
	uint8_t type;
	void *parent;
	int rank;
	union {
		struct nccl_coll_descr_v4 coll;
		struct nccl_p2p_descr_v4 p2p;
		struct nccl_proxyop_descr proxyop;
		struct { int step; } proxystep;
		struct { uint8_t channel; uint64_t ptimer; } kernelch;
		struct { int64_t id; void *data; } netplugin;
	};
};

union nccl_state_args {
	struct { size_t trans_size; } proxystep;
	struct { int appended; } proxyctrl;
	struct { void *data; } netplugin;
	struct { uint64_t ptimer; } kernelch;
};

struct nccl_profiler_v5 {
	const char *name;
	nccl_result_t (*init)(void **ctx, uint64_t comm_id, int *mask,
			      const char *comm_name, int nnodes, int nranks,
			      int rank, nccl_logger_t log);
	nccl_result_t (*start_event)(void *ctx, void **handle,
				     struct nccl_event_descr_v5 *d);
	nccl_result_t (*stop_event)(void *handle);
	nccl_result_t (*record_state)(void *handle, int state,
				      union nccl_state_args *args);
	nccl_result_t (*finalize)(void *ctx);
};

struct nccl_profiler_v6 {
	const char *name;
	nccl_result_t (*init)(void **ctx, uint64_t comm_id, int *mask,
			      const char *comm_name, int nnodes, int nranks,
			      int rank, nccl_logger_t log);
	nccl_result_t (*start_event)(void *ctx, void **handle,
				     struct nccl_event_descr_v6 *d);
	nccl_result_t (*stop_event)(void *handle);
	nccl_result_t (*record_state)(void *handle, int state,
				      union nccl_state_args *args);
	nccl_result_t (*finalize)(void *ctx);
};

struct nccl_profiler_v4 {
	const char *name;
	nccl_result_t (*init)(void **ctx, int *mask, const char *comm_name,
			      uint64_t comm_hash, int nnodes, int nranks,
			      int rank, nccl_logger_t log);
	nccl_result_t (*start_event)(void *ctx, void **handle,
				     struct nccl_event_descr_v4 *d);
	nccl_result_t (*stop_event)(void *handle);
	nccl_result_t (*record_state)(void *handle, int state,
				      union nccl_state_args *args);
	nccl_result_t (*finalize)(void *ctx);
};

/* NCCL's layout on x86_64, as measured on the 2.28 headers. */
_Static_assert(sizeof(struct nccl_event_descr_v5) == 112, "v5 descr size");
_Static_assert(sizeof(struct nccl_event_descr_v4) == 104, "v4 descr size");
_Static_assert(offsetof(struct nccl_event_descr_v5, coll.proto) == 96, "coll.proto");
_Static_assert(offsetof(struct nccl_event_descr_v5, coll.nchannels) == 80, "coll.nch");
_Static_assert(offsetof(struct nccl_event_descr_v4, coll.proto) == 96, "v4 coll.proto");
_Static_assert(offsetof(struct nccl_event_descr_v5, p2p.nchannels) == 60, "p2p.nch");
_Static_assert(offsetof(struct nccl_event_descr_v5, proxyop.is_send) == 44, "proxyop");
_Static_assert(offsetof(struct nccl_event_descr_v5, kernelch.ptimer) == 32, "kernelch");
_Static_assert(sizeof(union nccl_state_args) == 8, "state args");
/* And on the 2.30.7 headers: v6 is v5's layout, and its CE members. */
#define NCCL_V6_AS_V5(m) \
	_Static_assert(offsetof(struct nccl_event_descr_v6, m) == \
		       offsetof(struct nccl_event_descr_v5, m), "v6 " #m)
NCCL_V6_AS_V5(rank);
NCCL_V6_AS_V5(coll.seq);
NCCL_V6_AS_V5(coll.proto);
NCCL_V6_AS_V5(coll.parent_group);
NCCL_V6_AS_V5(p2p.nchannels);
NCCL_V6_AS_V5(proxyop.is_send);
NCCL_V6_AS_V5(kernelch.ptimer);
_Static_assert(sizeof(struct nccl_event_descr_v6) == 112, "v6 descr size");
_Static_assert(offsetof(struct nccl_event_descr_v6, coll.parent_group) == 104, "v6 parentGroup");
_Static_assert(offsetof(struct nccl_event_descr_v6, cecoll.func) == 32, "ceColl.func");
_Static_assert(offsetof(struct nccl_event_descr_v6, cecoll.count) == 56, "ceColl.count");
_Static_assert(offsetof(struct nccl_event_descr_v6, cecoll.datatype) == 72, "ceColl.datatype");
_Static_assert(offsetof(struct nccl_event_descr_v6, cecoll.intra_batch_sync) == 88, "ceColl.ibs");
_Static_assert(offsetof(struct nccl_event_descr_v6, cecoll.ce_seq) == 100, "ceColl.ceSeqNum");
_Static_assert(offsetof(struct nccl_event_descr_v6, cecoll.stream) == 104, "ceColl.stream");
_Static_assert(offsetof(struct nccl_event_descr_v6, cesync.nranks) == 28, "ceCollSync");
_Static_assert(offsetof(struct nccl_event_descr_v6, cebatch.intra_sync) == 40, "ceCollBatch");
_Static_assert(sizeof(struct nccl_profiler_v6) == 48, "v6 table");

#endif
