/* SPDX-License-Identifier: BSD-3-Clause */
/* Control path: multipart requests and replies, and the reply writer that splits big replies. */
#include "ofp.h"

#include <string.h>

#include "ofp_priv.h"

/*
 * Requests.
 */

int
sl_ofp_mp_request_decode(const void *msg, size_t len, struct sl_ofp_mp_request *req,
			 struct sl_ofp_error *err)
{
	const struct ofp_multipart *mp;
	const uint8_t *body;
	size_t blen;

	mp = (const void *)ofp_msg_check(msg, len, SL_OFPT_MULTIPART_REQUEST, sizeof(*mp), err);
	if (mp == NULL)
		return -1;
	memset(req, 0, offsetof(struct sl_ofp_mp_request, flow));
	req->type = sl_ofp_ntoh16(mp->type);
	req->flags = sl_ofp_ntoh16(mp->flags);
	body = (const uint8_t *)(mp + 1);
	blen = len - sizeof(*mp);

	switch (req->type) {
	case SL_OFPMP_DESC:
	case SL_OFPMP_TABLE:
	case SL_OFPMP_GROUP_DESC:
	case SL_OFPMP_GROUP_FEATURES:
	case SL_OFPMP_METER_FEATURES:
	case SL_OFPMP_PORT_DESC:
		return blen == 0 ? 0 : FAIL_BRC(err, BAD_LEN);
	case SL_OFPMP_TABLE_FEATURES:
		/* A body would set the table features: not allowed (section 7.3.5.18). */
		return blen == 0 ? 0
				 : ofp_fail(err, SL_OFPET_TABLE_FEATURES_FAILED, SL_OFPTFFC_EPERM);
	case SL_OFPMP_PORT_STATS:
	case SL_OFPMP_QUEUE:
	case SL_OFPMP_GROUP:
	case SL_OFPMP_METER:
	case SL_OFPMP_METER_CONFIG:
		/* All five bodies are 8 bytes: one or two 32-bit ids. */
		if (blen != 8)
			return FAIL_BRC(err, BAD_LEN);
		if (req->type == SL_OFPMP_QUEUE) {
			req->queue.port_no = rd32(body);
			req->queue.queue_id = rd32(body + 4);
		} else if (req->type == SL_OFPMP_PORT_STATS) {
			req->port_no = rd32(body);
		} else if (req->type == SL_OFPMP_GROUP) {
			req->group_id = rd32(body);
		} else {
			req->meter_id = rd32(body);
		}
		return 0;
	case SL_OFPMP_FLOW:
	case SL_OFPMP_AGGREGATE: {
		const struct ofp_flow_stats_request *fr = (const void *)body;
		struct sl_ofp_flow_stats_request *f = &req->flow;
		size_t match_len;

		if (blen < sizeof(*fr) + OFP_MATCH_EMPTY_LEN)
			return FAIL_BRC(err, BAD_LEN);
		f->table_id = fr->table_id;
		f->out_port = sl_ofp_ntoh32(fr->out_port);
		f->out_group = sl_ofp_ntoh32(fr->out_group);
		f->cookie = sl_ofp_ntoh64(fr->cookie);
		f->cookie_mask = sl_ofp_ntoh64(fr->cookie_mask);
		if (f->table_id >= SL_TABLES_MAX && f->table_id != SL_OFPTT_ALL)
			return FAIL_BRC(err, BAD_TABLE_ID);
		if (sl_ofp_match_decode(body + sizeof(*fr), blen - sizeof(*fr), &f->match,
					&match_len, err) < 0)
			return -1;
		if (match_len != blen - sizeof(*fr))
			return FAIL_BRC(err, BAD_LEN);
		return 0;
	}
	case SL_OFPMP_EXPERIMENTER:
		return FAIL_BRC(err, BAD_EXPERIMENTER);
	default:
		return FAIL_BRC(err, BAD_MULTIPART);
	}
}

int
sl_ofp_mp_request_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_ofp_mp_request *req)
{
	size_t start = b->len;
	uint8_t *p;

	p = ofp_msg_start(b, SL_OFPT_MULTIPART_REQUEST, xid, sizeof(struct ofp_multipart));
	if (p == NULL)
		return -ENOMEM;
	wr16(p + 8, req->type);
	wr16(p + 10, req->flags);
	switch (req->type) {
	case SL_OFPMP_PORT_STATS:
	case SL_OFPMP_QUEUE:
	case SL_OFPMP_GROUP:
	case SL_OFPMP_METER:
	case SL_OFPMP_METER_CONFIG:
		if ((p = ofp_buf_put(b, 8)) == NULL)
			goto nomem;
		wr32(p, req->type == SL_OFPMP_QUEUE        ? req->queue.port_no
			: req->type == SL_OFPMP_PORT_STATS ? req->port_no
			: req->type == SL_OFPMP_GROUP      ? req->group_id
							   : req->meter_id);
		if (req->type == SL_OFPMP_QUEUE)
			wr32(p + 4, req->queue.queue_id);
		break;
	case SL_OFPMP_FLOW:
	case SL_OFPMP_AGGREGATE: {
		struct ofp_flow_stats_request *fr = (void *)ofp_buf_put(b, sizeof(*fr));
		if (fr == NULL)
			goto nomem;
		fr->table_id = req->flow.table_id;
		fr->out_port = sl_ofp_hton32(req->flow.out_port);
		fr->out_group = sl_ofp_hton32(req->flow.out_group);
		fr->cookie = sl_ofp_hton64(req->flow.cookie);
		fr->cookie_mask = sl_ofp_hton64(req->flow.cookie_mask);
		if (sl_ofp_match_encode(b, &req->flow.match) < 0)
			goto nomem;
		break;
	}
	default:
		break;
	}
	return ofp_msg_end(b, start);

nomem:
	b->len = start;
	return -ENOMEM;
}

/*
 * Request reassembly (ofp.h: "Multipart request reassembly").
 */

/* Types whose request body is an array: their pieces' bodies are concatenated. */
static bool
mp_body_is_array(uint16_t type)
{
	return type == SL_OFPMP_TABLE_FEATURES;
}

void
sl_ofp_mp_assembler_init(struct sl_ofp_mp_assembler *a)
{
	memset(a, 0, sizeof(*a));
}

/* Forget open request @i (its bytes leave the bound). */
static void
mp_open_drop(struct sl_ofp_mp_assembler *a, unsigned i)
{
	struct sl_ofp_mp_open *o = &a->open[i];

	a->held -= o->size;
	sl_ofp_buf_free(&o->msg);
	*o = a->open[--a->n_open];
	memset(&a->open[a->n_open], 0, sizeof(a->open[0]));
}

void
sl_ofp_mp_assembler_clear(struct sl_ofp_mp_assembler *a)
{
	while (a->n_open > 0)
		mp_open_drop(a, a->n_open - 1);
	sl_ofp_buf_free(&a->done);
}

/* mp_open_drop, then the error: the sequence ends with it. */
static int
mp_open_fail(struct sl_ofp_mp_assembler *a, unsigned i, struct sl_ofp_error *err, uint16_t code)
{
	mp_open_drop(a, i);
	return ofp_fail(err, SL_OFPET_BAD_REQUEST, code);
}

int
sl_ofp_mp_assemble(struct sl_ofp_mp_assembler *a, const void *msg, size_t len, const uint8_t **req,
		   size_t *req_len, struct sl_ofp_error *err)
{
	const uint8_t *m = ofp_msg_check(msg, len, SL_OFPT_MULTIPART_REQUEST,
					 sizeof(struct ofp_multipart), err);
	const size_t hlen = sizeof(struct ofp_multipart);
	struct sl_ofp_mp_open *o;
	unsigned i;

	if (m == NULL)
		return -1;
	uint32_t xid = rd32(m + 4);
	uint16_t type = rd16(m + 8);
	bool more = rd16(m + 10) & SL_OFPMPF_REQ_MORE;
	size_t blen = len - hlen;

	for (i = 0; i < a->n_open && a->open[i].xid != xid; i++)
		;
	if (i == a->n_open) {
		if (!more) { /* the common case: a whole request, no copy */
			*req = m;
			*req_len = len;
			return 1;
		}
		if (a->n_open == SL_OFP_MP_OPEN_MAX)
			return FAIL_BRC(err, MULTIPART_BUFFER_OVERFLOW);
		o = &a->open[a->n_open++];
		memset(o, 0, sizeof(*o));
		o->xid = xid;
		o->type = type;
		if (ofp_buf_put_bytes(&o->msg, m, hlen) < 0)
			return mp_open_fail(a, i, err, SL_OFPBRC_MULTIPART_BUFFER_OVERFLOW);
	}
	o = &a->open[i];
	if (o->type != type)
		return mp_open_fail(a, i, err, SL_OFPBRC_BAD_MULTIPART);
	/* Every piece counts whole, so an endless run of empty pieces ends too. */
	if (len > SL_OFP_MP_HELD_MAX - a->held)
		return mp_open_fail(a, i, err, SL_OFPBRC_MULTIPART_BUFFER_OVERFLOW);
	if (blen > 0) {
		if (mp_body_is_array(type)) {
			if (o->msg.len + blen > UINT16_MAX)
				return mp_open_fail(a, i, err, SL_OFPBRC_MULTIPART_BUFFER_OVERFLOW);
		} else {
			/* The whole body in one piece: check it now, as a request of its own. */
			if (o->has_body)
				return mp_open_fail(a, i, err, SL_OFPBRC_BAD_MULTIPART);
			if (sl_ofp_mp_request_decode(m, len, &a->scratch, err) < 0) {
				mp_open_drop(a, i);
				return -1;
			}
		}
		if (ofp_buf_put_bytes(&o->msg, m + hlen, blen) < 0)
			return mp_open_fail(a, i, err, SL_OFPBRC_MULTIPART_BUFFER_OVERFLOW);
		o->has_body = true;
	}
	o->size += len;
	a->held += len;
	if (more)
		return 0;

	/* The last piece: the request is whole.  Hand its buffer over, then close it. */
	struct sl_ofp_buf whole = o->msg;
	sl_ofp_buf_init(&o->msg);
	mp_open_drop(a, i);
	sl_ofp_buf_free(&a->done);
	a->done = whole;
	wr16(a->done.data + 2, (uint16_t)a->done.len);
	wr16(a->done.data + 10, 0);
	*req = a->done.data;
	*req_len = a->done.len;
	return 1;
}

/*
 * Single-message replies.
 */

/* Start a multipart reply message of @type with a body of @body_len zero bytes. */
static uint8_t *
mp_reply_start(struct sl_ofp_buf *b, uint32_t xid, uint16_t type, size_t body_len)
{
	size_t size = sizeof(struct ofp_multipart) + body_len;
	uint8_t *p = ofp_msg_start(b, SL_OFPT_MULTIPART_REPLY, xid, size);

	if (p == NULL)
		return NULL;
	wr16(p + 2, (uint16_t)size);
	wr16(p + 8, type);
	return p + sizeof(struct ofp_multipart);
}

/* Copy a C string into a fixed NUL-padded wire field, keeping the final NUL. */
static void
put_str(char *dst, size_t size, const char *src)
{
	if (src != NULL)
		memcpy(dst, src, strnlen(src, size - 1));
}

int
sl_ofp_desc_reply_encode(struct sl_ofp_buf *b, uint32_t xid, const struct sl_ofp_desc *d)
{
	struct ofp_desc *od = (void *)mp_reply_start(b, xid, SL_OFPMP_DESC, sizeof(*od));

	if (od == NULL)
		return -ENOMEM;
	put_str(od->mfr_desc, sizeof(od->mfr_desc), d->mfr_desc);
	put_str(od->hw_desc, sizeof(od->hw_desc), d->hw_desc);
	put_str(od->sw_desc, sizeof(od->sw_desc), d->sw_desc);
	put_str(od->serial_num, sizeof(od->serial_num), d->serial_num);
	put_str(od->dp_desc, sizeof(od->dp_desc), d->dp_desc);
	return 0;
}

int
sl_ofp_aggregate_reply_encode(struct sl_ofp_buf *b, uint32_t xid, uint64_t packet_count,
			      uint64_t byte_count, uint32_t flow_count)
{
	struct ofp_aggregate_stats_reply *ar;

	ar = (void *)mp_reply_start(b, xid, SL_OFPMP_AGGREGATE, sizeof(*ar));
	if (ar == NULL)
		return -ENOMEM;
	ar->packet_count = sl_ofp_hton64(packet_count);
	ar->byte_count = sl_ofp_hton64(byte_count);
	ar->flow_count = sl_ofp_hton32(flow_count);
	return 0;
}

int
sl_ofp_group_features_reply_encode(struct sl_ofp_buf *b, uint32_t xid,
				   const struct sl_ofp_group_features *gf)
{
	struct ofp_group_features *og;

	og = (void *)mp_reply_start(b, xid, SL_OFPMP_GROUP_FEATURES, sizeof(*og));
	if (og == NULL)
		return -ENOMEM;
	og->types = sl_ofp_hton32(gf->types);
	og->capabilities = sl_ofp_hton32(gf->capabilities);
	for (unsigned i = 0; i < 4; i++) {
		og->max_groups[i] = sl_ofp_hton32(gf->max_groups[i]);
		og->actions[i] = sl_ofp_hton32(gf->actions[i]);
	}
	return 0;
}

int
sl_ofp_meter_features_reply_encode(struct sl_ofp_buf *b, uint32_t xid,
				   const struct sl_ofp_meter_features *mf)
{
	struct ofp_meter_features *om;

	om = (void *)mp_reply_start(b, xid, SL_OFPMP_METER_FEATURES, sizeof(*om));
	if (om == NULL)
		return -ENOMEM;
	om->max_meter = sl_ofp_hton32(mf->max_meter);
	om->band_types = sl_ofp_hton32(mf->band_types);
	om->capabilities = sl_ofp_hton32(mf->capabilities);
	om->max_bands = mf->max_bands;
	om->max_color = mf->max_color;
	return 0;
}

/*
 * The reply writer.
 *
 * Entries are encoded straight at the end of the buffer.  Only once an
 * entry is complete is its size known (flow entries carry a variable match
 * and instruction list), so when it overflows the open message it is moved
 * 16 bytes up and a fresh multipart header is written in front of it.
 */

static void
mp_header_write(uint8_t *p, const struct sl_ofp_mp_writer *w)
{
	memset(p, 0, sizeof(struct ofp_multipart));
	p[0] = SL_OFP_VERSION;
	p[1] = SL_OFPT_MULTIPART_REPLY;
	wr32(p + 4, w->xid);
	wr16(p + 8, w->type);
}

/* Hand the complete message at [base, msg_start) to the callback and drop it. */
static int
mp_flush(struct sl_ofp_mp_writer *w)
{
	struct sl_ofp_buf *b = w->buf;
	size_t n = w->msg_start - w->base;

	if (w->flush == NULL || n == 0)
		return 0;
	if (w->flush(w->arg, b->data + w->base, n) != 0)
		return -ECANCELED;
	memmove(b->data + w->base, b->data + w->msg_start, b->len - w->msg_start);
	b->len -= n;
	w->msg_start = w->base;
	return 0;
}

int
sl_ofp_mp_writer_begin(struct sl_ofp_mp_writer *w, struct sl_ofp_buf *b, uint16_t type,
		       uint32_t xid, sl_ofp_mp_flush_fn flush, void *arg)
{
	uint8_t *p;

	w->buf = b;
	w->flush = flush;
	w->arg = arg;
	w->type = type;
	w->xid = xid;
	w->base = w->msg_start = b->len;
	w->n_msgs = 0;
	w->error = 0;
	p = ofp_buf_put(b, sizeof(struct ofp_multipart));
	if (p == NULL)
		return w->error = -ENOMEM;
	mp_header_write(p, w);
	w->n_msgs = 1;
	return 0;
}

/*
 * Account for the entry just encoded at [e, buf->len): keep it in the open
 * message, or close that message (REPLY_MORE) and open a new one around it.
 */
static int
mp_entry_done(struct sl_ofp_mp_writer *w, size_t e)
{
	struct sl_ofp_buf *b = w->buf;
	size_t elen = b->len - e;
	const size_t hdr = sizeof(struct ofp_multipart);
	int rc;

	if (b->len - w->msg_start <= SL_OFP_MSG_MAX)
		return 0;
	if (elen > SL_OFP_MSG_MAX - hdr) {
		b->len = e;
		return w->error = -EMSGSIZE;
	}
	if ((rc = ofp_buf_reserve(b, hdr)) < 0) {
		b->len = e;
		return w->error = rc;
	}
	/* Close the open message before the entry. */
	wr16(b->data + w->msg_start + 2, (uint16_t)(e - w->msg_start));
	wr16(b->data + w->msg_start + 10, SL_OFPMPF_REPLY_MORE);
	/* Open the next one: header in front of the entry. */
	memmove(b->data + e + hdr, b->data + e, elen);
	mp_header_write(b->data + e, w);
	b->len += hdr;
	w->msg_start = e;
	w->n_msgs++;
	if ((rc = mp_flush(w)) < 0)
		return w->error = rc;
	return 0;
}

int
sl_ofp_mp_writer_end(struct sl_ofp_mp_writer *w)
{
	struct sl_ofp_buf *b = w->buf;
	int rc;

	if (w->error)
		return w->error;
	wr16(b->data + w->msg_start + 2, (uint16_t)(b->len - w->msg_start));
	w->msg_start = b->len;
	if ((rc = mp_flush(w)) < 0)
		return w->error = rc;
	return 0;
}

/* Common prologue of the appenders: sticky error, then the entry's start offset. */
#define MP_ENTRY_BEGIN(w, e)                                                                       \
	do {                                                                                       \
		if ((w)->error)                                                                    \
			return (w)->error;                                                         \
		(e) = (w)->buf->len;                                                               \
	} while (0)

/* Append a fixed-size entry of @size zero bytes; NULL (and the sticky error) on ENOMEM. */
static uint8_t *
mp_fixed_entry(struct sl_ofp_mp_writer *w, size_t size)
{
	uint8_t *p;

	if (w->error)
		return NULL;
	p = ofp_buf_put(w->buf, size);
	if (p == NULL)
		w->error = -ENOMEM;
	return p;
}

int
sl_ofp_mp_flow_stats_append(struct sl_ofp_mp_writer *w, const struct sl_flow_spec *fs,
			    const struct sl_ofp_flow_stats *st)
{
	struct sl_ofp_buf *b = w->buf;
	struct ofp_flow_stats *ofs;
	size_t e;
	int rc;

	MP_ENTRY_BEGIN(w, e);
	ofs = (void *)ofp_buf_put(b, sizeof(*ofs));
	if (ofs == NULL)
		return w->error = -ENOMEM;
	ofs->table_id = fs->table_id;
	ofs->duration_sec = sl_ofp_hton32(st->duration_sec);
	ofs->duration_nsec = sl_ofp_hton32(st->duration_nsec);
	ofs->priority = sl_ofp_hton16(fs->priority);
	ofs->idle_timeout = sl_ofp_hton16(fs->idle_timeout);
	ofs->hard_timeout = sl_ofp_hton16(fs->hard_timeout);
	ofs->flags = sl_ofp_hton16(fs->flags);
	ofs->cookie = sl_ofp_hton64(fs->cookie);
	ofs->packet_count = sl_ofp_hton64(st->packet_count);
	ofs->byte_count = sl_ofp_hton64(st->byte_count);
	if ((rc = sl_ofp_match_encode(b, &fs->match)) < 0 ||
	    (rc = sl_ofp_instructions_encode(b, &fs->insns)) < 0) {
		b->len = e;
		return w->error = rc;
	}
	wr16(b->data + e, (uint16_t)SL_MIN(b->len - e, (size_t)UINT16_MAX));
	return mp_entry_done(w, e);
}

int
sl_ofp_mp_table_stats_append(struct sl_ofp_mp_writer *w, const struct sl_ofp_table_stats *ts)
{
	size_t e = w->buf->len;
	struct ofp_table_stats *o = (void *)mp_fixed_entry(w, sizeof(*o));

	if (o == NULL)
		return w->error;
	o->table_id = ts->table_id;
	o->active_count = sl_ofp_hton32(ts->active_count);
	o->lookup_count = sl_ofp_hton64(ts->lookup_count);
	o->matched_count = sl_ofp_hton64(ts->matched_count);
	return mp_entry_done(w, e);
}

int
sl_ofp_mp_port_stats_append(struct sl_ofp_mp_writer *w, const struct sl_ofp_port_stats *ps)
{
	size_t e = w->buf->len;
	struct ofp_port_stats *o = (void *)mp_fixed_entry(w, sizeof(*o));

	if (o == NULL)
		return w->error;
	o->port_no = sl_ofp_hton32(ps->port_no);
	o->rx_packets = sl_ofp_hton64(ps->rx_packets);
	o->tx_packets = sl_ofp_hton64(ps->tx_packets);
	o->rx_bytes = sl_ofp_hton64(ps->rx_bytes);
	o->tx_bytes = sl_ofp_hton64(ps->tx_bytes);
	o->rx_dropped = sl_ofp_hton64(ps->rx_dropped);
	o->tx_dropped = sl_ofp_hton64(ps->tx_dropped);
	o->rx_errors = sl_ofp_hton64(ps->rx_errors);
	o->tx_errors = sl_ofp_hton64(ps->tx_errors);
	o->rx_frame_err = sl_ofp_hton64(ps->rx_frame_err);
	o->rx_over_err = sl_ofp_hton64(ps->rx_over_err);
	o->rx_crc_err = sl_ofp_hton64(ps->rx_crc_err);
	o->collisions = sl_ofp_hton64(ps->collisions);
	o->duration_sec = sl_ofp_hton32(ps->duration_sec);
	o->duration_nsec = sl_ofp_hton32(ps->duration_nsec);
	return mp_entry_done(w, e);
}

int
sl_ofp_mp_queue_stats_append(struct sl_ofp_mp_writer *w, const struct sl_ofp_queue_stats *qs)
{
	size_t e = w->buf->len;
	uint8_t *o = mp_fixed_entry(w, 40); /* ofp_queue_stats */

	if (o == NULL)
		return w->error;
	wr32(o, qs->port_no);
	wr32(o + 4, qs->queue_id);
	const uint64_t v[3] = {qs->tx_bytes, qs->tx_packets, qs->tx_errors};
	for (unsigned k = 0; k < 3; k++) {
		wr32(o + 8 + 8 * k, (uint32_t)(v[k] >> 32));
		wr32(o + 12 + 8 * k, (uint32_t)v[k]);
	}
	wr32(o + 32, qs->duration_sec);
	wr32(o + 36, qs->duration_nsec);
	return mp_entry_done(w, e);
}

int
sl_ofp_mp_port_desc_append(struct sl_ofp_mp_writer *w, const struct sl_ofp_port_desc *pd)
{
	size_t e = w->buf->len;
	struct ofp_port *o = (void *)mp_fixed_entry(w, sizeof(*o));

	if (o == NULL)
		return w->error;
	ofp_port_fill(o, pd);
	return mp_entry_done(w, e);
}

int
sl_ofp_mp_group_stats_append(struct sl_ofp_mp_writer *w, const struct sl_ofp_group_stats *gs)
{
	unsigned n = SL_MIN(gs->n_buckets, (unsigned)SL_GROUP_BUCKETS_MAX);
	size_t e = w->buf->len,
	       size = sizeof(struct ofp_group_stats) + n * sizeof(struct ofp_bucket_counter);
	struct ofp_group_stats *o = (void *)mp_fixed_entry(w, size);
	struct ofp_bucket_counter *bc;

	if (o == NULL)
		return w->error;
	o->length = sl_ofp_hton16((uint16_t)size);
	o->group_id = sl_ofp_hton32(gs->group_id);
	o->ref_count = sl_ofp_hton32(gs->ref_count);
	o->packet_count = sl_ofp_hton64(gs->packet_count);
	o->byte_count = sl_ofp_hton64(gs->byte_count);
	o->duration_sec = sl_ofp_hton32(gs->duration_sec);
	o->duration_nsec = sl_ofp_hton32(gs->duration_nsec);
	bc = (void *)(o + 1);
	for (unsigned i = 0; i < n; i++) {
		bc[i].packet_count = sl_ofp_hton64(gs->buckets[i].packet_count);
		bc[i].byte_count = sl_ofp_hton64(gs->buckets[i].byte_count);
	}
	return mp_entry_done(w, e);
}

int
sl_ofp_mp_group_desc_append(struct sl_ofp_mp_writer *w, const struct sl_group_spec *gs)
{
	struct sl_ofp_buf *b = w->buf;
	struct ofp_group_desc *o;
	size_t e;
	int rc;

	MP_ENTRY_BEGIN(w, e);
	o = (void *)ofp_buf_put(b, sizeof(*o));
	if (o == NULL)
		return w->error = -ENOMEM;
	o->type = gs->type;
	o->group_id = sl_ofp_hton32(gs->group_id);
	if ((rc = ofp_buckets_encode(b, gs)) < 0) {
		b->len = e;
		return w->error = rc;
	}
	wr16(b->data + e, (uint16_t)SL_MIN(b->len - e, (size_t)UINT16_MAX));
	return mp_entry_done(w, e);
}

int
sl_ofp_mp_meter_stats_append(struct sl_ofp_mp_writer *w, uint32_t meter_id, uint32_t duration_sec,
			     uint32_t duration_nsec, const struct sl_meter_stats *st)
{
	unsigned n = SL_MIN(st->n_bands, (unsigned)SL_METER_BANDS_MAX);
	size_t e = w->buf->len,
	       size = sizeof(struct ofp_meter_stats) + n * sizeof(struct ofp_meter_band_stats);
	struct ofp_meter_stats *o = (void *)mp_fixed_entry(w, size);
	struct ofp_meter_band_stats *bc;

	if (o == NULL)
		return w->error;
	o->meter_id = sl_ofp_hton32(meter_id);
	o->len = sl_ofp_hton16((uint16_t)size);
	o->flow_count = sl_ofp_hton32(st->flow_count);
	o->packet_in_count = sl_ofp_hton64(st->packets);
	o->byte_in_count = sl_ofp_hton64(st->bytes);
	o->duration_sec = sl_ofp_hton32(duration_sec);
	o->duration_nsec = sl_ofp_hton32(duration_nsec);
	bc = (void *)(o + 1);
	for (unsigned i = 0; i < n; i++) {
		bc[i].packet_band_count = sl_ofp_hton64(st->band_packets[i]);
		bc[i].byte_band_count = sl_ofp_hton64(st->band_bytes[i]);
	}
	return mp_entry_done(w, e);
}

int
sl_ofp_mp_meter_config_append(struct sl_ofp_mp_writer *w, const struct sl_meter_spec *ms)
{
	struct sl_ofp_buf *b = w->buf;
	struct ofp_meter_config *o;
	size_t e;

	MP_ENTRY_BEGIN(w, e);
	o = (void *)ofp_buf_put(b, sizeof(*o));
	if (o == NULL)
		return w->error = -ENOMEM;
	o->flags = sl_ofp_hton16(ms->flags);
	o->meter_id = sl_ofp_hton32(ms->meter_id);
	if (ofp_meter_bands_encode(b, ms) < 0) {
		b->len = e;
		return w->error = -ENOMEM;
	}
	wr16(b->data + e, (uint16_t)(b->len - e));
	return mp_entry_done(w, e);
}

/*
 * Table features.
 */

/* Open a property; returns its offset. */
static size_t
prop_begin(struct sl_ofp_buf *b, uint16_t type, int *rc)
{
	size_t start = b->len;
	uint8_t *p = ofp_buf_put(b, sizeof(struct ofp_table_feature_prop_header));

	if (p == NULL)
		*rc = -ENOMEM;
	else
		wr16(p, type);
	return start;
}

/* Close a property: length without padding, then zero padding to 8. */
static void
prop_end(struct sl_ofp_buf *b, size_t start, int *rc)
{
	size_t len = b->len - start;

	if (*rc)
		return;
	wr16(b->data + start + 2, (uint16_t)len);
	if (pad8(len) != len && ofp_buf_put(b, pad8(len) - len) == NULL)
		*rc = -ENOMEM;
}

/* Append a 4-byte instruction or action id (type, len 4). */
static void
put_id(struct sl_ofp_buf *b, uint16_t type, int *rc)
{
	uint8_t *p;

	if (*rc)
		return;
	if ((p = ofp_buf_put(b, 4)) == NULL) {
		*rc = -ENOMEM;
		return;
	}
	wr16(p, type);
	wr16(p + 2, 4);
}

/* Append an OXM id for @f (OXM basic fields only; others are skipped). */
static void
put_oxm_id(struct sl_ofp_buf *b, const struct sl_field *f, bool hasmask, int *rc)
{
	int oxm = f->id == SL_FIELD_RAW ? -1 : sl_field_oxm(f->id);
	uint8_t *p;

	if (*rc || oxm < 0)
		return;
	if ((p = ofp_buf_put(b, 4)) == NULL) {
		*rc = -ENOMEM;
		return;
	}
	wr32(p, OXM_HEADER(OFPXMC_OPENFLOW_BASIC, oxm, hasmask,
			   ofp_field_wire_size(f) * (hasmask ? 2 : 1)));
}

/* The match fields of a table: its declared fields, or every OXM basic field. */
static unsigned
tf_fields(const struct sl_ofp_table_features *tf, struct sl_field *out)
{
	unsigned n = 0;

	if (tf->n_fields) {
		for (unsigned i = 0; i < tf->n_fields && i < SL_KEY_FIELDS_MAX; i++)
			out[n++] = tf->fields[i];
		return n;
	}
	for (unsigned id = 0; id < SL_FIELD__MAX; id++)
		if (sl_field_oxm(id) >= 0)
			out[n++] = (struct sl_field){.id = (uint8_t)id};
	return n;
}

int
sl_ofp_mp_table_features_append(struct sl_ofp_mp_writer *w, const struct sl_ofp_table_features *tf)
{
	static const uint16_t insns[] = {SL_OFPIT_GOTO_TABLE,    SL_OFPIT_WRITE_METADATA,
					 SL_OFPIT_WRITE_ACTIONS, SL_OFPIT_APPLY_ACTIONS,
					 SL_OFPIT_CLEAR_ACTIONS, SL_OFPIT_METER};
	struct sl_field fields[SL_FIELD__MAX + SL_KEY_FIELDS_MAX];
	struct sl_ofp_buf *b = w->buf;
	struct ofp_table_features *o;
	unsigned n_fields;
	size_t e, pr;
	int rc = 0;

	MP_ENTRY_BEGIN(w, e);
	o = (void *)ofp_buf_put(b, sizeof(*o));
	if (o == NULL)
		return w->error = -ENOMEM;
	o->table_id = tf->table_id;
	put_str(o->name, sizeof(o->name), tf->name);
	o->metadata_match = sl_ofp_hton64(tf->metadata_match);
	o->metadata_write = sl_ofp_hton64(tf->metadata_write);
	o->config = sl_ofp_hton32(tf->config);
	o->max_entries = sl_ofp_hton32(tf->max_entries);

	pr = prop_begin(b, OFPTFPT_INSTRUCTIONS, &rc);
	for (unsigned i = 0; i < SL_ARRAY_SIZE(insns); i++)
		if (insns[i] != SL_OFPIT_GOTO_TABLE || tf->table_id + 1 < SL_TABLES_MAX)
			put_id(b, insns[i], &rc);
	prop_end(b, pr, &rc);

	pr = prop_begin(b, OFPTFPT_NEXT_TABLES, &rc);
	for (unsigned t = tf->table_id + 1u; t < SL_TABLES_MAX && !rc; t++) {
		uint8_t *p = ofp_buf_put(b, 1);
		if (p == NULL)
			rc = -ENOMEM;
		else
			*p = (uint8_t)t;
	}
	prop_end(b, pr, &rc);

	for (unsigned k = 0; k < 2; k++) {
		pr = prop_begin(b, k ? OFPTFPT_APPLY_ACTIONS : OFPTFPT_WRITE_ACTIONS, &rc);
		for (unsigned t = 0; t < 32; t++)
			if (SL_OFP_ACTIONS_SUPPORTED & (1u << t))
				put_id(b, (uint16_t)t, &rc);
		prop_end(b, pr, &rc);
	}

	/*
	 * Match and wildcards: a mask table masks what the flow syntax masks
	 * and may leave any field out; lpm masks (prefixes) and may omit its
	 * one field; direct and exact tables need every field exactly.
	 */
	n_fields = tf_fields(tf, fields);
	pr = prop_begin(b, OFPTFPT_MATCH, &rc);
	for (unsigned i = 0; i < n_fields; i++)
		put_oxm_id(b, &fields[i],
			   tf->kind == SL_TABLE_LPM ||
				   (tf->kind == SL_TABLE_MASK && sl_field_maskable(&fields[i])),
			   &rc);
	prop_end(b, pr, &rc);
	pr = prop_begin(b, OFPTFPT_WILDCARDS, &rc);
	if (tf->kind == SL_TABLE_LPM || tf->kind == SL_TABLE_MASK)
		for (unsigned i = 0; i < n_fields; i++)
			put_oxm_id(b, &fields[i], false, &rc);
	prop_end(b, pr, &rc);

	for (unsigned k = 0; k < 2; k++) {
		pr = prop_begin(b, k ? OFPTFPT_APPLY_SETFIELD : OFPTFPT_WRITE_SETFIELD, &rc);
		for (unsigned id = 0; id < SL_FIELD__MAX; id++)
			if (sl_field_oxm(id) >= 0 && sl_field_writable(id))
				put_oxm_id(b, &(struct sl_field){.id = (uint8_t)id}, false, &rc);
		prop_end(b, pr, &rc);
	}

	if (rc) {
		b->len = e;
		return w->error = rc;
	}
	wr16(b->data + e, (uint16_t)SL_MIN(b->len - e, (size_t)UINT16_MAX));
	return mp_entry_done(w, e);
}
