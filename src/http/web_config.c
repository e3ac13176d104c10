/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * web_config.c: the exporter-toolkit web configuration file, read with libyaml: tls_server_config,
 * basic_auth_users, http_server_config.
 */
#include "http/web_config.h"

#include <crypt.h>
#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "common/dl.h"

#define MAX_FILE (1u << 20) /* a config file, a certificate or a key: more is not one */

/* libyaml and libcrypt, opened by web_config_dl (dl.h): export only, not every start-up. */
static DLSYM_POINTER(yaml_document_delete);
static DLSYM_POINTER(yaml_document_get_node);
static DLSYM_POINTER(yaml_document_get_root_node);
static DLSYM_POINTER(yaml_parser_delete);
static DLSYM_POINTER(yaml_parser_initialize);
static DLSYM_POINTER(yaml_parser_load);
static DLSYM_POINTER(yaml_parser_set_input_string);
static DLSYM_POINTER(crypt_rn);
static void *libyaml, *libcrypt;

int web_config_dl(char *why, size_t why_len)
{
	if (dl_open_many(&libyaml, YAML_SONAME, why, why_len, DLSYM_ARG(yaml_document_delete),
			 DLSYM_ARG(yaml_document_get_node), DLSYM_ARG(yaml_document_get_root_node),
			 DLSYM_ARG(yaml_parser_delete), DLSYM_ARG(yaml_parser_initialize), DLSYM_ARG(yaml_parser_load),
			 DLSYM_ARG(yaml_parser_set_input_string), NULL) != 0)
		return -1;
	return dl_open_many(&libcrypt, CRYPT_SONAME, why, why_len, DLSYM_ARG(crypt_rn), NULL);
}

struct reader {
	yaml_document_t *doc;
	char *why;
	size_t why_len;
};

static int fail(struct reader *r, const yaml_node_t *node, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct reader *r, const yaml_node_t *node, const char *fmt, ...)
{
	va_list args;
	int n = node ? snprintf(r->why, r->why_len, "line %zu: ", node->start_mark.line + 1) : 0;

	if (n < 0 || (size_t)n >= r->why_len)
		n = 0;
	va_start(args, fmt);
	vsnprintf(r->why + n, r->why_len - (size_t)n, fmt, args);
	va_end(args);
	return -1;
}

static bool is_null(const yaml_node_t *node)
{
	const char *value = (const char *)node->data.scalar.value;

	if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	return !*value || !strcmp(value, "~") || !strcmp(value, "null") || !strcmp(value, "Null") ||
	    !strcmp(value, "NULL");
}

/* A scalar's text, NUL-free: *out a new string. */
static int scalar(struct reader *r, const yaml_node_t *node, const char *key, char **out)
{
	if (node->type != YAML_SCALAR_NODE)
		return fail(r, node, "%s: a string, please", key);
	if (memchr(node->data.scalar.value, '\0', node->data.scalar.length))
		return fail(r, node, "%s: a NUL byte in the value", key);
	free(*out);
	if (!(*out = strdup((const char *)node->data.scalar.value)))
		return fail(r, node, "%s: out of memory", key);
	return 0;
}

/* "TLS10" .. "TLS13" */
static int tls_version(struct reader *r, const yaml_node_t *node, const char *key, int *out)
{
	static const char *const names[] = { "TLS10", "TLS11", "TLS12", "TLS13" };

	if (node->type == YAML_SCALAR_NODE)
		for (int i = 0; i < 4; i++)
			if (!strcmp((const char *)node->data.scalar.value, names[i]))
				return *out = 10 + i, 0;
	return fail(r, node, "%s: TLS10, TLS11, TLS12 or TLS13, please", key);
}

/* Each pair of a mapping: fn(r, key, value, context), the key a string, once. */
static int each_pair(struct reader *r, const yaml_node_t *map, const char *where,
		     int (*fn)(struct reader *r, const char *key, const yaml_node_t *value, void *context),
		     void *context)
{
	if (map->type == YAML_SCALAR_NODE && is_null(map))
		return 0; /* "key:" with nothing under it */
	if (map->type != YAML_MAPPING_NODE)
		return fail(r, map, "%s: a mapping (key: value lines), please", where);
	for (yaml_node_pair_t *pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
		const yaml_node_t *key = sym_yaml_document_get_node(r->doc, pair->key);
		const yaml_node_t *value = sym_yaml_document_get_node(r->doc, pair->value);

		if (!key || !value || key->type != YAML_SCALAR_NODE)
			return fail(r, key ? key : map, "%s: a key that is not a string", where);
		for (yaml_node_pair_t *before = map->data.mapping.pairs.start; before < pair; before++) {
			const yaml_node_t *other = sym_yaml_document_get_node(r->doc, before->key);

			if (other && other->type == YAML_SCALAR_NODE && !strcmp((const char *)other->data.scalar.value,
									      (const char *)key->data.scalar.value))
				return fail(r, key, "%s.%s: given twice", where, key->data.scalar.value);
		}
		if (fn(r, (const char *)key->data.scalar.value, value, context) != 0)
			return -1;
	}
	return 0;
}

static int tls_pair(struct reader *r, const char *key, const yaml_node_t *value, void *context)
{
	struct web_config *c = context;
	char *text = NULL;
	int rc = 0;

	if (!strcmp(key, "cert_file"))
		return scalar(r, value, "tls_server_config.cert_file", &c->cert_file);
	if (!strcmp(key, "key_file"))
		return scalar(r, value, "tls_server_config.key_file", &c->key_file);
	if (!strcmp(key, "cert"))
		return scalar(r, value, "tls_server_config.cert", &c->cert);
	if (!strcmp(key, "key"))
		return scalar(r, value, "tls_server_config.key", &c->key);
	if (!strcmp(key, "min_version"))
		return tls_version(r, value, "tls_server_config.min_version", &c->min_version);
	if (!strcmp(key, "max_version"))
		return tls_version(r, value, "tls_server_config.max_version", &c->max_version);
	if (!strcmp(key, "client_auth_type")) {
		if (scalar(r, value, "tls_server_config.client_auth_type", &text) == 0 && strcmp(text, "NoClientCert"))
			rc = fail(
			    r, value,
			    "tls_server_config.client_auth_type: %s is not supported by iolens (NoClientCert only)",
			    text);
		free(text);
		return rc;
	}
	if (!strcmp(key, "client_ca_file") || !strcmp(key, "client_allowed_sans") || !strcmp(key, "cipher_suites") ||
	    !strcmp(key, "curve_preferences") || !strcmp(key, "prefer_server_cipher_suites"))
		return is_null(value) ? 0 : fail(r, value, "tls_server_config.%s: not supported by iolens", key);
	return fail(r, value,
		    "tls_server_config.%s: unknown key (cert_file, key_file, cert, key, min_version, max_version, "
		    "client_auth_type)",
		    key);
}

/* A bcrypt hash ($2a$, $2b$ or $2y$, two digits of cost, 53 of salt and hash): its cost, or -1. */
static int bcrypt_cost(const char *hash)
{
	static const char alphabet[] = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	int cost;

	if (strlen(hash) != 60 || strncmp(hash, "$2", 2) || !strchr("aby", hash[2]) || hash[3] != '$' ||
	    !isdigit((unsigned char)hash[4]) || !isdigit((unsigned char)hash[5]) || hash[6] != '$' ||
	    strspn(hash + 7, alphabet) != 53)
		return -1;
	cost = (hash[4] - '0') * 10 + hash[5] - '0';
	return cost >= 4 && cost <= 31 ? cost : -1;
}

static int user_pair(struct reader *r, const char *key, const yaml_node_t *value, void *context)
{
	struct web_config *c = context;
	struct web_user *users, *user;
	int cost;

	if (!*key || strchr(key, ':'))
		return fail(r, value, "basic_auth_users: a user name neither empty nor with a colon, please");
	if (!(users = realloc(c->users, (c->user_count + 1) * sizeof(*users))))
		return fail(r, value, "basic_auth_users: out of memory");
	c->users = users;
	user = &users[c->user_count++];
	*user = (struct web_user){ .name = strdup(key) };
	if (!user->name || scalar(r, value, "basic_auth_users", &user->hash) != 0)
		return user->name ? -1 : fail(r, value, "basic_auth_users: out of memory");
	if ((cost = bcrypt_cost(user->hash)) < 0)
		return fail(r, value,
			    "basic_auth_users.%s: not a bcrypt hash ($2y$..., 60 characters: htpasswd -nbB %s PASSWORD "
			    "makes one)",
			    key, key);
	if (cost > WEB_BCRYPT_MAX_COST)
		return fail(r, value,
			    "basic_auth_users.%s: bcrypt cost %d is too slow to check (each step doubles it): at most "
			    "%d, please (htpasswd -nbBC 10 %s PASSWORD)",
			    key, cost, WEB_BCRYPT_MAX_COST, key);
	return 0;
}

static int http_pair(struct reader *r, const char *key, const yaml_node_t *value, void *context)
{
	(void)context;
	if (!strcmp(key, "http2"))
		return 0; /* HTTP/1.1 is all libmicrohttpd speaks, and what Prometheus uses */
	if (!strcmp(key, "headers"))
		return is_null(value) ? 0 : fail(r, value, "http_server_config.headers: not supported by iolens");
	return fail(r, value, "http_server_config.%s: unknown key (http2, headers)", key);
}

static int top_pair(struct reader *r, const char *key, const yaml_node_t *value, void *context)
{
	struct web_config *c = context;

	if (!strcmp(key, "tls_server_config")) {
		c->tls = !is_null(value);
		return each_pair(r, value, key, tls_pair, c);
	}
	if (!strcmp(key, "basic_auth_users"))
		return each_pair(r, value, key, user_pair, c);
	if (!strcmp(key, "http_server_config"))
		return each_pair(r, value, key, http_pair, c);
	return fail(r, value, "%s: unknown key (tls_server_config, basic_auth_users, http_server_config)", key);
}

int web_config_parse(const char *text, size_t len, struct web_config *config, char *why, size_t why_len)
{
	struct reader r = { .why = why, .why_len = why_len };
	yaml_parser_t parser;
	yaml_document_t doc;
	const yaml_node_t *root;
	int rc = 0;

	*config = (struct web_config){ .min_version = 12, .max_version = 13 };
	if (web_config_dl(why, why_len) != 0)
		return -1;
	if (!sym_yaml_parser_initialize(&parser))
		return fail(&r, NULL, "out of memory");
	sym_yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!sym_yaml_parser_load(&parser, &doc)) {
		rc = fail(&r, NULL, "line %zu: not YAML: %s", parser.problem_mark.line + 1,
			  parser.problem ? parser.problem : "a parse error");
		sym_yaml_parser_delete(&parser);
		return rc;
	}
	r.doc = &doc;
	root = sym_yaml_document_get_root_node(&doc);
	if (root) /* an empty file: neither TLS nor users, as the toolkit takes it */
		rc = each_pair(&r, root, "the file", top_pair, config);
	if (rc == 0 && config->tls) {
		if (!config->cert_file == !config->cert)
			rc = fail(&r, root, "tls_server_config: cert_file or cert, please (one of them)");
		else if (!config->key_file == !config->key)
			rc = fail(&r, root, "tls_server_config: key_file or key, please (one of them)");
		else if (config->min_version > config->max_version)
			rc = fail(&r, root, "tls_server_config: min_version is above max_version");
	}
	sym_yaml_document_delete(&doc);
	sym_yaml_parser_delete(&parser);
	return rc;
}

/* The whole of a file (at most MAX_FILE), NUL-terminated, and its mode; NULL with errno. */
static char *read_file(const char *path, size_t *len, unsigned *mode)
{
	FILE *f = fopen(path, "re");
	char *text = f ? malloc(MAX_FILE + 1) : NULL;
	size_t n = text ? fread(text, 1, MAX_FILE + 1, f) : 0;
	int err = f ? (text ? (ferror(f) ? EIO : n > MAX_FILE ? EFBIG : 0) : ENOMEM) : errno;
	struct stat st;

	if (f && !err)
		err = fstat(fileno(f), &st) == 0 ? 0 : errno;
	if (f)
		fclose(f);
	if (err) {
		free(text);
		errno = err;
		return NULL;
	}
	text[n] = '\0';
	*len = n;
	*mode = st.st_mode & 07777;
	return text;
}

/* A PEM file named in the config, relative to its directory; *path_out the path it was read from. */
static int read_pem(const char *config_path, const char *key, const char *file, char **out, char **path_out,
		    unsigned *mode, char *why, size_t why_len)
{
	char *copy = strdup(config_path), *path = NULL;
	size_t len;

	if (copy && asprintf(&path, "%s/%s", file[0] == '/' ? "" : dirname(copy), file) < 0)
		path = NULL;
	free(copy);
	if (!path)
		return snprintf(why, why_len, "out of memory"), -1;
	if (!(*out = read_file(path, &len, mode))) {
		snprintf(why, why_len, "tls_server_config.%s: %s: %s", key, path, strerror(errno));
		free(path);
		return -1;
	}
	free(*path_out);
	*path_out = path;
	if (!strstr(*out, "-----BEGIN "))
		return snprintf(why, why_len, "tls_server_config.%s: %s is not PEM", key, file), -1;
	return 0;
}

int web_config_load(const char *path, struct web_config *config, char *why, size_t why_len)
{
	size_t len;
	unsigned mode;
	char *text = read_file(path, &len, &mode);
	int rc;

	if (!text) {
		*config = (struct web_config){0};
		snprintf(why, why_len, "%s", strerror(errno));
		return -1;
	}
	rc = web_config_parse(text, len, config, why, why_len);
	explicit_bzero(text, len); /* a key may be in it */
	free(text);
	config->file_mode = mode;
	if (rc == 0 && config->tls && config->cert_file)
		rc = read_pem(path, "cert_file", config->cert_file, &config->cert, &config->cert_path, &mode, why,
			      why_len);
	if (rc == 0 && config->tls && config->key_file)
		rc = read_pem(path, "key_file", config->key_file, &config->key, &config->key_path, &config->key_mode,
			      why, why_len);
	return rc;
}

unsigned web_config_exposed(unsigned mode, bool secret)
{
	return mode & (S_IWGRP | S_IWOTH | (secret ? S_IROTH : 0));
}

void web_config_free(struct web_config *config)
{
	for (size_t i = 0; i < config->user_count; i++) {
		free(config->users[i].name);
		free(config->users[i].hash);
	}
	free(config->users);
	free(config->cert_file);
	free(config->key_file);
	free(config->cert_path);
	free(config->key_path);
	free(config->cert);
	if (config->key)
		explicit_bzero(config->key, strlen(config->key));
	free(config->key);
	*config = (struct web_config){0};
}

void web_config_priorities(const struct web_config *config, char *out, size_t out_len)
{
	int n = snprintf(out, out_len, "NORMAL:-VERS-ALL");

	for (int v = config->max_version; v >= config->min_version && n > 0 && (size_t)n < out_len; v--)
		n += snprintf(out + n, out_len - (size_t)n, ":+VERS-TLS1.%d", v - 10);
}

bool web_config_bcrypt_matches(const char *password, const char *hash, struct crypt_data *data)
{
	const char *computed;
	unsigned char differ = 0;
	size_t len;

	if (!sym_crypt_rn) /* opened by web_config_parse */
		return false;
	computed = sym_crypt_rn(password, hash, data, sizeof(*data));
	if (!computed || (len = strlen(hash)) != strlen(computed))
		return false;
	for (size_t i = 0; i < len; i++)
		differ |= (unsigned char)(computed[i] ^ hash[i]);
	return !differ;
}

const struct web_user *web_config_user(const struct web_config *config, const char *user)
{
	for (size_t i = 0; i < config->user_count; i++)
		if (!strcmp(config->users[i].name, user))
			return &config->users[i];
	return NULL;
}

bool web_config_check_user(const struct web_config *config, const char *user, const char *password)
{
	const struct web_user *found = web_config_user(config, user);
	struct crypt_data *data;
	bool matches;

	if (!config->user_count || !(data = calloc(1, sizeof(*data))))
		return false;
	/* An unknown user costs a bcrypt too, so the time taken does not tell which users exist. */
	matches = web_config_bcrypt_matches(password, found ? found->hash : config->users[0].hash, data);
	explicit_bzero(data, sizeof(*data));
	free(data);
	return found && matches;
}
