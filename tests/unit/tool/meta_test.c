// SPDX-License-Identifier: GPL-2.0
/*
 * Cases for tools/lib/tracedat/meta.c: the per-CPU stats text and what a
 * recording says about itself (UNAME, trace clock, CPUSTAT, option 0x4856).
 */
#include <stdlib.h>

#include "hvn_test.h"
#include "tracedat/meta.h"
#include "tracedat/tracedat.h"

/*
 * per_cpu/cpuN/stats of a 6.1 kernel, with the "CPU: N" line hvnoise
 * record puts first (session.c).
 */
static const char stats_61[] =
	"CPU: 2\n"
	"entries: 1234\n"
	"overrun: 56\n"
	"commit overrun: 7\n"
	"bytes: 98765\n"
	"oldest event ts: 12345.678901\n"
	"now ts: 12720.624945\n"
	"dropped events: 8\n"
	"read events: 90\n";

/* An older kernel's: no "dropped events", no "read events". */
static const char stats_old[] =
	"CPU: 5\n"
	"entries: 10\n"
	"overrun: 3\n"
	"commit overrun: 0\n"
	"bytes: 4096\n"
	"oldest event ts:  1000.000000\n"
	"now ts:  1001.000000\n";

static void cpustat_full(struct hvn_test *t)
{
	struct hvn_cpustat st;

	HT_EXPECT_EQ(t, hvn_cpustat_parse(stats_61, &st), 0);
	HT_EXPECT_EQ(t, st.cpu, 2);
	HT_EXPECT_EQ(t, st.entries, 1234);
	HT_EXPECT_EQ(t, st.overrun, 56);
	HT_EXPECT_EQ(t, st.commit_overrun, 7);
	HT_EXPECT_EQ(t, st.dropped, 8);
	HT_EXPECT_EQ(t, st.read_events, 90);
	HT_EXPECT_EQ(t, hvn_cpustat_lost(&st), 64);
}

static void cpustat_no_dropped(struct hvn_test *t)
{
	struct hvn_cpustat st;

	HT_EXPECT_EQ(t, hvn_cpustat_parse(stats_old, &st), 0);
	HT_EXPECT_EQ(t, st.cpu, 5);
	HT_EXPECT_EQ(t, st.entries, 10);
	HT_EXPECT_EQ(t, st.overrun, 3);
	HT_EXPECT_EQ(t, st.commit_overrun, 0);
	HT_EXPECT_EQ(t, st.dropped, 0);
	HT_EXPECT_EQ(t, st.read_events, 0);
	HT_EXPECT_EQ(t, hvn_cpustat_lost(&st), 3);
}

static void cpustat_odd(struct hvn_test *t)
{
	struct hvn_cpustat st;

	/* The tracefs file as is: no CPU line. */
	HT_EXPECT_EQ(t, hvn_cpustat_parse("entries: 0\noverrun: 0\n"
					  "commit overrun: 0\nbytes: 0\n"
					  "dropped events: 0\nread events: 0\n",
					  &st), 0);
	HT_EXPECT_EQ(t, st.cpu, -1);
	/* "commit overrun" is not "overrun"; order does not matter. */
	HT_EXPECT_EQ(t, hvn_cpustat_parse("commit overrun: 9\nentries: 1\n"
					  "overrun: 2", &st), 0);
	HT_EXPECT_EQ(t, st.overrun, 2);
	HT_EXPECT_EQ(t, st.commit_overrun, 9);
	/* A CPU beyond any machine's is none. */
	HT_EXPECT_EQ(t, hvn_cpustat_parse("CPU: 99999\nentries: 1\n"
					  "overrun: 0\n", &st), 0);
	HT_EXPECT_EQ(t, st.cpu, -1);
	/* Not a stats text. */
	HT_EXPECT_EQ(t, hvn_cpustat_parse("", &st), -1);
	HT_EXPECT_EQ(t, hvn_cpustat_parse("entries: 5\n", &st), -1);
	HT_EXPECT_EQ(t, hvn_cpustat_parse("overrun: 5\n", &st), -1);
	HT_EXPECT_EQ(t, hvn_cpustat_parse("entries: x\noverrun: 1\n", &st), -1);
	HT_EXPECT_EQ(t, hvn_cpustat_parse("commit overrun: 1\nentries: 1\n",
					  &st), -1);
	HT_EXPECT_EQ(t, hvn_cpustat_parse("hello\nworld", &st), -1);
}

/* A file's fields as hvn_tdat_open() fills them, without a file. */
static void tdat_init(struct hvn_tdat *t, const char *uname,
		      const char *clock, const char *meta)
{
	memset(t, 0, sizeof(*t));
	t->fd = -1;
	t->uname = (char *)uname;
	t->clock = (char *)clock;
	t->meta = (char *)meta;
}

static void meta_full(struct hvn_test *t)
{
	char *stats[] = { (char *)stats_61, (char *)stats_old,
			  "CPU: 7\nentries: 1\noverrun: 0\n", "junk" };
	struct hvn_tdat td;
	struct hvn_meta m;

	tdat_init(&td, "Linux gpu-host-7 6.1.0-57-amd64 #1 SMP x86_64",
		  "local global [mono] boot\n",
		  "hvnoise-record 0.4\n"
		  "host gpu-host-7.example\n"
		  "kernel 6.1.0-57-amd64\n"
		  "source bpf\n"
		  "source-why no module\n"
		  "clock 5000000000 1710046800000000000\n"
		  "watched 2-3,12\n"
		  "devices 0000:17:00.0,mlx5_0\n"
		  "clock 3000000000 1710046798000000000\n"
		  "bpf-dropped 11\n"
		  "bpf-throttled 4 250000\n"
		  "flight-recorder lost 12 ms on cpu 3\n"
		  "event hvnoise:steal\n"
		  "some-future-key 1 2 3\n"
		  "clock 9000000000 1710046804000000000");
	td.cpustat = stats;
	td.ncpustat = 4;
	HT_EXPECT_EQ(t, hvn_meta_read(&m, &td), 0);
	HT_EXPECT_STREQ(t, m.host, "gpu-host-7.example");
	HT_EXPECT_STREQ(t, m.kernel, "6.1.0-57-amd64");
	HT_EXPECT_STREQ(t, m.recorder, "hvnoise record 0.4");
	HT_EXPECT_STREQ(t, m.clock, "mono");
	HT_EXPECT_STREQ(t, m.source, "bpf");
	HT_EXPECT_STREQ(t, m.watched, "2-3,12");
	HT_EXPECT_STREQ(t, m.devices, "0000:17:00.0,mlx5_0");
	HT_EXPECT_STREQ(t, m.flight, "lost 12 ms on cpu 3");
	HT_EXPECT_EQ(t, m.overrun, 56 + 3);
	HT_EXPECT_EQ(t, m.dropped, 8 + 11);
	HT_EXPECT_STREQ(t, m.overrun_cpus, "2,5");
	HT_EXPECT_EQ(t, m.bpf_throttled, 4);
	HT_EXPECT_EQ(t, m.bpf_throttled_ns, 250000);
	/* Every pair, in file order; the start is the earliest. */
	HT_EXPECT_EQ(t, m.nclk, 3);
	if (m.nclk == 3) {
		HT_EXPECT_EQ(t, m.clk[0].mono, 5000000000ull);
		HT_EXPECT_EQ(t, m.clk[0].real, 1710046800000000000ull);
		HT_EXPECT_EQ(t, m.clk[1].mono, 3000000000ull);
		HT_EXPECT_EQ(t, m.clk[2].real, 1710046804000000000ull);
	}
	HT_EXPECT_EQ(t, m.start, 3000000000ull);
	hvn_meta_free(&m);
	HT_EXPECT_EQ(t, m.nclk, 0);
	HT_EXPECT_TRUE(t, m.clk == NULL);
}

/* trace-cmd's file: no 0x4856 text, host and kernel from UNAME. */
static void meta_trace_cmd(struct hvn_test *t)
{
	struct hvn_tdat td;
	struct hvn_meta m;

	tdat_init(&td, "Linux node1 6.12.0 #1 SMP PREEMPT x86_64",
		  "[local] global counter uptime perf mono mono_raw boot",
		  NULL);
	HT_EXPECT_EQ(t, hvn_meta_read(&m, &td), 0);
	HT_EXPECT_STREQ(t, m.recorder, "trace-cmd");
	HT_EXPECT_STREQ(t, m.host, "node1");
	HT_EXPECT_STREQ(t, m.kernel, "6.12.0");
	HT_EXPECT_STREQ(t, m.clock, "local");
	HT_EXPECT_STREQ(t, m.source, "");
	HT_EXPECT_STREQ(t, m.overrun_cpus, "");
	HT_EXPECT_EQ(t, m.nclk, 0);
	HT_EXPECT_EQ(t, m.start, 0);
	hvn_meta_free(&m);
	/* The meta text's host and kernel win over UNAME's. */
	tdat_init(&td, "Linux node1 6.12.0 #1", NULL,
		  "host other\nkernel 9.9\n");
	HT_EXPECT_EQ(t, hvn_meta_read(&m, &td), 0);
	HT_EXPECT_STREQ(t, m.host, "other");
	HT_EXPECT_STREQ(t, m.kernel, "9.9");
	HT_EXPECT_STREQ(t, m.clock, "unknown");
	hvn_meta_free(&m);
}

static void meta_odd_clock_and_uname(struct hvn_test *t)
{
	char clk[80];
	struct hvn_tdat td;
	struct hvn_meta m;

	/* No brackets, an unclosed one, an empty one, one too long. */
	tdat_init(&td, "Linux", "local global", "");
	HT_EXPECT_EQ(t, hvn_meta_read(&m, &td), 0);
	HT_EXPECT_STREQ(t, m.clock, "unknown");
	HT_EXPECT_STREQ(t, m.host, "");
	hvn_meta_free(&m);
	tdat_init(&td, NULL, "local [global", NULL);
	HT_EXPECT_EQ(t, hvn_meta_read(&m, &td), 0);
	HT_EXPECT_STREQ(t, m.clock, "unknown");
	hvn_meta_free(&m);
	tdat_init(&td, NULL, "[] local", NULL);
	HT_EXPECT_EQ(t, hvn_meta_read(&m, &td), 0);
	HT_EXPECT_STREQ(t, m.clock, "unknown");
	hvn_meta_free(&m);
	memset(clk, 'c', sizeof(clk));
	clk[0] = '[';
	clk[40] = ']';
	clk[41] = 0;
	tdat_init(&td, NULL, clk, NULL);
	HT_EXPECT_EQ(t, hvn_meta_read(&m, &td), 0);
	HT_EXPECT_STREQ(t, m.clock, "unknown");
	hvn_meta_free(&m);
	/* 31 characters fit. */
	clk[32] = ']';
	clk[33] = 0;
	tdat_init(&td, NULL, clk, NULL);
	HT_EXPECT_EQ(t, hvn_meta_read(&m, &td), 0);
	HT_EXPECT_EQ(t, strlen(m.clock), 31);
	hvn_meta_free(&m);
}

/* Over-long values are cut to their field; the lines after still count. */
static void meta_long_values(struct hvn_test *t)
{
	size_t big = 3000;
	char *text = malloc(4 * big + 200), *p = text;
	char *uname = malloc(2 * big);
	struct hvn_tdat td;
	struct hvn_meta m;

	if (!text || !uname) {
		free(text);
		free(uname);
		return;
	}
	p += sprintf(p, "host ");
	memset(p, 'h', big);
	p += big;
	p += sprintf(p, "\nwatched ");
	memset(p, 'w', big);
	p += big;
	p += sprintf(p, "\nsource modulemodulemodule\nhvnoise-record ");
	memset(p, 'r', big);
	p += big;
	p += sprintf(p, "\nclock ");
	memset(p, '9', 600);
	p += 600;
	sprintf(p, "\ndevices d\nclock 7 8\n");
	memset(uname, 'u', 2 * big - 1);
	uname[2 * big - 1] = 0;
	uname[5] = ' ';
	uname[400] = ' ';
	tdat_init(&td, uname, NULL, text);
	HT_EXPECT_EQ(t, hvn_meta_read(&m, &td), 0);
	HT_EXPECT_EQ(t, strlen(m.host), sizeof(m.host) - 1);
	HT_EXPECT_EQ(t, m.host[0], 'h');
	HT_EXPECT_EQ(t, strlen(m.kernel), sizeof(m.kernel) - 1);
	HT_EXPECT_EQ(t, strlen(m.watched), sizeof(m.watched) - 1);
	HT_EXPECT_STREQ(t, m.source, "modulemodulemod");
	HT_EXPECT_EQ(t, strlen(m.recorder), sizeof(m.recorder) - 1);
	HT_EXPECT_STREQ(t, m.devices, "d");
	/* The 600-digit clock is not a pair; the next one is. */
	HT_EXPECT_EQ(t, m.nclk, 1);
	HT_EXPECT_EQ(t, m.start, 7);
	hvn_meta_free(&m);
	free(text);
	free(uname);
}

/* Many CPUs losing events: the list is cut, never overflows. */
static void meta_many_overrun_cpus(struct hvn_test *t)
{
	enum { N = 300 };
	char **stats = calloc(N, sizeof(char *));
	struct hvn_tdat td;
	struct hvn_meta m;

	if (!stats)
		return;
	for (int i = 0; i < N; i++)
		if (asprintf(&stats[i], "CPU: %d\nentries: 1\noverrun: 1\n",
			     1000 + i) < 0)
			stats[i] = NULL;
	tdat_init(&td, NULL, NULL, NULL);
	td.cpustat = stats;
	td.ncpustat = N;
	for (int i = 0; i < N; i++)
		if (!stats[i])
			td.ncpustat = 0;
	HT_EXPECT_EQ(t, hvn_meta_read(&m, &td), 0);
	HT_EXPECT_EQ(t, m.overrun, N);
	HT_EXPECT_EQ(t, strlen(m.overrun_cpus), sizeof(m.overrun_cpus) - 1);
	HT_EXPECT_TRUE(t, !strncmp(m.overrun_cpus, "1000,1001,", 10));
	hvn_meta_free(&m);
	for (int i = 0; i < N; i++)
		free(stats[i]);
	free(stats);
}

/* What the writers put, the reader gives back: module gaps (the first 16
 * kept, all counted) and the flight recorder's unwritten incidents. */
static void meta_gaps_round_trip(struct hvn_test *t)
{
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	struct hvn_tdat td;
	struct hvn_meta m;

	if (!f)
		return;
	hvn_meta_put_flight(f, "SIGUSR1", 30, 2, 4096);
	for (int i = 0; i < 18; i++)
		hvn_meta_put_gap(f, 1000ull * i + 1, 1000ull * i + 500);
	fclose(f);
	tdat_init(&td, NULL, NULL, text);
	HT_EXPECT_EQ(t, hvn_meta_read(&m, &td), 0);
	HT_EXPECT_STREQ(t, m.flight, "SIGUSR1");
	HT_EXPECT_EQ(t, m.flight_unwritten, 2);
	HT_EXPECT_EQ(t, m.flight_unwritten_pages, 4096);
	HT_EXPECT_EQ(t, m.ngaps, 18);
	HT_EXPECT_EQ(t, m.gaps[0].start, 1);
	HT_EXPECT_EQ(t, m.gaps[15].end, 15500);
	hvn_meta_free(&m);
	free(text);
	/* Nothing unwritten: no line, nothing read. */
	text = NULL;
	f = open_memstream(&text, &len);
	if (!f)
		return;
	hvn_meta_put_flight(f, "x", 1, 0, 0);
	fclose(f);
	HT_EXPECT_TRUE(t, !strstr(text, "unwritten"));
	free(text);
}

static struct ht_case meta_cases[] = {
	HT_CASE(cpustat_full),
	HT_CASE(cpustat_no_dropped),
	HT_CASE(cpustat_odd),
	HT_CASE(meta_full),
	HT_CASE(meta_trace_cmd),
	HT_CASE(meta_odd_clock_and_uname),
	HT_CASE(meta_long_values),
	HT_CASE(meta_many_overrun_cpus),
	HT_CASE(meta_gaps_round_trip),
	{}
};
HT_SUITE(meta, meta_cases);
