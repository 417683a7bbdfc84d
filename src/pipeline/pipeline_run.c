/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fast path: running a burst through the tables and executing actions.
 *
 * Tables are visited in increasing id order over the whole burst; the lanes
 * waiting at a table are extracted and looked up together (one
 * lookup_burst per table per burst).  goto_table only goes forward, so a
 * single ascending sweep visits every stage a packet needs.
 *
 * Outputs: a packet's latest output is kept pending; only when the packet
 * is output again or modified is a copy emitted for the pending port.  A
 * packet with one output (the common case) is never copied.
 */
#include "pipeline.h"
#include "pipeline_priv.h"
#include "ffp.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

/*
 * Where a lane goes after an entry's instructions: a table id (>= 0), or one
 * of these.
 */
enum pl_next {
	PL_NEXT_END = -1,  /* the pipeline ends here: output what is pending */
	PL_NEXT_DROP = -2, /* an action dropped the packet (reason set) */
	PL_NEXT_SLOW = -3, /* a shortcut could not decide: run exec_flow */
};

struct sl_pipeline_ctx *
sl_pipeline_ctx_create(const struct sl_pipeline *pl)
{
	struct sl_pipeline_ctx *ctx;

	(void)pl;
	ctx = aligned_alloc(64, (sizeof(*ctx) + 63) / 64 * 64);
	if (ctx != NULL)
		memset(ctx, 0, sizeof(*ctx));
	if (ctx != NULL && (ctx->ffp = pl_ffp_ctx_create()) == NULL) {
		free(ctx);
		return NULL;
	}
	return ctx;
}

void
sl_pipeline_ctx_destroy(struct sl_pipeline_ctx *ctx)
{
	if (ctx != NULL)
		pl_ffp_ctx_destroy(ctx->ffp);
	free(ctx);
}

void
sl_pipeline_ctx_defer_credits(struct sl_pipeline_ctx *ctx, bool on)
{
	ctx->ffp->defer = on;
}

bool
sl_pipeline_ctx_credits_pending(const struct sl_pipeline_ctx *ctx)
{
	return ctx->ffp->n_dirty > 0;
}

void
sl_pipeline_ctx_flush_credits(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx)
{
	if (ctx->ffp->n_dirty > 0)
		pl_ffp_path_flush(pl, ctx);
}

/* The rest of this file runs on the workers. */

/* sl_pipeline_trace: record one step. */
static void
trace_step(struct sl_pipeline_ctx *ctx, uint8_t kind, unsigned t, const struct sl_flow *f,
	   uint32_t value)
{
	struct sl_trace *tr = ctx->trace;

	if (tr->n_steps == SL_TRACE_STEPS_MAX) {
		tr->truncated = true;
		return;
	}
	tr->steps[tr->n_steps++] = (struct sl_trace_step){
		.kind = kind, .table_id = (uint8_t)t, .flow = f, .value = value};
}

/* Queue @lanes (a bitmap) at @table for this burst. */
static inline void
lanes_push_set(struct sl_pipeline_ctx *ctx, unsigned table, uint64_t lanes)
{
	ctx->lanes_at[table] |= lanes;
	ctx->table_bits[table >> 6] |= UINT64_C(1) << (table & 63);
}

static inline void
lanes_push(struct sl_pipeline_ctx *ctx, unsigned table, unsigned lane)
{
	lanes_push_set(ctx, table, UINT64_C(1) << lane);
}

static inline int
next_table(struct sl_pipeline_ctx *ctx)
{
	for (unsigned w = 0; w < 4; w++) {
		if (ctx->table_bits[w]) {
			unsigned bit = (unsigned)__builtin_ctzll(ctx->table_bits[w]);
			ctx->table_bits[w] &= ctx->table_bits[w] - 1;
			return (int)(w * 64 + bit);
		}
	}
	return -1;
}

/* Emit the pending output of a packet as a copy (the packet is about to change or go elsewhere). */
static void
flush_pending(struct sl_pipeline_ctx *ctx, struct pkt_state *st, const struct sl_pkt *p,
	      const struct sl_pipeline_hooks *hooks)
{
	if (st->pending_out == 0)
		return;
	if (hooks != NULL && hooks->emit_copy != NULL &&
	    hooks->emit_copy(hooks->arg, p, st->pending_out,
			     st->pending_out == SL_PORT_CONTROLLER ? &st->pin : NULL) == 0)
		ctx->copies++;
	else {
		ctx->copies++;
		ctx->drops[SL_DROP_CLONE_FAILED]++;
	}
	st->pending_out = 0;
}

/* output:LOCAL (output_one's, for the one port whose number is no index). */
static void
output_local(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct pkt_state *st,
	     const struct sl_pkt *p, bool in_port_ok, const struct sl_pipeline_hooks *hooks)
{
	if (!pl->local_present) {
		st->skip_reason = SL_DROP_BAD_PORT;
		return;
	}
	if (p->in_port == SL_PORT_LOCAL && !in_port_ok) {
		st->skip_reason = SL_DROP_IN_PORT_LOOP;
		return;
	}
	if (!pl->local_up) {
		st->skip_reason = SL_DROP_PORT_DOWN;
		return;
	}
	flush_pending(ctx, st, p, hooks);
	st->pending_out = SL_PORT_LOCAL;
}

static void
output_one(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct pkt_state *st,
	   const struct sl_pkt *p, uint32_t port, bool in_port_ok,
	   const struct sl_pipeline_hooks *hooks)
{
	if (port == 0 || port > pl->n_ports) {
		if (port == SL_PORT_LOCAL)
			output_local(pl, ctx, st, p, in_port_ok, hooks);
		else
			st->skip_reason = SL_DROP_BAD_PORT;
		return;
	}
	if (port == p->in_port && !in_port_ok) {
		st->skip_reason = SL_DROP_IN_PORT_LOOP;
		return;
	}
	if (!pl->port_up[port]) {
		/* A deleted port is no port: bad-port, as one never added. */
		st->skip_reason = pl->port_present[port] ? SL_DROP_PORT_DOWN : SL_DROP_BAD_PORT;
		return;
	}
	/* After set_queue: the port's queue polices the output (a trace takes no tokens). */
	if (sl_unlikely(st->has_queue) && ctx->trace == NULL &&
	    !pl_queue_admit(pl, port, st->queue_id, p->len + p->tail, ctx->now)) {
		st->skip_reason = SL_DROP_QUEUE_RATE;
		return;
	}
	flush_pending(ctx, st, p, hooks);
	st->pending_out = port;
}

/* FLOOD and ALL: every live port but in_port, LOCAL included (as Open vSwitch floods). */
static void
output_flood(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct pkt_state *st,
	     const struct sl_pkt *p, const struct sl_pipeline_hooks *hooks)
{
	for (uint32_t i = 1; i <= pl->n_ports; i++)
		if (i != p->in_port && pl->port_up[i])
			output_one(pl, ctx, st, p, i, false, hooks);
	if (pl->local_up && p->in_port != SL_PORT_LOCAL)
		output_local(pl, ctx, st, p, false, hooks);
}

/*
 * output:NORMAL (pipeline.h): learn the source, then the learned port of the
 * destination, or a flood.  A frame shorter than an Ethernet header never
 * gets here (too-short).
 */
static void
normal_output(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct pkt_state *st,
	      const struct sl_pkt *p, const struct sl_pipeline_hooks *hooks)
{
	struct sl_pkt *q = (struct sl_pkt *)p; /* parse state only: the frame is not changed */
	uint16_t vlan;
	uint32_t port;

	sl_pkt_parse_l2(q);
	vlan = p->n_vlans
		       ? (uint16_t)((p->data[p->vlan_ofs] << 8 | p->data[p->vlan_ofs + 1]) & 0xfff)
		       : 0;
	if (!(p->data[6] & 1) &&
	    ((p->in_port >= 1 && p->in_port <= pl->n_ports) || p->in_port == SL_PORT_LOCAL) &&
	    ctx->trace == NULL)
		pl_fdb_learn(pl->fdb, vlan, p->data + 6, p->in_port, ctx->now);
	port = p->data[0] & 1 ? 0 : pl_fdb_lookup(pl->fdb, vlan, p->data, ctx->now);
	if (port == 0) {
		output_flood(pl, ctx, st, p, hooks);
		return;
	}
	output_one(pl, ctx, st, p, port, false, hooks); /* learned on in_port: in-port-loop */
}

static void
do_output(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct pkt_state *st,
	  const struct sl_pkt *p, uint32_t port, const struct sl_pipeline_hooks *hooks)
{
	if (port == SL_PORT_CONTROLLER) {
		/* The details go with the output, before the packet changes again. */
		const struct sl_flow *f = st->flow;
		st->pin.in_port = p->in_port;
		st->pin.metadata = p->metadata;
		st->pin.tunnel_id = p->tunnel_id;
		if (f != NULL) {
			st->pin.reason = (f->insn_flags & SL_INSN_TABLE_MISS) ? SL_PIN_NO_MATCH
									      : SL_PIN_ACTION;
			st->pin.table_id = f->table_id;
			st->pin.cookie = f->cookie;
		} else {
			st->pin.reason = SL_PIN_ACTION;
			st->pin.table_id = 0xff;
			st->pin.cookie = UINT64_MAX;
		}
	}
	switch (port) {
	case SL_PORT_IN_PORT:
		output_one(pl, ctx, st, p, p->in_port, true, hooks);
		return;
	case SL_PORT_NORMAL:
		normal_output(pl, ctx, st, p, hooks);
		return;
	case SL_PORT_FLOOD:
	case SL_PORT_ALL:
		output_flood(pl, ctx, st, p, hooks);
		return;
	case SL_PORT_CONTROLLER:
	case SL_PORT_TABLE: /* packet_out only (flows cannot hold it) */
		flush_pending(ctx, st, p, hooks);
		st->pending_out = port;
		return;
	default:
		output_one(pl, ctx, st, p, port, false, hooks);
		return;
	}
}

static bool
push_vlan(struct sl_pkt *p, uint16_t tpid)
{
	uint16_t tci = 0;

	if (p->headroom < 4 || p->len < 14)
		return false;
	sl_pkt_parse_l2(p);
	if (p->n_vlans)
		tci = (uint16_t)(p->data[p->vlan_ofs] << 8 | p->data[p->vlan_ofs + 1]);
	p->data -= 4;
	p->headroom -= 4;
	p->len += 4;
	memmove(p->data, p->data + 4, 12);
	p->data[12] = (uint8_t)(tpid >> 8);
	p->data[13] = (uint8_t)tpid;
	p->data[14] = (uint8_t)(tci >> 8);
	p->data[15] = (uint8_t)tci;
	sl_pkt_reparse(p);
	return true;
}

static bool
pop_vlan(struct sl_pkt *p)
{
	sl_pkt_parse_l2(p);
	if (p->n_vlans == 0)
		return false;
	memmove(p->data + 4, p->data, 12);
	p->data += 4;
	p->headroom += 4;
	p->len -= 4;
	sl_pkt_reparse(p);
	return true;
}

/*
 * IPv4 TTL / IPv6 hop limit access: returns the byte's offset, -1 when the
 * packet is not IP, -2 when its IP header lies about its length (pkt.h:
 * not IP for matching, where its TTL reads as 0).
 */
static int
ttl_ofs(struct sl_pkt *p)
{
	sl_pkt_parse_l2(p);
	if (p->eth_type != 0x0800 && p->eth_type != 0x86dd)
		return -1;
	if (p->ip_end == 0)
		return -2;
	return p->l3_ofs + (p->eth_type == 0x0800 ? 8 : 7);
}

static void
set_ttl(struct sl_pkt *p, uint8_t ttl)
{
	struct sl_field f = {.id = SL_FIELD_IP_TTL};

	sl_pkt_field_write(p, &f, &ttl);
}

/*
 * An 802.3 frame whose size behind its length field changes by @delta bytes
 * (a label pushed or popped behind an LLC/SNAP header): its length field
 * follows, so the frame stays the 802.3 frame it was.  False, having done
 * nothing, when the length would stop being a length (0x600 or more, or
 * below 0): the caller drops the packet.
 */
static bool
llc_len_adjust(struct sl_pkt *p, int delta)
{
	int lo = sl_pkt_llc_len_ofs(p);

	if (lo < 0 || (unsigned)lo + 2 >= p->l2_end)
		return true; /* Ethernet II, or plain LLC: the field is overwritten as a type */
	int v = (p->data[lo] << 8 | p->data[lo + 1]) + delta;
	if (v < 0 || v >= SL_ETH_TYPE_MIN)
		return false;
	p->data[lo] = (uint8_t)(v >> 8);
	p->data[lo + 1] = (uint8_t)v;
	return true;
}

/*
 * push_mpls (OpenFlow 1.3 section 5.12; as Open vSwitch does it): a label
 * after the Ethernet header and VLAN tags.  Over a label it copies that
 * label's fields (bottom of stack cleared); over anything else it is label 0
 * (IPv4 explicit null; 2, IPv6 explicit null, over IPv6), TC the low three
 * bits of the IP DSCP, TTL the IP TTL (64 when not IP or 0), bottom of stack.
 * On an LLC/SNAP frame (pkt.h, "IEEE 802.3 frames") the label goes after the
 * SNAP header, the SNAP type becomes @ethertype and the 802.3 length grows by
 * 4; Open vSwitch writes the type over the length field there, which breaks
 * the frame.  A plain LLC frame's length field becomes @ethertype (OVS too).
 */
static bool
push_mpls(struct sl_pkt *p, uint16_t ethertype)
{
	unsigned at;
	uint32_t lse;

	if (p->headroom < 4 || p->len < 14)
		return false;
	sl_pkt_parse_l2(p);
	at = p->l2_end;
	if (!llc_len_adjust(p, 4))
		return false;
	if ((p->eth_type == 0x8847 || p->eth_type == 0x8848) && at + 4 <= p->len) {
		const uint8_t *l = p->data + at;
		lse = ((uint32_t)l[0] << 24 | (uint32_t)l[1] << 16 | (uint32_t)l[2] << 8 | l[3]) &
		      ~0x100u;
	} else {
		uint32_t label = p->eth_type == 0x86dd ? 2 : 0, tc = 0, ttl = 64;
		if (p->ip_end != 0) {
			const uint8_t *ip = p->data + p->l3_ofs;
			unsigned tos = p->eth_type == 0x0800
					       ? ip[1]
					       : (unsigned)((ip[0] & 0xf) << 4 | ip[1] >> 4);
			uint8_t t = ip[p->eth_type == 0x0800 ? 8 : 7];
			tc = (tos >> 2) & 7;
			ttl = t ? t : 64;
		}
		lse = label << 12 | tc << 9 | 1u << 8 | ttl;
	}
	memmove(p->data - 4, p->data, at);
	p->data -= 4;
	p->headroom -= 4;
	p->len += 4;
	p->data[at - 2] = (uint8_t)(ethertype >> 8);
	p->data[at - 1] = (uint8_t)ethertype;
	p->data[at] = (uint8_t)(lse >> 24);
	p->data[at + 1] = (uint8_t)(lse >> 16);
	p->data[at + 2] = (uint8_t)(lse >> 8);
	p->data[at + 3] = (uint8_t)lse;
	sl_pkt_reparse(p);
	return true;
}

/*
 * pop_mpls: the top label goes, @ethertype names what follows (behind an
 * LLC/SNAP header: the SNAP type, and the 802.3 length shrinks by 4).  No
 * label: nothing to pop.
 */
static void
pop_mpls(struct sl_pkt *p, uint16_t ethertype)
{
	unsigned at;

	sl_pkt_parse_l2(p);
	at = p->l2_end;
	if ((p->eth_type != 0x8847 && p->eth_type != 0x8848) || at + 4 > p->len ||
	    !llc_len_adjust(p, -4))
		return;
	memmove(p->data + 4, p->data, at);
	p->data += 4;
	p->headroom += 4;
	p->len -= 4;
	p->data[at - 2] = (uint8_t)(ethertype >> 8);
	p->data[at - 1] = (uint8_t)ethertype;
	sl_pkt_reparse(p);
}

/*
 * push_pbb (802.1ah, OpenFlow 1.3 section 5.12): the frame, from its
 * destination MAC on, goes behind a new outer header: the same MACs (B-DA,
 * B-SA), type @ethertype (0x88e7) and an I-TAG: I-PCP from the outer VLAN
 * tag's PCP (0 untagged), I-SID copied from an I-TAG already outermost (else
 * 0).
 */
static bool
push_pbb(struct sl_pkt *p, uint16_t ethertype)
{
	uint8_t pcp = 0, isid[3] = {0, 0, 0};

	if (p->headroom < 18 || p->len < 14)
		return false;
	sl_pkt_parse_l2(p);
	if (p->n_vlans)
		pcp = p->data[p->vlan_ofs] >> 5;
	if (p->eth_type == 0x88e7 && p->l2_end + 4 <= p->len)
		memcpy(isid, p->data + p->l2_end + 1, 3);
	p->data -= 18;
	p->headroom -= 18;
	p->len += 18;
	memcpy(p->data, p->data + 18, 12);
	p->data[12] = (uint8_t)(ethertype >> 8);
	p->data[13] = (uint8_t)ethertype;
	p->data[14] = (uint8_t)(pcp << 5);
	memcpy(p->data + 15, isid, 3);
	sl_pkt_reparse(p);
	return true;
}

/* pop_pbb: the outer header (and B-tag) through the I-TAG go; no I-TAG, or no frame in it: no-op. */
static void
pop_pbb(struct sl_pkt *p)
{
	unsigned cut;

	sl_pkt_parse_l2(p);
	cut = p->l2_end + 4u;
	if (p->eth_type != 0x88e7 || cut + 14 > p->len)
		return;
	p->data += cut;
	p->headroom = (uint16_t)(p->headroom + cut);
	p->len = (uint16_t)(p->len - cut);
	sl_pkt_reparse(p);
}

/* MPLS TTL of the top label, or -1. */
static int
mpls_ttl_ofs(struct sl_pkt *p)
{
	sl_pkt_parse_l2(p);
	if ((p->eth_type == 0x8847 || p->eth_type == 0x8848) && p->l2_end + 4 <= p->len)
		return p->l2_end + 3;
	return -1;
}

static int
inner_ip_ttl_ofs(struct sl_pkt *p)
{
	unsigned l3 = p->l3_ofs;

	if (l3 + 20 > p->len)
		return -1;
	if ((p->data[l3] >> 4) == 4)
		return (int)l3 + 8;
	if ((p->data[l3] >> 4) == 6 && l3 + 40 <= p->len)
		return (int)l3 + 7;
	return -1;
}

static bool exec_group(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx,
		       struct pkt_state *st, struct sl_pkt *p, const struct sl_action *a,
		       const struct sl_pipeline_hooks *hooks, uint8_t *reason, bool final);

/*
 * A TTL expired: the packet is dropped (ttl-expired); when a controller asked
 * for OFPR_INVALID_TTL packet-ins, a copy of it goes there first (the flow's
 * table and cookie, the whole packet).  Returns false, as a drop.
 */
static bool
ttl_expired(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct pkt_state *st,
	    struct sl_pkt *p, const struct sl_pipeline_hooks *hooks, uint8_t *reason)
{
	*reason = SL_DROP_TTL_EXPIRED;
	if (!__atomic_load_n(&pl->invalid_ttl_pin, __ATOMIC_RELAXED))
		return false;
	flush_pending(ctx, st, p, hooks);
	do_output(pl, ctx, st, p, SL_PORT_CONTROLLER, hooks);
	st->pin.reason = SL_PIN_INVALID_TTL;
	st->pin.max_len = 0xffff;
	flush_pending(ctx, st, p, hooks);
	return false;
}

/*
 * Execute one action.  Returns false when the packet is dropped (the reason
 * is in *reason).
 */
static bool
exec_action(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct pkt_state *st,
	    struct sl_pkt *p, const struct sl_action *a, const struct sl_pipeline_hooks *hooks,
	    uint8_t *reason)
{
	int o, mo;

	switch (a->type) {
	case SL_ACT_OUTPUT:
		if (a->output.port == SL_PORT_CONTROLLER) {
			flush_pending(ctx, st, p,
				      hooks); /* st->pin belongs to the pending output */
			st->pin.max_len = a->output.max_len;
		}
		do_output(pl, ctx, st, p, a->output.port, hooks);
		return true;
	case SL_ACT_GROUP: /* something may follow: exec_listed knows better */
		return exec_group(pl, ctx, st, p, a, hooks, reason, false);
	case SL_ACT_SET_STATE: /* state_stage.c */
		if (sl_unlikely(ctx->trace != NULL))
			trace_step(ctx, SL_TRACE_SET_STATE, st->flow ? st->flow->table_id : 0xff,
				   st->flow, a->set_state.set.state);
		else
			pl_state_exec(pl, ctx, p, a);
		return true;
	case SL_ACT_SET_FIELD:
		flush_pending(ctx, st, p, hooks);
		sl_pkt_field_write(p, &a->set_field.f, a->set_field.value);
		return true;
	case SL_ACT_PUSH_VLAN:
		flush_pending(ctx, st, p, hooks);
		ctx->resized = true;
		if (!push_vlan(p, a->ethertype)) {
			*reason = SL_DROP_NO_HEADROOM;
			return false;
		}
		return true;
	case SL_ACT_POP_VLAN:
		flush_pending(ctx, st, p, hooks);
		ctx->resized = true;
		pop_vlan(p); /* no tag: nothing to pop (OVS does the same) */
		return true;
	case SL_ACT_SET_NW_TTL:
		flush_pending(ctx, st, p, hooks);
		set_ttl(p, a->ttl);
		return true;
	case SL_ACT_DEC_NW_TTL:
		flush_pending(ctx, st, p, hooks);
		sl_pkt_parse_l2(p);
		if (pl_dec_ttl_plain(p)) /* decremented, or not IP */
			return true;
		/* What remains is a drop: a header that lies has no TTL (OVS reads 0), or 0/1. */
		if (ttl_ofs(p) == -2) {
			*reason = SL_DROP_BAD_ACTION;
			return false;
		}
		return ttl_expired(pl, ctx, st, p, hooks, reason);
	case SL_ACT_COPY_TTL_OUT:
	case SL_ACT_COPY_TTL_IN:
		flush_pending(ctx, st, p, hooks);
		mo = mpls_ttl_ofs(p);
		o = mo >= 0 ? inner_ip_ttl_ofs(p) : -1;
		if (mo < 0 || o < 0)
			return true;
		if (a->type == SL_ACT_COPY_TTL_OUT) {
			p->data[mo] = p->data[o];
		} else if ((p->data[p->l3_ofs] >> 4) == 4) {
			/* The inner IPv4 header is not at eth_type level: fix its checksum by hand. */
			uint8_t old[2] = {p->data[o], p->data[o + 1]},
				nw[2] = {p->data[mo], old[1]};
			uint16_t cs;
			memcpy(&cs, p->data + p->l3_ofs + 10, 2);
			cs = sl_csum_update(cs, old, nw, 2);
			memcpy(p->data + p->l3_ofs + 10, &cs, 2);
			p->data[o] = p->data[mo];
		} else {
			p->data[o] = p->data[mo];
		}
		return true;
	case SL_ACT_PUSH_MPLS:
		flush_pending(ctx, st, p, hooks);
		ctx->resized = true;
		if (!push_mpls(p, a->ethertype)) {
			/* Or an 802.3 length that would overflow (llc_len_adjust). */
			*reason = p->headroom < 4 ? SL_DROP_NO_HEADROOM : SL_DROP_BAD_ACTION;
			return false;
		}
		return true;
	case SL_ACT_POP_MPLS:
		flush_pending(ctx, st, p, hooks);
		ctx->resized = true;
		pop_mpls(p, a->ethertype);
		return true;
	case SL_ACT_PUSH_PBB:
		flush_pending(ctx, st, p, hooks);
		ctx->resized = true;
		if (!push_pbb(p, a->ethertype)) {
			*reason = SL_DROP_NO_HEADROOM;
			return false;
		}
		return true;
	case SL_ACT_POP_PBB:
		flush_pending(ctx, st, p, hooks);
		ctx->resized = true;
		pop_pbb(p);
		return true;
	case SL_ACT_SET_MPLS_TTL:
		flush_pending(ctx, st, p, hooks);
		if ((mo = mpls_ttl_ofs(p)) >= 0)
			p->data[mo] = a->ttl;
		return true;
	case SL_ACT_DEC_MPLS_TTL:
		flush_pending(ctx, st, p, hooks);
		if ((mo = mpls_ttl_ofs(p)) < 0)
			return true; /* no label: nothing to decrement */
		if (p->data[mo] <= 1)
			return ttl_expired(pl, ctx, st, p, hooks, reason);
		p->data[mo]--;
		return true;
	case SL_ACT_SET_QUEUE:
		st->has_queue = true;
		st->queue_id = a->queue_id;
		return true;
	default:
		return true;
	}
}

static void
aset_write(struct action_set *as, const struct sl_action *a, const struct sl_flow *by)
{
	switch (a->type) {
	case SL_ACT_COPY_TTL_IN:
		as->copy_ttl_in = a;
		break;
	case SL_ACT_POP_VLAN:
		as->pop_vlan = a;
		break;
	case SL_ACT_PUSH_VLAN:
		as->push_vlan = a;
		break;
	case SL_ACT_POP_MPLS:
		as->pop_mpls = a;
		break;
	case SL_ACT_PUSH_MPLS:
		as->push_mpls = a;
		break;
	case SL_ACT_POP_PBB:
		as->pop_pbb = a;
		break;
	case SL_ACT_PUSH_PBB:
		as->push_pbb = a;
		break;
	case SL_ACT_DEC_MPLS_TTL:
		as->dec_mpls_ttl = a;
		break;
	case SL_ACT_SET_MPLS_TTL:
		as->set_mpls_ttl = a;
		break;
	case SL_ACT_COPY_TTL_OUT:
		as->copy_ttl_out = a;
		break;
	case SL_ACT_DEC_NW_TTL:
		as->dec_ttl = a;
		break;
	case SL_ACT_SET_NW_TTL:
		as->set_ttl = a;
		break;
	case SL_ACT_SET_QUEUE:
		as->queue = a;
		break;
	case SL_ACT_GROUP:
		as->group = a;
		as->group_by = by;
		break;
	case SL_ACT_OUTPUT:
		as->output = a;
		as->output_by = by;
		break;
	case SL_ACT_SET_FIELD:
		for (unsigned i = 0; i < as->n_set; i++) {
			if (sl_field_equal(&as->set[i]->set_field.f, &a->set_field.f)) {
				as->set[i] = a;
				return;
			}
		}
		if (as->n_set < AS_SET_MAX)
			as->set[as->n_set++] = a;
		break;
	default:
		break;
	}
}

/* Execute the action set in the order of OpenFlow 1.3 section 5.10. */
static bool
aset_execute(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct pkt_state *st,
	     struct sl_pkt *p, const struct sl_pipeline_hooks *hooks, uint8_t *reason)
{
	const struct action_set *as = &st->aset;
	const struct sl_action *order[] = {as->copy_ttl_in,  as->pop_vlan,     as->pop_mpls,
					   as->pop_pbb,      as->push_mpls,    as->push_pbb,
					   as->push_vlan,    as->copy_ttl_out, as->dec_ttl,
					   as->dec_mpls_ttl, as->set_ttl,      as->set_mpls_ttl};

	for (unsigned i = 0; i < SL_ARRAY_SIZE(order); i++)
		if (order[i] != NULL && !exec_action(pl, ctx, st, p, order[i], hooks, reason))
			return false;
	for (unsigned i = 0; i < as->n_set; i++)
		exec_action(pl, ctx, st, p, as->set[i], hooks, reason);
	/* Then QoS: the queue polices the set's output (or the group's buckets). */
	if (as->queue != NULL)
		exec_action(pl, ctx, st, p, as->queue, hooks, reason);
	/* Spec 5.10: a group action in the set wins over an output action, and ends the packet. */
	if (as->group != NULL) {
		st->flow = as->group_by;
		return exec_group(pl, ctx, st, p, as->group, hooks, reason, true);
	}
	if (as->output != NULL) {
		st->flow = as->output_by;
		exec_action(pl, ctx, st, p, as->output, hooks, reason);
	}
	return true;
}

/* Hash of the packet's flow fields, for select groups (stable per flow). */
static uint32_t
flow_hash(struct sl_pkt *p)
{
	uint64_t h = 0x2545f4914f6cdd1dull;
	uint64_t w;

	sl_pkt_parse_l2(p);
	if (p->len >= 14) {
		memcpy(&w, p->data, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		w = 0;
		memcpy(&w, p->data + 8, 6);
		h = (h ^ w ^ p->eth_type) * 0x9e3779b97f4a7c15ull;
	}
	if (p->eth_type == 0x0800 && p->l3_ofs + 20 <= p->len) {
		uint32_t a;
		memcpy(&w, p->data + p->l3_ofs + 12, 8); /* source and destination address */
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		uint8_t proto = p->data[p->l3_ofs + 9];
		unsigned l4 = p->l3_ofs + (p->data[p->l3_ofs] & 0xfu) * 4u;
		if ((proto == 6 || proto == 17 || proto == 132) && l4 + 4 <= p->len) {
			memcpy(&a, p->data + l4, 4);
			h = (h ^ a ^ ((uint64_t)proto << 40)) * 0x9e3779b97f4a7c15ull;
		}
	} else if (p->eth_type == 0x86dd && p->l3_ofs + 40 <= p->len) {
		/* The flow label first: flows between two hosts differ there only. */
		uint32_t label = (uint32_t)(p->data[p->l3_ofs + 1] & 0x0f) << 16 |
				 (uint32_t)p->data[p->l3_ofs + 2] << 8 | p->data[p->l3_ofs + 3];
		h = (h ^ label) * 0x9e3779b97f4a7c15ull;
		for (unsigned o = 8; o < 40; o += 8) {
			memcpy(&w, p->data + p->l3_ofs + o, 8);
			h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		}
	} else if (p->eth_type == 0x0806 && p->l3_ofs + 28 <= p->len) {
		/* ARP: the sender and target protocol addresses (SPA at 14, TPA at 24). */
		uint32_t spa, tpa;
		memcpy(&spa, p->data + p->l3_ofs + 14, 4);
		memcpy(&tpa, p->data + p->l3_ofs + 24, 4);
		h = (h ^ spa ^ ((uint64_t)tpa << 32)) * 0x9e3779b97f4a7c15ull;
	}
	return (uint32_t)(h >> 32);
}

/*
 * Run a bucket's actions on @p with its own output state.  A chained group
 * is the run's last action (bucket_set): @final passes on to it.
 */
static bool
run_bucket(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct pkt_state *st,
	   struct sl_pkt *p, const struct pl_bucket *b, const struct sl_pipeline_hooks *hooks,
	   uint8_t *reason, bool final)
{
	for (unsigned k = 0; k < b->n_run; k++) { /* the bucket's actions as an action set */
		const struct sl_action *a = &b->run[k];
		if (sl_unlikely(a->type == SL_ACT_GROUP)) {
			if (!exec_group(pl, ctx, st, p, a, hooks, reason, final))
				return false;
		} else if (!exec_action(pl, ctx, st, p, a, hooks, reason)) {
			return false;
		}
	}
	return true;
}

/*
 * A bucket that must leave the packet as it entered the group (OpenFlow 1.3
 * section 5.6.1: each bucket works on a clone): an "all" group's buckets but
 * the last, and any bucket when the packet goes on after the group.  Buckets
 * that only output need no copy of their own (outputs copy when needed);
 * others run on a scratch copy whose outputs are emitted as copies, and
 * whose drop (dec_ttl) drops the copy only.
 */
static void
run_bucket_copy(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct pkt_state *st,
		struct sl_pkt *p, const struct pl_bucket *b, const struct sl_pipeline_hooks *hooks)
{
	uint8_t reason = SL_DROP_NO_OUTPUT;

	if (!b->modifies) {
		run_bucket(pl, ctx, st, p, b, hooks, &reason, false);
		return;
	}
	/* A clone that is dropped counts as a copy and a drop (the conservation law). */
	if (p->len + PL_SCRATCH_HEADROOM > PL_SCRATCH_SIZE) {
		ctx->copies++;
		ctx->drops[SL_DROP_CLONE_FAILED]++;
		return;
	}
	/*
	 * One scratch buffer per group depth: a chained group's bucket copies
	 * the copy its caller's bucket is still working on.
	 */
	struct sl_pkt q = *p;
	struct pkt_state qs = {.flow = st->flow,
			       .has_queue = st->has_queue,
			       .queue_id = st->queue_id,
			       .group_depth = st->group_depth};
	q.data = ctx->scratch[st->group_depth - 1] + PL_SCRATCH_HEADROOM;
	q.headroom = PL_SCRATCH_HEADROOM;
	memcpy(q.data, p->data, p->len);
	/* The copy is the bucket's own: nothing follows a chained group's run on it. */
	if (run_bucket(pl, ctx, &qs, &q, b, hooks, &reason, true)) {
		flush_pending(ctx, &qs, &q, hooks);
	} else {
		ctx->copies++;
		ctx->drops[reason]++;
	}
}

/*
 * A fast-failover bucket is live when its watched port is, or its watched
 * group (the flag pl_groups_liveness keeps; chaining spares the walk).
 */
static inline bool
ff_bucket_live(const struct sl_pipeline *pl, const struct pl_bucket *b)
{
	return (b->watch_port != SL_PORT_ANY && pl->port_up[b->watch_port]) ||
	       (b->watch_slot != NULL && __atomic_load_n(&b->watch_slot->live, __ATOMIC_RELAXED));
}

/*
 * Run group action @a.  @final: nothing happens to the packet after the
 * group (the action set's group, or the last action of a list that ends the
 * pipeline), so its last bucket may change the packet itself instead of a
 * copy.
 */
static bool
group_run(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct pkt_state *st,
	  struct sl_pkt *p, const struct sl_action *a, const struct sl_pipeline_hooks *hooks,
	  uint8_t *reason, bool final)
{
	struct pl_group_slot *slot = a->ref;
	struct pl_group *g = __atomic_load_n(&slot->body, __ATOMIC_ACQUIRE);
	struct pl_bucket *b = NULL;
	/* A trace moves no counter: count into a scratch pipeline-less sink. */
	const bool count = ctx->trace == NULL;

	if (count) {
		pl_count(pl, &slot->n_packets, 1);
		pl_count(pl, &slot->n_bytes, p->len);
	}
	switch (g->type) {
	case SL_GROUP_INDIRECT:
		b = &g->buckets[0];
		break;
	case SL_GROUP_SELECT:
		if (g->has_select)
			b = &g->buckets[g->select_map[flow_hash(p) & (PL_SELECT_SLOTS - 1)]];
		break;
	case SL_GROUP_FF:
		for (unsigned i = 0; i < g->n_buckets && b == NULL; i++)
			if (ff_bucket_live(pl, &g->buckets[i]))
				b = &g->buckets[i];
		break;
	case SL_GROUP_ALL:
		for (unsigned i = 0; i + 1 < g->n_buckets; i++) {
			if (count) {
				pl_count(pl, &g->buckets[i].n_packets, 1);
				pl_count(pl, &g->buckets[i].n_bytes, p->len);
			}
			run_bucket_copy(pl, ctx, st, p, &g->buckets[i], hooks);
		}
		if (g->n_buckets > 0)
			b = &g->buckets[g->n_buckets - 1];
		break;
	default:
		break;
	}
	if (b == NULL) {
		st->skip_reason = SL_DROP_NO_OUTPUT; /* no live bucket */
		return true;
	}
	if (count) {
		pl_count(pl, &b->n_packets, 1);
		pl_count(pl, &b->n_bytes, p->len);
	}
	if (!final && b->modifies) {
		run_bucket_copy(pl, ctx, st, p, b, hooks);
		return true;
	}
	return run_bucket(pl, ctx, st, p, b, hooks, reason, final);
}

/*
 * Group action @a, one level deeper.  The control thread keeps chains at
 * most SL_GROUP_CHAIN_MAX deep and loop-free (group.c); a worker that sees
 * old and new bodies mixed during a modify still stops there.
 */
static bool
exec_group(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct pkt_state *st,
	   struct sl_pkt *p, const struct sl_action *a, const struct sl_pipeline_hooks *hooks,
	   uint8_t *reason, bool final)
{
	bool ok;

	if (sl_unlikely(st->group_depth >= SL_GROUP_CHAIN_MAX)) {
		*reason = SL_DROP_GROUP_CHAIN;
		return false;
	}
	st->group_depth++;
	ok = group_run(pl, ctx, st, p, a, hooks, reason, final);
	st->group_depth--;
	return ok;
}

/*
 * Action @a of an apply list; @final: it is the list's last and nothing
 * follows it for this packet (exec_group).
 */
static inline bool
exec_listed(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct pkt_state *st,
	    struct sl_pkt *p, const struct sl_action *a, const struct sl_pipeline_hooks *hooks,
	    uint8_t *reason, bool final)
{
	if (sl_unlikely(a->type == SL_ACT_GROUP))
		return exec_group(pl, ctx, st, p, a, hooks, reason, final);
	return exec_action(pl, ctx, st, p, a, hooks, reason);
}

/*
 * Run flow @f's instructions on packet @i.  Returns the next table,
 * PL_NEXT_END at the end of the pipeline, PL_NEXT_DROP when the packet was
 * dropped (*reason set).
 */
static int
exec_flow(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct sl_flow *f,
	  struct sl_pkt *p, struct pkt_state *st, const struct sl_pipeline_hooks *hooks,
	  uint8_t *reason)
{
	uint8_t flags = f->insn_flags;

	st->flow = f;
	/* Flow counters are credited per run of lanes by the caller (credit()). */
	if (sl_unlikely(flags & SL_INSN_METER)) {
		if (ctx->trace != NULL) {
			trace_step(ctx, SL_TRACE_METER, f->table_id, f,
				   ((const struct pl_meter_slot *)f->meter)->id);
		} else if (!pl_meter_run(pl, f->meter, p, ctx->now)) {
			*reason = SL_DROP_METER;
			return PL_NEXT_DROP;
		}
	}
	if (flags & SL_INSN_APPLY) {
		/* After the list: another table, or an action set to run? */
		bool more = f->goto_table >= 0 || (flags & SL_INSN_WRITE) ||
			    (st->has_set && !(flags & SL_INSN_CLEAR));
		for (unsigned k = 0; k < f->n_apply; k++)
			if (!exec_listed(pl, ctx, st, p, &f->actions[k], hooks, reason,
					 !more && k + 1 == f->n_apply))
				return PL_NEXT_DROP;
	}
	if (sl_unlikely(flags & (SL_INSN_CLEAR | SL_INSN_WRITE))) {
		if (flags & SL_INSN_CLEAR) {
			memset(&st->aset, 0, sizeof(st->aset));
			st->has_set = false;
		}
		if (flags & SL_INSN_WRITE) {
			if (!st->has_set) {
				memset(&st->aset, 0, sizeof(st->aset));
				st->has_set = true;
			}
			for (unsigned k = 0; k < f->n_write; k++)
				aset_write(&st->aset, &f->actions[f->n_apply + k], f);
		}
	}
	if (flags & SL_INSN_METADATA) {
		p->metadata = (p->metadata & ~f->metadata_mask) | f->metadata;
		ctx->regs_same = false;
	}
	if (f->goto_table >= 0)
		return f->goto_table;
	if (st->has_set && !aset_execute(pl, ctx, st, p, hooks, reason))
		return PL_NEXT_DROP;
	return PL_NEXT_END;
}

/*
 * A lane the FFP answered whose record says its entry only goes to another
 * table (ffp.h, FFP_REC_GOTO): what exec_flow would do, without the flow's
 * instructions or a call.  Returns the table, or PL_NEXT_SLOW for any other
 * record (an output-only entry is plain_output's, below).
 */
static inline int
ffp_fast(const struct ffp_rec *r, const struct sl_flow *f, struct pkt_state *st)
{
	if (r == NULL || r->flow != f || r->used != FFP_REC_GOTO)
		return PL_NEXT_SLOW;
	st->flow = f;
	return r->arg;
}

/*
 * An entry whose instructions are one output to a port (sl_flow.plain_out),
 * in the plain case of output_one (nothing pending, no action set, the port
 * up and not the in_port): what exec_flow would do, without reading the
 * action list (two more cache lines) or a call.  Returns false, having done
 * nothing, in any other case.
 */
static inline bool
plain_output(const struct sl_pipeline *pl, const struct sl_flow *f, const struct sl_pkt *p,
	     struct pkt_state *st)
{
	if (f->plain_out == 0 || pl_pending_word(st) != 0 ||
	    !pl_port_plain_ok(pl, f->plain_out, p->in_port))
		return false;
	st->flow = f;
	st->pending_out = f->plain_out;
	return true;
}

/* plain_output for an entry of apply dec_ttl, output (sl_flow.plain_ttl_out). */
static inline bool
plain_ttl_output(const struct sl_pipeline *pl, const struct sl_flow *f, struct sl_pkt *p,
		 struct pkt_state *st)
{
	if (f->plain_ttl_out == 0 || pl_pending_word(st) != 0 ||
	    !pl_port_plain_ok(pl, f->plain_ttl_out, p->in_port) || !pl_dec_ttl_plain(p))
		return false;
	st->flow = f;
	st->pending_out = f->plain_ttl_out;
	return true;
}

/* dc_hash, dc_key_equal: pipeline_priv.h (shared with the FFP's LUTs). */

/*
 * Lookup through the decision cache (pipeline_priv.h): cached lanes are
 * answered from their entry, the rest go to the table in one burst and
 * fill their entries.  Exact by construction: an entry is used only while
 * its table version is current.  In a budgeted table the search budget
 * may refuse lanes instead (budget.c): *refused, neither found nor cached.
 */
static uint64_t
cached_lookup(const struct sl_pipeline *pl, const struct pl_dtable *pt, struct sl_pipeline_ctx *ctx,
	      uint64_t lanes, uint8_t table_id, bool keeping_up, uint64_t *refused)
{
	unsigned size = pt->layout.key_size, i;
	uint32_t version = pt->version;
	uint64_t hit = 0, todo = 0;

	/* Stage A: hash and prefetch every lane's entry. */
	SL_FOR_EACH_LANE (i, lanes) {
		struct dc_entry *e =
			&ctx->dc[dc_hash(ctx->keys[i], size, table_id) & (DC_ENTRIES - 1)];
		ctx->dc_ents[i] = e;
		sl_prefetch0(e);
	}
	/* Stage B: answer the lanes whose entry is current. */
	SL_FOR_EACH_LANE (i, lanes) {
		const struct dc_entry *e = ctx->dc_ents[i];

		if (e->version == version && e->table_id == table_id &&
		    dc_key_equal(e->key, ctx->keys[i], size)) {
			ctx->hits[i] = e->data;
			hit |= (uint64_t)(e->data != NULL) << i;
		} else {
			todo |= UINT64_C(1) << i;
		}
	}
	ctx->dc_hits += (uint64_t)__builtin_popcountll(lanes & ~todo);
	if (todo == 0)
		return hit;
	/* Stage C: the table for the rest (a trace is never refused); remember its answers. */
	ctx->dc_misses += (uint64_t)__builtin_popcountll(todo);
	uint64_t found;
	if (pt->budgeted && ctx->trace == NULL)
		*refused = pl_budget_lookup(pl, pt, ctx, table_id, keeping_up, &todo, &found);
	else
		found = sl_table_lookup_burst(pt->tbl, ctx->keyp, todo, ctx->hits);
	SL_FOR_EACH_LANE (i, todo) {
		struct dc_entry *e = ctx->dc_ents[i];

		e->version = version;
		e->table_id = table_id;
		e->data = (found >> i & 1) ? ctx->hits[i] : NULL;
		memcpy(e->key, ctx->keys[i], size);
	}
	return hit | found;
}

/* Lanes whose packets satisfy the table's guards (pipeline_priv.h). */
static uint64_t
guard_lanes(const struct pl_dtable *pt, struct sl_pkt *pkts, uint64_t lanes)
{
	uint64_t ok = 0;
	unsigned i;

	SL_FOR_EACH_LANE (i, lanes) {
		bool pass = true;
		/* Guards are dl_type (2 bytes) or nw_proto (1 byte): compare both bytes. */
		for (unsigned g = 0; g < pt->n_guards; g++) {
			uint8_t v[2] = {0, 0};
			sl_pkt_field_read(&pkts[i], &pt->guards[g].f, v);
			pass &= v[0] == pt->guards[g].value[0] && v[1] == pt->guards[g].value[1];
		}
		ok |= (uint64_t)pass << i;
	}
	return ok;
}

static inline void
credit(const struct sl_pipeline *pl, struct sl_flow *f, uint64_t n_pkts, uint64_t n_bytes,
       uint64_t now)
{
	if (f == NULL)
		return;
	pl_count(pl, &f->n_packets, n_pkts);
	pl_count(pl, &f->n_bytes, n_bytes);
	/* Several workers: any recent hit time will do (a relaxed store is a plain mov on x86). */
	__atomic_store_n(&f->last_hit_tsc, now, __ATOMIC_RELAXED);
}

/* The byte sum of a set of lanes, kept while a goto chain leaves the packets as they are. */
struct lane_bytes {
	uint64_t lanes; /* 0: nothing kept */
	uint64_t bytes;
};

/*
 * A table every lane hits in its one entry (pl_dtable.all_hit) whose
 * instructions are only goto_table: the lanes move on together, the entry
 * credited once.  Returns false, having done nothing, for any other entry.
 * Such an entry runs no action, so st.flow is left to the entry that does
 * (exec_flow sets it first), and the lanes' byte sum, unchanged by it, is
 * kept in @lb for the next table of a chain.
 */
static inline bool
all_hit_goto(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct sl_flow *f,
	     const struct sl_pkt *pkts, uint64_t lanes, unsigned t, uint8_t depth, uint64_t now,
	     struct lane_bytes *lb)
{
	unsigned i;

	if ((f->insn_flags &
	     (SL_INSN_APPLY | SL_INSN_WRITE | SL_INSN_CLEAR | SL_INSN_METADATA | SL_INSN_METER)) ||
	    f->goto_table < 0)
		return false;
	ctx->tstats[t].matched += (uint64_t)__builtin_popcountll(lanes);
	if (!__atomic_load_n(&f->ll, __ATOMIC_RELAXED))
		ctx->ll_lanes &= ~lanes;
	if (lb->lanes != lanes) {
		lb->bytes = 0;
		SL_FOR_EACH_LANE (i, lanes) {
			lb->bytes += pkts[i].len;
		}
		lb->lanes = lanes;
	}
	uint64_t bytes = lb->bytes;
	if (ctx->ffp->pspec != NULL) {
		SL_FOR_EACH_LANE (i, lanes & ctx->ffp->ptrack) {
			pl_ffp_path_hop(ctx, i, t, f, f->goto_table);
		}
	}
	credit(pl, f, (uint64_t)__builtin_popcountll(lanes), bytes, now);
	unsigned next = (unsigned)f->goto_table;
	lanes_push_set(ctx, next, lanes);
	ctx->chain_at[next] = SL_MAX(ctx->chain_at[next], depth);
	return true;
}

/* Final outcome of a packet that reached the end of its pipeline (or a miss). */
static inline bool
finish(struct sl_pipeline_ctx *ctx, struct pkt_state *st, unsigned i, uint8_t reason,
       uint32_t out_ports[], uint8_t drops[])
{
	if (st->pending_out != 0) {
		out_ports[i] = st->pending_out;
		return true;
	}
	out_ports[i] = SL_PORT_DROP;
	drops[i] = reason;
	ctx->drops[reason]++;
	return false;
}

/*
 * A lane answered by an FFP path record (ffp.h): the recorded entries'
 * instructions as the tables would have run them, without their lookups.
 * Returns 1 when the packet is output.
 */
static unsigned
path_run(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, const struct ffp_path_rec *r,
	 struct sl_pkt *p, unsigned i, const struct sl_pipeline_hooks *hooks, uint32_t out_ports[],
	 uint8_t drops[])
{
	struct pkt_state *st = &ctx->st[i];
	uint8_t reason = SL_DROP_NO_OUTPUT;
	unsigned last = r->n_hops - 1u;
	int next;

	/*
	 * A way that ends in a table miss: the hops before only went to the
	 * next table (their write_actions and metadata die with the packet).
	 */
	if (r->miss) {
		st->pending_out = 0;
		return finish(ctx, st, i, SL_DROP_TABLE_MISS, out_ports, drops);
	}
	/* Hops before the last have no apply_actions: they only goto (write_actions, metadata). */
	for (unsigned k = 0; k < last; k++) {
		struct sl_flow *f = (struct sl_flow *)r->flow[k];
		if (r->plain >> k & 1)
			st->flow = f;
		else
			(void)exec_flow(pl, ctx, f, p, st, hooks, &reason);
	}
	/* Plain records were finished by the lookup: the last entry's instructions run here. */
	next = exec_flow(pl, ctx, (struct sl_flow *)r->flow[last], p, st, hooks, &reason);
	if (next == PL_NEXT_END)
		return finish(ctx, st, i, st->skip_reason, out_ports, drops);
	st->pending_out = 0; /* dropped: outputs done before are already copies */
	return finish(ctx, st, i, reason, out_ports, drops);
}

/*
 * The burst's stages, in the spirit of OVS's dp_netdev_input__ ->
 * dfc_processing -> fast_path_processing -> packet_batch_per_flow_execute.
 * Each takes a lane map in and gives a map out:
 *
 *   burst_begin     every lane waits at table 0 (frames too short dropped)
 *   burst_paths     the flow cache answers whole paths (pl_ffp_path_lookup,
 *                   ffp_path.c); path_run replays the answers it could not
 *                   finish
 *   per table, in ascending id order (goto only goes forward), table_run:
 *     pl_state_stage  a state table loads each lane's state (state_stage.c)
 *     all_hit_goto    a match-all goto-only table moves every lane on at once
 *     table_lookup    lanes waiting -> lanes found: guards, key extraction,
 *                     the FFP LUT, the decision cache or the table's search,
 *                     the table-miss entry
 *     table_execute   found lanes: their entries' instructions -> the next
 *                     table, an output or a drop
 *     table_misses    lanes not found: dropped (table miss, search budget)
 *   pl_ffp_path_end, pl_ffp_burst_end   the flow cache's and the FFP's
 *                   bookkeeping (ffp_path.c, ffp.c)
 */

/* What a burst's stages share. */
struct burst {
	uint64_t now;
	bool tracing; /* a trace (sl_pipeline_trace): every table walked, nothing credited */
	bool track;   /* the flow cache records the paths of the lanes it missed */
	unsigned n_out;
	struct lane_bytes lb;
	const struct sl_pipeline_hooks *hooks;
	uint32_t *out_ports;
	uint8_t *drops;
};

/* One table's pass over the lanes waiting at it. */
struct table_pass {
	unsigned t;
	const struct pl_dtable *pt; /* the copy the burst sees throughout */
	uint8_t depth;              /* chain length at this table */
	uint64_t lanes;             /* waiting here */
	uint64_t hit;               /* with an entry (table-miss entry included) */
	uint64_t tbl_hit;           /* answered by the table or its LUT (not the miss entry) */
	uint64_t ffp_found;         /* answered by the FFP LUT */
	uint64_t ll;                /* low-latency lanes looked up */
	uint64_t ll_lost;           /* ... that won a normal entry */
	uint64_t refused;           /* taken out of lanes unsearched: the search budget's drops */
};

/* A lane's state before its first instruction. */
static SL_ALWAYS_INLINE void
lane_reset(struct pkt_state *st)
{
	/*
	 * pending_out 0, skip_reason no-output, has_set, has_queue and
	 * group_depth (0 outside groups anyway) 0: the struct's first 8 bytes
	 * in one store.  st.flow needs no reset: exec_flow sets it before any
	 * action can read it.
	 */
	static const uint8_t head[8] = {0, 0, 0, 0, SL_DROP_NO_OUTPUT, 0, 0, 0};

	memcpy(st, head, sizeof(head));
}

/*
 * Every lane waits at table 0; a frame shorter than an Ethernet header is
 * no packet.  The lanes' states are reset after the flow cache
 * (burst_paths): a lane it finishes never reads one.
 */
static SL_ALWAYS_INLINE void
burst_begin(struct sl_pipeline_ctx *ctx, const struct sl_pkt *pkts, unsigned n, struct burst *b)
{
	ctx->lanes_at[0] = sl_lanes_first(n);
	ctx->table_bits[0] |= 1;
	for (unsigned i = 0; i < n; i++) {
		if (sl_unlikely(pkts[i].len < 14)) {
			ctx->lanes_at[0] &= ~(UINT64_C(1) << i);
			lane_reset(&ctx->st[i]);
			finish(ctx, &ctx->st[i], i, SL_DROP_TOO_SHORT, b->out_ports, b->drops);
		}
	}
	if (ctx->lanes_at[0] == 0)
		ctx->table_bits[0] &= ~UINT64_C(1);
	ctx->ll_lanes = ctx->lanes_at[0]; /* every packet starts low-latency (ffp.h) */
}

/* The flow cache's answers (ffp.h); a trace walks every table instead. */
static SL_ALWAYS_INLINE void
burst_paths(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct sl_pkt *pkts,
	    unsigned n, struct burst *b)
{
	uint64_t by_path =
		b->tracing ? 0 : pl_ffp_path_lookup(pl, ctx, pkts, b->out_ports, &b->n_out);
	unsigned i;

	/* The lanes whose instructions run: those replayed here and those left to the tables. */
	uint64_t run = by_path | ctx->lanes_at[0];
	if (run == sl_lanes_first(n)) { /* the cache off (one table) or missed: every lane */
		for (i = 0; i < n; i++)
			lane_reset(&ctx->st[i]);
	} else {
		SL_FOR_EACH_LANE (i, run) {
			lane_reset(&ctx->st[i]);
		}
	}
	SL_FOR_EACH_LANE (i, by_path) {
		b->n_out += path_run(pl, ctx, ctx->ffp->prec[i], &pkts[i], i, b->hooks,
				     b->out_ports, b->drops);
	}
	b->track = ctx->ffp->pspec != NULL && !b->tracing;
}

/*
 * A table on the pipeline's registers alone (in_port, metadata; no frame
 * byte, no guard) has as many answers in a burst as distinct register
 * values, and a burst enters on one port: a lane whose registers equal
 * those of the last lane keyed takes that lane's key and, after the
 * search, its answer (register_answers), instead of a key extraction and
 * a search of its own.  Returns those lanes; ctx->dup_of names their
 * source.  The search's own counters (decision cache hits) count searches.
 */
static SL_ALWAYS_INLINE uint64_t
register_keys(const struct pl_dtable *pt, struct sl_pipeline_ctx *ctx, struct sl_pkt *pkts,
	      uint64_t look)
{
	unsigned src = (unsigned)__builtin_ctzll(look), i;
	uint32_t port = pkts[src].in_port;
	uint64_t md = pkts[src].metadata, dups = 0;
	const uint8_t *key = ctx->keys[src];

	sl_key_extract(&pt->layout, &pkts[src], ctx->keys[src]);
	ctx->keyp[src] = key;
	SL_FOR_EACH_LANE (i, look & (look - 1)) {
		if (sl_likely(pkts[i].in_port == port && pkts[i].metadata == md)) {
			dups |= UINT64_C(1) << i;
			ctx->dup_of[i] = (uint8_t)src;
			ctx->keyp[i] = key;
			continue;
		}
		src = i;
		port = pkts[i].in_port;
		md = pkts[i].metadata;
		key = ctx->keys[i];
		sl_key_extract(&pt->layout, &pkts[i], ctx->keys[i]);
		ctx->keyp[i] = key;
	}
	return dups;
}

/* The answers of register_keys' lanes: their sources' (found, or refused by the budget). */
static SL_ALWAYS_INLINE uint64_t
register_answers(struct sl_pipeline_ctx *ctx, uint64_t dups, uint64_t hit, uint64_t *refused)
{
	uint64_t found = 0;
	unsigned i;

	SL_FOR_EACH_LANE (i, dups) {
		unsigned src = ctx->dup_of[i];
		if (hit >> src & 1) {
			ctx->hits[i] = ctx->hits[src];
			found |= UINT64_C(1) << i;
		} else if (*refused >> src & 1) {
			*refused |= UINT64_C(1) << i;
		}
	}
	return found;
}

/*
 * register_keys when every lane still has the same registers
 * (ctx->regs_same): the first lane is keyed and searched, and the others,
 * returned, take its answer (same_answers) without a look at their own.
 */
static SL_ALWAYS_INLINE uint64_t
same_keys(const struct pl_dtable *pt, struct sl_pipeline_ctx *ctx, struct sl_pkt *pkts,
	  uint64_t look)
{
	unsigned src = (unsigned)__builtin_ctzll(look);

	sl_key_extract(&pt->layout, &pkts[src], ctx->keys[src]);
	ctx->keyp[src] = ctx->keys[src];
	return look & (look - 1);
}

/* The answers of same_keys' lanes: the first lane's. */
static SL_ALWAYS_INLINE uint64_t
same_answers(struct sl_pipeline_ctx *ctx, uint64_t dups, uint64_t looked, uint64_t hit,
	     uint64_t *refused)
{
	unsigned src = (unsigned)__builtin_ctzll(looked), i;
	void *answer = ctx->hits[src];

	if (hit >> src & 1) {
		SL_FOR_EACH_LANE (i, dups) {
			ctx->hits[i] = answer;
		}
		return dups;
	}
	if (*refused >> src & 1)
		*refused |= dups;
	return 0;
}

/*
 * The consecutive lanes of @lanes from the lowest up whose raw key
 * (pkt.h, an L2 layout's) equals lane @src's: each takes @src's key as a
 * repeat (repeated_keys_of).  Out of line with the raw key in registers:
 * a train of one flow's packets costs a compare of two words a lane.
 */
static __attribute__((noinline)) uint64_t
raw_repeats(struct sl_pipeline_ctx *ctx, const struct sl_pkt *pkts,
	    const struct sl_key_raw_mask *rm, unsigned src, uint64_t lanes)
{
	struct sl_key_raw want, raw;
	unsigned first = (unsigned)__builtin_ctzll(lanes), n = 0;
	unsigned room = sl_lanes_run(lanes);
	const struct sl_pkt *p = &pkts[first];

	if (!sl_key_raw_get(rm, &pkts[src], &want))
		return 0;
	for (; n < room; n++, p++) {
		if (!sl_key_raw_get(rm, p, &raw) || !sl_key_raw_equal(&raw, &want))
			break;
		ctx->dup_of[first + n] = (uint8_t)src;
		ctx->keyp[first + n] = ctx->keys[src];
	}
	return sl_lanes_first(n) << first;
}

/*
 * Keys read from the frame: a lane whose key equals the last lane searched
 * (a train of one flow's packets, or flows that differ only in fields this
 * table does not read) takes that lane's answer (register_answers) instead
 * of a search of its own: one compare in L1.  Returns those lanes.
 */
static SL_ALWAYS_INLINE uint64_t
repeated_keys_of(const struct pl_dtable *pt, struct sl_pipeline_ctx *ctx, struct sl_pkt *pkts,
		 uint64_t look, const unsigned size)
{
	unsigned src = (unsigned)__builtin_ctzll(look), i;
	uint64_t dups = 0, todo = look & (look - 1);
	const struct sl_key_raw_mask rm = sl_key_raw_mask_of(&pt->layout);

	sl_key_extract(&pt->layout, &pkts[src], ctx->keys[src]);
	ctx->keyp[src] = ctx->keys[src];
	while (todo != 0) {
		/* Under an L2 layout, the lanes after src with its raw key (pkt.h): not extracted. */
		if (rm.need != UINT32_MAX) {
			uint64_t run = raw_repeats(ctx, pkts, &rm, src, todo);
			dups |= run;
			todo &= ~run;
			if (todo == 0)
				break;
		}
		i = (unsigned)__builtin_ctzll(todo);
		todo &= todo - 1;
		sl_key_extract(&pt->layout, &pkts[i], ctx->keys[i]);
		if (size ? dc_key_equal_const(ctx->keys[i], ctx->keys[src], size)
			 : dc_key_equal(ctx->keys[i], ctx->keys[src], pt->layout.key_size)) {
			dups |= UINT64_C(1) << i;
			ctx->dup_of[i] = (uint8_t)src;
			ctx->keyp[i] = ctx->keys[src];
			continue;
		}
		src = i;
		ctx->keyp[i] = ctx->keys[i];
	}
	return dups;
}

/* repeated_keys_of with the compare's size a constant for the common key sizes. */
static uint64_t
repeated_keys(const struct pl_dtable *pt, struct sl_pipeline_ctx *ctx, struct sl_pkt *pkts,
	      uint64_t look)
{
	switch (pt->layout.key_size) {
	case 8:
		return repeated_keys_of(pt, ctx, pkts, look, 8);
	case 16:
		return repeated_keys_of(pt, ctx, pkts, look, 16);
	case 24:
		return repeated_keys_of(pt, ctx, pkts, look, 24);
	case 32:
		return repeated_keys_of(pt, ctx, pkts, look, 32);
	case 40:
		return repeated_keys_of(pt, ctx, pkts, look, 40);
	default:
		return repeated_keys_of(pt, ctx, pkts, look, 0);
	}
}

/* Lanes waiting at table tp->t -> tp->hit, each with its entry in ctx->hits. */
static SL_ALWAYS_INLINE void
table_lookup(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct sl_pkt *pkts,
	     struct table_pass *tp, const struct burst *b)
{
	const struct pl_dtable *pt = tp->pt;
	unsigned t = tp->t, i;

	if (pt->all_hit != NULL) {
		/* Every lane hits the table's one entry (pipeline_priv.h). */
		SL_FOR_EACH_LANE (i, tp->lanes) {
			ctx->hits[i] = pt->all_hit;
		}
		tp->hit = tp->lanes;
	} else if (pt->tbl != NULL) {
		uint64_t look = pt->n_guards ? guard_lanes(pt, pkts, tp->lanes) : tp->lanes;
		uint64_t ffp_done = 0, hit, dups = 0, looked = look;
		bool lut_on = pt->ffp_on || (pt->ffp_adapt && pl_ffp_adapt_on(ctx, t));
		bool by_regs = pt->layout.meta_only && pt->n_guards == 0 && !lut_on && look != 0;

		/* Only the fields this table matches. */
		if (by_regs && ctx->regs_same)
			dups = same_keys(pt, ctx, pkts, look);
		else if (by_regs)
			dups = register_keys(pt, ctx, pkts, look);
		else if (!lut_on && look != 0)
			dups = repeated_keys(pt, ctx, pkts, look);
		else {
			SL_FOR_EACH_LANE (i, look) {
				sl_key_extract(&pt->layout, &pkts[i], ctx->keys[i]);
				ctx->keyp[i] = ctx->keys[i];
			}
		}
		look &= ~dups;
		/* Lanes still low-latency probe the LUT first (ffp.h); its answers skip the search. */
		tp->ll = look & ctx->ll_lanes;
		if (lut_on && tp->ll)
			ffp_done = pl_ffp_lookup(pt, ctx, t, tp->ll, &tp->ffp_found);
		look &= ~ffp_done;
		/* One burst lookup for every lane left. */
		if (look == 0)
			hit = 0;
		else if (pt->use_dcache)
			hit = cached_lookup(pl, pt, ctx, look, (uint8_t)t,
					    b->hooks != NULL && b->hooks->keeping_up, &tp->refused);
		else
			hit = sl_table_lookup_burst(pt->tbl, ctx->keyp, look, ctx->hits);
		if (lut_on && (tp->ll & hit))
			pl_ffp_populate(pt, ctx, t, tp->ll & hit);
		if (dups != 0 && by_regs && ctx->regs_same)
			hit |= same_answers(ctx, dups, looked, hit, &tp->refused);
		else if (dups != 0)
			hit |= register_answers(ctx, dups, hit, &tp->refused);
		tp->hit = hit | tp->ffp_found;
		tp->tbl_hit = tp->hit; /* a table-miss entry below is no LUT answer */
		if (sl_unlikely(tp->refused != 0)) {
			/* Not looked up: no table-miss entry either; table_misses drops them. */
			tp->lanes &= ~tp->refused;
			tp->ll &= ~tp->refused;
			ctx->tstats[t].lookups -= (uint64_t)__builtin_popcountll(tp->refused);
		}
	}
	if (pt->miss != NULL) {
		SL_FOR_EACH_LANE (i, tp->lanes & ~tp->hit) {
			ctx->hits[i] = pt->miss;
		}
		tp->hit = tp->lanes;
	}
	ctx->tstats[t].matched += (uint64_t)__builtin_popcountll(tp->hit);
}

/*
 * plain_output over a run: the consecutive lanes of @lanes from the lowest
 * up that hit @f, entered on @in_port and have nothing pending, until the
 * first that does not.  @f's plain output @out was checked once
 * (pl_port_plain_ok on @in_port).  Out of line, walking the lanes' arrays
 * by pointer: table_execute's loop keeps few registers, and a run of one
 * flow's packets (a burst of one flow, a train) then costs a handful of
 * instructions a lane.  When every lane entered on one port
 * (ctx->regs_same; in_port is never rewritten) the port is not compared.
 * Returns the lanes output; their bytes go to *bytes.
 */
static SL_ALWAYS_INLINE uint64_t
plain_run_of(struct sl_pipeline_ctx *ctx, const struct sl_pkt *pkts, uint64_t lanes,
	     const struct sl_flow *f, uint32_t out, uint32_t in_port, uint32_t out_ports[],
	     uint64_t *bytes, const bool one_port)
{
	unsigned first = (unsigned)__builtin_ctzll(lanes), n = 0;
	unsigned room = sl_lanes_run(lanes);
	void *const *hit = &ctx->hits[first];
	const struct sl_pkt *p = &pkts[first];
	struct pkt_state *st = &ctx->st[first];
	uint32_t *o = &out_ports[first];
	uint64_t sum = 0;

	for (; n < room; n++, p++, st++) {
		if (hit[n] != f || (!one_port && p->in_port != in_port) || pl_pending_word(st) != 0)
			break;
		/* The lane ends here (finish's work): its state is not read again. */
		o[n] = out;
		sum += p->len;
	}
	*bytes = sum;
	return sl_lanes_first(n) << first;
}

static __attribute__((noinline)) uint64_t
plain_run(struct sl_pipeline_ctx *ctx, const struct sl_pkt *pkts, uint64_t lanes,
	  const struct sl_flow *f, uint32_t out, uint32_t in_port, uint32_t out_ports[],
	  uint64_t *bytes)
{
	if (ctx->regs_same)
		return plain_run_of(ctx, pkts, lanes, f, out, in_port, out_ports, bytes, true);
	return plain_run_of(ctx, pkts, lanes, f, out, in_port, out_ports, bytes, false);
}

/*
 * The instructions of the entries tp->hit won: each lane goes on to a
 * table, is output or dropped.  Flow counters are credited once per run of
 * lanes hitting the same flow: with few flows, per-packet increments of one
 * cache line serialise.
 */
static SL_ALWAYS_INLINE void
table_execute(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct sl_pkt *pkts,
	      struct table_pass *tp, struct burst *b)
{
	struct sl_flow *run_flow = NULL;
	uint64_t run_pkts = 0, run_bytes = 0, normal = 0;
	bool run_normal = false;
	unsigned t = tp->t, i;

	/* A trace has one lane: its hit is recorded before what the entry's actions meet. */
	if (b->tracing) {
		SL_FOR_EACH_LANE (i, tp->hit) {
			trace_step(ctx, SL_TRACE_HIT, t, ctx->hits[i], 0);
		}
	}
	/* Not lanes the FFP answered or the flow cache tracks: they have more to do. */
	const uint64_t slow = tp->ffp_found | (b->track ? ctx->ffp->ptrack : 0);
	uint64_t todo = tp->hit;

	while (todo != 0) {
		i = (unsigned)__builtin_ctzll(todo);
		todo &= todo - 1;
		struct pkt_state *st = &ctx->st[i];
		struct sl_flow *f = ctx->hits[i];
		uint8_t reason = SL_DROP_NO_OUTPUT;

		if (f != run_flow) {
			credit(pl, run_flow, run_pkts, run_bytes, b->now);
			run_flow = f;
			run_pkts = run_bytes = 0;
			/* Marks change live: read once per run of lanes on one entry. */
			run_normal = !__atomic_load_n(&f->ll, __ATOMIC_RELAXED);
			/* A run of plain outputs (the next lane hits f too): out of line. */
			uint64_t taken, bytes;
			if (f->plain_out != 0 && !(slow >> i & 1) && todo != 0 &&
			    ctx->hits[__builtin_ctzll(todo)] == f &&
			    pl_port_plain_ok(pl, f->plain_out, pkts[i].in_port) &&
			    (taken = plain_run(ctx, pkts, (todo | UINT64_C(1) << i) & ~slow, f,
					       f->plain_out, pkts[i].in_port, b->out_ports,
					       &bytes)) != 0) {
				unsigned n_taken = (unsigned)__builtin_popcountll(taken);
				run_pkts += n_taken;
				run_bytes += bytes;
				b->n_out += n_taken;
				if (run_normal)
					normal |= taken;
				todo &= ~taken;
				continue;
			}
		}
		/* A normal entry: the packet is no longer low-latency (after the loop). */
		if (run_normal) {
			normal |= UINT64_C(1) << i;
			if (sl_unlikely(tp->ffp_found >> i & 1))
				pl_ffp_unmarked(ctx, t, i);
		}
		run_pkts++;
		run_bytes += pkts[i].len; /* length as the packet enters this table */
		int next = PL_NEXT_SLOW;
		if (tp->ffp_found >> i & 1)
			next = ffp_fast(ctx->ffp->rrec[i], f, st);
		if (next == PL_NEXT_SLOW &&
		    (plain_output(pl, f, &pkts[i], st) || plain_ttl_output(pl, f, &pkts[i], st)))
			next = PL_NEXT_END;
		if (next == PL_NEXT_SLOW)
			next = exec_flow(pl, ctx, f, &pkts[i], st, b->hooks, &reason);
		if (b->track && (ctx->ffp->ptrack >> i & 1))
			pl_ffp_path_hop(ctx, i, t, f, next);

		if (next >= 0) {
			lanes_push(ctx, (unsigned)next, i);
			ctx->chain_at[next] = SL_MAX(ctx->chain_at[next], tp->depth);
		} else if (next == PL_NEXT_END) {
			b->n_out += finish(ctx, st, i, st->skip_reason, b->out_ports, b->drops);
		} else {
			/* Dropped mid-pipeline: outputs done before are already copies. */
			st->pending_out = 0;
			b->n_out += finish(ctx, st, i, reason, b->out_ports, b->drops);
		}
	}
	/* One lane, so the loop credited nothing yet: a trace moves no counter. */
	credit(pl, b->tracing ? NULL : run_flow, run_pkts, run_bytes, b->now);
	tp->ll_lost |= ctx->ll_lanes & normal;
	ctx->ll_lanes &= ~normal;
	if (tp->pt->tbl != NULL && tp->pt->ffp_adapt && tp->ll) {
		/* Won an LL entry: a lane of ll that hit and stayed low-latency. */
		unsigned n_ll = (unsigned)__builtin_popcountll(tp->ll);
		pl_ffp_observe(tp->pt, ctx, t, n_ll,
			       (unsigned)__builtin_popcountll(tp->ll & tp->tbl_hit & ~tp->ll_lost));
	}
}

/* Lanes no entry took, not even a table-miss entry: dropped. */
static SL_ALWAYS_INLINE void
table_misses(struct sl_pipeline_ctx *ctx, const struct table_pass *tp, struct burst *b)
{
	unsigned i;

	SL_FOR_EACH_LANE (i, tp->lanes & ~tp->hit) {
		if (b->tracing)
			trace_step(ctx, SL_TRACE_MISS, tp->t, NULL, 0);
		if (b->track && (ctx->ffp->ptrack >> i & 1))
			pl_ffp_path_miss(ctx, i, tp->t);
		b->n_out += finish(ctx, &ctx->st[i], i, SL_DROP_TABLE_MISS, b->out_ports, b->drops);
	}
	/*
	 * Refused by the search budget (budget.c): dropped, as by an action
	 * (copies already made stay); no path to record, nothing credited.
	 */
	if (sl_unlikely(tp->refused != 0)) {
		ctx->ffp->ptrack &= ~tp->refused;
		SL_FOR_EACH_LANE (i, tp->refused) {
			ctx->st[i].pending_out = 0;
			b->n_out += finish(ctx, &ctx->st[i], i, SL_DROP_SEARCH_BUDGET, b->out_ports,
					   b->drops);
		}
	}
}

/* Table t's pass over the lanes waiting at it. */
static SL_ALWAYS_INLINE void
table_run(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx, struct sl_pkt *pkts,
	  unsigned t, struct burst *b)
{
	struct table_pass tp = {.t = t, .pt = pl_live(&pl->tables[t]), .lanes = ctx->lanes_at[t]};

	ctx->lanes_at[t] = 0;
	ctx->tstats[t].lookups += (uint64_t)__builtin_popcountll(tp.lanes);
	/* Chain length: per table per burst; goto only moves forward. */
	tp.depth = (uint8_t)(ctx->chain_at[t] + 1);
	ctx->chain_at[t] = 0;
	if (tp.depth > ctx->chain_max)
		ctx->chain_max = tp.depth;
	if (__atomic_load_n(&pl->tables[t].state, __ATOMIC_RELAXED) != NULL) { /* state_stage.c */
		ctx->ffp->ptrack &= ~tp.lanes;
		b->lb.lanes = 0;
		pl_state_stage(pl, ctx, t, pkts, tp.lanes);
		if (b->tracing)
			trace_step(ctx, SL_TRACE_STATE, t, NULL,
				   pkts[__builtin_ctzll(tp.lanes)].state);
		/* A state stage always leads to table t + 1: one more table of the chain. */
		ctx->chain_at[t + 1] = SL_MAX(ctx->chain_at[t + 1], tp.depth);
		return;
	}
	if (tp.pt->all_hit != NULL && !b->tracing &&
	    all_hit_goto(pl, ctx, tp.pt->all_hit, pkts, tp.lanes, t, tp.depth, b->now, &b->lb))
		return;
	b->lb.lanes = 0; /* this table's actions may change lengths */
	table_lookup(pl, ctx, pkts, &tp, b);
	table_execute(pl, ctx, pkts, &tp, b);
	table_misses(ctx, &tp, b);
}

unsigned
sl_pipeline_run_burst(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx,
		      struct sl_pkt *pkts, unsigned n, const struct sl_pipeline_hooks *hooks,
		      uint32_t out_ports[], uint8_t drops[])
{
	struct burst b = {.now = hooks != NULL && hooks->now != 0 ? hooks->now : sl_pipeline_tsc(),
			  .tracing = sl_unlikely(ctx->trace != NULL),
			  .hooks = hooks,
			  .out_ports = out_ports,
			  .drops = drops};
	int t;

	if (n == 0)
		return 0;
	ctx->now = b.now;
	ctx->regs_same = hooks != NULL && hooks->same_registers;
	ctx->resized = false;
	burst_begin(ctx, pkts, n, &b);
	burst_paths(pl, ctx, pkts, n, &b);
	while ((t = next_table(ctx)) >= 0)
		table_run(pl, ctx, pkts, (unsigned)t, &b);
	if (b.track)
		pl_ffp_path_end(pl, ctx);
	pl_ffp_burst_end(ctx, n, b.now);
	return b.n_out;
}

bool
sl_pipeline_resized(const struct sl_pipeline_ctx *ctx)
{
	return ctx->resized;
}

const struct sl_pin *
sl_pipeline_pin(const struct sl_pipeline_ctx *ctx, unsigned lane)
{
	return &ctx->st[lane].pin;
}

bool
sl_pipeline_exec_actions(const struct sl_pipeline *pl, struct sl_pipeline_ctx *ctx,
			 struct sl_pkt *p, const struct sl_action *actions, unsigned n,
			 const struct sl_pipeline_hooks *hooks, uint32_t *out_port, uint8_t *drop)
{
	struct pkt_state *st = &ctx->st[0];
	uint8_t reason = SL_DROP_NO_OUTPUT;

	st->pending_out = 0;
	st->skip_reason = SL_DROP_NO_OUTPUT;
	st->has_set = false;
	st->has_queue = false;
	st->flow = NULL;
	ctx->now = sl_pipeline_tsc();
	for (unsigned k = 0; k < n; k++) {
		if (!exec_listed(pl, ctx, st, p, &actions[k], hooks, &reason, k + 1 == n)) {
			st->pending_out = 0;
			*out_port = SL_PORT_DROP;
			*drop = reason;
			ctx->drops[reason]++;
			return false;
		}
	}
	uint32_t outs[1];
	uint8_t drops[1] = {0};
	bool ok = finish(ctx, st, 0, st->skip_reason, outs, drops);
	*out_port = outs[0];
	*drop = drops[0];
	return ok;
}

void
sl_pipeline_table_stats(const struct sl_pipeline_ctx *const ctxs[], unsigned n_ctxs,
			unsigned table_id, struct sl_pipeline_table_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (table_id >= SL_TABLES_MAX)
		return;
	for (unsigned c = 0; c < n_ctxs; c++) {
		st->lookups += ctxs[c]->tstats[table_id].lookups + ctxs[c]->tpath[table_id];
		st->matched += ctxs[c]->tstats[table_id].matched + ctxs[c]->tpath[table_id];
	}
	st->missed = st->lookups - st->matched;
}

void
sl_pipeline_drop_stats(const struct sl_pipeline_ctx *const ctxs[], unsigned n_ctxs,
		       uint64_t drops[SL_DROP__MAX])
{
	memset(drops, 0, SL_DROP__MAX * sizeof(drops[0]));
	for (unsigned c = 0; c < n_ctxs; c++)
		for (unsigned r = 0; r < SL_DROP__MAX; r++)
			drops[r] += ctxs[c]->drops[r];
}

void
sl_pipeline_cache_stats(const struct sl_pipeline_ctx *const ctxs[], unsigned n_ctxs, uint64_t *hits,
			uint64_t *misses)
{
	*hits = *misses = 0;
	for (unsigned c = 0; c < n_ctxs; c++) {
		*hits += ctxs[c]->dc_hits;
		*misses += ctxs[c]->dc_misses;
	}
}

uint64_t
sl_pipeline_copies(const struct sl_pipeline_ctx *const ctxs[], unsigned n_ctxs)
{
	uint64_t n = 0;

	for (unsigned c = 0; c < n_ctxs; c++)
		n += ctxs[c]->copies;
	return n;
}
