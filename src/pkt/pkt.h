/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pkt: packet context, match fields and flow keys.
 *
 * There is no eager front parser (the composite-pipeline design, section 2.1).  A packet carries a
 * small context (struct sl_pkt) whose layer offsets are computed once, on the
 * first request for a field that needs them.  A table declares the fields it
 * matches in a key layout (struct sl_key_layout); sl_key_extract() writes only
 * those fields, in layout order, into a flat byte key.  Tables compare keys as
 * bytes and never see packets.
 *
 * Fields are the OpenFlow 1.3 OXM basic fields a software switch matches and
 * sets, plus protocol-oblivious raw fields {base, bit offset, bit length}
 * (POF), so a table can match a protocol Sluice has never heard of.
 *
 * Key encoding of a field: network byte order, right-aligned in
 * sl_field_size() bytes (a 20-bit IPv6 flow label takes 3 bytes, its top 4
 * bits zero).  A field whose layer is absent from the packet (tcp_dst of a
 * UDP packet, a raw L4 field past the end of the frame) reads as zeros; flows
 * carry OpenFlow prerequisites (sl_field_prereq) so such a packet still
 * cannot match a rule on that field.  vlan_vid follows OpenFlow: 0x1000 | vid
 * when a tag is present, 0 (OFPVID_NONE) when not.
 *
 * Concurrency: everything here works on one packet or one layout and keeps no
 * shared state; any worker may call any function on its own packets.
 */
#ifndef SL_PKT_H
#define SL_PKT_H

#include "../core/core.h"

#include <errno.h>

/*
 * The field registry: _(ENUM, flow-syntax name, bits, OXM field number or -1,
 * layer).  Names follow ovs-ofctl where it has one.  Append only.
 */
#define SL_FOREACH_FIELD(_)                                                                        \
	_(IN_PORT, "in_port", 32, 0, SL_LAYER_META)                                                \
	_(METADATA, "metadata", 64, 2, SL_LAYER_META)                                              \
	_(ETH_DST, "dl_dst", 48, 3, SL_LAYER_L2)                                                   \
	_(ETH_SRC, "dl_src", 48, 4, SL_LAYER_L2)                                                   \
	_(ETH_TYPE, "dl_type", 16, 5, SL_LAYER_L2)                                                 \
	_(VLAN_VID, "dl_vlan", 13, 6, SL_LAYER_L2)                                                 \
	_(VLAN_PCP, "dl_vlan_pcp", 3, 7, SL_LAYER_L2)                                              \
	_(IP_DSCP, "ip_dscp", 6, 8, SL_LAYER_L3)                                                   \
	_(IP_ECN, "nw_ecn", 2, 9, SL_LAYER_L3)                                                     \
	_(IP_PROTO, "nw_proto", 8, 10, SL_LAYER_L3)                                                \
	_(IPV4_SRC, "nw_src", 32, 11, SL_LAYER_L3)                                                 \
	_(IPV4_DST, "nw_dst", 32, 12, SL_LAYER_L3)                                                 \
	_(TCP_SRC, "tcp_src", 16, 13, SL_LAYER_L4)                                                 \
	_(TCP_DST, "tcp_dst", 16, 14, SL_LAYER_L4)                                                 \
	_(UDP_SRC, "udp_src", 16, 15, SL_LAYER_L4)                                                 \
	_(UDP_DST, "udp_dst", 16, 16, SL_LAYER_L4)                                                 \
	_(SCTP_SRC, "sctp_src", 16, 17, SL_LAYER_L4)                                               \
	_(SCTP_DST, "sctp_dst", 16, 18, SL_LAYER_L4)                                               \
	_(ICMPV4_TYPE, "icmp_type", 8, 19, SL_LAYER_L4)                                            \
	_(ICMPV4_CODE, "icmp_code", 8, 20, SL_LAYER_L4)                                            \
	_(ARP_OP, "arp_op", 16, 21, SL_LAYER_L3)                                                   \
	_(ARP_SPA, "arp_spa", 32, 22, SL_LAYER_L3)                                                 \
	_(ARP_TPA, "arp_tpa", 32, 23, SL_LAYER_L3)                                                 \
	_(ARP_SHA, "arp_sha", 48, 24, SL_LAYER_L3)                                                 \
	_(ARP_THA, "arp_tha", 48, 25, SL_LAYER_L3)                                                 \
	_(IPV6_SRC, "ipv6_src", 128, 26, SL_LAYER_L3)                                              \
	_(IPV6_DST, "ipv6_dst", 128, 27, SL_LAYER_L3)                                              \
	_(IPV6_FLABEL, "ipv6_label", 20, 28, SL_LAYER_L3)                                          \
	_(ICMPV6_TYPE, "icmpv6_type", 8, 29, SL_LAYER_L4)                                          \
	_(ICMPV6_CODE, "icmpv6_code", 8, 30, SL_LAYER_L4)                                          \
	_(IPV6_ND_TARGET, "nd_target", 128, 31, SL_LAYER_L4)                                       \
	_(MPLS_LABEL, "mpls_label", 20, 34, SL_LAYER_L2)                                           \
	_(MPLS_TC, "mpls_tc", 3, 35, SL_LAYER_L2)                                                  \
	_(MPLS_BOS, "mpls_bos", 1, 36, SL_LAYER_L2)                                                \
	_(IP_TTL, "nw_ttl", 8, -1, SL_LAYER_L3)                                                    \
	_(RAW, "raw", 0, -1, SL_LAYER_META)                                                        \
	_(STATE, "state", 32, -1, SL_LAYER_META)                                                   \
	_(TUNNEL_ID, "tun_id", 64, 38, SL_LAYER_META)                                              \
	_(IPV6_ND_SLL, "nd_sll", 48, 32, SL_LAYER_L4)                                              \
	_(IPV6_ND_TLL, "nd_tll", 48, 33, SL_LAYER_L4)                                              \
	_(IPV6_EXTHDR, "ipv6_exthdr", 9, 39, SL_LAYER_L3)                                          \
	_(PBB_ISID, "pbb_isid", 24, 37, SL_LAYER_L2)

enum sl_layer {
	SL_LAYER_META, /* not in the frame: port, metadata */
	SL_LAYER_L2,   /* Ethernet, VLAN, MPLS */
	SL_LAYER_L3,   /* IPv4, IPv6, ARP */
	SL_LAYER_L4,   /* TCP, UDP, SCTP, ICMP, ND */
};

enum sl_field_id {
#define SL_FIELD_ENUM_(e, name, bits, oxm, layer) SL_FIELD_##e,
	SL_FOREACH_FIELD(SL_FIELD_ENUM_)
#undef SL_FIELD_ENUM_
		SL_FIELD__MAX
};

/** Where a raw (protocol-oblivious) field's bit offset counts from. */
enum sl_raw_base {
	SL_RAW_BASE_PKT = 0, /* first byte of the frame */
	SL_RAW_BASE_L3 = 1,  /* first byte after Ethernet, VLAN tags and MPLS labels */
	SL_RAW_BASE_L4 = 2,  /* first byte after the IPv4/IPv6 header (and v6 extension headers) */
};

/** Widest raw field, in bits. */
#define SL_RAW_BITS_MAX 128
/** Widest field of any kind, in bytes (IPv6 addresses, raw fields). */
#define SL_FIELD_SIZE_MAX 16

/**
 * A field reference: an OXM field, or a raw field when id == SL_FIELD_RAW.
 * Two references name the same field when sl_field_equal() says so.
 */
struct sl_field {
	uint8_t id;           /* enum sl_field_id */
	uint8_t raw_base;     /* enum sl_raw_base, raw fields only */
	uint16_t raw_bit_off; /* bit offset from the base, raw fields only */
	uint16_t raw_n_bits;  /* 1..SL_RAW_BITS_MAX, raw fields only */
};

/** Width of a field in bits. */
unsigned sl_field_bits(const struct sl_field *f);
/** Bytes the field takes in a key: ceil(bits / 8). */
unsigned sl_field_size(const struct sl_field *f);
/** True when both references name the same field. */
bool sl_field_equal(const struct sl_field *a, const struct sl_field *b);
/** The ovs-ofctl style name of an OXM field id ("nw_dst"), or "raw". */
const char *sl_field_name(enum sl_field_id id);
/**
 * Look up a field id by name.  Accepts the ovs-ofctl names above and the
 * OpenFlow aliases (eth_dst, eth_src, eth_type, vlan_vid, vlan_pcp, ip_proto,
 * ipv4_src, ipv4_dst, tp_src/tp_dst are NOT accepted: they are ambiguous).
 *
 * @return the id, or -1 when the name is unknown.
 */
int sl_field_by_name(const char *name);
/** The OXM field number (OFPXMC_OPENFLOW_BASIC) or -1 when it has none. */
int sl_field_oxm(enum sl_field_id id);
/**
 * True when a match may mask this field (the set ovs-ofctl masks: addresses,
 * ports, metadata, vlan_vid, flow label, nd_target, raw fields); others are
 * exact or absent.
 */
bool sl_field_maskable(const struct sl_field *f);
/** True when set_field may write this field. */
bool sl_field_writable(enum sl_field_id id);
/**
 * Format a field reference: "nw_dst" or "raw(l4,16,32)" (base, bit offset, bits).
 *
 * @return snprintf-style length.
 */
int sl_field_format(const struct sl_field *f, char *buf, size_t size);

/**
 * OpenFlow prerequisites of a field: the (field, value) pairs that a match on
 * @id implies.  tcp_dst implies eth_type 0x0800 or 0x86dd and ip_proto 6;
 * since an ip_proto prerequisite is valid for both IP versions, the eth_type
 * prerequisite of L4 fields is reported as a set ({0x0800, 0x86dd}).
 *
 * @param id         Field id.
 * @param eth_types  Out: up to 2 acceptable eth_type values; *n_eth_types = 0
 *                   when the field implies no eth_type.
 * @param ip_proto   Out: the implied ip_proto, or -1.
 */
void sl_field_prereq(enum sl_field_id id, uint16_t eth_types[2], unsigned *n_eth_types,
		     int *ip_proto);

/*
 * Packet context.
 */

#define SL_OFS_UNSET 0xffff /* offset not computed yet */

/*
 * IEEE 802.3 frames.  A value below SL_ETH_TYPE_MIN after the MACs (and VLAN
 * tags) is a length, not an Ethertype.  Sluice reads such frames as Open
 * vSwitch does (lib/flow.c parse_ethertype): behind an LLC/SNAP header
 * (AA AA 03, OUI 00:00:00: RFC 1042) the SNAP type is the eth_type, L2 ends
 * after the 8-byte header and everything above parses as over Ethernet II
 * (IPv4 over SNAP matches dl_type=0x0800 and nw_src); any other 802.3 frame
 * has eth_type SL_ETH_TYPE_NOT_ETH (0x05ff, OpenFlow 1.0's
 * OFP_DL_TYPE_NOT_ETH_TYPE) and L2 ends at its LLC header.  Ethernet II
 * frames pay nothing for this: only the parser's slow path looks.
 */
#define SL_ETH_TYPE_MIN 0x0600     /* smallest Ethertype; below it the field is an 802.3 length */
#define SL_ETH_TYPE_NOT_ETH 0x05ff /* eth_type of an 802.3 frame without a SNAP Ethertype */

/** Per-packet context; lives in worker scratch, never allocated per packet. */
struct sl_pkt {
	uint8_t *data;     /* first byte of the frame */
	uint16_t len;      /* frame length in bytes (contiguous at data: all a read may see) */
	uint16_t tail;     /* bytes of the frame after len, out of reach (other mbuf segments) */
	uint16_t headroom; /* bytes before data that a push may use */
	uint16_t l2_end;   /* offset after the field holding eth_type (Ethernet, VLAN tags, an
			      LLC/SNAP header), or SL_OFS_UNSET */
	uint16_t l3_ofs;   /* offset after MPLS labels (the L3 header) */
	uint16_t l4_ofs;   /* offset after the L3 header (len when none), or SL_OFS_UNSET */
	uint16_t eth_type; /* host order: type after VLAN tags (OpenFlow's eth_type) */
	uint16_t vlan_ofs; /* offset of the outermost VLAN tag's TCI, valid when n_vlans > 0 */
	uint8_t ip_proto;  /* valid once l4_ofs is set and the packet is IP */
	uint8_t n_vlans;   /* VLAN tags parsed */
	uint16_t ip_end;   /* with l2_end: offset after the IP datagram (at most len); 0 = not IP */
	uint8_t l4_ok;     /* with l4_ofs: the L4 header of ip_proto is whole (sl_pkt_l4_whole) */
	uint32_t in_port;  /* OpenFlow ingress port */
	uint64_t metadata; /* OpenFlow metadata register */
	uint64_t
		tunnel_id; /* OpenFlow tunnel_id: 0 on ingress (no tunnel ports yet), set_field sets it */
	uint32_t state; /* flow state loaded by the last state table (src/state), 0 = default */
	uint8_t state_table; /* the table that loaded it, 0xff = none */
	uint32_t state_slot; /* state table's hint for set_state (src/state), UINT32_MAX = none */
	uint32_t state_gen;  /* ... valid while the table's generation is this */
	const void *state_owner; /* ... and only for this table */
	void *opaque;            /* the owner's buffer (an rte_mbuf in the datapath) */
};

/**
 * Initialise a packet context (cheap: no parsing happens here).
 *
 * @param p         Context to fill.
 * @param data      Frame start.
 * @param len       Frame length.
 * @param headroom  Writable bytes before @data.
 * @param in_port   OpenFlow ingress port.
 */
static inline void
sl_pkt_init(struct sl_pkt *p, uint8_t *data, uint16_t len, uint16_t headroom, uint32_t in_port)
{
	p->data = data;
	p->len = len;
	p->tail = 0;
	p->headroom = headroom;
	p->l2_end = SL_OFS_UNSET;
	p->l4_ofs = SL_OFS_UNSET;
	p->in_port = in_port;
	p->metadata = 0;
	p->tunnel_id = 0;
	p->state = 0;
	p->state_table = 0xff;
	p->state_slot = UINT32_MAX;
	p->n_vlans = 0;
}

/**
 * sl_pkt_init for the packets of a burst: @t, set up once by sl_pkt_init
 * (on zeroed memory, with the burst's in_port), is copied whole and the
 * packet's own fields set.  A few wide stores instead of a store a field.
 */
static inline void
sl_pkt_init_like(struct sl_pkt *p, const struct sl_pkt *t, uint8_t *data, uint16_t len,
		 uint16_t headroom)
{
	*p = *t;
	p->data = data;
	p->len = len;
	p->headroom = headroom;
}

/*
 * Packets that lie.  An IP header is believed only when its lengths fit the
 * frame (the rules of Open vSwitch's ipv4/ipv6_sanity_check): IPv4 needs
 * 20 <= IHL * 4 <= total length <= the bytes after L2; IPv6 needs 40 +
 * payload length <= those bytes (a frame's tail in other segments counts).  A frame that fails keeps its eth_type (it
 * still matches dl_type=0x0800) but is not IP: every L3 and L4 field reads
 * as zero and set_field finds no header to write.  Bytes past the datagram
 * (Ethernet padding) are not L4: L4 reads and checksums stop at ip_end.  An
 * L4 header counts only when it is whole: TCP 20 bytes and its data offset,
 * UDP 8, SCTP 12, ICMP and ICMPv6 8 (OVS's sizes too).
 */

/** Is the L4 header of protocol @proto whole in the @room bytes at @l4? */
static inline bool
sl_pkt_l4_whole(const uint8_t *l4, unsigned room, uint8_t proto)
{
	switch (proto) {
	case 6: {
		if (room < 20)
			return false;
		unsigned off = (l4[12] >> 4) * 4u;
		return off >= 20 && off <= room;
	}
	case 17:
	case 1:
	case 58:
		return room >= 8;
	case 132:
		return room >= 12;
	default:
		return true;
	}
}

/**
 * Is @p an untagged IPv4 frame with a 20-byte header (0x45), whose total
 * length fits the frame, not a later fragment, with a whole L4 header, of at
 * least @need (and 34) bytes?  The common shape, for which every field sits
 * at a fixed offset (struct sl_key_move).  Returns its IP total length, or 0
 * when it is not of that shape.  Only tests: the parse state is left alone
 * (sl_pkt_ipv4_plain fills it).
 */
static inline unsigned
sl_pkt_ipv4_plain_len(const struct sl_pkt *p, unsigned need)
{
	const uint8_t *d = p->data;
	uint32_t et_vihl; /* bytes 12-14: Ethertype 0x0800, then 0x45 */
	uint16_t frag;    /* bytes 20-21: no more-fragments flag, offset 0 (DF may be set) */

	if (p->len < 34 || p->len < need)
		return 0;
	__builtin_memcpy(&et_vihl, d + 12, 4);
	__builtin_memcpy(&frag, d + 20, 2);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if ((et_vihl & 0xffffff) != 0x450008 || (frag & 0xff1f) != 0)
		return 0;
#else
	if ((et_vihl >> 8) != 0x080045 || (frag & 0x1fff) != 0)
		return 0;
#endif
	unsigned tot = (unsigned)d[16] << 8 | d[17];
	if (tot < 20 || tot + 14 > p->len || !sl_pkt_l4_whole(d + 34, tot - 20, d[23]))
		return 0;
	return tot;
}

/**
 * The bits of frame word @w (bytes 8w to 8w + 7, loaded in host order) that
 * sl_pkt_ipv4_plain_len reads, besides the frame length and a TCP
 * header's data offset (byte 46): the Ethertype, version and IHL, total
 * length, fragment bits and protocol, all in words 1 and 2.  Not the TOS,
 * IP ID or TTL, which one flow's packets may vary.
 */
static inline uint64_t
sl_pkt_ipv4_plain_word_mask(unsigned w)
{
	static const uint8_t keep[3][8] = {
		{0},
		{0, 0, 0, 0, 0xff, 0xff, 0xff, 0},       /* 12, 13 Ethertype; 14 0x45 */
		{0xff, 0xff, 0, 0, 0xff, 0xff, 0, 0xff}, /* 16-17 length; 20-21 fragment; 23 */
	};
	uint64_t m = 0;

	if (w < 3)
		__builtin_memcpy(&m, keep[w], 8);
	return m;
}

/**
 * Does @b pass sl_pkt_ipv4_plain_len, with the same total length, as @a
 * (which passed) does, known from the bytes that test reads
 * (sl_pkt_ipv4_plain_word_mask, a TCP header's data offset)?  For the
 * packets of one flow (a train).  false means "unknown".
 */
static inline bool
sl_pkt_ipv4_plain_like(const struct sl_pkt *a, const struct sl_pkt *b)
{
	uint64_t diff = 0;

	if (a->len != b->len || a->len < 34)
		return false;
	for (unsigned w = 1; w < 3; w++) {
		uint64_t x, y;
		__builtin_memcpy(&x, a->data + 8 * w, 8);
		__builtin_memcpy(&y, b->data + 8 * w, 8);
		diff |= (x ^ y) & sl_pkt_ipv4_plain_word_mask(w);
	}
	if (diff != 0)
		return false;
	/* TCP: its data offset (a whole TCP header: the frame holds byte 46). */
	return a->data[23] != 6 || (a->len > 46 && a->data[46] == b->data[46]);
}

/**
 * sl_pkt_ipv4_plain_len as a test; when it passes, the parse state is
 * filled as the parser would (nothing to parse later).
 */
static inline bool
sl_pkt_ipv4_plain(struct sl_pkt *p, unsigned need)
{
	unsigned tot = sl_pkt_ipv4_plain_len(p, need);

	if (tot == 0)
		return false;
	if (p->l2_end == SL_OFS_UNSET) {
		p->n_vlans = 0;
		p->eth_type = 0x0800;
		p->l2_end = p->l3_ofs = 14;
		p->ip_end = (uint16_t)(tot + 14);
		p->ip_proto = p->data[23];
		p->l4_ofs = 34;
		p->l4_ok = 1;
	}
	return true;
}

/** Parse L2 (Ethernet, VLANs, MPLS) if not done yet.  Never fails: short frames read as zeros. */
void sl_pkt_parse_l2(struct sl_pkt *p);

/**
 * Offset of an 802.3 frame's length field (after the MACs and VLAN tags), or
 * -1 for an Ethernet II frame.  An action that changes the frame's size
 * behind it (push_mpls, pop_mpls on SNAP) must fix the length.  Needs L2
 * parsed (sl_pkt_parse_l2).
 */
static inline int
sl_pkt_llc_len_ofs(const struct sl_pkt *p)
{
	unsigned o = 12u + 4u * p->n_vlans;

	if (o + 2 > p->len || ((unsigned)p->data[o] << 8 | p->data[o + 1]) >= SL_ETH_TYPE_MIN)
		return -1;
	return (int)o;
}
/** Parse up to L4 if not done yet (implies L2). */
void sl_pkt_parse_l4(struct sl_pkt *p);
/** Forget parsed offsets; call after changing headers' layout (push/pop). */
static inline void
sl_pkt_reparse(struct sl_pkt *p)
{
	p->l2_end = SL_OFS_UNSET;
	p->l4_ofs = SL_OFS_UNSET;
	p->state_slot = UINT32_MAX; /* the headers moved: a state key may have changed */
}

/**
 * Read one field into @out (sl_field_size(f) bytes, network order,
 * right-aligned).  Absent fields read as zeros.
 */
void sl_pkt_field_read(struct sl_pkt *p, const struct sl_field *f, uint8_t *out);

/**
 * Write one field (set_field).  IPv4 header checksums and TCP/UDP checksums
 * covering the field are updated.
 *
 * @param p      Packet.
 * @param f      Field; must be sl_field_writable() or a raw field.
 * @param value  sl_field_size(f) bytes, network order, right-aligned.
 * @return 0, or -ENOENT when the packet lacks the field's layer (nothing is
 *         written, as OpenFlow requires for a missing header).
 */
int sl_pkt_field_write(struct sl_pkt *p, const struct sl_field *f, const uint8_t *value);

/*
 * Flow keys.
 */

/** Largest key in bytes; keys are zero-padded to a multiple of 8. */
#define SL_KEY_MAX 192
/** Most fields one table may match. */
#define SL_KEY_FIELDS_MAX 48

/** The fields a table matches, in key order, and where each sits in the key. */
/*
 * One field read of a layout, precompiled by sl_key_layout_init.  Most fields
 * are n bytes at a fixed offset from the frame, L3 or L4 start, present only
 * under an Ethertype / IP protocol condition: sl_key_extract copies those
 * without going through the per-field switch.
 */
struct sl_key_op {
	uint8_t kind;  /* SL_KOP_* */
	uint8_t n;     /* bytes copied (1..16) */
	uint8_t dst;   /* offset in the key */
	uint8_t proto; /* IP protocol required (SL_KOP_L4_PROTO) */
	uint16_t eth;  /* Ethertype required, 0: any */
	uint16_t src;  /* first byte, from the base */
	uint16_t need; /* bytes from the base that must be in the frame */
	uint8_t field; /* index in fields[] (SL_KOP_FIELD) */
};

enum {
	SL_KOP_FRAME,    /* n bytes at src from the frame start */
	SL_KOP_L3,       /* ... from the L3 start (eth: Ethertype condition) */
	SL_KOP_L4,       /* ... from the L4 start */
	SL_KOP_L4_PROTO, /* ... from the L4 start of an IP packet of protocol proto */
	SL_KOP_L3_IPV4,  /* ... from the L3 start of an IPv4 packet whose header (IHL) fits */
	SL_KOP_ETH_TYPE, /* the parsed Ethertype */
	SL_KOP_IP_PROTO, /* the parsed IP protocol, 0 when not IP */
	SL_KOP_VLAN_VID, /* OpenFlow's vlan_vid: 0x1000 | VID when tagged, else 0 */
	SL_KOP_IN_PORT,  /* the packet's in_port */
	SL_KOP_FIELD,    /* anything else: the generic field read */
};

/*
 * The layout's ops for the most common frame shape: Ethernet without VLAN
 * tags, IPv4 with a 20-byte header (0x45), not a later fragment.  There every
 * base is a constant (L3 at 14, L4 at 34), so each op is a plain copy from
 * the frame (or, for the rest, the generic field read) and no parse is
 * needed (sl_key_extract checks the shape and fills the parse state).
 */
struct sl_key_move {
	uint16_t src;  /* frame offset; for n == 0: index of a generic field */
	uint8_t dst;   /* offset in the key */
	uint8_t n;     /* bytes; 0: in_port (src 0xffff) or a generic field read */
	uint8_t proto; /* IP protocol required, 0: any */
};

/*
 * The moves once more, as whole 8-byte key words (little-endian hosts), for
 * a layout whose moves are all frame copies, in_port and metadata: word w
 * of the key is the 8 frame bytes at ld, rotated right by rot bits (which
 * puts each byte at its key offset) and masked; a word whose bytes come from
 * several frame places ORs more words in.  A word's load stays inside
 * moves_need.
 */
struct sl_key_word {
	uint64_t mask; /* key bytes this load gives (0: a zero word) */
	uint16_t ld;   /* frame offset of the 8-byte load */
	uint8_t rot;   /* right rotation, bits */
	uint8_t w;     /* byte offset of its key word (an extra word's) */
	uint8_t psh;   /* 63 - its protocol condition: 0 any, TCP 1, UDP 2, SCTP 3 */
};

/*
 * in_port (4 bytes) or metadata (8) as the word moves place it: big-endian,
 * ORed into the key words at byte offsets w1 (<< ls) and w2 (>> rs).
 */
struct sl_key_reg {
	uint8_t on; /* the layout has it */
	uint8_t w1, ls, w2, rs;
};

/* Most key words one layout may OR in besides its own (else no words: the move loop). */
#define SL_KEY_XWORDS_MAX 16

struct sl_key_layout {
	uint8_t n_fields;    /* fields in the layout */
	uint8_t need_l4;     /* some field needs L4 parsing */
	uint16_t key_size;   /* bytes, multiple of 8, <= SL_KEY_MAX */
	uint32_t frame_need; /* frame_only with words, no extra: moves_need; else > any len */
	uint8_t n_words;     /* key words of the word moves (key_size / 8), 0: none */
	uint8_t n_xwords;    /* extra words, after those */
	uint8_t cond;        /* some word has a protocol condition (psh < 63) */
	struct sl_key_reg port, md; /* in_port, metadata */
	struct sl_key_word words[SL_KEY_MAX / 8 + SL_KEY_XWORDS_MAX];
	struct sl_field fields[SL_KEY_FIELDS_MAX]; /* the fields */
	uint8_t offsets[SL_KEY_FIELDS_MAX];        /* byte offset of each field in the key */
	uint8_t need_l2;                           /* some op reads a parsed L2 value */
	uint8_t meta_only;  /* only in_port and metadata: no frame byte read */
	uint8_t frame_only; /* only in_port and bytes at fixed frame offsets (MACs): no parse */
	/* raw16: frame_need set and the words read bytes 0-15 only.  Then a frame of frame_need
	   bytes or more has the key of its in_port and its raw_mask bytes. */
	uint8_t raw16;
	uint64_t raw_mask[2];                    /* with raw16: the bytes (0-15) the words read */
	struct sl_key_op ops[SL_KEY_FIELDS_MAX]; /* one per field, in field order */
	uint8_t n_moves;                         /* IPv4 shape (struct sl_key_move) */
	uint16_t moves_need;                     /* frame bytes every move needs (>= 34) */
	struct sl_key_move moves[SL_KEY_FIELDS_MAX];
};

/**
 * Build a layout from a field list (duplicates are removed).
 *
 * @return 0, -E2BIG when the key would exceed SL_KEY_MAX or
 *         SL_KEY_FIELDS_MAX fields, -EINVAL for an invalid raw field.
 *         Control thread.
 */
int sl_key_layout_init(struct sl_key_layout *l, const struct sl_field *fields, unsigned n_fields);

/** Index of @f in @l, or -1. */
int sl_key_layout_find(const struct sl_key_layout *l, const struct sl_field *f);

/**
 * Extract a packet's key for a layout: writes all l->key_size bytes
 * (padding zeroed).  Any worker, on its own packet.
 */
void sl_key_extract(const struct sl_key_layout *l, struct sl_pkt *p, uint8_t *key);

/*
 * Raw keys: under a layout of MACs (and in_port), the usual L2 table, a
 * frame's key is its in_port and a few bytes of its first 16
 * (sl_key_layout.raw16).  Frames with equal raw keys have equal keys: one
 * masked compare instead of two extractions.  Unequal raw keys say
 * nothing.  The layout's part is copied out once (sl_key_raw_mask_of), so
 * a loop over frames keeps it in registers.
 */
struct sl_key_raw_mask {
	uint64_t m[2];
	uint32_t need; /* frame bytes for the raw key to be the key; UINT32_MAX: never */
};

struct sl_key_raw {
	uint64_t w[2];
	uint32_t in_port;
};

static inline struct sl_key_raw_mask
sl_key_raw_mask_of(const struct sl_key_layout *l)
{
	return (struct sl_key_raw_mask){.m = {l->raw_mask[0], l->raw_mask[1]},
					.need = l->raw16 ? l->frame_need : UINT32_MAX};
}

/** @p's raw key into *@r; false, when @p's key is not its raw key. */
static inline bool
sl_key_raw_get(const struct sl_key_raw_mask *rm, const struct sl_pkt *p, struct sl_key_raw *r)
{
	uint64_t w0, w1;

	if (p->len < rm->need)
		return false;
	__builtin_memcpy(&w0, p->data, 8);
	__builtin_memcpy(&w1, p->data + 8, 8);
	r->w[0] = w0 & rm->m[0];
	r->w[1] = w1 & rm->m[1];
	r->in_port = p->in_port;
	return true;
}

static inline bool
sl_key_raw_equal(const struct sl_key_raw *a, const struct sl_key_raw *b)
{
	return ((a->w[0] ^ b->w[0]) | (a->w[1] ^ b->w[1]) | (a->in_port ^ b->in_port)) == 0;
}

/**
 * sl_key_extract without its plain-IPv4 shortcut (the layout's ops, any frame):
 * for a caller that has found the frame is not of that shape.
 */
void sl_key_extract_ops(const struct sl_key_layout *l, struct sl_pkt *p, uint8_t *key);

/*
 * Checksum helpers shared with the action code.
 */

/** Incrementally update a 16-bit ones' complement checksum (RFC 1624) for
 *  a change of @n_bytes (even) from @old to @new.  Returns the new checksum.
 *  Inline: the datapath's dec_ttl calls it per packet with n_bytes 2. */
static inline uint16_t
sl_csum_update(uint16_t csum_be, const uint8_t *old, const uint8_t *new_, unsigned n_bytes)
{
	/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), folded over 16-bit words. */
	uint32_t sum = (uint16_t) ~(uint16_t)((csum_be >> 8) | (csum_be << 8));

	for (unsigned i = 0; i + 1 < n_bytes; i += 2) {
		sum += (uint16_t) ~(uint16_t)(old[i] << 8 | old[i + 1]);
		sum += (uint16_t)(new_[i] << 8 | new_[i + 1]);
	}
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = (uint16_t)~sum;
	return (uint16_t)((sum >> 8) | (sum << 8));
}

#endif /* SL_PKT_H */
