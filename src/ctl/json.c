/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path (tools): the strict JSON reader.
 *
 * A recursive-descent parser over (text, len).  Recursion depth is bounded
 * by the depth limit (at most 1024 frames of a few dozen bytes), so hostile
 * nesting cannot exhaust the stack.  Memory is bounded by the input: the
 * decoded strings of a document never take more bytes than their quoted
 * source (an escape is never shorter in the source than its UTF-8 output),
 * so one arena of len + 1 bytes holds them all; nodes come from chunks so
 * their addresses stay stable while the tree grows.
 */
#include "ctl.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#define DEFAULT_MAX_SIZE (16u << 20)
#define DEFAULT_MAX_DEPTH 64u
#define DEPTH_CAP 1024u
#define DEFAULT_MAX_NODES 1000000u
#define NODES_PER_CHUNK 256u
/* Longest number token copied for strtod (longer ones are refused). */
#define NUMBER_MAX 400

struct chunk {
	struct chunk *next;
	unsigned used;
	struct sl_ctl_json nodes[NODES_PER_CHUNK];
};

struct sl_ctl_json_doc {
	struct sl_ctl_json *root;
	struct chunk *chunks; /* newest first */
	size_t n_nodes;
	char *strings; /* arena for decoded keys and strings */
	size_t str_used;
	size_t str_cap;
};

struct parser {
	const char *p; /* input */
	size_t len;
	size_t pos;
	unsigned depth;
	struct sl_ctl_json_limits lim;
	struct sl_ctl_json_doc *doc;
	char *err;
	size_t err_size;
};

static int __attribute__((format(printf, 4, 5)))
fail(struct parser *ps, int rc, size_t at, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ps->err && ps->err_size)
		snprintf(ps->err, ps->err_size, "byte %zu: %s", at, msg);
	return rc;
}

/* Describe the byte at @at for an error message. */
static const char *
describe(const struct parser *ps, size_t at, char *buf, size_t size)
{
	unsigned char c;

	if (at >= ps->len)
		return "end of input";
	c = (unsigned char)ps->p[at];
	if (c >= 0x21 && c < 0x7f)
		snprintf(buf, size, "'%c'", c);
	else
		snprintf(buf, size, "byte 0x%02x", c);
	return buf;
}

static struct sl_ctl_json *
node_new(struct parser *ps)
{
	struct sl_ctl_json_doc *doc = ps->doc;
	struct chunk *c = doc->chunks;
	struct sl_ctl_json *n;

	if (doc->n_nodes >= ps->lim.max_nodes)
		return NULL;
	if (c == NULL || c->used == NODES_PER_CHUNK) {
		c = malloc(sizeof(*c));
		if (c == NULL)
			return NULL;
		c->next = doc->chunks;
		c->used = 0;
		doc->chunks = c;
	}
	n = &c->nodes[c->used++];
	memset(n, 0, sizeof(*n));
	doc->n_nodes++;
	return n;
}

static void
skip_ws(struct parser *ps)
{
	while (ps->pos < ps->len) {
		char c = ps->p[ps->pos];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		ps->pos++;
	}
}

/* Length of the UTF-8 sequence at @s (at most @n bytes), or 0 when invalid. */
static unsigned
utf8_seq(const unsigned char *s, size_t n)
{
	unsigned need;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		need = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		need = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		need = 4;
		cp = s[0] & 0x07;
	} else {
		return 0; /* continuation byte, overlong lead (c0, c1) or above U+10FFFF */
	}
	if (n < need)
		return 0;
	for (unsigned i = 1; i < need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, UTF-16 surrogates and code points past U+10FFFF. */
	if ((need == 3 && cp < 0x800) || (need == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return need;
}

static int
hex4(const char *s, uint32_t *out)
{
	uint32_t v = 0;

	for (unsigned i = 0; i < 4; i++) {
		char c = s[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static size_t
put_utf8(char *d, uint32_t cp)
{
	if (cp < 0x80) {
		d[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		d[0] = (char)(0xc0 | cp >> 6);
		d[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		d[0] = (char)(0xe0 | cp >> 12);
		d[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		d[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	d[0] = (char)(0xf0 | cp >> 18);
	d[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	d[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	d[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * A string at ps->pos (the opening quote).  The decoded text goes to the
 * arena; the arena was sized from the input so it cannot overflow, but the
 * bound is checked anyway (SL_VERIFY: a bug, not bad input).
 */
static int
parse_string(struct parser *ps, const char **out, size_t *out_len)
{
	struct sl_ctl_json_doc *doc = ps->doc;
	size_t start = ps->pos;
	char *d = doc->strings + doc->str_used;
	size_t n = 0;

	ps->pos++; /* opening quote */
	for (;;) {
		unsigned char c;

		if (ps->pos >= ps->len)
			return fail(ps, -EBADMSG, start, "unterminated string");
		c = (unsigned char)ps->p[ps->pos];
		if (c == '"') {
			ps->pos++;
			break;
		}
		if (c < 0x20)
			return fail(ps, -EBADMSG, ps->pos,
				    "control character 0x%02x in a string (must be escaped)", c);
		if (c == '\\') {
			size_t at = ps->pos;
			char e;

			if (ps->pos + 1 >= ps->len)
				return fail(ps, -EBADMSG, at, "unterminated escape");
			e = ps->p[ps->pos + 1];
			ps->pos += 2;
			switch (e) {
			case '"':
			case '\\':
			case '/':
				d[n++] = e;
				break;
			case 'b':
				d[n++] = '\b';
				break;
			case 'f':
				d[n++] = '\f';
				break;
			case 'n':
				d[n++] = '\n';
				break;
			case 'r':
				d[n++] = '\r';
				break;
			case 't':
				d[n++] = '\t';
				break;
			case 'u': {
				uint32_t cp, lo;

				if (ps->len - ps->pos < 4 || hex4(ps->p + ps->pos, &cp) < 0)
					return fail(ps, -EBADMSG, at, "bad \\u escape");
				ps->pos += 4;
				if (cp >= 0xdc00 && cp <= 0xdfff)
					return fail(ps, -EBADMSG, at, "lone low surrogate \\u%04x",
						    cp);
				if (cp >= 0xd800 && cp <= 0xdbff) {
					/* A high surrogate must be followed by a low one. */
					if (ps->len - ps->pos < 6 || ps->p[ps->pos] != '\\' ||
					    ps->p[ps->pos + 1] != 'u' ||
					    hex4(ps->p + ps->pos + 2, &lo) < 0 || lo < 0xdc00 ||
					    lo > 0xdfff)
						return fail(
							ps, -EBADMSG, at,
							"high surrogate \\u%04x without a low one",
							cp);
					ps->pos += 6;
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				}
				n += put_utf8(d + n, cp);
				break;
			}
			default:
				return fail(ps, -EBADMSG, at, "bad escape '\\%c'",
					    (unsigned char)e >= 0x21 && (unsigned char)e < 0x7f
						    ? e
						    : '?');
			}
			continue;
		}
		{
			unsigned k =
				utf8_seq((const unsigned char *)ps->p + ps->pos, ps->len - ps->pos);
			if (k == 0)
				return fail(ps, -EBADMSG, ps->pos, "invalid UTF-8 in a string");
			memcpy(d + n, ps->p + ps->pos, k);
			n += k;
			ps->pos += k;
		}
	}
	SL_VERIFY(doc->str_used + n + 1 <= doc->str_cap);
	d[n] = '\0';
	doc->str_used += n + 1;
	*out = d;
	*out_len = n;
	return 0;
}

static int
parse_number(struct parser *ps, struct sl_ctl_json *v)
{
	size_t start = ps->pos;
	char buf[NUMBER_MAX + 1];
	bool neg = false, is_int = true;
	uint64_t mag = 0;
	bool overflow = false;
	char *end;

	if (ps->p[ps->pos] == '-') {
		neg = true;
		ps->pos++;
	}
	if (ps->pos >= ps->len || ps->p[ps->pos] < '0' || ps->p[ps->pos] > '9')
		return fail(ps, -EBADMSG, start, "bad number: a digit must follow '-'");
	if (ps->p[ps->pos] == '0') {
		ps->pos++;
		if (ps->pos < ps->len && ps->p[ps->pos] >= '0' && ps->p[ps->pos] <= '9')
			return fail(ps, -EBADMSG, start, "bad number: leading zero");
	} else {
		while (ps->pos < ps->len && ps->p[ps->pos] >= '0' && ps->p[ps->pos] <= '9') {
			unsigned dgt = (unsigned)(ps->p[ps->pos] - '0');
			if (mag > (UINT64_MAX - dgt) / 10)
				overflow = true;
			else
				mag = mag * 10 + dgt;
			ps->pos++;
		}
	}
	if (ps->pos < ps->len && ps->p[ps->pos] == '.') {
		is_int = false;
		ps->pos++;
		if (ps->pos >= ps->len || ps->p[ps->pos] < '0' || ps->p[ps->pos] > '9')
			return fail(ps, -EBADMSG, start, "bad number: a digit must follow '.'");
		while (ps->pos < ps->len && ps->p[ps->pos] >= '0' && ps->p[ps->pos] <= '9')
			ps->pos++;
	}
	if (ps->pos < ps->len && (ps->p[ps->pos] == 'e' || ps->p[ps->pos] == 'E')) {
		is_int = false;
		ps->pos++;
		if (ps->pos < ps->len && (ps->p[ps->pos] == '+' || ps->p[ps->pos] == '-'))
			ps->pos++;
		if (ps->pos >= ps->len || ps->p[ps->pos] < '0' || ps->p[ps->pos] > '9')
			return fail(ps, -EBADMSG, start, "bad number: exponent without digits");
		while (ps->pos < ps->len && ps->p[ps->pos] >= '0' && ps->p[ps->pos] <= '9')
			ps->pos++;
	}
	if (ps->pos - start > NUMBER_MAX)
		return fail(ps, -EBADMSG, start, "number longer than %d characters", NUMBER_MAX);
	memcpy(buf, ps->p + start, ps->pos - start);
	buf[ps->pos - start] = '\0';
	errno = 0;
	v->d = strtod(buf, &end);
	/* ERANGE also flags underflow to a denormal or zero, which is harmless. */
	if (*end != '\0' || !isfinite(v->d))
		return fail(ps, -EBADMSG, start, "number out of range");
	v->type = SL_CTL_JSON_NUMBER;
	if (is_int && !overflow && (!neg || mag <= (uint64_t)INT64_MAX + 1)) {
		v->is_int = true;
		v->u = mag;
		v->negative = neg && mag != 0;
	}
	return 0;
}

static int parse_value(struct parser *ps, struct sl_ctl_json *v);

/* Literal @word at ps->pos. */
static int
parse_literal(struct parser *ps, const char *word, uint8_t type, struct sl_ctl_json *v)
{
	size_t n = strlen(word);
	char buf[16];

	if (ps->len - ps->pos < n || memcmp(ps->p + ps->pos, word, n) != 0)
		return fail(ps, -EBADMSG, ps->pos, "unexpected %s",
			    describe(ps, ps->pos, buf, sizeof(buf)));
	ps->pos += n;
	v->type = type;
	return 0;
}

static int
parse_container(struct parser *ps, struct sl_ctl_json *v, bool object)
{
	struct sl_ctl_json *last = NULL;
	size_t open_at = ps->pos;
	char close = object ? '}' : ']';
	char buf[16];
	int rc;

	if (++ps->depth > ps->lim.max_depth)
		return fail(ps, -E2BIG, open_at, "nesting deeper than %u", ps->lim.max_depth);
	v->type = object ? SL_CTL_JSON_OBJECT : SL_CTL_JSON_ARRAY;
	ps->pos++;
	skip_ws(ps);
	if (ps->pos < ps->len && ps->p[ps->pos] == close) {
		ps->pos++;
		ps->depth--;
		return 0;
	}
	for (;;) {
		struct sl_ctl_json *item = node_new(ps);
		const char *key = NULL;
		size_t key_len = 0;

		if (item == NULL)
			return ps->doc->n_nodes >= ps->lim.max_nodes
				       ? fail(ps, -E2BIG, ps->pos, "more than %zu values",
					      ps->lim.max_nodes)
				       : fail(ps, -ENOMEM, ps->pos, "out of memory");
		skip_ws(ps);
		if (object) {
			if (ps->pos >= ps->len || ps->p[ps->pos] != '"')
				return fail(ps, -EBADMSG, ps->pos,
					    "expected a member name (string), got %s",
					    describe(ps, ps->pos, buf, sizeof(buf)));
			if ((rc = parse_string(ps, &key, &key_len)))
				return rc;
			skip_ws(ps);
			if (ps->pos >= ps->len || ps->p[ps->pos] != ':')
				return fail(ps, -EBADMSG, ps->pos, "expected ':', got %s",
					    describe(ps, ps->pos, buf, sizeof(buf)));
			ps->pos++;
			skip_ws(ps);
		}
		if ((rc = parse_value(ps, item)))
			return rc;
		item->key = key;
		item->key_len = key_len;
		if (last)
			last->next = item;
		else
			v->child = item;
		last = item;
		v->n++;
		skip_ws(ps);
		if (ps->pos < ps->len && ps->p[ps->pos] == ',') {
			ps->pos++;
			skip_ws(ps);
			/* A trailing comma is not JSON. */
			if (ps->pos < ps->len && ps->p[ps->pos] == close)
				return fail(ps, -EBADMSG, ps->pos, "trailing comma before '%c'",
					    close);
			continue;
		}
		if (ps->pos < ps->len && ps->p[ps->pos] == close) {
			ps->pos++;
			break;
		}
		if (ps->pos >= ps->len)
			return fail(ps, -EBADMSG, open_at, "unterminated %s",
				    object ? "object" : "array");
		return fail(ps, -EBADMSG, ps->pos, "expected ',' or '%c', got %s", close,
			    describe(ps, ps->pos, buf, sizeof(buf)));
	}
	ps->depth--;
	return 0;
}

static int
parse_value(struct parser *ps, struct sl_ctl_json *v)
{
	char buf[16];

	skip_ws(ps);
	if (ps->pos >= ps->len)
		return fail(ps, -EBADMSG, ps->pos, "expected a value, got end of input");
	switch (ps->p[ps->pos]) {
	case '{':
		return parse_container(ps, v, true);
	case '[':
		return parse_container(ps, v, false);
	case '"':
		v->type = SL_CTL_JSON_STRING;
		return parse_string(ps, &v->str, &v->str_len);
	case 't':
		return parse_literal(ps, "true", SL_CTL_JSON_TRUE, v);
	case 'f':
		return parse_literal(ps, "false", SL_CTL_JSON_FALSE, v);
	case 'n':
		return parse_literal(ps, "null", SL_CTL_JSON_NULL, v);
	default:
		if (ps->p[ps->pos] == '-' || (ps->p[ps->pos] >= '0' && ps->p[ps->pos] <= '9'))
			return parse_number(ps, v);
		return fail(ps, -EBADMSG, ps->pos, "expected a value, got %s",
			    describe(ps, ps->pos, buf, sizeof(buf)));
	}
}

int
sl_ctl_json_parse(const char *text, size_t len, const struct sl_ctl_json_limits *lim,
		  struct sl_ctl_json_doc **out, char *err, size_t err_size)
{
	struct sl_ctl_json_doc *doc;
	struct parser ps;
	char buf[16];
	int rc;

	*out = NULL;
	memset(&ps, 0, sizeof(ps));
	ps.p = text;
	ps.len = len;
	ps.err = err;
	ps.err_size = err_size;
	if (lim)
		ps.lim = *lim;
	if (ps.lim.max_size == 0)
		ps.lim.max_size = DEFAULT_MAX_SIZE;
	if (ps.lim.max_depth == 0)
		ps.lim.max_depth = DEFAULT_MAX_DEPTH;
	ps.lim.max_depth = SL_MIN(ps.lim.max_depth, DEPTH_CAP);
	if (ps.lim.max_nodes == 0)
		ps.lim.max_nodes = DEFAULT_MAX_NODES;
	if (len > ps.lim.max_size)
		return fail(&ps, -E2BIG, 0, "input of %zu bytes exceeds the limit of %zu", len,
			    ps.lim.max_size);
	if (text == NULL && len)
		return fail(&ps, -EINVAL, 0, "no input");

	doc = calloc(1, sizeof(*doc));
	if (doc == NULL)
		return fail(&ps, -ENOMEM, 0, "out of memory");
	doc->str_cap = len + 1;
	doc->strings = malloc(doc->str_cap);
	ps.doc = doc;
	if (doc->strings == NULL) {
		rc = fail(&ps, -ENOMEM, 0, "out of memory");
		goto free_doc;
	}
	doc->root = node_new(&ps);
	if (doc->root == NULL) {
		rc = fail(&ps, -ENOMEM, 0, "out of memory");
		goto free_doc;
	}
	if ((rc = parse_value(&ps, doc->root)))
		goto free_doc;
	skip_ws(&ps);
	if (ps.pos != len) {
		rc = fail(&ps, -EBADMSG, ps.pos, "unexpected %s after the value",
			  describe(&ps, ps.pos, buf, sizeof(buf)));
		goto free_doc;
	}
	*out = doc;
	return 0;

free_doc:
	sl_ctl_json_free(doc);
	return rc;
}

const struct sl_ctl_json *
sl_ctl_json_root(const struct sl_ctl_json_doc *doc)
{
	return doc ? doc->root : NULL;
}

void
sl_ctl_json_free(struct sl_ctl_json_doc *doc)
{
	struct chunk *c, *next;

	if (doc == NULL)
		return;
	for (c = doc->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	free(doc->strings);
	free(doc);
}

const struct sl_ctl_json *
sl_ctl_json_get(const struct sl_ctl_json *obj, const char *key)
{
	size_t n;

	if (obj == NULL || obj->type != SL_CTL_JSON_OBJECT || key == NULL)
		return NULL;
	n = strlen(key);
	for (const struct sl_ctl_json *m = obj->child; m; m = m->next)
		if (m->key_len == n && memcmp(m->key, key, n) == 0)
			return m;
	return NULL;
}

bool
sl_ctl_json_u64(const struct sl_ctl_json *v, uint64_t *out)
{
	if (v == NULL || v->type != SL_CTL_JSON_NUMBER || !v->is_int || v->negative)
		return false;
	*out = v->u;
	return true;
}

bool
sl_ctl_json_i64(const struct sl_ctl_json *v, int64_t *out)
{
	if (v == NULL || v->type != SL_CTL_JSON_NUMBER || !v->is_int)
		return false;
	if (v->negative) {
		/* u <= 2^63 here (the parser guarantees it). */
		*out = v->u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v->u;
		return true;
	}
	if (v->u > (uint64_t)INT64_MAX)
		return false;
	*out = (int64_t)v->u;
	return true;
}

bool
sl_ctl_json_double(const struct sl_ctl_json *v, double *out)
{
	if (v == NULL || v->type != SL_CTL_JSON_NUMBER)
		return false;
	*out = v->d;
	return true;
}

const char *
sl_ctl_json_str(const struct sl_ctl_json *v)
{
	return v && v->type == SL_CTL_JSON_STRING ? v->str : NULL;
}

uint64_t
sl_ctl_json_get_u64(const struct sl_ctl_json *obj, const char *key, uint64_t dflt)
{
	uint64_t v;

	return sl_ctl_json_u64(sl_ctl_json_get(obj, key), &v) ? v : dflt;
}

const char *
sl_ctl_json_get_str(const struct sl_ctl_json *obj, const char *key, const char *dflt)
{
	const char *s = sl_ctl_json_str(sl_ctl_json_get(obj, key));

	return s ? s : dflt;
}
