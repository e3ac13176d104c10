/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uring_dl.h: liburing for bench's io_uring engine, opened with dlopen when a run uses it (see
 * common/dl.h), not linked: no other subcommand loads it.
 *
 * Included INSTEAD of <liburing.h>, by engine.c alone: the functions liburing exports are named
 * as pointers before its header is read, so that its declarations declare the pointers
 * (sym_NAME, of the function's type) and its inline functions (io_uring_wait_cqe calls
 * __io_uring_get_cqe) call through them too. Until uring_dl has returned 0 they are NULL.
 */
#ifndef IOLENS_BENCH_URING_DL_H
#define IOLENS_BENCH_URING_DL_H

#include <stddef.h>

#define io_uring_queue_init_params (*sym_io_uring_queue_init_params)
#define io_uring_queue_exit (*sym_io_uring_queue_exit)
#define io_uring_submit (*sym_io_uring_submit)
#define __io_uring_get_cqe (*sym___io_uring_get_cqe)
#include <liburing.h>

/* Opens liburing (URING_SONAME): 0, or -1 with "SONAME: why". */
int uring_dl(char *why, size_t why_len);

#endif
