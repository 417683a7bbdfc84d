/* SPDX-License-Identifier: BSD-3-Clause */
/* ctl_priv.h: helpers the ctl clients (of.c, tel.c) share. */
#ifndef SL_CTL_PRIV_H
#define SL_CTL_PRIV_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* Write a message into @err (if any) and return @rc: `return fail(err, n, -EIO, "...")`. */
static inline int __attribute__((format(printf, 4, 5)))
fail(char *err, size_t size, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && size) {
		va_start(ap, fmt);
		vsnprintf(err, size, fmt, ap);
		va_end(ap);
	}
	return rc;
}

#endif /* SL_CTL_PRIV_H */
