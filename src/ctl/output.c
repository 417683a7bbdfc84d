/* SPDX-License-Identifier: BSD-3-Clause */
/* Control path (tools): text tables, the JSON writer, sanitizing untrusted text. */
#include "ctl.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

size_t
sl_ctl_sanitize(char *dst, size_t size, const char *src, size_t n)
{
	size_t k = 0;

	if (size == 0)
		return 0;
	for (size_t i = 0; i < n && k + 1 < size; i++) {
		unsigned char c = (unsigned char)src[i];
		/* ESC, CSI (0x9b) and friends would reach the terminal: keep printable ASCII. */
		dst[k++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	dst[k] = '\0';
	return k;
}

char *
sl_ctl_fmt_si(double v, char *buf, size_t size)
{
	static const char units[] = " kMGTPE";
	unsigned u = 0;
	double a = fabs(v);

	if (!isfinite(v)) {
		snprintf(buf, size, "-");
		return buf;
	}
	if (a < 999.5) {
		snprintf(buf, size, "%.0f", v);
		return buf;
	}
	while (a >= 999.5 && u + 1 < sizeof(units) - 1) {
		a /= 1000;
		v /= 1000;
		u++;
	}
	/* Three significant digits: 1.23k, 12.3k, 123k. */
	snprintf(buf, size, a < 9.995 ? "%.2f%c" : a < 99.95 ? "%.1f%c" : "%.0f%c", v, units[u]);
	return buf;
}

/*
 * Tables.
 */

#define TABLE_COLS_MAX 64

struct sl_ctl_table {
	unsigned n_cols;
	char align[TABLE_COLS_MAX];
	SL_VEC(char *) cells; /* headers first, then rows, row-major */
};

static int
table_push(struct sl_ctl_table *t, char *s)
{
	char **cell = sl_vec_push(&t->cells);

	if (cell == NULL)
		return -ENOMEM;
	*cell = s;
	return 0;
}

static int
table_push_text(struct sl_ctl_table *t, const char *text)
{
	size_t n = strlen(text);
	char *s = malloc(n + 1);

	if (s == NULL)
		return -ENOMEM;
	sl_ctl_sanitize(s, n + 1, text, n);
	if (table_push(t, s) < 0) {
		free(s);
		return -ENOMEM;
	}
	return 0;
}

int
sl_ctl_table_create(const char *const headers[], unsigned n_cols, const char *align,
		    struct sl_ctl_table **out)
{
	struct sl_ctl_table *t;

	*out = NULL;
	if (n_cols == 0 || n_cols > TABLE_COLS_MAX || align == NULL || strlen(align) != n_cols)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	t->n_cols = n_cols;
	for (unsigned i = 0; i < n_cols; i++) {
		t->align[i] = align[i];
		if (table_push_text(t, headers[i] ? headers[i] : "") < 0) {
			sl_ctl_table_destroy(t);
			return -ENOMEM;
		}
	}
	*out = t;
	return 0;
}

void
sl_ctl_table_destroy(struct sl_ctl_table *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->cells.n; i++)
		free(t->cells.v[i]);
	sl_vec_free(&t->cells);
	free(t);
}

int
sl_ctl_table_add(struct sl_ctl_table *t, const char *text)
{
	return table_push_text(t, text ? text : "");
}

int
sl_ctl_table_addf(struct sl_ctl_table *t, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return table_push_text(t, buf);
}

unsigned
sl_ctl_table_rows(const struct sl_ctl_table *t)
{
	size_t body = t->cells.n - t->n_cols;

	return (unsigned)((body + t->n_cols - 1) / t->n_cols);
}

void
sl_ctl_table_print(const struct sl_ctl_table *t, FILE *f, unsigned indent)
{
	size_t width[TABLE_COLS_MAX] = {0};
	size_t n_rows = (t->cells.n + t->n_cols - 1) / t->n_cols;

	bool heading = false;

	for (unsigned c = 0; c < t->n_cols; c++)
		heading |= t->cells.v[c][0] != '\0';
	for (size_t i = 0; i < t->cells.n; i++)
		width[i % t->n_cols] = SL_MAX(width[i % t->n_cols], strlen(t->cells.v[i]));
	for (size_t r = heading ? 0 : 1; r < n_rows; r++) {
		/* Trailing blanks: stop after the last non-empty cell of a left column. */
		unsigned last = 0;
		for (unsigned c = 0; c < t->n_cols; c++) {
			size_t i = r * t->n_cols + c;
			if (i < t->cells.n && t->cells.v[i][0])
				last = c;
		}
		fprintf(f, "%*s", (int)indent, "");
		for (unsigned c = 0; c <= last; c++) {
			size_t i = r * t->n_cols + c;
			const char *s = i < t->cells.n ? t->cells.v[i] : "";
			bool right = t->align[c] == 'r';
			int w = (int)width[c];

			if (c)
				fputs("  ", f);
			if (right)
				fprintf(f, "%*s", w, s);
			else if (c == last)
				fputs(s, f);
			else
				fprintf(f, "%-*s", w, s);
		}
		fputc('\n', f);
	}
}

/*
 * JSON writer.
 */

void
sl_ctl_jw_init(struct sl_ctl_jw *w, FILE *f, bool pretty)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->pretty = pretty;
}

static void
jw_indent(struct sl_ctl_jw *w)
{
	if (!w->pretty)
		return;
	fputc('\n', w->f);
	for (unsigned i = 0; i < w->depth; i++)
		fputs("  ", w->f);
}

static void
jw_escape(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		unsigned k;

		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			i++;
			continue;
		}
		if (c < 0x20 || c == 0x7f) {
			static const char short_esc[] = "btn?fr";
			if (c >= '\b' && c <= '\r' && c != 0x0b)
				fprintf(f, "\\%c", short_esc[c - '\b']);
			else
				fprintf(f, "\\u%04x", c);
			i++;
			continue;
		}
		if (c < 0x80) {
			fputc(c, f);
			i++;
			continue;
		}
		/* Copy a valid UTF-8 sequence; replace any invalid byte with U+FFFD. */
		k = 0;
		if (c >= 0xc2 && c <= 0xdf)
			k = 2;
		else if (c >= 0xe0 && c <= 0xef)
			k = 3;
		else if (c >= 0xf0 && c <= 0xf4)
			k = 4;
		if (k && i + k <= n) {
			uint32_t cp = c & (k == 2 ? 0x1f : k == 3 ? 0x0f : 0x07);
			bool ok = true;
			for (unsigned j = 1; j < k && ok; j++) {
				ok = (p[i + j] & 0xc0) == 0x80;
				cp = cp << 6 | (p[i + j] & 0x3f);
			}
			if (ok && !((k == 3 && cp < 0x800) ||
				    (k == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
				    (cp >= 0xd800 && cp <= 0xdfff))) {
				fwrite(p + i, 1, k, f);
				i += k;
				continue;
			}
		}
		/* As its UTF-8 bytes, as a valid U+FFFD is written: a re-parsed
		 * document then writes the same bytes again (fuzz_json). */
		fputs("\xef\xbf\xbd", f);
		i++;
	}
	fputc('"', f);
}

/* Before any value: separator, indentation and key; false on misuse. */
static bool
jw_prefix(struct sl_ctl_jw *w, const char *key)
{
	if (w->error)
		return false;
	if (w->depth == 0) {
		if (w->done || key != NULL) {
			w->error = -EINVAL;
			return false;
		}
		return true;
	}
	if (w->is_object[w->depth - 1] != (key != NULL)) {
		w->error = -EINVAL;
		return false;
	}
	if (w->has_items[w->depth - 1])
		fputc(',', w->f);
	w->has_items[w->depth - 1] = true;
	jw_indent(w);
	if (key) {
		jw_escape(w->f, key, strlen(key));
		fputs(w->pretty ? ": " : ":", w->f);
	}
	return true;
}

/* After a scalar or a closed container. */
static void
jw_suffix(struct sl_ctl_jw *w)
{
	if (w->depth == 0)
		w->done = true;
	if (ferror(w->f) && !w->error)
		w->error = -EIO;
}

static void
jw_open(struct sl_ctl_jw *w, const char *key, bool object)
{
	if (!jw_prefix(w, key))
		return;
	if (w->depth == SL_CTL_JW_DEPTH_MAX) {
		w->error = -EINVAL;
		return;
	}
	fputc(object ? '{' : '[', w->f);
	w->is_object[w->depth] = object;
	w->has_items[w->depth] = false;
	w->depth++;
}

static void
jw_close(struct sl_ctl_jw *w, bool object)
{
	bool had;

	if (w->error)
		return;
	if (w->depth == 0 || w->is_object[w->depth - 1] != object) {
		w->error = -EINVAL;
		return;
	}
	had = w->has_items[w->depth - 1];
	w->depth--;
	if (had)
		jw_indent(w);
	fputc(object ? '}' : ']', w->f);
	jw_suffix(w);
}

void
sl_ctl_jw_object_begin(struct sl_ctl_jw *w, const char *key)
{
	jw_open(w, key, true);
}

void
sl_ctl_jw_object_end(struct sl_ctl_jw *w)
{
	jw_close(w, true);
}

void
sl_ctl_jw_array_begin(struct sl_ctl_jw *w, const char *key)
{
	jw_open(w, key, false);
}

void
sl_ctl_jw_array_end(struct sl_ctl_jw *w)
{
	jw_close(w, false);
}

void
sl_ctl_jw_stringn(struct sl_ctl_jw *w, const char *key, const char *s, size_t n)
{
	if (!jw_prefix(w, key))
		return;
	jw_escape(w->f, s, n);
	jw_suffix(w);
}

void
sl_ctl_jw_string(struct sl_ctl_jw *w, const char *key, const char *s)
{
	if (s == NULL)
		sl_ctl_jw_null(w, key);
	else
		sl_ctl_jw_stringn(w, key, s, strlen(s));
}

void
sl_ctl_jw_stringf(struct sl_ctl_jw *w, const char *key, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	sl_ctl_jw_string(w, key, buf);
}

void
sl_ctl_jw_u64(struct sl_ctl_jw *w, const char *key, uint64_t v)
{
	if (!jw_prefix(w, key))
		return;
	fprintf(w->f, "%" PRIu64, v);
	jw_suffix(w);
}

void
sl_ctl_jw_i64(struct sl_ctl_jw *w, const char *key, int64_t v)
{
	if (!jw_prefix(w, key))
		return;
	fprintf(w->f, "%" PRId64, v);
	jw_suffix(w);
}

void
sl_ctl_jw_double(struct sl_ctl_jw *w, const char *key, double v)
{
	if (!isfinite(v)) {
		sl_ctl_jw_null(w, key);
		return;
	}
	if (!jw_prefix(w, key))
		return;
	/*
	 * The shortest of %.15g..%.17g that reads back to the same double;
	 * negative zero keeps a fraction so it does not read back as the
	 * integer 0.
	 */
	if (v == 0 && signbit(v)) {
		fputs("-0.0", w->f);
	} else {
		char buf[32];
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(buf, sizeof(buf), "%.*g", prec, v);
			if (strtod(buf, NULL) == v)
				break;
		}
		fputs(buf, w->f);
	}
	jw_suffix(w);
}

void
sl_ctl_jw_bool(struct sl_ctl_jw *w, const char *key, bool v)
{
	if (!jw_prefix(w, key))
		return;
	fputs(v ? "true" : "false", w->f);
	jw_suffix(w);
}

void
sl_ctl_jw_null(struct sl_ctl_jw *w, const char *key)
{
	if (!jw_prefix(w, key))
		return;
	fputs("null", w->f);
	jw_suffix(w);
}

/* Copy @v (parsed documents are acyclic; nesting past the writer's depth is -EINVAL). */
static void
jw_json(struct sl_ctl_jw *w, const char *key, size_t key_len, const struct sl_ctl_json *v)
{
	char kbuf[256];
	const char *k = key;

	/* Keys with NUL bytes cannot go through the C-string key API: keep their visible part. */
	if (key && strlen(key) != key_len) {
		snprintf(kbuf, sizeof(kbuf), "%s", key);
		k = kbuf;
	}
	switch (v->type) {
	case SL_CTL_JSON_NULL:
		sl_ctl_jw_null(w, k);
		break;
	case SL_CTL_JSON_FALSE:
	case SL_CTL_JSON_TRUE:
		sl_ctl_jw_bool(w, k, v->type == SL_CTL_JSON_TRUE);
		break;
	case SL_CTL_JSON_NUMBER:
		if (v->is_int && !v->negative) {
			sl_ctl_jw_u64(w, k, v->u);
		} else if (v->is_int) {
			int64_t i;
			sl_ctl_json_i64(v, &i);
			sl_ctl_jw_i64(w, k, i);
		} else {
			sl_ctl_jw_double(w, k, v->d);
		}
		break;
	case SL_CTL_JSON_STRING:
		sl_ctl_jw_stringn(w, k, v->str, v->str_len);
		break;
	case SL_CTL_JSON_ARRAY:
	case SL_CTL_JSON_OBJECT: {
		bool obj = v->type == SL_CTL_JSON_OBJECT;
		jw_open(w, k, obj);
		for (const struct sl_ctl_json *c = v->child; c && !w->error; c = c->next)
			jw_json(w, obj ? c->key : NULL, obj ? c->key_len : 0, c);
		jw_close(w, obj);
		break;
	}
	default:
		w->error = -EINVAL;
		break;
	}
}

void
sl_ctl_jw_json(struct sl_ctl_jw *w, const char *key, const struct sl_ctl_json *v)
{
	if (v == NULL) {
		sl_ctl_jw_null(w, key);
		return;
	}
	jw_json(w, key, key ? strlen(key) : 0, v);
}

int
sl_ctl_jw_finish(struct sl_ctl_jw *w)
{
	if (!w->error && (w->depth != 0 || !w->done))
		w->error = -EINVAL;
	if (!w->error) {
		fputc('\n', w->f);
		if (fflush(w->f) != 0 || ferror(w->f))
			w->error = -EIO;
	}
	return w->error;
}
