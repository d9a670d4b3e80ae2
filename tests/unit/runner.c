// SPDX-License-Identifier: GPL-2.0
/*
 * Userspace runner of the unit cases (tests/lib/ and tests/unit/tool/),
 * in KTAP: "ok N unit/SUITE.CASE" or "not ok N ...", each failed
 * expectation a "# FILE:LINE: ..." line before it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "hvn_test.h"

static struct ht_suite *suites;

void ht_register(struct ht_suite *s)
{
	struct ht_suite **p = &suites;

	/* Keep registration order stable: append. */
	while (*p)
		p = &(*p)->next;
	*p = s;
}

void ht_fail(struct hvn_test *t, const char *file, int line,
	     const char *fmt, ...)
{
	va_list ap;

	fprintf(stdout, "# %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	t->failures++;
}

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL;
	int passed = 0, failed = 0, n = 0;
	struct ht_suite *s;
	const struct ht_case *c;

	printf("KTAP version 1\n");
	for (s = suites; s; s = s->next) {
		for (c = s->cases; c->run_case; c++) {
			struct hvn_test t = { .name = c->name };

			if (only && !strstr(c->name, only))
				continue;
			c->run_case(&t);
			printf("%sok %d unit/%s.%s\n", t.failures ? "not " : "",
			       ++n, s->name, c->name);
			if (t.failures)
				failed++;
			else
				passed++;
		}
	}
	printf("1..%d\n# unit: %d passed, %d failed\n", n, passed, failed);
	return failed ? 1 : 0;
}
