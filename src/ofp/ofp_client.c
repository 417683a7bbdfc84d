/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path, client side: decoders for the replies a switch sends
 * (features, multipart entries), for sluicectl and tests.
 *
 * The bytes come from a peer we do not control, so every entry decoder
 * first checks that the fixed part fits in what is left of the body, then
 * that the entry's own length field covers its fixed part and stays inside
 * the body, and only then reads it.  Offsets are size_t and every check is
 * written as "need <= left" so no sum can wrap.
 */
#include "ofp.h"

#include <string.h>

#include "ofp_priv.h"

int
sl_ofp_features_reply_decode(const void *msg, size_t len, struct sl_ofp_features *f,
			     struct sl_ofp_error *err)
{
	const struct ofp_switch_features *sf;

	sf = (const void *)ofp_msg_check(msg, len, SL_OFPT_FEATURES_REPLY, sizeof(*sf), err);
	if (sf == NULL)
		return -1;
	if (len != sizeof(*sf))
		return FAIL_BRC(err, BAD_LEN);
	f->datapath_id = sl_ofp_ntoh64(sf->datapath_id);
	f->n_buffers = sl_ofp_ntoh32(sf->n_buffers);
	f->n_tables = sf->n_tables;
	f->auxiliary_id = sf->auxiliary_id;
	f->capabilities = sl_ofp_ntoh32(sf->capabilities);
	return 0;
}

int
sl_ofp_mp_reply_decode(const void *msg, size_t len, struct sl_ofp_mp_reply *r,
		       struct sl_ofp_error *err)
{
	const struct ofp_multipart *mp;

	mp = (const void *)ofp_msg_check(msg, len, SL_OFPT_MULTIPART_REPLY, sizeof(*mp), err);
	if (mp == NULL)
		return -1;
	r->type = sl_ofp_ntoh16(mp->type);
	r->flags = sl_ofp_ntoh16(mp->flags);
	r->body_len = len - sizeof(*mp);
	r->body = r->body_len ? (const uint8_t *)(mp + 1) : NULL;
	return 0;
}

/*
 * Start an entry: at least @fixed bytes must be left at *ofs.  Returns the
 * entry's first byte or NULL with OFPBRC_BAD_LEN.
 */
static const uint8_t *
entry_start(const uint8_t *body, size_t len, const size_t *ofs, size_t fixed,
	    struct sl_ofp_error *err)
{
	if (body == NULL || *ofs > len || fixed > len - *ofs) {
		FAIL_BRC(err, BAD_LEN);
		return NULL;
	}
	return body + *ofs;
}

/*
 * Check a variable-length entry's own length field @elen: it covers the
 * fixed part, stays inside the body and (when @align8) is a multiple of 8.
 */
static int
entry_len_check(size_t len, size_t ofs, size_t elen, size_t fixed, bool align8,
		struct sl_ofp_error *err)
{
	if (elen < fixed || elen > len - ofs || (align8 && elen % 8))
		return FAIL_BRC(err, BAD_LEN);
	return 0;
}

int
sl_ofp_flow_stats_entry_decode(const uint8_t *body, size_t len, size_t *ofs,
			       struct sl_flow_spec *fs, struct sl_ofp_flow_stats *st,
			       struct sl_ofp_error *err)
{
	const struct ofp_flow_stats *o;
	const uint8_t *p;
	size_t elen, match_len, rest;

	o = (const void *)entry_start(body, len, ofs, sizeof(*o) + OFP_MATCH_EMPTY_LEN, err);
	if (o == NULL)
		return -1;
	elen = sl_ofp_ntoh16(o->length);
	if (entry_len_check(len, *ofs, elen, sizeof(*o) + OFP_MATCH_EMPTY_LEN, true, err) < 0)
		return -1;
	sl_flow_spec_init(fs);
	if (o->table_id >= SL_TABLES_MAX)
		return FAIL_BRC(err, BAD_TABLE_ID);
	fs->table_id = o->table_id;
	fs->priority = sl_ofp_ntoh16(o->priority);
	fs->idle_timeout = sl_ofp_ntoh16(o->idle_timeout);
	fs->hard_timeout = sl_ofp_ntoh16(o->hard_timeout);
	fs->flags = sl_ofp_ntoh16(o->flags);
	fs->cookie = sl_ofp_ntoh64(o->cookie);
	fs->cookie_mask = 0;
	st->duration_sec = sl_ofp_ntoh32(o->duration_sec);
	st->duration_nsec = sl_ofp_ntoh32(o->duration_nsec);
	st->packet_count = sl_ofp_ntoh64(o->packet_count);
	st->byte_count = sl_ofp_ntoh64(o->byte_count);

	/* The match may only use the entry's bytes, not the next entry's. */
	p = (const uint8_t *)(o + 1);
	if (sl_ofp_match_decode(p, elen - sizeof(*o), &fs->match, &match_len, err) < 0)
		return -1;
	if (match_len > elen - sizeof(*o))
		return FAIL_BRC(err, BAD_LEN);
	rest = elen - sizeof(*o) - match_len;
	if (sl_ofp_instructions_decode(p + match_len, rest, fs->table_id, &fs->match, &fs->insns,
				       err) < 0)
		return -1;
	*ofs += elen;
	return 0;
}

int
sl_ofp_table_stats_entry_decode(const uint8_t *body, size_t len, size_t *ofs,
				struct sl_ofp_table_stats *ts, struct sl_ofp_error *err)
{
	const struct ofp_table_stats *o;

	o = (const void *)entry_start(body, len, ofs, sizeof(*o), err);
	if (o == NULL)
		return -1;
	ts->table_id = o->table_id;
	ts->active_count = sl_ofp_ntoh32(o->active_count);
	ts->lookup_count = sl_ofp_ntoh64(o->lookup_count);
	ts->matched_count = sl_ofp_ntoh64(o->matched_count);
	*ofs += sizeof(*o);
	return 0;
}

int
sl_ofp_port_stats_entry_decode(const uint8_t *body, size_t len, size_t *ofs,
			       struct sl_ofp_port_stats *ps, struct sl_ofp_error *err)
{
	const struct ofp_port_stats *o;

	o = (const void *)entry_start(body, len, ofs, sizeof(*o), err);
	if (o == NULL)
		return -1;
	ps->port_no = sl_ofp_ntoh32(o->port_no);
	ps->rx_packets = sl_ofp_ntoh64(o->rx_packets);
	ps->tx_packets = sl_ofp_ntoh64(o->tx_packets);
	ps->rx_bytes = sl_ofp_ntoh64(o->rx_bytes);
	ps->tx_bytes = sl_ofp_ntoh64(o->tx_bytes);
	ps->rx_dropped = sl_ofp_ntoh64(o->rx_dropped);
	ps->tx_dropped = sl_ofp_ntoh64(o->tx_dropped);
	ps->rx_errors = sl_ofp_ntoh64(o->rx_errors);
	ps->tx_errors = sl_ofp_ntoh64(o->tx_errors);
	ps->rx_frame_err = sl_ofp_ntoh64(o->rx_frame_err);
	ps->rx_over_err = sl_ofp_ntoh64(o->rx_over_err);
	ps->rx_crc_err = sl_ofp_ntoh64(o->rx_crc_err);
	ps->collisions = sl_ofp_ntoh64(o->collisions);
	ps->duration_sec = sl_ofp_ntoh32(o->duration_sec);
	ps->duration_nsec = sl_ofp_ntoh32(o->duration_nsec);
	*ofs += sizeof(*o);
	return 0;
}

int
sl_ofp_port_desc_entry_decode(const uint8_t *body, size_t len, size_t *ofs,
			      struct sl_ofp_port_desc *pd, struct sl_ofp_error *err)
{
	const struct ofp_port *o;

	o = (const void *)entry_start(body, len, ofs, sizeof(*o), err);
	if (o == NULL)
		return -1;
	memset(pd, 0, sizeof(*pd));
	pd->port_no = sl_ofp_ntoh32(o->port_no);
	memcpy(pd->hw_addr, o->hw_addr, sizeof(pd->hw_addr));
	/* A peer may fill all 16 bytes: keep 15 so the copy is always terminated. */
	memcpy(pd->name, o->name, strnlen(o->name, sizeof(pd->name) - 1));
	pd->config = sl_ofp_ntoh32(o->config);
	pd->state = sl_ofp_ntoh32(o->state);
	pd->curr = sl_ofp_ntoh32(o->curr);
	pd->advertised = sl_ofp_ntoh32(o->advertised);
	pd->supported = sl_ofp_ntoh32(o->supported);
	pd->peer = sl_ofp_ntoh32(o->peer);
	pd->curr_speed = sl_ofp_ntoh32(o->curr_speed);
	pd->max_speed = sl_ofp_ntoh32(o->max_speed);
	*ofs += sizeof(*o);
	return 0;
}

int
sl_ofp_group_stats_entry_decode(const uint8_t *body, size_t len, size_t *ofs,
				struct sl_ofp_group_stats *gs, struct sl_ofp_error *err)
{
	const struct ofp_group_stats *o;
	const struct ofp_bucket_counter *bc;
	size_t elen, n;

	o = (const void *)entry_start(body, len, ofs, sizeof(*o), err);
	if (o == NULL)
		return -1;
	elen = sl_ofp_ntoh16(o->length);
	if (entry_len_check(len, *ofs, elen, sizeof(*o), false, err) < 0)
		return -1;
	if ((elen - sizeof(*o)) % sizeof(*bc))
		return FAIL_BRC(err, BAD_LEN);
	n = (elen - sizeof(*o)) / sizeof(*bc);
	if (n > SL_GROUP_BUCKETS_MAX)
		return FAIL_BRC(err, BAD_LEN);
	gs->group_id = sl_ofp_ntoh32(o->group_id);
	gs->ref_count = sl_ofp_ntoh32(o->ref_count);
	gs->packet_count = sl_ofp_ntoh64(o->packet_count);
	gs->byte_count = sl_ofp_ntoh64(o->byte_count);
	gs->duration_sec = sl_ofp_ntoh32(o->duration_sec);
	gs->duration_nsec = sl_ofp_ntoh32(o->duration_nsec);
	gs->n_buckets = (uint16_t)n;
	bc = (const void *)(o + 1);
	for (size_t i = 0; i < n; i++) {
		gs->buckets[i].packet_count = sl_ofp_ntoh64(bc[i].packet_count);
		gs->buckets[i].byte_count = sl_ofp_ntoh64(bc[i].byte_count);
	}
	*ofs += elen;
	return 0;
}

int
sl_ofp_group_desc_entry_decode(const uint8_t *body, size_t len, size_t *ofs,
			       struct sl_group_spec *gs, struct sl_ofp_error *err)
{
	const struct ofp_group_desc *o;
	size_t elen;

	o = (const void *)entry_start(body, len, ofs, sizeof(*o), err);
	if (o == NULL)
		return -1;
	elen = sl_ofp_ntoh16(o->length);
	if (entry_len_check(len, *ofs, elen, sizeof(*o), true, err) < 0)
		return -1;
	gs->n_buckets = 0;
	if (o->type > SL_GROUP_FF)
		return ofp_fail(err, SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_BAD_TYPE);
	gs->type = o->type;
	gs->group_id = sl_ofp_ntoh32(o->group_id);
	if (ofp_buckets_decode((const uint8_t *)(o + 1), elen - sizeof(*o), gs, err) < 0)
		return -1;
	*ofs += elen;
	return 0;
}

int
sl_ofp_meter_stats_entry_decode(const uint8_t *body, size_t len, size_t *ofs, uint32_t *meter_id,
				uint32_t *duration_sec, uint32_t *duration_nsec,
				struct sl_meter_stats *st, struct sl_ofp_error *err)
{
	const struct ofp_meter_stats *o;
	const struct ofp_meter_band_stats *bc;
	size_t elen, n;

	o = (const void *)entry_start(body, len, ofs, sizeof(*o), err);
	if (o == NULL)
		return -1;
	elen = sl_ofp_ntoh16(o->len);
	if (entry_len_check(len, *ofs, elen, sizeof(*o), false, err) < 0)
		return -1;
	if ((elen - sizeof(*o)) % sizeof(*bc))
		return FAIL_BRC(err, BAD_LEN);
	n = (elen - sizeof(*o)) / sizeof(*bc);
	if (n > SL_METER_BANDS_MAX)
		return FAIL_BRC(err, BAD_LEN);
	memset(st, 0, sizeof(*st));
	*meter_id = sl_ofp_ntoh32(o->meter_id);
	*duration_sec = sl_ofp_ntoh32(o->duration_sec);
	*duration_nsec = sl_ofp_ntoh32(o->duration_nsec);
	st->flow_count = sl_ofp_ntoh32(o->flow_count);
	st->packets = sl_ofp_ntoh64(o->packet_in_count);
	st->bytes = sl_ofp_ntoh64(o->byte_in_count);
	st->n_bands = (uint8_t)n;
	bc = (const void *)(o + 1);
	for (size_t i = 0; i < n; i++) {
		st->band_packets[i] = sl_ofp_ntoh64(bc[i].packet_band_count);
		st->band_bytes[i] = sl_ofp_ntoh64(bc[i].byte_band_count);
	}
	*ofs += elen;
	return 0;
}

int
sl_ofp_meter_config_entry_decode(const uint8_t *body, size_t len, size_t *ofs,
				 struct sl_meter_spec *ms, struct sl_ofp_error *err)
{
	const struct ofp_meter_config *o;
	size_t elen;

	o = (const void *)entry_start(body, len, ofs, sizeof(*o), err);
	if (o == NULL)
		return -1;
	elen = sl_ofp_ntoh16(o->length);
	if (entry_len_check(len, *ofs, elen, sizeof(*o), false, err) < 0)
		return -1;
	ms->flags = sl_ofp_ntoh16(o->flags);
	ms->meter_id = sl_ofp_ntoh32(o->meter_id);
	/* The bands may only use the entry's bytes, not the next entry's. */
	if (ofp_meter_bands_decode((const uint8_t *)(o + 1), elen - sizeof(*o), ms, err) < 0)
		return -1;
	*ofs += elen;
	return 0;
}

int
sl_ofp_meter_features_decode(const uint8_t *body, size_t len, struct sl_ofp_meter_features *mf,
			     struct sl_ofp_error *err)
{
	const struct ofp_meter_features *o = (const void *)body;

	if (body == NULL || len != sizeof(*o))
		return FAIL_BRC(err, BAD_LEN);
	mf->max_meter = sl_ofp_ntoh32(o->max_meter);
	mf->band_types = sl_ofp_ntoh32(o->band_types);
	mf->capabilities = sl_ofp_ntoh32(o->capabilities);
	mf->max_bands = o->max_bands;
	mf->max_color = o->max_color;
	return 0;
}

int
sl_ofp_table_features_entry_decode(const uint8_t *body, size_t len, size_t *ofs,
				   struct sl_ofp_table_features *tf, struct sl_ofp_error *err)
{
	const struct ofp_table_features *o;
	const uint8_t *p;
	size_t elen, pos;

	o = (const void *)entry_start(body, len, ofs, sizeof(*o), err);
	if (o == NULL)
		return -1;
	elen = sl_ofp_ntoh16(o->length);
	if (entry_len_check(len, *ofs, elen, sizeof(*o), true, err) < 0)
		return -1;

	/*
	 * Properties: each is padded to 8 (section 7.3.5.18.1); the last one
	 * may omit its padding only if the entry ends right after it.
	 */
	p = (const uint8_t *)o;
	for (pos = sizeof(*o); pos < elen;) {
		size_t plen;

		if (elen - pos < sizeof(struct ofp_table_feature_prop_header))
			return FAIL_BRC(err, BAD_LEN);
		plen = rd16(p + pos + 2);
		if (plen < sizeof(struct ofp_table_feature_prop_header) || plen > elen - pos)
			return FAIL_BRC(err, BAD_LEN);
		pos += SL_MIN(pad8(plen), elen - pos);
	}

	memset(tf, 0, sizeof(*tf));
	tf->table_id = o->table_id;
	memcpy(tf->name, o->name, strnlen(o->name, sizeof(tf->name) - 1));
	tf->metadata_match = sl_ofp_ntoh64(o->metadata_match);
	tf->metadata_write = sl_ofp_ntoh64(o->metadata_write);
	tf->config = sl_ofp_ntoh32(o->config);
	tf->max_entries = sl_ofp_ntoh32(o->max_entries);
	*ofs += elen;
	return 0;
}
