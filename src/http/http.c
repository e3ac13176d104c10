/* SPDX-License-Identifier: GPL-2.0-or-later */
/* http.c: the HTTP side of iolens export: GET /metrics with libmicrohttpd, and what it does with bad requests. */
#include "http/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include "common/dl.h"
#include "common/util.h"
#include "render/prom.h"
#include "http/http_auth.h"
#include "http/web_config.h"

/* libmicrohttpd, opened by http_load (dl.h): export only, not every start-up. */
static DLSYM_POINTER(MHD_add_response_header);
static DLSYM_POINTER(MHD_get_connection_info);
static DLSYM_POINTER(MHD_lookup_connection_value);
static DLSYM_POINTER(MHD_free);
static DLSYM_POINTER(MHD_destroy_response);
static DLSYM_POINTER(MHD_create_response_from_buffer);
static DLSYM_POINTER(MHD_stop_daemon);
static DLSYM_POINTER(MHD_start_daemon);
static DLSYM_POINTER(MHD_run_wait);
static DLSYM_POINTER(MHD_queue_response);
static DLSYM_POINTER(MHD_queue_basic_auth_fail_response);
static DLSYM_POINTER(MHD_http_unescape);
static DLSYM_POINTER(MHD_basic_auth_get_username_password);
static DLSYM_POINTER(MHD_get_connection_values);
static DLSYM_POINTER(MHD_suspend_connection);
static DLSYM_POINTER(MHD_resume_connection);
static void *libmicrohttpd;
/* gnutls, which libmicrohttpd loads for TLS: for answer_once. */
static DLSYM_POINTER(gnutls_record_send);
static void *libgnutls;
/* zlib, for gzip-compressed answers (deflateInit2 is a macro over deflateInit2_). */
static DLSYM_POINTER(deflateInit2_);
static DLSYM_POINTER(deflateBound);
static DLSYM_POINTER(deflate);
static DLSYM_POINTER(deflateEnd);
static void *libz;

int http_load(char *why, size_t why_len)
{
	if (dl_open_many(&libz, ZLIB_SONAME, why, why_len, DLSYM_ARG(deflateInit2_), DLSYM_ARG(deflateBound),
			 DLSYM_ARG(deflate), DLSYM_ARG(deflateEnd), NULL) != 0)
		return -1;
	return dl_open_many(&libmicrohttpd, MHD_SONAME, why, why_len, DLSYM_ARG(MHD_add_response_header),
			    DLSYM_ARG(MHD_get_connection_info), DLSYM_ARG(MHD_lookup_connection_value),
			    DLSYM_ARG(MHD_free), DLSYM_ARG(MHD_destroy_response),
			    DLSYM_ARG(MHD_create_response_from_buffer), DLSYM_ARG(MHD_stop_daemon),
			    DLSYM_ARG(MHD_start_daemon), DLSYM_ARG(MHD_run_wait), DLSYM_ARG(MHD_queue_response),
			    DLSYM_ARG(MHD_queue_basic_auth_fail_response), DLSYM_ARG(MHD_http_unescape),
			    DLSYM_ARG(MHD_basic_auth_get_username_password), DLSYM_ARG(MHD_get_connection_values),
			    DLSYM_ARG(MHD_suspend_connection), DLSYM_ARG(MHD_resume_connection), NULL);
}

/*
 * The connection model, against clients that connect and send nothing, or a header line every
 * few seconds forever (slowloris), from any address, the scraper's too:
 *  - one thread runs libmicrohttpd's epoll loop (MHD_run_wait), and between its turns closes
 *    what overstayed: a request (headers and body) not in REQUEST_DEADLINE after the
 *    connection was accepted or its previous response sent, a response not sent in
 *    RESPONSE_DEADLINE. libmicrohttpd's own timeout restarts at every byte: a client that
 *    trickles would hold its connection for ever. (Go's http.Server: ReadHeaderTimeout.)
 *  - room for many connections (max_connections, the file limit raised to match), and when
 *    they are all taken, or one address holds more than half of them, the oldest connection
 *    still waiting for its request is closed to make room: the new one is kept, since a
 *    scraper is a new connection that asks at once, and an attacker can share its address.
 * Closing is shutdown(2) of the socket, which libmicrohttpd then sees and cleans up; it is
 * only done from the thread that runs the loop, before libmicrohttpd closes the descriptor.
 */
#define REQUEST_MEMORY (16u << 10)         /* a request's line and headers: more is "too large" */
#define CONNECTION_TIMEOUT 10u              /* seconds a connection may stay without a byte */
#define REQUEST_DEADLINE_NS (5 * 1000000000ull)
#define RESPONSE_DEADLINE_NS (30 * 1000000000ull)
#define SWEEP_MS 250                        /* how often, at least, the deadlines are looked at */
#define CLOSING_ROOM 64u                    /* libmicrohttpd's limit is this above ours: what we shut
					       down counts there until it is closed */
#define SPARE_FILES 64u                     /* descriptors for everything but connections */

/* A connection, from accept to close. */
struct client {
	struct client *prev, *next; /* by since_ns, oldest first */
	struct MHD_Connection *connection;
	int fd;
	struct sockaddr_storage addr;
	uint64_t since_ns;          /* accepted, or its previous response sent */
	bool answered;              /* its response is queued: being sent */
	bool closing;               /* shut down by us: libmicrohttpd closes it at its next look */
	struct auth_check *check;   /* its password being checked: suspended until it is decided */
	bool in_request;            /* its request has reached handle(), and is not over */
};

struct http_server {
	struct http_options options;
	struct MHD_Daemon *daemon;
	struct auth *auth;          /* with basic auth */
	struct client *oldest, *newest;
	unsigned open;              /* clients not closing */
	unsigned max_connections;
	bool started;
	char start_error[256];      /* what libmicrohttpd said while starting */
};

/* The connection's client, or NULL for one not tracked (no memory when it came). */
static struct client *client_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *info = sym_MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return info ? info->socket_context : NULL;
}

/* After a response is queued: the connection's deadline is now the response's. */
static enum MHD_Result answered(struct MHD_Connection *c, enum MHD_Result queued)
{
	struct client *client = client_of(c);

	if (client && queued == MHD_YES)
		client->answered = true;
	return queued;
}

/* body gzip-compressed (the gzip format, not zlib's): NULL when zlib fails. */
static char *gzip(const char *body, size_t len, size_t *gzip_len)
{
	z_stream z = {0};
	char *out;

	if (sym_deflateInit2_(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
			      (int)sizeof(z)) != Z_OK)
		return NULL;
	out = malloc(sym_deflateBound(&z, len));
	z.next_in = (Bytef *)body;
	z.avail_in = len;
	z.next_out = (Bytef *)out;
	z.avail_out = out ? sym_deflateBound(&z, len) : 0;
	if (!out || sym_deflate(&z, Z_FINISH) != Z_STREAM_END) {
		free(out);
		sym_deflateEnd(&z);
		return NULL;
	}
	*gzip_len = z.total_out;
	sym_deflateEnd(&z);
	return out;
}

/* encoding: the body's Content-Encoding, or NULL; vary: the body depends on Accept and Accept-Encoding. */
static enum MHD_Result reply_encoded(struct MHD_Connection *c, unsigned status, const char *type, char *body,
				     size_t len, enum MHD_ResponseMemoryMode mode, const char *encoding, bool vary)
{
	struct MHD_Response *r = sym_MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	sym_MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (encoding)
		sym_MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, encoding);
	if (vary)
		sym_MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept, Accept-Encoding");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		sym_MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	rc = sym_MHD_queue_response(c, status, r);
	sym_MHD_destroy_response(r);
	return answered(c, rc);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type, char *body, size_t len,
			     enum MHD_ResponseMemoryMode mode)
{
	return reply_encoded(c, status, type, body, len, mode, NULL, false);
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
	return sym_MHD_http_unescape(s);
}

/* ---- Requests -------------------------------------------------------------------------------- */

/* How a request says where it goes and how long its body is: its Host, Content-Length and Transfer-Encoding lines. */
struct framing {
	unsigned hosts, content_lengths, transfer_encodings;
	bool bad_host, chunked;
};

static enum MHD_Result count_framing(void *context, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct framing *f = context;

	(void)kind;
	if (!strcasecmp(key, MHD_HTTP_HEADER_HOST)) {
		f->hosts++;
		f->bad_host |= !http_valid_host(value);
	} else if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)) {
		f->content_lengths++;
	} else if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
		f->transfer_encodings++;
		f->chunked = !strcasecmp(value, "chunked");
	}
	return MHD_YES;
}

/*
 * RFC 9112's rules libmicrohttpd 0.9.75 does not keep: one Host (none only in HTTP/1.0), one
 * Content-Length and not with Transfer-Encoding (two lengths are how requests are smuggled past
 * a proxy that reads the other one), no transfer coding but chunked. The status to answer
 * with and *text, or 0.
 */
static unsigned framing_error(struct MHD_Connection *c, const char *version, const char **text)
{
	struct framing f = {0};

	sym_MHD_get_connection_values(c, MHD_HEADER_KIND, count_framing, &f);
	if (f.hosts > 1 || f.bad_host || (!f.hosts && strcmp(version, MHD_HTTP_VERSION_1_0)))
		return *text = "400 bad request: one Host header, please\n", MHD_HTTP_BAD_REQUEST;
	if (f.content_lengths > 1)
		return *text = "400 bad request: Content-Length more than once\n", MHD_HTTP_BAD_REQUEST;
	if (f.content_lengths && f.transfer_encodings)
		return *text = "400 bad request: both Content-Length and Transfer-Encoding\n", MHD_HTTP_BAD_REQUEST;
	if (f.transfer_encodings && (f.transfer_encodings > 1 || !f.chunked))
		return *text = "501 not implemented: a Transfer-Encoding other than chunked\n",
		       MHD_HTTP_NOT_IMPLEMENTED;
	return 0;
}

static enum MHD_Result unauthorized(struct MHD_Connection *c)
{
	static const char text[] = "401 unauthorized: a user and password, please (basic auth)\n";
	struct MHD_Response *r =
	    sym_MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	sym_MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	rc = sym_MHD_queue_basic_auth_fail_response(c, "iolens", r); /* WWW-Authenticate: Basic realm="iolens" */
	sym_MHD_destroy_response(r);
	return answered(c, rc);
}

/*
 * What names a client for the bound on its password checks: its IPv4 address, or its IPv6 /64
 * (which a host has at least).
 */
static size_t client_key(const struct sockaddr_storage *addr, unsigned char key[AUTH_CLIENT_KEY])
{
	if (addr->ss_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)addr)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a))
			return memcpy(key, a->s6_addr + 12, 4), 4;
		return memcpy(key, a->s6_addr, 8), 8;
	}
	if (addr->ss_family == AF_INET)
		return memcpy(key, &((const struct sockaddr_in *)addr)->sin_addr, 4), 4;
	return 0;
}

/* From the bcrypt thread: a check decided, its connection to be answered. */
static void resume(void *connection)
{
	sym_MHD_resume_connection(connection);
}

/*
 * The request's user and password. A check answered from memory is answered at once; one that
 * needs bcrypt suspends the connection (the loop goes on serving others) until resume(), which
 * brings the request back here with *state its check.
 */
static enum auth_answer check_password(struct http_server *server, struct MHD_Connection *c, void **state)
{
	char *password = NULL, *user = sym_MHD_basic_auth_get_username_password(c, &password);
	struct client *client = client_of(c);
	unsigned char key[AUTH_CLIENT_KEY];
	enum auth_answer answer = AUTH_REFUSED;
	struct auth_check *check;

	if (*state != server) { /* back from its check */
		check = *state;
		answer = auth_check_answer(server->auth, check);
		auth_check_release(server->auth, check);
		*state = server;
		if (client)
			client->check = NULL;
		if (answer == AUTH_PENDING) /* not expected: resumed only once decided */
			answer = AUTH_BUSY;
	} else if (user && password) {
		/* An untracked connection could not be resumed when the server stops: none of its checks are queued. */
		answer = !client
		    ? AUTH_BUSY
		    : auth_verify(server->auth, user, password, key, client_key(&client->addr, key), resume, c, &check);
		if (answer == AUTH_PENDING) {
			client->check = check;
			*state = check;
			sym_MHD_suspend_connection(c);
		}
	}
	if (password)
		explicit_bzero(password, strlen(password));
	sym_MHD_free(user);
	sym_MHD_free(password);
	return answer;
}

/* A request for us, whole and let in: the metrics, or where they are. */
static enum MHD_Result respond(struct http_server *server, struct MHD_Connection *c, const char *url)
{
	char *body, *compressed;
	size_t len, compressed_len;
	enum prom_format format;
	const char *type;

	if (!strcmp(url, "/"))
		return fixed(c, MHD_HTTP_OK, "iolens export: the metrics are at /metrics\n");
	if (strcmp(url, "/metrics"))
		return fixed(c, MHD_HTTP_NOT_FOUND, "404 not found: the metrics are at /metrics\n");
	format = prom_negotiate(sym_MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT));
	type = format == PROM_FORMAT_PROTOBUF   ? PROM_PROTOBUF_TYPE
	    : format == PROM_FORMAT_OPENMETRICS ? PROM_OPENMETRICS_TYPE
						: PROM_TEXT_TYPE;
	if (!(body = server->options.render(server->options.context, format, &len)))
		return fixed(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "500 the metrics could not be gathered\n");
	/* 146 KB of text is some 15 KB gzipped, as Prometheus asks for it. */
	if (http_accepts_gzip(sym_MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING)) &&
	    (compressed = gzip(body, len, &compressed_len))) {
		free(body);
		return reply_encoded(c, MHD_HTTP_OK, type, compressed, compressed_len,
				     MHD_RESPMEM_MUST_FREE, "gzip", true);
	}
	return reply_encoded(c, MHD_HTTP_OK, type, body, len, MHD_RESPMEM_MUST_FREE,
			     NULL, true);
}

/*
 * Called once the headers are in (*state NULL), with each piece of a body, and once the request
 * is whole. A request to refuse for what it is (its framing, its method) is answered at the
 * first call, so that libmicrohttpd closes the connection and reads nothing more from it; the
 * others once they are whole, which keeps the connection for the scraper's next request.
 */
static enum MHD_Result handle(void *context, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_size, void **state)
{
	struct http_server *server = context;
	struct client *client = client_of(c);
	const char *text;
	unsigned status;

	(void)upload;
	if (client)
		client->in_request = true;
	if (!*state) {
		if ((status = framing_error(c, version, &text)))
			return fixed(c, status, text);
		if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
			return fixed(c, MHD_HTTP_METHOD_NOT_ALLOWED, "405 method not allowed: GET or HEAD /metrics\n");
		*state = server;
		return MHD_YES;
	}
	if (*upload_size) { /* a body nobody asked for: dropped */
		*upload_size = 0;
		return MHD_YES;
	}
	if (server->auth) {
		switch (check_password(server, c, state)) {
		case AUTH_ACCEPTED:
			break;
		case AUTH_PENDING:
			return MHD_YES;
		case AUTH_REFUSED:
			return unauthorized(c);
		case AUTH_BUSY_CLIENT:
			return fixed(c, MHD_HTTP_TOO_MANY_REQUESTS,
				     "429 too many requests: your password checks are queued already\n");
		case AUTH_BUSY:
			return fixed(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				     "503 service unavailable: too many password checks are queued\n");
		}
	}
	return respond(server, c, url);
}

int http_parse_listen(const char *text, struct sockaddr_storage *addr, const char **why)
{
	char host[128];
	const char *colon = strrchr(text, ':'), *port = colon ? colon + 1 : NULL;
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
				  .ai_socktype = SOCK_STREAM };
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
	/* ":PORT" is every address, IPv6 and IPv4 on one socket ([::] with IPV6_V6ONLY off), as Go's ":PORT". */
	if (getaddrinfo(host_len ? host : "::", port, &hints, &found) != 0 || !found)
		return *why = "the address is not a numeric IPv4 or IPv6 address", -1;
	memcpy(addr, found->ai_addr, found->ai_addrlen);
	freeaddrinfo(found);
	return 0;
}

/* ---- Connections: deadlines, and room made for new ones ------------------------------------- */

static void client_unlink(struct http_server *server, struct client *client)
{
	if (client->prev)
		client->prev->next = client->next;
	else
		server->oldest = client->next;
	if (client->next)
		client->next->prev = client->prev;
	else
		server->newest = client->prev;
	client->prev = client->next = NULL;
}

static void client_append(struct http_server *server, struct client *client)
{
	client->prev = server->newest;
	if (server->newest)
		server->newest->next = client;
	else
		server->oldest = client;
	server->newest = client;
}

static void client_close(struct http_server *server, struct client *client)
{
	if (client->closing)
		return;
	client->closing = true;
	server->open--;
	shutdown(client->fd, SHUT_RDWR);
}

static bool same_address(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		    ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
	return false;
}

/* The oldest connection still waiting for its request (from addr, when given), but newcomer. */
static struct client *oldest_waiting(struct http_server *server, const struct client *newcomer,
				     const struct sockaddr_storage *addr)
{
	for (struct client *c = server->oldest; c; c = c->next)
		if (c != newcomer && !c->closing && !c->answered && (!addr || same_address(&c->addr, addr)))
			return c;
	return NULL;
}

/* A new connection is always let in: the oldest waiting one makes room when there is none. */
static void make_room(struct http_server *server, struct client *newcomer)
{
	unsigned from_address = 0;
	struct client *victim;

	for (struct client *c = server->oldest; c; c = c->next)
		from_address += !c->closing && same_address(&c->addr, &newcomer->addr);
	if (from_address > server->max_connections / 2 && (victim = oldest_waiting(server, newcomer, &newcomer->addr)))
		client_close(server, victim);
	if (server->open > server->max_connections && (victim = oldest_waiting(server, newcomer, NULL)))
		client_close(server, victim);
}

static void on_connection(void *context, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct http_server *server = context;
	struct client *client = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fd = sym_MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *addr =
		    sym_MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

		if (!fd || !(client = calloc(1, sizeof(*client))))
			return; /* not tracked: libmicrohttpd's idle timeout still ends it */
		client->connection = c;
		client->fd = fd->connect_fd;
		if (addr && addr->client_addr)
			memcpy(&client->addr, addr->client_addr,
			       addr->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
									: sizeof(struct sockaddr_in));
		client->since_ns = monotonic_ns();
		client_append(server, client);
		server->open++;
		*socket_context = client;
		make_room(server, client);
	} else if (code == MHD_CONNECTION_NOTIFY_CLOSED && client) {
		if (!client->closing)
			server->open--;
		client_unlink(server, client);
		free(client);
		*socket_context = NULL;
	}
}

/*
 * A request over (its response sent, or its connection closed): the connection waits for its next,
 * with a new deadline.
 */
static void on_completed(void *context, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode code)
{
	struct http_server *server = context;
	struct client *client = client_of(c);

	(void)code;
	if (*state && *state != server) /* closed while its password was checked */
		auth_check_release(server->auth, *state);
	*state = NULL;
	if (!client)
		return;
	client->check = NULL;
	client->in_request = false;
	client->answered = false;
	client->since_ns = monotonic_ns();
	client_unlink(server, client);
	client_append(server, client);
}

/* Closes the connections past their deadline. */
static void sweep(struct http_server *server)
{
	uint64_t now = monotonic_ns();

	for (struct client *c = server->oldest; c; c = c->next)
		if (!c->closing && now - c->since_ns > (c->answered ? RESPONSE_DEADLINE_NS : REQUEST_DEADLINE_NS))
			client_close(server, c);
}

/* Room for max_connections: the soft file limit raised towards the hard one. The number there is room for. */
static unsigned raise_file_limit(unsigned max_connections)
{
	rlim_t want = (rlim_t)max_connections + CLOSING_ROOM + SPARE_FILES;
	struct rlimit limit;

	if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
		return max_connections;
	if (limit.rlim_cur < want) {
		limit.rlim_cur = limit.rlim_max == RLIM_INFINITY || limit.rlim_max > want ? want : limit.rlim_max;
		setrlimit(RLIMIT_NOFILE, &limit);
		getrlimit(RLIMIT_NOFILE, &limit);
	}
	if (limit.rlim_cur >= want)
		return max_connections;
	return limit.rlim_cur > CLOSING_ROOM + SPARE_FILES + 1 ? (unsigned)(limit.rlim_cur - CLOSING_ROOM - SPARE_FILES)
							       : 1;
}

bool http_every_address(const struct sockaddr_storage *addr)
{
	if (addr->ss_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)addr)->sin6_addr);
	return addr->ss_family == AF_INET && ((const struct sockaddr_in *)addr)->sin_addr.s_addr == htonl(INADDR_ANY);
}

/*
 * libmicrohttpd 0.9.75 answers a request whose Content-Length it cannot read (not a number,
 * "5, 5", -1, too large) with a 400 or 413 of its own, and then, by a slip of its state machine
 * (the caller of parse_connection_headers overwrites the state transmit_error_response_len set),
 * builds that response's head a second time: two status lines on the wire. The one hook it
 * offers between that parse and the send is its log, called while it handles that connection,
 * which is then the only one with its headers in, no response, and no call of ours for them.
 * Its status is sent from here, once, and the socket shut for writing: libmicrohttpd's own copies
 * then fail to go out, and it closes the connection.
 */
static void answer_once(struct http_server *server, unsigned status)
{
	static const char *const reasons[][2] = {
		{ "400 Bad Request", "400 bad request: a Content-Length that is not a number\n" },
		{ "413 Content Too Large", "413 content too large: a Content-Length beyond what a request may be\n" },
	};
	struct client *only = NULL;
	unsigned candidates = 0,
		 which = status == MHD_HTTP_BAD_REQUEST ? 0
	    : status == MHD_HTTP_CONTENT_TOO_LARGE      ? 1
							: 2;
	char response[256];
	int len;

	if (which > 1)
		return;
	for (struct client *c = server->oldest; c; c = c->next)
		if (!c->closing && !c->in_request &&
		    sym_MHD_get_connection_info(c->connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE) &&
		    !sym_MHD_get_connection_info(c->connection, MHD_CONNECTION_INFO_HTTP_STATUS))
			only = c, candidates++;
	if (candidates != 1)
		return;
	len = snprintf(response, sizeof(response), "HTTP/1.1 %s\r\nConnection: close\r\nContent-Type: text/plain; "
		       "charset=utf-8\r\nContent-Length: %zu\r\n\r\n%s", reasons[which][0], strlen(reasons[which][1]),
		       reasons[which][1]);
	if (server->options.web && server->options.web->tls) {
		const union MHD_ConnectionInfo *tls = sym_MHD_get_connection_info(only->connection,
										  MHD_CONNECTION_INFO_GNUTLS_SESSION);

		if (!tls || !sym_gnutls_record_send ||
		    sym_gnutls_record_send(tls->tls_session, response, (size_t)len) != len)
			return;
	} else if (send(only->fd, response, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT) != len) {
		return;
	}
	shutdown(only->fd, SHUT_WR);
	only->closing = true;
	server->open--;
}

/* libmicrohttpd's messages: kept while starting (a bad certificate or key), then not printed. */
static void on_log(void *context, const char *format, va_list args)
{
	struct http_server *server = context;
	char text[256];
	const char *code;
	unsigned status;
	size_t len;

	if (server->started) {
		/* "Error processing request (HTTP response code is 400 ('...')). Closing connection." */
		if (strstr(format, "HTTP response code is") && vsnprintf(text, sizeof(text), format, args) > 0 &&
		    (code = strstr(text, "code is ")) && sscanf(code + 8, "%u", &status) == 1)
			answer_once(server, status);
		return;
	}
	vsnprintf(server->start_error, sizeof(server->start_error), format, args);
	len = strlen(server->start_error);
	while (len && (server->start_error[len - 1] == '\n' || server->start_error[len - 1] == '.'))
		server->start_error[--len] = '\0';
}

bool http_loopback(const struct sockaddr_storage *addr)
{
	if (addr->ss_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)addr)->sin6_addr) ||
		       (IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)addr)->sin6_addr) &&
			((const struct sockaddr_in6 *)addr)->sin6_addr.s6_addr[12] == 127);
	return addr->ss_family == AF_INET && (ntohl(((const struct sockaddr_in *)addr)->sin_addr.s_addr) >> 24) == 127;
}

struct http_server *http_start(const struct http_options *options, char *why, size_t why_len)
{
	struct http_server *server = calloc(1, sizeof(*server));
	unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
	const struct web_config *web = options->web;
	char priorities[128] = "";
	struct MHD_OptionItem tls[] = {
		{ MHD_OPTION_HTTPS_MEM_CERT, 0, web ? web->cert : NULL },
		{ MHD_OPTION_HTTPS_MEM_KEY, 0, web ? web->key : NULL },
		{ MHD_OPTION_HTTPS_PRIORITIES, 0, priorities },
		{ MHD_OPTION_END, 0, NULL },
	};

	if (!server) {
		snprintf(why, why_len, "%s", strerror(ENOMEM));
		return NULL;
	}
	if (http_load(why, why_len) != 0) {
		free(server);
		return NULL;
	}
	server->options = *options;
	server->max_connections = options->max_connections ? options->max_connections : HTTP_DEFAULT_MAX_CONNECTIONS;
	server->max_connections = raise_file_limit(server->max_connections);
	if (server->max_connections < options->max_connections)
		warn_msg("room for %u connections only: the file limit (ulimit -n) is too low for %u",
			 server->max_connections, options->max_connections);
	if (options->addr.ss_family == AF_INET6)
		flags |= http_every_address(&options->addr) ? MHD_USE_DUAL_STACK : MHD_USE_IPv6;
	if (web && web->user_count)
		flags |= MHD_ALLOW_SUSPEND_RESUME; /* while a password is checked */
	if (web && web->tls) {
		if (dl_open_many(&libgnutls, GNUTLS_SONAME, why, why_len, DLSYM_ARG(gnutls_record_send), NULL) != 0) {
			free(server);
			return NULL;
		}
		flags |= MHD_USE_TLS;
		web_config_priorities(web, priorities, sizeof(priorities));
	} else
		tls[0].option = MHD_OPTION_END;
	/* Our thread runs the loop (http_serve): a scrape takes milliseconds, and nothing needs a lock. */
	errno = 0;
	server->daemon = sym_MHD_start_daemon(flags, 0, NULL, NULL, handle, server, MHD_OPTION_EXTERNAL_LOGGER, on_log,
					      server,
					  MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)&server->options.addr,
					  MHD_OPTION_CONNECTION_LIMIT, server->max_connections + CLOSING_ROOM,
					  MHD_OPTION_CONNECTION_TIMEOUT, CONNECTION_TIMEOUT,
					  MHD_OPTION_CONNECTION_MEMORY_LIMIT,
					  (size_t)REQUEST_MEMORY, MHD_OPTION_NOTIFY_CONNECTION, on_connection, server,
					  MHD_OPTION_NOTIFY_COMPLETED, on_completed, server,
					  MHD_OPTION_UNESCAPE_CALLBACK,
					  unescape, NULL, MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
	if (!server->daemon && errno == EAFNOSUPPORT && options->addr.ss_family == AF_INET6 &&
	    http_every_address(&options->addr)) {
		/* No IPv6 here (ipv6.disable=1): every IPv4 address, then. */
		struct sockaddr_in *any4 = (struct sockaddr_in *)&server->options.addr;
		in_port_t port = ((const struct sockaddr_in6 *)&options->addr)->sin6_port;
		struct http_server *again;

		memset(&server->options.addr, 0, sizeof(server->options.addr));
		any4->sin_family = AF_INET;
		any4->sin_port = port;
		any4->sin_addr.s_addr = htonl(INADDR_ANY);
		again = http_start(&server->options, why, why_len);
		free(server);
		return again;
	}
	if (!server->daemon) {
		if (server->start_error[0] && web && web->tls) /* which of TLS's steps failed */
			snprintf(why, why_len, "%s", server->start_error);
		else
			snprintf(why, why_len, "%s", strerror(errno ? errno : EADDRINUSE));
		free(server);
		return NULL;
	}
	if (web && web->user_count && !(server->auth = auth_new(web, why, why_len))) {
		sym_MHD_stop_daemon(server->daemon);
		free(server);
		return NULL;
	}
	server->started = true;
	return server;
}

void http_serve(struct http_server *server, volatile sig_atomic_t *stop)
{
	while (!*stop) {
		if (sym_MHD_run_wait(server->daemon, SWEEP_MS) != MHD_YES && errno != EINTR)
			usleep(SWEEP_MS * 1000); /* not expected: no busy loop if it happens */
		sweep(server);
	}
}

void http_stop(struct http_server *server)
{
	if (!server)
		return;
	if (server->auth) {
		auth_stop(server->auth); /* its thread resumes no connection from here on */
		/*
		 * libmicrohttpd aborts when stopped with a connection suspended: those left are
		 * resumed, to be closed unanswered.
		 */
		for (struct client *c = server->oldest; c; c = c->next)
			if (c->check && !auth_check_notified(server->auth, c->check))
				sym_MHD_resume_connection(c->connection);
	}
	sym_MHD_stop_daemon(server->daemon); /* releases their checks */
	auth_free(server->auth); /* a bcrypt running is not waited for */
	free(server);
}

bool http_auth_counts(struct http_server *server, struct auth_counts *counts)
{
	if (!server || !server->auth)
		return false;
	auth_get_counts(server->auth, counts);
	return true;
}
