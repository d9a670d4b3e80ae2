// SPDX-License-Identifier: GPL-2.0
/*
 * Small helpers of the system: files, the module's parameters, clocks,
 * tracefs event lists, the stop signals.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "hvn.h"

#define MODULE_DIR	"/sys/module/hvnoise"

/* Whole file; works for tracefs and sysfs files that report size 0. */
char *hvn_read_file(const char *path, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || !buf) {
		int e = errno;

		free(buf);
		if (fd >= 0)
			close(fd);
		errno = e;
		return NULL;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *b = realloc(buf, cap * 2 + 1);

			if (!b)
				goto fail;
			buf = b;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		if (!r)
			break;
		n += r;
	}
	close(fd);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
fail:
	{
		int e = errno;

		free(buf);
		close(fd);
		errno = e;
	}
	return NULL;
}

int hvn_write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t w;

	if (fd < 0)
		return -1;
	w = write(fd, val, strlen(val));
	if (w < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return 0;
}

bool hvn_module_loaded(void)
{
	return !access(MODULE_DIR "/parameters", F_OK);
}

/* A parameter's value without the trailing newline, or NULL. */
char *hvn_module_param(const char *name)
{
	char path[256];
	char *v;
	size_t n;

	snprintf(path, sizeof(path), MODULE_DIR "/parameters/%s", name);
	v = hvn_read_file(path, &n);
	while (v && n && isspace((unsigned char)v[n - 1]))
		v[--n] = 0;
	return v;
}

uint64_t hvn_now(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The events of a tracefs system directory that have a format, sorted. */
int hvn_list_events(const char *sysdir, char ***names)
{
	DIR *d = opendir(sysdir);
	struct dirent *de;
	int n = 0;

	*names = NULL;
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char path[4400];
		char **l;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/format", sysdir,
			 de->d_name);
		if (access(path, R_OK))
			continue;
		l = realloc(*names, (n + 1) * sizeof(*l));
		if (!l)
			break;
		*names = l;
		l[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(*names, n, sizeof(**names), cmp_str);
	return n;
}

volatile sig_atomic_t hvn_stop_sig;

static void on_stop(int sig)
{
	hvn_stop_sig = sig;
}

void hvn_catch_stop(void)
{
	struct sigaction sa = { .sa_handler = on_stop };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int hvn_create(const char *path, bool replace)
{
	/* After the unlink, O_EXCL refuses whatever appears in between. */
	if (replace && unlink(path) && errno != ENOENT)
		return -1;
	return open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
}

void hvn_nofile_for(int ncpus)
{
	/* Per possible CPU: its buffer's reader, the recording's pieces (the
	 * trace's and the BPF source's), a perf timer and its link. */
	rlim_t need = (rlim_t)ncpus * 8 + 256;
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) || r.rlim_cur >= need)
		return;
	if (r.rlim_max != RLIM_INFINITY && r.rlim_max < need) {
		/* Root may raise the hard limit too, up to fs.nr_open. */
		struct rlimit up = { need, need };

		if (!setrlimit(RLIMIT_NOFILE, &up))
			return;
		hvn_warn("%d CPUs may need %llu open files; the limit is %llu (ulimit -n)",
			 ncpus, (unsigned long long)need,
			 (unsigned long long)r.rlim_max);
		need = r.rlim_max;
	}
	r.rlim_cur = need;
	setrlimit(RLIMIT_NOFILE, &r);
}

void hvn_glob_escape(const char *s, char *out, size_t len)
{
	char *e = out;

	for (; *s && e < out + len - 2; s++) {
		if (strchr("*?[]\\", *s))
			*e++ = '\\';
		*e++ = *s;
	}
	*e = 0;
}
