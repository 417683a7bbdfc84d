/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ofp_client: the client-side decoders (ofp_client.c).
 *
 * 1. Golden vectors: a features reply and multipart entries assembled by
 *    hand from the OpenFlow 1.3.5 structures (appendix A), field by field.
 * 2. Round trips: what the switch-side writer (sl_ofp_mp_*_append) encodes
 *    decodes back to the same values, for every entry type, across a reply
 *    split into several messages.
 * 3. Untrusted input: every truncation of a valid body, every corrupted
 *    length field, and random bytes must fail cleanly (never read outside
 *    the body: run under ASan in CI), never loop and never succeed on a
 *    body whose entries do not add up exactly.
 */
#include "ofp.h"

#include <string.h>

#include "../core/sl_test.h"
#include "../flowfile/flowfile.h"
#include "ofp_priv.h"

static bool
err_is(const struct sl_ofp_error *e, uint16_t type, uint16_t code)
{
	return e->type == type && e->code == code;
}

static void
parse_flow(const char *text, struct sl_flow_spec *fs)
{
	struct sl_parse_error pe;

	SL_VERIFY(sl_flow_parse(text, fs, &pe) == 0);
}

/* Every entry decoder, behind one signature, for the generic tests. */
enum kind { K_FLOW, K_TABLE, K_PORT, K_DESC, K_GROUP, K_GDESC, K_FEAT, K_METER, K_MCONF, K__MAX };

static struct sl_flow_spec g_fs;
static struct sl_ofp_flow_stats g_fst;
static struct sl_ofp_table_stats g_ts;
static struct sl_ofp_port_stats g_ps;
static struct sl_ofp_port_desc g_pd;
static struct sl_ofp_group_stats g_gs;
static struct sl_group_spec g_gd;
static struct sl_ofp_table_features g_tf;
static uint32_t g_mid, g_msec, g_mnsec;
static struct sl_meter_stats g_mst;
static struct sl_meter_spec g_mc;

static int
decode_one(enum kind k, const uint8_t *body, size_t len, size_t *ofs, struct sl_ofp_error *e)
{
	switch (k) {
	case K_FLOW:
		return sl_ofp_flow_stats_entry_decode(body, len, ofs, &g_fs, &g_fst, e);
	case K_TABLE:
		return sl_ofp_table_stats_entry_decode(body, len, ofs, &g_ts, e);
	case K_PORT:
		return sl_ofp_port_stats_entry_decode(body, len, ofs, &g_ps, e);
	case K_DESC:
		return sl_ofp_port_desc_entry_decode(body, len, ofs, &g_pd, e);
	case K_GROUP:
		return sl_ofp_group_stats_entry_decode(body, len, ofs, &g_gs, e);
	case K_GDESC:
		return sl_ofp_group_desc_entry_decode(body, len, ofs, &g_gd, e);
	case K_METER:
		return sl_ofp_meter_stats_entry_decode(body, len, ofs, &g_mid, &g_msec, &g_mnsec,
						       &g_mst, e);
	case K_MCONF:
		return sl_ofp_meter_config_entry_decode(body, len, ofs, &g_mc, e);
	default:
		return sl_ofp_table_features_entry_decode(body, len, ofs, &g_tf, e);
	}
}

/*
 * Decode a whole body; returns the number of entries or -1.  Checks the
 * decoder's contract on the way: progress on success, the offset never
 * past the body.
 */
static long
decode_all(enum kind k, const uint8_t *body, size_t len)
{
	struct sl_ofp_error e;
	long n = 0;

	for (size_t ofs = 0; ofs < len;) {
		size_t before = ofs;

		if (decode_one(k, body, len, &ofs, &e) < 0)
			return -1;
		CHECK(ofs > before && ofs <= len, "kind %d: offset %zu -> %zu of %zu", k, before,
		      ofs, len);
		if (ofs <= before || ofs > len)
			return -1;
		n++;
	}
	return n;
}

/*
 * 1. Golden vectors.
 */

static void
test_golden_features(void)
{
	static const char features[] =
		"04 06 0020 00000007" /* header: features reply, 32 bytes, xid 7 */
		"0000020000000001"    /* datapath_id */
		"00000000"            /* n_buffers */
		"fe 00 0000"          /* n_tables 254, auxiliary_id 0, pad */
		"0000004f"            /* capabilities: FLOW|TABLE|PORT|GROUP|QUEUE */
		"00000000";           /* reserved */
	struct sl_ofp_features f;
	struct sl_ofp_error e;
	uint8_t m[64];
	size_t n = sl_test_hex(features, m, sizeof(m));
	int rc;

	rc = sl_ofp_features_reply_decode(m, n, &f, &e);
	CHECK(rc == 0 && f.datapath_id == 0x0000020000000001ull && f.n_buffers == 0 &&
		      f.n_tables == 254 && f.auxiliary_id == 0 && f.capabilities == 0x4f,
	      "features golden: rc %d dpid %llx", rc, (unsigned long long)f.datapath_id);

	/* Encoder and decoder agree. */
	struct sl_ofp_buf b;
	struct sl_ofp_features g = {.datapath_id = 42, .n_tables = 3, .capabilities = 7};
	sl_ofp_buf_init(&b);
	SL_VERIFY(sl_ofp_features_reply_encode(&b, 9, &g) == 0);
	rc = sl_ofp_features_reply_decode(b.data, b.len, &f, &e);
	CHECK(rc == 0 && f.datapath_id == 42 && f.n_tables == 3 && f.capabilities == 7,
	      "features round trip");
	sl_ofp_buf_free(&b);

	/* Wrong type, short, long (header length fixed to match). */
	m[1] = SL_OFPT_FEATURES_REQUEST;
	rc = sl_ofp_features_reply_decode(m, n, &f, &e);
	CHECK(rc < 0 && err_is(&e, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_TYPE), "features type");
	m[1] = SL_OFPT_FEATURES_REPLY;
	wr16(m + 2, 24);
	rc = sl_ofp_features_reply_decode(m, 24, &f, &e);
	CHECK(rc < 0 && err_is(&e, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_LEN), "features short");
	wr16(m + 2, 40);
	rc = sl_ofp_features_reply_decode(m, 40, &f, &e);
	CHECK(rc < 0 && err_is(&e, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_LEN), "features long");
	/* Header length disagreeing with the framed length. */
	wr16(m + 2, 32);
	rc = sl_ofp_features_reply_decode(m, 31, &f, &e);
	CHECK(rc < 0, "features framing");
}

static void
test_golden_multipart(void)
{
	static const char port_stats[] =
		"04 13 0080 00000002"               /* multipart reply, 128 bytes, xid 2 */
		"0004 0001 00000000"                /* OFPMP_PORT_STATS, REPLY_MORE, pad */
		"00000003 00000000"                 /* port_no 3, pad */
		"000000000000000a 0000000000000014" /* rx_packets 10, tx_packets 20 */
		"0000000000000280 0000000000000500" /* rx_bytes 640, tx_bytes 1280 */
		"0000000000000001 0000000000000002" /* rx_dropped 1, tx_dropped 2 */
		"0000000000000000 0000000000000000" /* rx_errors, tx_errors */
		"ffffffffffffffff ffffffffffffffff" /* rx_frame_err, rx_over_err: unsupported */
		"ffffffffffffffff ffffffffffffffff" /* rx_crc_err, collisions: unsupported */
		"00000005 1dcd6500";                /* duration 5.5 s */
	static const char table_stats[] =
		"00 000000 00000008"                /* table 0, pad, active_count 8 */
		"0000000000000064 0000000000000060" /* lookups 100, matched 96 */
		"02 000000 00000001"                /* table 2 */
		"0000000000000003 0000000000000003";
	static const char port_desc[] =
		"00000001 00000000 020000000001 0000" /* port 1, pad, hw_addr, pad */
		"6e65745f7063617030000000000000ff"    /* "net_pcap0" with a junk byte after NUL */
		"00000001 00000004"                   /* config PORT_DOWN, state LIVE */
		"00000040 00000000 00000040 00000000" /* curr 10GB_FD, adv, supported, peer */
		"00989680 00989680";                  /* curr/max speed 10,000,000 kbps */
	static const char group_stats[] =
		"0038 0000 00000007 00000002 00000000" /* length 56, group 7, ref_count 2 */
		"000000000000000b 00000000000002c0"    /* packets 11, bytes 704 */
		"00000001 00000000"                    /* duration 1 s */
		"000000000000000b 00000000000002c0";   /* bucket 0 */
	static const char group_desc[] =
		"0028 01 00 00000005"                   /* length 40, select, group 5 */
		"0020 0001 ffffffff ffffffff 00000000"  /* bucket: len 32, weight 1, no watch */
		"0000 0010 00000002 ffff 000000000000"; /* output:2 */
	static const char meter_stats[] =
		"00000007 0038 000000000000"         /* meter 7, length 56, pad */
		"00000003"                           /* flow_count 3 */
		"000000000000000b 00000000000002c0"  /* packets 11, bytes 704 */
		"00000002 000f4240"                  /* duration 2.001 s */
		"0000000000000004 0000000000000100"; /* band 0: 4 packets, 256 bytes */
	static const char meter_config[] =
		"0028 0009 00000003"                   /* length 40, KBPS|STATS, meter 3 */
		"0001 0010 00002710 00000000 00000000" /* drop, rate 10000, burst 0 */
		"0002 0010 00001388 00000020 02000000"; /* dscp_remark, rate 5000, burst 32, prec 2 */
	struct sl_ofp_mp_reply r;
	struct sl_ofp_error e;
	uint8_t m[512];
	size_t n, ofs;
	int rc;

	n = sl_test_hex(port_stats, m, sizeof(m));
	rc = sl_ofp_mp_reply_decode(m, n, &r, &e);
	CHECK(rc == 0 && r.type == SL_OFPMP_PORT_STATS && r.flags == SL_OFPMPF_REPLY_MORE &&
		      r.body_len == 112 && r.body == m + 16,
	      "mp reply header");
	ofs = 0;
	rc = sl_ofp_port_stats_entry_decode(r.body, r.body_len, &ofs, &g_ps, &e);
	CHECK(rc == 0 && ofs == 112 && g_ps.port_no == 3 && g_ps.rx_packets == 10 &&
		      g_ps.tx_packets == 20 && g_ps.rx_bytes == 640 && g_ps.tx_bytes == 1280 &&
		      g_ps.rx_dropped == 1 && g_ps.tx_dropped == 2 &&
		      g_ps.collisions == UINT64_MAX && g_ps.duration_sec == 5 &&
		      g_ps.duration_nsec == 500000000,
	      "port stats golden");

	n = sl_test_hex(table_stats, m, sizeof(m));
	ofs = 0;
	rc = sl_ofp_table_stats_entry_decode(m, n, &ofs, &g_ts, &e);
	CHECK(rc == 0 && ofs == 24 && g_ts.table_id == 0 && g_ts.active_count == 8 &&
		      g_ts.lookup_count == 100 && g_ts.matched_count == 96,
	      "table stats golden 0");
	rc = sl_ofp_table_stats_entry_decode(m, n, &ofs, &g_ts, &e);
	CHECK(rc == 0 && ofs == 48 && g_ts.table_id == 2 && g_ts.lookup_count == 3,
	      "table stats golden 1");

	n = sl_test_hex(port_desc, m, sizeof(m));
	ofs = 0;
	rc = sl_ofp_port_desc_entry_decode(m, n, &ofs, &g_pd, &e);
	CHECK(rc == 0 && ofs == 64 && g_pd.port_no == 1 && g_pd.hw_addr[0] == 2 &&
		      g_pd.hw_addr[5] == 1 && strcmp(g_pd.name, "net_pcap0") == 0 &&
		      g_pd.config == SL_OFPPC_PORT_DOWN && g_pd.state == SL_OFPPS_LIVE &&
		      g_pd.curr == SL_OFPPF_10GB_FD && g_pd.curr_speed == 10000000,
	      "port desc golden: '%s'", g_pd.name);
	/* A name filling all 16 bytes is cut to 15 and terminated. */
	memset(m + 16, 'A', 16);
	ofs = 0;
	rc = sl_ofp_port_desc_entry_decode(m, n, &ofs, &g_pd, &e);
	CHECK(rc == 0 && strlen(g_pd.name) == 15, "port name without NUL");

	n = sl_test_hex(group_stats, m, sizeof(m));
	ofs = 0;
	rc = sl_ofp_group_stats_entry_decode(m, n, &ofs, &g_gs, &e);
	CHECK(rc == 0 && ofs == 56 && g_gs.group_id == 7 && g_gs.ref_count == 2 &&
		      g_gs.packet_count == 11 && g_gs.byte_count == 704 && g_gs.n_buckets == 1 &&
		      g_gs.buckets[0].packet_count == 11,
	      "group stats golden");

	n = sl_test_hex(group_desc, m, sizeof(m));
	ofs = 0;
	rc = sl_ofp_group_desc_entry_decode(m, n, &ofs, &g_gd, &e);
	CHECK(rc == 0 && ofs == 40 && g_gd.group_id == 5 && g_gd.type == SL_GROUP_SELECT &&
		      g_gd.n_buckets == 1 && g_gd.buckets[0].weight == 1 &&
		      g_gd.buckets[0].n_actions == 1 &&
		      g_gd.buckets[0].actions[0].type == SL_ACT_OUTPUT &&
		      g_gd.buckets[0].actions[0].output.port == 2,
	      "group desc golden");
	m[2] = 9; /* group type 9 */
	ofs = 0;
	rc = sl_ofp_group_desc_entry_decode(m, n, &ofs, &g_gd, &e);
	CHECK(rc < 0 && err_is(&e, SL_OFPET_GROUP_MOD_FAILED, SL_OFPGMFC_BAD_TYPE),
	      "group desc bad type");

	n = sl_test_hex(meter_stats, m, sizeof(m));
	ofs = 0;
	rc = sl_ofp_meter_stats_entry_decode(m, n, &ofs, &g_mid, &g_msec, &g_mnsec, &g_mst, &e);
	CHECK(rc == 0 && ofs == 56 && g_mid == 7 && g_msec == 2 && g_mnsec == 1000000 &&
		      g_mst.flow_count == 3 && g_mst.packets == 11 && g_mst.bytes == 704 &&
		      g_mst.n_bands == 1 && g_mst.band_packets[0] == 4 &&
		      g_mst.band_bytes[0] == 256 && g_mst.created_tsc == 0,
	      "meter stats golden");
	m[5] = 0x30; /* length 48: half a band counter */
	ofs = 0;
	rc = sl_ofp_meter_stats_entry_decode(m, n, &ofs, &g_mid, &g_msec, &g_mnsec, &g_mst, &e);
	CHECK(rc < 0 && err_is(&e, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_LEN) && ofs == 0,
	      "meter stats length 48");

	n = sl_test_hex(meter_config, m, sizeof(m));
	ofs = 0;
	rc = sl_ofp_meter_config_entry_decode(m, n, &ofs, &g_mc, &e);
	CHECK(rc == 0 && ofs == 40 && g_mc.meter_id == 3 &&
		      g_mc.flags == (SL_METER_KBPS | SL_METER_STATS) && g_mc.n_bands == 2 &&
		      g_mc.bands[0].type == SL_BAND_DROP && g_mc.bands[0].rate == 10000 &&
		      g_mc.bands[0].burst == 0 && g_mc.bands[1].type == SL_BAND_DSCP_REMARK &&
		      g_mc.bands[1].rate == 5000 && g_mc.bands[1].burst == 32 &&
		      g_mc.bands[1].prec_level == 2,
	      "meter config golden");
	m[36] = 9; /* prec_level 9 */
	ofs = 0;
	rc = sl_ofp_meter_config_entry_decode(m, n, &ofs, &g_mc, &e);
	CHECK(rc < 0 && err_is(&e, SL_OFPET_METER_MOD_FAILED, SL_OFPMMFC_BAD_BAND_VALUE),
	      "meter config prec_level 9");
	m[36] = 2;
	m[1] = 0x20; /* length 32: the second band cut in half */
	ofs = 0;
	rc = sl_ofp_meter_config_entry_decode(m, n, &ofs, &g_mc, &e);
	CHECK(rc < 0 && err_is(&e, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_LEN),
	      "meter config length 32");

	/* Not a multipart reply; too short for one. */
	n = sl_test_hex("04 12 0010 00000001 0004 0000 00000000", m, sizeof(m));
	rc = sl_ofp_mp_reply_decode(m, n, &r, &e);
	CHECK(rc < 0 && err_is(&e, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_TYPE), "mp request");
	n = sl_test_hex("04 13 000c 00000001 0004 0000", m, sizeof(m));
	rc = sl_ofp_mp_reply_decode(m, n, &r, &e);
	CHECK(rc < 0 && err_is(&e, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_LEN), "mp short");
	n = sl_test_hex("04 13 0010 00000001 0004 0000 00000000", m, sizeof(m));
	rc = sl_ofp_mp_reply_decode(m, n, &r, &e);
	CHECK(rc == 0 && r.body == NULL && r.body_len == 0, "mp empty body");
}

/*
 * 2. Round trips through the switch-side writer.
 */

/* Walk every message of a reply in @b (no flush callback); returns entries decoded or -1. */
static long
decode_reply(const struct sl_ofp_buf *b, uint16_t type, enum kind k, unsigned *n_msgs)
{
	struct sl_ofp_mp_reply r;
	struct sl_ofp_error e;
	long total = 0;
	size_t ofs = 0;

	*n_msgs = 0;
	while (ofs < b->len) {
		size_t len = rd16(b->data + ofs + 2);
		long n;

		if (sl_ofp_mp_reply_decode(b->data + ofs, len, &r, &e) < 0 || r.type != type)
			return -1;
		n = decode_all(k, r.body, r.body_len);
		if (n < 0)
			return -1;
		total += n;
		ofs += len;
		++*n_msgs;
		/* REPLY_MORE on all but the last message. */
		if (!!(r.flags & SL_OFPMPF_REPLY_MORE) != (ofs < b->len))
			return -1;
	}
	return total;
}

static void
test_roundtrip_flows(void)
{
	static const char *const flows[] = {
		"priority=1,ip,nw_dst=10.0.0.1 actions=output:1",
		"table=3,cookie=0x1234,idle_timeout=10,hard_timeout=20,send_flow_rem,tcp,"
		"nw_src=10.0.0.0/8,tp_dst=443,in_port=5 actions=dec_ttl,"
		"mod_dl_dst:02:00:00:00:00:01,output:2,goto_table:9",
		"ipv6,ipv6_dst=2001:db8::/32 actions=write_actions(output:1),"
		"write_metadata:0x5/0xff",
		"table=1,udp,raw(l4,64,16)=0x1234/0xff00 actions=group:7",
		"priority=0 actions=CONTROLLER",
		"dl_vlan=10,dl_src=00:11:22:33:44:55/ff:ff:ff:00:00:00 actions=clear_actions,"
		"goto_table:2",
	};
	enum { N = SL_ARRAY_SIZE(flows) };
	struct sl_flow_spec fs[N];
	struct sl_ofp_mp_writer w;
	struct sl_ofp_buf b;
	unsigned n_msgs;
	long got;

	sl_ofp_buf_init(&b);
	for (unsigned i = 0; i < N; i++)
		parse_flow(flows[i], &fs[i]);

	/* Each flow alone: formatting the decoded spec gives the original's text. */
	for (unsigned i = 0; i < N; i++) {
		struct sl_ofp_flow_stats st = {i, 1000u * i, 7u * i, 64u * i};
		char want[1024], have[1024];
		struct sl_ofp_mp_reply r;
		struct sl_ofp_error e;
		size_t ofs = 0;
		int rc;

		sl_ofp_buf_reset(&b);
		sl_ofp_mp_writer_begin(&w, &b, SL_OFPMP_FLOW, 5, NULL, NULL);
		sl_ofp_mp_flow_stats_append(&w, &fs[i], &st);
		SL_VERIFY(sl_ofp_mp_writer_end(&w) == 0);
		SL_VERIFY(sl_ofp_mp_reply_decode(b.data, b.len, &r, &e) == 0);
		rc = sl_ofp_flow_stats_entry_decode(r.body, r.body_len, &ofs, &g_fs, &g_fst, &e);
		fs[i].cookie_mask = 0;
		sl_flow_format(&fs[i], want, sizeof(want));
		sl_flow_format(&g_fs, have, sizeof(have));
		CHECK(rc == 0 && ofs == r.body_len && strcmp(want, have) == 0 &&
			      g_fst.duration_sec == i && g_fst.duration_nsec == 1000u * i &&
			      g_fst.packet_count == 7u * i && g_fst.byte_count == 64u * i,
		      "flow %u: rc %d %s\n  want %s\n  have %s", i, rc, sl_ofp_error_name(&e), want,
		      have);
	}

	/* 20,000 flows: several messages, every entry decoded. */
	sl_ofp_buf_reset(&b);
	sl_ofp_mp_writer_begin(&w, &b, SL_OFPMP_FLOW, 5, NULL, NULL);
	for (unsigned i = 0; i < 20000; i++)
		sl_ofp_mp_flow_stats_append(&w, &fs[i % N], &(struct sl_ofp_flow_stats){0});
	SL_VERIFY(sl_ofp_mp_writer_end(&w) == 0);
	got = decode_reply(&b, SL_OFPMP_FLOW, K_FLOW, &n_msgs);
	CHECK(got == 20000 && n_msgs > 1, "20000 flows: %ld entries in %u messages", got, n_msgs);
	sl_ofp_buf_free(&b);
}

static void
test_roundtrip_fixed(void)
{
	struct sl_ofp_mp_writer w;
	struct sl_ofp_buf b;
	unsigned n_msgs;
	long got;

	sl_ofp_buf_init(&b);

	/* Table stats for every table, as the agent sends them. */
	sl_ofp_mp_writer_begin(&w, &b, SL_OFPMP_TABLE, 1, NULL, NULL);
	for (unsigned t = 0; t < SL_TABLES_MAX; t++)
		sl_ofp_mp_table_stats_append(
			&w, &(struct sl_ofp_table_stats){(uint8_t)t, t, 1000ull * t, 999ull * t});
	SL_VERIFY(sl_ofp_mp_writer_end(&w) == 0);
	got = decode_reply(&b, SL_OFPMP_TABLE, K_TABLE, &n_msgs);
	CHECK(got == SL_TABLES_MAX && g_ts.table_id == SL_TABLES_MAX - 1 &&
		      g_ts.active_count == SL_TABLES_MAX - 1 &&
		      g_ts.matched_count == 999ull * (SL_TABLES_MAX - 1),
	      "table stats round trip: %ld", got);

	/* 1000 port stats (more than one message). */
	sl_ofp_buf_reset(&b);
	sl_ofp_mp_writer_begin(&w, &b, SL_OFPMP_PORT_STATS, 1, NULL, NULL);
	for (unsigned i = 1; i <= 1000; i++)
		sl_ofp_mp_port_stats_append(&w, &(struct sl_ofp_port_stats){
							.port_no = i,
							.rx_packets = i,
							.tx_bytes = 64ull * i,
							.collisions = UINT64_MAX,
							.duration_sec = i,
						});
	SL_VERIFY(sl_ofp_mp_writer_end(&w) == 0);
	got = decode_reply(&b, SL_OFPMP_PORT_STATS, K_PORT, &n_msgs);
	CHECK(got == 1000 && n_msgs == 2 && g_ps.port_no == 1000 && g_ps.rx_packets == 1000 &&
		      g_ps.tx_bytes == 64000 && g_ps.collisions == UINT64_MAX &&
		      g_ps.duration_sec == 1000,
	      "port stats round trip: %ld in %u", got, n_msgs);

	/* Port descriptions. */
	sl_ofp_buf_reset(&b);
	sl_ofp_mp_writer_begin(&w, &b, SL_OFPMP_PORT_DESC, 1, NULL, NULL);
	for (unsigned i = 1; i <= 3; i++) {
		struct sl_ofp_port_desc pd = {.port_no = i,
					      .hw_addr = {2, 0, 0, 0, 0, (uint8_t)i},
					      .state = SL_OFPPS_LIVE,
					      .curr = SL_OFPPF_10GB_FD,
					      .curr_speed = 10000000};
		snprintf(pd.name, sizeof(pd.name), "net_ring%u", i);
		sl_ofp_mp_port_desc_append(&w, &pd);
	}
	SL_VERIFY(sl_ofp_mp_writer_end(&w) == 0);
	got = decode_reply(&b, SL_OFPMP_PORT_DESC, K_DESC, &n_msgs);
	CHECK(got == 3 && g_pd.port_no == 3 && strcmp(g_pd.name, "net_ring3") == 0 &&
		      g_pd.hw_addr[5] == 3 && g_pd.state == SL_OFPPS_LIVE &&
		      g_pd.curr_speed == 10000000,
	      "port desc round trip");

	/* Group stats with 0 and 32 buckets. */
	sl_ofp_buf_reset(&b);
	sl_ofp_mp_writer_begin(&w, &b, SL_OFPMP_GROUP, 1, NULL, NULL);
	static struct sl_ofp_group_stats gs;
	memset(&gs, 0, sizeof(gs));
	gs.group_id = 1;
	sl_ofp_mp_group_stats_append(&w, &gs);
	gs.group_id = 2;
	gs.n_buckets = SL_GROUP_BUCKETS_MAX;
	for (unsigned i = 0; i < SL_GROUP_BUCKETS_MAX; i++)
		gs.buckets[i].byte_count = i;
	sl_ofp_mp_group_stats_append(&w, &gs);
	SL_VERIFY(sl_ofp_mp_writer_end(&w) == 0);
	got = decode_reply(&b, SL_OFPMP_GROUP, K_GROUP, &n_msgs);
	CHECK(got == 2 && g_gs.group_id == 2 && g_gs.n_buckets == SL_GROUP_BUCKETS_MAX &&
		      g_gs.buckets[31].byte_count == 31,
	      "group stats round trip");

	/* Group descriptions: an all group with two buckets, a fast-failover one. */
	sl_ofp_buf_reset(&b);
	sl_ofp_mp_writer_begin(&w, &b, SL_OFPMP_GROUP_DESC, 1, NULL, NULL);
	static struct sl_group_spec gd;
	memset(&gd, 0, sizeof(gd));
	gd.group_id = 10;
	gd.type = SL_GROUP_ALL;
	gd.n_buckets = 2;
	for (unsigned i = 0; i < 2; i++) {
		gd.buckets[i].watch_port = SL_PORT_ANY;
		gd.buckets[i].watch_group = SL_GROUP_ID_ANY;
		gd.buckets[i].n_actions = 1;
		gd.buckets[i].actions[0].type = SL_ACT_OUTPUT;
		gd.buckets[i].actions[0].output.port = i + 1;
		gd.buckets[i].actions[0].output.max_len = 0xffff;
	}
	sl_ofp_mp_group_desc_append(&w, &gd);
	gd.group_id = 11;
	gd.type = SL_GROUP_FF;
	gd.buckets[0].watch_port = 1;
	gd.buckets[1].watch_port = 2;
	sl_ofp_mp_group_desc_append(&w, &gd);
	SL_VERIFY(sl_ofp_mp_writer_end(&w) == 0);
	got = decode_reply(&b, SL_OFPMP_GROUP_DESC, K_GDESC, &n_msgs);
	CHECK(got == 2 && g_gd.group_id == 11 && g_gd.type == SL_GROUP_FF && g_gd.n_buckets == 2 &&
		      g_gd.buckets[1].watch_port == 2 &&
		      g_gd.buckets[1].actions[0].output.port == 2,
	      "group desc round trip");

	/* 1000 meters with 8 bands each: 168 KB, several messages. */
	sl_ofp_buf_reset(&b);
	sl_ofp_mp_writer_begin(&w, &b, SL_OFPMP_METER, 1, NULL, NULL);
	static struct sl_meter_stats mst;
	for (unsigned i = 1; i <= 1000; i++) {
		memset(&mst, 0, sizeof(mst));
		mst.flow_count = i;
		mst.packets = 10ull * i;
		mst.bytes = UINT64_MAX - i;
		mst.n_bands = SL_METER_BANDS_MAX;
		for (unsigned k = 0; k < SL_METER_BANDS_MAX; k++) {
			mst.band_packets[k] = i + k;
			mst.band_bytes[k] = 64ull * (i + k);
		}
		sl_ofp_mp_meter_stats_append(&w, i, i, 999999999, &mst);
	}
	SL_VERIFY(sl_ofp_mp_writer_end(&w) == 0);
	got = decode_reply(&b, SL_OFPMP_METER, K_METER, &n_msgs);
	CHECK(got == 1000 && n_msgs == 3 && g_mid == 1000 && g_msec == 1000 &&
		      g_mnsec == 999999999 && g_mst.flow_count == 1000 && g_mst.packets == 10000 &&
		      g_mst.bytes == UINT64_MAX - 1000 && g_mst.n_bands == SL_METER_BANDS_MAX &&
		      g_mst.band_packets[7] == 1007 && g_mst.band_bytes[7] == 64 * 1007,
	      "meter stats round trip: %ld in %u", got, n_msgs);

	/* Meter configurations: every band count, both band types. */
	sl_ofp_buf_reset(&b);
	sl_ofp_mp_writer_begin(&w, &b, SL_OFPMP_METER_CONFIG, 1, NULL, NULL);
	static struct sl_meter_spec mc;
	for (unsigned i = 0; i <= SL_METER_BANDS_MAX; i++) {
		memset(&mc, 0, sizeof(mc));
		mc.meter_id = 100 + i;
		mc.flags = i % 2 ? SL_METER_PKTPS : SL_METER_KBPS | SL_METER_BURST;
		mc.n_bands = (uint8_t)i;
		for (unsigned k = 0; k < i; k++)
			mc.bands[k] = (struct sl_meter_band_spec){
				.type = k % 2 ? SL_BAND_DSCP_REMARK : SL_BAND_DROP,
				.prec_level = k % 2 ? 3 : 0,
				.rate = 1000 * (k + 1),
				.burst = k};
		sl_ofp_mp_meter_config_append(&w, &mc);
	}
	SL_VERIFY(sl_ofp_mp_writer_end(&w) == 0);
	got = decode_reply(&b, SL_OFPMP_METER_CONFIG, K_MCONF, &n_msgs);
	CHECK(got == SL_METER_BANDS_MAX + 1 && g_mc.meter_id == 100 + SL_METER_BANDS_MAX &&
		      g_mc.flags == (SL_METER_KBPS | SL_METER_BURST) &&
		      g_mc.n_bands == SL_METER_BANDS_MAX &&
		      memcmp(g_mc.bands, mc.bands, sizeof(mc.bands)) == 0,
	      "meter config round trip: %ld", got);

	/* Table features for every table (the agent's reply, a few hundred KB). */
	sl_ofp_buf_reset(&b);
	sl_ofp_mp_writer_begin(&w, &b, SL_OFPMP_TABLE_FEATURES, 1, NULL, NULL);
	static struct sl_ofp_table_features tf;
	for (unsigned t = 0; t < SL_TABLES_MAX; t++) {
		memset(&tf, 0, sizeof(tf));
		tf.table_id = (uint8_t)t;
		snprintf(tf.name, sizeof(tf.name), t == 7 ? "fib" : "table%u", t);
		tf.metadata_match = tf.metadata_write = UINT64_MAX;
		tf.max_entries = 1000000 + t;
		tf.kind = t % SL_TABLE__KIND_MAX;
		sl_ofp_mp_table_features_append(&w, &tf);
	}
	SL_VERIFY(sl_ofp_mp_writer_end(&w) == 0);
	got = decode_reply(&b, SL_OFPMP_TABLE_FEATURES, K_FEAT, &n_msgs);
	CHECK(got == SL_TABLES_MAX && n_msgs > 1 && g_tf.table_id == SL_TABLES_MAX - 1 &&
		      strcmp(g_tf.name, "table253") == 0 && g_tf.max_entries == 1000253 &&
		      g_tf.metadata_match == UINT64_MAX,
	      "table features round trip: %ld in %u", got, n_msgs);
	printf("table features reply: %zu bytes in %u messages\n", b.len, n_msgs);
	sl_ofp_buf_free(&b);
}

/*
 * 3. Untrusted input.
 */

/* One valid body per kind, built with the writer; returns its length (body copied to @out). */
static size_t
sample_body(enum kind k, uint8_t *out, size_t max)
{
	static const uint16_t types[K__MAX] = {
		SL_OFPMP_FLOW,           SL_OFPMP_TABLE, SL_OFPMP_PORT_STATS,
		SL_OFPMP_PORT_DESC,      SL_OFPMP_GROUP, SL_OFPMP_GROUP_DESC,
		SL_OFPMP_TABLE_FEATURES, SL_OFPMP_METER, SL_OFPMP_METER_CONFIG};
	static struct sl_group_spec gd;
	static struct sl_ofp_table_features tf;
	static struct sl_meter_stats mst;
	static struct sl_meter_spec mc;
	struct sl_ofp_mp_writer w;
	struct sl_ofp_buf b;
	struct sl_flow_spec fs;
	size_t n;

	sl_ofp_buf_init(&b);
	sl_ofp_mp_writer_begin(&w, &b, types[k], 1, NULL, NULL);
	for (unsigned i = 0; i < 2; i++) {
		switch (k) {
		case K_FLOW:
			parse_flow(i ? "table=2,tcp,tp_dst=80 actions=output:1,goto_table:3"
				     : "ip,nw_dst=10.0.0.0/8 actions=write_metadata:0x1/0x1",
				   &fs);
			sl_ofp_mp_flow_stats_append(&w, &fs, &(struct sl_ofp_flow_stats){0});
			break;
		case K_TABLE:
			sl_ofp_mp_table_stats_append(&w,
						     &(struct sl_ofp_table_stats){.table_id = 1});
			break;
		case K_PORT:
			sl_ofp_mp_port_stats_append(&w, &(struct sl_ofp_port_stats){.port_no = 1});
			break;
		case K_DESC:
			sl_ofp_mp_port_desc_append(&w, &(struct sl_ofp_port_desc){.port_no = 1});
			break;
		case K_GROUP:
			sl_ofp_mp_group_stats_append(
				&w, &(struct sl_ofp_group_stats){.group_id = 1, .n_buckets = 2});
			break;
		case K_GDESC:
			memset(&gd, 0, sizeof(gd));
			gd.group_id = i;
			gd.type = SL_GROUP_INDIRECT;
			gd.n_buckets = 1;
			gd.buckets[0].watch_port = SL_PORT_ANY;
			gd.buckets[0].watch_group = SL_GROUP_ID_ANY;
			gd.buckets[0].n_actions = 1;
			gd.buckets[0].actions[0].type = SL_ACT_OUTPUT;
			gd.buckets[0].actions[0].output.port = 1;
			sl_ofp_mp_group_desc_append(&w, &gd);
			break;
		case K_METER:
			memset(&mst, 0, sizeof(mst));
			mst.n_bands = 2;
			sl_ofp_mp_meter_stats_append(&w, i + 1, 1, 2, &mst);
			break;
		case K_MCONF:
			memset(&mc, 0, sizeof(mc));
			mc.meter_id = i + 1;
			mc.flags = SL_METER_KBPS;
			mc.n_bands = 2;
			mc.bands[0] = (struct sl_meter_band_spec){.type = SL_BAND_DROP, .rate = 1};
			mc.bands[1] = (struct sl_meter_band_spec){
				.type = SL_BAND_DSCP_REMARK, .rate = 2, .prec_level = 1};
			sl_ofp_mp_meter_config_append(&w, &mc);
			break;
		default: /* K_FEAT */
			memset(&tf, 0, sizeof(tf));
			tf.table_id = (uint8_t)(250 + i);
			sl_ofp_mp_table_features_append(&w, &tf);
			break;
		}
	}
	SL_VERIFY(sl_ofp_mp_writer_end(&w) == 0);
	n = b.len - 16;
	SL_VERIFY(n <= max);
	memcpy(out, b.data + 16, n);
	sl_ofp_buf_free(&b);
	return n;
}

/* Offset of the 16-bit length field of each kind's entries, or -1 for fixed-size entries. */
static const int len_field[K__MAX] = {0, -1, -1, -1, 0, 0, 0, 4, 0};

static void
test_truncation_and_corruption(void)
{
	static uint8_t body[8192], copy[8192];
	uint64_t seed = 12345;

	for (int k = 0; k < K__MAX; k++) {
		size_t n = sample_body(k, body, sizeof(body));
		size_t first;
		long full = decode_all(k, body, n);
		unsigned bad = 0;

		CHECK(full == 2, "kind %d sample decodes: %ld", k, full);
		/* The first entry's size: the second starts there. */
		{
			struct sl_ofp_error e;
			first = 0;
			SL_VERIFY(decode_one(k, body, n, &first, &e) == 0);
		}
		/*
		 * Every cut: a body ending exactly after the first entry decodes
		 * one entry, any other cut fails (in a fresh heap copy of exactly
		 * the cut size, so ASan sees any over-read).
		 */
		for (size_t cut = 0; cut < n; cut++) {
			uint8_t *p = malloc(cut ? cut : 1);
			long got;

			SL_VERIFY(p != NULL);
			memcpy(p, body, cut);
			got = decode_all(k, cut ? p : NULL, cut);
			if (cut == 0 ? got != 0 : cut == first ? got != 1 : got != -1)
				bad++;
			free(p);
		}
		CHECK(bad == 0, "kind %d: %u cuts misdecoded", k, bad);

		/* Length fields: every value other than the true one must not decode 2 entries. */
		if (len_field[k] >= 0) {
			unsigned ok_other = 0;
			for (unsigned v = 0; v < 0x10000; v += (v < 512 ? 1 : 97)) {
				memcpy(copy, body, n);
				wr16(copy + len_field[k], (uint16_t)v);
				if (v != first && decode_all(k, copy, n) == 2)
					ok_other++;
			}
			CHECK(ok_other == 0, "kind %d: %u wrong lengths accepted", k, ok_other);
		}

		/* Random byte flips: never crash; the result is the decoder's call. */
		for (unsigned i = 0; i < 20000; i++) {
			memcpy(copy, body, n);
			for (unsigned j = 0; j < 1 + i % 4; j++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				copy[(seed >> 33) % n] = (uint8_t)(seed >> 17);
			}
			(void)decode_all(k, copy, n);
		}
	}

	/* Random bodies for every decoder. */
	for (unsigned i = 0; i < 20000; i++) {
		size_t n = 0;
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		n = (seed >> 40) % 600;
		for (size_t j = 0; j < n; j++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			body[j] = (uint8_t)(seed >> 29);
		}
		for (int k = 0; k < K__MAX; k++)
			(void)decode_all(k, body, n);
	}

	/* An offset already past the body is an error, not a read. */
	{
		struct sl_ofp_error e;
		size_t ofs = 100;
		for (int k = 0; k < K__MAX; k++) {
			ofs = 100;
			CHECK(decode_one(k, body, 50, &ofs, &e) < 0 && ofs == 100,
			      "kind %d: offset past the body", k);
		}
	}
}

/* A flow entry whose table_id is beyond Sluice's tables, or 255. */
static void
test_flow_entry_errors(void)
{
	static uint8_t body[1024];
	struct sl_ofp_error e;
	size_t n = sample_body(K_FLOW, body, sizeof(body)), ofs;
	int rc;

	body[2] = SL_TABLES_MAX;
	ofs = 0;
	rc = sl_ofp_flow_stats_entry_decode(body, n, &ofs, &g_fs, &g_fst, &e);
	CHECK(rc < 0 && err_is(&e, SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_TABLE_ID),
	      "flow entry table 254");
	/* goto_table:3 in a flow of table 4 is refused by the instruction decoder. */
	n = sample_body(K_FLOW, body, sizeof(body));
	ofs = 0;
	SL_VERIFY(sl_ofp_flow_stats_entry_decode(body, n, &ofs, &g_fs, &g_fst, &e) == 0);
	body[ofs + 2] = 4;
	rc = sl_ofp_flow_stats_entry_decode(body, n, &ofs, &g_fs, &g_fst, &e);
	CHECK(rc < 0 && err_is(&e, SL_OFPET_BAD_INSTRUCTION, SL_OFPBIC_BAD_TABLE_ID),
	      "flow entry goto backwards: %s", sl_ofp_error_name(&e));
}

int
main(void)
{
	test_golden_features();
	test_golden_multipart();
	test_roundtrip_flows();
	test_roundtrip_fixed();
	test_truncation_and_corruption();
	test_flow_entry_errors();
	return sl_test_summary();
}
