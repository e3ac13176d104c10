/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_cachestat_caps.c: cachestat_capabilities held to the kernel's BTF as bpftool dumps it and to
 * its kprobe event source; probed as root.
 */
#include "unit.h"

#include <sys/wait.h>
#include <unistd.h>

#include "collect/cachestat.h"

/* Whether bpftool's dump of this kernel's BTF has a line matching pattern (grep -E): 1, 0, or -1 without bpftool. */
static int btf_has(const char *pattern)
{
	char command[512];
	int rc;

	snprintf(command, sizeof(command),
		 "command -v bpftool >/dev/null || exit 2; bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null | "
		 "grep -qE \"%s\"",
		 pattern);
	rc = system(command);
	if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) > 1)
		return -1;
	return WEXITSTATUS(rc) == 0;
}

static void test_capabilities(void **state)
{
	struct cachestat_capability caps[CACHESTAT_MECHANISMS];
	bool root = geteuid() == 0;
	int tracepoints, functions;
	(void)state;

	assert_int_equal(cachestat_capabilities(caps, root), 0);
	assert_string_equal(caps[0].mechanism, "tracepoints");
	assert_string_equal(caps[1].mechanism, "fentry");
	assert_string_equal(caps[2].mechanism, "kprobes");
	for (int i = 0; i < CACHESTAT_MECHANISMS; i++) {
		printf("# %s: %s%s%s\n", caps[i].mechanism,
		       caps[i].verdict == CACHESTAT_CAN ? "can" : caps[i].verdict == CACHESTAT_MAY ? "may" : "cannot",
		       caps[i].why_not ? ": " : "", caps[i].why_not ? caps[i].why_not : "");
		assert_true((caps[i].verdict == CACHESTAT_CANNOT) == (caps[i].why_not != NULL));
		if (root) /* probed: a verdict either way */
			assert_int_not_equal(caps[i].verdict, CACHESTAT_MAY);
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		for (int i = 0; i < CACHESTAT_MECHANISMS; i++)
			assert_int_equal(caps[i].verdict, CACHESTAT_CANNOT);
		return;
	}
	tracepoints = btf_has("^\\[[0-9]+\\] TYPEDEF 'btf_trace_mm_filemap_get_pages'");
	functions = btf_has("^\\[[0-9]+\\] FUNC 'filemap_read'");
	if (tracepoints < 0 || functions < 0) {
		skip();
		return;
	}
	/* The truth: what the BTF has (the three tracepoints came together, in 6.9). */
	if (!tracepoints) {
		assert_int_equal(caps[0].verdict, CACHESTAT_CANNOT);
		assert_non_null(strstr(caps[0].why_not, "no tracepoint mm_filemap_"));
	}
	if (!functions) {
		assert_int_equal(caps[1].verdict, CACHESTAT_CANNOT);
		assert_int_equal(caps[2].verdict, CACHESTAT_CANNOT);
	}
	if (access("/sys/bus/event_source/devices/kprobe/type", F_OK) != 0 &&
	    access("/sys/kernel/tracing/kprobe_events", F_OK) != 0 &&
	    access("/sys/kernel/debug/tracing/kprobe_events", F_OK) != 0)
		assert_int_equal(caps[2].verdict, CACHESTAT_CANNOT);
	/* The mode: nothing started here. */
	assert_string_equal(cachestat_mode(), "procfs");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capabilities),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
