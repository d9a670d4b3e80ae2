// SPDX-License-Identifier: GPL-2.0
/*
 * HTTP/1.x requests to the exporter (RFC 9112): the request line is read
 * and the headers only skipped, so a bounded buffer and a few compares
 * are the whole parser a local port open to any user exposes.
 */
#include <string.h>

#include "http.h"

/* The end of the headers: an empty line (CRLF or, leniently, LF). */
static bool headers_end(const char *s, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (s[i] == '\n' &&
		    (s[i - 1] == '\n' ||
		     (i >= 3 && s[i - 1] == '\r' && s[i - 2] == '\n' &&
		      s[i - 3] == '\r')))
			return true;
	return false;
}

int hvn_http_request(const char *req, size_t len, bool *head, bool *index)
{
	const char *eol, *sp1, *sp2, *path, *q;
	size_t mlen, vlen;

	*head = false;
	*index = false;
	if (memchr(req, 0, len))
		return 400;
	if (!headers_end(req, len))
		return len >= HVN_HTTP_REQ_MAX - 1 ? 431 : 0;
	/* The request line: METHOD SP /path SP HTTP/1.x, nothing more. */
	eol = req;
	while (*eol != '\r' && *eol != '\n')
		eol++;
	sp1 = memchr(req, ' ', eol - req);
	sp2 = sp1 ? memchr(sp1 + 1, ' ', eol - sp1 - 1) : NULL;
	if (!sp2 || sp1 == req || sp1[1] != '/')
		return 400;
	vlen = eol - sp2 - 1;
	if (vlen != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) ||
	    (sp2[8] != '0' && sp2[8] != '1'))
		return 400;
	mlen = sp1 - req;
	*head = mlen == 4 && !memcmp(req, "HEAD", 4);
	if (!*head && (mlen != 3 || memcmp(req, "GET", 3)))
		return 405;
	/* The path, without its query (Prometheus sends none; curl may). */
	path = sp1 + 1;
	q = memchr(path, '?', sp2 - path);
	*index = (q ? q : sp2) - path == 1;
	if (!*index && ((q ? q : sp2) - path != 8 || memcmp(path, "/metrics", 8)))
		return 404;
	return 200;
}

const char *hvn_http_reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 431:
		return "Request Header Fields Too Large";
	default:
		return "Internal Server Error";
	}
}
