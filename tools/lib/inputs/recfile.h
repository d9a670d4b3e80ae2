/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Files of records: an 8-byte magic, then records to the end, each an
 * 8-byte header (its type and the size of its body) and its body.  The
 * NCCL plugin's files (include/hvnoise/nccl.h) and host summaries
 * (inputs/summary.h) are such; this is their one reader and writer of the
 * framing, and what a record means is theirs.
 */
#ifndef HVNOISE_INPUTS_RECFILE_H
#define HVNOISE_INPUTS_RECFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* How a format lays out its header. */
enum hvn_rechdr {
	HVN_RECHDR_ID32,	/* u32 type, u16 size, u16 0 (the NCCL files) */
	HVN_RECHDR_TYPE16,	/* u16 type, u16 0, u32 size (summaries) */
};

struct hvn_recfile_fmt {
	char magic[9];		/* 8 bytes, at the start */
	enum hvn_rechdr hdr;
	uint32_t max_size;	/* a body's most bytes */
};

struct hvn_recfile {
	FILE *f;
	const struct hvn_recfile_fmt *fmt;
	uint64_t off;		/* of the record last read, or of the end */
	uint64_t next;		/* of the record after it */
	uint64_t n;		/* records read before it */
	/* Read a chunk at a time: bytes [pos, len) of buf are the file's
	 * from @next on (a record is handed out in place). */
	uint8_t *buf;
	size_t cap, pos, len;
	bool eof, nomem;
	/* Where reading ahead stops being of use (0: the end): a reader
	 * of part of the file reads no more of it than asked. */
	uint64_t limit;
};

/* What hvn_recfile_next() found. */
enum {
	HVN_REC_BIG = -2,	/* a body over max_size (the header's type
				 * and size are handed back) */
	HVN_REC_CUT = -1,	/* cut short, in a header or a body */
	HVN_REC_END = 0,	/* the end, on a record's boundary */
	HVN_REC_OK = 1,
};

/* Whether @path begins with @fmt's magic (false if it cannot be read). */
bool hvn_recfile_is(const char *path, const struct hvn_recfile_fmt *fmt);
/* 0; -1 with errno where it cannot be opened; 1 if its magic is not
 * @fmt's.  Nothing is said: the format names what it expected. */
int hvn_recfile_open(struct hvn_recfile *r, const char *path,
		     const struct hvn_recfile_fmt *fmt);
/* The next record's @type, @size and @body (valid until the next call):
 * HVN_REC_OK, or what ended the reading. */
int hvn_recfile_next(struct hvn_recfile *r, uint32_t *type, uint32_t *size,
		     const void **body);
/* Go to the record at @off (one hvn_recfile_next() returned before): 0,
 * or -1 with errno. */
int hvn_recfile_seek(struct hvn_recfile *r, uint64_t off);
void hvn_recfile_close(struct hvn_recfile *r);

/* Writing: the magic, and each record (@a then @b, its body). */
int hvn_recfile_start(FILE *f, const struct hvn_recfile_fmt *fmt);
int hvn_recfile_put(FILE *f, const struct hvn_recfile_fmt *fmt, uint32_t type,
		    const void *a, uint32_t alen, const void *b, uint32_t blen);

#endif
