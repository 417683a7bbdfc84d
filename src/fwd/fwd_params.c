/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Forwarding modes: the engine table and the text form (control path).
 * Apart from fwd.c so that a tool that only reads and writes the text
 * (sluicectl) does not pull in the datapath and DPDK.
 */
#include "fwd.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwd_priv.h"

static const struct sl_fwd_engine openflow_engine = {
	.name = "openflow",
	.mode = SL_FWD_OPENFLOW,
};

static const struct sl_fwd_engine *const engines[SL_FWD__MAX] = {
	[SL_FWD_OPENFLOW] = &openflow_engine,
	[SL_FWD_HYPERCUBE] = &sl_fwd_hypercube_engine,
	[SL_FWD_KEYFLOW] = &sl_fwd_keyflow_engine,
};

const struct sl_fwd_engine *
sl_fwd_engine_get(enum sl_fwd_mode mode)
{
	return (unsigned)mode < SL_FWD__MAX ? engines[mode] : NULL;
}

const struct sl_fwd_engine *
sl_fwd_engine_find(const char *name)
{
	for (unsigned m = 0; m < SL_FWD__MAX; m++)
		if (strcmp(engines[m]->name, name) == 0)
			return engines[m];
	return NULL;
}

enum sl_fwd_fail
fwd_fail(enum sl_fwd_fail f, char *err, size_t err_size, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && err_size > 0) {
		va_start(ap, fmt);
		vsnprintf(err, err_size, fmt, ap);
		va_end(ap);
	}
	return f;
}

/*
 * ============================================================================
 * Text form (control path)
 * ============================================================================
 */

int
fwd_parse_u32(const char *s, uint32_t *v)
{
	char *end;
	unsigned long long x;

	if (*s == '\0' || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || x > UINT32_MAX)
		return -EINVAL;
	*v = (uint32_t)x;
	return 0;
}

int
sl_fwd_params_parse(const char *text, struct sl_fwd_params *p, char *err, size_t err_size)
{
	char buf[4096], *save = NULL, *item;

	memset(p, 0, sizeof(*p));
	if (strlen(text) >= sizeof(buf)) {
		fwd_fail(SL_FWD_FAIL_BAD_PARAM, err, err_size, "forwarding mode text too long");
		return -EINVAL;
	}
	strcpy(buf, text);
	for (item = strtok_r(buf, ";", &save); item != NULL; item = strtok_r(NULL, ";", &save)) {
		char *colon = strchr(item, ':'), *kv, *save2 = NULL;
		const struct sl_fwd_engine *e;
		struct sl_fwd_mode_params *mp;

		while (*item == ' ')
			item++;
		if (colon != NULL)
			*colon = '\0';
		e = sl_fwd_engine_find(item);
		if (e == NULL) {
			fwd_fail(SL_FWD_FAIL_UNKNOWN_MODE, err, err_size,
				 "unknown forwarding mode '%s' (openflow, hypercube, keyflow)",
				 item);
			return -EINVAL;
		}
		if (e->mode == SL_FWD_OPENFLOW) {
			if (colon != NULL && colon[1] != '\0') {
				fwd_fail(SL_FWD_FAIL_BAD_PARAM, err, err_size,
					 "mode openflow takes no parameters: '%s'", colon + 1);
				return -EINVAL;
			}
			continue;
		}
		if (p->n_modes == SL_ARRAY_SIZE(p->modes)) {
			fwd_fail(SL_FWD_FAIL_DUP_MODE, err, err_size, "mode %s given twice",
				 e->name);
			return -EINVAL;
		}
		mp = &p->modes[p->n_modes++];
		mp->mode = e->mode;
		mp->tag = e->default_tag;
		unsigned seen = 0; /* bit i: required[i] was given */
		for (kv = colon != NULL ? strtok_r(colon + 1, ",", &save2) : NULL; kv != NULL;
		     kv = strtok_r(NULL, ",", &save2)) {
			char *eq = strchr(kv, '=');
			uint32_t v;

			if (eq == NULL) {
				fwd_fail(SL_FWD_FAIL_BAD_PARAM, err, err_size,
					 "%s: '%s' is not KEY=VALUE", e->name, kv);
				return -EINVAL;
			}
			*eq = '\0';
			for (unsigned r = 0; e->required != NULL && e->required[r] != NULL; r++)
				if (strcmp(kv, e->required[r]) == 0)
					seen |= 1u << r;
			if (strcmp(kv, "tag") == 0) {
				if (fwd_parse_u32(eq + 1, &v) < 0 || v > 255) {
					fwd_fail(SL_FWD_FAIL_BAD_PARAM, err, err_size,
						 "%s: tag '%s' is not 0..255", e->name, eq + 1);
					return -EINVAL;
				}
				mp->tag = (uint8_t)v;
			} else if (e->parse_kv(mp, kv, eq + 1) < 0) {
				fwd_fail(SL_FWD_FAIL_BAD_PARAM, err, err_size,
					 "%s: bad parameter %s=%s", e->name, kv, eq + 1);
				return -EINVAL;
			}
		}
		for (unsigned r = 0; e->required != NULL && e->required[r] != NULL; r++) {
			if (!(seen & 1u << r)) {
				fwd_fail(SL_FWD_FAIL_BAD_PARAM, err, err_size,
					 "%s: missing %s=", e->name, e->required[r]);
				return -EINVAL;
			}
		}
	}
	return 0;
}

int
sl_fwd_params_format(const struct sl_fwd_params *p, char *buf, size_t size)
{
	size_t len = 0;
	int n;

	if (size == 0)
		return -ENOSPC;
	buf[0] = '\0';
	if (p->n_modes == 0) {
		n = snprintf(buf, size, "openflow");
		return n < 0 || (size_t)n >= size ? -ENOSPC : n;
	}
	for (unsigned i = 0; i < p->n_modes; i++) {
		const struct sl_fwd_engine *e = sl_fwd_engine_get(p->modes[i].mode);

		if (e == NULL || e->format == NULL)
			return -EINVAL;
		n = snprintf(buf + len, size - len, "%s%s:tag=0x%02x", i ? ";" : "", e->name,
			     p->modes[i].tag);
		if (n < 0 || (size_t)n >= size - len)
			return -ENOSPC;
		len += (size_t)n;
		n = e->format(&p->modes[i], buf + len, size - len);
		if (n < 0)
			return n;
		len += (size_t)n;
	}
	return (int)len;
}
