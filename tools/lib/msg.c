// SPDX-License-Identifier: GPL-2.0
/* Messages (msg.h): the prefix, the levels of -q and -v. */
#include <stdarg.h>
#include <stdio.h>

#include "msg.h"

const char *hvn_prog = "hvnoise";
bool hvn_quiet;
int hvn_verbosity;

/* Messages said only at @level or above of -q (-1) and -v (1, 2). */
static bool said(int level)
{
	return !hvn_quiet && hvn_verbosity >= level;
}

__attribute__((weak)) void hvn_vmessage(const char *kind, const char *fmt,
					va_list ap)
{
	fprintf(stderr, "%s: %s", hvn_prog, kind ? kind : "");
	vfprintf(stderr, fmt, ap);
	if (kind)
		fputc('\n', stderr);
}

static void message(int level, const char *kind, const char *fmt, va_list ap)
{
	if (said(level))
		hvn_vmessage(kind, fmt, ap);
}

void hvn_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	message(-1, "", fmt, ap);
	va_end(ap);
}

void hvn_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	message(0, "warning: ", fmt, ap);
	va_end(ap);
}

void hvn_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	message(1, "debug: ", fmt, ap);
	va_end(ap);
}

void hvn_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	message(0, NULL, fmt, ap);
	va_end(ap);
}
