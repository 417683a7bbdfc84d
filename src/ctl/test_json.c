/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_json: the strict JSON reader, the JSON writer and the text helpers.
 *
 * 1. Valid documents: every value type, escapes, UTF-8, integer edges.
 * 2. Malformed documents: each must fail with -EBADMSG or -E2BIG and a
 *    message that names the byte offset (the table says which).
 * 3. Limits: depth, node count, input size.
 * 4. Writer: escaping of every byte value (output always valid JSON),
 *    exact integers, copy of parsed documents, misuse detection.
 * 5. Random mutations of valid documents: parse never crashes; whatever
 *    parses is written out and must parse again to the same text.
 * 6. Tables, sanitizing, SI formatting.
 */
#include "ctl.h"

#include <errno.h>
#include <string.h>

#include "../core/sl_test.h"

static struct sl_ctl_json_doc *
parse(const char *s, int *rc, char *err, size_t err_size)
{
	struct sl_ctl_json_doc *doc = NULL;

	*rc = sl_ctl_json_parse(s, strlen(s), NULL, &doc, err, err_size);
	return doc;
}

/* Write @v compactly into a malloc'd string. */
static char *
write_compact(const struct sl_ctl_json *v, int *rc)
{
	struct sl_ctl_jw w;
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	SL_VERIFY(f != NULL);
	sl_ctl_jw_init(&w, f, false);
	sl_ctl_jw_json(&w, NULL, v);
	*rc = sl_ctl_jw_finish(&w);
	fclose(f);
	return buf;
}

/*
 * 1. Valid documents.
 */

static void
test_valid(void)
{
	static const char doc_text[] =
		" {\"a\": [1, -2, 3.5e2, true, false, null, \"x\"],\n"
		"  \"b\": {\"c\": {}, \"d\": []}, \"e\\u00e9\": \"\\\"\\\\\\/\\b\\f\\n\\r\\t\","
		"  \"max\": 18446744073709551615, \"big\": 18446744073709551616,"
		"  \"min\": -9223372036854775808, \"below\": -9223372036854775809,"
		"  \"zero\": -0, \"utf8\": \"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80\","
		"  \"pair\": \"\\ud83d\\ude00\", \"nul\": \"a\\u0000b\", \"frac\": 0.25 } ";
	const struct sl_ctl_json *root, *a, *v;
	struct sl_ctl_json_doc *doc;
	char err[200];
	uint64_t u;
	int64_t i;
	double d;
	int rc;

	doc = parse(doc_text, &rc, err, sizeof(err));
	CHECK(rc == 0 && doc, "valid doc: %d %s", rc, err);
	if (doc == NULL)
		return;
	root = sl_ctl_json_root(doc);
	CHECK(root->type == SL_CTL_JSON_OBJECT && root->n == 12, "root: type %d n %zu", root->type,
	      root->n);
	a = sl_ctl_json_get(root, "a");
	CHECK(a && a->type == SL_CTL_JSON_ARRAY && a->n == 7, "array a");
	if (a && a->n == 7) {
		v = a->child;
		CHECK(sl_ctl_json_u64(v, &u) && u == 1 && v->key == NULL, "a[0]");
		v = v->next;
		CHECK(sl_ctl_json_i64(v, &i) && i == -2 && !sl_ctl_json_u64(v, &u), "a[1]");
		v = v->next;
		CHECK(!v->is_int && sl_ctl_json_double(v, &d) && d == 350.0, "a[2]");
		v = v->next;
		CHECK(v->type == SL_CTL_JSON_TRUE, "a[3]");
		v = v->next;
		CHECK(v->type == SL_CTL_JSON_FALSE, "a[4]");
		v = v->next;
		CHECK(v->type == SL_CTL_JSON_NULL, "a[5]");
		v = v->next;
		CHECK(v->type == SL_CTL_JSON_STRING && strcmp(v->str, "x") == 0 && v->next == NULL,
		      "a[6]");
	}
	v = sl_ctl_json_get(root, "b");
	CHECK(v && v->n == 2 && sl_ctl_json_get(v, "c")->type == SL_CTL_JSON_OBJECT &&
		      sl_ctl_json_get(v, "c")->n == 0 && sl_ctl_json_get(v, "d")->n == 0,
	      "nested empty containers");
	v = sl_ctl_json_get(root, "e\xc3\xa9");
	CHECK(v && strcmp(v->str, "\"\\/\b\f\n\r\t") == 0, "escapes, escaped key");
	CHECK(sl_ctl_json_get_u64(root, "max", 0) == UINT64_MAX, "u64 max");
	v = sl_ctl_json_get(root, "big");
	CHECK(v && !v->is_int && v->d == 18446744073709551616.0 && !sl_ctl_json_u64(v, &u),
	      "2^64 is a double");
	v = sl_ctl_json_get(root, "min");
	CHECK(sl_ctl_json_i64(v, &i) && i == INT64_MIN, "i64 min");
	v = sl_ctl_json_get(root, "below");
	CHECK(v && !v->is_int && !sl_ctl_json_i64(v, &i), "below i64 min");
	v = sl_ctl_json_get(root, "zero");
	CHECK(sl_ctl_json_u64(v, &u) && u == 0, "-0");
	CHECK(strcmp(sl_ctl_json_get_str(root, "utf8", ""),
		     "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80") == 0,
	      "raw UTF-8");
	CHECK(strcmp(sl_ctl_json_get_str(root, "pair", ""), "\xf0\x9f\x98\x80") == 0,
	      "surrogate pair");
	v = sl_ctl_json_get(root, "nul");
	CHECK(v && v->str_len == 3 && memcmp(v->str, "a\0b", 3) == 0, "\\u0000 kept with length");
	CHECK(sl_ctl_json_get(root, "nope") == NULL && sl_ctl_json_get(a, "x") == NULL &&
		      sl_ctl_json_get(NULL, "x") == NULL,
	      "missing members");
	CHECK(strcmp(sl_ctl_json_get_str(root, "max", "dflt"), "dflt") == 0 &&
		      sl_ctl_json_get_u64(root, "utf8", 7) == 7,
	      "defaults on type mismatch");
	sl_ctl_json_free(doc);

	/* Scalars at the top level. */
	static const char *const scalars[] = {"0",    "-1",       "\"\"", "true",
					      "null", " 1e-400 ", "[]",   "{}"};
	for (unsigned k = 0; k < SL_ARRAY_SIZE(scalars); k++) {
		doc = parse(scalars[k], &rc, err, sizeof(err));
		CHECK(rc == 0, "scalar '%s': %s", scalars[k], err);
		sl_ctl_json_free(doc);
	}
	sl_ctl_json_free(NULL);
}

/*
 * 2. Malformed documents.
 */

static void
test_malformed(void)
{
	static const struct {
		const char *text;
		size_t len; /* 0: strlen */
		int rc;
		const char *msg; /* substring of the error */
	} cases[] = {
		{"", 0, -EBADMSG, "byte 0: expected a value, got end of input"},
		{"   ", 0, -EBADMSG, "byte 3: expected a value"},
		{"{", 0, -EBADMSG, "expected a member name"},
		{"[", 0, -EBADMSG, "expected a value"},
		{"[1", 0, -EBADMSG, "byte 0: unterminated array"},
		{"{\"a\":1", 0, -EBADMSG, "unterminated object"},
		{"[1,]", 0, -EBADMSG, "byte 3: trailing comma"},
		{"{\"a\":1,}", 0, -EBADMSG, "trailing comma"},
		{"[1 2]", 0, -EBADMSG, "byte 3: expected ',' or ']', got '2'"},
		{"{\"a\" 1}", 0, -EBADMSG, "expected ':'"},
		{"{1:2}", 0, -EBADMSG, "expected a member name"},
		{"{'a':1}", 0, -EBADMSG, "expected a member name"},
		{"01", 0, -EBADMSG, "leading zero"},
		{"-01", 0, -EBADMSG, "leading zero"},
		{"1.", 0, -EBADMSG, "a digit must follow '.'"},
		{".5", 0, -EBADMSG, "expected a value, got '.'"},
		{"-", 0, -EBADMSG, "a digit must follow '-'"},
		{"+1", 0, -EBADMSG, "got '+'"},
		{"1e", 0, -EBADMSG, "exponent without digits"},
		{"1e+", 0, -EBADMSG, "exponent without digits"},
		{"1e999", 0, -EBADMSG, "out of range"},
		{"-1e999", 0, -EBADMSG, "out of range"},
		{"NaN", 0, -EBADMSG, "got 'N'"},
		{"Infinity", 0, -EBADMSG, "got 'I'"},
		{"nul", 0, -EBADMSG, "unexpected 'n'"},
		{"tru", 0, -EBADMSG, "unexpected 't'"},
		{"true false", 0, -EBADMSG, "byte 5: unexpected 'f' after the value"},
		{"[]]", 0, -EBADMSG, "byte 2: unexpected ']' after the value"},
		{"/* c */ 1", 0, -EBADMSG, "got '/'"},
		{"\"abc", 0, -EBADMSG, "byte 0: unterminated string"},
		{"\"\\x\"", 0, -EBADMSG, "bad escape '\\x'"},
		{"\"\\", 0, -EBADMSG, "unterminated escape"},
		{"\"\\u12\"", 0, -EBADMSG, "bad \\u escape"},
		{"\"\\u12G4\"", 0, -EBADMSG, "bad \\u escape"},
		{"\"\\ud800\"", 0, -EBADMSG, "high surrogate"},
		{"\"\\ud800\\u0041\"", 0, -EBADMSG, "high surrogate"},
		{"\"\\udc00\"", 0, -EBADMSG, "lone low surrogate"},
		{"\"a\x01\"", 0, -EBADMSG, "byte 2: control character 0x01"},
		{"\"\t\"", 0, -EBADMSG, "control character 0x09"},
		{"\"\xff\"", 0, -EBADMSG, "byte 1: invalid UTF-8"},
		{"\"\xc0\xaf\"", 0, -EBADMSG, "invalid UTF-8"},         /* overlong '/' */
		{"\"\xe0\x80\xaf\"", 0, -EBADMSG, "invalid UTF-8"},     /* overlong, 3 bytes */
		{"\"\xed\xa0\x80\"", 0, -EBADMSG, "invalid UTF-8"},     /* surrogate in UTF-8 */
		{"\"\xf4\x90\x80\x80\"", 0, -EBADMSG, "invalid UTF-8"}, /* above U+10FFFF */
		{"\"\xc3\"", 0, -EBADMSG, "invalid UTF-8"},             /* truncated sequence */
		{"\"\x80\"", 0, -EBADMSG, "invalid UTF-8"},             /* lone continuation */
		{"1\0", 2, -EBADMSG, "byte 1: unexpected byte 0x00"},
		{"\0", 1, -EBADMSG, "byte 0: expected a value, got byte 0x00"},
		{"\xef\xbb\xbf{}", 0, -EBADMSG, "byte 0"}, /* BOM */
	};
	char err[200];

	for (unsigned k = 0; k < SL_ARRAY_SIZE(cases); k++) {
		struct sl_ctl_json_doc *doc = (void *)1;
		size_t len = cases[k].len ? cases[k].len : strlen(cases[k].text);
		int rc;

		err[0] = '\0';
		rc = sl_ctl_json_parse(cases[k].text, len, NULL, &doc, err, sizeof(err));
		CHECK(rc == cases[k].rc && doc == NULL && strstr(err, cases[k].msg) &&
			      strncmp(err, "byte ", 5) == 0,
		      "case %u '%s': rc %d, error '%s', want '%s'", k, cases[k].text, rc, err,
		      cases[k].msg);
	}

	/* A number longer than the copy buffer is refused, not cut. */
	{
		char big[1000];
		int rc;
		memset(big, '1', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		sl_ctl_json_free(parse(big, &rc, err, sizeof(err)));
		CHECK(rc == -EBADMSG && strstr(err, "longer than"), "long number: %s", err);
	}
}

/*
 * 3. Limits.
 */

static void
test_limits(void)
{
	struct sl_ctl_json_limits lim = {.max_depth = 4, .max_nodes = 5, .max_size = 20};
	struct sl_ctl_json_doc *doc;
	char err[200], deep[3000];
	int rc;

	rc = sl_ctl_json_parse("[[[[1]]]]", 9, &lim, &doc, err, sizeof(err));
	CHECK(rc == 0, "depth 4 fits: %s", err);
	sl_ctl_json_free(doc);
	rc = sl_ctl_json_parse("[[[[[1]]]]]", 11, &lim, &doc, err, sizeof(err));
	CHECK(rc == -E2BIG && strstr(err, "byte 4: nesting deeper than 4"), "depth 5: %s", err);
	rc = sl_ctl_json_parse("[1,2,3,4]", 9, &lim, &doc, err, sizeof(err));
	CHECK(rc == 0, "5 nodes fit: %s", err);
	sl_ctl_json_free(doc);
	rc = sl_ctl_json_parse("[1,2,3,4,5]", 11, &lim, &doc, err, sizeof(err));
	CHECK(rc == -E2BIG && strstr(err, "more than 5 values"), "6 nodes: %s", err);
	rc = sl_ctl_json_parse("[1,2,3,4]            ", 21, &lim, &doc, err, sizeof(err));
	CHECK(rc == -E2BIG && strstr(err, "exceeds the limit"), "size: %s", err);

	/* Default depth 64; deep nesting is an error, not a stack overflow. */
	for (unsigned k = 0; k < 2; k++) {
		unsigned depth = k ? 1400 : 64;
		size_t n = 0;
		for (unsigned i = 0; i < depth; i++)
			deep[n++] = '[';
		for (unsigned i = 0; i < depth; i++)
			deep[n++] = ']';
		rc = sl_ctl_json_parse(deep, n, NULL, &doc, err, sizeof(err));
		CHECK(k ? rc == -E2BIG : rc == 0, "default depth %u: %d %s", depth, rc, err);
		sl_ctl_json_free(doc);
	}
	/* max_depth is capped at 1024. */
	lim = (struct sl_ctl_json_limits){.max_depth = 100000};
	rc = sl_ctl_json_parse(deep, 2800, &lim, &doc, err, sizeof(err));
	CHECK(rc == -E2BIG && strstr(err, "deeper than 1024"), "depth cap: %s", err);
	/* err may be NULL. */
	rc = sl_ctl_json_parse("[", 1, NULL, &doc, NULL, 0);
	CHECK(rc == -EBADMSG, "NULL err");
}

/*
 * 4. Writer.
 */

static void
test_writer(void)
{
	struct sl_ctl_json_doc *doc;
	struct sl_ctl_jw w;
	char err[200], all[256], *buf = NULL;
	size_t size = 0;
	FILE *f;
	int rc;

	/* Every byte value in a string: the output is valid JSON. */
	for (unsigned i = 0; i < 256; i++)
		all[i] = (char)i;
	f = open_memstream(&buf, &size);
	sl_ctl_jw_init(&w, f, true);
	sl_ctl_jw_object_begin(&w, NULL);
	sl_ctl_jw_stringn(&w, "all", all, sizeof(all));
	sl_ctl_jw_stringn(&w, "bad\xff", "\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82", 11);
	sl_ctl_jw_string(&w, "ok", "h\xc3\xa9llo \xf0\x9f\x98\x80");
	sl_ctl_jw_u64(&w, "u", UINT64_MAX);
	sl_ctl_jw_i64(&w, "i", INT64_MIN);
	sl_ctl_jw_double(&w, "d", 0.1);
	sl_ctl_jw_double(&w, "inf", 1.0 / 0.0);
	sl_ctl_jw_bool(&w, "t", true);
	sl_ctl_jw_string(&w, "null", NULL);
	sl_ctl_jw_stringf(&w, "f", "%d-%s", 7, "x");
	sl_ctl_jw_array_begin(&w, "arr");
	sl_ctl_jw_array_end(&w);
	sl_ctl_jw_object_begin(&w, "obj");
	sl_ctl_jw_object_end(&w);
	sl_ctl_jw_object_end(&w);
	rc = sl_ctl_jw_finish(&w);
	fclose(f);
	CHECK(rc == 0, "writer: %d", rc);
	rc = sl_ctl_json_parse(buf, size, NULL, &doc, err, sizeof(err));
	CHECK(rc == 0, "writer output parses: %s\n%s", err, buf);
	if (rc == 0) {
		const struct sl_ctl_json *r = sl_ctl_json_root(doc), *v;
		double d;
		int64_t i;
		v = sl_ctl_json_get(r, "all");
		CHECK(v && v->str_len >= 128 && memcmp(v->str, all, 128) == 0,
		      "ASCII bytes round trip");
		CHECK(strcmp(sl_ctl_json_get_str(r, "ok", ""), "h\xc3\xa9llo \xf0\x9f\x98\x80") ==
			      0,
		      "valid UTF-8 kept");
		v = sl_ctl_json_get(r, "bad\xef\xbf\xbd");
		CHECK(v && strstr(v->str, "\xef\xbf\xbd") && !strstr(v->str, "\xc0"),
		      "invalid UTF-8 replaced");
		CHECK(sl_ctl_json_get_u64(r, "u", 0) == UINT64_MAX, "u64 exact");
		CHECK(sl_ctl_json_i64(sl_ctl_json_get(r, "i"), &i) && i == INT64_MIN, "i64 exact");
		CHECK(sl_ctl_json_double(sl_ctl_json_get(r, "d"), &d) && d == 0.1, "double exact");
		CHECK(sl_ctl_json_get(r, "inf")->type == SL_CTL_JSON_NULL, "inf -> null");
		CHECK(strcmp(sl_ctl_json_get_str(r, "f", ""), "7-x") == 0, "stringf");
		sl_ctl_json_free(doc);
	}
	free(buf);

	/* Copying parsed documents gives the canonical compact text back. */
	static const char *const canon[] = {
		"{\"a\":[1,-2,0.5,true,false,null,\"x\\n\\u0001\"],\"b\":{}}",
		"[18446744073709551615,-9223372036854775808,1e+300]",
		"\"\\\"\\\\\"",
		"[[],{},[[{}]]]",
	};
	for (unsigned k = 0; k < SL_ARRAY_SIZE(canon); k++) {
		char *out;
		doc = parse(canon[k], &rc, err, sizeof(err));
		CHECK(rc == 0, "canon %u parses: %s", k, err);
		if (rc)
			continue;
		out = write_compact(sl_ctl_json_root(doc), &rc);
		CHECK(rc == 0 && strlen(out) == strlen(canon[k]) + 1 &&
			      strncmp(out, canon[k], strlen(canon[k])) == 0,
		      "canon %u: '%s' -> '%s'", k, canon[k], out);
		free(out);
		sl_ctl_json_free(doc);
	}

	/* Invalid UTF-8 given to the writer (e.g. a string cut by a parse limit
	 * inside a character): written as U+FFFD's bytes, so parsing and writing
	 * it again gives the same text (fuzz_json found "\\ufffd", then raw bytes). */
	{
		char *out1 = NULL, *out2 = NULL;
		size_t size1 = 0;
		FILE *m = open_memstream(&out1, &size1);
		sl_ctl_jw_init(&w, m, false);
		sl_ctl_jw_array_begin(&w, NULL);
		sl_ctl_jw_stringn(&w, NULL, "a\xc0z\xf3\x8c\xbb", 6);
		sl_ctl_jw_array_end(&w);
		rc = sl_ctl_jw_finish(&w);
		fclose(m);
		doc = parse(out1, &rc, err, sizeof(err));
		CHECK(rc == 0, "writer output with replacements parses: %s", err);
		if (rc == 0) {
			out2 = write_compact(sl_ctl_json_root(doc), &rc);
			sl_ctl_json_free(doc);
			CHECK(out2 && strncmp(out1, out2, strlen(out1)) == 0 &&
				      strstr(out1, "a\xef\xbf\xbdz\xef\xbf\xbd") != NULL,
			      "stable replacement: '%s' then '%s'", out1, out2 ? out2 : "");
		}
		free(out1);
		free(out2);
	}

	/* Misuse is a sticky -EINVAL. */
	f = fopen("/dev/null", "w");
	sl_ctl_jw_init(&w, f, false);
	sl_ctl_jw_u64(&w, "key at top level", 1);
	CHECK(sl_ctl_jw_finish(&w) == -EINVAL, "key at the top");
	sl_ctl_jw_init(&w, f, false);
	sl_ctl_jw_object_begin(&w, NULL);
	sl_ctl_jw_u64(&w, NULL, 1);
	CHECK(sl_ctl_jw_finish(&w) == -EINVAL, "member without key");
	sl_ctl_jw_init(&w, f, false);
	sl_ctl_jw_array_begin(&w, NULL);
	sl_ctl_jw_u64(&w, "k", 1);
	CHECK(sl_ctl_jw_finish(&w) == -EINVAL, "array item with key");
	sl_ctl_jw_init(&w, f, false);
	sl_ctl_jw_array_begin(&w, NULL);
	CHECK(sl_ctl_jw_finish(&w) == -EINVAL, "unclosed array");
	sl_ctl_jw_init(&w, f, false);
	sl_ctl_jw_array_begin(&w, NULL);
	sl_ctl_jw_object_end(&w);
	CHECK(sl_ctl_jw_finish(&w) == -EINVAL, "mismatched end");
	sl_ctl_jw_init(&w, f, false);
	CHECK(sl_ctl_jw_finish(&w) == -EINVAL, "empty document");
	sl_ctl_jw_init(&w, f, false);
	sl_ctl_jw_u64(&w, NULL, 1);
	sl_ctl_jw_u64(&w, NULL, 2);
	CHECK(sl_ctl_jw_finish(&w) == -EINVAL, "two top-level values");
	sl_ctl_jw_init(&w, f, false);
	for (unsigned i = 0; i < SL_CTL_JW_DEPTH_MAX + 1; i++)
		sl_ctl_jw_array_begin(&w, NULL);
	CHECK(sl_ctl_jw_finish(&w) == -EINVAL, "too deep");
	fclose(f);
}

/*
 * 5. Random mutations.
 */

static void
test_mutations(void)
{
	static const char *const seeds[] = {
		("{\"/sluice/ports\": {\"1\": {\"name\": \"net_pcap0\", \"link\": 1, \"rx_packets\": "
		 "10, \"rx_bytes\": 640}, \"2\": {\"name\": \"net_null0\", \"tx_dropped\": 0}}}"),
		"{\"version\":\"DPDK 22.11.1\",\"pid\":1234,\"max_output_len\":16384}",
		"[1.5e10, -0.0, \"\\ud83d\\ude00\", \"\\u00e9\", {\"a\": [null, true, false]}]",
		"{\"/sluice/latency\": {\"pipeline\": {\"count\": 147000, \"mean_ns\": 1830}}}",
	};
	static const char alphabet[] = "{}[]\",:.-+eE0123456789tfnul\\u \t\n\x01\x80\xff\xc3";
	uint64_t seed = 42;
	unsigned parsed = 0, bad = 0;
	char buf[512], err[200];

	for (unsigned it = 0; it < 100000; it++) {
		const char *s = seeds[it % SL_ARRAY_SIZE(seeds)];
		size_t n = strlen(s);
		struct sl_ctl_json_doc *doc;
		int rc;

		memcpy(buf, s, n);
		for (unsigned m = 0; m < 1 + it % 5; m++) {
			size_t pos;
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			pos = (seed >> 33) % (n + 1);
			switch ((seed >> 20) % 3) {
			case 0: /* replace */
				if (pos < n)
					buf[pos] = alphabet[(seed >> 8) % (sizeof(alphabet) - 1)];
				break;
			case 1: /* delete */
				if (pos < n) {
					memmove(buf + pos, buf + pos + 1, n - pos - 1);
					n--;
				}
				break;
			default: /* insert */
				if (n + 1 < sizeof(buf)) {
					memmove(buf + pos + 1, buf + pos, n - pos);
					buf[pos] = alphabet[(seed >> 8) % (sizeof(alphabet) - 1)];
					n++;
				}
				break;
			}
		}
		rc = sl_ctl_json_parse(buf, n, NULL, &doc, err, sizeof(err));
		if (rc == 0) {
			/* Whatever parses survives a write/parse/write cycle unchanged. */
			char *a, *b;
			struct sl_ctl_json_doc *doc2;
			int rc2;
			parsed++;
			a = write_compact(sl_ctl_json_root(doc), &rc2);
			if (rc2 == 0 &&
			    sl_ctl_json_parse(a, strlen(a), NULL, &doc2, err, sizeof(err)) == 0) {
				b = write_compact(sl_ctl_json_root(doc2), &rc2);
				if (rc2 || strcmp(a, b)) {
					if (bad < 5)
						fprintf(stderr, "unstable: '%s' -> '%s'\n", a, b);
					bad++;
				}
				free(b);
				sl_ctl_json_free(doc2);
			} else {
				if (bad < 5)
					fprintf(stderr, "no re-parse: rc %d '%s': %s\n", rc2, a,
						err);
				bad++;
			}
			free(a);
			sl_ctl_json_free(doc);
		} else if (rc != -EBADMSG && rc != -E2BIG) {
			bad++;
		} else if (strncmp(err, "byte ", 5) != 0) {
			if (bad < 5)
				fprintf(stderr, "error without offset: '%s'\n", err);
			bad++;
		}
	}
	CHECK(bad == 0 && parsed > 100, "mutations: %u parsed, %u bad", parsed, bad);
}

/*
 * 6. Text helpers.
 */

static void
test_text(void)
{
	static const char *const heads[] = {"port", "name", "rx_pkts"};
	struct sl_ctl_table *t;
	char *buf = NULL, s[64];
	size_t size = 0;
	FILE *f;

	CHECK(sl_ctl_table_create(heads, 3, "lr", &t) == -EINVAL, "align length");
	CHECK(sl_ctl_table_create(heads, 3, "llr", &t) == 0, "table create");
	sl_ctl_table_add(t, "1");
	sl_ctl_table_add(t, "net_pcap0");
	sl_ctl_table_addf(t, "%u", 12345);
	sl_ctl_table_add(t, "10");
	sl_ctl_table_add(t, "\x1b[31mred");
	sl_ctl_table_add(t, "7");
	sl_ctl_table_add(t, "3"); /* partial last row */
	CHECK(sl_ctl_table_rows(t) == 3, "rows %u", sl_ctl_table_rows(t));
	f = open_memstream(&buf, &size);
	sl_ctl_table_print(t, f, 1);
	fclose(f);
	CHECK(strcmp(buf, " port  name       rx_pkts\n"
			  " 1     net_pcap0    12345\n"
			  " 10    ?[31mred         7\n"
			  " 3\n") == 0,
	      "table output:\n%s", buf);
	free(buf);
	sl_ctl_table_destroy(t);
	sl_ctl_table_destroy(NULL);

	sl_ctl_sanitize(s, sizeof(s), "a\x1b\x9b\x7f\xc3\xa9z", 7);
	CHECK(strcmp(s, "a?????z") == 0, "sanitize '%s'", s);
	sl_ctl_sanitize(s, 4, "abcdef", 6);
	CHECK(strcmp(s, "abc") == 0, "sanitize truncates");

	static const struct {
		double v;
		const char *want;
	} si[] = {{0, "0"},          {999, "999"},      {999.4, "999"},    {999.6, "1.00k"},
		  {1234, "1.23k"},   {12345, "12.3k"},  {123456, "123k"},  {1e6, "1.00M"},
		  {45.6e6, "45.6M"}, {7.89e9, "7.89G"}, {1.2e12, "1.20T"}, {-1500, "-1.50k"}};
	for (unsigned k = 0; k < SL_ARRAY_SIZE(si); k++) {
		sl_ctl_fmt_si(si[k].v, s, sizeof(s));
		CHECK(strcmp(s, si[k].want) == 0, "si %g: '%s' want '%s'", si[k].v, s, si[k].want);
	}
}

int
main(void)
{
	test_valid();
	test_malformed();
	test_limits();
	test_writer();
	test_mutations();
	test_text();
	return sl_test_summary();
}
