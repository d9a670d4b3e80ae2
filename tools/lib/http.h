/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exporter's side of HTTP/1.x: which answer a request gets.  Only GET
 * and HEAD of /metrics (and of /, a page that links to it) are served; the
 * rest is refused by status code.
 */
#ifndef HVN_HTTP_H
#define HVN_HTTP_H

#include <stdbool.h>
#include <stddef.h>

/* The request line and headers, at most (431 beyond). */
#define HVN_HTTP_REQ_MAX	4096

/*
 * The status to answer the request whose first @len bytes are @req (not
 * NUL-terminated, not changed): 0 while the headers have not ended and
 * more may come; 200 for GET or HEAD of /metrics or / (*@head tells
 * which method, *@index whether it was /);
 * 400 (a NUL byte, or no "METHOD /path HTTP/1.x" line), 405 (another
 * method), 404 (another path) or 431 (no end of headers within
 * HVN_HTTP_REQ_MAX - 1 bytes).
 */
int hvn_http_request(const char *req, size_t len, bool *head, bool *index);

/* The reason phrase of a status this file returns ("Not Found"). */
const char *hvn_http_reason(int status);

#endif /* HVN_HTTP_H */
