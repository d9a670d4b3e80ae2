// SPDX-License-Identifier: GPL-2.0
/* Chrome trace events (ui.perfetto.dev) of correlate's collectives and the
 * noise episodes beside them. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "analysis/stalls.h"
#include "out/perfetto.h"
#include "tracedat/tracedat.h"

/* Chrome trace events: a track per rank (collectives), per CPU (noise). */
struct perfetto {
	FILE *o;
	struct hvn_corr *x;
	bool first;
};

static double us_of(const struct hvn_corr *x, uint64_t mono)
{
	uint64_t r = x->an.nclk ? hvn_an_mono_to_real(&x->an, mono) : mono;

	return r / 1e3;
}

static void pf_noise(void *vp, int cpu, uint64_t ts, const uint8_t *d,
		     uint32_t len)
{
	struct perfetto *p = vp;
	struct hvn_episode e;
	static const char *const names[] = { "steal", "lost", "storm",
					     "migrate" };
	int k = hvn_episode_decode(p->x->schema, ts, d, len, &e);

	(void)cpu;
	if (k != HVN_EV_LOST && k != HVN_EV_STEAL && k != HVN_EV_STORM &&
	    k != HVN_EV_MIGRATE)
		return;
	if (e.kind == HVN_EP_MIGRATE)
		fprintf(p->o, ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":2,\"tid\":%d,\"ts\":%.3f,\"name\":\"IRQ %d %s from CPU %d\"}",
			e.cpu, us_of(p->x, e.start), e.irq, e.name, e.cpu2);
	else
		fprintf(p->o, ",\n{\"ph\":\"X\",\"pid\":2,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"name\":\"%s%s%s\",\"args\":{\"unexplained_ms\":%.3f}}",
			e.cpu, us_of(p->x, e.start),
			(e.kind == HVN_EP_STEAL ? e.a : e.dur) / 1e3,
			names[e.kind], e.kind == HVN_EP_STORM ? " " : "",
			e.kind == HVN_EP_STORM ? e.name : "",
			e.kind == HVN_EP_LOST ? e.a / 1e6 : 0.0);
}

int hvn_corr_write_perfetto(struct hvn_corr *x, struct hvn_tdat *t,
			    const char *out)
{
	struct perfetto p = { .x = x };
	struct hvn_rb rb = { .event = pf_noise, .ctx = &p };

	p.o = fopen(out, "w");
	if (!p.o) {
		hvn_err("cannot write %s: %s", out, strerror(errno));
		return HVN_EXIT_FAIL;
	}
	fprintf(p.o, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
		"{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"NCCL ranks\"}},\n"
		"{\"ph\":\"M\",\"pid\":2,\"name\":\"process_name\",\"args\":{\"name\":\"CPUs (hvnoise)\"}}");
	for (size_t i = 0; i < x->ncoll; i++) {
		const struct hvn_coll *c = &x->coll[i];

		fprintf(p.o, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"name\":\"%s%s\",\"args\":{\"seq\":%lld,\"comm\":\"%016llx\",\"median_ms\":%.3f}}",
			c->rank, us_of(x, c->start), (c->end - c->start) / 1e3,
			c->stall ? "STALL " : "", hvn_nccl_fn(c->func),
			c->seq == UINT64_MAX ? -1 : (long long)c->seq,
			(unsigned long long)c->comm, c->median / 1e6);
	}
	hvn_tdat_stream(t, &rb);
	fprintf(p.o, "\n]}\n");
	if (fclose(p.o)) {
		hvn_err("writing %s: %s", out, strerror(errno));
		return HVN_EXIT_FAIL;
	}
	return 0;
}
