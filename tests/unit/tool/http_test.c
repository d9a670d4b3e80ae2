// SPDX-License-Identifier: GPL-2.0
/* Cases for tools/lib/http.c, the exporter's request parser. */
#include <string.h>

#include "hvn_test.h"
#include "http.h"

static bool index_page;

static int req(const char *s, bool *head)
{
	return hvn_http_request(s, strlen(s), head, &index_page);
}

static void http_served(struct hvn_test *t)
{
	bool head = true;

	HT_EXPECT_EQ(t, req("GET /metrics HTTP/1.1\r\nHost: h\r\n\r\n", &head), 200);
	HT_EXPECT_TRUE(t, !head);
	HT_EXPECT_EQ(t, req("HEAD /metrics HTTP/1.0\r\n\r\n", &head), 200);
	HT_EXPECT_TRUE(t, head);
	/* A query is ignored; bare LFs are taken (curl, nc). */
	HT_EXPECT_EQ(t, req("GET /metrics?name[]=x HTTP/1.1\n\n", &head), 200);
	/* A body after the headers changes nothing. */
	HT_EXPECT_EQ(t, req("GET /metrics HTTP/1.1\r\n\r\nxyz", &head), 200);
	HT_EXPECT_TRUE(t, !index_page);
	/* The landing page, as every exporter has one. */
	HT_EXPECT_EQ(t, req("GET / HTTP/1.1\r\n\r\n", &head), 200);
	HT_EXPECT_TRUE(t, index_page && !head);
	HT_EXPECT_EQ(t, req("HEAD /?x HTTP/1.0\r\n\r\n", &head), 200);
	HT_EXPECT_TRUE(t, index_page && head);
}

static void http_incomplete(struct hvn_test *t)
{
	char big[HVN_HTTP_REQ_MAX];
	bool head;

	HT_EXPECT_EQ(t, req("", &head), 0);
	HT_EXPECT_EQ(t, req("GET /metrics HTTP/1.1\r\n", &head), 0);
	HT_EXPECT_EQ(t, req("GET /metrics HTTP/1.1\r\nHost: h\r\n\r", &head), 0);
	/* Headers that never end within the buffer: 431, not a wait. */
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET /metrics HTTP/1.1\r\nX: ", 26);
	HT_EXPECT_EQ(t, hvn_http_request(big, HVN_HTTP_REQ_MAX - 2, &head, &index_page), 0);
	HT_EXPECT_EQ(t, hvn_http_request(big, HVN_HTTP_REQ_MAX - 1, &head, &index_page), 431);
}

static void http_refused(struct hvn_test *t)
{
	bool head;

	HT_EXPECT_EQ(t, hvn_http_request("GET /metrics\0HTTP/1.1\r\n\r\n", 25, &head, &index_page), 400);
	/* A NUL is refused before the headers end, too. */
	HT_EXPECT_EQ(t, hvn_http_request("GET \0", 5, &head, &index_page), 400);
	HT_EXPECT_EQ(t, req("GET /metrics\r\n\r\n", &head), 400);
	HT_EXPECT_EQ(t, req("GET metrics HTTP/1.1\r\n\r\n", &head), 400);
	HT_EXPECT_EQ(t, req(" /metrics HTTP/1.1\r\n\r\n", &head), 400);
	HT_EXPECT_EQ(t, req("GET /metrics HTTP/2.0\r\n\r\n", &head), 400);
	HT_EXPECT_EQ(t, req("GET /metrics HTTP/1.1 x\r\n\r\n", &head), 400);
	HT_EXPECT_EQ(t, req("GET /metrics  HTTP/1.1\r\n\r\n", &head), 400);
	HT_EXPECT_EQ(t, req("\r\n\r\n", &head), 400);
	HT_EXPECT_EQ(t, req("POST /metrics HTTP/1.1\r\n\r\n", &head), 405);
	HT_EXPECT_EQ(t, req("get /metrics HTTP/1.1\r\n\r\n", &head), 405);
	HT_EXPECT_EQ(t, req("GETX /metrics HTTP/1.1\r\n\r\n", &head), 405);
	HT_EXPECT_EQ(t, req("GET /x HTTP/1.1\r\n\r\n", &head), 404);
	HT_EXPECT_EQ(t, req("GET /metricsx HTTP/1.1\r\n\r\n", &head), 404);
	HT_EXPECT_EQ(t, req("GET /metric HTTP/1.1\r\n\r\n", &head), 404);
	HT_EXPECT_EQ(t, req("GET /metrics/ HTTP/1.1\r\n\r\n", &head), 404);
	HT_EXPECT_TRUE(t, !strcmp(hvn_http_reason(431), "Request Header Fields Too Large"));
}

static struct ht_case http_cases[] = {
	HT_CASE(http_served),
	HT_CASE(http_incomplete),
	HT_CASE(http_refused),
	{}
};
HT_SUITE(http, http_cases);
