// SPDX-License-Identifier: GPL-2.0
/*
 * hvnoise record: our own instance, trace_clock=mono, the events read a
 * page at a time into per-CPU files beside the output, then assembled into
 * a trace.dat with the context the report needs (clock pairs, host, kernel,
 * watched set) in an option of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tracefs/tracefs.h>

#include "builtin.h"
#include "tool.h"
#include "tracedat/pages.h"
#include "session.h"
#include "tracedat/meta.h"
#include "tracedat/tracedat.h"

#define CLOCK_EVERY_NS	5000000000ull
#define BPF_FLUSH_NS	1000000000ull

struct record_args {
	const char *out;
	double duration;
	bool recover;
};

static const struct hvn_opt record_opts[] = {
	HVN_OPT_STR_ROW("output", 'o', "FILE", struct record_args, out,
			"trace.dat to write (default trace.dat)"),
	HVN_OPT_SECS_ROW("duration", 'd', struct record_args, duration, 1e-3, 1e9,
			"stop after TIME (default: CMD exits or Ctrl-C)"),
	HVN_OPT_FLAG_ROW("recover", 0, struct record_args, recover,
			 "assemble FILE from the pieces a killed or failed\nrecording left (FILE.cpu*.hvnoise-tmp)"),
	HVN_OPT_END_ROW
};

static const struct hvn_cmd record_cmd = {
	.name = "record",
	.synopsis =
"[-o FILE] [-d TIME] [--cpus LIST] [--devices BDF,...]\n"
"                      [--source module|bpf|kernel] [--param NAME=VALUE]...\n"
"                      [-e SYS[:EVENT]]... [-b KB] [-- CMD [ARGS...]]",
	.opts = record_opts,
	.operands = true,
	.more = hvn_session_options,
	.stop_at_operand = true,
	.notes =
"      --flight-recorder  always on: write the last seconds on a trigger\n"
"                       (the same as hvnoise flight-recorder; see its --help)\n",
};

struct cpu_out {
	char *path;
	int fd;
	uint64_t pages;
	/* The BPF source's records, in pages of their own until the end. */
	char *bpath;
	int bfd;
	struct hvn_rb_out bout;
};

/* OUT.KINDc.hvnoise-tmp, created empty; 0, or -1 with the reason printed. */
static int create_tmp(char **path, int *fd, const char *out, const char *kind,
		      int c)
{
	if (asprintf(path, "%s.%s%d.hvnoise-tmp", out, kind, c) < 0) {
		*path = NULL;
		return -1;
	}
	/* A piece of that name is a killed recording's: never lose it. */
	*fd = hvn_create(*path, false);
	if (*fd < 0) {
		if (errno == EEXIST)
			hvn_err("%s is there: a piece of a recording that was killed; run hvnoise record --recover -o %s to assemble it, or remove it",
				*path, out);
		else
			hvn_err("cannot create %s: %s", *path, strerror(errno));
		/* Not ours: the clean-up must not remove it. */
		free(*path);
		*path = NULL;
		return -1;
	}
	return 0;
}

struct bpf_out {
	struct cpu_out *co;
	int ncpus;
};

static int bpf_flush(void *ctx, const uint8_t *page)
{
	struct cpu_out *co = ctx;
	ssize_t n = write(co->bfd, page, co->bout.page_size);

	if (n != (ssize_t)co->bout.page_size) {
		hvn_err("writing %s: %s; recording stopped", co->bpath,
			strerror(errno ? errno : ENOSPC));
		return -1;
	}
	return 0;
}

static int bpf_rec(void *ctx, int cpu, uint64_t ts, const void *rec,
		   uint32_t len)
{
	struct bpf_out *bo = ctx;

	if (cpu < 0 || cpu >= bo->ncpus)
		cpu = 0;
	return hvn_rb_out_add(&bo->co[cpu].bout, ts, rec, len);
}

/* Fold CPU @c's BPF pages into its tracefs pages, in time order. */
static int merge_bpf(const char *out, int c, uint32_t page_size)
{
	char *a = NULL, *b = NULL, *m = NULL;
	int ret = -1;

	if (asprintf(&a, "%s.cpu%d.hvnoise-tmp", out, c) < 0 ||
	    asprintf(&b, "%s.bpf%d.hvnoise-tmp", out, c) < 0 ||
	    asprintf(&m, "%s.merge%d.hvnoise-tmp", out, c) < 0)
		goto done;
	if (access(b, F_OK)) {
		ret = 0;
		goto done;
	}
	if (hvn_rb_merge(access(a, F_OK) ? NULL : a, b, m, page_size,
			 sizeof(long)) || rename(m, a)) {
		hvn_err("cannot merge %s into %s: %s", b, a, strerror(errno));
		unlink(m);
		goto done;
	}
	unlink(b);
	ret = 0;
done:
	free(a);
	free(b);
	free(m);
	return ret;
}

struct page_out {
	struct hvn_session *s;
	struct cpu_out *co;
};

static int write_page(void *ctx, int c, const void *page)
{
	struct page_out *po = ctx;
	struct cpu_out *co = &po->co[c];
	uint32_t ps = po->s->page_size;

	if (write(co->fd, page, ps) != (ssize_t)ps) {
		hvn_err("writing %s: %s; recording stopped, keeping the %llu pages written",
			co->path, strerror(errno ? errno : ENOSPC),
			(unsigned long long)co->pages);
		/* A partial page would not be a page. */
		if (ftruncate(co->fd, co->pages * ps))
			hvn_warn("cannot trim %s", co->path);
		return -1;
	}
	co->pages++;
	return 0;
}

/*
 * Pages from every CPU's buffer into its file.  A failure stops the
 * recording but keeps what was read: -1 for a full disk or another write
 * error, -2 for a buffer that cannot be read any more.
 */
static int drain(struct hvn_session *s, struct cpu_out *co, void *page)
{
	struct page_out po = { s, co };
	int bad, r = hvn_tool_read(s, page, write_page, &po, &bad);

	if (r == -2)
		hvn_err("reading CPU %d's buffer: %s; recording stopped",
			bad, strerror(errno));
	return r;
}

/*
 * What --recover needs to assemble the per-CPU page files after a kill:
 * rewritten with every clock pair, so it is never older than 5 s.
 */
static void write_recovery(const char *out, const struct hvn_session *s,
			   const char *uname_str, FILE *meta, char **mbufp)
{
	char path[4096], tmp[4200];
	const char *mbuf;
	FILE *f;
	int fd;

	/* The memstream's buffer is only current after the flush. */
	fflush(meta);
	mbuf = *mbufp;
	snprintf(path, sizeof(path), "%s.hvnoise-recover", out);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	fd = hvn_create(tmp, true);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	fprintf(f, "hvnoise-recover 1\npage_size %u\nncpus %d\nuname %s\n",
		s->page_size, s->ncpus, uname_str);
	for (int i = 0; i < s->nsystems; i++)
		fprintf(f, "system %s\n", s->systems[i]);
	fprintf(f, "meta\n%s", mbuf ? mbuf : "");
	if (fclose(f) || rename(tmp, path))
		unlink(tmp);
}

/* hvnoise record --recover OUT: the file a killed recorder left in pieces. */
static int recover(const char *out)
{
	char path[4096], *text, *m, **systems = NULL, **files = NULL;
	char uname_str[512] = "";
	struct hvn_tdat_meta tm = { 0 };
	unsigned int page_size = 0;
	int ncpus = 0, nsys = 0, ret = HVN_EXIT_OK;
	const char *tdir = tracefs_tracing_dir();

	snprintf(path, sizeof(path), "%s.hvnoise-recover", out);
	text = hvn_read_file(path, NULL);
	if (!text) {
		hvn_err("%s: %s: nothing to recover for %s", path,
			strerror(errno), out);
		return HVN_EXIT_BADFILE;
	}
	m = strstr(text, "\nmeta\n");
	if (strncmp(text, "hvnoise-recover 1\n", 18) || !m ||
	    sscanf(strstr(text, "page_size") ? strstr(text, "page_size") : "",
		   "page_size %u", &page_size) != 1 ||
	    sscanf(strstr(text, "ncpus") ? strstr(text, "ncpus") : "",
		   "ncpus %d", &ncpus) != 1 || ncpus < 1 ||
	    ncpus > HVN_MAX_CPUS || page_size < 64 || page_size > (1 << 20)) {
		hvn_err("%s: not an hvnoise recovery file", path);
		free(text);
		return HVN_EXIT_BADFILE;
	}
	*m = 0;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		if (!strncmp(l, "system ", 7)) {
			systems = realloc(systems, (nsys + 1) * sizeof(*systems));
			systems[nsys++] = l + 7;
		} else if (!strncmp(l, "uname ", 6)) {
			snprintf(uname_str, sizeof(uname_str), "%s", l + 6);
		}
	}
	files = calloc(ncpus, sizeof(*files));
	for (int c = 0; c < ncpus; c++)
		if (asprintf(&files[c], "%s.cpu%d.hvnoise-tmp", out, c) < 0)
			files[c] = NULL;
	if (!tdir) {
		hvn_err("tracefs is not mounted: the event formats come from it");
		ret = HVN_EXIT_FAIL;
		goto done;
	}
	tm.uname = uname_str;
	tm.clock = "[mono]";
	tm.meta = m + 6;
	tm.ncpus = ncpus;
	tm.hvnoise_formats = strstr(m + 6, "\nsource bpf\n") != NULL;
	for (int c = 0; tm.hvnoise_formats && c < ncpus; c++)
		if (merge_bpf(out, c, page_size)) {
			ret = HVN_EXIT_FAIL;
			goto done;
		}
	if (hvn_tdat_write(out, tdir, systems, nsys, &tm, files, page_size)) {
		hvn_err("cannot recover %s (the pieces are kept; if hvnoise.ko was unloaded, load it again for its event formats)",
			out);
		ret = HVN_EXIT_FAIL;
		goto done;
	}
	for (int c = 0; c < ncpus; c++)
		if (files[c])
			unlink(files[c]);
	unlink(path);
	hvn_info("recovered %s (the per-CPU statistics of the killed recording are lost)\n",
		out);
done:
	for (int c = 0; c < ncpus; c++)
		free(files[c]);
	free(files);
	free(systems);
	free(text);
	return ret;
}

static pid_t spawn(char **argv, const char *inst_dir)
{
	pid_t pid = fork();

	if (pid == 0) {
		/* The NCCL profiler plugin writes into our instance. */
		if (inst_dir)
			setenv("HVNOISE_NCCL_TRACEFS", inst_dir, 1);
		/* The job runs where it would have: only we keep off. */
		hvn_unpin();
		execvp(argv[0], argv);
		hvn_err("cannot run %s: %s", argv[0],
			strerror(errno));
		_exit(127);
	}
	if (pid < 0)
		hvn_err("fork: %s", strerror(errno));
	return pid;
}

/* A recording under way. */
struct rec {
	struct record_args a;
	struct hvn_session s;
	struct cpu_out *co;
	struct bpf_out bo;
	struct { char *buf; size_t len; } mb;	/* the meta text */
	FILE *meta;
	char uname_str[512], **files;
	uint64_t start, last_clock, last_flush;
	void *page;
	pid_t child;
	int failed, child_status;
	bool child_ended;	/* by itself, not stopped by us */
	bool pieces_made;
	bool keep;		/* the pieces stay, for --recover */
};

static int record_apply(struct hvn_tool *t)
{
	struct rec *r = t->priv;

	return r->a.recover ? recover(r->a.out) : -1;
}

static int record_init(struct hvn_tool *t)
{
	struct rec *r = t->priv;
	struct hvn_session *s = t->s;
	const char *out = r->a.out;

	r->meta = open_memstream(&r->mb.buf, &r->mb.len);
	hvn_meta_uname(r->uname_str, sizeof(r->uname_str));
	hvn_session_put_meta(r->meta, s, &t->o);
	hvn_meta_put_clock(r->meta);

	r->co = calloc(s->ncpus, sizeof(*r->co));
	for (int c = 0; r->co && c < s->ncpus; c++)
		r->co[c].fd = r->co[c].bfd = -1;
	r->files = calloc(s->ncpus, sizeof(*r->files));
	r->page = malloc(s->page_size);
	if (!r->co || !r->files || !r->page)
		return HVN_EXIT_FAIL;
	for (int c = 0; c < s->ncpus; c++) {
		struct cpu_out *co = &r->co[c];

		if (create_tmp(&co->path, &co->fd, out, "cpu", c))
			return HVN_EXIT_FAIL;
		r->files[c] = co->path;
		if (!s->bpf)
			continue;
		if (hvn_rb_out_init(&co->bout, s->page_size, sizeof(long),
				    bpf_flush, co) ||
		    create_tmp(&co->bpath, &co->bfd, out, "bpf", c))
			return HVN_EXIT_FAIL;
	}
	r->bo.co = r->co;
	r->bo.ncpus = s->ncpus;
	r->pieces_made = true;
	return 0;
}

static int record_enable(struct hvn_tool *t)
{
	struct rec *r = t->priv;
	struct hvn_session *s = t->s;

	hvn_catch_stop();
	if (t->first < t->argc) {
		char *dir = tracefs_instance_get_dir(s->inst);

		r->child = spawn(t->argv + t->first, dir);
		free(dir);
		if (r->child < 0)
			return HVN_EXIT_FAIL;
	}
	r->start = r->last_clock = r->last_flush = hvn_now(CLOCK_MONOTONIC);
	write_recovery(r->a.out, s, r->uname_str, r->meta, &r->mb.buf);
	hvn_info("recording %s into %s%s%s%s\n", s->name,
		r->a.out, r->a.duration || r->child ? "" : " (Ctrl-C stops)",
		hvn_housekeeping()[0] ? "; runs on CPUs " : "",
		hvn_housekeeping());
	return 0;
}

static enum hvn_tick record_tick(struct hvn_tool *t)
{
	struct rec *r = t->priv;
	struct hvn_session *s = t->s;
	uint64_t now, gap_start, gap_end;

	if (hvn_session_module_check(s, &gap_start, &gap_end) == HVN_MOD_BACK)
		hvn_meta_put_gap(r->meta, gap_start, gap_end);
	r->failed = drain(s, r->co, r->page);
	if (!r->failed && s->bpf && hvn_bpf_poll(s->bpf, bpf_rec, &r->bo) < 0)
		r->failed = -1;
	if (r->failed)
		return HVN_TICK_DONE;
	now = hvn_now(CLOCK_MONOTONIC);
	/* What the BPF source gave is on disk within a second, for
	 * --recover after a kill; only CPUs with records pay a page. */
	if (s->bpf && now - r->last_flush >= BPF_FLUSH_NS) {
		for (int c = 0; c < s->ncpus && !r->failed; c++)
			if (hvn_rb_out_flush(&r->co[c].bout))
				r->failed = -1;
		r->last_flush = now;
		if (r->failed)
			return HVN_TICK_DONE;
	}
	if (now - r->last_clock >= CLOCK_EVERY_NS) {
		hvn_meta_put_clock(r->meta);
		write_recovery(r->a.out, s, r->uname_str, r->meta, &r->mb.buf);
		r->last_clock = now;
	}
	if (r->a.duration && now - r->start >= r->a.duration * 1e9)
		return HVN_TICK_DONE;
	if (r->child && waitpid(r->child, &r->child_status, WNOHANG) == r->child) {
		r->child = 0;
		r->child_ended = true;
		return HVN_TICK_DONE;
	}
	return HVN_TICK_WAIT;
}

/* The BPF source's last records, what it could not do, its pieces merged. */
static void record_finish_bpf(struct rec *r, struct hvn_session *s,
			      uint64_t *pages)
{
	uint64_t thr, thr_ns;

	if (!r->failed && hvn_bpf_finish(s->bpf, bpf_rec, &r->bo) < 0)
		r->failed = -1;
	for (int c = 0; c < s->ncpus; c++)
		if (!r->failed && hvn_rb_out_flush(&r->co[c].bout))
			r->failed = -1;
	if (hvn_bpf_dropped(s->bpf))
		hvn_warn("the BPF ring buffer overflowed: %llu hvnoise records lost",
			 (unsigned long long)hvn_bpf_dropped(s->bpf));
	if (hvn_bpf_untracked(s->bpf))
		hvn_warn("%llu interrupts were not tracked for storms (no free slot, or the IRQ table full)",
			 (unsigned long long)hvn_bpf_untracked(s->bpf));
	thr = hvn_bpf_throttled(s->bpf, &thr_ns);
	if (thr)
		hvn_warn("perf throttled the BPF source's timers %llu times: %.3f ms unsampled in all",
			 (unsigned long long)thr, thr_ns / 1e6);
	hvn_session_put_bpf_meta(r->meta, s->bpf);
	for (int c = 0; c < s->ncpus; c++) {
		close(r->co[c].bfd);
		r->co[c].bfd = -1;
		*pages += r->co[c].bout.pages;
		/* A failed merge keeps every piece for --recover. */
		if (merge_bpf(r->a.out, c, s->page_size)) {
			r->failed = -1;
			r->keep = true;
		}
	}
}

static int record_finish(struct hvn_tool *t)
{
	struct rec *r = t->priv;
	struct hvn_session *s = t->s;
	const char *out = r->a.out;
	struct hvn_tdat_meta m = { 0 };
	uint64_t pages = 0;
	char *clock;
	int ret = HVN_EXIT_OK;

	hvn_session_stop(s);
	if (s->mod_gone)		/* and still gone at the end */
		hvn_meta_put_gap(r->meta, s->mod_seen, hvn_now(CLOCK_MONOTONIC));
	if (!r->failed)
		r->failed = drain(s, r->co, r->page);
	if (s->bpf)
		record_finish_bpf(r, s, &pages);
	hvn_meta_put_clock(r->meta);
	if (r->child) {
		kill(r->child, SIGTERM);
		waitpid(r->child, &r->child_status, 0);
	}

	m.cpustat = calloc(s->ncpus, sizeof(char *));
	for (int c = 0; c < s->ncpus; c++) {
		if (m.cpustat)
			m.cpustat[c] = s->tcpu[c] ? hvn_session_cpustat(s, c) : NULL;
		pages += r->co[c].pages;
	}
	fclose(r->meta);
	r->meta = NULL;
	clock = tracefs_instance_file_read(s->inst, "trace_clock", NULL);
	m.uname = r->uname_str;
	m.clock = clock;
	m.meta = r->mb.buf;
	m.ncpus = s->ncpus;
	m.hvnoise_formats = s->bpf != NULL;
	if (hvn_tdat_write(out, s->tdir, s->systems, s->nsystems, &m, r->files,
			   s->page_size)) {
		/* Keep the pieces: --recover assembles them later. */
		write_recovery(out, s, r->uname_str, stderr, &r->mb.buf);
		r->keep = true;
		hvn_err("%s not written; what was recorded is kept in %s.cpu*.hvnoise-tmp: free space, then run hvnoise record --recover -o %s",
			out, out, out);
		ret = HVN_EXIT_FAIL;
	} else if (r->failed) {
		ret = HVN_EXIT_FAIL;
	}
	if (!r->keep)
		hvn_info("wrote %s: %llu pages of %u bytes from %d CPUs%s%s%s\n",
			out, (unsigned long long)pages, s->page_size, s->ncpus,
			hvn_stop_sig ? ", stopped by signal " : "",
			hvn_stop_sig ? strsignal(hvn_stop_sig) : "",
			r->failed ? ", cut short by the error above" : "");
	for (int c = 0; m.cpustat && c < s->ncpus; c++)
		free(m.cpustat[c]);
	free(m.cpustat);
	free(clock);
	/* A recording that succeeded returns the command's own status, as
	 * time(1) does: a scheduler must see the job fail. */
	if (!ret && r->child_ended && WIFEXITED(r->child_status) &&
	    WEXITSTATUS(r->child_status)) {
		hvn_info("the command exited with %d\n",
			WEXITSTATUS(r->child_status));
		ret = WEXITSTATUS(r->child_status);
	} else if (!ret && r->child_ended && WIFSIGNALED(r->child_status)) {
		hvn_info("the command was killed by signal %s\n",
			strsignal(WTERMSIG(r->child_status)));
		ret = 128 + WTERMSIG(r->child_status);
	}
	return ret;
}

static void record_free(struct hvn_tool *t)
{
	struct rec *r = t->priv;

	if (r->meta)
		fclose(r->meta);
	free(r->mb.buf);
	for (int c = 0; r->co && c < t->s->ncpus; c++) {
		struct cpu_out *co = &r->co[c];

		if (co->fd >= 0)
			close(co->fd);
		if (co->bfd >= 0)
			close(co->bfd);
		if (co->path && !r->keep)
			unlink(co->path);
		if (co->bpath && !r->keep)
			unlink(co->bpath);
		free(co->path);
		free(co->bpath);
		hvn_rb_out_free(&co->bout);
	}
	/* The recovery file is ours once the pieces were: all were made. */
	if (!r->keep && r->co && r->pieces_made) {
		char rp[4096];

		snprintf(rp, sizeof(rp), "%s.hvnoise-recover", r->a.out);
		unlink(rp);
	}
	free(r->co);
	free(r->files);
	free(r->page);
}

static const struct hvn_tool_ops record_ops = {
	.cmd = &record_cmd,
	.prefix = "hvnoise-record",
	.apply = record_apply,
	.init = record_init,
	.enable = record_enable,
	.tick = record_tick,
	.finish = record_finish,
	.free = record_free,
};

int cmd_record(int argc, char **argv)
{
	struct rec r = { .a = { .out = "trace.dat" } };

	return hvn_tool_main(&record_ops, &r.a, &r, &r.s, argc, argv);
}
