// SPDX-License-Identifier: GPL-2.0
/*
 * A host's summary (analysis/summary.h): the analysis put into the
 * records of inputs/summary.h, and made again from them.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "hvn.h"
#include "hvnoise/nccl.h"
#include "analysis/summary.h"

static void ep_out(struct hvn_sum_episode *r, const struct hvn_episode *e)
{
	*r = (struct hvn_sum_episode){ .kind = e->kind, .source = e->source,
				   .cpu = e->cpu, .cpu2 = e->cpu2, .irq = e->irq,
				   .start = e->start, .dur = e->dur, .a = e->a,
				   .b = e->b, .c = e->c };
	memcpy(r->name, e->name, sizeof(r->name));
}

static void ep_in(struct hvn_episode *e, const struct hvn_sum_episode *r)
{
	*e = (struct hvn_episode){ .kind = r->kind, .source = r->source,
				   .cpu = r->cpu, .cpu2 = r->cpu2, .irq = r->irq,
				   .start = r->start, .dur = r->dur, .a = r->a,
				   .b = r->b, .c = r->c };
	memcpy(e->name, r->name, sizeof(e->name));
	e->name[sizeof(e->name) - 1] = '\0';
}

int hvn_summary_write(const char *path, const char *host,
		      const struct hvn_corr *x)
{
	char tmp[4200], name[128] = "";
	struct hvn_sum_end end = { .nproc = x->nproc, .nep = x->nep };
	uint32_t *map = calloc(x->ncoll + 1, sizeof(*map));
	struct hvn_sum_contrib *rc;
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
	err |= hvn_summary_start(f);
	err |= hvn_summary_put(f, HVN_SUM_HOST, name, sizeof(name), NULL, 0);
	err |= hvn_summary_put(f, HVN_SUM_COUNTS, counts, sizeof(counts), NULL, 0);
	{
		struct hvn_sum_seen r = { .detector_events = x->detector_events,
				      .irq_events = x->irq_events };

		memcpy(r.source, x->source, sizeof(r.source));
		err |= hvn_summary_put(f, HVN_SUM_SEEN, &r, sizeof(r), NULL, 0);
	}
	for (int i = 0; i < x->an.nclk; i++) {
		struct hvn_sum_clock c = { x->an.clk[i].mono, x->an.clk[i].real };

		err |= hvn_summary_put(f, HVN_SUM_CLOCK, &c, sizeof(c), NULL, 0);
	}
	for (int32_t c = 0; c < HVN_MAX_CPUS; c++)
		if (x->irq_cpu[c])
			err |= hvn_summary_put(f, HVN_SUM_IRQCPU, &c, 4, NULL, 0);
	for (size_t i = 0; i < x->nproc; i++) {
		const struct hvn_proc *p = &x->proc[i];
		struct hvn_sum_proc r = { .comm = p->comm, .mono = p->mono,
				      .real = p->real, .rank = p->rank,
				      .nranks = p->nranks, .pid = p->pid,
				      .comm_digits = p->comm_digits };

		memcpy(r.host, p->host, sizeof(r.host));
		memcpy(r.name, p->name, sizeof(r.name));
		err |= hvn_summary_put(f, HVN_SUM_PROC, &r, sizeof(r), NULL, 0);
	}
	/* The join follows waits through sends and receives too. */
	for (size_t i = 0; i < x->ncoll; i++) {
		const struct hvn_coll *c = &x->coll[i];
		struct hvn_sum_coll r = {
			.comm = c->comm, .seq = c->seq,
			.nccl_start = c->nccl_start, .start = c->start,
			.end = c->end, .median = c->median, .rank = c->rank,
			.cpu = c->cpu,
			.pcpu = { c->pcpu[0], c->pcpu[1], c->pcpu[2], c->pcpu[3] },
			.npcpu = c->npcpu, .func = c->func,
			.is_p2p = c->is_p2p, .dtype = c->dtype, .peer = c->peer };

		map[i] = ++n;
		end.ncoll++;
		err |= hvn_summary_put(f, HVN_SUM_COLL, &r, sizeof(r), NULL, 0);
	}
	for (size_t i = 0; i < x->nst; i++) {
		const struct hvn_stall *s = &x->st[i];
		struct hvn_sum_stall r = { .cause = s->cause, .ncpu = s->ncpu,
				       .lost_ns = s->lost_ns,
				       .explained = s->explained };

		if (s->coll >= x->ncoll || !map[s->coll])
			continue;
		r.coll = map[s->coll] - 1;
		memcpy(r.verdict, s->verdict, sizeof(r.verdict));
		for (int j = 0; j < s->ncpu; j++) {
			const struct hvn_contrib *k = &s->c[j];

			rc[j] = (struct hvn_sum_contrib){
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
		err |= hvn_summary_put(f, HVN_SUM_STALL, &r, sizeof(r), rc,
			   s->ncpu * sizeof(*rc));
	}
	for (size_t i = 0; i < x->nep; i++) {
		struct hvn_sum_episode r;

		ep_out(&r, &x->ep[i]);
		err |= hvn_summary_put(f, HVN_SUM_EPISODE, &r, sizeof(r), NULL, 0);
	}
	err |= hvn_summary_put(f, HVN_SUM_END, &end, sizeof(end), NULL, 0);
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

#define GROW(arr, cap, n) ((arr) = hvn_corr_grow((arr), &(cap), (n), sizeof(*(arr))))

/* A collective's record appended to @x's: NULL, or what is wrong in it. */
static const char *coll_in(struct hvn_corr *x, const struct hvn_sum_coll *c)
{
	if (c->npcpu > 4 || c->end < c->start)
		return "a collective's CPUs or times";
	GROW(x->coll, x->coll_cap, x->ncoll);
	x->coll[x->ncoll++] = (struct hvn_coll){
		.comm = c->comm, .seq = c->seq, .start = c->start,
		.nccl_start = c->nccl_start, .end = c->end,
		.median = c->median, .rank = c->rank, .cpu = c->cpu,
		.pcpu = { c->pcpu[0], c->pcpu[1], c->pcpu[2], c->pcpu[3] },
		.npcpu = c->npcpu, .func = c->func,
		.is_p2p = c->is_p2p, .dtype = c->dtype, .peer = c->peer };
	return NULL;
}

/* One record into @x: 0, or -1 with why said. */
static int take(const struct hvn_sum_reader *rd, const struct hvn_sum_rec *r,
		struct hvn_corr *x, char *host, size_t hlen)
{
	const char *bad = NULL;

	switch (r->type) {
	case HVN_SUM_END:
		if (r->u.end.nproc != x->nproc || r->u.end.ncoll != x->ncoll ||
		    r->u.end.nst != x->nst || r->u.end.nep != x->nep)
			bad = "its end counts other records than came before it";
		break;
	case HVN_SUM_HOST:
		snprintf(host, hlen, "%s", r->u.host);
		break;
	case HVN_SUM_COUNTS:
		x->nccl_records = r->u.counts[0];
		x->nccl_bad = r->u.counts[1];
		break;
	case HVN_SUM_SEEN:
		snprintf(x->source, sizeof(x->source), "%.*s",
			 (int)sizeof(r->u.seen.source) - 1, r->u.seen.source);
		x->detector_events = r->u.seen.detector_events;
		x->irq_events = r->u.seen.irq_events;
		break;
	case HVN_SUM_CLOCK:
		hvn_an_add_clock(&x->an, r->u.clk.mono, r->u.clk.real);
		break;
	case HVN_SUM_IRQCPU:
		if (r->u.cpu < 0 || r->u.cpu >= HVN_MAX_CPUS)
			bad = "an IRQ CPU out of range";
		else
			x->irq_cpu[r->u.cpu] = 1;
		break;
	case HVN_SUM_PROC: {
		const struct hvn_sum_proc *p = &r->u.proc;

		GROW(x->proc, x->proc_cap, x->nproc);
		x->proc[x->nproc] = (struct hvn_proc){
			.comm = p->comm, .rank = p->rank, .nranks = p->nranks,
			.pid = p->pid, .mono = p->mono, .real = p->real,
			.file = NULL, .comm_digits = p->comm_digits };
		snprintf(x->proc[x->nproc].host, sizeof(x->proc->host), "%.32s", p->host);
		snprintf(x->proc[x->nproc].name, sizeof(x->proc->name), "%.32s", p->name);
		x->nproc++;
		break;
	}
	case HVN_SUM_COLL:
		bad = coll_in(x, &r->u.coll);
		break;
	case HVN_SUM_STALL: {
		const struct hvn_sum_stall *u = &r->u.stall;
		struct hvn_stall *s;

		if (u->coll >= x->ncoll || u->cause < 0 || u->cause > 4) {
			bad = "a stall's collective, cause or CPUs";
			break;
		}
		x->st = realloc(x->st, (x->nst + 1) * sizeof(*x->st));
		if (!x->st) {
			hvn_err("out of memory");
			return -1;
		}
		s = &x->st[x->nst++];
		memset(s, 0, sizeof(*s));
		s->coll = u->coll;
		s->cause = u->cause;
		s->lost_ns = u->lost_ns;
		s->explained = u->explained;
		if (hvn_stall_reserve(s, u->ncpu)) {
			hvn_err("out of memory");
			return -1;
		}
		s->ncpu = u->ncpu;
		snprintf(s->verdict, sizeof(s->verdict), "%.159s", u->verdict);
		for (int j = 0; j < s->ncpu; j++) {
			struct hvn_sum_contrib c;
			struct hvn_contrib *k = &s->c[j];

			memcpy(&c, &r->contrib[j], sizeof(c));
			*k = (struct hvn_contrib){
				.cpu = c.cpu, .why = c.why, .unexpl = c.unexpl,
				.lsteal = c.lsteal, .lirq = c.lirq,
				.steal = c.steal, .storm = c.storm,
				.dev_storm = c.dev_storm, .storm_irq = c.storm_irq,
				.storm_top = c.storm_top, .nmig = c.nmig };
			snprintf(k->storm_name, sizeof(k->storm_name), "%.*s",
				 HVN_NAME_LEN, c.storm_name);
			ep_in(&k->mig, &c.mig);
		}
		break;
	}
	case HVN_SUM_EPISODE:
		if (r->u.ep.kind > HVN_EP_MIGRATE) {
			bad = "an episode's kind";
			break;
		}
		GROW(x->ep, x->ep_cap, x->nep);
		ep_in(&x->ep[x->nep++], &r->u.ep);
		break;
	}
	if (bad) {
		hvn_summary_bad(rd, bad);
		return -1;
	}
	return 0;
}

/* Collectives a block of the index holds: a slab's reading is as fine. */
#define BLOCK	1024

/* Where the collective just read (@x's last) lies, into @ix. */
static int index_coll(struct hvn_sum_index *ix, const struct hvn_sum_reader *rd,
		      const struct hvn_corr *x)
{
	const struct hvn_coll *c = &x->coll[x->ncoll - 1];
	struct hvn_sum_block *b;

	if ((x->ncoll - 1) % BLOCK == 0) {
		b = realloc(ix->blk, (ix->nblk + 1) * sizeof(*b));
		if (!b)
			return -1;
		ix->blk = b;
		ix->blk[ix->nblk++] = (struct hvn_sum_block){
			.off = rd->f.off, .first = x->ncoll - 1,
			.lo = UINT64_MAX };
	}
	b = &ix->blk[ix->nblk - 1];
	b->n++;
	if (c->start < b->lo)
		b->lo = c->start;
	if (c->end > b->hi)
		b->hi = c->end;
	return 0;
}

static int read_summary(const char *path, struct hvn_corr *x,
			struct hvn_schema *schema, char *host, size_t hlen,
			struct hvn_sum_index *ix)
{
	struct hvn_sum_reader rd;
	struct hvn_sum_rec r;
	int ret = 0, e;

	x->trace = path;
	x->schema = schema;
	x->keep_episodes = true;
	/* Until its HVN_SUM_SEEN says: an older writer's has none, and its
	 * host is not to be called unseen for that. */
	x->detector_events = UINT64_MAX;
	host[0] = '\0';
	if (hvn_summary_open(&rd, path))
		return HVN_EXIT_BADFILE;
	if (hvn_an_init(&x->an, schema)) {
		hvn_summary_close(&rd);
		return HVN_EXIT_FAIL;
	}
	/* Room for as many collectives as the file can hold (records of
	 * this version's size): not grown and copied while read; what is
	 * not touched costs nothing but address space. */
	{
		struct stat sb;

		if (!fstat(fileno(rd.f.f), &sb) && sb.st_size > 0 &&
		    (uint64_t)sb.st_size / (8 + sizeof(struct hvn_sum_coll)) <
		    SIZE_MAX / sizeof(*x->coll) - 1) {
			size_t most = (size_t)sb.st_size /
				      (8 + sizeof(struct hvn_sum_coll)) + 1;

			void *c = most > x->coll_cap ?
				  realloc(x->coll, most * sizeof(*x->coll)) : x->coll;

			if (c) {
				x->coll = c;
				x->coll_cap = most > x->coll_cap ? most : x->coll_cap;
			}
		}
	}
	while ((e = hvn_summary_next(&rd, &r)) > 0) {
		if (take(&rd, &r, x, host, hlen)) {
			e = -1;
			break;
		}
		if (ix && r.type == HVN_SUM_COLL && index_coll(ix, &rd, x)) {
			hvn_err("out of memory");
			hvn_summary_close(&rd);
			hvn_an_finish(&x->an);
			return HVN_EXIT_FAIL;
		}
	}
	hvn_summary_close(&rd);
	if (e < 0)
		ret = HVN_EXIT_BADFILE;
	if (!ret && !host[0]) {
		hvn_err("%s: a summary without its host", path);
		ret = HVN_EXIT_BADFILE;
	}
	hvn_an_finish(&x->an);
	return ret;
}

int hvn_summary_read(const char *path, struct hvn_corr *x,
		     struct hvn_schema *schema, char *host, size_t hlen)
{
	return read_summary(path, x, schema, host, hlen, NULL);
}

int hvn_summary_read_index(const char *path, struct hvn_corr *x,
			   struct hvn_schema *schema, char *host, size_t hlen,
			   struct hvn_sum_index *ix)
{
	return read_summary(path, x, schema, host, hlen, ix);
}

int hvn_summary_colls(const char *path, const struct hvn_sum_index *ix,
		      uint64_t lo, uint64_t hi, struct hvn_corr *x,
		      uint32_t **fidx, size_t *fcap)
{
	struct hvn_sum_reader rd;
	struct hvn_sum_rec r;
	int ret = 0;
	size_t most = 0;

	x->ncoll = 0;

	/* Room for every collective of the blocks read, once: no growth
	 * by doubling of what is held. */
	for (size_t b = 0; b < ix->nblk; b++)
		if (ix->blk[b].lo <= hi && ix->blk[b].hi >= lo)
			most += ix->blk[b].n;
	if (most + 1 > x->coll_cap) {
		void *c = realloc(x->coll, (most + 1) * sizeof(*x->coll));

		if (!c)
			return HVN_EXIT_FAIL;
		x->coll = c;
		x->coll_cap = most + 1;
	}
	if (most + 1 > *fcap) {
		void *c = realloc(*fidx, (most + 1) * sizeof(**fidx));

		if (!c)
			return HVN_EXIT_FAIL;
		*fidx = c;
		*fcap = most + 1;
	}
	x->ncoll = 0;
	if (!most)
		return 0;	/* none of its blocks: not opened */
	if (hvn_summary_open(&rd, path))
		return HVN_EXIT_BADFILE;
	/* Read no further than the last block read ends (where the next
	 * begins: the file's end for the last). */
	for (size_t b = 0; b < ix->nblk; b++)
		if (ix->blk[b].lo <= hi && ix->blk[b].hi >= lo)
			rd.f.limit = b + 1 < ix->nblk ? ix->blk[b + 1].off : 0;
	for (size_t b = 0; b < ix->nblk && !ret; b++) {
		const struct hvn_sum_block *k = &ix->blk[b];

		if (k->lo > hi || k->hi < lo)
			continue;
		if (hvn_summary_seek(&rd, k->off)) {
			ret = HVN_EXIT_BADFILE;
			break;
		}
		for (uint32_t i = 0; i < k->n && !ret;) {
			const char *bad;
			int e = hvn_summary_next(&rd, &r);
			uint32_t at;

			/* Another record amid the collectives: not one of them. */
			if (e > 0 && r.type != HVN_SUM_COLL)
				continue;
			if (e <= 0) {
				/* (e < 0 was said) */
				if (!e)
					hvn_summary_bad(&rd, "its collectives end early (the file changed)");
				ret = HVN_EXIT_BADFILE;
				break;
			}
			at = k->first + i++;
			if (r.u.coll.start > hi || r.u.coll.end < lo)
				continue;
			bad = coll_in(x, &r.u.coll);
			if (bad) {
				hvn_summary_bad(&rd, bad);
				ret = HVN_EXIT_BADFILE;
				break;
			}
			*fidx = hvn_corr_grow(*fidx, fcap, x->ncoll - 1, sizeof(**fidx));
			(*fidx)[x->ncoll - 1] = at;
		}
	}
	hvn_summary_close(&rd);
	return ret;
}

void hvn_sum_index_free(struct hvn_sum_index *ix)
{
	free(ix->blk);
	memset(ix, 0, sizeof(*ix));
}
