/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet trace: a packet built from a match (or given whole) through the
 * real pipeline code on a context of its own (pipeline.h, "Packet trace").
 * What a trace must not change is skipped in pipeline_run.c and
 * state_stage.c where they test ctx->trace.
 */
#include "pipeline.h"
#include "pipeline_priv.h"
#include "ffp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Every output of the traced packet, copies first (the hooks' emit_copy). */
static int
trace_emit(void *arg, const struct sl_pkt *p, uint32_t port, const struct sl_pin *pin)
{
	struct sl_trace *tr = arg;

	(void)p;
	if (tr->n_outs == SL_TRACE_OUTS_MAX) {
		tr->truncated = true;
		return 0;
	}
	if (pin != NULL)
		tr->pins[tr->n_outs] = *pin;
	tr->outs[tr->n_outs++] = port;
	return 0;
}

/*
 * What answers each table's lookup once the datapath is warm: the trace
 * context is cold, so its own lookups all went to the tables' searches.  A
 * packet stays low-latency (may use the FFP's LUTs) until it wins a normal
 * entry.
 */
static void
trace_accels(const struct sl_pipeline *pl, struct sl_trace *tr)
{
	bool ll = true;

	for (unsigned k = 0; k < tr->n_steps; k++) {
		struct sl_trace_step *s = &tr->steps[k];
		const struct pl_dtable *pt;

		if (s->kind != SL_TRACE_HIT && s->kind != SL_TRACE_MISS)
			continue;
		pt = pl_live(&pl->tables[s->table_id]);
		if (pt->all_hit != NULL)
			s->accel = SL_TRACE_ACCEL_ONE;
		else if (pt->tbl != NULL && ll && (pt->ffp_on || pt->ffp_adapt))
			s->accel = SL_TRACE_ACCEL_LUT;
		else if (pt->tbl != NULL && pt->use_dcache)
			s->accel = SL_TRACE_ACCEL_DCACHE;
		else
			s->accel = SL_TRACE_ACCEL_SEARCH;
		if (s->kind == SL_TRACE_HIT)
			ll &= __atomic_load_n(&s->flow->ll, __ATOMIC_RELAXED) != 0;
	}
}

void
sl_pipeline_trace(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct sl_pkt *p,
		  struct sl_trace *out)
{
	const struct sl_pipeline_hooks hooks = {.emit_copy = trace_emit, .arg = out};
	uint32_t port;
	uint8_t drop = SL_DROP_NO_OUTPUT;

	memset(out, 0, sizeof(*out));
	ctx->trace = out;
	sl_pipeline_run_burst(pl, ctx, p, 1, &hooks, &port, &drop);
	ctx->trace = NULL;
	trace_accels(pl, out);
	pl_ffp_path_traced(pl, out);
	if (port == SL_PORT_DROP) {
		out->dropped = true;
		out->drop = drop;
		return;
	}
	trace_emit(out, p, port, port == SL_PORT_CONTROLLER ? sl_pipeline_pin(ctx, 0) : NULL);
}

/*
 * Frames for a trace.
 */

static uint16_t
csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t
csum_add(uint32_t sum, const uint8_t *d, unsigned n)
{
	for (unsigned i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(d[i] << 8 | d[i + 1]);
	if (n & 1)
		sum += (uint32_t)d[n - 1] << 8;
	return sum;
}

static const struct sl_match_field *
find(const struct sl_match *m, enum sl_field_id id)
{
	for (unsigned i = 0; i < m->n_fields; i++)
		if (m->fields[i].f.id == id)
			return &m->fields[i];
	return NULL;
}

/* A field's exact value as a number (fields up to 8 bytes), else @dflt. */
static uint64_t
value_of(const struct sl_match *m, enum sl_field_id id, uint64_t dflt)
{
	const struct sl_match_field *mf = find(m, id);
	uint64_t v = 0;

	if (mf == NULL)
		return dflt;
	for (unsigned i = 0; i < sl_field_size(&mf->f) && i < 8; i++)
		v = v << 8 | mf->value[i];
	return v;
}

static void
wr16(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

int
sl_trace_frame(const struct sl_match *m, uint8_t *buf, size_t cap, struct sl_pkt *p,
	       uint16_t headroom)
{
	uint16_t eth = (uint16_t)value_of(m, SL_FIELD_ETH_TYPE, 0);
	uint8_t proto = (uint8_t)value_of(m, SL_FIELD_IP_PROTO, 0);
	uint64_t vid = value_of(m, SL_FIELD_VLAN_VID, 0);
	uint8_t *d = buf + headroom;
	unsigned len = 12, l3, l4 = 0, n_l4 = 0, end = 0;

	if (cap < (size_t)headroom + 256)
		return -ENOSPC;
	memset(buf, 0, cap);
	if (vid & 0x1000) {
		wr16(d + 12, 0x8100);
		wr16(d + 14, (uint16_t)(vid & 0xfff));
		len += 4;
	}
	wr16(d + len, eth);
	len += 2;
	l3 = len;
	if (eth == 0x8847 || eth == 0x8848) {
		d[len + 2] = 1; /* bottom of stack; set_field gives label and TC */
		d[len + 3] = 64;
		len += 4;
		l3 = len;
	}
	if (eth == 0x0800) {
		d[l3] = 0x45;
		d[l3 + 8] = (uint8_t)value_of(m, SL_FIELD_IP_TTL, 64);
		d[l3 + 9] = proto;
		l4 = l3 + 20;
	} else if (eth == 0x86dd) {
		d[l3] = 0x60;
		d[l3 + 6] = proto;
		d[l3 + 7] = (uint8_t)value_of(m, SL_FIELD_IP_TTL, 64);
		l4 = l3 + 40;
	} else if (eth == 0x0806) {
		wr16(d + l3, 1);
		wr16(d + l3 + 2, 0x0800);
		d[l3 + 4] = 6;
		d[l3 + 5] = 4;
		len = l3 + 28;
	}
	if (l4 != 0) {
		uint64_t icmp6 = value_of(m, SL_FIELD_ICMPV6_TYPE, 0);
		n_l4 = proto == 6     ? 20
		       : proto == 17  ? 8
		       : proto == 132 ? 12
		       : proto == 1   ? 8
		       : proto == 58  ? (icmp6 == 135 || icmp6 == 136 ? 24 : 8)
				      : 0;
		if (proto == 6)
			d[l4 + 12] = 5 << 4;
		if (proto == 58 && n_l4 == 24 &&
		    (find(m, SL_FIELD_IPV6_ND_SLL) != NULL ||
		     find(m, SL_FIELD_IPV6_ND_TLL) != NULL)) {
			d[l4 + 24] = icmp6 == 135 ? 1 : 2; /* the link-layer address option */
			d[l4 + 25] = 1;
			n_l4 += 8;
		}
		end = len = l4 + n_l4 + 16; /* a little payload */
		if (eth == 0x0800)
			wr16(d + l3 + 2, (uint16_t)(end - l3));
		else
			wr16(d + l3 + 4, (uint16_t)(end - l4));
		if (proto == 17)
			wr16(d + l4 + 4, (uint16_t)(end - l4));
	}
	if (len < 60)
		len = 60;
	sl_pkt_init(p, d, (uint16_t)len, headroom, 0);
	/* Every field's value, in the layer it belongs to (prerequisites are in place). */
	for (unsigned i = 0; i < m->n_fields; i++) {
		const struct sl_match_field *mf = &m->fields[i];
		switch (mf->f.id) {
		case SL_FIELD_IN_PORT:
			p->in_port = (uint32_t)value_of(m, SL_FIELD_IN_PORT, 0);
			break;
		case SL_FIELD_METADATA:
			p->metadata = value_of(m, SL_FIELD_METADATA, 0);
			break;
		case SL_FIELD_TUNNEL_ID:
			p->tunnel_id = value_of(m, SL_FIELD_TUNNEL_ID, 0);
			break;
		case SL_FIELD_ETH_TYPE:
		case SL_FIELD_IP_PROTO:
		case SL_FIELD_IP_TTL:
		case SL_FIELD_IPV6_EXTHDR:
		case SL_FIELD_STATE:
			break; /* the frame's shape, or not in the frame */
		default:
			(void)sl_pkt_field_write(p, &mf->f, mf->value);
			break;
		}
	}
	/* Checksums from scratch: the writes above updated sums of a zero header. */
	if (eth == 0x0800) {
		wr16(d + l3 + 10, 0);
		wr16(d + l3 + 10, csum_fold(csum_add(0, d + l3, 20)));
	}
	if (l4 != 0 && (proto == 6 || proto == 17 || proto == 1 || proto == 58)) {
		unsigned off = proto == 6 ? 16 : proto == 17 ? 6 : 2, n = end - l4;
		uint32_t sum = 0;
		uint8_t ph[4] = {0, 0, 0, proto};
		wr16(d + l4 + off, 0);
		if (proto != 1) { /* pseudo-header */
			sum = eth == 0x0800 ? csum_add(0, d + l3 + 12, 8)
					    : csum_add(0, d + l3 + 8, 32);
			sum += n;
			sum = csum_add(sum, ph, 4);
		}
		uint16_t c = csum_fold(csum_add(sum, d + l4, n));
		wr16(d + l4 + off, proto == 17 && c == 0 ? 0xffff : c);
	}
	sl_pkt_reparse(p);
	return 0;
}

/*
 * Live trace (pipeline.h, "Live trace").  Workers claim records with one
 * atomic counter and publish each finished one with a release store of its
 * ready flag; the control thread reads a record only after an acquire load
 * of that flag sees it set.
 */

#define LIVE_HEADROOM 128 /* as a received mbuf's: push_vlan and push_mpls write into it */

/* A worker's own context and scratch frame: the trace may rewrite the frame. */
struct live_worker {
	struct sl_pipeline_ctx *ctx;
	uint8_t buf[LIVE_HEADROOM + SL_TRACE_LIVE_FRAME];
};

struct sl_trace_live {
	const struct sl_pipeline *pl;
	unsigned n_wanted;
	unsigned n_workers;
	uint32_t in_port; /* 0: any */
	unsigned claimed; /* records handed out (atomic; may run past n_wanted) */
	unsigned done;    /* records finished (atomic) */
	uint8_t *ready;   /* per record: 1 once finished (release) */
	struct live_worker *workers;
	struct sl_trace_live_rec *recs;
};

int
sl_trace_live_create(const struct sl_pipeline *pl, unsigned n_packets, uint32_t in_port,
		     unsigned n_workers, struct sl_trace_live **out)
{
	struct sl_trace_live *lt;

	*out = NULL;
	if (n_packets == 0 || n_packets > SL_TRACE_LIVE_MAX || n_workers == 0)
		return -EINVAL;
	lt = calloc(1, sizeof(*lt));
	if (lt == NULL)
		return -ENOMEM;
	lt->pl = pl;
	lt->n_wanted = n_packets;
	lt->n_workers = n_workers;
	lt->in_port = in_port;
	lt->ready = calloc(n_packets, 1);
	lt->recs = calloc(n_packets, sizeof(*lt->recs));
	lt->workers = calloc(n_workers, sizeof(*lt->workers));
	if (lt->ready == NULL || lt->recs == NULL || lt->workers == NULL)
		goto free_lt;
	for (unsigned i = 0; i < n_workers; i++)
		if ((lt->workers[i].ctx = sl_pipeline_ctx_create(pl)) == NULL)
			goto free_lt;
	*out = lt;
	return 0;
free_lt:
	sl_trace_live_destroy(lt);
	return -ENOMEM;
}

void
sl_trace_live_destroy(struct sl_trace_live *lt)
{
	if (lt == NULL)
		return;
	for (unsigned i = 0; lt->workers != NULL && i < lt->n_workers; i++)
		sl_pipeline_ctx_destroy(lt->workers[i].ctx);
	free(lt->workers);
	free(lt->recs);
	free(lt->ready);
	free(lt);
}

/* Trace one frame into @rec; keep the entries it won, which may go once the packet is gone. */
static void
live_one(const struct sl_trace_live *lt, struct live_worker *lw, struct sl_trace_live_rec *rec,
	 uint32_t in_port, const uint8_t *frame, uint16_t len)
{
	uint16_t n = len < SL_TRACE_LIVE_FRAME ? len : SL_TRACE_LIVE_FRAME;
	unsigned n_hits = 0;
	struct sl_pkt p;

	rec->in_port = in_port;
	rec->len = len;
	memcpy(rec->frame, frame, n);
	memcpy(lw->buf + LIVE_HEADROOM, frame, n);
	sl_pkt_init(&p, lw->buf + LIVE_HEADROOM, n, LIVE_HEADROOM, in_port);
	sl_pipeline_trace(lt->pl, lw->ctx, &p, &rec->tr);
	for (unsigned s = 0; s < rec->tr.n_steps; s++) {
		struct sl_trace_step *st = &rec->tr.steps[s];
		rec->hit_of[s] = 0xff;
		if (st->kind == SL_TRACE_HIT && n_hits < SL_TRACE_LIVE_HITS) {
			sl_flow_to_spec(st->flow, &rec->hit[n_hits]);
			rec->hit_of[s] = (uint8_t)n_hits++;
		}
		st->flow = NULL;
	}
}

bool
sl_trace_live_burst(struct sl_trace_live *lt, unsigned worker, uint32_t in_port,
		    const uint8_t *const frames[], const uint16_t lens[], unsigned n, uint64_t tsc)
{
	if (__atomic_load_n(&lt->claimed, __ATOMIC_RELAXED) >= lt->n_wanted)
		return false;
	if ((lt->in_port != 0 && in_port != lt->in_port) || worker >= lt->n_workers)
		return true;
	for (unsigned i = 0; i < n; i++) {
		unsigned k = __atomic_fetch_add(&lt->claimed, 1, __ATOMIC_RELAXED);
		struct sl_trace_live_rec *rec;
		if (k >= lt->n_wanted)
			return false;
		rec = &lt->recs[k];
		rec->tsc = tsc;
		rec->worker = worker;
		live_one(lt, &lt->workers[worker], rec, in_port, frames[i], lens[i]);
		__atomic_store_n(&lt->ready[k], 1, __ATOMIC_RELEASE);
		__atomic_fetch_add(&lt->done, 1, __ATOMIC_RELEASE);
	}
	return true;
}

unsigned
sl_trace_live_wanted(const struct sl_trace_live *lt)
{
	return lt->n_wanted;
}

unsigned
sl_trace_live_done(const struct sl_trace_live *lt)
{
	return __atomic_load_n(&lt->done, __ATOMIC_ACQUIRE);
}

uint32_t
sl_trace_live_port(const struct sl_trace_live *lt)
{
	return lt->in_port;
}

const struct sl_trace_live_rec *
sl_trace_live_get(const struct sl_trace_live *lt, unsigned i)
{
	if (i >= lt->n_wanted || !__atomic_load_n(&lt->ready[i], __ATOMIC_ACQUIRE))
		return NULL;
	return &lt->recs[i];
}
