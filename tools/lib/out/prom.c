// SPDX-License-Identifier: GPL-2.0
/*
 * Prometheus text format: per-CPU counters (label cpu), then the event
 * counts and what the trace could not hold.  Times are seconds printed from
 * nanoseconds exactly; every family has HELP and TYPE, and a CPU once seen
 * stays listed, so counters never vanish between scrapes.
 */
#include <stddef.h>

#include "hvnoise/version.h"
#include "analysis/episodes.h"
#include "out/prom.h"

struct family {
	const char *name, *type, *help;
	size_t off;			/* uint64_t in struct hvn_cpu */
	int ns;				/* printed as seconds */
};

#define CPU_FIELD(f) offsetof(struct hvn_cpu, f)

static const struct family per_cpu[] = {
	{ "hvnoise_steal_seconds_total", "counter",
	  "Time the hypervisor reported it took from the vCPU (hvnoise:steal).",
	  CPU_FIELD(steal_ns), 1 },
	{ "hvnoise_steal_samples_total", "counter",
	  "hvnoise:steal samples with steal in them.", CPU_FIELD(steal_n), 0 },
	{ "hvnoise_lost_seconds_total", "counter",
	  "Time a hard timer on the CPU fired late (hvnoise:lost duration).",
	  CPU_FIELD(lost_ns), 1 },
	{ "hvnoise_lost_unexplained_seconds_total", "counter",
	  "Lost time nothing in the guest explains: hypervisor, SMI or host contention.",
	  CPU_FIELD(lost_unexpl_ns), 1 },
	{ "hvnoise_lost_steal_seconds_total", "counter",
	  "Lost time the hypervisor reported as steal.",
	  CPU_FIELD(lost_steal_ns), 1 },
	{ "hvnoise_lost_irq_seconds_total", "counter",
	  "Lost time the guest spent in interrupts, softirqs and NMIs.",
	  CPU_FIELD(lost_irq_ns), 1 },
	{ "hvnoise_lost_episodes_total", "counter",
	  "hvnoise:lost events.", CPU_FIELD(lost_n), 0 },
	{ "hvnoise_irq_storms_total", "counter",
	  "Interrupt storms that ended (hvnoise:irq_storm).",
	  CPU_FIELD(storms), 0 },
	{ "hvnoise_irq_storm_irqs_total", "counter",
	  "Interrupts in the hot windows of those storms.",
	  CPU_FIELD(storm_irqs), 0 },
	{ "hvnoise_irq_migrations_in_total", "counter",
	  "Watched devices' IRQs that moved to this CPU (hvnoise:irq_migrate).",
	  CPU_FIELD(mig_in), 0 },
	{ "hvnoise_irq_migrations_out_total", "counter",
	  "Watched devices' IRQs that moved away from this CPU.",
	  CPU_FIELD(mig_out), 0 },
	{ "hvnoise_irqs_total", "counter",
	  "Interrupts handled (irq:irq_handler_entry, where recorded).",
	  CPU_FIELD(irqs), 0 },
};

/* hvn_lost_bucket_ns as Prometheus' client libraries write le. */
static const char *const le_names[HVN_LOST_BUCKETS] = {
	"0.0005", "0.001", "0.002", "0.005", "0.01", "0.02", "0.05", "0.1",
	"0.2", "0.5", "1", "2", "5",
};

static const char *const ev_names[HVN_EV_NR] = {
	[HVN_EV_OTHER] = "other", [HVN_EV_WATCH] = "watch",
	[HVN_EV_STEAL] = "steal", [HVN_EV_LOST] = "lost",
	[HVN_EV_STORM_BEGIN] = "irq_storm_begin",
	[HVN_EV_STORM] = "irq_storm", [HVN_EV_MIGRATE] = "irq_migrate",
	[HVN_EV_IRQ] = "irq_handler_entry", [HVN_EV_RAW] = "raw_data",
};

static void head(FILE *f, const char *name, const char *type,
		 const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void value(FILE *f, uint64_t v, int ns)
{
	if (ns)
		fprintf(f, "%llu.%09llu\n", (unsigned long long)(v / 1000000000u),
			(unsigned long long)(v % 1000000000u));
	else
		fprintf(f, "%llu\n", (unsigned long long)v);
}

void hvn_prom_write(FILE *f, const struct hvn_analysis *an,
		    const struct hvn_prom_info *pi)
{
	for (size_t i = 0; i < sizeof(per_cpu) / sizeof(per_cpu[0]); i++) {
		const struct family *fam = &per_cpu[i];

		head(f, fam->name, fam->type, fam->help);
		for (int c = 0; c <= an->max_cpu; c++) {
			const struct hvn_cpu *cpu = &an->cpu[c];
			uint64_t v;

			if (!cpu->seen)
				continue;
			v = *(const uint64_t *)((const char *)cpu + fam->off);
			fprintf(f, "%s{cpu=\"%d\"} ", fam->name, c);
			value(f, v, fam->ns);
		}
	}
	/* Histograms: le is cumulative; its +Inf is every episode. */
	head(f, "hvnoise_lost_episode_seconds", "histogram",
	     "Durations of hvnoise:lost episodes.");
	for (int c = 0; c <= an->max_cpu; c++) {
		const struct hvn_cpu *cpu = &an->cpu[c];
		uint64_t cum = 0;

		if (!cpu->seen)
			continue;
		for (int b = 0; b < HVN_LOST_BUCKETS; b++) {
			cum += cpu->lost_hist[b];
			fprintf(f, "hvnoise_lost_episode_seconds_bucket{cpu=\"%d\",le=\"%s\"} %llu\n",
				c, le_names[b], (unsigned long long)cum);
		}
		fprintf(f, "hvnoise_lost_episode_seconds_bucket{cpu=\"%d\",le=\"+Inf\"} %llu\n",
			c, (unsigned long long)cpu->lost_n);
		fprintf(f, "hvnoise_lost_episode_seconds_sum{cpu=\"%d\"} ", c);
		value(f, cpu->lost_ns, 1);
		fprintf(f, "hvnoise_lost_episode_seconds_count{cpu=\"%d\"} %llu\n", c,
			(unsigned long long)cpu->lost_n);
	}
	head(f, "hvnoise_watched", "gauge",
	     "1 if hvnoise.ko watches the CPU (its last hvnoise:watch set).");
	for (int c = 0; c <= an->max_cpu; c++)
		if (an->cpu[c].seen)
			fprintf(f, "hvnoise_watched{cpu=\"%d\"} %d\n", c,
				an->cpu[c].watched);
	head(f, "hvnoise_events_total", "counter",
	     "Trace records read, by event.");
	for (int k = 0; k < HVN_EV_NR; k++)
		fprintf(f, "hvnoise_events_total{event=\"%s\"} %llu\n",
			ev_names[k], (unsigned long long)an->by_kind[k]);
	head(f, "hvnoise_trace_overrun_events_total", "counter",
	     "Events the kernel overwrote or dropped before they were read.");
	fprintf(f, "hvnoise_trace_overrun_events_total %llu\n",
		(unsigned long long)pi->overrun_events);
	head(f, "hvnoise_trace_missed_pages_total", "counter",
	     "Ring-buffer pages read after the kernel lost events.");
	fprintf(f, "hvnoise_trace_missed_pages_total %llu\n",
		(unsigned long long)pi->missed_pages);
	head(f, "hvnoise_trace_bad_records_total", "counter",
	     "Unreadable pages and records too short for their format.");
	fprintf(f, "hvnoise_trace_bad_records_total %llu\n",
		(unsigned long long)(pi->bad_pages + an->bad_records));
	/* Who wrote these and how fresh they are, on both paths (the
	 * exporter's and report --prom's textfile): frozen counters read
	 * as no noise. */
	if (pi->module_loaded >= 0) {
		head(f, "hvnoise_module_loaded", "gauge",
		     "1 while hvnoise.ko is loaded (for a recording: through its end).");
		fprintf(f, "hvnoise_module_loaded %d\n", pi->module_loaded);
	}
	if (pi->source && pi->source[0]) {
		head(f, "hvnoise_source_info", "gauge",
		     "Where the detector events come from: module (hvnoise.ko), bpf, or kernel (irq events only).");
		fprintf(f, "hvnoise_source_info{source=\"%s\"} 1\n", pi->source);
	}
	head(f, "hvnoise_build_info", "gauge",
	     "The hvnoise version serving these metrics.");
	fprintf(f, "hvnoise_build_info{version=\"%s\"} 1\n", HVN_VERSION);
	if (pi->updated_real) {
		head(f, "hvnoise_exporter_updated_timestamp_seconds", "gauge",
		     "When these counters were last brought up to date, since the epoch.");
		fprintf(f, "hvnoise_exporter_updated_timestamp_seconds %llu.%03llu\n",
			(unsigned long long)(pi->updated_real / 1000000000ull),
			(unsigned long long)(pi->updated_real / 1000000ull % 1000));
	}
}
