// SPDX-License-Identifier: GPL-2.0
/*
 * hvnoise correlate: which NCCL collectives stalled, and what host noise
 * on the CPUs that mattered explains each stall.  The engine is
 * lib/analysis/stalls.c; this file holds the options, the flow and the
 * text output.
 */
#include <glob.h>
#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "builtin.h"
#include "hvnoise/nccl.h"
#include "hvnoise/watch.h"
#include "analysis/fleet.h"
#include "analysis/stalls.h"
#include "analysis/summary.h"
#include "inputs/torch.h"
#include "out/human.h"
#include "out/correlate_json.h"
#include "out/perfetto.h"
#include "tracedat/tracedat.h"

/* Off the trace's time (another day's file), with its date. */
static bool off_trace(const struct hvn_corr *x, uint64_t t)
{
	return (int64_t)t < (int64_t)x->an.first_ts || (int64_t)t > (int64_t)x->an.last_ts;
}

static void fmt_when(const struct hvn_corr *x, const struct hvn_coll *c, char *buf,
		     size_t len)
{
	if (x->an.nclk) {
		hvn_fmt_time(&x->an, c->start, buf, len, off_trace(x, c->start));
		return;
	}
	const struct hvn_proc *p = hvn_corr_proc_of(x, c->comm, c->rank);

	if (p) {
		struct hvn_analysis tmp = { 0 };
		struct hvn_clock_pair pair = { p->mono, p->real };

		tmp.clk = &pair;
		tmp.nclk = 1;
		hvn_fmt_time(&tmp, c->start, buf, len, false);
		return;
	}
	hvn_fmt_time(&x->an, c->start, buf, len, false);
}

static void print_text(struct hvn_corr *x, const struct hvn_corr_params *p,
		       const char *path)
{
	size_t ncomm = 0;

	for (size_t i = 0; i < x->nproc; i++) {
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = x->proc[j].comm == x->proc[i].comm;
		ncomm += !seen;
	}
	printf("hvnoise correlate: %s\n", path);
	printf("  %zu collectives from %zu communicator ranks on %zu communicators; %zu stalls, %zu late arrivals\n",
	       x->ncoll, x->nproc, ncomm, x->nst, x->nlate);
	printf("  stall: more than %.1f x the median of the last %ld of its communicator, rank, function and size, and %.3f ms over it\n",
	       p->k, p->window, p->min_ms);
	if (x->nccl_bad)
		printf("  CORRUPT: %llu NCCL records could not be read\n",
		       (unsigned long long)x->nccl_bad);
	if (!x->ncoll)
		printf("  no NCCL records: run the job with NCCL_PROFILER_PLUGIN=hvnoise (see hvnoise(8))\n");
	if (x->unjudged)
		printf("  %llu collectives without a size not judged for stalls: their groups' durations are of different operations (a tenth or more would be stalls)\n",
		       (unsigned long long)x->unjudged);
	for (size_t i = 0; i < x->nmiss; i++)
		if (x->miss[i].nseen < x->miss[i].nranks)
			printf("  MISSING: comm %016llx has %d ranks, %d in these files (rank %d has none): add their files\n",
			       (unsigned long long)x->miss[i].comm, x->miss[i].nranks,
			       x->miss[i].nseen, x->miss[i].first_missing);
	printf("\nStalls, by time lost:\n");
	for (size_t i = 0; i < x->nst && i < (size_t)p->top; i++) {
		const struct hvn_stall *s = &x->st[i];
		const struct hvn_coll *c = &x->coll[s->coll];
		char when[40];

		fmt_when(x, c, when, sizeof(when));
		printf("%3zu. %s  comm %016llx rank %d  %s seq %lld  %llu B\n",
		       i + 1, when, (unsigned long long)c->comm, c->rank,
		       hvn_nccl_fn(c->func),
		       c->seq == UINT64_MAX ? -1 : (long long)c->seq,
		       (unsigned long long)(c->count * (c->dtype ? c->dtype : 1)));
		printf("     %.3f ms (median %.3f, lost %.3f)", (c->end - c->start) / 1e6,
		       c->median / 1e6, s->lost_ns / 1e6);
		printf("  proxy CPU");
		for (int j = 0; j < c->npcpu; j++)
			printf("%s%d", j ? "," : " ", c->pcpu[j]);
		if (!c->npcpu)
			printf(" -");
		printf(", enqueued on CPU %d\n", c->cpu);
		for (int j = 0; j < s->ncpu; j++) {
			const struct hvn_contrib *k = &s->c[j];
			double dur = c->end - c->start;

			if (!(k->unexpl + k->lsteal + k->lirq + k->steal +
			      k->storm) && !k->nmig)
				continue;
			printf("     CPU %d (%s%s%s): lost %.1f ms (unexplained %.1f, steal %.1f, irq %.1f), steal %.1f, storm %.1f%s%s, migrations %d; %.0f%%\n",
			       k->cpu, k->why & 1 ? "proxy " : "",
			       k->why & 2 ? "enqueue " : "",
			       k->why & 4 ? "irq" : "",
			       (k->unexpl + k->lsteal + k->lirq) / 1e6,
			       k->unexpl / 1e6, k->lsteal / 1e6, k->lirq / 1e6,
			       k->steal / 1e6, k->storm / 1e6,
			       k->storm ? " " : "", k->storm ? k->storm_name : "",
			       k->nmig,
			       100 * (k->unexpl + (k->lsteal > k->steal ?
						   k->lsteal : k->steal) +
				      k->lirq) / dur);
		}
		printf("     verdict: %s\n", s->verdict);
	}
	if (!x->nst)
		printf("  none\n");
	if (x->nlate) {
		printf("\nLate ranks:\n");
		for (size_t i = 0; i < x->nlate && i < (size_t)p->top; i++) {
			const struct hvn_late *l = &x->late[i];
			const struct hvn_proc *pr = hvn_corr_proc_of(x, l->comm, l->rank);

			printf("  comm %016llx %s seq %llu: rank %d (host %s) arrived %.3f ms after the other %d ranks\n",
			       (unsigned long long)l->comm, hvn_nccl_fn(l->func),
			       (unsigned long long)l->seq, l->rank,
			       pr ? pr->host : "?", l->late_ms, l->nranks - 1);
		}
	}
	if (x->nunf) {
		printf("\nNever completed (Flight Recorder), oldest first:\n");
		for (size_t i = 0; i < x->nunf && i < (size_t)p->top; i++) {
			const struct hvn_unfinished *u = &x->unf[i];
			char when[48];

			hvn_fmt_time(&x->an, u->start, when, sizeof(when),
				     off_trace(x, u->start));
			printf("  comm %016llx rank %d never completed %s %s %llu: %s %s\n",
			       (unsigned long long)u->comm, u->rank,
			       hvn_nccl_fn(u->func), u->is_p2p ? "p2p seq" : "seq",
			       (unsigned long long)u->seq,
			       u->state == HVN_EXT_STARTED ? "started at" :
			       "scheduled (not started) at", when);
		}
		if (x->nunf > (size_t)p->top)
			printf("  ... and %zu more (--top)\n", x->nunf - p->top);
	}
	for (size_t i = 0; i < x->nunsched; i++) {
		const struct hvn_unscheduled *u = &x->unsched[i];
		const struct hvn_proc *pr = hvn_corr_proc_of(x, u->comm, u->rank);

		printf("  comm %016llx rank %d (host %s) never scheduled seq %llu, which %d other rank%s did: the missing participant\n",
		       (unsigned long long)u->comm, u->rank, pr && pr->host[0] ? pr->host : "?",
		       (unsigned long long)u->seq, u->others, u->others == 1 ? "" : "s");
	}
}

struct correlate_args {
	struct hvn_corr_params prm;
	bool json;
	const char *perfetto, *trace, *summary;
	char **traces;			/* every TRACE and DIR's *.dat */
	size_t ntraces;
	bool dir;
	int in;				/* the list operands go to, or -1 */
	char **files[HVN_CORR_INPUTS];
	int nfiles[HVN_CORR_INPUTS];
};

/* "--nccl A B C": files until the next option. */
static int list_start(void *vals, const struct hvn_opt *o, const char *arg)
{
	static const char *const names[HVN_CORR_INPUTS] = {
		"nccl", "fr", "kineto", "inspector",
	};
	struct correlate_args *a = vals;

	(void)arg;
	for (int k = 0; k < HVN_CORR_INPUTS; k++)
		if (!strcmp(o->name, names[k]))
			a->in = k;
	return 0;
}

/* A host's TRACE, or a DIR of them. */
static int add_trace(struct correlate_args *a, const char *arg)
{
	bool dir = false;
	int ret = hvn_fleet_inputs(arg, &a->traces, &a->ntraces, &dir);

	a->dir |= dir;
	if (!ret && a->ntraces && !a->trace)
		a->trace = a->traces[0];
	return ret;
}

static int operand(void *vals, const char *arg)
{
	struct correlate_args *a = vals;
	char **l;

	if (!arg) {
		a->in = -1;
	} else if (a->in >= 0) {
		l = realloc(a->files[a->in], (a->nfiles[a->in] + 1) * sizeof(*l));
		if (!l)
			return -1;
		a->files[a->in] = l;
		l[a->nfiles[a->in]++] = (char *)arg;
	} else {
		return add_trace(a, arg);
	}
	return 0;
}

#define PRM(f) prm.f
static const struct hvn_opt correlate_opts[] = {
	HVN_OPT_CALL_ROW("nccl", 0, NULL, list_start,
			 "FILE...: the plugin's per-process files (HVNOISE_NCCL_DIR)"),
	HVN_OPT_CALL_ROW("fr", 0, NULL, list_start,
			 "FILE...: PyTorch Flight Recorder dumps, JSON, one per\nrank (the rank from the name: nccl_trace_rank_<N>)"),
	HVN_OPT_CALL_ROW("kineto", 0, NULL, list_start,
			 "FILE...: PyTorch profiler (Kineto) Chrome traces"),
	HVN_OPT_CALL_ROW("inspector", 0, NULL, list_start,
			 "FILE...: NCCL Inspector output (JSON lines)"),
	HVN_OPT_NUM_ROW("factor", 'k', "K", struct correlate_args, PRM(k),
			1.000001, 1e6,
			"a stall lasts more than K x the rolling median (3)"),
	HVN_OPT_INT_ROW("window", 'w', "N", struct correlate_args, PRM(window),
			8, 4096,
			"the median is over the last N of the same kind (32)"),
	HVN_OPT_NUM_ROW("min-ms", 0, "MS", struct correlate_args, PRM(min_ms),
			0, 1e9, "and at least MS over the median (1)"),
	HVN_OPT_NUM_ROW("min-share", 0, "F", struct correlate_args,
			PRM(min_share), 0, 1,
			"noise explains a stall from F of its time (0.2)"),
	HVN_OPT_INT_ROW("top", 0, "N", struct correlate_args, PRM(top), 1, 1e9,
			"stalls listed (20)"),
	HVN_OPT_NUM_ROW("memory", 0, "MIB", struct correlate_args,
			PRM(memory_mib), 0.01, 1 << 20,
			"over many hosts' summaries: hold about MIB of their\ncollectives at once, joining them a slab of time at\na time where all would not fit (512)"),
	HVN_OPT_FLAG_ROW("json", 0, struct correlate_args, json,
			 "machine-readable output (schema \"hvnoise-correlate\" 1)"),
	HVN_OPT_STR_ROW("perfetto", 0, "FILE", struct correlate_args, perfetto,
			"Chrome trace events for ui.perfetto.dev"),
	HVN_OPT_STR_ROW("summary", 0, "FILE", struct correlate_args, summary,
			"write the trace's summary to FILE, for correlate over\nmany hosts (made where the trace is)"),
	HVN_OPT_END_ROW
};

static const struct hvn_cmd correlate_cmd = {
	.name = "correlate",
	.synopsis = "[options] TRACE.dat [--nccl FILE...] [--fr FILE...]\n"
		    "                         [--kineto FILE...] [--inspector FILE...]\n"
		    "       hvnoise correlate [options] TRACE.dat|DIR... (one trace per host)",
	.opts = correlate_opts,
	.operand = operand,
};

static void fmt_real(int64_t real, char *buf, size_t len)
{
	struct hvn_analysis an = { 0 };
	struct hvn_clock_pair pair = { 0, 0 };

	/* Wall-clock through an identity pair: mono 0 is real 0. */
	an.clk = &pair;
	an.nclk = 1;
	hvn_fmt_time(&an, (uint64_t)real, buf, len, true);
}

static const char *const cause_name[] = {
	"no host noise", "time taken from the vCPU", "interrupt handling",
	"an IRQ storm", "an IRQ migration",
};

/* "host0 ranks 0-3,5, host1 rank 8": by host (@r is sorted so), the first
 * 8 hosts; --json lists every rank. */
static void print_ranks(const struct hvn_fleet *f, const struct hvn_fleet_rank *r,
			uint32_t n)
{
	uint32_t hosts = 0;

	for (uint32_t i = 0; i < n;) {
		const struct hvn_fleet_host *h = &f->h[r[i].host];
		uint32_t j = i, nr = 0;

		while (j < n && r[j].host == r[i].host) {
			j++;
			nr++;
		}
		if (++hosts > 8) {
			uint32_t more = 1;

			for (uint32_t k = j; k < n; k++)
				more += r[k].host != r[k - 1].host;
			printf(", and %u more hosts", more);
			return;
		}
		printf("%s %s rank%s ", hosts > 1 ? "," : "", h->host, nr > 1 ? "s" : "");
		for (uint32_t k = i; k < j;) {
			int32_t lo = r[k].rank, hi = lo;
			uint32_t m = k + 1;

			while (m < j && r[m].rank == hi + 1)
				hi = r[m++].rank;
			printf("%s%d", k > i ? "," : "", lo);
			if (hi > lo)
				printf("-%d", hi);
			k = m;
		}
		i = j;
	}
}

static const char *const seen_name[] = {
	[HVN_SEEN_DETECTORS] = "detectors",
	[HVN_SEEN_IRQ] = "the kernel's IRQ events only (no lost time or steal)",
	[HVN_SEEN_NOTHING] = "nothing (no module, no BPF, no events): its noise is unknown, not absent",
};

/* "comm 0123... AllReduce seq 76" */
static void print_key(const struct hvn_coll *c)
{
	if (!c) {
		printf("a send or receive");
		return;
	}
	printf("comm %016llx %s seq %lld", (unsigned long long)c->comm,
	       hvn_nccl_fn(c->func), (long long)c->seq);
}

static void print_culprit(const struct hvn_fleet *f, const struct hvn_fleet_stall *s,
			  const struct hvn_fleet_culprit *c)
{
	const struct hvn_fleet_host *h = &f->h[c->host];
	const struct hvn_coll *cc = &h->x->coll[c->coll];
	const struct hvn_proc *pr = hvn_corr_proc_of(h->x, cc->comm, cc->rank);

	printf("     culprit: %s rank %d", h->host, cc->rank);
	if (pr && pr->pid > 0)
		printf(" (pid %d)", pr->pid);
	if (s->ncul > 1 || s->cls == HVN_FLEET_ARRIVAL)
		printf(", held the job %.3f ms", c->delay_ns / 1e6);
	printf(":");
	if (c->carried) {
		printf(" held ");
		print_key(hvn_fleet_grp_coll(f, c->root));
		printf(c->how == HVN_HOLD_LATE ? " (its rank came late)" :
		       " (its noise stalled the transfer)");
		printf(", and the ranks that waited there came late here;");
	}
	if (c->why.cause)
		printf(" %s, %.0f%% of its %.3f ms\n", c->why.verdict,
		       100 * hvn_fleet_share(c), (c->why_end - c->why_start) / 1e6);
	else if (h->seen == HVN_SEEN_NOTHING)
		printf(" hvnoise saw nothing on %s (no module, no BPF, no events): its noise is unknown\n",
		       h->host);
	else
		printf(" no host noise on its CPUs explains it (%s): compute, the network or the GPU\n",
		       cause_name[0]);
}

/* A host that may have held the job: late within the clocks' uncertainty. */
static void print_maybe(const struct hvn_fleet *f, const struct hvn_fleet_culprit *c)
{
	const struct hvn_fleet_host *h = &f->h[c->host];
	const struct hvn_coll *cc = &h->x->coll[c->coll];

	printf("       maybe: %s rank %d, ", h->host, cc->rank);
	if (c->how == HVN_HOLD_LATE)
		printf("%.3f ms late", c->judged_ns / 1e6);
	else
		printf("its noise stalled a transfer before (%.3f ms over its usual)",
		       c->judged_ns / 1e6);
	printf(": %s, %.0f%% of its %.3f ms\n", c->why.verdict,
	       100 * hvn_fleet_share(c), (c->why_end - c->why_start) / 1e6);
}

static void print_fleet(const struct hvn_fleet *f, const struct hvn_corr_params *p)
{
	const struct hvn_fleet_host *ref = &f->h[f->ref];

	printf("hvnoise correlate: %zu hosts, %zu communicator ranks, %zu collectives; %zu job stalls\n",
	       f->nh, f->nranks, f->ncoll, f->nst);
	if (f->nslab)
		printf("  joined in %zu slabs of %.3f s (and %.3f s each side): more than --memory %g MiB held whole\n",
		       f->nslab, f->slab_ns / 1e9, f->margin_ns / 1e9, p->memory_mib);
	for (size_t i = 0; i < f->nmiss; i++)
		if (f->miss[i].nseen < f->miss[i].nranks)
			printf("  MISSING: comm %016llx has %d ranks, %d in these traces (rank %d has none): add their hosts' traces\n",
			       (unsigned long long)f->miss[i].comm, f->miss[i].nranks,
			       f->miss[i].nseen, f->miss[i].first_missing);
	printf("\nClocks, aligned on the ends of all-reduces, all-gathers and reduce-scatters (reference %s):\n",
	       ref->host);
	for (size_t i = 0; i < f->nh; i++) {
		const struct hvn_fleet_host *h = &f->h[i];

		if (i == f->ref) {
			printf("  %-20s reference (%zu collectives)  %s\n", h->host,
			       h->nsamples, h->path);
		} else if (!h->aligned) {
			printf("  %-20s NOT ALIGNED: %zu collectives shared with %s (want %d); its own CLOCK_REALTIME is used  %s\n",
			       h->host, h->nsamples, ref->host, 3, h->path);
		} else if (h->island == (int32_t)i) {
			printf("  %-20s ISLAND: shares no collective with %s's hosts; those that share with it are aligned on its clock (%zu collectives)  %s\n",
			       h->host, ref->host, h->nsamples, h->path);
		} else {
			const struct hvn_fleet_host *on = &f->h[h->island];

			printf("  %-20s %+.3f ms +- %.3f ms", h->host, h->offset / 1e6,
			       h->unc / 1e6);
			if (h->drift)
				printf(", drift %+.2f ppm", h->drift * 1e6);
			if (on != ref)
				printf(" to %s's clock", on->host);
			printf(" (%zu collectives%s)  %s\n", h->nsamples,
			       h->via >= 0 ? ", through hosts aligned before it" : "",
			       h->path);
			if (h->disagrees)
				printf("  %-20s CLOCK: its CLOCK_REALTIME is %.3f ms %s %s's, beyond the uncertainty: NTP is off there (times below are aligned)\n",
				       "", fabs(h->offset) / 1e6,
				       h->offset > 0 ? "ahead of" : "behind", on->host);
		}
		if (h->step_ns)
			printf("  %-20s CLOCK: its CLOCK_REALTIME stepped by up to %.3f ms during the recording (aligned on CLOCK_MONOTONIC, which did not)\n",
			       "", h->step_ns / 1e6);
		if (h->seen != HVN_SEEN_DETECTORS)
			printf("  %-20s NO DATA: hvnoise saw %s\n", "", seen_name[h->seen]);
	}
	printf("\nHosts to drain, by the time their noise or lateness cost the job:\n");
	for (size_t i = 0; i < f->nblame && i < (size_t)p->top; i++) {
		const struct hvn_fleet_blame *b = &f->blame[i];
		const struct hvn_fleet_stall *w = &f->st[b->worst];

		printf("%3zu. %-20s %.3f ms, held the job %u time%s; the most in comm %016llx %s seq %lld (%.3f ms)\n",
		       i + 1, f->h[b->host].host, b->delay_ns / 1e6, b->nheld,
		       b->nheld == 1 ? "" : "s", (unsigned long long)w->comm,
		       hvn_nccl_fn(w->func), (long long)w->seq,
		       b->worst_ns / 1e6);
	}
	if (!f->nblame)
		printf("  none: no host's noise or lateness held the job\n");
	printf("\nJob stalls, by time lost:\n");
	for (size_t i = 0; i < f->nst && i < (size_t)p->top; i++) {
		const struct hvn_fleet_stall *s = &f->st[i];
		const struct hvn_missing *miss;
		uint32_t nhosts = 0, nlate = 0;
		char when[48];

		for (uint32_t k = 0; k < s->nr; k++) {
			bool seen = false;

			for (uint32_t j = 0; j < k && !seen; j++)
				seen = s->r[j].host == s->r[k].host;
			nhosts += !seen;
		}
		fmt_real(s->arrive, when, sizeof(when));
		printf("%3zu. %s  comm %016llx %s seq %lld: %u ranks on %u hosts, lost %.3f ms\n",
		       i + 1, when, (unsigned long long)s->comm, hvn_nccl_fn(s->func),
		       (long long)s->seq, s->nr, nhosts, s->lost_ns / 1e6);
		if (s->cls == HVN_FLEET_ARRIVAL) {
			uint32_t last = 0;

			for (uint32_t k = 0; k < s->nr; k++)
				if (s->r[k].arrive > s->r[last].arrive)
					last = k;
			printf("     arrival stall: rank %d on %s entered %.3f ms after the on-time hosts' ranks (+- %.3f ms)\n",
			       s->r[last].rank,
			       f->h[s->r[last].host].host, s->late_ns / 1e6, s->unc / 1e6);
		} else {
			printf("     in-flight stall: every rank entered within %.3f ms\n",
			       s->spread_ns / 1e6);
		}
		for (uint32_t k = 0; k < s->ncul; k++)
			print_culprit(f, s, &s->cul[k]);
		/* A send or receive's stall has both its ranks. */
		miss = s->seq == UINT64_MAX ? NULL : hvn_fleet_missing(f, s->comm);
		if (!s->culprit && !s->nmaybe && miss)
			printf("     no culprit among the ranks recorded, but the communicator's %d ranks have %d in no trace here (rank %d first): any of those may have held it; add their hosts' traces\n",
			       miss->nranks, miss->nranks - miss->nseen, miss->first_missing);
		else if (!s->culprit && !s->nmaybe)
			printf("     no host noise explains this: the ranks were in compute, the network or the GPU\n");
		else if (miss)
			printf("     (the communicator's %d ranks have %d in no trace here, rank %d first)\n",
			       miss->nranks, miss->nranks - miss->nseen, miss->first_missing);
		if (s->nmaybe) {
			char unc[48] = "not known: a clock not aligned";

			if (isfinite(s->unc))
				snprintf(unc, sizeof(unc), "+- %.3f ms", s->unc / 1e6);
			printf("     %s late by less than the clocks can tell (their uncertainty: %s), so not drained:\n",
			       s->culprit ? "and maybe, too:" : "no host plainly late; maybe:", unc);
		}
		for (uint32_t k = 0; k < s->nmaybe; k++)
			print_maybe(f, &s->maybe[k]);
		for (uint32_t k = s->nguilty + s->nmaybe_r; k < s->nr; k++)
			nlate += s->r[k].late;
		if (nlate) {
			printf("     late, not guilty (held by the collective before):");
			for (uint32_t k = s->nguilty + s->nmaybe_r, n = 0; k < s->nr; k++)
				if (s->r[k].late)
					printf("%s %s rank %d", n++ ? "," : "",
					       f->h[s->r[k].host].host,
					       s->r[k].rank);
			printf("\n");
		}
		if (s->nr > s->nguilty + s->nmaybe_r + nlate) {
			struct hvn_fleet_rank *w = malloc(s->nr * sizeof(*w));
			uint32_t nw = 0;

			for (uint32_t k = s->nguilty + s->nmaybe_r; w && k < s->nr; k++)
				if (!s->r[k].late)
					w[nw++] = s->r[k];
			printf("     %s:", s->culprit ? "waiting, not guilty" : "ranks");
			if (w)
				print_ranks(f, w, nw);
			printf("\n");
			free(w);
		}
		for (uint32_t k = 0; k < s->nnoisy; k++)
			printf("     also noisy then: %s (noise while it waited, not what held the job)\n",
			       f->h[s->noisy[k]].host);
		for (uint32_t k = 0; k < s->nunseen; k++)
			printf("     unseen: hvnoise saw nothing on %s: its noise is unknown, not absent\n",
			       f->h[s->unseen[k]].host);
	}
	if (!f->nst)
		printf("  none\n");
}

/* --summary: one host's trace, and its other files, reduced for the join. */
static int run_summary(struct correlate_args *a)
{
	struct hvn_schema *schema = calloc(1, sizeof(*schema));
	struct hvn_corr *x = calloc(1, sizeof(*x));
	char host[128];
	struct hvn_tdat t;
	int ret, r;

	if (a->ntraces != 1 || a->dir || a->json || a->perfetto) {
		hvn_err("--summary FILE takes one trace, and no --json or --perfetto");
		free(schema);
		free(x);
		return HVN_EXIT_USAGE;
	}
	if (!schema || !x) {
		free(schema);
		free(x);
		return HVN_EXIT_FAIL;
	}
	host[0] = '\0';
	ret = hvn_tdat_open(&t, a->trace);
	if (!ret)
		ret = hvn_fleet_host_open(x, schema, &t, host, sizeof(host));
	if (ret) {
		/* Not a trace (a summary is made from one): nothing written. */
		hvn_tdat_close(&t);
		hvn_corr_free(x);
		free(x);
		free(schema);
		return ret;
	}
	for (int k = 0; k < HVN_CORR_INPUTS; k++)
		for (int i = 0; i < a->nfiles[k]; i++) {
			r = hvn_corr_read(x, k, a->files[k][i]);
			if (r && !ret)
				ret = r;
		}
	if (!ret || ret == HVN_EXIT_BADFILE) {
		hvn_corr_analyse(x, &t, &a->prm);
		hvn_corr_trim_episodes(x);
		r = hvn_summary_write(a->summary, host, x);
		if (r)
			ret = r;
		else
			hvn_info("wrote %s: host %s, %zu collectives, %zu stalls, %zu noise episodes on their CPUs\n",
				 a->summary, host, x->ncoll, x->nst, x->nep);
	}
	hvn_tdat_close(&t);
	hvn_corr_free(x);
	free(x);
	free(schema);
	return ret;
}

static int run_fleet(struct correlate_args *a)
{
	struct hvn_fleet f;
	int ret;

	for (int k = 0; k < HVN_CORR_INPUTS; k++)
		if (a->nfiles[k]) {
			hvn_err("--nccl, --fr, --kineto and --inspector take one host's trace; over many hosts, give each host's trace recorded with the plugin");
			return HVN_EXIT_USAGE;
		}
	/* Blocks of a MiB and more mapped and unmapped, never kept in the
	 * heap: a join's slabs let go of what they read, and what the join
	 * keeps must not pin it in place. */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	ret = hvn_fleet_open(&f, a->traces, a->ntraces, &a->prm);
	if (!ret)
		ret = hvn_fleet_analyse(&f, &a->prm);
	if (!ret) {
		if (a->json)
			hvn_fleet_write_json(stdout, &f, &a->prm);
		else
			print_fleet(&f, &a->prm);
		if (a->perfetto)
			ret = hvn_fleet_write_perfetto(&f, a->perfetto);
	}
	hvn_fleet_free(&f);
	return ret;
}

int cmd_correlate(int argc, char **argv)
{
	struct correlate_args a = {
		.prm = HVN_CORR_PARAMS_DEFAULT,
		.in = -1,
	};
	struct hvn_corr_params prm;
	struct hvn_schema *schema = calloc(1, sizeof(*schema));
	struct hvn_corr *x = calloc(1, sizeof(*x));
	struct hvn_tdat t;
	const char *trace, *pf;
	char ***files = a.files;
	int *nfiles = a.nfiles, first, ret = 0, r;
	bool json;

	if (!schema || !x) {
		free(schema);
		free(x);
		return HVN_EXIT_FAIL;
	}
	ret = hvn_cli_parse(&correlate_cmd, argc, argv, &a, NULL, &first);
	if (ret < 0 && !a.trace) {
		hvn_err("which TRACE.dat?");
		hvn_cli_usage(&correlate_cmd, stderr);
		ret = HVN_EXIT_USAGE;
	}
	if (ret >= 0)
		goto out;
	if (a.summary) {
		ret = run_summary(&a);
		goto out;
	}
	if (a.ntraces > 1 || (a.dir && a.ntraces) ||
	    (a.ntraces == 1 && hvn_summary_is(a.trace))) {
		ret = run_fleet(&a);
		goto out;
	}
	ret = 0;
	prm = a.prm;
	trace = a.trace;
	pf = a.perfetto;
	json = a.json;
	ret = hvn_tdat_open(&t, trace);
	if (ret) {
		hvn_tdat_close(&t);
		goto out;
	}
	ret = hvn_corr_open(x, schema, &t);
	if (ret < 0) {
		hvn_err("out of memory");
		ret = HVN_EXIT_FAIL;
		hvn_tdat_close(&t);
		hvn_corr_free(x);
		goto out;
	}
	for (int k = 0; k < HVN_CORR_INPUTS; k++)
		for (int i = 0; i < nfiles[k]; i++) {
			r = hvn_corr_read(x, k, files[k][i]);
			if (r && !ret)
				ret = r;
		}
	hvn_corr_analyse(x, &t, &prm);
	if (json)
		hvn_corr_write_json(stdout, x, &prm, trace);
	else
		print_text(x, &prm, trace);
	if (pf) {
		r = hvn_corr_write_perfetto(x, &t, pf);
		if (r && !ret)
			ret = r;
	}
	hvn_tdat_close(&t);
	hvn_corr_free(x);
out:
	free(x);
	free(schema);
	for (int k = 0; k < HVN_CORR_INPUTS; k++)
		free(files[k]);
	for (size_t i = 0; i < a.ntraces; i++)
		free(a.traces[i]);
	free(a.traces);
	return ret;
}
