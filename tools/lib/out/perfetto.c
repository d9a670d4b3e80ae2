// SPDX-License-Identifier: GPL-2.0
/* Chrome trace events (out/perfetto.h): correlate's collectives and the
 * noise beside them, one host or many, and report's noise timeline. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hvn.h"
#include "analysis/fleet.h"
#include "analysis/stalls.h"
#include "out/jsonw.h"
#include "out/perfetto.h"
#include "tracedat/tracedat.h"

int hvn_pf_open(struct hvn_pf *p, const char *path)
{
	memset(p, 0, sizeof(*p));
	p->path = path;
	p->named_pid = -1;
	p->named = calloc(HVN_MAX_CPUS, 1);
	p->o = p->named ? fopen(path, "w") : NULL;
	if (!p->o) {
		hvn_err("cannot write %s: %s", path, strerror(errno ? errno : ENOMEM));
		free(p->named);
		return HVN_EXIT_FAIL;
	}
	fprintf(p->o, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
		"{\"ph\":\"M\",\"pid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"hvnoise\"}}");
	return 0;
}

int hvn_pf_close(struct hvn_pf *p)
{
	int bad;

	fprintf(p->o, "\n]}\n");
	bad = ferror(p->o);
	bad |= fclose(p->o);
	free(p->named);
	if (bad) {
		hvn_err("writing %s: %s", p->path, strerror(errno ? errno : EIO));
		return HVN_EXIT_FAIL;
	}
	return 0;
}

void hvn_pf_name(struct hvn_pf *p, int pid, int tid, const char *name)
{
	if (tid < 0)
		fprintf(p->o, ",\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":",
			pid);
	else
		fprintf(p->o, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":",
			pid, tid);
	hvn_json_str(p->o, name);
	fprintf(p->o, "}}");
}

void hvn_pf_slice(struct hvn_pf *p, int pid, int tid, double ts_us,
		  double dur_us, const char *name, const char *args)
{
	fprintf(p->o, ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"name\":",
		pid, tid, ts_us, dur_us);
	hvn_json_str(p->o, name);
	fprintf(p->o, ",\"args\":{%s}}", args ? args : "");
}

void hvn_pf_flow(struct hvn_pf *p, uint64_t id, const char *name, int pid0,
		 int tid0, double ts0, int pid1, int tid1, double ts1)
{
	for (int end = 0; end < 2; end++) {
		fprintf(p->o, ",\n{\"ph\":\"%s\",\"id\":%llu,\"pid\":%d,\"tid\":%d,\"ts\":%.3f,%s\"cat\":\"hvnoise\",\"name\":",
			end ? "f" : "s", (unsigned long long)id,
			end ? pid1 : pid0, end ? tid1 : tid0, end ? ts1 : ts0,
			end ? "\"bp\":\"e\"," : "");
		hvn_json_str(p->o, name);
		fprintf(p->o, "}");
	}
}

void hvn_pf_episode(struct hvn_pf *p, int pid, const struct hvn_episode *e,
		    double ts_us)
{
	char name[96], args[128];
	double dur = 0;

	if (e->cpu < 0 || e->cpu >= HVN_MAX_CPUS || e->kind > HVN_EP_MIGRATE)
		return;
	if (pid != p->named_pid) {
		memset(p->named, 0, HVN_MAX_CPUS);
		p->named_pid = pid;
	}
	if (!p->named[e->cpu]) {
		snprintf(name, sizeof(name), "CPU %d", e->cpu);
		hvn_pf_name(p, pid, HVN_PF_CPU_TID + e->cpu, name);
		p->named[e->cpu] = 1;
	}
	args[0] = '\0';
	switch (e->kind) {
	case HVN_EP_LOST:
		dur = e->dur;
		snprintf(name, sizeof(name), "lost");
		snprintf(args, sizeof(args),
			 "\"unexplained_ms\":%.3f,\"steal_ms\":%.3f,\"irq_ms\":%.3f",
			 e->a / 1e6, e->b / 1e6, e->c / 1e6);
		break;
	case HVN_EP_STEAL:
		dur = e->a;		/* over its sampling window */
		snprintf(name, sizeof(name), "steal");
		snprintf(args, sizeof(args), "\"steal_ms\":%.3f", e->dur / 1e6);
		break;
	case HVN_EP_STORM:
		dur = e->dur;
		snprintf(name, sizeof(name), "storm %s", e->name);
		snprintf(args, sizeof(args), "\"irq\":%d,\"count\":%llu", e->irq,
			 (unsigned long long)e->a);
		break;
	default:
		fprintf(p->o, ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"name\":",
			pid, HVN_PF_CPU_TID + e->cpu, ts_us);
		snprintf(name, sizeof(name), "IRQ %d %s from CPU %d", e->irq,
			 e->name, e->cpu2);
		hvn_json_str(p->o, name);
		fprintf(p->o, "}");
		return;
	}
	hvn_pf_slice(p, pid, HVN_PF_CPU_TID + e->cpu, ts_us, dur / 1e3, name, args);
}

struct noise_pass {
	struct hvn_pf *p;
	const struct hvn_schema *s;
	const struct hvn_analysis *an;
	int pid;
};

static double us_of(const struct hvn_analysis *an, uint64_t mono)
{
	return (an->nclk ? hvn_an_mono_to_real(an, mono) : mono) / 1e3;
}

static void noise_event(void *vn, int cpu, uint64_t ts, const uint8_t *d,
			uint32_t len)
{
	struct noise_pass *n = vn;
	struct hvn_episode e;
	int k = hvn_episode_decode(n->s, ts, d, len, &e);

	(void)cpu;
	if (k != HVN_EV_LOST && k != HVN_EV_STEAL && k != HVN_EV_STORM &&
	    k != HVN_EV_MIGRATE)
		return;
	if ((n->an->since && e.start < n->an->since) ||
	    (n->an->until && e.start >= n->an->until))
		return;
	hvn_pf_episode(n->p, n->pid, &e, us_of(n->an, e.start));
}

int hvn_pf_noise(struct hvn_pf *p, struct hvn_tdat *t,
		 const struct hvn_schema *s, const struct hvn_analysis *an,
		 int pid)
{
	struct noise_pass n = { p, s, an, pid };
	struct hvn_rb rb = { .event = noise_event, .ctx = &n };

	return hvn_tdat_stream(t, &rb);
}

/* A rank's track, named once. */
static void rank_track(struct hvn_pf *p, int pid, int32_t rank, uint8_t *seen,
		       size_t nseen)
{
	char name[32];

	if (rank >= 0 && (size_t)rank < nseen) {
		if (seen[rank])
			return;
		seen[rank] = 1;
	}
	snprintf(name, sizeof(name), "rank %d", rank);
	hvn_pf_name(p, pid, rank, name);
}

static void coll_slice(struct hvn_pf *p, int pid, const struct hvn_coll *c,
		       double ts_us)
{
	char name[48], args[160];

	snprintf(name, sizeof(name), "%s%s", c->stall ? "STALL " : "",
		 hvn_nccl_fn(c->func));
	snprintf(args, sizeof(args),
		 "\"seq\":%lld,\"comm\":\"%016llx\",\"median_ms\":%.3f",
		 c->seq == UINT64_MAX ? -1 : (long long)c->seq,
		 (unsigned long long)c->comm, c->median / 1e6);
	hvn_pf_slice(p, pid, c->rank, ts_us, (c->end - c->start) / 1e3, name, args);
}

/* Ranks' tracks are named once each: ranks below this are remembered. */
#define RANKS_SEEN	65536

int hvn_corr_write_perfetto(struct hvn_corr *x, struct hvn_tdat *t,
			    const char *out)
{
	struct hvn_pf p;
	uint8_t *seen = calloc(RANKS_SEEN, 1);
	int ret;

	if (!seen)
		return HVN_EXIT_FAIL;
	ret = hvn_pf_open(&p, out);
	if (ret) {
		free(seen);
		return ret;
	}
	hvn_pf_name(&p, 1, -1, "NCCL ranks");
	hvn_pf_name(&p, 2, -1, "CPUs (hvnoise)");
	for (size_t i = 0; i < x->ncoll; i++) {
		const struct hvn_coll *c = &x->coll[i];

		rank_track(&p, 1, c->rank, seen, RANKS_SEEN);
		coll_slice(&p, 1, c, us_of(&x->an, c->start));
	}
	free(seen);
	hvn_pf_noise(&p, t, x->schema, &x->an, 2);
	return hvn_pf_close(&p);
}

/*
 * Where the arrow from culprit @c starts: within its noise episode on the
 * CPU that explains the most of it (trace time), or -1 with no episode.
 */
static int32_t noise_at(const struct hvn_fleet *f, const struct hvn_fleet_culprit *c,
			uint64_t *at)
{
	const struct hvn_corr *x = f->h[c->host].x;
	double best = -1;
	int32_t cpu = -1;

	for (int j = 0; j < c->why.ncpu; j++) {
		const struct hvn_contrib *k = &c->why.c[j];
		double v = k->unexpl + k->lsteal + k->lirq + k->steal + k->storm;

		if (v > best) {
			best = v;
			cpu = k->cpu;
		}
	}
	for (size_t i = 0; cpu >= 0 && i < x->nep; i++) {
		const struct hvn_episode *e = &x->ep[i];
		uint64_t end = e->start + (e->kind == HVN_EP_STEAL ? e->a : e->dur);
		uint64_t lo = e->start > c->why_start ? e->start : c->why_start;
		uint64_t hi = end < c->why_end ? end : c->why_end;

		if (e->cpu == cpu && e->kind != HVN_EP_MIGRATE && hi > lo) {
			*at = lo + (hi - lo) / 2;
			return cpu;
		}
	}
	return -1;
}

int hvn_fleet_write_perfetto(const struct hvn_fleet *f, const char *out)
{
	struct hvn_pf p;
	uint8_t *seen = malloc(RANKS_SEEN);
	uint64_t flow = 0;
	int ret;

	if (!seen)
		return HVN_EXIT_FAIL;
	ret = hvn_pf_open(&p, out);
	if (ret) {
		free(seen);
		return ret;
	}
	for (size_t i = 0; i < f->nh; i++) {
		const struct hvn_fleet_host *h = &f->h[i];
		const struct hvn_corr *x = h->x;
		int pid = (int)i + 1;

		hvn_pf_name(&p, pid, -1, h->host);
		memset(seen, 0, RANKS_SEEN);
		for (size_t k = 0; k < x->ncoll; k++) {
			const struct hvn_coll *c = &x->coll[k];

			rank_track(&p, pid, c->rank, seen, RANKS_SEEN);
			coll_slice(&p, pid, c, hvn_fleet_time(f, i, c->start) / 1e3);
		}
		for (size_t k = 0; k < x->nep; k++)
			hvn_pf_episode(&p, pid, &x->ep[k],
				       hvn_fleet_time(f, i, x->ep[k].start) / 1e3);
	}
	free(seen);
	/* From each culprit's noise to the ranks it held: the first that
	 * waited (or came late for it) in its stall. */
	for (size_t i = 0; i < f->nst; i++) {
		const struct hvn_fleet_stall *s = &f->st[i];

		uint32_t first = s->nguilty + s->nmaybe_r;

		for (uint32_t k = 0; k < s->ncul && first < s->nr; k++) {
			const struct hvn_fleet_culprit *c = &s->cul[k];
			const struct hvn_fleet_rank *w = &s->r[first];
			uint64_t at = 0;
			int32_t cpu = c->why.cause ? noise_at(f, c, &at) : -1;
			char name[64];

			if (cpu < 0)
				continue;
			snprintf(name, sizeof(name), "held the job %.3f ms",
				 c->delay_ns / 1e6);
			hvn_pf_flow(&p, ++flow, name, (int)c->host + 1,
				    HVN_PF_CPU_TID + cpu,
				    hvn_fleet_time(f, c->host, at) / 1e3,
				    (int)w->host + 1, w->rank,
				    ((double)w->arrive + (double)w->end) / 2e3);
		}
	}
	return hvn_pf_close(&p);
}
