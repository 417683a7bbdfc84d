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
	memcpy(udp,
	       "\x04\x00\x13\x89\x00\x0c\x00\x00"
	       "abcd",
	       12);
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
	fld = (struct sl_field){.id = SL_FIELD_RAW,
				.raw_base = SL_RAW_BASE_L4,
				.raw_bit_off = 16,
				.raw_n_bits = 16};
	sl_pkt_field_read(&p, &fld, out);
	CHECK(out[0] == 0x13 && out[1] == 0x89, "raw l4 port");
	fld = (struct sl_field){
		.id = SL_FIELD_RAW, .raw_base = SL_RAW_BASE_L3, .raw_bit_off = 4, .raw_n_bits = 12};
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

	/* Ethernet padding after the datagram is not SCTP: the CRC stops at the IP length. */
	uint8_t padded[74];
	memcpy(padded, frame, sizeof(frame));
	memset(padded + sizeof(frame), 0xee, sizeof(padded) - sizeof(frame));
	port[0] = 0x00;
	port[1] = 80;
	sl_pkt_init(&p, padded, sizeof(padded), 0, 1);
	CHECK(sl_pkt_field_write(&p, &fld, port) == 0, "write sctp_dst (padded frame)");
	CHECK(memcmp(padded + 42, "\x23\x93\x31\x8a", 4) == 0 && padded[66] == 0xee,
	      "sctp crc32c over the datagram only: %02x%02x%02x%02x", padded[42], padded[43],
	      padded[44], padded[45]);
}

/* Read @id of @f (a fresh context) into @out. */
static void
read_fresh(uint8_t *f, unsigned len, enum sl_field_id id, uint8_t *out)
{
	struct sl_pkt p;
	struct sl_field fld = {.id = (uint8_t)id};

	sl_pkt_init(&p, f, (uint16_t)len, 0, 1);
	memset(out, 0xa5, 16);
	sl_pkt_field_read(&p, &fld, out);
}

static bool
all_zero(const uint8_t *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (b[i] != 0)
			return false;
	return true;
}

/*
 * IP headers that lie about their length (pkt.h, "Packets that lie"): not
 * IP for matching, nothing written, and the layout path agrees.
 */
static void
test_ip_lies(void)
{
	static const struct {
		const char *what;
		unsigned ofs; /* byte of the IPv4 header to change */
		uint8_t value;
	} lies[] = {
		{"total length past the frame", 3, 33},
		{"total length below the header", 3, 19},
		{"header length below 20", 0, 0x44},
		{"header length past the total length", 0, 0x49},
	};
	static const enum sl_field_id l3l4[] = {
		SL_FIELD_IP_DSCP,  SL_FIELD_IP_ECN,   SL_FIELD_IP_PROTO, SL_FIELD_IP_TTL,
		SL_FIELD_IPV4_SRC, SL_FIELD_IPV4_DST, SL_FIELD_UDP_SRC,  SL_FIELD_UDP_DST,
	};
	struct sl_field layout_fields[] = {{.id = SL_FIELD_ETH_TYPE},
					   {.id = SL_FIELD_IP_DSCP},
					   {.id = SL_FIELD_IPV4_SRC},
					   {.id = SL_FIELD_UDP_DST}};
	struct sl_key_layout l;
	uint8_t f[160], copy[160], out[16], key[SL_KEY_MAX];
	struct sl_pkt p;

	CHECK(sl_key_layout_init(&l, layout_fields, 4) == 0, "layout");
	for (unsigned k = 0; k < SL_ARRAY_SIZE(lies); k++) {
		unsigned len = build_udp4(f, false);
		f[14 + lies[k].ofs] = lies[k].value;
		bool zero = true;
		for (unsigned i = 0; i < SL_ARRAY_SIZE(l3l4); i++) {
			struct sl_field fld = {.id = (uint8_t)l3l4[i]};
			read_fresh(f, len, l3l4[i], out);
			zero = zero && all_zero(out, sl_field_size(&fld));
		}
		read_fresh(f, len, SL_FIELD_ETH_TYPE, out);
		CHECK(zero && out[0] == 0x08 && out[1] == 0x00,
		      "%s: every L3/L4 field reads 0, eth_type stays 0x0800", lies[k].what);
		sl_pkt_init(&p, f, (uint16_t)len, 0, 1);
		sl_key_extract(&l, &p, key);
		CHECK(key[0] == 0x08 && all_zero(key + 2, l.key_size - 2),
		      "%s: the key holds eth_type only", lies[k].what);
		memcpy(copy, f, len);
		sl_pkt_init(&p, f, (uint16_t)len, 0, 1);
		struct sl_field src = {.id = SL_FIELD_IPV4_SRC}, dscp = {.id = SL_FIELD_IP_DSCP};
		CHECK(sl_pkt_field_write(&p, &src, (const uint8_t *)"\x01\x02\x03\x04") ==
				      -ENOENT &&
			      sl_pkt_field_write(&p, &dscp, (const uint8_t *)"\x2e") == -ENOENT &&
			      memcmp(f, copy, len) == 0,
		      "%s: set_field finds no header and writes nothing", lies[k].what);
	}

	/* The truth with Ethernet padding: fields read, and padding is not L4. */
	unsigned len = build_udp4(f, false);
	memset(f + len, 0xee, 60 - len);
	read_fresh(f, 60, SL_FIELD_UDP_DST, out);
	CHECK(out[0] == 0x13 && out[1] == 0x89, "padded frame: udp_dst 5001");
	sl_pkt_init(&p, f, 60, 0, 1);
	struct sl_field udst = {.id = SL_FIELD_UDP_DST};
	CHECK(sl_pkt_field_write(&p, &udst, (const uint8_t *)"\x00\x35") == 0 &&
		      udp4_csums_ok(f, 14) && f[46] == 0xee,
	      "padded frame: udp_dst written, checksum valid, padding untouched");

	/* A frame whose rest sits in other segments (tail): its lengths count it. */
	len = build_udp4(f, false);
	f[17] = (uint8_t)(len - 14 + 100);
	sl_pkt_init(&p, f, (uint16_t)len, 0, 1);
	p.tail = 100;
	struct sl_field usrc = {.id = SL_FIELD_UDP_SRC};
	sl_pkt_field_read(&p, &usrc, out);
	CHECK(out[0] == 0x04 && out[1] == 0x00, "a tail in other segments: still IP, udp_src read");
	sl_pkt_init(&p, f, (uint16_t)len, 0, 1);
	sl_pkt_field_read(&p, &usrc, out);
	CHECK(all_zero(out, 2), "the same lengths without the tail: not IP");

	/* A datagram too short for its L4 header: IP, but no ports. */
	len = build_udp4(f, false);
	f[17] = 20 + 4;
	read_fresh(f, len, SL_FIELD_IP_PROTO, out);
	CHECK(out[0] == 17, "truncated UDP: nw_proto still 17");
	read_fresh(f, len, SL_FIELD_UDP_SRC, out);
	CHECK(all_zero(out, 2), "truncated UDP: udp_src reads 0");

	/* IPv6 whose payload length runs past the frame. */
	uint8_t g[96] = {0};
	g[12] = 0x86;
	g[13] = 0xdd;
	g[14] = 0x60;
	g[18] = 0;
	g[19] = 60; /* 40 + 60 > 96 - 14 */
	g[20] = 17;
	g[21] = 64;
	g[22 + 15] = 1;
	g[54] = 0x04; /* udp_src 0x04xx */
	read_fresh(g, sizeof(g), SL_FIELD_IPV6_SRC, out);
	bool z = all_zero(out, 16);
	read_fresh(g, sizeof(g), SL_FIELD_IP_PROTO, out);
	CHECK(z && out[0] == 0, "IPv6 payload length past the frame: not IP");
	g[19] = 40; /* the truth, with padding */
	read_fresh(g, sizeof(g), SL_FIELD_IPV6_SRC, out);
	z = out[15] == 1;
	read_fresh(g, sizeof(g), SL_FIELD_UDP_SRC, out);
	CHECK(z && out[0] == 0x04, "IPv6 with a true payload length: fields read");
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
		struct sl_field raw = {.id = SL_FIELD_RAW,
				       .raw_base = SL_RAW_BASE_L4,
				       .raw_bit_off = 3,
				       .raw_n_bits = 128};
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

/*
 * Rewrite the Ethernet II frame @f of @len bytes (type at 12 + 4 * n_vlans)
 * into 802.3 with an LLC/SNAP header carrying the same type, as RFC 1042
 * encapsulates IP: 8 bytes longer.
 */
static unsigned
to_snap(uint8_t *f, unsigned len, unsigned n_vlans)
{
	unsigned t = 12 + 4 * n_vlans;

	memmove(f + t + 10, f + t + 2, len - t - 2);
	memcpy(f + t + 2, "\xaa\xaa\x03\x00\x00\x00", 6);
	f[t + 8] = f[t]; /* the Ethertype moves into the SNAP header */
	f[t + 9] = f[t + 1];
	len += 8;
	f[t] = (uint8_t)((len - t - 2) >> 8); /* 802.3 length: the bytes after the field */
	f[t + 1] = (uint8_t)(len - t - 2);
	return len;
}

static uint16_t
read16(struct sl_pkt *p, enum sl_field_id id)
{
	struct sl_field fld = {.id = (uint8_t)id};
	uint8_t out[16];

	sl_pkt_field_read(p, &fld, out);
	return (uint16_t)(out[0] << 8 | out[1]);
}

static uint32_t
read32(struct sl_pkt *p, enum sl_field_id id)
{
	struct sl_field fld = {.id = (uint8_t)id};
	uint8_t out[16];

	sl_pkt_field_read(p, &fld, out);
	return (uint32_t)out[0] << 24 | (uint32_t)out[1] << 16 | (uint32_t)out[2] << 8 | out[3];
}

/*
 * IEEE 802.3 frames (pkt.h): IPv4 behind LLC/SNAP reads as over Ethernet II,
 * other LLC frames read eth_type 0x05ff and nothing above; short ones never
 * read past the frame.
 */
static void
test_llc_snap(void)
{
	uint8_t f[160], g[160];
	struct sl_pkt p;
	unsigned len;

	/* IPv4/UDP over SNAP, untagged and behind a VLAN tag. */
	for (unsigned vlan = 0; vlan < 2; vlan++) {
		len = to_snap(f, build_udp4(f, vlan), vlan);
		unsigned l3 = 22 + 4 * vlan;
		CHECK(f[l3 - 2] == 0x08 && f[l3 - 1] == 0 && f[l3] == 0x45, "built snap frame");
		sl_pkt_init(&p, f, (uint16_t)len, 0, 1);
		CHECK(read16(&p, SL_FIELD_ETH_TYPE) == 0x0800, "snap ipv4: eth_type %04x",
		      read16(&p, SL_FIELD_ETH_TYPE));
		CHECK(p.l2_end == l3 && p.l3_ofs == l3, "snap ipv4: l3 at %u (%u)", p.l3_ofs, l3);
		CHECK(read32(&p, SL_FIELD_IPV4_SRC) == 0x0a000001, "snap ipv4: nw_src");
		CHECK(read32(&p, SL_FIELD_IPV4_DST) == 0x0a400007, "snap ipv4: nw_dst");
		CHECK(read16(&p, SL_FIELD_UDP_DST) == 5001, "snap ipv4: udp_dst");
		CHECK(read16(&p, SL_FIELD_VLAN_VID) == (vlan ? 0x100a : 0), "snap ipv4: vlan_vid");
		CHECK(sl_pkt_llc_len_ofs(&p) == (int)(12 + 4 * vlan), "snap: length field found");
		/* set_field on the IP header writes there and keeps the checksums right. */
		struct sl_field fld = {.id = SL_FIELD_IPV4_SRC};
		memcpy(g, f, len);
		CHECK(sl_pkt_field_write(&p, &fld, (const uint8_t *)"\xc0\xa8\x01\x02") == 0,
		      "snap ipv4: set nw_src");
		fld.id = SL_FIELD_UDP_SRC;
		CHECK(sl_pkt_field_write(&p, &fld, (const uint8_t *)"\x12\x34") == 0,
		      "snap ipv4: set udp_src");
		CHECK(udp4_csums_ok(f, l3), "snap ipv4: checksums after set_field");
		CHECK(memcmp(f, g, l3) == 0 && memcmp(f + l3 + 16, g + l3 + 16, 4) == 0,
		      "snap ipv4: L2, LLC/SNAP and nw_dst untouched");
		CHECK(read32(&p, SL_FIELD_IPV4_SRC) == 0xc0a80102, "snap ipv4: nw_src written");
		/* The key (any layout) is the field reads: the IPv4 shortcut must not take it. */
		struct sl_field lf[4] = {{.id = SL_FIELD_ETH_TYPE},
					 {.id = SL_FIELD_IPV4_DST},
					 {.id = SL_FIELD_UDP_DST},
					 {.id = SL_FIELD_IP_PROTO}};
		struct sl_key_layout l;
		uint8_t key[SL_KEY_MAX];
		CHECK(sl_key_layout_init(&l, lf, 4) == 0, "layout");
		sl_pkt_init(&p, f, (uint16_t)len, 0, 1);
		sl_key_extract(&l, &p, key);
		CHECK(memcmp(key, "\x08\x00\x0a\x40\x00\x07\x13\x89\x11", 9) == 0,
		      "snap ipv4: key %02x%02x %02x%02x%02x%02x %02x%02x %02x", key[0], key[1],
		      key[2], key[3], key[4], key[5], key[6], key[7], key[8]);
	}

	/* SNAP with another OUI (Cisco's 00:00:0c, CDP): not an Ethertype. */
	len = to_snap(f, build_udp4(f, false), 0);
	f[19] = 0x0c;
	sl_pkt_init(&p, f, (uint16_t)len, 0, 1);
	CHECK(read16(&p, SL_FIELD_ETH_TYPE) == SL_ETH_TYPE_NOT_ETH, "snap, other OUI: 0x05ff");
	CHECK(p.l2_end == 14 && read32(&p, SL_FIELD_IPV4_SRC) == 0 &&
		      read16(&p, SL_FIELD_UDP_DST) == 0,
	      "snap, other OUI: no L3");
	struct sl_field src = {.id = SL_FIELD_IPV4_SRC};
	CHECK(sl_pkt_field_write(&p, &src, (const uint8_t *)"\x01\x02\x03\x04") == -ENOENT,
	      "snap, other OUI: set nw_src finds no header");

	/* SNAP with a type below 0x600: 0x05ff, L2 after the SNAP header (OVS pulls it too). */
	len = to_snap(f, build_udp4(f, false), 0);
	f[20] = 0x05;
	f[21] = 0xdc;
	sl_pkt_init(&p, f, (uint16_t)len, 0, 1);
	CHECK(read16(&p, SL_FIELD_ETH_TYPE) == SL_ETH_TYPE_NOT_ETH && p.l2_end == 22,
	      "snap, length as type: 0x05ff, l2_end %u", p.l2_end);

	/* Plain 802.3 LLC (spanning tree: DSAP = SSAP = 0x42). */
	memset(f, 0, sizeof(f));
	memcpy(f, "\x01\x80\xc2\x00\x00\x00\x02\x00\x00\x00\x00\x01\x00\x26\x42\x42\x03", 17);
	sl_pkt_init(&p, f, 60, 0, 1);
	CHECK(read16(&p, SL_FIELD_ETH_TYPE) == SL_ETH_TYPE_NOT_ETH, "llc: 0x05ff");
	CHECK(p.l2_end == 14 && p.l3_ofs == 14 && p.ip_end == 0, "llc: L2 ends at the LLC header");
	CHECK(sl_pkt_llc_len_ofs(&p) == 12, "llc: length field at 12");
	/* 0x05ff itself is a length, 0x0600 the first Ethertype. */
	f[12] = 0x05;
	f[13] = 0xff;
	sl_pkt_init(&p, f, 60, 0, 1);
	CHECK(read16(&p, SL_FIELD_ETH_TYPE) == SL_ETH_TYPE_NOT_ETH, "length 0x05ff: 802.3");
	f[12] = 0x06;
	f[13] = 0x00;
	sl_pkt_init(&p, f, 60, 0, 1);
	CHECK(read16(&p, SL_FIELD_ETH_TYPE) == 0x0600 && sl_pkt_llc_len_ofs(&p) < 0,
	      "0x0600: an Ethertype");

	/* Truncations of SNAP IPv4: 0x05ff until the SNAP header is whole, then not IP. */
	len = to_snap(f, build_udp4(f, false), 0);
	bool ok = true;
	for (unsigned cut = 14; cut <= len; cut++) {
		memcpy(g, f, cut);
		sl_pkt_init(&p, g, (uint16_t)cut, 0, 1);
		uint16_t t = read16(&p, SL_FIELD_ETH_TYPE);
		uint32_t nw = read32(&p, SL_FIELD_IPV4_SRC);
		bool want_ip = cut >= 22 + 32; /* IP total length 32 */
		if (t != (cut < 22 ? SL_ETH_TYPE_NOT_ETH : 0x0800) || p.l2_end > cut ||
		    (nw == 0x0a000001) != want_ip) {
			fprintf(stderr, "cut %u: eth_type %04x l2_end %u nw_src %08x\n", cut, t,
				p.l2_end, nw);
			ok = false;
		}
	}
	CHECK(ok, "snap truncations: 0x05ff below 22 bytes, IP only when whole");
	/* An 802.3 frame of 15 bytes: one LLC byte, nothing read past it. */
	sl_pkt_init(&p, f, 15, 0, 1);
	CHECK(read16(&p, SL_FIELD_ETH_TYPE) == SL_ETH_TYPE_NOT_ETH && p.l2_end == 14,
	      "15-byte 802.3 frame");
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
	f[19] = 8 + 24; /* payload length: hop-by-hop + neighbour solicitation */
	f[20] = 0;      /* hop-by-hop */
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
	struct sl_field fs[] = {{.id = SL_FIELD_ETH_DST},
				{.id = SL_FIELD_IPV6_SRC},
				{.id = SL_FIELD_ETH_DST},
				{.id = SL_FIELD_TCP_DST}};
	struct sl_key_layout l;

	CHECK(sl_key_layout_init(&l, fs, 4) == 0, "layout");
	CHECK(l.n_fields == 3 && l.key_size == 24 && l.need_l4, "layout dedupe/size %u %u",
	      l.n_fields, l.key_size);
	struct sl_field many[13];
	for (int i = 0; i < 13; i++)
		many[i] = (struct sl_field){.id = SL_FIELD_RAW,
					    .raw_base = 0,
					    .raw_bit_off = (uint16_t)(128 * i),
					    .raw_n_bits = 128};
	CHECK(sl_key_layout_init(&l, many, 12) == 0 && l.key_size == SL_KEY_MAX, "192-byte key");
	CHECK(sl_key_layout_init(&l, many, 13) == -E2BIG, "key too large");
	/* Every named field at once fits one key: any OpenFlow match, any union of them. */
	struct sl_field all[SL_FIELD__MAX];
	unsigned n_all = 0;
	for (unsigned id = 0; id < SL_FIELD__MAX; id++)
		if (id != SL_FIELD_RAW)
			all[n_all++] = (struct sl_field){.id = (uint8_t)id};
	CHECK(sl_key_layout_init(&l, all, n_all) == 0 && l.n_fields == n_all,
	      "all %u fields in one key (%u bytes)", n_all, l.key_size);
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

/*
 * A random frame: VLAN and MPLS stacks, 802.3 LLC and LLC/SNAP, IPv4/IPv6/ARP/other,
 * extension headers, any length.
 */
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
	if (rnd(6) == 0) { /* 802.3: a length, then LLC/SNAP (now and then another OUI) or LLC */
		f[o] = (uint8_t)rnd(6);
		o += 2;
		if (rnd(4) != 0) {
			memcpy(f + o, "\xaa\xaa\x03\x00\x00\x00", 6);
			if (rnd(8) == 0)
				f[o + 3 + rnd(3)] = 1;
			o += 6;
		}
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
	unsigned len;
	switch (rnd(4)) {
	case 0:
		len = rnd(cap + 1);
		break;
	case 1:
		len = SL_MIN(cap, l3 + 40 + 8 + rnd(40));
		break;
	default:
		len = SL_MIN(cap, l3 + rnd(72));
		break;
	}
	/* IP lengths mostly tell the truth (some padding), else they stay random. */
	if (rnd(4) != 0 && len >= l3 + 8) {
		unsigned dgram = len - l3 - (rnd(4) == 0 ? rnd(8) : 0);
		if (type == 0x0800) {
			f[l3 + 2] = (uint8_t)(dgram >> 8);
			f[l3 + 3] = (uint8_t)dgram;
		} else if (type == 0x86dd && dgram >= 40) {
			f[l3 + 4] = (uint8_t)((dgram - 40) >> 8);
			f[l3 + 5] = (uint8_t)(dgram - 40);
		}
	}
	return len;
}

/*
 * sl_key_extract (precompiled ops) must write exactly the bytes the generic
 * field reads give, on any frame: random layouts, random frames.
 */
static void
test_key_extract_random(void)
{
	unsigned checked = 0, bad = 0, bad_parse = 0, frame_layouts = 0;

	for (unsigned it = 0; it < 100000; it++) {
		struct sl_field fs[8];
		struct sl_key_layout l;
		unsigned n = 1 + rnd(8);

		/*
		 * One layout in four of fields at fixed frame offsets and in_port
		 * (sl_key_layout.frame_only: extraction without a parse).
		 */
		static const uint16_t fixed[] = {SL_FIELD_ETH_DST, SL_FIELD_ETH_SRC,
						 SL_FIELD_IN_PORT, SL_FIELD_RAW};
		bool frame_only = it % 4 == 0;
		for (unsigned i = 0; i < n; i++) {
			memset(&fs[i], 0, sizeof(fs[i]));
			fs[i].id = (uint16_t)(rnd(3) == 0 ? SL_FIELD_RAW : rnd(SL_FIELD__MAX));
			if (frame_only)
				fs[i].id = fixed[rnd(SL_ARRAY_SIZE(fixed))];
			if (frame_only && fs[i].id == SL_FIELD_RAW) {
				fs[i].raw_base = SL_RAW_BASE_PKT;
				fs[i].raw_bit_off = (uint16_t)(8 * rnd(64));
				fs[i].raw_n_bits = (uint16_t)(8 * (1 + rnd(16)));
			} else if (fs[i].id == SL_FIELD_RAW) {
				bool aligned = rnd(4) != 0;
				fs[i].raw_base = (uint8_t)rnd(3);
				fs[i].raw_bit_off = (uint16_t)(aligned ? 8 * rnd(64) : rnd(512));
				fs[i].raw_n_bits = (uint16_t)(aligned ? 8 * (1 + rnd(16))
								      : 1 + rnd(SL_RAW_BITS_MAX));
			}
		}
		if (sl_key_layout_init(&l, fs, n) != 0)
			continue;
		frame_layouts += l.frame_only;
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
		     p.n_vlans != q.n_vlans || p.ip_end != q.ip_end || p.l4_ok != q.l4_ok) &&
		    bad_parse++ < 5)
			fprintf(stderr, "parse state differs: iteration %u, frame %u B\n", it, len);
	}
	CHECK(bad_parse == 0, "parse state after extraction = the parser's (%u differ)", bad_parse);
	CHECK(bad == 0 && checked > 50000, "precompiled extraction = field reads (%u of %u differ)",
	      bad, checked);
	CHECK(frame_layouts > 10000, "%u layouts of fixed frame offsets only", frame_layouts);
}

/*
 * A frame of the shapes sl_key_extract's word moves see (struct
 * sl_key_word): mostly plain IPv4 TCP/UDP/SCTP/ICMP with a true total
 * length, now and then with options, a fragment, a VLAN tag, cut short,
 * Ethernet padding, or not IP at all.
 */
static unsigned
build_plain(uint8_t *f, unsigned cap)
{
	static const uint8_t protos[] = {6, 17, 132, 1, 6, 17, 47};
	unsigned o = 12, ihl = rnd(8) == 0 ? 5 + rnd(4) : 5, l4_len, len;
	uint8_t proto = protos[rnd(SL_ARRAY_SIZE(protos))];

	for (unsigned i = 0; i < cap; i++)
		f[i] = (uint8_t)rnd(256);
	if (rnd(10) == 0) { /* a VLAN tag */
		f[o] = 0x81;
		f[o + 1] = 0x00;
		o += 4;
	}
	switch (rnd(12)) {
	case 0:
		f[o] = 0x86, f[o + 1] = 0xdd;
		break;
	case 1:
		f[o] = 0x08, f[o + 1] = 0x06;
		break;
	default:
		f[o] = 0x08, f[o + 1] = 0x00;
		break;
	}
	o += 2;
	f[o] = (uint8_t)(0x40 | ihl);
	f[o + 6] = rnd(10) == 0 ? (uint8_t)rnd(256) : (uint8_t)(rnd(2) << 6); /* DF now and then */
	f[o + 7] = rnd(10) == 0 ? (uint8_t)rnd(256) : 0;
	f[o + 9] = proto;
	l4_len = proto == 6 ? 20 + 4 * rnd(3) : proto == 132 ? 12 : 8 + rnd(8);
	if (proto == 6)
		f[o + 4 * ihl + 12] = (uint8_t)((l4_len / 4) << 4);
	len = SL_MIN(cap, o + 4 * ihl + l4_len + rnd(24));
	unsigned dgram = len - o - (rnd(4) == 0 ? rnd(6) : 0); /* some Ethernet padding */
	f[o + 2] = (uint8_t)(dgram >> 8);
	f[o + 3] = (uint8_t)dgram;
	if (rnd(10) == 0) /* cut short, or lying about its length */
		len = rnd(2) ? rnd(len + 1) : len;
	return len;
}

/*
 * sl_key_extract (word moves on plain frames) against sl_key_extract_ops
 * (the layout's ops, no shortcut): the same key_size bytes, nothing written
 * after them, on random layouts of the fields the moves take (and some they
 * do not) and frames of build_plain's shapes.
 */
static void
test_key_extract_words(void)
{
	static const uint16_t ids[] = {
		SL_FIELD_ETH_DST,  SL_FIELD_ETH_SRC,     SL_FIELD_ETH_TYPE, SL_FIELD_VLAN_VID,
		SL_FIELD_IP_PROTO, SL_FIELD_IPV4_SRC,    SL_FIELD_IPV4_DST, SL_FIELD_TCP_SRC,
		SL_FIELD_TCP_DST,  SL_FIELD_UDP_SRC,     SL_FIELD_UDP_DST,  SL_FIELD_SCTP_SRC,
		SL_FIELD_SCTP_DST, SL_FIELD_IN_PORT,     SL_FIELD_METADATA, SL_FIELD_IPV6_SRC,
		SL_FIELD_IP_DSCP,  SL_FIELD_ICMPV4_TYPE, SL_FIELD_RAW,      SL_FIELD_RAW,
		SL_FIELD_ETH_DST,  SL_FIELD_IN_PORT,     SL_FIELD_IPV4_DST, SL_FIELD_TCP_DST,
	};
	unsigned checked = 0, bad = 0, spill = 0, outside = 0, worded = 0, frame_fast = 0;
	unsigned extras = 0, conds = 0, mds = 0, ports = 0;

	for (unsigned it = 0; it < 200000; it++) {
		struct sl_field fs[12];
		struct sl_key_layout l;
		unsigned n = 1 + rnd(rnd(4) == 0 ? 12 : 5);
		/* One layout in four of MACs, raw frame bytes and in_port (frame_only). */
		bool frame_only = it % 4 == 0;

		for (unsigned i = 0; i < n; i++) {
			memset(&fs[i], 0, sizeof(fs[i]));
			fs[i].id = frame_only ? (uint16_t[]){SL_FIELD_ETH_DST, SL_FIELD_ETH_SRC,
							     SL_FIELD_IN_PORT, SL_FIELD_RAW}[rnd(4)]
					      : ids[rnd(SL_ARRAY_SIZE(ids))];
			if (fs[i].id == SL_FIELD_RAW) { /* on byte boundaries: a move */
				fs[i].raw_base = frame_only ? SL_RAW_BASE_PKT : (uint8_t)rnd(3);
				fs[i].raw_bit_off = (uint16_t)(8 * rnd(frame_only ? 60 : 24));
				fs[i].raw_n_bits = (uint16_t)(8 * (1 + rnd(16)));
			}
		}
		if (sl_key_layout_init(&l, fs, n) != 0)
			continue;
		/* Every word's load stays inside the bytes the frame tests guarantee. */
		for (unsigned w = 0; w < l.n_words + l.n_xwords; w++)
			outside += l.words[w].ld + 8u > l.moves_need;
		worded += l.n_words != 0;
		frame_fast += l.frame_need <= 0xffff;
		extras += l.n_xwords != 0;
		conds += l.cond;
		mds += l.md.on;
		ports += l.port.on;

		uint8_t frame[160], key[SL_KEY_MAX + 8], ref[SL_KEY_MAX + 8];
		unsigned len = build_plain(frame, sizeof(frame));
		struct sl_pkt p, q;

		sl_pkt_init(&p, frame, (uint16_t)len, 0, rnd(2) ? 1 + rnd(8) : rnd(UINT32_MAX));
		p.metadata = (uint64_t)rnd(UINT32_MAX) << 32 | rnd(UINT32_MAX);
		q = p;
		memset(key, 0xa5, sizeof(key));
		memset(ref, 0x5a, sizeof(ref));
		sl_key_extract(&l, &p, key);
		sl_key_extract_ops(&l, &q, ref);
		checked++;
		if (memcmp(key, ref, l.key_size) != 0 && bad++ < 5) {
			fprintf(stderr,
				"word key mismatch: iteration %u, %u fields, frame %u B:", it,
				l.n_fields, len);
			for (unsigned i = 0; i < l.key_size; i++)
				fprintf(stderr, " %02x/%02x", key[i], ref[i]);
			fputc('\n', stderr);
		}
		for (unsigned i = l.key_size; i < sizeof(key); i++)
			spill += key[i] != 0xa5;
	}
	CHECK(bad == 0 && checked > 150000, "word moves = the ops (%u of %u differ)", bad, checked);
	CHECK(spill == 0, "nothing written past key_size (%u bytes)", spill);
	CHECK(outside == 0, "word loads inside moves_need (%u outside)", outside);
	CHECK(worded > 100000 && frame_fast > 20000 && extras > 10000 && conds > 10000 &&
		      mds > 10000 && ports > 10000,
	      "the word paths ran: %u with words, %u frame-only, %u extras, %u conditions, %u "
	      "metadata, %u in_port",
	      worded, frame_fast, extras, conds, mds, ports);
}

/*
 * Raw keys (sl_key_raw_get, pkt.h) are equal only where the extracted keys
 * are: random layouts (MACs, Ethertype, raw bytes, in_port, an IPv4
 * address), frame pairs equal but for a few random bytes or the in_port.
 * They must also be equal where the bytes that differ are ones the layout
 * never reads.
 */
static void
test_key_raw(void)
{
	static const uint16_t ids[] = {SL_FIELD_ETH_DST, SL_FIELD_ETH_SRC, SL_FIELD_ETH_TYPE,
				       SL_FIELD_IN_PORT, SL_FIELD_RAW,     SL_FIELD_IPV4_DST};
	unsigned wrong = 0, same = 0, differ = 0, unread_same = 0, raw = 0;

	for (unsigned it = 0; it < 200000; it++) {
		struct sl_field fs[4];
		struct sl_key_layout l;
		unsigned n = 1 + rnd(3);

		for (unsigned i = 0; i < n; i++) {
			memset(&fs[i], 0, sizeof(fs[i]));
			fs[i].id = ids[rnd(SL_ARRAY_SIZE(ids))];
			if (fs[i].id == SL_FIELD_RAW) {
				fs[i].raw_base = SL_RAW_BASE_PKT;
				fs[i].raw_bit_off = (uint16_t)(8 * rnd(20));
				fs[i].raw_n_bits = (uint16_t)(8 * (1 + rnd(4)));
			}
		}
		if (sl_key_layout_init(&l, fs, n) != 0)
			continue;
		raw += l.raw16;

		uint8_t fa[160], fb[160], ka[SL_KEY_MAX + 8], kb[SL_KEY_MAX + 8];
		unsigned len = build_plain(fa, sizeof(fa)), flips = rnd(3);
		bool unread = true;
		struct sl_pkt a, b;

		memcpy(fb, fa, sizeof(fb));
		for (unsigned k = 0; k < flips; k++) {
			unsigned at = rnd(24);
			fb[at] ^= (uint8_t)(1 + rnd(255));
			unread &= at < 16 && (((const uint8_t *)l.raw_mask)[at] == 0);
		}
		sl_pkt_init(&a, fa, (uint16_t)(rnd(8) == 0 ? rnd(20) : len), 0, 1 + rnd(2));
		sl_pkt_init(&b, fb, a.len, 0, rnd(4) == 0 ? 1 + rnd(2) : a.in_port);
		memset(ka, 0, sizeof(ka));
		memset(kb, 0, sizeof(kb));
		sl_key_extract(&l, &a, ka);
		sl_key_extract(&l, &b, kb);
		bool keys_equal = memcmp(ka, kb, l.key_size) == 0;
		const struct sl_key_raw_mask rm = sl_key_raw_mask_of(&l);
		struct sl_key_raw ra, rb;
		bool raw_same = sl_key_raw_get(&rm, &a, &ra) && sl_key_raw_get(&rm, &b, &rb) &&
				sl_key_raw_equal(&ra, &rb);
		if (raw_same) {
			same++;
			if (!keys_equal && wrong++ < 5)
				fprintf(stderr, "equal raw keys, different keys: iteration %u\n",
					it);
		} else {
			differ++;
		}
		unread_same += l.raw16 && flips > 0 && unread && a.len >= 16 &&
			       a.in_port == b.in_port && raw_same;
	}
	CHECK(wrong == 0, "equal raw keys only on equal keys (%u wrong)", wrong);
	CHECK(raw > 50000 && same > 20000 && differ > 20000 && unread_same > 1000,
	      "both answers seen: %u raw16 layouts, %u same, %u not, %u same despite unread bytes "
	      "differing",
	      raw, same, differ, unread_same);
}

/*
 * sl_pkt_ipv4_plain_like says "like" only when the second frame passes the
 * plain-IPv4 test with the first's total length: frame pairs equal but for
 * a few random bytes (often the TOS, IP ID and TTL it ignores) or the length.
 */
static void
test_ipv4_plain_like(void)
{
	static const unsigned ignored[] = {15, 18, 19, 22};
	unsigned wrong = 0, like = 0, unlike = 0, like_varied = 0;

	for (unsigned it = 0; it < 200000; it++) {
		uint8_t fa[160], fb[160];
		unsigned len = build_plain(fa, sizeof(fa)), flips = rnd(3);
		struct sl_pkt a, b;
		bool varied = false;

		sl_pkt_init(&a, fa, (uint16_t)len, 0, 1);
		if (sl_pkt_ipv4_plain_len(&a, 34) == 0)
			continue;
		memcpy(fb, fa, sizeof(fb));
		for (unsigned k = 0; k < flips; k++) {
			bool ign = rnd(2) == 0;
			unsigned at = ign ? ignored[rnd(4)] : rnd(64);
			fb[at] ^= (uint8_t)(1 + rnd(255));
			varied |= ign;
		}
		sl_pkt_init(&b, fb, (uint16_t)(rnd(8) == 0 ? len - rnd(8) : len), 0, 1);
		unsigned need = 34 + rnd(len - 33);
		if (sl_pkt_ipv4_plain_like(&a, &b)) {
			like++;
			like_varied += varied;
			if (sl_pkt_ipv4_plain_len(&b, need) != sl_pkt_ipv4_plain_len(&a, need) &&
			    wrong++ < 5)
				fprintf(stderr, "plain_like but not alike: iteration %u\n", it);
		} else {
			unlike++;
		}
	}
	CHECK(wrong == 0, "plain_like only for frames the test treats alike (%u wrong)", wrong);
	CHECK(like > 50000 && unlike > 10000 && like_varied > 20000,
	      "both answers seen: %u like (%u with TOS, ID or TTL varied), %u not", like,
	      like_varied, unlike);
}

/* The word moves of the commonest layout, dl_dst + in_port, byte by byte. */
static void
test_key_words_mac_port(void)
{
	struct sl_field fs[2] = {{.id = SL_FIELD_ETH_DST}, {.id = SL_FIELD_IN_PORT}};
	struct sl_key_layout l;
	uint8_t f[60] = {0x02, 0x10, 0, 0, 0, 7, 0x02, 0, 0, 0, 0, 1, 0x88, 0xb5}, key[16];
	static const uint8_t want[16] = {0x02, 0x10, 0, 0, 0, 7, 0x01, 0x02, 0x03, 0x04};
	struct sl_pkt p;

	CHECK(sl_key_layout_init(&l, fs, 2) == 0 && l.frame_need == 34 && l.n_words == 2 &&
		      l.n_xwords == 0 && l.port.on && !l.md.on && !l.cond,
	      "dl_dst + in_port: two words from the frame, in_port ORed in");
	sl_pkt_init(&p, f, sizeof(f), 0, 0x01020304);
	memset(key, 0xee, sizeof(key));
	sl_key_extract(&l, &p, key);
	CHECK(memcmp(key, want, 16) == 0 && p.l2_end == SL_OFS_UNSET,
	      "dl_dst + in_port key, no parse");
}

int
main(void)
{
	test_ipv4();
	test_malformed();
	test_sctp();
	test_ip_lies();
	test_ipv6();
	test_llc_snap();
	test_layout();
	test_key_extract_random();
	test_key_extract_words();
	test_key_words_mac_port();
	test_key_raw();
	test_ipv4_plain_like();
	return sl_test_summary();
}
