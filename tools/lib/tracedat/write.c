// SPDX-License-Identifier: GPL-2.0
/*
 * trace.dat version 6 writer (trace-cmd.dat.v6(5)): the formats come from
 * tracefs, the event data from the per-CPU page files hvnoise record wrote.
 * The file is assembled under a temporary name and renamed into place, so
 * an existing FILE is replaced only by a complete one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "hvn.h"
#include "hvnoise/clockpair.h"
#include "tracedat/evformat.h"
#include "tracedat/tracedat.h"

struct out {
	int fd;
	uint64_t off;
	int err;
};

static void put(struct out *o, const void *buf, size_t n)
{
	const char *p = buf;

	while (!o->err && n) {
		ssize_t w = write(o->fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			o->err = errno ? errno : EIO;
			return;
		}
		p += w;
		n -= w;
		o->off += w;
	}
}

static void put16(struct out *o, uint16_t v) { put(o, &v, 2); }
static void put32(struct out *o, uint32_t v) { put(o, &v, 4); }
static void put64(struct out *o, uint64_t v) { put(o, &v, 8); }

/* A tracefs file with its size in 64 (or 32) bits before it. */
static int put_file(struct out *o, const char *path, int bits)
{
	size_t len;
	char *buf = hvn_read_file(path, &len);

	if (!buf) {
		hvn_err("cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	if (bits == 64)
		put64(o, len);
	else
		put32(o, len);
	put(o, buf, len);
	free(buf);
	return 0;
}

static int put_system(struct out *o, const char *tdir, const char *sys,
		      bool with_name)
{
	char dir[4096], path[4200];
	char **ev;
	int n, ret = 0;

	snprintf(dir, sizeof(dir), "%s/events/%s", tdir, sys);
	n = hvn_list_events(dir, &ev);
	if (n < 0) {
		hvn_err("no event system %s in %s", sys, tdir);
		return -1;
	}
	if (with_name)
		put(o, sys, strlen(sys) + 1);
	put32(o, n);
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s/format", dir, ev[i]);
		if (!ret)
			ret = put_file(o, path, 64);
		free(ev[i]);
	}
	free(ev);
	return ret;
}

/* The hvnoise system as the BPF source writes it (evformat.c). */
static int put_formats(struct out *o, const char *tdir)
{
	put(o, "hvnoise", 8);
	put32(o, HVN_NR_EVENTS);
	for (int ev = 0; ev < HVN_NR_EVENTS; ev++) {
		size_t len;
		char *f = hvn_fmt_event(ev, tdir, &len);

		if (!f) {
			hvn_err("cannot make the format of hvnoise:%s",
				hvn_fmt_name(ev));
			return -1;
		}
		put64(o, len);
		put(o, f, len);
		free(f);
	}
	return 0;
}

static void put_option(struct out *o, uint16_t id, const char *s)
{
	if (!s)
		return;
	put16(o, id);
	put32(o, strlen(s) + 1);
	put(o, s, strlen(s) + 1);
}

/*
 * The DATE option: what trace-cmd and KernelShark add to each timestamp to
 * show wall-clock time, "0x" and microseconds in hex (negative as "-0x").
 * From the newest (CLOCK_MONOTONIC, CLOCK_REALTIME) pair the recording
 * kept in @meta where the trace clock is mono (a file recovered after a
 * reboot must not take this boot's offset); else, for mono and boot, from
 * the clocks now.  One offset for the whole file: a clock stepped during
 * the recording shifts the events before the step.
 */
static void put_date(struct out *o, const char *trace_clock, const char *meta)
{
	unsigned long long pm, pr;
	long long us = 0;
	bool have = false;
	clockid_t id;
	char s[32];

	if (!trace_clock)
		return;
	if (strstr(trace_clock, "[mono]"))
		id = CLOCK_MONOTONIC;
	else if (strstr(trace_clock, "[boot]"))
		id = CLOCK_BOOTTIME;
	else
		return;
	for (const char *l = meta; id == CLOCK_MONOTONIC && l && *l;) {
		if (sscanf(l, "clock %llu %llu", &pm, &pr) == 2) {
			us = ((long long)pr - (long long)pm) / 1000;
			have = true;
		}
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	if (!have) {
		uint64_t c = 0, r = 0;

		hvn_clock_pair(id, &c, &r);
		us = ((long long)r - (long long)c) / 1000;
	}
	snprintf(s, sizeof(s), "%s0x%llx", us < 0 ? "-" : "",
		 (unsigned long long)(us < 0 ? -us : us));
	put_option(o, TDAT_OPT_DATE, s);
}

static int copy_cpu(struct out *o, const char *path, uint64_t size)
{
	char buf[1 << 16];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint64_t done = 0;

	if (fd < 0)
		return -1;
	while (done < size && !o->err) {
		ssize_t r = read(fd, buf, sizeof(buf));

		if (r <= 0)
			break;
		put(o, buf, r);
		done += r;
	}
	close(fd);
	return done == size ? 0 : -1;
}

int hvn_tdat_write(const char *path, const char *tdir, char *const *systems,
		   int nsystems, const struct hvn_tdat_meta *m,
		   char *const *cpu_files, uint32_t page_size)
{
	static const char zeros[4096];
	char tmp[4096], p[4200];
	uint64_t *size, data;
	struct out o = { 0 };
	struct stat st;
	int ret = -1;

	size = calloc(m->ncpus ? m->ncpus : 1, sizeof(*size));
	if (!size)
		return -1;
	for (int i = 0; i < m->ncpus; i++)
		if (cpu_files[i] && !stat(cpu_files[i], &st))
			size[i] = st.st_size - st.st_size % page_size;

	snprintf(tmp, sizeof(tmp), "%s.hvnoise-tmp", path);
	o.fd = hvn_create(tmp, true);
	if (o.fd < 0) {
		hvn_err("cannot create %s: %s", tmp, strerror(errno));
		free(size);
		return -1;
	}

	put(&o, "\027\010\104tracing6", 11);
	put(&o, "\0\0", 1);			/* version terminator */
	put(&o, "\0", 1);			/* little endian */
	put(&o, (char[]){ sizeof(long) }, 1);
	put32(&o, page_size);

	put(&o, "header_page", 12);
	snprintf(p, sizeof(p), "%s/events/header_page", tdir);
	if (put_file(&o, p, 64))
		goto out;
	put(&o, "header_event", 13);
	snprintf(p, sizeof(p), "%s/events/header_event", tdir);
	if (put_file(&o, p, 64))
		goto out;
	if (put_system(&o, tdir, "ftrace", false))
		goto out;
	put32(&o, nsystems + m->hvnoise_formats);
	for (int i = 0; i < nsystems; i++)
		if (put_system(&o, tdir, systems[i], true))
			goto out;
	if (m->hvnoise_formats && put_formats(&o, tdir))
		goto out;
	put32(&o, 0);				/* kallsyms: not needed */
	snprintf(p, sizeof(p), "%s/printk_formats", tdir);
	if (put_file(&o, p, 32))
		goto out;
	snprintf(p, sizeof(p), "%s/saved_cmdlines", tdir);
	if (put_file(&o, p, 64))
		goto out;
	put32(&o, m->ncpus);

	put(&o, "options  ", 10);
	for (int i = 0; i < m->ncpus; i++)
		if (m->cpustat && m->cpustat[i])
			put_option(&o, TDAT_OPT_CPUSTAT, m->cpustat[i]);
	put_option(&o, TDAT_OPT_TRACECLOCK, m->clock);
	put_date(&o, m->clock, m->meta);
	put_option(&o, TDAT_OPT_UNAME, m->uname);
	put16(&o, TDAT_OPT_CPUCOUNT);
	put32(&o, 4);
	put32(&o, m->ncpus);
	put_option(&o, TDAT_OPT_VERSION, "hvnoise " HVN_VERSION);
	put_option(&o, HVN_OPTION_META, m->meta);
	put16(&o, TDAT_OPT_DONE);

	put(&o, "flyrecord", 10);
	data = o.off + 16ull * m->ncpus;
	data = (data + page_size - 1) / page_size * page_size;
	for (int i = 0; i < m->ncpus; i++) {
		put64(&o, size[i] ? data : 0);
		put64(&o, size[i]);
		data += size[i];
	}
	while (!o.err && o.off % page_size) {
		uint64_t n = page_size - o.off % page_size;

		put(&o, zeros, n < sizeof(zeros) ? n : sizeof(zeros));
	}
	for (int i = 0; i < m->ncpus; i++)
		if (size[i] && copy_cpu(&o, cpu_files[i], size[i])) {
			hvn_err("cannot copy %s into %s", cpu_files[i], tmp);
			goto out;
		}
	if (o.err) {
		hvn_err("writing %s: %s", tmp, strerror(o.err));
		goto out;
	}
	if (fsync(o.fd) || rename(tmp, path)) {
		hvn_err("cannot write %s: %s", path, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	close(o.fd);
	if (ret)
		unlink(tmp);
	free(size);
	return ret;
}
