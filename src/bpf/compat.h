/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compat.h: what a program built with IOLENS_BPF_COMPAT does instead, for kernels before 5.11
 * (the collector tells from the BTF: no task storage there, ebpf_compat). Those have no task
 * storage for tracing programs (5.13), no bpf_get_current_task_btf (5.11), and no atomic
 * exchange, and or or (5.12: the verifier refuses the instruction anywhere in a program). There:
 * - each thread's storage is an entry under its thread id in a hash map, made from an empty
 *   one and deleted by the program as the thread is done with it (THREAD_STORAGE_DONE);
 * - the current task is read through probes (CURRENT);
 * - what is exchanged or masked atomically elsewhere is a plain read and write, which two cpus
 *   at once on the same word may race on.
 */
#ifndef IOLENS_BPF_COMPAT_H
#define IOLENS_BPF_COMPAT_H

#ifdef IOLENS_BPF_COMPAT
#define THREADS_BY_ID 1
#define EXCHANGE(p, v)                        \
	({                                    \
		__typeof__(*(p)) old_ = *(p); \
		*(p) = (v);                   \
		old_;                         \
	})
#define CLEAR_BITS(p, bits) (*(p) &= ~(bits))
#define SET_BITS(p, bits) (*(p) |= (bits))
#define current_task() ((struct task_struct *)bpf_get_current_task())
#define CURRENT(field) BPF_CORE_READ(current_task(), field)
#else
#define THREADS_BY_ID 0
#define EXCHANGE(p, v) __sync_lock_test_and_set(p, v)
#define CLEAR_BITS(p, bits) __sync_fetch_and_and(p, ~(bits))
#define SET_BITS(p, bits) __sync_fetch_and_or(p, bits)
#define current_task() bpf_get_current_task_btf()
#define CURRENT(field) (bpf_get_current_task_btf()->field)
#endif

/* A map of each thread's type_ (task storage, or a hash of up to 65,536 thread ids), and an empty one. */
#define THREAD_STORAGE(name, type_)                                                          \
	struct {                                                                             \
		__uint(type, THREADS_BY_ID ? BPF_MAP_TYPE_HASH : BPF_MAP_TYPE_TASK_STORAGE); \
		__uint(map_flags, BPF_F_NO_PREALLOC);                                        \
		__uint(max_entries, THREADS_BY_ID ? 1 << 16 : 0);                            \
		__type(key, int);                                                            \
		__type(value, type_);                                                        \
	} name SEC(".maps");                                                                 \
	struct {                                                                             \
		__uint(type, BPF_MAP_TYPE_ARRAY);                                            \
		__uint(map_flags, BPF_F_RDONLY_PROG);                                        \
		__uint(max_entries, 1);                                                      \
		__type(key, __u32);                                                          \
		__type(value, type_);                                                        \
	} name##_empty SEC(".maps")

/* The current thread's entry in map (THREAD_STORAGE), made empty first if create; NULL if none. */
static __always_inline void *thread_storage(void *map, void *empty_map, bool create)
{
#if THREADS_BY_ID
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0;
	void *entry = bpf_map_lookup_elem(map, &tid), *empty;

	if (entry || !create)
		return entry;
	empty = bpf_map_lookup_elem(empty_map, &zero);
	if (!empty || bpf_map_update_elem(map, &tid, empty, BPF_NOEXIST) != 0)
		return 0;
	return bpf_map_lookup_elem(map, &tid);
#else
	return bpf_task_storage_get(map, bpf_get_current_task_btf(), 0, create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
#endif
}

/* Task's entry in map, for an iterator: NULL if none. */
static __always_inline void *task_storage_of(void *map, struct task_struct *task)
{
#if THREADS_BY_ID
	__u32 tid = task->pid;

	return bpf_map_lookup_elem(map, &tid);
#else
	return bpf_task_storage_get(map, task, 0, 0);
#endif
}

/* The entry of thread tid is not needed any more: deleted (task storage goes with its task). */
static __always_inline void thread_storage_done(void *map, __u32 tid)
{
	if (THREADS_BY_ID)
		bpf_map_delete_elem(map, &tid);
}

#endif
