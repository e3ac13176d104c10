/*
 * bpf_dl.h: libbpf for the eBPF collectors, opened with dlopen by ebpf_init (see common/dl.h),
 * not linked: pcstat and the others that never load a program do not load libbpf, libelf
 * and theirs at start-up.
 *
 * Included INSTEAD of <bpf/libbpf.h>, <bpf/bpf.h> and <bpf/btf.h>, and before a skeleton
 * (*.skel.h): each function of libbpf used is named as a pointer (sym_NAME) before libbpf's
 * headers are read, so their declarations declare the pointers (LIBBPF_API made extern) and the
 * skeletons' inline functions call through them. They are NULL until ebpf_init has returned 0.
 * A function used that is not in this list is a link error: add it here and in ebpf.c.
 */
#ifndef IOLENS_COLLECT_BPF_DL_H
#define IOLENS_COLLECT_BPF_DL_H

#ifdef IOLENS_BPF
#define LIBBPF_API extern __attribute__((visibility("hidden")))

#define bpf_iter_create (*sym_bpf_iter_create)
#define bpf_link__destroy (*sym_bpf_link__destroy)
#define bpf_link__fd (*sym_bpf_link__fd)
#define bpf_map__fd (*sym_bpf_map__fd)
#define bpf_map__set_max_entries (*sym_bpf_map__set_max_entries)
#define bpf_map_lookup_batch (*sym_bpf_map_lookup_batch)
#define bpf_map_lookup_elem (*sym_bpf_map_lookup_elem)
#define bpf_map_get_next_key (*sym_bpf_map_get_next_key)
#define bpf_map_delete_elem (*sym_bpf_map_delete_elem)
#define bpf_object__open_skeleton (*sym_bpf_object__open_skeleton)
#define bpf_object__load_skeleton (*sym_bpf_object__load_skeleton)
#define bpf_object__attach_skeleton (*sym_bpf_object__attach_skeleton)
#define bpf_object__detach_skeleton (*sym_bpf_object__detach_skeleton)
#define bpf_object__destroy_skeleton (*sym_bpf_object__destroy_skeleton)
#define bpf_object__next_program (*sym_bpf_object__next_program)
#define bpf_program__attach_iter (*sym_bpf_program__attach_iter)
#define bpf_program__autoload (*sym_bpf_program__autoload)
#define bpf_program__set_autoload (*sym_bpf_program__set_autoload)
#define bpf_program__section_name (*sym_bpf_program__section_name)
#define bpf_program__set_autoattach (*sym_bpf_program__set_autoattach)
#define btf__add_enum (*sym_btf__add_enum)
#define btf__add_enum_value (*sym_btf__add_enum_value)
#define btf__add_typedef (*sym_btf__add_typedef)
#define btf__find_by_name_kind (*sym_btf__find_by_name_kind)
#define btf__free (*sym_btf__free)
#define btf__load_vmlinux_btf (*sym_btf__load_vmlinux_btf)
#define btf__new_empty (*sym_btf__new_empty)
#define btf__name_by_offset (*sym_btf__name_by_offset)
#define btf__type_by_id (*sym_btf__type_by_id)
#define btf__type_cnt (*sym_btf__type_cnt)
#define libbpf_num_possible_cpus (*sym_libbpf_num_possible_cpus)
#define libbpf_set_print (*sym_libbpf_set_print)
#define ring_buffer__consume (*sym_ring_buffer__consume)
#define ring_buffer__free (*sym_ring_buffer__free)
#define ring_buffer__new (*sym_ring_buffer__new)
#define ring_buffer__poll (*sym_ring_buffer__poll)

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#endif

#endif
