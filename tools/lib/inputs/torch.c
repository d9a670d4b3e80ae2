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
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "hvnoise/nccl.h"
#include "inputs/torch.h"
#include "inputs/json.h"

struct src {
	const char *path;
	char where[96];			/* entry or line, for errors */
	struct hvn_ext_coll *v;		/* what the file gave, added if all good */
	size_t n, cap;
};

static void push(struct src *s, const struct hvn_ext_coll *c)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct hvn_ext_coll *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = *c;
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
	__attribute__((format(printf, 2, 3)));

static int bad(struct src *s, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	hvn_err("%s: %s%s%s; the file is skipped", s->path, s->where,
		s->where[0] ? ": " : "", msg);
	return HVN_EXIT_BADFILE;
}

static struct json *load(struct src *s, size_t *len_out, char **text_out)
{
	size_t len;
	char *text = hvn_read_file(s->path, &len), err[120];
	struct json *j;

	if (!text) {
		hvn_err("%s: %s", s->path, strerror(errno));
		return NULL;
	}
	if (text_out) {
		*text_out = text;
		*len_out = len;
		return (struct json *)1;
	}
	j = json_parse(text, len, err, sizeof(err));
	free(text);
	if (!j)
		bad(s, "not JSON (%s)", err);
	return j;
}

/* Typed getters that name the key when it is missing or of another type. */
static bool num(struct src *s, const struct json *o, const char *key,
		double *v, bool need, int *ret)
{
	const struct json *j = json_get(o, key);

	if (!j || j->type == J_NULL) {
		if (need)
			*ret = bad(s, "key \"%s\" is missing", key);
		return false;
	}
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
	const struct json *j = json_get(o, key);

	if (!j || j->type == J_NULL) {
		if (need)
			*ret = bad(s, "key \"%s\" is missing", key);
		return NULL;
	}
	if (j->type != J_STR) {
		*ret = bad(s, "key \"%s\" is not a string", key);
		return NULL;
	}
	return j->str;
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

/* The rank in a file name: the digits at the end of its base name. */
static int rank_of_name(const char *path)
{
	const char *b = strrchr(path, '/'), *e;

	b = b ? b + 1 : path;
	e = b + strlen(b);
	while (e > b && !isdigit((unsigned char)e[-1]))
		e--;
	while (e > b && isdigit((unsigned char)e[-1]))
		e--;
	return isdigit((unsigned char)*e) ? atoi(e) : -1;
}

/* --- PyTorch Flight Recorder ---------------------------------------------- */

int hvn_read_torch_fr(const char *path, hvn_ext_add add, void *ctx)
{
	struct src s = { .path = path };
	struct json *j = load(&s, NULL, NULL);
	const struct json *entries;
	int ret = 0, rank = rank_of_name(path);

	if (!j)
		return HVN_EXIT_BADFILE;
	if (j->type != J_OBJ || !json_get(j, "version")) {
		ret = bad(&s, "not a Flight Recorder dump (no \"version\" key)");
		goto out;
	}
	if (rank < 0) {
		ret = bad(&s, "no rank in the file name (FR names its dumps PREFIX<rank>)");
		goto out;
	}
	entries = json_get(j, "entries");
	if (entries && entries->type != J_ARR) {
		ret = bad(&s, "key \"entries\" is not an array");
		goto out;
	}
	for (size_t i = 0; entries && i < entries->n; i++) {
		const struct json *e = &entries->kids[i], *pg, *sz;
		struct hvn_ext_coll c = { .rank = rank };
		double seq, created, dur = -1, done = 0, pgid = 0;
		const char *name, *state;

		snprintf(s.where, sizeof(s.where), "entries[%zu]", i);
		if (e->type != J_OBJ) {
			ret = bad(&s, "not an object");
			goto out;
		}
		name = str(&s, e, "profiling_name", true, &ret);
		state = str(&s, e, "state", true, &ret);
		if (!name || !state ||
		    !num(&s, e, "time_created_ns", &created, true, &ret))
			goto out;
		c.is_p2p = json_get(e, "is_p2p") && json_get(e, "is_p2p")->b;
		if (!num(&s, e, c.is_p2p ? "p2p_seq_id" : "collective_seq_id",
			 &seq, true, &ret))
			goto out;
		num(&s, e, "duration_ms", &dur, false, &ret);
		num(&s, e, "time_discovered_completed_ns", &done, false, &ret);
		if (ret)
			goto out;
		if (strcmp(state, "completed") || (dur < 0 && done <= 0))
			continue;	/* not over, or no end known */
		pg = json_get(e, "process_group");
		if (pg && pg->type == J_ARR && pg->n && pg->kids[0].type == J_STR)
			c.comm = hash_str(pg->kids[0].str);
		else if (num(&s, e, "pg_id", &pgid, false, &ret))
			c.comm = (uint64_t)pgid + 1;
		c.seq = seq;
		c.func = func_of(strncmp(name, "nccl:", 5) ? name : name + 5);
		c.start_real = created;
		c.end_real = dur >= 0 ? created + dur * 1e6 : done;
		sz = json_get(e, "input_sizes");
		if (sz && sz->type == J_ARR && sz->n && sz->kids[0].type == J_ARR) {
			uint64_t el = 1;
			const struct json *dt = json_get(e, "input_dtypes");

			for (size_t k = 0; k < sz->kids[0].n; k++)
				if (sz->kids[0].kids[k].type == J_NUM)
					el *= (uint64_t)sz->kids[0].kids[k].num;
			c.bytes = el * dtype_size(dt && dt->type == J_ARR && dt->n &&
						  dt->kids[0].type == J_STR ?
						  dt->kids[0].str : NULL);
		}
		if (c.end_real < c.start_real) {
			ret = bad(&s, "ends before it starts");
			goto out;
		}
		push(&s, &c);
	}
out:
	json_free(j);
	return finish(&s, ret, add, ctx);
}

/* --- Kineto / PyTorch profiler Chrome traces --------------------------------- */

int hvn_read_kineto(const char *path, hvn_ext_add add, void *ctx)
{
	struct src s = { .path = path };
	struct json *j = load(&s, NULL, NULL);
	const struct json *ev, *di;
	double base = -1, r;
	int ret = 0, rank = rank_of_name(path);
	uint64_t counter[HVN_FN_N] = { 0 };

	if (!j)
		return HVN_EXIT_BADFILE;
	ev = json_get(j, "traceEvents");
	if (j->type != J_OBJ || !ev || ev->type != J_ARR) {
		ret = bad(&s, "not a Chrome trace (no \"traceEvents\" array)");
		goto out;
	}
	num(&s, j, "baseTimeNanoseconds", &base, false, &ret);
	di = json_get(j, "distributedInfo");
	if (num(&s, di, "rank", &r, false, &ret))
		rank = r;
	if (ret)
		goto out;
	if (rank < 0) {
		ret = bad(&s, "no rank: no distributedInfo.rank and none in the file name");
		goto out;
	}
	for (size_t i = 0; i < ev->n; i++) {
		const struct json *e = &ev->kids[i], *args;
		const char *name = str(&s, e, "name", false, &ret);
		const char *cat = str(&s, e, "cat", false, &ret);
		struct hvn_ext_coll c = { .rank = rank };
		double ts, dur, v;
		char fn[32];
		size_t k = 0;

		if (ret)
			goto out;
		if (!name || !cat || strcmp(cat, "kernel") ||
		    (strncmp(name, "ncclDevKernel_", 14) &&
		     strncmp(name, "ncclKernel_", 11)))
			continue;
		snprintf(s.where, sizeof(s.where), "traceEvents[%zu] (%s)", i, name);
		if (!num(&s, e, "ts", &ts, true, &ret) ||
		    !num(&s, e, "dur", &dur, true, &ret))
			goto out;
		name = strchr(name, '_') + 1;
		while (name[k] && name[k] != '_' && k < sizeof(fn) - 1) {
			fn[k] = name[k];
			k++;
		}
		fn[k] = 0;
		c.func = func_of(fn);
		args = json_get(e, "args");
		c.comm = 1;
		{
			const char *pgn = str(&s, args, "Process Group Name", false, &ret);
			const char *dt = str(&s, args, "dtype", false, &ret);

			if (pgn)
				c.comm = hash_str(pgn);
			if (num(&s, args, "In msg nelems", &v, false, &ret))
				c.bytes = (uint64_t)v * dtype_size(dt);
		}
		/* Kernels carry a sequence number only in 2026 traces; else
		 * count them per function, as every rank launches them. */
		c.seq = num(&s, args, "Seq", &v, false, &ret) ? (uint64_t)v :
			counter[c.func]++;
		if (ret)
			goto out;
		if (base >= 0)
			c.start_real = base + ts * 1e3;
		else if (ts > 1e15)
			c.start_real = ts * 1e3;	/* older: epoch µs */
		else {
			ret = bad(&s, "relative \"ts\" without \"baseTimeNanoseconds\"");
			goto out;
		}
		c.end_real = c.start_real + dur * 1e3;
		push(&s, &c);
	}
out:
	json_free(j);
	return finish(&s, ret, add, ctx);
}

/* --- NCCL Inspector JSON lines ----------------------------------------------- */

/* An Inspector record's required fields, in the order they are checked. */
static bool record_ok(struct src *s, const struct json *h,
		      const struct json *m, const struct json *cp,
		      const char **id, const char **coll, double *rank,
		      double *dump, double *sn, double *exec, int *ret)
{
	*id = str(s, h, "id", true, ret);
	if (!*id || !num(s, h, "rank", rank, true, ret) ||
	    !num(s, m, "dump_timestamp_us", dump, true, ret))
		return false;
	*coll = str(s, cp, "coll", true, ret);
	return *coll && num(s, cp, "coll_sn", sn, true, ret) &&
	       num(s, cp, "coll_exec_time_us", exec, true, ret);
}

int hvn_read_inspector(const char *path, hvn_ext_add add, void *ctx)
{
	struct src s = { .path = path };
	size_t len, line = 0;
	char *text, *p, *end;
	int ret = 0;

	if (!load(&s, &len, &text))
		return HVN_EXIT_BADFILE;
	for (p = text, end = text + len; p < end && !ret; ) {
		char *nl = memchr(p, '\n', end - p), err[120];
		size_t l = (nl ? nl : end) - p;
		struct json *j;
		const struct json *h, *m, *cp, *tr;
		struct hvn_ext_coll c = { 0 };
		double rank, sn, exec, dump, size, a, b;
		const char *id, *coll, *host;

		line++;
		snprintf(s.where, sizeof(s.where), "line %zu", line);
		while (l && isspace((unsigned char)p[l - 1]))
			l--;
		if (!l) {
			p = nl ? nl + 1 : end;
			continue;
		}
		j = json_parse(p, l, err, sizeof(err));
		p = nl ? nl + 1 : end;
		if (!j) {
			ret = bad(&s, "not JSON (%s)", err);
			break;
		}
		h = json_get(j, "header");
		m = json_get(j, "metadata");
		cp = json_get(j, "coll_perf");
		if (!h || !m || !cp) {
			ret = bad(&s, "key \"%s\" is missing",
				  !h ? "header" : !m ? "metadata" : "coll_perf");
		} else if (record_ok(&s, h, m, cp, &id, &coll, &rank, &dump,
				     &sn, &exec, &ret)) {
			c.comm = strtoull(id, NULL, 16);
			c.rank = rank;
			c.seq = sn;
			c.func = func_of(coll);
			c.is_p2p = c.func == HVN_FN_SEND || c.func == HVN_FN_RECV;
			if (num(&s, cp, "coll_msg_size_bytes", &size, false, &ret))
				c.bytes = size;
			host = str(&s, m, "hostname", false, &ret);
			if (host)
				snprintf(c.host, sizeof(c.host), "%s", host);
			/* The collective's own times with verbose dumps; else
			 * it ended by the dump and lasted its exec time. */
			tr = json_get(j, "event_trace_ts");
			if (num(&s, tr, "coll_start_ts", &a, false, &ret) &&
			    num(&s, tr, "coll_stop_ts", &b, false, &ret) && b >= a) {
				c.start_real = a * 1e3;
				c.end_real = b * 1e3;
			} else {
				c.end_real = dump * 1e3;
				c.start_real = c.end_real - exec * 1e3;
			}
			if (!ret)
				push(&s, &c);
		}
		json_free(j);
	}
	free(text);
	return finish(&s, ret, add, ctx);
}
