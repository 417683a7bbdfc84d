/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for flowfile: golden parse -> format strings, round trips,
 * error messages and tokens, table declarations and file loading.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkstemp, fdopen under -std=c11 */
#endif
#include "flowfile.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

static unsigned n_pass, n_fail;

static void __attribute__((format(printf, 2, 3))) check(bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		n_pass++;
		return;
	}
	n_fail++;
	fprintf(stderr, "FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

/* Order-independent match equality (the printer sorts fields). */
static bool
match_equal(const struct sl_match *a, const struct sl_match *b)
{
	if (a->n_fields != b->n_fields)
		return false;
	for (unsigned i = 0; i < a->n_fields; i++) {
		const struct sl_match_field *x = &a->fields[i];
		const struct sl_match_field *y = sl_match_get(b, &x->f);
		unsigned size = sl_field_size(&x->f);

		if (y == NULL || memcmp(x->value, y->value, size) || memcmp(x->mask, y->mask, size))
			return false;
	}
	return true;
}

static bool
insns_equal(const struct sl_instructions *a, const struct sl_instructions *b)
{
	if (a->n_apply != b->n_apply || a->n_write != b->n_write || a->has_apply != b->has_apply ||
	    a->has_write != b->has_write || a->clear != b->clear ||
	    a->has_metadata != b->has_metadata || a->goto_table != b->goto_table ||
	    a->metadata != b->metadata || a->metadata_mask != b->metadata_mask)
		return false;
	for (unsigned i = 0; i < a->n_apply; i++)
		if (!sl_action_equal(&a->apply[i], &b->apply[i]))
			return false;
	for (unsigned i = 0; i < a->n_write; i++)
		if (!sl_action_equal(&a->write[i], &b->write[i]))
			return false;
	return true;
}

static bool
spec_equal(const struct sl_flow_spec *a, const struct sl_flow_spec *b)
{
	return a->table_id == b->table_id && a->priority == b->priority &&
	       a->idle_timeout == b->idle_timeout && a->hard_timeout == b->hard_timeout &&
	       a->flags == b->flags && a->cookie == b->cookie && a->cookie_mask == b->cookie_mask &&
	       match_equal(&a->match, &b->match) && insns_equal(&a->insns, &b->insns);
}

/* Input line -> canonical text. */
static const struct {
	const char *in;
	const char *out;
} golden[] = {
	{"priority=100,ip,in_port=1,nw_dst=10.0.0.0/8 actions=dec_ttl,output:2",
	 "table=0, priority=100,ip,in_port=1,nw_dst=10.0.0.0/8 actions=dec_ttl,output:2"},
	{"actions=drop", "table=0, priority=32768 actions=drop"},
	/* Sluice's low_latency mark (the fast forwarding path). */
	{"table=1,priority=9,ip,low_latency actions=drop",
	 "table=1, low_latency, priority=9,ip actions=drop"},
	{"table=3,priority=0,actions=", "table=3, priority=0 actions=drop"},
	/* Blanks separate items too; value bits outside the mask are cleared. */
	{"  nw_dst=10.1.2.3/8, ip  in_port=7   actions=2",
	 "table=0, priority=32768,ip,in_port=7,nw_dst=10.0.0.0/8 actions=output:2"},
	{"tcp,tp_dst=80,nw_src=192.168.1.1 actions=output:1",
	 "table=0, priority=32768,tcp,nw_src=192.168.1.1,tcp_dst=80 actions=output:1"},
	{"udp6,ipv6_dst=2001:db8::/32,tp_src=53 actions=LOCAL",
	 "table=0, priority=32768,udp6,udp_src=53,ipv6_dst=2001:db8::/32 actions=LOCAL"},
	{"sctp,sctp_dst=0x50/0xfff0 actions=flood",
	 "table=0, priority=32768,sctp,sctp_dst=0x50/0xfff0 actions=FLOOD"},
	{"dl_type=0x0800,nw_proto=6,tcp_src=22 actions=in_port",
	 "table=0, priority=32768,tcp,tcp_src=22 actions=IN_PORT"},
	{"ip,dl_type=0x0800 actions=ALL", "table=0, priority=32768,ip actions=ALL"},
	{"eth_type=0x86dd,ip_proto=58,icmpv6_type=135,nd_target=fe80::1 actions=NORMAL",
	 "table=0, priority=32768,icmp6,icmpv6_type=135,nd_target=fe80::1 actions=NORMAL"},
	{"arp,arp_op=1,arp_tpa=10.0.0.1,arp_sha=00:11:22:33:44:55 actions=controller",
	 "table=0, priority=32768,arp,arp_op=1,arp_tpa=10.0.0.1,arp_sha=00:11:22:33:44:55 "
	 "actions=CONTROLLER"},
	{"dl_dst=01:00:00:00:00:00/01:00:00:00:00:00,dl_src=AA:bb:cc:dd:ee:ff "
	 "actions=CONTROLLER:128",
	 "table=0, priority=32768,dl_dst=01:00:00:00:00:00/01:00:00:00:00:00,"
	 "dl_src=aa:bb:cc:dd:ee:ff actions=CONTROLLER:128"},
	{"dl_vlan=10,dl_vlan_pcp=3 actions=strip_vlan,output:3",
	 "table=0, priority=32768,dl_vlan=10,dl_vlan_pcp=3 actions=pop_vlan,output:3"},
	{"dl_vlan=0xffff actions=push_vlan:0x8100,mod_vlan_vid:100,output:1",
	 "table=0, priority=32768,dl_vlan=0xffff actions=push_vlan:0x8100,mod_vlan_vid:100,"
	 "output:1"},
	{"vlan_vid=0x1000/0x1000 actions=pop_vlan",
	 "table=0, priority=32768,vlan_vid=0x1000/0x1000 actions=pop_vlan"},
	{"vlan_vid=0x1005 actions=drop", "table=0, priority=32768,dl_vlan=5 actions=drop"},
	/* Neighbour discovery link-layer addresses (OXM 32, 33). */
	{"icmp6,icmpv6_type=135,nd_sll=02:00:00:00:00:01 actions=drop",
	 "table=0, priority=32768,icmp6,icmpv6_type=135,nd_sll=02:00:00:00:00:01 actions=drop"},
	{"icmp6,icmpv6_type=136,ipv6_nd_tll=02:00:00:00:00:02 actions=set_field:02:00:00:00:00:03->nd_tll,output:1",
	 "table=0, priority=32768,icmp6,icmpv6_type=136,nd_tll=02:00:00:00:00:02 "
	 "actions=set_field:02:00:00:00:00:03->nd_tll,output:1"},
	/* ovs-ofctl's vlan_tci: vlan_vid plus an exact vlan_pcp. */
	{"vlan_tci=0x100a/0x1fff actions=drop", "table=0, priority=32768,dl_vlan=10 actions=drop"},
	{"vlan_tci=0 actions=drop", "table=0, priority=32768,dl_vlan=0xffff actions=drop"},
	{"vlan_tci=0x700a actions=drop",
	 "table=0, priority=32768,dl_vlan=10,dl_vlan_pcp=3 actions=drop"},
	{"vlan_tci=0x1000/0x1000 actions=drop",
	 "table=0, priority=32768,vlan_vid=0x1000/0x1000 actions=drop"},
	{"vlan_tci=0x7000/0xf000 actions=drop",
	 "table=0, priority=32768,vlan_vid=0x1000/0x1000,dl_vlan_pcp=3 actions=drop"},
	{"metadata=0x5/0xff,table=2 actions=goto_table:3",
	 "table=2, priority=32768,metadata=0x5/0xff actions=goto_table:3"},
	{"metadata=7 actions=write_metadata:0x10/0xf0,goto_table:1",
	 "table=0, priority=32768,metadata=0x7 actions=write_metadata:0x10/0xf0,goto_table:1"},
	{"ip actions=write_metadata:0xff",
	 "table=0, priority=32768,ip actions=write_metadata:0xff"},
	{"ip,nw_src=10.0.0.0/255.0.255.0 actions=mod_nw_dst:1.2.3.4,mod_dl_src:00:00:00:00:00:01",
	 "table=0, priority=32768,ip,nw_src=10.0.0.0/255.0.255.0 "
	 "actions=set_field:1.2.3.4->nw_dst,set_field:00:00:00:00:00:01->dl_src"},
	{"tcp actions=mod_tp_dst:8080,mod_tp_src:1", /* mod_tp_* resolve by nw_proto */
	 "table=0, priority=32768,tcp actions=set_field:8080->tcp_dst,set_field:1->tcp_src"},
	{"udp actions=set_field:53->tp_dst,set_field:1->udp_src",
	 "table=0, priority=32768,udp actions=set_field:53->udp_dst,set_field:1->udp_src"},
	{"ip actions=set_ttl:64,mod_nw_ttl:9,dec_ttl,copy_ttl_out,copy_ttl_in,group:7,set_queue:3",
	 "table=0, priority=32768,ip actions=mod_nw_ttl:64,mod_nw_ttl:9,dec_ttl,copy_ttl_out,"
	 "copy_ttl_in,group:7,set_queue:3"},
	{"actions=output:1,clear_actions,write_actions(output:2,set_field:5->dl_vlan),goto_table:4",
	 "table=0, priority=32768 actions=output:1,clear_actions,write_actions(output:2,"
	 "mod_vlan_vid:5),goto_table:4"},
	{"actions=goto_table:1,write_actions()", /* instructions in any order */
	 "table=0, priority=32768 actions=write_actions(),goto_table:1"},
	{"cookie=0x1234,idle_timeout=10,hard_timeout=60,send_flow_rem,no_byte_counts,"
	 "priority=5 actions=drop",
	 "cookie=0x1234, table=0, idle_timeout=10, hard_timeout=60, send_flow_rem, "
	 "no_byte_counts, priority=5 actions=drop"},
	{"cookie=0x10/0xf0 actions=drop", "cookie=0x10/0xf0, table=0, priority=32768 actions=drop"},
	{"raw(l4,0,16)=0x1234 actions=output:1",
	 "table=0, priority=32768,raw(l4,0,16)=0x1234 actions=output:1"},
	{"raw(pkt,96,16)=0x88cc,raw(l3,4,4)=0xf/0x3 actions=set_field:0x00ab->raw(l4,0,16)",
	 "table=0, priority=32768,raw(pkt,96,16)=0x88cc,raw(l3,4,4)=0x3/0x3 "
	 "actions=set_field:0xab->raw(l4,0,16)"},
	{"raw(l4,0,128)=0x0102030405060708090a0b0c0d0e0f10/0xffffffffffffffff0000000000000000 "
	 "actions=drop",
	 "table=0, priority=32768,raw(l4,0,128)=0x1020304050607080000000000000000/"
	 "0xffffffffffffffff0000000000000000 actions=drop"},
	{"ipv6,ipv6_src=::/0,ipv6_label=0x12345 actions=drop", /* a /0 mask is a wildcard */
	 "table=0, priority=32768,ipv6,ipv6_label=0x12345 actions=drop"},
	{"ipv6,ipv6_src=2001:db8::1/ffff:ffff::ff actions=drop",
	 "table=0, priority=32768,ipv6,ipv6_src=2001:db8::1/ffff:ffff::ff actions=drop"},
	{"in_port=LOCAL actions=output:TABLE",
	 "table=0, priority=32768,in_port=LOCAL actions=output:TABLE"},
	{"ip,ip_dscp=46,nw_ecn=1,nw_ttl=1 actions=drop",
	 "table=0, priority=32768,ip,ip_dscp=46,nw_ecn=1,nw_ttl=1 actions=drop"},
	{"mpls,mpls_label=100,mpls_tc=5,mpls_bos=1 actions=drop",
	 "table=0, priority=32768,mpls,mpls_label=100,mpls_tc=5,mpls_bos=1 actions=drop"},
	{"icmp,icmp_type=8,icmp_code=0 actions=drop",
	 "table=0, priority=32768,icmp,icmp_type=8,icmp_code=0 actions=drop"},
	{"ip,nw_proto=47 actions=drop", "table=0, priority=32768,ip,nw_proto=47 actions=drop"},
	{"ipv6,nw_proto=6 actions=drop", "table=0, priority=32768,tcp6 actions=drop"},
	{"dl_type=0x88cc actions=drop", "table=0, priority=32768,dl_type=0x88cc actions=drop"},
	{"metadata=0xffffffffffffffff actions=drop",
	 "table=0, priority=32768,metadata=0xffffffffffffffff actions=drop"},
};

static void
test_golden(void)
{
	for (unsigned i = 0; i < SL_ARRAY_SIZE(golden); i++) {
		struct sl_flow_spec fs, fs2;
		struct sl_parse_error err;
		char buf[1024], buf2[1024], msg[512];
		int rc, len;

		rc = sl_flow_parse(golden[i].in, &fs, &err);
		sl_parse_error_format(&err, msg, sizeof(msg));
		check(rc == 0, "golden parse '%s': %d %s", golden[i].in, rc, msg);
		if (rc)
			continue;
		len = sl_flow_format(&fs, buf, sizeof(buf));
		check(len == (int)strlen(buf), "golden format length '%s'", golden[i].in);
		check(strcmp(buf, golden[i].out) == 0, "golden '%s':\n   got  '%s'\n   want '%s'",
		      golden[i].in, buf, golden[i].out);

		/* Round trip: the canonical text reads back to an equal spec, printed the same. */
		rc = sl_flow_parse(buf, &fs2, &err);
		sl_parse_error_format(&err, msg, sizeof(msg));
		check(rc == 0, "round trip parse '%s': %s", buf, msg);
		check(rc == 0 && spec_equal(&fs, &fs2), "round trip spec '%s'", buf);
		sl_flow_format(&fs2, buf2, sizeof(buf2));
		check(strcmp(buf, buf2) == 0, "round trip text '%s' vs '%s'", buf, buf2);
	}
}

/* Details the golden strings do not show. */
static void
test_values(void)
{
	struct sl_flow_spec fs;
	const struct sl_match_field *mf;
	struct sl_field f;
	int rc;

	rc = sl_flow_parse("dl_vlan=10 actions=mod_vlan_vid:7,CONTROLLER", &fs, NULL);
	check(rc == 0, "dl_vlan parse");
	f = (struct sl_field){.id = SL_FIELD_VLAN_VID};
	mf = sl_match_get(&fs.match, &f);
	check(mf && mf->value[0] == 0x10 && mf->value[1] == 10 && mf->mask[0] == 0x1f &&
		      mf->mask[1] == 0xff,
	      "dl_vlan=10 is vlan_vid 0x100a/0x1fff");
	check(fs.insns.has_apply && fs.insns.n_apply == 2, "two apply actions");
	check(fs.insns.apply[0].type == SL_ACT_SET_FIELD &&
		      fs.insns.apply[0].set_field.value[0] == 0x10 &&
		      fs.insns.apply[0].set_field.value[1] == 7,
	      "mod_vlan_vid:7 stores 0x1007");
	check(fs.insns.apply[1].output.port == SL_PORT_CONTROLLER &&
		      fs.insns.apply[1].output.max_len == 0xffff,
	      "controller default max_len");

	rc = sl_flow_parse("raw(l4,4,12)=0xabc actions=drop", &fs, NULL);
	f = (struct sl_field){
		.id = SL_FIELD_RAW, .raw_base = SL_RAW_BASE_L4, .raw_bit_off = 4, .raw_n_bits = 12};
	mf = rc == 0 ? sl_match_get(&fs.match, &f) : NULL;
	check(mf && mf->value[0] == 0x0a && mf->value[1] == 0xbc && mf->mask[0] == 0x0f &&
		      mf->mask[1] == 0xff,
	      "raw 12-bit value right-aligned big-endian");

	rc = sl_flow_parse("actions=drop", &fs, NULL);
	check(rc == 0 && !fs.insns.has_apply && !fs.insns.has_write && fs.insns.goto_table == -1 &&
		      fs.match.n_fields == 0 && fs.priority == 32768,
	      "drop means no instructions");

	rc = sl_flow_parse("table=253,priority=65535 actions=drop", &fs, NULL);
	check(rc == 0 && fs.table_id == 253 && fs.priority == 65535, "limits accepted");

	rc = sl_flow_parse_filter("", &fs, NULL);
	check(rc == 0 && fs.table_id == 255 && fs.match.n_fields == 0, "empty filter: all tables");
	rc = sl_flow_parse_filter("table=1,tcp,tp_dst=22 cookie=0x1/0xff", &fs, NULL);
	check(rc == 0 && fs.table_id == 1 && fs.match.n_fields == 3 && fs.cookie_mask == 0xff,
	      "filter with match");
}

/* Bad line -> message substring and token substring. */
static const struct {
	const char *in;
	const char *msg;
	const char *token;
} bad[] = {
	{"foo_bar=1 actions=drop", "unknown field", "foo_bar=1"},
	{"frobnicate actions=drop", "unknown keyword", "frobnicate"},
	{"ip,nw_dst=10.0.0.256 actions=drop", "bad IPv4 address", "nw_dst=10.0.0.256"},
	{"ip,nw_dst=10.0.0.0/33 actions=drop", "prefix length", "nw_dst=10.0.0.0/33"},
	{"ip,nw_dst=10.0.0.0/255.x actions=drop", "bad IPv4 mask", "nw_dst=10.0.0.0/255.x"},
	{"ipv6,ipv6_dst=2001:db8::g actions=drop", "bad IPv6 address", "ipv6_dst=2001:db8::g"},
	{"dl_src=00:11:22:33:44 actions=drop", "bad MAC address", "dl_src=00:11:22:33:44"},
	{"dl_dst=00:11:22:33:44:55/ff:ff actions=drop", "bad MAC mask", "dl_dst="},
	{"tcp,tcp_dst=80/0x1ffff actions=drop", "mask '0x1ffff' too wide", "tcp_dst=80/0x1ffff"},
	{"tcp,tcp_dst=80/zz actions=drop", "bad mask", "tcp_dst=80/zz"},
	{"tcp_dst=80 actions=drop", "tcp_dst requires tcp", "tcp_dst=80"},
	{"ip,udp_src=53 actions=drop", "udp_src requires udp", "udp_src=53"},
	{"nw_src=1.2.3.4 actions=drop", "nw_src requires ip", "nw_src=1.2.3.4"},
	{"ipv6,icmp_type=3 actions=drop", "icmp_type requires icmp", "icmp_type=3"},
	{"arp_op=1 actions=drop", "arp_op requires arp", "arp_op=1"},
	{"dl_vlan_pcp=3 actions=drop", "requires a VLAN tag", "dl_vlan_pcp=3"},
	{"ip,nw_src=1.2.3.4,dl_vlan_pcp=3 actions=drop", "requires a VLAN tag", "dl_vlan_pcp=3"},
	{"vlan_tci=0x6000/0x6000 actions=drop", "priority bits", "vlan_tci=0x6000/0x6000"},
	{"icmp6,icmpv6_type=136,nd_sll=02:00:00:00:00:01 actions=drop", "icmpv6_type=135",
	 "nd_sll=02:00:00:00:00:01"},
	{"vlan_tci=0x6000/0xefff actions=drop", "needs a tag", "vlan_tci=0x6000/0xefff"},
	{"vlan_tci=0x10000 actions=drop", "bad vlan_tci", "vlan_tci=0x10000"},
	{"icmp6,nd_target=::1 actions=drop", "nd_target requires icmpv6_type", "nd_target=::1"},
	{"tp_dst=80,tcp actions=drop", "requires tcp, udp or sctp", "tp_dst=80"},
	{"table=2 actions=goto_table:2", "goto_table must go forward", "goto_table:2"},
	{"table=5 actions=goto_table:1", "goto_table must go forward", "goto_table:1"},
	{"actions=goto_table:254", "bad goto_table", "goto_table:254"},
	{"actions=frob:1", "unknown action", "frob:1"},
	{"actions=output:0", "bad output port", "output:0"},
	{"actions=output:ANY", "bad output port", "output:ANY"},
	{"actions=output:1,drop", "drop must be the only action", "drop"},
	{"actions=output:1,,output:2", "empty action", ","},
	{"actions=output:1,", "empty action", ","},
	{"actions=goto_table:1,output:2", "actions must come before instructions", "output:2"},
	{"actions=goto_table:1,goto_table:2", "duplicate instruction", "goto_table:2"},
	{"actions=write_actions(output:1,output:2)", "action set already has", "output:2"},
	{"actions=write_actions(goto_table:1)", "not allowed here", "goto_table:1"},
	{"actions=write_actions(output:1", "unbalanced parentheses", "write_actions(output:1"},
	{"actions=clear_actions:1", "takes no argument", "clear_actions:1"},
	{"actions=output", "needs an argument", "output"},
	{"actions=push_vlan:0x0800", "push_vlan takes 0x8100 or 0x88a8", "push_vlan:0x0800"},
	{"actions=mod_nw_ttl:256", "expected 0..255", "mod_nw_ttl:256"},
	{"actions=mod_vlan_vid:4096", "bad VLAN id", "mod_vlan_vid:4096"},
	{"actions=mod_tp_dst:80", "requires tcp, udp or sctp", "mod_tp_dst:80"},
	{"actions=mod_nw_dst:1.2.3.4", "set_field on nw_dst requires ip", "mod_nw_dst:1.2.3.4"},
	{"actions=set_field:80->tcp_dst", "requires tcp", "set_field:80->tcp_dst"},
	{"actions=set_field:1->in_port", "not writable", "set_field:1->in_port"},
	{"actions=set_field:1->nosuch", "unknown field", "set_field:1->nosuch"},
	{"actions=set_field:1", "VALUE->FIELD", "set_field:1"},
	{"ip actions=set_field:1.2.3.4/8->nw_dst", "set_field takes no mask", "set_field:1.2.3.4"},
	{"actions=set_field:0x10000->raw(l4,0,16)", "too wide", "set_field:0x10000->raw"},
	{"ip,nw_proto=256 actions=drop", "value '256' too wide for 8-bit field nw_proto",
	 "nw_proto=256"},
	{"ip,ip_dscp=64 actions=drop", "too wide for 6-bit field ip_dscp", "ip_dscp=64"},
	{"dl_type=0x10000 actions=drop", "too wide for 16-bit field dl_type", "dl_type=0x10000"},
	{"raw(l4,0,8)=0x100 actions=drop", "too wide for 8-bit field raw(l4,0,8)", "raw(l4,0,8)"},
	{"metadata=0x1ffffffffffffffff actions=drop", "too wide", "metadata="},
	{"raw(l5,0,8)=1 actions=drop", "bad raw field base 'l5'", "raw(l5,0,8)=1"},
	{"raw(l4,0,129)=1 actions=drop", "bad raw field width", "raw(l4,0,129)=1"},
	{"raw(l4,0)=1 actions=drop", "bad raw field", "raw(l4,0)=1"},
	{"raw=1 actions=drop", "unknown field", "raw=1"},
	{"in_port=1/0xff actions=drop", "not maskable", "in_port=1/0xff"},
	{"in_port=0 actions=drop", "bad port", "in_port=0"},
	{"in_port=FLOOD actions=drop", "bad port", "in_port=FLOOD"},
	{"ip,nw_proto=6/0xff actions=drop", "not maskable", "nw_proto=6/0xff"},
	{"dl_vlan=5/0xff actions=drop", "use vlan_vid", "dl_vlan=5/0xff"},
	{"dl_vlan=4096 actions=drop", "bad VLAN id", "dl_vlan=4096"},
	{"ip,ipv6 actions=drop", "conflicts with an earlier constraint on dl_type", "ipv6"},
	{"tcp,nw_proto=17 actions=drop", "conflicts", "nw_proto=17"},
	{"table=254 actions=drop", "bad table", "table=254"},
	{"table=1,table=2 actions=drop", "duplicate 'table'", "table=2"},
	{"priority=65536 actions=drop", "bad priority", "priority=65536"},
	{"priority=-1 actions=drop", "bad priority", "priority=-1"},
	{"priority=010x actions=drop", "bad priority", "priority=010x"},
	{"idle_timeout=70000 actions=drop", "bad idle_timeout", "idle_timeout=70000"},
	{"cookie=0x1/zz actions=drop", "bad cookie", "cookie=0x1/zz"},
	{"ip", "missing actions=", "ip"},
	{"nw_dst actions=drop", "missing value for nw_dst", "nw_dst"},
	{"nw_dst= actions=drop", "missing value", "nw_dst="},
	{"nw_tos=4 actions=drop", "use ip_dscp", "nw_tos=4"},
	{"table=1,kind=lpm actions=drop", "belongs to a table declaration", "kind=lpm"},
	{"raw(l4,0,16=1 actions=drop", "unbalanced parentheses", "raw(l4,0,16=1"},
	{"ipv6,ipv6_src=::1/129 actions=drop", "prefix length", "ipv6_src=::1/129"},
	{"ip,nw_src=1.2.3.4/ actions=drop", "missing mask", "nw_src=1.2.3.4/"},
};

static void
test_errors(void)
{
	for (unsigned i = 0; i < SL_ARRAY_SIZE(bad); i++) {
		struct sl_flow_spec fs;
		struct sl_parse_error err;
		char text[512];
		int rc = sl_flow_parse(bad[i].in, &fs, &err);

		sl_parse_error_format(&err, text, sizeof(text));
		check(rc < 0, "error expected for '%s'", bad[i].in);
		check(strstr(err.msg, bad[i].msg) != NULL, "'%s': message '%s' lacks '%s'",
		      bad[i].in, err.msg, bad[i].msg);
		check(strstr(err.token, bad[i].token) != NULL, "'%s': token '%s' lacks '%s'",
		      bad[i].in, err.token, bad[i].token);
		check(err.token[0] != '\0', "'%s': error names no token", bad[i].in);
		check(strstr(text, "(near '") != NULL, "'%s': formatted '%s'", bad[i].in, text);
	}
}

static void
test_limits(void)
{
	struct sl_flow_spec fs;
	struct sl_parse_error err;
	char text[2048];
	size_t len;
	int rc;

	/* SL_ACTIONS_MAX outputs pass, one more fails naming the extra action. */
	len = (size_t)snprintf(text, sizeof(text), "actions=");
	for (unsigned i = 1; i <= SL_ACTIONS_MAX; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%soutput:%u",
					i > 1 ? "," : "", i);
	rc = sl_flow_parse(text, &fs, &err);
	check(rc == 0 && fs.insns.n_apply == SL_ACTIONS_MAX, "max actions accepted");
	snprintf(text + len, sizeof(text) - len, ",output:99");
	rc = sl_flow_parse(text, &fs, &err);
	check(rc == -E2BIG && strstr(err.msg, "too many actions") &&
		      strcmp(err.token, "output:99") == 0,
	      "too many actions: %d '%s' '%s'", rc, err.msg, err.token);

	len = (size_t)snprintf(text, sizeof(text), "actions=write_actions(");
	for (unsigned i = 0; i <= SL_ACTIONS_MAX; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"%sset_field:%u->raw(pkt,%u,8)", i ? "," : "", i, i * 8);
	snprintf(text + len, sizeof(text) - len, ")");
	rc = sl_flow_parse(text, &fs, &err);
	check(rc == -E2BIG && strstr(err.msg, "too many actions"), "too many write actions");

	/* SL_KEY_FIELDS_MAX match fields. */
	len = 0;
	for (unsigned i = 0; i <= SL_KEY_FIELDS_MAX; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "raw(pkt,%u,8)=%u,", i * 8,
					i);
	snprintf(text + len, sizeof(text) - len, " actions=drop");
	rc = sl_flow_parse(text, &fs, &err);
	check(rc == -E2BIG && strstr(err.msg, "too many match fields"), "too many fields: %s",
	      err.msg);

	/* A long token is truncated, never overflowed. */
	memset(text, 'x', 300);
	memcpy(text + 300, "=1 actions=drop", 16);
	rc = sl_flow_parse(text, &fs, &err);
	check(rc < 0 && strlen(err.token) == sizeof(err.token) - 1 &&
		      strcmp(err.token + sizeof(err.token) - 4, "...") == 0,
	      "long token truncated");
}

/* Specs that do not come from the parser still print readable, parseable text. */
static void
test_format_constructed(void)
{
	struct sl_flow_spec fs, fs2;
	struct sl_field f = {.id = SL_FIELD_VLAN_VID};
	uint8_t v[16] = {0x00, 0x05}, m[16] = {0x1f, 0xff};
	char buf[256], small[16];
	int rc, len;

	sl_flow_spec_init(&fs);
	sl_match_set(&fs.match, &f, v, m);
	fs.insns.has_apply = true;
	fs.insns.n_apply = 1;
	fs.insns.apply[0].type = SL_ACT_SET_FIELD;
	fs.insns.apply[0].set_field.f = f;
	fs.insns.apply[0].set_field.value[1] = 0x05;
	sl_flow_format(&fs, buf, sizeof(buf));
	check(strcmp(buf, "table=0, priority=32768,vlan_vid=0x5 actions=set_field:0x5->vlan_vid") ==
		      0,
	      "vlan_vid without present bit: '%s'", buf);
	rc = sl_flow_parse(buf, &fs2, NULL);
	check(rc == 0 && spec_equal(&fs, &fs2), "vlan_vid raw round trip");

	/* snprintf-style truncation. */
	len = sl_flow_format(&fs, small, sizeof(small));
	check(len == (int)strlen(buf) && strlen(small) == sizeof(small) - 1 &&
		      strncmp(small, buf, sizeof(small) - 1) == 0,
	      "format truncates like snprintf");
	check(sl_flow_format(&fs, NULL, 0) == len, "format with size 0 only measures");

	sl_flow_format_match(&fs.match, buf, sizeof(buf));
	check(strcmp(buf, "vlan_vid=0x5") == 0, "format_match '%s'", buf);
	sl_flow_format_actions(&fs.insns, buf, sizeof(buf));
	check(strcmp(buf, "set_field:0x5->vlan_vid") == 0, "format_actions '%s'", buf);
	sl_flow_spec_init(&fs);
	sl_flow_format_actions(&fs.insns, buf, sizeof(buf));
	check(strcmp(buf, "drop") == 0, "format_actions drop");
}

static void
test_table_specs(void)
{
	static const struct {
		const char *in, *out;
	} good[] = {
		{"table=2,kind=lpm,fields=nw_dst,size=4096,name=fib",
		 "table=2,kind=lpm,fields=nw_dst,size=4096,name=fib"},
		{"table=0, kind=exact, fields=in_port+eth_dst+dl_vlan",
		 "table=0,kind=exact,fields=in_port+dl_dst+dl_vlan"},
		{"table=1,kind=ternary,fields=raw(l4,0,16)+nw_src+raw(pkt,0,48)",
		 "table=1,kind=mask,fields=raw(l4,0,16)+nw_src+raw(pkt,0,48)"},
		{"kind=direct,table=9,fields=metadata", "table=9,kind=direct,fields=metadata"},
		{"table=3,kind=mask", "table=3,kind=mask"},
	};
	static const struct {
		const char *in, *msg, *token;
	} errs[] = {
		{"table=2,kind=trie,fields=nw_dst", "unknown table kind", "kind=trie"},
		{"table=2,kind=lpm,fields=nw_dst+bogus", "unknown field", "bogus"},
		{"table=2,kind=lpm,fields=nw_dst+nw_dst", "duplicate field", "nw_dst"},
		{"table=2,kind=lpm,fields=tp_dst", "ambiguous", "tp_dst"},
		{"table=2,kind=lpm,fields=nw_dst+", "empty field name", "fields=nw_dst+"},
		{"table=2,kind=lpm,fields=ipv6_src+ipv6_dst+nd_target+raw(l4,0,128)+raw(l4,128,128)+"
		 "raw(l4,256,128)+raw(l4,384,128)+raw(l4,512,128)+raw(l4,640,128)+raw(l4,768,128)+"
		 "raw(l4,896,128)+raw(l4,1024,128)+metadata",
		 "too wide for a key", "fields="},
		{"kind=lpm", "without table=", "kind=lpm"},
		{"table=2,kind=lpm,size=0", "bad size", "size=0"},
		{"table=2,kind=lpm,name=a b", "expected KEY=VALUE", "b"},
		{"table=2,kind=lpm,name=a/b", "bad name", "name=a/b"},
		{"table=2,kind=lpm,priority=1", "unknown table declaration key", "priority=1"},
		{"table=2,kind=lpm,kind=mask", "duplicate 'kind'", "kind=mask"},
	};

	for (unsigned i = 0; i < SL_ARRAY_SIZE(good); i++) {
		struct sl_table_spec ts, ts2;
		struct sl_parse_error err;
		char buf[256];
		int rc = sl_table_spec_parse(good[i].in, &ts, &err);

		check(rc == 0, "table spec '%s': %s", good[i].in, err.msg);
		sl_table_spec_format(&ts, buf, sizeof(buf));
		check(strcmp(buf, good[i].out) == 0, "table spec '%s' -> '%s'", good[i].in, buf);
		rc = sl_table_spec_parse(buf, &ts2, &err);
		check(rc == 0 && memcmp(&ts, &ts2, sizeof(ts)) == 0, "table spec round trip '%s'",
		      buf);
	}
	for (unsigned i = 0; i < SL_ARRAY_SIZE(errs); i++) {
		struct sl_table_spec ts;
		struct sl_parse_error err;
		int rc = sl_table_spec_parse(errs[i].in, &ts, &err);

		check(rc < 0 && strstr(err.msg, errs[i].msg) && strstr(err.token, errs[i].token),
		      "table spec error '%s': %d '%s' '%s'", errs[i].in, rc, err.msg, err.token);
	}
}

/* Loader callbacks: record what arrives; fail on a flow with priority 666. */
struct sink {
	unsigned n_tables, n_flows;
	char last[512];
	unsigned lines[16]; /* err->line seen by each callback, in order */
	unsigned n_lines;
};

static int
on_table(void *arg, const struct sl_table_spec *ts, struct sl_parse_error *err)
{
	struct sink *s = arg;

	if (s->n_lines < SL_ARRAY_SIZE(s->lines))
		s->lines[s->n_lines++] = err->line;
	s->n_tables++;
	sl_table_spec_format(ts, s->last, sizeof(s->last));
	return 0;
}

static int
on_flow(void *arg, const struct sl_flow_spec *fs, struct sl_parse_error *err)
{
	struct sink *s = arg;

	if (fs->priority == 666) {
		snprintf(err->msg, sizeof(err->msg), "pipeline says no");
		return -ENOSPC;
	}
	if (s->n_lines < SL_ARRAY_SIZE(s->lines))
		s->lines[s->n_lines++] = err->line;
	s->n_flows++;
	sl_flow_format(fs, s->last, sizeof(s->last));
	return 0;
}

static int
write_temp(char *path, const char *content)
{
	int fd = mkstemp(path);
	FILE *f;

	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	if (f == NULL) {
		close(fd);
		return -1;
	}
	fputs(content, f);
	fclose(f);
	return 0;
}

static void
test_load(void)
{
	static const char good[] = "# Startup flows\n"
				   "\n"
				   "table=1,kind=lpm,fields=nw_dst,size=1024,name=fib   # the FIB\n"
				   "table=0, priority=100, ip, \\\n"
				   "    nw_dst=10.0.0.0/8 \\\n"
				   "    actions=dec_ttl,goto_table:1\r\n"
				   "   \t \n"
				   "table=1,priority=8,ip,nw_dst=10.1.0.0/16 actions=output:2\n"
				   "priority=0 actions=CONTROLLER \\";
	static const char bad[] = "table=0,priority=1 actions=drop\n"
				  "# comment\n"
				  "ip,\\\n"
				  "nw_dst=1.2.3.999 actions=drop\n"
				  "priority=2 actions=drop\n";
	static const char rejected[] = "priority=1 actions=drop\n"
				       "\n"
				       "priority=666,ip actions=output:1\n";
	char path[] = "/tmp/test_flowfile_XXXXXX";
	struct sl_parse_error err;
	struct sink s;
	char text[512];
	int rc;

	check(write_temp(path, good) == 0, "temp file");
	memset(&s, 0, sizeof(s));
	rc = sl_flowfile_load(path, on_table, on_flow, &s, &err);
	sl_parse_error_format(&err, text, sizeof(text));
	check(rc == 0, "load good file: %s", text);
	check(s.n_tables == 1 && s.n_flows == 3, "load counts %u %u", s.n_tables, s.n_flows);
	check(strcmp(s.last, "table=0, priority=0 actions=CONTROLLER") == 0, "last flow '%s'",
	      s.last);
	/* Callbacks see the first physical line of their item. */
	check(s.n_lines == 4 && s.lines[0] == 3 && s.lines[1] == 4 && s.lines[2] == 8 &&
		      s.lines[3] == 9,
	      "callback lines %u: %u %u %u %u", s.n_lines, s.lines[0], s.lines[1], s.lines[2],
	      s.lines[3]);
	rc = sl_flowfile_load(path, NULL, NULL, NULL, NULL);
	check(rc == 0, "syntax check only");
	unlink(path);

	/* A parse error on a continued line reports its first physical line. */
	strcpy(path, "/tmp/test_flowfile_XXXXXX");
	check(write_temp(path, bad) == 0, "temp file");
	memset(&s, 0, sizeof(s));
	rc = sl_flowfile_load(path, on_table, on_flow, &s, &err);
	sl_parse_error_format(&err, text, sizeof(text));
	check(rc == -EINVAL && err.line == 3 && s.n_flows == 1, "bad file: %d line %u", rc,
	      err.line);
	check(strstr(text, ":3: bad IPv4 address") && strstr(text, "(near 'nw_dst=1.2.3.999')") &&
		      strncmp(text, path, strlen(path)) == 0,
	      "bad file message '%s'", text);
	unlink(path);

	/* A callback's own error gets file, line and the line as token. */
	strcpy(path, "/tmp/test_flowfile_XXXXXX");
	check(write_temp(path, rejected) == 0, "temp file");
	memset(&s, 0, sizeof(s));
	rc = sl_flowfile_load(path, on_table, on_flow, &s, &err);
	sl_parse_error_format(&err, text, sizeof(text));
	check(rc == -ENOSPC && err.line == 3 &&
		      strstr(text, ":3: pipeline says no (near "
				   "'priority=666,ip actions=output:1')"),
	      "callback error '%s'", text);
	unlink(path);

	rc = sl_flowfile_load("/nonexistent/flows.txt", on_table, on_flow, &s, &err);
	sl_parse_error_format(&err, text, sizeof(text));
	check(rc == -ENOENT && strstr(text, "cannot open"), "missing file '%s'", text);
}

static unsigned n_groups_seen;

static int
on_group(void *arg, const struct sl_group_spec *gs, struct sl_parse_error *err)
{
	(void)arg;
	(void)err;
	n_groups_seen += gs->group_id == 7 && gs->n_buckets == 2;
	return 0;
}

/* Groups in ovs-ofctl add-groups syntax (sl_group_parse) and as flow-file lines. */
static void
test_groups(void)
{
	static struct sl_group_spec gs;
	struct sl_parse_error err;
	int rc;

	rc = sl_group_parse("group_id=1,type=all,bucket=output:2,bucket=output:3", &gs, &err);
	check(rc == 0 && gs.group_id == 1 && gs.type == SL_GROUP_ALL && gs.n_buckets == 2 &&
		      gs.buckets[0].n_actions == 1 && gs.buckets[1].actions[0].output.port == 3 &&
		      gs.buckets[0].watch_port == SL_PORT_ANY,
	      "all group: %d %s", rc, err.msg);
	rc = sl_group_parse("group_id=2,type=select,bucket=weight:10,actions=output:2,"
			    "bucket=weight:5,output:3,bucket=output:4",
			    &gs, &err);
	check(rc == 0 && gs.n_buckets == 3 && gs.buckets[0].weight == 10 &&
		      gs.buckets[1].weight == 5 && gs.buckets[2].weight == 1 &&
		      gs.buckets[1].actions[0].output.port == 3,
	      "select weights: %d %s", rc, err.msg);
	rc = sl_group_parse("group_id=3, type=ff, bucket=watch_port:2,output:2, "
			    "bucket=watch_port:3,actions=output:3",
			    &gs, &err);
	check(rc == 0 && gs.type == SL_GROUP_FF && gs.buckets[0].watch_port == 2 &&
		      gs.buckets[1].watch_port == 3 && gs.buckets[1].n_actions == 1,
	      "ff watch ports: %d %s", rc, err.msg);
	/* A bucket has no match: set_field needs no prerequisite there. */
	rc = sl_group_parse("group_id=4,type=indirect,bucket=set_field:80->tcp_dst,"
			    "set_field:00:00:00:00:00:10->eth_dst,push_vlan:0x8100,output:1",
			    &gs, &err);
	check(rc == 0 && gs.buckets[0].n_actions == 4 &&
		      gs.buckets[0].actions[0].type == SL_ACT_SET_FIELD,
	      "bucket set_field without a match: %d %s", rc, err.msg);
	/* Chaining: a group action in a bucket, and a bucket watching a group. */
	rc = sl_group_parse("group_id=7,type=ff,bucket=watch_group:4,actions=group:4,"
			    "bucket=watch_port:2,watch_group:3,group:3",
			    &gs, &err);
	check(rc == 0 && gs.n_buckets == 2 && gs.buckets[0].watch_group == 4 &&
		      gs.buckets[0].watch_port == SL_PORT_ANY &&
		      gs.buckets[0].actions[0].type == SL_ACT_GROUP &&
		      gs.buckets[0].actions[0].group_id == 4 && gs.buckets[1].watch_port == 2 &&
		      gs.buckets[1].watch_group == 3 && gs.buckets[1].actions[0].group_id == 3,
	      "chained ff group: %d %s", rc, err.msg);
	rc = sl_group_parse("group_id=5,type=indirect", &gs, &err);
	check(rc == 0 && gs.n_buckets == 0, "no buckets: %d", rc);
	rc = sl_group_parse("group_id=6,type=all,bucket=actions=drop,bucket=", &gs, &err);
	check(rc == 0 && gs.n_buckets == 2 && gs.buckets[0].n_actions == 0, "empty buckets: %d %s",
	      rc, err.msg);

	static const struct {
		const char *text, *msg, *token;
	} bad[] = {
		{"type=all,bucket=output:1", "missing group_id=", NULL},
		{"group_id=1,bucket=output:1", "missing type=", NULL},
		{"group_id=1,type=foo", "bad group type", "type=foo"},
		{"group_id=0xffffff01,type=all", "bad group_id", "group_id=0xffffff01"},
		{"group_id=1,type=all,bucket=goto_table:1", "not allowed here", "goto_table:1"},
		{"group_id=1,type=all,selection_method=hash", "unknown group item",
		 "selection_method=hash"},
		{"group_id=1,type=select,bucket=output:1,weight:3", "unknown action", "weight:3"},
		{"group_id=1,type=ff,bucket=watch_port:0,output:1", "bad watch_port",
		 "watch_port:0"},
		{"group_id=1,type=all,bucket=bucket_id:1,output:1", "OpenFlow 1.5", "bucket_id:1"},
	};
	for (unsigned i = 0; i < SL_ARRAY_SIZE(bad); i++) {
		rc = sl_group_parse(bad[i].text, &gs, &err);
		check(rc == -EINVAL && strstr(err.msg, bad[i].msg) != NULL &&
			      (bad[i].token == NULL || strcmp(err.token, bad[i].token) == 0),
		      "group error '%s': %d '%s' near '%s'", bad[i].text, rc, err.msg, err.token);
	}

	static const char file[] = "group_id=7,type=all,bucket=output:1,bucket=output:2\n"
				   "priority=1 actions=group:7\n";
	char path[] = "/tmp/test_flowfile_XXXXXX";
	struct sink sk;
	struct sl_flowfile_callbacks cb = {on_table, on_flow, NULL, on_group};
	check(write_temp(path, file) == 0, "temp file");
	memset(&sk, 0, sizeof(sk));
	rc = sl_flowfile_load_cb(path, &cb, &sk, &err);
	check(rc == 0 && n_groups_seen == 1 && sk.n_flows == 1, "group line loaded: %d %u %u", rc,
	      n_groups_seen, sk.n_flows);
	unlink(path);
	strcpy(path + strlen(path) - 6, "XXXXXX");
	static const char badfile[] = "priority=1 actions=drop\ngroup_id=7,type=none\n";
	check(write_temp(path, badfile) == 0, "temp file");
	rc = sl_flowfile_load_cb(path, &cb, &sk, &err);
	check(rc == -EINVAL && err.line == 2 && strstr(err.msg, "bad group type"),
	      "bad group line: %d line %u '%s'", rc, err.line, err.msg);
	unlink(path);
}

static unsigned n_meters_seen;

static int
on_meter(void *arg, const struct sl_meter_spec *ms, struct sl_parse_error *err)
{
	(void)arg;
	(void)err;
	n_meters_seen += ms->meter_id == 3 && ms->n_bands == 1;
	return 0;
}

/* Meters in ovs-ofctl add-meter syntax, the meter instruction, and meter lines in files. */
static void
test_meters(void)
{
	struct sl_meter_spec ms, back;
	struct sl_flow_spec fs;
	struct sl_parse_error err;
	char text[512];
	int rc;

	rc = sl_meter_parse("meter=1,kbps,burst,stats,bands=type=drop,rate=1000,burst_size=100 "
			    "type=dscp_remark,rate=500,prec_level=2",
			    &ms, &err);
	check(rc == 0 && ms.meter_id == 1 &&
		      ms.flags == (SL_METER_KBPS | SL_METER_BURST | SL_METER_STATS) &&
		      ms.n_bands == 2 && ms.bands[0].type == SL_BAND_DROP &&
		      ms.bands[0].rate == 1000 && ms.bands[0].burst == 100 &&
		      ms.bands[1].type == SL_BAND_DSCP_REMARK && ms.bands[1].prec_level == 2,
	      "two bands: %d %s", rc, err.msg);
	sl_meter_format(&ms, text, sizeof(text));
	check(strcmp(text, "meter=1,kbps,burst,stats,bands=type=drop,rate=1000,burst_size=100 "
			   "type=dscp_remark,rate=500,prec_level=2") == 0,
	      "format '%s'", text);
	rc = sl_meter_parse(text, &back, &err);
	check(rc == 0 && memcmp(&back, &ms, sizeof(ms)) == 0, "round trip: %d %s", rc, err.msg);
	/* Blanks as separators, as ovs-ofctl's examples write it; kbps by default. */
	rc = sl_meter_parse("meter=2 burst bands=type=dscp_remark rate=10", &ms, &err);
	check(rc == 0 && ms.flags == (SL_METER_KBPS | SL_METER_BURST) && ms.n_bands == 1 &&
		      ms.bands[0].prec_level == 1,
	      "blanks and defaults: %d %s", rc, err.msg);
	rc = sl_meter_parse("meter=3,pktps,bands=", &ms, &err);
	check(rc == 0 && ms.n_bands == 0 && ms.flags == SL_METER_PKTPS, "no bands: %d %s", rc,
	      err.msg);

	static const struct {
		const char *text, *msg, *token;
	} bad[] = {
		{"kbps,bands=type=drop,rate=1", "missing meter=", NULL},
		{"meter=0,bands=type=drop,rate=1", "bad meter id", "meter=0"},
		{"meter=0xffff0001,bands=type=drop,rate=1", "bad meter id", "meter=0xffff0001"},
		{"meter=1,kbps,pktps,bands=type=drop,rate=1", "exclude each other", NULL},
		{"meter=1,fast,bands=type=drop,rate=1", "unknown meter item", "fast"},
		{"meter=1,bands=type=police,rate=1", "bad band type", "type=police"},
		{"meter=1,bands=rate=1", "a band starts with type=", "rate=1"},
		{"meter=1,bands=type=drop", "has no rate=", NULL},
		{"meter=1,bands=type=drop,rate=0", "bad rate", "rate=0"},
		{"meter=1,bands=type=drop,rate=1,prec_level=1", "for dscp_remark", "prec_level=1"},
		{"meter=1,bands=type=dscp_remark,rate=1,prec_level=4", "bad prec_level",
		 "prec_level=4"},
		{"meter=1,bands=type=drop,rate=1,color=red", "unknown band item", "color=red"},
	};
	for (unsigned i = 0; i < SL_ARRAY_SIZE(bad); i++) {
		rc = sl_meter_parse(bad[i].text, &ms, &err);
		check(rc == -EINVAL && strstr(err.msg, bad[i].msg) != NULL &&
			      (bad[i].token == NULL || strcmp(err.token, bad[i].token) == 0),
		      "meter error '%s': %d '%s' near '%s'", bad[i].text, rc, err.msg, err.token);
	}

	/* The instruction: first, once, and printed first. */
	rc = sl_flow_parse("in_port=1 actions=meter:5,output:2", &fs, &err);
	check(rc == 0 && fs.insns.meter_id == 5 && fs.insns.n_apply == 1, "meter:5: %d %s", rc,
	      err.msg);
	sl_flow_format_actions(&fs.insns, text, sizeof(text));
	check(strcmp(text, "meter:5,output:2") == 0, "actions '%s'", text);
	rc = sl_flow_parse("in_port=1 actions=meter:5", &fs, &err);
	sl_flow_format_actions(&fs.insns, text, sizeof(text));
	check(rc == 0 && fs.insns.meter_id == 5 && strcmp(text, "meter:5") == 0,
	      "a meter alone: %d '%s'", rc, text);
	rc = sl_flow_parse("in_port=1 actions=output:2,meter:5", &fs, &err);
	check(rc == -EINVAL && strstr(err.msg, "meter must come first"), "meter after an action");
	rc = sl_flow_parse("in_port=1 actions=meter:5,meter:6", &fs, &err);
	check(rc == -EINVAL && strstr(err.msg, "duplicate instruction meter"), "two meters");
	rc = sl_flow_parse("in_port=1 actions=meter:0", &fs, &err);
	check(rc == -EINVAL && strstr(err.msg, "bad meter"), "meter:0");

	static const char file[] = "meter=3,pktps,bands=type=drop,rate=10\n"
				   "priority=1 actions=meter:3,output:1\n";
	char path[] = "/tmp/test_flowfile_XXXXXX";
	struct sink sk;
	struct sl_flowfile_callbacks cb = {on_table, on_flow, NULL, NULL, on_meter};
	check(write_temp(path, file) == 0, "temp file");
	memset(&sk, 0, sizeof(sk));
	rc = sl_flowfile_load_cb(path, &cb, &sk, &err);
	check(rc == 0 && n_meters_seen == 1 && sk.n_flows == 1, "meter line loaded: %d %u %u", rc,
	      n_meters_seen, sk.n_flows);
	unlink(path);
	strcpy(path + strlen(path) - 6, "XXXXXX");
	static const char badfile[] = "priority=1 actions=drop\nmeter=3,bands=type=none\n";
	check(write_temp(path, badfile) == 0, "temp file");
	rc = sl_flowfile_load_cb(path, &cb, &sk, &err);
	check(rc == -EINVAL && err.line == 2 && strstr(err.msg, "bad band type"),
	      "bad meter line: %d line %u '%s'", rc, err.line, err.msg);
	unlink(path);
}

/* set_field prerequisites follow the pushes and pops before it (as Open vSwitch checks them). */
static void
test_set_field_after_push_pop(void)
{
	static const char *const ok[] = {
		"ip actions=push_mpls:0x8847,set_field:100->mpls_label,output:2",
		"mpls actions=pop_mpls:0x0800,set_field:10->ip_dscp,output:2",
		"ip actions=write_actions(push_mpls:0x8847,set_field:6->mpls_tc,IN_PORT)",
		"ip actions=push_mpls:0x8847,write_actions(set_field:0->mpls_label,output:2)",
		"actions=push_pbb:0x88e7,set_field:0x1234->pbb_isid,output:1",
	};
	static const struct {
		const char *text, *token;
	} bad[] = {
		{"ip actions=push_mpls:0x8847,set_field:10.0.0.1->nw_dst,output:2",
		 "set_field:10.0.0.1->nw_dst"},
		{"ip actions=set_field:5->mpls_tc,push_mpls:0x8847", "set_field:5->mpls_tc"},
		/* In the order written, as OVS checks an action set (it runs push first). */
		{"ip actions=write_actions(set_field:6->mpls_tc,push_mpls:0x8847,output:1)",
		 "set_field:6->mpls_tc"},
		{"mpls actions=pop_mpls:0x86dd,write_actions(set_field:10.0.0.1->nw_dst)",
		 "set_field:10.0.0.1->nw_dst"},
		{"ip actions=push_pbb:0x88e7,pop_pbb,set_field:1->ip_dscp", "set_field:1->ip_dscp"},
	};
	struct sl_flow_spec fs;
	struct sl_parse_error err;

	for (unsigned i = 0; i < SL_ARRAY_SIZE(ok); i++)
		check(sl_flow_parse(ok[i], &fs, &err) == 0, "'%s': %s", ok[i], err.msg);
	for (unsigned i = 0; i < SL_ARRAY_SIZE(bad); i++) {
		int rc = sl_flow_parse(bad[i].text, &fs, &err);
		check(rc == -EINVAL && strcmp(err.token, bad[i].token) == 0 &&
			      strstr(err.msg, "set_field on") != NULL,
		      "'%s': %d '%s' near '%s'", bad[i].text, rc, err.msg, err.token);
	}
}

/* State lines: "state TABLE KEY STATE [options]" (sluicectl save writes them). */
static void
test_state_lines(void)
{
	static struct sl_match key;
	struct sl_state_set set;
	struct sl_parse_error err;
	uint8_t t = 0;
	int rc;

	rc = sl_state_line_parse("state 3 ip,nw_src=10.0.0.1 5 idle_ms=600 rollback=2", &t, &key,
				 &set, &err);
	check(rc == 0 && t == 3 && key.n_fields == 2 && set.state == 5 && set.idle_ms == 600 &&
		      set.rollback == 2 && set.hard_ms == 0,
	      "state line: %d %s", rc, err.msg);
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{"state 3 ip,nw_src=10.0.0.1", "expected: state TABLE KEY STATE"},
		{"state 254 ip 1", "bad table"},
		{"state 3 table=2,ip 1", "match fields only"},
		{"state 3 ip x", "bad state"},
		{"state 3 ip 1 color=2", "expected idle_ms=N"},
	};
	for (unsigned i = 0; i < SL_ARRAY_SIZE(bad); i++) {
		rc = sl_state_line_parse(bad[i].text, &t, &key, &set, &err);
		check(rc == -EINVAL && strstr(err.msg, bad[i].msg) != NULL, "'%s': %d '%s'",
		      bad[i].text, rc, err.msg);
	}
}

/* sl_flow_parse_filter_out: out_port / out_group on top of the filter syntax. */
static void
test_filter_out(void)
{
	struct sl_parse_error err;
	struct sl_flow_spec fs;
	uint32_t port, group;
	int rc;

	rc = sl_flow_parse_filter_out("", &fs, &port, &group, &err);
	check(rc == 0 && port == SL_PORT_ANY && group == SL_GROUP_ID_ANY && fs.table_id == 0xff,
	      "empty filter: %d %x %x", rc, port, group);
	rc = sl_flow_parse_filter_out("table=1,out_port=2,ip,nw_dst=10.0.0.0/8,out_group=7", &fs,
				      &port, &group, &err);
	check(rc == 0 && port == 2 && group == 7 && fs.table_id == 1 && fs.match.n_fields == 2,
	      "filter with out_port: %d %s", rc, err.msg);
	rc = sl_flow_parse_filter_out("out_port=LOCAL", &fs, &port, &group, &err);
	check(rc == 0 && port == SL_PORT_LOCAL, "out_port=LOCAL: %d", rc);
	rc = sl_flow_parse_filter_out("out_port=any", &fs, &port, &group, &err);
	check(rc == 0 && port == SL_PORT_ANY, "out_port=any: %d", rc);
	rc = sl_flow_parse_filter_out("out_port=0", &fs, &port, &group, &err);
	check(rc == -EINVAL && strcmp(err.token, "out_port=0") == 0, "out_port=0: %d '%s'", rc,
	      err.token);
	rc = sl_flow_parse_filter_out("out_group=0xffffff01", &fs, &port, &group, &err);
	check(rc == -EINVAL && strcmp(err.token, "out_group=0xffffff01") == 0,
	      "out_group too big: %d '%s'", rc, err.token);
	rc = sl_flow_parse_filter_out("cookie=0x5/-1", &fs, &port, &group, &err);
	check(rc == 0 && fs.cookie == 5 && fs.cookie_mask == UINT64_MAX, "cookie=0x5/-1: %d %s", rc,
	      err.msg);
	rc = sl_flow_parse_filter_out("cookie=0x5/-2", &fs, &port, &group, &err);
	check(rc == -EINVAL, "cookie=0x5/-2: %d", rc);
	/* The plain filter parser still refuses them. */
	rc = sl_flow_parse_filter("out_port=2", &fs, &err);
	check(rc == -EINVAL, "plain filter with out_port: %d", rc);
}

/* Port names (sl_port_names): read in in_port, out_port, output, watch_port; printed back. */
static const char *const test_port_names[] = {NULL, "eth-a", "p2", "7", "LOCAL", "bad,name"};

static int
names_to_number(void *arg, const char *name, size_t len, uint32_t *port)
{
	(void)arg;
	for (uint32_t i = 1; i < SL_ARRAY_SIZE(test_port_names); i++)
		if (strlen(test_port_names[i]) == len &&
		    memcmp(test_port_names[i], name, len) == 0) {
			*port = i;
			return 0;
		}
	return -ENOENT;
}

static const char *
names_to_name(void *arg, uint32_t port)
{
	(void)arg;
	return port < SL_ARRAY_SIZE(test_port_names) ? test_port_names[port] : NULL;
}

static void
test_port_names_io(void)
{
	const struct sl_port_names pn = {names_to_number, names_to_name, NULL};
	static struct sl_flow_spec fs, back;
	static struct sl_group_spec gs;
	struct sl_parse_error err;
	uint32_t port, group;
	char buf[1024];
	int rc;

	rc = sl_flow_parse_names("in_port=eth-a,ip actions=output:p2,output:5", &pn, &fs, &err);
	check(rc == 0 && fs.insns.n_apply == 2 && fs.insns.apply[0].output.port == 2,
	      "names parse: %d %s", rc, err.msg);
	sl_flow_format_names(&fs, &pn, buf, sizeof(buf));
	check(strcmp(buf, "table=0, priority=32768,ip,in_port=eth-a actions=output:p2,output:5") ==
		      0,
	      "names format '%s'", buf);
	/* Without names the same spec prints numbers, and names are errors. */
	sl_flow_format(&fs, buf, sizeof(buf));
	check(strstr(buf, "in_port=1") && strstr(buf, "output:2"), "numbers format '%s'", buf);
	rc = sl_flow_parse("in_port=eth-a actions=drop", &fs, &err);
	check(rc == -EINVAL, "name without a map: %d", rc);
	/* Names that would read back as something else print as numbers ("7" is port 3). */
	rc = sl_flow_parse_names("in_port=3 actions=output:4,output:5", &pn, &fs, &err);
	sl_flow_format_names(&fs, &pn, buf, sizeof(buf));
	check(rc == 0 && strcmp(buf, "table=0, priority=32768,in_port=3 actions=output:4,"
				     "output:5") == 0,
	      "unreadable names format '%s'", buf);
	/* A number is a number even when a port is named like one. */
	rc = sl_flow_parse_names("in_port=7 actions=drop", &pn, &fs, &err);
	check(rc == 0 && fs.match.fields[0].value[3] == 7, "numeric in_port: %d", rc);
	rc = sl_flow_parse_names("in_port=nosuch actions=drop", &pn, &fs, &err);
	check(rc == -EINVAL && strstr(err.msg, "'nosuch'") && strstr(err.msg, "port's name"),
	      "unknown name: %d %s", rc, err.msg);
	rc = sl_flow_parse_names("ip actions=output:nosuch", &pn, &fs, &err);
	check(rc == -EINVAL && strstr(err.msg, "'nosuch'"), "unknown output name: %d %s", rc,
	      err.msg);
	rc = sl_flow_parse_filter_names("out_port=p2,in_port=eth-a", &pn, &fs, &port, &group, &err);
	check(rc == 0 && port == 2 && fs.match.n_fields == 1, "out_port name: %d %s", rc, err.msg);
	rc = sl_group_parse_names("group_id=1,type=ff,bucket=watch_port:p2,output:p2", &pn, &gs,
				  &err);
	check(rc == 0 && gs.buckets[0].watch_port == 2 && gs.buckets[0].actions[0].output.port == 2,
	      "group names: %d %s", rc, err.msg);
	sl_port_format(1, &pn, buf, sizeof(buf));
	check(strcmp(buf, "eth-a") == 0, "port format '%s'", buf);
	sl_port_format(5, &pn, buf, sizeof(buf));
	check(strcmp(buf, "5") == 0, "port format unreadable '%s'", buf);
	sl_port_format(SL_PORT_LOCAL, &pn, buf, sizeof(buf));
	check(strcmp(buf, "LOCAL") == 0, "port format LOCAL '%s'", buf);
	/* Names round-trip. */
	rc = sl_flow_parse_names("table=2,in_port=p2 actions=output:eth-a", &pn, &fs, &err);
	sl_flow_format_names(&fs, &pn, buf, sizeof(buf));
	rc |= sl_flow_parse_names(buf, &pn, &back, &err);
	check(rc == 0 && match_equal(&fs.match, &back.match) && insns_equal(&fs.insns, &back.insns),
	      "names round trip '%s'", buf);
}

static void
test_error_format(void)
{
	struct sl_parse_error e = {.file = "f.txt", .line = 7, .token = "x=1", .msg = "bad"};
	char buf[256];

	sl_parse_error_format(&e, buf, sizeof(buf));
	check(strcmp(buf, "f.txt:7: bad (near 'x=1')") == 0, "error format '%s'", buf);
	e.file[0] = '\0';
	sl_parse_error_format(&e, buf, sizeof(buf));
	check(strcmp(buf, "line 7: bad (near 'x=1')") == 0, "error format '%s'", buf);
	e.line = 0;
	e.token[0] = '\0';
	sl_parse_error_format(&e, buf, sizeof(buf));
	check(strcmp(buf, "bad") == 0, "error format '%s'", buf);
}

int
main(void)
{
	test_golden();
	test_values();
	test_errors();
	test_limits();
	test_format_constructed();
	test_table_specs();
	test_load();
	test_groups();
	test_meters();
	test_set_field_after_push_pop();
	test_state_lines();
	test_filter_out();
	test_port_names_io();
	test_error_format();
	printf("%u passed, %u failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
