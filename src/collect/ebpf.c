/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ebpf.c: what the eBPF collectors share: libbpf kept quiet, and why a program cannot count here,
 * in words a user can act on.
 */
#include "collect/ebpf.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "collect/sysroot.h"
#include "common/util.h"

#include <linux/capability.h>
#include <sys/syscall.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

bool ebpf_may_trace(void)
{
	struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { { 0 } };
	unsigned long long effective;

	if (syscall(SYS_capget, &header, data) != 0)
		return geteuid() == 0;
	effective = (unsigned long long)data[1].effective << 32 | data[0].effective;
	return (effective >> CAP_SYS_ADMIN & 1) ||
	       ((effective >> CAP_BPF & 1) && (effective >> CAP_PERFMON & 1));
}

#ifdef IOLENS_BPF
#include "collect/bpf_dl.h"
#include "common/dl.h"

static char first_warning[256];
static char
    core_failure[200]; /* "struct request.io_start_time_ns": a CO-RE relocation this kernel's BTF cannot resolve */
static char why[512];

/*
 * A CO-RE relocation the kernel's BTF cannot resolve (a field, type or enumerator the program
 * reads that this kernel lacks): libbpf poisons the instruction, the verifier refuses it if it can
 * be reached, and the load log ends with "failed to resolve CO-RE relocation <byte_off> [68]
 * struct request.io_start_time_ns (0:16 @ offset 112)". Its name is kept for ebpf_why.
 */
static void keep_core_failure(const char *format, va_list args)
{
	static const char marker[] = "failed to resolve CO-RE relocation ";
	char *text = NULL, *at, *name, *end;

	if (core_failure[0] || vasprintf(&text, format, args) < 0)
		return;
	at = strstr(text, marker);
	if (at) {
		/* After "<kind> [type id] ": the name, up to " (" or the line's end. */
		name = strchr(at + sizeof(marker) - 1, ']');
		name = name ? name + 1 + strspn(name + 1, " ") : at + sizeof(marker) - 1;
		end = name + strcspn(name, "(\n");
		while (end > name && end[-1] == ' ')
			end--;
		snprintf(core_failure, sizeof(core_failure), "%.*s", (int)(end - name), name);
	}
	free(text);
}

/* The first warning is the cause; the ones after it say what failed because of it. */
static int keep_first_warning(enum libbpf_print_level level, const char *format, va_list args)
{
	char text[sizeof(first_warning)];
	const char *start = text;
	size_t len;

	if (getenv("IOLENS_BPF_DEBUG")) { /* everything libbpf says, for whoever debugs a refusal */
		va_list copy;

		va_copy(copy, args);
		vfprintf(stderr, format, copy);
		va_end(copy);
	}
	if (level == LIBBPF_WARN) {
		va_list copy;

		va_copy(copy, args);
		keep_core_failure(format, copy);
		va_end(copy);
	}
	if (level != LIBBPF_WARN || first_warning[0])
		return 0;
	vsnprintf(text, sizeof(text), format, args);
	if (strncmp(start, "libbpf: ", 8) == 0)
		start += 8;
	snprintf(first_warning, sizeof(first_warning), "%s", start);
	len = strlen(first_warning);
	while (len && (first_warning[len - 1] == '\n' || first_warning[len - 1] == ' '))
		first_warning[--len] = '\0';
	return 0;
}

/* The pointers bpf_dl.h declares, one each of libbpf.syms. */
#define DEFINE_SYM(pointer, name) __typeof__(pointer) pointer;
LIBBPF_SYMS(DEFINE_SYM)
/* What dl_open_many resolves: where each pointer goes, and its name. */
#define SYM_ARG(pointer, name) (void (**)(void))&pointer, name,

int ebpf_init(const char **reason)
{
	static void *libbpf;
	static char dl_why[256];

	if (dl_open_many(&libbpf, BPF_SONAME, dl_why, sizeof(dl_why), LIBBPF_SYMS(SYM_ARG) NULL) != 0) {
		snprintf(why, sizeof(why), "libbpf cannot be loaded: install it (Debian: libbpf1)");
		warn_detail("eBPF: %s", dl_why);
		*reason = why;
		return -ENOENT;
	}
	first_warning[0] = '\0';
	core_failure[0] = '\0';
	libbpf_set_print(keep_first_warning);
	return 0;
}

/* The first tracepoint a program of the object attaches to that this kernel's BTF lacks. */
static const char *missing_tracepoint(struct bpf_object *object)
{
	static char name[128];
	struct bpf_program *program;
	struct btf *vmlinux = btf__load_vmlinux_btf();
	const char *found = NULL;

	if (!vmlinux || !object)
		return NULL;
	bpf_object__for_each_program(program, object) {
		const char *section = bpf_program__section_name(program), *event = strchr(section, '/');

		if (!bpf_program__autoload(program) || !event ||
		    (strncmp(section, "tp_btf/", 7) != 0 && strncmp(section, "raw_tp/", 7) != 0))
			continue;
		snprintf(name, sizeof(name), "btf_trace_%s", event + 1);
		if (btf__find_by_name_kind(vmlinux, name, BTF_KIND_TYPEDEF) < 0) {
			snprintf(name, sizeof(name), "%s", event + 1);
			found = name;
			break;
		}
	}
	btf__free(vmlinux);
	return found;
}

int ebpf_enumerator_in(const struct btf *btf, const char *name, const char *prefix, long long *value)
{
	size_t prefix_len = prefix ? strlen(prefix) : 0;
	int rc = -ENOENT;

	if (!btf)
		return -ENODATA;
	for (__u32 id = 1, count = btf__type_cnt(btf); id < count && rc != 0; id++) {
		const struct btf_type *type = btf__type_by_id(btf, id);
		const struct btf_enum *each;

		if (!type || btf_kind(type) != BTF_KIND_ENUM) /* (64-bit enums hold no flags) */
			continue;
		each = btf_enum(type);
		for (__u16 i = 0; i < btf_vlen(type); i++, each++) {
			const char *enumerator = btf__name_by_offset(btf, each->name_off);

			if (!enumerator)
				continue;
			if (!strcmp(enumerator, name)) {
				*value = each->val;
				rc = 0;
				break;
			}
			if (prefix && !strncmp(enumerator, prefix, prefix_len))
				rc = -ESRCH;
		}
	}
	return rc;
}

/* Whether name starts with one of prefixes (NULL-ended). */
static bool starts_with_one(const char *name, const char *const *prefixes)
{
	for (; prefixes && *prefixes; prefixes++)
		if (!strncmp(name, *prefixes, strlen(*prefixes)))
			return true;
	return false;
}

/*
 * The raw BTF's types, one pass: each wanted enum and typedef added to out. 0, or -1 when the
 * data is not BTF as this reads it (a kind it does not know, an offset outside).
 */
static int digest_types(const unsigned char *data, size_t size, const char *const *enum_prefixes,
			const char *const *typedef_prefixes, struct btf *out)
{
	const struct btf_header *header = (const void *)data;
	const unsigned char *type, *end;
	const char *strings;
	size_t strings_len;

	if (size < sizeof(*header) || header->magic != BTF_MAGIC || header->hdr_len > size ||
	    (size_t)header->hdr_len + header->type_off + header->type_len > size ||
	    (size_t)header->hdr_len + header->str_off + header->str_len > size || !header->str_len)
		return -1;
	type = data + header->hdr_len + header->type_off;
	end = type + header->type_len;
	strings = (const char *)data + header->hdr_len + header->str_off;
	strings_len = header->str_len;
	if (strings[strings_len - 1] != '\0')
		return -1;
	while (type + sizeof(struct btf_type) <= end) {
		const struct btf_type *t = (const void *)type;
		unsigned vlen = BTF_INFO_VLEN(t->info);
		size_t extra;

		if (t->name_off >= strings_len)
			return -1;
		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_INT: extra = 4; break;
		case BTF_KIND_ARRAY: extra = sizeof(struct btf_array); break;
		case BTF_KIND_STRUCT:
		case BTF_KIND_UNION: extra = (size_t)vlen * sizeof(struct btf_member); break;
		case BTF_KIND_ENUM: extra = (size_t)vlen * sizeof(struct btf_enum); break;
		case BTF_KIND_FUNC_PROTO: extra = (size_t)vlen * sizeof(struct btf_param); break;
		case BTF_KIND_VAR: extra = sizeof(struct btf_var); break;
		case BTF_KIND_DATASEC: extra = (size_t)vlen * sizeof(struct btf_var_secinfo); break;
		case BTF_KIND_DECL_TAG: extra = sizeof(struct btf_decl_tag); break;
		case BTF_KIND_ENUM64: extra = (size_t)vlen * sizeof(struct btf_enum64); break;
		case BTF_KIND_PTR: case BTF_KIND_FWD: case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST: case BTF_KIND_RESTRICT: case BTF_KIND_FUNC: case BTF_KIND_FLOAT:
		case BTF_KIND_TYPE_TAG: extra = 0; break;
		default: return -1;
		}
		if (type + sizeof(*t) + extra > end)
			return -1;
		if (BTF_INFO_KIND(t->info) == BTF_KIND_TYPEDEF && !strncmp(strings + t->name_off, "btf_trace_", 10) &&
		    starts_with_one(strings + t->name_off + 10, typedef_prefixes)) {
			if (btf__add_typedef(out, strings + t->name_off, 0) < 0)
				return -1;
		} else if (BTF_INFO_KIND(t->info) == BTF_KIND_ENUM) {
			const struct btf_enum *e = (const void *)(t + 1);
			bool wanted = false;

			for (unsigned i = 0; i < vlen && !wanted; i++)
				wanted = e[i].name_off < strings_len &&
				    starts_with_one(strings + e[i].name_off, enum_prefixes);
			if (wanted) {
				if (btf__add_enum(out, t->name_off ? strings + t->name_off : NULL, t->size) < 0)
					return -1;
				for (unsigned i = 0; i < vlen; i++)
					if (e[i].name_off >= strings_len ||
					    btf__add_enum_value(out, strings + e[i].name_off, e[i].val) < 0)
						return -1;
			}
		}
		type += sizeof(*t) + extra;
	}
	return type == end ? 0 : -1;
}

/* size bytes of fd into data: true when all of them came. */
static bool read_exactly(int fd, unsigned char *data, size_t size)
{
	size_t done = 0;

	while (done < size) {
		ssize_t n = read(fd, data + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		done += (size_t)n;
	}
	return true;
}

struct btf *ebpf_vmlinux_digest(const char *const *enum_prefixes, const char *const *typedef_prefixes)
{
	static const char path[] = "/sys/kernel/btf/vmlinux";
	struct btf *out = NULL;
	struct stat st;
	void *data = MAP_FAILED;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;

	/* Mapped (Linux 6.16 maps the kernel's own pages: nothing copied), else read. */
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0) {
		data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (data == MAP_FAILED) {
			data =
			    mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (data != MAP_FAILED && !read_exactly(fd, data, (size_t)st.st_size)) {
				munmap(data, (size_t)st.st_size);
				data = MAP_FAILED;
			}
		}
	}
	if (data != MAP_FAILED) {
		out = btf__new_empty();
		rc = out ? digest_types(data, (size_t)st.st_size, enum_prefixes, typedef_prefixes, out) : -1;
		munmap(data, (size_t)st.st_size);
	}
	if (fd >= 0)
		close(fd);
	if (rc == 0)
		return out;
	btf__free(out);
	return btf__load_vmlinux_btf();
}

bool ebpf_compat(const struct btf *vmlinux)
{
	long long value;

	/* The map type (5.11, for BPF LSM; tracing programs have it from 5.13). */
	if (vmlinux)
		return ebpf_enumerator_in(vmlinux, "BPF_MAP_TYPE_TASK_STORAGE", NULL, &value) == -ENOENT;
	return ebpf_enumerator("BPF_MAP_TYPE_TASK_STORAGE", NULL, &value) == -ENOENT;
}

int ebpf_enumerator(const char *name, const char *prefix, long long *value)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int rc = ebpf_enumerator_in(vmlinux, name, prefix, value);

	btf__free(vmlinux);
	return rc;
}

bool ebpf_tracepoint_in(const struct btf *btf, const char *event)
{
	char name[128];

	snprintf(name, sizeof(name), "btf_trace_%s", event);
	return btf && btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) >= 0;
}

/* The type id refers to, past typedefs and qualifiers; NULL for none. */
static const struct btf_type *btf_skip_names(const struct btf *btf, __u32 id)
{
	const struct btf_type *type = btf__type_by_id(btf, id);

	for (int depth = 0; type && depth < 16; depth++) {
		switch (btf_kind(type)) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_CONST:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			type = btf__type_by_id(btf, type->type);
			continue;
		default:
			return type;
		}
	}
	return NULL;
}

/* The type of argument arg (0: the first after the context) of the tracepoint event, names skipped, or NULL. */
static const struct btf_type *tracepoint_arg(const struct btf *btf, const char *event, unsigned arg)
{
	const struct btf_type *type;
	char name[128];
	int id;

	if (!btf)
		return NULL;
	snprintf(name, sizeof(name), "btf_trace_%s", event);
	id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return NULL;
	/* typedef void (*btf_trace_EVENT)(void *context, ARG0, ARG1...) */
	type = btf_skip_names(btf, (__u32)id);
	if (!type || btf_kind(type) != BTF_KIND_PTR)
		return NULL;
	type = btf_skip_names(btf, type->type);
	if (!type || btf_kind(type) != BTF_KIND_FUNC_PROTO || arg + 1 >= btf_vlen(type))
		return NULL;
	return btf_skip_names(btf, btf_params(type)[arg + 1].type);
}

const char *ebpf_tracepoint_arg_struct(const struct btf *btf, const char *event, unsigned arg)
{
	const struct btf_type *type = tracepoint_arg(btf, event, arg);

	if (!type || btf_kind(type) != BTF_KIND_PTR)
		return NULL;
	type = btf_skip_names(btf, type->type);
	if (!type || btf_kind(type) != BTF_KIND_STRUCT || !type->name_off)
		return NULL;
	return btf__name_by_offset(btf, type->name_off);
}

bool ebpf_tracepoint_arg_pointer(const struct btf *btf, const char *event, unsigned arg)
{
	const struct btf_type *type = tracepoint_arg(btf, event, arg);

	return type && btf_kind(type) == BTF_KIND_PTR;
}

/* "none [integrity] confidentiality": the mode in brackets, or NULL when securityfs does not say. */
static const char *lockdown_mode(void)
{
	static char text[128];
	char *open_bracket, *close_bracket;

	/* the live kernel's, whatever the sysroot: it is why a program did not load here */
	if (read_small_at(AT_FDCWD, "/sys/kernel/security/lockdown", text, sizeof(text)) <= 0)
		return NULL;
	open_bracket = strchr(text, '[');
	close_bracket = open_bracket ? strchr(open_bracket, ']') : NULL;
	if (!close_bracket)
		return NULL;
	*close_bracket = '\0';
	return open_bracket + 1;
}

const char *ebpf_why(struct bpf_object *object, int err, const char *step)
{
	const char *tracepoint, *lockdown;
	struct utsname host;

	if (err < 0)
		err = -err;
	if (!ebpf_may_trace()) {
		snprintf(why, sizeof(why), "%s", EBPF_NEEDS_PRIVILEGE);
		warn_detail("eBPF: loading a program needs root, or CAP_BPF and CAP_PERFMON: run it with sudo");
		return why;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		warn_detail("eBPF: /sys/kernel/btf/vmlinux: %s: it needs a kernel built with CONFIG_DEBUG_INFO_BTF=y",
			    strerror(errno));
		snprintf(why, sizeof(why), "this kernel has no BTF");
		return why;
	}
	tracepoint = missing_tracepoint(object);
	if (tracepoint) {
		snprintf(why, sizeof(why), "this kernel (%s) has no tracepoint %s",
			 uname(&host) == 0 ? host.release : "?", tracepoint);
		return why;
	}
	if (core_failure[0]) {
		snprintf(why, sizeof(why), "this kernel's BTF has no %s, which the eBPF program reads",
			 printable_name(core_failure));
		return why;
	}
	lockdown = lockdown_mode();
	if (lockdown && strcmp(lockdown, "confidentiality") == 0) {
		snprintf(why, sizeof(why), "the kernel is locked down (confidentiality)");
		warn_detail(
		    "eBPF: lockdown=confidentiality (a boot option, or Secure Boot) forbids reading kernel memory");
		return why;
	}
	if (err == EPERM || err == EACCES) {
		snprintf(why, sizeof(why), "the kernel refused it at %s: %s", step, strerror(err));
		warn_detail("eBPF: kernel lockdown or a security module (SELinux, AppArmor) forbids it to %s%s%s",
			    geteuid() == 0 ? "root" : "this user", first_warning[0] ? "; libbpf: " : "", first_warning);
		return why;
	}
	snprintf(why, sizeof(why), "the kernel refused it at %s: %s", step, strerror(err));
	if (first_warning[0])
		warn_detail("eBPF: libbpf: %s", first_warning);
	return why;
}

int ebpf_failed(struct bpf_object *object, const char *step, int fallback, const char **reason)
{
	int err = errno ? -errno : fallback;

	*reason = ebpf_why(object, err, step);
	return err;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/*
 * Room on the heap for libbpf's parse of the kernel's BTF as it loads a program: it reads the
 * file into one buffer and copies it to another (twice its size, and an index), each page of
 * them new to the process and a page fault at its first touch, which on a virtual machine is most
 * of the load's CPU time. Made as one block of the heap, its pages populated by one madvise
 * (Linux 5.14), then freed and kept there (malloc's thresholds raised) for libbpf's buffers to
 * take. heap_after_load puts the thresholds back to glibc's defaults and gives the room back.
 */
static void heap_for_load(void)
{
	struct stat st;
	size_t size;
	char *block;

	if (stat("/sys/kernel/btf/vmlinux", &st) != 0 || st.st_size <= 0)
		return;
	size = (size_t)st.st_size * 2 + (size_t)st.st_size / 4;
	mallopt(M_MMAP_THRESHOLD, (int)(size + (1 << 20)));
	mallopt(M_TRIM_THRESHOLD, (int)(size * 2));
	block = malloc(size);
	if (block) {
		uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), start = ((uintptr_t)block + page - 1) & ~(page - 1);
		uintptr_t end = ((uintptr_t)block + size) & ~(page - 1);

		if (end > start)
			madvise((void *)start, end - start, MADV_POPULATE_WRITE); /* (else: faulted in as used) */
		free(block);
	}
}

static void heap_after_load(void)
{
	mallopt(M_MMAP_THRESHOLD, 128 << 10);
	mallopt(M_TRIM_THRESHOLD, 128 << 10);
	malloc_trim(0);
}

int ebpf_load_attach(struct bpf_object_skeleton *skeleton, const char **reason)
{
	const char *step = "load";
	int err;

	heap_for_load();
	err = bpf_object__load_skeleton(skeleton);
	heap_after_load();

	if (!err) {
		step = "attach";
		err = bpf_object__attach_skeleton(skeleton);
	}
	if (!err)
		return 0;
	err = err < 0 ? err : -EINVAL;
	*reason = ebpf_why(*skeleton->obj, err, step);
	return err;
}

#else /* built without eBPF */

int ebpf_init(const char **reason)
{
	*reason = ebpf_why(NULL, -ENOSYS, "build");
	return -ENOSYS;
}

const char *ebpf_why(struct bpf_object *object, int err, const char *step)
{
	(void)object;
	(void)err;
	(void)step;
	warn_detail("eBPF: building it needs libbpf, bpftool, clang and the kernel's BTF (make deps)");
	return "this iolens was built without eBPF";
}

#endif
