// SPDX-License-Identifier: GPL-2.0
/* Cases for tools/lib/trigger.c: the flight recorder's trigger file. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hvn_test.h"
#include "trigger.h"

struct poller {
	const char *path;
	atomic_int stop, seen;
	int torn;
};

/* What the recorder does each poll: a file there is read whole. */
static void *poll_trigger(void *arg)
{
	struct poller *p = arg;
	char text[400];

	while (!atomic_load(&p->stop)) {
		ssize_t n;
		int fd = open(p->path, O_RDONLY);

		if (fd < 0)
			continue;
		n = read(fd, text, sizeof(text));
		close(fd);
		atomic_fetch_add(&p->seen, 1);
		if (n <= 0 || text[n - 1] != '\n')
			p->torn++;
	}
	return NULL;
}

/* A plugin writing while the recorder polls: never an empty or half file
 * (an incident without its why), and never the temporary file left. */
static void trigger_write_whole(struct hvn_test *t)
{
	char dir[] = "/tmp/hvn-trigger-XXXXXX", path[64];
	struct poller p = { .path = path };
	struct hvn_trigger tr = { 0 };
	pthread_t th;
	uint64_t ino = 0;
	int fails = 0;

	HT_EXPECT_TRUE(t, mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/trigger", dir);
	snprintf(tr.why, sizeof(tr.why), "nccl stall: AllReduce proxy op took 300.000 ms");
	pthread_create(&th, NULL, poll_trigger, &p);
	for (int i = 0; i < 3000 || (atomic_load(&p.seen) < 100 && i < 1000000); i++)
		fails += hvn_trigger_write(path, &tr, &ino) != 0;
	atomic_store(&p.stop, 1);
	pthread_join(th, NULL);
	HT_EXPECT_EQ(t, fails, 0);
	HT_EXPECT_TRUE(t, atomic_load(&p.seen) >= 100);
	HT_EXPECT_EQ(t, p.torn, 0);
	unlink(path);
	/* Nothing else left there: rmdir() of a non-empty one fails. */
	HT_EXPECT_EQ(t, rmdir(dir), 0);
}

/* The line written is the line parsed: the plain form and a window. */
static void trigger_round_trip(struct hvn_test *t)
{
	char dir[] = "/tmp/hvn-trigger-XXXXXX", path[64], line[300] = "";
	struct hvn_trigger in = { .at = 1700000000123456789ull,
				  .window = 500000000 }, out;
	struct stat st;
	uint64_t ino = 0;
	FILE *f;

	HT_EXPECT_TRUE(t, mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/trigger", dir);
	snprintf(in.why, sizeof(in.why), "hvnoise trigger");
	HT_EXPECT_EQ(t, hvn_trigger_write(path, &in, &ino), 0);
	HT_EXPECT_EQ(t, stat(path, &st), 0);
	HT_EXPECT_EQ(t, (uint64_t)st.st_ino, ino);
	f = fopen(path, "r");
	HT_EXPECT_TRUE(t, f && fgets(line, sizeof(line), f));
	if (f)
		fclose(f);
	hvn_trigger_parse(line, &out);
	HT_EXPECT_EQ(t, out.at, in.at);
	HT_EXPECT_EQ(t, out.window, in.window);
	HT_EXPECT_STREQ(t, out.why, "hvnoise trigger");
	/* A window nobody could have asked for is a plain line. */
	hvn_trigger_parse("at 5 window 99999999999999999: x\n", &out);
	HT_EXPECT_EQ(t, out.at, 0);
	HT_EXPECT_STREQ(t, out.why, "at 5 window 99999999999999999: x");
	unlink(path);
	rmdir(dir);
}

static struct ht_case trigger_cases[] = {
	HT_CASE(trigger_write_whole),
	HT_CASE(trigger_round_trip),
	{}
};
HT_SUITE(trigger, trigger_cases);
