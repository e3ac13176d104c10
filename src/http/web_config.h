/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * web_config.h: the Prometheus exporter-toolkit web configuration file (--web.config.file): TLS and
 * basic auth for export.
 */
#ifndef IOLENS_OUT_WEB_CONFIG_H
#define IOLENS_OUT_WEB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

struct crypt_data;

/*
 * The greatest bcrypt cost taken: each step doubles a check's time, 0.18 s at 12 on a 2-core VM
 * of 2026 (bench/export-auth.sh prints it), 26 hours at 31; a scraper's password is checked
 * once (then remembered), but every wrong password costs a check.
 */
#define WEB_BCRYPT_MAX_COST 12

struct web_user {
	char *name;
	char *hash; /* bcrypt: $2a$, $2b$ or $2y$ */
};

struct web_config {
	/* tls_server_config: with TLS when cert and key are set (read by web_config_load). */
	bool tls;
	char *cert_file, *key_file; /* as written; web_config_load reads them into cert and key */
	char *cert, *key;           /* PEM */
	int min_version, max_version; /* 10..13 for TLS1.0..TLS1.3; the toolkit's defaults: 12, 13 */
	struct web_user *users;     /* basic_auth_users */
	size_t user_count;
	/* Set by web_config_load: the files' modes (chmod's bits), the PEM files' paths as opened. */
	unsigned file_mode, key_mode;
	char *cert_path, *key_path;
};

/*
 * Parses the file's text (YAML): 0, or -1 with what is wrong in why ("line 3:
 * tls_server_config.cert_fil: unknown key ..."). Reads no other file. config is freed by
 * web_config_free either way.
 */
/*
 * Opens libyaml and libcrypt (dlopen: not linked, see common/dl.h): 0, or -1 with "SONAME: why".
 * web_config_parse calls it; a program that wants to say it first calls it itself.
 */
int web_config_dl(char *why, size_t why_len);
int web_config_parse(const char *text, size_t len, struct web_config *config, char *why, size_t why_len);
/* Reads and parses path, then the certificate and key it names (relative to its directory). */
int web_config_load(const char *path, struct web_config *config, char *why, size_t why_len);
void web_config_free(struct web_config *config);
/* GnuTLS priorities for the versions allowed: "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2". */
void web_config_priorities(const struct web_config *config, char *out, size_t out_len);
/* Whether user and password are one of basic_auth_users (bcrypt; as long for a wrong user as for a wrong password). */
bool web_config_check_user(const struct web_config *config, const char *user, const char *password);
/* The user of that name, or NULL. */
const struct web_user *web_config_user(const struct web_config *config, const char *user);
/* Whether password matches a bcrypt hash (crypt_rn into data; any thread with its own data). */
bool web_config_bcrypt_matches(const char *password, const char *hash, struct crypt_data *data);
/*
 * The bits of a file's mode that let other users at it, as ssh judges a key: group or others
 * may write it, or (for a file with secrets: password hashes, a private key) others may read
 * it; 0 when none. Group read is left, as Debian's ssl-cert group reads keys.
 */
unsigned web_config_exposed(unsigned mode, bool secret);

#endif
