// SPDX-License-Identifier: GPL-2.0
/* correlate --json: the "hvnoise-correlate" document (hvnoise(8)). */
#include <math.h>
#include <stdio.h>

#include "analysis/fleet.h"
#include "analysis/stalls.h"
#include "out/correlate_json.h"
#include "inputs/torch.h"
#include "out/jsonw.h"

#define SCHEMA_VERSION	1

/* A stall's (or a probe's) CPUs and what each saw of it. */
static void write_cpus(FILE *o, const struct hvn_stall *s)
{
	int n = 0;

	fprintf(o, "[");
	for (int j = 0; j < s->ncpu; j++) {
		const struct hvn_contrib *k = &s->c[j];

		/* Every CPU is judged; an IRQ CPU that saw nothing is left
		 * out of the document (a host may watch hundreds). */
		if (!(k->why & 3) && !(k->unexpl + k->lsteal + k->lirq +
				       k->steal + k->storm) && !k->nmig)
			continue;
		fprintf(o, "%s{\"cpu\":%d,\"proxy\":%s,\"enqueue\":%s,\"irq\":%s,\"lost_unexplained_ns\":%.0f,\"lost_steal_ns\":%.0f,\"lost_irq_ns\":%.0f,\"steal_ns\":%.0f,\"storm_ns\":%.0f,\"storm_irq\":%d,\"storm_name\":",
			n++ ? "," : "", k->cpu, k->why & 1 ? "true" : "false",
			k->why & 2 ? "true" : "false",
			k->why & 4 ? "true" : "false", k->unexpl,
			k->lsteal, k->lirq, k->steal, k->storm,
			k->storm ? k->storm_irq : -1);
		hvn_json_str(o, k->storm_name);
		fprintf(o, ",\"migrations\":%d}", k->nmig);
	}
	fprintf(o, "]");
}

/* A communicator's ranks that no input holds; @n: those written before. */
static void missing_json(FILE *o, const struct hvn_missing *m, size_t n)
{
	fprintf(o, "%s{\"comm\":\"%016llx\",\"nranks\":%d,\"seen\":%d,\"first_missing_rank\":%d}",
		n ? "," : "", (unsigned long long)m->comm, m->nranks, m->nseen,
		m->first_missing);
}

void hvn_corr_write_json(FILE *o, const struct hvn_corr *x,
			 const struct hvn_corr_params *p, const char *path)
{
	static const char *const causes[] = { "none", "hypervisor", "irq",
					      "storm", "migration" };

	fprintf(o, "{\"schema\":\"hvnoise-correlate\",\"schema_version\":%d,\"trace\":",
	       SCHEMA_VERSION);
	hvn_json_str(o, path);
	fprintf(o, ",\"params\":{\"factor\":%g,\"window\":%ld,\"min_ms\":%g,\"min_share\":%g},",
	       p->k, p->window, p->min_ms, p->min_share);
	{
		/* Trace time is signed: a collective of another file may
		 * come before the trace's clock started. */
		int64_t first = INT64_MAX, last = INT64_MIN;

		for (size_t i = 0; i < x->ncoll; i++) {
			if ((int64_t)x->coll[i].start < first)
				first = x->coll[i].start;
			if ((int64_t)x->coll[i].end > last)
				last = x->coll[i].end;
		}
		fprintf(o, "\"first_ns\":%lld,\"last_ns\":%lld,",
		       (long long)(x->ncoll ? first : 0),
		       (long long)(x->ncoll ? last : 0));
	}
	fprintf(o, "\"collectives\":%zu,\"nccl_records\":%llu,\"bad_records\":%llu,\"unjudged\":%llu,\"ranks\":[",
	       x->ncoll, (unsigned long long)x->nccl_records,
	       (unsigned long long)x->nccl_bad, (unsigned long long)x->unjudged);
	for (size_t i = 0; i < x->nproc; i++) {
		fprintf(o, "%s{\"comm\":\"%016llx\",\"rank\":%d,\"nranks\":%d,\"pid\":%d,\"host\":",
		       i ? "," : "", (unsigned long long)x->proc[i].comm,
		       x->proc[i].rank, x->proc[i].nranks, x->proc[i].pid);
		hvn_json_str(o, x->proc[i].host);
		fprintf(o, ",\"name\":");
		hvn_json_str(o, x->proc[i].name);
		fprintf(o, "}");
	}
	fprintf(o, "],\"missing\":[");
	for (size_t i = 0, n = 0; i < x->nmiss; i++)
		if (x->miss[i].nseen < x->miss[i].nranks)
			missing_json(o, &x->miss[i], n++);
	fprintf(o, "],\"stalls\":[");
	for (size_t i = 0; i < x->nst; i++) {
		const struct hvn_stall *s = &x->st[i];
		const struct hvn_coll *c = &x->coll[s->coll];
		int64_t real = hvn_corr_real_of(x, c);

		fprintf(o, "%s{\"comm\":\"%016llx\",\"rank\":%d,\"func\":\"%s\",\"seq\":%lld,\"bytes\":%llu,\"nccl_start_ns\":%lld,\"start_ns\":%lld,\"start_realtime_ns\":%lld,\"duration_ns\":%llu,\"median_ns\":%llu,\"lost_ns\":%llu,\"proxy_cpus\":[",
		       i ? "," : "", (unsigned long long)c->comm, c->rank,
		       hvn_nccl_fn(c->func),
		       c->seq == UINT64_MAX ? -1 : (long long)c->seq,
		       (unsigned long long)(c->count * (c->dtype ? c->dtype : 1)),
		       (long long)c->nccl_start,
		       (long long)c->start,
		       (long long)(real + (int64_t)(c->start - c->nccl_start)),
		       (unsigned long long)(c->end - c->start),
		       (unsigned long long)c->median,
		       (unsigned long long)s->lost_ns);
		for (int j = 0; j < c->npcpu; j++)
			fprintf(o, "%s%d", j ? "," : "", c->pcpu[j]);
		fprintf(o, "],\"enqueue_cpu\":%d,\"cause\":\"%s\",\"verdict\":",
		       c->cpu, causes[s->cause]);
		hvn_json_str(o, s->verdict);
		fprintf(o, ",\"cpus\":");
		write_cpus(o, s);
		fprintf(o, "}");
	}
	fprintf(o, "],\"late\":[");
	for (size_t i = 0; i < x->nlate; i++) {
		const struct hvn_late *l = &x->late[i];
		const struct hvn_proc *pr = hvn_corr_proc_of(x, l->comm, l->rank);

		fprintf(o, "%s{\"comm\":\"%016llx\",\"func\":\"%s\",\"seq\":%llu,\"rank\":%d,\"host\":",
		       i ? "," : "", (unsigned long long)l->comm,
		       hvn_nccl_fn(l->func), (unsigned long long)l->seq, l->rank);
		hvn_json_str(o, pr ? pr->host : "");
		fprintf(o, ",\"late_ns\":%.0f,\"ranks\":%d}", l->late_ms * 1e6,
		       l->nranks);
	}
	fprintf(o, "],\"unfinished\":[");
	for (size_t i = 0; i < x->nunf; i++) {
		const struct hvn_unfinished *u = &x->unf[i];

		fprintf(o, "%s{\"comm\":\"%016llx\",\"func\":\"%s\",\"seq\":%llu,\"p2p\":%s,\"rank\":%d,\"state\":\"%s\",\"start_ns\":%lld,\"start_realtime_ns\":%lld}",
			i ? "," : "", (unsigned long long)u->comm,
			hvn_nccl_fn(u->func), (unsigned long long)u->seq,
			u->is_p2p ? "true" : "false", u->rank,
			u->state == HVN_EXT_STARTED ? "started" : "scheduled",
			(long long)u->start, (long long)u->start_real);
	}
	fprintf(o, "],\"unscheduled\":[");
	for (size_t i = 0; i < x->nunsched; i++)
		fprintf(o, "%s{\"comm\":\"%016llx\",\"rank\":%d,\"seq\":%llu,\"others\":%d}",
			i ? "," : "", (unsigned long long)x->unsched[i].comm,
			x->unsched[i].rank, (unsigned long long)x->unsched[i].seq,
			x->unsched[i].others);
	fprintf(o, "]}\n");
}

static const char *const fleet_causes[] = { "none", "hypervisor", "irq",
					    "storm", "migration" };

static void write_key(FILE *o, const struct hvn_coll *c)
{
	if (!c) {
		fprintf(o, "{\"p2p\":true}");
		return;
	}
	fprintf(o, "{\"comm\":\"%016llx\",\"func\":\"%s\",\"seq\":%lld}",
		(unsigned long long)c->comm, hvn_nccl_fn(c->func),
		(long long)c->seq);
}

static void write_culprit(FILE *o, const struct hvn_fleet *f,
			  const struct hvn_fleet_stall *s,
			  const struct hvn_fleet_culprit *c)
{
	const struct hvn_fleet_host *h = &f->h[c->host];
	const struct hvn_coll *cc = &h->x->coll[c->coll];

	fprintf(o, "{\"host\":");
	hvn_json_str(o, h->host);
	fprintf(o, ",\"rank\":%d,\"how\":\"%s\",\"delay_ns\":%.0f,\"carried_from\":",
		cc->rank, c->how == HVN_HOLD_LATE ? "late" : "transfer",
		c->delay_ns);
	if (c->carried)
		write_key(o, hvn_fleet_grp_coll(f, c->root));
	else
		fprintf(o, "null");
	fprintf(o, ",\"cause\":\"%s\",\"verdict\":",
		fleet_causes[c->why.cause]);
	hvn_json_str(o, c->why.cause || h->seen != HVN_SEEN_NOTHING ?
		     c->why.verdict : "hvnoise saw nothing on this host");
	fprintf(o, ",\"interval_ns\":%llu,\"explained_ns\":%.0f,\"share\":%.3f,\"uncertainty_ns\":",
		(unsigned long long)(c->why_end - c->why_start),
		c->why.explained, hvn_fleet_share(c));
	/* A host not aligned: no bound to give. */
	if (isinf(s->unc))
		fprintf(o, "null");
	else
		fprintf(o, "%.0f", s->unc);
	fprintf(o, ",\"cpus\":");
	write_cpus(o, &c->why);
	fprintf(o, "}");
}

void hvn_fleet_write_json(FILE *o, const struct hvn_fleet *f,
			  const struct hvn_corr_params *p)
{
	static const char *const seen[] = { "detectors", "irq-events", "nothing" };

	fprintf(o, "{\"schema\":\"hvnoise-correlate\",\"schema_version\":2,");
	fprintf(o, "\"params\":{\"factor\":%g,\"window\":%ld,\"min_ms\":%g,\"min_share\":%g},",
		p->k, p->window, p->min_ms, p->min_share);
	fprintf(o, "\"collectives\":%zu,\"ranks\":%zu,\"slabs\":%zu,\"slab_ns\":%.0f,\"reference\":",
		f->ncoll, f->nranks, f->nslab, f->slab_ns);
	hvn_json_str(o, f->h[f->ref].host);
	fprintf(o, ",\"hosts\":[");
	for (size_t i = 0; i < f->nh; i++) {
		const struct hvn_fleet_host *h = &f->h[i];

		fprintf(o, "%s{\"host\":", i ? "," : "");
		hvn_json_str(o, h->host);
		fprintf(o, ",\"trace\":");
		hvn_json_str(o, h->path);
		fprintf(o, ",\"clock_of\":");
		if (h->island >= 0)
			hvn_json_str(o, f->h[h->island].host);
		else
			fprintf(o, "null");
		fprintf(o, ",\"aligned\":%s,\"aligned_through_others\":%s,\"offset_at_realtime_ns\":%lld,\"offset_ns\":%.0f,\"drift_ppm\":%.3f,\"uncertainty_ns\":%.0f,\"samples\":%zu,\"clock_disagrees\":%s,\"clock_step_ns\":%lld,\"seen\":\"%s\",\"collectives\":%zu,\"stalls\":%zu}",
			h->aligned ? "true" : "false", h->via >= 0 ? "true" : "false",
			(long long)h->t0, h->offset, h->drift * 1e6,
			h->unc, h->nsamples, h->disagrees ? "true" : "false",
			(long long)h->step_ns, seen[h->seen], h->ncoll, h->x->nst);
	}
	fprintf(o, "],\"missing\":[");
	for (size_t i = 0, n = 0; i < f->nmiss; i++)
		if (f->miss[i].nseen < f->miss[i].nranks)
			missing_json(o, &f->miss[i], n++);
	fprintf(o, "],\"drain\":[");
	for (size_t i = 0; i < f->nblame; i++) {
		const struct hvn_fleet_blame *b = &f->blame[i];
		const struct hvn_fleet_stall *w = &f->st[b->worst];

		fprintf(o, "%s{\"host\":", i ? "," : "");
		hvn_json_str(o, f->h[b->host].host);
		fprintf(o, ",\"delay_ns\":%.0f,\"held\":%u,\"worst\":{\"comm\":\"%016llx\",\"func\":\"%s\",\"seq\":%lld,\"delay_ns\":%.0f}}",
			b->delay_ns, b->nheld, (unsigned long long)w->comm,
			hvn_nccl_fn(w->func), (long long)w->seq,
			b->worst_ns);
	}
	fprintf(o, "],\"job_stalls\":[");
	for (size_t i = 0; i < f->nst; i++) {
		const struct hvn_fleet_stall *s = &f->st[i];
		const struct hvn_missing *miss;

		fprintf(o, "%s{\"comm\":\"%016llx\",\"func\":\"%s\",\"seq\":%lld,\"class\":\"%s\",\"arrive_realtime_ns\":%lld,\"lost_ns\":%llu,\"late_ns\":%.0f,\"culprit\":",
			i ? "," : "", (unsigned long long)s->comm,
			hvn_nccl_fn(s->func), (long long)s->seq,
			s->cls == HVN_FLEET_ARRIVAL ? "arrival" : "in-flight",
			(long long)s->arrive, (unsigned long long)s->lost_ns,
			s->late_ns);
		if (s->culprit)
			write_culprit(o, f, s, &s->cul[0]);
		else
			fprintf(o, "null");
		fprintf(o, ",\"culprits\":[");
		for (uint32_t k = 0; k < s->ncul; k++) {
			fprintf(o, "%s", k ? "," : "");
			write_culprit(o, f, s, &s->cul[k]);
		}
		/* Within the clocks' uncertainty: may have held it. */
		fprintf(o, "],\"uncertainty_ns\":");
		if (isfinite(s->unc))
			fprintf(o, "%.0f", s->unc);
		else
			fprintf(o, "null");
		fprintf(o, ",\"maybe\":[");
		for (uint32_t k = 0; k < s->nmaybe; k++) {
			fprintf(o, "%s", k ? "," : "");
			write_culprit(o, f, s, &s->maybe[k]);
		}
		fprintf(o, "],\"ranks\":[");
		for (uint32_t k = 0; k < s->nr; k++) {
			const struct hvn_fleet_host *h = &f->h[s->r[k].host];
			int32_t rank = s->r[k].rank;

			fprintf(o, "%s{\"host\":", k ? "," : "");
			hvn_json_str(o, h->host);
			fprintf(o, ",\"rank\":%d,\"arrive_realtime_ns\":%lld,\"end_realtime_ns\":%lld,\"late\":%s,\"waiting\":%s}",
				rank, (long long)s->r[k].arrive,
				(long long)s->r[k].end, s->r[k].late ? "true" : "false",
				k < s->nguilty + s->nmaybe_r ? "false" : "true");
		}
		fprintf(o, "],\"also_noisy\":[");
		for (uint32_t k = 0; k < s->nnoisy; k++) {
			fprintf(o, "%s", k ? "," : "");
			hvn_json_str(o, f->h[s->noisy[k]].host);
		}
		fprintf(o, "],\"unseen_hosts\":[");
		for (uint32_t k = 0; k < s->nunseen; k++) {
			fprintf(o, "%s", k ? "," : "");
			hvn_json_str(o, f->h[s->unseen[k]].host);
		}
		/* A send or receive's stall has both its ranks. */
		miss = s->seq == UINT64_MAX ? NULL : hvn_fleet_missing(f, s->comm);
		/* Ranks in no trace: any of them may have held it. */
		fprintf(o, "],\"ranks_unrecorded\":%d}",
			miss ? miss->nranks - miss->nseen : 0);
	}
	fprintf(o, "]}\n");
}
