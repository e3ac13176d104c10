/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libm.c: the five functions of libm iolens uses, so that it does not link libm, which every
 * start-up would then map and relocate (with its dozens of ifunc resolvers) for nothing.
 * round and llround are computed here, exactly as libm computes them; log2, log10 and pow are
 * libm's own, opened with dlopen at their first call (dl.h): bench, export and pcstat's classic
 * sizes use them. A libm function used anywhere new must be added here, or the link says which.
 */
#include <gnu/lib-names.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/dl.h"
#include "common/util.h"

/* Halfway cases away from zero; the sign of zero kept; NaN, infinities and whole numbers as they are. */
double round(double x)
{
	double t;

	if (!(__builtin_fabs(x) < 0x1p52)) /* 2^52 and beyond (and NaN): whole already */
		return x;
	t = (double)(long long)x; /* toward zero, exact below 2^52 */
	if (__builtin_fabs(x - t) >= 0.5) /* x - t is exact */
		t += __builtin_copysign(1.0, x);
	return __builtin_copysign(t, x);
}

/* As libm on x86-64: out of range (and NaN) is the conversion's LLONG_MIN. */
long long llround(double x)
{
	return (long long)round(x);
}

static DLSYM_POINTER(log2);
static DLSYM_POINTER(log10);
static DLSYM_POINTER(pow);
static void *libm;
static pthread_once_t libm_once = PTHREAD_ONCE_INIT;

static void libm_open(void)
{
	char why[256];

	if (dl_open_many(&libm, LIBM_SO, why, sizeof(why), DLSYM_ARG(log2), DLSYM_ARG(log10), DLSYM_ARG(pow),
			 NULL) != 0) {
		fprintf(stderr, "%s needs %s\n", program_name, why); /* as export says it */
		exit(EXIT_FAIL);
	}
}

double log2(double x)
{
	pthread_once(&libm_once, libm_open);
	return sym_log2(x);
}

double log10(double x)
{
	pthread_once(&libm_once, libm_open);
	return sym_log10(x);
}

double pow(double x, double y)
{
	pthread_once(&libm_once, libm_open);
	return sym_pow(x, y);
}
