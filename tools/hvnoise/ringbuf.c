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
#include <string.h>

#include "ringbuf.h"

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
		rb->event(rb->ctx, cpu, ts, data + off, len);
	}
	return n;
bad:
	rb->bad_pages++;
	return n;
}
