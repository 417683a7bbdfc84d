/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path: the small messages (hello, error, echo, config, role,
 * async, port/table mods, queue config) and Sluice's experimenter messages.
 */
#include "ofp.h"

#include <string.h>

#include "ofp_priv.h"

/* Check a fixed-size message: header, type and exact length. */
static const uint8_t *
fixed_msg(const void *msg, size_t len, uint8_t type, size_t size, struct sl_ofp_error *err)
{
	const uint8_t *p = ofp_msg_check(msg, len, type, size, err);

	if (p != NULL && len != size) {
		FAIL_BRC(err, BAD_LEN);
		return NULL;
	}
	return p;
}

/* Append a message made of a fixed part only; returns its start or NULL on ENOMEM. */
static uint8_t *
fixed_start(struct sl_ofp_buf *b, uint8_t type, uint32_t xid, size_t size)
{
	uint8_t *p = ofp_msg_start(b, type, xid, size);

	if (p != NULL)
		wr16(p + 2, (uint16_t)size);
	return p;
}

/*
 * Hello.
 */

int
sl_ofp_hello_decode(const void *msg, size_t len, uint32_t *version_bitmap, struct sl_ofp_error *err)
{
	const uint8_t *p = ofp_msg_check(msg, len, SL_OFPT_HELLO, SL_OFP_HEADER_LEN, err);
	bool have_bitmap = false;
	size_t ofs = SL_OFP_HEADER_LEN;

	if (p == NULL)
		return -1;
	*version_bitmap = 0;
	while (ofs < len) {
		size_t left = len - ofs, elen;

		if (left < sizeof(struct ofp_hello_elem_header))
			return FAIL_BRC(err, BAD_LEN);
		elen = rd16(p + ofs + 2);
		if (elen < sizeof(struct ofp_hello_elem_header) || elen > left)
			return FAIL_BRC(err, BAD_LEN);
		if (rd16(p + ofs) == OFPHET_VERSIONBITMAP) {
			if ((elen - 4) % 4)
				return FAIL_BRC(err, BAD_LEN);
			/* Word 0 holds versions 0..31; later words are versions Sluice never speaks. */
			if (elen >= 8)
				*version_bitmap = rd32(p + ofs + 4);
			have_bitmap = true;
		}
		/* Elements are padded to 8; tolerate a last element without its padding. */
		ofs += SL_MIN(pad8(elen), left);
	}
	if (!have_bitmap) {
		/* No bitmap: the peer speaks every version up to header.version (section 6.3.1). */
		unsigned v = SL_MIN(p[0], 31u);
		*version_bitmap = (uint32_t)((UINT64_C(1) << (v + 1)) - 2);
	}
	return 0;
}

int
sl_ofp_hello_encode(struct sl_ofp_buf *b, uint32_t xid, uint32_t version_bitmap)
{
	uint8_t *p = fixed_start(b, SL_OFPT_HELLO, xid, 16);

	if (p == NULL)
		return -ENOMEM;
	wr16(p + 8, OFPHET_VERSIONBITMAP);
	wr16(p + 10, 8);
	wr32(p + 12, version_bitmap);
	return 0;
}

/*
 * Error.
 */

int
sl_ofp_error_decode(const void *msg, size_t len, struct sl_ofp_error *e, const uint8_t **data,
		    size_t *data_len, struct sl_ofp_error *err)
{
	const uint8_t *p =
		ofp_msg_check(msg, len, SL_OFPT_ERROR, sizeof(struct ofp_error_msg), err);
	size_t hdr = sizeof(struct ofp_error_msg);

	if (p == NULL)
		return -1;
	e->type = rd16(p + 8);
	e->code = rd16(p + 10);
	e->experimenter = 0;
	if (e->type == SL_OFPET_EXPERIMENTER) {
		hdr = sizeof(struct ofp_error_experimenter_msg);
		if (len < hdr)
			return FAIL_BRC(err, BAD_LEN);
		e->experimenter = rd32(p + 12);
	}
	*data = len > hdr ? p + hdr : NULL;
	*data_len = len - hdr;
	return 0;
}

int
sl_ofp_error_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_ofp_error *e,
		    const void *data, size_t data_len)
{
	bool exp = e->type == SL_OFPET_EXPERIMENTER;
	size_t start = b->len, hdr = exp ? 16 : 12;
	uint8_t *p;

	if (e->type != SL_OFPET_HELLO_FAILED)
		data_len = SL_MIN(data_len, (size_t)SL_OFP_ERROR_DATA_MAX);
	if (data_len > SL_OFP_MSG_MAX - hdr)
		return -EMSGSIZE;
	p = ofp_msg_start(b, SL_OFPT_ERROR, xid, hdr);
	if (p == NULL)
		return -ENOMEM;
	wr16(p + 8, e->type);
	wr16(p + 10, e->code);
	if (exp)
		wr32(p + 12, e->experimenter);
	if (ofp_buf_put_bytes(b, data, data_len) < 0) {
		b->len = start;
		return -ENOMEM;
	}
	return ofp_msg_end(b, start);
}

/*
 * Echo and body-less messages.
 */

int
sl_ofp_echo_decode(const void *msg, size_t len, const uint8_t **data, size_t *data_len,
		   struct sl_ofp_error *err)
{
	struct sl_ofp_header h;
	const uint8_t *p = msg;

	if (sl_ofp_header_decode(msg, len, &h, err) < 0)
		return -1;
	if (h.type != SL_OFPT_ECHO_REQUEST && h.type != SL_OFPT_ECHO_REPLY)
		return FAIL_BRC(err, BAD_TYPE);
	*data = len > SL_OFP_HEADER_LEN ? p + SL_OFP_HEADER_LEN : NULL;
	*data_len = len - SL_OFP_HEADER_LEN;
	return 0;
}

static int
echo_encode(struct sl_ofp_buf *b, uint8_t type, uint32_t xid, const void *data, size_t data_len)
{
	size_t start = b->len;

	if (data_len > SL_OFP_MSG_MAX - SL_OFP_HEADER_LEN)
		return -EMSGSIZE;
	if (ofp_msg_start(b, type, xid, SL_OFP_HEADER_LEN) == NULL)
		return -ENOMEM;
	if (ofp_buf_put_bytes(b, data, data_len) < 0) {
		b->len = start;
		return -ENOMEM;
	}
	return ofp_msg_end(b, start);
}

int
sl_ofp_echo_request_encode(struct sl_ofp_buf *b, uint32_t xid, const void *data, size_t data_len)
{
	return echo_encode(b, SL_OFPT_ECHO_REQUEST, xid, data, data_len);
}

int
sl_ofp_echo_reply_encode(struct sl_ofp_buf *b, uint32_t xid, const void *data, size_t data_len)
{
	return echo_encode(b, SL_OFPT_ECHO_REPLY, xid, data, data_len);
}

int
sl_ofp_empty_decode(const void *msg, size_t len, struct sl_ofp_error *err)
{
	struct sl_ofp_header h;

	if (sl_ofp_header_decode(msg, len, &h, err) < 0)
		return -1;
	if (len != SL_OFP_HEADER_LEN)
		return FAIL_BRC(err, BAD_LEN);
	return 0;
}

int
sl_ofp_empty_encode(struct sl_ofp_buf *b, uint8_t type, uint32_t xid)
{
	return fixed_start(b, type, xid, SL_OFP_HEADER_LEN) ? 0 : -ENOMEM;
}

int
sl_ofp_barrier_reply_encode(struct sl_ofp_buf *b, uint32_t xid)
{
	return sl_ofp_empty_encode(b, SL_OFPT_BARRIER_REPLY, xid);
}

/*
 * Switch configuration.
 */

int
sl_ofp_features_reply_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_ofp_features *f)
{
	struct ofp_switch_features *sf;

	sf = (void *)fixed_start(b, SL_OFPT_FEATURES_REPLY, xid, sizeof(*sf));
	if (sf == NULL)
		return -ENOMEM;
	sf->datapath_id = sl_ofp_hton64(f->datapath_id);
	sf->n_buffers = sl_ofp_hton32(f->n_buffers);
	sf->n_tables = f->n_tables;
	sf->auxiliary_id = f->auxiliary_id;
	sf->capabilities = sl_ofp_hton32(f->capabilities);
	return 0;
}

int
sl_ofp_set_config_decode(const void *msg, size_t len, struct sl_ofp_switch_config *c,
			 struct sl_ofp_error *err)
{
	const struct ofp_switch_config *sc;

	sc = (const void *)fixed_msg(msg, len, SL_OFPT_SET_CONFIG, sizeof(*sc), err);
	if (sc == NULL)
		return -1;
	c->flags = sl_ofp_ntoh16(sc->flags);
	c->miss_send_len = sl_ofp_ntoh16(sc->miss_send_len);
	if (c->flags & ~SL_OFPC_FRAG_MASK)
		return ofp_fail(err, SL_OFPET_SWITCH_CONFIG_FAILED, SL_OFPSCFC_BAD_FLAGS);
	return 0;
}

int
sl_ofp_get_config_reply_encode(struct sl_ofp_buf *b, uint32_t xid,
			       const struct sl_ofp_switch_config *c)
{
	struct ofp_switch_config *sc;

	sc = (void *)fixed_start(b, SL_OFPT_GET_CONFIG_REPLY, xid, sizeof(*sc));
	if (sc == NULL)
		return -ENOMEM;
	sc->flags = sl_ofp_hton16(c->flags);
	sc->miss_send_len = sl_ofp_hton16(c->miss_send_len);
	return 0;
}

int
sl_ofp_role_request_decode(const void *msg, size_t len, struct sl_ofp_role *r,
			   struct sl_ofp_error *err)
{
	const struct ofp_role_request *rr;

	rr = (const void *)fixed_msg(msg, len, SL_OFPT_ROLE_REQUEST, sizeof(*rr), err);
	if (rr == NULL)
		return -1;
	r->role = sl_ofp_ntoh32(rr->role);
	r->generation_id = sl_ofp_ntoh64(rr->generation_id);
	if (r->role > SL_OFPCR_ROLE_SLAVE)
		return ofp_fail(err, SL_OFPET_ROLE_REQUEST_FAILED, SL_OFPRRFC_BAD_ROLE);
	return 0;
}

int
sl_ofp_role_reply_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_ofp_role *r)
{
	struct ofp_role_request *rr;

	rr = (void *)fixed_start(b, SL_OFPT_ROLE_REPLY, xid, sizeof(*rr));
	if (rr == NULL)
		return -ENOMEM;
	rr->role = sl_ofp_hton32(r->role);
	rr->generation_id = sl_ofp_hton64(r->generation_id);
	return 0;
}

int
sl_ofp_set_async_decode(const void *msg, size_t len, struct sl_ofp_async_config *c,
			struct sl_ofp_error *err)
{
	const struct ofp_async_config *ac;

	ac = (const void *)fixed_msg(msg, len, SL_OFPT_SET_ASYNC, sizeof(*ac), err);
	if (ac == NULL)
		return -1;
	for (unsigned i = 0; i < 2; i++) {
		c->packet_in_mask[i] = sl_ofp_ntoh32(ac->packet_in_mask[i]);
		c->port_status_mask[i] = sl_ofp_ntoh32(ac->port_status_mask[i]);
		c->flow_removed_mask[i] = sl_ofp_ntoh32(ac->flow_removed_mask[i]);
	}
	return 0;
}

int
sl_ofp_get_async_reply_encode(struct sl_ofp_buf *b, uint32_t xid,
			      const struct sl_ofp_async_config *c)
{
	struct ofp_async_config *ac;

	ac = (void *)fixed_start(b, SL_OFPT_GET_ASYNC_REPLY, xid, sizeof(*ac));
	if (ac == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < 2; i++) {
		ac->packet_in_mask[i] = sl_ofp_hton32(c->packet_in_mask[i]);
		ac->port_status_mask[i] = sl_ofp_hton32(c->port_status_mask[i]);
		ac->flow_removed_mask[i] = sl_ofp_hton32(c->flow_removed_mask[i]);
	}
	return 0;
}

int
sl_ofp_port_mod_decode(const void *msg, size_t len, struct sl_ofp_port_mod *pm,
		       struct sl_ofp_error *err)
{
	const struct ofp_port_mod *m;

	m = (const void *)fixed_msg(msg, len, SL_OFPT_PORT_MOD, sizeof(*m), err);
	if (m == NULL)
		return -1;
	pm->port_no = sl_ofp_ntoh32(m->port_no);
	memcpy(pm->hw_addr, m->hw_addr, sizeof(pm->hw_addr));
	pm->config = sl_ofp_ntoh32(m->config);
	pm->mask = sl_ofp_ntoh32(m->mask);
	pm->advertise = sl_ofp_ntoh32(m->advertise);
	if (pm->port_no == 0 || (pm->port_no > SL_PORT_MAX_PHYS && pm->port_no != SL_PORT_LOCAL))
		return ofp_fail(err, SL_OFPET_PORT_MOD_FAILED, SL_OFPPMFC_BAD_PORT);
	if ((pm->config | pm->mask) & ~(uint32_t)SL_OFPPC_ALL)
		return ofp_fail(err, SL_OFPET_PORT_MOD_FAILED, SL_OFPPMFC_BAD_CONFIG);
	return 0;
}

int
sl_ofp_table_mod_decode(const void *msg, size_t len, struct sl_ofp_table_mod *tm,
			struct sl_ofp_error *err)
{
	const struct ofp_table_mod *m;

	m = (const void *)fixed_msg(msg, len, SL_OFPT_TABLE_MOD, sizeof(*m), err);
	if (m == NULL)
		return -1;
	tm->table_id = m->table_id;
	tm->config = sl_ofp_ntoh32(m->config);
	if (tm->table_id >= SL_TABLES_MAX && tm->table_id != SL_OFPTT_ALL)
		return ofp_fail(err, SL_OFPET_TABLE_MOD_FAILED, SL_OFPTMFC_BAD_TABLE);
	return 0;
}

int
sl_ofp_queue_get_config_decode(const void *msg, size_t len, uint32_t *port,
			       struct sl_ofp_error *err)
{
	const struct ofp_queue_get_config *q;

	q = (const void *)fixed_msg(msg, len, SL_OFPT_QUEUE_GET_CONFIG_REQUEST, sizeof(*q), err);
	if (q == NULL)
		return -1;
	*port = sl_ofp_ntoh32(q->port);
	return 0;
}

int
sl_ofp_queue_get_config_reply_encode(struct sl_ofp_buf *b, uint32_t xid, uint32_t port,
				     const struct sl_ofp_queue *qs, unsigned n)
{
	size_t start = b->len;
	uint8_t *p = ofp_msg_start(b, SL_OFPT_QUEUE_GET_CONFIG_REPLY, xid,
				   sizeof(struct ofp_queue_get_config));

	if (p == NULL)
		return -ENOMEM;
	wr32(p + 8, port);
	for (unsigned i = 0; i < n; i++) {
		/* ofp_packet_queue (16 bytes) + ofp_queue_prop_max_rate (16 bytes). */
		uint8_t *e = ofp_buf_put(b, 32);
		if (e == NULL) {
			b->len = start;
			return -ENOMEM;
		}
		wr32(e, qs[i].queue_id);
		wr32(e + 4, qs[i].port_no);
		wr16(e + 8, 32);
		wr16(e + 16, 2 /* OFPQT_MAX_RATE */);
		wr16(e + 18, 16);
		wr16(e + 24, qs[i].max_rate);
	}
	return ofp_msg_end(b, start);
}

/*
 * Sluice experimenter messages (docs/openflow-experimenter.md).
 */

int
sl_ofp_experimenter_decode(const void *msg, size_t len, struct sl_ofp_experimenter *x,
			   struct sl_ofp_error *err)
{
	const struct ofp_experimenter_header *eh;

	eh = (const void *)ofp_msg_check(msg, len, SL_OFPT_EXPERIMENTER, sizeof(*eh), err);
	if (eh == NULL)
		return -1;
	x->experimenter = sl_ofp_ntoh32(eh->experimenter);
	x->exp_type = sl_ofp_ntoh32(eh->exp_type);
	x->data = len > sizeof(*eh) ? (const uint8_t *)msg + sizeof(*eh) : NULL;
	x->data_len = len - sizeof(*eh);
	if (x->experimenter != SL_OFP_EXPERIMENTER_ID)
		return FAIL_BRC(err, BAD_EXPERIMENTER);
	if (x->exp_type != SL_OFPX_TABLE_DECLARE && x->exp_type != SL_OFPX_LL_SET &&
	    x->exp_type != SL_OFPX_FFP_CONFIG && x->exp_type != SL_OFPX_SET_FWD_MODE &&
	    x->exp_type != SL_OFPX_FWD_MODE &&
	    !sl_ofp_state_exp_type(x->exp_type)) /* OpenState: ofp_state.c */
		return FAIL_BRC(err, BAD_EXP_TYPE);
	return 0;
}

int
sl_ofp_table_declare_decode(const void *msg, size_t len, struct sl_table_spec *ts,
			    struct sl_ofp_error *err)
{
	const size_t hdr = sizeof(struct ofp_experimenter_header);
	const struct sl_ofpx_table_declare *td;
	struct sl_ofp_experimenter x;
	const uint8_t *p = msg;

	if (sl_ofp_experimenter_decode(msg, len, &x, err) < 0)
		return -1;
	if (x.exp_type != SL_OFPX_TABLE_DECLARE)
		return FAIL_BRC(err, BAD_EXP_TYPE);
	if (x.data_len < sizeof(*td))
		return FAIL_BRC(err, BAD_LEN);
	td = (const void *)x.data;
	memset(ts, 0, sizeof(*ts));
	ts->table_id = td->table_id;
	ts->max_entries = sl_ofp_ntoh32(td->max_entries);
	if (td->table_id >= SL_TABLES_MAX)
		return ofp_fail(err, SL_OFPET_TABLE_MOD_FAILED, SL_OFPTMFC_BAD_TABLE);
	switch (td->kind) {
	case SL_OFPX_KIND_DIRECT:
		ts->kind = SL_TABLE_DIRECT;
		break;
	case SL_OFPX_KIND_EXACT:
		ts->kind = SL_TABLE_EXACT;
		break;
	case SL_OFPX_KIND_LPM:
		ts->kind = SL_TABLE_LPM;
		break;
	case SL_OFPX_KIND_MASK:
		ts->kind = SL_TABLE_MASK;
		break;
	default:
		return ofp_fail(err, SL_OFPET_TABLE_MOD_FAILED, SL_OFPTMFC_BAD_CONFIG);
	}
	if (!all_zero(td->pad, sizeof(td->pad)) || memchr(td->name, 0, sizeof(td->name)) == NULL)
		return ofp_fail(err, SL_OFPET_TABLE_MOD_FAILED, SL_OFPTMFC_BAD_CONFIG);
	memcpy(ts->name, td->name, sizeof(ts->name));

	for (size_t ofs = hdr + sizeof(*td); ofs < len;) {
		struct sl_match_field mf;
		bool masked;
		size_t id_len;

		if (ofp_oxm_decode(p + ofs, len - ofs, true, &mf, &masked, &id_len, err) < 0)
			return -1;
		ofs += id_len;
		for (unsigned i = 0; i < ts->n_fields; i++)
			if (sl_field_equal(&ts->fields[i], &mf.f))
				return FAIL_BMC(err, DUP_FIELD);
		if (ts->n_fields == SL_KEY_FIELDS_MAX)
			return FAIL_BMC(err, BAD_FIELD);
		ts->fields[ts->n_fields++] = mf.f;
	}
	return 0;
}

int
sl_ofp_table_declare_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_table_spec *ts)
{
	static const uint8_t kinds[] = {
		[SL_TABLE_DIRECT] = SL_OFPX_KIND_DIRECT,
		[SL_TABLE_EXACT] = SL_OFPX_KIND_EXACT,
		[SL_TABLE_LPM] = SL_OFPX_KIND_LPM,
		[SL_TABLE_MASK] = SL_OFPX_KIND_MASK,
	};
	size_t start = b->len;
	struct sl_ofpx_table_declare *td;
	uint8_t *p;
	int rc;

	if ((unsigned)ts->kind >= SL_ARRAY_SIZE(kinds) || ts->n_fields > SL_KEY_FIELDS_MAX)
		return -EINVAL;
	p = ofp_msg_start(b, SL_OFPT_EXPERIMENTER, xid,
			  sizeof(struct ofp_experimenter_header) + sizeof(*td));
	if (p == NULL)
		return -ENOMEM;
	wr32(p + 8, SL_OFP_EXPERIMENTER_ID);
	wr32(p + 12, SL_OFPX_TABLE_DECLARE);
	td = (void *)(p + sizeof(struct ofp_experimenter_header));
	td->table_id = ts->table_id;
	td->kind = kinds[ts->kind];
	td->max_entries = sl_ofp_hton32(ts->max_entries);
	memcpy(td->name, ts->name, sizeof(td->name) - 1);
	td->name[sizeof(td->name) - 1] = '\0';
	for (unsigned i = 0; i < ts->n_fields; i++) {
		if ((rc = ofp_oxm_encode(b, &ts->fields[i], NULL, NULL, false, true)) < 0) {
			b->len = start;
			return rc;
		}
	}
	return ofp_msg_end(b, start);
}
