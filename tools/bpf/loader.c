// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF collector as an event source (see loader.h).
 *
 * The watched set is resolved here from sysfs and /proc/irq with the same
 * library code the module uses (kmod/lib/watchset.c, devlist.c): the CPUs
 * of --cpus, and those the IRQs of the watched GPUs and NICs go to.  It is
 * re-resolved every resolve_ms, which also finds IRQ moves the probes did
 * not see (how=poll), as the module's poll does.
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
#include "loader.h"
#include "tracedat/evformat.h"
#include "cpulist.h"
#include "devlist.h"
#include "steal.h"
#include "watchset.h"
#include "bpf_config.h"
#include "hvnoise.skel.h"


/* How steal is read (see hvnoise.bpf.c). */
enum { STEAL_KSYMS, STEAL_KPROBE, STEAL_PROCSTAT };

struct hvn_bpf;
static void procstat_steal(struct hvn_bpf *b);

/*
 * A perf cpu-clock event run as a timer.  perf throttles an event that
 * overflows more than perf_event_max_sample_rate / HZ times between two
 * ticks of its CPU, and only that CPU's tick lifts it: on a tickless idle
 * CPU the timer then stops until the CPU next ticks, silently, and the
 * BPF source is blind there.  The one trace is a THROTTLE record in the
 * event's ring, mapped here for that (samples go to the BPF program, not
 * the ring).  A keeper thread pinned to the timer's CPU sleeps on the
 * ring and wakes at that record: running there takes the CPU out of idle,
 * which restarts its tick, and it lifts the throttle at once (see
 * keeper()).
 */
struct hvn_timer {
	int fd;				/* -1: none */
	void *ring;			/* 1 + 1 pages */
	struct bpf_link *link;
	uint64_t period_ns;
	uint64_t base_ns;		/* the period asked for */
	uint64_t throttled_at;		/* CLOCK_MONOTONIC; 0: running */
	uint64_t ran_ns;		/* its time running at the last sync */
	int cpu;
	u32 *gen;			/* its CPU's sampler_gen[], or NULL */
	u64 *period_out;		/* its CPU's sample_period[], or NULL */
	u8 *busy;			/* its throttled_busy[cpu][k], or NULL */
	struct hvn_bpf *b;
	int stopfd;			/* eventfd: the keeper's stop; -1: none */
	int keeper_gone;		/* it ended on an error: the poll lifts */
	pthread_t keeper;
};
#define MAX_AUTO		32

struct hvn_bpf {
	struct hvnoise_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;
	int nlinks;
	struct hvn_timer *sample;	/* [cpu]: the sample_us timers */
	struct hvn_timer *backup;	/* [cpu]: their backups (sync_timers) */
	struct hvn_timer steal_t;	/* the steal sampler, on steal_cpu */
	int steal_cpu;
	uint64_t throttles, throttled_ns;	/* perf throttled a timer: how
						 * often, how long in all
						 * (atomic: keepers add) */
	int slowed;			/* a keeper lengthened a period */
	struct hvn_bpf_cfg cfg;
	struct hvn_devlist devs;
	unsigned long listed[HVN_BITS_TO_LONGS(HVN_BPF_MAX_CPUS)];
	unsigned int ncpus;		/* possible CPUs */
	struct hvn_watchset *ws;
	u32 gen;
	char watched[HVN_BPF_MAX_CPUS * 5];	/* any cpulist of them: "N," each */
	int steal;			/* STEAL_* */
	bool emit_pending;		/* the watched set changed */
	uint64_t watch_ts;		/* when: before the probes saw it */
	uint64_t irq_lost;		/* watched IRQs the table had no room for */
	uint64_t next_resolve;
	char *online;		/* the online CPUs at the last poll */
	bool unresolved;	/* a re-resolution failed (said once) */
	/* Where ring buffer records go during a poll. */
	hvn_bpf_rec_fn fn;
	void *ctx;
	int err;
	int delivered;
};

/* --- tunables ------------------------------------------------------------ */

/* include/hvnoise/tunables.h: the module's parameters, the same ranges. */
static const struct tunable {
	const char *name;
	size_t off;
	unsigned int min, max, def;
	bool zero_off;
} tunables[] = {
#define HVN_TUNABLE(n, lo, hi, d, z, what) \
	{ #n, offsetof(struct hvn_bpf_cfg, n), lo, hi, d, z },
#include "hvnoise/tunable-list.h"
#undef HVN_TUNABLE
};

/* Their names, for the message that lists them. */
static const char tunable_names[] =
#define HVN_TUNABLE(n, lo, hi, d, z, what) ", " #n
#include "hvnoise/tunable-list.h"
#undef HVN_TUNABLE
	;

#define NTUNABLES (sizeof(tunables) / sizeof(*tunables))
#define TVAL(c, t) ((unsigned int *)((char *)(c) + (t)->off))

int hvn_bpf_cfg_param(struct hvn_bpf_cfg *c, const char *nv)
{
	const char *eq = strchr(nv, '=');
	unsigned long v;
	char *end;

	for (size_t i = 0; eq && i < NTUNABLES; i++) {
		const struct tunable *t = &tunables[i];

		if (strlen(t->name) != (size_t)(eq - nv) ||
		    strncmp(nv, t->name, eq - nv))
			continue;
		errno = 0;
		v = strtoul(eq + 1, &end, 10);
		if (errno || end == eq + 1 || *end ||
		    ((v || !t->zero_off) && (v < t->min || v > t->max))) {
			hvn_err("--param %s: want %s%u..%u", nv,
				t->zero_off ? HVN_TUN_RANGE_1 : "", t->min,
				t->max);
			return -1;
		}
		/* 0 means "default" in the struct: store off as UINT_MAX. */
		*TVAL(c, t) = v ? (unsigned int)v : ~0u;
		return 0;
	}
	hvn_err("--param %s: not NAME=VALUE with NAME one of %s", nv,
		tunable_names + 2);
	return -1;
}

static unsigned int tval(const struct hvn_bpf_cfg *c, const char *name)
{
	for (size_t i = 0; i < NTUNABLES; i++)
		if (!strcmp(tunables[i].name, name)) {
			unsigned int v = *TVAL(c, &tunables[i]);

			return v == ~0u ? 0 : v ? v : tunables[i].def;
		}
	return 0;
}

/* --- can BPF run here ---------------------------------------------------- */

static const char *btf_path(void)
{
	const char *p = getenv("HVNOISE_BTF");

	return p && *p ? p : "/sys/kernel/btf/vmlinux";
}

bool hvn_bpf_usable(char *why, size_t len)
{
	char *lock;

	if (access(btf_path(), R_OK)) {
		if (getenv("HVNOISE_BTF"))
			snprintf(why, len, "HVNOISE_BTF=%s: %s", btf_path(),
				 strerror(errno));
		else
			snprintf(why, len,
				 "the kernel has no BTF (%s: %s; it needs CONFIG_DEBUG_INFO_BTF, or a BTF file for this kernel in HVNOISE_BTF)",
				 btf_path(), strerror(errno));
		return false;
	}
	if (geteuid() != 0) {
		snprintf(why, len,
			 "loading BPF programs needs root (CAP_BPF and CAP_PERFMON)");
		return false;
	}
	lock = hvn_read_file("/sys/kernel/security/lockdown", NULL);
	if (lock && strstr(lock, "[confidentiality]")) {
		snprintf(why, len,
			 "kernel lockdown=confidentiality forbids BPF reading kernel memory");
		free(lock);
		return false;
	}
	free(lock);
	return true;
}

/* --- the watched set, from sysfs ------------------------------------------- */

static void ws_free(struct hvn_watchset *ws);

static long read_long(const char *path, long dflt)
{
	char *s = hvn_read_file(path, NULL);
	long v = dflt;

	if (s)
		v = strtol(s, NULL, 0);
	free(s);
	return v;
}

/* The action name of @irq: the directory /proc/irq/N/NAME. */
static void irq_name(int irq, char *name)
{
	char dir[64];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/irq/%d", irq);
	name[0] = 0;
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (de->d_type == DT_DIR && de->d_name[0] != '.') {
			/* Truncated as the module's strscpy() does. */
			size_t n = strnlen(de->d_name, HVN_IRQ_NAME_LEN - 1);

			memcpy(name, de->d_name, n);
			name[n] = 0;
			break;
		}
	}
	if (d)
		closedir(d);
}

static int push_irq(struct hvn_watchset *ws, unsigned int *cap, u32 dev,
		    int irq, s32 cpu, const char *name)
{
	if (ws->nirq == *cap) {
		struct hvn_wirq *n = realloc(ws->irq, 2 * *cap * sizeof(*n));

		if (!n)
			return -1;
		ws->irq = n;
		*cap *= 2;
	}
	ws->irq[ws->nirq] = (struct hvn_wirq){ .dev = dev, .irq = irq, .cpu = cpu };
	memcpy(ws->irq[ws->nirq++].name, name, HVN_IRQ_NAME_LEN);
	return 0;
}

#define NWORDS	HVN_BITS_TO_LONGS(HVN_BPF_MAX_CPUS)

static int add_irq(struct hvn_watchset *ws, u32 dev, int irq,
		   unsigned int *cap, bool need_action, const unsigned long *online)
{
	unsigned long eff[NWORDS] = { 0 }, aff[NWORDS] = { 0 };
	char path[96], name[HVN_IRQ_NAME_LEN], *s;
	bool any = false, both = false;

	irq_name(irq, name);
	if (need_action && !name[0])
		return 0;
	/*
	 * No handler (a vector an ifdown freed): on no CPU, as the module
	 * has it; its effective affinity names a CPU it never fires on.
	 */
	if (!name[0])
		return push_irq(ws, cap, dev, irq, -1, name) ? -1 : 1;
	snprintf(path, sizeof(path), "/proc/irq/%d/effective_affinity_list",
		 irq);
	s = hvn_read_file(path, NULL);
	both = s;
	if (s) {
		s[strcspn(s, "\n")] = 0;
		if (hvn_cpulist_parse(s, eff, HVN_BPF_MAX_CPUS, NULL, 0))
			memset(eff, 0, sizeof(eff));
	}
	free(s);
	snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq);
	s = hvn_read_file(path, NULL);
	if (s) {
		s[strcspn(s, "\n")] = 0;
		if (hvn_cpulist_parse(s, aff, HVN_BPF_MAX_CPUS, NULL, 0))
			s[0] = 0;
	}
	if (!both && s && s[0])
		memcpy(eff, aff, sizeof(eff));
	/*
	 * Not started (a managed IRQ whose CPUs all went offline, shut
	 * down): on x86 its effective CPU, the first online one, is outside
	 * its affinity, which the kernel never makes of a live IRQ.  On no
	 * CPU, as the module has it (irqd_is_started()).
	 */
	if (both && s && s[0]) {
		bool inside = false;

		for (unsigned int w = 0; w < NWORDS; w++)
			inside |= !!(eff[w] & aff[w]);
		if (!inside)
			memset(eff, 0, sizeof(eff));
	}
	free(s);
	/* arm64 keeps a shut-down managed IRQ's offline CPU effective. */
	for (unsigned int w = 0; w < NWORDS; w++)
		eff[w] &= online[w];
	/* The set bits only: walking every possible CPU for every IRQ, each
	 * poll, was most of the tool's own instructions with 1,014 IRQs
	 * (bench/instructions.sh scale). */
	for (unsigned int w = 0; w < NWORDS; w++)
		for (unsigned long bits = eff[w]; bits; bits &= bits - 1) {
			s32 cpu = w * 8 * sizeof(long) + __builtin_ctzl(bits);

			if (push_irq(ws, cap, dev, irq, cpu, name))
				return -1;
			any = true;
		}
	/* In no CPU's affinity: one record, on CPU -1. */
	if (!any && push_irq(ws, cap, dev, irq, -1, name))
		return -1;
	return 1;
}

static int add_device(struct hvn_watchset *ws, u32 a, unsigned int *cap,
		      const unsigned long *online)
{
	struct hvn_wdev *d = &ws->dev[ws->ndev++];
	char dir[128], path[192];
	struct dirent *de;
	DIR *m;
	int n = 0, r;

	snprintf(dir, sizeof(dir), "/sys/bus/pci/devices/%04x:%02x:%02x.%x",
		 HVN_PCI_DOMAIN(a), HVN_PCI_BUS(a), HVN_PCI_SLOT(a),
		 HVN_PCI_FUNC(a));
	*d = (struct hvn_wdev){ .addr = a, .node = -1 };
	if (access(dir, F_OK))
		return 0;
	d->present = true;
	snprintf(path, sizeof(path), "%s/numa_node", dir);
	d->node = read_long(path, -1);
	snprintf(path, sizeof(path), "%s/msi_irqs", dir);
	m = opendir(path);
	while (m && (de = readdir(m))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		r = add_irq(ws, a, atoi(de->d_name), cap, false, online);
		if (r < 0) {
			closedir(m);
			return -1;
		}
		n += r;
	}
	if (m)
		closedir(m);
	if (!n) {
		/* A legacy INTx line counts only with a handler on it. */
		snprintf(path, sizeof(path), "%s/irq", dir);
		r = read_long(path, 0);
		if (r > 0)
			r = add_irq(ws, a, r, cap, true, online);
		if (r < 0)
			return -1;
		if (r > 0)
			n += r;
	}
	d->nirqs = n;
	return 0;
}

static bool listed_dev(const struct hvn_devlist *l, u32 a)
{
	for (unsigned int i = 0; i < l->n; i++)
		if (l->addr[i] == a)
			return true;
	return false;
}

static struct hvn_watchset *resolve(struct hvn_bpf *b)
{
	unsigned long online[HVN_BITS_TO_LONGS(HVN_BPF_MAX_CPUS)] = { 0 };
	struct hvn_watchset *ws = calloc(1, sizeof(*ws));
	unsigned int cap = 64, nauto = 0;
	/* The poll read it just now (hvn_bpf_poll()): not again. */
	char *s = b->online ? strdup(b->online) :
		  hvn_read_file("/sys/devices/system/cpu/online", NULL);
	bool known = false;

	if (s) {
		s[strcspn(s, "\n")] = 0;
		known = !hvn_cpulist_parse(s, online, HVN_BPF_MAX_CPUS, NULL, 0);
		free(s);
	}
	/* Unknown: every CPU taken as online (add_irq() masks with it). */
	if (!known)
		memset(online, 0xff, sizeof(online));
	if (!ws)
		return NULL;
	/* bpf_ktime_get_ns() is this clock: moves the probes stamp later
	 * than this are newer than what is read below. */
	ws->as_of = hvn_now(CLOCK_MONOTONIC);
	ws->nbits = b->ncpus;
	ws->why = calloc(b->ncpus, 1);
	ws->dev = calloc(HVN_MAX_DEVICES + MAX_AUTO, sizeof(*ws->dev));
	ws->irq = calloc(cap, sizeof(*ws->irq));
	if (!ws->why || !ws->dev || !ws->irq)
		goto fail;
	hvn_ws_mark(ws, b->listed, online, HVN_WHY_LISTED);
	for (unsigned int i = 0; i < b->devs.n; i++)
		if (add_device(ws, b->devs.addr[i], &cap, online))
			goto fail;
	if (b->devs.autodetect) {
		DIR *d = opendir("/sys/bus/pci/devices");
		struct dirent *de;

		while (d && (de = readdir(d)) && nauto < MAX_AUTO) {
			unsigned int dom, bus, slot, fn;
			char path[300];
			long vendor, class;
			u32 a;

			if (sscanf(de->d_name, "%x:%x:%x.%x", &dom, &bus, &slot,
				   &fn) != 4 || dom > 0xffff)
				continue;
			a = HVN_PCI_PACK(dom, bus, slot << 3 | fn);
			snprintf(path, sizeof(path),
				 "/sys/bus/pci/devices/%s/vendor", de->d_name);
			vendor = read_long(path, 0);
			snprintf(path, sizeof(path),
				 "/sys/bus/pci/devices/%s/class", de->d_name);
			class = read_long(path, 0);
			if (!hvn_pci_auto_match(vendor, class) ||
			    listed_dev(&b->devs, a))
				continue;
			if (add_device(ws, a, &cap, online)) {
				closedir(d);
				goto fail;
			}
			nauto++;
		}
		if (d)
			closedir(d);
	}
	hvn_ws_finish(ws, online);
	return ws;
fail:
	ws_free(ws);
	return NULL;
}

static void ws_free(struct hvn_watchset *ws)
{
	if (!ws)
		return;
	free(ws->why);
	free(ws->dev);
	free(ws->irq);
	free(ws);
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

static bool in_set(const struct hvn_watchset *ws, s32 irq)
{
	for (unsigned int i = 0; i < ws->nirq; i++)
		if (ws->irq[i].irq == irq)
			return true;
	return false;
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
	s32 key, next, *prev = NULL;
	uint64_t watch_ts;

	/* Nothing changed, as the module's hvn_watch_update() sees it. */
	if (b->ws && hvn_ws_equal(b->ws, ws)) {
		ws_free(ws);
		return;
	}
	/* IRQs no longer in the set leave the table (a driver unbound). */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		if (!in_set(ws, key)) {
			bpf_map_delete_elem(fd, &key);
			prev = NULL;	/* restart: the iteration order changed */
			continue;
		}
		prev = &key;
	}
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

		if (want && !sk->bss->watched[c]) {
			struct hvn_steal_cpu sc = { 0 };

			/* Joining: fresh steal samples and detector state. */
			bpf_map_update_elem(sfd, &c, &sc, BPF_ANY);
			sk->bss->enter_gen[c]++;
		}
		__atomic_store_n(&sk->bss->watched[c], want, __ATOMIC_RELEASE);
	}
	hvn_cpulist_format(b->watched, sizeof(b->watched), map, b->ncpus);
	ws->gen = ++b->gen;
	ws_free(b->ws);
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

static bool has_tracepoint(struct btf *btf, const char *tp)
{
	char name[128];

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	return btf && btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) > 0;
}

/* Whether kallsyms holds data symbols, which typed ksyms resolve through. */
static bool have_data_ksyms(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256];
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char *sp = strrchr(line, ' ');

		found = sp && !strcmp(sp + 1, "kernel_cpustat\n");
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * The tick where hrtimers run from it (low-resolution mode: highres=off,
 * no oneshot clock event device), else 0: /proc/timer_list gives each
 * CPU's resolution, 1 ns in high-resolution mode and the tick otherwise.
 * The collector adds it to every hard timer's due time.
 */
static u64 tick_ns(void)
{
	FILE *f = fopen("/proc/timer_list", "r");
	unsigned long long res, max = 0;
	char line[256];

	if (!f) {
		hvn_warn("BPF: cannot read /proc/timer_list (%s): hrtimers taken as high-resolution",
			 strerror(errno));
		return 0;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " .resolution: %llu nsecs", &res) == 1 && res > max)
			max = res;
	fclose(f);
	return max > 1 ? max : 0;
}

static int steal_way(void)
{
	if (have_data_ksyms())
		return STEAL_KSYMS;
	if (!access("/sys/bus/event_source/devices/kprobe", F_OK))
		return STEAL_KPROBE;
	return STEAL_PROCSTAT;
}

static const char *const steal_names[] = { "ksyms", "kprobe", "procstat" };

const char *hvn_bpf_steal_probe(void)
{
	return steal_names[steal_way()];
}

#define TIMER_RING_PAGES	2	/* the header page and one data page */

static void timer_stop(struct hvn_timer *t)
{
	/* Its history goes with it (the probe would read a freed timer). */
	if (t->fd >= 0 && t->gen)
		__atomic_add_fetch(t->gen, 2, __ATOMIC_SEQ_CST);
	if (t->stopfd >= 0) {
		uint64_t one = 1;

		if (write(t->stopfd, &one, sizeof(one)) == sizeof(one))
			pthread_join(t->keeper, NULL);
		close(t->stopfd);
		t->stopfd = -1;
	}
	if (t->ring)
		munmap(t->ring, TIMER_RING_PAGES * sysconf(_SC_PAGESIZE));
	t->ring = NULL;
	/* The link owns the perf fd: destroying it closes the fd. */
	if (t->link)
		bpf_link__destroy(t->link);
	else if (t->fd >= 0)
		close(t->fd);
	t->link = NULL;
	t->fd = -1;
}

/*
 * Whether @t's event still runs.  perf takes a CPU's events off it when
 * the CPU goes offline and does not put them back when it returns: the
 * timer then never fires again, and its time running stops.  Checked
 * between syncs (a CPU that went and came back meanwhile included).
 */
static bool timer_alive(struct hvn_timer *t)
{
	uint64_t v[2];	/* count, time running (PERF_FORMAT_TOTAL_TIME_RUNNING) */
	bool alive;

	if (read(t->fd, v, sizeof(v)) != (ssize_t)sizeof(v))
		return false;
	alive = !t->ran_ns || v[1] != t->ran_ns;
	t->ran_ns = v[1];
	return alive;
}

static void keeper_start(struct hvn_timer *t);

/*
 * A cpu-clock timer on @cpu every @period_ns running @prog, its keeper
 * beside it; @gen and @period_out: the CPU's sampler_gen[] and
 * sample_period[] (NULL for the steal sampler).  0 or -errno.
 */
static int timer_start(struct hvn_bpf *b, struct hvn_timer *t, int cpu,
		       uint64_t period_ns, struct bpf_program *prog, u32 *gen,
		       u64 *period_out, u8 *busy)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(a),
		.sample_period = period_ns,
		/* Throttle records stamped in CLOCK_MONOTONIC. */
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.read_format = PERF_FORMAT_TOTAL_TIME_RUNNING,
		/* The keeper wakes at any record: a THROTTLE. */
		.watermark = 1,
		.wakeup_watermark = 1,
	};
	int e;

	t->period_ns = t->base_ns = period_ns;
	t->throttled_at = 0;
	t->ran_ns = 0;
	t->cpu = cpu;
	t->gen = gen;
	t->period_out = period_out;
	t->busy = busy;
	if (busy)
		*busy = 0;
	t->b = b;
	t->stopfd = -1;
	t->keeper_gone = 0;
	/* A new timer, maybe on a CPU still watched: no history to judge by. */
	if (gen)
		__atomic_add_fetch(gen, 2, __ATOMIC_SEQ_CST);
	if (period_out)
		__atomic_store_n(period_out, period_ns, __ATOMIC_RELEASE);
	t->fd = syscall(__NR_perf_event_open, &a, -1, cpu, -1,
			PERF_FLAG_FD_CLOEXEC);
	if (t->fd < 0)
		return -errno;
	t->ring = mmap(NULL, TIMER_RING_PAGES * sysconf(_SC_PAGESIZE),
		       PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
	if (t->ring == MAP_FAILED) {
		t->ring = NULL;
		e = -errno;
		timer_stop(t);
		return e;
	}
	t->link = bpf_program__attach_perf_event(prog, t->fd);
	if (!t->link) {
		e = -errno;
		timer_stop(t);
		return e;
	}
	keeper_start(t);
	return 0;
}

/*
 * Read @t's ring: each throttle counted, with the time until its CPU's
 * tick lifted it.  Returns when the one still on began, else 0.
 */
static uint64_t timer_throttled(struct hvn_bpf *b, struct hvn_timer *t)
{
	struct perf_event_mmap_page *m = t->ring;
	size_t psz = sysconf(_SC_PAGESIZE);
	const char *data;
	uint64_t head, tail;

	if (!m)
		return 0;
	data = (const char *)m + psz;
	head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
	tail = m->data_tail;
	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		uint64_t time = 0;	/* the record's first field */

		for (size_t i = 0; i < sizeof(h); i++)
			((char *)&h)[i] = data[(tail + i) % psz];
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		for (size_t i = 0; h.size >= sizeof(h) + sizeof(time) &&
				   i < sizeof(time); i++)
			((char *)&time)[i] = data[(tail + sizeof(h) + i) % psz];
		if (h.type == PERF_RECORD_THROTTLE && !t->throttled_at) {
			__atomic_add_fetch(&b->throttles, 1, __ATOMIC_RELAXED);
			t->throttled_at = time ? time : 1;
		} else if (h.type == PERF_RECORD_LOST && !t->throttled_at) {
			/* Records lost: a THROTTLE may be among them.  Lifted
			 * as if it were (a lift of a running timer only
			 * restarts it). */
			__atomic_add_fetch(&b->throttles, 1, __ATOMIC_RELAXED);
			t->throttled_at = hvn_now(CLOCK_MONOTONIC);
		} else if (h.type == PERF_RECORD_UNTHROTTLE && t->throttled_at) {
			if (time > t->throttled_at)
				__atomic_add_fetch(&b->throttled_ns, time - t->throttled_at,
						   __ATOMIC_RELAXED);
			t->throttled_at = 0;
		}
		tail += h.size;
	}
	__atomic_store_n(&m->data_tail, tail, __ATOMIC_RELEASE);
	return t->throttled_at;
}

/*
 * A timer still throttled is restarted (PERF_EVENT_IOC_PERIOD lifts the
 * throttle): its CPU may not tick for long.  @gen: the CPU's sampler
 * generation, bumped first, so that the probes do not read the stop as
 * time lost.
 */
static void timer_rearm(struct hvn_bpf *b, struct hvn_timer *t, u32 *gen)
{
	uint64_t at = timer_throttled(b, t), now;

	if (!at)
		return;
	if (gen)
		__atomic_add_fetch(gen, 1, __ATOMIC_SEQ_CST);
	if (ioctl(t->fd, PERF_EVENT_IOC_PERIOD, &t->period_ns)) {
		hvn_warn("BPF: cannot restart a throttled perf timer: %s",
			 strerror(errno));
		return;
	}
	/* The ioctl is done on the CPU, synchronously: a run between the two
	 * bumps read the old history. */
	if (gen)
		__atomic_add_fetch(gen, 1, __ATOMIC_SEQ_CST);
	now = hvn_now(CLOCK_MONOTONIC);
	if (now > at)
		__atomic_add_fetch(&b->throttled_ns, now - at, __ATOMIC_RELAXED);
	t->throttled_at = 0;
}

/*
 * The keeper of @arg's timer, pinned to its CPU, woken by the THROTTLE
 * record (a one-byte watermark), lifts the throttle at once.  An idle
 * CPU's tick stays off (in high-resolution mode the idle tick does not
 * count hrtimers), so its timer throttles again after as many samples,
 * whatever the period: lifted each time.  A throttle with a task running
 * (the BPF program says, throttled_busy[]) came on a ticking CPU that
 * takes more samples a tick than perf allows (perf_event_max_sample_rate,
 * lowered by the kernel when perf interrupts run long): there the period
 * is doubled, up to 4 times the one asked for (TCG's irregular ticks
 * took it to 16 times, where pauses began long before the next sample),
 * and the BPF programs told, lest the keeper preempt the CPU's work every
 * tick.
 */
static void *keeper(void *arg)
{
	struct hvn_timer *t = arg;
	struct pollfd p[2] = {
		{ .fd = t->fd, .events = POLLIN },
		{ .fd = t->stopfd, .events = POLLIN },
	};
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR) {
			__atomic_store_n(&t->keeper_gone, 1, __ATOMIC_RELEASE);
			break;
		}
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		if (t->period_out && t->busy && timer_throttled(t->b, t) &&
		    __atomic_exchange_n(t->busy, 0, __ATOMIC_ACQ_REL) &&
		    t->period_ns < 4 * t->base_ns) {
			t->period_ns *= 2;
			__atomic_store_n(t->period_out, t->period_ns, __ATOMIC_RELEASE);
			if (!__atomic_exchange_n(&t->b->slowed, 1, __ATOMIC_RELAXED))
				hvn_warn("BPF: perf allows fewer samples a tick than the sampler takes (see /proc/sys/kernel/perf_event_max_sample_rate): CPU %d now samples every %llu us, and so may others",
					 t->cpu, (unsigned long long)t->period_ns / 1000);
		}
		timer_rearm(t->b, t, t->gen);
	}
	return NULL;
}

/* The keeper of @t on its CPU; without one, the poll lifts throttles. */
static void keeper_start(struct hvn_timer *t)
{
	pthread_attr_t a;
	cpu_set_t set;

	t->stopfd = eventfd(0, EFD_CLOEXEC);
	if (t->stopfd < 0 || pthread_attr_init(&a))
		goto fail;
	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	if (pthread_attr_setaffinity_np(&a, sizeof(set), &set) ||
	    pthread_create(&t->keeper, &a, keeper, t)) {
		pthread_attr_destroy(&a);
		goto fail;
	}
	pthread_attr_destroy(&a);
	return;
fail:
	if (t->stopfd >= 0)
		close(t->stopfd);
	t->stopfd = -1;
}

static bool keeper_runs(struct hvn_timer *t)
{
	return t->stopfd >= 0 && !__atomic_load_n(&t->keeper_gone, __ATOMIC_ACQUIRE);
}

/* Timers without a keeper: lifted at each poll. */
static void rearm_throttled(struct hvn_bpf *b)
{
	for (unsigned int cpu = 0; b->sample && b->backup && cpu < b->ncpus; cpu++) {
		if (b->sample[cpu].fd >= 0 && !keeper_runs(&b->sample[cpu]))
			timer_rearm(b, &b->sample[cpu],
				    &b->skel->bss->sampler_gen[cpu]);
		if (b->backup[cpu].fd >= 0 && !keeper_runs(&b->backup[cpu]))
			timer_rearm(b, &b->backup[cpu], NULL);
	}
	if (b->steal_t.fd >= 0 && !keeper_runs(&b->steal_t))
		timer_rearm(b, &b->steal_t, NULL);
}

static bool cpu_online(unsigned int cpu)
{
	char p[96];

	/*
	 * A possible CPU that is not present (a VM's hotplug slot) has no
	 * directory; one that cannot go offline (often CPU 0) has no
	 * "online" file.
	 */
	snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%u", cpu);
	if (access(p, F_OK))
		return false;
	snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%u/online", cpu);
	return read_long(p, 1) == 1;
}

/*
 * The perf cpu-clock timers, kept on the right CPUs as the watched set
 * changes: a sample_us timer on each watched CPU, and the steal sampler on
 * the first online CPU not watched (else CPU 0).  0, or -1 (printed).
 */
static int sync_timers(struct hvn_bpf *b)
{
	struct hvnoise_bpf *sk = b->skel;
	unsigned int us = tval(&b->cfg, "sample_us");
	unsigned int ms = tval(&b->cfg, "steal_ms");
	int hk = -1, e;

	for (unsigned int cpu = 0; cpu < b->ncpus; cpu++) {
		bool want = us && sk->bss->watched[cpu] && cpu_online(cpu);

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
			if (want && t->fd >= 0 && !timer_alive(t))
				timer_stop(t);
			if (want == (t->fd >= 0))
				continue;
			if (!want) {
				timer_stop(t);
				continue;
			}
			e = k ? timer_start(b, t, cpu, (u64)us * 1500, sk->progs.backup,
					    NULL, &sk->bss->backup_period[cpu],
					    &sk->bss->throttled_busy[cpu][1]) :
				timer_start(b, t, cpu, (u64)us * 1000, sk->progs.sampler,
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
	if (b->steal_t.fd >= 0 && (!cpu_online(b->steal_cpu) || !timer_alive(&b->steal_t)))
		timer_stop(&b->steal_t);
	if (!ms || (b->steal_t.fd >= 0 && !sk->bss->watched[b->steal_cpu]))
		return 0;
	for (unsigned int cpu = 0; cpu < b->ncpus && hk < 0; cpu++)
		if (!sk->bss->watched[cpu] && cpu_online(cpu))
			hk = cpu;
	if (hk < 0)
		hk = 0;
	if (b->steal_t.fd >= 0 && b->steal_cpu == hk)
		return 0;	/* every CPU watched: it stays where it is */
	timer_stop(&b->steal_t);
	e = timer_start(b, &b->steal_t, hk, (u64)ms * 1000000,
			b->steal == STEAL_KSYMS ? sk->progs.steal_ksyms :
						  sk->progs.steal_acct, NULL, NULL, NULL);
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
	timer_stop(&b->steal_t);
	for (unsigned int cpu = 0; b->sample && b->backup && cpu < b->ncpus; cpu++) {
		timer_stop(&b->sample[cpu]);
		timer_stop(&b->backup[cpu]);
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

int hvn_bpf_start(struct hvn_bpf **out, const struct hvn_bpf_cfg *c)
{
	static const char *const x86_tps[] = {
		"nmi_handler", "local_timer_entry", "local_timer_exit",
		"reschedule_entry", "reschedule_exit", "call_function_entry",
		"call_function_exit", "call_function_single_entry",
		"call_function_single_exit", "vector_update",
	};
	LIBBPF_OPTS(bpf_object_open_opts, oo);
	char why[256], err[256];
	struct hvn_bpf *b;
	struct hvnoise_bpf *sk;
	struct bpf_program *prog;
	struct hvn_watchset *ws;
	struct btf *btf;
	u64 win;
	int ret = HVN_EXIT_FAIL;
	bool ksyms;

	if (!hvn_bpf_usable(why, sizeof(why))) {
		hvn_err("BPF: %s", why);
		return HVN_EXIT_FAIL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return HVN_EXIT_FAIL;
	b->steal_t.fd = b->steal_t.stopfd = -1;
	b->cfg = *c;
	b->ncpus = libbpf_num_possible_cpus();
	if ((int)b->ncpus < 1 || b->ncpus > HVN_BPF_MAX_CPUS) {
		hvn_err("BPF: %d possible CPUs; the collector handles at most %d",
			(int)b->ncpus, HVN_BPF_MAX_CPUS);
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
		oo.btf_custom_path = btf_path();
	b->skel = sk = hvnoise_bpf__open_opts(&oo);
	if (!sk) {
		hvn_err("BPF: cannot open the collector: %s", strerror(errno));
		goto fail;
	}
	btf = btf__parse(btf_path(), NULL);
	if (!btf) {
		hvn_err("BPF: cannot read the kernel's BTF from %s: %s",
			btf_path(), strerror(errno));
		goto fail;
	}
	sk->rodata->nr_cpus = load_cpus(b);
	sk->rodata->have_vector_update = has_tracepoint(btf, "vector_update");
	for (size_t i = 0; i < sizeof(x86_tps) / sizeof(*x86_tps); i++)
		if (!has_tracepoint(btf, x86_tps[i]))
			bpf_object__for_each_program(prog, sk->obj)
				if (strstr(bpf_program__section_name(prog),
					   x86_tps[i]))
					bpf_program__set_autoload(prog, false);
	btf__free(btf);
	/* One read of kallsyms decides it (120k lines on a big kernel). */
	b->steal = steal_way();
	ksyms = b->steal == STEAL_KSYMS;
	bpf_program__set_autoload(sk->progs.hrtimer_ksyms, ksyms);
	bpf_program__set_autoload(sk->progs.steal_ksyms, ksyms);
	bpf_program__set_autoload(sk->progs.hrtimer_acct, !ksyms);
	bpf_program__set_autoload(sk->progs.steal_acct, !ksyms);
	bpf_program__set_autoload(sk->progs.acct_steal,
				  b->steal == STEAL_KPROBE);

	win = (u64)tval(c, "storm_window_ms") * 1000000;
	sk->data->storm_cfg.window_ns = win;
	sk->data->storm_cfg.threshold =
		hvn_storm_threshold(tval(c, "storm_rate"), win);
	sk->data->storm_all_cfg.window_ns = win;
	sk->data->storm_all_cfg.threshold =
		hvn_storm_threshold(tval(c, "storm_all_rate"), win);
	sk->data->lost_cfg.threshold_ns =
		(u64)tval(c, "lost_threshold_us") * 1000;
	sk->data->lost_cfg.tick_ns = tick_ns();
	/* Steal accounted by the tick: two ticks at HZ=100, the longest. */
	sk->data->lost_cfg.settle_ns = 20 * 1000 * 1000;
	sk->data->steal_threshold_ns =
		(u64)tval(c, "steal_threshold_us") * 1000;
	sk->rodata->sample_ns = (u64)tval(c, "sample_us") * 1000;
	/* One entry per possible CPU, not HVN_BPF_MAX_CPUS of them. */
	if (bpf_map__set_max_entries(sk->maps.steal_map, load_cpus(b)) ||
	    bpf_map__set_max_entries(sk->maps.steal_sum, load_cpus(b))) {
		hvn_err("BPF: cannot size the collector's maps for %u CPUs", b->ncpus);
		goto fail;
	}

	if (hvnoise_bpf__load(sk)) {
		int e = errno;

		hvn_err("BPF: the kernel refused the collector: %s%s", strerror(e),
			e == EPERM ? " (root with CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN needed; kernel lockdown forbids it too)"
				   : " (-v shows libbpf's log)");
		goto fail;
	}

	/* The counters hold /proc/stat's totals before any probe reads
	 * them: a first read of 0 would make the whole total one window's. */
	if (b->steal == STEAL_PROCSTAT)
		procstat_steal(b);
	ws = resolve(b);
	if (!ws) {
		hvn_err("BPF: cannot resolve the watched set: %s",
			strerror(errno));
		goto fail;
	}
	if (!hvn_ws_ncpus(ws)) {
		hvn_err("nothing to watch: %s",
			c->cpus || c->devices ?
			"--cpus/--devices name no online CPU or device with IRQs" :
			"devices=auto found no NVIDIA GPU or network controller with IRQs; name CPUs with --cpus");
		ws_free(ws);
		ret = HVN_EXIT_USAGE;
		goto fail;
	}

	bpf_object__for_each_program(prog, sk->obj) {
		if (!bpf_program__autoload(prog) ||
		    bpf_program__type(prog) == BPF_PROG_TYPE_PERF_EVENT)
			continue;
		if (add_link(b, bpf_program__attach(prog),
			     bpf_program__section_name(prog))) {
			ws_free(ws);
			goto fail;
		}
	}
	/* Watching begins once every program is attached: each attach
	 * patches text with IPIs to all CPUs, which the programs attached
	 * before it would count as a call_function storm (as at detach). */
	apply(b, ws);

	b->sample = calloc(b->ncpus, sizeof(*b->sample));
	b->backup = calloc(b->ncpus, sizeof(*b->backup));
	if (!b->sample || !b->backup)
		goto fail;
	for (unsigned int cpu = 0; cpu < b->ncpus; cpu++)
		b->sample[cpu].fd = b->sample[cpu].stopfd = -1,
		b->backup[cpu].fd = b->backup[cpu].stopfd = -1;
	if (sync_timers(b))
		goto fail;

	b->rb = ring_buffer__new(bpf_map__fd(sk->maps.events), on_msg, b, NULL);
	if (!b->rb) {
		hvn_err("BPF: cannot map the ring buffer: %s", strerror(errno));
		goto fail;
	}
	b->next_resolve = hvn_now(CLOCK_MONOTONIC) +
			  (u64)tval(c, "resolve_ms") * 1000000;
	*out = b;
	return 0;
fail:
	hvn_bpf_free(b);
	return ret;
}

static int drain(struct hvn_bpf *b, hvn_bpf_rec_fn fn, void *ctx)
{
	if (b->steal == STEAL_PROCSTAT)
		procstat_steal(b);
	b->fn = fn;
	b->ctx = ctx;
	b->delivered = 0;
	b->err = 0;
	if (b->emit_pending) {
		struct watch_emit we = { b, b->watch_ts };

		b->emit_pending = false;
		hvn_ws_walk(b->ws, emit_watch, &we);
	}
	if (ring_buffer__consume(b->rb) < 0 && !b->err)
		b->err = -1;
	return b->err ? -1 : b->delivered;
}

int hvn_bpf_poll(struct hvn_bpf *b, hvn_bpf_rec_fn fn, void *ctx)
{
	unsigned int rms = tval(&b->cfg, "resolve_ms");
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
		struct hvn_watchset *ws = resolve(b);

		b->next_resolve = now + (u64)rms * 1000000;
		if (ws && hvn_ws_ncpus(ws)) {
			apply(b, ws);
			/* Not fatal: the detectors run on, unsampled. */
			sync_timers(b);
		} else {
			if (!b->unresolved)
				hvn_warn("BPF: the watched set could not be resolved again (%s): CPUs and IRQ moves stand as last resolved",
					 ws ? "no CPU in it" : "out of memory");
			b->unresolved = true;
			ws_free(ws);
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
		ws_free(ws);
	/* Every CPU unwatched first: each detach patches text with IPIs to
	 * all CPUs, which the programs still attached counted as a
	 * call_function storm on every CPU (64 vCPUs, storm_rate=500).  A
	 * CPU's storms under way end at its next event, or below. */
	for (unsigned int c = 0; c < b->ncpus && c < HVN_BPF_MAX_CPUS; c++)
		__atomic_store_n(&b->skel->bss->watched[c], 0, __ATOMIC_RELEASE);
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
	ws_free(b->ws);
	free(b);
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
	*ns = __atomic_load_n(&b->throttled_ns, __ATOMIC_RELAXED);
	return __atomic_load_n(&b->throttles, __ATOMIC_RELAXED);
}

const char *hvn_bpf_steal_method(const struct hvn_bpf *b)
{
	return steal_names[b->steal];
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
