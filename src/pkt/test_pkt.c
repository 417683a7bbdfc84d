/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: lazy parsing, field reads on good and malformed frames, set-field checksums. */
#include "pkt.h"
#include "../core/sl_test.h"

#include <stdio.h>
#include <string.h>


static uint16_t
csum(const uint8_t *d, unsigned n, uint32_t sum)
{
	for (unsigned i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(d[i] << 8 | d[i + 1]);
	if (n & 1)
		sum += (uint32_t)d[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* Ethernet + [VLAN] + IPv4 + UDP with valid checksums. */
static unsigned
build_udp4(uint8_t *f, bool vlan)
{
	unsigned o = 0;
	memset(f, 0, 128);
	memcpy(f, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	o = 12;
	if (vlan) {
		memcpy(f + o, "\x81\x00\x60\x0a", 4); /* pcp 3, vid 10 */
		o += 4;
	}
	f[o++] = 0x08;
	f[o++] = 0x00;
	uint8_t *ip = f + o;
	ip[0] = 0x45;
	ip[1] = 0xb9; /* dscp 46, ecn 1 */
	ip[3] = 20 + 8 + 4;
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, "\x0a\x00\x00\x01\x0a\x40\x00\x07", 8);
	uint16_t c = (uint16_t)~csum(ip, 20, 0);
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
	uint8_t *udp = ip + 20;
	memcpy(udp, "\x04\x00\x13\x89\x00\x0c\x00\x00" "abcd", 12);
	uint32_t ph = csum(ip + 12, 8, 17 + 12);
	c = (uint16_t)~csum(udp, 12, ph);
	udp[6] = (uint8_t)(c >> 8);
	udp[7] = (uint8_t)c;
	return o + 32;
}

static bool
udp4_csums_ok(uint8_t *f, unsigned l3)
{
	uint8_t *ip = f + l3, *udp = ip + 20;
	uint32_t ph = csum(ip + 12, 8, 17 + 12);
	return csum(ip, 20, 0) == 0xffff && csum(udp, 12, ph) == 0xffff;
}

static void
test_ipv4(void)
{
	uint8_t f[160], out[16];
	struct sl_pkt p;
	unsigned len = build_udp4(f, true);
	struct sl_field fld;

	sl_pkt_init(&p, f, (uint16_t)len, 0, 3);
	fld.id = SL_FIELD_VLAN_VID;
	sl_pkt_field_read(&p, &fld, out);
	CHECK(out[0] == 0x10 && out[1] == 10, "vlan_vid %02x%02x", out[0], out[1]);
	fld.id = SL_FIELD_VLAN_PCP;
	sl_pkt_field_read(&p, &fld, out);
	CHECK(out[0] == 3, "pcp %u", out[0]);
	fld.id = SL_FIELD_ETH_TYPE;
	sl_pkt_field_read(&p, &fld, out);
	CHECK(out[0] == 8 && out[1] == 0, "eth_type after vlan");
	fld.id = SL_FIELD_IP_DSCP;
	sl_pkt_field_read(&p, &fld, out);
	CHECK(out[0] == 46, "dscp %u", out[0]);
	fld.id = SL_FIELD_IP_ECN;
	sl_pkt_field_read(&p, &fld, out);
	CHECK(out[0] == 1, "ecn");
	fld.id = SL_FIELD_UDP_DST;
	sl_pkt_field_read(&p, &fld, out);
	CHECK(out[0] == 0x13 && out[1] == 0x89, "udp_dst");
	fld.id = SL_FIELD_TCP_DST;
	sl_pkt_field_read(&p, &fld, out);
	CHECK(out[0] == 0 && out[1] == 0, "tcp_dst of a UDP packet reads zero");
	fld.id = SL_FIELD_IN_PORT;
	sl_pkt_field_read(&p, &fld, out);
	CHECK(out[3] == 3, "in_port");
	/* Raw fields: UDP dst port as {l4, 16, 16}; 12 bits at an odd offset. */
	fld = (struct sl_field){.id = SL_FIELD_RAW, .raw_base = SL_RAW_BASE_L4, .raw_bit_off = 16,
				.raw_n_bits = 16};
	sl_pkt_field_read(&p, &fld, out);
	CHECK(out[0] == 0x13 && out[1] == 0x89, "raw l4 port");
	fld = (struct sl_field){.id = SL_FIELD_RAW, .raw_base = SL_RAW_BASE_L3, .raw_bit_off = 4,
				.raw_n_bits = 12};
	sl_pkt_field_read(&p, &fld, out);
	CHECK(out[0] == 0x05 && out[1] == 0xb9, "raw unaligned %02x%02x", out[0], out[1]);
	/* Set fields keep checksums valid. */
	uint8_t ip[4] = {192, 168, 1, 1}, port[2] = {0x00, 0x35}, ttl = 7, dscp = 10;
	fld = (struct sl_field){.id = SL_FIELD_IPV4_SRC};
	CHECK(sl_pkt_field_write(&p, &fld, ip) == 0, "write nw_src");
	fld.id = SL_FIELD_UDP_SRC;
	CHECK(sl_pkt_field_write(&p, &fld, port) == 0, "write udp_src");
	fld.id = SL_FIELD_IP_TTL;
	CHECK(sl_pkt_field_write(&p, &fld, &ttl) == 0, "write ttl");
	fld.id = SL_FIELD_IP_DSCP;
	CHECK(sl_pkt_field_write(&p, &fld, &dscp) == 0, "write dscp");
	CHECK(udp4_csums_ok(f, 18), "checksums after set_field");
	fld.id = SL_FIELD_TCP_SRC;
	CHECK(sl_pkt_field_write(&p, &fld, port) == -ENOENT, "tcp_src on UDP must fail");
}

/* SCTP port rewrites recompute the CRC32c; expected values from scapy. */
static void
test_sctp(void)
{
	static const uint8_t frame[66] = {
		0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,
		0x45, 0x00, 0x00, 0x34, 0x00, 0x01, 0x00, 0x00, 0x40, 0x84, 0x65, 0xfe, 0x0a, 0x00,
		0x00, 0x01, 0x0a, 0x40, 0x00, 0x07, 0x04, 0x00, 0x13, 0x89, 0x11, 0x22, 0x33, 0x44,
		0xdb, 0x06, 0xf1, 0x88, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x61, 0x62, 0x63, 0x64};
	uint8_t f[66], port[2] = {0x00, 80};
	struct sl_pkt p;
	struct sl_field fld = {.id = SL_FIELD_SCTP_DST};

	memcpy(f, frame, sizeof(f));
	sl_pkt_init(&p, f, sizeof(f), 0, 1);
	CHECK(sl_pkt_field_write(&p, &fld, port) == 0, "write sctp_dst");
	CHECK(f[36] == 0 && f[37] == 80, "sctp_dst written");
	CHECK(memcmp(f + 42, "\x23\x93\x31\x8a", 4) == 0, "sctp crc32c %02x%02x%02x%02x", f[42],
	      f[43], f[44], f[45]);
	port[1] = 0x89;
	port[0] = 0x13;
	CHECK(sl_pkt_field_write(&p, &fld, port) == 0 && memcmp(f, frame, sizeof(f)) == 0,
	      "rewriting the old port back restores the original frame");
}

static void
test_malformed(void)
{
	uint8_t f[160], out[16];
	struct sl_pkt p;
	unsigned len = build_udp4(f, false);

	/* Every truncation of a valid frame reads every field without faulting. */
	for (unsigned cut = 0; cut <= len; cut++) {
		uint8_t copy[160];
		memcpy(copy, f, cut);
		sl_pkt_init(&p, copy, (uint16_t)cut, 0, 1);
		for (unsigned id = 0; id < SL_FIELD_RAW; id++) {
			struct sl_field fld = {.id = (uint8_t)id};
			sl_pkt_field_read(&p, &fld, out);
		}
		struct sl_field raw = {.id = SL_FIELD_RAW, .raw_base = SL_RAW_BASE_L4,
				       .raw_bit_off = 3, .raw_n_bits = 128};
		sl_pkt_field_read(&p, &raw, out);
	}
	CHECK(1, "truncations survived");
	/* Truncated L4: ports read as zero. */
	sl_pkt_init(&p, f, 14 + 20 + 2, 0, 1);
	struct sl_field fld = {.id = SL_FIELD_UDP_DST};
	sl_pkt_field_read(&p, &fld, out);
	CHECK(out[0] == 0 && out[1] == 0, "truncated udp");
	/* Bad IHL (< 5): no L4. */
	f[14] = 0x42;
	sl_pkt_init(&p, f, (uint16_t)len, 0, 1);
	fld.id = SL_FIELD_UDP_SRC;
	sl_pkt_field_read(&p, &fld, out);
	CHECK(out[0] == 0 && out[1] == 0, "bad ihl");
	/* Endless VLAN stack. */
	uint8_t v[64];
	for (unsigned i = 12; i + 1 < sizeof(v); i += 4) {
		v[i] = 0x81;
		v[i + 1] = 0x00;
		if (i + 3 < sizeof(v))
			v[i + 2] = v[i + 3] = 0;
	}
	sl_pkt_init(&p, v, sizeof(v), 0, 1);
	fld.id = SL_FIELD_ETH_TYPE;
	sl_pkt_field_read(&p, &fld, out);
	CHECK(p.l2_end <= sizeof(v), "vlan stack bounded");
}

static void
test_ipv6(void)
{
	uint8_t f[160] = {0}, out[16];
	struct sl_pkt p;

	f[12] = 0x86;
	f[13] = 0xdd;
	f[14] = 0x60;
	f[15] = 0x0a; /* flow label 0xabcde */
	f[16] = 0xbc;
	f[17] = 0xde;
	f[20] = 0; /* hop-by-hop */
	f[21] = 64;
	f[22 + 16 + 15] = 2; /* dst ::2 */
	/* hop-by-hop header of 8 bytes, next = 58 (ICMPv6) */
	f[54] = 58;
	f[55] = 0;
	f[62] = 135; /* neighbour solicitation */
	f[62 + 8 + 15] = 9;
	sl_pkt_init(&p, f, 62 + 24, 0, 1);
	struct sl_field fld = {.id = SL_FIELD_IPV6_FLABEL};
	sl_pkt_field_read(&p, &fld, out);
	CHECK(out[0] == 0x0a && out[1] == 0xbc && out[2] == 0xde, "flow label");
	fld.id = SL_FIELD_IP_PROTO;
	sl_pkt_field_read(&p, &fld, out);
	CHECK(out[0] == 58, "proto after ext header: %u", out[0]);
	fld.id = SL_FIELD_ICMPV6_TYPE;
	sl_pkt_field_read(&p, &fld, out);
	CHECK(out[0] == 135, "icmpv6 type");
	fld.id = SL_FIELD_IPV6_ND_TARGET;
	sl_pkt_field_read(&p, &fld, out);
	CHECK(out[15] == 9, "nd target");
}

static void
test_layout(void)
{
	struct sl_field fs[] = {{.id = SL_FIELD_ETH_DST}, {.id = SL_FIELD_IPV6_SRC},
				{.id = SL_FIELD_ETH_DST}, {.id = SL_FIELD_TCP_DST}};
	struct sl_key_layout l;

	CHECK(sl_key_layout_init(&l, fs, 4) == 0, "layout");
	CHECK(l.n_fields == 3 && l.key_size == 24 && l.need_l4, "layout dedupe/size %u %u",
	      l.n_fields, l.key_size);
	struct sl_field many[8];
	for (int i = 0; i < 8; i++)
		many[i] = (struct sl_field){.id = SL_FIELD_RAW, .raw_base = 0,
					    .raw_bit_off = (uint16_t)(128 * i), .raw_n_bits = 128};
	CHECK(sl_key_layout_init(&l, many, 8) == -E2BIG, "key too large");
	CHECK(sl_field_by_name("nw_dst") == SL_FIELD_IPV4_DST, "name");
	CHECK(sl_field_by_name("eth_type") == SL_FIELD_ETH_TYPE, "alias");
	CHECK(sl_field_by_name("bogus") == -1, "unknown name");
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint32_t
rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

/* A random frame: VLAN and MPLS stacks, IPv4/IPv6/ARP/other, extension headers, any length. */
static unsigned
build_random(uint8_t *f, unsigned cap)
{
	static const uint16_t types[] = {0x0800, 0x86dd, 0x0806, 0x88dc, 0x8847, 0x1234};
	static const uint8_t protos[] = {6, 17, 132, 1, 58, 253, 0, 44, 43};
	unsigned o = 12, n_vlan = rnd(4) == 0 ? 1 + rnd(2) : 0;
	uint16_t type = types[rnd(6)];

	for (unsigned i = 0; i < cap; i++)
		f[i] = (uint8_t)rnd(256);
	for (unsigned i = 0; i < n_vlan; i++, o += 4) {
		f[o] = 0x81;
		f[o + 1] = 0x00;
	}
	f[o] = (uint8_t)(type >> 8);
	f[o + 1] = (uint8_t)type;
	o += 2;
	unsigned l3 = o;
	if (type == 0x8847) { /* one or two labels, the last with bottom-of-stack */
		unsigned n = 1 + rnd(2);
		for (unsigned i = 0; i < n; i++, o += 4)
			f[o + 2] = (uint8_t)((f[o + 2] & ~1u) | (i + 1 == n));
	} else if (type == 0x0800) {
		f[o] = (uint8_t)(0x40 | (rnd(8) == 0 ? rnd(16) : 5));
		f[o + 6] = rnd(8) == 0 ? f[o + 6] : 0; /* mostly not a fragment */
		f[o + 7] = 0;
		f[o + 9] = protos[rnd(9)];
	} else if (type == 0x86dd) {
		f[o + 6] = protos[rnd(9)];
		if (f[o + 6] == 0 || f[o + 6] == 43 || f[o + 6] == 44) {
			f[o + 40] = protos[rnd(6)];
			f[o + 41] = 0;
			f[o + 42] = f[o + 43] = 0;
		}
	}
	/* Lengths cluster where fields begin to fit: just past the L3 start. */
	switch (rnd(4)) {
	case 0:
		return rnd(cap + 1);
	case 1:
		return SL_MIN(cap, l3 + 40 + 8 + rnd(40));
	default:
		return SL_MIN(cap, l3 + rnd(72));
	}
}

/*
 * sl_key_extract (precompiled ops) must write exactly the bytes the generic
 * field reads give, on any frame: random layouts, random frames.
 */
static void
test_key_extract_random(void)
{
	unsigned checked = 0, bad = 0, bad_parse = 0;

	for (unsigned it = 0; it < 100000; it++) {
		struct sl_field fs[8];
		struct sl_key_layout l;
		unsigned n = 1 + rnd(8);

		for (unsigned i = 0; i < n; i++) {
			memset(&fs[i], 0, sizeof(fs[i]));
			fs[i].id = (uint16_t)(rnd(3) == 0 ? SL_FIELD_RAW : rnd(SL_FIELD__MAX));
			if (fs[i].id == SL_FIELD_RAW) {
				bool aligned = rnd(4) != 0;
				fs[i].raw_base = (uint8_t)rnd(3);
				fs[i].raw_bit_off = (uint16_t)(aligned ? 8 * rnd(64) : rnd(512));
				fs[i].raw_n_bits = (uint16_t)(aligned ? 8 * (1 + rnd(16))
								      : 1 + rnd(SL_RAW_BITS_MAX));
			}
		}
		if (sl_key_layout_init(&l, fs, n) != 0)
			continue;
		uint8_t frame[160], key[SL_KEY_MAX], ref[SL_KEY_MAX];
		unsigned len = build_random(frame, sizeof(frame));
		struct sl_pkt p, q;

		sl_pkt_init(&p, frame, (uint16_t)len, 0, 1 + rnd(8));
		q = p;
		p.metadata = q.metadata = ((uint64_t)rnd(1u << 31) << 32) | rnd(1u << 31);
		memset(key, 0xa5, sizeof(key));
		sl_key_extract(&l, &p, key);
		memset(ref, 0, sizeof(ref));
		for (unsigned i = 0; i < l.n_fields; i++)
			sl_pkt_field_read(&q, &l.fields[i], ref + l.offsets[i]);
		checked++;
		if (memcmp(key, ref, l.key_size) != 0 && bad++ < 5)
			fprintf(stderr, "key mismatch: iteration %u, %u fields, frame %u B\n", it,
				l.n_fields, len);
		/* The parse state extraction leaves (IPv4 shortcut included) is the parser's. */
		sl_pkt_parse_l4(&p);
		sl_pkt_parse_l4(&q);
		if ((p.l2_end != q.l2_end || p.l3_ofs != q.l3_ofs || p.l4_ofs != q.l4_ofs ||
		     p.eth_type != q.eth_type || p.ip_proto != q.ip_proto ||
		     p.n_vlans != q.n_vlans) && bad_parse++ < 5)
			fprintf(stderr, "parse state differs: iteration %u, frame %u B\n", it, len);
	}
	CHECK(bad_parse == 0, "parse state after extraction = the parser's (%u differ)", bad_parse);
	CHECK(bad == 0 && checked > 50000, "precompiled extraction = field reads (%u of %u differ)",
	      bad, checked);
}

int
main(void)
{
	test_ipv4();
	test_malformed();
	test_sctp();
	test_ipv6();
	test_layout();
	test_key_extract_random();
	return sl_test_summary();
}
