// SPDX-License-Identifier: GPL-2.0
/* Files of records (inputs/recfile.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "inputs/recfile.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "record headers are read and written as the host lays them out: little-endian"
#endif

bool hvn_recfile_is(const char *path, const struct hvn_recfile_fmt *fmt)
{
	char magic[8];
	FILE *f = fopen(path, "rb");
	bool is;

	if (!f)
		return false;
	is = fread(magic, 1, 8, f) == 8 && !memcmp(magic, fmt->magic, 8);
	fclose(f);
	return is;
}

int hvn_recfile_open(struct hvn_recfile *r, const char *path,
		     const struct hvn_recfile_fmt *fmt)
{
	char magic[8];

	memset(r, 0, sizeof(*r));
	r->fmt = fmt;
	r->f = fopen(path, "rb");
	if (!r->f)
		return -1;
	if (fread(magic, 1, 8, r->f) != 8 || memcmp(magic, fmt->magic, 8))
		return 1;
	r->off = r->next = 8;
	return 0;
}

static void header(const struct hvn_recfile *r, const uint8_t h[8],
		   uint32_t *type, uint32_t *size)
{
	uint32_t a;
	uint16_t b, c;

	if (r->fmt->hdr == HVN_RECHDR_ID32) {
		memcpy(&a, h, 4);
		memcpy(&b, h + 4, 2);
		*type = a;
		*size = b;
	} else {
		memcpy(&c, h, 2);
		memcpy(&a, h + 4, 4);
		*type = c;
		*size = a;
	}
}

/* Room to read ahead: a chunk of records a call. */
#define CHUNK	(256 * 1024)

/* At least @want bytes from pos on in buf, unless the file ends first:
 * how many there are. */
static size_t fill(struct hvn_recfile *r, size_t want)
{
	if (r->len - r->pos >= want || r->eof)
		return r->len - r->pos;
	if (r->pos)
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
	r->len -= r->pos;
	r->pos = 0;
	if (want + CHUNK > r->cap) {
		uint8_t *n = realloc(r->buf, want + CHUNK);

		if (!n) {
			r->nomem = true;
			return r->len;
		}
		r->buf = n;
		r->cap = want + CHUNK;
	}
	while (r->len < want && !r->eof) {
		/* buf[len] is the file's byte at next + len */
		uint64_t at = r->next + r->len;
		size_t ask = r->cap - r->len, got;

		if (r->limit > at && r->limit - at < ask)
			ask = r->limit - at > want - r->len ? r->limit - at :
							      want - r->len;
		got = fread(r->buf + r->len, 1, ask, r->f);

		r->len += got;
		if (!got)
			r->eof = true;
	}
	return r->len;
}

int hvn_recfile_next(struct hvn_recfile *r, uint32_t *type, uint32_t *size,
		     const void **body)
{
	size_t got;

	if (r->off != r->next)
		r->n++;
	r->off = r->next;
	got = fill(r, 8);
	/* A read error is no end: what follows is cut. */
	if (!got)
		return ferror(r->f) || r->nomem ? HVN_REC_CUT : HVN_REC_END;
	if (got < 8)
		return HVN_REC_CUT;
	header(r, r->buf + r->pos, type, size);
	if (*size > r->fmt->max_size)
		return HVN_REC_BIG;
	if (fill(r, 8 + (size_t)*size) < 8 + (size_t)*size)
		return HVN_REC_CUT;
	*body = r->buf + r->pos + 8;
	r->pos += 8 + (size_t)*size;
	r->next = r->off + 8 + *size;
	return HVN_REC_OK;
}

int hvn_recfile_seek(struct hvn_recfile *r, uint64_t off)
{
	/* Within what was read ahead: no reading again. */
	if (off >= r->next && off - r->next <= r->len - r->pos) {
		r->pos += off - r->next;
		r->off = r->next = off;
		return 0;
	}
	if (off > (uint64_t)INT64_MAX || fseeko(r->f, (off_t)off, SEEK_SET))
		return -1;
	r->off = r->next = off;
	r->pos = r->len = 0;
	r->eof = false;
	return 0;
}

void hvn_recfile_close(struct hvn_recfile *r)
{
	if (r->f)
		fclose(r->f);
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

int hvn_recfile_start(FILE *f, const struct hvn_recfile_fmt *fmt)
{
	return fwrite(fmt->magic, 8, 1, f) != 1 ? -1 : 0;
}

int hvn_recfile_put(FILE *f, const struct hvn_recfile_fmt *fmt, uint32_t type,
		    const void *a, uint32_t alen, const void *b, uint32_t blen)
{
	uint8_t h[8] = { 0 };
	uint32_t size = alen + blen;
	uint16_t s16 = size, t16 = type;

	if (fmt->hdr == HVN_RECHDR_ID32) {
		memcpy(h, &type, 4);
		memcpy(h + 4, &s16, 2);
	} else {
		memcpy(h, &t16, 2);
		memcpy(h + 4, &size, 4);
	}
	return fwrite(h, sizeof(h), 1, f) != 1 ||
	       (alen && fwrite(a, 1, alen, f) != alen) ||
	       (blen && fwrite(b, 1, blen, f) != blen) ? -1 : 0;
}
