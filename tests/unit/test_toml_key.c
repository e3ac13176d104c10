/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_toml_key.c: one string setting read from TOML as the runtimes write their configuration:
 * comments, other tables, the four kinds of string, quoted and dotted keys, inline tables, missing
 * keys, and files no TOML reader takes.
 */
#include "unit.h"

#include "common/toml_key.h"

static char value[64];

/* What the document says of table.key: "absent", "bad", or the value. */
static const char *said(const char *text, const char *table, const char *key)
{
	switch (toml_string(text, strlen(text), table, key, value, sizeof(value))) {
	case SETTING_ABSENT:
		assert_string_equal(value, "");
		return "absent";
	case SETTING_FOUND:
		return value;
	default:
		assert_string_equal(value, "");
		return "bad";
	}
}

#define GRAPHROOT(text) said(text, "storage", "graphroot")

/* A storage.conf as distributions ship it: comments, commented-out settings, tables after [storage]. */
static void test_storage_conf(void **state)
{
	const char *conf = "# This file is the configuration file for all tools\n"
			   "# that use the containers/storage library.\n"
			   "[storage]\n"
			   "\n"
			   "# Default Storage Driver, Must be set for proper operation.\n"
			   "driver = \"overlay\"\n"
			   "\n"
			   "# Temporary storage location\n"
			   "runroot = \"/run/containers/storage\"\n"
			   "\n"
			   "# graphroot = \"/var/lib/containers/storage\"\n"
			   "graphroot = \"/srv/containers\"   # moved to the big disk\n"
			   "\n"
			   "[storage.options]\n"
			   "additionalimagestores = [\n"
			   "]\n"
			   "pull_options = {enable_partial_images = \"false\", use_hard_links = \"false\", "
			   "ostree_repos=\"\"}\n"
			   "\n"
			   "[storage.options.overlay]\n"
			   "mountopt = \"nodev,metacopy=on\"\n"
			   "graphroot = \"/not/this/one\"\n";
	(void)state;

	assert_string_equal(GRAPHROOT(conf), "/srv/containers");
	assert_string_equal(said(conf, "storage", "runroot"), "/run/containers/storage");
	assert_string_equal(said(conf, "storage", "driver"), "overlay");
	/* a key of another table, or of no table, is not the setting */
	assert_string_equal(said(conf, "storage", "mountopt"), "absent");
	assert_string_equal(said(conf, NULL, "graphroot"), "absent");
	assert_string_equal(said(conf, "other", "graphroot"), "absent");
}

static void test_comments_and_space(void **state)
{
	(void)state;

	/* a comment's text, however it looks, is no setting */
	assert_string_equal(GRAPHROOT("[storage]\n# graphroot = \"/commented\"\n"), "absent");
	assert_string_equal(GRAPHROOT("# [storage]\ngraphroot = \"/top\"\n"), "absent");
	assert_string_equal(GRAPHROOT("[storage] # the table\ngraphroot = \"/a\" # the key\n"), "/a");
	/* a '#' in a string is the string's */
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = \"/a#b\" # c\n"), "/a#b");
	/* blank space around everything, tabs, CRLF, no newline at the end */
	assert_string_equal(GRAPHROOT("  [ storage ]  \r\n\t graphroot\t=\t\"/a\"  "), "/a");
	assert_string_equal(GRAPHROOT("[storage]\r\ngraphroot=\"/a\"\r\n"), "/a");
	assert_string_equal(GRAPHROOT(""), "absent");
	assert_string_equal(GRAPHROOT("\n\n# nothing\n"), "absent");
}

static void test_tables(void **state)
{
	(void)state;

	/* the key under [storage] only: before it, under a sub-table, under another table */
	assert_string_equal(GRAPHROOT("graphroot = \"/root-table\"\n[storage]\n"), "absent");
	assert_string_equal(GRAPHROOT("[storage.options]\ngraphroot = \"/sub\"\n"), "absent");
	assert_string_equal(GRAPHROOT("[storage]\n[storage.options]\ngraphroot = \"/sub\"\n"), "absent");
	assert_string_equal(GRAPHROOT("[storage.options]\nsize = \"\"\n[storage]\ngraphroot = \"/a\"\n"), "/a");
	assert_string_equal(GRAPHROOT("[engine]\ngraphroot = \"/other\"\n[storage]\ndriver = \"overlay\"\n"), "absent");
	/* quoted table names and keys, dotted keys, an inline table: the same setting */
	assert_string_equal(GRAPHROOT("[\"storage\"]\n\"graphroot\" = \"/a\"\n"), "/a");
	/* a literal key has no escapes */
	assert_string_equal(GRAPHROOT("['storage']\n'graph\\u0072oot' = \"/a\"\n"), "absent");
	assert_string_equal(GRAPHROOT("[storage]\n\"graph\\u0072oot\" = \"/a\"\n"), "/a");
	assert_string_equal(GRAPHROOT("storage.graphroot = \"/dotted\"\n"), "/dotted");
	assert_string_equal(GRAPHROOT("storage . \"graphroot\" = \"/dotted\"\n"), "/dotted");
	assert_string_equal(GRAPHROOT("storage = { driver = \"overlay\", graphroot = \"/inline\" }\n"), "/inline");
	assert_string_equal(GRAPHROOT("[storage]\noptions.graphroot = \"/deeper\"\n"), "absent");
	/* a key of the root table (containerd's root, nerdctl's data_root), not one of a table's */
	assert_string_equal(said("version = 2\nroot = \"/srv/containerd\"\nstate = \"/run/containerd\"\n"
				 "[plugins.\"io.containerd.grpc.v1.cri\".containerd]\nroot = \"/no\"\n",
				 NULL, "root"),
			    "/srv/containerd");
	assert_string_equal(said("[plugins]\nroot = \"/no\"\n", NULL, "root"), "absent");
	assert_string_equal(said("debug = false\ndata_root = \"/srv/nerdctl\"\n", NULL, "data_root"), "/srv/nerdctl");
}

static void test_strings(void **state)
{
	(void)state;

	/* double quotes: escapes undone; single quotes: none */
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = \"/a\\\\b\\t\\\"c\\\"\"\n"), "/a\\b\t\"c\"");
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = '/a\\b\\t\"c\"'\n"), "/a\\b\\t\"c\"");
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = \"/caf\\u00e9/\\U0001F600\"\n"),
			    "/caf\xc3\xa9/\xf0\x9f\x98\x80");
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = \"\"\n"), "");
	/* multi-line: the first newline is not the string's; a line-ending backslash joins lines */
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = \"\"\"\n/srv/\\\n    containers\"\"\"\n"),
			    "/srv/containers");
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = '''\n/a'b'''\n"), "/a'b");
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = '''/a''''\n"), "/a'");
	/* what looks like a table or a key inside a string or an array is not one */
	assert_string_equal(GRAPHROOT("notes = \"\"\"\n[storage]\ngraphroot = \"/fake\"\n\"\"\"\n"), "absent");
	assert_string_equal(GRAPHROOT("notes = '''\n[storage]\ngraphroot = '/fake'\n'''\n[storage]\n"), "absent");
	assert_string_equal(GRAPHROOT("stores = [\n  [\"storage\"],\n  \"[storage]\", # graphroot = \"/fake\"\n]\n"
				      "graphroot = \"/top\"\n"),
			    "absent");
	assert_string_equal(
	    GRAPHROOT("when = 1979-05-27 07:32:00Z\nn = -1_000.5e+3\nok = true\n[storage]\ngraphroot = \"/a\"\n"),
	    "/a");
}

/* Files their programs would refuse, and settings that are not a directory's name: bad, never a guess. */
static void test_bad(void **state)
{
	char huge[200];
	(void)state;

	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = \"/a\"\ngraphroot = \"/b\"\n"), "bad");  /* twice */
	/* the table twice */
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = \"/a\"\n[storage]\n"), "bad");
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = 7\n"), "bad");                          /* not a string */
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = [\"/a\"]\n"), "bad");
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = { a = \"/a\" }\n"), "bad");
	assert_string_equal(GRAPHROOT("[storage.graphroot]\n"), "bad");                               /* a table */
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot.x = \"/a\"\n"), "bad");
	assert_string_equal(GRAPHROOT("storage = \"x\"\n"), "bad");
	/* an array of tables */
	assert_string_equal(GRAPHROOT("[[storage]]\ngraphroot = \"/a\"\n"), "bad");
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = \"/a\n"), "bad");                       /* not closed */
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = \"/a\nb\"\n"), "bad");
	/* no such escape */
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = \"/a\\q\"\n"), "bad");
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = \"/a\\ud800\"\n"), "bad");              /* a surrogate */
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = \"/a\\u0000\"\n"), "bad");              /* a NUL */
	/* a control character */
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = \"/a\x01\"\n"), "bad");
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = \"/a\" junk\n"), "bad");
	assert_string_equal(GRAPHROOT("[storage\ngraphroot = \"/a\"\n"), "bad");
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot \"/a\"\n"), "bad");
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = \"/a\"\nlist = [1, 2\n"), "bad");       /* anywhere */
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = \"/a\"\n= 1\n"), "bad");
	assert_string_equal(GRAPHROOT("[storage]\rgraphroot = \"/a\"\n"), "bad");                     /* a lone CR */
	assert_string_equal(GRAPHROOT("[storage]\ngraphroot = \"\"\"/a\"\"\"\"\"\"\n"), "bad");          /* 6 quotes */
	assert_string_equal(GRAPHROOT("x = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n"),
			    "bad");
	assert_string_equal(GRAPHROOT("x = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n"),
			    "absent");
	/* a value longer than kept */
	snprintf(huge, sizeof(huge), "[storage]\ngraphroot = \"/%0100d\"\n", 0);
	assert_string_equal(GRAPHROOT(huge), "bad");
	/* a NUL in the file */
	assert_int_equal(
	    toml_string("[storage]\ngraphroot = \"/a\"\n\0", 28, "storage", "graphroot", value, sizeof(value)),
	    SETTING_BAD);
	/* the text's end is its length: nothing read after it */
	assert_int_equal(toml_string("[storage]\ngraphroot = \"/a\"", 24, "storage", "graphroot", value, sizeof(value)),
			 SETTING_BAD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_storage_conf), cmocka_unit_test(test_comments_and_space),
		cmocka_unit_test(test_tables),       cmocka_unit_test(test_strings),
		cmocka_unit_test(test_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
