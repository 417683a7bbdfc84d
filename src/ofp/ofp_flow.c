/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path: the messages that carry flows, packets, groups and meters
 * (flow_mod, packet_out, group_mod, meter_mod, packet_in, flow_removed,
 * port_status).
 */
#include "ofp.h"

#include <string.h>

#include "ofp_priv.h"

/*
 * flow_mod.
 */

int
sl_ofp_flow_mod_decode(const void *msg, size_t len, struct sl_ofp_flow_mod *fm,
		       struct sl_ofp_error *err)
{
	const size_t fixed = sizeof(struct ofp_flow_mod);
	const struct ofp_flow_mod *m;
	struct sl_flow_spec *fs = &fm->spec;
	size_t match_len;
	bool is_delete;

	m = (const void *)ofp_msg_check(msg, len, SL_OFPT_FLOW_MOD, fixed + OFP_MATCH_EMPTY_LEN,
					err);
	if (m == NULL)
		return -1;
	fm->command = m->command;
	fm->buffer_id = sl_ofp_ntoh32(m->buffer_id);
	fm->out_port = sl_ofp_ntoh32(m->out_port);
	fm->out_group = sl_ofp_ntoh32(m->out_group);
	sl_flow_spec_init(fs);
	fs->cookie = sl_ofp_ntoh64(m->cookie);
	fs->cookie_mask = sl_ofp_ntoh64(m->cookie_mask);
	fs->table_id = m->table_id;
	fs->idle_timeout = sl_ofp_ntoh16(m->idle_timeout);
	fs->hard_timeout = sl_ofp_ntoh16(m->hard_timeout);
	fs->priority = sl_ofp_ntoh16(m->priority);
	fs->flags = sl_ofp_ntoh16(m->flags);

	if (fm->command > SL_OFPFC_DELETE_STRICT)
		return ofp_fail(err, SL_OFPET_FLOW_MOD_FAILED, SL_OFPFMFC_BAD_COMMAND);
	is_delete = fm->command == SL_OFPFC_DELETE || fm->command == SL_OFPFC_DELETE_STRICT;
	/* OFPTT_ALL only selects flows to delete; Sluice tables are 0..SL_TABLES_MAX-1. */
	if (fs->table_id >= SL_TABLES_MAX && !(is_delete && fs->table_id == SL_OFPTT_ALL))
		return ofp_fail(err, SL_OFPET_FLOW_MOD_FAILED, SL_OFPFMFC_BAD_TABLE_ID);
	if (fs->flags & ~(SL_FF_SEND_FLOW_REM | SL_FF_CHECK_OVERLAP | SL_FF_RESET_COUNTS |
			  SL_FF_NO_PKT_COUNTS | SL_FF_NO_BYT_COUNTS))
		return ofp_fail(err, SL_OFPET_FLOW_MOD_FAILED, SL_OFPFMFC_BAD_FLAGS);

	if (sl_ofp_match_decode((const uint8_t *)m + fixed, len - fixed, &fs->match, &match_len,
				err) < 0)
		return -1;
	/* Delete requests ignore instructions, but they must still be well formed. */
	return sl_ofp_instructions_decode(
		(const uint8_t *)m + fixed + match_len, len - fixed - match_len,
		is_delete ? SL_OFPTT_ALL : fs->table_id, &fs->match, &fs->insns, err);
}

int
sl_ofp_flow_mod_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_ofp_flow_mod *fm)
{
	const struct sl_flow_spec *fs = &fm->spec;
	struct ofp_flow_mod *m;
	size_t start = b->len;
	int rc;

	m = (void *)ofp_msg_start(b, SL_OFPT_FLOW_MOD, xid, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	m->cookie = sl_ofp_hton64(fs->cookie);
	m->cookie_mask = sl_ofp_hton64(fs->cookie_mask);
	m->table_id = fs->table_id;
	m->command = fm->command;
	m->idle_timeout = sl_ofp_hton16(fs->idle_timeout);
	m->hard_timeout = sl_ofp_hton16(fs->hard_timeout);
	m->priority = sl_ofp_hton16(fs->priority);
	m->buffer_id = sl_ofp_hton32(fm->buffer_id);
	m->out_port = sl_ofp_hton32(fm->out_port);
	m->out_group = sl_ofp_hton32(fm->out_group);
	m->flags = sl_ofp_hton16(fs->flags);
	if ((rc = sl_ofp_match_encode(b, &fs->match)) < 0 ||
	    (rc = sl_ofp_instructions_encode(b, &fs->insns)) < 0) {
		b->len = start;
		return rc;
	}
	return ofp_msg_end(b, start);
}

/*
 * packet_out.
 */

int
sl_ofp_packet_out_decode(const void *msg, size_t len, struct sl_ofp_packet_out *po,
			 struct sl_ofp_error *err)
{
	const struct ofp_packet_out *m;
	size_t actions_len;

	m = (const void *)ofp_msg_check(msg, len, SL_OFPT_PACKET_OUT, sizeof(*m), err);
	if (m == NULL)
		return -1;
	po->buffer_id = sl_ofp_ntoh32(m->buffer_id);
	po->in_port = sl_ofp_ntoh32(m->in_port);
	actions_len = sl_ofp_ntoh16(m->actions_len);
	if (actions_len % 8 || actions_len > len - sizeof(*m))
		return FAIL_BRC(err, BAD_LEN);
	/* The ingress port: a switch port, LOCAL, CONTROLLER, or ANY for "none" (as OVS). */
	if (po->in_port == 0 || (po->in_port > SL_PORT_MAX_PHYS && po->in_port != SL_PORT_LOCAL &&
				 po->in_port != SL_PORT_CONTROLLER && po->in_port != SL_PORT_ANY))
		return FAIL_BRC(err, BAD_PORT);
	if (sl_ofp_actions_decode((const uint8_t *)(m + 1), actions_len, SL_OFP_ACTX_PACKET_OUT,
				  NULL, po->actions, &po->n_actions, err) < 0)
		return -1;
	po->data_len = len - sizeof(*m) - actions_len;
	po->data = po->data_len ? (const uint8_t *)(m + 1) + actions_len : NULL;
	return 0;
}

int
sl_ofp_packet_out_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_ofp_packet_out *po)
{
	struct ofp_packet_out *m;
	size_t start = b->len;
	int rc;

	m = (void *)ofp_msg_start(b, SL_OFPT_PACKET_OUT, xid, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	m->buffer_id = sl_ofp_hton32(po->buffer_id);
	m->in_port = sl_ofp_hton32(po->in_port);
	if ((rc = sl_ofp_actions_encode(b, po->actions, po->n_actions)) < 0)
		goto undo;
	wr16(b->data + start + offsetof(struct ofp_packet_out, actions_len),
	     (uint16_t)(b->len - start - sizeof(*m)));
	rc = -EMSGSIZE;
	if (po->data_len > SL_OFP_MSG_MAX)
		goto undo;
	rc = -ENOMEM;
	if (ofp_buf_put_bytes(b, po->data, po->data_len) < 0)
		goto undo;
	return ofp_msg_end(b, start);

undo:
	b->len = start;
	return rc;
}

/*
 * group_mod.
 */

/* Decode the buckets of a group_mod or group_desc entry (bucket list of @len bytes). */
int
ofp_buckets_decode(const uint8_t *p, size_t len, struct sl_group_spec *gs, struct sl_ofp_error *err)
{
	gs->n_buckets = 0;
	for (size_t ofs = 0; ofs < len;) {
		const struct ofp_bucket *ob = (const void *)(p + ofs);
		struct sl_bucket_spec *bs;
		size_t blen;

		if (len - ofs < sizeof(*ob))
			return ofp_fail(err, SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_BAD_BUCKET);
		blen = sl_ofp_ntoh16(ob->len);
		if (blen < sizeof(*ob) || blen % 8 || blen > len - ofs)
			return ofp_fail(err, SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_BAD_BUCKET);
		if (gs->n_buckets == SL_GROUP_BUCKETS_MAX)
			return ofp_fail(err, SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_OUT_OF_BUCKETS);
		bs = &gs->buckets[gs->n_buckets++];
		bs->weight = sl_ofp_ntoh16(ob->weight);
		bs->watch_port = sl_ofp_ntoh32(ob->watch_port);
		bs->watch_group = sl_ofp_ntoh32(ob->watch_group);
		/* A watched port must be a switch port; a watched group a group id. */
		if (bs->watch_port != SL_PORT_ANY &&
		    (bs->watch_port == 0 || bs->watch_port > SL_PORT_MAX_PHYS))
			return ofp_fail(err, SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_BAD_WATCH);
		if (bs->watch_group != SL_GROUP_ID_ANY && bs->watch_group > SL_GROUP_ID_MAX)
			return ofp_fail(err, SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_BAD_WATCH);
		if (gs->type == SL_GROUP_FF && bs->watch_port == SL_PORT_ANY &&
		    bs->watch_group == SL_GROUP_ID_ANY)
			return ofp_fail(err, SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_BAD_WATCH);
		if (sl_ofp_actions_decode(p + ofs + sizeof(*ob), blen - sizeof(*ob),
					  SL_OFP_ACTX_FLOW, NULL, bs->actions, &bs->n_actions,
					  err) < 0)
			return -1;
		ofs += blen;
	}
	return 0;
}

int
sl_ofp_group_mod_decode(const void *msg, size_t len, struct sl_ofp_group_mod *gm,
			struct sl_ofp_error *err)
{
	const struct ofp_group_mod *m;
	struct sl_group_spec *gs = &gm->spec;

	m = (const void *)ofp_msg_check(msg, len, SL_OFPT_GROUP_MOD, sizeof(*m), err);
	if (m == NULL)
		return -1;
	gm->command = sl_ofp_ntoh16(m->command);
	gs->type = m->type;
	gs->group_id = sl_ofp_ntoh32(m->group_id);
	gs->n_buckets = 0;
	if (gm->command > SL_OFPGC_DELETE)
		return ofp_fail(err, SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_BAD_COMMAND);
	if (gs->type > SL_GROUP_FF)
		return ofp_fail(err, SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_BAD_TYPE);
	if (gs->group_id > SL_GROUP_ID_MAX &&
	    !(gm->command == SL_OFPGC_DELETE && gs->group_id == SL_GROUP_ID_ALL))
		return ofp_fail(err, SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_INVALID_GROUP);
	if (ofp_buckets_decode((const uint8_t *)(m + 1), len - sizeof(*m), gs, err) < 0)
		return -1;
	/* An indirect group is one bucket (section 5.6.1). */
	if (gm->command != SL_OFPGC_DELETE && gs->type == SL_GROUP_INDIRECT && gs->n_buckets != 1)
		return ofp_fail(err, SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_INVALID_GROUP);
	return 0;
}

/* Append the buckets of @gs. */
int
ofp_buckets_encode(struct sl_ofp_buf *b, const struct sl_group_spec *gs)
{
	size_t start = b->len;
	int rc;

	for (unsigned i = 0; i < gs->n_buckets && i < SL_GROUP_BUCKETS_MAX; i++) {
		const struct sl_bucket_spec *bs = &gs->buckets[i];
		size_t bstart = b->len;
		struct ofp_bucket *ob = (void *)ofp_buf_put(b, sizeof(*ob));

		if (ob == NULL) {
			rc = -ENOMEM;
			goto undo;
		}
		ob->weight = sl_ofp_hton16(bs->weight);
		ob->watch_port = sl_ofp_hton32(bs->watch_port);
		ob->watch_group = sl_ofp_hton32(bs->watch_group);
		if ((rc = sl_ofp_actions_encode(b, bs->actions, bs->n_actions)) < 0)
			goto undo;
		wr16(b->data + bstart, (uint16_t)(b->len - bstart));
	}
	return 0;

undo:
	b->len = start;
	return rc;
}

int
sl_ofp_group_mod_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_ofp_group_mod *gm)
{
	struct ofp_group_mod *m;
	size_t start = b->len;
	int rc;

	m = (void *)ofp_msg_start(b, SL_OFPT_GROUP_MOD, xid, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	m->command = sl_ofp_hton16(gm->command);
	m->type = gm->spec.type;
	m->group_id = sl_ofp_hton32(gm->spec.group_id);
	if ((rc = ofp_buckets_encode(b, &gm->spec)) < 0) {
		b->len = start;
		return rc;
	}
	return ofp_msg_end(b, start);
}

/*
 * meter_mod.
 */

#define MMFC_FAIL(err, c) ofp_fail(err, SL_OFPET_METER_MOD_FAILED, SL_OFPMMFC_##c)

/* Decode the bands of a meter_mod or meter_config entry (band list of @len bytes). */
int
ofp_meter_bands_decode(const uint8_t *p, size_t len, struct sl_meter_spec *ms,
		       struct sl_ofp_error *err)
{
	ms->n_bands = 0;
	for (size_t ofs = 0; ofs < len; ofs += sizeof(struct ofp_meter_band)) {
		const struct ofp_meter_band *ob = (const void *)(p + ofs);
		struct sl_meter_band_spec *bs;
		uint16_t type;

		/* Every band OpenFlow 1.3 defines is 16 bytes: anything else cannot be framed. */
		if (len - ofs < sizeof(*ob) || sl_ofp_ntoh16(ob->len) != sizeof(*ob))
			return FAIL_BRC(err, BAD_LEN);
		if (ms->n_bands == SL_METER_BANDS_MAX)
			return MMFC_FAIL(err, OUT_OF_BANDS);
		type = sl_ofp_ntoh16(ob->type);
		if (type != SL_BAND_DROP && type != SL_BAND_DSCP_REMARK)
			return MMFC_FAIL(err, BAD_BAND);
		bs = &ms->bands[ms->n_bands++];
		bs->type = (uint8_t)type;
		bs->rate = sl_ofp_ntoh32(ob->rate);
		bs->burst = sl_ofp_ntoh32(ob->burst_size);
		bs->prec_level = type == SL_BAND_DSCP_REMARK ? ob->prec_level : 0;
		if (bs->rate == 0)
			return MMFC_FAIL(err, BAD_RATE);
		/*
		 * prec_level is how many drop precedences to add to an AF code
		 * point; RFC 2597 defines three (AFx1..AFx3), so only 1..3 can
		 * mean something.
		 */
		if (type == SL_BAND_DSCP_REMARK && (bs->prec_level == 0 || bs->prec_level > 3))
			return MMFC_FAIL(err, BAD_BAND_VALUE);
	}
	return 0;
}

int
sl_ofp_meter_mod_decode(const void *msg, size_t len, struct sl_ofp_meter_mod *mm,
			struct sl_ofp_error *err)
{
	const uint16_t known = SL_METER_KBPS | SL_METER_PKTPS | SL_METER_BURST | SL_METER_STATS;
	const struct ofp_meter_mod *m;
	struct sl_meter_spec *ms = &mm->spec;
	uint16_t unit;

	m = (const void *)ofp_msg_check(msg, len, SL_OFPT_METER_MOD, sizeof(*m), err);
	if (m == NULL)
		return -1;
	mm->command = sl_ofp_ntoh16(m->command);
	ms->flags = sl_ofp_ntoh16(m->flags);
	ms->meter_id = sl_ofp_ntoh32(m->meter_id);
	ms->n_bands = 0;
	if (mm->command > SL_OFPMC_DELETE)
		return MMFC_FAIL(err, BAD_COMMAND);
	/* Virtual meters (SLOWPATH, CONTROLLER) are above OFPM_MAX too: not supported. */
	if (ms->meter_id == 0 ||
	    (ms->meter_id > SL_METER_ID_MAX &&
	     !(mm->command == SL_OFPMC_DELETE && ms->meter_id == SL_METER_ID_ALL)))
		return MMFC_FAIL(err, INVALID_METER);
	/* Delete names a meter and nothing more: flags and bands are ignored (as OVS). */
	if (mm->command == SL_OFPMC_DELETE)
		return 0;
	unit = ms->flags & (SL_METER_KBPS | SL_METER_PKTPS);
	if ((ms->flags & ~known) || (unit != SL_METER_KBPS && unit != SL_METER_PKTPS))
		return MMFC_FAIL(err, BAD_FLAGS);
	return ofp_meter_bands_decode((const uint8_t *)(m + 1), len - sizeof(*m), ms, err);
}

/* Append the bands of @ms. */
int
ofp_meter_bands_encode(struct sl_ofp_buf *b, const struct sl_meter_spec *ms)
{
	unsigned n = SL_MIN(ms->n_bands, (unsigned)SL_METER_BANDS_MAX);
	struct ofp_meter_band *ob;

	if (n == 0)
		return 0;
	ob = (void *)ofp_buf_put(b, n * sizeof(*ob));
	if (ob == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		const struct sl_meter_band_spec *bs = &ms->bands[i];

		ob[i].type = sl_ofp_hton16(bs->type);
		ob[i].len = sl_ofp_hton16(sizeof(*ob));
		ob[i].rate = sl_ofp_hton32(bs->rate);
		ob[i].burst_size = sl_ofp_hton32(bs->burst);
		if (bs->type == SL_BAND_DSCP_REMARK)
			ob[i].prec_level = bs->prec_level;
	}
	return 0;
}

int
sl_ofp_meter_mod_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_ofp_meter_mod *mm)
{
	struct ofp_meter_mod *m;
	size_t start = b->len;

	m = (void *)ofp_msg_start(b, SL_OFPT_METER_MOD, xid, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	m->command = sl_ofp_hton16(mm->command);
	m->flags = sl_ofp_hton16(mm->spec.flags);
	m->meter_id = sl_ofp_hton32(mm->spec.meter_id);
	if (ofp_meter_bands_encode(b, &mm->spec) < 0) {
		b->len = start;
		return -ENOMEM;
	}
	return ofp_msg_end(b, start);
}

/*
 * Asynchronous messages.
 */

int
sl_ofp_packet_in_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_ofp_packet_in *pi)
{
	struct sl_field f_port = {.id = SL_FIELD_IN_PORT}, f_md = {.id = SL_FIELD_METADATA};
	struct sl_field f_tun = {.id = SL_FIELD_TUNNEL_ID};
	uint8_t val[8], ones[8];
	struct ofp_packet_in *m;
	struct sl_match match;
	size_t start = b->len, n;
	int rc;

	/* OpenFlow 1.3 puts the pipeline fields in a match: in_port, metadata, tunnel_id (7.4.1). */
	match.n_fields = 0;
	memset(ones, 0xff, sizeof(ones));
	wr32(val, pi->in_port);
	sl_match_set(&match, &f_port, val, ones);
	if (pi->metadata) {
		wr32(val, (uint32_t)(pi->metadata >> 32));
		wr32(val + 4, (uint32_t)pi->metadata);
		sl_match_set(&match, &f_md, val, ones);
	}
	if (pi->tunnel_id) {
		wr32(val, (uint32_t)(pi->tunnel_id >> 32));
		wr32(val + 4, (uint32_t)pi->tunnel_id);
		sl_match_set(&match, &f_tun, val, ones);
	}

	m = (void *)ofp_msg_start(b, SL_OFPT_PACKET_IN, xid, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	m->buffer_id = sl_ofp_hton32(pi->buffer_id);
	m->total_len = sl_ofp_hton16((uint16_t)SL_MIN(pi->data_len, (size_t)UINT16_MAX));
	m->reason = pi->reason;
	m->table_id = pi->table_id;
	m->cookie = sl_ofp_hton64(pi->cookie);
	rc = -ENOMEM;
	if (sl_ofp_match_encode(b, &match) < 0 || ofp_buf_put(b, 2) == NULL)
		goto undo;
	n = pi->max_len == SL_OFPCML_NO_BUFFER ? pi->data_len : SL_MIN(pi->data_len, pi->max_len);
	n = SL_MIN(n, SL_OFP_MSG_MAX - (b->len - start));
	if (ofp_buf_put_bytes(b, pi->data, n) < 0)
		goto undo;
	return ofp_msg_end(b, start);

undo:
	b->len = start;
	return rc;
}

int
sl_ofp_flow_removed_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_flow_spec *fs,
			   uint8_t reason, const struct sl_ofp_flow_stats *st)
{
	struct ofp_flow_removed *m;
	size_t start = b->len;

	m = (void *)ofp_msg_start(b, SL_OFPT_FLOW_REMOVED, xid, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	m->cookie = sl_ofp_hton64(fs->cookie);
	m->priority = sl_ofp_hton16(fs->priority);
	m->reason = reason;
	m->table_id = fs->table_id;
	m->duration_sec = sl_ofp_hton32(st->duration_sec);
	m->duration_nsec = sl_ofp_hton32(st->duration_nsec);
	m->idle_timeout = sl_ofp_hton16(fs->idle_timeout);
	m->hard_timeout = sl_ofp_hton16(fs->hard_timeout);
	m->packet_count = sl_ofp_hton64(st->packet_count);
	m->byte_count = sl_ofp_hton64(st->byte_count);
	if (sl_ofp_match_encode(b, &fs->match) < 0) {
		b->len = start;
		return -ENOMEM;
	}
	return ofp_msg_end(b, start);
}

void
ofp_port_fill(struct ofp_port *op, const struct sl_ofp_port_desc *pd)
{
	memset(op, 0, sizeof(*op));
	op->port_no = sl_ofp_hton32(pd->port_no);
	memcpy(op->hw_addr, pd->hw_addr, sizeof(op->hw_addr));
	/* strnlen keeps the name NUL-terminated on the wire even when pd->name is full. */
	memcpy(op->name, pd->name, strnlen(pd->name, sizeof(op->name) - 1));
	op->config = sl_ofp_hton32(pd->config);
	op->state = sl_ofp_hton32(pd->state);
	op->curr = sl_ofp_hton32(pd->curr);
	op->advertised = sl_ofp_hton32(pd->advertised);
	op->supported = sl_ofp_hton32(pd->supported);
	op->peer = sl_ofp_hton32(pd->peer);
	op->curr_speed = sl_ofp_hton32(pd->curr_speed);
	op->max_speed = sl_ofp_hton32(pd->max_speed);
}

int
sl_ofp_port_status_encode(struct sl_ofp_buf *b, uint32_t xid, uint8_t reason,
			  const struct sl_ofp_port_desc *pd)
{
	struct ofp_port_status *m;

	m = (void *)ofp_msg_start(b, SL_OFPT_PORT_STATUS, xid, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	wr16((uint8_t *)m + 2, sizeof(*m));
	m->reason = reason;
	ofp_port_fill(&m->desc, pd);
	return 0;
}
