// SPDX-License-Identifier: GPL-2.0
/*
 * trace.dat reader.  Every size read from the file is checked against what
 * is left of the file before anything is allocated or read, so a corrupt or
 * truncated file ends in an error naming the section and offset, never a
 * crash or a huge allocation.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <traceevent/event-parse.h>

#include "hvn.h"
#include "tracedat/tracedat.h"

#define MAGIC		"\027\010\104tracing"
#define MAGIC_LEN	10
#define MAX_META	(64u << 20)	/* one header section or option */
#define CHUNK_PAGES	256		/* pages read at a time */

/* A place to read from: the file, or a decompressed section in memory. */
struct tdat_in {
	struct hvn_tdat *t;
	uint64_t off;
	const uint8_t *mem;
	uint64_t memlen;
	const char *what;		/* section, for errors */
};

static int corrupt(struct tdat_in *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int corrupt(struct tdat_in *s, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	hvn_err("%s: %s in %s at offset %llu", s->t->path, msg, s->what,
		(unsigned long long)s->off);
	return HVN_EXIT_BADFILE;
}

static uint64_t left(const struct tdat_in *s)
{
	uint64_t end = s->mem ? s->memlen : s->t->fsize;

	return s->off < end ? end - s->off : 0;
}

static int get(struct tdat_in *s, void *buf, uint64_t n)
{
	if (n > left(s))
		return corrupt(s, "truncated (%llu bytes needed, %llu left)",
			       (unsigned long long)n,
			       (unsigned long long)left(s));
	if (s->mem) {
		memcpy(buf, s->mem + s->off, n);
	} else {
		ssize_t r = pread(s->t->fd, buf, n, s->off);

		if (r < 0 || (uint64_t)r != n)
			return corrupt(s, "read error: %s",
				       r < 0 ? strerror(errno) : "short read");
	}
	s->off += n;
	return 0;
}

static int get16(struct tdat_in *s, uint16_t *v) { return get(s, v, 2); }
static int get32(struct tdat_in *s, uint32_t *v) { return get(s, v, 4); }
static int get64(struct tdat_in *s, uint64_t *v) { return get(s, v, 8); }

/* @n bytes into a new NUL-terminated buffer. */
static int blob(struct tdat_in *s, uint64_t n, char **out)
{
	int ret;

	*out = NULL;
	if (n > left(s) || n > MAX_META)
		return corrupt(s, "size %llu runs past the end (%llu left)",
			       (unsigned long long)n,
			       (unsigned long long)left(s));
	*out = malloc(n + 1);
	if (!*out)
		return corrupt(s, "out of memory");
	ret = get(s, *out, n);
	if (ret) {
		free(*out);
		*out = NULL;
		return ret;
	}
	(*out)[n] = 0;
	return 0;
}

static int read_str(struct tdat_in *s, char *buf, size_t max)
{
	for (size_t i = 0; i < max; i++) {
		int ret = get(s, &buf[i], 1);

		if (ret)
			return ret;
		if (!buf[i])
			return 0;
	}
	return corrupt(s, "string longer than %zu bytes", max - 1);
}

static int expect(struct tdat_in *s, const char *tag)
{
	char buf[32];
	size_t n = strlen(tag) + 1;
	int ret = get(s, buf, n);

	if (ret)
		return ret;
	if (memcmp(buf, tag, n))
		return corrupt(s, "expected \"%s\"", tag);
	return 0;
}

/* The kernel's long, from the commit field of header_page. */
static uint32_t commit_size(const char *hp)
{
	const char *p = strstr(hp, "commit;");

	p = p ? strstr(p, "size:") : NULL;
	return p ? (uint32_t)atoi(p + 5) : 0;
}

static int header_info(struct tdat_in *s)
{
	struct hvn_tdat *t = s->t;
	uint64_t n;
	char *buf;
	int ret;

	s->what = "header_page";
	ret = expect(s, "header_page");
	ret = ret ?: get64(s, &n);
	ret = ret ?: blob(s, n, &buf);
	if (ret)
		return ret;
	t->commit_size = commit_size(buf);
	if (t->commit_size != 4 && t->commit_size != 8) {
		free(buf);
		return corrupt(s, "header_page has no usable commit field");
	}
	tep_parse_header_page(t->tep, buf, n, t->commit_size);
	free(buf);
	s->what = "header_event";
	ret = expect(s, "header_event");
	ret = ret ?: get64(s, &n);
	ret = ret ?: blob(s, n, &buf);
	if (!ret)
		free(buf);
	return ret;
}

/*
 * One "\tfield:TYPE NAME;\toffset:N;\tsize:N;[\tsigned:N;]" line, the
 * declaration's brackets balanced: libtraceevent's field parser reads
 * past malformed ones (an unclosed '[' crashed it: tests/fuzz/regress/).
 */
static bool field_line_ok(const char *l, size_t len)
{
	static const char *const keys[] = { "offset:", "size:", "signed:" };
	const char *p = l + 7, *end = l + len, *semi;
	int depth = 0;

	if (len < 7 || memcmp(l, "\tfield:", 7))
		return false;
	semi = memchr(p, ';', end - p);
	if (!semi || semi == p)
		return false;
	for (; p < semi; p++) {
		depth += (*p == '[') - (*p == ']');
		if (depth < 0)
			return false;
	}
	if (depth)
		return false;
	p = semi + 1;
	for (size_t k = 0; k < sizeof(keys) / sizeof(*keys) && p < end; k++) {
		size_t kl = strlen(keys[k]);
		const char *d;

		if (*p != '\t' || (size_t)(end - p) < kl + 1 ||
		    memcmp(p + 1, keys[k], kl))
			return false;
		d = p += kl + 1;
		if (p < end && *p == '-')
			p++;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
		if (p == d || p >= end || *p != ';')
			return false;
		p++;
	}
	return p == end;
}

/*
 * A format as the kernel writes it: ASCII text, and every field line
 * whole.  libtraceevent's tokenizer has no token for a byte above 0x7e
 * and dereferences NULL on one (a field "args[\xd1]": tests/fuzz/regress/).
 */
static bool format_ok(const char *buf, size_t n)
{
	const char *l = buf, *end = buf + n, *f;
	bool fields = false;

	for (size_t i = 0; i < n; i++)
		if (((unsigned char)buf[i] < 0x20 && buf[i] != '\t' &&
		     buf[i] != '\n') || (unsigned char)buf[i] > 0x7e)
			return false;
	f = strstr(buf, "\nformat:\n");
	if (!f || !strstr(buf, "name: ") || !strstr(buf, "ID: "))
		return false;
	for (l = f + 9; l < end; ) {
		const char *nl = memchr(l, '\n', end - l);
		size_t len = nl ? (size_t)(nl - l) : (size_t)(end - l);

		if (len >= 10 && !memcmp(l, "print fmt:", 10))
			break;
		if (len && !field_line_ok(l, len))
			return false;
		fields |= len != 0;
		l += len + 1;
	}
	return fields;
}

static int one_format(struct tdat_in *s, const char *sys)
{
	uint64_t n;
	char *buf, *pf;
	int ret = get64(s, &n);

	ret = ret ?: blob(s, n, &buf);
	if (ret)
		return ret;
	/*
	 * Only the fields are used here.  libtraceevent's parser of the
	 * print format dereferences NULL on some malformed ones (found by
	 * tests/fuzz/): a file is untrusted, so give it a trivial one.
	 */
	pf = strstr(buf, "\nprint fmt:");
	if (pf) {
		char *nb;

		*pf = 0;
		if (asprintf(&nb, "%s\nprint fmt: \"\"\n", buf) < 0) {
			free(buf);
			return corrupt(s, "out of memory");
		}
		free(buf);
		buf = nb;
		n = strlen(buf);
	}
	if (!format_ok(buf, n) || tep_parse_event(s->t->tep, buf, n, sys))
		s->t->bad_formats++;
	free(buf);
	return 0;
}

static int ftrace_formats(struct tdat_in *s)
{
	uint32_t n;
	int ret;

	s->what = "ftrace event formats";
	ret = get32(s, &n);
	for (uint32_t i = 0; !ret && i < n; i++)
		ret = one_format(s, "ftrace");
	return ret;
}

static int event_formats(struct tdat_in *s)
{
	uint32_t nsys, n;
	char sys[256];
	int ret;

	s->what = "event formats";
	ret = get32(s, &nsys);
	for (uint32_t i = 0; !ret && i < nsys; i++) {
		ret = read_str(s, sys, sizeof(sys));
		ret = ret ?: get32(s, &n);
		for (uint32_t j = 0; !ret && j < n; j++)
			ret = one_format(s, sys);
	}
	return ret;
}

/* kallsyms and printk formats: sized by 32 bits, not needed here. */
static int skip32(struct tdat_in *s, const char *what)
{
	uint32_t n;
	int ret;

	s->what = what;
	ret = get32(s, &n);
	if (ret)
		return ret;
	if (n > left(s))
		return corrupt(s, "size %u runs past the end", n);
	s->off += n;
	return 0;
}

static int cmdlines(struct tdat_in *s)
{
	uint64_t n;
	int ret;

	s->what = "saved cmdlines";
	ret = get64(s, &n);
	if (ret)
		return ret;
	if (n > left(s))
		return corrupt(s, "size %llu runs past the end",
			       (unsigned long long)n);
	s->off += n;
	return 0;
}

static int add_cpu(struct hvn_tdat *t, int cpu, uint64_t off, uint64_t size)
{
	struct hvn_tdat_cpu *c;

	c = realloc(t->cpus, (t->ncpu_data + 1) * sizeof(*c));
	if (!c)
		return HVN_EXIT_FAIL;
	t->cpus = c;
	c[t->ncpu_data].cpu = cpu;
	c[t->ncpu_data].off = off;
	c[t->ncpu_data].size = size;
	t->ncpu_data++;
	return 0;
}

/* One option of either version; @data is its @n bytes, NUL-terminated. */
static void option(struct hvn_tdat *t, uint16_t id, char *data, uint32_t n)
{
	char ***list = &t->cpustat;
	char **l;

	switch (id) {
	case TDAT_OPT_OFFSET:
		/* ASCII, any base (trace-cmd record --ts-offset); each adds. */
		t->ts_offset += strtoll(data, NULL, 0);
		break;
	case TDAT_OPT_TSC2NSEC:
		/* mult, shift (32 bits each), then an offset trace-cmd
		 * report does not apply either. */
		if (n >= 16) {
			memcpy(&t->tsc_mult, data, 4);
			memcpy(&t->tsc_shift, data + 4, 4);
			if (t->tsc_shift > 63)
				t->tsc_mult = t->tsc_shift = 0;
		}
		break;
	case TDAT_OPT_CPUSTAT:
		l = realloc(*list, (t->ncpustat + 1) * sizeof(*l));
		if (!l)
			break;
		*list = l;
		l[t->ncpustat++] = data;
		return;
	case TDAT_OPT_UNAME:
		free(t->uname);
		t->uname = data;
		return;
	case TDAT_OPT_TRACECLOCK:
		free(t->clock);
		t->clock = data;
		return;
	case HVN_OPTION_META:
		free(t->meta);
		t->meta = data;
		return;
	}
	free(data);
}

static int v6_cpu_table(struct tdat_in *s)
{
	struct hvn_tdat *t = s->t;
	int ret = 0;

	s->what = "flyrecord CPU table";
	for (int i = 0; !ret && i < t->ncpus; i++) {
		uint64_t off, size;

		ret = get64(s, &off);
		ret = ret ?: get64(s, &size);
		ret = ret ?: add_cpu(t, i, off, size);
	}
	return ret;
}

static int open_v6(struct tdat_in *s)
{
	struct hvn_tdat *t = s->t;
	uint32_t ncpus;
	char tag[10];
	int ret;

	ret = header_info(s);
	ret = ret ?: ftrace_formats(s);
	ret = ret ?: event_formats(s);
	ret = ret ?: skip32(s, "kallsyms");
	ret = ret ?: skip32(s, "printk formats");
	ret = ret ?: cmdlines(s);
	if (ret)
		return ret;
	s->what = "CPU count";
	ret = get32(s, &ncpus);
	if (ret)
		return ret;
	if (ncpus > HVN_MAX_CPUS)
		return corrupt(s, "%u CPUs", ncpus);
	t->ncpus = ncpus;
	s->what = "options";
	ret = get(s, tag, 10);
	if (!ret && !memcmp(tag, "options  ", 10)) {
		for (;;) {
			uint16_t id;
			uint32_t n;
			char *data;

			ret = get16(s, &id);
			if (ret || id == TDAT_OPT_DONE)
				break;
			ret = get32(s, &n);
			ret = ret ?: blob(s, n, &data);
			if (ret)
				break;
			if (id == TDAT_OPT_BUFFER)
				hvn_warn("%s: trace instance buffers other than the top one are not read",
					 t->path);
			option(t, id, data, n);
		}
		ret = ret ?: get(s, tag, 10);
	}
	if (ret)
		return ret;
	if (!memcmp(tag, "latency  ", 10))
		return corrupt(s, "a latency-format trace holds no per-CPU data");
	if (memcmp(tag, "flyrecord", 10))
		return corrupt(s, "expected \"flyrecord\"");
	return v6_cpu_table(s);
}

static int decompress(struct hvn_tdat *t, const uint8_t *in, uint32_t inlen,
		      uint8_t *out, uint32_t outlen)
{
	if (!strcmp(t->comp, "zstd")) {
		size_t r = ZSTD_decompress(out, outlen, in, inlen);

		return ZSTD_isError(r) || r != outlen ? -1 : 0;
	}
	if (!strcmp(t->comp, "zlib")) {
		uLongf n = outlen;

		return uncompress(out, &n, in, inlen) != Z_OK || n != outlen ?
			-1 : 0;
	}
	return -1;
}

/* A v7 section at @off: its payload, decompressed, in @mem. */
static int v7_section(struct hvn_tdat *t, uint64_t off, uint16_t want,
		      const char *what, uint8_t **mem, uint64_t *len)
{
	struct tdat_in s = { .t = t, .off = off, .what = what };
	uint16_t id, flags;
	uint32_t strid, clen, ulen;
	uint64_t size;
	uint8_t *c;
	int ret;

	*mem = NULL;
	ret = get16(&s, &id);
	ret = ret ?: get16(&s, &flags);
	ret = ret ?: get32(&s, &strid);
	ret = ret ?: get64(&s, &size);
	if (ret)
		return ret;
	if (id != want)
		return corrupt(&s, "section id %u where %u was expected", id, want);
	if (!(flags & 1))
		return blob(&s, size, (char **)mem) ?: (*len = size, 0);
	ret = get32(&s, &clen);
	ret = ret ?: get32(&s, &ulen);
	if (ret)
		return ret;
	if (ulen > MAX_META)
		return corrupt(&s, "uncompressed size %u too large", ulen);
	ret = blob(&s, clen, (char **)&c);
	if (ret)
		return ret;
	*mem = malloc(ulen + 1);
	if (!*mem || decompress(t, c, clen, *mem, ulen)) {
		free(c);
		free(*mem);
		*mem = NULL;
		return corrupt(&s, "cannot decompress (%s)", t->comp);
	}
	free(c);
	(*mem)[ulen] = 0;
	*len = ulen;
	return 0;
}

static int v7_parse(struct hvn_tdat *t, uint64_t off, uint16_t id,
		    const char *what, int (*fn)(struct tdat_in *))
{
	struct tdat_in s = { .t = t, .what = what };
	uint8_t *mem;
	uint64_t len;
	int ret = v7_section(t, off, id, what, &mem, &len);

	if (ret)
		return ret;
	s.mem = mem;
	s.memlen = len;
	ret = fn(&s);
	free(mem);
	return ret;
}

static int v7_buffer(struct hvn_tdat *t, struct tdat_in *o)
{
	uint64_t secoff, off, size;
	uint32_t psize, n, cpu;
	char name[256], clock[64];
	int ret;

	ret = get64(o, &secoff);
	ret = ret ?: read_str(o, name, sizeof(name));
	ret = ret ?: read_str(o, clock, sizeof(clock));
	ret = ret ?: get32(o, &psize);
	ret = ret ?: get32(o, &n);
	if (ret)
		return ret;
	if (psize != t->page_size)
		return corrupt(o, "buffer page size %u differs from %u", psize,
			       t->page_size);
	if (n > HVN_MAX_CPUS)
		return corrupt(o, "%u CPUs", n);
	for (uint32_t i = 0; !ret && i < n; i++) {
		ret = get32(o, &cpu);
		ret = ret ?: get64(o, &off);
		ret = ret ?: get64(o, &size);
		ret = ret ?: add_cpu(t, cpu, off, size);
	}
	return ret;
}

static int open_v7(struct tdat_in *s)
{
	struct hvn_tdat *t = s->t;
	uint64_t next, secs[32] = { 0 };
	char ver[32];
	int ret, hops = 0;

	s->what = "compression header";
	ret = read_str(s, t->comp, sizeof(t->comp));
	ret = ret ?: read_str(s, ver, sizeof(ver));
	ret = ret ?: get64(s, &next);
	if (ret)
		return ret;
	if (strcmp(t->comp, "none") && strcmp(t->comp, "zstd") &&
	    strcmp(t->comp, "zlib"))
		return corrupt(s, "unknown compression \"%s\"", t->comp);

	while (next) {
		uint8_t *mem;
		uint64_t len;
		struct tdat_in o = { .t = t, .what = "options" };

		if (++hops > 1000)
			return corrupt(s, "options sections loop");
		ret = v7_section(t, next, 0, "options", &mem, &len);
		if (ret)
			return ret;
		o.mem = mem;
		o.memlen = len;
		next = 0;
		for (;;) {
			uint16_t id;
			uint32_t n;
			char *data;

			ret = get16(&o, &id);
			ret = ret ?: get32(&o, &n);
			if (ret)
				break;
			if (id == TDAT_OPT_DONE) {
				ret = n >= 8 ? get64(&o, &next) : 0;
				break;
			}
			if (id == TDAT_OPT_BUFFER) {
				struct tdat_in b = o;

				b.memlen = o.off + n <= o.memlen ?
					   o.off + n : o.memlen;
				ret = v7_buffer(t, &b);
				if (ret)
					break;
				o.off += n;
				continue;
			}
			if (id >= TDAT_OPT_HEADER_INFO &&
			    id <= TDAT_OPT_CMDLINES && n == 8) {
				ret = get64(&o, &secs[id]);
				if (ret)
					break;
				continue;
			}
			if (id == TDAT_OPT_CPUCOUNT && n == 4) {
				uint32_t c;

				ret = get32(&o, &c);
				t->ncpus = c;
				if (ret)
					break;
				continue;
			}
			ret = blob(&o, n, &data);
			if (ret)
				break;
			option(t, id, data, n);
		}
		free(mem);
		if (ret)
			return ret;
	}
	if (!secs[TDAT_OPT_HEADER_INFO])
		return corrupt(s, "no header information section");
	ret = v7_parse(t, secs[TDAT_OPT_HEADER_INFO], TDAT_OPT_HEADER_INFO,
		       "header information", header_info);
	if (!ret && secs[TDAT_OPT_FTRACE_EVENTS])
		ret = v7_parse(t, secs[TDAT_OPT_FTRACE_EVENTS],
			       TDAT_OPT_FTRACE_EVENTS, "ftrace event formats",
			       ftrace_formats);
	if (!ret && secs[TDAT_OPT_EVENT_FORMATS])
		ret = v7_parse(t, secs[TDAT_OPT_EVENT_FORMATS],
			       TDAT_OPT_EVENT_FORMATS, "event formats",
			       event_formats);
	return ret;
}

int hvn_tdat_open(struct hvn_tdat *t, const char *path)
{
	struct tdat_in s = { .t = t, .what = "file header" };
	uint8_t magic[MAGIC_LEN], endian, lsize;
	char ver[16];
	struct stat st;
	int ret;

	memset(t, 0, sizeof(*t));
	t->path = path;
	t->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (t->fd < 0) {
		hvn_err("%s: %s", path, strerror(errno));
		return HVN_EXIT_BADFILE;
	}
	if (fstat(t->fd, &st) || !S_ISREG(st.st_mode)) {
		hvn_err("%s: not a regular file", path);
		return HVN_EXIT_BADFILE;
	}
	t->fsize = st.st_size;
	if (!t->fsize) {
		hvn_err("%s: empty file (0 bytes), not a trace.dat", path);
		return HVN_EXIT_BADFILE;
	}
	t->tep = tep_alloc();
	if (!t->tep)
		return HVN_EXIT_FAIL;
	if (t->fsize < MAGIC_LEN || get(&s, magic, MAGIC_LEN) ||
	    memcmp(magic, MAGIC, MAGIC_LEN)) {
		hvn_err("%s: not a trace.dat file (no trace-cmd magic)", path);
		return HVN_EXIT_BADFILE;
	}
	ret = read_str(&s, ver, sizeof(ver));
	ret = ret ?: get(&s, &endian, 1);
	ret = ret ?: get(&s, &lsize, 1);
	ret = ret ?: get32(&s, &t->page_size);
	if (ret)
		return ret;
	t->version = atoi(ver);
	if (t->version != 6 && t->version != 7)
		return corrupt(&s, "trace.dat version \"%s\" (6 and 7 are read)",
			       ver);
	if (endian)
		return corrupt(&s, "big-endian trace (only little-endian is read)");
	if (t->page_size < 64 || t->page_size > (1u << 20) ||
	    (t->page_size & (t->page_size - 1)))
		return corrupt(&s, "page size %u", t->page_size);
	tep_set_file_bigendian(t->tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(t->tep, TEP_LITTLE_ENDIAN);
	tep_set_long_size(t->tep, lsize);
	tep_set_page_size(t->tep, t->page_size);
	ret = t->version == 6 ? open_v6(&s) : open_v7(&s);
	if (!ret && t->bad_formats)
		hvn_warn("%s: %d event formats could not be parsed; their events are counted as other",
			 path, t->bad_formats);
	return ret;
}

static int stream_pages(struct hvn_tdat *t, struct hvn_rb *rb, int cpu,
			const uint8_t *buf, uint64_t len)
{
	for (uint64_t o = 0; o + t->page_size <= len; o += t->page_size)
		hvn_rb_page(rb, cpu, buf + o);
	return 0;
}

/* Uncompressed CPU data: whole pages, read a chunk at a time. */
static int stream_plain(struct hvn_tdat *t, struct hvn_rb *rb,
			const struct hvn_tdat_cpu *c, uint8_t *buf)
{
	uint64_t chunk = (uint64_t)t->page_size * CHUNK_PAGES;
	uint64_t end = c->off + c->size, off = c->off;
	int ret = 0;

	if (c->off > t->fsize || end > t->fsize || end < c->off) {
		snprintf(t->stopped, sizeof(t->stopped),
			 "CPU %d data is cut short: %llu of %llu bytes present",
			 c->cpu,
			 (unsigned long long)(c->off < t->fsize ?
					      t->fsize - c->off : 0),
			 (unsigned long long)c->size);
		if (c->off >= t->fsize)
			return HVN_EXIT_BADFILE;
		end = t->fsize;
		ret = HVN_EXIT_BADFILE;
	}
	posix_fadvise(t->fd, off, end > off ? end - off : 0,
		      POSIX_FADV_SEQUENTIAL);
	while (end - off >= t->page_size) {
		uint64_t n = end - off < chunk ? end - off : chunk;
		ssize_t r;

		n -= n % t->page_size;
		r = pread(t->fd, buf, n, off);
		if (r < 0 || (uint64_t)r != n) {
			snprintf(t->stopped, sizeof(t->stopped),
				 "read error in CPU %d data at offset %llu",
				 c->cpu, (unsigned long long)off);
			return HVN_EXIT_BADFILE;
		}
		stream_pages(t, rb, c->cpu, buf, n);
		off += n;
	}
	return ret;
}

static int stream_compressed(struct hvn_tdat *t, struct hvn_rb *rb,
			     const struct hvn_tdat_cpu *c)
{
	struct tdat_in s = { .t = t, .off = c->off, .what = "compressed CPU data" };
	uint8_t *in = NULL, *out = NULL;
	uint32_t count, clen, ulen;
	int ret;

	if (!c->size)
		return 0;
	ret = get32(&s, &count);
	for (uint32_t i = 0; !ret && i < count; i++) {
		ret = get32(&s, &clen);
		ret = ret ?: get32(&s, &ulen);
		if (ret)
			break;
		if (ulen > (64u << 20) || clen > left(&s)) {
			ret = corrupt(&s, "chunk of %u/%u bytes", clen, ulen);
			break;
		}
		free(in);
		free(out);
		in = malloc(clen ? clen : 1);
		out = malloc(ulen ? ulen : 1);
		if (!in || !out) {
			ret = HVN_EXIT_FAIL;
			break;
		}
		ret = get(&s, in, clen);
		if (!ret && decompress(t, in, clen, out, ulen))
			ret = corrupt(&s, "cannot decompress chunk %u of CPU %d",
				      i, c->cpu);
		if (!ret)
			stream_pages(t, rb, c->cpu, out, ulen);
	}
	free(in);
	free(out);
	if (ret)
		snprintf(t->stopped, sizeof(t->stopped),
			 "CPU %d compressed data stops at offset %llu",
			 c->cpu, (unsigned long long)s.off);
	return ret ? HVN_EXIT_BADFILE : 0;
}

/* A CPU cut short: the first's message kept, the others' numbers listed. */
static void stopped_add(char *first, size_t flen, char *more, size_t mlen,
			int *nmore, const char *msg, int cpu)
{
	size_t l = strlen(more);

	if (!first[0]) {
		l = strnlen(msg, flen - 1);
		memcpy(first, msg, l);
		first[l] = 0;
		return;
	}
	(*nmore)++;
	if (l + 16 < mlen)
		snprintf(more + l, mlen - l, "%s%d", l ? ", " : "", cpu);
	else if (!strstr(more, "..."))
		snprintf(more + l, mlen - l, ", ...");
}

int hvn_tdat_stream(struct hvn_tdat *t, struct hvn_rb *rb)
{
	uint8_t *buf = malloc((size_t)t->page_size * CHUNK_PAGES);
	char first[128] = "", more[96] = "";
	int ret = 0, nmore = 0;

	if (!buf)
		return HVN_EXIT_FAIL;
	rb->page_size = t->page_size;
	rb->commit_size = t->commit_size;
	rb->ts_mult = t->tsc_mult;
	rb->ts_shift = t->tsc_shift;
	rb->ts_offset = t->ts_offset;
	for (int i = 0; i < t->ncpu_data; i++) {
		int r;

		if (t->cpus[i].cpu < 0 || t->cpus[i].cpu >= HVN_MAX_CPUS)
			continue;
		t->stopped[0] = 0;
		if (t->version == 7 && strcmp(t->comp, "none"))
			r = stream_compressed(t, rb, &t->cpus[i]);
		else
			r = stream_plain(t, rb, &t->cpus[i], buf);
		/* Go on with the other CPUs: report what can be read. */
		if (r && !ret)
			ret = r;
		if (r && t->stopped[0])
			stopped_add(first, sizeof(first), more, sizeof(more),
				    &nmore, t->stopped, t->cpus[i].cpu);
	}
	/* Every CPU cut short is named, the first with where and why. */
	if (nmore)
		snprintf(t->stopped, sizeof(t->stopped), "%s; and %d more CPUs: %s",
			 first, nmore, more);
	else
		snprintf(t->stopped, sizeof(t->stopped), "%s", first);
	free(buf);
	return ret;
}

void hvn_tdat_close(struct hvn_tdat *t)
{
	if (t->fd > 0)
		close(t->fd);
	if (t->tep)
		tep_free(t->tep);
	free(t->cpus);
	free(t->uname);
	free(t->clock);
	free(t->meta);
	for (int i = 0; i < t->ncpustat; i++)
		free(t->cpustat[i]);
	free(t->cpustat);
	memset(t, 0, sizeof(*t));
}
