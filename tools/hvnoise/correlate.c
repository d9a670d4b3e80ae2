// SPDX-License-Identifier: GPL-2.0
/*
 * hvnoise correlate: which NCCL collectives stalled, and what host noise
 * on the CPUs that mattered explains each stall.  The engine is
 * lib/analysis/stalls.c; this file holds the options, the flow and the
 * text output.
 */
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "hvnoise/nccl.h"
#include "hvnoise/watch.h"
#include "analysis/stalls.h"
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
}

struct correlate_args {
	struct hvn_corr_params prm;
	bool json;
	const char *perfetto, *trace;
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
	} else if (!a->trace) {
		a->trace = arg;
	} else {
		hvn_err("one trace at a time (%s, %s); other files follow --nccl, --fr, --kineto or --inspector",
			a->trace, arg);
		return -1;
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
	HVN_OPT_FLAG_ROW("json", 0, struct correlate_args, json,
			 "machine-readable output (schema \"hvnoise-correlate\" 1)"),
	HVN_OPT_STR_ROW("perfetto", 0, "FILE", struct correlate_args, perfetto,
			"Chrome trace events for ui.perfetto.dev"),
	HVN_OPT_END_ROW
};

static const struct hvn_cmd correlate_cmd = {
	.name = "correlate",
	.synopsis = "[options] TRACE.dat [--nccl FILE...] [--fr FILE...]\n"
		    "                         [--kineto FILE...] [--inspector FILE...]",
	.opts = correlate_opts,
	.operand = operand,
};

int cmd_correlate(int argc, char **argv)
{
	struct correlate_args a = {
		.prm = { .k = 3, .min_ms = 1, .min_share = 0.2, .window = 32,
			 .top = 20 },
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
	return ret;
}
