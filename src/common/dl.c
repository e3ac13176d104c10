/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dl.c: dlopen of the libraries only some subcommands need (see dl.h). */
#include "common/dl.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>

int dl_open_many(void **handle, const char *soname, char *why, size_t why_len, ...)
{
	void (**fn)(void);
	const char *name;
	va_list ap;
	void *dl;

	if (*handle)
		return 0;
	dl = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		const char *e = dlerror();

		snprintf(why, why_len, "%s: %s", soname, e ? e : "cannot be loaded");
		return -1;
	}
	va_start(ap, why_len);
	while ((fn = va_arg(ap, void (**)(void)))) {
		name = va_arg(ap, const char *);
		*(void **)fn = dlsym(dl, name);
		if (!*fn) {
			const char *e = dlerror();

			snprintf(why, why_len, "%s: %s", soname, e ? e : name);
			va_end(ap);
			va_start(ap, why_len);
			while ((fn = va_arg(ap, void (**)(void)))) {
				(void)va_arg(ap, const char *);
				*fn = NULL;
			}
			va_end(ap);
			dlclose(dl);
			return -1;
		}
	}
	va_end(ap);
	*handle = dl;
	return 0;
}
