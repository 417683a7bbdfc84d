/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path: the OpenState experimenter messages (exp_types
 * 10..16).  Byte layouts: docs/openflow.md section 12.  Every decoder
 * checks lengths, pad bytes and ranges before using a byte.
 */
#include "ofp.h"

#include <string.h>

#include "ofp_priv.h"

#define XHDR 16u /* ofp_experimenter_header */

/* SL_OFPX_STATE_TABLE body: 40 bytes, then OXM ids (lookup scope, then update scope). */
struct state_table_body {
	uint8_t table_id;
	uint8_t n_lookup;
	uint8_t n_update;
	uint8_t pad;
	sl_be32 max_entries;
	char name[32];
} SL_OFP_PACKED;
static_assert(sizeof(struct state_table_body) == 40, "state table body");

/* SL_OFPX_STATE_SET / _DEL body: 24 bytes, then an ofp_match. */
struct state_mod_body {
	uint8_t table_id;
	uint8_t flags;
	uint8_t pad[2];
	sl_be32 state;
	sl_be32 rollback;
	sl_be32 idle_ms;
	sl_be32 hard_ms;
	uint8_t pad2[4];
} SL_OFP_PACKED;
static_assert(sizeof(struct state_mod_body) == 24, "state mod body");

/* SL_OFPX_STATE_DUMP_REPLY body: 8 bytes, then entries. */
struct state_reply_body {
	uint8_t table_id;
	uint8_t pad;
	sl_be16 flags;
	sl_be32 n_entries;
} SL_OFP_PACKED;
static_assert(sizeof(struct state_reply_body) == 8, "state reply body");

/* One dump entry: 32 bytes, then an ofp_match; len covers both. */
struct state_entry_hdr {
	sl_be16 len;
	uint8_t pad[2];
	sl_be32 state;
	sl_be32 rollback;
	sl_be32 idle_ms;
	sl_be32 hard_ms;
	sl_be32 idle_left_ms;
	sl_be32 hard_left_ms;
	uint8_t pad2[4];
} SL_OFP_PACKED;
static_assert(sizeof(struct state_entry_hdr) == 32, "state entry");

/* SL_OFPX_STATE_STATS_REPLY body: 104 bytes. */
#define STATS_BODY 104u

bool
sl_ofp_state_exp_type(uint32_t exp_type)
{
	return exp_type >= SL_OFPX_STATE_TABLE && exp_type <= SL_OFPX_STATE_STATS_REPLY;
}

static void
wr64(uint8_t *p, uint64_t v)
{
	wr32(p, (uint32_t)(v >> 32));
	wr32(p + 4, (uint32_t)v);
}

static uint64_t
rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) << 32 | rd32(p + 4);
}

/* Start an experimenter message of @exp_type with @body bytes of fixed body (zeroed). */
static uint8_t *
xmsg_start(struct sl_ofp_buf *b, uint32_t xid, uint32_t exp_type, size_t body)
{
	uint8_t *p = ofp_msg_start(b, SL_OFPT_EXPERIMENTER, xid, XHDR + body);

	if (p == NULL)
		return NULL;
	wr32(p + 8, SL_OFP_EXPERIMENTER_ID);
	wr32(p + 12, exp_type);
	return p + XHDR;
}

/* Common check: an experimenter message of @exp_type with at least @body bytes of body. */
static const uint8_t *
xmsg_check(const void *msg, size_t len, uint32_t exp_type, size_t body, struct sl_ofp_error *err)
{
	struct sl_ofp_experimenter x;

	if (sl_ofp_experimenter_decode(msg, len, &x, err) < 0)
		return NULL;
	if (x.exp_type != exp_type) {
		FAIL_BRC(err, BAD_EXP_TYPE);
		return NULL;
	}
	if (x.data_len < body) {
		FAIL_BRC(err, BAD_LEN);
		return NULL;
	}
	return x.data;
}

int
sl_ofp_state_table_decode(const void *msg, size_t len, struct sl_table_spec *ts,
			  struct sl_ofp_error *err)
{
	const uint8_t *p =
		xmsg_check(msg, len, SL_OFPX_STATE_TABLE, sizeof(struct state_table_body), err);
	const struct state_table_body *tb = (const void *)p;
	size_t ofs, end = len - XHDR;

	if (p == NULL)
		return -1;
	memset(ts, 0, sizeof(*ts));
	if (tb->table_id >= SL_TABLES_MAX)
		return ofp_fail(err, SL_OFPET_TABLE_MOD_FAILED, SL_OFPTMFC_BAD_TABLE);
	if (tb->pad || memchr(tb->name, 0, sizeof(tb->name)) == NULL || tb->n_lookup == 0 ||
	    tb->n_lookup > SL_STATE_FIELDS_MAX || tb->n_update > SL_STATE_FIELDS_MAX)
		return ofp_fail(err, SL_OFPET_TABLE_MOD_FAILED, SL_OFPTMFC_BAD_CONFIG);
	ts->table_id = tb->table_id;
	ts->kind = SL_TABLE_STATE;
	ts->max_entries = sl_ofp_ntoh32(tb->max_entries);
	memcpy(ts->name, tb->name, sizeof(ts->name));
	ofs = sizeof(*tb);
	for (unsigned i = 0; i < (unsigned)tb->n_lookup + tb->n_update; i++) {
		struct sl_match_field mf;
		bool masked, upd = i >= tb->n_lookup;
		size_t id_len;
		struct sl_field *list = upd ? ts->update : ts->fields;
		uint8_t *n = upd ? &ts->n_update : &ts->n_fields;

		if (ofs >= end)
			return ofp_fail(err, SL_OFPET_TABLE_MOD_FAILED, SL_OFPTMFC_BAD_CONFIG);
		if (ofp_oxm_decode(p + ofs, end - ofs, true, &mf, &masked, &id_len, err) < 0)
			return -1;
		ofs += id_len;
		for (unsigned k = 0; k < *n; k++)
			if (sl_field_equal(&list[k], &mf.f))
				return FAIL_BMC(err, DUP_FIELD);
		list[(*n)++] = mf.f;
	}
	if (ofs != end)
		return ofp_fail(err, SL_OFPET_TABLE_MOD_FAILED, SL_OFPTMFC_BAD_CONFIG);
	return 0;
}

int
sl_ofp_state_table_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_table_spec *ts)
{
	size_t start = b->len;
	struct state_table_body *tb;
	int rc;

	if (ts->kind != SL_TABLE_STATE || ts->n_fields == 0 || ts->n_fields > SL_STATE_FIELDS_MAX ||
	    ts->n_update > SL_STATE_FIELDS_MAX)
		return -EINVAL;
	tb = (void *)xmsg_start(b, xid, SL_OFPX_STATE_TABLE, sizeof(*tb));
	if (tb == NULL)
		return -ENOMEM;
	tb->table_id = ts->table_id;
	tb->n_lookup = ts->n_fields;
	tb->n_update = ts->n_update;
	tb->max_entries = sl_ofp_hton32(ts->max_entries);
	memcpy(tb->name, ts->name, sizeof(tb->name) - 1);
	for (unsigned i = 0; i < (unsigned)ts->n_fields + ts->n_update; i++) {
		const struct sl_field *f =
			i < ts->n_fields ? &ts->fields[i] : &ts->update[i - ts->n_fields];
		if ((rc = ofp_oxm_encode(b, f, NULL, NULL, false, true)) < 0) {
			b->len = start;
			return rc;
		}
	}
	return ofp_msg_end(b, start);
}

int
sl_ofp_state_mod_decode(const void *msg, size_t len, uint32_t exp_type, struct sl_ofp_state_mod *m,
			struct sl_ofp_error *err)
{
	const uint8_t *p;
	const struct state_mod_body *mb;
	size_t consumed;

	if (exp_type != SL_OFPX_STATE_SET && exp_type != SL_OFPX_STATE_DEL)
		return FAIL_BRC(err, BAD_EXP_TYPE);
	p = xmsg_check(msg, len, exp_type, sizeof(*mb) + 8, err);
	if (p == NULL)
		return -1;
	mb = (const void *)p;
	memset(m, 0, sizeof(*m));
	if (mb->table_id >= SL_TABLES_MAX)
		return FAIL_BRC(err, BAD_TABLE_ID);
	if (!all_zero(mb->pad, sizeof(mb->pad)) || !all_zero(mb->pad2, sizeof(mb->pad2)) ||
	    (mb->flags & ~(exp_type == SL_OFPX_STATE_DEL ? SL_OFPX_STATE_DEL_ALL : 0)))
		return FAIL_BRC(err, EPERM);
	if (exp_type == SL_OFPX_STATE_DEL &&
	    (mb->state || mb->rollback || mb->idle_ms || mb->hard_ms))
		return FAIL_BRC(err, EPERM);
	m->table_id = mb->table_id;
	m->all = mb->flags & SL_OFPX_STATE_DEL_ALL;
	m->set.state = sl_ofp_ntoh32(mb->state);
	m->set.rollback = sl_ofp_ntoh32(mb->rollback);
	m->set.idle_ms = sl_ofp_ntoh32(mb->idle_ms);
	m->set.hard_ms = sl_ofp_ntoh32(mb->hard_ms);
	if (sl_ofp_match_decode(p + sizeof(*mb), len - XHDR - sizeof(*mb), &m->key, &consumed,
				err) < 0)
		return -1;
	if (consumed != len - XHDR - sizeof(*mb))
		return FAIL_BRC(err, BAD_LEN);
	if (m->all && m->key.n_fields)
		return FAIL_BRC(err, EPERM);
	return 0;
}

int
sl_ofp_state_mod_encode(struct sl_ofp_buf *b, uint32_t xid, uint32_t exp_type,
			const struct sl_ofp_state_mod *m)
{
	size_t start = b->len;
	struct state_mod_body *mb;
	int rc;

	if (exp_type != SL_OFPX_STATE_SET && exp_type != SL_OFPX_STATE_DEL)
		return -EINVAL;
	mb = (void *)xmsg_start(b, xid, exp_type, sizeof(*mb));
	if (mb == NULL)
		return -ENOMEM;
	mb->table_id = m->table_id;
	if (exp_type == SL_OFPX_STATE_DEL) {
		mb->flags = m->all ? SL_OFPX_STATE_DEL_ALL : 0;
	} else {
		mb->state = sl_ofp_hton32(m->set.state);
		mb->rollback = sl_ofp_hton32(m->set.rollback);
		mb->idle_ms = sl_ofp_hton32(m->set.idle_ms);
		mb->hard_ms = sl_ofp_hton32(m->set.hard_ms);
	}
	if ((rc = sl_ofp_match_encode(b, &m->key)) < 0) {
		b->len = start;
		return rc;
	}
	return ofp_msg_end(b, start);
}

int
sl_ofp_state_request_decode(const void *msg, size_t len, uint32_t exp_type, uint8_t *table_id,
			    struct sl_ofp_error *err)
{
	const uint8_t *p;

	if (exp_type != SL_OFPX_STATE_DUMP && exp_type != SL_OFPX_STATE_STATS)
		return FAIL_BRC(err, BAD_EXP_TYPE);
	if ((p = xmsg_check(msg, len, exp_type, 8, err)) == NULL)
		return -1;
	if (len != XHDR + 8)
		return FAIL_BRC(err, BAD_LEN);
	if (p[0] >= SL_TABLES_MAX)
		return FAIL_BRC(err, BAD_TABLE_ID);
	if (!all_zero(p + 1, 7))
		return FAIL_BRC(err, EPERM);
	*table_id = p[0];
	return 0;
}

int
sl_ofp_state_request_encode(struct sl_ofp_buf *b, uint32_t xid, uint32_t exp_type, uint8_t table_id)
{
	size_t start = b->len;
	uint8_t *p = xmsg_start(b, xid, exp_type, 8);

	if (p == NULL)
		return -ENOMEM;
	p[0] = table_id;
	return ofp_msg_end(b, start);
}

/* Dump replies. */

static int
part_open(struct sl_ofp_state_dump_writer *w)
{
	struct state_reply_body *rb;

	w->start = w->b->len;
	w->n_entries = 0;
	rb = (void *)xmsg_start(w->b, w->xid, SL_OFPX_STATE_DUMP_REPLY, sizeof(*rb));
	if (rb == NULL)
		return -ENOMEM;
	rb->table_id = w->table_id;
	return 0;
}

/* Close the open part with @flags and hand it to flush; the buffer is emptied. */
static int
part_close(struct sl_ofp_state_dump_writer *w, uint16_t flags)
{
	struct state_reply_body *rb = (void *)(w->b->data + w->start + XHDR);
	int rc;

	rb->flags = sl_ofp_hton16(flags);
	rb->n_entries = sl_ofp_hton32(w->n_entries);
	if ((rc = ofp_msg_end(w->b, w->start)) < 0)
		return rc;
	rc = w->flush(w->arg, w->b->data + w->start, w->b->len - w->start);
	w->b->len = w->start;
	return rc;
}

int
sl_ofp_state_dump_begin(struct sl_ofp_state_dump_writer *w, struct sl_ofp_buf *b, uint32_t xid,
			uint8_t table_id, int (*flush)(void *arg, const uint8_t *msg, size_t len),
			void *arg)
{
	*w = (struct sl_ofp_state_dump_writer){
		.b = b, .xid = xid, .table_id = table_id, .flush = flush, .arg = arg};
	return part_open(w);
}

int
sl_ofp_state_dump_append(struct sl_ofp_state_dump_writer *w, const struct sl_ofp_state_entry *e)
{
	size_t need = sizeof(struct state_entry_hdr) + ofp_match_wire_len(&e->key);
	size_t at;
	struct state_entry_hdr *h;
	int rc;

	if (w->n_entries > 0 && w->b->len - w->start + need > SL_OFPX_STATE_PART_MAX) {
		if ((rc = part_close(w, SL_OFPX_STATE_REPLY_MORE)) < 0 || (rc = part_open(w)) < 0)
			return rc;
	}
	at = w->b->len;
	if (ofp_buf_put(w->b, sizeof(*h)) == NULL)
		return -ENOMEM;
	if ((rc = sl_ofp_match_encode(w->b, &e->key)) < 0) {
		w->b->len = at;
		return rc;
	}
	h = (void *)(w->b->data + at);
	h->len = sl_ofp_hton16((uint16_t)(w->b->len - at));
	h->state = sl_ofp_hton32(e->state);
	h->rollback = sl_ofp_hton32(e->rollback);
	h->idle_ms = sl_ofp_hton32(e->idle_ms);
	h->hard_ms = sl_ofp_hton32(e->hard_ms);
	h->idle_left_ms = sl_ofp_hton32(e->idle_left_ms);
	h->hard_left_ms = sl_ofp_hton32(e->hard_left_ms);
	w->n_entries++;
	return 0;
}

int
sl_ofp_state_dump_end(struct sl_ofp_state_dump_writer *w)
{
	return part_close(w, 0);
}

int
sl_ofp_state_dump_reply_decode(const void *msg, size_t len, uint8_t *table_id, uint16_t *flags,
			       sl_ofp_state_entry_fn fn, void *arg, struct sl_ofp_error *err)
{
	const uint8_t *p = xmsg_check(msg, len, SL_OFPX_STATE_DUMP_REPLY,
				      sizeof(struct state_reply_body), err);
	const struct state_reply_body *rb = (const void *)p;
	size_t ofs, end = len - XHDR;
	uint32_t n = 0, want;
	struct sl_ofp_state_entry e;
	int rc;

	if (p == NULL)
		return -1;
	if (rb->pad || (sl_ofp_ntoh16(rb->flags) & ~SL_OFPX_STATE_REPLY_MORE))
		return FAIL_BRC(err, EPERM);
	*table_id = rb->table_id;
	*flags = sl_ofp_ntoh16(rb->flags);
	want = sl_ofp_ntoh32(rb->n_entries);
	for (ofs = sizeof(*rb); ofs < end; n++) {
		const struct state_entry_hdr *h = (const void *)(p + ofs);
		size_t elen, consumed;

		if (end - ofs < sizeof(*h))
			return FAIL_BRC(err, BAD_LEN);
		elen = sl_ofp_ntoh16(h->len);
		if (elen < sizeof(*h) + 8 || elen > end - ofs || elen % 8)
			return FAIL_BRC(err, BAD_LEN);
		if (!all_zero(h->pad, sizeof(h->pad)) || !all_zero(h->pad2, sizeof(h->pad2)))
			return FAIL_BRC(err, EPERM);
		if (sl_ofp_match_decode(p + ofs + sizeof(*h), elen - sizeof(*h), &e.key, &consumed,
					err) < 0)
			return -1;
		if (consumed != elen - sizeof(*h))
			return FAIL_BRC(err, BAD_LEN);
		e.state = sl_ofp_ntoh32(h->state);
		e.rollback = sl_ofp_ntoh32(h->rollback);
		e.idle_ms = sl_ofp_ntoh32(h->idle_ms);
		e.hard_ms = sl_ofp_ntoh32(h->hard_ms);
		e.idle_left_ms = sl_ofp_ntoh32(h->idle_left_ms);
		e.hard_left_ms = sl_ofp_ntoh32(h->hard_left_ms);
		ofs += elen;
		if (n >= want)
			return FAIL_BRC(err, BAD_LEN);
		if (fn != NULL && (rc = fn(arg, &e)) != 0)
			return rc;
	}
	if (n != want)
		return FAIL_BRC(err, BAD_LEN);
	return 0;
}

int
sl_ofp_state_stats_reply_encode(struct sl_ofp_buf *b, uint32_t xid, uint8_t table_id,
				const struct sl_state_stats *st)
{
	size_t start = b->len;
	uint8_t *p = xmsg_start(b, xid, SL_OFPX_STATE_STATS_REPLY, STATS_BODY);
	const uint64_t v[] = {st->lookups,  st->hits,    st->sets,    st->inserts,
			      st->deletes,  st->expired, st->evicted, st->refused,
			      st->commands, st->bytes,   st->foreign};

	if (p == NULL)
		return -ENOMEM;
	p[0] = table_id;
	wr32(p + 4, st->capacity);
	wr32(p + 8, st->n_entries);
	for (unsigned i = 0; i < SL_ARRAY_SIZE(v); i++)
		wr64(p + 16 + 8 * i, v[i]);
	return ofp_msg_end(b, start);
}

int
sl_ofp_state_stats_reply_decode(const void *msg, size_t len, uint8_t *table_id,
				struct sl_state_stats *st, struct sl_ofp_error *err)
{
	const uint8_t *p = xmsg_check(msg, len, SL_OFPX_STATE_STATS_REPLY, STATS_BODY, err);
	uint64_t *v[] = {&st->lookups,  &st->hits,    &st->sets,    &st->inserts,
			 &st->deletes,  &st->expired, &st->evicted, &st->refused,
			 &st->commands, &st->bytes,   &st->foreign};

	if (p == NULL)
		return -1;
	if (len != XHDR + STATS_BODY)
		return FAIL_BRC(err, BAD_LEN);
	if (!all_zero(p + 1, 3) || !all_zero(p + 12, 4))
		return FAIL_BRC(err, EPERM);
	memset(st, 0, sizeof(*st));
	*table_id = p[0];
	st->capacity = rd32(p + 4);
	st->n_entries = rd32(p + 8);
	for (unsigned i = 0; i < SL_ARRAY_SIZE(v); i++)
		*v[i] = rd64(p + 16 + 8 * i);
	return 0;
}
