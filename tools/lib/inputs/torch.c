// SPDX-License-Identifier: GPL-2.0
/*
 * Collectives from other tools, for correlate: PyTorch Flight Recorder
 * dumps (JSON), Kineto / PyTorch profiler Chrome traces, NCCL Inspector
 * JSON lines.  All three time collectives on CLOCK_REALTIME; correlate maps
 * them onto the trace through its clock pairs.  A malformed file is refused
 * with the key at fault; the other files are still read.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <zlib.h>

#include "hvnoise/nccl.h"
#include "inputs/torch.h"
#include "inputs/json.h"
#include "inputs/pickle.h"

struct src {
	const char *path;
	char where[128];		/* entry or line, for errors */
	bool per_line;			/* a bad line skips the line only */
	size_t said, unsaid;		/* bad lines told, and the rest */
	struct hvn_ext_coll *v;		/* what the file gave, added if all good */
	size_t n, cap;
};

static int bad(struct src *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define BAD_LINES_SAID	3

/* Adds @c if its times are a range after 1970. */
static int push(struct src *s, const struct hvn_ext_coll *c)
{
	int64_t end = c->state == HVN_EXT_COMPLETED ? c->end_real : c->start_real;

	if (c->start_real <= 0 || end < c->start_real)
		return bad(s, "times %lld to %lld ns are not a time range since 1970",
			   (long long)c->start_real, (long long)end);
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct hvn_ext_coll *v = realloc(s->v, cap * sizeof(*v));

		if (!v) {
			hvn_err("out of memory");
			exit(HVN_EXIT_FAIL);
		}
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = *c;
	return 0;
}

/* A file counts whole or not at all. */
static int finish(struct src *s, int ret, hvn_ext_add add, void *ctx)
{
	for (size_t i = 0; !ret && i < s->n; i++)
		add(ctx, &s->v[i]);
	free(s->v);
	return ret;
}

static int bad(struct src *s, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	/* A few bad lines are named; the rest counted (hvn_read_inspector()). */
	if (s->per_line && s->said == BAD_LINES_SAID) {
		s->unsaid++;
		return HVN_EXIT_BADFILE;
	}
	s->said += s->per_line;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	hvn_err("%s: %s%s%s; the %s is skipped", s->path, s->where,
		s->where[0] ? ": " : "", msg, s->per_line ? "line" : "file");
	return HVN_EXIT_BADFILE;
}

#define GZ_MAX	(2ull << 30)	/* a trace beyond 2 GiB is not read whole */

/* A file as it is read, gunzipped when it is gzip (the profiler's
 * .json.gz); members may follow one another (cat a.gz b.gz). */
struct in {
	int fd;
	bool gz, eof, zend;
	z_stream z;
	size_t have, used;		/* plain: the head's bytes, and given */
	const char *err;		/* why in_read() failed */
	unsigned char buf[1 << 16];
};

static ssize_t in_fd_read(struct in *in, void *buf, size_t cap)
{
	ssize_t r;

	do
		r = read(in->fd, buf, cap);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		in->err = strerror(errno);
	return r;
}

/* false with the error printed */
static bool in_open(struct in *in, struct src *s)
{
	ssize_t r;

	memset(in, 0, sizeof(*in));
	in->fd = open(s->path, O_RDONLY | O_CLOEXEC);
	/* Two bytes at least say gzip: a pipe may give one at a time. */
	do {
		r = in->fd < 0 ? -1 : in_fd_read(in, in->buf + in->have,
						 sizeof(in->buf) - in->have);
		in->have += r > 0 ? r : 0;
	} while (r > 0 && in->have < 2);
	if (r < 0) {
		hvn_err("%s: %s", s->path, strerror(errno));
		if (in->fd >= 0)
			close(in->fd);
		return false;
	}
	r = in->have;
	in->eof = !r;
	in->gz = r >= 2 && in->buf[0] == 0x1f && in->buf[1] == 0x8b;
	if (in->gz) {
		if (inflateInit2(&in->z, 15 + 16) != Z_OK) {
			close(in->fd);
			bad(s, "gzip: out of memory");
			return false;
		}
		in->z.next_in = in->buf;
		in->z.avail_in = r;
	}
	return true;
}

static void in_close(struct in *in)
{
	if (in->gz)
		inflateEnd(&in->z);
	close(in->fd);
}

/* hvn_json_read_fn: up to @cap bytes of the file's content. */
static ssize_t in_read(void *v, char *out, size_t cap)
{
	struct in *in = v;

	if (!in->gz) {
		size_t n = in->have - in->used < cap ? in->have - in->used : cap;

		if (!n)
			return in_fd_read(in, out, cap);
		memcpy(out, in->buf + in->used, n);
		in->used += n;
		return n;
	}
	for (;;) {
		size_t got;
		int z;

		if (!in->z.avail_in && !in->eof) {
			ssize_t r = in_fd_read(in, in->buf, sizeof(in->buf));

			if (r < 0)
				return -1;
			in->eof = !r;
			in->z.next_in = in->buf;
			in->z.avail_in = r;
		}
		if (in->zend) {
			if (!in->z.avail_in && in->eof)
				return 0;
			if (!in->z.avail_in)
				continue;
			inflateReset(&in->z);
			in->zend = false;
		}
		in->z.next_out = (unsigned char *)out;
		in->z.avail_out = cap < UINT_MAX ? cap : UINT_MAX;
		z = inflate(&in->z, Z_NO_FLUSH);
		got = (char *)in->z.next_out - out;
		if (z == Z_STREAM_END) {
			in->zend = true;
		} else if (z == Z_BUF_ERROR && in->eof && !in->z.avail_in && !got) {
			in->err = "gzip: truncated";
			return -1;
		} else if (z != Z_OK && z != Z_BUF_ERROR) {
			in->err = z == Z_MEM_ERROR ? "gzip: out of memory" : "gzip: corrupt";
			return -1;
		}
		if (got)
			return got;
	}
}

/* The whole file, gunzipped (Flight Recorder dumps, Inspector lines). */
static char *read_input(struct src *s, size_t *len)
{
	size_t cap = 0, have = 0;
	char *out = NULL;
	struct in in;
	ssize_t r;

	if (!in_open(&in, s))
		return NULL;
	do {
		if (cap - have < sizeof(in.buf)) {
			size_t nc = cap ? cap * 2 : 1 << 20;
			char *nb;

			if (in.gz && cap >= GZ_MAX) {
				in.err = "gzip: beyond 2 GiB uncompressed";
				r = -1;
				break;
			}
			nb = realloc(out, nc + 1);
			if (!nb) {
				in.err = "out of memory";
				r = -1;
				break;
			}
			out = nb;
			cap = nc;
		}
		r = in_read(&in, out + have, cap - have);
		have += r > 0 ? r : 0;
	} while (r > 0);
	in_close(&in);
	if (r < 0) {
		bad(s, "%s", in.err);
		free(out);
		return NULL;
	}
	*len = have;
	out[have] = 0;
	return out;
}

static struct json *load(struct src *s, size_t *len_out, char **text_out)
{
	size_t len;
	char *text = read_input(s, &len), err[120];
	struct json *j;

	if (!text)
		return NULL;
	/* A UTF-8 byte-order mark, which some writers put first, is no
	 * part of the JSON. */
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) {
		len -= 3;
		memmove(text, text + 3, len + 1);
	}
	if (text_out) {
		*text_out = text;
		*len_out = len;
		return (struct json *)1;
	}
	j = hvn_json_parse(text, len, err, sizeof(err));
	free(text);
	if (!j)
		bad(s, "not JSON (%s)", err);
	return j;
}

/* @key of @o unless absent or null; missing is an error if @need. */
static const struct json *present(struct src *s, const struct json *o,
				  const char *key, bool need, int *ret)
{
	const struct json *j = hvn_json_get(o, key);

	if (j && j->type != J_NULL)
		return j;
	if (need)
		*ret = bad(s, "key \"%s\" is missing", key);
	return NULL;
}

/* Typed getters that name the key when it is missing or of another type. */
static bool num(struct src *s, const struct json *o, const char *key,
		double *v, bool need, int *ret)
{
	const struct json *j = present(s, o, key, need, ret);

	if (!j)
		return false;
	if (j->type != J_NUM) {
		*ret = bad(s, "key \"%s\" is not a number", key);
		return false;
	}
	*v = j->num;
	return true;
}

static const char *str(struct src *s, const struct json *o, const char *key,
		       bool need, int *ret)
{
	const struct json *j = present(s, o, key, need, ret);

	if (!j)
		return NULL;
	if (j->type != J_STR) {
		*ret = bad(s, "key \"%s\" is not a string", key);
		return NULL;
	}
	return j->str;
}

/* An exact integer (times in ns since the epoch need all 64 bits). */
static bool int_key(struct src *s, const struct json *o, const char *key,
		    int64_t *v, bool need, int *ret)
{
	const struct json *j = present(s, o, key, need, ret);

	if (!j)
		return false;
	if (!hvn_json_int(j, v)) {
		*ret = bad(s, "key \"%s\" is not a 64-bit integer", key);
		return false;
	}
	return true;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* NCCL's function names, from the spellings each tool uses. */
static uint8_t func_of(const char *n)
{
	static const struct { const char *name; uint8_t fn; } map[] = {
		{ "allreduce", HVN_FN_ALLREDUCE }, { "all_reduce", HVN_FN_ALLREDUCE },
		{ "allgather", HVN_FN_ALLGATHER }, { "all_gather", HVN_FN_ALLGATHER },
		{ "_allgather_base", HVN_FN_ALLGATHER },
		{ "reducescatter", HVN_FN_REDUCESCATTER },
		{ "reduce_scatter", HVN_FN_REDUCESCATTER },
		{ "_reduce_scatter_base", HVN_FN_REDUCESCATTER },
		{ "broadcast", HVN_FN_BROADCAST }, { "reduce", HVN_FN_REDUCE },
		{ "alltoall", HVN_FN_ALLTOALL }, { "all_to_all", HVN_FN_ALLTOALL },
		{ "all2all", HVN_FN_ALLTOALL }, { "allgatherv", HVN_FN_ALLGATHER },
		{ "alltoall_base", HVN_FN_ALLTOALL }, { "sendrecv", HVN_FN_SENDRECV },
		{ "send", HVN_FN_SEND }, { "recv", HVN_FN_RECV },
		{ "gather", HVN_FN_GATHER }, { "scatter", HVN_FN_SCATTER },
	};
	char low[48];
	size_t i;

	for (i = 0; n[i] && i < sizeof(low) - 1; i++)
		low[i] = tolower((unsigned char)n[i]);
	low[i] = 0;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(low, map[i].name))
			return map[i].fn;
	return HVN_FN_UNKNOWN;
}

static int dtype_size(const char *t)
{
	if (!t)
		return 1;
	if (strstr(t, "Double") || strstr(t, "Long") || strstr(t, "64"))
		return 8;
	if (strstr(t, "Half") || strstr(t, "BFloat16") || strstr(t, "16"))
		return 2;
	if (strstr(t, "Float") || strstr(t, "Int") || strstr(t, "32"))
		return 4;
	return 1;
}

/* --- PyTorch Flight Recorder ---------------------------------------------- */

/* @base + @v (a double, in ns) as exact ns, or false when out of range. */
static bool ns_add(int64_t base, double v, int64_t *out)
{
	if (!(v > -0x1p62 && v < 0x1p62))
		return false;
	return !__builtin_add_overflow(base, (int64_t)(v < 0 ? v - 0.5 : v + 0.5), out);
}

/*
 * profiling_name is "<backend>:<op>" (nccl, gloo, xccl, c10d, ...), the op
 * as ProcessGroup names it, "send 0->1" / "recv 1<-0" for point-to-point,
 * "<OP>_coalesced" or "coalesced" for a coalesced group.
 */
static uint8_t fr_func(const char *name, bool *p2p)
{
	static const struct { const char *op; uint8_t fn; } map[] = {
		{ "all_reduce_barrier", HVN_FN_ALLREDUCE },
		{ "allreduce_coalesced", HVN_FN_ALLREDUCE },
		{ "all_reduce_coalesced", HVN_FN_ALLREDUCE },
		{ "_all_gather_base", HVN_FN_ALLGATHER },
		{ "all_gather_into_tensor", HVN_FN_ALLGATHER },
		{ "all_gather_into_tensor_coalesced", HVN_FN_ALLGATHER },
		{ "allgather_into_tensor_coalesced", HVN_FN_ALLGATHER },
		{ "allgather_coalesced", HVN_FN_ALLGATHER },
		{ "all_gather_coalesced", HVN_FN_ALLGATHER },
		{ "reduce_scatter_tensor", HVN_FN_REDUCESCATTER },
		{ "reduce_scatter_tensor_coalesced", HVN_FN_REDUCESCATTER },
		{ "_broadcast_oop", HVN_FN_BROADCAST },
		{ "_reduce_oop", HVN_FN_REDUCE },
		{ "all_to_all_single", HVN_FN_ALLTOALL },
		{ "all_reduce_sparse", HVN_FN_ALLREDUCE },
		{ "barrier", HVN_FN_ALLREDUCE },
		{ "reduce_scatter_coalesced", HVN_FN_REDUCESCATTER },
		{ "coalesced", HVN_FN_COALESCED },
	};
	const char *c = strchr(name, ':'), *op = name;
	char low[48];
	size_t n;

	/* The backend prefix: letters, digits and '_' before the colon. */
	if (c && c > name) {
		const char *k = name;

		while (k < c && (isalnum((unsigned char)*k) || *k == '_'))
			k++;
		if (k == c)
			op = c + 1;
	}
	*p2p = false;
	if (!strncmp(op, "send ", 5) || !strncmp(op, "recv ", 5)) {
		*p2p = true;
		return op[0] == 's' ? HVN_FN_SEND : HVN_FN_RECV;
	}
	/* endCoalescing's names are upper case: ALLGATHER_coalesced */
	for (n = 0; op[n] && n < sizeof(low) - 1; n++)
		low[n] = tolower((unsigned char)op[n]);
	low[n] = 0;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(low, map[i].op))
			return map[i].fn;
	return func_of(low);
}

/*
 * The rank in a file's name: the digits after its last "rank"
 * (nccl_trace_rank_3, comm_lib_trace_rank_3_20250101, rank-70.Mar_25...);
 * else, with @only_number, the base name's only run of digits.  -1 with
 * *ret set if the name has none, or digits that could be anything.
 */
static int name_rank(struct src *s, bool only_number, int *ret)
{
	const char *b = strrchr(s->path, '/'), *r = NULL, *d = NULL;
	int runs = 0;
	long v;

	b = b ? b + 1 : s->path;
	for (const char *k = b; (k = strstr(k, "rank")); k += 4)
		r = k + 4;
	if (r) {
		while (*r == '_' || *r == '-' || *r == '.')
			r++;
		if (isdigit((unsigned char)*r))
			d = r;
	}
	/* Flight Recorder appends the rank to its prefix, which users end
	 * with their host's name (nccl_trace_rank_<host>_<N>): the digits
	 * that end the name, after "rank" and a separator. */
	if (r && !d && only_number) {
		const char *e = b + strlen(b);

		while (e > r && isdigit((unsigned char)e[-1]))
			e--;
		if (*e && e > r && (e[-1] == '_' || e[-1] == '-'))
			d = e;
	}
	for (const char *k = b; !d && *k; k++)
		if (isdigit((unsigned char)*k) &&
		    (k == b || !isdigit((unsigned char)k[-1])) && !runs++)
			r = k;
	if (!d && runs == 1 && only_number)
		d = r;
	if (!d) {
		*ret = bad(s, runs && only_number ?
			   "which digits of the file name are the rank? name it PREFIX<rank> as Flight Recorder does, or rank<N>" :
			   "no rank in the file name (PREFIX<rank> or rank<N>)");
		return -1;
	}
	errno = 0;
	v = strtol(d, NULL, 10);
	if (errno || v > INT32_MAX) {
		*ret = bad(s, "rank %.12s... in the file name is too large", d);
		return -1;
	}
	return v;
}

/* Shapes times the element size of the first input, when it has both. */
static bool fr_bytes(struct src *s, const struct json *e, uint64_t *bytes,
		     int *ret)
{
	const struct json *sz = hvn_json_get(e, "input_sizes");
	const struct json *dt = hvn_json_get(e, "input_dtypes");
	uint64_t el = 1;

	*bytes = 0;
	if (!sz || sz->type == J_NULL)
		return true;
	if (sz->type != J_ARR) {
		*ret = bad(s, "key \"input_sizes\" is not a list of shapes");
		return false;
	}
	for (size_t k = 0; k < sz->n; k++) {
		const struct json *shape = &sz->kids[k];

		if (shape->type != J_ARR) {
			*ret = bad(s, "input_sizes[%zu] is not a shape (a list of integers)", k);
			return false;
		}
		for (size_t d = 0; d < shape->n; d++) {
			int64_t n;

			if (!hvn_json_int(&shape->kids[d], &n) || n < 0) {
				*ret = bad(s, "input_sizes[%zu][%zu] is not a size", k, d);
				return false;
			}
			if (!k)
				el = __builtin_mul_overflow(el, (uint64_t)n, &el) ?
				     UINT64_MAX : el;
		}
	}
	if (!sz->n)
		return true;
	if (dt && dt->type != J_NULL &&
	    (dt->type != J_ARR || (dt->n && dt->kids[0].type != J_STR))) {
		*ret = bad(s, "key \"input_dtypes\" is not a list of names");
		return false;
	}
	if (__builtin_mul_overflow(el, (uint64_t)dtype_size(dt && dt->n ? dt->kids[0].str : NULL),
				   bytes))
		*bytes = UINT64_MAX;
	return true;
}

/* 0: @c is the entry; 1: completed at an unknown time, skipped; or the
 * error bad() returned. */
static int fr_entry(struct src *s, const struct json *e, int rank,
		    struct hvn_ext_coll *c)
{
	const struct json *pg;
	int64_t seq, created, done = 0, started = 0, pgid;
	double dur = -1;
	const char *name, *state;
	bool p2p;
	int ret = 0;

	if (e->type != J_OBJ)
		return bad(s, "not an object");
	memset(c, 0, sizeof(*c));
	c->rank = rank;
	name = str(s, e, "profiling_name", true, &ret);
	state = str(s, e, "state", true, &ret);
	if (!name || !state ||
	    !int_key(s, e, "time_created_ns", &created, true, &ret))
		return ret;
	if (created <= 0)
		return bad(s, "key \"time_created_ns\" is %lld, not a time",
			   (long long)created);
	if (!strcmp(state, "completed"))
		c->state = HVN_EXT_COMPLETED;
	else if (!strcmp(state, "started"))
		c->state = HVN_EXT_STARTED;
	else if (!strcmp(state, "scheduled"))
		c->state = HVN_EXT_SCHEDULED;
	else
		return bad(s, "state \"%.40s\" is none of scheduled, started, completed", state);
	c->func = fr_func(name, &p2p);
	if (hvn_json_get(e, "is_p2p")) {
		const struct json *b = hvn_json_get(e, "is_p2p");

		if (b->type != J_BOOL)
			return bad(s, "key \"is_p2p\" is not a boolean");
		p2p = b->b;
	}
	c->is_p2p = p2p;
	if (!int_key(s, e, p2p ? "p2p_seq_id" : "collective_seq_id", &seq, true, &ret))
		return ret;
	if (seq < 0)
		return bad(s, "a negative sequence number (%lld)", (long long)seq);
	c->seq = seq;
	num(s, e, "duration_ms", &dur, false, &ret);
	/* Times Flight Recorder has not seen are null, or 0 in its JSON. */
	int_key(s, e, "time_discovered_completed_ns", &done, false, &ret);
	int_key(s, e, "time_discovered_started_ns", &started, false, &ret);
	if (ret)
		return ret;
	if (hvn_json_get(e, "duration_ms") && hvn_json_get(e, "duration_ms")->type != J_NULL &&
	    !(dur >= 0 && dur < 1e12))
		return bad(s, "key \"duration_ms\" is %g, not a duration", dur);
	if (done < 0 || started < 0)
		return bad(s, "a negative time_discovered_*_ns");
	pg = hvn_json_get(e, "process_group");
	if (pg && pg->type == J_ARR && pg->n && pg->kids[0].type == J_STR)
		c->comm = hash_str(pg->kids[0].str);
	else if (pg && pg->type != J_NULL)
		return bad(s, "key \"process_group\" is not [name, description]");
	else if (int_key(s, e, "pg_id", &pgid, false, &ret))
		c->comm = (uint64_t)pgid + 1;
	if (ret || !fr_bytes(s, e, &c->bytes, &ret))
		return ret;
	c->start_real = created;
	if (c->state != HVN_EXT_COMPLETED) {
		if (started > created)
			c->start_real = started;
		return 0;
	}
	if (dur >= 0) {
		if (!ns_add(created, dur * 1e6, &c->end_real))
			return bad(s, "key \"duration_ms\" is %g, beyond any time", dur);
	} else if (done > 0) {
		c->end_real = done;
	} else {
		return 1;		/* completed, but when is not known */
	}
	if (c->end_real < c->start_real)
		return bad(s, "ends before it starts");
	return 0;
}

/*
 * The ranks of group @name in pg_config: {"0": {"name": "0", "ranks":
 * "[0, 1, 2]"}, ...}, the ranks a string or a list; 0 if not said.
 */
static int32_t fr_nranks(const struct json *cfg, const char *name)
{
	for (size_t k = 0; cfg && cfg->type == J_OBJ && k < cfg->n; k++) {
		const struct json *g = &cfg->kids[k], *n = hvn_json_get(g, "name");
		const struct json *r = hvn_json_get(g, "ranks");
		int32_t count = 0;

		if (!n || n->type != J_STR || strcmp(n->str, name) || !r)
			continue;
		/* The dump's rank is the job's: a group's size says which
		 * ranks to expect only where its ranks are 0..n-1 (the default
		 * group), not for a subgroup of other ranks. */
		if (r->type == J_ARR) {
			for (size_t q = 0; q < r->n; q++) {
				int64_t v;

				if (!hvn_json_int(&r->kids[q], &v) || v != (int64_t)q)
					return 0;
			}
			return r->n <= INT32_MAX ? (int32_t)r->n : 0;
		}
		if (r->type != J_STR)
			return 0;
		/* "[0, 1, 2]": a number after each "[" or ",", in order. */
		for (const char *c = r->str; *c; c++)
			if ((*c == '[' || *c == ',') && isdigit((unsigned char)c[1 + strspn(c + 1, " ")])) {
				if (strtol(c + 1 + strspn(c + 1, " "), NULL, 10) != count)
					return 0;
				count++;
			}
		return count;
	}
	return 0;
}

static struct json *fr_load(struct src *s)
{
	size_t len;
	char *text = read_input(s, &len), err[160];
	struct json *j;

	if (!text)
		return NULL;
	if (hvn_pickle_is(text, len)) {
		j = hvn_pickle_parse(text, len, err, sizeof(err));
		if (!j)
			bad(s, "a pickle that is not a Flight Recorder dump (%s)", err);
	} else {
		j = hvn_json_parse(text, len, err, sizeof(err));
		if (!j)
			bad(s, "neither a pickle nor JSON (%s)", err);
	}
	free(text);
	return j;
}

int hvn_read_torch_fr(const char *path, hvn_ext_add add, void *ctx)
{
	struct src s = { .path = path };
	struct json *j = fr_load(&s);
	const struct json *entries, *v, *pg;
	int ret = 0, rank;

	if (!j)
		return HVN_EXIT_BADFILE;
	v = hvn_json_get(j, "version");
	if (j->type != J_OBJ || !v) {
		ret = bad(&s, "not a Flight Recorder dump (no \"version\" key)");
		goto out;
	}
	/* "MAJOR.MINOR": a number would have lost its minor's zeros. */
	if (v->type != J_STR || !isdigit((unsigned char)v->str[0]) ||
	    !strchr(v->str, '.')) {
		ret = bad(&s, "key \"version\" is not a string \"MAJOR.MINOR\"");
		goto out;
	}
	rank = name_rank(&s, true, &ret);
	if (ret)
		goto out;
	entries = hvn_json_get(j, "entries");	/* PyTorch's JSON omits it when empty */
	if (entries && entries->type != J_ARR) {
		ret = bad(&s, "key \"entries\" is not a list");
		goto out;
	}
	for (size_t i = 0; entries && i < entries->n; i++) {
		struct hvn_ext_coll c;
		int r;

		snprintf(s.where, sizeof(s.where), "entries[%zu]", i);
		r = fr_entry(&s, &entries->kids[i], rank, &c);
		if (r == 1)
			continue;
		if (r) {
			ret = r;
			goto out;
		}
		pg = hvn_json_get(&entries->kids[i], "process_group");
		if (pg && pg->type == J_ARR && pg->n && pg->kids[0].type == J_STR)
			c.nranks = fr_nranks(hvn_json_get(j, "pg_config"), pg->kids[0].str);
		ret = push(&s, &c);
		if (ret)
			goto out;
	}
out:
	hvn_json_free(j);
	return finish(&s, ret, add, ctx);
}

/* --- Kineto / PyTorch profiler Chrome traces --------------------------------- */

/* An NCCL kernel of a trace, as pass 1 read it, sorted by launch. */
struct kev {
	double ts, dur;
	int64_t ts_ns, dur_ns;		/* exact where the file's decimals allow */
	int64_t corr;			/* its launch's, if has_corr */
	uint64_t bytes, seq;		/* seq if has_seq */
	size_t i;
	char *pgn;			/* its group, or NULL */
	char *name;			/* for errors: its first 60 bytes */
	uint8_t func;
	bool p2p, has_seq, has_corr;
};

static int cmp_kev(const void *a, const void *b)
{
	const struct kev *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Per communicator and function: what counts kernels without "Seq". */
struct kcount {
	uint64_t comm, n[HVN_FN_N];
};

static uint64_t next_seq(struct kcount **v, size_t *n, uint64_t comm, uint8_t fn)
{
	size_t k;

	for (k = 0; k < *n && (*v)[k].comm != comm; k++)
		;
	if (k == *n) {
		struct kcount *nv = realloc(*v, (k + 1) * sizeof(**v));

		if (!nv) {
			hvn_err("out of memory");
			exit(HVN_EXIT_FAIL);
		}
		*v = nv;
		memset(&nv[k], 0, sizeof(nv[k]));
		nv[k].comm = comm;
		(*n)++;
	}
	return (*v)[k].n[fn]++;
}

/*
 * NCCL's kernels as Kineto names them: ncclKernel_<Op>_... up to 2.18,
 * ncclDevKernel_<Op>_... and ncclDevKernel_<Op>(args) from 2.19 (the
 * Generic ones with the op in args), ncclSymkDevKernel_<Op>_... for the
 * symmetric kernels of 2.28.  "kernel", or "Kernel" as PyTorch 1.8 and
 * 1.9 wrote it.
 */
static bool nccl_kernel(const char *name, const char *cat)
{
	return name && cat && !strcasecmp(cat, "kernel") &&
	       (!strncmp(name, "ncclDevKernel_", 14) || !strncmp(name, "ncclKernel_", 11) ||
		!strncmp(name, "ncclSymkDevKernel_", 18));
}

/* Kineto's function: from the kernel's name, or for the Generic kernel of
 * NCCL 2.19+ and RCCL, from args["Collective name"]. */
static uint8_t kineto_func(struct src *s, const char *name, const struct json *args,
			   bool *p2p, int *ret)
{
	const char *cn = str(s, args, "Collective name", false, ret);
	char fn[32];
	size_t k = 0;
	uint8_t f;

	/* The op runs to the next "_", or to "(" where the arguments follow
	 * it directly (ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<...>)). */
	name = strchr(name, '_') + 1;
	while (name[k] && name[k] != '_' && name[k] != '(' && k < sizeof(fn) - 1) {
		fn[k] = name[k];
		k++;
	}
	fn[k] = 0;
	f = func_of(fn);
	*p2p = f == HVN_FN_SEND || f == HVN_FN_RECV || f == HVN_FN_SENDRECV;
	if (f == HVN_FN_UNKNOWN && cn)
		f = fr_func(cn, p2p);
	if (f == HVN_FN_SEND || f == HVN_FN_RECV || f == HVN_FN_SENDRECV)
		*p2p = true;
	return f;
}

/*
 * The CPU side of a Kineto trace, for the kernels whose name does not say
 * their operation (ncclDevKernel_Generic without "Collective name", as
 * PyTorch before 2.4 wrote it) or says less than it was (all_to_all runs
 * as SendRecv kernels): the kernel's "correlation" names its launch
 * (cuda_runtime/cuda_driver), and the CPU op around the launch on its
 * thread names the collective: record_param_comms's "Collective name",
 * or a "nccl:<op>" annotation.
 */
struct launch {
	int64_t corr, pid, tid;
	double ts;
};

struct cpu_op {
	int64_t pid, tid;
	double ts, end;
	char *op;
};

struct cpu_side {
	struct launch *l;
	size_t nl, lcap;
	struct cpu_op *o;
	size_t no, ocap;
};

static int cmp_launch(const void *a, const void *b)
{
	const struct launch *x = a, *y = b;

	return (x->corr > y->corr) - (x->corr < y->corr);
}

static int cmp_cpu_op(const void *a, const void *b)
{
	const struct cpu_op *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

/* Grows @v (of @n, room for @cap) by one; false: no memory. */
static bool grow(void **v, size_t n, size_t *cap, size_t size)
{
	void *nv;

	if (n < *cap)
		return true;
	nv = realloc(*v, (*cap ? *cap * 2 : 1024) * size);
	if (!nv)
		return false;
	*v = nv;
	*cap = *cap ? *cap * 2 : 1024;
	return true;
}

/* Event @e, if a launch or a CPU op that names a collective; false: no
 * memory. */
static bool cpu_side_add(struct cpu_side *cs, const struct json *e)
{
	const struct json *args = hvn_json_get(e, "args");
	const struct json *n = hvn_json_get(e, "name"), *c = hvn_json_get(e, "cat");
	const struct json *cn = hvn_json_get(args, "Collective name");
	const char *op = NULL;
	int64_t corr, pid, tid;
	double ts, dur;

	if (!n || n->type != J_STR || !c || c->type != J_STR ||
	    !hvn_json_int(hvn_json_get(e, "pid"), &pid) ||
	    !hvn_json_int(hvn_json_get(e, "tid"), &tid) ||
	    !hvn_json_get(e, "ts") || hvn_json_get(e, "ts")->type != J_NUM)
		return true;
	ts = hvn_json_get(e, "ts")->num;
	if ((!strcmp(c->str, "cuda_runtime") || !strcmp(c->str, "cuda_driver")) &&
	    hvn_json_int(hvn_json_get(args, "correlation"), &corr)) {
		if (!grow((void **)&cs->l, cs->nl, &cs->lcap, sizeof(*cs->l)))
			return false;
		cs->l[cs->nl++] = (struct launch){ corr, pid, tid, ts };
		return true;
	}
	if (!hvn_json_get(e, "dur") || hvn_json_get(e, "dur")->type != J_NUM)
		return true;
	dur = hvn_json_get(e, "dur")->num;
	if (!strcmp(n->str, "record_param_comms") && cn && cn->type == J_STR)
		op = cn->str;
	else if (!strncmp(n->str, "nccl:", 5))
		op = n->str;
	if (!op)
		return true;
	if (!grow((void **)&cs->o, cs->no, &cs->ocap, sizeof(*cs->o)))
		return false;
	cs->o[cs->no] = (struct cpu_op){ pid, tid, ts, ts + dur, strdup(op) };
	return cs->o[cs->no++].op != NULL;
}

static void cpu_side_sort(struct cpu_side *cs)
{
	if (cs->l)
		qsort(cs->l, cs->nl, sizeof(*cs->l), cmp_launch);
	if (cs->o)
		qsort(cs->o, cs->no, sizeof(*cs->o), cmp_cpu_op);
}

/* The collective the CPU op around the launch @corr names, or NULL. */
static const char *cpu_side_op(const struct cpu_side *cs, int64_t corr)
{
	struct launch key = { .corr = corr }, *l;
	size_t lo = 0, hi = cs->no;

	if (!cs->nl)
		return NULL;
	l = bsearch(&key, cs->l, cs->nl, sizeof(*cs->l), cmp_launch);
	if (!l)
		return NULL;
	/* The last op of the launch's thread that began by the launch,
	 * then back to the innermost one around it: ops nest, so the first
	 * that still runs at the launch is it (a few ops back at most). */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct cpu_op *o = &cs->o[mid];

		if (o->pid < l->pid || (o->pid == l->pid && (o->tid < l->tid ||
		    (o->tid == l->tid && o->ts <= l->ts))))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = lo, steps = 0; k > 0 && steps < 64; steps++) {
		const struct cpu_op *o = &cs->o[--k];

		if (o->pid != l->pid || o->tid != l->tid)
			break;
		if (o->end >= l->ts)
			return o->op;
	}
	return NULL;
}

static void cpu_side_free(struct cpu_side *cs)
{
	for (size_t k = 0; k < cs->no; k++)
		free(cs->o[k].op);
	free(cs->l);
	free(cs->o);
}

/*
 * Pass 1, as the trace streams by (hvn_jstream): each event parsed alone,
 * checked and dropped, keeping of each NCCL kernel what its collective
 * needs (struct kev), the CPU side's launches and ops, and the top
 * object's keys that say the rank and the time base, wherever in the file
 * they are.  Memory is what is kept, a small share of the file.
 */
struct kineto {
	struct src *s;
	struct kev *kv;
	size_t nkv, kvcap, nev;
	struct cpu_side cs;
	struct json *top;		/* baseTimeNanoseconds, distributedInfo */
	bool have_events;
	char *only_pg;
	bool many_pg, have0;
};

/* A top-level member kept whole (the first of its key, as a reader of
 * the whole tree would take it): 0; -1 on an error of the stream;
 * HVN_EXIT_BADFILE said. */
static int kineto_keep(struct kineto *k, struct json_stream *js, const char *key)
{
	struct json *t = k->top, *v, *kids;
	char **keys;

	if (hvn_json_get(t, key))
		return hvn_jstream_skip(js) ? 0 : -1;
	v = hvn_jstream_value(js);
	if (!v)
		return -1;
	kids = realloc(t->kids, (t->n + 1) * sizeof(*kids));
	t->kids = kids ? kids : t->kids;
	keys = realloc(t->keys, (t->n + 1) * sizeof(*keys));
	t->keys = keys ? keys : t->keys;
	if (kids && keys)
		t->keys[t->n] = strdup(key);
	if (!kids || !keys || !t->keys[t->n]) {
		hvn_json_free(v);
		return bad(k->s, "out of memory");
	}
	t->kids[t->n++] = *v;
	free(v);			/* its contents now t's */
	return 0;
}

static int kineto_event(struct kineto *k, const struct json *e)
{
	struct src *s = k->s;
	const char *name, *cat, *pgn, *dt;
	const struct json *args;
	size_t i = k->nev++;
	int64_t ts_ns, dur_ns, v;
	double ts, dur;
	int ret = 0;
	struct kev *kv;

	snprintf(s->where, sizeof(s->where), "traceEvents[%zu]", i);
	name = str(s, e, "name", false, &ret);
	cat = str(s, e, "cat", false, &ret);
	if (ret)
		return ret;
	if (!nccl_kernel(name, cat))
		return cpu_side_add(&k->cs, e) ? 0 : bad(s, "out of memory");
	snprintf(s->where, sizeof(s->where), "traceEvents[%zu] (%.60s)", i, name);
	if (!num(s, e, "ts", &ts, true, &ret) || !num(s, e, "dur", &dur, true, &ret))
		return ret;
	if (!(dur >= 0))
		return bad(s, "key \"dur\" is %g, not a duration", dur);
	/* Microseconds, read exactly: through a double, epoch times are
	 * off by up to 128 ns. */
	if ((!hvn_json_milli(hvn_json_get(e, "ts"), &ts_ns) &&
	     !ns_add(0, ts * 1e3, &ts_ns)) ||
	    (!hvn_json_milli(hvn_json_get(e, "dur"), &dur_ns) &&
	     !ns_add(0, dur * 1e3, &dur_ns)))
		return bad(s, "\"ts\" %g or \"dur\" %g is beyond any time", ts, dur);
	args = hvn_json_get(e, "args");
	pgn = str(s, args, "Process Group Name", false, &ret);
	dt = str(s, args, "dtype", false, &ret);
	if (ret || !grow((void **)&k->kv, k->nkv, &k->kvcap, sizeof(*k->kv)))
		return ret ? ret : bad(s, "out of memory");
	kv = &k->kv[k->nkv];
	*kv = (struct kev){ .ts = ts, .dur = dur, .ts_ns = ts_ns, .dur_ns = dur_ns, .i = i };
	kv->func = kineto_func(s, name, args, &kv->p2p, &ret);
	kv->has_corr = hvn_json_int(hvn_json_get(args, "correlation"), &kv->corr);
	if (!ret && int_key(s, args, "In msg nelems", &v, false, &ret) &&
	    (v < 0 || __builtin_mul_overflow((uint64_t)v, dtype_size(dt), &kv->bytes)))
		return bad(s, "\"In msg nelems\" %lld is not a size", (long long)v);
	/* Kernels carry a sequence number only in 2026 traces; else pass 2
	 * counts them per group and function, as every rank launches them. */
	if (!ret && int_key(s, args, "Seq", &v, false, &ret)) {
		if (v < 0)
			return bad(s, "a negative \"Seq\"");
		kv->seq = v;
		kv->has_seq = true;
	}
	if (ret)
		return ret;
	kv->pgn = pgn ? strdup(pgn) : NULL;
	kv->name = strndup(name, 60);
	if (!kv->name || (pgn && !kv->pgn)) {
		free(kv->name);
		free(kv->pgn);
		return bad(s, "out of memory");
	}
	k->nkv++;
	if (pgn) {
		k->many_pg |= k->only_pg && strcmp(k->only_pg, pgn);
		k->only_pg = k->only_pg ? k->only_pg : kv->pgn;
		k->have0 |= !strcmp(pgn, "0");
	}
	return 0;
}

/* The whole stream: 0, or the error, said. */
static int kineto_read(struct kineto *k, struct json_stream *js)
{
	const char *key;
	struct json *e;
	int r, ret = 0;

	r = hvn_jstream_begin(js);
	/* JSON, but not an object (Chrome's array form): read through, an
	 * array element by element, to refuse it or say where it is bad. */
	if (!r && hvn_jstream_skip(js) && hvn_jstream_end(js))
		return bad(k->s, "not a Chrome trace (no \"traceEvents\" array)");
	while (r > 0 && (r = hvn_jstream_member(js, &key)) > 0) {
		if (!strcmp(key, "traceEvents") && !k->have_events) {
			k->have_events = true;
			if (!hvn_jstream_array(js)) {
				/* Refused as such if JSON; else where it is bad. */
				if (hvn_jstream_skip(js))
					return bad(k->s, "not a Chrome trace (no \"traceEvents\" array)");
				r = -1;
				break;
			}
			while (!ret && (r = hvn_jstream_element(js, &e)) > 0) {
				ret = kineto_event(k, e);
				hvn_json_free(e);
			}
			if (ret)
				return ret;
			r = r < 0 ? -1 : 1;
		} else if (!strcmp(key, "baseTimeNanoseconds") ||
			   !strcmp(key, "distributedInfo")) {
			ret = kineto_keep(k, js, key);
			if (ret > 0)
				return ret;
			r = ret ? -1 : 1;
			ret = 0;
		} else {
			r = hvn_jstream_skip(js) ? 1 : -1;
		}
	}
	if (!r && hvn_jstream_end(js) && !k->have_events)
		return bad(k->s, "not a Chrome trace (no \"traceEvents\" array)");
	if (!hvn_jstream_failed(js))
		return 0;
	k->s->where[0] = 0;
	return hvn_jstream_error(js) ? bad(k->s, "not JSON (%s)", hvn_jstream_error(js)) :
		HVN_EXIT_BADFILE;
}

/* Pass 2: kernel @q of the trace, sorted by launch, as a collective. */
static int kineto_coll(struct kineto *k, struct kev *q, int64_t base, int rank,
		       int32_t world, const char *def_pg, struct kcount **cnt,
		       size_t *ncnt)
{
	struct hvn_ext_coll c = { .rank = rank, .func = q->func, .bytes = q->bytes,
				  .seq = q->seq };
	const char *pgn = q->pgn ? q->pgn : def_pg;
	bool p2p = q->p2p;

	/* The name does not say, or says SendRecv where all_to_all runs as
	 * such kernels: the CPU op that launched it. */
	if (c.func == HVN_FN_UNKNOWN || p2p) {
		const char *op = q->has_corr ? cpu_side_op(&k->cs, q->corr) : NULL;
		bool op_p2p;
		uint8_t f = op ? fr_func(op, &op_p2p) : HVN_FN_UNKNOWN;

		if (f != HVN_FN_UNKNOWN) {
			c.func = f;
			p2p = op_p2p || f == HVN_FN_SEND || f == HVN_FN_RECV ||
			      f == HVN_FN_SENDRECV;
		}
	}
	c.is_p2p = p2p;
	/* world_size is the default group's; the rank is the job's. */
	if (!pgn || !strcmp(pgn, "0"))
		c.nranks = world;
	/* No group at all: one for the files of this kind; two jobs' files
	 * then share ranks, which correlate refuses. */
	c.comm = hash_str(pgn ? pgn : "kineto: no process group");
	if (!q->has_seq)
		c.seq = next_seq(cnt, ncnt, c.comm, c.func);
	snprintf(k->s->where, sizeof(k->s->where), "traceEvents[%zu] (%s)", q->i, q->name);
	/* older traces: ts in epoch µs */
	if (__builtin_add_overflow(base < 0 ? 0 : base, q->ts_ns, &c.start_real) ||
	    __builtin_add_overflow(c.start_real, q->dur_ns, &c.end_real))
		return bad(k->s, "\"ts\" %g or \"dur\" %g is beyond any time", q->ts, q->dur);
	return push(k->s, &c);
}

int hvn_read_kineto(const char *path, hvn_ext_add add, void *ctx)
{
	struct src s = { .path = path };
	struct kineto k = { .s = &s };
	const struct json *di;
	struct json_stream *js = NULL;
	struct kcount *cnt = NULL;
	int64_t base = -1, r, ws;
	size_t ncnt = 0;
	int ret = 0, rank = -1;
	int32_t world = 0;
	const char *def_pg;
	struct in in;

	if (!in_open(&in, &s))
		return HVN_EXIT_BADFILE;
	k.top = calloc(1, sizeof(*k.top));
	js = hvn_jstream_new(in_read, &in);
	if (!k.top || !js) {
		ret = bad(&s, "out of memory");
		goto out;
	}
	k.top->type = J_OBJ;
	ret = kineto_read(&k, js);
	if (hvn_jstream_failed(js) && !hvn_jstream_error(js))
		ret = bad(&s, "%s", in.err ? in.err : "out of memory");
	if (ret)
		goto out;
	s.where[0] = 0;
	int_key(&s, k.top, "baseTimeNanoseconds", &base, false, &ret);
	di = hvn_json_get(k.top, "distributedInfo");
	if (int_key(&s, di, "rank", &r, false, &ret)) {
		if (r < 0 || r > INT32_MAX) {
			ret = bad(&s, "distributedInfo.rank %lld is not a rank", (long long)r);
			goto out;
		}
		rank = r;
	}
	/* The communicator's size, for the ranks no file was given of. */
	if (int_key(&s, di, "world_size", &ws, false, &ret)) {
		if (ws < 1 || ws > INT32_MAX) {
			ret = bad(&s, "distributedInfo.world_size %lld is not a number of ranks",
				  (long long)ws);
			goto out;
		}
		world = ws;
	}
	if (ret)
		goto out;
	/* The profiler names files HOST_PID.TIME.pt.trace.json: numbers
	 * that are no rank.  Only a "rank" in the name says one. */
	if (rank < 0 && strstr(strrchr(path, '/') ? strrchr(path, '/') : path, "rank"))
		rank = name_rank(&s, false, &ret);
	else if (rank < 0)
		ret = bad(&s, "no rank: no distributedInfo.rank, and no rank<N> in the file name");
	if (ret)
		goto out;
	for (size_t q = 0; q < k.nkv; q++) {
		if (base < 0 && !(k.kv[q].ts > 1e15)) {
			snprintf(s.where, sizeof(s.where), "traceEvents[%zu] (%s)", k.kv[q].i,
				 k.kv[q].name);
			ret = bad(&s, "relative \"ts\" without \"baseTimeNanoseconds\"");
			goto out;
		}
	}
	if (!k.nkv)
		hvn_warn("%s: no NCCL kernel in it (ncclKernel_*, ncclDevKernel_*, ncclSymkDevKernel_* of cat \"kernel\"): nothing of it to correlate",
			 path);
	/*
	 * Real traces are not sorted by ts, even within a stream: sequence
	 * numbers follow launches.  Kernels without a group name belong to
	 * the file's one group, or the default group "0".
	 */
	if (k.nkv)
		qsort(k.kv, k.nkv, sizeof(*k.kv), cmp_kev);
	cpu_side_sort(&k.cs);
	def_pg = !k.many_pg ? k.only_pg : k.have0 ? "0" : NULL;
	for (size_t q = 0; !ret && q < k.nkv; q++)
		ret = kineto_coll(&k, &k.kv[q], base, rank, world, def_pg, &cnt, &ncnt);
out:
	for (size_t q = 0; q < k.nkv; q++) {
		free(k.kv[q].name);
		free(k.kv[q].pgn);
	}
	free(k.kv);
	free(cnt);
	cpu_side_free(&k.cs);
	hvn_json_free(k.top);
	hvn_jstream_free(js);
	in_close(&in);
	return finish(&s, ret, add, ctx);
}

/* --- NCCL Inspector JSON lines ----------------------------------------------- */

/*
 * The Inspector writes doubles with %lf: a bandwidth of inf (or -nan) is
 * no JSON.  Such bare words become null; the line's collective is good.
 */
static char *null_nonfinite(const char *p, size_t l, size_t *out_len)
{
	static const char *const words[] = { "-inf", "inf", "-nan", "nan" };
	char *o = malloc(l + l / 3 * 2 + 8);
	size_t n = 0;

	if (!o)
		return NULL;
	for (size_t i = 0; i < l; ) {
		size_t w = 0;

		if (p[i] != '"' && i && (p[i - 1] == ':' || p[i - 1] == '[' || p[i - 1] == ','))
			for (size_t k = 0; k < 4 && !w; k++) {
				size_t wl = strlen(words[k]);

				if (l - i >= wl && !memcmp(p + i, words[k], wl) &&
				    (i + wl == l || strchr(",}] ", p[i + wl])))
					w = wl;
			}
		if (w) {
			memcpy(o + n, "null", 4);
			n += 4;
			i += w;
			continue;
		}
		/* skip strings whole: "inf" inside one stays */
		if (p[i] == '"') {
			size_t k = i + 1;

			while (k < l && p[k] != '"')
				k += p[k] == '\\' ? 2 : 1;
			k = k < l ? k + 1 : l;
			memcpy(o + n, p + i, k - i);
			n += k - i;
			i = k;
			continue;
		}
		o[n++] = p[i++];
	}
	*out_len = n;
	return o;
}

/* The execution from the kernels' own times (verbose dumps, inside
 * coll_perf/p2p_perf); false without them. */
static bool kernel_times(struct src *s, const struct json *tr, struct hvn_ext_coll *c,
			 int *ret)
{
	const struct json *ke = hvn_json_get(tr, "kernel_events");
	double lo = 0, hi = 0;
	bool any = false;

	if (!ke || ke->type != J_ARR)
		return false;
	for (size_t k = 0; k < ke->n; k++) {
		double a, b;

		if (!num(s, &ke->kids[k], "kernel_start_ts", &a, true, ret) ||
		    !num(s, &ke->kids[k], "kernel_stop_ts", &b, true, ret))
			return false;
		if (!any || a < lo)
			lo = a;
		if (!any || b > hi)
			hi = b;
		any = true;
	}
	if (!any)
		return false;
	if (!ns_add(0, lo * 1e3, &c->start_real) || !ns_add(0, hi * 1e3, &c->end_real)) {
		*ret = bad(s, "kernel_start_ts or kernel_stop_ts is beyond any time");
		return false;
	}
	return true;
}

/*
 * One line: coll_perf or (NCCL 2.30, point-to-point on by default)
 * p2p_perf.  0, or bad()'s code.  *@approx: its times are the dump's.
 */
static int inspector_line(struct src *s, const struct json *j, struct hvn_ext_coll *c,
			  bool *approx, double *dump)
{
	const struct json *h = hvn_json_get(j, "header"), *m = hvn_json_get(j, "metadata");
	const struct json *cp = hvn_json_get(j, "coll_perf"), *pp = hvn_json_get(j, "p2p_perf");
	const struct json *perf = cp ? cp : pp, *tr;
	const char *id, *op, *host;
	int64_t rank, sn, size;
	double exec, a, b;
	size_t digits;
	int ret = 0;

	if (!h || !m || !perf)
		return bad(s, "key \"%s\" is missing",
			   !h ? "header" : !m ? "metadata" : "coll_perf\" or \"p2p_perf");
	memset(c, 0, sizeof(*c));
	id = str(s, h, "id", true, &ret);
	if (!id || !int_key(s, h, "rank", &rank, true, &ret) ||
	    !num(s, m, "dump_timestamp_us", dump, true, &ret))
		return ret;
	if (rank < 0 || rank > INT32_MAX)
		return bad(s, "header.rank %lld is not a rank", (long long)rank);
	op = str(s, perf, cp ? "coll" : "p2p", true, &ret);
	if (!op || !int_key(s, perf, cp ? "coll_sn" : "p2p_sn", &sn, true, &ret) ||
	    !num(s, perf, cp ? "coll_exec_time_us" : "p2p_exec_time_us", &exec, true, &ret))
		return ret;
	if (sn < 0 || !(exec >= 0))
		return bad(s, "a negative sequence number or execution time");
	if (int_key(s, perf, cp ? "coll_msg_size_bytes" : "p2p_msg_size_bytes", &size,
		    false, &ret))
		c->bytes = size < 0 ? 0 : size;
	/*
	 * header.id is "0x%lx" in a 17-byte buffer: a hash of 15 or 16 hex
	 * digits keeps its first 14.  correlate matches such an id on its
	 * prefix.
	 */
	if (strncmp(id, "0x", 2) || !id[2] || strspn(id + 2, "0123456789abcdefABCDEF") != strlen(id + 2) ||
	    strlen(id + 2) > 16)
		return bad(s, "header.id \"%.20s\" is not a hex communicator hash", id);
	digits = strlen(id + 2);
	c->comm = strtoull(id + 2, NULL, 16);
	c->comm_digits = digits == 14 ? 14 : 0;
	c->rank = rank;
	c->seq = sn;
	c->func = func_of(op);
	c->is_p2p = pp || c->func == HVN_FN_SEND || c->func == HVN_FN_RECV ||
		    c->func == HVN_FN_SENDRECV;
	host = str(s, m, "hostname", false, &ret);
	if (host)
		snprintf(c->host, sizeof(c->host), "%s", host);
	if (int_key(s, h, "n_ranks", &size, false, &ret) && size > 0 && size <= INT32_MAX)
		c->nranks = size;
	if (int_key(s, m, "pid", &size, false, &ret) && size > 0 && size <= INT32_MAX)
		c->pid = size;
	/* Verbose dumps nest their times in the perf object (an older layout
	 * had them at the top).  coll_start_ts/stop_ts bracket the enqueue:
	 * the execution is the kernels'. */
	tr = hvn_json_get(perf, "event_trace_ts");
	if (!tr)
		tr = hvn_json_get(j, "event_trace_ts");
	*approx = false;
	if (kernel_times(s, tr, c, &ret))
		return 0;
	if (ret)
		return ret;
	if (num(s, tr, cp ? "coll_start_ts" : "p2p_start_ts", &a, false, &ret) &&
	    num(s, tr, cp ? "coll_stop_ts" : "p2p_stop_ts", &b, false, &ret) && b >= a) {
		if (!ns_add(0, a * 1e3, &c->start_real) ||
		    !ns_add(c->start_real, exec * 1e3, &c->end_real))
			return bad(s, "%s_start_ts is beyond any time", cp ? "coll" : "p2p");
		return 0;
	}
	if (ret)
		return ret;
	/* Without verbose output it ended by the dump. */
	*approx = true;
	if (!ns_add(0, *dump * 1e3, &c->end_real) ||
	    !ns_add(c->end_real, -exec * 1e3, &c->start_real))
		return bad(s, "dump_timestamp_us or the execution time is beyond any time");
	return 0;
}

/*
 * What a file that is not Inspector output looks like instead, for the one
 * message that refuses it: the option that reads it, or what it is.
 */
static const char *looks_like(const char *text, size_t len)
{
	char err[40];
	struct json *j;
	const char *what = "";

	if (len && (unsigned char)text[0] == 0x80)
		return ": a pickle, as Flight Recorder dumps are: --fr reads those";
	if (!strncmp(text, "# HELP", 6) || !strncmp(text, "# TYPE", 6))
		return ": Prometheus text, not a trace";
	if (memmem(text, len, "NCCL INFO", 9) || memmem(text, len, "NCCL WARN", 9))
		return ": an NCCL_DEBUG log, which holds no collective's times";
	j = hvn_json_parse(text, len, err, sizeof(err));
	if (!j)
		return "";
	if (hvn_json_get(j, "traceEvents"))
		what = ": a PyTorch profiler (Kineto) trace: --kineto reads it";
	else if (hvn_json_get(j, "entries") || hvn_json_get(j, "pg_config"))
		what = ": a Flight Recorder dump: --fr reads it";
	else if (hvn_json_get(j, "header") || hvn_json_get(j, "coll_perf"))
		what = ": Inspector's JSON over many lines, where it writes one object a line (jq -c . makes that)";
	hvn_json_free(j);
	return what;
}

/* Whether the next non-empty line after @nl (NULL: none) is JSON. */
static bool next_json(const char *nl, const char *end)
{
	char err[8];
	struct json *j;

	while (nl && nl < end) {
		const char *p = nl + 1, *e = memchr(p, '\n', end - p);
		size_t l = (e ? e : end) - p;

		while (l && isspace((unsigned char)p[l - 1]))
			l--;
		if (l) {
			bool ok;

			j = hvn_json_parse(p, l, err, sizeof(err));
			ok = j != NULL;
			hvn_json_free(j);
			return ok;
		}
		nl = e;
	}
	return false;
}

int hvn_read_inspector(const char *path, hvn_ext_add add, void *ctx)
{
	struct src s = { .path = path };
	size_t len, line = 0, nbad = 0, napprox = 0, nlines = 0;
	char *text, *p, *end;
	double prev_dump = -1, gap = -1;

	if (!load(&s, &len, &text))
		return HVN_EXIT_BADFILE;
	s.per_line = true;
	for (p = text, end = text + len; p < end; ) {
		char *nl = memchr(p, '\n', end - p), err[120], *fixed = NULL;
		size_t l = (nl ? nl : end) - p, fl;
		struct hvn_ext_coll c;
		struct json *j;
		bool approx = false;
		double dump;
		int r;

		line++;
		snprintf(s.where, sizeof(s.where), "line %zu", line);
		while (l && isspace((unsigned char)p[l - 1]))
			l--;
		if (!l) {
			p = nl ? nl + 1 : end;
			continue;
		}
		j = hvn_json_parse(p, l, err, sizeof(err));
		if (!j) {
			fixed = null_nonfinite(p, l, &fl);
			j = fixed ? hvn_json_parse(fixed, fl, err + 60, sizeof(err) - 60) : NULL;
			free(fixed);
		}
		/* The first line and the next are not JSON: not Inspector
		 * output at all, refused once, not line by line (a first line
		 * cut alone is skipped as any other). */
		if (!nlines++ && !j && !next_json(nl, end)) {
			hvn_err("%s: not NCCL Inspector output (line %zu: not JSON)%s; the file is skipped",
				path, line, looks_like(text, len));
			free(text);
			return HVN_EXIT_BADFILE;
		}
		if (!j) {
			bad(&s, "not JSON (%.60s)%s", err,
			    nl ? "" : ": the last line, still being written or cut by a kill?");
			nbad++;
			p = nl ? nl + 1 : end;
			continue;
		}
		p = nl ? nl + 1 : end;
		if (nlines == 1 && !hvn_json_get(j, "header") &&
		    !hvn_json_get(j, "coll_perf")) {
			hvn_json_free(j);
			hvn_err("%s: not NCCL Inspector output (line %zu: no \"header\" or \"coll_perf\")%s; the file is skipped",
				path, line, looks_like(text, len));
			free(text);
			return HVN_EXIT_BADFILE;
		}
		r = inspector_line(&s, j, &c, &approx, &dump);
		hvn_json_free(j);
		/* Ended at its dump: off by up to a dump interval (below). */
		c.unc_ns = approx ? UINT64_MAX : 0;
		if (!r)
			r = push(&s, &c);
		if (r) {
			nbad++;
			continue;
		}
		napprox += approx;
		if (prev_dump >= 0 && dump > prev_dump && (gap < 0 || dump - prev_dump < gap))
			gap = dump - prev_dump;
		if (dump > prev_dump)
			prev_dump = dump;
	}
	free(text);
	for (size_t k = 0; gap > 0 && k < s.n; k++)
		if (s.v[k].unc_ns == UINT64_MAX)
			s.v[k].unc_ns = (uint64_t)(gap * 1e3);
	if (napprox) {
		char g[48] = "unknown: one dump";

		if (gap > 0)
			snprintf(g, sizeof(g), "%.1f ms or more here", gap / 1e3);
		hvn_warn("%s: %zu collectives without verbose times (NCCL_INSPECTOR_DUMP_VERBOSE=1): each ends at its dump, up to one dump interval late (%s), and starts its execution time before",
			path, napprox, g);
	}
	if (s.unsaid)
		hvn_err("%s: %zu more bad lines, skipped", path, s.unsaid);
	/* Lines are independent: the good ones count. */
	finish(&s, 0, add, ctx);
	return nbad ? HVN_EXIT_BADFILE : 0;
}
