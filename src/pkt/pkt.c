/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Field registry, lazy header parsing, key extraction and set-field.
 *
 * Fast path: sl_pkt_parse_*, sl_pkt_field_read, sl_key_extract run per packet
 * on the workers.  Every read is bounds-checked against p->len: a truncated
 * or malformed frame reads as zeros, it never faults.
 * Control path: the registry lookups and sl_key_layout_init.
 */
#include "pkt.h"

#include <errno.h>
#include <string.h>

struct field_info {
	const char *name;
	uint8_t bits;
	int8_t oxm;
	uint8_t layer;
};

static const struct field_info fields[SL_FIELD__MAX] = {
#define SL_FIELD_INFO_(e, name, bits, oxm, layer) {name, bits, oxm, layer},
	SL_FOREACH_FIELD(SL_FIELD_INFO_)
#undef SL_FIELD_INFO_
};

/* OpenFlow / ovs-ofctl aliases accepted by sl_field_by_name. */
static const struct {
	const char *alias;
	enum sl_field_id id;
} aliases[] = {
	{"eth_dst", SL_FIELD_ETH_DST},
	{"eth_src", SL_FIELD_ETH_SRC},
	{"eth_type", SL_FIELD_ETH_TYPE},
	{"vlan_vid", SL_FIELD_VLAN_VID},
	{"vlan_pcp", SL_FIELD_VLAN_PCP},
	{"ip_proto", SL_FIELD_IP_PROTO},
	{"ipv4_src", SL_FIELD_IPV4_SRC},
	{"ipv4_dst", SL_FIELD_IPV4_DST},
	{"ip_ecn", SL_FIELD_IP_ECN},
	{"icmpv4_type", SL_FIELD_ICMPV4_TYPE},
	{"icmpv4_code", SL_FIELD_ICMPV4_CODE},
	{"ipv6_flabel", SL_FIELD_IPV6_FLABEL},
	{"ipv6_nd_target", SL_FIELD_IPV6_ND_TARGET},
	{"arp_spa", SL_FIELD_ARP_SPA},
	{"ip_ttl", SL_FIELD_IP_TTL},
	{"tunnel_id", SL_FIELD_TUNNEL_ID},
	{"ipv6_nd_sll", SL_FIELD_IPV6_ND_SLL},
	{"ipv6_nd_tll", SL_FIELD_IPV6_ND_TLL},
};

unsigned
sl_field_bits(const struct sl_field *f)
{
	return f->id == SL_FIELD_RAW ? f->raw_n_bits : fields[f->id].bits;
}

unsigned
sl_field_size(const struct sl_field *f)
{
	return SL_DIV_ROUND_UP(sl_field_bits(f), 8);
}

bool
sl_field_equal(const struct sl_field *a, const struct sl_field *b)
{
	if (a->id != b->id)
		return false;
	return a->id != SL_FIELD_RAW ||
	       (a->raw_base == b->raw_base && a->raw_bit_off == b->raw_bit_off &&
		a->raw_n_bits == b->raw_n_bits);
}

const char *
sl_field_name(enum sl_field_id id)
{
	return (unsigned)id < SL_FIELD__MAX ? fields[id].name : "unknown";
}

int
sl_field_by_name(const char *name)
{
	for (unsigned i = 0; i < SL_FIELD__MAX; i++)
		if (i != SL_FIELD_RAW && strcmp(fields[i].name, name) == 0)
			return (int)i;
	for (unsigned i = 0; i < SL_ARRAY_SIZE(aliases); i++)
		if (strcmp(aliases[i].alias, name) == 0)
			return (int)aliases[i].id;
	return -1;
}

int
sl_field_oxm(enum sl_field_id id)
{
	return (unsigned)id < SL_FIELD__MAX ? fields[id].oxm : -1;
}

bool
sl_field_maskable(const struct sl_field *f)
{
	switch (f->id) {
	case SL_FIELD_METADATA:
	case SL_FIELD_TUNNEL_ID:
	case SL_FIELD_STATE:
	case SL_FIELD_ETH_DST:
	case SL_FIELD_ETH_SRC:
	case SL_FIELD_VLAN_VID:
	case SL_FIELD_IPV4_SRC:
	case SL_FIELD_IPV4_DST:
	case SL_FIELD_TCP_SRC:
	case SL_FIELD_TCP_DST:
	case SL_FIELD_UDP_SRC:
	case SL_FIELD_UDP_DST:
	case SL_FIELD_SCTP_SRC:
	case SL_FIELD_SCTP_DST:
	case SL_FIELD_ARP_SPA:
	case SL_FIELD_ARP_TPA:
	case SL_FIELD_ARP_SHA:
	case SL_FIELD_ARP_THA:
	case SL_FIELD_IPV6_SRC:
	case SL_FIELD_IPV6_DST:
	case SL_FIELD_IPV6_FLABEL:
	case SL_FIELD_IPV6_ND_TARGET:
	case SL_FIELD_IPV6_EXTHDR:
	case SL_FIELD_PBB_ISID:
	case SL_FIELD_RAW:
		return true;
	default:
		return false;
	}
}

bool
sl_field_writable(enum sl_field_id id)
{
	switch (id) {
	case SL_FIELD_IN_PORT:
	case SL_FIELD_METADATA:
	case SL_FIELD_STATE: /* written by set_state, not set_field */
	case SL_FIELD_ETH_TYPE:
	case SL_FIELD_IP_PROTO:
	case SL_FIELD_IPV6_EXTHDR: /* a pseudo-field: what the headers are, not a header */
	case SL_FIELD__MAX:
		return false;
	default:
		return true;
	}
}

int
sl_field_format(const struct sl_field *f, char *buf, size_t size)
{
	static const char *const bases[] = {"pkt", "l3", "l4"};

	if (f->id == SL_FIELD_RAW)
		return snprintf(buf, size, "raw(%s,%u,%u)", bases[f->raw_base % 3], f->raw_bit_off,
				f->raw_n_bits);
	return snprintf(buf, size, "%s", sl_field_name(f->id));
}

void
sl_field_prereq(enum sl_field_id id, uint16_t eth_types[2], unsigned *n_eth_types, int *ip_proto)
{
	*n_eth_types = 0;
	*ip_proto = -1;
	switch (id) {
	case SL_FIELD_IPV4_SRC:
	case SL_FIELD_IPV4_DST:
		eth_types[(*n_eth_types)++] = 0x0800;
		break;
	case SL_FIELD_IPV6_SRC:
	case SL_FIELD_IPV6_DST:
	case SL_FIELD_IPV6_FLABEL:
	case SL_FIELD_IPV6_EXTHDR:
		eth_types[(*n_eth_types)++] = 0x86dd;
		break;
	case SL_FIELD_IP_DSCP:
	case SL_FIELD_IP_ECN:
	case SL_FIELD_IP_PROTO:
	case SL_FIELD_IP_TTL:
		eth_types[(*n_eth_types)++] = 0x0800;
		eth_types[(*n_eth_types)++] = 0x86dd;
		break;
	case SL_FIELD_TCP_SRC:
	case SL_FIELD_TCP_DST:
		*ip_proto = 6;
		goto ip_any;
	case SL_FIELD_UDP_SRC:
	case SL_FIELD_UDP_DST:
		*ip_proto = 17;
		goto ip_any;
	case SL_FIELD_SCTP_SRC:
	case SL_FIELD_SCTP_DST:
		*ip_proto = 132;
ip_any:
		eth_types[(*n_eth_types)++] = 0x0800;
		eth_types[(*n_eth_types)++] = 0x86dd;
		break;
	case SL_FIELD_ICMPV4_TYPE:
	case SL_FIELD_ICMPV4_CODE:
		*ip_proto = 1;
		eth_types[(*n_eth_types)++] = 0x0800;
		break;
	case SL_FIELD_ICMPV6_TYPE:
	case SL_FIELD_ICMPV6_CODE:
	case SL_FIELD_IPV6_ND_TARGET:
	case SL_FIELD_IPV6_ND_SLL:
	case SL_FIELD_IPV6_ND_TLL:
		*ip_proto = 58;
		eth_types[(*n_eth_types)++] = 0x86dd;
		break;
	case SL_FIELD_ARP_OP:
	case SL_FIELD_ARP_SPA:
	case SL_FIELD_ARP_TPA:
	case SL_FIELD_ARP_SHA:
	case SL_FIELD_ARP_THA:
		eth_types[(*n_eth_types)++] = 0x0806;
		break;
	case SL_FIELD_MPLS_LABEL:
	case SL_FIELD_MPLS_TC:
	case SL_FIELD_MPLS_BOS:
		eth_types[(*n_eth_types)++] = 0x8847;
		eth_types[(*n_eth_types)++] = 0x8848;
		break;
	case SL_FIELD_PBB_ISID:
		eth_types[(*n_eth_types)++] = 0x88e7;
		break;
	default:
		break;
	}
}

/*
 * Lazy parsing.  Offsets are computed once per packet and only when a field
 * needs them (the composite-pipeline design: no front parser).
 */

static inline uint16_t
rd16(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

static inline bool
is_ip(uint16_t t)
{
	return t == 0x0800 || t == 0x86dd;
}

/*
 * Offset after the IP datagram at p->l3_ofs, cut to what is readable
 * (p->len), or 0 when its header lies (pkt.h, "Packets that lie").  The
 * frame's tail in other segments counts for the lengths, not for reads.
 */
static uint16_t
ip_end_of(const struct sl_pkt *p)
{
	const uint8_t *d = p->data;
	unsigned l3 = p->l3_ofs, room = p->len + p->tail - l3, tot;

	if (p->eth_type == 0x0800) {
		if (p->len < l3 + 20)
			return 0;
		tot = rd16(d + l3 + 2);
		unsigned ihl = (d[l3] & 0xf) * 4u;
		if (ihl < 20 || ihl > tot || tot > room || p->len < l3 + ihl)
			return 0;
	} else if (p->eth_type == 0x86dd) {
		if (p->len < l3 + 40)
			return 0;
		tot = 40u + rd16(d + l3 + 4);
		if (tot > room)
			return 0;
	} else {
		return 0;
	}
	return (uint16_t)SL_MIN(l3 + tot, (unsigned)p->len);
}

/*
 * The field after the MACs and VLAN tags at @ofs - 2 is a length (below
 * 0x600), not a type: an IEEE 802.3 frame.  As Open vSwitch's
 * parse_ethertype: an LLC/SNAP header (DSAP = SSAP = 0xaa, control 0x03)
 * with OUI 00:00:00 (RFC 1042) carries an Ethertype, and L2 ends after it
 * (*ofs moves 8 bytes on), so IP over SNAP matches and parses as over
 * Ethernet II.  Anything else reads as 0x05ff, OpenFlow 1.0's
 * OFP_DL_TYPE_NOT_ETH_TYPE, with L2 ending at the LLC header.  Ethernet II
 * frames never get here.
 */
static uint16_t
llc_snap_type(const struct sl_pkt *p, uint16_t *ofs)
{
	const uint8_t *llc = p->data + *ofs;
	uint16_t type;

	if (*ofs + 8u > p->len || llc[0] != 0xaa || llc[1] != 0xaa || llc[2] != 0x03 ||
	    (llc[3] | llc[4] | llc[5]) != 0)
		return SL_ETH_TYPE_NOT_ETH;
	*ofs += 8;
	type = rd16(llc + 6);
	return type >= SL_ETH_TYPE_MIN ? type : SL_ETH_TYPE_NOT_ETH;
}

static void
parse_l2_slow(struct sl_pkt *p)
{
	uint16_t ofs, type;

	p->n_vlans = 0;
	p->ip_end = 0;
	if (sl_unlikely(p->len < 14)) {
		p->eth_type = 0;
		p->l2_end = p->l3_ofs = p->len;
		return;
	}
	type = rd16(p->data + 12);
	ofs = 14;
	while ((type == 0x8100 || type == 0x88a8) && ofs + 4 <= p->len) {
		if (p->n_vlans++ == 0)
			p->vlan_ofs = ofs;
		type = rd16(p->data + ofs + 2);
		ofs += 4;
	}
	if (sl_unlikely(type < SL_ETH_TYPE_MIN))
		type = llc_snap_type(p, &ofs);
	p->eth_type = type;
	p->l2_end = ofs;
	p->l3_ofs = ofs;
	if (type == 0x8847 || type == 0x8848) {
		/* Skip the label stack up to the bottom-of-stack label. */
		while (p->l3_ofs + 4 <= p->len) {
			bool bos = p->data[p->l3_ofs + 2] & 1;
			p->l3_ofs += 4;
			if (bos)
				break;
		}
	}
	p->ip_end = ip_end_of(p);
}

static inline void
ensure_l2(struct sl_pkt *p)
{
	if (sl_unlikely(p->l2_end == SL_OFS_UNSET))
		parse_l2_slow(p);
}

void
sl_pkt_parse_l2(struct sl_pkt *p)
{
	ensure_l2(p);
}

static void
parse_l4_slow(struct sl_pkt *p)
{
	const uint8_t *d = p->data;
	unsigned l3, end;

	ensure_l2(p);
	l3 = p->l3_ofs;
	end = p->ip_end;
	p->ip_proto = 0;
	p->l4_ok = 0;
	p->l4_ofs = p->len; /* absent unless found below */
	if (end == 0)
		return; /* not IP, or a header that lies */
	if (p->eth_type == 0x0800) {
		p->ip_proto = d[l3 + 9];
		/* Later fragments carry no L4 header (OVS does the same). */
		if ((rd16(d + l3 + 6) & 0x1fff) != 0)
			return;
		p->l4_ofs = (uint16_t)(l3 + (d[l3] & 0xf) * 4u);
	} else {
		uint8_t nh = d[l3 + 6];
		unsigned ofs = l3 + 40;
		/* Walk a bounded number of extension headers, within the datagram. */
		for (int i = 0; i < 8; i++) {
			if (nh == 0 || nh == 43 || nh == 60) {
				if (ofs + 8 > end)
					return;
				unsigned hlen = (d[ofs + 1] + 1u) * 8;
				nh = d[ofs];
				ofs += hlen;
			} else if (nh == 51) {
				if (ofs + 8 > end)
					return;
				unsigned hlen = (d[ofs + 1] + 2u) * 4;
				nh = d[ofs];
				ofs += hlen;
			} else if (nh == 44) {
				if (ofs + 8 > end)
					return;
				bool later = (rd16(d + ofs + 2) & 0xfff8) != 0;
				nh = d[ofs];
				ofs += 8;
				if (later) {
					p->ip_proto = nh;
					return;
				}
			} else {
				break;
			}
		}
		p->ip_proto = nh;
		if (ofs > end)
			return;
		p->l4_ofs = (uint16_t)ofs;
	}
	p->l4_ok = sl_pkt_l4_whole(d + p->l4_ofs, end - p->l4_ofs, p->ip_proto);
}

static inline void
ensure_l4(struct sl_pkt *p)
{
	if (sl_unlikely(p->l4_ofs == SL_OFS_UNSET))
		parse_l4_slow(p);
}

void
sl_pkt_parse_l4(struct sl_pkt *p)
{
	ensure_l4(p);
}

/* Copy @w bytes from each end of @src's @n (w <= n <= 2w): two constant-size moves each way. */
static SL_ALWAYS_INLINE void
copy_ends(uint8_t *out, const uint8_t *src, unsigned n, unsigned w)
{
	uint8_t a[8], b[8];

	memcpy(a, src, w);
	memcpy(b, src + n - w, w);
	memcpy(out, a, w);
	memcpy(out + n - w, b, w);
}

/* Copy 1..16 bytes: overlapping fixed-size moves, no libc call, no byte loop. */
static SL_ALWAYS_INLINE void
copy_small(uint8_t *out, const uint8_t *src, unsigned n)
{
	if (n >= 8)
		copy_ends(out, src, n, 8);
	else if (n >= 4)
		copy_ends(out, src, n, 4);
	else if (n >= 2)
		copy_ends(out, src, n, 2);
	else
		out[0] = src[0];
}

/* Copy @n (1..16) bytes at @ofs to @out, zeros when the frame is too short. */
static inline void
copy_or_zero(const struct sl_pkt *p, unsigned ofs, unsigned n, uint8_t *out)
{
	if (ofs + n > p->len) {
		memset(out, 0, n);
		return;
	}
	copy_small(out, p->data + ofs, n);
}

static void
put_be(uint8_t *out, unsigned n, uint64_t v)
{
	for (unsigned i = 0; i < n; i++)
		out[n - 1 - i] = (uint8_t)(v >> (8 * i));
}

/* The bit-by-bit case of read_bits (fields not on byte boundaries). */
static void
read_bits_slow(const struct sl_pkt *p, unsigned base, unsigned bit_off, unsigned n_bits,
	       uint8_t *out)
{
	unsigned size = SL_DIV_ROUND_UP(n_bits, 8);

	memset(out, 0, size);
	for (unsigned i = 0; i < n_bits; i++) {
		unsigned sb = base * 8 + bit_off + i; /* source bit, frame-relative */
		unsigned db = size * 8 - n_bits + i;  /* destination bit in out */
		if (sb / 8 >= p->len)
			break;
		if (p->data[sb / 8] & (0x80 >> (sb % 8)))
			out[db / 8] |= (uint8_t)(0x80 >> (db % 8));
	}
}

/* Read @n_bits at bit offset @bit_off from byte @base, right-aligned into @out. */
static inline void
read_bits(const struct sl_pkt *p, unsigned base, unsigned bit_off, unsigned n_bits, uint8_t *out)
{
	if (sl_likely(bit_off % 8 == 0 && n_bits % 8 == 0)) {
		copy_or_zero(p, base + bit_off / 8, n_bits / 8, out);
		return;
	}
	read_bits_slow(p, base, bit_off, n_bits, out);
}

static unsigned
raw_base_ofs(struct sl_pkt *p, unsigned base)
{
	switch (base) {
	case SL_RAW_BASE_L3:
		ensure_l2(p);
		return p->l3_ofs;
	case SL_RAW_BASE_L4:
		ensure_l4(p);
		return p->l4_ofs;
	default:
		return 0;
	}
}

/*
 * L4 offset when the packet is IP with protocol @proto, a whole L4 header
 * and @need bytes of it within the datagram, else -1.
 */
static inline int
l4_with(struct sl_pkt *p, uint8_t proto, unsigned need)
{
	ensure_l4(p);
	if (!p->l4_ok || p->ip_proto != proto || p->l4_ofs + need > p->ip_end)
		return -1;
	return p->l4_ofs;
}

/* IPv4 header offset when the packet is IPv4 and its header tells the truth, else -1. */
static inline int
ipv4_l3(struct sl_pkt *p)
{
	ensure_l2(p);
	return p->eth_type == 0x0800 && p->ip_end != 0 ? p->l3_ofs : -1;
}

static inline int
ipv6_l3(struct sl_pkt *p)
{
	ensure_l2(p);
	return p->eth_type == 0x86dd && p->ip_end != 0 ? p->l3_ofs : -1;
}

static inline int
arp_l3(struct sl_pkt *p)
{
	ensure_l2(p);
	return p->eth_type == 0x0806 && p->l3_ofs + 28 <= p->len ? p->l3_ofs : -1;
}

/* Offset of the PBB I-TAG's TCI (PCP, DEI, UCA, I-SID), or -1. */
static inline int
itag_ofs(struct sl_pkt *p)
{
	ensure_l2(p);
	return p->eth_type == 0x88e7 && p->l2_end + 4 <= p->len ? p->l2_end : -1;
}

static inline int
mpls_ofs(struct sl_pkt *p)
{
	ensure_l2(p);
	return (p->eth_type == 0x8847 || p->eth_type == 0x8848) && p->l2_end + 4 <= p->len
		       ? p->l2_end
		       : -1;
}

/*
 * OpenFlow's IPV6_EXTHDR pseudo-field (OF 1.3 section 7.2.3.8): which
 * extension headers the packet has, and whether they repeat or come out of
 * the order RFC 2460 section 4.1 recommends (hop-by-hop, destination,
 * routing, fragment, authentication, ESP, destination).  At most 8
 * headers are walked, within the datagram.
 */
enum {
	IEH_NONEXT = 1 << 0,
	IEH_ESP = 1 << 1,
	IEH_AUTH = 1 << 2,
	IEH_DEST = 1 << 3,
	IEH_FRAG = 1 << 4,
	IEH_ROUTER = 1 << 5,
	IEH_HOP = 1 << 6,
	IEH_UNREP = 1 << 7,
	IEH_UNSEQ = 1 << 8,
};

static unsigned
ipv6_exthdr(struct sl_pkt *p)
{
	const uint8_t *d = p->data;
	int l3 = ipv6_l3(p);
	unsigned flags = 0, ofs, last_rank = 0, n_dest = 0, first = 1;

	if (l3 < 0)
		return 0;
	uint8_t nh = d[l3 + 6];
	ofs = (unsigned)l3 + 40;
	for (int i = 0; i < 8; i++, first = 0) {
		unsigned bit, rank, hlen;
		switch (nh) {
		case 0:
			bit = IEH_HOP;
			rank = 0;
			break;
		case 60:
			bit = IEH_DEST;
			rank = n_dest == 0 && !(flags & IEH_ROUTER) ? 1 : 6;
			break;
		case 43:
			bit = IEH_ROUTER;
			rank = 2;
			break;
		case 44:
			bit = IEH_FRAG;
			rank = 3;
			break;
		case 51:
			bit = IEH_AUTH;
			rank = 4;
			break;
		case 50:
			bit = IEH_ESP;
			rank = 5;
			break;
		case 59:
			return flags | IEH_NONEXT;
		default:
			return flags; /* an upper-layer header */
		}
		if ((flags & bit) && !(bit == IEH_DEST && n_dest == 1))
			flags |= IEH_UNREP;
		if (rank < last_rank || (bit == IEH_HOP && !first))
			flags |= IEH_UNSEQ;
		last_rank = SL_MAX(last_rank, rank);
		n_dest += bit == IEH_DEST;
		flags |= bit;
		if (bit == IEH_ESP || ofs + 8 > p->ip_end)
			return flags; /* encrypted, or the rest is not in the datagram */
		hlen = bit == IEH_FRAG   ? 8
		       : bit == IEH_AUTH ? (d[ofs + 1] + 2u) * 4
					 : (d[ofs + 1] + 1u) * 8;
		if (bit == IEH_FRAG && (rd16(d + ofs + 2) & 0xfff8) != 0)
			return flags; /* a later fragment: what follows is payload */
		nh = d[ofs];
		ofs += hlen;
	}
	return flags;
}

/*
 * Offset of the link-layer address in a neighbour discovery message's
 * option (RFC 4861 section 4.6.1): the source one (option 1) of a
 * solicitation (135) for nd_sll, the target one (option 2) of an
 * advertisement (136) for nd_tll.  -1 when the packet has none.
 */
static int
nd_lladdr_ofs(struct sl_pkt *p, bool sll)
{
	const uint8_t *d = p->data;
	int o = l4_with(p, 58, 24);

	if (o < 0 || p->eth_type != 0x86dd || d[o] != (sll ? 135 : 136))
		return -1;
	for (unsigned x = (unsigned)o + 24; x + 8 <= p->ip_end;) {
		unsigned len = d[x + 1] * 8u;
		if (len == 0)
			return -1; /* malformed: RFC 4861 says discard */
		if (d[x] == (sll ? 1 : 2) && x + len <= p->ip_end)
			return (int)x + 2;
		x += len;
	}
	return -1;
}

static SL_ALWAYS_INLINE void
field_read(struct sl_pkt *p, const struct sl_field *f, uint8_t *out)
{
	const uint8_t *d = p->data;
	int o;

	switch (f->id) {
	case SL_FIELD_IN_PORT:
		put_be(out, 4, p->in_port);
		return;
	case SL_FIELD_METADATA:
		put_be(out, 8, p->metadata);
		return;
	case SL_FIELD_TUNNEL_ID:
		put_be(out, 8, p->tunnel_id);
		return;
	case SL_FIELD_STATE:
		put_be(out, 4, p->state);
		return;
	case SL_FIELD_ETH_DST:
		copy_or_zero(p, 0, 6, out);
		return;
	case SL_FIELD_ETH_SRC:
		copy_or_zero(p, 6, 6, out);
		return;
	case SL_FIELD_ETH_TYPE:
		ensure_l2(p);
		put_be(out, 2, p->eth_type);
		return;
	case SL_FIELD_VLAN_VID:
		ensure_l2(p);
		put_be(out, 2, p->n_vlans ? 0x1000 | (rd16(d + p->vlan_ofs) & 0xfff) : 0);
		return;
	case SL_FIELD_VLAN_PCP:
		ensure_l2(p);
		out[0] = p->n_vlans ? d[p->vlan_ofs] >> 5 : 0;
		return;
	case SL_FIELD_IP_DSCP:
	case SL_FIELD_IP_ECN: {
		uint8_t tos = 0;
		if ((o = ipv4_l3(p)) >= 0)
			tos = d[o + 1];
		else if ((o = ipv6_l3(p)) >= 0)
			tos = (uint8_t)((d[o] & 0xf) << 4 | d[o + 1] >> 4);
		out[0] = f->id == SL_FIELD_IP_DSCP ? tos >> 2 : tos & 3;
		return;
	}
	case SL_FIELD_IP_TTL:
		if ((o = ipv4_l3(p)) >= 0)
			out[0] = d[o + 8];
		else if ((o = ipv6_l3(p)) >= 0)
			out[0] = d[o + 7];
		else
			out[0] = 0;
		return;
	case SL_FIELD_IP_PROTO:
		ensure_l4(p);
		out[0] = is_ip(p->eth_type) ? p->ip_proto : 0;
		return;
	case SL_FIELD_IPV4_SRC:
	case SL_FIELD_IPV4_DST:
		if ((o = ipv4_l3(p)) >= 0)
			memcpy(out, d + o + (f->id == SL_FIELD_IPV4_SRC ? 12 : 16), 4);
		else
			memset(out, 0, 4);
		return;
	case SL_FIELD_TCP_SRC:
	case SL_FIELD_TCP_DST:
	case SL_FIELD_UDP_SRC:
	case SL_FIELD_UDP_DST:
	case SL_FIELD_SCTP_SRC:
	case SL_FIELD_SCTP_DST: {
		static const uint8_t protos[] = {6, 6, 17, 17, 132, 132};
		unsigned idx = f->id - SL_FIELD_TCP_SRC;
		if ((o = l4_with(p, protos[idx], 4)) >= 0)
			memcpy(out, d + o + (idx & 1) * 2, 2);
		else
			memset(out, 0, 2);
		return;
	}
	case SL_FIELD_ICMPV4_TYPE:
	case SL_FIELD_ICMPV4_CODE:
		o = l4_with(p, 1, 2);
		out[0] = o >= 0 && p->eth_type == 0x0800 ? d[o + (f->id == SL_FIELD_ICMPV4_CODE)]
							 : 0;
		return;
	case SL_FIELD_ICMPV6_TYPE:
	case SL_FIELD_ICMPV6_CODE:
		o = l4_with(p, 58, 2);
		out[0] = o >= 0 && p->eth_type == 0x86dd ? d[o + (f->id == SL_FIELD_ICMPV6_CODE)]
							 : 0;
		return;
	case SL_FIELD_IPV6_ND_TARGET:
		o = l4_with(p, 58, 24);
		if (o >= 0 && p->eth_type == 0x86dd && (d[o] == 135 || d[o] == 136))
			memcpy(out, d + o + 8, 16);
		else
			memset(out, 0, 16);
		return;
	case SL_FIELD_IPV6_ND_SLL:
	case SL_FIELD_IPV6_ND_TLL:
		if ((o = nd_lladdr_ofs(p, f->id == SL_FIELD_IPV6_ND_SLL)) >= 0)
			memcpy(out, d + o, 6);
		else
			memset(out, 0, 6);
		return;
	case SL_FIELD_IPV6_EXTHDR:
		put_be(out, 2, ipv6_exthdr(p));
		return;
	case SL_FIELD_ARP_OP:
		if ((o = arp_l3(p)) >= 0)
			memcpy(out, d + o + 6, 2);
		else
			memset(out, 0, 2);
		return;
	case SL_FIELD_ARP_SHA:
	case SL_FIELD_ARP_THA:
		if ((o = arp_l3(p)) >= 0)
			memcpy(out, d + o + (f->id == SL_FIELD_ARP_SHA ? 8 : 18), 6);
		else
			memset(out, 0, 6);
		return;
	case SL_FIELD_ARP_SPA:
	case SL_FIELD_ARP_TPA:
		if ((o = arp_l3(p)) >= 0)
			memcpy(out, d + o + (f->id == SL_FIELD_ARP_SPA ? 14 : 24), 4);
		else
			memset(out, 0, 4);
		return;
	case SL_FIELD_IPV6_SRC:
	case SL_FIELD_IPV6_DST:
		if ((o = ipv6_l3(p)) >= 0)
			memcpy(out, d + o + (f->id == SL_FIELD_IPV6_SRC ? 8 : 24), 16);
		else
			memset(out, 0, 16);
		return;
	case SL_FIELD_IPV6_FLABEL:
		if ((o = ipv6_l3(p)) >= 0) {
			out[0] = d[o + 1] & 0xf;
			out[1] = d[o + 2];
			out[2] = d[o + 3];
		} else {
			memset(out, 0, 3);
		}
		return;
	case SL_FIELD_MPLS_LABEL:
		if ((o = mpls_ofs(p)) >= 0) {
			uint32_t lbl =
				(uint32_t)d[o] << 12 | (uint32_t)d[o + 1] << 4 | d[o + 2] >> 4;
			put_be(out, 3, lbl);
		} else {
			memset(out, 0, 3);
		}
		return;
	case SL_FIELD_MPLS_TC:
		out[0] = (o = mpls_ofs(p)) >= 0 ? (d[o + 2] >> 1) & 7 : 0;
		return;
	case SL_FIELD_MPLS_BOS:
		out[0] = (o = mpls_ofs(p)) >= 0 ? d[o + 2] & 1 : 0;
		return;
	case SL_FIELD_PBB_ISID:
		if ((o = itag_ofs(p)) >= 0)
			memcpy(out, d + o + 1, 3);
		else
			memset(out, 0, 3);
		return;
	case SL_FIELD_RAW: {
		unsigned base = raw_base_ofs(p, f->raw_base);
		read_bits(p, base, f->raw_bit_off, f->raw_n_bits, out);
		return;
	}
	default:
		memset(out, 0, sl_field_size(f));
		return;
	}
}

void
sl_pkt_field_read(struct sl_pkt *p, const struct sl_field *f, uint8_t *out)
{
	field_read(p, f, out);
}

/*
 * Checksums.
 */

static void
ipv4_csum_recompute(uint8_t *ip)
{
	unsigned ihl = (ip[0] & 0xf) * 4u;
	uint32_t sum = 0;

	ip[10] = ip[11] = 0;
	for (unsigned i = 0; i + 1 < ihl; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	ip[10] = (uint8_t)(sum >> 8);
	ip[11] = (uint8_t)sum;
}

/* Where the L4 checksum lives, or -1 (none, or UDP over IPv4 with checksum 0). */
static int
l4_csum_ofs(struct sl_pkt *p)
{
	int o;

	ensure_l4(p);
	if (!p->l4_ok)
		return -1;
	o = p->l4_ofs; /* a whole header: TCP 20 bytes, UDP and ICMP 8 */
	switch (p->ip_proto) {
	case 6:
		return o + 16;
	case 17:
		if (p->eth_type == 0x0800 && p->data[o + 6] == 0 && p->data[o + 7] == 0)
			return -1;
		return o + 6;
	case 1:
	case 58:
		return o + 2;
	default:
		return -1;
	}
}

/*
 * Write @n (even) bytes at @ofs and fix the L4 checksum if @pseudo (the bytes
 * are in the pseudo-header or the L4 header itself).  ICMPv4 has no
 * pseudo-header, so IPv4 address changes leave its checksum alone.
 */
static void
write_l4_covered(struct sl_pkt *p, unsigned ofs, const uint8_t *value, unsigned n, bool in_l4)
{
	uint8_t old[16];
	int c = l4_csum_ofs(p);

	memcpy(old, p->data + ofs, n);
	memcpy(p->data + ofs, value, n);
	if (c < 0 || (!in_l4 && p->ip_proto == 1))
		return;
	uint16_t cs;
	memcpy(&cs, p->data + c, 2);
	cs = sl_csum_update(cs, old, value, n);
	/* UDP sends a computed 0 as 0xffff: 0 means "no checksum" (RFC 768). */
	if (cs == 0 && p->ip_proto == 17)
		cs = 0xffff;
	memcpy(p->data + c, &cs, 2);
}

/*
 * SCTP's checksum is a CRC32c over the whole SCTP packet (RFC 4960 appendix
 * B: up to the datagram's end, never over Ethernet padding), not a
 * ones'-complement sum, so a port rewrite recomputes it.  Bitwise
 * (no table): rewriting SCTP ports is rare and the packets are short.
 */
static uint32_t
crc32c(const uint8_t *d, unsigned n)
{
	uint32_t crc = 0xffffffffu;

	for (unsigned i = 0; i < n; i++) {
		crc ^= d[i];
		for (unsigned b = 0; b < 8; b++)
			crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
	}
	return ~crc;
}

/*
 * @l4: offset of the (whole) SCTP common header; the checksum is stored
 * little-endian.  A frame with a tail in other segments keeps its checksum:
 * the CRC needs bytes out of reach.
 */
static void
sctp_crc_recompute(struct sl_pkt *p, unsigned l4)
{
	if (p->tail != 0)
		return;
	uint8_t *c = p->data + l4 + 8;
	memset(c, 0, 4);
	uint32_t crc = crc32c(p->data + l4, p->ip_end - l4);
	c[0] = (uint8_t)crc;
	c[1] = (uint8_t)(crc >> 8);
	c[2] = (uint8_t)(crc >> 16);
	c[3] = (uint8_t)(crc >> 24);
}

static void
write_bits(struct sl_pkt *p, unsigned base, unsigned bit_off, unsigned n_bits, const uint8_t *value)
{
	unsigned size = SL_DIV_ROUND_UP(n_bits, 8);

	for (unsigned i = 0; i < n_bits; i++) {
		unsigned db = base * 8 + bit_off + i;
		unsigned sb = size * 8 - n_bits + i;
		if (db / 8 >= p->len)
			break;
		uint8_t bit = 0x80 >> (db % 8);
		if (value[sb / 8] & (0x80 >> (sb % 8)))
			p->data[db / 8] |= bit;
		else
			p->data[db / 8] &= (uint8_t)~bit;
	}
}

int
sl_pkt_field_write(struct sl_pkt *p, const struct sl_field *f, const uint8_t *v)
{
	uint8_t *d = p->data;
	int o;

	p->state_slot = UINT32_MAX; /* a state key may change: drop the set_state hint */
	switch (f->id) {
	case SL_FIELD_TUNNEL_ID: {
		uint64_t t = 0;
		for (unsigned i = 0; i < 8; i++)
			t = t << 8 | v[i];
		p->tunnel_id = t;
		return 0;
	}
	case SL_FIELD_ETH_DST:
	case SL_FIELD_ETH_SRC:
		if (p->len < 14)
			return -ENOENT;
		memcpy(d + (f->id == SL_FIELD_ETH_SRC ? 6 : 0), v, 6);
		return 0;
	case SL_FIELD_VLAN_VID:
	case SL_FIELD_VLAN_PCP: {
		ensure_l2(p);
		if (p->n_vlans == 0)
			return -ENOENT;
		uint16_t tci = rd16(d + p->vlan_ofs);
		if (f->id == SL_FIELD_VLAN_VID)
			tci = (uint16_t)((tci & 0xf000) | (rd16(v) & 0xfff));
		else
			tci = (uint16_t)((tci & 0x1fff) | (v[0] & 7) << 13);
		d[p->vlan_ofs] = (uint8_t)(tci >> 8);
		d[p->vlan_ofs + 1] = (uint8_t)tci;
		return 0;
	}
	case SL_FIELD_IP_DSCP:
	case SL_FIELD_IP_ECN: {
		bool dscp = f->id == SL_FIELD_IP_DSCP;
		if ((o = ipv4_l3(p)) >= 0) {
			uint8_t tos = d[o + 1];
			tos = dscp ? (uint8_t)((v[0] & 0x3f) << 2 | (tos & 3))
				   : (uint8_t)((tos & 0xfc) | (v[0] & 3));
			d[o + 1] = tos;
			ipv4_csum_recompute(d + o);
			return 0;
		}
		if ((o = ipv6_l3(p)) >= 0) {
			uint8_t tc = (uint8_t)((d[o] & 0xf) << 4 | d[o + 1] >> 4);
			tc = dscp ? (uint8_t)((v[0] & 0x3f) << 2 | (tc & 3))
				  : (uint8_t)((tc & 0xfc) | (v[0] & 3));
			d[o] = (uint8_t)((d[o] & 0xf0) | tc >> 4);
			d[o + 1] = (uint8_t)((d[o + 1] & 0x0f) | (tc & 0xf) << 4);
			return 0;
		}
		return -ENOENT;
	}
	case SL_FIELD_IP_TTL:
		if ((o = ipv4_l3(p)) >= 0) {
			d[o + 8] = v[0];
			ipv4_csum_recompute(d + o);
			return 0;
		}
		if ((o = ipv6_l3(p)) >= 0) {
			d[o + 7] = v[0];
			return 0;
		}
		return -ENOENT;
	case SL_FIELD_IPV4_SRC:
	case SL_FIELD_IPV4_DST:
		if ((o = ipv4_l3(p)) < 0)
			return -ENOENT;
		write_l4_covered(p, o + (f->id == SL_FIELD_IPV4_SRC ? 12 : 16), v, 4, false);
		ipv4_csum_recompute(d + o);
		return 0;
	case SL_FIELD_IPV6_SRC:
	case SL_FIELD_IPV6_DST:
		if ((o = ipv6_l3(p)) < 0)
			return -ENOENT;
		write_l4_covered(p, o + (f->id == SL_FIELD_IPV6_SRC ? 8 : 24), v, 16, false);
		return 0;
	case SL_FIELD_IPV6_FLABEL:
		if ((o = ipv6_l3(p)) < 0)
			return -ENOENT;
		d[o + 1] = (uint8_t)((d[o + 1] & 0xf0) | (v[0] & 0xf));
		d[o + 2] = v[1];
		d[o + 3] = v[2];
		return 0;
	case SL_FIELD_TCP_SRC:
	case SL_FIELD_TCP_DST:
	case SL_FIELD_UDP_SRC:
	case SL_FIELD_UDP_DST:
	case SL_FIELD_SCTP_SRC:
	case SL_FIELD_SCTP_DST: {
		static const uint8_t protos[] = {6, 6, 17, 17, 132, 132};
		unsigned idx = f->id - SL_FIELD_TCP_SRC;
		if ((o = l4_with(p, protos[idx], 4)) < 0)
			return -ENOENT;
		write_l4_covered(p, o + (idx & 1) * 2, v, 2, true);
		if (p->ip_proto == 132)
			sctp_crc_recompute(p, (unsigned)o);
		return 0;
	}
	case SL_FIELD_ICMPV4_TYPE:
	case SL_FIELD_ICMPV4_CODE:
	case SL_FIELD_ICMPV6_TYPE:
	case SL_FIELD_ICMPV6_CODE: {
		bool v4 = f->id == SL_FIELD_ICMPV4_TYPE || f->id == SL_FIELD_ICMPV4_CODE;
		bool code = f->id == SL_FIELD_ICMPV4_CODE || f->id == SL_FIELD_ICMPV6_CODE;
		uint8_t w[2];
		if ((o = l4_with(p, v4 ? 1 : 58, 4)) < 0 || p->eth_type != (v4 ? 0x0800 : 0x86dd))
			return -ENOENT;
		w[0] = code ? d[o] : v[0];
		w[1] = code ? v[0] : d[o + 1];
		write_l4_covered(p, o, w, 2, true);
		return 0;
	}
	case SL_FIELD_IPV6_ND_TARGET:
		if ((o = l4_with(p, 58, 24)) < 0 || p->eth_type != 0x86dd ||
		    (d[o] != 135 && d[o] != 136))
			return -ENOENT;
		write_l4_covered(p, o + 8, v, 16, true);
		return 0;
	case SL_FIELD_IPV6_ND_SLL:
	case SL_FIELD_IPV6_ND_TLL:
		if ((o = nd_lladdr_ofs(p, f->id == SL_FIELD_IPV6_ND_SLL)) < 0)
			return -ENOENT;
		write_l4_covered(p, (unsigned)o, v, 6, true);
		return 0;
	case SL_FIELD_ARP_OP:
	case SL_FIELD_ARP_SHA:
	case SL_FIELD_ARP_SPA:
	case SL_FIELD_ARP_THA:
	case SL_FIELD_ARP_TPA: {
		static const uint8_t ofs[] = {6, 14, 24, 8, 18}; /* op spa tpa sha tha */
		if ((o = arp_l3(p)) < 0)
			return -ENOENT;
		memcpy(d + o + ofs[f->id - SL_FIELD_ARP_OP], v, sl_field_size(f));
		return 0;
	}
	case SL_FIELD_MPLS_LABEL:
	case SL_FIELD_MPLS_TC:
	case SL_FIELD_MPLS_BOS: {
		if ((o = mpls_ofs(p)) < 0)
			return -ENOENT;
		uint32_t w = (uint32_t)d[o] << 24 | (uint32_t)d[o + 1] << 16 |
			     (uint32_t)d[o + 2] << 8 | d[o + 3];
		if (f->id == SL_FIELD_MPLS_LABEL) {
			uint32_t lbl = (uint32_t)(v[0] & 0xf) << 16 | (uint32_t)v[1] << 8 | v[2];
			w = (w & 0xfff) | lbl << 12;
		} else if (f->id == SL_FIELD_MPLS_TC) {
			w = (w & ~0xe00u) | (uint32_t)(v[0] & 7) << 9;
		} else {
			w = (w & ~0x100u) | (uint32_t)(v[0] & 1) << 8;
		}
		put_be(d + o, 4, w);
		return 0;
	}
	case SL_FIELD_PBB_ISID:
		if ((o = itag_ofs(p)) < 0)
			return -ENOENT;
		memcpy(d + o + 1, v, 3);
		return 0;
	case SL_FIELD_RAW:
		write_bits(p, raw_base_ofs(p, f->raw_base), f->raw_bit_off, f->raw_n_bits, v);
		/* Raw bytes may be a length, type or header size the parse state rests on. */
		sl_pkt_reparse(p);
		return 0;
	default:
		return -ENOENT;
	}
}

/*
 * Key layouts.
 */

/*
 * Precompile field @i of @l (at key offset @dst) into l->ops[i].  Each copy op
 * must read exactly what field_read reads: the same bytes under the same
 * conditions, zeros otherwise (test_pkt checks both on random frames).
 */
/* @op copies @n bytes at @src from its base when the frame holds @need bytes from there. */
static void
key_op_copy(struct sl_key_op *op, uint8_t kind, uint16_t eth, uint16_t src, uint8_t n,
	    uint16_t need)
{
	op->kind = kind;
	op->eth = eth;
	op->src = src;
	op->n = n;
	op->need = need;
}

static void
key_op_compile(struct sl_key_layout *l, unsigned i, uint8_t dst)
{
	const struct sl_field *f = &l->fields[i];
	struct sl_key_op *op = &l->ops[i];

	memset(op, 0, sizeof(*op));
	op->dst = dst;
	op->field = (uint8_t)i;
	op->kind = SL_KOP_FIELD;
	switch (f->id) {
	case SL_FIELD_ETH_DST:
		key_op_copy(op, SL_KOP_FRAME, 0, 0, 6, 6);
		return;
	case SL_FIELD_ETH_SRC:
		key_op_copy(op, SL_KOP_FRAME, 0, 6, 6, 12);
		return;
	case SL_FIELD_ETH_TYPE:
		op->kind = SL_KOP_ETH_TYPE;
		l->need_l2 = 1;
		return;
	case SL_FIELD_IP_PROTO:
		op->kind = SL_KOP_IP_PROTO;
		return;
	case SL_FIELD_IN_PORT:
		op->kind = SL_KOP_IN_PORT;
		return;
	case SL_FIELD_VLAN_VID:
		op->kind = SL_KOP_VLAN_VID;
		l->need_l2 = 1;
		return;
	case SL_FIELD_IPV4_SRC:
	case SL_FIELD_IPV4_DST: /* ipv4_l3 */
		key_op_copy(op, SL_KOP_L3_IPV4, 0x0800, f->id == SL_FIELD_IPV4_SRC ? 12 : 16, 4,
			    20);
		l->need_l2 = 1;
		return;
	case SL_FIELD_IPV6_SRC:
	case SL_FIELD_IPV6_DST: /* ipv6_l3 */
		key_op_copy(op, SL_KOP_L3, 0x86dd, f->id == SL_FIELD_IPV6_SRC ? 8 : 24, 16, 40);
		l->need_l2 = 1;
		return;
	case SL_FIELD_TCP_SRC:
	case SL_FIELD_TCP_DST:
	case SL_FIELD_UDP_SRC:
	case SL_FIELD_UDP_DST:
	case SL_FIELD_SCTP_SRC:
	case SL_FIELD_SCTP_DST: { /* l4_with(proto, 4) */
		static const uint8_t protos[] = {6, 6, 17, 17, 132, 132};
		unsigned idx = f->id - SL_FIELD_TCP_SRC;
		key_op_copy(op, SL_KOP_L4_PROTO, 0, (uint16_t)((idx & 1) * 2), 2, 4);
		op->proto = protos[idx];
		return;
	}
	case SL_FIELD_RAW: { /* read_bits on byte boundaries: copy_or_zero from the base */
		if (f->raw_bit_off % 8 != 0 || f->raw_n_bits % 8 != 0)
			return;
		uint16_t src = (uint16_t)(f->raw_bit_off / 8);
		uint8_t n = (uint8_t)(f->raw_n_bits / 8);
		key_op_copy(op,
			    f->raw_base == SL_RAW_BASE_L4   ? SL_KOP_L4
			    : f->raw_base == SL_RAW_BASE_L3 ? SL_KOP_L3
							    : SL_KOP_FRAME,
			    0, src, n, (uint16_t)(src + n));
		if (op->kind == SL_KOP_L3)
			l->need_l2 = 1;
		return;
	}
	default:
		return;
	}
}

/*
 * The ops of layout @l on an IPv4 frame of the common shape (struct
 * sl_key_move): L3 starts at 14, L4 at 34, the Ethertype is 0x0800, no VLAN.
 * An op that reads nothing there (another Ethertype, VLAN vid) gives no move:
 * the key stays zero, as sl_key_extract's generic path leaves it.
 */
static void
key_moves_compile(struct sl_key_layout *l)
{
	unsigned need = 34;

	l->n_moves = 0;
	for (unsigned i = 0; i < l->n_fields; i++) {
		const struct sl_key_op *op = &l->ops[i];
		struct sl_key_move mv = {.dst = op->dst};
		unsigned base;

		switch (op->kind) {
		case SL_KOP_FRAME:
			base = 0;
			break;
		case SL_KOP_L3:
			if (op->eth != 0 && op->eth != 0x0800)
				continue;
			base = 14;
			break;
		case SL_KOP_L3_IPV4:
			base = 14;
			break;
		case SL_KOP_L4:
			base = 34;
			break;
		case SL_KOP_L4_PROTO:
			base = 34;
			mv.proto = op->proto;
			break;
		case SL_KOP_ETH_TYPE:
			mv.src = 12;
			mv.n = 2;
			l->moves[l->n_moves++] = mv;
			continue;
		case SL_KOP_IP_PROTO:
			mv.src = 23;
			mv.n = 1;
			l->moves[l->n_moves++] = mv;
			continue;
		case SL_KOP_VLAN_VID:
			continue;
		case SL_KOP_IN_PORT:
			mv.src = 0xffff;
			l->moves[l->n_moves++] = mv;
			continue;
		default:
			mv.src = op->field;
			l->moves[l->n_moves++] = mv;
			continue;
		}
		mv.src = (uint16_t)(base + op->src);
		mv.n = op->n;
		need = SL_MAX(need, base + op->need);
		l->moves[l->n_moves++] = mv;
	}
	l->moves_need = (uint16_t)need;
}

/* The protocol condition (struct sl_key_word.psh) of the IP protocols a move may require. */
static const uint8_t l4_class[256] = {[6] = 1, [17] = 2, [132] = 3};

/* A register of @size bytes at key offset @dst: the words it goes into. */
static void
key_reg_place(struct sl_key_reg *g, unsigned size, unsigned dst)
{
	unsigned k = dst % 8;

	g->on = 1;
	g->w1 = (uint8_t)(dst - k);
	g->ls = (uint8_t)(8 * k);
	if (k + size > 8) { /* straddles: the rest opens the next word */
		g->w2 = (uint8_t)(g->w1 + 8);
		g->rs = (uint8_t)(64 - 8 * k);
	} else { /* a second OR that adds nothing: 4 bytes >> 32 is 0, 8 bytes >> 0 the same */
		g->w2 = g->w1;
		g->rs = (uint8_t)(size == 8 ? 0 : 32);
	}
}

/*
 * The moves of @l as key words (struct sl_key_word).  Each key byte a move
 * fills comes from frame offset dst + delta; a word's bytes of one delta and
 * one protocol condition are one 8-byte load, placed at ld = 8w + delta when
 * that load fits in [0, moves_need), else clamped there and rotated into
 * place.  Leaves n_words 0 when a move is a generic field read or the
 * extra words would not fit.
 */
static void
key_words_compile(struct sl_key_layout *l)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	int delta[SL_KEY_MAX];
	uint8_t pi[SL_KEY_MAX], filled[SL_KEY_MAX] = {0};
	unsigned nw = l->key_size / 8u, nx = 0, need = l->moves_need;

	for (unsigned k = 0; k < l->n_moves; k++) {
		const struct sl_key_move *mv = &l->moves[k];
		unsigned p = 0;

		if (mv->n == 0) {
			bool md = mv->src != 0xffff && l->fields[mv->src].id == SL_FIELD_METADATA;
			if (mv->src != 0xffff && !md)
				goto none;
			key_reg_place(md ? &l->md : &l->port, md ? 8 : 4, mv->dst);
			continue;
		}
		if (mv->proto != 0) {
			p = l4_class[mv->proto];
			if (p == 0)
				goto none;
			l->cond = 1;
		}
		for (unsigned j = 0; j < mv->n; j++) {
			delta[mv->dst + j] = (int)mv->src - (int)mv->dst;
			pi[mv->dst + j] = (uint8_t)p;
			filled[mv->dst + j] = 1;
		}
	}
	for (unsigned w = 0; w < nw; w++) {
		uint8_t done[8] = {0};
		bool first = true;

		l->words[w] = (struct sl_key_word){.mask = 0};
		for (unsigned j = 0; j < 8; j++) {
			unsigned b = 8 * w + j;
			if (!filled[b] || done[j])
				continue;
			/* Every byte of this word with the same delta and condition: one load. */
			struct sl_key_word c = {.w = (uint8_t)(8 * w),
						.psh = (uint8_t)(63 - pi[b])};
			int want = 8 * (int)w + delta[b], lo, hi;
			unsigned last = j;
			for (unsigned i = j; i < 8; i++) {
				unsigned bi = 8 * w + i;
				if (filled[bi] && !done[i] && delta[bi] == delta[b] &&
				    pi[bi] == pi[b]) {
					c.mask |= UINT64_C(0xff) << (8 * i);
					done[i] = 1;
					last = i;
				}
			}
			/* The load covers frame bytes want + j .. want + last. */
			lo = SL_MAX(0, want + (int)last + 1 - 8);
			hi = SL_MIN(want + (int)j, (int)need - 8);
			int ld = SL_MIN(SL_MAX(want, lo), hi);
			c.ld = (uint16_t)ld;
			c.rot = (uint8_t)((8 * (want - ld)) & 63);
			if (first) {
				l->words[w] = c;
				first = false;
			} else if (nx == SL_KEY_XWORDS_MAX) {
				goto none;
			} else {
				l->words[nw + nx++] = c;
			}
		}
	}
	l->n_words = (uint8_t)nw;
	l->n_xwords = (uint8_t)nx;
	return;
none:
	l->cond = 0;
	l->port.on = l->md.on = 0;
#else
	(void)l;
#endif
}

/*
 * The raw key's mask (sl_key_raw_get): the frame bits a frame_need layout's words
 * load and keep (each word's mask rotated back onto its load), when they
 * all lie in the first 16 bytes (frame_need, the bytes every load may
 * touch, is larger).  A byte of which a bit is read counts
 * whole: comparing more never calls two different keys equal.
 */
static void
key_raw_compile(struct sl_key_layout *l)
{
	uint8_t bytes[16] = {0};

	l->raw16 = 0;
	l->raw_mask[0] = l->raw_mask[1] = 0;
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	return; /* the words are little-endian moves */
#endif
	if (l->frame_need == UINT32_MAX || l->frame_need < 16) /* sl_key_raw_get loads 16 */
		return;
	for (unsigned w = 0; w < l->n_words; w++) {
		const struct sl_key_word *c = &l->words[w];
		unsigned r = c->rot;
		uint64_t m = (c->mask << r) | (c->mask >> (-r & 63)); /* undo key_word's rotation */

		for (unsigned k = 0; k < 8; k++) {
			if ((m >> (8 * k) & 0xff) == 0)
				continue;
			if (c->ld + k >= 16)
				return;
			bytes[c->ld + k] = 0xff;
		}
	}
	memcpy(l->raw_mask, bytes, 16);
	l->raw16 = 1;
}

int
sl_key_layout_init(struct sl_key_layout *l, const struct sl_field *flds, unsigned n)
{
	unsigned ofs = 0;

	memset(l, 0, sizeof(*l));
	for (unsigned i = 0; i < n; i++) {
		const struct sl_field *f = &flds[i];

		if (f->id >= SL_FIELD__MAX)
			return -EINVAL;
		if (f->id == SL_FIELD_RAW &&
		    (f->raw_n_bits == 0 || f->raw_n_bits > SL_RAW_BITS_MAX || f->raw_base > 2))
			return -EINVAL;
		if (sl_key_layout_find(l, f) >= 0)
			continue;
		if (l->n_fields == SL_KEY_FIELDS_MAX || ofs + sl_field_size(f) > SL_KEY_MAX)
			return -E2BIG;
		l->fields[l->n_fields] = *f;
		l->offsets[l->n_fields] = (uint8_t)ofs;
		key_op_compile(l, l->n_fields, (uint8_t)ofs);
		ofs += sl_field_size(f);
		if (f->id == SL_FIELD_RAW
			    ? f->raw_base == SL_RAW_BASE_L4
			    : fields[f->id].layer == SL_LAYER_L4 || f->id == SL_FIELD_IP_PROTO)
			l->need_l4 = 1;
		l->n_fields++;
	}
	l->key_size = (uint16_t)SL_MAX(8u, (ofs + 7) / 8 * 8);
	key_moves_compile(l);
	key_words_compile(l);
	/* A table on the pipeline's registers alone (in_port, metadata): sl_key_extract's first case. */
	l->meta_only = l->n_fields > 0;
	for (unsigned i = 0; i < l->n_fields; i++)
		if (l->fields[i].id != SL_FIELD_IN_PORT && l->fields[i].id != SL_FIELD_METADATA)
			l->meta_only = 0;
	/* A table on MACs (and in_port), as a learning switch's: its second case. */
	l->frame_only = l->n_fields > 0 && !l->meta_only;
	for (unsigned i = 0; i < l->n_fields; i++)
		if (l->ops[i].kind != SL_KOP_FRAME && l->ops[i].kind != SL_KOP_IN_PORT)
			l->frame_only = 0;
	/* sl_key_extract's first case: the words without extras (the common MAC layouts). */
	l->frame_need = l->frame_only && l->n_words && !l->n_xwords ? l->moves_need : UINT32_MAX;
	key_raw_compile(l);
	return 0;
}

int
sl_key_layout_find(const struct sl_key_layout *l, const struct sl_field *f)
{
	for (unsigned i = 0; i < l->n_fields; i++)
		if (sl_field_equal(&l->fields[i], f))
			return (int)i;
	return -1;
}

/*
 * sl_key_extract on a frame of that shape: the layout's moves, for a layout
 * without words (a generic field read among them).
 */
static __attribute__((noinline)) void
key_extract_moves(const struct sl_key_layout *l, struct sl_pkt *p, uint8_t *key)
{
	const uint8_t *d = p->data;
	uint8_t proto = d[23];

	for (unsigned i = 0; i < l->key_size; i += 8)
		memset(key + i, 0, 8);
	for (unsigned k = 0; k < l->n_moves; k++) {
		const struct sl_key_move *mv = &l->moves[k];
		if (sl_likely(mv->n != 0)) {
			if (mv->proto == 0 || mv->proto == proto)
				copy_small(key + mv->dst, d + mv->src, mv->n);
		} else if (mv->src == 0xffff) {
			put_be(key + mv->dst, 4, p->in_port);
		} else {
			ensure_l4(p); /* parsed already unless an action changed the frame */
			field_read(p, &l->fields[mv->src], key + mv->dst);
		}
	}
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/*
 * Word @c of the frame @d: its bytes in place, the others zero.  @ok has bit
 * i set for each protocol condition i the frame meets (bit 0 always).
 */
static SL_ALWAYS_INLINE uint64_t
key_word(const struct sl_key_word *c, const uint8_t *d, uint64_t ok, bool cond)
{
	uint64_t v;
	unsigned r = c->rot;

	memcpy(&v, d + c->ld, 8);
	v = (v >> r) | (v << (-r & 63));
	if (cond) /* its condition's bit to the sign, then all ones or zeros: no branch */
		v &= (uint64_t)((int64_t)(ok << c->psh) >> 63);
	return v & c->mask;
}

/* OR @v into the key word at byte offset @o. */
static SL_ALWAYS_INLINE void
key_word_or(uint8_t *key, unsigned o, uint64_t v)
{
	uint64_t x;

	memcpy(&x, key + o, 8);
	x |= v;
	memcpy(key + o, &x, 8);
}

/* Key word @w: the word move @c[w] stored whole. */
#define KEY_WORD_PUT(w)                                                                            \
	do {                                                                                       \
		uint64_t v_ = key_word(&c[w], d, ok, cond);                                        \
		memcpy(key + 8 * (w), &v_, 8);                                                     \
	} while (0)

/* Extra word @i: ORed into its key word. */
#define KEY_WORD_OR(i) key_word_or(key, c[i].w, key_word(&c[i], d, ok, cond))

/*
 * The word moves (struct sl_key_word): each key word stored whole (the
 * common few straight-line), then the extra words and the registers ORed
 * in.  Constant flags, so each caller's copy has only what it needs:
 * @cond, the layout has protocol conditions; @frame, a frame_need layout
 * (no condition, no extra word, no metadata).
 */
static SL_ALWAYS_INLINE void
key_extract_words(const struct sl_key_layout *l, const struct sl_pkt *p, uint8_t *key, bool cond,
		  bool frame)
{
	const uint8_t *d = p->data;
	const struct sl_key_word *c = l->words;
	unsigned nw = l->n_words, nx;
	/* The conditions met: none (0) and the frame's protocol's. */
	uint64_t ok = cond ? 1u | 1u << l4_class[d[23]] : 1;

	/* Ifs rather than a switch: fewer tests for the common one to three words. */
	if (nw > 2) {
		for (unsigned w = 3; w < nw; w++)
			KEY_WORD_PUT(w);
		KEY_WORD_PUT(2);
	}
	if (nw > 1)
		KEY_WORD_PUT(1);
	KEY_WORD_PUT(0);
	/* The registers before the extra words: the context is not needed after. */
	if (l->port.on) {
		uint64_t v = __builtin_bswap32(p->in_port);
		key_word_or(key, l->port.w1, v << l->port.ls);
		key_word_or(key, l->port.w2, v >> l->port.rs);
	}
	if (frame)
		return;
	if (l->md.on) {
		uint64_t v = __builtin_bswap64(p->metadata);
		key_word_or(key, l->md.w1, v << l->md.ls);
		key_word_or(key, l->md.w2, v >> l->md.rs);
	}
	nx = l->n_xwords;
	c = l->words + l->n_words;
	switch (nx) {
	default:
		for (unsigned i = 4; i < nx; i++)
			KEY_WORD_OR(i);
		/* fallthrough */
	case 4:
		KEY_WORD_OR(3);
		/* fallthrough */
	case 3:
		KEY_WORD_OR(2);
		/* fallthrough */
	case 2:
		KEY_WORD_OR(1);
		/* fallthrough */
	case 1:
		KEY_WORD_OR(0);
		/* fallthrough */
	case 0:
		break;
	}
}
#undef KEY_WORD_PUT
#undef KEY_WORD_OR
#endif

/* The registers alone (meta_only), in layout order. */
static __attribute__((noinline)) void
key_extract_regs(const struct sl_key_layout *l, const struct sl_pkt *p, uint8_t *key)
{
	for (unsigned i = 0; i < l->key_size; i += 8)
		memset(key + i, 0, 8);
	for (unsigned i = 0; i < l->n_fields; i++) {
		if (l->fields[i].id == SL_FIELD_IN_PORT)
			put_be(key + l->offsets[i], 4, p->in_port);
		else
			put_be(key + l->offsets[i], 8, p->metadata);
	}
}

void
sl_key_extract(const struct sl_key_layout *l, struct sl_pkt *p, uint8_t *key)
{
	/*
	 * The moves, which write every key byte (padding and absent fields
	 * must compare equal).  MACs and in_port sit at fixed offsets on any
	 * frame: no parse.
	 */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (p->len >= l->frame_need) {
		key_extract_words(l, p, key, false, true);
		return;
	}
#endif
	/* The other fields on a plain IPv4 frame. */
	if (sl_likely((l->need_l4 || l->need_l2) && sl_pkt_ipv4_plain(p, l->moves_need))) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		if (sl_likely(l->n_words != 0)) {
			if (l->cond)
				key_extract_words(l, p, key, true, false);
			else
				key_extract_words(l, p, key, false, false);
			return;
		}
#endif
		key_extract_moves(l, p, key);
		return;
	}
	/* A frame_only layout the words above do not take (extra words). */
	if (l->frame_only && p->len >= l->moves_need) {
		key_extract_moves(l, p, key);
		return;
	}
	if (l->meta_only) {
		/* No frame byte, no op dispatch. */
		key_extract_regs(l, p, key);
		return;
	}
	sl_key_extract_ops(l, p, key);
}

/* Not inlined into sl_key_extract: its registers would cost the word path a prologue. */
__attribute__((noinline)) void
sl_key_extract_ops(const struct sl_key_layout *l, struct sl_pkt *p, uint8_t *key)
{
	unsigned size = l->key_size, n = l->n_fields;

	for (unsigned i = 0; i < size; i += 8)
		memset(key + i, 0, 8);
	if (l->need_l4)
		ensure_l4(p);
	else if (l->need_l2)
		ensure_l2(p);
	const uint8_t *d = p->data;
	unsigned len = p->len, l3 = p->l3_ofs, l4 = p->l4_ofs, eth = p->eth_type;
	for (unsigned i = 0; i < n; i++) {
		const struct sl_key_op *op = &l->ops[i];
		unsigned base;

		switch (op->kind) {
		case SL_KOP_FRAME:
			base = 0;
			break;
		case SL_KOP_L3: /* with an Ethertype: IPv6 only (ipv6_l3) */
			if (op->eth != 0 && (op->eth != eth || p->ip_end == 0))
				continue;
			base = l3;
			break;
		case SL_KOP_L3_IPV4: /* ipv4_l3 */
			if (eth != 0x0800 || p->ip_end == 0)
				continue;
			base = l3;
			break;
		case SL_KOP_L4:
			base = l4;
			break;
		case SL_KOP_L4_PROTO: /* l4_with: the whole header holds op->need */
			if (!p->l4_ok || p->ip_proto != op->proto)
				continue;
			base = l4;
			break;
		case SL_KOP_ETH_TYPE:
			put_be(key + op->dst, 2, eth);
			continue;
		case SL_KOP_IP_PROTO:
			key[op->dst] = is_ip((uint16_t)eth) ? p->ip_proto : 0;
			continue;
		case SL_KOP_VLAN_VID:
			put_be(key + op->dst, 2,
			       p->n_vlans ? 0x1000 | (rd16(d + p->vlan_ofs) & 0xfff) : 0);
			continue;
		case SL_KOP_IN_PORT:
			put_be(key + op->dst, 4, p->in_port);
			continue;
		default:
			/* field_read inlined on purpose: one switch, no call. */
			field_read(p, &l->fields[op->field], key + op->dst);
			continue;
		}
		if (base + op->need <= len)
			copy_small(key + op->dst, d + base + op->src, op->n);
	}
}
