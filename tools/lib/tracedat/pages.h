/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Decoding of ftrace ring-buffer sub-buffers ("pages"), as read from
 * trace_pipe_raw and stored in trace.dat, with every length checked: the
 * input may be a corrupt file.
 */
#ifndef HVNOISE_RINGBUF_H
#define HVNOISE_RINGBUF_H

#include <stdbool.h>
#include <stdint.h>

typedef void (*hvn_rb_event_fn)(void *ctx, int cpu, uint64_t ts,
				 const uint8_t *data, uint32_t len);

struct hvn_rb {
	uint32_t page_size;	/* sub-buffer size */
	uint32_t commit_size;	/* the kernel's long: 8 or 4 */
	hvn_rb_event_fn event;
	void *ctx;
	/* A file's own clock (trace-cmd's TSC2NSEC and OFFSET options):
	 * an event's time is (ts * ts_mult) >> ts_shift, then ts_offset
	 * added, as trace-cmd report shows it.  ts_mult 0: ts itself. */
	uint32_t ts_mult, ts_shift;
	int64_t ts_offset;
	/* What could not be read, and what the kernel says it dropped. */
	uint64_t pages;
	uint64_t bad_pages;	/* commit beyond the page, bad event length */
	uint64_t missed_pages;	/* pages flagged "events were lost before" */
	uint64_t missed_events;	/* the count, where the kernel stored it */
};

/* Decode one page of @cpu; returns the number of events delivered. */
uint64_t hvn_rb_page(struct hvn_rb *rb, int cpu, const uint8_t *page);

/*
 * Writing pages in the same format, for events that do not come from the
 * kernel's ring buffer (the BPF collector's), and merging two page streams
 * of one CPU into one ordered stream.
 */
typedef int (*hvn_rb_flush_fn)(void *ctx, const uint8_t *page);

struct hvn_rb_out {
	uint32_t page_size, commit_size;
	uint8_t *page;
	uint32_t used;		/* data bytes in @page */
	uint64_t last_ts;	/* of the last event written */
	bool missed;		/* flag the page: events were lost before it */
	hvn_rb_flush_fn flush;
	void *ctx;
	uint64_t pages;		/* pages flushed */
};

int hvn_rb_out_init(struct hvn_rb_out *o, uint32_t page_size,
		    uint32_t commit_size, hvn_rb_flush_fn flush, void *ctx);
/* Append one event (an earlier @ts counts as the last one's); 0 or -1
 * when @len cannot fit in a page or the flush failed. */
int hvn_rb_out_add(struct hvn_rb_out *o, uint64_t ts, const void *data,
		   uint32_t len);
/* Write out the page under way, if it holds anything. */
int hvn_rb_out_flush(struct hvn_rb_out *o);
void hvn_rb_out_free(struct hvn_rb_out *o);

/* Merge the page files @a and @b (either may be missing) into @out, in
 * time order; 0, or -1 with errno set. */
int hvn_rb_merge(const char *a, const char *b, const char *out,
		 uint32_t page_size, uint32_t commit_size);

#endif
