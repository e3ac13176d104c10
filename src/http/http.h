/* SPDX-License-Identifier: GPL-2.0-or-later */
/* http.h: the HTTP side of iolens export: one page of metrics served with libmicrohttpd. */
#ifndef IOLENS_OUT_HTTP_H
#define IOLENS_OUT_HTTP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "render/prom.h"

struct web_config;
struct auth_counts;

/* What the server serves and where. */
struct http_options {
	struct sockaddr_storage addr; /* from http_parse_listen */
	/* The exposition (OpenMetrics or the text format), *len its length; malloc'd, or NULL. */
	char *(*render)(void *context, enum prom_format format, size_t *len);
	void *context;
	unsigned max_connections;     /* 0: HTTP_DEFAULT_MAX_CONNECTIONS */
	const struct web_config *web; /* TLS and basic auth (--web.config.file), or NULL */
};

#define HTTP_DEFAULT_MAX_CONNECTIONS 4096u

/* "ADDR:PORT", "[ADDR6]:PORT" or ":PORT" (every address): 0, or -1 with *why. */
int http_parse_listen(const char *text, struct sockaddr_storage *addr, const char **why);

/* 0.0.0.0, or [::] (which with http_start is IPv4 too). */
bool http_every_address(const struct sockaddr_storage *addr);

/*
 * The weight (q) a comma-separated header (Accept, Accept-Encoding) gives token: the greatest
 * of its entries' (case-insensitive), 1 where one has no q=, 0 for q=0 or garbage; -1 when
 * none names it.
 */
double http_weight(const char *header, const char *token);
/* The same, of the elements naming token with every parameter of params ("name=value", ... NULL) too. */
double http_weight_with(const char *header, const char *token, const char *const *params);
/* Whether an Accept header asks for OpenMetrics (application/openmetrics-text, and q not 0). */
bool prom_wants_openmetrics(const char *accept);
/*
 * The format an Accept header asks for: protobuf where it names the MetricFamily delimited
 * encoding with a q at least OpenMetrics's (only scrapers that want native histograms do),
 * else OpenMetrics where it is accepted, else the text format.
 */
enum prom_format prom_negotiate(const char *accept);
/* Whether an Accept-Encoding header allows gzip: gzip or x-gzip with q > 0, or * with q > 0. */
bool http_accepts_gzip(const char *accept_encoding);

/* A Host header's value: RFC 3986's host and port characters only (empty is one), spaces after it aside. */
bool http_valid_host(const char *value);

/* 127.0.0.0/8, ::1 (or ::ffff:127.x): reached from this machine only. */
bool http_loopback(const struct sockaddr_storage *addr);

struct http_server;
/*
 * Opens libmicrohttpd (dlopen: not linked, so that other subcommands do not load it and gnutls
 * and the rest; see common/dl.h): 0, or -1 with "SONAME: why". http_start calls it.
 */
int http_load(char *why, size_t why_len);
/* Listening, or NULL with the reason in why. */
struct http_server *http_start(const struct http_options *options, char *why, size_t why_len);
/* Serves until *stop is set (by a signal handler). */
void http_serve(struct http_server *server, volatile sig_atomic_t *stop);
/* At once: a password check running is not waited for, and the requests waiting for one are closed unanswered. */
void http_stop(struct http_server *server);
/* Basic auth's counts (http_auth.h): false without basic auth. */
bool http_auth_counts(struct http_server *server, struct auth_counts *counts);

#endif
