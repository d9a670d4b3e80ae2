// SPDX-License-Identifier: GPL-2.0
/* The host summary's records (inputs/summary.h). */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "inputs/summary.h"

#define MAX_BODY	(1u << 24)

static const struct hvn_recfile_fmt summary_file = {
	HVN_SUMMARY_MAGIC, HVN_RECHDR_TYPE16, MAX_BODY,
};

/* The least body of each known type. */
static const uint32_t least[] = {
	[HVN_SUM_HOST] = 128,
	[HVN_SUM_COUNTS] = 2 * sizeof(uint64_t),
	[HVN_SUM_SEEN] = sizeof(struct hvn_sum_seen),
	[HVN_SUM_CLOCK] = sizeof(struct hvn_sum_clock),
	[HVN_SUM_IRQCPU] = sizeof(int32_t),
	[HVN_SUM_PROC] = sizeof(struct hvn_sum_proc),
	[HVN_SUM_COLL] = offsetof(struct hvn_sum_coll, peer),
	[HVN_SUM_STALL] = sizeof(struct hvn_sum_stall),
	[HVN_SUM_EPISODE] = sizeof(struct hvn_sum_episode),
	[HVN_SUM_END] = sizeof(struct hvn_sum_end),
};

#define KNOWN(t)	((t) < sizeof(least) / sizeof(*least) && least[t])

bool hvn_summary_is(const char *path)
{
	return hvn_recfile_is(path, &summary_file);
}

int hvn_summary_open(struct hvn_sum_reader *r, const char *path)
{
	int e = hvn_recfile_open(&r->f, path, &summary_file);

	r->path = path;
	r->ended = false;
	if (e < 0)
		hvn_err("%s: %s", path, strerror(errno));
	else if (e)
		hvn_err("%s: not an hvnoise summary (no %s magic)", path,
			HVN_SUMMARY_MAGIC);
	if (e)
		hvn_recfile_close(&r->f);
	return e ? HVN_EXIT_BADFILE : 0;
}

void hvn_summary_bad(const struct hvn_sum_reader *r, const char *what)
{
	hvn_err("%s: bad summary record at offset %llu: %s", r->path,
		(unsigned long long)r->f.off, what);
}

static int cut(const struct hvn_sum_reader *r)
{
	hvn_err("%s: summary cut short at offset %llu", r->path,
		(unsigned long long)r->f.off);
	return -1;
}

int hvn_summary_next(struct hvn_sum_reader *r, struct hvn_sum_rec *rec)
{
	unsigned long long off;
	uint32_t type, size, want;
	const void *body;
	int e;

	do {
		e = hvn_recfile_next(&r->f, &type, &size, &body);
		off = r->f.off;
		if (e == HVN_REC_END && !r->ended) {
			hvn_err("%s: summary cut short at offset %llu (no end record)",
				r->path, off);
			return -1;
		}
		if (e == HVN_REC_END)
			return 0;
		if (r->ended) {
			hvn_err("%s: records after its end, at offset %llu",
				r->path, off);
			return -1;
		}
		if (e == HVN_REC_CUT)
			return cut(r);
		/* A longer collective than the oldest: it has its peer. */
		want = !KNOWN(type) ? 0 :
		       type == HVN_SUM_COLL && size >= sizeof(rec->u.coll) ?
		       sizeof(rec->u.coll) : least[type];
		if (e == HVN_REC_BIG && !KNOWN(type)) {
			hvn_err("%s: bad summary record at offset %llu (type %u, %u bytes)",
				r->path, off, type, size);
			return -1;
		}
		if (KNOWN(type) && (e == HVN_REC_BIG || size < want)) {
			hvn_err("%s: bad summary record at offset %llu (type %u, %u bytes, want %u)",
				r->path, off, type, size, want);
			return -1;
		}
		/* A newer writer's type is skipped. */
	} while (!KNOWN(type));

	/* What the body fills, and one past (a host's NUL): zeroed, not
	 * the whole union (a stall's is twenty times a collective's). */
	memset(&rec->u, 0, want + 1 < sizeof(rec->u) ? want + 1 : sizeof(rec->u));
	rec->contrib = NULL;
	rec->type = type;
	if (type == HVN_SUM_COLL)
		rec->u.coll.peer = -1;
	memcpy(&rec->u, body, want);
	if (type == HVN_SUM_STALL) {
		const struct hvn_sum_stall *s = &rec->u.stall;

		if (s->ncpu < 0 || s->ncpu > HVN_MAX_CPUS ||
		    size < want + (uint64_t)s->ncpu * sizeof(*rec->contrib)) {
			hvn_summary_bad(r, "a stall's collective, cause or CPUs");
			return -1;
		}
		rec->contrib = (const void *)((const uint8_t *)body + want);
	}
	if (type == HVN_SUM_END)
		r->ended = true;
	return 1;
}

int hvn_summary_seek(struct hvn_sum_reader *r, uint64_t off)
{
	if (hvn_recfile_seek(&r->f, off)) {
		hvn_err("%s: cannot read at offset %llu: %s", r->path,
			(unsigned long long)off, strerror(errno));
		return -1;
	}
	return 0;
}

void hvn_summary_close(struct hvn_sum_reader *r)
{
	hvn_recfile_close(&r->f);
}

int hvn_summary_start(FILE *f)
{
	return hvn_recfile_start(f, &summary_file);
}

int hvn_summary_put(FILE *f, enum hvn_sum_type type, const void *a,
		    uint32_t alen, const void *b, uint32_t blen)
{
	return hvn_recfile_put(f, &summary_file, type, a, alen, b, blen);
}
