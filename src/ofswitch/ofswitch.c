/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The OpenFlow switch agent (control path only; see ofswitch.h).
 *
 * Layout of this file: connection bookkeeping and output backlog; error
 * replies; one handler per message type; multipart replies; asynchronous
 * messages (packet-in, flow-removed, port-status); standalone learning;
 * the poll round.
 */
#include "ofswitch.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "../log/log.h"
#include "../ofconn/ofconn.h"
#include "../ofp/ofp.h"
#include "sl_config.h"

/* Packet-ins taken from the worker per round (bounds the round's work). */
#define PIN_PER_ROUND 256
/* Default miss_send_len (OpenFlow 1.3 OFPCML default). */
#define MISS_SEND_LEN_DEFAULT 128
/* Standalone learning: MAC table size (power of two) and flow idle timeout. */
#define LEARN_SLOTS 4096
#define LEARN_IDLE_S 60

/* Per-connection state. */
struct conn {
	struct sl_ofconn *oc;
	struct sl_ofswitch *sw;
	uint32_t role;         /* SL_OFPCR_ROLE_EQUAL/MASTER/SLAVE */
	uint16_t config_flags; /* SL_OFPC_FRAG_* */
	uint16_t miss_send_len;
	struct sl_ofp_async_config async;
	struct sl_ofp_buf backlog; /* whole messages the socket could not take yet */
	size_t backlog_off;
	struct sl_ofp_mp_assembler mp; /* multipart requests still arriving in pieces */
};

struct learn_ent {
	uint8_t mac[6];
	uint32_t port;
};

struct sl_ofswitch {
	struct sl_ofswitch_params p;
	struct sl_ofconn_mgr *mgr;
	struct conn **conns;
	unsigned n_conns, conns_cap;
	bool have_active_targets;
	uint64_t lat_mult; /* TSC cycles -> ns */
	bool gen_id_set;
	uint64_t gen_id;
	struct sl_ofp_buf out; /* scratch for encoding */
	struct sl_ofswitch_stats st;
	uint64_t next_timer_tsc;
	uint64_t start_tsc;    /* ports count from here (port stats duration) */
	bool *link_up;         /* last link state reported, per port */
	uint32_t *port_config; /* SL_OFPPC_* set by port_mod, per port */
	bool standalone_on;    /* learning-switch mode active */
	struct learn_ent learn[LEARN_SLOTS];
	struct sl_group_spec group_scratch; /* too big for the stack */
	struct sl_ofp_group_mod gm_scratch;
	/* Lines a controller triggers at will (refusals): a budget per window. */
	uint64_t rl_window_tsc; /* start of the current window */
	unsigned rl_logged;     /* lines logged in it */
	unsigned rl_suppressed; /* lines not logged since the last summary */
};

static bool target_active(const char *t);

/* Agent messages go to rte_log type sluice.ofswitch; @level is syslog's (rte_log's minus one). */
static void swlog(struct sl_ofswitch *sw, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
swlog(struct sl_ofswitch *sw, int level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	(void)sw;
	if (!rte_log_can_log(sl_logtype_ofswitch, (uint32_t)level + 1))
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	rte_log((uint32_t)level + 1, sl_logtype_ofswitch, "sluice.ofswitch: %s\n", buf);
}

/*
 * A controller can send refused messages as fast as the socket takes them,
 * so their lines are rate-limited as OVS's VLOG_*_RL are: at most RL_BURST
 * per RL_WINDOW_S, the rest counted and summed up in one line when the
 * window ends (from the next refusal, or timers_run when none comes).
 */
#define RL_BURST 10
#define RL_WINDOW_S 5

static void
rl_flush(struct sl_ofswitch *sw, uint64_t now)
{
	if (now - sw->rl_window_tsc < RL_WINDOW_S * sl_pipeline_tsc_hz())
		return;
	if (sw->rl_suppressed > 0)
		swlog(sw, 5, "%u more lines about refused messages suppressed in the last %u s",
		      sw->rl_suppressed,
		      (unsigned)((now - sw->rl_window_tsc) / sl_pipeline_tsc_hz()));
	sw->rl_window_tsc = now;
	sw->rl_logged = 0;
	sw->rl_suppressed = 0;
}

static void swlog_rl(struct sl_ofswitch *sw, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
swlog_rl(struct sl_ofswitch *sw, int level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!rte_log_can_log(sl_logtype_ofswitch, (uint32_t)level + 1))
		return;
	rl_flush(sw, sl_pipeline_tsc());
	if (sw->rl_logged >= RL_BURST) {
		sw->rl_suppressed++;
		return;
	}
	sw->rl_logged++;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	rte_log((uint32_t)level + 1, sl_logtype_ofswitch, "sluice.ofswitch: %s\n", buf);
}

/*
 * Output.  A reply that does not fit the socket's queue waits in the
 * connection's backlog (a 1M-flow dump is ~100 MB of replies) and drains as
 * the socket takes it; nothing is reordered.
 */

static void
backlog_drain(struct conn *c)
{
	while (c->backlog_off < c->backlog.len && !sl_ofconn_tx_congested(c->oc)) {
		const uint8_t *m = c->backlog.data + c->backlog_off;
		size_t len = (size_t)m[2] << 8 | m[3];
		if (sl_ofconn_send(c->oc, m, len) < 0)
			break;
		c->backlog_off += len;
	}
	if (c->backlog_off == c->backlog.len) {
		sl_ofp_buf_reset(&c->backlog);
		c->backlog_off = 0;
	}
}

static int
buf_append(struct sl_ofp_buf *b, const void *data, size_t len)
{
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;
		while (cap < b->len + len)
			cap *= 2;
		uint8_t *n = realloc(b->data, cap);
		if (n == NULL)
			return -ENOMEM;
		b->data = n;
		b->cap = cap;
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
	return 0;
}

/* Send one or more whole messages (back to back) on @c, in order. */
static int
conn_send(struct conn *c, const uint8_t *msgs, size_t len)
{
	while (len > 0 && c->backlog.len == c->backlog_off) {
		size_t mlen = (size_t)msgs[2] << 8 | msgs[3];
		if (sl_ofconn_send(c->oc, msgs, mlen) < 0)
			break;
		msgs += mlen;
		len -= mlen;
	}
	return len ? buf_append(&c->backlog, msgs, len) : 0;
}

/* Send what the scratch buffer holds, then empty it. */
static void
send_out(struct conn *c)
{
	struct sl_ofswitch *sw = c->sw;

	if (sw->out.len > 0)
		conn_send(c, sw->out.data, sw->out.len);
	sl_ofp_buf_reset(&sw->out);
}

/* An asynchronous message may be dropped rather than queued behind a backlog. */
static bool
conn_congested(const struct conn *c)
{
	return c->backlog.len > c->backlog_off || sl_ofconn_tx_congested(c->oc);
}

static void
send_error(struct conn *c, const struct sl_ofp_error *e, const uint8_t *msg, size_t len)
{
	struct sl_ofp_header h = {0};
	struct sl_ofp_error dummy;

	sl_ofp_header_decode(msg, len, &h, &dummy);
	c->sw->st.errors_sent++;
	swlog_rl(c->sw, 7, "%s: %s -> error %s", sl_ofconn_name(c->oc), sl_ofp_type_name(msg[1]),
		 sl_ofp_error_name(e));
	sl_ofp_buf_reset(&c->sw->out);
	sl_ofp_error_encode(&c->sw->out, h.xid, e, msg,
			    len < SL_OFP_ERROR_DATA_MAX ? len : SL_OFP_ERROR_DATA_MAX);
	send_out(c);
}

static void
send_error_tc(struct conn *c, uint16_t type, uint16_t code, const uint8_t *msg, size_t len)
{
	struct sl_ofp_error e = {.type = type, .code = code};

	send_error(c, &e, msg, len);
}

/* Map a pipeline failure onto the OpenFlow error (flow_mod / group_mod / packet_out). */
static struct sl_ofp_error
fail_to_error(enum sl_pipeline_fail f, bool in_group_mod, bool bad_table_is_goto)
{
	struct sl_ofp_error e = {.type = SL_OFPET_FLOW_MOD_FAILED, .code = SL_OFPFMFC_UNKNOWN};

	switch (f) {
	case SL_FAIL_BAD_TABLE_ID:
		if (bad_table_is_goto)
			e = (struct sl_ofp_error){SL_OFPET_BAD_INSTRUCTION, SL_OFPBIC_BAD_TABLE_ID,
						  0};
		else
			e = (struct sl_ofp_error){SL_OFPET_FLOW_MOD_FAILED, SL_OFPFMFC_BAD_TABLE_ID,
						  0};
		break;
	case SL_FAIL_BAD_OUT_PORT:
	case SL_FAIL_UNSUPPORTED:
		e = (struct sl_ofp_error){SL_OFPET_BAD_ACTION, SL_OFPBAC_BAD_OUT_PORT, 0};
		break;
	case SL_FAIL_BAD_OUT_GROUP:
		e = (struct sl_ofp_error){SL_OFPET_BAD_ACTION, SL_OFPBAC_BAD_OUT_GROUP, 0};
		break;
	case SL_FAIL_BAD_ACTION:
		e = (struct sl_ofp_error){SL_OFPET_BAD_ACTION, SL_OFPBAC_BAD_ARGUMENT, 0};
		break;
	case SL_FAIL_BAD_SET_FIELD:
		e = (struct sl_ofp_error){SL_OFPET_BAD_ACTION, SL_OFPBAC_BAD_SET_ARGUMENT, 0};
		break;
	case SL_FAIL_BAD_MATCH:
		e = (struct sl_ofp_error){SL_OFPET_BAD_MATCH, SL_OFPBMC_BAD_FIELD, 0};
		break;
	case SL_FAIL_BAD_PREREQ:
		e = (struct sl_ofp_error){SL_OFPET_BAD_MATCH, SL_OFPBMC_BAD_PREREQ, 0};
		break;
	case SL_FAIL_TABLE_FULL:
		e = (struct sl_ofp_error){SL_OFPET_FLOW_MOD_FAILED, SL_OFPFMFC_TABLE_FULL, 0};
		break;
	case SL_FAIL_OVERLAP:
		e = (struct sl_ofp_error){SL_OFPET_FLOW_MOD_FAILED, SL_OFPFMFC_OVERLAP, 0};
		break;
	case SL_FAIL_GROUP_EXISTS:
		e = (struct sl_ofp_error){SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_GROUP_EXISTS, 0};
		break;
	case SL_FAIL_UNKNOWN_GROUP:
		e = (struct sl_ofp_error){SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_UNKNOWN_GROUP, 0};
		break;
	case SL_FAIL_BAD_GROUP_ID:
	case SL_FAIL_GROUP_WEIGHT:
		e = (struct sl_ofp_error){SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_INVALID_GROUP, 0};
		break;
	case SL_FAIL_BAD_GROUP_TYPE:
		e = (struct sl_ofp_error){SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_BAD_TYPE, 0};
		break;
	case SL_FAIL_BAD_BUCKET:
		e = (struct sl_ofp_error){SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_BAD_BUCKET, 0};
		break;
	case SL_FAIL_BAD_WATCH:
		e = (struct sl_ofp_error){SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_BAD_WATCH, 0};
		break;
	case SL_FAIL_GROUP_CHAINING:
		e = (struct sl_ofp_error){SL_OFPET_GROUP_MOD_FAILED,
					  SL_OFPGMFC_CHAINING_UNSUPPORTED, 0};
		break;
	case SL_FAIL_TOO_MANY_GROUPS:
		e = (struct sl_ofp_error){SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_OUT_OF_GROUPS, 0};
		break;
	case SL_FAIL_GROUP_LOOP:
		e = (struct sl_ofp_error){SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_LOOP, 0};
		break;
	case SL_FAIL_CHAINED_GROUP:
		e = (struct sl_ofp_error){SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_CHAINED_GROUP, 0};
		break;
	case SL_FAIL_METER_EXISTS:
		e = (struct sl_ofp_error){SL_OFPET_METER_MOD_FAILED, SL_OFPMMFC_METER_EXISTS, 0};
		break;
	case SL_FAIL_UNKNOWN_METER:
		e = (struct sl_ofp_error){SL_OFPET_METER_MOD_FAILED, SL_OFPMMFC_UNKNOWN_METER, 0};
		break;
	case SL_FAIL_BAD_METER_ID:
		e = (struct sl_ofp_error){SL_OFPET_METER_MOD_FAILED, SL_OFPMMFC_INVALID_METER, 0};
		break;
	case SL_FAIL_BAD_METER_FLAGS:
		e = (struct sl_ofp_error){SL_OFPET_METER_MOD_FAILED, SL_OFPMMFC_BAD_FLAGS, 0};
		break;
	case SL_FAIL_BAD_RATE:
		e = (struct sl_ofp_error){SL_OFPET_METER_MOD_FAILED, SL_OFPMMFC_BAD_RATE, 0};
		break;
	case SL_FAIL_BAD_BAND:
		e = (struct sl_ofp_error){SL_OFPET_METER_MOD_FAILED, SL_OFPMMFC_BAD_BAND, 0};
		break;
	case SL_FAIL_BAD_BAND_VALUE:
		e = (struct sl_ofp_error){SL_OFPET_METER_MOD_FAILED, SL_OFPMMFC_BAD_BAND_VALUE, 0};
		break;
	case SL_FAIL_TOO_MANY_METERS:
		e = (struct sl_ofp_error){SL_OFPET_METER_MOD_FAILED, SL_OFPMMFC_OUT_OF_METERS, 0};
		break;
	case SL_FAIL_TOO_MANY_BANDS:
		e = (struct sl_ofp_error){SL_OFPET_METER_MOD_FAILED, SL_OFPMMFC_OUT_OF_BANDS, 0};
		break;
	case SL_FAIL_NOMEM:
	default:
		if (in_group_mod)
			e = (struct sl_ofp_error){SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_EPERM, 0};
		break;
	}
	return e;
}

/*
 * Connections.
 */

static void
async_defaults(struct sl_ofp_async_config *a)
{
	/* Spec 7.3.10: master/equal get everything but INVALID_TTL packet-ins; slaves port status only. */
	a->packet_in_mask[0] = (1u << SL_OFPR_NO_MATCH) | (1u << SL_OFPR_ACTION);
	a->packet_in_mask[1] = 0;
	a->port_status_mask[0] = a->port_status_mask[1] = 0x7;
	a->flow_removed_mask[0] = 0xf;
	a->flow_removed_mask[1] = 0;
}

static bool
controller_connected(const struct sl_ofswitch *sw)
{
	for (unsigned i = 0; i < sw->n_conns; i++)
		if (!sl_ofconn_is_passive(sw->conns[i]->oc))
			return true;
	return false;
}

static void standalone_update(struct sl_ofswitch *sw);

static void
on_connect(struct sl_ofconn *oc, void *arg)
{
	struct sl_ofswitch *sw = arg;
	struct conn *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		sl_ofconn_close(oc);
		return;
	}
	if (sw->n_conns == sw->conns_cap) {
		unsigned cap = sw->conns_cap ? sw->conns_cap * 2 : 8;
		struct conn **n = realloc(sw->conns, cap * sizeof(*n));
		if (n == NULL) {
			free(c);
			sl_ofconn_close(oc);
			return;
		}
		sw->conns = n;
		sw->conns_cap = cap;
	}
	c->oc = oc;
	c->sw = sw;
	c->role = SL_OFPCR_ROLE_EQUAL;
	c->miss_send_len = MISS_SEND_LEN_DEFAULT;
	async_defaults(&c->async);
	sl_ofp_buf_init(&c->backlog);
	sl_ofp_mp_assembler_init(&c->mp);
	sl_ofconn_set_user(oc, c);
	sw->conns[sw->n_conns++] = c;
	/* Notices: what an operator looks for in the log by default (syslog 5). */
	swlog(sw, 5, "%s: connected (%s)", sl_ofconn_name(oc),
	      sl_ofconn_is_passive(oc) ? "passive" : "controller");
	standalone_update(sw);
}

/*
 * The datapath sends expired TTLs to the controller while some connection's
 * async configuration asks for OFPR_INVALID_TTL packet-ins (OpenFlow 1.3 has
 * no set_config flag for it; async_allowed still filters per connection).
 */
static void
invalid_ttl_update(struct sl_ofswitch *sw)
{
	bool want = false;

	for (unsigned i = 0; i < sw->n_conns; i++)
		want |= ((sw->conns[i]->async.packet_in_mask[0] |
			  sw->conns[i]->async.packet_in_mask[1]) >>
			 SL_OFPR_INVALID_TTL) &
			1;
	sl_pipeline_set_invalid_ttl_pin(sw->p.pl, want);
}

static void
on_disconnect(struct sl_ofconn *oc, void *arg)
{
	struct sl_ofswitch *sw = arg;
	struct conn *c = sl_ofconn_get_user(oc);

	if (c == NULL)
		return;
	for (unsigned i = 0; i < sw->n_conns; i++) {
		if (sw->conns[i] == c) {
			sw->conns[i] = sw->conns[--sw->n_conns];
			break;
		}
	}
	swlog(sw, 5, "%s: disconnected", sl_ofconn_name(oc));
	sl_ofp_buf_free(&c->backlog);
	sl_ofp_mp_assembler_clear(&c->mp);
	free(c);
	sl_ofconn_set_user(oc, NULL);
	standalone_update(sw);
	invalid_ttl_update(sw);
}

static void
on_writable(struct sl_ofconn *oc, void *arg)
{
	struct conn *c = sl_ofconn_get_user(oc);

	(void)arg;
	if (c != NULL)
		backlog_drain(c);
}

/*
 * Message handlers.  Each gets the whole message; ofconn has checked the
 * header's length and version.
 */

static void
publish(struct sl_ofswitch *sw)
{
	if (sl_pipeline_dirty(sw->p.pl)) {
		sl_pipeline_publish(sw->p.pl);
		sw->st.publishes++;
	}
}

static void
handle_features(struct conn *c, const struct sl_ofp_header *h)
{
	struct sl_ofp_features f = {
		.datapath_id = c->sw->p.datapath_id,
		.n_buffers = 0,
		.n_tables = SL_TABLES_MAX,
		.auxiliary_id = 0,
		.capabilities = SL_OFPC_FLOW_STATS | SL_OFPC_TABLE_STATS | SL_OFPC_PORT_STATS |
				SL_OFPC_GROUP_STATS | SL_OFPC_QUEUE_STATS,
	};

	sl_ofp_features_reply_encode(&c->sw->out, h->xid, &f);
	send_out(c);
}

static void
handle_flow_mod(struct conn *c, const uint8_t *msg, size_t len)
{
	struct sl_ofswitch *sw = c->sw;
	static struct sl_ofp_flow_mod fm; /* large; the control thread is single */
	struct sl_ofp_error e;
	struct sl_flow_filter flt;
	char err[256];
	int rc = 0;

	if (sl_ofp_flow_mod_decode(msg, len, &fm, &e) < 0) {
		send_error(c, &e, msg, len);
		return;
	}
	if (fm.buffer_id != SL_OFP_NO_BUFFER && fm.command <= SL_OFPFC_MODIFY_STRICT) {
		send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BUFFER_UNKNOWN, msg, len);
		return;
	}
	sl_flow_filter_init(&flt);
	flt.table_id = fm.spec.table_id;
	flt.priority = fm.spec.priority;
	flt.cookie = fm.spec.cookie;
	flt.cookie_mask = fm.spec.cookie_mask;
	flt.match = &fm.spec.match;
	switch (fm.command) {
	case SL_OFPFC_ADD:
		if (fm.spec.table_id >= SL_TABLES_MAX) {
			send_error_tc(c, SL_OFPET_FLOW_MOD_FAILED, SL_OFPFMFC_BAD_TABLE_ID, msg,
				      len);
			return;
		}
		rc = sl_pipeline_flow_add(sw->p.pl, &fm.spec, err, sizeof(err));
		break;
	case SL_OFPFC_MODIFY:
	case SL_OFPFC_MODIFY_STRICT: {
		unsigned n;
		if (fm.spec.table_id >= SL_TABLES_MAX && fm.spec.table_id != SL_OFPTT_ALL) {
			send_error_tc(c, SL_OFPET_FLOW_MOD_FAILED, SL_OFPFMFC_BAD_TABLE_ID, msg,
				      len);
			return;
		}
		flt.strict = fm.command == SL_OFPFC_MODIFY_STRICT;
		rc = sl_pipeline_flow_modify(sw->p.pl, &flt, &fm.spec, &n, err, sizeof(err));
		break;
	}
	case SL_OFPFC_DELETE:
	case SL_OFPFC_DELETE_STRICT:
		if (fm.spec.table_id >= SL_TABLES_MAX && fm.spec.table_id != SL_OFPTT_ALL) {
			send_error_tc(c, SL_OFPET_FLOW_MOD_FAILED, SL_OFPFMFC_BAD_TABLE_ID, msg,
				      len);
			return;
		}
		flt.strict = fm.command == SL_OFPFC_DELETE_STRICT;
		flt.out_port = fm.out_port;
		flt.out_group = fm.out_group;
		sl_pipeline_flow_del(sw->p.pl, &flt, SL_FLOW_REMOVED_DELETE);
		break;
	default:
		send_error_tc(c, SL_OFPET_FLOW_MOD_FAILED, SL_OFPFMFC_BAD_COMMAND, msg, len);
		return;
	}
	if (rc < 0) {
		enum sl_pipeline_fail f = sl_pipeline_fail(sw->p.pl);
		e = fail_to_error(f, false, fm.spec.table_id < SL_TABLES_MAX);
		swlog_rl(sw, 5, "flow_mod refused: %s", err);
		send_error(c, &e, msg, len);
		return;
	}
	sw->st.flow_mods++;
}

/* Group ids referenced by queued packet_outs must outlive them: let the worker drain first. */
static void
packet_outs_drain(struct sl_ofswitch *sw)
{
	for (unsigned spins = 0; sl_worker_pout_pending(sw->p.worker) > 0 && spins < 1000000;
	     spins++)
		rte_pause();
}

static void
handle_group_mod(struct conn *c, const uint8_t *msg, size_t len)
{
	struct sl_ofswitch *sw = c->sw;
	struct sl_ofp_group_mod *gm = &sw->gm_scratch;
	struct sl_ofp_error e;
	char err[256];
	int rc = 0;

	if (sl_ofp_group_mod_decode(msg, len, gm, &e) < 0) {
		send_error(c, &e, msg, len);
		return;
	}
	switch (gm->command) {
	case SL_OFPGC_ADD:
		rc = sl_pipeline_group_add(sw->p.pl, &gm->spec, err, sizeof(err));
		break;
	case SL_OFPGC_MODIFY:
		packet_outs_drain(sw);
		rc = sl_pipeline_group_modify(sw->p.pl, &gm->spec, err, sizeof(err));
		break;
	case SL_OFPGC_DELETE:
		packet_outs_drain(sw);
		rc = sl_pipeline_group_del(sw->p.pl, gm->spec.group_id);
		if (rc == -EBUSY)
			snprintf(err, sizeof(err), "group %u: another group chains to it",
				 gm->spec.group_id);
		break;
	default:
		send_error_tc(c, SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_BAD_COMMAND, msg, len);
		return;
	}
	if (rc < 0) {
		e = fail_to_error(sl_pipeline_fail(sw->p.pl), true, false);
		swlog_rl(sw, 5, "group_mod refused: %s", err);
		send_error(c, &e, msg, len);
	}
}

static void
handle_meter_mod(struct conn *c, const uint8_t *msg, size_t len)
{
	struct sl_ofswitch *sw = c->sw;
	struct sl_ofp_meter_mod mm;
	struct sl_ofp_error e;
	char err[256];
	int rc = 0;

	if (sl_ofp_meter_mod_decode(msg, len, &mm, &e) < 0) {
		send_error(c, &e, msg, len);
		return;
	}
	switch (mm.command) {
	case SL_OFPMC_ADD:
		rc = sl_pipeline_meter_add(sw->p.pl, &mm.spec, err, sizeof(err));
		break;
	case SL_OFPMC_MODIFY:
		rc = sl_pipeline_meter_modify(sw->p.pl, &mm.spec, err, sizeof(err));
		break;
	case SL_OFPMC_DELETE:
		/* A missing meter is not an error (as for groups; Open vSwitch agrees). */
		sl_pipeline_meter_del(sw->p.pl, mm.spec.meter_id);
		break;
	default:
		send_error_tc(c, SL_OFPET_METER_MOD_FAILED, SL_OFPMMFC_BAD_COMMAND, msg, len);
		return;
	}
	if (rc < 0) {
		e = fail_to_error(sl_pipeline_fail(sw->p.pl), false, false);
		swlog_rl(sw, 5, "meter_mod refused: %s", err);
		send_error(c, &e, msg, len);
	}
}

static void
handle_packet_out(struct conn *c, const uint8_t *msg, size_t len)
{
	struct sl_ofswitch *sw = c->sw;
	static struct sl_ofp_packet_out po;
	struct sl_ofp_error e;
	char err[256];
	int rc;

	if (sl_ofp_packet_out_decode(msg, len, &po, &e) < 0) {
		send_error(c, &e, msg, len);
		return;
	}
	if (po.buffer_id != SL_OFP_NO_BUFFER) {
		send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BUFFER_UNKNOWN, msg, len);
		return;
	}
	if ((po.in_port < SL_PORT_MAX_PHYS || po.in_port == SL_PORT_LOCAL) &&
	    sl_port_get(sw->p.ports, po.in_port) == NULL) {
		send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_PORT, msg, len);
		return;
	}
	if (po.data_len < 14) {
		send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_PACKET, msg, len);
		return;
	}
	if (sl_pipeline_actions_prepare(sw->p.pl, po.actions, po.n_actions, err, sizeof(err)) < 0) {
		e = fail_to_error(sl_pipeline_fail(sw->p.pl), false, false);
		send_error(c, &e, msg, len);
		return;
	}
	/* The packet must see every flow_mod sent before it. */
	publish(sw);
	rc = sl_worker_packet_out(sw->p.worker, po.in_port, po.actions, po.n_actions, po.data,
				  po.data_len);
	if (rc < 0) {
		swlog_rl(sw, 7, "packet_out dropped: %s", strerror(-rc));
		send_error_tc(c, SL_OFPET_BAD_REQUEST,
			      rc == -EINVAL ? SL_OFPBRC_BAD_PACKET : SL_OFPBRC_EPERM, msg, len);
		return;
	}
	sw->st.packet_outs++;
}

static void port_desc_fill(struct sl_ofswitch *sw, unsigned i, struct sl_ofp_port_desc *pd);
static void port_live_update(struct sl_ofswitch *sw, unsigned i);
static void port_status_send(struct sl_ofswitch *sw, uint8_t reason, unsigned i);

static void
handle_port_mod(struct conn *c, const uint8_t *msg, size_t len)
{
	struct sl_ofswitch *sw = c->sw;
	struct sl_ofp_port_mod pm;
	struct sl_ofp_error e;

	if (sl_ofp_port_mod_decode(msg, len, &pm, &e) < 0) {
		send_error(c, &e, msg, len);
		return;
	}
	if (sl_port_get(sw->p.ports, pm.port_no) == NULL) {
		send_error_tc(c, SL_OFPET_PORT_MOD_FAILED, SL_OFPPMFC_BAD_PORT, msg, len);
		return;
	}
	unsigned i = (unsigned)sl_port_slot(pm.port_no);
	if (memcmp(pm.hw_addr, sw->p.ports[i].mac, 6) != 0) {
		send_error_tc(c, SL_OFPET_PORT_MOD_FAILED, SL_OFPPMFC_BAD_HW_ADDR, msg, len);
		return;
	}
	if (pm.mask & ~(uint32_t)SL_OFPPC_ALL) {
		send_error_tc(c, SL_OFPET_PORT_MOD_FAILED, SL_OFPPMFC_BAD_CONFIG, msg, len);
		return;
	}
	sw->port_config[i] = (sw->port_config[i] & ~pm.mask) | (pm.config & pm.mask);
	/* PORT_DOWN: the datapath stops using the port (outputs count port-down drops). */
	port_live_update(sw, i);
	port_status_send(sw, SL_OFPPR_MODIFY, i);
}

static bool
is_master_conflict(const struct sl_ofswitch *sw, uint64_t gen)
{
	return sw->gen_id_set && (int64_t)(gen - sw->gen_id) < 0;
}

static void
handle_role(struct conn *c, const uint8_t *msg, size_t len, const struct sl_ofp_header *h)
{
	struct sl_ofswitch *sw = c->sw;
	struct sl_ofp_role r;
	struct sl_ofp_error e;

	if (sl_ofp_role_request_decode(msg, len, &r, &e) < 0) {
		send_error(c, &e, msg, len);
		return;
	}
	if (r.role != SL_OFPCR_ROLE_NOCHANGE && r.role != SL_OFPCR_ROLE_EQUAL &&
	    r.role != SL_OFPCR_ROLE_MASTER && r.role != SL_OFPCR_ROLE_SLAVE) {
		send_error_tc(c, SL_OFPET_ROLE_REQUEST_FAILED, SL_OFPRRFC_BAD_ROLE, msg, len);
		return;
	}
	if (r.role == SL_OFPCR_ROLE_MASTER || r.role == SL_OFPCR_ROLE_SLAVE) {
		if (is_master_conflict(sw, r.generation_id)) {
			send_error_tc(c, SL_OFPET_ROLE_REQUEST_FAILED, SL_OFPRRFC_STALE, msg, len);
			return;
		}
		sw->gen_id = r.generation_id;
		sw->gen_id_set = true;
	}
	if (r.role == SL_OFPCR_ROLE_MASTER)
		for (unsigned i = 0; i < sw->n_conns; i++)
			if (sw->conns[i] != c && sw->conns[i]->role == SL_OFPCR_ROLE_MASTER)
				sw->conns[i]->role = SL_OFPCR_ROLE_SLAVE;
	if (r.role != SL_OFPCR_ROLE_NOCHANGE)
		c->role = r.role;
	struct sl_ofp_role reply = {.role = c->role,
				    .generation_id = sw->gen_id_set ? sw->gen_id : 0};
	publish(sw);
	sl_ofp_role_reply_encode(&sw->out, h->xid, &reply);
	send_out(c);
}

/*
 * OpenState experimenter messages (layouts in docs/openflow.md section 12).
 */

static int
state_flush(void *arg, const uint8_t *msg, size_t len)
{
	return conn_send(arg, msg, len);
}

static int
state_dump_visit(const struct sl_match *key, const struct sl_state_entry_info *e, void *arg)
{
	struct sl_ofp_state_entry en = {.key = *key,
					.state = e->state,
					.rollback = e->rollback,
					.idle_ms = e->idle_ms,
					.hard_ms = e->hard_ms,
					.idle_left_ms = e->idle_left_ms,
					.hard_left_ms = e->hard_left_ms};

	return sl_ofp_state_dump_append(arg, &en) < 0;
}

static void
handle_state(struct conn *c, const uint8_t *msg, size_t len, uint32_t exp_type)
{
	struct sl_ofswitch *sw = c->sw;
	struct sl_ofp_state_mod m;
	struct sl_table_spec ts;
	struct sl_ofp_error e;
	struct sl_state_stats st;
	uint8_t table_id;
	char err[256];
	int rc;

	if (exp_type == SL_OFPX_STATE_DUMP_REPLY || exp_type == SL_OFPX_STATE_STATS_REPLY) {
		send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_EXP_TYPE, msg, len);
		return;
	}
	if (c->role == SL_OFPCR_ROLE_SLAVE && exp_type <= SL_OFPX_STATE_DEL) {
		send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_IS_SLAVE, msg, len);
		return;
	}
	switch (exp_type) {
	case SL_OFPX_STATE_TABLE:
		if (sl_ofp_state_table_decode(msg, len, &ts, &e) < 0) {
			send_error(c, &e, msg, len);
			return;
		}
		if (sl_pipeline_table_declare(sw->p.pl, &ts, err, sizeof(err)) < 0) {
			enum sl_pipeline_fail f = sl_pipeline_fail(sw->p.pl);
			swlog_rl(sw, 5, "state table refused: %s", err);
			send_error_tc(c, SL_OFPET_TABLE_MOD_FAILED,
				      f == SL_FAIL_BAD_TABLE_ID ? SL_OFPTMFC_BAD_TABLE
				      : f == SL_FAIL_TABLE_BUSY ? SL_OFPTMFC_EPERM
								: SL_OFPTMFC_BAD_CONFIG,
				      msg, len);
		}
		return;
	case SL_OFPX_STATE_SET:
	case SL_OFPX_STATE_DEL:
		if (sl_ofp_state_mod_decode(msg, len, exp_type, &m, &e) < 0) {
			send_error(c, &e, msg, len);
			return;
		}
		rc = exp_type == SL_OFPX_STATE_SET
			     ? sl_pipeline_state_set(sw->p.pl, m.table_id, &m.key, &m.set, err,
						     sizeof(err))
			     : sl_pipeline_state_del(sw->p.pl, m.table_id, m.all ? NULL : &m.key,
						     err, sizeof(err));
		if (rc < 0) {
			enum sl_pipeline_fail f = sl_pipeline_fail(sw->p.pl);
			swlog_rl(sw, 5, "state %s refused: %s",
				 exp_type == SL_OFPX_STATE_SET ? "set" : "delete", err);
			if (f == SL_FAIL_BAD_TABLE_ID)
				send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_TABLE_ID, msg,
					      len);
			else if (f == SL_FAIL_BAD_MATCH)
				send_error_tc(c, SL_OFPET_BAD_MATCH, SL_OFPBMC_BAD_FIELD, msg, len);
			else if (f == SL_FAIL_TABLE_FULL)
				send_error_tc(c, SL_OFPET_FLOW_MOD_FAILED, SL_OFPFMFC_TABLE_FULL,
					      msg, len);
			else
				send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_EPERM, msg, len);
		}
		return;
	case SL_OFPX_STATE_DUMP:
	case SL_OFPX_STATE_STATS: {
		const struct sl_state *s;
		uint32_t xid = (uint32_t)msg[4] << 24 | (uint32_t)msg[5] << 16 |
			       (uint32_t)msg[6] << 8 | msg[7];

		if (sl_ofp_state_request_decode(msg, len, exp_type, &table_id, &e) < 0) {
			send_error(c, &e, msg, len);
			return;
		}
		if ((s = sl_pipeline_state_table(sw->p.pl, table_id)) == NULL) {
			send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_TABLE_ID, msg, len);
			return;
		}
		sl_ofp_buf_reset(&sw->out);
		if (exp_type == SL_OFPX_STATE_STATS) {
			sl_pipeline_state_stats(sw->p.pl, table_id, &st);
			sl_ofp_state_stats_reply_encode(&sw->out, xid, table_id, &st);
			send_out(c);
			return;
		}
		struct sl_ofp_state_dump_writer w;
		if (sl_ofp_state_dump_begin(&w, &sw->out, xid, table_id, state_flush, c) == 0 &&
		    sl_pipeline_state_dump(sw->p.pl, table_id, state_dump_visit, &w) == 0)
			sl_ofp_state_dump_end(&w);
		sl_ofp_buf_reset(&sw->out);
		return;
	}
	default:
		send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_EXP_TYPE, msg, len);
		return;
	}
}

/* SL_OFPX_SET_FWD_MODE / SL_OFPX_FWD_MODE: forwarding modes (src/fwd, docs/openflow.md 12.9). */
static void
handle_fwd_mode(struct conn *c, const uint8_t *msg, size_t len)
{
	struct sl_ofswitch *sw = c->sw;
	struct sl_fwd *fwd = sw->p.worker != NULL ? sl_worker_fwd(sw->p.worker) : NULL;
	struct sl_fwd_params fp;
	struct sl_ofp_error e;
	enum sl_fwd_fail fail;
	uint32_t exp_type;
	char err[256];

	if (sl_ofp_fwd_mode_decode(msg, len, &exp_type, &fp, &e) < 0) {
		send_error(c, &e, msg, len);
		return;
	}
	if (fwd == NULL) {
		send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_EPERM, msg, len);
		return;
	}
	if (exp_type == SL_OFPX_FWD_MODE) {
		if (fp.n_modes != 0) {
			send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_LEN, msg, len);
			return;
		}
		struct sl_ofp_header h = {0};
		sl_ofp_header_decode(msg, len, &h, &e);
		sl_fwd_get(fwd, &fp);
		sl_ofp_buf_reset(&sw->out);
		sl_ofp_fwd_mode_encode(&sw->out, h.xid, SL_OFPX_FWD_MODE, &fp);
		send_out(c);
		return;
	}
	if (c->role == SL_OFPCR_ROLE_SLAVE) {
		send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_IS_SLAVE, msg, len);
		return;
	}
	if (sl_fwd_set(fwd, &fp, &fail, err, sizeof(err)) < 0) {
		swlog_rl(sw, 5, "forwarding mode refused: %s", err);
		e = (struct sl_ofp_error){SL_OFPET_EXPERIMENTER, sl_ofp_fwd_fail_code(fail),
					  SL_OFP_EXPERIMENTER_ID};
		send_error(c, &e, msg, len);
		return;
	}
	sl_fwd_params_format(&fp, err, sizeof(err));
	swlog(sw, 6, "forwarding mode: %s", err);
}

/* Fast forwarding path messages: SL_OFPX_LL_SET, SL_OFPX_FFP_CONFIG. */
static void
handle_ffp_experimenter(struct conn *c, uint32_t exp_type, const uint8_t *msg, size_t len)
{
	struct sl_ofswitch *sw = c->sw;
	struct sl_ofp_error e;

	if (c->role == SL_OFPCR_ROLE_SLAVE) {
		send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_IS_SLAVE, msg, len);
		return;
	}
	if (exp_type == SL_OFPX_LL_SET) {
		struct sl_ofp_ll_set ls;
		struct sl_flow_filter flt;
		if (sl_ofp_ll_set_decode(msg, len, &ls, &e) < 0) {
			send_error(c, &e, msg, len);
			return;
		}
		sl_flow_filter_init(&flt);
		flt.table_id = ls.table_id;
		flt.strict = ls.flags & SL_OFPX_LL_STRICT;
		flt.priority = ls.priority;
		flt.cookie = ls.cookie;
		flt.cookie_mask = ls.cookie_mask;
		flt.match = &ls.match;
		unsigned n =
			sl_pipeline_flow_set_ll(sw->p.pl, &flt, ls.command == SL_OFPX_LL_SET_ON);
		swlog(sw, 7, "low-latency mark %s on %u flow(s)",
		      ls.command == SL_OFPX_LL_SET_ON ? "set" : "cleared", n);
		return;
	}
	struct sl_ofp_ffp_config fc;
	if (sl_ofp_ffp_config_decode(msg, len, &fc, &e) < 0) {
		send_error(c, &e, msg, len);
		return;
	}
	struct sl_ffp_auto a = {.enabled = fc.flags & SL_OFPX_FFP_AUTO,
				.min_pps = fc.min_pps,
				.min_timeout = fc.min_timeout};
	sl_pipeline_ffp_auto_set(sw->p.pl, &a);
	sl_pipeline_ffp_cost_model(sw->p.pl, !(fc.flags & SL_OFPX_FFP_NO_MODEL));
	sl_pipeline_ffp_enable(sw->p.pl, fc.flags & SL_OFPX_FFP_ON);
}

static void
handle_experimenter(struct conn *c, const uint8_t *msg, size_t len)
{
	struct sl_ofswitch *sw = c->sw;
	struct sl_ofp_experimenter x;
	struct sl_table_spec ts;
	struct sl_ofp_error e;
	char err[256];

	if (sl_ofp_experimenter_decode(msg, len, &x, &e) < 0) {
		send_error(c, &e, msg, len);
		return;
	}
	if (x.experimenter != SL_OFP_EXPERIMENTER_ID) {
		send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_EXPERIMENTER, msg, len);
		return;
	}
	if (sl_ofp_state_exp_type(x.exp_type)) { /* OpenState */
		handle_state(c, msg, len, x.exp_type);
		return;
	}
	if (x.exp_type == SL_OFPX_LL_SET || x.exp_type == SL_OFPX_FFP_CONFIG) {
		handle_ffp_experimenter(c, x.exp_type, msg, len);
		return;
	}
	if (x.exp_type == SL_OFPX_SET_FWD_MODE || x.exp_type == SL_OFPX_FWD_MODE) {
		handle_fwd_mode(c, msg, len);
		return;
	}
	if (x.exp_type != SL_OFPX_TABLE_DECLARE) {
		send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_EXP_TYPE, msg, len);
		return;
	}
	if (c->role == SL_OFPCR_ROLE_SLAVE) {
		send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_IS_SLAVE, msg, len);
		return;
	}
	if (sl_ofp_table_declare_decode(msg, len, &ts, &e) < 0) {
		send_error(c, &e, msg, len);
		return;
	}
	if (sl_pipeline_table_declare(sw->p.pl, &ts, err, sizeof(err)) < 0) {
		enum sl_pipeline_fail f = sl_pipeline_fail(sw->p.pl);
		swlog_rl(sw, 5, "table declare refused: %s", err);
		send_error_tc(c, SL_OFPET_TABLE_MOD_FAILED,
			      f == SL_FAIL_BAD_TABLE_ID ? SL_OFPTMFC_BAD_TABLE
			      : f == SL_FAIL_TABLE_BUSY ? SL_OFPTMFC_EPERM
							: SL_OFPTMFC_BAD_CONFIG,
			      msg, len);
	}
}

/*
 * Multipart replies.
 */

static int
mp_flush(void *arg, const uint8_t *msg, size_t len)
{
	return conn_send(arg, msg, len);
}

/*
 * queue_get_config: each queue's max_rate in tenths of a percent of its
 * port's speed (OFPQT_MAX_RATE); a port of unknown speed reports 1001 and
 * up ("disabled" in the spec's words: no fraction to give).
 */
static void
queue_config_reply(struct sl_ofswitch *sw, uint32_t xid, uint32_t port)
{
	static struct sl_queue_info qi[SL_QUEUES_PER_PORT * (SL_PORTS_MAX + 1)];
	static struct sl_ofp_queue oq[SL_ARRAY_SIZE(qi)];
	unsigned n = sl_pipeline_queues(sw->p.pl, port, UINT32_MAX, qi, SL_ARRAY_SIZE(qi));

	n = SL_MIN(n, (unsigned)SL_ARRAY_SIZE(qi));
	for (unsigned i = 0; i < n; i++) {
		const struct sl_port *p = sl_port_get(sw->p.ports, qi[i].spec.port_no);
		struct sl_port_link link = {0};
		uint64_t permille = 1001;
		if (p != NULL)
			sl_port_link(p, &link);
		if (link.speed_mbps != 0)
			permille = SL_MIN(qi[i].spec.max_rate / link.speed_mbps, (uint64_t)1000);
		oq[i] = (struct sl_ofp_queue){.port_no = qi[i].spec.port_no,
					      .queue_id = qi[i].spec.queue_id,
					      .max_rate = (uint16_t)permille};
	}
	sl_ofp_queue_get_config_reply_encode(&sw->out, xid, port, oq, n);
}

static void
duration(uint64_t since_tsc, uint32_t *sec, uint32_t *nsec)
{
	uint64_t hz = sl_pipeline_tsc_hz(), d = sl_pipeline_tsc() - since_tsc;

	*sec = (uint32_t)(d / hz);
	*nsec = (uint32_t)((d % hz) * 1000000000ull / hz);
}

struct flow_walk {
	const struct sl_flow_filter *flt;
	struct sl_ofp_mp_writer *w; /* NULL: aggregate only */
	uint64_t packets, bytes;
	uint32_t count;
	struct sl_flow_spec fs;
};

static int
flow_visit(const struct sl_flow *f, void *arg)
{
	struct flow_walk *fw = arg;
	struct sl_ofp_flow_stats st;

	if (!sl_flow_filter_match(f, fw->flt))
		return 0;
	fw->count++;
	fw->packets += sl_flow_packets(f);
	fw->bytes += sl_flow_bytes(f);
	if (fw->w == NULL)
		return 0;
	sl_flow_to_spec(f, &fw->fs);
	duration(f->created_tsc, &st.duration_sec, &st.duration_nsec);
	st.packet_count = (f->flags & SL_FF_NO_PKT_COUNTS) ? UINT64_MAX : sl_flow_packets(f);
	st.byte_count = (f->flags & SL_FF_NO_BYT_COUNTS) ? UINT64_MAX : sl_flow_bytes(f);
	return sl_ofp_mp_flow_stats_append(fw->w, &fw->fs, &st) < 0;
}

static void
port_stats_fill(struct sl_ofswitch *sw, unsigned i, struct sl_ofp_port_stats *ps)
{
	struct sl_worker_port_stats wps, *w = &wps;
	struct sl_port_hw_stats hw;

	sl_worker_port_read(sw->p.worker, i, &wps);

	sl_port_hw_stats(&sw->p.ports[i], &hw);
	memset(ps, 0, sizeof(*ps));
	ps->port_no = sw->p.ports[i].of_no;
	ps->rx_packets = w->rx_packets;
	ps->tx_packets = w->tx_packets;
	ps->rx_bytes = w->rx_bytes;
	ps->tx_bytes = w->tx_bytes;
	ps->rx_dropped = hw.imissed + hw.rx_nombuf;
	ps->tx_dropped = w->tx_drops;
	ps->rx_errors = hw.ierrors;
	ps->tx_errors = hw.oerrors;
	ps->rx_frame_err = ps->rx_over_err = ps->rx_crc_err = ps->collisions = UINT64_MAX;
}

static void
port_desc_fill(struct sl_ofswitch *sw, unsigned i, struct sl_ofp_port_desc *pd)
{
	struct sl_port_link link;

	sl_port_link(&sw->p.ports[i], &link);
	memset(pd, 0, sizeof(*pd));
	pd->port_no = sw->p.ports[i].of_no;
	memcpy(pd->hw_addr, sw->p.ports[i].mac, 6);
	/* Port names are at most 15 characters (port.h), what OpenFlow's field holds. */
	memcpy(pd->name, sw->p.ports[i].name, sizeof(pd->name) - 1);
	pd->name[sizeof(pd->name) - 1] = '\0';
	pd->config = sw->port_config[i];
	pd->state = link.up ? SL_OFPPS_LIVE : SL_OFPPS_LINK_DOWN;
	pd->curr_speed = pd->max_speed = link.speed_mbps * 1000u;
	pd->curr = link.speed_mbps >= 100000  ? SL_OFPPF_100GB_FD
		   : link.speed_mbps >= 40000 ? SL_OFPPF_40GB_FD
		   : link.speed_mbps >= 10000 ? SL_OFPPF_10GB_FD
		   : link.speed_mbps >= 1000  ? SL_OFPPF_1GB_FD
					      : SL_OFPPF_OTHER;
	pd->supported = pd->curr;
}

static void
table_features_fill(struct sl_ofswitch *sw, unsigned t, struct sl_ofp_table_features *tf)
{
	const struct sl_table_spec *ts = sl_pipeline_table_spec(sw->p.pl, t);

	memset(tf, 0, sizeof(*tf));
	tf->table_id = (uint8_t)t;
	if (ts->name[0])
		snprintf(tf->name, sizeof(tf->name), "%s", ts->name);
	else
		snprintf(tf->name, sizeof(tf->name), "table%u", t);
	tf->metadata_match = tf->metadata_write = UINT64_MAX;
	tf->max_entries = ts->max_entries ? ts->max_entries : 1000000;
	tf->kind = ts->kind;
	tf->n_fields = ts->n_fields;
	memcpy(tf->fields, ts->fields, ts->n_fields * sizeof(tf->fields[0]));
}

/*
 * Multipart replies, one handler per request type (mp_handlers below).  A
 * handler encodes its reply into sw->out and returns true, for the caller
 * to send, or sends an error itself and returns false.  @msg/@len: the
 * whole request (reassembled when it came in pieces), for errors.
 */
typedef bool (*mp_handler_fn)(struct conn *c, const struct sl_ofp_mp_request *req, uint32_t xid,
			      const uint8_t *msg, size_t len);

static bool
mp_desc(struct conn *c, const struct sl_ofp_mp_request *req, uint32_t xid, const uint8_t *msg,
	size_t len)
{
	struct sl_ofswitch *sw = c->sw;
	char dp[64];

	(void)req, (void)msg, (void)len;
	snprintf(dp, sizeof(dp), "sluice dpid %016" PRIx64, sw->p.datapath_id);
	struct sl_ofp_desc d = {.mfr_desc = "Sluice project",
				.hw_desc = "DPDK software switch",
				.sw_desc = "sluice " SL_VERSION,
				.serial_num = "none",
				.dp_desc = dp};
	sl_ofp_desc_reply_encode(&sw->out, xid, &d);
	return true;
}

/* FLOW and AGGREGATE: one walk over the flows, with the request's filter. */
static bool
mp_flow(struct conn *c, const struct sl_ofp_mp_request *req, uint32_t xid, const uint8_t *msg,
	size_t len)
{
	struct sl_ofswitch *sw = c->sw;
	struct sl_ofp_mp_writer w;
	struct sl_flow_filter flt;
	struct flow_walk *fw = calloc(1, sizeof(*fw));

	if (fw == NULL) {
		send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_EPERM, msg, len);
		return false;
	}
	if (req->flow.table_id != SL_OFPTT_ALL && req->flow.table_id >= SL_TABLES_MAX) {
		free(fw);
		send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_TABLE_ID, msg, len);
		return false;
	}
	sl_flow_filter_init(&flt);
	flt.table_id = req->flow.table_id;
	flt.cookie = req->flow.cookie;
	flt.cookie_mask = req->flow.cookie_mask;
	flt.out_port = req->flow.out_port;
	flt.out_group = req->flow.out_group;
	flt.match = &req->flow.match;
	fw->flt = &flt;
	if (req->type == SL_OFPMP_FLOW) {
		sl_ofp_mp_writer_begin(&w, &sw->out, SL_OFPMP_FLOW, xid, mp_flush, c);
		fw->w = &w;
	}
	sl_pipeline_flow_iterate(sw->p.pl, 255, flow_visit, fw);
	if (req->type == SL_OFPMP_FLOW)
		sl_ofp_mp_writer_end(&w);
	else
		sl_ofp_aggregate_reply_encode(&sw->out, xid, fw->packets, fw->bytes, fw->count);
	free(fw);
	return true;
}

static bool
mp_table(struct conn *c, const struct sl_ofp_mp_request *req, uint32_t xid, const uint8_t *msg,
	 size_t len)
{
	struct sl_ofswitch *sw = c->sw;
	const struct sl_pipeline_ctx *ctxs[SL_DISPATCH_WORKERS_MAX];
	unsigned n_ctxs = sl_worker_ctxs(sw->p.worker, ctxs, SL_DISPATCH_WORKERS_MAX);
	struct sl_ofp_mp_writer w;

	(void)req, (void)msg, (void)len;
	sl_ofp_mp_writer_begin(&w, &sw->out, SL_OFPMP_TABLE, xid, mp_flush, c);
	for (unsigned t = 0; t < SL_TABLES_MAX; t++) {
		struct sl_pipeline_table_stats pts;
		sl_pipeline_table_stats(ctxs, n_ctxs, t, &pts);
		struct sl_ofp_table_stats ts = {.table_id = (uint8_t)t,
						.active_count = sl_pipeline_flow_count(sw->p.pl, t),
						.lookup_count = pts.lookups,
						.matched_count = pts.matched};
		sl_ofp_mp_table_stats_append(&w, &ts);
	}
	sl_ofp_mp_writer_end(&w);
	return true;
}

static bool
mp_table_features(struct conn *c, const struct sl_ofp_mp_request *req, uint32_t xid,
		  const uint8_t *msg, size_t len)
{
	static struct sl_ofp_table_features tf;
	struct sl_ofswitch *sw = c->sw;
	struct sl_ofp_mp_writer w;

	(void)req, (void)msg, (void)len;
	sl_ofp_mp_writer_begin(&w, &sw->out, SL_OFPMP_TABLE_FEATURES, xid, mp_flush, c);
	for (unsigned t = 0; t < SL_TABLES_MAX; t++) {
		table_features_fill(sw, t, &tf);
		sl_ofp_mp_table_features_append(&w, &tf);
	}
	sl_ofp_mp_writer_end(&w);
	return true;
}

static bool
mp_port_stats(struct conn *c, const struct sl_ofp_mp_request *req, uint32_t xid, const uint8_t *msg,
	      size_t len)
{
	struct sl_ofswitch *sw = c->sw;
	struct sl_ofp_mp_writer w;

	if (req->port_no != SL_PORT_ANY && sl_port_get(sw->p.ports, req->port_no) == NULL) {
		send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_PORT, msg, len);
		return false;
	}
	sl_ofp_mp_writer_begin(&w, &sw->out, SL_OFPMP_PORT_STATS, xid, mp_flush, c);
	for (unsigned i = 0; i < SL_PORT_SLOTS; i++) {
		struct sl_ofp_port_stats ps;
		if (sw->p.ports[i].of_no == 0 ||
		    (req->port_no != SL_PORT_ANY && req->port_no != sw->p.ports[i].of_no))
			continue;
		port_stats_fill(sw, i, &ps);
		duration(sw->start_tsc, &ps.duration_sec, &ps.duration_nsec);
		sl_ofp_mp_port_stats_append(&w, &ps);
	}
	sl_ofp_mp_writer_end(&w);
	return true;
}

static bool
mp_port_desc(struct conn *c, const struct sl_ofp_mp_request *req, uint32_t xid, const uint8_t *msg,
	     size_t len)
{
	struct sl_ofswitch *sw = c->sw;
	struct sl_ofp_mp_writer w;

	(void)req, (void)msg, (void)len;
	sl_ofp_mp_writer_begin(&w, &sw->out, SL_OFPMP_PORT_DESC, xid, mp_flush, c);
	for (unsigned i = 0; i < SL_PORT_SLOTS; i++) {
		struct sl_ofp_port_desc pd;
		if (sw->p.ports[i].of_no == 0)
			continue;
		port_desc_fill(sw, i, &pd);
		sl_ofp_mp_port_desc_append(&w, &pd);
	}
	sl_ofp_mp_writer_end(&w);
	return true;
}

/* GROUP (stats of one group or all) and GROUP_DESC (every group as added). */
static bool
mp_group(struct conn *c, const struct sl_ofp_mp_request *req, uint32_t xid, const uint8_t *msg,
	 size_t len)
{
	static struct sl_ofp_group_stats gst;
	struct sl_ofswitch *sw = c->sw;
	struct sl_ofp_mp_writer w;
	struct sl_group_stats st;
	uint32_t ids[64];
	unsigned n, pos = 0;

	(void)msg, (void)len;
	sl_ofp_mp_writer_begin(&w, &sw->out, req->type, xid, mp_flush, c);
	while ((n = sl_pipeline_group_ids(sw->p.pl, pos, ids, 64)) > 0) {
		pos += n;
		for (unsigned k = 0; k < n; k++) {
			if (req->type == SL_OFPMP_GROUP && req->group_id != SL_GROUP_ID_ALL &&
			    req->group_id != ids[k])
				continue;
			if (sl_pipeline_group_get(sw->p.pl, ids[k], &sw->group_scratch, &st) < 0)
				continue;
			if (req->type == SL_OFPMP_GROUP_DESC) {
				sl_ofp_mp_group_desc_append(&w, &sw->group_scratch);
				continue;
			}
			memset(&gst, 0, sizeof(gst));
			gst.group_id = ids[k];
			gst.ref_count = st.ref_count;
			gst.packet_count = st.n_packets;
			gst.byte_count = st.n_bytes;
			duration(st.created_tsc, &gst.duration_sec, &gst.duration_nsec);
			gst.n_buckets = st.n_buckets;
			for (unsigned b = 0; b < st.n_buckets; b++) {
				gst.buckets[b].packet_count = st.bucket_packets[b];
				gst.buckets[b].byte_count = st.bucket_bytes[b];
			}
			sl_ofp_mp_group_stats_append(&w, &gst);
		}
	}
	sl_ofp_mp_writer_end(&w);
	return true;
}

static bool
mp_group_features(struct conn *c, const struct sl_ofp_mp_request *req, uint32_t xid,
		  const uint8_t *msg, size_t len)
{
	struct sl_ofp_group_features gf = {
		.types = (1u << SL_GROUP_ALL) | (1u << SL_GROUP_SELECT) |
			 (1u << SL_GROUP_INDIRECT) | (1u << SL_GROUP_FF),
		/* Chaining: group actions in buckets; checks: loops are refused (group.c). */
		.capabilities = SL_OFPGFC_SELECT_WEIGHT | SL_OFPGFC_SELECT_LIVENESS |
				SL_OFPGFC_CHAINING | SL_OFPGFC_CHAINING_CHECKS,
		.max_groups = {65536, 65536, 65536, 65536},
		.actions = {SL_OFP_ACTIONS_SUPPORTED, SL_OFP_ACTIONS_SUPPORTED,
			    SL_OFP_ACTIONS_SUPPORTED, SL_OFP_ACTIONS_SUPPORTED},
	};

	(void)req, (void)msg, (void)len;
	sl_ofp_group_features_reply_encode(&c->sw->out, xid, &gf);
	return true;
}

/* METER (stats) and METER_CONFIG, of one meter or all. */
static bool
mp_meter(struct conn *c, const struct sl_ofp_mp_request *req, uint32_t xid, const uint8_t *msg,
	 size_t len)
{
	static struct sl_meter_spec ms;
	struct sl_ofswitch *sw = c->sw;
	struct sl_ofp_mp_writer w;
	struct sl_meter_stats st;
	uint32_t ids[64], sec, nsec;
	unsigned n, pos = 0;

	(void)msg, (void)len;
	sl_ofp_mp_writer_begin(&w, &sw->out, req->type, xid, mp_flush, c);
	while ((n = sl_pipeline_meter_ids(sw->p.pl, pos, ids, 64)) > 0) {
		pos += n;
		for (unsigned k = 0; k < n; k++) {
			if (req->meter_id != SL_METER_ID_ALL && req->meter_id != ids[k])
				continue;
			if (sl_pipeline_meter_get(sw->p.pl, ids[k], &ms, &st) < 0)
				continue;
			if (req->type == SL_OFPMP_METER_CONFIG) {
				sl_ofp_mp_meter_config_append(&w, &ms);
				continue;
			}
			duration(st.created_tsc, &sec, &nsec);
			sl_ofp_mp_meter_stats_append(&w, ids[k], sec, nsec, &st);
		}
	}
	sl_ofp_mp_writer_end(&w);
	return true;
}

static bool
mp_meter_features(struct conn *c, const struct sl_ofp_mp_request *req, uint32_t xid,
		  const uint8_t *msg, size_t len)
{
	struct sl_meter_features f;

	(void)req, (void)msg, (void)len;
	sl_pipeline_meter_features(&f);
	struct sl_ofp_meter_features mf = {
		.max_meter = f.max_meter,
		.band_types = f.band_types,
		.capabilities = f.capabilities,
		.max_bands = f.max_bands,
		.max_color = f.max_color,
	};
	sl_ofp_meter_features_reply_encode(&c->sw->out, xid, &mf);
	return true;
}

/* QUEUE: the operator's queues (pipeline.h "Queues"), by port then id. */
static bool
mp_queue(struct conn *c, const struct sl_ofp_mp_request *req, uint32_t xid, const uint8_t *msg,
	 size_t len)
{
	static struct sl_queue_info qi[SL_QUEUES_PER_PORT * (SL_PORTS_MAX + 1)];
	struct sl_ofswitch *sw = c->sw;
	struct sl_ofp_mp_writer w;

	if (req->queue.port_no != SL_PORT_ANY &&
	    sl_port_get(sw->p.ports, req->queue.port_no) == NULL) {
		send_error_tc(c, SL_OFPET_QUEUE_OP_FAILED, SL_OFPQOFC_BAD_PORT, msg, len);
		return false;
	}
	unsigned n = sl_pipeline_queues(sw->p.pl, req->queue.port_no, req->queue.queue_id, qi,
					SL_ARRAY_SIZE(qi));
	if (n == 0 && req->queue.queue_id != UINT32_MAX) {
		send_error_tc(c, SL_OFPET_QUEUE_OP_FAILED, SL_OFPQOFC_BAD_QUEUE, msg, len);
		return false;
	}
	sl_ofp_mp_writer_begin(&w, &sw->out, SL_OFPMP_QUEUE, xid, mp_flush, c);
	for (unsigned i = 0; i < n && i < SL_ARRAY_SIZE(qi); i++) {
		uint64_t ms = qi[i].age_ms;
		struct sl_ofp_queue_stats qs = {.port_no = qi[i].spec.port_no,
						.queue_id = qi[i].spec.queue_id,
						.tx_bytes = qi[i].tx_bytes,
						.tx_packets = qi[i].tx_packets,
						.tx_errors = qi[i].tx_errors,
						.duration_sec = (uint32_t)(ms / 1000),
						.duration_nsec = (uint32_t)(ms % 1000 * 1000000)};
		sl_ofp_mp_queue_stats_append(&w, &qs);
	}
	sl_ofp_mp_writer_end(&w);
	return true;
}

static const struct {
	uint16_t type; /* SL_OFPMP_* */
	mp_handler_fn run;
} mp_handlers[] = {
	{SL_OFPMP_DESC, mp_desc},
	{SL_OFPMP_FLOW, mp_flow},
	{SL_OFPMP_AGGREGATE, mp_flow},
	{SL_OFPMP_TABLE, mp_table},
	{SL_OFPMP_TABLE_FEATURES, mp_table_features},
	{SL_OFPMP_PORT_STATS, mp_port_stats},
	{SL_OFPMP_PORT_DESC, mp_port_desc},
	{SL_OFPMP_GROUP, mp_group},
	{SL_OFPMP_GROUP_DESC, mp_group},
	{SL_OFPMP_GROUP_FEATURES, mp_group_features},
	{SL_OFPMP_METER, mp_meter},
	{SL_OFPMP_METER_CONFIG, mp_meter},
	{SL_OFPMP_METER_FEATURES, mp_meter_features},
	{SL_OFPMP_QUEUE, mp_queue},
};

static void
handle_multipart(struct conn *c, const uint8_t *msg, size_t len, const struct sl_ofp_header *h)
{
	struct sl_ofswitch *sw = c->sw;
	static struct sl_ofp_mp_request req;
	struct sl_ofp_error e;

	/* A request in pieces (REQ_MORE) is answered once its last piece is in. */
	const uint8_t *whole;
	size_t whole_len;
	int rc = sl_ofp_mp_assemble(&c->mp, msg, len, &whole, &whole_len, &e);
	if (rc <= 0) {
		if (rc < 0)
			send_error(c, &e, msg, len);
		return;
	}
	msg = whole;
	len = whole_len;
	if (sl_ofp_mp_request_decode(msg, len, &req, &e) < 0) {
		send_error(c, &e, msg, len);
		return;
	}
	publish(sw); /* replies show every change made before the request */
	sl_ofp_buf_reset(&sw->out);
	for (unsigned i = 0; i < SL_ARRAY_SIZE(mp_handlers); i++) {
		if (mp_handlers[i].type != req.type)
			continue;
		if (mp_handlers[i].run(c, &req, h->xid, msg, len))
			send_out(c);
		return;
	}
	send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_MULTIPART, msg, len);
}

/* Messages that change the switch: refused from a slave (spec 6.3.5). */
static bool
modifies_state(uint8_t type)
{
	return type == SL_OFPT_FLOW_MOD || type == SL_OFPT_GROUP_MOD || type == SL_OFPT_PORT_MOD ||
	       type == SL_OFPT_TABLE_MOD || type == SL_OFPT_PACKET_OUT || type == SL_OFPT_METER_MOD;
}

static void
on_message(struct sl_ofconn *oc, const uint8_t *msg, size_t len, void *arg)
{
	struct sl_ofswitch *sw = arg;
	struct conn *c = sl_ofconn_get_user(oc);
	struct sl_ofp_header h;
	struct sl_ofp_error e;

	if (c == NULL)
		return;
	sw->st.msgs_rx++;
	if (sl_ofp_header_decode(msg, len, &h, &e) < 0) {
		send_error(c, &e, msg, len);
		return;
	}
	if (c->role == SL_OFPCR_ROLE_SLAVE && modifies_state(h.type)) {
		send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_IS_SLAVE, msg, len);
		return;
	}
	switch (h.type) {
	case SL_OFPT_FEATURES_REQUEST:
		if (sl_ofp_empty_decode(msg, len, &e) < 0)
			send_error(c, &e, msg, len);
		else
			handle_features(c, &h);
		break;
	case SL_OFPT_GET_CONFIG_REQUEST: {
		struct sl_ofp_switch_config cfg = {.flags = c->config_flags,
						   .miss_send_len = c->miss_send_len};
		if (sl_ofp_empty_decode(msg, len, &e) < 0) {
			send_error(c, &e, msg, len);
			break;
		}
		sl_ofp_get_config_reply_encode(&sw->out, h.xid, &cfg);
		send_out(c);
		break;
	}
	case SL_OFPT_SET_CONFIG: {
		struct sl_ofp_switch_config cfg;
		if (sl_ofp_set_config_decode(msg, len, &cfg, &e) < 0) {
			send_error(c, &e, msg, len);
			break;
		}
		c->config_flags = cfg.flags;
		c->miss_send_len = cfg.miss_send_len;
		break;
	}
	case SL_OFPT_FLOW_MOD:
		handle_flow_mod(c, msg, len);
		break;
	case SL_OFPT_GROUP_MOD:
		handle_group_mod(c, msg, len);
		break;
	case SL_OFPT_PACKET_OUT:
		handle_packet_out(c, msg, len);
		break;
	case SL_OFPT_PORT_MOD:
		handle_port_mod(c, msg, len);
		break;
	case SL_OFPT_TABLE_MOD: {
		struct sl_ofp_table_mod tm;
		if (sl_ofp_table_mod_decode(msg, len, &tm, &e) < 0)
			send_error(c, &e, msg, len);
		else if (tm.table_id != SL_OFPTT_ALL && tm.table_id >= SL_TABLES_MAX)
			send_error_tc(c, SL_OFPET_TABLE_MOD_FAILED, SL_OFPTMFC_BAD_TABLE, msg, len);
		break; /* 1.3 table config bits are reserved: nothing to do */
	}
	case SL_OFPT_MULTIPART_REQUEST:
		handle_multipart(c, msg, len, &h);
		break;
	case SL_OFPT_BARRIER_REQUEST:
		if (sl_ofp_empty_decode(msg, len, &e) < 0) {
			send_error(c, &e, msg, len);
			break;
		}
		publish(sw); /* every earlier flow_mod is now visible to packets */
		sl_ofp_barrier_reply_encode(&sw->out, h.xid);
		send_out(c);
		break;
	case SL_OFPT_ROLE_REQUEST:
		handle_role(c, msg, len, &h);
		break;
	case SL_OFPT_GET_ASYNC_REQUEST:
		if (sl_ofp_empty_decode(msg, len, &e) < 0) {
			send_error(c, &e, msg, len);
			break;
		}
		sl_ofp_get_async_reply_encode(&sw->out, h.xid, &c->async);
		send_out(c);
		break;
	case SL_OFPT_SET_ASYNC:
		if (sl_ofp_set_async_decode(msg, len, &c->async, &e) < 0)
			send_error(c, &e, msg, len);
		invalid_ttl_update(sw);
		break;
	case SL_OFPT_QUEUE_GET_CONFIG_REQUEST: {
		uint32_t port;
		if (sl_ofp_queue_get_config_decode(msg, len, &port, &e) < 0) {
			send_error(c, &e, msg, len);
			break;
		}
		if (port != SL_PORT_ANY && sl_port_get(sw->p.ports, port) == NULL) {
			send_error_tc(c, SL_OFPET_QUEUE_OP_FAILED, 0 /* OFPQOFC_BAD_PORT */, msg,
				      len);
			break;
		}
		queue_config_reply(sw, h.xid, port);
		send_out(c);
		break;
	}
	case SL_OFPT_EXPERIMENTER:
		handle_experimenter(c, msg, len);
		break;
	case SL_OFPT_METER_MOD:
		handle_meter_mod(c, msg, len);
		break;
	case SL_OFPT_ERROR:
		swlog_rl(sw, 4, "%s: controller sent an error", sl_ofconn_name(oc));
		break;
	case SL_OFPT_ECHO_REPLY:
	case SL_OFPT_ECHO_REQUEST:
	case SL_OFPT_HELLO:
		break; /* ofconn answers these */
	default:
		/* Unknown types and switch-to-controller messages. */
		send_error_tc(c, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_TYPE, msg, len);
		break;
	}
}

/*
 * Asynchronous messages.
 */

static bool
async_allowed(const struct conn *c, const uint32_t mask[2], unsigned bit)
{
	unsigned idx = c->role == SL_OFPCR_ROLE_SLAVE ? 1 : 0;

	return (mask[idx] >> bit) & 1;
}

static void
flow_removed(const struct sl_flow *f, uint8_t reason, void *arg)
{
	struct sl_ofswitch *sw = arg;
	struct sl_ofp_flow_stats st;
	static struct sl_flow_spec fs;

	if (!(f->flags & SL_FF_SEND_FLOW_REM) || sw->n_conns == 0)
		return;
	sl_flow_to_spec(f, &fs);
	duration(f->created_tsc, &st.duration_sec, &st.duration_nsec);
	st.packet_count = sl_flow_packets(f);
	st.byte_count = sl_flow_bytes(f);
	for (unsigned i = 0; i < sw->n_conns; i++) {
		struct conn *c = sw->conns[i];
		if (!async_allowed(c, c->async.flow_removed_mask, reason))
			continue;
		sl_ofp_buf_reset(&sw->out);
		sl_ofp_flow_removed_encode(&sw->out, 0, &fs, reason, &st);
		send_out(c);
	}
}

static void
port_status_send(struct sl_ofswitch *sw, uint8_t reason, unsigned i)
{
	struct sl_ofp_port_desc pd;

	port_desc_fill(sw, i, &pd);
	for (unsigned k = 0; k < sw->n_conns; k++) {
		struct conn *c = sw->conns[k];
		if (!async_allowed(c, c->async.port_status_mask, reason))
			continue;
		sl_ofp_buf_reset(&sw->out);
		sl_ofp_port_status_encode(&sw->out, 0, reason, &pd);
		send_out(c);
	}
}

static void standalone_packet_in(struct sl_ofswitch *sw, const struct sl_worker_pin *info,
				 const uint8_t *data, size_t len);

static unsigned
packet_ins_forward(struct sl_ofswitch *sw)
{
	struct rte_mbuf *ms[PIN_PER_ROUND];
	unsigned n = sl_worker_pin_dequeue(sw->p.worker, ms, PIN_PER_ROUND);

	for (unsigned k = 0; k < n; k++) {
		const struct sl_worker_pin *info = rte_mbuf_to_priv(ms[k]);
		/* The whole packet, in segments when it is longer than one mbuf (to_controller). */
		static uint8_t whole[UINT16_MAX];
		uint32_t len = rte_pktmbuf_pkt_len(ms[k]);
		const uint8_t *data = rte_pktmbuf_read(ms[k], 0, len, whole);
		bool sent = false;

		if (sw->standalone_on) {
			standalone_packet_in(sw, info, data, len);
			sw->st.packet_ins_standalone++;
			rte_pktmbuf_free(ms[k]);
			continue;
		}
		unsigned wanted = 0, congested = 0;
		struct sl_ofp_packet_in pi = {
			.buffer_id = SL_OFP_NO_BUFFER,
			.reason = info->pin.reason,
			.table_id = info->pin.table_id,
			.cookie = info->pin.cookie,
			.in_port = info->pin.in_port,
			.metadata = info->pin.metadata,
			.tunnel_id = info->pin.tunnel_id,
			.data = data,
			.data_len = len,
			.max_len = SL_OFPCML_NO_BUFFER, /* not buffered: the entire packet */
		};
		for (unsigned i = 0; i < sw->n_conns; i++) {
			struct conn *c = sw->conns[i];
			if (!async_allowed(c, c->async.packet_in_mask, pi.reason))
				continue;
			wanted++;
			if (conn_congested(c)) {
				congested++;
				continue;
			}
			sl_ofp_buf_reset(&sw->out);
			if (sl_ofp_packet_in_encode(&sw->out, 0, &pi) == 0) {
				send_out(c);
				sw->st.packet_ins_sent++;
				sent = true;
			}
		}
		/* Every dequeued packet-in ends one way, counted. */
		if (sent) {
			sw->st.packet_ins_forwarded++;
			sl_lat_hist_add(&sw->st.packet_in_latency,
					sl_cycles_to_ns(rte_rdtsc() - info->rx_tsc, sw->lat_mult),
					1);
		} else {
			sw->st.packet_ins_dropped++;
			if (wanted == 0)
				sw->st.pin_drop_unwanted++;
			else if (congested == wanted)
				sw->st.pin_drop_congested++;
			else
				sw->st.pin_drop_too_big++;
		}
		rte_pktmbuf_free(ms[k]);
	}
	return n;
}

/*
 * Standalone fail mode: a MAC-learning switch run by the agent itself.
 */

static void
standalone_miss_flow(struct sl_ofswitch *sw, bool add)
{
	struct sl_flow_spec fs;
	struct sl_flow_filter flt;
	char err[256];

	if (!add) {
		sl_flow_filter_init(&flt);
		flt.cookie = SL_OFSWITCH_STANDALONE_COOKIE;
		flt.cookie_mask = UINT64_MAX;
		sl_pipeline_flow_del(sw->p.pl, &flt, SL_FLOW_REMOVED_DELETE);
		return;
	}
	sl_flow_spec_init(&fs);
	fs.priority = 0;
	fs.cookie = SL_OFSWITCH_STANDALONE_COOKIE;
	fs.insns.has_apply = true;
	fs.insns.n_apply = 1;
	fs.insns.apply[0].type = SL_ACT_OUTPUT;
	fs.insns.apply[0].output.port = SL_PORT_CONTROLLER;
	fs.insns.apply[0].output.max_len = SL_OFPCML_NO_BUFFER;
	if (sl_pipeline_flow_add(sw->p.pl, &fs, err, sizeof(err)) < 0)
		swlog(sw, 4, "standalone mode: cannot add the table-miss entry: %s", err);
}

static void
standalone_update(struct sl_ofswitch *sw)
{
	bool want = sw->p.fail_mode == SL_FAIL_MODE_STANDALONE && sw->have_active_targets &&
		    !controller_connected(sw);

	/* Packet-ins have somewhere to go: a connection or the learning switch. */
	sl_worker_controller_up_set(sw->p.worker, want || sw->n_conns > 0);
	if (want == sw->standalone_on)
		return;
	sw->standalone_on = want;
	memset(sw->learn, 0, sizeof(sw->learn));
	standalone_miss_flow(sw, want);
	swlog(sw, 5, "fail mode standalone: learning switch %s",
	      want ? "on (no controller)" : "off (a controller is up)");
	publish(sw);
}

static unsigned
learn_slot(const uint8_t *mac)
{
	uint32_t h = 2166136261u;

	for (unsigned i = 0; i < 6; i++)
		h = (h ^ mac[i]) * 16777619u;
	return h & (LEARN_SLOTS - 1);
}

static void
standalone_packet_in(struct sl_ofswitch *sw, const struct sl_worker_pin *info, const uint8_t *data,
		     size_t len)
{
	struct learn_ent *src, *dst;
	struct sl_action out = {.type = SL_ACT_OUTPUT};

	if (len < 14 || info->total_len != len)
		return; /* truncated: cannot be sent on */
	src = &sw->learn[learn_slot(data + 6)];
	if (!(data[6] & 1) && sl_port_get(sw->p.ports, info->pin.in_port) != NULL) {
		memcpy(src->mac, data + 6, 6);
		src->port = info->pin.in_port;
	}
	dst = &sw->learn[learn_slot(data)];
	if (!(data[0] & 1) && dst->port != 0 && memcmp(dst->mac, data, 6) == 0 &&
	    dst->port != info->pin.in_port) {
		struct sl_flow_spec fs;
		struct sl_field fd = {.id = SL_FIELD_ETH_DST};
		uint8_t mask[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
		char err[256];

		sl_flow_spec_init(&fs);
		fs.priority = 1;
		fs.idle_timeout = LEARN_IDLE_S;
		fs.cookie = SL_OFSWITCH_STANDALONE_COOKIE;
		sl_match_set(&fs.match, &fd, data, mask);
		fs.insns.has_apply = true;
		fs.insns.n_apply = 1;
		fs.insns.apply[0].type = SL_ACT_OUTPUT;
		fs.insns.apply[0].output.port = dst->port;
		if (sl_pipeline_flow_add(sw->p.pl, &fs, err, sizeof(err)) == 0)
			sw->st.learned++;
		out.output.port = dst->port;
	} else {
		out.output.port = SL_PORT_FLOOD;
	}
	publish(sw);
	sl_worker_packet_out(sw->p.worker, info->pin.in_port, &out, 1, data, len);
}

/*
 * The datapath uses a port while its link is up and no port_mod took it
 * down.  LOCAL is polled only then (its TAP interface, down, has nothing to
 * receive; a poll is a system call): it joins the workers' set before the
 * pipeline sends there, and leaves after.
 */
static void
port_live_update(struct sl_ofswitch *sw, unsigned i)
{
	bool live = sw->link_up[i] && !(sw->port_config[i] & SL_OFPPC_PORT_DOWN);
	uint32_t no = sw->p.ports[i].of_no;

	if (i == SL_PORT_SLOT_LOCAL && live)
		sl_worker_port_attach(sw->p.worker, i);
	sl_pipeline_port_set_live(sw->p.pl, no, live);
	if (i == SL_PORT_SLOT_LOCAL && !live)
		sl_worker_port_detach(sw->p.worker, i);
}

/*
 * Timers: flow expiry and link changes, once a second.
 */

static void
timers_run(struct sl_ofswitch *sw)
{
	uint64_t now = sl_pipeline_tsc();

	if (now < sw->next_timer_tsc)
		return;
	sw->next_timer_tsc = now + sl_pipeline_tsc_hz();
	rl_flush(sw, now);
	sw->st.flows_expired += sl_pipeline_flow_expire(sw->p.pl, now);
	for (unsigned i = 0; i < SL_PORT_SLOTS; i++) {
		struct sl_port_link link;
		char no[16];
		if (sw->p.ports[i].of_no == 0)
			continue;
		sl_port_link(&sw->p.ports[i], &link);
		if (link.up == sw->link_up[i])
			continue;
		sw->link_up[i] = link.up;
		port_live_update(sw, i);
		swlog(sw, 6, "port %s (%s): link %s",
		      sl_port_no_format(sw->p.ports[i].of_no, no, sizeof(no)), sw->p.ports[i].name,
		      link.up ? "up" : "down");
		port_status_send(sw, SL_OFPPR_MODIFY, i);
	}
}

void
sl_ofswitch_port_added(struct sl_ofswitch *sw, unsigned slot)
{
	struct sl_port_link link;

	sl_port_link(&sw->p.ports[slot], &link);
	sw->link_up[slot] = link.up;
	sw->port_config[slot] = 0;
	port_status_send(sw, SL_OFPPR_ADD, slot);
}

void
sl_ofswitch_port_deleted(struct sl_ofswitch *sw, unsigned slot)
{
	uint32_t no = sw->p.ports[slot].of_no;

	port_status_send(sw, SL_OFPPR_DELETE, slot);
	/* The standalone learning switch forgets the hosts behind it. */
	for (unsigned k = 0; k < LEARN_SLOTS; k++)
		if (sw->learn[k].port == no)
			sw->learn[k].port = 0;
}

bool
sl_ofswitch_run(struct sl_ofswitch *sw, int timeout_ms)
{
	bool asleep = timeout_ms != 0 && sl_worker_pin_agent_sleep(sw->p.worker);
	int events;
	unsigned pins;

	/* A packet-in queued before the worker could see us asleep: no sleep. */
	if (timeout_ms != 0 && !asleep)
		timeout_ms = 0;
	events = sl_ofconn_mgr_poll(sw->mgr, timeout_ms);
	if (asleep) /* a round without sleep writes nothing the worker reads */
		sl_worker_pin_agent_awake(sw->p.worker);
	pins = packet_ins_forward(sw);
	timers_run(sw);
	for (unsigned i = 0; i < sw->n_conns; i++)
		if (sw->conns[i]->backlog.len > sw->conns[i]->backlog_off)
			backlog_drain(sw->conns[i]);
	publish(sw);
	return events > 0 || pins > 0;
}

/* The channel's messages go to rte_log type sluice.ofconn. */
static void
ofconn_log(int level, const char *msg, void *arg)
{
	(void)arg;
	rte_log((uint32_t)level + 1, sl_logtype_ofconn, "sluice.ofconn: %s\n", msg);
}

int
sl_ofswitch_create(const struct sl_ofswitch_params *p, struct sl_ofswitch **out, char *err,
		   size_t err_size)
{
	struct sl_ofswitch *sw = calloc(1, sizeof(*sw));
	struct sl_ofconn_params cp;
	int rc;

	if (sw == NULL)
		return -ENOMEM;
	sw->p = *p;
	sw->start_tsc = sl_pipeline_tsc();
	sw->lat_mult = sl_lat_ns_mult(rte_get_tsc_hz());
	sw->link_up = calloc(SL_PORT_SLOTS, sizeof(*sw->link_up));
	sw->port_config = calloc(SL_PORT_SLOTS, sizeof(*sw->port_config));
	if (sw->link_up == NULL || sw->port_config == NULL) {
		sl_ofswitch_destroy(sw);
		return -ENOMEM;
	}
	for (unsigned s = 0; sw->p.datapath_id == 0 && s < SL_PORT_SLOTS; s++) {
		/* The first port's MAC (LOCAL's is random: it comes last). */
		for (unsigned i = 0; p->ports[s].of_no != 0 && i < 6; i++)
			sw->p.datapath_id = sw->p.datapath_id << 8 | p->ports[s].mac[i];
	}
	for (unsigned i = 0; i < SL_PORTS_MAX; i++) {
		struct sl_port_link link;
		if (p->ports[i].of_no == 0)
			continue;
		sl_port_link(&p->ports[i], &link);
		sw->link_up[i] = link.up;
	}
	/* LOCAL starts down (not polled): timers_run brings it in when its link comes up. */
	sw->link_up[SL_PORT_SLOT_LOCAL] = false;
	sl_ofp_buf_init(&sw->out);
	sl_ofconn_params_init(&cp);
	cp.probe_interval_ms = p->probe_interval_ms;
	cp.unix_gid = p->unix_gid;
	cp.tls = p->tls;
	cp.on_connect = on_connect;
	cp.on_message = on_message;
	cp.on_disconnect = on_disconnect;
	cp.on_writable = on_writable;
	cp.log = ofconn_log;
	cp.arg = sw;
	rc = sl_ofconn_mgr_create(&cp, &sw->mgr);
	if (rc < 0) {
		snprintf(err, err_size, "controller channel: %s", strerror(-rc));
		sl_ofswitch_destroy(sw);
		return rc;
	}
	/* A queued packet-in ends the wait in poll() at once, not at the next round. */
	sl_ofconn_mgr_set_wake_fd(sw->mgr, sl_worker_pin_wake_fd(p->worker));
	for (unsigned i = 0; i < p->n_targets; i++) {
		rc = sl_ofconn_mgr_add_target(sw->mgr, p->targets[i], err, err_size);
		if (rc < 0) {
			sl_ofswitch_destroy(sw);
			return rc;
		}
		if (target_active(p->targets[i]))
			sw->have_active_targets = true;
	}
	sl_pipeline_set_removed(p->pl, flow_removed, sw);
	standalone_update(sw);
	*out = sw;
	return 0;
}

void
sl_ofswitch_destroy(struct sl_ofswitch *sw)
{
	if (sw == NULL)
		return;
	if (sw->mgr != NULL)
		sl_ofconn_mgr_destroy(sw->mgr); /* fires on_disconnect for live connections */
	for (unsigned i = 0; i < sw->n_conns; i++) {
		sl_ofp_buf_free(&sw->conns[i]->backlog);
		free(sw->conns[i]);
	}
	if (sw->p.pl != NULL)
		sl_pipeline_set_removed(sw->p.pl, NULL, NULL);
	sl_ofp_buf_free(&sw->out);
	free(sw->conns);
	free(sw->link_up);
	free(sw->port_config);
	free(sw);
}

static bool
target_active(const char *t)
{
	return strncmp(t, "tcp:", 4) == 0 || strncmp(t, "ssl:", 4) == 0 ||
	       strncmp(t, "unix:", 5) == 0;
}

static bool
target_listed(const char *t, const char *const *targets, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(targets[i], t) == 0)
			return true;
	return false;
}

int
sl_ofswitch_targets_set(struct sl_ofswitch *sw, const char *const *targets, unsigned n, char *err,
			size_t err_size)
{
	int n_idx = sl_ofconn_mgr_n_targets(sw->mgr), added[64];
	unsigned n_added = 0;
	int rc;

	/* New targets first: if one fails, those just added go again and nothing changed. */
	for (unsigned i = 0; i < n; i++) {
		bool live = false;
		for (int t = 0; t < n_idx && !live; t++) {
			const char *cur = sl_ofconn_mgr_target(sw->mgr, t);
			live = cur != NULL && strcmp(cur, targets[i]) == 0;
		}
		if (live || target_listed(targets[i], targets, i))
			continue;
		if (n_added == SL_ARRAY_SIZE(added)) {
			snprintf(err, err_size, "at most %zu new targets at once",
				 SL_ARRAY_SIZE(added));
			rc = -E2BIG;
			goto undo;
		}
		rc = sl_ofconn_mgr_add_target(sw->mgr, targets[i], err, err_size);
		if (rc < 0)
			goto undo;
		added[n_added++] = rc;
	}
	for (int t = 0; t < n_idx; t++) {
		const char *cur = sl_ofconn_mgr_target(sw->mgr, t);
		if (cur != NULL && !target_listed(cur, targets, n))
			sl_ofconn_mgr_del_target(sw->mgr, t);
	}
	sw->have_active_targets = false;
	for (unsigned i = 0; i < n; i++)
		sw->have_active_targets |= target_active(targets[i]);
	standalone_update(sw);
	return 0;

undo:
	while (n_added > 0)
		sl_ofconn_mgr_del_target(sw->mgr, added[--n_added]);
	return rc;
}

void
sl_ofswitch_fail_mode_set(struct sl_ofswitch *sw, enum sl_fail_mode mode)
{
	sw->p.fail_mode = mode;
	standalone_update(sw);
}

int
sl_ofswitch_listen_port(const struct sl_ofswitch *sw, int idx)
{
	return sl_ofconn_mgr_listen_port(sw->mgr, idx);
}

unsigned
sl_ofswitch_n_connections(const struct sl_ofswitch *sw)
{
	return sw->n_conns;
}

int
sl_ofswitch_connection(const struct sl_ofswitch *sw, unsigned i, char *buf, size_t size)
{
	static const char *const roles[] = {"nochange", "equal", "master", "slave"};
	const struct conn *c;

	if (i >= sw->n_conns)
		return -ENOENT;
	c = sw->conns[i];
	snprintf(buf, size, "%s %s role=%s", sl_ofconn_name(c->oc),
		 sl_ofconn_is_passive(c->oc) ? "service" : "controller",
		 c->role < SL_ARRAY_SIZE(roles) ? roles[c->role] : "?");
	return 0;
}

unsigned
sl_ofswitch_n_controllers(const struct sl_ofswitch *sw)
{
	return sl_ofconn_mgr_n_controllers(sw->mgr);
}

void
sl_ofswitch_stats(const struct sl_ofswitch *sw, struct sl_ofswitch_stats *st)
{
	*st = sw->st;
}

uint64_t
sl_ofswitch_datapath_id(const struct sl_ofswitch *sw)
{
	return sw->p.datapath_id;
}
