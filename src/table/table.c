/* SPDX-License-Identifier: BSD-3-Clause */
/* Control path: table creation and the helpers the implementations share. */
#include "table.h"

#include <errno.h>
#include <string.h>

#include "mask/mask_priv.h"

static const struct sl_table_ops *const kind_ops[SL_TABLE__KIND_MAX] = {
	&sl_table_direct_ops, &sl_table_exact_ops, &sl_table_lpm_ops, &sl_table_mask_ops};

int
sl_table_create(const struct sl_table_params *p, struct sl_table **out)
{
	struct sl_table *t;
	int rc;

	if ((unsigned)p->kind >= SL_TABLE__KIND_MAX || p->key_size == 0 || p->key_size % 8 ||
	    p->key_size > SL_KEY_MAX)
		return -EINVAL;
	if (p->kind == SL_TABLE_LPM && (p->lpm_bits == 0 || p->lpm_bits > 128))
		return -EINVAL;
	if (p->kind == SL_TABLE_DIRECT &&
	    (p->direct_bytes == 0 || p->direct_bytes > 8 || p->max_entries == 0))
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	t->ops = kind_ops[p->kind];
	t->params = *p;
	snprintf(t->name, sizeof(t->name), "%s", p->name ? p->name : t->ops->name);
	t->params.name = t->name;
	rc = t->ops->create(&t->params, &t->impl);
	if (rc < 0) {
		free(t);
		return rc;
	}
	*out = t;
	return 0;
}

void
sl_table_destroy(struct sl_table *t)
{
	if (t == NULL)
		return;
	t->ops->destroy(t->impl);
	free(t);
}

bool
sl_mask_is_full(const uint8_t *mask, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (mask[i] != 0xff)
			return false;
	return true;
}

int
sl_mask_prefix_len(const uint8_t *mask, unsigned n_bits)
{
	unsigned n_bytes = SL_DIV_ROUND_UP(n_bits, 8);
	unsigned lead = n_bytes * 8 - n_bits; /* unused high bits of the first byte */
	unsigned len = 0;
	bool ended = false;

	for (unsigned b = lead; b < n_bytes * 8; b++) {
		bool set = mask[b / 8] & (0x80 >> (b % 8));
		if (set && ended)
			return -1;
		if (set)
			len++;
		else
			ended = true;
	}
	for (unsigned b = 0; b < lead; b++)
		if (mask[0] & (0x80 >> b))
			return -1;
	return (int)len;
}

int
sl_table_commit(struct sl_table *t)
{
	if (t == NULL || t->params.kind != SL_TABLE_MASK)
		return 0;
	return sl_mask_commit(t->impl);
}
