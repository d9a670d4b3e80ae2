/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The records libnccl-profiler-hvnoise.so writes and hvnoise correlate
 * reads.  Into the ftrace ring buffer through trace_marker_raw, each
 * record is the 32-bit id below followed by its struct (ftrace's raw_data
 * event: "id", then "buf"); into a per-process file (HVNOISE_NCCL_DIR), a
 * struct hvn_nccl_file_rec header, then the struct.  Little-endian, fixed
 * layout: add fields only at the end and bump HVN_NCCL_VERSION.  All
 * times are CLOCK_MONOTONIC ns, the clock of hvnoise record's trace.
 */
#ifndef HVNOISE_NCCL_H
#define HVNOISE_NCCL_H

#include <stdint.h>

#define HVN_NCCL_VERSION	1
#define HVN_NCCL_MAGIC		0x4e430000u	/* "NC" in the id's high half */
#define HVN_NCCL_ID(type)	(HVN_NCCL_MAGIC | (type))
#define HVN_NCCL_TYPE(id)	((id) & 0xffffu)
#define HVN_NCCL_IS(id)		(((id) & 0xffff0000u) == HVN_NCCL_MAGIC)

enum hvn_nccl_type {
	HVN_NCCL_COMM = 1,	/* a communicator seen by this process */
	HVN_NCCL_COLL = 2,	/* a collective or p2p, when NCCL enqueued it */
	HVN_NCCL_PROXYOP = 3,	/* one proxy operation of a collective */
	HVN_NCCL_KERNCH = 4,	/* one channel of a collective's kernel */
	HVN_NCCL_NTYPES
};

/* Collective function, as NCCL names it ("AllReduce", ...). */
enum hvn_nccl_func {
	HVN_FN_UNKNOWN, HVN_FN_ALLGATHER, HVN_FN_ALLREDUCE, HVN_FN_ALLTOALL,
	HVN_FN_BROADCAST, HVN_FN_GATHER, HVN_FN_RECV, HVN_FN_REDUCE,
	HVN_FN_REDUCESCATTER, HVN_FN_SCATTER, HVN_FN_SENDRECV, HVN_FN_SEND,
	HVN_FN_COALESCED,	/* PyTorch's group of coalesced operations */
	HVN_FN_N
};

struct hvn_nccl_comm {
	uint64_t comm;			/* NCCL's commHash: the same on all ranks */
	int32_t rank, nranks, nnodes, pid;
	uint64_t mono_ns, real_ns;	/* a clock pair taken at init */
	char name[32];			/* commName, may be empty */
	char host[32];
};

/*
 * A collective ends when its last proxy op or kernel channel ends: those
 * records carry its op_id (unique in its process) and seq, and the reader
 * joins them; NCCL's own stop only means "handed to the proxy".
 */
struct hvn_nccl_coll {
	uint64_t comm;
	uint64_t op_id;
	uint64_t seq;			/* NCCL's per-function sequence number;
					 * UINT64_MAX for p2p */
	uint64_t start_ns;		/* NCCL started the event (planning) */
	uint64_t enqueued_ns;		/* NCCL stopped it: handed to the proxy */
	uint64_t count;			/* elements (bytes for AllGather, Broadcast) */
	int32_t rank;
	uint32_t tid;			/* the thread that enqueued it */
	int32_t cpu;			/* and its CPU then */
	int32_t peer;			/* root, or p2p peer; -1 none */
	uint8_t func;			/* enum hvn_nccl_func */
	uint8_t dtype_bytes;		/* element size, 0 unknown */
	uint8_t nchannels;
	uint8_t is_p2p;
	char algo[8], proto[8];
};

/* Waits inside a proxy op's steps, summed over its steps (ProxyStep states). */
enum hvn_nccl_wait {
	HVN_WAIT_SEND_GPU,	/* send: waiting for the GPU to produce data */
	HVN_WAIT_SEND_PEER,	/* send: waiting for the peer's buffer */
	HVN_WAIT_SEND,		/* send: waiting for the network to send */
	HVN_WAIT_RECV,		/* recv: waiting for data from the network */
	HVN_WAIT_RECV_FLUSH,	/* recv: waiting for the flush */
	HVN_WAIT_RECV_GPU,	/* recv: waiting for the GPU to consume */
	HVN_WAIT_N
};

struct hvn_nccl_proxyop {
	uint64_t comm;
	uint64_t op_id;			/* of its collective, 0 if unknown */
	uint64_t seq;			/* of its collective */
	uint64_t start_ns, end_ns;
	uint64_t wait_ns[HVN_WAIT_N];
	int32_t rank;
	uint32_t tid;			/* the proxy progress thread */
	int32_t cpu;			/* its CPU at start */
	int32_t cpu_end;		/* and at stop */
	int32_t peer, nsteps, chunk;
	uint8_t channel, is_send, func, pad;
};

struct hvn_nccl_kernch {
	uint64_t comm;
	uint64_t op_id;
	uint64_t seq;
	uint64_t start_ns, end_ns;	/* host time the proxy saw start and end */
	uint64_t gpu_start, gpu_end;	/* the GPU's globaltimer, ns */
	int32_t rank;
	uint32_t tid;
	int32_t cpu;
	uint8_t channel, func, pad[2];
};

/* File mode: each record is this header, then its struct. */
struct hvn_nccl_file_rec {
	uint32_t id;
	uint16_t size;			/* of the struct that follows */
	uint16_t reserved;
};

#define HVN_NCCL_FILE_MAGIC	"HVNNCCL1"	/* 8 bytes, at the start */

#endif
