// SPDX-License-Identifier: GPL-2.0
/*
 * hvnoise advise: from a recording to the changes that remove its noise,
 * one piece of advice per cause, each with its evidence and the commands
 * or configuration that apply it (analysis/advise.c decides; this file
 * prints, and writes the provider's evidence bundle).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "builtin.h"
#include "cpulist.h"
#include "analysis/advise.h"
#include "analysis/fleet.h"
#include "analysis/stalls.h"
#include "hvnoise/watch.h"
#include "inputs/summary.h"
#include "out/jsonw.h"
#include "tracedat/meta.h"
#include "tracedat/tracedat.h"

#define SCHEMA_VERSION	1

struct advise_args {
	bool json, apply, yes, restore, verify, any_host;
	double min_ms, duration;
	const char *bundle, *restore_file, *irqbalance_conf;
};

/* Why an IRQ's affinity cannot be set, as recorded; NULL: it can, or the
 * recording does not know (the BPF source). */
static const char *unmovable(uint8_t aff)
{
	if (aff & HVN_IRQ_MANAGED)
		return "the kernel places it (a managed IRQ: a queue its driver spreads over the CPUs)";
	if (aff & HVN_IRQ_FIXED)
		return "its affinity cannot be set from userspace (a per-CPU IRQ, or one not balanced)";
	return NULL;
}

/* The pin-threads advice for serving CPU @cpu, or NULL. */
static const struct hvn_advice *pin_for(const struct hvn_advise *o, int cpu)
{
	for (size_t i = 0; i < o->nadv; i++)
		if (o->adv[i].kind == HVN_ADV_PIN && o->adv[i].cpu == cpu)
			return &o->adv[i];
	return NULL;
}

/* Whether @irq's own advice says it cannot be moved. */
static bool irq_stuck(const struct hvn_advise *o, int irq)
{
	for (size_t i = 0; i < o->nadv; i++)
		if (o->adv[i].kind == HVN_ADV_IRQ && o->adv[i].irq == irq)
			return unmovable(o->adv[i].affinity);
	return false;
}

/* JSON: "settable", "managed", "fixed", or null (not known). */
static const char *affinity_name(uint8_t aff)
{
	if (!(aff & HVN_IRQ_CHECKED))
		return "null";
	return aff & HVN_IRQ_MANAGED ? "\"managed\"" :
	       aff & HVN_IRQ_FIXED ? "\"fixed\"" : "\"settable\"";
}

static const struct hvn_opt advise_opts[] = {
	HVN_OPT_NUM_ROW("min-ms", 0, "MS", struct advise_args, min_ms, 0, 1e9,
			"the least noise worth a change: MS of storms or\ninterrupt time on a serving CPU (pinning, isolation),\na hypervisor episode of MS (10); any storm or move of\nan IRQ onto a serving CPU is advised"),
	HVN_OPT_FLAG_ROW("json", 0, struct advise_args, json,
			 "machine-readable output (schema \"hvnoise-advise\" 1)"),
	HVN_OPT_STR_ROW("bundle", 0, "PREFIX", struct advise_args, bundle,
			"write the provider's evidence to PREFIX.json and\nPREFIX.txt (when the hypervisor took time)"),
	HVN_OPT_FLAG_ROW("apply", 0, struct advise_args, apply,
			 "the IRQ moves this host can make now: listed (a dry\nrun), made with --yes"),
	HVN_OPT_FLAG_ROW("yes", 0, struct advise_args, yes,
			 "with --apply: make them (root; the restore file first)"),
	HVN_OPT_FLAG_ROW("verify", 0, struct advise_args, verify,
			 "with --apply --yes: record again for -d TIME and\ncompare the serving CPUs before and after"),
	HVN_OPT_SECS_ROW("duration", 'd', struct advise_args, duration, 1, 86400,
			 "--verify's recording (30 s)"),
	HVN_OPT_FLAG_ROW("any-host", 0, struct advise_args, any_host,
			 "with --apply --yes: apply another host's recording here"),
	HVN_OPT_FLAG_ROW("restore", 0, struct advise_args, restore,
			 "undo the last --apply --yes (no TRACE)"),
	HVN_OPT_STR_ROW("restore-file", 0, "PATH", struct advise_args, restore_file,
			"where --apply --yes keeps what it changed\n(/var/lib/hvnoise/advise-restore)"),
	HVN_OPT_STR_ROW("irqbalance-config", 0, "PATH", struct advise_args, irqbalance_conf,
			"irqbalance's environment file, for its ban list\n(/etc/default/irqbalance or /etc/sysconfig/irqbalance)"),
	HVN_OPT_END_ROW
};

static const struct hvn_cmd advise_cmd = {
	.name = "advise",
	.synopsis = "[--min-ms MS] [--json] [--bundle PREFIX] TRACE.dat\n"
		    "       hvnoise advise [--min-ms MS] [--json] TRACE.dat|DIR... (one trace per host)\n"
		    "       hvnoise advise --apply [--yes [--verify [-d TIME]] [--any-host]]\n"
		    "                      [--restore-file PATH] [--irqbalance-config PATH] TRACE.dat\n"
		    "       hvnoise advise --restore [--restore-file PATH]",
	.opts = advise_opts,
	.operands = true,
};

/* What the bundle says of the host, read here only when the recording was
 * made here (its host name is this one's): DMI, and cloud-init's record
 * of the instance, files on disk, never the network. */
static const char *const ident_files[][2] = {
	{ "sys_vendor", "/sys/class/dmi/id/sys_vendor" },
	{ "product_name", "/sys/class/dmi/id/product_name" },
	{ "product_version", "/sys/class/dmi/id/product_version" },
	{ "product_uuid", "/sys/class/dmi/id/product_uuid" },
	{ "product_serial", "/sys/class/dmi/id/product_serial" },
	{ "board_asset_tag", "/sys/class/dmi/id/board_asset_tag" },
	{ "chassis_asset_tag", "/sys/class/dmi/id/chassis_asset_tag" },
	{ "instance_id", "/var/lib/cloud/data/instance-id" },
};

#define NIDENT	(sizeof(ident_files) / sizeof(ident_files[0]))

struct ident {
	bool here;
	char why[200];
	char *val[NIDENT];
};

static void ident_read(struct ident *id, const char *rec_host)
{
	char me[256] = "";

	memset(id, 0, sizeof(*id));
	gethostname(me, sizeof(me) - 1);
	if (!rec_host[0] || strcmp(rec_host, me)) {
		snprintf(id->why, sizeof(id->why),
			 "not read: recorded on %.64s, advised on %.64s",
			 rec_host[0] ? rec_host : "an unnamed host", me);
		return;
	}
	for (size_t i = 0; i < NIDENT; i++) {
		size_t len;
		char *v = hvn_read_file(ident_files[i][1], &len);

		while (v && len && (v[len - 1] == '\n' || v[len - 1] == ' '))
			v[--len] = 0;
		if (v && !len) {
			free(v);
			v = NULL;
		}
		id->val[i] = v;
		if (v)
			id->here = true;
	}
	if (!id->here)
		snprintf(id->why, sizeof(id->why),
			 "none: this host exposes no DMI or cloud-init identity");
}

static void ident_free(struct ident *id)
{
	for (size_t i = 0; i < NIDENT; i++)
		free(id->val[i]);
}

static double ms(uint64_t ns)
{
	return ns / 1e6;
}

static const char *why_name(unsigned int why)
{
	return why & 1 ? "NCCL proxy thread" : "enqueuing thread";
}

/* The CPUs there that do not serve the job: irqaffinity=. */
static void housekeeping(const struct hvn_advise *o, char *buf, size_t len)
{
	const size_t bits = 8 * sizeof(long), n = HVN_MAX_CPUS / bits;
	unsigned long *srv = calloc(n, sizeof(long)), *hk = calloc(n, sizeof(long));
	unsigned long *there = calloc(n, sizeof(long));
	char err[80];

	buf[0] = 0;
	if (srv && hk && there &&
	    !hvn_cpulist_parse(o->serving, srv, HVN_MAX_CPUS, err, sizeof(err)) &&
	    !hvn_cpulist_parse(o->present, there, HVN_MAX_CPUS, err, sizeof(err))) {
		bool any = false;

		for (int c = 0; c < HVN_MAX_CPUS; c++)
			if ((there[c / bits] >> (c % bits) & 1) &&
			    !(srv[c / bits] >> (c % bits) & 1)) {
				hk[c / bits] |= 1UL << (c % bits);
				any = true;
			}
		/* None left is "", never the list "none". */
		if (any && hvn_cpulist_format(buf, len, hk, HVN_MAX_CPUS) < 0)
			buf[0] = 0;
	}
	free(srv);
	free(hk);
	free(there);
}

static void totals(const struct hvn_advise *o, uint64_t *steal,
		   uint64_t *unrep)
{
	*steal = *unrep = 0;
	for (size_t i = 0; i < o->nvcpu; i++) {
		*steal += o->vcpu[i].steal_ns;
		*unrep += o->vcpu[i].unexpl_ns;
	}
}

/* Per vCPU: its episodes, steal, time never reported, the longest and
 * when, and the share of the recording's span it lost. */
static void vcpu_table(FILE *f, const struct hvn_analysis *an,
		       const struct hvn_advise *o, const char *indent)
{
	fprintf(f, "%s%-5s %8s %10s %13s %10s  %-27s %9s\n", indent, "vCPU",
		"episodes", "steal ms", "unreported ms", "longest ms",
		"longest at (UTC)", "% of span");
	for (size_t i = 0; i < o->nvcpu; i++) {
		const struct hvn_adv_vcpu *v = &o->vcpu[i];
		char at[64];

		hvn_fmt_utc(an, v->longest_start, at, sizeof(at));
		fprintf(f, "%s%-5d %8llu %10.1f %13.1f %10.1f  %-27s %9.2f\n", indent,
			v->cpu, (unsigned long long)v->n, ms(v->steal_ns),
			ms(v->unexpl_ns), ms(v->longest), at,
			o->span ? 100.0 * (v->steal_ns + v->unexpl_ns) / o->span : 0);
	}
}

static void print_provider(const struct hvn_analysis *an,
			   const struct hvn_advise *o,
			   const struct hvn_advice *v, const char *f,
			   const char *l, const char *sh, const char *bundle)
{
	uint64_t steal, unrep;

	totals(o, &steal, &unrep);
	printf("The hypervisor took time from vCPUs %s, %s to %s: summed over them, %.1f ms reported as steal and %.1f ms never reported (lost with no cause in the guest); the longest %.1f ms at a time%s.\n",
	       v->cpus, f, l, ms(steal), ms(unrep), ms(o->worst_hv), sh);
	printf("   Nothing in the guest removes it: it is the provider's (host contention, live\n"
	       "   migration, an overcommitted host; on bare metal, firmware: SMIs).  %s\n",
	       bundle ? "The evidence for them is in the bundle (--bundle)." :
	       "hvnoise advise --bundle PREFIX writes the evidence for them.");
	vcpu_table(stdout, an, o, "   ");
}

/* What the recording could not see, each said in @out (up to @max of
 * 200 bytes): its number.  Quiet there is not quiet. */
#define BLIND_MAX	8
static int blind_spots(const struct hvn_meta *m, const char *stopped,
		       char out[][400], int max)
{
	int n = 0;
	uint64_t gap = 0;

	if (!strcmp(m->source, "kernel") && n < max)
		snprintf(out[n++], 400,
			 "no detector ran (the kernel's IRQ events only): no lost time or steal could be seen");
	for (int i = 0; i < m->ngaps && i < 16; i++)
		gap += m->gaps[i].end - m->gaps[i].start;
	if (m->ngaps && n < max)
		snprintf(out[n++], 400, "hvnoise.ko was not loaded %d times (%.3f s%s): no detector events then",
			 m->ngaps, gap / 1e9, m->ngaps > 16 ? " in the first 16" : "");
	if ((m->overrun || m->dropped) && n < max)
		snprintf(out[n++], 400, "%llu events overwritten and %llu dropped (CPUs %s): some episodes are missing",
			 (unsigned long long)m->overrun, (unsigned long long)m->dropped,
			 m->overrun_cpus[0] ? m->overrun_cpus : "-");
	if (m->bpf_throttled && n < max)
		snprintf(out[n++], 400, "perf throttled the BPF source's timers %llu times: %.3f ms unsampled",
			 (unsigned long long)m->bpf_throttled, m->bpf_throttled_ns / 1e6);
	if (m->flight_unwritten && n < max)
		snprintf(out[n++], 400, "the flight recorder could not write %llu incidents before this one",
			 (unsigned long long)m->flight_unwritten);
	if (stopped && stopped[0] && n < max)
		snprintf(out[n++], 400, "the file stops early (%.150s): what follows is not in it", stopped);
	return n;
}

static void print_text(const char *trace, const char *host,
		       const struct hvn_corr *x, const struct hvn_advise *o,
		       const struct advise_args *a, char blind[][400],
		       int nblind)
{
	const struct hvn_analysis *an = &x->an;
	char t0[64], t1[64], hk[8192];
	int n = 0;

	hvn_fmt_utc(an, an->first_ts, t0, sizeof(t0));
	hvn_fmt_utc(an, an->last_ts, t1, sizeof(t1));
	printf("hvnoise advise: %s (host %s, %.1f s, %s to %s)\n", trace,
	       host[0] ? host : "?", o->span / 1e9, t0, t1);
	if (o->from_ranks)
		printf("CPUs that serve the job: %s (its ranks' NCCL proxy and enqueuing threads)\n",
		       o->serving);
	else
		printf("CPUs that serve the job: %s (the watched CPUs: the recording holds no NCCL records)\n",
		       o->serving);
	printf("CPUs there: %s (%s)\n", o->present, o->online_known ?
	       "online when recorded" :
	       "up to the highest it saw: the recording does not say which were online");
	housekeeping(o, hk, sizeof(hk));
	for (int i = 0; i < nblind; i++)
		printf("BLIND: %s\n", blind[i]);
	for (size_t i = 0; i < o->nadv; i++) {
		const struct hvn_advice *v = &o->adv[i];
		char f[64], l[64], sh[64] = "", irqs[48] = "";
		bool stuck;

		hvn_fmt_utc(an, v->first, f, sizeof(f));
		hvn_fmt_utc(an, v->last, l, sizeof(l));
		if (v->share > 0)
			snprintf(sh, sizeof(sh), "; %.0f%% of the stalls' lost time",
				 100 * v->share);
		printf("\n%d. ", ++n);
		switch (v->kind) {
		case HVN_ADV_IRQ:
			printf("IRQ %d (%s) on CPU %d, which serves the job: %llu storms (%llu interrupts, %.1f ms), %llu moves onto serving CPUs, %s to %s%s.\n",
			       v->irq, v->name[0] ? v->name : "?", v->cpu,
			       (unsigned long long)v->storms,
			       (unsigned long long)v->storm_irqs, ms(v->storm_ns),
			       (unsigned long long)v->moves, f, l, sh);
			if (unmovable(v->affinity)) {
				printf("   It cannot be moved: %s.\n", unmovable(v->affinity));
				if (pin_for(o, v->cpu))
					printf("   Move the rank off CPU %d instead (the advice for its rank).\n",
					       v->cpu);
				else
					printf("   Move what runs on CPU %d off it instead (taskset, or the launcher's CPU binding).\n",
					       v->cpu);
				break;
			}
			if (v->target < 0) {
				printf("   Move it to a CPU that serves no rank: every CPU this recording knows serves one.\n");
			} else {
				printf("   Move it to CPU %d (%s), which serves no rank%s:\n",
				       v->target, v->target_local ?
				       "on its device's NUMA node" :
				       "NUMA node not known to the recording: prefer one on the device's",
				       v->target_irqs ?
				       " (the quietest: every one takes a watched IRQ)" :
				       " and takes no watched IRQ");
				printf("     echo %d > /proc/irq/%d/smp_affinity_list\n",
				       v->target, v->irq);
			}
			printf("   and keep irqbalance off the serving CPUs, in /etc/default/irqbalance:\n"
			       "     IRQBALANCE_BANNED_CPULIST=%s\n"
			       "   (or IRQBALANCE_ARGS=\"--banirq=%d\" to leave this IRQ alone).%s\n",
			       o->serving, v->irq, v->affinity & HVN_IRQ_CHECKED ? "" :
			       "  A managed IRQ\n"
			       "   (a device's queue the kernel places) refuses the write: move the rank instead.");
			break;
		case HVN_ADV_PIN:
			if (an->by_kind[HVN_EV_IRQ])
				snprintf(irqs, sizeof(irqs), "%llu interrupts, ",
					 (unsigned long long)v->irqs);
			printf("Rank %d runs its %s on CPU %d, which also takes IRQ %d (%s): %s%.1f ms of storms, %.1f ms of interrupt time in its lost episodes%s.\n",
			       v->rank, why_name(v->why), v->cpu, v->irq,
			       v->name[0] ? v->name : "?", irqs, ms(v->storm_ns),
			       ms(v->lost_irq_ns), sh);
			stuck = irq_stuck(o, v->irq);
			if (v->target < 0) {
				if (stuck)
					printf("   Every CPU this recording knows serves a rank, and IRQ %d cannot be moved:\n"
					       "   leave a CPU free of ranks for it.\n", v->irq);
				else
					printf("   Every CPU this recording knows serves a rank: move the IRQ (its own advice).\n");
				break;
			}
			if (v->pid > 0)
				printf("   %s the rank off it, every thread of pid %d (as recorded: check it is\n"
				       "   still the rank's), to the CPUs that take no watched IRQ:\n"
				       "     taskset -a -c -p %s %d\n", stuck ? "Move" : "Or move",
				       v->pid, v->cpus, v->pid);
			else
				printf("   %s the rank off it, to the CPUs that take no watched IRQ (%s).\n",
				       stuck ? "Move" : "Or move", v->cpus);
			printf("   At launch, bind the rank away from its device's IRQ CPUs (numactl --physcpubind,\n"
			       "   srun --cpu-bind, a cpuset): NCCL runs its proxy thread on the process's CPUs that\n"
			       "   are local to the GPU, so the binding moves it too; NCCL_IGNORE_CPU_AFFINITY=1 would\n"
			       "   drop the binding for all the GPU's local CPUs, this one included.\n");
			break;
		case HVN_ADV_ISOLATE:
			printf("Interrupt work that no storm explains took %.1f ms of the %.1f ms lost on CPU%s %s (the tick, RCU callbacks, other devices' interrupts), %s to %s%s.\n",
			       ms(v->lost_irq_ns), ms(v->lost_ns),
			       strpbrk(v->cpus, ",-") ? "s" : "", v->cpus, f, l, sh);
			if (!hk[0]) {
				printf("   Every CPU serves the job: isolating them leaves none for the kernel's\n"
				       "   housekeeping.  Keep the job off one or more CPUs first, then isolate the rest.\n");
				break;
			}
			printf("   Isolate the serving CPUs on the kernel command line (a reboot):\n"
			       "     nohz_full=%s rcu_nocbs=%s isolcpus=managed_irq,domain,%s irqaffinity=%s\n",
			       o->serving, o->serving, o->serving, hk);
			printf("   nohz_full stops the tick while one task runs (CONFIG_NO_HZ_FULL; a housekeeping\n"
			       "   CPU must remain); rcu_nocbs moves RCU callbacks to rcuo threads, to be kept on\n"
			       "   the housekeeping CPUs; isolcpus=domain takes the CPUs out of load balancing, so\n"
			       "   the job's threads must be placed explicitly; managed_irq keeps managed queues off\n"
			       "   them where it can; irqaffinity= is where other IRQs go.  A cgroup v2 cpuset\n"
			       "   partition (cpuset.cpus.partition=isolated) isolates the scheduling without a reboot.\n");
			break;
		case HVN_ADV_PROVIDER:
			print_provider(an, o, v, f, l, sh, a->bundle);
			break;
		}
	}
	if (!o->nadv)
		printf("\nNothing to advise%s: no storm or IRQ move on the serving CPUs that is still there, no interrupt time of %.1f ms there that no storm explains, and the hypervisor took at most %.1f ms at a time (--min-ms %.1f).\n",
		       nblind ? " in what the recording saw (BLIND above)" : "",
		       a->min_ms, ms(o->worst_hv), a->min_ms);
}

static void json_time(FILE *f, const char *key, const struct hvn_analysis *an,
		      uint64_t mono)
{
	char b[64];

	hvn_fmt_utc(an, mono, b, sizeof(b));
	fprintf(f, ",\"%s\":", key);
	hvn_json_str(f, b);
}

static void json_vcpus(FILE *f, const struct hvn_analysis *an,
		       const struct hvn_advise *o)
{
	fputs("[", f);
	for (size_t i = 0; i < o->nvcpu; i++) {
		const struct hvn_adv_vcpu *v = &o->vcpu[i];

		fprintf(f, "%s{\"vcpu\":%d,\"episodes\":%llu,\"steal_ms\":%.3f,\"unreported_ms\":%.3f,\"longest_ms\":%.3f",
			i ? "," : "", v->cpu, (unsigned long long)v->n,
			ms(v->steal_ns), ms(v->unexpl_ns), ms(v->longest));
		json_time(f, "longest_at", an, v->longest_start);
		fprintf(f, ",\"span_pct\":%.3f}", o->span ?
			100.0 * (v->steal_ns + v->unexpl_ns) / o->span : 0);
	}
	fputs("]", f);
}

static void print_json(const char *trace, const char *host,
		       const struct hvn_corr *x, const struct hvn_advise *o,
		       char blind[][400], int nblind, const char *end)
{
	const struct hvn_analysis *an = &x->an;
	char hk[8192], *cmd = NULL;

	housekeeping(o, hk, sizeof(hk));
	printf("{\"schema\":\"hvnoise-advise\",\"version\":%d,\"trace\":", SCHEMA_VERSION);
	hvn_json_str(stdout, trace);
	printf(",\"host\":");
	hvn_json_str(stdout, host);
	printf(",\"span_s\":%.6f", o->span / 1e9);
	json_time(stdout, "from", an, an->first_ts);
	json_time(stdout, "to", an, an->last_ts);
	printf(",\"serving_cpus\":\"%s\",\"serving_from\":\"%s\",\"cpus\":\"%s\",\"cpus_from\":\"%s\",\"blind\":[",
	       o->serving, o->from_ranks ? "ranks" : "watched", o->present,
	       o->online_known ? "online" : "seen");
	for (int i = 0; i < nblind; i++) {
		printf("%s", i ? "," : "");
		hvn_json_str(stdout, blind[i]);
	}
	printf("],\"advice\":[");
	for (size_t i = 0; i < o->nadv; i++) {
		const struct hvn_advice *v = &o->adv[i];

		printf("%s{\"kind\":\"%s\"", i ? "," : "", hvn_adv_kind_name(v->kind));
		json_time(stdout, "first", an, v->first);
		json_time(stdout, "last", an, v->last);
		if (v->share >= 0)
			printf(",\"stall_share\":%.4f", v->share);
		else
			printf(",\"stall_share\":null");
		switch (v->kind) {
		case HVN_ADV_IRQ:
			printf(",\"irq\":%d,\"name\":", v->irq);
			hvn_json_str(stdout, v->name);
			printf(",\"cpu\":%d,\"storms\":%llu,\"storm_irqs\":%llu,\"storm_ms\":%.3f,\"moves\":%llu,\"affinity\":%s,\"target\":%d,\"target_numa_local\":%s,\"target_takes_irqs\":%s,\"commands\":[",
			       v->cpu, (unsigned long long)v->storms,
			       (unsigned long long)v->storm_irqs, ms(v->storm_ns),
			       (unsigned long long)v->moves, affinity_name(v->affinity),
			       v->target, v->target_local ? "true" : "false",
			       v->target_irqs ? "true" : "false");
			if (v->target >= 0)
				printf("\"echo %d > /proc/irq/%d/smp_affinity_list\"",
				       v->target, v->irq);
			printf("],\"irqbalance\":\"IRQBALANCE_BANNED_CPULIST=%s\"}", o->serving);
			break;
		case HVN_ADV_PIN:
			printf(",\"rank\":%d,\"pid\":%d,\"thread\":\"%s\",\"cpu\":%d,\"irq\":%d,\"name\":",
			       v->rank, v->pid, v->why & 1 ? "proxy" : "enqueue",
			       v->cpu, v->irq);
			hvn_json_str(stdout, v->name);
			if (an->by_kind[HVN_EV_IRQ])
				printf(",\"irqs\":%llu", (unsigned long long)v->irqs);
			else
				printf(",\"irqs\":null");
			printf(",\"storm_ms\":%.3f,\"lost_irq_ms\":%.3f,\"target\":%d,\"commands\":[",
			       ms(v->storm_ns), ms(v->lost_irq_ns), v->target);
			if (v->target >= 0 && v->pid > 0)
				printf("\"taskset -a -c -p %s %d\"", v->cpus, v->pid);
			printf("]}");
			break;
		case HVN_ADV_ISOLATE:
			printf(",\"cpus\":\"%s\",\"lost_ms\":%.3f,\"lost_irq_ms\":%.3f,\"cmdline\":",
			       v->cpus, ms(v->lost_ns), ms(v->lost_irq_ns));
			if (hk[0] && asprintf(&cmd,
					      "nohz_full=%s rcu_nocbs=%s isolcpus=managed_irq,domain,%s irqaffinity=%s",
					      o->serving, o->serving, o->serving, hk) > 0) {
				hvn_json_str(stdout, cmd);
				free(cmd);
				cmd = NULL;
			} else {
				printf("null");
			}
			printf("}");
			break;
		case HVN_ADV_PROVIDER: {
			uint64_t steal, unrep;

			totals(o, &steal, &unrep);
			printf(",\"vcpus\":\"%s\",\"steal_ms\":%.3f,\"unreported_ms\":%.3f,\"longest_ms\":%.3f,\"per_vcpu\":",
			       v->cpus, ms(steal), ms(unrep), ms(o->worst_hv));
			json_vcpus(stdout, an, o);
			printf("}");
			break;
		}
		}
	}
	printf("],\"worst_hypervisor_ms\":%.3f}%s", ms(o->worst_hv), end);
}

/* The provider's evidence: PREFIX.json and PREFIX.txt, written whole or
 * not at all (each through a temporary name). */
static int write_bundle(const char *prefix, const char *trace,
			const struct hvn_meta *m, const struct hvn_corr *x,
			const struct hvn_advise *o)
{
	const struct hvn_analysis *an = &x->an;
	char path[2][4200], tmp[8500], t0[64], t1[64];
	static const char *const method =
		"hvnoise samples each watched vCPU's CLOCK_MONOTONIC from a timer (the hvnoise "
		"kernel module, or its BPF programs); a gap in which the vCPU ran nothing of "
		"the guest's (no interrupt, no steal accounted) is time it did not run, never "
		"reported to the guest (\"unreported\"). Steal is the time the hypervisor "
		"reported to the guest as stolen from that vCPU.";
	struct ident id;
	uint64_t steal, unrep;
	int ret = 0;

	if (strlen(prefix) > 4096) {
		hvn_err("--bundle: the prefix is longer than 4096 bytes");
		return HVN_EXIT_USAGE;
	}
	ident_read(&id, m->host);
	totals(o, &steal, &unrep);
	hvn_fmt_utc(an, an->first_ts, t0, sizeof(t0));
	hvn_fmt_utc(an, an->last_ts, t1, sizeof(t1));
	snprintf(path[0], sizeof(path[0]), "%s.json", prefix);
	snprintf(path[1], sizeof(path[1]), "%s.txt", prefix);
	for (int k = 0; k < 2 && !ret; k++) {
		FILE *f;
		int fd;

		snprintf(tmp, sizeof(tmp), "%s.tmp", path[k]);
		/* Never through a link someone left at that name. */
		fd = hvn_create(tmp, true);
		f = fd < 0 || fchmod(fd, 0644) ? NULL : fdopen(fd, "w");
		if (!f) {
			hvn_err("--bundle: cannot write %s: %m", tmp);
			if (fd >= 0)
				close(fd);
			ret = HVN_EXIT_FAIL;
			break;
		}
		if (k == 0) {
			fprintf(f, "{\"schema\":\"hvnoise-provider-evidence\",\"version\":%d,\"host\":",
				SCHEMA_VERSION);
			hvn_json_str(f, m->host);
			fputs(",\"kernel\":", f);
			hvn_json_str(f, m->kernel);
			fputs(",\"source\":", f);
			hvn_json_str(f, m->source);
			fputs(",\"trace\":", f);
			hvn_json_str(f, trace);
			fprintf(f, ",\"identity\":{\"read\":%s", id.here ? "true" : "false");
			if (!id.here) {
				fputs(",\"why\":", f);
				hvn_json_str(f, id.why);
			}
			for (size_t i = 0; i < NIDENT; i++)
				if (id.val[i]) {
					fprintf(f, ",\"%s\":", ident_files[i][0]);
					hvn_json_str(f, id.val[i]);
				}
			fputs("},\"window\":{", f);
			fputs("\"from\":", f);
			hvn_json_str(f, t0);
			fputs(",\"to\":", f);
			hvn_json_str(f, t1);
			fprintf(f, ",\"span_s\":%.6f},\"method\":", o->span / 1e9);
			hvn_json_str(f, method);
			fprintf(f, ",\"steal_ms\":%.3f,\"unreported_ms\":%.3f,\"vcpus\":",
				ms(steal), ms(unrep));
			json_vcpus(f, an, o);
			fputs(",\"episodes\":[", f);
			for (size_t i = 0; i < o->nhv; i++) {
				const struct hvn_episode *e = &o->hv[i];

				fprintf(f, "%s{\"vcpu\":%d,\"kind\":\"%s\",\"ms\":%.3f",
					i ? "," : "", e->cpu,
					e->kind == HVN_EP_STEAL ? "steal" : "unreported",
					ms(e->kind == HVN_EP_STEAL ? e->dur : e->a));
				json_time(f, "at", an, e->start);
				fputs("}", f);
			}
			fputs("]}\n", f);
		} else {
			fprintf(f, "Host %s (kernel %s): the hypervisor took time from its vCPUs.\n",
				m->host[0] ? m->host : "?", m->kernel[0] ? m->kernel : "?");
			if (id.here) {
				for (size_t i = 0; i < NIDENT; i++)
					if (id.val[i])
						fprintf(f, "  %s: %s\n", ident_files[i][0], id.val[i]);
			} else {
				fprintf(f, "  identity %s\n", id.why);
			}
			fprintf(f, "Window: %s to %s (%.1f s).\n", t0, t1, o->span / 1e9);
			fprintf(f, "In all: %.1f ms reported as steal, %.1f ms never reported; %zu episodes, the longest %.1f ms.\n",
				ms(steal), ms(unrep), o->nhv, ms(o->worst_hv));
			vcpu_table(f, an, o, "  ");
			fprintf(f, "Each episode (UTC):\n");
			for (size_t i = 0; i < o->nhv; i++) {
				const struct hvn_episode *e = &o->hv[i];
				char at[64];

				hvn_fmt_utc(an, e->start, at, sizeof(at));
				fprintf(f, "  %s  vCPU %d  %.3f ms %s\n", at, e->cpu,
					ms(e->kind == HVN_EP_STEAL ? e->dur : e->a),
					e->kind == HVN_EP_STEAL ? "steal" : "unreported");
			}
			fprintf(f, "How it was measured: %s\n", method);
		}
		if (fclose(f) || rename(tmp, path[k])) {
			hvn_err("--bundle: cannot write %s: %m", path[k]);
			unlink(tmp);
			ret = HVN_EXIT_FAIL;
		}
	}
	if (!ret)
		hvn_info("provider evidence: %s, %s\n", path[0], path[1]);
	ident_free(&id);
	return ret;
}

/* --- --apply, --restore, --verify ------------------------------------------ */

#define RESTORE_MAGIC	"hvnoise-advise-restore 1"

/* /proc/irq/N/smp_affinity_list's text, trimmed (malloc'd), or NULL. */
static char *irq_affinity(int irq)
{
	char path[64];
	size_t n;
	char *v;

	snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq);
	v = hvn_read_file(path, &n);
	while (v && n && (v[n - 1] == '\n' || v[n - 1] == ' '))
		v[--n] = 0;
	return v;
}

/* Whether IRQ @irq still has a handler named @name (the recording's,
 * maybe cut to HVN_NAME_LEN - 1): its /proc/interrupts line names its
 * handlers last.  The names it has now go into @now. */
static bool irq_named(int irq, const char *name, char *now, size_t len)
{
	char *t = hvn_read_file("/proc/interrupts", NULL), *line, *save;
	bool ok = false;

	now[0] = 0;
	if (!t)
		return false;
	for (line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = line, *end, *w;

		while (*p == ' ')
			p++;
		if (strtol(p, &end, 10) != irq || end == p || *end != ':')
			continue;
		/* The handler names: after the counts and the chip's words,
		 * the last comma-separated list of the line. */
		w = strrchr(line, ' ');
		snprintf(now, len, "%s", w ? w + 1 : "");
		/* A whole handler name; a prefix only where the recording's
		 * was cut to its field's length. */
		for (char *q = strstr(line, name); name[0] && q; q = strstr(q + 1, name)) {
			char e = q[strlen(name)];

			if ((q[-1] == ' ' || q[-1] == ',') &&
			    (!e || e == ',' || e == ' ' || strlen(name) >= HVN_NAME_LEN - 1))
				ok = true;
		}
		break;
	}
	free(t);
	return ok;
}

struct move {
	int irq, target;
	char name[HVN_NAME_LEN + 1];
	char *old;			/* its affinity before, malloc'd */
};

/* Whether @cpu is online here now (true where the kernel does not say). */
static bool online_now(int cpu)
{
	const size_t bits = 8 * sizeof(long);
	unsigned long *m = calloc(HVN_MAX_CPUS / bits, sizeof(long));
	char *on = hvn_read_file("/sys/devices/system/cpu/online", NULL);
	bool yes = true;

	if (m && on) {
		on[strcspn(on, "\n")] = '\0';
		if (!hvn_cpulist_parse(on, m, HVN_MAX_CPUS, NULL, 0))
			yes = cpu < HVN_MAX_CPUS && (m[cpu / bits] >> (cpu % bits) & 1);
	}
	free(m);
	free(on);
	return yes;
}

/* The moves of the irq-affinity advice, checked against this host now:
 * their number, each said; those that cannot be made are dropped. */
static int plan_moves(const struct hvn_advise *o, struct move *mv, int max)
{
	int n = 0;

	for (size_t i = 0; i < o->nadv && n < max; i++) {
		const struct hvn_advice *v = &o->adv[i];
		struct move *m = &mv[n];
		char now[128];

		if (v->kind != HVN_ADV_IRQ)
			continue;
		if (unmovable(v->affinity)) {
			printf("IRQ %d (%s): not moved: %s (as recorded): move the rank instead\n",
			       v->irq, v->name, unmovable(v->affinity));
			continue;
		}
		if (v->target < 0) {
			printf("IRQ %d (%s): no CPU to move it to (advice above): not moved\n",
			       v->irq, v->name);
			continue;
		}
		if (!v->name[0]) {
			printf("IRQ %d: the recording has no name for it, to check this host's against: not moved\n",
			       v->irq);
			continue;
		}
		m->old = irq_affinity(v->irq);
		if (!m->old) {
			printf("IRQ %d (%s): not on this host now (no /proc/irq/%d): not moved\n",
			       v->irq, v->name, v->irq);
			continue;
		}
		if (!irq_named(v->irq, v->name, now, sizeof(now))) {
			free(m->old);
			m->old = NULL;
			printf("IRQ %d is %s here now, not %s as recorded (another host, or another boot?): not moved\n",
			       v->irq, now[0] ? now : "unnamed", v->name);
			continue;
		}
		if (!online_now(v->target)) {
			free(m->old);
			m->old = NULL;
			printf("IRQ %d (%s): CPU %d is not online here now: not moved\n",
			       v->irq, v->name, v->target);
			continue;
		}
		m->irq = v->irq;
		m->target = v->target;
		snprintf(m->name, sizeof(m->name), "%s", v->name);
		printf("IRQ %d (%s): smp_affinity_list %s -> %d\n", m->irq, m->name,
		       m->old, m->target);
		n++;
	}
	return n;
}

/* Writes @val to IRQ @irq's affinity; says why not when it fails: 0, 1
 * refused as managed, -1 another failure. */
static int move_irq(int irq, const char *name, const char *val)
{
	char path[64], eff[64] = "?";

	snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq);
	if (hvn_write_str(path, val)) {
		if (errno == EIO) {
			printf("IRQ %d (%s): refused: the kernel sets its affinity (a managed IRQ, a queue its driver spreads over the CPUs, or a per-CPU one): move the rank instead\n",
			       irq, name);
			return 1;
		}
		printf("IRQ %d (%s): cannot write %s to %s: %s\n", irq, name, val, path,
		       strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/irq/%d/effective_affinity_list", irq);
	{
		size_t n;
		char *v = hvn_read_file(path, &n);

		if (v) {
			while (n && v[n - 1] == '\n')
				v[--n] = 0;
			snprintf(eff, sizeof(eff), "%s", v);
			free(v);
		}
	}
	/* Without interrupt remapping, x86 moves a vector at its next
	 * interrupt: the effective list may lag the written one. */
	if (strcmp(eff, val))
		printf("IRQ %d (%s): smp_affinity_list is %s now (effective still %s: it moves at its next interrupt)\n",
		       irq, name, val, eff);
	else
		printf("IRQ %d (%s): smp_affinity_list is %s now (effective: %s)\n", irq,
		       name, val, eff);
	return 0;
}

/* --- irqbalance's ban list ---------------------------------------------------- */

#define BAN_KEY		"IRQBALANCE_BANNED_CPULIST="

/* irqbalance's environment file: --irqbalance-config, else Debian's or
 * Red Hat's where it exists; NULL when irqbalance is not installed. */
static const char *ban_file(const struct advise_args *a)
{
	static const char *const def[] = { "/etc/default/irqbalance",
					   "/etc/sysconfig/irqbalance" };

	if (a->irqbalance_conf)
		return a->irqbalance_conf;
	for (size_t i = 0; i < sizeof(def) / sizeof(def[0]); i++)
		if (!access(def[i], F_OK))
			return def[i];
	return NULL;
}

/* The file's ban-list line (without its newline) into @line, "" when it
 * has none: 0, or -1 when the file cannot be read. */
static int ban_line(const char *path, char *line, size_t len)
{
	char *t = hvn_read_file(path, NULL), *l, *save;

	line[0] = 0;
	if (!t)
		return -1;
	for (l = strtok_r(t, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		const char *k = l + strspn(l, " \t");

		if (!strncmp(k, BAN_KEY, strlen(BAN_KEY)))
			snprintf(line, len, "%s", l);
	}
	free(t);
	return 0;
}

/* @line's CPU list (quotes dropped) merged into @m: 0, or -1 if it is not
 * a CPU list. */
static int ban_merge(const char *line, unsigned long *m)
{
	const size_t lb = 8 * sizeof(long);
	unsigned long *old = calloc(HVN_MAX_CPUS / lb, sizeof(long));
	char v[512], err[80];
	const char *p = strchr(line, '=');
	size_t n;
	int ret = -1;

	if (!old || !p)
		goto out;
	snprintf(v, sizeof(v), "%s", p + 1 + (p[1] == '"' || p[1] == '\''));
	n = strlen(v);
	while (n && (v[n - 1] == '"' || v[n - 1] == '\'' || v[n - 1] == ' '))
		v[--n] = 0;
	if (!n) {
		ret = 0;
		goto out;
	}
	if (hvn_cpulist_parse(v, old, HVN_MAX_CPUS, err, sizeof(err)))
		goto out;
	for (size_t i = 0; i < HVN_MAX_CPUS / lb; i++)
		m[i] |= old[i];
	ret = 0;
out:
	free(old);
	return ret;
}

/* Replaces the file's ban-list line by @line ("" removes it; appended when
 * the file has none), through a new file renamed over it (the file a link
 * points to, not the link), every other line kept: 0 or -1 (said). */
static int ban_write(const char *link, const char *line)
{
	char *path = realpath(link, NULL), *t = NULL, *l, *nl, tmp[4200];
	bool done = false;
	struct stat st;
	FILE *f = NULL;
	int fd = -1, ret = -1;

	if (path)
		t = hvn_read_file(path, NULL);
	if (!t || stat(path, &st)) {
		hvn_err("cannot read %s: %m", link);
		goto out;
	}
	snprintf(tmp, sizeof(tmp), "%s.hvnoise-tmp", path);
	fd = hvn_create(tmp, true);
	f = fd < 0 || fchmod(fd, st.st_mode & 07777) ? NULL : fdopen(fd, "w");
	if (!f) {
		hvn_err("cannot write %s: %m", tmp);
		if (fd >= 0)
			close(fd);
		goto out;
	}
	for (l = t; *l; l = nl ? nl + 1 : l + strlen(l)) {
		const char *k = l + strspn(l, " \t");

		nl = strchr(l, '\n');
		if (nl)
			*nl = 0;
		if (strncmp(k, BAN_KEY, strlen(BAN_KEY))) {
			fprintf(f, "%s\n", l);
		} else if (!done) {
			if (line[0])
				fprintf(f, "%s\n", line);
			done = true;
		}
		if (!nl)
			break;
	}
	if (!done && line[0])
		fprintf(f, "%s\n", line);
	done = fflush(f) || fsync(fd);
	if (fclose(f) || done || rename(tmp, path)) {
		hvn_err("cannot write %s: %m", path);
		unlink(tmp);
		goto out;
	}
	ret = 0;
out:
	free(t);
	free(path);
	return ret;
}

/* Whether an irqbalance process runs (it reads its ban list at start). */
static bool irqbalance_runs(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	bool runs = false;

	while (d && !runs && (e = readdir(d))) {
		char path[300], *c;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		c = hvn_read_file(path, NULL);
		runs = c && !strcmp(c, "irqbalance\n");
		free(c);
	}
	if (d)
		closedir(d);
	return runs;
}

/* Whether the file sets irqbalance's older hex mask, which it takes
 * before the list. */
static bool ban_mask_set(const char *path)
{
	char *t = hvn_read_file(path, NULL), *l, *save;
	bool set = false;

	for (l = t ? strtok_r(t, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
		const char *k = l + strspn(l, " \t");

		if (!strncmp(k, "IRQBALANCE_BANNED_CPUS=", 23) && k[23] && k[23] != '"')
			set = true;
		else if (!strncmp(k, "IRQBALANCE_BANNED_CPUS=\"", 24) && k[24] != '"')
			set = true;
	}
	free(t);
	return set;
}

/* A sysfs CPU list into @m (missing or empty: nothing). */
static void sys_cpus(const char *path, unsigned long *m)
{
	const size_t lb = 8 * sizeof(long);
	unsigned long *v = calloc(HVN_MAX_CPUS / lb, sizeof(long));
	char *t = hvn_read_file(path, NULL), err[80];

	if (v && t && t[strspn(t, " \n")] &&
	    !hvn_cpulist_parse(t, v, HVN_MAX_CPUS, err, sizeof(err)))
		for (size_t i = 0; i < HVN_MAX_CPUS / lb; i++)
			m[i] |= v[i];
	free(v);
	free(t);
}

/* The ban list to be: the serving CPUs and those the file bans already,
 * as the file's line, into @line; 0, 1 when the file already says so, -1
 * when it cannot be set (said, left alone). */
static int ban_plan(const char *path, const char *serving, char *old, size_t olen,
		    char *line, size_t len)
{
	const size_t lb = 8 * sizeof(long);
	unsigned long *m = calloc(HVN_MAX_CPUS / lb, sizeof(long));
	char err[80], *list = malloc(8192);
	int ret = -1;

	if (!m || !list || ban_line(path, old, olen)) {
		printf("irqbalance: cannot read %s: not changed\n", path);
		goto out;
	}
	if (ban_mask_set(path)) {
		printf("irqbalance: %s sets IRQBALANCE_BANNED_CPUS, the mask irqbalance takes first: not changed (add the serving CPUs %s to it)\n",
		       path, serving);
		goto out;
	}
	if (hvn_cpulist_parse(serving, m, HVN_MAX_CPUS, err, sizeof(err)))
		goto out;
	if (old[0] && ban_merge(old, m)) {
		printf("irqbalance: %s's \"%s\" is no CPU list: not changed\n", path, old);
		goto out;
	}
	/* Without a list of its own, irqbalance bans the isolated and
	 * nohz_full CPUs; a list replaces that, so it must name them. */
	if (!old[0]) {
		sys_cpus("/sys/devices/system/cpu/isolated", m);
		sys_cpus("/sys/devices/system/cpu/nohz_full", m);
	}
	if (hvn_cpulist_format(list, 8192, m, HVN_MAX_CPUS) < 0 ||
	    (size_t)snprintf(line, len, "%s\"%s\"", BAN_KEY, list) >= len) {
		printf("irqbalance: the ban list is too long to write: not changed\n");
		goto out;
	}
	ret = !strcmp(old, line);
out:
	free(list);
	free(m);
	return ret;
}

#define RESTORE_DEFAULT	"/var/lib/hvnoise/advise-restore"

/* The restore file, created with nothing in it yet: its stream, or NULL
 * (said).  One already there is an earlier --apply in force, never lost. */
static FILE *restore_create(const char *path)
{
	FILE *f;
	int fd;

	/* The service's state directory, where no recorder made it yet. */
	if (!strcmp(path, RESTORE_DEFAULT))
		mkdir("/var/lib/hvnoise", 0755);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (errno == EEXIST)
			hvn_err("%s exists: an earlier --apply is in force; hvnoise advise --restore first",
				path);
		else
			hvn_err("cannot create %s: %m", path);
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f) {
		hvn_err("cannot write %s: %m", path);
		close(fd);
		unlink(path);
	}
	return f;
}

static int apply(const struct hvn_advise *o, const struct advise_args *a,
		 const char *rec_host)
{
	char bold[8300], bnew[8300], me[256] = "";
	const char *bpath;
	struct move mv[64];
	int n, bad = 0, ban = -1, ret = HVN_EXIT_OK;
	FILE *f;

	printf("\n%s:\n", a->yes ? "Applying" : "Would apply (a dry run: --yes makes the moves)");
	/* A fleet's hosts have the same IRQ names: another host's recording
	 * must not move this one's IRQs. */
	gethostname(me, sizeof(me) - 1);
	if (strcmp(rec_host, me) && !a->any_host) {
		printf("the recording is of host %s, this is %s: %s\n", rec_host[0] ? rec_host : "?",
		       me, a->yes ? "nothing changed (--any-host to apply it here)" :
		       "what --yes would do on that host, checked against this one");
		if (a->yes)
			return HVN_EXIT_FAIL;
	}
	n = plan_moves(o, mv, 64);
	if (!n) {
		printf("no IRQ to move\n");
		return HVN_EXIT_OK;
	}
	bpath = ban_file(a);
	if (!bpath) {
		printf("irqbalance: not installed (no /etc/default/irqbalance): no ban list to set\n");
	} else if (strchr(bpath, ' ') || strchr(bpath, '\n')) {
		printf("irqbalance: %s: a path with a space is not taken: ban list not set\n", bpath);
		bpath = NULL;
	} else {
		ban = ban_plan(bpath, o->serving, bold, sizeof(bold), bnew, sizeof(bnew));
		if (ban == 0)
			printf("irqbalance: %s in %s (was %s), so that it keeps IRQs off the serving CPUs\n",
			       bnew, bpath, bold[0] ? bold : "unset");
		else if (ban == 1)
			printf("irqbalance: %s already bans the serving CPUs (%s)\n", bpath, bold);
	}
	if (!a->yes)
		goto out;
	if (geteuid()) {
		hvn_err("--apply --yes changes IRQ affinities: root only");
		ret = HVN_EXIT_FAIL;
		goto out;
	}
	/* What is changed is written down before it is changed. */
	f = restore_create(a->restore_file);
	if (!f) {
		ret = HVN_EXIT_FAIL;
		goto out;
	}
	fprintf(f, "%s\n", RESTORE_MAGIC);
	/* The name last: it may hold spaces ("PCIe PME"). */
	for (int i = 0; i < n; i++)
		fprintf(f, "irq %d %s %s\n", mv[i].irq, mv[i].old, mv[i].name);
	if (bpath && !ban)
		fprintf(f, "irqbalance %s %s\n", bpath, bold[0] ? bold : "-");
	if (fflush(f) || fsync(fileno(f))) {
		hvn_err("cannot write %s: %m: nothing changed", a->restore_file);
		fclose(f);
		unlink(a->restore_file);
		ret = HVN_EXIT_FAIL;
		goto out;
	}
	if (fclose(f)) {
		hvn_err("cannot write %s: %m: nothing changed", a->restore_file);
		unlink(a->restore_file);
		ret = HVN_EXIT_FAIL;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		char val[16];

		snprintf(val, sizeof(val), "%d", mv[i].target);
		if (move_irq(mv[i].irq, mv[i].name, val) < 0)
			bad++;
	}
	if (bpath && !ban) {
		if (ban_write(bpath, bnew))
			bad++;
		else if (irqbalance_runs())
			printf("irqbalance: %s set; it runs, and reads it at start: restart it\n"
			       "(systemctl restart irqbalance), or it may move the IRQs back meanwhile\n",
			       bpath);
		else
			printf("irqbalance: %s set (it does not run now: it takes it when it starts)\n",
			       bpath);
	}
	printf("hvnoise advise --restore%s%s puts them back.\n",
	       strcmp(a->restore_file, RESTORE_DEFAULT) ? " --restore-file " : "",
	       strcmp(a->restore_file, RESTORE_DEFAULT) ? a->restore_file : "");
	ret = bad ? HVN_EXIT_FAIL : HVN_EXIT_OK;
out:
	for (int i = 0; i < n; i++)
		free(mv[i].old);
	return ret;
}

static int restore(const char *path)
{
	size_t len;
	char *t = hvn_read_file(path, &len), *line, *save;
	int bad = 0, n = 0;

	if (!t) {
		hvn_err("--restore: cannot read %s: %m (no --apply --yes to undo?)", path);
		return HVN_EXIT_BADFILE;
	}
	line = strtok_r(t, "\n", &save);
	if (!line || strcmp(line, RESTORE_MAGIC)) {
		hvn_err("--restore: %s is not a restore file of hvnoise advise", path);
		free(t);
		return HVN_EXIT_BADFILE;
	}
	if (geteuid()) {
		hvn_err("--restore changes IRQ affinities: root only");
		free(t);
		return HVN_EXIT_FAIL;
	}
	while ((line = strtok_r(NULL, "\n", &save))) {
		char name[HVN_NAME_LEN + 1], old[8192], now[128], bpath[4097];
		int irq, at = 0;

		if (sscanf(line, "irqbalance %4096s %n", bpath, &at) == 1 && at) {
			const char *was = line + at;

			n++;
			if (ban_write(bpath, strcmp(was, "-") ? was : ""))
				bad++;
			else
				printf("irqbalance: %s's ban list is %s again\n", bpath,
				       strcmp(was, "-") ? was : "unset");
			continue;
		}
		at = 0;
		if (sscanf(line, "irq %d %n", &irq, &at) != 1 || !at ||
		    !line[at + strcspn(line + at, " ")] ||
		    strcspn(line + at, " ") >= sizeof(old) ||
		    strlen(line + at + strcspn(line + at, " ") + 1) > HVN_NAME_LEN) {
			hvn_err("--restore: %s: not understood: %s", path, line);
			bad++;
			continue;
		}
		n++;
		memcpy(old, line + at, strcspn(line + at, " "));
		old[strcspn(line + at, " ")] = 0;
		snprintf(name, sizeof(name), "%s", line + at + strlen(old) + 1);
		if (!irq_named(irq, name, now, sizeof(now))) {
			printf("IRQ %d is %s now, not %s: left alone\n", irq,
			       now[0] ? now : "gone", name);
			continue;
		}
		if (move_irq(irq, name, old) < 0)
			bad++;
	}
	free(t);
	if (bad) {
		hvn_err("--restore: %d of %d not restored: %s kept", bad, n, path);
		return HVN_EXIT_FAIL;
	}
	unlink(path);
	return HVN_EXIT_OK;
}

/* After --apply --yes: the same figures of a new recording beside the
 * first one's, per second, for the CPUs concerned. */
static int verify(const char *trace, const struct hvn_corr *before,
		  const struct hvn_advise *o, const struct advise_args *a)
{
	char out[4200], dur[32], *rargv[6];
	struct hvn_schema *schema = calloc(1, sizeof(*schema));
	struct hvn_corr *x = calloc(1, sizeof(*x));
	struct hvn_corr_params prm = HVN_CORR_PARAMS_DEFAULT;
	double sb = hvn_advise_span(&before->an) / 1e9, sa;
	const size_t LB = 8 * sizeof(long);
	unsigned long *srv = NULL;
	struct hvn_tdat t;
	char err[80];
	int ret;

	if (!schema || !x) {
		free(schema);
		free(x);
		return HVN_EXIT_FAIL;
	}
	snprintf(out, sizeof(out), "%s.verify.dat", a->restore_file);
	snprintf(dur, sizeof(dur), "%gs", a->duration);
	rargv[0] = "record";
	rargv[1] = "-d";
	rargv[2] = dur;
	rargv[3] = "-o";
	rargv[4] = out;
	rargv[5] = NULL;
	printf("\nVerifying: recording %s again into %s\n", dur, out);
	fflush(stdout);
	ret = cmd_record(5, rargv);
	if (ret) {
		hvn_err("--verify: the recording failed (exit %d)", ret);
		goto out;
	}
	ret = hvn_tdat_open(&t, out);
	if (ret) {
		hvn_tdat_close(&t);
		goto out;
	}
	x->keep_episodes = true;
	if (hvn_corr_open(x, schema, &t) < 0) {
		hvn_tdat_close(&t);
		ret = HVN_EXIT_FAIL;
		goto out;
	}
	hvn_corr_analyse(x, &t, &prm);
	hvn_tdat_close(&t);
	sa = hvn_advise_span(&x->an) / 1e9;
	srv = calloc(HVN_MAX_CPUS / LB, sizeof(long));
	if (!srv || hvn_cpulist_parse(o->serving, srv, HVN_MAX_CPUS, err, sizeof(err))) {
		ret = HVN_EXIT_FAIL;
		goto out;
	}
	printf("Per second, before (%s, %.1f s) and after (%.1f s):\n", trace, sb, sa);
	printf("%-5s %-22s %15s %15s %17s %17s\n", "CPU", "role", "storms before",
	       "storms after", "lost ms before", "lost ms after");
	for (int c = 0; c < HVN_MAX_CPUS; c++) {
		const struct hvn_analysis *b = &before->an, *n = &x->an;
		char role[64] = "";
		uint64_t s0 = 0, s1 = 0, l0 = 0, l1 = 0;

		if (c < HVN_MAX_CPUS && (srv[c / LB] >> (c % LB) & 1))
			snprintf(role, sizeof(role), "serves the job");
		for (size_t i = 0; i < o->nadv; i++)
			if (o->adv[i].kind == HVN_ADV_IRQ && o->adv[i].target == c)
				snprintf(role, sizeof(role), "IRQ %d's target", o->adv[i].irq);
		if (!role[0])
			continue;
		if (c <= b->max_cpu) {
			s0 = b->cpu[c].storms;
			l0 = b->cpu[c].lost_ns;
		}
		if (c <= n->max_cpu) {
			s1 = n->cpu[c].storms;
			l1 = n->cpu[c].lost_ns;
		}
		printf("%-5d %-22s %15.3f %15.3f %17.3f %17.3f\n", c, role,
		       sb ? s0 / sb : 0, sa ? s1 / sa : 0, sb ? ms(l0) / sb : 0,
		       sa ? ms(l1) / sa : 0);
	}
	for (size_t i = 0; i < o->nadv; i++) {
		const struct hvn_advice *v = &o->adv[i];
		uint64_t on_from = 0, on_to = 0, elsewhere = 0;

		if (v->kind != HVN_ADV_IRQ)
			continue;
		for (size_t j = 0; j < x->nep; j++) {
			const struct hvn_episode *e = &x->ep[j];

			if (e->kind != HVN_EP_STORM || e->irq != v->irq)
				continue;
			if (e->cpu == v->cpu)
				on_from++;
			else if (e->cpu == v->target)
				on_to++;
			else
				elsewhere++;
		}
		printf("IRQ %d (%s) after: %llu storms on CPU %d (served), %llu on CPU %d (its target), %llu elsewhere\n",
		       v->irq, v->name, (unsigned long long)on_from, v->cpu,
		       (unsigned long long)on_to, v->target, (unsigned long long)elsewhere);
	}
	ret = 0;
out:
	free(srv);
	hvn_corr_free(x);
	free(x);
	free(schema);
	return ret;
}

/*
 * Over many hosts: correlate's verdict (analysis/fleet.c) says which hosts
 * held the job, by what their noise cost it; each gets its own advice,
 * from its own recording.
 */
static int advise_fleet(char **paths, size_t n, const struct advise_args *a)
{
	struct hvn_corr_params prm = HVN_CORR_PARAMS_DEFAULT;
	struct hvn_fleet f;
	int ret;

	ret = hvn_fleet_open(&f, paths, n, &prm);
	if (!ret)
		ret = hvn_fleet_analyse(&f, &prm);
	if (ret)
		goto out;
	if (a->json)
		printf("{\"schema\":\"hvnoise-advise-fleet\",\"version\":%d,\"hosts\":%zu,\"drain\":[",
		       SCHEMA_VERSION, f.nh);
	else if (f.nblame)
		printf("Hosts to drain, by what their noise cost the job (of %zu hosts):\n", f.nh);
	else
		printf("No host's noise held the job (%zu hosts): none to drain, nothing to advise.\n",
		       f.nh);
	for (size_t i = 0; i < f.nblame && !a->json; i++) {
		const struct hvn_fleet_blame *b = &f.blame[i];

		printf("  %-24s %10.1f ms, held it %u times\n", f.h[b->host].host,
		       ms(b->delay_ns), b->nheld);
	}
	for (size_t i = 0; i < f.nblame; i++) {
		const struct hvn_fleet_blame *b = &f.blame[i];
		const struct hvn_fleet_host *h = &f.h[b->host];
		struct hvn_advise_params ap = { .min_ms = a->min_ms };
		struct hvn_advise o = { 0 };

		if (a->json) {
			printf("%s{\"host\":", i ? "," : "");
			hvn_json_str(stdout, h->host);
			printf(",\"delay_ms\":%.3f,\"held\":%u,\"advice\":", ms(b->delay_ns),
			       b->nheld);
		} else {
			printf("\n== %s (%s)\n", h->host, h->path);
		}
		if (hvn_summary_is(h->path)) {
			if (a->json)
				printf("null}");
			else
				printf("its advice needs its trace, not its summary: hvnoise advise on the host's recording\n");
			continue;
		}
		if (hvn_advise(h->x, &ap, &o)) {
			hvn_advise_free(&o);
			hvn_err("out of memory");
			ret = HVN_EXIT_FAIL;
			break;
		}
		if (a->json) {
			print_json(h->path, h->host, h->x, &o, NULL, 0, "");
			printf("}");
		} else {
			print_text(h->path, h->host, h->x, &o, a, NULL, 0);
		}
		hvn_advise_free(&o);
	}
	if (a->json)
		printf("]}\n");
out:
	hvn_fleet_free(&f);
	return ret;
}

int cmd_advise(int argc, char **argv)
{
	struct advise_args a = { .min_ms = 10, .duration = 30,
				 .restore_file = RESTORE_DEFAULT };
	struct hvn_corr_params prm = HVN_CORR_PARAMS_DEFAULT;
	struct hvn_schema *schema = calloc(1, sizeof(*schema));
	struct hvn_corr *x = calloc(1, sizeof(*x));
	struct hvn_advise_params ap;
	struct hvn_advise o = { 0 };
	struct hvn_meta m = { 0 };
	struct hvn_tdat t;
	const char *trace;
	char **paths = NULL;
	size_t npaths = 0;
	bool dir = false;
	char blind[BLIND_MAX][400];
	int first, ret, ncpu, r, nblind;

	if (!schema || !x) {
		hvn_err("out of memory");
		ret = HVN_EXIT_FAIL;
		goto out;
	}
	ret = hvn_cli_parse(&advise_cmd, argc, argv, &a, NULL, &first);
	if (ret >= 0)
		goto out;
	ret = HVN_EXIT_USAGE;
	if (a.restore && (a.apply || argc > first)) {
		hvn_err("--restore undoes the last --apply --yes: no TRACE, no --apply");
		goto out;
	}
	if ((a.yes && !a.apply) || (a.verify && !a.yes)) {
		hvn_err(a.verify ? "--verify records after --apply --yes" :
			"--yes goes with --apply");
		goto out;
	}
	if (a.restore) {
		ret = restore(a.restore_file);
		goto out;
	}
	if (argc == first) {
		hvn_err("which TRACE.dat?");
		hvn_cli_usage(&advise_cmd, stderr);
		goto out;
	}
	for (int i = first; i < argc; i++)
		if (hvn_fleet_inputs(argv[i], &paths, &npaths, &dir)) {
			ret = HVN_EXIT_BADFILE;
			goto out;
		}
	if (npaths > 1 || dir) {
		if (a.apply || a.bundle) {
			hvn_err("--apply and --bundle take one host's TRACE.dat: run them on the host to drain");
			goto out;
		}
		ret = advise_fleet(paths, npaths, &a);
		goto out;
	}
	trace = argv[first];
	ret = hvn_tdat_open(&t, trace);
	if (ret) {
		hvn_tdat_close(&t);
		goto out;
	}
	x->keep_episodes = true;
	ret = hvn_corr_open(x, schema, &t);
	if (ret < 0 || hvn_meta_read(&m, &t)) {
		hvn_err("out of memory");
		ret = HVN_EXIT_FAIL;
		goto close;
	}
	hvn_corr_analyse(x, &t, &prm);
	snprintf(x->online, sizeof(x->online), "%s", m.online);
	ncpu = t.ncpus;
	ap = (struct hvn_advise_params){ .min_ms = a.min_ms, .ncpus = ncpu };
	r = hvn_advise(x, &ap, &o);
	if (r) {
		hvn_err(r == -ENOSPC ? "a CPU list too long to write" : "out of memory");
		ret = HVN_EXIT_FAIL;
		goto close;
	}
	nblind = blind_spots(&m, t.stopped, blind, BLIND_MAX);
	if (a.json)
		print_json(trace, m.host, x, &o, blind, nblind, "\n");
	else
		print_text(trace, m.host, x, &o, &a, blind, nblind);
	if (a.bundle) {
		r = 0;
		if (o.nvcpu)
			r = write_bundle(a.bundle, trace, &m, x, &o);
		else
			hvn_info("--bundle: the hypervisor took no time worth it (at most %.1f ms at a time): no bundle written\n",
				 ms(o.worst_hv));
		if (r && !ret)
			ret = r;
	}
	if (a.apply) {
		fflush(stdout);
		r = apply(&o, &a, m.host);
		if (!r && a.verify)
			r = verify(trace, x, &o, &a);
		if (r && !ret)
			ret = r;
	}
close:
	hvn_advise_free(&o);
	hvn_meta_free(&m);
	hvn_tdat_close(&t);
	hvn_corr_free(x);
out:
	for (size_t i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
	free(x);
	free(schema);
	return ret;
}
