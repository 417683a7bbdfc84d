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
		n_l4 = proto == 6 ? 20 : proto == 17 ? 8 : proto == 132 ? 12 : proto == 1 ? 8
		       : proto == 58 ? (icmp6 == 135 || icmp6 == 136 ? 24 : 8) : 0;
		if (proto == 6)
			d[l4 + 12] = 5 << 4;
		if (proto == 58 && n_l4 == 24 && (find(m, SL_FIELD_IPV6_ND_SLL) != NULL ||
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
			sum = eth == 0x0800 ? csum_add(0, d + l3 + 12, 8) : csum_add(0, d + l3 + 8, 32);
			sum += n;
			sum = csum_add(sum, ph, 4);
		}
		uint16_t c = csum_fold(csum_add(sum, d + l4, n));
		wr16(d + l4 + off, proto == 17 && c == 0 ? 0xffff : c);
	}
	sl_pkt_reparse(p);
	return 0;
}
