// SPDX-License-Identifier: GPL-2.0
/*
 * Tracing sessions on our own tracefs instance.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tracefs/tracefs.h>
#include <traceevent/event-parse.h>

#include "tracedat/evformat.h"
#include "tracedat/meta.h"
#include "cpulist.h"
#include "cli.h"
#include "session.h"

#define LBITS	(8 * sizeof(long))

const char *const hvn_source_names[] = { "module", "bpf", "kernel" };

/* Sessions to end at exit (the flight recorder runs two at once). */
#define MAX_LIVE	4
static struct hvn_session *live[MAX_LIVE];

static void cleanup(void)
{
	for (int i = 0; i < MAX_LIVE; i++)
		if (live[i])
			hvn_session_end(live[i]);
}

static void set_live(struct hvn_session *s, bool on)
{
	static bool registered;

	for (int i = 0; i < MAX_LIVE; i++)
		if (on ? !live[i] : live[i] == s) {
			live[i] = on ? s : NULL;
			break;
		}
	if (on && !registered)
		registered = !atexit(cleanup);
}

int hvn_session_check_access(void)
{
	if (!tracefs_tracing_dir()) {
		hvn_err("tracefs is not mounted: mount -t tracefs nodev /sys/kernel/tracing");
		return HVN_EXIT_FAIL;
	}
	if (geteuid() != 0 || access(tracefs_tracing_dir(), W_OK)) {
		hvn_err("%s is not writable: run as root",
			tracefs_tracing_dir());
		return HVN_EXIT_FAIL;
	}
	return 0;
}

static int add_str(char ***list, int *n, const char *s)
{
	char **l;

	for (int i = 0; i < *n; i++)
		if (!strcmp((*list)[i], s))
			return 0;
	l = realloc(*list, (*n + 1) * sizeof(*l));
	if (!l)
		return -1;
	*list = l;
	l[(*n)++] = strdup(s);
	return 0;
}

/* The module's parameters are global: other sessions (the flight-recorder
 * service) depend on them.  What a session changes, it puts back. */
static void save_param(struct hvn_session *s, const char *name)
{
	char **n, **v;

	for (int i = 0; i < s->nsaved; i++)
		if (!strcmp(s->saved_name[i], name))
			return;
	n = realloc(s->saved_name, (s->nsaved + 1) * sizeof(*n));
	if (n)
		s->saved_name = n;
	v = realloc(s->saved_val, (s->nsaved + 1) * sizeof(*v));
	if (v)
		s->saved_val = v;
	if (!n || !v)
		return;
	n[s->nsaved] = strdup(name);
	v[s->nsaved] = hvn_module_param(name);
	if (n[s->nsaved] && v[s->nsaved])
		s->nsaved++;
	else
		free(n[s->nsaved]), free(v[s->nsaved]);
}

static void restore_params(struct hvn_session *s)
{
	char path[256];

	/* In reverse: devices after cpus, as they were set. */
	for (int i = s->nsaved - 1; i >= 0; i--) {
		const char *v = s->saved_val[i][0] ? s->saved_val[i] : "none";

		snprintf(path, sizeof(path),
			 "/sys/module/hvnoise/parameters/%s", s->saved_name[i]);
		if (hvn_write_str(path, v))
			hvn_warn("could not put back the module's %s=%s: %s",
				 s->saved_name[i], v, strerror(errno));
		free(s->saved_name[i]);
		free(s->saved_val[i]);
	}
	free(s->saved_name);
	free(s->saved_val);
	s->saved_name = s->saved_val = NULL;
	s->nsaved = 0;
}

static int set_param(struct hvn_session *s, const char *name, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/module/hvnoise/parameters/%s",
		 name);
	save_param(s, name);
	if (hvn_write_str(path, val)) {
		hvn_err("the module refused %s=%s: %s (its reason is in dmesg)",
			name, val, strerror(errno));
		return HVN_EXIT_USAGE;
	}
	return 0;
}

/* Limit a kernel event to the watched CPUs; unfiltered if refused. */
static void cpu_filter(struct hvn_session *s, const char *sys,
		       const char *ev)
{
	char *f = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&f, &len);

	if (!m)
		return;
	for (int c = 0, first = 1; c < HVN_MAX_CPUS; c++)
		if (s->filter_cpus[c / LBITS] & (1ul << (c % LBITS))) {
			fprintf(m, "%sCPU == %d", first ? "" : " || ", c);
			first = 0;
		}
	fclose(m);
	if (tracefs_event_file_write(s->inst, sys, ev, "filter", f) < 0)
		hvn_warn("cannot limit %s:%s to the watched CPUs; recording it on all",
			 sys, ev ? ev : "*");
	free(f);
}

/* The event of an "hvnoise[:EVENT]" @spec, NULL for the whole system. */
static const char *spec_event(const char *spec)
{
	const char *ev = strchr(spec, ':');

	return ev && ev[1] && strcmp(ev + 1, "*") ? ev + 1 : NULL;
}

static bool is_module_spec(const char *spec)
{
	return !strncmp(spec, "hvnoise", 7) && (!spec[7] || spec[7] == ':');
}

/* Does the session record hvnoise:watch from the module? */
static bool wants_watch(const struct hvn_session *s)
{
	if (s->source != HVN_SRC_MODULE)
		return false;
	for (int i = 0; i < s->nenabled; i++) {
		const char *ev = spec_event(s->enabled[i]);

		if (is_module_spec(s->enabled[i]) && (!ev || !strcmp(ev, "watch")))
			return true;
	}
	return false;
}

void hvn_session_emit_watch(struct hvn_session *s)
{
	if (s->bpf)
		hvn_bpf_emit_whole(s->bpf);
	else if (wants_watch(s))
		hvn_write_str("/sys/module/hvnoise/parameters/emit", "1");
}

static int enable(struct hvn_session *s, const char *spec)
{
	char *sys = strdup(spec), *ev = strchr(sys, ':');
	int ret = 0;

	if (ev)
		*ev++ = 0;
	if (ev && (!*ev || !strcmp(ev, "*")))
		ev = NULL;
	if (tracefs_event_enable(s->inst, sys, ev)) {
		hvn_err("no such event %s in %s/events", spec, s->tdir);
		ret = HVN_EXIT_USAGE;
	} else {
		hvn_debug("enabled %s", spec);
		add_str(&s->systems, &s->nsystems, sys);
		add_str(&s->enabled, &s->nenabled, spec);
		/* hvnoise events concern watched CPUs already, and some are
		 * emitted from housekeeping CPUs: never filter them. */
		if (s->have_filter && strcmp(sys, "hvnoise") && ev)
			cpu_filter(s, sys, ev);
	}
	free(sys);
	return ret;
}

/* The kernel's events of the watched CPUs only: none watched, no filter. */
static void set_filter(struct hvn_session *s, const char *watched)
{
	s->have_filter = false;
	if (hvn_cpulist_parse(watched, s->filter_cpus, HVN_MAX_CPUS, NULL, 0))
		return;
	for (size_t i = 0; i < HVN_MAX_CPUS / LBITS; i++)
		s->have_filter |= s->filter_cpus[i] != 0;
}

int hvn_session_opt(struct hvn_session_opts *o, int opt, const char *arg)
{
	char **ev, *end;

	switch (opt) {
	case HVN_SO_CPUS:
		o->cpus = arg;
		return 1;
	case HVN_SO_HOUSEKEEPING: {
		unsigned long map[HVN_MAX_CPUS / LBITS] = { 0 };

		if (strcmp(arg, "all") && strcmp(arg, "auto") &&
		    hvn_cpulist_parse(arg, map, HVN_MAX_CPUS, NULL, 0)) {
			hvn_err("--housekeeping %s: want a CPU list, auto or all",
				arg);
			return -1;
		}
		o->housekeeping = strcmp(arg, "auto") ? arg : NULL;
		return 1;
	}
	case HVN_SO_DEVICES:
		o->devices = arg;
		return 1;
	case HVN_SO_EVENT:
		ev = realloc(o->events, (o->nevents + 1) * sizeof(*ev));
		if (!ev)
			return -1;
		o->events = ev;
		o->events[o->nevents++] = (char *)arg;
		return 1;
	case HVN_SO_SOURCE:
		if (strcmp(arg, "module") && strcmp(arg, "bpf") &&
		    strcmp(arg, "kernel") && strcmp(arg, "auto")) {
			hvn_err("--source %s: want module, bpf, kernel or auto",
				arg);
			return -1;
		}
		o->source = strcmp(arg, "auto") ? arg : NULL;
		return 1;
	case HVN_SO_PARAM:
		if (!strchr(arg, '=') || hvn_bpf_cfg_param(&o->bpf, arg)) {
			if (!strchr(arg, '='))
				hvn_err("--param %s: not NAME=VALUE", arg);
			return -1;
		}
		ev = realloc(o->params, (o->nparams + 1) * sizeof(*ev));
		if (!ev)
			return -1;
		o->params = ev;
		o->params[o->nparams++] = (char *)arg;
		return 1;
	case HVN_SO_BUFFER:
		o->buffer_kb = strtol(arg, &end, 10);
		if (*end || o->buffer_kb <= 0) {
			/* top -b -n 2, as procps and rtla users type it. */
			hvn_err("-b %s: not a size in KB%s", arg, arg[0] == '-' ?
				" (-b is each CPU's ring buffer, as trace-cmd's; top needs no batch mode: it prints plain frames when its output is not a terminal)" :
				"");
			return -1;
		}
		return 1;
	}
	return 0;
}

/* The recording's own description (tracedat/meta.h), from the session. */
void hvn_session_put_meta(FILE *f, const struct hvn_session *s,
			  const struct hvn_session_opts *o)
{
	struct hvn_meta_rec r = {
		.source = hvn_source_names[s->source],
		.source_why = s->source_why,
		.events = (const char *const *)s->enabled,
		.nevents = s->nenabled,
		.housekeeping = hvn_housekeeping(),
	};
	char *w = NULL, *d = NULL;

	if (s->bpf) {
		r.watched = hvn_bpf_watched(s->bpf);
		r.devices = o->devices ? o->devices : o->cpus ? "none" : "auto";
		r.bpf_steal = hvn_bpf_steal_method(s->bpf);
	} else if (s->source == HVN_SRC_MODULE) {
		w = hvn_module_param("watched");
		d = hvn_module_param("devices");
		r.watched = w ? w : "";
		r.devices = d ? d : "";
	}
	hvn_meta_put_recorder(f, &r);
	free(w);
	free(d);
}

/* What the BPF source could not do, for the recording. */
void hvn_session_put_bpf_meta(FILE *f, const struct hvn_bpf *b)
{
	uint64_t thr_ns, thr = hvn_bpf_throttled(b, &thr_ns);

	hvn_meta_put_bpf(f, hvn_bpf_dropped(b), hvn_bpf_untracked(b), thr, thr_ns);
}

/* The session's options, which record, flight-recorder, top and exporter
 * take after their own (struct hvn_cmd's @more). */
#define SESSION(n, l, a, k, h) \
	{ .name = n, .letter = l, .arg = a, .help = h, \
	  .type = HVN_OPT_SESSION, .key = k, .sess = hvn_session_opt }

const struct hvn_opt hvn_session_options[] = {
	SESSION("cpus", 'c', "LIST", HVN_SO_CPUS,
		"CPUs to watch (e.g. 0-3,8): hvnoise.ko's cpus=, put\nback at the end"),
	SESSION("devices", 0, "LIST", HVN_SO_DEVICES,
		"GPUs/NICs to watch (PCI addresses, auto, none)"),
	SESSION("source", 0, "SRC", HVN_SO_SOURCE,
		"where the hvnoise events come from: module\n(hvnoise.ko), bpf, or kernel (irq events only);\ndefault: the module if loaded, else bpf if possible"),
	SESSION("param", 0, "N=V", HVN_SO_PARAM,
		"a detector tunable (storm_rate, lost_threshold_us,\n...; the module's parameter names)"),
	SESSION("event", 'e', "SPEC", HVN_SO_EVENT,
		"record SYS:EVENT or a whole SYS, repeatable\n(default: hvnoise, or irq:irq_handler_entry with\nneither the module nor BPF)"),
	SESSION("buffer", 'b', "KB", HVN_SO_BUFFER,
		"ring buffer per CPU (default: the kernel's)"),
	SESSION("housekeeping", 0, "LIST", HVN_SO_HOUSEKEEPING,
		"the CPUs hvnoise itself runs on (default auto: those\nit does not watch; all: not pinned)"),
	{ NULL }
};

void hvn_session_opts_free(struct hvn_session_opts *o)
{
	free(o->events);
	free(o->params);
	o->events = NULL;
	o->params = NULL;
	o->nevents = o->nparams = 0;
}

enum hvn_source hvn_source_auto(char *why, size_t len)
{
	char bwhy[200];

	if (hvn_module_loaded()) {
		snprintf(why, len, "hvnoise.ko is loaded");
		return HVN_SRC_MODULE;
	}
	if (hvn_bpf_usable(bwhy, sizeof(bwhy))) {
		snprintf(why, len, "hvnoise.ko is not loaded; BPF with BTF is available");
		return HVN_SRC_BPF;
	}
	snprintf(why, len, "hvnoise.ko is not loaded and BPF cannot be used: %s",
		 bwhy);
	return HVN_SRC_KERNEL;
}

/* Whether -e @spec names the hvnoise events, which BPF then provides. */
static bool is_hvnoise(const char *spec)
{
	return !strncmp(spec, "hvnoise", 7) && (!spec[7] || spec[7] == ':');
}

static int choose_source(struct hvn_session *s, const struct hvn_session_opts *o)
{
	bool want = !o->nevents;
	char why[200];

	for (int i = 0; i < o->nevents; i++)
		want |= is_hvnoise(o->events[i]);
	if (!o->source && !want && !s->module) {
		/* Only kernel events asked for: no detectors needed. */
		s->source = HVN_SRC_KERNEL;
		snprintf(s->source_why, sizeof(s->source_why),
			 "only kernel events were asked for");
	} else if (!o->source) {
		s->source = hvn_source_auto(s->source_why, sizeof(s->source_why));
		if (s->source == HVN_SRC_KERNEL)
			hvn_warn("%s; recording the kernel's irq events only (no steal, lost time, storms or migrations)",
				 s->source_why);
	} else if (!strcmp(o->source, "module")) {
		if (!s->module) {
			hvn_err("--source module: hvnoise.ko is not loaded: insmod hvnoise.ko first");
			return HVN_EXIT_NOMODULE;
		}
		s->source = HVN_SRC_MODULE;
		snprintf(s->source_why, sizeof(s->source_why), "--source module");
	} else if (!strcmp(o->source, "bpf")) {
		if (!hvn_bpf_usable(why, sizeof(why))) {
			hvn_err("--source bpf: %s", why);
			return HVN_EXIT_FAIL;
		}
		s->source = HVN_SRC_BPF;
		snprintf(s->source_why, sizeof(s->source_why), "--source bpf");
	} else {
		s->source = HVN_SRC_KERNEL;
		snprintf(s->source_why, sizeof(s->source_why), "--source kernel");
	}
	if (o->nparams && s->source == HVN_SRC_KERNEL) {
		hvn_err("--param tunes the detectors of hvnoise.ko or BPF; the kernel source has none");
		return HVN_EXIT_USAGE;
	}
	if ((o->cpus || o->devices) && s->source == HVN_SRC_KERNEL) {
		hvn_err("--cpus and --devices choose what the detectors watch; without hvnoise.ko or BPF there are none (insmod hvnoise.ko, or --source bpf)");
		return HVN_EXIT_NOMODULE;
	}
	return 0;
}

static cpu_set_t *orig_mask;		/* before hvn_pin() */
static char pinned_to[256];

/*
 * Keep the tool off the CPUs it measures, as rtla does: its own reads and
 * wake-ups would be the noise it reports.  The CPUs it may run on but
 * does not watch, or @list; "all": not pinned.  Once per process.
 */
int hvn_cpus_allowed(const unsigned long *map, bool invert,
		     unsigned long *out)
{
	size_t sz = CPU_ALLOC_SIZE(HVN_MAX_CPUS);
	cpu_set_t *set = CPU_ALLOC(HVN_MAX_CPUS);
	int n = 0;

	if (!set || sched_getaffinity(0, sz, set)) {
		CPU_FREE(set);
		return -1;
	}
	memset(out, 0, HVN_BITS_TO_LONGS(HVN_MAX_CPUS) * sizeof(long));
	for (int c = 0; c < HVN_MAX_CPUS; c++)
		if (CPU_ISSET_S(c, sz, set) && hvn_bit_test(map, c) != invert) {
			hvn_bit_set(out, c);
			n++;
		}
	CPU_FREE(set);
	return n;
}

static int pin(const struct hvn_session *s, const char *list)
{
	size_t sz = CPU_ALLOC_SIZE(HVN_MAX_CPUS);
	unsigned long map[HVN_MAX_CPUS / LBITS] = { 0 };
	unsigned long run[HVN_MAX_CPUS / LBITS];
	cpu_set_t *set;
	int n;

	if (orig_mask || (list && !strcmp(list, "all")) ||
	    (!list && !s->have_filter))
		return 0;
	if (list)
		hvn_cpulist_parse(list, map, HVN_MAX_CPUS, NULL, 0);
	n = hvn_cpus_allowed(list ? map : s->filter_cpus, !list, run);
	if (!n && list) {
		hvn_err("--housekeeping %s: none of these CPUs is one hvnoise may run on",
			list);
		return HVN_EXIT_USAGE;
	}
	if (n < 0)
		return 0;
	if (!n) {
		hvn_warn("every CPU hvnoise may run on is watched: not pinned");
		return 0;
	}
	orig_mask = CPU_ALLOC(HVN_MAX_CPUS);
	set = CPU_ALLOC(HVN_MAX_CPUS);
	if (!orig_mask || !set || sched_getaffinity(0, sz, orig_mask)) {
		CPU_FREE(set);
		return 0;
	}
	CPU_ZERO_S(sz, set);
	for (int c = 0; c < HVN_MAX_CPUS; c++)
		if (hvn_bit_test(run, c))
			CPU_SET_S(c, sz, set);
	if (sched_setaffinity(0, sz, set)) {
		hvn_warn("cannot keep off the watched CPUs: %s", strerror(errno));
	} else {
		hvn_cpulist_format(pinned_to, sizeof(pinned_to), run,
				   HVN_MAX_CPUS);
		hvn_debug("runs on CPUs %s, off the watched ones", pinned_to);
	}
	CPU_FREE(set);
	return 0;
}

const char *hvn_housekeeping(void)
{
	return pinned_to;
}

void hvn_unpin(void)
{
	if (orig_mask)
		sched_setaffinity(0, CPU_ALLOC_SIZE(HVN_MAX_CPUS), orig_mask);
}

/*
 * tracefs_cpu_open() leaves the descriptor inheritable: a job that record
 * starts, and every daemon it spawns, would hold the instance open (its
 * removal refused) long after we stop.
 */
static struct tracefs_cpu *open_cpu(struct hvn_session *s, int cpu)
{
	char file[64], *path;
	struct tracefs_cpu *t;
	int fd;

	snprintf(file, sizeof(file), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	path = tracefs_instance_get_file(s->inst, file);
	if (!path)
		return NULL;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	tracefs_put_tracing_file(path);
	if (fd < 0)
		return NULL;
	t = tracefs_cpu_alloc_fd(fd, getpagesize(), true);
	if (!t)
		close(fd);
	return t;
}

static int start(struct hvn_session *s, const struct hvn_session_opts *o)
{
	int ret;

	memset(s, 0, sizeof(*s));
	ret = hvn_session_check_access();
	if (ret)
		return ret;
	s->ncpus = sysconf(_SC_NPROCESSORS_CONF);
	if (s->ncpus < 1 || s->ncpus > HVN_MAX_CPUS)
		s->ncpus = 1;
	/* Before the first per-CPU file: the BPF source's timers come next. */
	hvn_nofile_for(s->ncpus);
	s->tdir = tracefs_tracing_dir();
	s->module = hvn_module_loaded();
	ret = choose_source(s, o);
	if (ret)
		return ret;
	if (s->source == HVN_SRC_MODULE) {
		char *w;

		ret = o->cpus ? set_param(s, "cpus", o->cpus) : 0;
		if (!ret && o->devices)
			ret = set_param(s, "devices", o->devices);
		for (int i = 0; !ret && i < o->nparams; i++) {
			char *nv = strdup(o->params[i]), *eq = strchr(nv, '=');

			*eq = 0;
			ret = set_param(s, nv, eq + 1);
			free(nv);
		}
		if (ret)
			return ret;	/* hvn_session_end() puts back */
		w = hvn_module_param("watched");
		if (w)
			set_filter(s, w);
		free(w);
	} else if (s->source == HVN_SRC_BPF) {
		struct hvn_bpf_cfg c = o->bpf;

		c.cpus = o->cpus;
		c.devices = o->devices;
		ret = hvn_bpf_start(&s->bpf, &c);
		if (ret && !o->source && ret != HVN_EXIT_USAGE &&
		    !o->cpus && !o->devices && !o->nparams) {
			/* auto: a kernel that refuses the programs still has
			 * its irq events, as before BPF. */
			hvn_warn("BPF could not be used (above); recording the kernel's irq events only (no steal, lost time, storms or migrations)");
			s->source = HVN_SRC_KERNEL;
			snprintf(s->source_why, sizeof(s->source_why),
				 "BPF failed to load");
		} else if (ret) {
			return ret;
		} else {
			set_filter(s, hvn_bpf_watched(s->bpf));
		}
	}
	snprintf(s->name, sizeof(s->name), "%s-%d", o->prefix, getpid());
	hvn_debug("source %s (%s); instance %s/instances/%s", hvn_source_names[s->source],
		  s->source_why, s->tdir, s->name);
	s->inst = tracefs_instance_create(s->name);
	if (!s->inst) {
		hvn_err("cannot create tracefs instance %s: %s", s->name,
			strerror(errno));
		return HVN_EXIT_FAIL;
	}
	set_live(s, true);
	tracefs_trace_off(s->inst);
	if (tracefs_instance_file_write(s->inst, "trace_clock", "mono") < 0) {
		hvn_err("cannot set trace_clock=mono in %s: %s", s->name,
			strerror(errno));
		return HVN_EXIT_FAIL;
	}
	if (o->buffer_kb > 0 &&
	    tracefs_instance_set_buffer_size(s->inst, o->buffer_kb, -1)) {
		hvn_err("cannot set a %d KB buffer per CPU", o->buffer_kb);
		return HVN_EXIT_FAIL;
	}
	if (o->nevents) {
		for (int i = 0; i < o->nevents; i++) {
			if (s->bpf && is_hvnoise(o->events[i]))
				continue;	/* BPF records them all */
			ret = enable(s, o->events[i]);
			if (ret)
				return ret;
		}
	} else if (s->bpf) {
		ret = 0;
	} else if (s->source == HVN_SRC_MODULE) {
		ret = enable(s, "hvnoise");
	} else {
		ret = enable(s, "irq:irq_handler_entry");
	}
	if (ret)
		return ret;

	s->tcpu = calloc(s->ncpus, sizeof(*s->tcpu));
	s->nobuf = calloc(s->ncpus, sizeof(*s->nobuf));
	if (!s->tcpu || !s->nobuf)
		return HVN_EXIT_FAIL;
	for (int c = 0; c < s->ncpus; c++) {
		/* A CPU never online has no buffer: no open, or reads ENODEV. */
		s->tcpu[c] = open_cpu(s, c);
		if (s->tcpu[c] && !s->page_size)
			s->page_size = tracefs_cpu_read_size(s->tcpu[c]);
	}
	if (!s->page_size) {
		hvn_err("cannot open the per-CPU buffers of %s", s->name);
		return HVN_EXIT_FAIL;
	}
	if (tracefs_trace_on(s->inst)) {
		hvn_err("cannot turn tracing on in %s", s->name);
		return HVN_EXIT_FAIL;
	}
	/* The module re-emits its watched set into every buffer that has
	 * hvnoise:watch enabled: asked for only by a session that records it,
	 * as each request writes the whole set into all of them. */
	if (wants_watch(s))
		hvn_write_str("/sys/module/hvnoise/parameters/emit", "1");
	return pin(s, o->housekeeping);
}

/* Every failure after the first resource is taken ends the session, so no
 * caller is left with a half-started one behind the atexit cleanup. */
int hvn_session_start(struct hvn_session *s, const struct hvn_session_opts *o)
{
	int ret = start(s, o);

	if (ret)
		hvn_session_end(s);
	return ret;
}

int hvn_session_read(struct hvn_session *s, int cpu, void *page)
{
	int r;

	if (!s->tcpu[cpu])
		return 0;
	if (s->nobuf[cpu]) {
		uint64_t now = hvn_now(CLOCK_MONOTONIC);

		if (now < s->nobuf_probe)
			return 0;
		/* Once a second: clear them all, and they are read again. */
		s->nobuf_probe = now + 1000000000ULL;
		memset(s->nobuf, 0, s->ncpus * sizeof(*s->nobuf));
	}
	r = tracefs_cpu_read(s->tcpu[cpu], page, true);
	if (r > 0)
		return 1;
	if (r < 0 && errno == ENODEV) {
		/* Possible, never online (a VM's hotplug slot): no buffer. */
		uint64_t now = hvn_now(CLOCK_MONOTONIC);

		if (!s->nobuf_probe)
			hvn_debug("CPU %d, never online, has no buffer (nor may others): read once a second", cpu);
		if (s->nobuf_probe <= now)
			s->nobuf_probe = now + 1000000000ULL;
		s->nobuf[cpu] = true;
		return 0;
	}
	if (r < 0 && errno != EAGAIN && errno != EINTR)
		return -1;
	return 0;
}

int hvn_session_stop(struct hvn_session *s)
{
	/* The last drain reads every CPU: one may have come online since. */
	if (s->nobuf)
		memset(s->nobuf, 0, s->ncpus * sizeof(*s->nobuf));
	return tracefs_trace_off(s->inst);
}

char *hvn_session_cpustat(struct hvn_session *s, int cpu)
{
	char file[64], *stats, *out;

	snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", cpu);
	stats = tracefs_instance_file_read(s->inst, file, NULL);
	if (!stats)
		return NULL;
	if (asprintf(&out, "CPU: %d\n%s", cpu, stats) < 0)
		out = NULL;
	free(stats);
	return out;
}

/* Parse the formats ourselves: tracefs_local_events() also loads kallsyms,
 * seconds of system time that top does not need. */
static void parse_system(struct tep_handle *tep, const char *tdir,
			 const char *sys)
{
	char dir[4096], path[4400];
	char **ev;
	int n;

	snprintf(dir, sizeof(dir), "%s/events/%s", tdir, sys);
	n = hvn_list_events(dir, &ev);
	for (int i = 0; i < n; i++) {
		size_t len;
		char *buf;

		snprintf(path, sizeof(path), "%s/%s/format", dir, ev[i]);
		buf = hvn_read_file(path, &len);
		if (buf)
			tep_parse_event(tep, buf, len, sys);
		free(buf);
		free(ev[i]);
	}
	free(ev);
}

struct tep_handle *hvn_session_tep(struct hvn_session *s)
{
	struct tep_handle *tep = tep_alloc();
	char path[4096];
	size_t len;
	char *hp;

	if (!tep)
		return NULL;
	snprintf(path, sizeof(path), "%s/events/header_page", s->tdir);
	hp = hvn_read_file(path, &len);
	if (hp)
		tep_parse_header_page(tep, hp, len, sizeof(long));
	free(hp);
	for (int i = 0; i < s->nsystems; i++)
		parse_system(tep, s->tdir, s->systems[i]);
	parse_system(tep, s->tdir, "ftrace");
	for (int ev = 0; s->bpf && ev < HVN_NR_EVENTS; ev++) {
		size_t len;
		char *f = hvn_fmt_event(ev, s->tdir, &len);

		if (f)
			tep_parse_event(tep, f, len, "hvnoise");
		free(f);
	}
	return tep;
}

int hvn_instance_pid(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	char *end;
	long pid;

	if (strncmp(name, prefix, n) || name[n] != '-' || !name[n + 1])
		return 0;
	pid = strtol(name + n + 1, &end, 10);
	if (*end || pid <= 0 || pid > INT32_MAX || name[n + 1] == '0')
		return 0;
	if (!kill(pid, 0) || errno == EPERM)
		return pid;
	return -pid;
}

int hvn_session_live(const char *prefix)
{
	const char *tdir = tracefs_tracing_dir();
	char path[4200];
	struct dirent *de;
	int pid = 0;
	DIR *d;

	if (!tdir)
		return -1;
	snprintf(path, sizeof(path), "%s/instances", tdir);
	d = opendir(path);
	if (!d)
		return -1;
	while (d && !pid && (de = readdir(d)))
		if (hvn_instance_pid(de->d_name, prefix) > 0)
			pid = hvn_instance_pid(de->d_name, prefix);
	if (d)
		closedir(d);
	return pid;
}

int hvn_session_reap(const char *prefix)
{
	char path[4200];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/instances", tracefs_tracing_dir());
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		int pid = hvn_instance_pid(de->d_name, prefix);
		char p[4500];

		if (pid >= 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		if (!rmdir(p))
			n++;
	}
	closedir(d);
	if (n)
		hvn_warn("removed %d tracefs instances %s-PID of recorders that were killed",
			 n, prefix);
	return n;
}

static bool has_module_events(const struct hvn_session *s)
{
	for (int i = 0; i < s->nsystems; i++)
		if (!strcmp(s->systems[i], "hvnoise"))
			return true;
	return false;
}

/* The ids of the module's events, as one string: a reload may renumber. */
static char *module_ids(const struct hvn_session *s)
{
	char pat[4200], *all = NULL;
	size_t len;
	FILE *f = open_memstream(&all, &len);
	glob_t g;

	if (!f)
		return NULL;
	snprintf(pat, sizeof(pat), "%s/events/hvnoise/*/id", s->tdir);
	if (!glob(pat, 0, NULL, &g)) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			char *id = hvn_read_file(g.gl_pathv[i], NULL);

			fprintf(f, "%s %s", g.gl_pathv[i], id ? id : "?\n");
			free(id);
		}
		globfree(&g);
	}
	fclose(f);
	return all;
}

/*
 * Is every hvnoise event this session enabled still enabled?  Each is read
 * on its own: a system's enable file says "X" when only some of its events
 * are chosen (the flight recorder's monitor takes two).
 */
static bool module_events_on(const struct hvn_session *s)
{
	char path[4200], *v;
	bool on = true;

	for (int i = 0; i < s->nenabled && on; i++) {
		const char *ev = spec_event(s->enabled[i]);

		if (!is_module_spec(s->enabled[i]))
			continue;
		/* A reload brings every event back disabled: for the whole
		 * system one event tells, and its file is cheap where the
		 * system's walks every event of the kernel (70,000
		 * instructions a read). */
		snprintf(path, sizeof(path), "%s/instances/%s/events/hvnoise/%s/enable",
			 s->tdir, s->name, ev ? ev : "lost");
		v = hvn_read_file(path, NULL);
		on = v && v[0] == '1';
		free(v);
	}
	return on;
}

void hvn_session_module_say(const struct hvn_session *s, int what,
			    uint64_t gap_start, uint64_t gap_end)
{
	if (what == HVN_MOD_GONE)
		hvn_warn("hvnoise.ko was unloaded: no detector events until it is loaded again");
	else if (what == HVN_MOD_BACK)
		hvn_warn("hvnoise.ko is loaded again: its events are enabled again, after %.3f s without them%s",
			 (gap_end - gap_start) / 1e9, s->mod_renumbered ?
			 "; its event ids changed: events recorded before may decode as others" : "");
}

int hvn_session_module_check(struct hvn_session *s, uint64_t *gap_start,
			     uint64_t *gap_end)
{
	uint64_t now = hvn_now(CLOCK_MONOTONIC);
	char *v, *ids;
	bool live;

	if (!s->inst || s->bpf || !has_module_events(s))
		return HVN_MOD_SAME;
	if (!s->mod_ids)
		s->mod_ids = module_ids(s);
	/*
	 * The kernel adds a module's events to each instance one by one before
	 * its init runs, and marks it live after: until then some events may
	 * be missing from our instance, and enabling "all" would miss them.
	 */
	v = hvn_read_file("/sys/module/hvnoise/initstate", NULL);
	live = v && !strncmp(v, "live", 4);
	free(v);
	if (live && !s->mod_gone && module_events_on(s)) {
		s->mod_seen = now;
		return HVN_MOD_SAME;
	}
	if (!live) {
		if (s->mod_gone)
			return HVN_MOD_SAME;
		s->mod_gone = true;
		if (!s->mod_quiet)
			hvn_session_module_say(s, HVN_MOD_GONE, 0, 0);
		return HVN_MOD_GONE;
	}
	/* Back, perhaps within one poll: enabled again as at the start. */
	for (int i = 0; i < s->nenabled; i++)
		if (is_module_spec(s->enabled[i]) &&
		    tracefs_event_enable(s->inst, "hvnoise",
					 spec_event(s->enabled[i])))
			hvn_warn("cannot enable %s again", s->enabled[i]);
	if (wants_watch(s))
		hvn_write_str("/sys/module/hvnoise/parameters/emit", "1");
	ids = module_ids(s);
	*gap_start = s->mod_seen;
	*gap_end = now;
	s->mod_renumbered = ids && s->mod_ids && strcmp(ids, s->mod_ids);
	free(ids);
	if (!s->mod_quiet)
		hvn_session_module_say(s, HVN_MOD_BACK, *gap_start, *gap_end);
	s->mod_gone = false;
	s->mod_seen = now;
	return HVN_MOD_BACK;
}

/*
 * rmdir of an instance is refused (EBUSY) while any of its files is open;
 * a child that inherited one lets go when it exits.  A left instance keeps
 * its buffers' memory until removed: say so, never silently.
 */
static void destroy_instance(struct hvn_session *s)
{
	for (int i = 0; tracefs_instance_destroy(s->inst); i++) {
		if (errno != EBUSY || i == 20) {
			hvn_warn("cannot remove tracefs instance %s: %s; rmdir %s/instances/%s when it is no longer in use",
				 s->name, strerror(errno), s->tdir, s->name);
			return;
		}
		poll(NULL, 0, 50);
	}
}

void hvn_session_end(struct hvn_session *s)
{
	set_live(s, false);
	restore_params(s);
	hvn_bpf_free(s->bpf);
	s->bpf = NULL;
	if (s->tcpu) {
		for (int c = 0; c < s->ncpus; c++)
			if (s->tcpu[c])
				tracefs_cpu_close(s->tcpu[c]);
		free(s->tcpu);
		s->tcpu = NULL;
	}
	free(s->nobuf);
	s->nobuf = NULL;
	if (s->inst) {
		tracefs_trace_off(s->inst);
		destroy_instance(s);
		tracefs_instance_free(s->inst);
		s->inst = NULL;
	}
	for (int i = 0; i < s->nsystems; i++)
		free(s->systems[i]);
	free(s->systems);
	s->systems = NULL;
	s->nsystems = 0;
	for (int i = 0; i < s->nenabled; i++)
		free(s->enabled[i]);
	free(s->enabled);
	s->enabled = NULL;
	s->nenabled = 0;
	free(s->mod_ids);
	s->mod_ids = NULL;
}
