/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluicectl: the telemetry plumbing: connecting, one request, errors as exit
 * codes, printing JSON values (control path).
 */
#include "sluicectl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
tel_connect(struct sl_ctl_tel **t)
{
	char err[ERR_MAX];
	int rc = sl_ctl_tel_open(o.telemetry, o.timeout_ms, t, err, sizeof(err));

	if (rc == 0)
		return 0;
	errmsg("%s", err);
	if (rc != -EBADMSG)
		fprintf(stderr, "sluicectl: is the switch running? Pick it with --name NAME or "
				"--telemetry PATH\n");
	return rc == -EBADMSG ? EXIT_REFUSED : EXIT_UNREACHABLE;
}

/* Exit code for a failed telemetry call. */
int
tel_failed(const char *cmd, int rc, const char *err)
{
	switch (rc) {
	case -EREMOTEIO:
		errmsg("%s: the switch refused: %s", cmd, err);
		return EXIT_REFUSED;
	case -EINVAL:
		return usage_error("%s", err);
	case -ETIMEDOUT:
	case -ECONNRESET:
		errmsg("%s", err);
		return EXIT_UNREACHABLE;
	default:
		errmsg("%s", err);
		return EXIT_REFUSED;
	}
}

/* Call @cmd; on success *doc and *v are set (free *doc). */
int
tel_get(struct sl_ctl_tel *t, const char *cmd, const char *params, struct sl_ctl_json_doc **doc,
	const struct sl_ctl_json **v)
{
	char err[ERR_MAX];
	int rc = sl_ctl_tel_call(t, cmd, params, doc, v, err, sizeof(err));

	if (rc < 0) {
		sl_ctl_json_free(*doc);
		*doc = NULL;
		return tel_failed(cmd, rc, err);
	}
	if ((*v)->type != SL_CTL_JSON_OBJECT) {
		errmsg("%s: malformed reply: the value is not a JSON object", cmd);
		sl_ctl_json_free(*doc);
		*doc = NULL;
		return EXIT_REFUSED;
	}
	return 0;
}

/* A JSON value as short text for a table cell. */
void
fmt_value(const struct sl_ctl_json *v, char *buf, size_t size)
{
	switch (v ? v->type : SL_CTL_JSON_NULL) {
	case SL_CTL_JSON_NUMBER:
		if (v->is_int)
			snprintf(buf, size, "%s%" PRIu64, v->negative ? "-" : "", v->u);
		else
			snprintf(buf, size, "%g", v->d);
		break;
	case SL_CTL_JSON_STRING:
		sl_ctl_sanitize(buf, size, v->str, v->str_len);
		break;
	case SL_CTL_JSON_TRUE:
		snprintf(buf, size, "true");
		break;
	case SL_CTL_JSON_FALSE:
		snprintf(buf, size, "false");
		break;
	case SL_CTL_JSON_ARRAY:
	case SL_CTL_JSON_OBJECT:
		snprintf(buf, size, "(%zu items)", v->n);
		break;
	default:
		snprintf(buf, size, "-");
		break;
	}
}

/* Members of @obj that are objects, sorted by numeric key (ports, tables). */
size_t
sorted_entries(const struct sl_ctl_json *obj, const struct sl_ctl_json **out, size_t max)
{
	size_t n = 0;

	for (const struct sl_ctl_json *m = obj->child; m && n < max; m = m->next)
		if (m->type == SL_CTL_JSON_OBJECT)
			out[n++] = m;
	/* Insertion sort: at most a few hundred entries. */
	for (size_t i = 1; i < n; i++) {
		const struct sl_ctl_json *x = out[i];
		unsigned long kx = strtoul(x->key, NULL, 10);
		size_t j = i;
		while (j > 0 && strtoul(out[j - 1]->key, NULL, 10) > kx) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = x;
	}
	return n;
}

/*
 * Print every member of @obj as "key: value" lines, then @n_extra derived
 * lines (@extra: key, value, key, value ...).
 */
void
print_kv_extra(const struct sl_ctl_json *obj, const char *const *extra, unsigned n_extra)
{
	static const char *const heads[] = {"", ""};
	struct sl_ctl_table *t;
	char buf[256];

	if (sl_ctl_table_create(heads, 2, "ll", &t) < 0)
		return;
	for (const struct sl_ctl_json *m = obj->child; m; m = m->next) {
		fmt_value(m, buf, sizeof(buf));
		sl_ctl_table_addf(t, "%s:", m->key);
		sl_ctl_table_add(t, buf);
	}
	for (unsigned i = 0; i < n_extra; i++) {
		sl_ctl_table_addf(t, "%s:", extra[2 * i]);
		sl_ctl_table_add(t, extra[2 * i + 1]);
	}
	sl_ctl_table_print(t, stdout, 0);
	sl_ctl_table_destroy(t);
}

void
print_kv(const struct sl_ctl_json *obj)
{
	print_kv_extra(obj, NULL, 0);
}

int
tel_simple(const char *cmd, const char *params, void (*print)(const struct sl_ctl_json *))
{
	struct sl_ctl_json_doc *doc;
	const struct sl_ctl_json *v;
	struct sl_ctl_tel *t;
	int ex;

	if ((ex = tel_connect(&t)) != 0)
		return ex;
	ex = tel_get(t, cmd, params, &doc, &v);
	if (ex == 0) {
		if (o.json)
			sl_ctl_jw_json(&jw, NULL, v);
		else
			print(v);
		sl_ctl_json_free(doc);
	}
	sl_ctl_tel_close(t);
	return ex;
}
