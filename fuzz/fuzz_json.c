/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_json: the ctl JSON reader on arbitrary bytes (libFuzzer).
 *
 * The input is the whole text (telemetry replies reach the reader exactly
 * so).  Limits are kept small so deep or huge inputs exercise the limit
 * paths quickly.
 *
 * Oracle beyond ASan/UBSan: whatever parses is written out with the JSON
 * writer; that output must parse again and write out to the same bytes
 * (the writer always produces valid JSON, and parse/write is stable after
 * one round); a failure aborts.  Every accessor is called on every node.
 */
#include "../src/ctl/ctl.h"

#include <errno.h>
#include <string.h>

static const struct sl_ctl_json_limits lim = {
	.max_size = 1 << 20, .max_depth = 48, .max_nodes = 100000};

/* Visit every node through the public accessors. */
static void
walk(const struct sl_ctl_json *v, unsigned depth)
{
	uint64_t u;
	int64_t i;
	double d;

	(void)sl_ctl_json_u64(v, &u);
	(void)sl_ctl_json_i64(v, &i);
	(void)sl_ctl_json_double(v, &d);
	(void)sl_ctl_json_str(v);
	if (v->type == SL_CTL_JSON_OBJECT && v->child && v->child->key)
		(void)sl_ctl_json_get(v, v->child->key);
	for (const struct sl_ctl_json *c = v->child; c; c = c->next)
		walk(c, depth + 1);
}

static char *
write_doc(const struct sl_ctl_json *v, size_t *len)
{
	struct sl_ctl_jw w;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (f == NULL)
		abort();
	sl_ctl_jw_init(&w, f, false);
	sl_ctl_jw_json(&w, NULL, v);
	/* Documents nested past the writer's depth are refused by it, cleanly. */
	if (sl_ctl_jw_finish(&w) != 0) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_ctl_json_doc *doc, *doc2;
	char err[200], *a, *b;
	size_t alen, blen;
	int rc;

	rc = sl_ctl_json_parse((const char *)data, size, &lim, &doc, err, sizeof(err));
	if (rc != 0) {
		if ((rc != -EBADMSG && rc != -E2BIG && rc != -ENOMEM) || doc != NULL ||
		    strncmp(err, "byte ", 5) != 0)
			abort();
		return 0;
	}
	walk(sl_ctl_json_root(doc), 0);
	a = write_doc(sl_ctl_json_root(doc), &alen);
	sl_ctl_json_free(doc);
	if (a == NULL)
		return 0;
	if (sl_ctl_json_parse(a, alen, NULL, &doc2, err, sizeof(err)) != 0) {
		fprintf(stderr, "writer output does not parse: %s\n%s\n", err, a);
		abort();
	}
	b = write_doc(sl_ctl_json_root(doc2), &blen);
	if (b == NULL || alen != blen || memcmp(a, b, alen) != 0) {
		fprintf(stderr, "unstable round trip:\n%s\n%s\n", a, b ? b : "(null)");
		abort();
	}
	free(b);
	free(a);
	sl_ctl_json_free(doc2);
	return 0;
}
