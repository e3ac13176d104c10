/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bpf_dl.h: libbpf for the eBPF collectors, opened with dlopen by ebpf_init (see common/dl.h),
 * not linked: pcstat and the others that never load a program do not load libbpf, libelf
 * and theirs at start-up.
 *
 * Included INSTEAD of <bpf/libbpf.h>, <bpf/bpf.h> and <bpf/btf.h>, and before a skeleton
 * (*.skel.h): each function of libbpf used is named as a pointer (sym_NAME) before libbpf's
 * headers are read, so their declarations declare the pointers (LIBBPF_API made extern) and the
 * skeletons' inline functions call through them. They are NULL until ebpf_init has returned 0.
 * The functions are listed once, in collect/libbpf.syms: a function used that is not there is a
 * link error.
 */
#ifndef IOLENS_COLLECT_BPF_DL_H
#define IOLENS_COLLECT_BPF_DL_H

#ifdef IOLENS_BPF
#define LIBBPF_API extern __attribute__((visibility("hidden")))

#include "libbpf_syms.h" /* made from libbpf.syms: each name there a pointer, and LIBBPF_SYMS */

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#endif

#endif
