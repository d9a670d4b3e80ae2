// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: the exporter's HTTP request parser (tools/lib/http.c), fed
 * what a local user may send to its port.  The bytes sit in a buffer of
 * their exact size, so ASan sees any read past what was received.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *req;
	bool head, index;
	int st;

	if (size > HVN_HTTP_REQ_MAX - 1)
		return 0;	/* the exporter never holds more */
	req = malloc(size ? size : 1);
	if (!req)
		return 0;
	memcpy(req, data, size);
	st = hvn_http_request(req, size, &head, &index);
	switch (st) {
	case 0:
		/* Waiting for more only while more fits and may complete. */
		if (size >= HVN_HTTP_REQ_MAX - 1 || memchr(req, 0, size))
			abort();
		break;
	case 200:
		/* Served only to GET or HEAD of /metrics or /. */
		if (memcmp(req, head ? "HEAD /" : "GET /", head ? 6 : 5) ||
		    (!index && memcmp(req + (head ? 5 : 4), "/metrics", 8)))
			abort();
		break;
	case 400: case 404: case 405: case 431:
		break;
	default:
		abort();
	}
	/* A NUL anywhere is refused; once the headers ended, the bytes after
	 * them (a body) change nothing. */
	if (size && !req[size - 1] && st != 400)
		abort();
	if (size && req[size - 1]) {
		int before = hvn_http_request(req, size - 1, &head, &index);

		if (before && before != st)
			abort();
	}
	free(req);
	return 0;
}
