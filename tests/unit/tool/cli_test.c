// SPDX-License-Identifier: GPL-2.0
/* Cases for tools/lib/cli.c: times with rtla's suffixes. */
#include "hvn_test.h"
#include "cli.h"


static void cli_secs(struct hvn_test *t)
{
	static const struct {
		const char *arg;
		int ret;
		double v;
	} c[] = {
		{ "1.5", 0, 1.5 }, { "500ms", 0, 0.5 }, { "30s", 0, 30 },
		{ "2m", 0, 120 }, { "1h", 0, 3600 }, { "0.5d", 0, 43200 },
		{ "1x", -1, 0 }, { "", -1, 0 }, { "m", -1, 0 }, { "5mm", -1, 0 },
		{ "5 m", -1, 0 }, { "nan", -1, 0 }, { "1e999s", -1, 0 },
		{ "2d", -1, 0 }, { "-1s", -1, 0 }, { " 1s", -1, 0 },
		{ "0x1m", -1, 0 }, { "+1s", -1, 0 }, { "1e1s", 0, 10 },
	};

	hvn_quiet = true;
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		double v = 0;

		HT_EXPECT_EQ(t, hvn_cli_secs("-d", c[k].arg, 0, 86400, &v), c[k].ret);
		if (!c[k].ret)
			HT_EXPECT_TRUE(t, v == c[k].v);
	}
	hvn_quiet = false;
}

static struct ht_case cli_cases[] = {
	HT_CASE(cli_secs),
	{}
};
HT_SUITE(cli, cli_cases);
