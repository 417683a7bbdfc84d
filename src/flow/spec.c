/* SPDX-License-Identifier: BSD-3-Clause */
/* Control path: helpers on flow specs shared by the flow-file parser and the OpenFlow codec. */
#include "flow.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void
sl_flow_spec_init(struct sl_flow_spec *fs)
{
	memset(fs, 0, sizeof(*fs));
	fs->priority = 0x8000;
	fs->insns.goto_table = -1;
}

const struct sl_match_field *
sl_match_get(const struct sl_match *m, const struct sl_field *f)
{
	for (unsigned i = 0; i < m->n_fields; i++)
		if (sl_field_equal(&m->fields[i].f, f))
			return &m->fields[i];
	return NULL;
}

int
sl_match_set(struct sl_match *m, const struct sl_field *f, const uint8_t *value,
	     const uint8_t *mask)
{
	struct sl_match_field *mf = (struct sl_match_field *)sl_match_get(m, f);
	unsigned size;

	if (f->id >= SL_FIELD__MAX ||
	    (f->id == SL_FIELD_RAW && (f->raw_n_bits == 0 || f->raw_n_bits > SL_RAW_BITS_MAX ||
				       f->raw_base > SL_RAW_BASE_L4)))
		return -EINVAL;
	if (mf == NULL) {
		if (m->n_fields == SL_KEY_FIELDS_MAX)
			return -E2BIG;
		mf = &m->fields[m->n_fields++];
	}
	memset(mf, 0, sizeof(*mf));
	mf->f = *f;
	size = sl_field_size(f);
	for (unsigned i = 0; i < size; i++) {
		mf->mask[i] = mask[i];
		mf->value[i] = value[i] & mask[i];
	}
	/* Bits above the field's width are never part of a match. */
	unsigned spare = size * 8 - sl_field_bits(f);
	if (spare) {
		mf->mask[0] &= (uint8_t)(0xff >> spare);
		mf->value[0] &= (uint8_t)(0xff >> spare);
	}
	return 0;
}

long
sl_match_exact_value(const struct sl_match *m, enum sl_field_id id)
{
	struct sl_field f = {.id = id};
	const struct sl_match_field *mf = sl_match_get(m, &f);
	unsigned size = sl_field_size(&f);
	long v = 0;

	if (mf == NULL)
		return -1;
	for (unsigned i = 0; i < size; i++) {
		uint8_t full = i == 0 ? (uint8_t)(0xff >> (size * 8 - sl_field_bits(&f))) : 0xff;
		if (mf->mask[i] != full)
			return -1;
		v = v << 8 | mf->value[i];
	}
	return v;
}

int
sl_match_prereq_check(const struct sl_match *m, char *err, size_t err_size)
{
	long eth = sl_match_exact_value(m, SL_FIELD_ETH_TYPE);
	long proto = sl_match_exact_value(m, SL_FIELD_IP_PROTO);

	for (unsigned i = 0; i < m->n_fields; i++) {
		enum sl_field_id id = m->fields[i].f.id;
		uint16_t types[2];
		unsigned n_types;
		int need_proto;
		bool ok = false;

		sl_field_prereq(id, types, &n_types, &need_proto);
		for (unsigned t = 0; t < n_types; t++)
			ok |= eth == types[t];
		if (n_types && !ok) {
			snprintf(err, err_size, "%s requires dl_type=0x%04x%s", sl_field_name(id),
				 types[0], n_types > 1 ? " (or its other IP version)" : "");
			return (int)i;
		}
		if (need_proto >= 0 && proto != need_proto) {
			snprintf(err, err_size, "%s requires nw_proto=%d", sl_field_name(id),
				 need_proto);
			return (int)i;
		}
		if (id == SL_FIELD_VLAN_PCP) {
			struct sl_field vf = {.id = SL_FIELD_VLAN_VID};
			const struct sl_match_field *v = sl_match_get(m, &vf);
			if (v == NULL || !(v->value[0] & 0x10)) {
				snprintf(err, err_size,
					 "dl_vlan_pcp requires a VLAN tag (dl_vlan)");
				return (int)i;
			}
		}
		if (id == SL_FIELD_IPV6_ND_TARGET) {
			long t = sl_match_exact_value(m, SL_FIELD_ICMPV6_TYPE);
			if (t != 135 && t != 136) {
				snprintf(err, err_size,
					 "nd_target requires icmpv6_type=135 or 136");
				return (int)i;
			}
		}
		/* OpenFlow 1.3 table 12: nd_sll needs a solicitation, nd_tll an advertisement. */
		if (id == SL_FIELD_IPV6_ND_SLL || id == SL_FIELD_IPV6_ND_TLL) {
			long want = id == SL_FIELD_IPV6_ND_SLL ? 135 : 136;
			if (sl_match_exact_value(m, SL_FIELD_ICMPV6_TYPE) != want) {
				snprintf(err, err_size, "%s requires icmpv6_type=%ld",
					 sl_field_name(id), want);
				return (int)i;
			}
		}
	}
	return -1;
}

bool
sl_action_equal(const struct sl_action *a, const struct sl_action *b)
{
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case SL_ACT_OUTPUT:
		return a->output.port == b->output.port && a->output.max_len == b->output.max_len;
	case SL_ACT_SET_FIELD:
		return sl_field_equal(&a->set_field.f, &b->set_field.f) &&
		       memcmp(a->set_field.value, b->set_field.value,
			      sl_field_size(&a->set_field.f)) == 0;
	case SL_ACT_PUSH_VLAN:
	case SL_ACT_PUSH_MPLS:
	case SL_ACT_POP_MPLS:
	case SL_ACT_PUSH_PBB:
		return a->ethertype == b->ethertype;
	case SL_ACT_SET_NW_TTL:
	case SL_ACT_SET_MPLS_TTL:
		return a->ttl == b->ttl;
	case SL_ACT_GROUP:
		return a->group_id == b->group_id;
	case SL_ACT_SET_QUEUE:
		return a->queue_id == b->queue_id;
	case SL_ACT_SET_STATE:
		return a->set_state.table_id == b->set_state.table_id &&
		       memcmp(&a->set_state.set, &b->set_state.set, sizeof(a->set_state.set)) == 0;
	default:
		return true;
	}
}

bool
sl_action_same_set_slot(const struct sl_action *a, const struct sl_action *b)
{
	if (a->type != b->type)
		return false;
	return a->type != SL_ACT_SET_FIELD || sl_field_equal(&a->set_field.f, &b->set_field.f);
}

/* Remove field @id from a match. */
static void
match_drop(struct sl_match *m, enum sl_field_id id)
{
	for (unsigned i = 0; i < m->n_fields; i++) {
		if (m->fields[i].f.id == id) {
			m->fields[i] = m->fields[--m->n_fields];
			return;
		}
	}
}

void
sl_match_after_action(struct sl_match *m, const struct sl_action *a)
{
	const struct sl_field eth = {.id = SL_FIELD_ETH_TYPE};
	uint8_t v[2], full[2] = {0xff, 0xff};

	switch (a->type) {
	case SL_ACT_PUSH_MPLS:
	case SL_ACT_POP_MPLS:
	case SL_ACT_PUSH_PBB:
		v[0] = (uint8_t)(a->ethertype >> 8);
		v[1] = (uint8_t)a->ethertype;
		match_drop(m, SL_FIELD_IP_PROTO);
		(void)sl_match_set(m, &eth, v, full); /* replaces: never grows past the limit */
		return;
	case SL_ACT_POP_PBB: /* what was inside: unknown */
		match_drop(m, SL_FIELD_ETH_TYPE);
		match_drop(m, SL_FIELD_IP_PROTO);
		return;
	default:
		return;
	}
}

bool
sl_set_field_prereqs_ok(const struct sl_match *m, const struct sl_field *f)
{
	uint16_t types[2];
	unsigned n_types;
	int proto;
	bool ok;
	long eth;

	if (f->id == SL_FIELD_RAW)
		return true; /* protocol-oblivious: no prerequisites */
	sl_field_prereq(f->id, types, &n_types, &proto);
	eth = sl_match_exact_value(m, SL_FIELD_ETH_TYPE);
	ok = n_types == 0;
	for (unsigned i = 0; i < n_types; i++)
		ok |= eth == types[i];
	return ok && (proto < 0 || sl_match_exact_value(m, SL_FIELD_IP_PROTO) == proto);
}

int
sl_actions_prereq_check(const struct sl_match *m, const struct sl_instructions *in)
{
	static __thread struct sl_match cur; /* about 1 kB: off the stack */

	cur = *m;
	for (unsigned i = 0; i < in->n_apply; i++) {
		const struct sl_action *a = &in->apply[i];
		if (a->type == SL_ACT_SET_FIELD && !sl_set_field_prereqs_ok(&cur, &a->set_field.f))
			return (int)i;
		sl_match_after_action(&cur, a);
	}
	/* The action set in the order written, as Open vSwitch reads it (not 5.10's). */
	for (unsigned i = 0; i < in->n_write; i++) {
		const struct sl_action *a = &in->write[i];
		if (a->type == SL_ACT_SET_FIELD && !sl_set_field_prereqs_ok(&cur, &a->set_field.f))
			return (int)(in->n_apply + i);
		sl_match_after_action(&cur, a);
	}
	return -1;
}
