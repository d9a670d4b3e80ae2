// SPDX-License-Identifier: GPL-2.0
/*
 * A host's summary (analysis/summary.h): "HVNSUMM1", then records, each a
 * header (type, size) and a packed little-endian body.  A reader skips the
 * types it does not know and takes the known prefix of a longer body, so
 * that newer writers only add types, or fields at a body's end.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hvn.h"
#include "hvnoise/nccl.h"
#include "analysis/summary.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the summary's records are written as the host lays them out: little-endian"
#endif

enum {
	REC_HOST = 1, REC_CLOCK, REC_IRQCPU, REC_PROC, REC_COLL, REC_STALL,
	REC_EPISODE, REC_COUNTS, REC_SEEN,
	REC_END,		/* last: what came before, counted */
};

/* What saw the host (hvn_corr.source and its counts). */
struct __attribute__((packed)) rec_seen {
	char source[16];
	uint64_t detector_events, irq_events;
};

/* REC_END's body: a summary cut on a record boundary is still refused. */
struct __attribute__((packed)) rec_end {
	uint64_t nproc, ncoll, nst, nep;
};

struct __attribute__((packed)) rec_hdr {
	uint16_t type, reserved;
	uint32_t size;
};

struct __attribute__((packed)) rec_proc {
	uint64_t comm, mono, real;
	int32_t rank, nranks, pid;
	uint8_t comm_digits;
	char host[33], name[33];
};

struct __attribute__((packed)) rec_coll {
	uint64_t comm, seq, nccl_start, start, end, median;
	int32_t rank, cpu, pcpu[4];
	uint8_t npcpu, func, is_p2p, dtype;
	int32_t peer;			/* added: older summaries lack it */
};

struct __attribute__((packed)) rec_episode {
	uint8_t kind, source;
	int32_t cpu, cpu2, irq;
	uint64_t start, dur, a, b, c;
	char name[HVN_NAME_LEN + 1];
};

struct __attribute__((packed)) rec_contrib {
	int32_t cpu, storm_irq, nmig;
	uint8_t why;
	double unexpl, lsteal, lirq, steal, storm, dev_storm, storm_top;
	char storm_name[HVN_NAME_LEN + 1];
	struct rec_episode mig;
};

/* A stall's CPUs follow its fixed part: a field for it needs a new type. */
struct __attribute__((packed)) rec_stall {
	uint32_t coll;
	int32_t cause, ncpu;
	uint64_t lost_ns;
	double explained;
	char verdict[160];
	/* then ncpu struct rec_contrib */
};

static void ep_out(struct rec_episode *r, const struct hvn_episode *e)
{
	*r = (struct rec_episode){ .kind = e->kind, .source = e->source,
				   .cpu = e->cpu, .cpu2 = e->cpu2, .irq = e->irq,
				   .start = e->start, .dur = e->dur, .a = e->a,
				   .b = e->b, .c = e->c };
	memcpy(r->name, e->name, sizeof(r->name));
}

static void ep_in(struct hvn_episode *e, const struct rec_episode *r)
{
	*e = (struct hvn_episode){ .kind = r->kind, .source = r->source,
				   .cpu = r->cpu, .cpu2 = r->cpu2, .irq = r->irq,
				   .start = r->start, .dur = r->dur, .a = r->a,
				   .b = r->b, .c = r->c };
	memcpy(e->name, r->name, sizeof(e->name));
	e->name[sizeof(e->name) - 1] = '\0';
}

static int put(FILE *f, uint16_t type, const void *a, uint32_t alen,
	       const void *b, uint32_t blen)
{
	struct rec_hdr h = { type, 0, alen + blen };

	return fwrite(&h, sizeof(h), 1, f) != 1 ||
	       fwrite(a, 1, alen, f) != alen ||
	       (blen && fwrite(b, 1, blen, f) != blen) ? -1 : 0;
}

bool hvn_summary_is(const char *path)
{
	char magic[8];
	FILE *f = fopen(path, "rb");
	bool is;

	if (!f)
		return false;
	is = fread(magic, 1, 8, f) == 8 && !memcmp(magic, HVN_SUMMARY_MAGIC, 8);
	fclose(f);
	return is;
}

int hvn_summary_write(const char *path, const char *host,
		      const struct hvn_corr *x)
{
	char tmp[4200], name[128] = "";
	struct rec_end end = { .nproc = x->nproc, .nep = x->nep };
	uint32_t *map = calloc(x->ncoll + 1, sizeof(*map));
	struct rec_contrib *rc;
	size_t maxcpu = 1;
	uint64_t counts[2] = { x->nccl_records, x->nccl_bad };
	uint32_t n = 0;
	int fd, err = 0;
	FILE *f;

	for (size_t i = 0; i < x->nst; i++)
		if ((size_t)x->st[i].ncpu > maxcpu)
			maxcpu = x->st[i].ncpu;
	rc = calloc(maxcpu, sizeof(*rc));
	snprintf(tmp, sizeof(tmp), "%s.hvnoise-tmp", path);
	fd = map && rc ? hvn_create(tmp, true) : -1;
	f = fd < 0 ? NULL : fdopen(fd, "wb");
	if (!f) {
		hvn_err("cannot create %s: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(map);
		free(rc);
		return HVN_EXIT_FAIL;
	}
	snprintf(name, sizeof(name), "%s", host);
	err |= fwrite(HVN_SUMMARY_MAGIC, 8, 1, f) != 1;
	err |= put(f, REC_HOST, name, sizeof(name), NULL, 0);
	err |= put(f, REC_COUNTS, counts, sizeof(counts), NULL, 0);
	{
		struct rec_seen r = { .detector_events = x->detector_events,
				      .irq_events = x->irq_events };

		memcpy(r.source, x->source, sizeof(r.source));
		err |= put(f, REC_SEEN, &r, sizeof(r), NULL, 0);
	}
	for (int i = 0; i < x->an.nclk; i++)
		err |= put(f, REC_CLOCK, &x->an.clk[i], 16, NULL, 0);
	for (int32_t c = 0; c < HVN_MAX_CPUS; c++)
		if (x->irq_cpu[c])
			err |= put(f, REC_IRQCPU, &c, 4, NULL, 0);
	for (size_t i = 0; i < x->nproc; i++) {
		const struct hvn_proc *p = &x->proc[i];
		struct rec_proc r = { .comm = p->comm, .mono = p->mono,
				      .real = p->real, .rank = p->rank,
				      .nranks = p->nranks, .pid = p->pid,
				      .comm_digits = p->comm_digits };

		memcpy(r.host, p->host, sizeof(r.host));
		memcpy(r.name, p->name, sizeof(r.name));
		err |= put(f, REC_PROC, &r, sizeof(r), NULL, 0);
	}
	/* The join follows waits through sends and receives too. */
	for (size_t i = 0; i < x->ncoll; i++) {
		const struct hvn_coll *c = &x->coll[i];
		struct rec_coll r = {
			.comm = c->comm, .seq = c->seq,
			.nccl_start = c->nccl_start, .start = c->start,
			.end = c->end, .median = c->median, .rank = c->rank,
			.cpu = c->cpu,
			.pcpu = { c->pcpu[0], c->pcpu[1], c->pcpu[2], c->pcpu[3] },
			.npcpu = c->npcpu, .func = c->func,
			.is_p2p = c->is_p2p, .dtype = c->dtype, .peer = c->peer };

		map[i] = ++n;
		end.ncoll++;
		err |= put(f, REC_COLL, &r, sizeof(r), NULL, 0);
	}
	for (size_t i = 0; i < x->nst; i++) {
		const struct hvn_stall *s = &x->st[i];
		struct rec_stall r = { .cause = s->cause, .ncpu = s->ncpu,
				       .lost_ns = s->lost_ns,
				       .explained = s->explained };

		if (s->coll >= x->ncoll || !map[s->coll])
			continue;
		r.coll = map[s->coll] - 1;
		memcpy(r.verdict, s->verdict, sizeof(r.verdict));
		for (int j = 0; j < s->ncpu; j++) {
			const struct hvn_contrib *k = &s->c[j];

			rc[j] = (struct rec_contrib){
				.cpu = k->cpu, .storm_irq = k->storm_irq,
				.nmig = k->nmig, .why = k->why,
				.unexpl = k->unexpl, .lsteal = k->lsteal,
				.lirq = k->lirq, .steal = k->steal,
				.storm = k->storm, .dev_storm = k->dev_storm,
				.storm_top = k->storm_top };
			memcpy(rc[j].storm_name, k->storm_name,
			       sizeof(rc[j].storm_name));
			ep_out(&rc[j].mig, &k->mig);
		}
		end.nst++;
		err |= put(f, REC_STALL, &r, sizeof(r), rc,
			   s->ncpu * sizeof(*rc));
	}
	for (size_t i = 0; i < x->nep; i++) {
		struct rec_episode r;

		ep_out(&r, &x->ep[i]);
		err |= put(f, REC_EPISODE, &r, sizeof(r), NULL, 0);
	}
	err |= put(f, REC_END, &end, sizeof(end), NULL, 0);
	free(map);
	free(rc);
	if (fflush(f) || ferror(f))
		err = 1;
	if (fclose(f))
		err = 1;
	if (err || rename(tmp, path)) {
		hvn_err("writing %s: %s", path, strerror(errno ? errno : EIO));
		unlink(tmp);
		return HVN_EXIT_FAIL;
	}
	return 0;
}

/* One record's body: at least @want bytes, the known prefix copied. */
static int body(FILE *f, const char *path, uint64_t off, const struct rec_hdr *h,
		void *dst, size_t want, void **rest)
{
	uint8_t *b;

	if (h->size < want || h->size > (1u << 24)) {
		hvn_err("%s: bad summary record at offset %llu (type %u, %u bytes, want %zu)",
			path, (unsigned long long)off, h->type, h->size, want);
		return -1;
	}
	b = malloc(h->size ? h->size : 1);
	if (!b || fread(b, 1, h->size, f) != h->size) {
		hvn_err("%s: summary cut short at offset %llu", path,
			(unsigned long long)off);
		free(b);
		return -1;
	}
	memcpy(dst, b, want);
	if (rest)
		*rest = b;
	else
		free(b);
	return 0;
}

#define GROW(arr, cap, n) ((arr) = hvn_corr_grow((arr), &(cap), (n), sizeof(*(arr))))

static int read_rec(FILE *f, const char *path, uint64_t off,
		    const struct rec_hdr *h, struct hvn_corr *x, char *host,
		    size_t hlen, bool *ended)
{
	union {
		struct rec_end end;
		char host[128];
		uint64_t counts[2];
		struct hvn_clock_pair clk;
		int32_t cpu;
		struct rec_proc p;
		struct rec_coll c;
		struct rec_stall s;
		struct rec_episode e;
		struct rec_seen seen;
	} u;
	void *rest = NULL;
	const char *bad = NULL;

	switch (h->type) {
	case REC_END:
		if (body(f, path, off, h, &u.end, sizeof(u.end), NULL))
			return -1;
		if (u.end.nproc != x->nproc || u.end.ncoll != x->ncoll ||
		    u.end.nst != x->nst || u.end.nep != x->nep) {
			bad = "its end counts other records than came before it";
			break;
		}
		*ended = true;
		return 0;
	case REC_HOST:
		if (body(f, path, off, h, &u.host, sizeof(u.host), NULL))
			return -1;
		snprintf(host, hlen, "%.*s", (int)sizeof(u.host), u.host);
		return 0;
	case REC_COUNTS:
		if (body(f, path, off, h, &u.counts, sizeof(u.counts), NULL))
			return -1;
		x->nccl_records = u.counts[0];
		x->nccl_bad = u.counts[1];
		return 0;
	case REC_SEEN:
		if (body(f, path, off, h, &u.seen, sizeof(u.seen), NULL))
			return -1;
		snprintf(x->source, sizeof(x->source), "%.*s",
			 (int)sizeof(u.seen.source) - 1, u.seen.source);
		x->detector_events = u.seen.detector_events;
		x->irq_events = u.seen.irq_events;
		return 0;
	case REC_CLOCK:
		if (body(f, path, off, h, &u.clk, sizeof(u.clk), NULL))
			return -1;
		hvn_an_add_clock(&x->an, u.clk.mono, u.clk.real);
		return 0;
	case REC_IRQCPU:
		if (body(f, path, off, h, &u.cpu, sizeof(u.cpu), NULL))
			return -1;
		if (u.cpu < 0 || u.cpu >= HVN_MAX_CPUS)
			bad = "an IRQ CPU out of range";
		else
			x->irq_cpu[u.cpu] = 1;
		break;
	case REC_PROC:
		if (body(f, path, off, h, &u.p, sizeof(u.p), NULL))
			return -1;
		GROW(x->proc, x->proc_cap, x->nproc);
		x->proc[x->nproc] = (struct hvn_proc){
			.comm = u.p.comm, .rank = u.p.rank, .nranks = u.p.nranks,
			.pid = u.p.pid, .mono = u.p.mono, .real = u.p.real,
			.file = NULL, .comm_digits = u.p.comm_digits };
		snprintf(x->proc[x->nproc].host, sizeof(x->proc->host), "%.32s", u.p.host);
		snprintf(x->proc[x->nproc].name, sizeof(x->proc->name), "%.32s", u.p.name);
		x->nproc++;
		return 0;
	case REC_COLL:
		u.c.peer = -1;
		if (body(f, path, off, h, &u.c,
			 h->size < sizeof(u.c) ? offsetof(struct rec_coll, peer) :
			 sizeof(u.c), NULL))
			return -1;
		if (u.c.npcpu > 4 || u.c.end < u.c.start) {
			bad = "a collective's CPUs or times";
			break;
		}
		GROW(x->coll, x->coll_cap, x->ncoll);
		x->coll[x->ncoll++] = (struct hvn_coll){
			.comm = u.c.comm, .seq = u.c.seq, .start = u.c.start,
			.nccl_start = u.c.nccl_start, .end = u.c.end,
			.median = u.c.median, .rank = u.c.rank, .cpu = u.c.cpu,
			.pcpu = { u.c.pcpu[0], u.c.pcpu[1], u.c.pcpu[2], u.c.pcpu[3] },
			.npcpu = u.c.npcpu, .func = u.c.func,
			.is_p2p = u.c.is_p2p, .dtype = u.c.dtype, .peer = u.c.peer };
		return 0;
	case REC_STALL: {
		struct hvn_stall *s;
		const struct rec_contrib *rc;

		if (body(f, path, off, h, &u.s, sizeof(u.s), &rest))
			return -1;
		if (u.s.coll >= x->ncoll || u.s.cause < 0 || u.s.cause > 4 ||
		    u.s.ncpu < 0 || u.s.ncpu > HVN_MAX_CPUS ||
		    h->size < sizeof(u.s) + (uint64_t)u.s.ncpu * sizeof(*rc)) {
			bad = "a stall's collective, cause or CPUs";
			break;
		}
		x->st = realloc(x->st, (x->nst + 1) * sizeof(*x->st));
		if (!x->st) {
			free(rest);
			hvn_err("out of memory");
			return -1;
		}
		s = &x->st[x->nst++];
		memset(s, 0, sizeof(*s));
		s->coll = u.s.coll;
		s->cause = u.s.cause;
		s->lost_ns = u.s.lost_ns;
		s->explained = u.s.explained;
		if (hvn_stall_reserve(s, u.s.ncpu)) {
			free(rest);
			hvn_err("out of memory");
			return -1;
		}
		s->ncpu = u.s.ncpu;
		snprintf(s->verdict, sizeof(s->verdict), "%.159s", u.s.verdict);
		rc = (const struct rec_contrib *)((uint8_t *)rest + sizeof(u.s));
		for (int j = 0; j < s->ncpu; j++) {
			struct rec_contrib r;
			struct hvn_contrib *k = &s->c[j];

			memcpy(&r, &rc[j], sizeof(r));
			*k = (struct hvn_contrib){
				.cpu = r.cpu, .why = r.why, .unexpl = r.unexpl,
				.lsteal = r.lsteal, .lirq = r.lirq,
				.steal = r.steal, .storm = r.storm,
				.dev_storm = r.dev_storm, .storm_irq = r.storm_irq,
				.storm_top = r.storm_top, .nmig = r.nmig };
			snprintf(k->storm_name, sizeof(k->storm_name), "%.*s",
				 HVN_NAME_LEN, r.storm_name);
			ep_in(&k->mig, &r.mig);
		}
		free(rest);
		return 0;
	}
	case REC_EPISODE:
		if (body(f, path, off, h, &u.e, sizeof(u.e), NULL))
			return -1;
		if (u.e.kind > HVN_EP_MIGRATE) {
			bad = "an episode's kind";
			break;
		}
		GROW(x->ep, x->ep_cap, x->nep);
		ep_in(&x->ep[x->nep++], &u.e);
		return 0;
	default:			/* a newer writer's: skipped */
		if (h->size > (1u << 24) || fseek(f, h->size, SEEK_CUR)) {
			hvn_err("%s: bad summary record at offset %llu (type %u, %u bytes)",
				path, (unsigned long long)off, h->type, h->size);
			return -1;
		}
		return 0;
	}
	free(rest);
	if (bad) {
		hvn_err("%s: bad summary record at offset %llu: %s", path,
			(unsigned long long)off, bad);
		return -1;
	}
	return 0;
}

int hvn_summary_read(const char *path, struct hvn_corr *x,
		     struct hvn_schema *schema, char *host, size_t hlen)
{
	FILE *f = fopen(path, "rb");
	char magic[8];
	uint64_t off = 8;
	struct rec_hdr h;
	bool ended = false;
	int ret = 0;

	if (!f) {
		hvn_err("%s: %s", path, strerror(errno));
		return HVN_EXIT_BADFILE;
	}
	x->trace = path;
	x->schema = schema;
	x->keep_episodes = true;
	/* Until its REC_SEEN says: an older writer's has none, and its
	 * host is not to be called unseen for that. */
	x->detector_events = UINT64_MAX;
	host[0] = '\0';
	if (hvn_an_init(&x->an, schema)) {
		fclose(f);
		return HVN_EXIT_FAIL;
	}
	if (fread(magic, 1, 8, f) != 8 || memcmp(magic, HVN_SUMMARY_MAGIC, 8)) {
		hvn_err("%s: not an hvnoise summary (no %s magic)", path,
			HVN_SUMMARY_MAGIC);
		fclose(f);
		return HVN_EXIT_BADFILE;
	}
	for (;;) {
		size_t got = fread(&h, 1, sizeof(h), f);

		if (!got && feof(f))
			break;
		if (ended) {
			hvn_err("%s: records after its end, at offset %llu", path,
				(unsigned long long)off);
			ret = HVN_EXIT_BADFILE;
			break;
		}
		if (got != sizeof(h)) {
			hvn_err("%s: summary cut short at offset %llu", path,
				(unsigned long long)off);
			ret = HVN_EXIT_BADFILE;
			break;
		}
		if (read_rec(f, path, off, &h, x, host, hlen, &ended)) {
			ret = HVN_EXIT_BADFILE;
			break;
		}
		off += sizeof(h) + h.size;
	}
	fclose(f);
	if (!ret && !ended) {
		hvn_err("%s: summary cut short at offset %llu (no end record)",
			path, (unsigned long long)off);
		ret = HVN_EXIT_BADFILE;
	}
	if (!ret && !host[0]) {
		hvn_err("%s: a summary without its host", path);
		ret = HVN_EXIT_BADFILE;
	}
	hvn_an_finish(&x->an);
	return ret;
}
