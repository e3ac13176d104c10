/* http.c: the HTTP side of iolens export: GET /metrics with libmicrohttpd, and what it does with bad requests. */
#include "out/http.h"

#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "out/prom.h"

#define MAX_CONNECTIONS 64u      /* beyond, a connection is refused at once: scrapers are few */
#define REQUEST_MEMORY (16u << 10) /* a request's line and headers: more is "too large" */
#define CONNECTION_TIMEOUT 10u    /* seconds a connection may stay idle */

struct http_server {
	struct http_options options;
	struct MHD_Daemon *daemon;
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type, char *body, size_t len,
			     enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result fixed(struct MHD_Connection *c, unsigned status, const char *text)
{
	return reply(c, status, "text/plain; charset=utf-8", (char *)text, strlen(text), MHD_RESPMEM_PERSISTENT);
}

/*
 * The URL's %XX decoded, as libmicrohttpd does, but for %00: decoded, it would end the path
 * there ("/metrics%00" would be "/metrics"); left as it is, such a path matches nothing (404).
 */
static size_t unescape(void *context, struct MHD_Connection *c, char *s)
{
	(void)context;
	(void)c;
	if (strstr(s, "%00"))
		return strlen(s);
	return MHD_http_unescape(s);
}

static enum MHD_Result handle(void *context, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_size, void **state)
{
	struct http_server *server = context;
	bool get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
	char *body;
	size_t len;
	bool om;

	(void)version;
	(void)upload;
	if (*upload_size) { /* a body nobody asked for: dropped */
		*upload_size = 0;
		return MHD_YES;
	}
	if (!*state) { /* the headers are in: answer once the whole request is */
		*state = server;
		if (get)
			goto answer;
		return MHD_YES;
	}
answer:
	if (!get)
		return fixed(c, MHD_HTTP_METHOD_NOT_ALLOWED, "405 method not allowed: GET or HEAD /metrics\n");
	if (!strcmp(url, "/"))
		return fixed(c, MHD_HTTP_OK, "iolens export: the metrics are at /metrics\n");
	if (strcmp(url, "/metrics"))
		return fixed(c, MHD_HTTP_NOT_FOUND, "404 not found: the metrics are at /metrics\n");
	om = prom_wants_openmetrics(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT));
	if (!(body = server->options.render(server->options.context, om, &len)))
		return fixed(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "500 the metrics could not be gathered\n");
	return reply(c, MHD_HTTP_OK, om ? PROM_OPENMETRICS_TYPE : PROM_TEXT_TYPE, body, len, MHD_RESPMEM_MUST_FREE);
}

int http_parse_listen(const char *text, struct sockaddr_storage *addr, const char **why)
{
	char host[128];
	const char *colon = strrchr(text, ':'), *port = colon ? colon + 1 : NULL;
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE, .ai_socktype = SOCK_STREAM };
	struct addrinfo *found;
	size_t host_len;
	char *end;
	long number;

	if (!colon || !*port)
		return *why = "ADDR:PORT, please (127.0.0.1:9717, [::1]:9717, :9717 for every address)", -1;
	number = strtol(port, &end, 10);
	if (*end || number < 1 || number > 65535 || *port == '+' || *port == '-')
		return *why = "the port is a number from 1 to 65535", -1;
	host_len = (size_t)(colon - text);
	if (host_len >= 2 && text[0] == '[' && text[host_len - 1] == ']') {
		text++;
		host_len -= 2;
	}
	if (host_len >= sizeof(host))
		return *why = "the address is too long", -1;
	memcpy(host, text, host_len);
	host[host_len] = '\0';
	if (getaddrinfo(host_len ? host : NULL, port, &hints, &found) != 0 || !found)
		return *why = "the address is not a numeric IPv4 or IPv6 address", -1;
	memcpy(addr, found->ai_addr, found->ai_addrlen);
	freeaddrinfo(found);
	return 0;
}

struct http_server *http_start(const struct http_options *options)
{
	struct http_server *server = calloc(1, sizeof(*server));

	if (!server)
		return NULL;
	server->options = *options;
	/* One thread serves every request in turn: a scrape takes milliseconds, and nothing needs a lock. */
	server->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO |
						  (options->addr.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
					  0, NULL, NULL, handle, server, MHD_OPTION_SOCK_ADDR,
					  (const struct sockaddr *)&server->options.addr, MHD_OPTION_CONNECTION_LIMIT,
					  MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT, CONNECTION_TIMEOUT,
					  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REQUEST_MEMORY,
					  MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL, MHD_OPTION_END);
	if (!server->daemon) {
		int saved = errno ? errno : EADDRINUSE;

		free(server);
		errno = saved;
		return NULL;
	}
	return server;
}

void http_serve(struct http_server *server, volatile sig_atomic_t *stop)
{
	(void)server;
	while (!*stop)
		pause();
}

void http_stop(struct http_server *server)
{
	if (!server)
		return;
	MHD_stop_daemon(server->daemon);
	free(server);
}
