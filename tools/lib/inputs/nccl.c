// SPDX-License-Identifier: GPL-2.0
/*
 * The NCCL profiler plugin's records (include/hvnoise/nccl.h), read from
 * the trace (trace_marker_raw) or from the plugin's per-process files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hvnoise/nccl.h"
#include "analysis/stalls.h"

/* One NCCL record, from the trace or a file; false if malformed. */
static bool nccl_record(struct hvn_corr *x, uint32_t id, const uint8_t *p,
			uint32_t len)
{
	x->nccl_records++;
	switch (HVN_NCCL_TYPE(id)) {
	case HVN_NCCL_COMM: {
		struct hvn_nccl_comm r;
		struct hvn_proc *pr;

		if (len < sizeof(r))
			return false;
		memcpy(&r, p, sizeof(r));
		x->proc = hvn_corr_grow(x->proc, &x->proc_cap, x->nproc, sizeof(*x->proc));
		pr = &x->proc[x->nproc++];
		pr->comm = r.comm;
		pr->rank = r.rank;
		pr->nranks = r.nranks;
		pr->pid = r.pid;
		pr->mono = r.mono_ns;
		pr->real = r.real_ns;
		snprintf(pr->host, sizeof(pr->host), "%.32s", r.host);
		snprintf(pr->name, sizeof(pr->name), "%.32s", r.name);
		for (char *c = pr->host; *c; c++)
			if (*c < 0x20 || *c > 0x7e)
				*c = '?';
		for (char *c = pr->name; *c; c++)
			if (*c < 0x20 || *c > 0x7e)
				*c = '?';
		return true;
	}
	case HVN_NCCL_COLL: {
		struct hvn_nccl_coll r;
		struct hvn_coll *c;

		if (len < sizeof(r))
			return false;
		memcpy(&r, p, sizeof(r));
		if (r.enqueued_ns < r.start_ns || r.func >= HVN_FN_N)
			return false;
		x->coll = hvn_corr_grow(x->coll, &x->coll_cap, x->ncoll, sizeof(*x->coll));
		c = &x->coll[x->ncoll++];
		memset(c, 0, sizeof(*c));
		c->comm = r.comm;
		c->op_id = r.op_id;
		c->seq = r.seq;
		c->start = r.start_ns;
		c->enq = r.enqueued_ns;
		c->count = r.count;
		c->rank = r.rank;
		c->cpu = r.cpu;
		c->peer = r.peer;
		c->tid = r.tid;
		c->func = r.func;
		c->is_p2p = r.is_p2p;
		c->dtype = r.dtype_bytes;
		return true;
	}
	case HVN_NCCL_PROXYOP: {
		struct hvn_nccl_proxyop r;

		if (len < sizeof(r))
			return false;
		memcpy(&r, p, sizeof(r));
		hvn_corr_add_child(x, r.comm, r.rank, r.op_id, r.start_ns, r.end_ns,
			  r.cpu, r.cpu_end);
		return true;
	}
	case HVN_NCCL_KERNCH: {
		struct hvn_nccl_kernch r;

		if (len < sizeof(r))
			return false;
		memcpy(&r, p, sizeof(r));
		hvn_corr_add_child(x, r.comm, r.rank, r.op_id, r.start_ns, r.end_ns,
			  r.cpu, -1);
		return true;
	}
	}
	return false;
}

void hvn_corr_event(void *vx, int cpu, uint64_t ts, const uint8_t *d,
		  uint32_t len)
{
	struct hvn_corr *x = vx;
	const struct hvn_field *f;
	uint16_t id16;
	uint32_t id;

	if (len >= 2) {
		memcpy(&id16, d, 2);
		if (x->schema->kind[id16] == HVN_EV_RAW) {
			f = x->schema->f[HVN_EV_RAW];
			if (f[0].size == 4 && f[1].off && f[1].off <= len &&
			    f[0].off + 4u <= len) {
				memcpy(&id, d + f[0].off, 4);
				if (HVN_NCCL_IS(id) &&
				    !nccl_record(x, id, d + f[1].off,
						 len - f[1].off))
					x->nccl_bad++;
			}
		}
	}
	hvn_an_event(&x->an, cpu, ts, d, len);
	if (x->keep_episodes) {
		struct hvn_episode e;
		int k = hvn_episode_decode(x->schema, ts, d, len, &e);

		if (k == HVN_EV_LOST || k == HVN_EV_STEAL || k == HVN_EV_STORM ||
		    k == HVN_EV_MIGRATE) {
			x->ep = hvn_corr_grow(x->ep, &x->ep_cap, x->nep, sizeof(*x->ep));
			x->ep[x->nep++] = e;
		}
	}
}

/* The plugin's file: "HVNNCCL1", then header + record, to the end. */
int hvn_corr_read_nccl(struct hvn_corr *x, const char *path)
{
	FILE *f = fopen(path, "rb");
	char magic[8];
	uint8_t buf[512];
	struct hvn_nccl_file_rec h;
	uint64_t off = 8, n = 0;

	if (!f) {
		hvn_err("%s: %s", path, strerror(errno));
		return HVN_EXIT_BADFILE;
	}
	if (fread(magic, 1, 8, f) != 8 || memcmp(magic, HVN_NCCL_FILE_MAGIC, 8)) {
		hvn_err("%s: not an hvnoise NCCL file (no %s magic)", path,
			HVN_NCCL_FILE_MAGIC);
		fclose(f);
		return HVN_EXIT_BADFILE;
	}
	for (;;) {
		size_t got = fread(&h, 1, sizeof(h), f);

		if (!got && feof(f))
			break;
		if (got != sizeof(h) || !HVN_NCCL_IS(h.id) || h.size > sizeof(buf) ||
		    fread(buf, 1, h.size, f) != h.size ||
		    !nccl_record(x, h.id, buf, h.size)) {
			hvn_err("%s: bad record at offset %llu (after %llu records); the rest is skipped",
				path, (unsigned long long)off,
				(unsigned long long)n);
			fclose(f);
			return HVN_EXIT_BADFILE;
		}
		off += sizeof(h) + h.size;
		n++;
	}
	fclose(f);
	return 0;
}
