// SPDX-License-Identifier: GPL-2.0
/*
 * Ring-buffer sub-buffer decoding.  Layout (kernel/trace/ring_buffer.c,
 * events/header_page and header_event): a u64 timestamp, a long "commit"
 * (data length, with the missed-events flags in bits 31 and 30), then
 * events.  An event header is a u32: type_len in bits 0-4, time delta in
 * bits 5-31.  type_len 1..28 is a data event of type_len * 4 bytes; 0 is a
 * data event whose length is in the next u32; 29 is padding, 30 extends the
 * time delta, 31 is an absolute timestamp.  Little-endian only: the reader
 * refuses big-endian files before getting here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hvn.h"
#include "tracedat/pages.h"

#define TYPE_PADDING	29
#define TYPE_TIME_EXT	30
#define TYPE_TIME_STAMP	31
#define TS_SHIFT	27
#define COMMIT_MASK	((1u << 27) - 1)
#define MISSED_EVENTS	(1ull << 31)
#define MISSED_STORED	(1ull << 30)
#define ABS_TS_MASK	((1ull << 59) - 1)

static inline uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* An event's time as the file means it (see struct hvn_rb). */
static uint64_t rb_time(const struct hvn_rb *rb, uint64_t ts)
{
	if (rb->ts_mult)
		ts = (uint64_t)(((unsigned __int128)ts * rb->ts_mult) >>
				rb->ts_shift);
	return ts + (uint64_t)rb->ts_offset;
}

uint64_t hvn_rb_page(struct hvn_rb *rb, int cpu, const uint8_t *page)
{
	uint32_t hdr = 8 + rb->commit_size;
	const uint8_t *data = page + hdr;
	uint64_t ts = rd64(page);
	uint64_t commit, n = 0;
	uint32_t size, i = 0;

	rb->pages++;
	commit = rb->commit_size == 8 ? rd64(page + 8) : rd32(page + 8);
	size = commit & COMMIT_MASK;
	if (size > rb->page_size - hdr) {
		rb->bad_pages++;
		return 0;
	}
	if (commit & MISSED_EVENTS) {
		rb->missed_pages++;
		/* The count follows the data when it fits in the page. */
		if ((commit & MISSED_STORED) &&
		    size + rb->commit_size <= rb->page_size - hdr)
			rb->missed_events += rb->commit_size == 8 ?
				rd64(data + size) : rd32(data + size);
	}

	while (i + 4 <= size) {
		uint32_t h = rd32(data + i);
		uint32_t type = h & 31, delta = h >> 5;
		uint32_t len, off;

		switch (type) {
		case TYPE_PADDING:
			if (i + 8 > size)
				return n;	/* padding to the end of the page */
			len = rd32(data + i + 4);
			if (len > size - i - 4)
				return n;
			i += 4 + len;
			continue;
		case TYPE_TIME_EXT:
			if (i + 8 > size)
				goto bad;
			ts += ((uint64_t)rd32(data + i + 4) << TS_SHIFT) + delta;
			i += 8;
			continue;
		case TYPE_TIME_STAMP: {
			uint64_t abs;

			if (i + 8 > size)
				goto bad;
			abs = ((uint64_t)rd32(data + i + 4) << TS_SHIFT) + delta;
			/* Only the low 59 bits are stored. */
			abs |= ts & ~ABS_TS_MASK;
			if (abs < ts)
				abs += 1ull << 59;
			ts = abs;
			i += 8;
			continue;
		}
		case 0:
			if (i + 8 > size)
				goto bad;
			len = rd32(data + i + 4);
			if (len < 4 || len > size - i - 4)
				goto bad;
			off = i + 8;
			i += 4 + ((len + 3) & ~3u);
			len -= 4;
			break;
		default:
			len = type * 4;
			if (len > size - i - 4)
				goto bad;
			off = i + 4;
			i += 4 + len;
			break;
		}
		ts += delta;
		n++;
		rb->event(rb->ctx, cpu, rb_time(rb, ts), data + off, len);
	}
	return n;
bad:
	rb->bad_pages++;
	return n;
}

/* --- writing ------------------------------------------------------------- */

static inline void wr32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

int hvn_rb_out_init(struct hvn_rb_out *o, uint32_t page_size,
		    uint32_t commit_size, hvn_rb_flush_fn flush, void *ctx)
{
	memset(o, 0, sizeof(*o));
	o->page_size = page_size;
	o->commit_size = commit_size;
	o->flush = flush;
	o->ctx = ctx;
	o->page = calloc(1, page_size);
	return o->page ? 0 : -1;
}

int hvn_rb_out_flush(struct hvn_rb_out *o)
{
	uint64_t commit = o->used | (o->missed ? MISSED_EVENTS : 0);
	int ret;

	if (!o->used)
		return 0;
	if (o->commit_size == 8)
		memcpy(o->page + 8, &commit, 8);
	else
		wr32(o->page + 8, (uint32_t)commit);
	ret = o->flush(o->ctx, o->page);
	memset(o->page, 0, o->page_size);
	o->used = 0;
	o->missed = false;
	o->pages++;
	return ret;
}

int hvn_rb_out_add(struct hvn_rb_out *o, uint64_t ts, const void *data,
		   uint32_t len)
{
	uint32_t hdr = 8 + o->commit_size, room = o->page_size - hdr;
	uint32_t dlen = (len + 3) & ~3u;
	uint32_t need = dlen <= 28 * 4 ? 4 + dlen : 8 + dlen;
	uint64_t delta;
	uint8_t *p;

	if (need > room)
		return -1;
	if (ts < o->last_ts)
		ts = o->last_ts;
	delta = ts - o->last_ts;
	if (o->used && delta >> TS_SHIFT)
		need += 8;		/* a time extend */
	if (o->used + need > room && hvn_rb_out_flush(o))
		return -1;
	if (!o->used) {
		memcpy(o->page, &ts, 8);
		delta = 0;
	}
	p = o->page + hdr + o->used;
	if (delta >> TS_SHIFT) {
		wr32(p, TYPE_TIME_EXT | (uint32_t)(delta & COMMIT_MASK) << 5);
		wr32(p + 4, (uint32_t)(delta >> TS_SHIFT));
		p += 8;
		o->used += 8;
		delta = 0;
	}
	/* type_len 0 means "length in the next word": an empty record
	 * takes that form too. */
	if (dlen && dlen <= 28 * 4) {
		wr32(p, dlen / 4 | (uint32_t)delta << 5);
		memcpy(p + 4, data, len);
		o->used += 4 + dlen;
	} else {
		wr32(p, (uint32_t)delta << 5);
		wr32(p + 4, len + 4);
		memcpy(p + 8, data, len);
		o->used += 8 + dlen;
	}
	o->last_ts = ts;
	return 0;
}

void hvn_rb_out_free(struct hvn_rb_out *o)
{
	free(o->page);
	o->page = NULL;
}

/* --- merging ------------------------------------------------------------- */

struct ev {
	uint64_t ts;
	const uint8_t *data;
	uint32_t len;
};

struct in {
	int fd;
	uint8_t *page;
	struct ev *ev;
	uint32_t n, i;
	bool missed;		/* the page just read was flagged */
	int err;		/* a read failed (errno) */
	struct hvn_rb rb;
};

static void collect(void *ctx, int cpu, uint64_t ts, const uint8_t *data,
		    uint32_t len)
{
	struct in *in = ctx;

	(void)cpu;
	in->ev[in->n++] = (struct ev){ ts, data, len };
}

/* The next event of @in, reading pages as needed; NULL at the end. */
static struct ev *peek(struct in *in)
{
	while (in->fd >= 0 && in->i == in->n) {
		uint64_t missed = in->rb.missed_pages;

		ssize_t r = read(in->fd, in->page, in->rb.page_size);

		if (r != (ssize_t)in->rb.page_size) {
			/* The end, or an error the merge must not hide. */
			if (r != 0)
				in->err = r < 0 ? errno : EIO;
			close(in->fd);
			in->fd = -1;
			return NULL;
		}
		in->n = in->i = 0;
		hvn_rb_page(&in->rb, 0, in->page);
		in->missed = in->rb.missed_pages != missed;
	}
	return in->fd >= 0 ? &in->ev[in->i] : NULL;
}

struct merge_out {
	struct hvn_rb_out o;
	int fd;
};

static int flush_fd(void *ctx, const uint8_t *page)
{
	struct merge_out *w = ctx;
	ssize_t n = write(w->fd, page, w->o.page_size);

	return n == (ssize_t)w->o.page_size ? 0 : -1;
}

int hvn_rb_merge(const char *a, const char *b, const char *out,
		 uint32_t page_size, uint32_t commit_size)
{
	struct in in[2];
	const char *path[2] = { a, b };
	struct merge_out w;
	int ret = -1;

	memset(in, 0, sizeof(in));
	memset(&w, 0, sizeof(w));
	in[0].fd = in[1].fd = -1;
	w.fd = hvn_create(out, true);
	if (w.fd < 0)
		return -1;
	if (hvn_rb_out_init(&w.o, page_size, commit_size, flush_fd, &w))
		goto done;
	for (int k = 0; k < 2; k++) {
		in[k].fd = path[k] ? open(path[k], O_RDONLY | O_CLOEXEC) : -1;
		/* A missing file is an empty stream; any other failure is not. */
		if (path[k] && in[k].fd < 0 && errno != ENOENT)
			goto done;
		in[k].page = malloc(page_size);
		in[k].ev = malloc(page_size / 4 * sizeof(struct ev));
		in[k].rb = (struct hvn_rb){ .page_size = page_size,
					    .commit_size = commit_size,
					    .event = collect, .ctx = &in[k] };
		if (!in[k].page || !in[k].ev)
			goto done;
	}
	for (;;) {
		struct ev *e0 = peek(&in[0]), *e1 = peek(&in[1]);
		int k = !e0 ? 1 : !e1 ? 0 : e1->ts < e0->ts;
		struct ev *e = k ? e1 : e0;

		if (!e)
			break;
		if (in[k].missed) {
			/* Say it on the page that holds what came after. */
			if (w.o.used && hvn_rb_out_flush(&w.o))
				goto done;
			w.o.missed = true;
			in[k].missed = false;
		}
		if (hvn_rb_out_add(&w.o, e->ts, e->data, e->len))
			goto done;
		in[k].i++;
	}
	if (in[0].err || in[1].err) {
		errno = in[0].err ? in[0].err : in[1].err;
		goto done;
	}
	if (hvn_rb_out_flush(&w.o))
		goto done;
	ret = fsync(w.fd);
done:
	for (int k = 0; k < 2; k++) {
		if (in[k].fd >= 0)
			close(in[k].fd);
		free(in[k].page);
		free(in[k].ev);
	}
	hvn_rb_out_free(&w.o);
	if (close(w.fd))
		ret = -1;
	return ret;
}
