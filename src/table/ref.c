/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reference classifier: a linear scan, the executable definition of table
 * semantics (table.h).  Test-only; deliberately slow and obvious.
 */
#include "table.h"

#include <errno.h>
#include <string.h>

struct sl_ref_table {
	struct sl_table_params p;
	unsigned n, cap;
	struct sl_rule *rules;
};

struct sl_ref_table *
sl_ref_create(const struct sl_table_params *p)
{
	struct sl_ref_table *r = calloc(1, sizeof(*r));

	if (r != NULL)
		r->p = *p;
	return r;
}

void
sl_ref_destroy(struct sl_ref_table *r)
{
	if (r == NULL)
		return;
	free(r->rules);
	free(r);
}

static bool
same_rule(const struct sl_ref_table *r, const struct sl_rule *a, const struct sl_rule *b)
{
	return a->priority == b->priority && memcmp(a->value, b->value, r->p.key_size) == 0 &&
	       memcmp(a->mask, b->mask, r->p.key_size) == 0;
}

int
sl_ref_add(struct sl_ref_table *r, const struct sl_rule *rule)
{
	for (unsigned i = 0; i < r->n; i++)
		if (same_rule(r, &r->rules[i], rule))
			return -EEXIST;
	if (r->n == r->cap) {
		unsigned cap = r->cap ? r->cap * 2 : 64;
		struct sl_rule *nr = realloc(r->rules, cap * sizeof(*nr));
		if (nr == NULL)
			return -ENOMEM;
		r->rules = nr;
		r->cap = cap;
	}
	r->rules[r->n++] = *rule;
	return 0;
}

int
sl_ref_del(struct sl_ref_table *r, const struct sl_rule *rule)
{
	for (unsigned i = 0; i < r->n; i++) {
		if (same_rule(r, &r->rules[i], rule)) {
			r->rules[i] = r->rules[--r->n];
			return 0;
		}
	}
	return -ENOENT;
}

/* Effective priority: lpm orders by prefix length, every other kind by priority. */
static uint32_t
effective_prio(const struct sl_ref_table *r, const struct sl_rule *rule)
{
	if (r->p.kind == SL_TABLE_LPM)
		return (uint32_t)sl_mask_prefix_len(rule->mask, r->p.lpm_bits);
	return rule->priority;
}

void *
sl_ref_lookup(const struct sl_ref_table *r, const uint8_t *key, uint32_t *prio)
{
	const struct sl_rule *best = NULL;
	uint32_t best_prio = 0;

	for (unsigned i = 0; i < r->n; i++) {
		const struct sl_rule *rule = &r->rules[i];
		uint32_t p;

		if (!sl_rule_matches(rule, key, r->p.key_size))
			continue;
		p = effective_prio(r, rule);
		if (best == NULL || p > best_prio) {
			best = rule;
			best_prio = p;
		}
	}
	if (prio != NULL)
		*prio = best_prio;
	return best ? best->data : NULL;
}
