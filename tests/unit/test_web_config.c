/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_web_config.c: the exporter-toolkit web config as export reads it: keys, errors that name the
 * line and key, TLS versions, bcrypt users.
 */
#include "unit.h"

#include <crypt.h>
#include <sys/stat.h>

#include "http/web_config.h"

static char why[512];

static int parse(const char *text, struct web_config *c)
{
	why[0] = '\0';
	return web_config_parse(text, strlen(text), c, why, sizeof(why));
}

/* parse fails, saying needle. */
static void refused(const char *text, const char *needle)
{
	struct web_config c;

	assert_int_equal(parse(text, &c), -1);
	if (!strstr(why, needle))
		fail_msg("'%s' not in: %s", needle, why);
	web_config_free(&c);
}

static const char hash[] = "$2b$05$x871rSuBYZ6eTEUX3P/paOOF0KcyaAcY/bxQqG0qGcuZbhIqCcfTC"; /* "secret" */

static void test_full(void **state)
{
	struct web_config c;
	char priorities[128], text[512];

	(void)state;
	snprintf(text, sizeof(text),
		 "# comment\n"
		 "tls_server_config:\n"
		 "  cert_file: /etc/iolens/cert.pem\n"
		 "  key_file: key.pem\n"
		 "  min_version: TLS13\n"
		 "  client_auth_type: NoClientCert\n"
		 "basic_auth_users:\n"
		 "  alice: '%s'\n"
		 "  bob: %s\n"
		 "http_server_config:\n"
		 "  http2: false\n", hash, hash);
	assert_int_equal(parse(text, &c), 0);
	assert_true(c.tls);
	assert_string_equal(c.cert_file, "/etc/iolens/cert.pem");
	assert_string_equal(c.key_file, "key.pem");
	assert_int_equal(c.user_count, 2);
	assert_string_equal(c.users[1].name, "bob");
	assert_string_equal(c.users[0].hash, hash);
	web_config_priorities(&c, priorities, sizeof(priorities));
	assert_string_equal(priorities, "NORMAL:-VERS-ALL:+VERS-TLS1.3");
	assert_true(web_config_check_user(&c, "alice", "secret"));
	assert_false(web_config_check_user(&c, "alice", "Secret"));
	assert_false(web_config_check_user(&c, "alice", ""));
	assert_false(web_config_check_user(&c, "carol", "secret"));
	web_config_free(&c);
}

static void test_defaults(void **state)
{
	struct web_config c;
	char priorities[128];

	(void)state;
	assert_int_equal(parse("", &c), 0); /* an empty file: no TLS, no users */
	assert_false(c.tls);
	assert_int_equal(c.user_count, 0);
	assert_false(web_config_check_user(&c, "alice", "secret"));
	web_config_free(&c);
	assert_int_equal(parse("tls_server_config:\nbasic_auth_users: {}\n", &c), 0);
	assert_false(c.tls);
	web_config_free(&c);
	assert_int_equal(parse("tls_server_config:\n  cert: \"-----BEGIN CERTIFICATE-----\"\n  key_file: k\n", &c), 0);
	web_config_priorities(&c, priorities, sizeof(priorities)); /* the toolkit's default: TLS 1.2 and up */
	assert_string_equal(priorities, "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2");
	web_config_free(&c);
}

static void test_errors(void **state)
{
	(void)state;
	refused("tls_server_config:\n  cert_fil: x\n", "line 2: tls_server_config.cert_fil: unknown key");
	refused("tls:\n", "line 1: tls: unknown key");
	refused("a: [\n", "not YAML");
	refused("- a\n- b\n", "the file: a mapping");
	refused("tls_server_config:\n  key_file: k\n", "cert_file or cert");
	refused("tls_server_config:\n  cert_file: c\n  cert: c\n  key_file: k\n", "cert_file or cert");
	refused("tls_server_config:\n  cert_file: c\n", "key_file or key");
	refused("tls_server_config:\n  cert_file: c\n  key_file: k\n  min_version: TLS14\n",
		"min_version: TLS10, TLS11");
	refused("tls_server_config:\n  cert_file: c\n  key_file: k\n  min_version: TLS13\n  max_version: TLS12\n",
		"min_version is above max_version");
	refused("tls_server_config:\n  cert_file: c\n  key_file: k\n  client_auth_type: RequireAndVerifyClientCert\n",
		"RequireAndVerifyClientCert is not supported");
	refused("tls_server_config:\n  cert_file: c\n  key_file: k\n  client_ca_file: ca.pem\n",
		"client_ca_file: not supported");
	refused("tls_server_config:\n  cert_file: [a]\n  key_file: k\n", "cert_file: a string");
	refused("basic_auth_users:\n  alice: plain\n", "basic_auth_users.alice: not a bcrypt hash");
	refused("basic_auth_users:\n  alice: $1$abc$def\n", "not a bcrypt hash");
	refused("basic_auth_users:\n  a: x\n  a: y\n", "not a bcrypt hash"); /* the first error is said */
	refused("basic_auth_users:\n  'a:b': x\n", "colon");
	refused("basic_auth_users: [alice]\n", "basic_auth_users: a mapping");
	refused("http_server_config:\n  headers:\n    X-A: b\n", "headers: not supported");
	refused("tls_server_config: {}\ntls_server_config: {}\n", "given twice");
}

/* A hash of that cost in bcrypt's form (not computed: the parser reads the form). */
static const char *fake_hash(int cost, char last)
{
	static char fake[64];

	snprintf(fake, sizeof(fake), "$2y$%02d$%052d%c", cost, 0, last);
	return fake;
}

static void test_costs(void **state)
{
	struct web_config c;
	char text[256];

	(void)state;
	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: '%s'\n", fake_hash(WEB_BCRYPT_MAX_COST, 'a'));
	assert_int_equal(parse(text, &c), 0);
	web_config_free(&c);
	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: '%s'\n", fake_hash(4, '.'));
	assert_int_equal(parse(text, &c), 0);
	web_config_free(&c);
	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: '%s'\n", fake_hash(31, 'a'));
	refused(text, "basic_auth_users.alice: bcrypt cost 31 is too slow to check (each step doubles it): at most 12");
	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: '%s'\n", fake_hash(WEB_BCRYPT_MAX_COST + 1, 'a'));
	refused(text, "bcrypt cost 13 is too slow");
	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: '%s'\n", fake_hash(3, 'a'));
	refused(text, "not a bcrypt hash"); /* bcrypt's least is 4 */
	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: '%s'\n", fake_hash(10, '!'));
	refused(text, "not a bcrypt hash"); /* not bcrypt's base64 */
	refused("basic_auth_users:\n  alice: '$2y$1a$0000000000000000000000000000000000000000000000000000a'\n",
		"not a bcrypt hash");
}

static void test_exposed(void **state)
{
	(void)state;
	assert_int_equal(web_config_exposed(0600, true), 0);
	assert_int_equal(web_config_exposed(0400, true), 0);
	assert_int_equal(web_config_exposed(0640, true), 0); /* a group that reads keys, as Debian's ssl-cert */
	assert_int_equal(web_config_exposed(0644, true), S_IROTH);
	assert_int_equal(web_config_exposed(0644, false), 0); /* a certificate, or a config without secrets */
	assert_int_equal(web_config_exposed(0660, false), S_IWGRP);
	assert_int_equal(web_config_exposed(0666, true), S_IWGRP | S_IROTH | S_IWOTH);
	assert_int_equal(web_config_exposed(04602, false), S_IWOTH);
}

/* web_config_load keeps the modes of the file and of the key it names, and where the key was read. */
static void test_load_modes(void **state)
{
	char *dir = unit_tmpdir(), path[512], key[512];
	struct web_config c;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/web.yml", dir);
	snprintf(key, sizeof(key), "%s/key.pem", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "tls_server_config:\n  cert: \"-----BEGIN CERTIFICATE-----\"\n  key_file: key.pem\n");
	fclose(f);
	f = fopen(key, "w");
	assert_non_null(f);
	fprintf(f, "-----BEGIN PRIVATE KEY-----\n");
	fclose(f);
	assert_int_equal(chmod(path, 0604), 0);
	assert_int_equal(chmod(key, 0640), 0);
	assert_int_equal(web_config_load(path, &c, why, sizeof(why)), 0);
	assert_int_equal(c.file_mode, 0604);
	assert_int_equal(c.key_mode, 0640);
	assert_string_equal(c.key_path, key);
	web_config_free(&c);
	unit_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_costs),
		cmocka_unit_test(test_exposed),
		cmocka_unit_test(test_load_modes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
