/* SPDX-License-Identifier: BSD-3-Clause */
/* Control path: OpenFlow 1.3 actions and instructions <-> struct sl_action / sl_instructions. */
#include "ofp.h"

#include <string.h>

#include "ofp_priv.h"

/*
 * Actions.
 */

/*
 * set_field prerequisites (OpenFlow 1.3.5 section 7.2.5: "the match must
 * contain the field's prerequisites"), checked like the flow syntax does:
 * the eth_type and ip_proto the field implies must be matched exactly.
 */
/* Valid output port for an action in context @ctx. */
static bool
out_port_ok(uint32_t port, enum sl_ofp_action_ctx ctx)
{
	if (port == 0 || port == SL_PORT_ANY)
		return false;
	if (port <= SL_PORT_MAX_PHYS)
		return true;
	switch (port) {
	case SL_PORT_IN_PORT:
	case SL_PORT_NORMAL:
	case SL_PORT_FLOOD:
	case SL_PORT_ALL:
	case SL_PORT_CONTROLLER:
	case SL_PORT_LOCAL:
		return true;
	case SL_PORT_TABLE:
		return ctx == SL_OFP_ACTX_PACKET_OUT;
	default:
		return false;
	}
}

/* Map an OFPET_BAD_MATCH code from the OXM decoder to its set_field action code. */
static int
set_field_error(struct sl_ofp_error *err)
{
	if (err == NULL)
		return -1;
	switch (err->code) {
	case SL_OFPBMC_BAD_LEN:
		return FAIL_BAC(err, BAD_SET_LEN);
	case SL_OFPBMC_BAD_VALUE:
		return FAIL_BAC(err, BAD_SET_ARGUMENT);
	default:
		return FAIL_BAC(err, BAD_SET_TYPE);
	}
}

static int
set_field_decode(const uint8_t *p, size_t len, const struct sl_match *match, struct sl_action *a,
		 struct sl_ofp_error *err)
{
	struct sl_match_field mf;
	bool masked;
	size_t tlv;

	if (ofp_oxm_decode(p + 4, len - 4, false, &mf, &masked, &tlv, err) < 0)
		return set_field_error(err);
	/* The action is the TLV padded to 8 with zeros, no more (section 7.2.5). */
	if (pad8(4 + tlv) != len)
		return FAIL_BAC(err, BAD_SET_LEN);
	if (!all_zero(p + 4 + tlv, len - 4 - tlv) || masked)
		return FAIL_BAC(err, BAD_SET_ARGUMENT);
	if (mf.f.id != SL_FIELD_RAW && !sl_field_writable(mf.f.id))
		return FAIL_BAC(err, BAD_SET_TYPE);
	if (match != NULL && !sl_set_field_prereqs_ok(match, &mf.f))
		return FAIL_BAC(err, MATCH_INCONSISTENT);
	a->type = SL_ACT_SET_FIELD;
	a->set_field.f = mf.f;
	memcpy(a->set_field.value, mf.value, sizeof(a->set_field.value));
	/*
	 * OpenFlow 1.3 set_field vlan_vid values carry OFPVID_PRESENT; accept
	 * a bare VID too (some controllers send one) and store 0x1000|VID,
	 * the form the flow syntax and the pipeline use.
	 */
	if (mf.f.id == SL_FIELD_VLAN_VID)
		a->set_field.value[0] |= 0x10;
	return 0;
}

/* Decode one action of @len bytes (length already checked: >= 8, multiple of 8). */
static int
action_decode(const uint8_t *p, size_t len, enum sl_ofp_action_ctx ctx,
	      const struct sl_match *match, struct sl_action *a, struct sl_ofp_error *err)
{
	uint16_t type = rd16(p);

	memset(a, 0, sizeof(*a));
	switch (type) {
	case SL_OFPAT_OUTPUT: {
		const struct ofp_action_output *o = (const void *)p;
		if (len != sizeof(*o))
			return FAIL_BAC(err, BAD_LEN);
		a->type = SL_ACT_OUTPUT;
		a->output.port = sl_ofp_ntoh32(o->port);
		a->output.max_len = sl_ofp_ntoh16(o->max_len);
		if (!out_port_ok(a->output.port, ctx))
			return FAIL_BAC(err, BAD_OUT_PORT);
		return 0;
	}
	case SL_OFPAT_COPY_TTL_OUT:
	case SL_OFPAT_COPY_TTL_IN:
	case SL_OFPAT_POP_VLAN:
	case SL_OFPAT_DEC_NW_TTL:
	case SL_OFPAT_DEC_MPLS_TTL:
	case SL_OFPAT_POP_PBB:
		if (len != 8)
			return FAIL_BAC(err, BAD_LEN);
		a->type = type == SL_OFPAT_COPY_TTL_OUT  ? SL_ACT_COPY_TTL_OUT
			  : type == SL_OFPAT_COPY_TTL_IN ? SL_ACT_COPY_TTL_IN
			  : type == SL_OFPAT_POP_VLAN    ? SL_ACT_POP_VLAN
			  : type == SL_OFPAT_DEC_NW_TTL  ? SL_ACT_DEC_NW_TTL
			  : type == SL_OFPAT_POP_PBB     ? SL_ACT_POP_PBB
							 : SL_ACT_DEC_MPLS_TTL;
		return 0;
	case SL_OFPAT_PUSH_PBB:
		if (len != 8)
			return FAIL_BAC(err, BAD_LEN);
		a->type = SL_ACT_PUSH_PBB;
		a->ethertype = rd16(p + 4);
		if (a->ethertype != 0x88e7)
			return FAIL_BAC(err, BAD_ARGUMENT);
		return 0;
	case SL_OFPAT_SET_MPLS_TTL:
		if (len != 8)
			return FAIL_BAC(err, BAD_LEN);
		a->type = SL_ACT_SET_MPLS_TTL;
		a->ttl = p[4];
		return 0;
	case SL_OFPAT_PUSH_MPLS:
	case SL_OFPAT_POP_MPLS:
		if (len != 8)
			return FAIL_BAC(err, BAD_LEN);
		a->type = type == SL_OFPAT_PUSH_MPLS ? SL_ACT_PUSH_MPLS : SL_ACT_POP_MPLS;
		a->ethertype = rd16(p + 4);
		if (type == SL_OFPAT_PUSH_MPLS && a->ethertype != 0x8847 && a->ethertype != 0x8848)
			return FAIL_BAC(err, BAD_ARGUMENT);
		return 0;
	case SL_OFPAT_PUSH_VLAN: {
		const struct ofp_action_push *pu = (const void *)p;
		if (len != sizeof(*pu))
			return FAIL_BAC(err, BAD_LEN);
		a->type = SL_ACT_PUSH_VLAN;
		a->ethertype = sl_ofp_ntoh16(pu->ethertype);
		if (a->ethertype != 0x8100 && a->ethertype != 0x88a8)
			return FAIL_BAC(err, BAD_ARGUMENT);
		return 0;
	}
	case SL_OFPAT_SET_QUEUE:
	case SL_OFPAT_GROUP: {
		const struct ofp_action_u32 *u = (const void *)p;
		if (len != sizeof(*u))
			return FAIL_BAC(err, BAD_LEN);
		if (type == SL_OFPAT_SET_QUEUE) {
			a->type = SL_ACT_SET_QUEUE;
			a->queue_id = sl_ofp_ntoh32(u->arg);
			return 0;
		}
		a->type = SL_ACT_GROUP;
		a->group_id = sl_ofp_ntoh32(u->arg);
		if (a->group_id > SL_GROUP_ID_MAX)
			return FAIL_BAC(err, BAD_OUT_GROUP);
		return 0;
	}
	case SL_OFPAT_SET_NW_TTL: {
		const struct ofp_action_nw_ttl *t = (const void *)p;
		if (len != sizeof(*t))
			return FAIL_BAC(err, BAD_LEN);
		a->type = SL_ACT_SET_NW_TTL;
		a->ttl = t->nw_ttl;
		return 0;
	}
	case SL_OFPAT_SET_FIELD:
		return set_field_decode(p, len, match, a, err);
	case SL_OFPAT_EXPERIMENTER: {
		const struct sl_ofpx_action_set_state *x = (const void *)p;
		/* len >= 8: the experimenter id is there; the subtype needs 10 bytes. */
		if (sl_ofp_ntoh32(x->experimenter) != SL_OFP_EXPERIMENTER_ID)
			return FAIL_BAC(err, BAD_EXPERIMENTER);
		if (len < 16)
			return FAIL_BAC(err, BAD_LEN);
		if (sl_ofp_ntoh16(x->subtype) != SL_OFPXAT_SET_STATE)
			return FAIL_BAC(err, BAD_EXP_TYPE);
		if (len != sizeof(*x))
			return FAIL_BAC(err, BAD_LEN);
		if (x->pad || !all_zero(x->pad2, sizeof(x->pad2)))
			return FAIL_BAC(err, BAD_ARGUMENT);
		if (x->table_id != SL_STATE_TABLE_AUTO && x->table_id >= SL_TABLES_MAX)
			return FAIL_BAC(err, BAD_ARGUMENT);
		a->type = SL_ACT_SET_STATE;
		a->set_state.table_id = x->table_id;
		a->set_state.set.state = sl_ofp_ntoh32(x->state);
		a->set_state.set.rollback = sl_ofp_ntoh32(x->rollback);
		a->set_state.set.idle_ms = sl_ofp_ntoh32(x->idle_ms);
		a->set_state.set.hard_ms = sl_ofp_ntoh32(x->hard_ms);
		return 0;
	}
	default:
		/* Unknown, and actions of other OpenFlow versions. */
		return FAIL_BAC(err, BAD_TYPE);
	}
}

static int
actions_decode(const uint8_t *p, size_t len, enum sl_ofp_action_ctx ctx,
	       const struct sl_match *match, bool merge, struct sl_action *acts, uint8_t *n_acts,
	       struct sl_ofp_error *err)
{
	size_t ofs = 0;
	unsigned n = 0;

	while (ofs < len) {
		struct sl_action a;
		size_t alen;
		unsigned slot = n;

		if (len - ofs < 8)
			return FAIL_BAC(err, BAD_LEN);
		alen = rd16(p + ofs + 2);
		if (alen < 8 || alen % 8 || alen > len - ofs)
			return FAIL_BAC(err, BAD_LEN);
		if (action_decode(p + ofs, alen, ctx, match, &a, err) < 0)
			return -1;
		ofs += alen;
		if (merge)
			for (unsigned i = 0; i < n; i++)
				if (sl_action_same_set_slot(&acts[i], &a))
					slot = i;
		if (slot == n) {
			if (n == SL_ACTIONS_MAX)
				return FAIL_BAC(err, TOO_MANY);
			n++;
		}
		acts[slot] = a;
	}
	*n_acts = (uint8_t)n;
	return 0;
}

int
sl_ofp_actions_decode(const uint8_t *p, size_t len, enum sl_ofp_action_ctx ctx,
		      const struct sl_match *match, struct sl_action *acts, uint8_t *n_acts,
		      struct sl_ofp_error *err)
{
	return actions_decode(p, len, ctx, match, false, acts, n_acts, err);
}

static int
action_encode(struct sl_ofp_buf *b, const struct sl_action *a)
{
	uint8_t *p;

	switch (a->type) {
	case SL_ACT_OUTPUT: {
		struct ofp_action_output *o = (void *)ofp_buf_put(b, sizeof(*o));
		if (o == NULL)
			return -ENOMEM;
		o->type = sl_ofp_hton16(SL_OFPAT_OUTPUT);
		o->len = sl_ofp_hton16(sizeof(*o));
		o->port = sl_ofp_hton32(a->output.port);
		o->max_len = sl_ofp_hton16(a->output.max_len);
		return 0;
	}
	case SL_ACT_SET_FIELD: {
		size_t start = b->len, tlv;
		if (ofp_buf_put(b, 4) == NULL)
			return -ENOMEM;
		if (ofp_oxm_encode(b, &a->set_field.f, a->set_field.value, NULL, false, false) < 0)
			goto undo;
		tlv = b->len - start;
		if (pad8(tlv) != tlv && ofp_buf_put(b, pad8(tlv) - tlv) == NULL)
			goto undo;
		wr16(b->data + start, SL_OFPAT_SET_FIELD);
		wr16(b->data + start + 2, (uint16_t)(b->len - start));
		return 0;
undo:
		b->len = start;
		return -ENOMEM;
	}
	case SL_ACT_SET_STATE: {
		struct sl_ofpx_action_set_state *x = (void *)ofp_buf_put(b, sizeof(*x));
		if (x == NULL)
			return -ENOMEM;
		memset(x, 0, sizeof(*x));
		x->type = sl_ofp_hton16(SL_OFPAT_EXPERIMENTER);
		x->len = sl_ofp_hton16(sizeof(*x));
		x->experimenter = sl_ofp_hton32(SL_OFP_EXPERIMENTER_ID);
		x->subtype = sl_ofp_hton16(SL_OFPXAT_SET_STATE);
		x->table_id = a->set_state.table_id;
		x->state = sl_ofp_hton32(a->set_state.set.state);
		x->rollback = sl_ofp_hton32(a->set_state.set.rollback);
		x->idle_ms = sl_ofp_hton32(a->set_state.set.idle_ms);
		x->hard_ms = sl_ofp_hton32(a->set_state.set.hard_ms);
		return 0;
	}
	default:
		break;
	}
	/* Every other action is 8 bytes: type, len, one argument word. */
	p = ofp_buf_put(b, 8);
	if (p == NULL)
		return -ENOMEM;
	wr16(p + 2, 8);
	switch (a->type) {
	case SL_ACT_PUSH_VLAN:
		wr16(p, SL_OFPAT_PUSH_VLAN);
		wr16(p + 4, a->ethertype);
		break;
	case SL_ACT_POP_VLAN:
		wr16(p, SL_OFPAT_POP_VLAN);
		break;
	case SL_ACT_SET_NW_TTL:
		wr16(p, SL_OFPAT_SET_NW_TTL);
		p[4] = a->ttl;
		break;
	case SL_ACT_DEC_NW_TTL:
		wr16(p, SL_OFPAT_DEC_NW_TTL);
		break;
	case SL_ACT_PUSH_MPLS:
	case SL_ACT_POP_MPLS:
		wr16(p, a->type == SL_ACT_PUSH_MPLS ? SL_OFPAT_PUSH_MPLS : SL_OFPAT_POP_MPLS);
		wr16(p + 4, a->ethertype);
		break;
	case SL_ACT_SET_MPLS_TTL:
		wr16(p, SL_OFPAT_SET_MPLS_TTL);
		p[4] = a->ttl;
		break;
	case SL_ACT_DEC_MPLS_TTL:
		wr16(p, SL_OFPAT_DEC_MPLS_TTL);
		break;
	case SL_ACT_PUSH_PBB:
		wr16(p, SL_OFPAT_PUSH_PBB);
		wr16(p + 4, a->ethertype);
		break;
	case SL_ACT_POP_PBB:
		wr16(p, SL_OFPAT_POP_PBB);
		break;
	case SL_ACT_COPY_TTL_OUT:
		wr16(p, SL_OFPAT_COPY_TTL_OUT);
		break;
	case SL_ACT_COPY_TTL_IN:
		wr16(p, SL_OFPAT_COPY_TTL_IN);
		break;
	case SL_ACT_GROUP:
		wr16(p, SL_OFPAT_GROUP);
		wr32(p + 4, a->group_id);
		break;
	case SL_ACT_SET_QUEUE:
		wr16(p, SL_OFPAT_SET_QUEUE);
		wr32(p + 4, a->queue_id);
		break;
	default:
		b->len -= 8;
		return -EINVAL;
	}
	return 0;
}

int
sl_ofp_actions_encode(struct sl_ofp_buf *b, const struct sl_action *acts, unsigned n)
{
	size_t start = b->len;
	int rc;

	for (unsigned i = 0; i < n; i++) {
		if ((rc = action_encode(b, &acts[i])) < 0) {
			b->len = start;
			return rc;
		}
	}
	return 0;
}

/*
 * Instructions.
 */

int
sl_ofp_instructions_decode(const uint8_t *p, size_t len, uint8_t table_id,
			   const struct sl_match *match, struct sl_instructions *in,
			   struct sl_ofp_error *err)
{
	unsigned seen = 0; /* bit per instruction type */
	size_t ofs = 0;

	memset(in, 0, offsetof(struct sl_instructions, apply));
	in->goto_table = -1;
	while (ofs < len) {
		const uint8_t *ip = p + ofs;
		uint16_t type;
		size_t ilen;

		if (len - ofs < 8)
			return FAIL_BIC(err, BAD_LEN);
		type = rd16(ip);
		ilen = rd16(ip + 2);
		if (ilen < 8 || ilen % 8 || ilen > len - ofs)
			return FAIL_BIC(err, BAD_LEN);
		ofs += ilen;
		if (type >= SL_OFPIT_GOTO_TABLE && type <= SL_OFPIT_METER) {
			if (seen & (1u << type)) {
				/* OVS's answer to OpenFlow 1.3 peers (EXT-260). */
				if (err) {
					err->type = SL_OFPET_EXPERIMENTER;
					err->code = SL_ONFBIC_DUP_INSTRUCTION;
					err->experimenter = SL_ONF_EXPERIMENTER_ID;
				}
				return -1;
			}
			seen |= 1u << type;
		}
		switch (type) {
		case SL_OFPIT_GOTO_TABLE:
			if (ilen != sizeof(struct ofp_instruction_goto_table))
				return FAIL_BIC(err, BAD_LEN);
			in->goto_table = ip[4];
			if (in->goto_table >= SL_TABLES_MAX ||
			    (table_id != SL_OFPTT_ALL && in->goto_table <= table_id))
				return FAIL_BIC(err, BAD_TABLE_ID);
			break;
		case SL_OFPIT_WRITE_METADATA: {
			const struct ofp_instruction_write_metadata *wm = (const void *)ip;
			if (ilen != sizeof(*wm))
				return FAIL_BIC(err, BAD_LEN);
			in->has_metadata = true;
			in->metadata = sl_ofp_ntoh64(wm->metadata);
			in->metadata_mask = sl_ofp_ntoh64(wm->metadata_mask);
			break;
		}
		/* set_field prerequisites: checked once all actions are known (below). */
		case SL_OFPIT_WRITE_ACTIONS:
			in->has_write = true;
			if (actions_decode(ip + 8, ilen - 8, SL_OFP_ACTX_FLOW, NULL, true,
					   in->write, &in->n_write, err) < 0)
				return -1;
			break;
		case SL_OFPIT_APPLY_ACTIONS:
			in->has_apply = true;
			if (actions_decode(ip + 8, ilen - 8, SL_OFP_ACTX_FLOW, NULL, false,
					   in->apply, &in->n_apply, err) < 0)
				return -1;
			break;
		case SL_OFPIT_CLEAR_ACTIONS:
			if (ilen != sizeof(struct ofp_instruction_actions))
				return FAIL_BIC(err, BAD_LEN);
			in->clear = true;
			break;
		case SL_OFPIT_METER:
			if (ilen != sizeof(struct ofp_instruction_meter))
				return FAIL_BIC(err, BAD_LEN);
			/*
			 * Meter 0 does not exist in any switch (ids start at 1);
			 * every other id is the pipeline's to look up, the
			 * virtual ones included, so UNKNOWN_METER comes from there.
			 */
			in->meter_id = rd32(ip + 4);
			if (in->meter_id == 0)
				return ofp_fail(err, SL_OFPET_METER_MOD_FAILED,
						SL_OFPMMFC_INVALID_METER);
			break;
		case SL_OFPIT_EXPERIMENTER:
			return FAIL_BIC(err, BAD_EXPERIMENTER);
		default:
			return FAIL_BIC(err, UNKNOWN_INST);
		}
	}
	/* Each set_field against the match as the actions before it leave the packet (OVS). */
	if (match != NULL && sl_actions_prereq_check(match, in) >= 0)
		return FAIL_BAC(err, MATCH_INCONSISTENT);
	return 0;
}

/* Append an apply/write/clear instruction holding @n actions. */
static int
insn_actions_encode(struct sl_ofp_buf *b, uint16_t type, const struct sl_action *acts, unsigned n)
{
	size_t start = b->len;
	int rc;

	if (ofp_buf_put(b, sizeof(struct ofp_instruction_actions)) == NULL)
		return -ENOMEM;
	if ((rc = sl_ofp_actions_encode(b, acts, n)) < 0) {
		b->len = start;
		return rc;
	}
	wr16(b->data + start, type);
	wr16(b->data + start + 2, (uint16_t)(b->len - start));
	return 0;
}

int
sl_ofp_instructions_encode(struct sl_ofp_buf *b, const struct sl_instructions *in)
{
	size_t start = b->len;
	int rc = -ENOMEM;

	/* The meter comes first: it runs before the other instructions (section 5.7). */
	if (in->meter_id) {
		struct ofp_instruction_meter *im = (void *)ofp_buf_put(b, sizeof(*im));
		if (im == NULL)
			goto undo;
		im->type = sl_ofp_hton16(SL_OFPIT_METER);
		im->len = sl_ofp_hton16(sizeof(*im));
		im->meter_id = sl_ofp_hton32(in->meter_id);
	}
	if ((in->has_apply || in->n_apply) &&
	    (rc = insn_actions_encode(b, SL_OFPIT_APPLY_ACTIONS, in->apply, in->n_apply)) < 0)
		goto undo;
	if (in->clear && (rc = insn_actions_encode(b, SL_OFPIT_CLEAR_ACTIONS, NULL, 0)) < 0)
		goto undo;
	if ((in->has_write || in->n_write) &&
	    (rc = insn_actions_encode(b, SL_OFPIT_WRITE_ACTIONS, in->write, in->n_write)) < 0)
		goto undo;
	rc = -ENOMEM;
	if (in->has_metadata) {
		struct ofp_instruction_write_metadata *wm = (void *)ofp_buf_put(b, sizeof(*wm));
		if (wm == NULL)
			goto undo;
		wm->type = sl_ofp_hton16(SL_OFPIT_WRITE_METADATA);
		wm->len = sl_ofp_hton16(sizeof(*wm));
		wm->metadata = sl_ofp_hton64(in->metadata);
		wm->metadata_mask = sl_ofp_hton64(in->metadata_mask);
	}
	if (in->goto_table >= 0) {
		struct ofp_instruction_goto_table *gt = (void *)ofp_buf_put(b, sizeof(*gt));
		if (gt == NULL)
			goto undo;
		gt->type = sl_ofp_hton16(SL_OFPIT_GOTO_TABLE);
		gt->len = sl_ofp_hton16(sizeof(*gt));
		gt->table_id = (uint8_t)in->goto_table;
	}
	return 0;

undo:
	b->len = start;
	return rc;
}
