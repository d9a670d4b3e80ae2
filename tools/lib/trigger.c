// SPDX-License-Identifier: GPL-2.0
/* The flight recorder's trigger file (trigger.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* mkostemp(); the NCCL plugin builds this file too */
#endif
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/*
 * @text into @path through a new file renamed over it, so that a reader
 * never sees it empty or half written (a job's plugin and the recorder
 * poll it concurrently): 0, or -1 and errno; the new file's inode in
 * *@ino.  The temporary name is made unique by mkostemp(): the ranks of
 * a job, in containers of their own thread ids, share the directory, and
 * no writer removes a name it did not create.
 */
static int replace(const char *path, const char *text, int len, uint64_t *ino)
{
	char tmp[4200];
	struct stat st;
	int fd, err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.hvnoise-tmp.XXXXXX", path) >=
	    (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* Read by the other side, root or a job's user: nothing secret. */
	if (fchmod(fd, 0644))
		err = errno;
	if (!err && write(fd, text, len) != len)
		err = errno ? errno : EIO;
	if (!err && ino && !fstat(fd, &st))
		*ino = st.st_ino;
	if (close(fd) && !err)
		err = errno;
	if (!err && rename(tmp, path))
		err = errno;
	if (err) {
		unlink(tmp);
		errno = err;
		return -1;
	}
	return 0;
}

int hvn_trigger_write(const char *path, const struct hvn_trigger *t,
		      uint64_t *ino)
{
	char text[300];
	int len;

	if (t->at)
		len = snprintf(text, sizeof(text), "at %llu window %llu: %s\n",
			       (unsigned long long)t->at,
			       (unsigned long long)t->window, t->why);
	else
		len = snprintf(text, sizeof(text), "%s\n", t->why);
	if (len >= (int)sizeof(text))
		len = sizeof(text) - 1;
	/* A rename is a new inode: the recorder sees a new trigger. */
	return replace(path, text, len, ino);
}

int hvn_trigger_answer(const char *path, uint64_t ino, const char *what)
{
	char p[4200], text[300];
	int len;

	snprintf(p, sizeof(p), "%s.taken", path);
	len = snprintf(text, sizeof(text), "%llu %s\n", (unsigned long long)ino,
		       what);
	if (len >= (int)sizeof(text))
		len = sizeof(text) - 1;
	return replace(p, text, len, NULL);
}

bool hvn_trigger_answered(const char *path, uint64_t ino, char *what,
			  size_t len)
{
	char p[4200], d[4200], text[301], *sp;
	struct stat st, dir;
	ssize_t n = -1;
	bool yes;
	int fd;

	/*
	 * The directory may be writable by the jobs: no link, no FIFO to
	 * block on, only a regular file of the directory's owner (the
	 * recorder's), read a line's worth.
	 */
	snprintf(p, sizeof(p), "%s.taken", path);
	fd = open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	snprintf(d, sizeof(d), "%s", path);
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && !stat(dirname(d), &dir) &&
	    st.st_uid == dir.st_uid)
		n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return false;
	text[n] = 0;
	yes = strtoull(text, &sp, 10) == ino && *sp == ' ';
	if (yes)
		snprintf(what, len, "%.*s", (int)strcspn(sp + 1, "\n"), sp + 1);
	return yes;
}
