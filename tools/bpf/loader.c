// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF collector as an event source (see loader.h): load and attach,
 * the watched set applied to the collector's maps, the perf timers kept
 * on the watched CPUs, records delivered.
 *
 * The watched set (resolve.c) is re-resolved every resolve_ms, which also
 * finds IRQ moves the probes did not see (how=poll), as the module's poll
 * does.
 */
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "hvn.h"
#include "hvnoise/event_layout.h"
#include "loader.h"
#include "cpulist.h"
#include "devlist.h"
#include "steal.h"
#include "watchset.h"
#include "bpf_config.h"
#include "params.h"
#include "perf_timer.h"
#include "probe.h"
#include "resolve.h"
#include "hvnoise.skel.h"

struct hvn_bpf;
static void procstat_steal(struct hvn_bpf *b);

struct hvn_bpf {
	struct hvnoise_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;
	int nlinks;
	struct hvn_timer *sample;	/* [cpu]: the sample_us timers */
	struct hvn_timer *backup;	/* [cpu]: their backups (sync_timers) */
	struct hvn_timer steal_t;	/* the steal sampler, on steal_cpu */
	int steal_cpu;
	struct hvn_timer_stats tstats;	/* perf throttled its timers */
	struct hvn_bpf_cfg cfg;
	struct hvn_devlist devs;
	unsigned long listed[HVN_BITS_TO_LONGS(HVN_BPF_MAX_CPUS)];
	unsigned int ncpus;		/* possible CPUs */
	struct hvn_watchset *ws;
	u32 gen;
	char watched[HVN_BPF_MAX_CPUS * 5];	/* any cpulist of them: "N," each */
	enum hvn_steal_way steal;
	bool emit_pending;		/* the watched set changed */
	bool emit_whole;		/* asked for it whole */
	/* The set the records last emitted describe, while a change from it
	 * waits to go out as a delta; NULL: none, or emitted. */
	struct hvn_watchset *emitted;
	uint64_t watch_ts;		/* when: before the probes saw it */
	uint64_t irq_lost;		/* watched IRQs the table had no room
					 * for, in the set applied last */
	uint64_t next_resolve;
	/* The probes count the IRQs' changes (x86); the count at the last
	 * poll; read again at the next; the next read in any case. */
	bool vec_counted;
	u64 vec_seen;
	bool vec_again;
	uint64_t next_full;
	char *online;		/* the online CPUs at the last poll */
	bool unresolved;	/* a re-resolution failed (said once) */
	/* Where ring buffer records go during a poll. */
	hvn_bpf_rec_fn fn;
	void *ctx;
	int err;
	int delivered;
};

/* Whether the probes take @cpu as watched now. */
static bool cpu_watched(const struct hvn_bpf *b, unsigned int cpu)
{
	return b->skel->bss->cpu_flags[cpu].watched;
}

/* The watched set now; @online: the online CPUs if just read. */
static struct hvn_watchset *resolve(struct hvn_bpf *b)
{
	return hvn_sysfs_resolve(&b->devs, b->listed, b->ncpus, b->online);
}

/* --- delivering records -------------------------------------------------- */

static const uint32_t ev_size[HVN_NR_EVENTS] = {
	[HVN_EV_watch] = sizeof(struct hvn_ev_watch),
	[HVN_EV_steal] = sizeof(struct hvn_ev_steal),
	[HVN_EV_lost] = sizeof(struct hvn_ev_lost),
	[HVN_EV_irq_storm_begin] = sizeof(struct hvn_ev_irq_storm_begin),
	[HVN_EV_irq_storm] = sizeof(struct hvn_ev_irq_storm),
	[HVN_EV_irq_migrate] = sizeof(struct hvn_ev_irq_migrate),
};

static void deliver(struct hvn_bpf *b, int cpu, uint64_t ts, int ev,
		    void *rec)
{
	struct hvn_ev_common *c = rec;

	c->type = HVN_BPF_EVID(ev);
	if (b->err || !b->fn)
		return;
	if (b->fn(b->ctx, cpu, ts, rec, ev_size[ev]))
		b->err = -1;
	else
		b->delivered++;
}

static int on_msg(void *ctx, void *data, size_t len)
{
	struct hvn_bpf *b = ctx;
	struct hvn_bpf_msg m;

	/* The ring is mapped read-only: the id goes into a copy. */
	if (len < sizeof(m))
		return 0;
	memcpy(&m, data, sizeof(m));
	if (m.event < HVN_NR_EVENTS)
		deliver(b, m.cpu, m.ts, m.event, &m.rec);
	return 0;
}

struct watch_emit {
	struct hvn_bpf *b;
	uint64_t ts;
};

static void emit_watch(void *ctx, const struct hvn_watch_rec *r)
{
	struct watch_emit *we = ctx;
	struct hvn_ev_watch w = {
		.common.pid = getpid(),
		.gen = r->gen, .idx = r->idx, .count = r->count,
		.kind = r->kind, .why = r->why, .node = r->node,
		.cpu = r->cpu, .irq = r->irq, .dev = r->dev, .nirqs = r->nirqs,
	};

	if (r->name)
		snprintf(w.name, sizeof(w.name), "%s", r->name);
	deliver(we->b, 0, we->ts, HVN_EV_watch, &w);
}

static int cmp_s32(const void *a, const void *b)
{
	s32 x = *(const s32 *)a, y = *(const s32 *)b;

	return (x > y) - (x < y);
}

/*
 * IRQs no longer in @ws leave the table (a driver unbound): the keys read
 * first, then deleted (deleting while iterating restarts the walk), each
 * looked up in the set's IRQs sorted: O(n log n), not O(n^2), at thousands
 * of vectors.
 */
static void drop_gone(int fd, const struct hvn_watchset *ws)
{
	s32 *in = malloc((ws->nirq + 1) * sizeof(*in));
	s32 *gone = malloc(HVN_BPF_MAX_IRQS * sizeof(*gone));
	s32 key, next, *prev = NULL;
	unsigned int ngone = 0;

	if (!in || !gone)
		goto out;
	for (unsigned int i = 0; i < ws->nirq; i++)
		in[i] = ws->irq[i].irq;
	qsort(in, ws->nirq, sizeof(*in), cmp_s32);
	while (ngone < HVN_BPF_MAX_IRQS && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		if (!bsearch(&key, in, ws->nirq, sizeof(*in), cmp_s32))
			gone[ngone++] = key;
		prev = &key;
	}
	for (unsigned int i = 0; i < ngone; i++)
		bpf_map_delete_elem(fd, &gone[i]);
out:
	free(in);
	free(gone);
}

/*
 * Apply @ws: the IRQ table (moves the poll found, IRQs gone, names and
 * devices refreshed), the watched CPUs (a CPU joining starts clean, as in
 * the module's cpu_enter()), and the records of a changed set.
 */
static void apply(struct hvn_bpf *b, struct hvn_watchset *ws)
{
	struct hvnoise_bpf *sk = b->skel;
	int fd = bpf_map__fd(sk->maps.irq_map);
	int sfd = bpf_map__fd(sk->maps.steal_map);
	uint64_t now = hvn_now(CLOCK_MONOTONIC);
	unsigned long map[HVN_BITS_TO_LONGS(HVN_BPF_MAX_CPUS)] = { 0 };
	uint64_t watch_ts;

	/* Nothing changed, as the module's hvn_watch_update() sees it. */
	if (b->ws && hvn_ws_equal(b->ws, ws)) {
		hvn_sysfs_ws_free(ws);
		return;
	}
	drop_gone(fd, ws);
	b->irq_lost = 0;		/* counted again, not once an apply */
	for (unsigned int i = 0; i < ws->nirq; i++) {
		const struct hvn_wirq *w = &ws->irq[i];
		struct hvn_bpf_irq e, old;
		s32 irq = w->irq;

		/* An IRQ routed to several CPUs counts by its first. */
		if (i && ws->irq[i - 1].irq == irq)
			continue;
		e = (struct hvn_bpf_irq){ .cpu = w->cpu, .dev = w->dev };
		memcpy(e.name, w->name, sizeof(e.name));
		if (!bpf_map_lookup_elem(fd, &irq, &old)) {
			/* Freed (no handler, no name): the last name stands. */
			if (!e.name[0] && old.dev == w->dev)
				memcpy(e.name, old.name, sizeof(e.name));
			e.moved_ns = old.moved_ns;
			/* A probe moved it after this set was read: its CPU
			 * is the later one (else this would undo the move,
			 * and the next poll report it again). */
			if (old.dev == w->dev && old.moved_ns > ws->as_of)
				e.cpu = old.cpu;
			if (old.cpu >= 0 && e.cpu >= 0 && old.cpu != e.cpu &&
			    old.dev == w->dev) {
				struct hvn_ev_irq_migrate m = {
					.common.pid = getpid(), .irq = irq,
					.dev = old.dev, .from_cpu = old.cpu,
					.to_cpu = e.cpu, .how = HVN_MIG_POLL,
				};

				memcpy(m.name, e.name, sizeof(m.name));
				deliver(b, e.cpu, now, HVN_EV_irq_migrate, &m);
			}
			/* Where the probes saw it last stands if the poll
			 * cannot say (no CPU in its affinity). */
			if (w->cpu < 0 && old.dev == w->dev)
				e.cpu = old.cpu;
			if (!memcmp(&e, &old, sizeof(e)))
				continue;
		}
		if (bpf_map_update_elem(fd, &irq, &e, BPF_ANY))
			b->irq_lost++;
	}
	hvn_ws_cpumap(ws, map);
	/* The set's records are stamped before the probes see it, so a
	 * leaving CPU's storm ends come after them, as with the module. */
	watch_ts = hvn_now(CLOCK_MONOTONIC);
	for (unsigned int c = 0; c < b->ncpus && c < HVN_BPF_MAX_CPUS; c++) {
		bool want = hvn_bit_test(map, c);

		if (want && !cpu_watched(b, c)) {
			struct hvn_steal_cpu sc = { 0 };

			/* Joining: fresh steal samples and detector state. */
			bpf_map_update_elem(sfd, &c, &sc, BPF_ANY);
			sk->bss->enter_gen[c]++;
		}
		__atomic_store_n(&sk->bss->cpu_flags[c].watched, want,
				 __ATOMIC_RELEASE);
	}
	hvn_cpulist_format(b->watched, sizeof(b->watched), map, b->ncpus);
	ws->gen = ++b->gen;
	/* Until its change is emitted, the set it changes is kept. */
	if (b->emit_pending || !b->ws)
		hvn_sysfs_ws_free(b->ws);
	else
		b->emitted = b->ws;
	b->ws = ws;
	b->emit_pending = true;
	b->watch_ts = watch_ts;
}

/* --- load and attach ----------------------------------------------------- */

/*
 * The CPUs the collector is verified and sized for: the possible ones, or
 * (tests/host/bpf.sh) HVNOISE_BPF_LOAD_CPUS, more of them up to the limit,
 * so that a small host proves the verifier takes a big one's collector.
 */
static unsigned int load_cpus(const struct hvn_bpf *b)
{
	const char *e = getenv("HVNOISE_BPF_LOAD_CPUS");
	long n = e ? strtol(e, NULL, 10) : 0;

	return n > (long)b->ncpus && n <= HVN_BPF_MAX_CPUS ? (unsigned int)n : b->ncpus;
}

/*
 * Whether every possible CPU's id indexes the collector's arrays: its
 * probes mask the CPU rather than compare it, and libbpf counts the
 * possible CPUs, which a mask with gaps would let past.  @err says why not.
 */
static bool possible_ids_fit(char *err, size_t errlen)
{
	unsigned long map[HVN_BITS_TO_LONGS(HVN_BPF_MAX_CPUS)];
	char line[4096];
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	bool ok;

	err[0] = '\0';
	if (!f) {
		snprintf(err, errlen, "/sys/devices/system/cpu/possible: %s",
			 strerror(errno));
		return false;
	}
	ok = fgets(line, sizeof(line), f) &&
	     !hvn_cpulist_parse(line, map, HVN_BPF_MAX_CPUS, err, errlen);
	if (ferror(f) || (!ok && !err[0]))
		snprintf(err, errlen, "/sys/devices/system/cpu/possible unreadable");
	fclose(f);
	return ok;
}

/* Timers without a keeper: lifted at each poll. */
static void rearm_throttled(struct hvn_bpf *b)
{
	for (unsigned int cpu = 0; b->sample && b->backup && cpu < b->ncpus; cpu++) {
		hvn_timer_lift(&b->sample[cpu]);
		hvn_timer_lift(&b->backup[cpu]);
	}
	hvn_timer_lift(&b->steal_t);
}

/*
 * The perf cpu-clock timers, kept on the right CPUs as the watched set
 * changes: a sample_us timer on each watched CPU, and the steal sampler on
 * the first online CPU not watched (else CPU 0).  0, or -1 (printed).
 */
static int sync_timers(struct hvn_bpf *b)
{
	struct hvnoise_bpf *sk = b->skel;
	unsigned int us = hvn_bpf_tunable(&b->cfg, HVN_TUN_sample_us);
	unsigned int ms = hvn_bpf_tunable(&b->cfg, HVN_TUN_steal_ms);
	int hk = -1, e;

	for (unsigned int cpu = 0; cpu < b->ncpus; cpu++) {
		bool want = us && cpu_watched(b, cpu) && hvn_sysfs_cpu_online(cpu);

		/*
		 * Each CPU's sampler has a backup, a second timer at 3/2 its
		 * period: perf throttles each apart, so one is pending while
		 * the keeper lifts the other (a throttle left the CPU without
		 * a timer for 0.5 ms on average, long enough for 6.7% of the
		 * pauses of a forced-low soak to begin inside it).  It names
		 * nothing to the probe: a hard timer like any other.
		 */
		for (int k = 0; k < 2; k++) {
			struct hvn_timer *t = k ? &b->backup[cpu] : &b->sample[cpu];

			/* Dead since its CPU went offline (and maybe back): anew. */
			if (want && t->fd >= 0 && !hvn_timer_alive(t))
				hvn_timer_stop(t);
			if (want == (t->fd >= 0))
				continue;
			if (!want) {
				hvn_timer_stop(t);
				continue;
			}
			e = k ? hvn_timer_start(t, &b->tstats, cpu, (u64)us * 1500,
						sk->progs.backup, NULL,
						&sk->bss->backup_period[cpu],
						&sk->bss->throttled_busy[cpu][1]) :
				hvn_timer_start(t, &b->tstats, cpu, (u64)us * 1000,
						sk->progs.sampler,
						&sk->bss->sampler_gen[cpu],
						&sk->bss->sample_period[cpu],
						&sk->bss->throttled_busy[cpu][0]);
			if (e) {
				hvn_err("BPF: cannot start the sampling timer on CPU %u: %s",
					cpu, strerror(-e));
				return -1;
			}
		}
	}
	if (b->steal_t.fd >= 0 && (!hvn_sysfs_cpu_online(b->steal_cpu) ||
				   !hvn_timer_alive(&b->steal_t)))
		hvn_timer_stop(&b->steal_t);
	if (!ms || (b->steal_t.fd >= 0 && !cpu_watched(b, b->steal_cpu)))
		return 0;
	for (unsigned int cpu = 0; cpu < b->ncpus && hk < 0; cpu++)
		if (!cpu_watched(b, cpu) && hvn_sysfs_cpu_online(cpu))
			hk = cpu;
	if (hk < 0)
		hk = 0;
	if (b->steal_t.fd >= 0 && b->steal_cpu == hk)
		return 0;	/* every CPU watched: it stays where it is */
	hvn_timer_stop(&b->steal_t);
	e = hvn_timer_start(&b->steal_t, &b->tstats, hk, (u64)ms * 1000000,
			    b->steal == HVN_STEAL_KSYMS ? sk->progs.steal_ksyms :
							  sk->progs.steal_acct,
			    NULL, NULL, NULL);
	if (e) {
		hvn_err("BPF: cannot start the steal sampler on CPU %d: %s",
			hk, strerror(-e));
		return -1;
	}
	b->steal_cpu = hk;
	return 0;
}

static void stop_timers(struct hvn_bpf *b)
{
	hvn_timer_stop(&b->steal_t);
	for (unsigned int cpu = 0; b->sample && b->backup && cpu < b->ncpus; cpu++) {
		hvn_timer_stop(&b->sample[cpu]);
		hvn_timer_stop(&b->backup[cpu]);
	}
}

static int add_link(struct hvn_bpf *b, struct bpf_link *l, const char *what)
{
	struct bpf_link **n;

	if (!l) {
		hvn_err("BPF: cannot attach %s: %s", what, strerror(errno));
		return -1;
	}
	n = realloc(b->links, (b->nlinks + 1) * sizeof(*n));
	if (!n) {
		bpf_link__destroy(l);
		return -1;
	}
	b->links = n;
	b->links[b->nlinks++] = l;
	return 0;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	/* Silent unless asked: a failed load is reported by us, in one
	 * line; -v (or HVNOISE_BPF_DEBUG=1) shows libbpf's log with the
	 * verifier's, -vv its debug lines too. */
	int v = hvn_verbosity > 0 ? hvn_verbosity :
		getenv("HVNOISE_BPF_DEBUG") ? 1 : 0;

	if (!v || (level == LIBBPF_DEBUG && v < 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/*
 * Whether the probes can count every change of the watched set's IRQs
 * (resolve_due()): the x86 vector domain's tracepoints, and kprobes for
 * the handlers' /proc/irq entries.  Not in a Xen guest: its event
 * channel IRQs (a passed-through device's MSI-X among them) move with no
 * vector of their own.
 */
static bool counts_irq_changes(const struct btf *btf)
{
	char *hv = hvn_read_file("/sys/hypervisor/type", NULL);
	bool xen = hv && !strncmp(hv, "xen", 3);

	free(hv);
	return !xen && hvn_bpf_has_tracepoint(btf, "vector_config") &&
	       hvn_bpf_has_tracepoint(btf, "vector_activate") &&
	       hvn_bpf_has_tracepoint(btf, "vector_deactivate") &&
	       hvn_bpf_has_kprobes();
}

/*
 * The collector fitted to this kernel and to the tunables before it is
 * loaded: the programs of tracepoints it lacks left out, the way to read
 * steal chosen, the detectors' thresholds.  0, or -1 (said).
 */
static int configure(struct hvn_bpf *b, struct hvnoise_bpf *sk,
		     const struct hvn_bpf_cfg *c)
{
	static const char *const x86_tps[] = {
		"nmi_handler", "local_timer_entry", "local_timer_exit",
		"reschedule_entry", "reschedule_exit", "call_function_entry",
		"call_function_exit", "call_function_single_entry",
		"call_function_single_exit", "vector_update", "vector_config",
		"vector_activate", "vector_deactivate",
	};
	struct bpf_program *prog;
	struct btf *btf;
	bool ksyms;
	u64 win;

	btf = btf__parse(hvn_bpf_btf_path(), NULL);
	if (!btf) {
		hvn_err("BPF: cannot read the kernel's BTF from %s: %s",
			hvn_bpf_btf_path(), strerror(errno));
		return -1;
	}
	sk->rodata->nr_cpus = load_cpus(b);
	sk->rodata->have_vector_update = hvn_bpf_has_tracepoint(btf, "vector_update");
	b->vec_counted = counts_irq_changes(btf);
	bpf_program__set_autoload(sk->progs.handler_add, b->vec_counted);
	bpf_program__set_autoload(sk->progs.handler_del, b->vec_counted);
	for (size_t i = 0; i < sizeof(x86_tps) / sizeof(*x86_tps); i++)
		if (!hvn_bpf_has_tracepoint(btf, x86_tps[i]))
			bpf_object__for_each_program(prog, sk->obj)
				if (strstr(bpf_program__section_name(prog),
					   x86_tps[i]))
					bpf_program__set_autoload(prog, false);
	btf__free(btf);
	/* One read of kallsyms decides it (120k lines on a big kernel). */
	b->steal = hvn_bpf_steal_way();
	ksyms = b->steal == HVN_STEAL_KSYMS;
	bpf_program__set_autoload(sk->progs.hrtimer_ksyms, ksyms);
	bpf_program__set_autoload(sk->progs.steal_ksyms, ksyms);
	bpf_program__set_autoload(sk->progs.hrtimer_acct, !ksyms);
	bpf_program__set_autoload(sk->progs.steal_acct, !ksyms);
	bpf_program__set_autoload(sk->progs.acct_steal,
				  b->steal == HVN_STEAL_KPROBE);

	win = (u64)hvn_bpf_tunable(c, HVN_TUN_storm_window_ms) * 1000000;
	sk->data->storm_cfg.window_ns = win;
	sk->data->storm_cfg.threshold =
		hvn_storm_threshold(hvn_bpf_tunable(c, HVN_TUN_storm_rate), win);
	sk->data->storm_all_cfg.window_ns = win;
	sk->data->storm_all_cfg.threshold =
		hvn_storm_threshold(hvn_bpf_tunable(c, HVN_TUN_storm_all_rate), win);
	sk->data->lost_cfg.threshold_ns =
		(u64)hvn_bpf_tunable(c, HVN_TUN_lost_threshold_us) * 1000;
	sk->data->lost_cfg.tick_ns = hvn_bpf_tick_ns();
	/* Steal accounted by the tick: two ticks at HZ=100, the longest. */
	sk->data->lost_cfg.settle_ns = 20 * 1000 * 1000;
	sk->data->steal_threshold_ns =
		(u64)hvn_bpf_tunable(c, HVN_TUN_steal_threshold_us) * 1000;
	sk->rodata->sample_ns = (u64)hvn_bpf_tunable(c, HVN_TUN_sample_us) * 1000;
	/* One entry per possible CPU, not HVN_BPF_MAX_CPUS of them. */
	if (bpf_map__set_max_entries(sk->maps.steal_map, load_cpus(b)) ||
	    bpf_map__set_max_entries(sk->maps.steal_sum, load_cpus(b))) {
		hvn_err("BPF: cannot size the collector's maps for %u CPUs", b->ncpus);
		return -1;
	}
	return 0;
}

/*
 * The programs attached, then the watched set resolved and applied and
 * the timers started on it: 0, or an HVN_EXIT_* code (said).
 */
static int attach(struct hvn_bpf *b, const struct hvn_bpf_cfg *c)
{
	struct bpf_program *prog;
	struct hvn_watchset *ws;

	/* Changes before the probes count them: the first poll reads. */
	b->vec_again = true;
	ws = resolve(b);
	if (!ws) {
		hvn_err("BPF: cannot resolve the watched set: %s",
			strerror(errno));
		return HVN_EXIT_FAIL;
	}
	if (!hvn_ws_ncpus(ws)) {
		hvn_err("nothing to watch: %s",
			c->cpus || c->devices ?
			"--cpus/--devices name no online CPU or device with IRQs" :
			"devices=auto found no NVIDIA GPU or network controller with IRQs; name CPUs with --cpus");
		hvn_sysfs_ws_free(ws);
		return HVN_EXIT_USAGE;
	}

	bpf_object__for_each_program(prog, b->skel->obj) {
		struct bpf_link *l;

		if (!bpf_program__autoload(prog) ||
		    bpf_program__type(prog) == BPF_PROG_TYPE_PERF_EVENT)
			continue;
		l = bpf_program__attach(prog);
		/* A kernel without the function (inlined): read each poll. */
		if (!l && (prog == b->skel->progs.handler_add ||
			   prog == b->skel->progs.handler_del)) {
			b->vec_counted = false;
			continue;
		}
		if (add_link(b, l, bpf_program__section_name(prog))) {
			hvn_sysfs_ws_free(ws);
			return HVN_EXIT_FAIL;
		}
	}
	/* Watching begins once every program is attached: each attach
	 * patches text with IPIs to all CPUs, which the programs attached
	 * before it would count as a call_function storm (as at detach). */
	apply(b, ws);

	b->sample = calloc(b->ncpus, sizeof(*b->sample));
	b->backup = calloc(b->ncpus, sizeof(*b->backup));
	if (!b->sample || !b->backup)
		return HVN_EXIT_FAIL;
	for (unsigned int cpu = 0; cpu < b->ncpus; cpu++)
		b->sample[cpu] = b->backup[cpu] = HVN_TIMER_INIT;
	if (sync_timers(b))
		return HVN_EXIT_FAIL;

	return 0;
}

int hvn_bpf_start(struct hvn_bpf **out, const struct hvn_bpf_cfg *c)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo);
	char why[256], err[256];
	struct hvn_bpf *b;
	struct hvnoise_bpf *sk;
	int ret = HVN_EXIT_FAIL;

	if (!hvn_bpf_usable(why, sizeof(why))) {
		hvn_err("BPF: %s", why);
		return HVN_EXIT_FAIL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return HVN_EXIT_FAIL;
	b->steal_t = HVN_TIMER_INIT;
	b->cfg = *c;
	b->ncpus = libbpf_num_possible_cpus();
	if ((int)b->ncpus < 1 || b->ncpus > HVN_BPF_MAX_CPUS) {
		hvn_err("BPF: %d possible CPUs; the collector handles at most %d",
			(int)b->ncpus, HVN_BPF_MAX_CPUS);
		goto fail;
	}
	if (!possible_ids_fit(err, sizeof(err))) {
		hvn_err("BPF: possible CPUs: %s; the collector indexes CPUs 0-%d",
			err, HVN_BPF_MAX_CPUS - 1);
		goto fail;
	}
	if (c->cpus &&
	    hvn_cpulist_parse(c->cpus, b->listed, b->ncpus, err, sizeof(err))) {
		hvn_err("--cpus %s: %s", c->cpus, err);
		ret = HVN_EXIT_USAGE;
		goto fail;
	}
	if (hvn_devlist_parse(c->devices ? c->devices : (c->cpus ? "none" : "auto"),
			      &b->devs, err, sizeof(err))) {
		hvn_err("--devices %s: %s", c->devices, err);
		ret = HVN_EXIT_USAGE;
		goto fail;
	}

	libbpf_set_print(libbpf_quiet);
	if (getenv("HVNOISE_BTF"))
		oo.btf_custom_path = hvn_bpf_btf_path();
	b->skel = sk = hvnoise_bpf__open_opts(&oo);
	if (!sk) {
		hvn_err("BPF: cannot open the collector: %s", strerror(errno));
		goto fail;
	}
	if (configure(b, sk, c))
		goto fail;

	if (hvnoise_bpf__load(sk)) {
		int e = errno;

		hvn_err("BPF: the kernel refused the collector: %s%s", strerror(e),
			e == EPERM ? " (root with CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN needed; kernel lockdown forbids it too)"
				   : " (-v shows libbpf's log)");
		goto fail;
	}

	/* The counters hold /proc/stat's totals before any probe reads
	 * them: a first read of 0 would make the whole total one window's. */
	if (b->steal == HVN_STEAL_PROCSTAT)
		procstat_steal(b);
	ret = attach(b, c);
	if (ret)
		goto fail;
	ret = HVN_EXIT_FAIL;
	b->rb = ring_buffer__new(bpf_map__fd(sk->maps.events), on_msg, b, NULL);
	if (!b->rb) {
		hvn_err("BPF: cannot map the ring buffer: %s", strerror(errno));
		goto fail;
	}
	b->next_resolve = hvn_now(CLOCK_MONOTONIC) +
			  (u64)hvn_bpf_tunable(c, HVN_TUN_resolve_ms) * 1000000;
	*out = b;
	return 0;
fail:
	hvn_bpf_free(b);
	return ret;
}

static int drain(struct hvn_bpf *b, hvn_bpf_rec_fn fn, void *ctx)
{
	if (b->steal == HVN_STEAL_PROCSTAT)
		procstat_steal(b);
	b->fn = fn;
	b->ctx = ctx;
	b->delivered = 0;
	b->err = 0;
	if (b->ws && (b->emit_pending || b->emit_whole)) {
		struct watch_emit we = { b, b->emit_pending ? b->watch_ts :
					 hvn_now(CLOCK_MONOTONIC) };

		if (b->emit_whole)
			hvn_ws_walk(b->ws, emit_watch, &we);
		else
			hvn_ws_walk_change(b->emitted, b->ws,
					   hvn_bpf_tunable(&b->cfg, HVN_TUN_watch_delta_pct),
					   emit_watch, &we);
		b->emit_pending = b->emit_whole = false;
		hvn_sysfs_ws_free(b->emitted);
		b->emitted = NULL;
	}
	if (ring_buffer__consume(b->rb) < 0 && !b->err)
		b->err = -1;
	return b->err ? -1 : b->delivered;
}

/*
 * Whether this poll reads /proc/irq again: 49,000 instructions an IRQ
 * (bench/instructions.sh scale), 49 million a second with 1,000 IRQs.
 * Where the probes count the IRQs' changes, only after one, again one
 * poll later (a handler's /proc/irq entry may come after the count), and
 * HVN_BPF_REREAD_PERIODS resolve_ms periods after its last read (a
 * device come or gone with no vector of its own yet); elsewhere every
 * poll.
 */
#define HVN_BPF_REREAD_PERIODS	30

static bool resolve_due(struct hvn_bpf *b, uint64_t now, uint64_t period)
{
	u64 v = __atomic_load_n(&b->skel->bss->vec_changes, __ATOMIC_ACQUIRE);
	bool due = !b->vec_counted || v != b->vec_seen || b->vec_again ||
		   now >= b->next_full;

	b->vec_again = v != b->vec_seen;
	b->vec_seen = v;
	if (due)
		b->next_full = now + HVN_BPF_REREAD_PERIODS * period;
	return due;
}

int hvn_bpf_poll(struct hvn_bpf *b, hvn_bpf_rec_fn fn, void *ctx)
{
	unsigned int rms = hvn_bpf_tunable(&b->cfg, HVN_TUN_resolve_ms);
	uint64_t now = hvn_now(CLOCK_MONOTONIC);
	char *on = hvn_read_file("/sys/devices/system/cpu/online", NULL);
	bool hotplug = false;
	int n;

	/*
	 * A CPU came or went: its timers (perf's die at offline) and the
	 * IRQs forced off it now, not at the next re-resolution: a CPU back
	 * online was blind until then.
	 */
	if (on && (!b->online || strcmp(on, b->online))) {
		hotplug = b->online;
		free(b->online);
		b->online = on;
	} else {
		free(on);
	}
	rearm_throttled(b);
	n = drain(b, fn, ctx);

	if (n >= 0 && ((rms && now >= b->next_resolve) || hotplug)) {
		struct hvn_watchset *ws;

		b->next_resolve = now + (u64)rms * 1000000;
		if (!hotplug && !resolve_due(b, now, (u64)rms * 1000000)) {
			/* Timers a quick offline and online killed. */
			sync_timers(b);
			return n;
		}
		ws = resolve(b);
		if (ws && hvn_ws_ncpus(ws)) {
			apply(b, ws);
			/* Not fatal: the detectors run on, unsampled. */
			sync_timers(b);
		} else {
			if (!b->unresolved)
				hvn_warn("BPF: the watched set could not be resolved again (%s): CPUs and IRQ moves stand as last resolved",
					 ws ? "no CPU in it" : "out of memory");
			b->unresolved = true;
			b->vec_again = true;	/* tried again next poll */
			hvn_sysfs_ws_free(ws);
		}
		if (b->err)
			return -1;
		n = drain(b, fn, ctx);
	}
	return n;
}

struct open_storm {
	struct hvn_storm *st;
	const struct hvn_storm_cfg *c;
	struct hvn_bpf_who who;
};

int hvn_bpf_finish(struct hvn_bpf *b, hvn_bpf_rec_fn fn, void *ctx)
{
	int fd = bpf_map__fd(b->skel->maps.pcpu_map);
	size_t vsz = (sizeof(struct hvn_bpf_pcpu) + 7) & ~7ul;
	struct hvn_storm_cfg sc = b->skel->data->storm_cfg;
	struct hvn_storm_cfg sa = b->skel->data->storm_all_cfg;
	uint64_t now;
	struct hvn_watchset *ws;
	char *vals;
	u32 zero = 0;
	int n;

	/* The moves since the last re-resolution, up to the stop. */
	if (drain(b, fn, ctx) < 0)
		return -1;
	ws = resolve(b);
	if (ws && hvn_ws_ncpus(ws))
		apply(b, ws);
	else
		hvn_sysfs_ws_free(ws);
	/* Every CPU unwatched first: each detach patches text with IPIs to
	 * all CPUs, which the programs still attached counted as a
	 * call_function storm on every CPU (64 vCPUs, storm_rate=500).  A
	 * CPU's storms under way end at its next event, or below. */
	for (unsigned int c = 0; c < b->ncpus && c < HVN_BPF_MAX_CPUS; c++)
		__atomic_store_n(&b->skel->bss->cpu_flags[c].watched, 0,
				 __ATOMIC_RELEASE);
	for (int i = 0; i < b->nlinks; i++)
		bpf_link__destroy(b->links[i]);
	b->nlinks = 0;
	stop_timers(b);
	n = drain(b, fn, ctx);
	if (n < 0)
		return -1;
	/* Storms cut short by the detach, ended at once as at unload. */
	vals = calloc(b->ncpus, vsz);
	if (!vals || bpf_map_lookup_elem(fd, &zero, vals)) {
		free(vals);
		return n;
	}
	now = hvn_now(CLOCK_MONOTONIC);
	for (unsigned int cpu = 0; cpu < b->ncpus; cpu++) {
		struct hvn_bpf_pcpu *p = (void *)(vals + cpu * vsz);
		struct hvn_storm_report rep;
		struct open_storm s[1 + HVN_BPF_NR_VEC + HVN_STORM_SLOTS];
		int k = 0;

		if (!p->nactive)
			continue;
		s[k++] = (struct open_storm){ &p->all, &sa, hvn_bpf_all_who };
		for (int i = 0; i < HVN_BPF_NR_VEC; i++)
			s[k++] = (struct open_storm){ &p->vec[i], &sc,
						      hvn_bpf_vec_who[i] };
		for (int i = 0; i < HVN_STORM_SLOTS; i++) {
			s[k] = (struct open_storm){ &p->slot[i].st, &sc,
				{ p->slot[i].irq, HVN_SRC_IRQ, "" } };
			memcpy(s[k++].who.name, p->slot[i].name,
			       HVN_IRQ_NAME_LEN);
		}
		for (int i = 0; i < k; i++) {
			struct hvn_ev_irq_storm e = { .common.pid = getpid() };

			if (!hvn_storm_expire(s[i].st, s[i].c, now, true, &rep))
				continue;
			e.cpu = cpu;
			e.source = s[i].who.src;
			e.irq = s[i].who.irq;
			e.start = rep.start;
			e.duration = rep.duration;
			e.count = rep.count;
			e.peak_rate = rep.peak_rate;
			memcpy(e.name, s[i].who.name, HVN_IRQ_NAME_LEN);
			/* A slot name is the kernel's, NUL-terminated in 16. */
			e.name[HVN_IRQ_NAME_LEN - 1] = 0;
			deliver(b, cpu, now, HVN_EV_irq_storm, &e);
			n++;
		}
	}
	free(vals);
	return b->err ? -1 : n;
}

void hvn_bpf_free(struct hvn_bpf *b)
{
	if (!b)
		return;
	for (int i = 0; i < b->nlinks; i++)
		bpf_link__destroy(b->links[i]);
	stop_timers(b);
	free(b->links);
	free(b->sample);
	free(b->backup);
	free(b->online);
	ring_buffer__free(b->rb);
	hvnoise_bpf__destroy(b->skel);
	hvn_sysfs_ws_free(b->emitted);
	hvn_sysfs_ws_free(b->ws);
	free(b);
}

void hvn_bpf_emit_whole(struct hvn_bpf *b)
{
	b->emit_whole = true;
}

const char *hvn_bpf_watched(const struct hvn_bpf *b)
{
	return b->watched;
}

uint64_t hvn_bpf_untracked(const struct hvn_bpf *b)
{
	/* IRQs no storm slot was free for, and watched IRQs the table had
	 * no room for: what the module counts as untracked_irqs. */
	return b->skel->bss->untracked + b->irq_lost;
}

uint64_t hvn_bpf_dropped(const struct hvn_bpf *b)
{
	return b->skel->bss->dropped;
}

uint64_t hvn_bpf_throttled(const struct hvn_bpf *b, uint64_t *ns)
{
	*ns = __atomic_load_n(&b->tstats.throttled_ns, __ATOMIC_RELAXED);
	return __atomic_load_n(&b->tstats.throttles, __ATOMIC_RELAXED);
}

const char *hvn_bpf_steal_method(const struct hvn_bpf *b)
{
	return hvn_bpf_steal_name(b->steal);
}

/*
 * Without data ksyms or kprobes: the per-CPU steal counters from
 * /proc/stat (USER_HZ ticks) into steal_sum[], for the probes to read.
 */
static void procstat_steal(struct hvn_bpf *b)
{
	int fd = bpf_map__fd(b->skel->maps.steal_sum);
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "r");
	char line[512];

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long v[8];
		unsigned int cpu;
		u64 ns;

		if (sscanf(line, "cpu%u %llu %llu %llu %llu %llu %llu %llu %llu",
			   &cpu, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
			   &v[6], &v[7]) != 9 || cpu >= b->ncpus)
			continue;
		ns = v[7] * (1000000000ull / (hz > 0 ? hz : 100));
		bpf_map_update_elem(fd, &cpu, &ns, BPF_ANY);
	}
	if (f)
		fclose(f);
}
