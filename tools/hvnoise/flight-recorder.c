// SPDX-License-Identifier: GPL-2.0
/*
 * hvnoise record --flight-recorder: always on, writing only when something
 * happened.  The events go into our own instance, whose ring buffer
 * (overwrite mode, -b KB per CPU) is left alone and so always holds the
 * latest of them.  On a trigger it is read out and the pages of the last
 * --keep seconds are written as a trace.dat, then the ring fills again.
 *
 * Triggers: SIGUSR1; an operator touching --trigger-file; and, with
 * hvnoise.ko, a hvnoise:lost or hvnoise:irq_storm over a threshold.  Those
 * two go to a second, small instance whose kernel filters pass only the
 * events over the thresholds, so userspace reads nothing while all is well.
 * With the BPF source the hvnoise events reach us as records, never the
 * ring: they are kept in pages of our own for --keep seconds, checked
 * against the thresholds as they come, and merged with the ring's pages.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <traceevent/event-parse.h>
#include <tracefs/tracefs.h>

#include "builtin.h"
#include "tool.h"
#include "analysis/episodes.h"
#include "cpulist.h"
#include "hvnoise/clockpair.h"
#include "loader.h"
#include "out/human.h"
#include "tracedat/pages.h"
#include "session.h"
#include "tracedat/meta.h"
#include "tracedat/tracedat.h"
#include "trigger.h"

#define DEFAULT_KB	8192		/* ring per CPU */
#define UNWATCHED_KB	1024		/* ... per CPU hvnoise.ko does not watch */
#define SETTLE_MS	500		/* after an episode, before writing */
#define CHECK_POLLS	5		/* instance and module checks: 1 s of polls */

static volatile sig_atomic_t usr1;

static void on_usr1(int sig)
{
	(void)sig;
	usr1 = 1;
}

struct flight_args {
	const char *prefix, *trigger_file;
	double keep, lost_ms, storm_irqs, max_files;
	long unwatched_kb;
};

static const struct hvn_opt flight_opts[] = {
	HVN_OPT_STR_ROW("output", 'o', "PREFIX", struct flight_args, prefix,
			"incidents go to PREFIX-YYYYmmdd-HHMMSS.mmm-TRIGGER.dat\n(default hvnoise-incident)"),
	HVN_OPT_SECS_ROW("keep", 0, struct flight_args, keep, 1, 86400,
			"time before the trigger to write (default 30 s)"),
	HVN_OPT_STR_ROW("trigger-file", 0, "PATH", struct flight_args, trigger_file,
			"write an incident when PATH is touched (the NCCL\nplugin's HVNOISE_NCCL_TRIGGER: on a stall)"),
	HVN_OPT_NUM_ROW("lost-ms", 0, "MS", struct flight_args, lost_ms, 0, 3600000,
			"... when hvnoise:lost reports MS or more (default 20;\n0: never; needs hvnoise.ko or the BPF source)"),
	HVN_OPT_NUM_ROW("storm-irqs", 0, "N", struct flight_args, storm_irqs, 0, 1e12,
			"... when an IRQ storm counted N or more (default\n10000; 0: never; needs hvnoise.ko or the BPF source)"),
	HVN_OPT_NUM_ROW("max-files", 0, "N", struct flight_args, max_files, 0, 100000,
			"keep the newest N incidents written (default 20)"),
	HVN_OPT_INT_ROW("unwatched-kb", 0, "KB", struct flight_args, unwatched_kb, 0, 4194304,
			"the ring of a CPU hvnoise.ko does not watch (default\n1024, at most -b; 0: -b KB, as on the watched ones)"),
	HVN_OPT_END_ROW
};

static const struct hvn_cmd flight_cmd = {
	.name = "flight-recorder",
	.synopsis =
"[-o PREFIX] [--keep TIME] [-b KB]\n"
"                               [--trigger-file PATH] [--lost-ms MS] [--storm-irqs N]\n"
"                               [--max-files N] [--unwatched-kb KB]\n"
"                               [--cpus LIST] [--devices LIST]\n"
"                               [--source module|bpf|kernel] [--param NAME=VALUE]...\n"
"                               [-e SYS[:EVENT]]...\n"
"  (hvnoise record --flight-recorder is the same command)",
	.opts = flight_opts,
	.no_operands = "the flight recorder runs no command: it runs until stopped",
	.more = hvn_session_options,
	.notes = "  -b KB: the ring per watched CPU (default 8192) must hold --keep; with\n"
		 "  hvnoise.ko, the others get --unwatched-kb, and grow to -b once watched.\n"
		 "  SIGUSR1 writes an incident; SIGINT or SIGTERM stops it.\n",
};

struct cpu_pages {
	uint8_t *buf;
	size_t n, cap;			/* pages */
};

/* @n pages into a new file @path: 0 or -1, with the reason printed. */
static int write_pages(const char *path, const uint8_t *buf, size_t n,
		       uint32_t ps)
{
	int fd = hvn_create(path, true);
	FILE *o = fd < 0 ? NULL : fdopen(fd, "w");

	if (!o || fwrite(buf, ps, n, o) != n) {
		hvn_err("cannot write %s: %s", path, strerror(errno));
		if (o)
			fclose(o);
		else if (fd >= 0)
			close(fd);
		return -1;
	}
	if (fclose(o)) {
		hvn_err("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

struct flight;

/* The BPF source's records of one CPU, in pages of the last --keep s. */
struct bpf_cpu {
	struct flight *f;
	struct hvn_rb_out out;		/* the page being filled */
	struct cpu_pages pages;		/* the full ones */
};

struct flight {
	struct hvn_session ring, mon;
	unsigned long polls;
	struct bpf_cpu *bc;		/* per CPU, with the BPF source */
	size_t max_pages;		/* per CPU: what the ring holds */
	bool have_mon;
	const char *prefix, *trigger_file;
	double keep;
	unsigned long lost_ms, storm_irqs;
	int max_files;
	char **files;			/* written, oldest first */
	int nfiles;
	void *page;
	char *base_meta;		/* the session's metadata lines */
	char uname_str[512];
	/* the monitor */
	struct tep_handle *tep;
	struct hvn_schema *schema;
	struct hvn_rb rb;
	char reason[160];
	struct timespec tf_mtime;	/* the trigger file, when last seen */
	ino_t tf_ino;
	uint64_t overruns;		/* the ring's, at the last incident */
	/* Incidents not written (disk full, ...) and the pages they took
	 * from the ring: said in every later incident and at the stop. */
	uint64_t unwritten, unwritten_pages;
	/* The latest times without hvnoise.ko (mono ns), for the incidents
	 * whose seconds they fall in. */
	struct { uint64_t start, end; } gaps[16];
	unsigned int ngaps;
	/* hvnoise trigger --at: a window (mono ns) written once it ended. */
	uint64_t at_from, at_until;
	char at_why[512];
	/* The ring per CPU, KB: -b where hvnoise.ko watches, else unwatched_kb. */
	int ring_kb, unwatched_kb, *cpu_kb;
	char *seen;			/* the watched set size_rings saw last */
	bool size_warned;
};

static struct flight *live_flight;

static void cleanup(void)
{
	if (!live_flight)
		return;
	hvn_session_end(&live_flight->mon);
	hvn_session_end(&live_flight->ring);
}

/* An episode over a threshold sets the reason for an incident. */
static void mon_event(void *ctx, int cpu, uint64_t ts, const uint8_t *d,
		      uint32_t len)
{
	struct flight *f = ctx;
	struct hvn_episode e;
	char line[160];

	(void)cpu;
	if (f->reason[0] || hvn_episode_decode(f->schema, ts, d, len, &e) < 0)
		return;
	/* The monitor's kernel filters chose already; BPF's records come
	 * unfiltered. */
	if (e.kind == HVN_EP_LOST &&
	    (!f->lost_ms || e.dur < f->lost_ms * 1000000ull))
		return;
	if (e.kind == HVN_EP_STORM && (!f->storm_irqs || e.a < f->storm_irqs))
		return;
	if (e.kind == HVN_EP_LOST)
		snprintf(line, sizeof(line), "lost: CPU %d lost %.3f ms (unexplained %.3f ms)",
			 e.cpu, e.dur / 1e6, e.a / 1e6);
	else if (e.kind == HVN_EP_STORM)
		snprintf(line, sizeof(line), "storm: CPU %d, %s %d %s, %llu IRQs in %.3f ms",
			 e.cpu, hvn_storm_source(e.source), e.irq, e.name,
			 (unsigned long long)e.a, e.dur / 1e6);
	else
		return;
	snprintf(f->reason, sizeof(f->reason), "%s", line);
}

static uint64_t page_ts(const struct flight *f, const struct cpu_pages *p,
			size_t i);

/* A full page of BPF records: kept, and what is out of --keep dropped. */
static int bpf_page(void *ctx, const uint8_t *page)
{
	struct bpf_cpu *b = ctx;
	struct flight *f = b->f;
	struct cpu_pages *p = &b->pages;
	uint32_t ps = f->ring.page_size;
	uint64_t now = hvn_now(CLOCK_MONOTONIC), keep = f->keep * 1e9;
	uint64_t cutoff = now > keep ? now - keep : 0;
	size_t drop = 0;

	while (drop + 1 < p->n && (page_ts(f, p, drop + 1) <= cutoff ||
				   p->n - drop >= f->max_pages))
		drop++;
	if (drop) {
		memmove(p->buf, p->buf + drop * ps, (p->n - drop) * ps);
		p->n -= drop;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		uint8_t *nb = realloc(p->buf, cap * ps);

		if (!nb)
			return 0;	/* this page is lost, the rest go on */
		p->buf = nb;
		p->cap = cap;
	}
	memcpy(p->buf + p->n++ * ps, page, ps);
	return 0;
}

static int bpf_rec(void *ctx, int cpu, uint64_t ts, const void *rec,
		   uint32_t len)
{
	struct flight *f = ctx;

	if (cpu < 0 || cpu >= f->ring.ncpus)
		cpu = 0;
	mon_event(f, cpu, ts, rec, len);
	/* A record that fits no page is not worth stopping for. */
	hvn_rb_out_add(&f->bc[cpu].out, ts, rec, len);
	return 0;
}

/* Empty the monitor and take the BPF source's records; a reason is set
 * if an episode over a threshold came. */
static void poll_monitor(struct flight *f)
{
	if (f->ring.bpf)
		hvn_bpf_poll(f->ring.bpf, bpf_rec, f);
	if (!f->have_mon)
		return;
	for (int c = 0; c < f->mon.ncpus; c++)
		while (hvn_session_read(&f->mon, c, f->page) > 0)
			hvn_rb_page(&f->rb, c, f->page);
}

/* With the BPF source: its pages per CPU, and the thresholds decoded from
 * the formats it records under. */
static int start_bpf(struct flight *f)
{
	f->tep = hvn_session_tep(&f->ring);
	f->schema = calloc(1, sizeof(*f->schema));
	f->bc = calloc(f->ring.ncpus, sizeof(*f->bc));
	if (!f->tep || !f->schema || !f->bc)
		return HVN_EXIT_FAIL;
	hvn_schema_bind(f->schema, f->tep);
	for (int c = 0; c < f->ring.ncpus; c++) {
		f->bc[c].f = f;
		if (hvn_rb_out_init(&f->bc[c].out, f->ring.page_size,
				    sizeof(long), bpf_page, &f->bc[c]))
			return HVN_EXIT_FAIL;
	}
	return 0;
}

static int monitor_filters(struct flight *f)
{
	char filt[64];

	/* In the kernel: only what is over a threshold reaches us. */
	snprintf(filt, sizeof(filt), f->lost_ms ? "duration >= %llu" : "cpu < -1",
		 (unsigned long long)f->lost_ms * 1000000ull);
	if (tracefs_event_file_write(f->mon.inst, "hvnoise", "lost", "filter",
				     filt) < 0)
		goto bad;
	snprintf(filt, sizeof(filt), f->storm_irqs ? "count >= %lu" : "cpu < -1",
		 f->storm_irqs);
	if (tracefs_event_file_write(f->mon.inst, "hvnoise", "irq_storm",
				     "filter", filt) < 0)
		goto bad;
	/* Again after a reload of the module: its event ids may differ. */
	if (f->tep)
		tep_free(f->tep);
	f->tep = hvn_session_tep(&f->mon);
	free(f->schema);
	f->schema = calloc(1, sizeof(*f->schema));
	if (!f->tep || !f->schema)
		return HVN_EXIT_FAIL;
	hvn_schema_bind(f->schema, f->tep);
	f->rb = (struct hvn_rb){ .event = mon_event, .ctx = f,
				 .page_size = f->mon.page_size,
				 .commit_size = tep_get_header_page_size(f->tep) };
	if (f->rb.commit_size != 4 && f->rb.commit_size != 8)
		f->rb.commit_size = sizeof(long);
	return 0;
bad:
	hvn_err("cannot set the threshold filters in %s: %s", f->mon.name,
		strerror(errno));
	return HVN_EXIT_FAIL;
}

static int start_monitor(struct flight *f)
{
	char *ev[] = { "hvnoise:lost", "hvnoise:irq_storm" };
	struct hvn_session_opts o = { .prefix = "hvnoise-fr-monitor",
				      .events = ev, .nevents = 2,
				      .buffer_kb = 64 };
	int ret;

	ret = hvn_session_start(&f->mon, &o);
	if (ret)
		return ret;
	f->mon.mod_quiet = true;	/* check_module() says it */
	ret = monitor_filters(f);
	if (ret)
		return ret;
	f->have_mon = true;
	return 0;
}

/*
 * The ring per CPU: -b KB on the CPUs hvnoise.ko watches (its lost and
 * storm events come from there, and the jobs it serves run there) and on
 * its housekeeping CPU (the first online one it does not watch, where its
 * steal, watch and polled migration events come from), --unwatched-kb
 * elsewhere: a 224-CPU host watching 16 holds about 0.35 GB, not 1.8 GB,
 * by default.  The ring starts at --unwatched-kb and is checked each
 * second: a CPU that joins grows to -b; none shrinks (a CPU that leaves
 * keeps its history).
 */
/* CPU @c's ring as the kernel has it, KB (0 if it cannot say). */
static int cpu_ring_kb(struct flight *f, int c)
{
	char path[64], *v;
	int kb;

	snprintf(path, sizeof(path), "per_cpu/cpu%d/buffer_size_kb", c);
	v = tracefs_instance_file_read(f->ring.inst, path, NULL);
	kb = v ? atoi(v) : 0;
	free(v);
	return kb;
}

static void size_rings(struct flight *f)
{
	static unsigned long w[HVN_BITS_TO_LONGS(HVN_MAX_CPUS)];
	static unsigned long on[HVN_BITS_TO_LONGS(HVN_MAX_CPUS)];
	char *list, *online;
	int c, hk = -1;

	if (!f->cpu_kb)
		return;
	list = hvn_module_param("watched");	/* "none" parses as no CPUs */
	online = hvn_read_file("/sys/devices/system/cpu/online", NULL);
	if (!list || !online || hvn_cpulist_parse(list, w, HVN_MAX_CPUS, NULL, 0) ||
	    hvn_cpulist_parse(online, on, HVN_MAX_CPUS, NULL, 0)) {
		free(list);
		free(online);
		return;
	}
	free(online);
	for (c = 0; c < f->ring.ncpus && c < HVN_MAX_CPUS && hk < 0; c++)
		if (hvn_bit_test(on, c) && !hvn_bit_test(w, c))
			hk = c;
	if (!f->seen || strcmp(f->seen, list)) {
		hvn_debug("the watched CPUs are %s, housekeeping CPU %d: their rings %d KB, the others' %d KB or what they had",
			  list, hk, f->ring_kb, f->unwatched_kb);
		free(f->seen);
		f->seen = list;
	} else {
		free(list);
	}
	for (c = 0; c < f->ring.ncpus && c < HVN_MAX_CPUS; c++) {
		int want = hvn_bit_test(w, c) || c == hk ? f->ring_kb : f->unwatched_kb;

		/*
		 * An offline CPU's ring cannot be sized (the kernel sizes it
		 * as it comes online, not as asked): what it has is read back
		 * once it is online again.
		 */
		if (!hvn_bit_test(on, c)) {
			f->cpu_kb[c] = -1;
			continue;
		}
		if (f->cpu_kb[c] < 0)
			f->cpu_kb[c] = cpu_ring_kb(f, c);
		if (want <= f->cpu_kb[c])
			continue;
		if (tracefs_instance_set_buffer_size(f->ring.inst, want, c)) {
			if (!f->size_warned)
				hvn_warn("cannot size CPU %d's ring to %d KB: %s", c, want,
					 strerror(errno));
			f->size_warned = true;
			continue;
		}
		f->cpu_kb[c] = want;
	}
}

/*
 * hvnoise.ko unloaded (and perhaps back) under the recorder.  Said once both
 * instances are set right again: whoever reads the message may rely on it.
 */
static void check_module(struct flight *f)
{
	uint64_t a = 0, b = 0, ma, mb;
	int what = hvn_session_module_check(&f->ring, &a, &b);

	if (what == HVN_MOD_BACK) {
		f->gaps[f->ngaps % 16].start = a;
		f->gaps[f->ngaps % 16].end = b;
		f->ngaps++;
	}
	if (f->have_mon &&
	    hvn_session_module_check(&f->mon, &ma, &mb) == HVN_MOD_BACK &&
	    monitor_filters(f)) {
		hvn_warn("no lost or storm triggers from now on (above)");
		f->have_mon = false;
	}
	hvn_session_module_say(&f->ring, what, a, b);
	size_rings(f);
}

/*
 * Has the trigger file been touched since we last looked?  Its first line,
 * if any, says why (the NCCL plugin writes "nccl stall: ..."): into @why.
 */
static bool trigger_file_touched(struct flight *f, char *why, size_t len)
{
	char text[256], taking[4200];
	struct stat st, got;
	uint64_t ino;
	ssize_t n = 0;
	bool moved;
	int fd;

	/* lstat and O_NOFOLLOW: the directory may be writable by the jobs,
	 * and a link must not make us read some other file into the log. */
	if (!f->trigger_file || lstat(f->trigger_file, &st))
		return false;
	if (st.st_ino == f->tf_ino &&
	    st.st_mtim.tv_sec == f->tf_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == f->tf_mtime.tv_nsec)
		return false;
	f->tf_ino = st.st_ino;
	f->tf_mtime = st.st_mtim;
	ino = st.st_ino;
	why[0] = 0;
	/*
	 * Taken aside first, then read and answered by what was read: a
	 * request renamed in meanwhile stays for the next poll, not read
	 * into this one.  Where it cannot be moved, read in place.
	 */
	snprintf(taking, sizeof(taking), "%s.hvnoise-taking", f->trigger_file);
	moved = S_ISREG(st.st_mode) && !rename(f->trigger_file, taking);
	fd = S_ISREG(st.st_mode) ? open(moved ? taking : f->trigger_file,
					O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
					O_CLOEXEC) : -1;
	if (fd >= 0) {
		if (!fstat(fd, &got))
			ino = got.st_ino;
		n = read(fd, text, sizeof(text) - 1);
		close(fd);
	}
	if (n > 0) {
		text[n] = 0;
		n = strcspn(text, "\n");
		for (ssize_t i = 0; i < n; i++)
			if (text[i] < 0x20 || text[i] > 0x7e)
				text[i] = '?';
		snprintf(why, len, "%.*s", (int)n, text);
	}
	/* Removed, so that the next touch creates it again; where we may not
	 * remove it, a new mtime is the next trigger. */
	unlink(moved ? taking : f->trigger_file);
	/* hvnoise trigger waits for this; a job's touch does not. */
	snprintf(text, sizeof(text), "taken by the flight recorder (pid %d)",
		 (int)getpid());
	hvn_trigger_answer(f->trigger_file, ino, text);
	return true;
}

/*
 * hvnoise trigger --at: the window [at - window, at + window] on our clock;
 * true while its end is to come (the incident is written then), false to
 * write it now (tag "at").  A second request replaces a pending one.
 */
static bool ask_window(struct flight *f, const struct hvn_trigger *t,
		       char *why)
{
	uint64_t m = 0, r = 0;
	int64_t mono, at, w = (int64_t)t->window;

	hvn_clock_pair(CLOCK_MONOTONIC, &m, &r);
	mono = (int64_t)m;
	/* hvn_trigger_parse() bounds both: no overflow here. */
	at = (int64_t)t->at - (int64_t)r + mono;

	if (f->at_until)
		hvn_warn("a window asked for earlier is dropped for the new one (%s)",
			 f->at_why);
	/* Before this boot: whatever the ring holds, at once. */
	f->at_from = at - w > 0 ? at - w : 1;
	f->at_until = at + w > 0 ? at + w : 1;
	snprintf(f->at_why, sizeof(f->at_why), "%s", why);
	if ((int64_t)f->at_until > mono) {
		hvn_info("asked for +-%.3f s around %s: written in %.1f s\n",
			 t->window / 1e9, t->why[0] ? t->why : "the time given",
			 (f->at_until - mono) / 1e9);
		return true;
	}
	return false;
}

/* Events the kernel lost from the ring (overwritten or dropped), all CPUs. */
static uint64_t ring_overruns(struct flight *f)
{
	uint64_t n = 0;

	for (int c = 0; c < f->ring.ncpus; c++) {
		struct hvn_cpustat st;
		char *text = f->ring.tcpu[c] ?
			     hvn_session_cpustat(&f->ring, c) : NULL;

		if (text && !hvn_cpustat_parse(text, &st))
			n += hvn_cpustat_lost(&st);
		free(text);
	}
	return n;
}

static uint64_t page_ts(const struct flight *f, const struct cpu_pages *p,
			size_t i)
{
	uint64_t ts;

	memcpy(&ts, p->buf + i * f->ring.page_size, 8);
	return ts;
}

/*
 * Read the ring out and write the pages of the last --keep seconds, or
 * from @from on (mono ns; 0: the last --keep seconds), of a window asked
 * for that ended at @until: what came after it is read out of the ring
 * too, and kept in the file rather than lost.  0 or HVN_EXIT_FAIL.  @tag
 * goes into the file name, @why into its metadata.
 */
/* An incident being written: the pages taken, their files. */
struct incident {
	uint64_t now, cutoff;		/* mono ns: pages before cutoff left */
	uint64_t oldest;		/* the first event's page, or UINT64_MAX */
	uint64_t pages;
	uint32_t ps;
	struct cpu_pages *cp;		/* per CPU: the ring's pages */
	char **files;			/* per CPU: its pages' file, or NULL */
};

/* The most pages taken from a CPU's ring: the ring, and what arrives
 * while reading it, but not forever.  "X" where the CPUs' rings differ
 * (size_rings): then -b, the largest. */
static size_t ring_max_pages(const struct flight *f, uint32_t ps)
{
	char *kb = tracefs_instance_file_read(f->ring.inst, "buffer_size_kb",
					      NULL);
	long n = kb ? atol(kb) : 0;

	free(kb);
	if (n < f->ring_kb)
		n = f->ring_kb;
	return 2 * (size_t)(n > 0 ? n : DEFAULT_KB) * 1024 / ps + 64;
}

/* Each CPU's ring read out, its pages since the cutoff into a file. */
static int take_ring(struct flight *f, struct incident *in)
{
	size_t max_pages = ring_max_pages(f, in->ps);
	uint32_t ps = in->ps;

	for (int c = 0; c < f->ring.ncpus; c++) {
		struct cpu_pages *p = &in->cp[c];
		size_t first = 0;

		for (;;) {
			if (p->n == p->cap) {
				size_t cap = p->cap ? p->cap * 2 : 64;
				uint8_t *b = realloc(p->buf, cap * ps);

				if (!b)
					break;
				p->buf = b;
				p->cap = cap;
			}
			if (p->n >= max_pages ||
			    hvn_session_read(&f->ring, c, p->buf + p->n * ps) <= 0)
				break;
			p->n++;
		}
		/* A page holds events from its timestamp to the next page's. */
		while (first + 1 < p->n && page_ts(f, p, first + 1) <= in->cutoff)
			first++;
		if (p->n && page_ts(f, p, first) < in->oldest)
			in->oldest = page_ts(f, p, first);
		if (p->n - first == 0)
			continue;
		in->pages += p->n - first;
		if (asprintf(&in->files[c], "%s.cpu%d.hvnoise-tmp", f->prefix, c) < 0) {
			in->files[c] = NULL;
			return HVN_EXIT_FAIL;
		}
		if (write_pages(in->files[c], p->buf + first * ps, p->n - first, ps))
			return HVN_EXIT_FAIL;
	}
	return 0;
}

/* The BPF source's pages of the same seconds, merged in time order into
 * each CPU's; taken, as the ring's are. */
static int take_bpf(struct flight *f, struct incident *in)
{
	uint32_t ps = in->ps;
	int ret = 0;

	for (int c = 0; !ret && f->bc && c < f->ring.ncpus; c++) {
		struct cpu_pages *p = &f->bc[c].pages;
		char *b = NULL, *mg = NULL, **file = &in->files[c];
		size_t first = 0;

		hvn_rb_out_flush(&f->bc[c].out);
		while (first + 1 < p->n && page_ts(f, p, first + 1) <= in->cutoff)
			first++;
		if (p->n - first == 0) {
			p->n = 0;
			continue;
		}
		if (page_ts(f, p, first) < in->oldest)
			in->oldest = page_ts(f, p, first);
		if (asprintf(&b, "%s.bpf%d.hvnoise-tmp", f->prefix, c) < 0 ||
		    asprintf(&mg, "%s.merge%d.hvnoise-tmp", f->prefix, c) < 0) {
			ret = HVN_EXIT_FAIL;
		} else if (write_pages(b, p->buf + first * ps, p->n - first, ps)) {
			ret = HVN_EXIT_FAIL;
		} else if (!*file) {
			*file = b;
			b = NULL;
		} else if (hvn_rb_merge(*file, b, mg, ps, sizeof(long)) ||
			   rename(mg, *file)) {
			hvn_err("cannot merge %s into %s: %s", b, *file,
				strerror(errno));
			ret = HVN_EXIT_FAIL;
		}
		in->pages += p->n - first;
		p->n = 0;
		if (b)
			unlink(b);
		if (mg)
			unlink(mg);
		free(b);
		free(mg);
	}
	return ret;
}

/* The incident's description: the session's, why, and its gaps. */
static char *incident_meta(const struct flight *f, const struct incident *in,
			   const char *why)
{
	char *meta = NULL;
	size_t mlen;
	FILE *mf = open_memstream(&meta, &mlen);

	if (!mf)
		return NULL;
	fputs(f->base_meta ? f->base_meta : "", mf);
	hvn_meta_put_flight(mf, why, f->keep, f->unwritten, f->unwritten_pages);
	for (unsigned int i = f->ngaps > 16 ? f->ngaps - 16 : 0; i < f->ngaps; i++)
		if (f->gaps[i % 16].end >= in->cutoff)
			hvn_meta_put_gap(mf, f->gaps[i % 16].start,
					 f->gaps[i % 16].end);
	if (f->ring.mod_gone)
		hvn_meta_put_gap(mf, f->ring.mod_seen, in->now);
	/* CPUs may have gone since the recorder began: as they are now. */
	hvn_meta_put_online(mf);
	hvn_meta_put_clock(mf);
	fclose(mf);
	return meta;
}

/* Said once written, with what the ring could not hold; the newest
 * --max-files stay. */
static void incident_done(struct flight *f, const struct incident *in,
			  const char *path, const char *why, uint64_t from,
			  uint64_t until)
{
	uint64_t last = until < in->now ? until : in->now, ov;
	double span = in->oldest != UINT64_MAX && last > in->oldest ?
		      (last - in->oldest) / 1e9 : 0;
	char **l;

	hvn_info("wrote %s (%s): %llu pages, %.1f s\n",
		path, why, (unsigned long long)in->pages, span);
	ov = ring_overruns(f);
	/* A window asked for: what the ring no longer held is said. */
	if (from && (!in->pages || in->oldest > from))
		hvn_warn("the ring no longer held the window's first %.1f s: they are gone",
			 ((in->pages ? in->oldest : until) - from) / 1e9);
	/* Short of --keep only matters if the ring overwrote events. */
	else if (in->pages && in->oldest > in->cutoff && ov > f->overruns)
		hvn_warn("the ring held only %.1f s of the %.1f s asked (--keep) and overwrote %llu events: raise -b",
			 span, f->keep, (unsigned long long)(ov - f->overruns));
	f->overruns = ov;
	l = realloc(f->files, (f->nfiles + 1) * sizeof(*l));
	if (l) {
		f->files = l;
		f->files[f->nfiles++] = strdup(path);
	}
	while (f->max_files && f->nfiles > f->max_files) {
		unlink(f->files[0]);
		free(f->files[0]);
		memmove(f->files, f->files + 1, --f->nfiles * sizeof(*f->files));
	}
}

static int write_incident(struct flight *f, const char *tag, const char *why,
			  uint64_t from, uint64_t until)
{
	struct incident in = {
		.now = hvn_now(CLOCK_MONOTONIC), .oldest = UINT64_MAX,
		.ps = f->ring.page_size,
		.cp = calloc(f->ring.ncpus, sizeof(*in.cp)),
		.files = calloc(f->ring.ncpus, sizeof(*in.files)),
	};
	char path[4096], stamp[32], *meta;
	struct timespec wall;
	struct tm tm;
	int ret;

	/* The watched set whole into the ring first: the copy at the start
	 * is overwritten or taken by an earlier incident, and the changes
	 * since apply only to a whole set. */
	hvn_session_emit_watch(&f->ring);
	/* What BPF has delivered by now belongs in this incident. */
	if (f->ring.bpf)
		hvn_bpf_poll(f->ring.bpf, bpf_rec, f);
	if (!in.cp || !in.files) {
		free(in.cp);
		free(in.files);
		return HVN_EXIT_FAIL;
	}
	in.cutoff = in.now > f->keep * 1e9 ? in.now - (uint64_t)(f->keep * 1e9) : 0;
	if (from)
		in.cutoff = from;
	ret = take_ring(f, &in);
	if (!ret)
		ret = take_bpf(f, &in);

	/* Milliseconds: two incidents in a second keep apart. */
	clock_gettime(CLOCK_REALTIME, &wall);
	localtime_r(&wall.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(path, sizeof(path), "%s-%s.%03ld-%s.dat", f->prefix, stamp,
		 wall.tv_nsec / 1000000, tag);
	meta = incident_meta(f, &in, why);
	if (!ret) {
		char *clock = tracefs_instance_file_read(f->ring.inst,
							 "trace_clock", NULL);
		struct hvn_tdat_meta m = {
			.uname = f->uname_str, .clock = clock, .meta = meta,
			.ncpus = f->ring.ncpus,
			.hvnoise_formats = f->ring.bpf != NULL,
		};

		if (hvn_tdat_write(path, f->ring.tdir, f->ring.systems,
				   f->ring.nsystems, &m, in.files, in.ps)) {
			hvn_err("%s not written", path);
			ret = HVN_EXIT_FAIL;
		}
		free(clock);
	}
	if (ret) {
		f->unwritten++;
		f->unwritten_pages += in.pages;
		hvn_err("the incident (%s) is lost: %llu pages of the ring with it; the recorder goes on",
			why, (unsigned long long)in.pages);
	} else {
		incident_done(f, &in, path, why, from, until);
	}
	for (int c = 0; c < f->ring.ncpus; c++) {
		if (in.files[c])
			unlink(in.files[c]);
		free(in.files[c]);
		free(in.cp[c].buf);
	}
	free(in.files);
	free(in.cp);
	free(meta);
	return ret;
}

/*
 * What an earlier recorder with this prefix left (one killed, or stopped
 * by systemd before a restart): its partial files go, being nobody's;
 * its incidents count against --max-files, oldest first, as names sort.
 */
static void adopt_earlier(struct flight *f)
{
	static const char *const partial[] = {
		"%s.cpu[0-9]*.hvnoise-tmp", "%s.bpf[0-9]*.hvnoise-tmp",
		"%s.merge[0-9]*.hvnoise-tmp", "%s-[0-9]*-[0-9]*.dat.hvnoise-tmp",
	};
	char pat[8400], esc[8200];
	glob_t g;
	size_t removed = 0;

	hvn_glob_escape(f->prefix, esc, sizeof(esc));
	for (size_t i = 0; i < sizeof(partial) / sizeof(partial[0]); i++) {
		snprintf(pat, sizeof(pat), partial[i], esc);
		if (glob(pat, GLOB_NOSORT, NULL, &g))
			continue;
		for (size_t j = 0; j < g.gl_pathc; j++)
			removed += !unlink(g.gl_pathv[j]);
		globfree(&g);
	}
	if (removed)
		hvn_warn("removed %zu partial files an earlier recorder left (%s.*hvnoise-tmp): none was an incident",
			 removed, f->prefix);
	snprintf(pat, sizeof(pat), "%s-[0-9]*-[0-9]*.[0-9]*-*.dat", esc);
	if (glob(pat, 0, NULL, &g))
		return;
	f->files = calloc(g.gl_pathc, sizeof(*f->files));
	for (size_t j = 0; f->files && j < g.gl_pathc; j++) {
		f->files[f->nfiles] = strdup(g.gl_pathv[j]);
		if (f->files[f->nfiles])
			f->nfiles++;
	}
	globfree(&g);
}

static int flight_apply(struct hvn_tool *t)
{
	struct flight *f = t->priv;
	const struct flight_args *a = t->args;
	struct hvn_session_opts *o = &t->o;

	f->prefix = a->prefix;
	f->trigger_file = a->trigger_file;
	f->keep = a->keep;
	f->lost_ms = a->lost_ms;
	f->storm_irqs = a->storm_irqs;
	f->max_files = a->max_files;
	if (!o->buffer_kb)
		o->buffer_kb = DEFAULT_KB;
	f->ring_kb = o->buffer_kb;
	/* At most -b: an unwatched CPU's ring is never the larger. */
	f->unwatched_kb = a->unwatched_kb && a->unwatched_kb < o->buffer_kb ?
			  (int)a->unwatched_kb : o->buffer_kb;

	/* A recorder killed before this one (systemd restarts it) left its
	 * rings: 8 MB per CPU each, never read again (hvn_tool_main() reaps
	 * the ring's instances, this its threshold instance's). */
	hvn_session_reap("hvnoise-fr-monitor");
	/* Started small where it may stay so, then grown where needed: never
	 * -b on every CPU at once. */
	if (f->unwatched_kb < f->ring_kb)
		o->buffer_kb = f->unwatched_kb;
	live_flight = f;
	atexit(cleanup);
	return -1;
}

static int flight_init(struct hvn_tool *t)
{
	struct flight *f = t->priv;
	struct hvn_session_opts *o = &t->o;
	int ret = 0;

	o->buffer_kb = f->ring_kb;
	f->ring.mod_quiet = true;	/* check_module() says it */
	/* The ring keeps the newest events: the kernel's default, made sure. */
	if (tracefs_option_enable(f->ring.inst, TRACEFS_OPTION_OVERWRITE))
		hvn_warn("cannot set overwrite mode in %s", f->ring.name);
	if (f->unwatched_kb < f->ring_kb) {
		/* Only hvnoise.ko says which CPUs it watches. */
		if (f->ring.source == HVN_SRC_MODULE && f->ring.ncpus > 0)
			f->cpu_kb = calloc(f->ring.ncpus, sizeof(*f->cpu_kb));
		for (int c = 0; f->cpu_kb && c < f->ring.ncpus; c++)
			f->cpu_kb[c] = f->unwatched_kb;
		if (f->cpu_kb) {
			size_rings(f);
		} else if (tracefs_instance_set_buffer_size(f->ring.inst, f->ring_kb, -1)) {
			hvn_err("cannot set a %d KB buffer per CPU", f->ring_kb);
			return HVN_EXIT_FAIL;
		}
	}
	f->page = malloc(f->ring.page_size);
	f->max_pages = (size_t)o->buffer_kb * 1024 / f->ring.page_size + 1;
	if (!f->page)
		return HVN_EXIT_FAIL;
	if (f->ring.bpf)
		ret = start_bpf(f);
	else if (f->ring.source == HVN_SRC_MODULE && (f->lost_ms || f->storm_irqs))
		ret = start_monitor(f);
	if (ret)
		return ret;

	hvn_meta_uname(f->uname_str, sizeof(f->uname_str));
	adopt_earlier(f);
	{
		size_t len;
		FILE *mf = open_memstream(&f->base_meta, &len);

		if (mf) {
			hvn_session_put_meta(mf, &f->ring, o);
			fclose(mf);
		}
	}
	return 0;
}

/* One line, said at once (hvn_info prefixes each call). */
static void say_recording(const struct flight *f, int buffer_kb)
{
	char *msg = NULL;
	size_t len;
	FILE *m = open_memstream(&msg, &len);

	if (!m)
		return;
	fprintf(m, "recording %s (pid %d): the last %.0f s of %s in a ring of %d KB per %sCPU",
		f->ring.name, getpid(), f->keep,
		f->ring.bpf ? "the BPF source's and the kernel's events" :
		f->ring.source == HVN_SRC_MODULE ? "hvnoise events" : "the events",
		buffer_kb, f->cpu_kb ? "watched or housekeeping " : "");
	if (f->cpu_kb)
		fprintf(m, ", %d KB per other", f->unwatched_kb);
	fprintf(m, "; writes %s-*.dat on SIGUSR1", f->prefix);
	if (f->trigger_file)
		fprintf(m, ", touch %s", f->trigger_file);
	if ((f->have_mon || f->ring.bpf) && f->lost_ms)
		fprintf(m, ", lost >= %lu ms", f->lost_ms);
	if ((f->have_mon || f->ring.bpf) && f->storm_irqs)
		fprintf(m, ", storm >= %lu IRQs", f->storm_irqs);
	if (f->ring.source == HVN_SRC_KERNEL && (f->lost_ms || f->storm_irqs))
		fprintf(m, " (no lost or storm triggers: %s)", f->ring.source_why);
	if (hvn_housekeeping()[0])
		fprintf(m, "; runs on CPUs %s", hvn_housekeeping());
	fclose(m);
	hvn_info("%s\n", msg);
	free(msg);
}

static int flight_enable(struct hvn_tool *t)
{
	struct flight *f = t->priv;
	struct sigaction sa = { .sa_handler = on_usr1 };

	hvn_catch_stop();
	sigaction(SIGUSR1, &sa, NULL);
	/* A file already there is not a trigger: only a touch from now on. */
	if (f->trigger_file) {
		struct stat st;

		if (!stat(f->trigger_file, &st)) {
			f->tf_ino = st.st_ino;
			f->tf_mtime = st.st_mtim;
		}
	}
	say_recording(f, t->o.buffer_kb);
	return 0;
}

/* The trigger file's line as the incident's tag and why; NULL: a window
 * still to come (hvnoise trigger --at), written once it has passed. */
static const char *file_trigger(struct flight *f, const char *line, char *why,
				size_t len)
{
	struct hvn_trigger t;
	const char *tag;

	hvn_trigger_parse(line, &t);
	tag = strncmp(t.why, "nccl stall:", 11) ? "file" : "stall";
	snprintf(why, len, "trigger file %s%s%s", f->trigger_file,
		 line[0] ? ": " : "", line);
	if (!t.at)
		return tag;
	{
		time_t sec = t.at / 1000000000ull;
		struct tm tm;
		char when[32];

		localtime_r(&sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		snprintf(why, len, "trigger file %s: +-%.3f s around %s.%03llu: %s",
			 f->trigger_file, t.window / 1e9, when,
			 (unsigned long long)(t.at / 1000000 % 1000), t.why);
	}
	return ask_window(f, &t, why) ? NULL : "at";
}

static enum hvn_tick flight_tick(struct hvn_tool *t)
{
	struct flight *f = t->priv;
	const char *tag = NULL;
	char why[512], line[200];

	/* Someone removed our instance: nothing records any more.  A
	 * failure, so that systemd starts a recorder afresh.  These checks
	 * walk tracefs and sysfs: once a second, not each poll (they were
	 * most of an idle recorder's cost). */
	if (++f->polls % CHECK_POLLS == 1 &&
	    (!tracefs_instance_exists(f->ring.name) ||
	     (f->have_mon && !tracefs_instance_exists(f->mon.name)))) {
		hvn_err("its tracefs instance was removed: stopping (exit %d)",
			HVN_EXIT_FAIL);
		t->ret = HVN_EXIT_FAIL;
		return HVN_TICK_DONE;
	}
	if (f->polls % CHECK_POLLS == 1)
		check_module(f);
	poll_monitor(f);
	if (usr1) {
		usr1 = 0;
		tag = "signal";
		snprintf(why, sizeof(why), "SIGUSR1");
	} else if (trigger_file_touched(f, line, sizeof(line))) {
		tag = file_trigger(f, line, why, sizeof(why));
	} else if (f->at_until && hvn_now(CLOCK_MONOTONIC) >= f->at_until) {
		write_incident(f, "at", f->at_why, f->at_from, f->at_until);
		f->at_until = 0;
		return HVN_TICK_AGAIN;
	} else if (f->reason[0]) {
		tag = !strncmp(f->reason, "lost", 4) ? "lost" : "storm";
		snprintf(why, sizeof(why), "%s", f->reason);
		/* One incident for one episode: a pause of the whole VM
		 * reports lost time on every CPU, some later. */
		poll(NULL, 0, SETTLE_MS);
	}
	if (!tag)
		return HVN_TICK_WAIT;
	/* Failures are reported; the recorder keeps going. */
	if (!strcmp(tag, "at")) {
		write_incident(f, tag, why, f->at_from, f->at_until);
		f->at_until = 0;
	} else {
		write_incident(f, tag, why, 0, UINT64_MAX);
	}
	/* Episodes seen while writing belong to this one. */
	poll_monitor(f);
	f->reason[0] = 0;
	return HVN_TICK_AGAIN;
}

static int flight_finish(struct hvn_tool *t)
{
	struct flight *f = t->priv;

	if (t->ret)
		return t->ret;
	if (f->unwritten)
		hvn_info("stopped by signal %s; %llu incidents could not be written (%llu pages lost)\n",
			 strsignal(hvn_stop_sig), (unsigned long long)f->unwritten,
			 (unsigned long long)f->unwritten_pages);
	else
		hvn_info("stopped by signal %s\n", strsignal(hvn_stop_sig));
	return HVN_EXIT_OK;
}

static void flight_free(struct hvn_tool *t)
{
	struct flight *f = t->priv;

	cleanup();
	live_flight = NULL;
	for (int c = 0; f->bc && c < f->ring.ncpus; c++) {
		hvn_rb_out_free(&f->bc[c].out);
		free(f->bc[c].pages.buf);
	}
	free(f->bc);
	if (f->tep)
		tep_free(f->tep);
	free(f->schema);
	free(f->page);
	free(f->cpu_kb);
	free(f->seen);
	for (int i = 0; i < f->nfiles; i++)
		free(f->files[i]);
	free(f->base_meta);
	free(f->files);
}

static const struct hvn_tool_ops flight_ops = {
	.cmd = &flight_cmd,
	.prefix = "hvnoise-fr",
	.apply = flight_apply,
	.init = flight_init,
	.enable = flight_enable,
	.tick = flight_tick,
	.finish = flight_finish,
	.free = flight_free,
};

int cmd_flight_recorder(int argc, char **argv)
{
	struct flight_args a = {
		.prefix = "hvnoise-incident", .keep = 30, .lost_ms = 20,
		.storm_irqs = 10000, .max_files = 20, .unwatched_kb = UNWATCHED_KB,
	};
	struct flight *f = calloc(1, sizeof(*f));
	int ret;

	if (!f)
		return HVN_EXIT_FAIL;
	ret = hvn_tool_main(&flight_ops, &a, f, &f->ring, argc, argv);
	free(f);
	return ret;
}
