// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: correlate's readers of Flight Recorder, Kineto and NCCL
 * Inspector files (and the JSON parser under them); the first byte picks.
 * The streaming reader (hvn_jstream, which Kineto traces go through) must
 * take and refuse exactly what the tree parser does, with its message,
 * fed a few bytes at a time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "inputs/torch.h"
#include "inputs/json.h"

extern bool hvn_quiet;
static size_t added;

static void add(void *ctx, const struct hvn_ext_coll *c)
{
	(void)ctx;
	added += c->seq != 0;
}

struct mem {
	const char *p;
	size_t n, at;
};

/* A few bytes at a time into a buffer that starts at 16 (the fuzz build's
 * HVN_JSTREAM_CHUNK): every refill, growth and compaction path is taken. */
static ssize_t mem_read(void *v, char *buf, size_t cap)
{
	struct mem *m = v;
	size_t n = 1 + m->at % 7;

	n = n < cap ? n : cap;
	n = n < m->n - m->at ? n : m->n - m->at;
	memcpy(buf, m->p + m->at, n);
	m->at += n;
	return n;
}

static bool walk(struct json_stream *js)
{
	const char *key;
	struct json *e;
	int r = hvn_jstream_begin(js);

	if (r <= 0) {
		e = r ? NULL : hvn_jstream_value(js);
		hvn_json_free(e);
		return e && hvn_jstream_end(js);
	}
	while ((r = hvn_jstream_member(js, &key)) > 0) {
		if (!hvn_jstream_array(js)) {
			if (!hvn_jstream_skip(js))
				return false;
			continue;
		}
		while ((r = hvn_jstream_element(js, &e)) > 0)
			hvn_json_free(e);
		if (r < 0)
			return false;
	}
	return !r && hvn_jstream_end(js);
}

/* Whether two errors say the same; past a byte-order mark, only what
 * (the stream counts the mark's bytes, the tree its input's). */
static bool same_error(const char *a, const char *b, bool bom)
{
	const char *ea = strstr(a, " at byte "), *eb = strstr(b, " at byte ");

	if (!bom || !ea || !eb)
		return !strcmp(a, b);
	return ea - a == eb - b && !strncmp(a, b, ea - a);
}

static void same_as_tree(const char *text, size_t len)
{
	size_t bom = len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3) ? 3 : 0;
	struct mem m = { .p = text, .n = len };
	struct json_stream *js = hvn_jstream_new(mem_read, &m);
	char err[128];
	struct json *j;
	bool ok;

	if (!js)
		return;
	j = hvn_json_parse(text + bom, len - bom, err, sizeof(err));
	ok = walk(js);
	if (ok != (j != NULL)) {
		fprintf(stderr, "stream %s, tree %s (%s)\n", ok ? "took it" : "refused it",
			j ? "took it" : "refused it", j ? "" : err);
		abort();
	}
	/* Offsets in the tree's error are past the mark; the stream's in
	 * the file. */
	if (!ok && !same_error(err, hvn_jstream_error(js), bom)) {
		fprintf(stderr, "stream: %s; tree: %s\n", hvn_jstream_error(js), err);
		abort();
	}
	hvn_json_free(j);
	hvn_jstream_free(js);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int (*const rd[3])(const char *, hvn_ext_add, void *) = {
		hvn_read_torch_fr, hvn_read_kineto, hvn_read_inspector,
	};
	char path[64], err[128];
	struct json *j;
	int fd;

	hvn_quiet = true;
	if (!size)
		return 0;
	j = hvn_json_parse((const char *)data + 1, size - 1, err, sizeof(err));
	hvn_json_free(j);
	same_as_tree((const char *)data + 1, size - 1);
	fd = memfd_create("in", 0);
	if (fd < 0 || write(fd, data + 1, size - 1) != (ssize_t)(size - 1))
		abort();
	/* A name that ends in a rank, as Flight Recorder names its dumps. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rd[data[0] % 3](path, add, NULL);
	close(fd);
	return 0;
}
