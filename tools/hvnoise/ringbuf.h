/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Decoding of ftrace ring-buffer sub-buffers ("pages"), as read from
 * trace_pipe_raw and stored in trace.dat, with every length checked: the
 * input may be a corrupt file.
 */
#ifndef HVNOISE_RINGBUF_H
#define HVNOISE_RINGBUF_H

#include <stdint.h>

typedef void (*hvn_rb_event_fn)(void *ctx, int cpu, uint64_t ts,
				 const uint8_t *data, uint32_t len);

struct hvn_rb {
	uint32_t page_size;	/* sub-buffer size */
	uint32_t commit_size;	/* the kernel's long: 8 or 4 */
	hvn_rb_event_fn event;
	void *ctx;
	/* What could not be read, and what the kernel says it dropped. */
	uint64_t pages;
	uint64_t bad_pages;	/* commit beyond the page, bad event length */
	uint64_t missed_pages;	/* pages flagged "events were lost before" */
	uint64_t missed_events;	/* the count, where the kernel stored it */
};

/* Decode one page of @cpu; returns the number of events delivered. */
uint64_t hvn_rb_page(struct hvn_rb *rb, int cpu, const uint8_t *page);

#endif
