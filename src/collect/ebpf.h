/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ebpf.h: what the eBPF collectors share: libbpf kept quiet, and why a program cannot count here,
 * in words a user can act on.
 */
#ifndef IOLENS_EBPF_H
#define IOLENS_EBPF_H

#include <stdbool.h>

struct bpf_object;
struct btf;
struct bpf_object_skeleton;

/*
 * Before anything of libbpf is used: opens libbpf (collect/bpf_dl.h) and keeps its messages off
 * stderr (the first warning is kept for ebpf_why). 0, or -errno with *why saying what is missing.
 */
int ebpf_init(const char **why);

/*
 * Why the object could not be loaded or attached (err: the -errno libbpf returned), with the
 * fix: not root or without CAP_BPF and CAP_PERFMON, no BTF, a tracepoint this kernel does not
 * have, kernel lockdown, or what the kernel and libbpf said. The text lives until the next call.
 */
const char *ebpf_why(struct bpf_object *object, int err, const char *step);

/* ebpf_why's reason when neither (said after "eBPF" or "no eBPF (...)"). */
#define EBPF_NEEDS_PRIVILEGE "needs root or CAP_BPF+CAP_PERFMON"

/* Root, or the two capabilities eBPF tracing needs since Linux 5.8 (CAP_SYS_ADMIN before). */
bool ebpf_may_trace(void);

/*
 * After a libbpf call that failed and set errno (a skeleton's open, a ring buffer's making):
 * -errno (fallback, a negative errno, when errno is 0), with *why from ebpf_why for step.
 */
int ebpf_failed(struct bpf_object *object, const char *step, int fallback, const char **why);

/*
 * Loads and attaches an opened skeleton (its generated struct's `skeleton`): 0, or -errno with
 * *why from ebpf_why for the step that failed. The caller destroys the skeleton on failure.
 */
int ebpf_load_attach(struct bpf_object_skeleton *skeleton, const char **why);

/*
 * The value of the enumerator name in this kernel's BTF, in any enum, named or not (6.12 has
 * the request flags' bits as an enum without a name, which CO-RE cannot look up): 0; -ESRCH
 * when it is missing but others starting with prefix are there (renamed: its value unknown);
 * -ENOENT when neither is; -ENODATA without BTF.
 */
int ebpf_enumerator(const char *name, const char *prefix, long long *value);
/* The same in a BTF given (NULL: -ENODATA), for tests of what a kernel's BTF may hold. */
int ebpf_enumerator_in(const struct btf *btf, const char *name, const char *prefix, long long *value);

/*
 * A small BTF of what the running kernel's holds of interest to a loader, read in one pass
 * without libbpf's parse of the whole (which copies its megabytes twice and indexes every type):
 * every enum with an enumerator starting with one of enum_prefixes (whole, so that
 * ebpf_enumerator_in tells a renamed enumerator from a missing one), and each typedef named
 * btf_trace_<event> for the typedef_prefixes' events ("block_" keeps btf_trace_block_*, as
 * ebpf_tracepoint_in asks; they refer to void here). Free with btf__free. Where
 * /sys/kernel/btf/vmlinux cannot be read whole, btf__load_vmlinux_btf's BTF (libbpf looks
 * elsewhere too); NULL without BTF.
 */
struct btf *ebpf_vmlinux_digest(const char *const *enum_prefixes, const char *const *typedef_prefixes);

/*
 * Whether the kernel of this BTF (NULL: the running kernel's) needs the programs built with
 * IOLENS_BPF_COMPAT (src/bpf/compat.h): one with BTF but no task storage in it (before 5.11).
 */
bool ebpf_compat(const struct btf *vmlinux);

/*
 * Defines NAME_open(compat): skeleton NAME_bpf opened over its object (NAME_bpf__open), or with
 * compat over the object built with IOLENS_BPF_COMPAT (NAME_compat.skel.h's bytes). The two have
 * the same programs, maps and globals in the same order (their sizes asserted), so one skeleton
 * serves both. NULL on failure, with errno.
 */
#define EBPF_DEFINE_OPEN(name)                                                                                      \
	_Static_assert(sizeof(struct name##_bpf) == sizeof(struct name##_compat_bpf) &&                            \
			       sizeof(struct name##_bpf__rodata) == sizeof(struct name##_compat_bpf__rodata) &&     \
			       sizeof(struct name##_bpf__bss) == sizeof(struct name##_compat_bpf__bss),             \
		       #name ".bpf.c built with and without IOLENS_BPF_COMPAT differ");                            \
	static struct name##_bpf *name##_open(bool compat)                                                        \
	{                                                                                                         \
		struct name##_bpf *s;                                                                             \
                                                                                                                  \
		if (!compat)                                                                                      \
			return name##_bpf__open();                                                                \
		s = calloc(1, sizeof(*s));                                                                        \
		if (!s)                                                                                           \
			return NULL;                                                                              \
		if (name##_bpf__create_skeleton(s) == 0) {                                                        \
			s->skeleton->data = name##_compat_bpf__elf_bytes(&s->skeleton->data_sz);                  \
			if (bpf_object__open_skeleton(s->skeleton, NULL) == 0)                                    \
				return s;                                                                         \
		}                                                                                                 \
		name##_bpf__destroy(s);                                                                           \
		return NULL;                                                                                      \
	}

/*
 * Whether the kernel of this BTF (btf__load_vmlinux_btf's) has the tracepoint event
 * (block_io_start), by its btf_trace_<event> typedef, which tp_btf and raw_tp programs attach
 * by: false without BTF.
 */
bool ebpf_tracepoint_in(const struct btf *btf, const char *event);

/*
 * The name of the struct that argument `arg` (0: the first after the context) of the tracepoint
 * event points to, by its btf_trace_<event> typedef ("folio", "page"): NULL when the BTF has no
 * such tracepoint or argument, or the argument is no pointer to a named struct.
 */
const char *ebpf_tracepoint_arg_struct(const struct btf *btf, const char *event, unsigned arg);
/* Whether that argument is a pointer (of any type, void too): false as above. */
bool ebpf_tracepoint_arg_pointer(const struct btf *btf, const char *event, unsigned arg);

#endif
