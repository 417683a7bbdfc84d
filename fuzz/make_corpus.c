/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * make_corpus DIR: write a seed corpus for the fuzz targets, one valid
 * OpenFlow 1.3 message per file, covering every message type the codec
 * decodes (and the replies it encodes, which fuzz_ofp_decode reads as
 * unknown-to-the-switch types).  Flows come from flow syntax so the seeds
 * hold realistic matches and instruction lists.  Run by fuzz/run.sh.
 */
#include "../src/ofp/ofp.h"

#include <string.h>

#include "../src/flowfile/flowfile.h"
#include "../src/fwd/fwd.h"

static const char *dir;
static unsigned n_files;
static struct sl_ofp_buf b;

/* Write @n bytes to DIR/NAME-N. */
static void
write_file(const char *name, const uint8_t *data, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s-%u", dir, name, n_files++);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* Write the message now in @b and empty the buffer. */
static void
emit(const char *name)
{
	write_file(name, b.data, b.len);
	sl_ofp_buf_reset(&b);
}

/* Raw hex for the few messages that have no encoder. */
static void
emit_hex(const char *name, const char *h)
{
	uint8_t m[256];
	size_t n = 0;
	unsigned v;

	for (const char *s = h; *s && n < sizeof(m); s++)
		if (*s != ' ' && sscanf(s, "%2x", &v) == 1)
			m[n++] = (uint8_t)v, s++;
	write_file(name, m, n);
}

static const char *const flows[] = {
	"priority=1 actions=CONTROLLER",
	"table=0,priority=100,ip,in_port=1,nw_dst=10.0.0.0/8 actions=dec_ttl,output:2,goto_table:1",
	"table=1,tcp,tp_dst=80,dl_src=00:11:22:33:44:55/ff:ff:ff:00:00:00 "
	"actions=set_field:10.1.1.1->nw_dst,output:3,write_actions(output:4),"
	"write_metadata:0x1/0xff,goto_table:2",
	"table=2,ipv6,ipv6_src=2001:db8::/32,ipv6_label=0x12345 actions=push_vlan:0x8100,"
	"mod_vlan_vid:10,output:ALL",
	"table=3,arp,arp_op=1,arp_tpa=10.0.0.1 actions=FLOOD,clear_actions",
	"table=4,icmp6,icmpv6_type=135,nd_target=fe80::1 actions=output:IN_PORT",
	"table=5,mpls,mpls_label=100,mpls_tc=1,mpls_bos=1 actions=group:1",
	"table=6,udp,nw_ttl=5,raw(l4,0,16)=0x35,metadata=0x5/0xff actions=set_queue:1,"
	"copy_ttl_out,copy_ttl_in,set_ttl:3,set_field:0x1234->raw(l3,16,16),output:1",
	"table=7,dl_vlan=5,dl_vlan_pcp=3,dl_dst=01:00:5e:00:00:01 actions=pop_vlan,output:2",
};

int
main(int argc, char **argv)
{
	struct sl_ofp_flow_mod fm = {0};
	struct sl_ofp_group_mod gm = {0};
	struct sl_ofp_packet_out po = {0};
	struct sl_ofp_mp_request req = {0};
	struct sl_table_spec ts = {0};
	struct sl_parse_error pe;
	static const uint16_t mp_types[] = {
		SL_OFPMP_DESC,           SL_OFPMP_FLOW,         SL_OFPMP_AGGREGATE,
		SL_OFPMP_TABLE,          SL_OFPMP_PORT_STATS,   SL_OFPMP_QUEUE,
		SL_OFPMP_GROUP,          SL_OFPMP_GROUP_DESC,   SL_OFPMP_GROUP_FEATURES,
		SL_OFPMP_METER,          SL_OFPMP_METER_CONFIG, SL_OFPMP_METER_FEATURES,
		SL_OFPMP_TABLE_FEATURES, SL_OFPMP_PORT_DESC};

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	sl_ofp_buf_init(&b);

	sl_ofp_hello_encode(&b, 1, 1u << SL_OFP_VERSION);
	emit("hello");
	sl_ofp_echo_request_encode(&b, 2, "ping", 4);
	emit("echo");
	sl_ofp_error_encode(&b, 3,
			    &(struct sl_ofp_error){SL_OFPET_BAD_REQUEST, SL_OFPBRC_BAD_LEN, 0},
			    "\x04\x05\x00\x08\x00\x00\x00\x01", 8);
	emit("error");
	for (uint8_t t = SL_OFPT_FEATURES_REQUEST; t <= SL_OFPT__MAX; t++)
		if (t == SL_OFPT_FEATURES_REQUEST || t == SL_OFPT_GET_CONFIG_REQUEST ||
		    t == SL_OFPT_BARRIER_REQUEST || t == SL_OFPT_GET_ASYNC_REQUEST) {
			sl_ofp_empty_encode(&b, t, 4);
			emit("empty");
		}
	emit_hex("set_config", "04 09 00 0c 00 00 00 05 00 00 00 80");
	emit_hex("role", "04 18 00 18 00 00 00 06 00 00 00 02 00 00 00 00 00 00 00 00 00 00 00 03");
	emit_hex("set_async", "04 1c 00 20 00 00 00 07 00 00 00 07 00 00 00 00 00 00 00 07 "
			      "00 00 00 00 00 00 00 0f 00 00 00 00");
	emit_hex("port_mod", "04 10 00 28 00 00 00 08 00 00 00 03 00 00 00 00 50 54 00 00 00 01 "
			     "00 00 00 00 00 01 00 00 00 01 00 00 00 00 00 00 00 00");
	emit_hex("table_mod", "04 11 00 10 00 00 00 09 02 00 00 00 00 00 00 00");
	emit_hex("queue_cfg", "04 16 00 10 00 00 00 0a ff ff ff ff 00 00 00 00");
	emit_hex("meter_mod", "04 1d 00 20 00 00 00 0b 00 00 00 0d 00 00 00 05 "
			      "00 01 00 10 00 00 04 00 00 00 00 80 00 00 00 00");

	for (unsigned i = 0; i < sizeof(flows) / sizeof(flows[0]); i++) {
		if (sl_flow_parse(flows[i], &fm.spec, &pe) != 0) {
			fprintf(stderr, "bad seed flow %u: %s\n", i, pe.msg);
			return 1;
		}
		fm.command = (uint8_t)(i % 5);
		fm.buffer_id = SL_OFP_NO_BUFFER;
		fm.out_port = SL_PORT_ANY;
		fm.out_group = SL_GROUP_ID_ANY;
		sl_ofp_flow_mod_encode(&b, 100 + i, &fm);
		emit("flow_mod");
		/* The same flow as a flow stats request filter and as a packet_out. */
		req.type = i % 2 ? SL_OFPMP_AGGREGATE : SL_OFPMP_FLOW;
		req.flow.table_id = SL_OFPTT_ALL;
		req.flow.out_port = SL_PORT_ANY;
		req.flow.out_group = SL_GROUP_ID_ANY;
		req.flow.match = fm.spec.match;
		sl_ofp_mp_request_encode(&b, 200 + i, &req);
		emit("mp_flow");
		po.buffer_id = SL_OFP_NO_BUFFER;
		po.in_port = SL_PORT_CONTROLLER;
		po.n_actions = fm.spec.insns.n_apply;
		memcpy(po.actions, fm.spec.insns.apply, sizeof(po.actions));
		po.data =
			(const uint8_t *)"\xff\xff\xff\xff\xff\xff\x00\x01\x02\x03\x04\x05\x08\x00"
					 "\x45\x00\x00\x14\x00\x00\x00\x00\x40\x06\x00\x00"
					 "\x0a\x00\x00\x01\x0a\x00\x00\x02";
		po.data_len = 34;
		sl_ofp_packet_out_encode(&b, 300 + i, &po);
		emit("packet_out");
		/* A group of each type with this flow's actions in its buckets. */
		memset(&gm, 0, sizeof(gm));
		gm.command = (uint16_t)(i % 3);
		gm.spec.type = (uint8_t)(i % 4);
		gm.spec.group_id = i + 1;
		gm.spec.n_buckets = gm.spec.type == SL_GROUP_INDIRECT ? 1 : 2;
		for (unsigned k = 0; k < gm.spec.n_buckets; k++) {
			gm.spec.buckets[k].weight = (uint16_t)(k + 1);
			gm.spec.buckets[k].watch_port = k + 1;
			gm.spec.buckets[k].watch_group = SL_GROUP_ID_ANY;
			gm.spec.buckets[k].n_actions = po.n_actions;
			memcpy(gm.spec.buckets[k].actions, po.actions, sizeof(po.actions));
		}
		sl_ofp_group_mod_encode(&b, 400 + i, &gm);
		emit("group_mod");
	}
	for (unsigned i = 0; i < sizeof(mp_types) / sizeof(mp_types[0]); i++) {
		memset(&req, 0, sizeof(req));
		req.type = mp_types[i];
		req.port_no = SL_PORT_ANY;
		if (req.type == SL_OFPMP_FLOW || req.type == SL_OFPMP_AGGREGATE)
			req.flow.table_id = SL_OFPTT_ALL;
		sl_ofp_mp_request_encode(&b, 500 + i, &req);
		emit("mp");
	}
	/* Table declarations of each kind. */
	for (unsigned k = 0; k < 4; k++) {
		static const char *const decls[] = {
			"table=1,kind=direct,fields=metadata,size=1024,name=vrf",
			"table=2,kind=exact,fields=in_port+dl_dst,size=65536,name=l2",
			"table=3,kind=lpm,fields=nw_dst,size=4096,name=fib",
			"table=4,kind=mask,fields=nw_src+tcp_dst+raw(l4,96,12),name=acl",
		};
		if (sl_table_spec_parse(decls[k], &ts, &pe) != 0) {
			fprintf(stderr, "bad seed declaration %u: %s\n", k, pe.msg);
			return 1;
		}
		sl_ofp_table_declare_encode(&b, 600 + k, &ts);
		emit("declare");
	}
	/* OpenState: state table, set/delete, requests, replies, set_state flows. */
	{
		static struct sl_ofp_state_mod sm;
		struct sl_state_stats sst = {
			.lookups = 5, .hits = 3, .capacity = 100, .n_entries = 2};
		if (sl_table_spec_parse("table=0,kind=state,lookup=nw_src+nw_dst,"
					"update=nw_dst+nw_src,size=1000",
					&ts, &pe) != 0)
			return 1;
		sl_ofp_state_table_encode(&b, 700, &ts);
		emit("state");
		sm.table_id = 0;
		sm.set = (struct sl_state_set){.state = 3, .idle_ms = 100, .rollback = 1};
		sm.key.n_fields = 0;
		struct sl_flow_spec kfs;
		if (sl_flow_parse_filter("ip,nw_src=10.0.0.1,nw_dst=10.0.0.2", &kfs, &pe) != 0)
			return 1;
		sm.key = kfs.match;
		sl_ofp_state_mod_encode(&b, 701, SL_OFPX_STATE_SET, &sm);
		emit("state");
		sl_ofp_state_mod_encode(&b, 702, SL_OFPX_STATE_DEL, &sm);
		emit("state");
		sl_ofp_state_request_encode(&b, 703, SL_OFPX_STATE_DUMP, 0);
		emit("state");
		sl_ofp_state_request_encode(&b, 704, SL_OFPX_STATE_STATS, 0);
		emit("state");
		sl_ofp_state_stats_reply_encode(&b, 705, 0, &sst);
		emit("state");
		if (sl_flow_parse(
			    "table=1,state=2,ip actions=set_state(3,table=0,idle_ms=5),output:1",
			    &fm.spec, &pe) != 0)
			return 1;
		sl_ofp_flow_mod_encode(&b, 706, &fm);
		emit("state");
	}
	/* Fast forwarding path messages. */
	{
		struct sl_ofp_ll_set ls;
		struct sl_flow_spec fs;
		struct sl_ofp_ffp_config fc = {.flags = SL_OFPX_FFP_ON | SL_OFPX_FFP_AUTO,
					       .min_timeout = 60,
					       .min_pps = 1000};
		memset(&ls, 0, sizeof(ls));
		if (sl_flow_parse("table=1,priority=100,tcp6,tp_dst=443,actions=drop", &fs, &pe) !=
		    0) {
			fprintf(stderr, "bad seed flow: %s\n", pe.msg);
			return 1;
		}
		ls.table_id = 1;
		ls.command = SL_OFPX_LL_SET_ON;
		ls.flags = SL_OFPX_LL_STRICT;
		ls.priority = 100;
		ls.match = fs.match;
		sl_ofp_ll_set_encode(&b, 700, &ls);
		emit("ll_set");
		sl_ofp_ffp_config_encode(&b, 701, &fc);
		emit("ffp_config");
	}
	/* Meters (#20): meter_mods, a flow with a meter instruction, the three replies. */
	{
		struct sl_ofp_meter_mod mm = {
			.command = SL_OFPMC_ADD,
			.spec = {.meter_id = 1,
				 .flags = SL_METER_KBPS | SL_METER_BURST | SL_METER_STATS,
				 .n_bands = 2,
				 .bands = {{.type = SL_BAND_DROP, .rate = 1000, .burst = 100},
					   {.type = SL_BAND_DSCP_REMARK,
					    .prec_level = 1,
					    .rate = 500}}}};
		struct sl_meter_stats mst = {.flow_count = 1,
					     .packets = 5,
					     .bytes = 320,
					     .n_bands = 2,
					     .band_packets = {1, 2},
					     .band_bytes = {64, 128}};
		struct sl_ofp_meter_features mf = {
			.max_meter = 65536, .band_types = 0x6, .capabilities = 0xf, .max_bands = 8};
		struct sl_ofp_mp_writer w;

		sl_ofp_meter_mod_encode(&b, 800, &mm);
		emit("meter_mod");
		mm.command = SL_OFPMC_MODIFY;
		mm.spec.flags = SL_METER_PKTPS;
		sl_ofp_meter_mod_encode(&b, 801, &mm);
		emit("meter_mod");
		mm.command = SL_OFPMC_DELETE;
		mm.spec.meter_id = SL_METER_ID_ALL;
		mm.spec.n_bands = 0;
		sl_ofp_meter_mod_encode(&b, 802, &mm);
		emit("meter_mod");
		if (sl_flow_parse("table=0,ip actions=output:1,goto_table:1", &fm.spec, &pe) != 0)
			return 1;
		fm.spec.insns.meter_id = 1;
		sl_ofp_flow_mod_encode(&b, 803, &fm);
		emit("meter_flow");
		sl_ofp_mp_writer_begin(&w, &b, SL_OFPMP_METER, 804, NULL, NULL);
		sl_ofp_mp_meter_stats_append(&w, 1, 2, 3, &mst);
		sl_ofp_mp_writer_end(&w);
		emit("meter_reply");
		mm.spec.meter_id = 1;
		mm.spec.n_bands = 2;
		sl_ofp_mp_writer_begin(&w, &b, SL_OFPMP_METER_CONFIG, 805, NULL, NULL);
		sl_ofp_mp_meter_config_append(&w, &mm.spec);
		sl_ofp_mp_writer_end(&w);
		emit("meter_reply");
		sl_ofp_meter_features_reply_encode(&b, 806, &mf);
		emit("meter_reply");
	}
	/* Forwarding modes (set and get). */
	for (unsigned k = 0; k < 3; k++) {
		static const char *const modes[] = {
			"openflow",
			"hypercube:addr=5,nbr=4@1,nbr=7@2,nbr=1@3",
			"hypercube:addr=0,nbr=1@1;keyflow:key=13,tag=0xc2",
		};
		struct sl_fwd_params fp;
		char ferr[128];

		if (sl_fwd_params_parse(modes[k], &fp, ferr, sizeof(ferr)) != 0) {
			fprintf(stderr, "bad seed mode %u: %s\n", k, ferr);
			return 1;
		}
		sl_ofp_fwd_mode_encode(&b, 700 + k,
				       k == 0 ? SL_OFPX_FWD_MODE : SL_OFPX_SET_FWD_MODE, &fp);
		emit("fwd_mode");
	}
	sl_ofp_buf_free(&b);
	printf("%u seed files in %s\n", n_files, dir);
	return 0;
}
