// SPDX-License-Identifier: GPL-2.0
/*
 * The recording's own description: one parser of the CPU stats text, one
 * reader and one writer of the 0x4856 option.  Unknown keys are skipped, so
 * that older readers take newer files.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "hvn.h"
#include "hvnoise/clockpair.h"
#include "tracedat/meta.h"
#include "tracedat/tracedat.h"

/* The value after "\nKEY: " (or at the start), as a number. */
static int stat_field(const char *text, const char *key, uint64_t *v)
{
	size_t kl = strlen(key);
	const char *p = text;
	char *end;

	while (p) {
		if (!strncmp(p, key, kl) && p[kl] == ':') {
			*v = strtoull(p + kl + 1, &end, 10);
			return end == p + kl + 1 ? -1 : 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	*v = 0;
	return -1;
}

int hvn_cpustat_parse(const char *text, struct hvn_cpustat *st)
{
	uint64_t cpu;

	memset(st, 0, sizeof(*st));
	st->cpu = -1;
	if (!stat_field(text, "CPU", &cpu) && cpu < HVN_MAX_CPUS)
		st->cpu = (int)cpu;
	/* "entries" and "overrun" are in every kernel's stats file. */
	if (stat_field(text, "entries", &st->entries) |
	    stat_field(text, "overrun", &st->overrun))
		return -1;
	stat_field(text, "commit overrun", &st->commit_overrun);
	stat_field(text, "dropped events", &st->dropped);
	stat_field(text, "read events", &st->read_events);
	return 0;
}

/* Truncating: a long value must not cost the rest of the file. */
static void copy(char *dst, size_t size, const char *src)
{
	size_t l = strnlen(src, size - 1);

	memcpy(dst, src, l);
	dst[l] = '\0';
}

#define COPY(dst, src) copy(dst, sizeof(dst), src)

static int add_clock(struct hvn_meta *m, uint64_t mono, uint64_t real)
{
	struct hvn_meta_clock *c = realloc(m->clk, (m->nclk + 1) * sizeof(*c));

	if (!c)
		return -ENOMEM;
	m->clk = c;
	c[m->nclk++] = (struct hvn_meta_clock){ mono, real };
	if (!m->start || mono < m->start)
		m->start = mono;
	return 0;
}

/* The last "online" line holds; one too long to keep is not known (cut,
 * it would name fewer CPUs). */
static void take_online(struct hvn_meta *m, const char *list)
{
	if (strlen(list) < sizeof(m->online))
		COPY(m->online, list);
	else
		m->online[0] = '\0';
}

static int parse_line(struct hvn_meta *m, const char *line)
{
	unsigned long long a, b;

	if (sscanf(line, "clock %llu %llu", &a, &b) == 2)
		return add_clock(m, a, b);
	if (!strncmp(line, "host ", 5))
		COPY(m->host, line + 5);
	else if (!strncmp(line, "kernel ", 7))
		COPY(m->kernel, line + 7);
	else if (!strncmp(line, "watched ", 8))
		COPY(m->watched, line + 8);
	else if (!strncmp(line, "devices ", 8))
		COPY(m->devices, line + 8);
	else if (!strncmp(line, "source ", 7))
		COPY(m->source, line + 7);
	else if (!strncmp(line, "online ", 7))
		take_online(m, line + 7);
	else if (sscanf(line, "module-gap %llu %llu", &a, &b) == 2) {
		if (m->ngaps < (int)(sizeof(m->gaps) / sizeof(m->gaps[0])))
			m->gaps[m->ngaps] = (struct hvn_meta_gap){ a, b };
		m->ngaps++;
	} else if (sscanf(line, "flight-recorder-unwritten %llu %llu", &a, &b) == 2) {
		m->flight_unwritten = a;
		m->flight_unwritten_pages = b;
	} else if (!strncmp(line, "flight-recorder ", 16))
		COPY(m->flight, line + 16);
	else if (!strncmp(line, "hvnoise-record ", 15))
		snprintf(m->recorder, sizeof(m->recorder), "hvnoise record %.48s",
			 line + 15);
	else if (sscanf(line, "bpf-dropped %llu", &a) == 1)
		m->dropped += a;	/* records BPF's ring had no room for */
	else if (sscanf(line, "bpf-throttled %llu %llu", &a, &b) == 2) {
		m->bpf_throttled = a;
		m->bpf_throttled_ns = b;
	}
	return 0;
}

int hvn_meta_read(struct hvn_meta *m, const struct hvn_tdat *t)
{
	const char *p, *nl;
	int ret = 0;

	memset(m, 0, sizeof(*m));
	COPY(m->recorder, "trace-cmd");
	if (t->uname) {
		char sys[64], host[128], rel[128];

		if (sscanf(t->uname, "%63s %127s %127s", sys, host, rel) == 3) {
			COPY(m->host, host);
			COPY(m->kernel, rel);
		}
	}
	/* trace_clock reads "local [global] boot": the one in brackets. */
	p = t->clock ? strchr(t->clock, '[') : NULL;
	nl = p ? strchr(p, ']') : NULL;
	if (nl && nl - p - 1 < (int)sizeof(m->clock))
		snprintf(m->clock, sizeof(m->clock), "%.*s", (int)(nl - p - 1),
			 p + 1);
	if (!m->clock[0])
		COPY(m->clock, "unknown");
	for (int i = 0; i < t->ncpustat; i++) {
		struct hvn_cpustat st;
		size_t l = strlen(m->overrun_cpus);

		if (hvn_cpustat_parse(t->cpustat[i], &st))
			continue;
		m->overrun += st.overrun;
		m->dropped += st.dropped;
		if (hvn_cpustat_lost(&st))
			snprintf(m->overrun_cpus + l,
				 sizeof(m->overrun_cpus) - l, "%s%d",
				 l ? "," : "", st.cpu);
	}
	for (p = t->meta; p && *p && !ret; p = nl ? nl + 1 : NULL) {
		char line[2048];
		ptrdiff_t len;

		nl = strchr(p, '\n');
		len = nl ? nl - p : (ptrdiff_t)strlen(p);
		/* A CPU list cut short would name fewer CPUs: not known. */
		if (len >= (ptrdiff_t)sizeof(line) && !strncmp(p, "online ", 7)) {
			m->online[0] = '\0';
			continue;
		}
		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		ret = parse_line(m, line);
	}
	/* trace-cmd's files: the earliest first page is the start. */
	for (int i = 0; !m->nclk && i < t->ncpu_data; i++) {
		uint64_t ts;

		if (t->cpus[i].size && !strcmp(t->comp[0] ? t->comp : "none", "none") &&
		    pread(t->fd, &ts, 8, t->cpus[i].off) == 8 &&
		    (!m->start || ts < m->start))
			m->start = ts;
	}
	return ret;
}

void hvn_meta_free(struct hvn_meta *m)
{
	free(m->clk);
	m->clk = NULL;
	m->nclk = 0;
}

/* (CLOCK_MONOTONIC, CLOCK_REALTIME), the tightest of a few brackets. */
void hvn_meta_put_clock(FILE *f)
{
	uint64_t m = 0, r = 0;

	hvn_clock_pair(CLOCK_MONOTONIC, &m, &r);
	fprintf(f, "clock %llu %llu\n", (unsigned long long)m,
		(unsigned long long)r);
}

void hvn_meta_put_online(FILE *f)
{
	char *on = hvn_read_file("/sys/devices/system/cpu/online", NULL);

	if (!on)
		return;
	on[strcspn(on, "\n")] = '\0';
	if (on[0])
		fprintf(f, "online %s\n", on);
	free(on);
}

void hvn_meta_uname(char *buf, size_t len)
{
	struct utsname u;

	uname(&u);
	snprintf(buf, len, "%s %s %s %s %s", u.sysname, u.nodename, u.release,
		 u.version, u.machine);
}

void hvn_meta_put_recorder(FILE *f, const struct hvn_meta_rec *r)
{
	struct utsname u;

	uname(&u);
	fprintf(f, "hvnoise-record %s\nhost %s\nkernel %s\n", HVN_VERSION,
		u.nodename, u.release);
	fprintf(f, "source %s\nsource-why %s\n", r->source, r->source_why);
	if (r->watched)
		fprintf(f, "watched %s\n", r->watched);
	if (r->devices)
		fprintf(f, "devices %s\n", r->devices);
	if (r->bpf_steal)
		fprintf(f, "bpf-steal %s\n", r->bpf_steal);
	for (int i = 0; i < r->nevents; i++)
		fprintf(f, "event %s\n", r->events[i]);
	if (r->housekeeping && r->housekeeping[0])
		fprintf(f, "housekeeping %s\n", r->housekeeping);
	hvn_meta_put_online(f);
}

void hvn_meta_put_bpf(FILE *f, uint64_t dropped, uint64_t untracked,
		      uint64_t throttled, uint64_t throttled_ns)
{
	fprintf(f, "bpf-dropped %llu\nbpf-untracked-irqs %llu\nbpf-throttled %llu %llu\n",
		(unsigned long long)dropped, (unsigned long long)untracked,
		(unsigned long long)throttled, (unsigned long long)throttled_ns);
}

void hvn_meta_put_gap(FILE *f, uint64_t start, uint64_t end)
{
	fprintf(f, "module-gap %llu %llu\n", (unsigned long long)start,
		(unsigned long long)end);
}

void hvn_meta_put_flight(FILE *f, const char *why, double keep,
			 uint64_t unwritten, uint64_t unwritten_pages)
{
	fprintf(f, "flight-recorder %s\nflight-recorder-keep %.3f\n", why, keep);
	if (unwritten)
		fprintf(f, "flight-recorder-unwritten %llu %llu\n",
			(unsigned long long)unwritten,
			(unsigned long long)unwritten_pages);
}
