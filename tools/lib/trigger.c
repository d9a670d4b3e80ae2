// SPDX-License-Identifier: GPL-2.0
/* The flight recorder's trigger file (trigger.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hvn.h"
#include "trigger.h"

void hvn_trigger_parse(const char *line, struct hvn_trigger *t)
{
	unsigned long long at, w;
	int n = 0;

	memset(t, 0, sizeof(*t));
	/* The directory may be the jobs': a window a request could not
	 * have made is no window (the line is a plain trigger then). */
	if (sscanf(line, "at %llu window %llu:%n", &at, &w, &n) == 2 && n &&
	    at && at <= HVN_TRIGGER_AT_MAX && w && w <= HVN_TRIGGER_WINDOW_MAX) {
		t->at = at;
		t->window = w;
		line += n;
		line += strspn(line, " ");
	}
	snprintf(t->why, sizeof(t->why), "%.*s", (int)strcspn(line, "\n"), line);
	/* It goes into logs and file metadata: printable only. */
	for (char *p = t->why; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
}

int hvn_trigger_write(const char *path, const struct hvn_trigger *t)
{
	char tmp[4200];
	int fd, len, err = 0;
	char text[300];

	if (t->at)
		len = snprintf(text, sizeof(text), "at %llu window %llu: %s\n",
			       (unsigned long long)t->at,
			       (unsigned long long)t->window, t->why);
	else
		len = snprintf(text, sizeof(text), "%s\n", t->why);
	if (len >= (int)sizeof(text))
		len = sizeof(text) - 1;
	snprintf(tmp, sizeof(tmp), "%s.hvnoise-tmp", path);
	fd = hvn_create(tmp, true);
	if (fd < 0)
		return -1;
	if (write(fd, text, len) != len)
		err = errno ? errno : EIO;
	if (close(fd) && !err)
		err = errno;
	/* A rename is a new inode: the recorder sees a new trigger. */
	if (!err && rename(tmp, path))
		err = errno;
	if (err) {
		unlink(tmp);
		errno = err;
		return -1;
	}
	return 0;
}
