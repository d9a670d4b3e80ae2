// SPDX-License-Identifier: GPL-2.0
/*
 * Cases for tools/lib/tracedat/pages.c: ring-buffer pages written with
 * hvn_rb_out_* read back with hvn_rb_page, hand-made pages (padding, time
 * stamps, the missed-events count) and corrupt ones.
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "hvn_test.h"
#include "tracedat/pages.h"

#define PAGE	4096
#define MAXEV	1024
#define MAXPG	64

/* Pages as hvn_rb_out flushes them, and events as hvn_rb_page gives them. */
struct sink {
	uint8_t pages[MAXPG][PAGE];
	int npages;
	int fail_flush;			/* flush returns -1 */
	int nev;
	struct {
		int cpu;
		uint64_t ts;
		uint32_t len;
		uint8_t data[PAGE];
	} ev[MAXEV];
};

static int flush(void *ctx, const uint8_t *page)
{
	struct sink *s = ctx;

	if (s->fail_flush || s->npages == MAXPG)
		return -1;
	memcpy(s->pages[s->npages++], page, PAGE);
	return 0;
}

static void event(void *ctx, int cpu, uint64_t ts, const uint8_t *data,
		  uint32_t len)
{
	struct sink *s = ctx;

	if (s->nev == MAXEV || len > PAGE)
		return;
	s->ev[s->nev].cpu = cpu;
	s->ev[s->nev].ts = ts;
	s->ev[s->nev].len = len;
	memcpy(s->ev[s->nev].data, data, len);
	s->nev++;
}

static struct sink *sink_new(void)
{
	return calloc(1, sizeof(struct sink));
}

static struct hvn_rb reader(struct sink *s, uint32_t commit_size)
{
	return (struct hvn_rb){ .page_size = PAGE, .commit_size = commit_size,
				.event = event, .ctx = s };
}

/* Decode every page @s holds; the number of events. */
static uint64_t decode_all(struct sink *s, struct hvn_rb *rb)
{
	uint64_t n = 0;

	for (int i = 0; i < s->npages; i++)
		n += hvn_rb_page(rb, 3, s->pages[i]);
	return n;
}

static void fill(uint8_t *p, uint32_t len, unsigned int seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7 + 1);
}

static void wr32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void wr64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* Events of every size class round-trip, with both commit sizes. */
static void roundtrip(struct hvn_test *t, uint32_t commit_size)
{
	static const uint32_t lens[] = { 1, 3, 4, 5, 8, 12, 100, 108, 111,
					 112, 113, 116, 200, 1000, 2048 };
	const int nl = sizeof(lens) / sizeof(lens[0]);
	struct sink *s = sink_new();
	struct hvn_rb_out o;
	struct hvn_rb rb;
	uint8_t buf[2048];
	uint64_t ts = 1000000;

	if (!s || hvn_rb_out_init(&o, PAGE, commit_size, flush, s)) {
		HT_EXPECT_TRUE(t, false);
		free(s);
		return;
	}
	for (int i = 0; i < nl; i++) {
		fill(buf, lens[i], i);
		HT_EXPECT_EQ(t, hvn_rb_out_add(&o, ts + i * 1000, buf, lens[i]), 0);
	}
	HT_EXPECT_EQ(t, hvn_rb_out_flush(&o), 0);
	rb = reader(s, commit_size);
	HT_EXPECT_EQ(t, decode_all(s, &rb), nl);
	HT_EXPECT_EQ(t, rb.pages, s->npages);
	HT_EXPECT_EQ(t, rb.bad_pages, 0);
	HT_EXPECT_EQ(t, rb.missed_pages, 0);
	HT_EXPECT_EQ(t, s->nev, nl);
	for (int i = 0; i < nl && i < s->nev; i++) {
		/* Small events come back padded to 4 bytes; large exact. */
		uint32_t want = lens[i] <= 112 ? (lens[i] + 3) & ~3u : lens[i];

		fill(buf, lens[i], i);
		HT_EXPECT_EQ(t, s->ev[i].cpu, 3);
		HT_EXPECT_EQ(t, s->ev[i].ts, ts + i * 1000);
		HT_EXPECT_EQ(t, s->ev[i].len, want);
		HT_EXPECT_TRUE(t, !memcmp(s->ev[i].data, buf, lens[i]));
		for (uint32_t k = lens[i]; k < s->ev[i].len; k++)
			HT_EXPECT_EQ(t, s->ev[i].data[k], 0);
	}
	hvn_rb_out_free(&o);
	free(s);
}

static void pages_roundtrip_sizes(struct hvn_test *t)
{
	roundtrip(t, 8);
}

static void pages_roundtrip_commit4(struct hvn_test *t)
{
	roundtrip(t, 4);
}

/* Gaps past the 27-bit delta take a time extend; the times stay exact. */
static void pages_time_extend(struct hvn_test *t)
{
	static const uint64_t gap[] = {
		0, 1, (1ull << 27) - 1, 1ull << 27, (1ull << 27) + 1,
		5000000000ull, 1ull << 40, 3, (1ull << 50) + 12345, 0,
	};
	const int ng = sizeof(gap) / sizeof(gap[0]);
	struct sink *s = sink_new();
	struct hvn_rb_out o;
	struct hvn_rb rb;
	uint64_t ts = 42, want[16];
	uint32_t v;

	if (!s || hvn_rb_out_init(&o, PAGE, 8, flush, s)) {
		HT_EXPECT_TRUE(t, false);
		free(s);
		return;
	}
	for (int i = 0; i < ng; i++) {
		ts += gap[i];
		want[i] = ts;
		v = i;
		HT_EXPECT_EQ(t, hvn_rb_out_add(&o, ts, &v, 4), 0);
	}
	hvn_rb_out_flush(&o);
	/* All on one page: the extends are inside it. */
	HT_EXPECT_EQ(t, s->npages, 1);
	rb = reader(s, 8);
	HT_EXPECT_EQ(t, decode_all(s, &rb), ng);
	HT_EXPECT_EQ(t, rb.bad_pages, 0);
	for (int i = 0; i < ng && i < s->nev; i++) {
		memcpy(&v, s->ev[i].data, 4);
		HT_EXPECT_EQ(t, v, i);
		if (s->ev[i].ts != want[i])
			ht_fail(t, __FILE__, __LINE__,
				"event %d: ts %llu != %llu", i,
				(unsigned long long)s->ev[i].ts,
				(unsigned long long)want[i]);
	}
	hvn_rb_out_free(&o);
	free(s);
}

/* A time earlier than the last counts as the last: time never goes back. */
static void pages_ts_backwards(struct hvn_test *t)
{
	struct sink *s = sink_new();
	struct hvn_rb_out o;
	struct hvn_rb rb;
	uint32_t v = 0;

	if (!s || hvn_rb_out_init(&o, PAGE, 8, flush, s)) {
		free(s);
		return;
	}
	hvn_rb_out_add(&o, 5000, &v, 4);
	hvn_rb_out_add(&o, 4000, &v, 4);
	hvn_rb_out_add(&o, 6000, &v, 4);
	hvn_rb_out_flush(&o);
	rb = reader(s, 8);
	HT_EXPECT_EQ(t, decode_all(s, &rb), 3);
	HT_EXPECT_EQ(t, s->ev[0].ts, 5000);
	HT_EXPECT_EQ(t, s->ev[1].ts, 5000);
	HT_EXPECT_EQ(t, s->ev[2].ts, 6000);
	hvn_rb_out_free(&o);
	free(s);
}

/*
 * A full page is flushed before the event that does not fit; each new
 * page carries its first event's time.
 */
static void pages_boundaries(struct hvn_test *t)
{
	struct sink *s = sink_new();
	struct hvn_rb_out o;
	struct hvn_rb rb;
	uint8_t buf[1000];
	uint64_t used;
	const int n = 40;	/* 40 * 1008 bytes: 10 pages of 4 events */

	if (!s || hvn_rb_out_init(&o, PAGE, 8, flush, s)) {
		free(s);
		return;
	}
	for (int i = 0; i < n; i++) {
		fill(buf, sizeof(buf), i);
		HT_EXPECT_EQ(t, hvn_rb_out_add(&o, 1000 + i * 10, buf,
					       sizeof(buf)), 0);
	}
	/* Nothing half-written is flushed before it is asked for. */
	HT_EXPECT_EQ(t, s->npages, n / 4 - 1);
	HT_EXPECT_EQ(t, o.pages, n / 4 - 1);
	HT_EXPECT_EQ(t, hvn_rb_out_flush(&o), 0);
	HT_EXPECT_EQ(t, s->npages, n / 4);
	/* An empty page is not flushed. */
	HT_EXPECT_EQ(t, hvn_rb_out_flush(&o), 0);
	HT_EXPECT_EQ(t, s->npages, n / 4);
	for (int p = 0; p < s->npages; p++) {
		uint64_t pts;

		memcpy(&pts, s->pages[p], 8);
		memcpy(&used, s->pages[p] + 8, 8);
		HT_EXPECT_EQ(t, pts, 1000 + p * 40);
		HT_EXPECT_EQ(t, used, 4 * 1008);
	}
	rb = reader(s, 8);
	HT_EXPECT_EQ(t, decode_all(s, &rb), n);
	HT_EXPECT_EQ(t, rb.bad_pages, 0);
	for (int i = 0; i < n && i < s->nev; i++) {
		fill(buf, sizeof(buf), i);
		HT_EXPECT_EQ(t, s->ev[i].ts, 1000 + i * 10);
		HT_EXPECT_EQ(t, s->ev[i].len, sizeof(buf));
		HT_EXPECT_TRUE(t, !memcmp(s->ev[i].data, buf, sizeof(buf)));
	}
	hvn_rb_out_free(&o);
	free(s);
}

/* The largest event that fits a page, and one byte more. */
static void pages_event_too_big(struct hvn_test *t)
{
	struct sink *s = sink_new();
	struct hvn_rb_out o;
	struct hvn_rb rb;
	const uint32_t max = PAGE - 16 - 8;
	uint8_t *buf = calloc(1, PAGE);

	if (!s || !buf || hvn_rb_out_init(&o, PAGE, 8, flush, s)) {
		free(s);
		free(buf);
		return;
	}
	fill(buf, max, 9);
	HT_EXPECT_EQ(t, hvn_rb_out_add(&o, 10, buf, max + 1), -1);
	HT_EXPECT_EQ(t, hvn_rb_out_add(&o, 10, buf, max), 0);
	HT_EXPECT_EQ(t, hvn_rb_out_flush(&o), 0);
	rb = reader(s, 8);
	HT_EXPECT_EQ(t, decode_all(s, &rb), 1);
	HT_EXPECT_EQ(t, rb.bad_pages, 0);
	HT_EXPECT_EQ(t, s->ev[0].len, max);
	HT_EXPECT_TRUE(t, !memcmp(s->ev[0].data, buf, max));
	hvn_rb_out_free(&o);
	free(s);
	free(buf);
}

/* A flush that fails is reported by the add that needed it. */
static void pages_flush_fails(struct hvn_test *t)
{
	struct sink *s = sink_new();
	struct hvn_rb_out o;
	uint8_t buf[2000] = { 0 };

	if (!s || hvn_rb_out_init(&o, PAGE, 8, flush, s)) {
		free(s);
		return;
	}
	HT_EXPECT_EQ(t, hvn_rb_out_add(&o, 1, buf, sizeof(buf)), 0);
	HT_EXPECT_EQ(t, hvn_rb_out_add(&o, 2, buf, sizeof(buf)), 0);
	s->fail_flush = 1;
	HT_EXPECT_EQ(t, hvn_rb_out_add(&o, 3, buf, sizeof(buf)), -1);
	hvn_rb_out_free(&o);
	free(s);
}

/* o.missed flags the page; the reader counts it. */
static void pages_missed_flag(struct hvn_test *t)
{
	struct sink *s = sink_new();
	struct hvn_rb_out o;
	struct hvn_rb rb;
	uint32_t v = 7;

	if (!s || hvn_rb_out_init(&o, PAGE, 8, flush, s)) {
		free(s);
		return;
	}
	hvn_rb_out_add(&o, 100, &v, 4);
	hvn_rb_out_flush(&o);
	o.missed = true;
	hvn_rb_out_add(&o, 200, &v, 4);
	hvn_rb_out_flush(&o);
	/* The flag is the flushed page's only. */
	hvn_rb_out_add(&o, 300, &v, 4);
	hvn_rb_out_flush(&o);
	HT_EXPECT_EQ(t, s->npages, 3);
	rb = reader(s, 8);
	HT_EXPECT_EQ(t, decode_all(s, &rb), 3);
	HT_EXPECT_EQ(t, rb.missed_pages, 1);
	HT_EXPECT_EQ(t, rb.missed_events, 0);	/* no count stored */
	HT_EXPECT_EQ(t, rb.bad_pages, 0);
	HT_EXPECT_EQ(t, s->ev[1].ts, 200);
	hvn_rb_out_free(&o);
	free(s);
}

/* A page as the kernel writes it: header, then u32 event words. */
struct kpage {
	uint8_t b[PAGE];
	uint32_t i;		/* data bytes */
	uint32_t cs;		/* commit size */
};

static void kp_init(struct kpage *k, uint64_t ts, uint32_t cs)
{
	memset(k, 0, sizeof(*k));
	k->cs = cs;
	wr64(k->b, ts);
}

static void kp_word(struct kpage *k, uint32_t w)
{
	wr32(k->b + 8 + k->cs + k->i, w);
	k->i += 4;
}

static void kp_commit(struct kpage *k, uint64_t flags)
{
	if (k->cs == 8)
		wr64(k->b + 8, k->i | flags);
	else
		wr32(k->b + 8, (uint32_t)(k->i | flags));
}

#define HDR(type, delta)	((uint32_t)(type) | (uint32_t)(delta) << 5)

/* The kernel's missed-events count, stored after the data. */
static void pages_missed_count(struct hvn_test *t)
{
	struct sink *s = sink_new();
	struct kpage *k = calloc(1, sizeof(*k));
	struct hvn_rb rb;

	if (!s || !k) {
		free(s);
		free(k);
		return;
	}
	rb = reader(s, 8);
	kp_init(k, 1000, 8);
	kp_word(k, HDR(1, 5));
	kp_word(k, 0xabcd);
	kp_commit(k, 3ull << 30);
	wr64(k->b + 16 + k->i, 12345);
	HT_EXPECT_EQ(t, hvn_rb_page(&rb, 0, k->b), 1);
	HT_EXPECT_EQ(t, rb.missed_pages, 1);
	HT_EXPECT_EQ(t, rb.missed_events, 12345);
	HT_EXPECT_EQ(t, s->ev[0].ts, 1005);
	/* Flagged, no count stored. */
	kp_commit(k, 1ull << 31);
	HT_EXPECT_EQ(t, hvn_rb_page(&rb, 0, k->b), 1);
	HT_EXPECT_EQ(t, rb.missed_pages, 2);
	HT_EXPECT_EQ(t, rb.missed_events, 12345);
	/* 32-bit commit. */
	rb = reader(s, 4);
	kp_init(k, 1000, 4);
	kp_word(k, HDR(1, 5));
	kp_word(k, 0xabcd);
	kp_commit(k, 3ull << 30);
	wr32(k->b + 12 + k->i, 77);
	HT_EXPECT_EQ(t, hvn_rb_page(&rb, 0, k->b), 1);
	HT_EXPECT_EQ(t, rb.missed_events, 77);
	/* The count does not fit after a full page: not read. */
	kp_init(k, 1000, 4);
	kp_word(k, HDR(0, 0));
	kp_word(k, PAGE - 12 - 4);
	k->i = PAGE - 12;
	kp_commit(k, 3ull << 30);
	HT_EXPECT_EQ(t, hvn_rb_page(&rb, 0, k->b), 1);
	HT_EXPECT_EQ(t, rb.missed_pages, 2);
	HT_EXPECT_EQ(t, rb.missed_events, 77);
	HT_EXPECT_EQ(t, rb.bad_pages, 0);
	free(s);
	free(k);
}

/*
 * Padding (discarded events, the page's tail), time extends and absolute
 * time stamps as the kernel writes them.
 */
static void pages_kernel_records(struct hvn_test *t)
{
	struct sink *s = sink_new();
	struct kpage *k = calloc(1, sizeof(*k));
	struct hvn_rb rb;

	if (!s || !k) {
		free(s);
		free(k);
		return;
	}
	rb = reader(s, 8);
	kp_init(k, 1ull << 40, 8);
	kp_word(k, HDR(1, 10));			/* +10 */
	kp_word(k, 1);
	kp_word(k, HDR(29, 1));			/* a discarded event: 16 bytes */
	kp_word(k, 12);
	kp_word(k, 0);
	kp_word(k, 0);
	kp_word(k, HDR(30, 3));			/* extend: 2 << 27 + 3 */
	kp_word(k, 2);
	kp_word(k, HDR(2, 4));
	kp_word(k, 2);
	kp_word(k, 0x22);
	kp_word(k, HDR(31, 100));		/* absolute: 8197 << 27 + 100 */
	kp_word(k, 8197);
	kp_word(k, HDR(0, 1));			/* length word: 4 + 12 */
	kp_word(k, 16);
	kp_word(k, 3);
	kp_word(k, 0x33);
	kp_word(k, 0x4444);
	kp_word(k, HDR(29, 0));			/* padding to the end */
	kp_commit(k, 0);
	HT_EXPECT_EQ(t, hvn_rb_page(&rb, 1, k->b), 3);
	HT_EXPECT_EQ(t, rb.bad_pages, 0);
	HT_EXPECT_EQ(t, s->nev, 3);
	HT_EXPECT_EQ(t, s->ev[0].cpu, 1);
	HT_EXPECT_EQ(t, s->ev[0].ts, (1ull << 40) + 10);
	HT_EXPECT_EQ(t, s->ev[0].len, 4);
	/* The padding's delta does not count; the extend's does. */
	HT_EXPECT_EQ(t, s->ev[1].ts, (1ull << 40) + 10 + (2ull << 27) + 3 + 4);
	HT_EXPECT_EQ(t, s->ev[1].len, 8);
	HT_EXPECT_EQ(t, s->ev[1].data[4], 0x22);
	HT_EXPECT_EQ(t, s->ev[2].ts, (8197ull << 27) + 100 + 1);
	HT_EXPECT_EQ(t, s->ev[2].len, 12);
	HT_EXPECT_EQ(t, s->ev[2].data[0], 3);
	HT_EXPECT_EQ(t, s->ev[2].data[4], 0x33);
	HT_EXPECT_EQ(t, s->ev[2].data[9], 0x44);
	free(s);
	free(k);
}

/* Corrupt pages are counted, cut short, and read within the page. */
static void pages_corrupt(struct hvn_test *t)
{
	struct sink *s = sink_new();
	struct kpage *k = calloc(1, sizeof(*k));
	struct hvn_rb rb;

	if (!s || !k) {
		free(s);
		free(k);
		return;
	}
	rb = reader(s, 8);
	/* Commit beyond the page. */
	kp_init(k, 1, 8);
	wr64(k->b + 8, PAGE);
	HT_EXPECT_EQ(t, hvn_rb_page(&rb, 0, k->b), 0);
	HT_EXPECT_EQ(t, rb.bad_pages, 1);
	/* Commit of all ones: the length bits are beyond the page too. */
	wr64(k->b + 8, ~0ull);
	HT_EXPECT_EQ(t, hvn_rb_page(&rb, 0, k->b), 0);
	HT_EXPECT_EQ(t, rb.bad_pages, 2);
	/* A data event longer than the commit. */
	kp_init(k, 1, 8);
	kp_word(k, HDR(1, 0));
	kp_word(k, 0);
	kp_word(k, HDR(28, 0));			/* 112 bytes, 4 there */
	kp_word(k, 0);
	kp_commit(k, 0);
	HT_EXPECT_EQ(t, hvn_rb_page(&rb, 0, k->b), 1);
	HT_EXPECT_EQ(t, rb.bad_pages, 3);
	/* A length word below 4, above the page, or cut off. */
	kp_init(k, 1, 8);
	kp_word(k, HDR(0, 0));
	kp_word(k, 3);
	kp_commit(k, 0);
	HT_EXPECT_EQ(t, hvn_rb_page(&rb, 0, k->b), 0);
	HT_EXPECT_EQ(t, rb.bad_pages, 4);
	kp_init(k, 1, 8);
	kp_word(k, HDR(0, 0));
	kp_word(k, 0xfffffff0);
	kp_commit(k, 0);
	HT_EXPECT_EQ(t, hvn_rb_page(&rb, 0, k->b), 0);
	HT_EXPECT_EQ(t, rb.bad_pages, 5);
	kp_init(k, 1, 8);
	kp_word(k, HDR(0, 0));
	kp_commit(k, 0);
	HT_EXPECT_EQ(t, hvn_rb_page(&rb, 0, k->b), 0);
	HT_EXPECT_EQ(t, rb.bad_pages, 6);
	/* A time extend or stamp cut off by the commit. */
	kp_init(k, 1, 8);
	kp_word(k, HDR(30, 0));
	kp_commit(k, 0);
	HT_EXPECT_EQ(t, hvn_rb_page(&rb, 0, k->b), 0);
	HT_EXPECT_EQ(t, rb.bad_pages, 7);
	kp_init(k, 1, 8);
	kp_word(k, HDR(31, 0));
	kp_commit(k, 0);
	HT_EXPECT_EQ(t, hvn_rb_page(&rb, 0, k->b), 0);
	HT_EXPECT_EQ(t, rb.bad_pages, 8);
	/* Padding whose length runs past the commit ends the page quietly. */
	kp_init(k, 1, 8);
	kp_word(k, HDR(1, 0));
	kp_word(k, 0);
	kp_word(k, HDR(29, 0));
	kp_word(k, 1000);
	kp_commit(k, 0);
	HT_EXPECT_EQ(t, hvn_rb_page(&rb, 0, k->b), 1);
	HT_EXPECT_EQ(t, rb.bad_pages, 8);
	HT_EXPECT_EQ(t, rb.pages, 9);
	free(s);
	free(k);
}

/* Random pages: whatever they hold, reads stay in the page (ASan). */
static void pages_random(struct hvn_test *t)
{
	struct sink *s = sink_new();
	struct hvn_rb rb;
	uint8_t *page = malloc(PAGE);
	uint32_t x = 12345;

	if (!s || !page) {
		free(s);
		free(page);
		return;
	}
	for (int r = 0; r < 2000; r++) {
		uint32_t size = r % 2 ? PAGE : 64 + r;

		/* A heap block of exactly the page: ASan sees any overread. */
		for (uint32_t i = 0; i < PAGE; i++) {
			x = x * 1103515245 + 12345;
			page[i] = (uint8_t)(x >> 16);
		}
		if (size < PAGE - 16)
			wr64(page + 8, size);
		s->nev = 0;
		rb = reader(s, r % 3 ? 8 : 4);
		hvn_rb_page(&rb, 0, page);
		HT_EXPECT_EQ(t, rb.pages, 1);
	}
	free(page);
	free(s);
}

/* Two page files merge into one stream in time order. */
static void pages_merge(struct hvn_test *t)
{
	char a[] = "/tmp/hvn-pages-a.XXXXXX", b[] = "/tmp/hvn-pages-b.XXXXXX";
	char out[] = "/tmp/hvn-pages-o.XXXXXX";
	char *paths[2] = { a, b };
	struct sink *s = sink_new();
	struct hvn_rb_out o;
	struct hvn_rb rb;
	FILE *f;
	int fd[3];

	if (!s)
		return;
	fd[0] = mkstemp(a);
	fd[1] = mkstemp(b);
	fd[2] = mkstemp(out);
	for (int k = 0; k < 2; k++) {
		HT_EXPECT_TRUE(t, fd[k] >= 0);
		s->npages = 0;
		hvn_rb_out_init(&o, PAGE, 8, flush, s);
		/* a: 0, 20, 40, ...; b: 10, 30, 50, ... */
		for (uint32_t i = 0; i < 300; i++) {
			uint32_t v[50] = { 2 * i + k };

			hvn_rb_out_add(&o, 100 + 20 * i + 10 * k, v, sizeof(v));
		}
		hvn_rb_out_flush(&o);
		hvn_rb_out_free(&o);
		f = fdopen(fd[k], "w");
		if (f) {
			fwrite(s->pages, PAGE, s->npages, f);
			fclose(f);
		}
	}
	HT_EXPECT_EQ(t, hvn_rb_merge(paths[0], paths[1], out, PAGE, 8), 0);
	f = fopen(out, "r");
	s->npages = f ? fread(s->pages, PAGE, MAXPG, f) : 0;
	if (f)
		fclose(f);
	rb = reader(s, 8);
	s->nev = 0;
	HT_EXPECT_EQ(t, decode_all(s, &rb), 600);
	HT_EXPECT_EQ(t, rb.bad_pages, 0);
	for (int i = 0; i < s->nev; i++) {
		uint32_t v;

		memcpy(&v, s->ev[i].data, 4);
		HT_EXPECT_EQ(t, v, i);
		HT_EXPECT_EQ(t, s->ev[i].ts, 100 + 10 * i);
		if (v != (uint32_t)i)
			break;
	}
	/* A missing input is an empty stream. */
	unlink(b);
	HT_EXPECT_EQ(t, hvn_rb_merge(paths[0], paths[1], out, PAGE, 8), 0);
	unlink(a);
	unlink(out);
	if (fd[2] >= 0)
		close(fd[2]);
	free(s);
}

/*
 * An event of no bytes.  The add takes it ("0 or -1 when @len cannot fit");
 * what it writes must read back as one event, and leave the next intact.
 */
static void pages_zero_length(struct hvn_test *t)
{
	struct sink *s = sink_new();
	struct hvn_rb_out o;
	struct hvn_rb rb;
	uint32_t v = 0x5a5a5a5a;

	if (!s || hvn_rb_out_init(&o, PAGE, 8, flush, s)) {
		free(s);
		return;
	}
	HT_EXPECT_EQ(t, hvn_rb_out_add(&o, 10, &v, 0), 0);
	HT_EXPECT_EQ(t, hvn_rb_out_add(&o, 20, &v, 4), 0);
	hvn_rb_out_flush(&o);
	rb = reader(s, 8);
	HT_EXPECT_EQ(t, decode_all(s, &rb), 2);
	HT_EXPECT_EQ(t, rb.bad_pages, 0);
	if (s->nev == 2) {
		HT_EXPECT_EQ(t, s->ev[0].len, 0);
		HT_EXPECT_EQ(t, s->ev[1].ts, 20);
		HT_EXPECT_EQ(t, s->ev[1].len, 4);
	}
	hvn_rb_out_free(&o);
	free(s);
}

static struct ht_case pages_cases[] = {
	HT_CASE(pages_roundtrip_sizes),
	HT_CASE(pages_roundtrip_commit4),
	HT_CASE(pages_time_extend),
	HT_CASE(pages_ts_backwards),
	HT_CASE(pages_boundaries),
	HT_CASE(pages_event_too_big),
	HT_CASE(pages_flush_fails),
	HT_CASE(pages_missed_flag),
	HT_CASE(pages_missed_count),
	HT_CASE(pages_kernel_records),
	HT_CASE(pages_corrupt),
	HT_CASE(pages_random),
	HT_CASE(pages_merge),
	HT_CASE(pages_zero_length),
	{}
};
HT_SUITE(pages, pages_cases);
