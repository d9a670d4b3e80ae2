// SPDX-License-Identifier: GPL-2.0
/*
 * hvnoise exporter: a long-running Prometheus exporter.  The events of
 * record (hvnoise's, or irq:irq_handler_entry without the module) go into
 * our own tracefs instance; they are read every interval and before each
 * scrape into running per-CPU counters, served at GET /metrics.  One
 * thread, poll(): a handful of scrapers is all it serves, each request
 * bounded in size and time.  SIGINT and SIGTERM stop it and remove the
 * instance.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "builtin.h"
#include "tool.h"
#include "analysis/episodes.h"
#include "http.h"
#include "loader.h"
#include "out/prom.h"
#include "tracedat/pages.h"
#include "session.h"
#include "tracedat/meta.h"

#define MAX_CLIENTS	16
#define CLIENT_MS	10000		/* to send a request and read the reply */

struct exporter_args {
	const char *listen, *textfile;
	double interval;
};

static const struct hvn_opt exporter_opts[] = {
	HVN_OPT_STR_ROW("listen", 'l', "ADDR:PORT", struct exporter_args, listen,
			"where to serve GET /metrics: 127.0.0.1:9464,\n[::1]:9464, or :9464 for every address; port 0\npicks a free one (printed)"),
	HVN_OPT_STR_ROW("textfile", 0, "PATH", struct exporter_args, textfile,
			"instead of serving, rewrite PATH (atomically, 0644)\nevery TIME, for node_exporter's textfile collector\n(Debian: /var/lib/prometheus/node-exporter/hvnoise.prom)"),
	HVN_OPT_SECS_ROW("interval", 'I', struct exporter_args, interval, 0.1, 3600,
			"read the ring buffers every TIME (default 1 s;\nat most 1 s with the BPF source)"),
	HVN_OPT_END_ROW
};

static const struct hvn_cmd exporter_cmd = {
	.name = "exporter",
	.synopsis =
"--listen ADDR:PORT | --textfile PATH [-I TIME] [--cpus LIST]\n"
"                        [--devices LIST] [--source module|bpf|kernel]\n"
"                        [--param NAME=VALUE]... [-e SYS[:EVENT]]... [-b KB]",
	.opts = exporter_opts,
	.more = hvn_session_options,
	.notes = "  SIGINT or SIGTERM stops it\n",
	.renamed_from = 'i',
	.renamed_to = 'I',
	.renamed_note = HVN_I_IS_INPUT,
};

struct client {
	int fd;
	uint64_t deadline;		/* CLOCK_MONOTONIC ns */
	char req[HVN_HTTP_REQ_MAX - 1];
	size_t nreq;
	char *out;			/* the reply, once the request is in */
	size_t nout, sent;
	size_t discarded;		/* read after the reply, see client_out */
};

struct exporter {
	struct exporter_args a;
	struct hvn_session s;
	struct hvn_schema *schema;
	struct tep_handle *tep;
	struct hvn_analysis an;
	struct hvn_rb rb;
	void *page;
	uint64_t scrapes, start_real;
	bool textfile;			/* for node_exporter: no process metrics */
	int lfd;			/* the listening socket, or -1 */
	char shown[80];			/* its address, as said */
	double ivl;			/* -I, at most 1 s with BPF when serving */
	uint64_t next;			/* the next read of the rings */
	struct client cl[MAX_CLIENTS];
	int ncl;
};

/* "ADDR:PORT" to a bound, listening socket; -1 with the reason printed. */
static int listen_on(const char *spec, char *shown, size_t shown_len)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV,
	};
	struct addrinfo *ai;
	char host[128], port[8], *end;
	const char *colon = strrchr(spec, ':');
	const char *listen_arg = spec;
	size_t hl;
	long p;
	int fd, one = 1, r;

	if (!colon || !colon[1] || strlen(colon + 1) >= sizeof(port)) {
		hvn_err("--listen %s: not ADDR:PORT (e.g. 127.0.0.1:9464)", spec);
		return -2;
	}
	p = strtol(colon + 1, &end, 10);
	if (*end || p < 0 || p > 65535 || colon[1] < '0' || colon[1] > '9') {
		hvn_err("--listen %s: port %s is not 0..65535", spec, colon + 1);
		return -2;
	}
	hl = colon - spec;
	if (hl >= 2 && spec[0] == '[' && spec[hl - 1] == ']') {
		spec++;
		hl -= 2;
	} else if (memchr(spec, '[', hl) || memchr(spec, ']', hl) ||
		   memchr(spec, ':', hl)) {
		hvn_err("--listen %s: write an IPv6 address in brackets, [::1]:PORT",
			spec);
		return -2;
	}
	if (hl >= sizeof(host)) {
		hvn_err("--listen: address too long");
		return -2;
	}
	memcpy(host, spec, hl);
	host[hl] = 0;
	snprintf(port, sizeof(port), "%ld", p);
	r = getaddrinfo(hl ? host : NULL, port, &hints, &ai);
	if (r) {
		hvn_err("--listen %s: \"%s\" is not a numeric IPv4 or IPv6 address (%s)",
			listen_arg, host, gai_strerror(r));
		return -2;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 16)) {
		hvn_err("cannot listen on %s: %s", listen_arg, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	{
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		char h[INET6_ADDRSTRLEN], sv[8];

		if (!getsockname(fd, (struct sockaddr *)&ss, &sl) &&
		    !getnameinfo((struct sockaddr *)&ss, sl, h, sizeof(h), sv,
				 sizeof(sv), NI_NUMERICHOST | NI_NUMERICSERV))
			snprintf(shown, shown_len, ss.ss_family == AF_INET6 ?
				 "[%s]:%s" : "%s:%s", h, sv);
	}
	return fd;
}

/* Everything the ring buffers (and the BPF source) hold now, into the
 * running counters. */
static void drain(struct exporter *x)
{
	uint64_t a, b;

	/* Reloaded under us: its events enabled again. */
	hvn_session_module_check(&x->s, &a, &b);
	hvn_tool_feed(&x->s, x->page, &x->rb);
	/* Counters only: the list of every migration would grow forever. */
	x->an.nmig = 0;
	hvn_an_finish(&x->an);
}

/* Events every CPU buffer lost (overwritten or dropped), from its stats. */
static uint64_t overruns(struct exporter *x)
{
	uint64_t n = 0;

	for (int c = 0; c < x->s.ncpus; c++) {
		struct hvn_cpustat st;
		char *text = x->s.tcpu[c] ? hvn_session_cpustat(&x->s, c) : NULL;

		if (text && !hvn_cpustat_parse(text, &st))
			n += hvn_cpustat_lost(&st);
		free(text);
	}
	return n;
}

static char *metrics(struct exporter *x, size_t *len)
{
	struct hvn_prom_info pi = {
		.overrun_events = overruns(x),
		.missed_pages = x->rb.missed_pages,
		.bad_pages = x->rb.bad_pages,
		.source = hvn_source_names[x->s.source],
		.module_loaded = x->s.module && !x->s.mod_gone,
		.updated_real = hvn_now(CLOCK_REALTIME),
	};
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	hvn_prom_write(f, &x->an, &pi);
	if (x->s.bpf) {
		fprintf(f, "# HELP hvnoise_bpf_dropped_total Records the BPF source could not deliver.\n"
			"# TYPE hvnoise_bpf_dropped_total counter\nhvnoise_bpf_dropped_total %llu\n",
			(unsigned long long)hvn_bpf_dropped(x->s.bpf));
	}
	/* node_exporter serves its own process metrics: a textfile with the
	 * same names would fail every scrape of it. */
	if (!x->textfile) {
		fprintf(f, "# HELP hvnoise_exporter_scrapes_total Requests for /metrics served.\n"
			"# TYPE hvnoise_exporter_scrapes_total counter\nhvnoise_exporter_scrapes_total %llu\n",
			(unsigned long long)x->scrapes);
		/* The name every Prometheus client library gives it. */
		fprintf(f, "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n"
			"# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %llu\n",
			(unsigned long long)(x->start_real / 1000000000ull));
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void reply(struct client *c, const char *status, const char *ctype,
		  const char *extra, const char *body, size_t blen, bool head)
{
	FILE *f = open_memstream(&c->out, &c->nout);

	if (!f)
		return;
	fprintf(f, "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: close\r\n\r\n",
		status, ctype, blen, extra);
	if (!head)
		fwrite(body, 1, blen, f);
	fclose(f);
}

static void error_reply(struct client *c, int status)
{
	char line[64], body[64];
	int n;

	snprintf(line, sizeof(line), "%d %s", status, hvn_http_reason(status));
	n = snprintf(body, sizeof(body), "%s\n", line);
	reply(c, line, "text/plain; charset=utf-8",
	      status == 405 ? "Allow: GET, HEAD\r\n" : "", body, n, false);
}

/* GET or HEAD /: where the metrics are, as every exporter says it. */
static const char index_page[] =
	"<html><head><title>hvnoise exporter</title></head><body>\n"
	"<h1>hvnoise exporter</h1>\n"
	"<p><a href=\"/metrics\">Metrics</a>: time taken from this host's CPUs (hvnoise(8))</p>\n"
	"</body></html>\n";

/* GET or HEAD /metrics: the counters as they are now. */
static void scrape(struct exporter *x, struct client *c, bool head)
{
	size_t blen;
	char *body;

	drain(x);
	x->scrapes++;
	body = metrics(x, &blen);
	if (!body) {
		error_reply(c, 500);
		return;
	}
	reply(c, "200 OK", "text/plain; version=0.0.4; charset=utf-8", "",
	      body, blen, head);
	free(body);
}

static void drop(struct exporter *x, int i)
{
	close(x->cl[i].fd);
	free(x->cl[i].out);
	x->cl[i] = x->cl[--x->ncl];
}

/* Read what the client sent; 0 keep, -1 drop it. */
static int client_in(struct exporter *x, struct client *c)
{
	ssize_t r = recv(c->fd, c->req + c->nreq, sizeof(c->req) - c->nreq, 0);
	bool head, index;
	int status;

	if (r < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	if (!r)
		return -1;
	c->nreq += r;
	status = hvn_http_request(c->req, c->nreq, &head, &index);
	if (!status)
		return 0;
	if (status == 200 && index)
		reply(c, "200 OK", "text/html; charset=utf-8", "", index_page,
		      sizeof(index_page) - 1, head);
	else if (status == 200)
		scrape(x, c, head);
	else
		error_reply(c, status);
	return c->out ? 0 : -1;
}

/*
 * Send more of the reply; 0 keep, -1 failed.  Once it is sent, our side is
 * shut and what the client still sends is read and dropped until it
 * closes: closing with unread data would reset the connection and could
 * destroy the reply (a 431 to a client still sending its headers).
 */
static int client_out(struct client *c, uint64_t now)
{
	ssize_t w = send(c->fd, c->out + c->sent, c->nout - c->sent,
			 MSG_NOSIGNAL);

	if (w < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	c->sent += w;
	if (c->sent == c->nout) {
		shutdown(c->fd, SHUT_WR);
		if (c->deadline > now + 1000000000ull)
			c->deadline = now + 1000000000ull;
	}
	return 0;
}

/* After the reply: 0 keep draining, -1 the client closed (or sent too much). */
static int client_drain(struct client *c)
{
	char buf[4096];
	ssize_t r = recv(c->fd, buf, sizeof(buf), 0);

	if (r < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	c->discarded += r;
	return !r || c->discarded > 65536 ? -1 : 0;
}

/* Until the next read of the rings: one poll() of the clients. */
static void serve_wait(struct hvn_tool *t)
{
	struct exporter *x = t->priv;
	struct pollfd pfd[MAX_CLIENTS + 1];
	uint64_t now = hvn_now(CLOCK_MONOTONIC), wake = x->next;
	int n = 0, timeout;

	pfd[n++] = (struct pollfd){ .fd = x->ncl < MAX_CLIENTS ? x->lfd : -1,
				    .events = POLLIN };
	for (int i = 0; i < x->ncl; i++) {
		const struct client *c = &x->cl[i];
		bool writing = c->out && c->sent < c->nout;

		pfd[n++] = (struct pollfd){ .fd = c->fd,
			.events = writing ? POLLOUT : POLLIN };
		if (x->cl[i].deadline < wake)
			wake = x->cl[i].deadline;
	}
	timeout = wake > now ? (wake - now) / 1000000 + 1 : 0;
	/* A signal between the stop check and poll() is seen within a
	 * second, whatever -i says (a stop must not wait out -i). */
	if (timeout > 1000)
		timeout = 1000;
	if (poll(pfd, n, timeout) < 0) {
		if (errno != EINTR) {
			hvn_err("poll: %s", strerror(errno));
			t->ret = HVN_EXIT_FAIL;
		}
		return;
	}
	now = hvn_now(CLOCK_MONOTONIC);
	/* Clients first: pfd[1..] matches cl[] only until one drops. */
	for (int i = x->ncl - 1; i >= 0; i--) {
		struct client *c = &x->cl[i];
		short re = pfd[i + 1].revents;
		int r = 0;

		if (re & (POLLERR | POLLNVAL))
			r = -1;
		else if (re & POLLOUT)
			r = client_out(c, now);
		else if (re & (POLLIN | POLLHUP))
			r = c->out ? client_drain(c) : client_in(x, c);
		if (!r && now >= c->deadline)
			r = -1;
		if (r)
			drop(x, i);
	}
	if (pfd[0].revents & POLLIN) {
		while (x->ncl < MAX_CLIENTS) {
			int fd = accept4(x->lfd, NULL, NULL,
					 SOCK_NONBLOCK | SOCK_CLOEXEC);

			if (fd < 0)
				break;
			memset(&x->cl[x->ncl], 0, sizeof(x->cl[0]));
			x->cl[x->ncl].fd = fd;
			x->cl[x->ncl].deadline = now + CLIENT_MS * 1000000ull;
			x->ncl++;
		}
	}
}

/* The counters into @path: written beside it and renamed over it, so the
 * textfile collector never reads half a file.  0, or -1 said. */
static int write_textfile(struct exporter *x, const char *path)
{
	char tmp[4096];
	size_t blen;
	char *body;
	int fd, ok;

	drain(x);
	body = metrics(x, &blen);
	if (!body)
		return -1;
	snprintf(tmp, sizeof(tmp), "%s.hvnoise-tmp", path);
	unlink(tmp);			/* a killed exporter's */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	ok = fd >= 0 && write(fd, body, blen) == (ssize_t)blen;
	if (fd >= 0 && close(fd))
		ok = 0;
	free(body);
	if (!ok || rename(tmp, path)) {
		hvn_err("cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* In steps of at most a second: a stop must not wait out -I, and the BPF
 * source's small ring is read at least that often. */
static void textfile_wait(struct hvn_tool *t)
{
	struct exporter *x = t->priv;
	uint64_t now = hvn_now(CLOCK_MONOTONIC);

	if (now < x->next)
		usleep(x->next - now > 1000000000ull ? 1000000 :
		       (x->next - now) / 1000 + 1);
	if (x->s.bpf)
		drain(x);
}

static void exporter_wait(struct hvn_tool *t)
{
	struct exporter *x = t->priv;

	if (x->textfile)
		textfile_wait(t);
	else
		serve_wait(t);
}

/* The rings read every -i: into the textfile, or for the next scrape. */
static enum hvn_tick exporter_tick(struct hvn_tool *t)
{
	struct exporter *x = t->priv;
	uint64_t now = hvn_now(CLOCK_MONOTONIC);

	if (now < x->next)
		return HVN_TICK_WAIT;
	if (x->textfile && write_textfile(x, x->a.textfile)) {
		t->ret = HVN_EXIT_FAIL;
		return HVN_TICK_DONE;
	}
	if (!x->textfile)
		drain(x);
	x->next = now + x->ivl * 1e9;
	return HVN_TICK_WAIT;
}

static int exporter_apply(struct hvn_tool *t)
{
	struct exporter *x = t->priv;
	const char *listen_spec = x->a.listen;

	if (!listen_spec == !x->a.textfile) {
		hvn_err("%s", listen_spec ? "--listen or --textfile: choose one" :
			"--listen ADDR:PORT is required (e.g. 127.0.0.1:9464), or --textfile PATH");
		return HVN_EXIT_USAGE;
	}
	/* The address first: a bad one is a usage error before any tracing. */
	if (listen_spec) {
		x->lfd = listen_on(listen_spec, x->shown, sizeof(x->shown));
		if (x->lfd < 0)
			return x->lfd == -2 ? HVN_EXIT_USAGE : HVN_EXIT_FAIL;
	}
	x->schema = calloc(1, sizeof(*x->schema));
	if (!x->schema) {
		if (x->lfd >= 0)
			close(x->lfd);
		return HVN_EXIT_FAIL;
	}
	return -1;
}

static int exporter_init(struct hvn_tool *t)
{
	struct exporter *x = t->priv;

	x->tep = hvn_session_tep(&x->s);
	x->page = malloc(x->s.page_size);
	if (!x->tep || !x->page || hvn_an_init(&x->an, x->schema)) {
		hvn_err("cannot read the event formats from tracefs");
		return HVN_EXIT_FAIL;
	}
	hvn_schema_bind(x->schema, x->tep);
	x->an.top_max = 1;
	x->rb = (struct hvn_rb){ .event = hvn_an_event, .ctx = &x->an,
				 .page_size = x->s.page_size };
	x->rb.commit_size = tep_get_header_page_size(x->tep);
	if (x->rb.commit_size != 4 && x->rb.commit_size != 8)
		x->rb.commit_size = sizeof(long);
	x->start_real = hvn_now(CLOCK_REALTIME);
	return 0;
}

static int exporter_enable(struct hvn_tool *t)
{
	struct exporter *x = t->priv;
	struct sigaction sa = { .sa_handler = SIG_IGN };

	hvn_catch_stop();
	sigaction(SIGPIPE, &sa, NULL);
	x->ivl = x->a.interval;
	/* The BPF source's ring buffer is small: read it at least every
	 * second, whatever -i says, or it drops records. */
	if (x->s.bpf && x->ivl > 1 && !x->a.textfile)
		x->ivl = 1;
	x->textfile = x->a.textfile;
	if (x->a.textfile)
		hvn_info("%s, writing %s every %g s%s%s\n",
			x->s.name, x->a.textfile, x->ivl,
			hvn_housekeeping()[0] ? "; runs on CPUs " : "",
			hvn_housekeeping());
	else
		hvn_info("%s, serving http://%s/metrics%s%s\n",
			x->s.name, x->shown, hvn_housekeeping()[0] ? "; runs on CPUs " : "",
			hvn_housekeeping());
	return 0;
}

static int exporter_finish(struct hvn_tool *t)
{
	if (hvn_stop_sig)
		hvn_info("stopped by signal %s\n", strsignal(hvn_stop_sig));
	return t->ret;
}

static void exporter_free(struct hvn_tool *t)
{
	struct exporter *x = t->priv;

	while (x->ncl)
		drop(x, x->ncl - 1);
	if (x->an.cpu)
		hvn_an_free(&x->an);
	free(x->page);
	if (x->tep)
		tep_free(x->tep);
	free(x->schema);
	if (x->lfd >= 0)
		close(x->lfd);
}

static const struct hvn_tool_ops exporter_ops = {
	.cmd = &exporter_cmd,
	.prefix = "hvnoise-exporter",
	.apply = exporter_apply,
	.init = exporter_init,
	.enable = exporter_enable,
	.tick = exporter_tick,
	.wait = exporter_wait,
	.finish = exporter_finish,
	.free = exporter_free,
};

int cmd_exporter(int argc, char **argv)
{
	struct exporter *x = calloc(1, sizeof(*x));
	int ret;

	if (!x)
		return HVN_EXIT_FAIL;
	x->a.interval = 1;
	x->lfd = -1;
	ret = hvn_tool_main(&exporter_ops, &x->a, x, &x->s, argc, argv);
	free(x);
	return ret;
}
