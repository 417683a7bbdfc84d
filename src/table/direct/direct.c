/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Direct (linear) table: the key's first direct_bytes bytes are an index
 * (e.g. metadata written by an earlier table, the composite pipeline's "GOTO_DIRECT"), and
 * the entry is found in O(1) with one array read.
 */
#include "../table.h"

#include <errno.h>
#include <string.h>

struct direct {
	struct sl_table_params p;
	uint32_t n;
	void **data;           /* data per index, NULL = empty */
	struct sl_rule *rules; /* the stored rule per index (for del/find/iterate) */
};

static int
direct_create(const struct sl_table_params *p, void **tbl)
{
	struct direct *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return -ENOMEM;
	t->p = *p;
	t->data = calloc(p->max_entries, sizeof(*t->data));
	t->rules = calloc(p->max_entries, sizeof(*t->rules));
	if (t->data == NULL || t->rules == NULL) {
		free(t->data);
		free(t->rules);
		free(t);
		return -ENOMEM;
	}
	*tbl = t;
	return 0;
}

static void
direct_destroy(void *tbl)
{
	struct direct *t = tbl;

	if (t == NULL)
		return;
	free(t->data);
	free(t->rules);
	free(t);
}

static inline uint64_t
key_index(const struct direct *t, const uint8_t *key)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < t->p.direct_bytes; i++)
		v = v << 8 | key[i];
	return v;
}

/* Index of a rule, or -EINVAL when the rule is not an exact index below capacity. */
static int64_t
rule_index(const struct direct *t, const struct sl_rule *r)
{
	uint64_t idx;

	if (!sl_mask_is_full(r->mask, t->p.direct_bytes))
		return -EINVAL;
	for (unsigned i = t->p.direct_bytes; i < t->p.key_size; i++)
		if (r->mask[i] || r->value[i])
			return -EINVAL;
	idx = key_index(t, r->value);
	return idx < t->p.max_entries ? (int64_t)idx : -EINVAL;
}

static int
direct_add(void *tbl, const struct sl_rule *r)
{
	struct direct *t = tbl;
	int64_t idx = rule_index(t, r);

	if (idx < 0)
		return (int)idx;
	if (t->data[idx] != NULL)
		return -EEXIST;
	t->rules[idx] = *r;
	t->data[idx] = r->data;
	t->n++;
	return 0;
}

static int
direct_del(void *tbl, const struct sl_rule *r, void **data)
{
	struct direct *t = tbl;
	int64_t idx = rule_index(t, r);

	if (idx < 0 || t->data[idx] == NULL || t->rules[idx].priority != r->priority)
		return -ENOENT;
	if (data != NULL)
		*data = t->data[idx];
	t->data[idx] = NULL;
	t->n--;
	return 0;
}

static void *
direct_find(const void *tbl, const struct sl_rule *r)
{
	const struct direct *t = tbl;
	int64_t idx = rule_index(t, r);

	if (idx < 0 || t->data[idx] == NULL || t->rules[idx].priority != r->priority)
		return NULL;
	return t->data[idx];
}

static uint64_t
direct_lookup_burst(const void *tbl, const uint8_t *const keys[], uint64_t lanes, void *hits[])
{
	const struct direct *t = tbl;
	uint64_t hit = 0;
	unsigned i;

	SL_FOR_EACH_LANE (i, lanes) {
		uint64_t idx = key_index(t, keys[i]);
		void *d = idx < t->p.max_entries ? t->data[idx] : NULL;

		hits[i] = d;
		hit |= (uint64_t)(d != NULL) << i;
	}
	return hit;
}

static int
direct_iterate(const void *tbl, sl_table_iter_fn fn, void *arg)
{
	const struct direct *t = tbl;

	for (uint32_t i = 0; i < t->p.max_entries; i++) {
		if (t->data[i] == NULL)
			continue;
		int rc = fn(&t->rules[i], arg);
		if (rc)
			return rc;
	}
	return 0;
}

static void
direct_stats_read(const void *tbl, struct sl_table_stats *st)
{
	const struct direct *t = tbl;

	memset(st, 0, sizeof(*st));
	st->n_entries = t->n;
	st->mem_bytes = (uint64_t)t->p.max_entries * (sizeof(void *) + sizeof(struct sl_rule));
}

const struct sl_table_ops sl_table_direct_ops = {
	.name = "direct",
	.create = direct_create,
	.destroy = direct_destroy,
	.add = direct_add,
	.del = direct_del,
	.find = direct_find,
	.lookup_burst = direct_lookup_burst,
	.iterate = direct_iterate,
	.stats_read = direct_stats_read,
};
