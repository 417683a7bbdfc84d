/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path: ovs-ofctl flow syntax parser and printer, flow-file loader.
 *
 * The parsers work on spans (pointer + length) into the caller's text and
 * never modify it; a value is copied into a small NUL-terminated buffer only
 * where a libc parser (inet_pton) needs one.  Every error goes through fail(),
 * which records the offending span as the token, so no error can leave the
 * token out by accident.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getline, strncasecmp under -std=c11 */
#endif
#include "flowfile.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Highest table id a flow or declaration may name. */
#define TABLE_ID_MAX (SL_TABLES_MAX - 1)
/* Highest group id (OFPG_MAX). */
#define GROUP_ID_MAX 0xffffff00u
/* Longest logical line (backslash continuations joined) a flow file may hold. */
#define FLOWFILE_LOGICAL_MAX (16 * SL_LINE_MAX)
/* OFPCML_NO_BUFFER: send the whole packet to the controller. */
#define CONTROLLER_MAX_LEN_ALL 0xffff
/* OFPVID_PRESENT. */
#define VID_PRESENT 0x1000

/*
 * Spans and errors.
 */

struct span {
	const char *p;
	size_t n;
};

static struct span
span_of(const char *s)
{
	return (struct span){s, strlen(s)};
}

static bool
span_eq(struct span s, const char *lit)
{
	return s.n == strlen(lit) && memcmp(s.p, lit, s.n) == 0;
}

static bool
span_caseeq(struct span s, const char *lit)
{
	return s.n == strlen(lit) && strncasecmp(s.p, lit, s.n) == 0;
}

static bool
span_starts(struct span s, const char *lit)
{
	size_t n = strlen(lit);

	return s.n >= n && memcmp(s.p, lit, n) == 0;
}

static struct span
span_trim(struct span s)
{
	while (s.n && isspace((unsigned char)s.p[0])) {
		s.p++;
		s.n--;
	}
	while (s.n && isspace((unsigned char)s.p[s.n - 1]))
		s.n--;
	return s;
}

/* Index of the first @c in @s, or -1. */
static long
span_find(struct span s, char c)
{
	const char *q = memchr(s.p, c, s.n);

	return q ? q - s.p : -1;
}

/* Copy @s into @dst as a C string; false when it does not fit. */
static bool
span_copy(char *dst, size_t size, struct span s)
{
	if (s.n >= size)
		return false;
	memcpy(dst, s.p, s.n);
	dst[s.n] = '\0';
	return true;
}

static void
set_token(struct sl_parse_error *err, struct span tok)
{
	size_t max = sizeof(err->token) - 1;

	if (tok.n <= max) {
		memcpy(err->token, tok.p, tok.n);
		err->token[tok.n] = '\0';
	} else {
		/* Keep the start, which names the key or action. */
		memcpy(err->token, tok.p, max - 3);
		memcpy(err->token + max - 3, "...", 4);
	}
}

/* Record an error about @tok and return @rc (a negative errno). */
static int __attribute__((format(printf, 4, 5)))
fail(struct sl_parse_error *err, struct span tok, int rc, const char *fmt, ...)
{
	va_list ap;

	set_token(err, tok);
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return rc;
}

int
sl_parse_error_format(const struct sl_parse_error *e, char *buf, size_t size)
{
	char loc[160] = "";

	if (e->file[0] && e->line)
		snprintf(loc, sizeof(loc), "%s:%u: ", e->file, e->line);
	else if (e->file[0])
		snprintf(loc, sizeof(loc), "%s: ", e->file);
	else if (e->line)
		snprintf(loc, sizeof(loc), "line %u: ", e->line);
	if (e->token[0])
		return snprintf(buf, size, "%s%s (near '%s')", loc, e->msg, e->token);
	return snprintf(buf, size, "%s%s", loc, e->msg);
}

/*
 * Numbers.
 */

/* A decimal or 0x-hex unsigned integer spanning all of @s: 0, -EINVAL, -ERANGE. */
static int
parse_u64(struct span s, uint64_t *out)
{
	uint64_t v = 0;
	unsigned base = 10;
	size_t i = 0;

	if (s.n > 2 && s.p[0] == '0' && (s.p[1] == 'x' || s.p[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == s.n)
		return -EINVAL;
	for (; i < s.n; i++) {
		int c = (unsigned char)s.p[i], d;

		if (isdigit(c))
			d = c - '0';
		else if (base == 16 && isxdigit(c))
			d = tolower(c) - 'a' + 10;
		else
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			return -ERANGE;
		v = v * base + (uint64_t)d;
	}
	*out = v;
	return 0;
}

/* parse_u64 with an upper bound: -ERANGE above @max. */
static int
parse_uint(struct span s, uint64_t max, uint64_t *out)
{
	int rc = parse_u64(s, out);

	if (rc == 0 && *out > max)
		rc = -ERANGE;
	return rc;
}

/*
 * A number right-aligned big-endian in @size bytes: decimal up to 64 bits,
 * or 0x hex of any length.  0, -EINVAL, or -ERANGE when it needs more bytes.
 */
static int
parse_bytes(struct span s, unsigned size, uint8_t *out)
{
	memset(out, 0, size);
	if (s.n > 2 && s.p[0] == '0' && (s.p[1] == 'x' || s.p[1] == 'X')) {
		size_t i = 2, n_digits;

		for (size_t k = 2; k < s.n; k++)
			if (!isxdigit((unsigned char)s.p[k]))
				return -EINVAL;
		while (i < s.n - 1 && s.p[i] == '0')
			i++;
		n_digits = s.n - i;
		if (n_digits > 2 * (size_t)size)
			return -ERANGE;
		for (size_t k = 0; k < n_digits; k++) {
			int c = tolower((unsigned char)s.p[s.n - 1 - k]);
			unsigned d = isdigit(c) ? (unsigned)(c - '0') : (unsigned)(c - 'a' + 10);

			out[size - 1 - k / 2] |= (uint8_t)(k % 2 ? d << 4 : d);
		}
		return 0;
	}

	uint64_t v;
	int rc = parse_u64(s, &v);

	if (rc)
		return rc;
	if (size < 8 && v >> (8 * size))
		return -ERANGE;
	for (unsigned k = 0; k < size && k < 8; k++)
		out[size - 1 - k] = (uint8_t)(v >> (8 * k));
	return 0;
}

/* True when a right-aligned @size-byte number fits in @bits bits. */
static bool
fits_bits(const uint8_t *b, unsigned size, unsigned bits)
{
	unsigned spare = size * 8 - bits;

	return spare == 0 || (b[0] >> (8 - spare)) == 0;
}

static uint64_t
get_be(const uint8_t *b, unsigned size)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < size; i++)
		v = v << 8 | b[i];
	return v;
}

static void
put_be(uint8_t *b, unsigned size, uint64_t v)
{
	for (unsigned i = 0; i < size; i++)
		b[size - 1 - i] = (uint8_t)(v >> (8 * i));
}

/*
 * Fields.
 */

/* How a field's values are written. */
enum vkind {
	VK_DEC,  /* decimal; partial masks in hex */
	VK_HEX,  /* hex */
	VK_MAC,  /* aa:bb:cc:dd:ee:ff */
	VK_IPV4, /* dotted quad, /len */
	VK_IPV6, /* inet_pton, /len */
	VK_PORT, /* OpenFlow port number or reserved name */
	VK_VLAN, /* dl_vlan / vlan_vid, see flowfile.h */
};

static enum vkind
field_vkind(const struct sl_field *f)
{
	switch (f->id) {
	case SL_FIELD_IN_PORT:
		return VK_PORT;
	case SL_FIELD_METADATA:
	case SL_FIELD_TUNNEL_ID:
	case SL_FIELD_IPV6_EXTHDR:
	case SL_FIELD_ETH_TYPE:
	case SL_FIELD_IPV6_FLABEL:
	case SL_FIELD_PBB_ISID:
	case SL_FIELD_RAW:
		return VK_HEX;
	case SL_FIELD_ETH_DST:
	case SL_FIELD_ETH_SRC:
	case SL_FIELD_ARP_SHA:
	case SL_FIELD_ARP_THA:
	case SL_FIELD_IPV6_ND_SLL:
	case SL_FIELD_IPV6_ND_TLL:
		return VK_MAC;
	case SL_FIELD_IPV4_SRC:
	case SL_FIELD_IPV4_DST:
	case SL_FIELD_ARP_SPA:
	case SL_FIELD_ARP_TPA:
		return VK_IPV4;
	case SL_FIELD_IPV6_SRC:
	case SL_FIELD_IPV6_DST:
	case SL_FIELD_IPV6_ND_TARGET:
		return VK_IPV6;
	case SL_FIELD_VLAN_VID:
		return VK_VLAN;
	default:
		return VK_DEC;
	}
}

/* A field as named in the text: vlan_vid and dl_vlan differ in value syntax only. */
struct fref {
	struct sl_field f;
	bool vlan_oxm; /* named vlan_vid: OXM value with OFPVID_PRESENT */
};

static void
full_mask(const struct sl_field *f, uint8_t *mask)
{
	unsigned size = sl_field_size(f);

	memset(mask, 0xff, size);
	mask[0] = (uint8_t)(0xff >> (size * 8 - sl_field_bits(f)));
}

static bool
is_full_mask(const struct sl_field *f, const uint8_t *mask)
{
	uint8_t full[SL_FIELD_SIZE_MAX];

	full_mask(f, full);
	return memcmp(mask, full, sl_field_size(f)) == 0;
}

static bool
is_zero(const uint8_t *b, unsigned size)
{
	for (unsigned i = 0; i < size; i++)
		if (b[i])
			return false;
	return true;
}

/* Prefix length of a mask of @size bytes, or -1 when it is not a prefix. */
static int
prefix_len(const uint8_t *mask, unsigned size)
{
	unsigned len = 0, i = 0;

	while (i < size && mask[i] == 0xff) {
		len += 8;
		i++;
	}
	if (i < size) {
		uint8_t m = mask[i];

		if ((uint8_t)(m | (m - 1)) != 0xff && m != 0)
			return -1; /* m is not of the form 1..10..0 */
		len += (unsigned)__builtin_popcount(m);
		for (i++; i < size; i++)
			if (mask[i])
				return -1;
	}
	return (int)len;
}

static void
prefix_mask(uint8_t *mask, unsigned size, unsigned len)
{
	memset(mask, 0, size);
	for (unsigned i = 0; i < len; i++)
		mask[i / 8] |= (uint8_t)(0x80 >> (i % 8));
}

/* "raw(BASE,OFF,N)". */
static int
parse_raw_ref(struct sl_parse_error *err, struct span name, struct span tok, struct sl_field *f)
{
	static const char *const bases[] = {"pkt", "l3", "l4"};
	struct span in, parts[3];
	uint64_t off, bits;
	long c1, c2;
	int base = -1;

	if (!span_starts(name, "raw(") || name.p[name.n - 1] != ')')
		return fail(err, tok, -EINVAL,
			    "bad raw field: expected raw(BASE,BIT_OFFSET,N_BITS)");
	in = (struct span){name.p + 4, name.n - 5};
	c1 = span_find(in, ',');
	c2 = c1 < 0 ? -1 : span_find((struct span){in.p + c1 + 1, in.n - (size_t)c1 - 1}, ',');
	if (c1 < 0 || c2 < 0)
		return fail(err, tok, -EINVAL,
			    "bad raw field: expected raw(BASE,BIT_OFFSET,N_BITS)");
	parts[0] = (struct span){in.p, (size_t)c1};
	parts[1] = (struct span){in.p + c1 + 1, (size_t)c2};
	parts[2] = (struct span){parts[1].p + c2 + 1, in.n - (size_t)c1 - (size_t)c2 - 2};
	for (int i = 0; i < 3; i++)
		if (span_eq(parts[0], bases[i]))
			base = i;
	if (base < 0)
		return fail(err, tok, -EINVAL, "bad raw field base '%.*s': expected pkt, l3 or l4",
			    (int)parts[0].n, parts[0].p);
	if (parse_uint(parts[1], UINT16_MAX, &off))
		return fail(err, tok, -EINVAL, "bad raw field bit offset '%.*s': expected 0..65535",
			    (int)parts[1].n, parts[1].p);
	if (parse_uint(parts[2], SL_RAW_BITS_MAX, &bits) || bits == 0)
		return fail(err, tok, -EINVAL, "bad raw field width '%.*s': expected 1..%d bits",
			    (int)parts[2].n, parts[2].p, SL_RAW_BITS_MAX);
	memset(f, 0, sizeof(*f));
	f->id = SL_FIELD_RAW;
	f->raw_base = (uint8_t)base;
	f->raw_bit_off = (uint16_t)off;
	f->raw_n_bits = (uint16_t)bits;
	return 0;
}

/*
 * Resolve a field name.  @m is the match parsed so far, used to resolve
 * tp_src/tp_dst; NULL where they are not allowed (table declarations).
 */
static int
resolve_field(struct sl_parse_error *err, struct span name, const struct sl_match *m,
	      struct span tok, struct fref *fr)
{
	char buf[32];
	int id;

	memset(fr, 0, sizeof(*fr));
	if (span_starts(name, "raw("))
		return parse_raw_ref(err, name, tok, &fr->f);
	if (span_eq(name, "tp_src") || span_eq(name, "tp_dst")) {
		bool src = span_eq(name, "tp_src");
		long proto = m ? sl_match_exact_value(m, SL_FIELD_IP_PROTO) : -1;

		if (m == NULL)
			return fail(err, tok, -EINVAL,
				    "%.*s is ambiguous here: use tcp_, udp_ or sctp_%s",
				    (int)name.n, name.p, src ? "src" : "dst");
		if (proto == 6)
			fr->f.id = src ? SL_FIELD_TCP_SRC : SL_FIELD_TCP_DST;
		else if (proto == 17)
			fr->f.id = src ? SL_FIELD_UDP_SRC : SL_FIELD_UDP_DST;
		else if (proto == 132)
			fr->f.id = src ? SL_FIELD_SCTP_SRC : SL_FIELD_SCTP_DST;
		else
			return fail(err, tok, -EINVAL,
				    "%.*s requires tcp, udp or sctp earlier in the match",
				    (int)name.n, name.p);
		return 0;
	}
	if (span_eq(name, "nw_tos"))
		return fail(err, tok, -EINVAL, "nw_tos is not supported: use ip_dscp and nw_ecn");
	if (!span_copy(buf, sizeof(buf), name) || (id = sl_field_by_name(buf)) < 0 ||
	    id == SL_FIELD_RAW)
		return fail(err, tok, -EINVAL, "unknown field '%.*s'", (int)SL_MIN(name.n, 64),
			    name.p);
	fr->f.id = (uint8_t)id;
	fr->vlan_oxm = span_eq(name, "vlan_vid");
	return 0;
}

static int
parse_mac(struct span s, uint8_t *mac)
{
	size_t i = 0;

	for (int k = 0; k < 6; k++) {
		unsigned v = 0, n = 0;

		if (k > 0) {
			if (i >= s.n || s.p[i] != ':')
				return -EINVAL;
			i++;
		}
		while (i < s.n && n < 2 && isxdigit((unsigned char)s.p[i])) {
			int c = tolower((unsigned char)s.p[i++]);

			v = v << 4 | (unsigned)(isdigit(c) ? c - '0' : c - 'a' + 10);
			n++;
		}
		if (n == 0)
			return -EINVAL;
		mac[k] = (uint8_t)v;
	}
	return i == s.n ? 0 : -EINVAL;
}

/* Names of reserved ports accepted in in_port and output. */
static const struct {
	const char *name;
	uint32_t port;
} port_names[] = {
	{"IN_PORT", SL_PORT_IN_PORT}, {"TABLE", SL_PORT_TABLE}, {"NORMAL", SL_PORT_NORMAL},
	{"FLOOD", SL_PORT_FLOOD},     {"ALL", SL_PORT_ALL},     {"CONTROLLER", SL_PORT_CONTROLLER},
	{"LOCAL", SL_PORT_LOCAL},
};

static const char *
port_name(uint32_t port)
{
	for (unsigned i = 0; i < SL_ARRAY_SIZE(port_names); i++)
		if (port_names[i].port == port)
			return port_names[i].name;
	return NULL;
}

/* A port number 1..SL_PORT_MAX_PHYS or a reserved name: 0, -EINVAL. */
static int
parse_port(struct span s, uint32_t *port)
{
	uint64_t v;

	for (unsigned i = 0; i < SL_ARRAY_SIZE(port_names); i++) {
		if (span_caseeq(s, port_names[i].name)) {
			*port = port_names[i].port;
			return 0;
		}
	}
	if (parse_uint(s, SL_PORT_MAX_PHYS, &v) || v == 0)
		return -EINVAL;
	*port = (uint32_t)v;
	return 0;
}

/*
 * Parse "VALUE[/MASK]" for field @fr into @value and @mask (sl_field_size
 * bytes each).  @setf: a set_field value (no mask; dl_vlan=0xffff refused).
 */
static int
parse_value(struct sl_parse_error *err, struct span tok, const struct fref *fr, struct span s,
	    bool setf, uint8_t *value, uint8_t *mask)
{
	const struct sl_field *f = &fr->f;
	unsigned size = sl_field_size(f), bits = sl_field_bits(f);
	char fname[48], buf[INET6_ADDRSTRLEN + 8];
	struct span v = s, mk = {NULL, 0};
	long slash = span_find(s, '/');
	enum vkind kind = field_vkind(f);
	bool has_mask = slash >= 0;
	uint64_t n;
	int rc;

	sl_field_format(f, fname, sizeof(fname));
	if (fr->vlan_oxm)
		snprintf(fname, sizeof(fname), "vlan_vid");
	if (has_mask) {
		v.n = (size_t)slash;
		mk = (struct span){s.p + slash + 1, s.n - (size_t)slash - 1};
		if (setf)
			return fail(err, tok, -EINVAL, "set_field takes no mask");
		if (!sl_field_maskable(f) || (kind == VK_VLAN && !fr->vlan_oxm))
			return fail(err, tok, -EINVAL, "field %s is not maskable%s", fname,
				    kind == VK_VLAN ? " (use vlan_vid=VALUE/MASK)" : "");
		if (mk.n == 0)
			return fail(err, tok, -EINVAL, "missing mask after '/'");
	}
	if (v.n == 0)
		return fail(err, tok, -EINVAL, "missing value for %s", fname);
	memset(value, 0, SL_FIELD_SIZE_MAX);
	full_mask(f, mask);

	switch (kind) {
	case VK_PORT: {
		uint32_t port;

		/* Of the reserved ports only these can be where a packet came in. */
		if (parse_port(v, &port) || (port > SL_PORT_MAX_PHYS && port != SL_PORT_LOCAL &&
					     port != SL_PORT_CONTROLLER))
			return fail(err, tok, -EINVAL,
				    "bad port '%.*s': expected 1..0xffffff00, LOCAL or CONTROLLER",
				    (int)v.n, v.p);
		put_be(value, 4, port);
		return 0;
	}
	case VK_MAC:
		if (parse_mac(v, value))
			return fail(err, tok, -EINVAL, "bad MAC address '%.*s'", (int)v.n, v.p);
		if (has_mask && parse_mac(mk, mask))
			return fail(err, tok, -EINVAL, "bad MAC mask '%.*s'", (int)mk.n, mk.p);
		return 0;
	case VK_IPV4:
	case VK_IPV6: {
		int af = kind == VK_IPV4 ? AF_INET : AF_INET6;
		const char *what = kind == VK_IPV4 ? "IPv4" : "IPv6";

		if (!span_copy(buf, sizeof(buf), v) || inet_pton(af, buf, value) != 1)
			return fail(err, tok, -EINVAL, "bad %s address '%.*s'", what, (int)v.n,
				    v.p);
		if (!has_mask)
			return 0;
		if (span_find(mk, kind == VK_IPV4 ? '.' : ':') >= 0) {
			if (!span_copy(buf, sizeof(buf), mk) || inet_pton(af, buf, mask) != 1)
				return fail(err, tok, -EINVAL, "bad %s mask '%.*s'", what,
					    (int)mk.n, mk.p);
		} else if (parse_uint(mk, bits, &n) == 0) {
			prefix_mask(mask, size, (unsigned)n);
		} else {
			return fail(err, tok, -EINVAL,
				    "bad %s prefix length '%.*s': expected 0..%u", what, (int)mk.n,
				    mk.p, bits);
		}
		return 0;
	}
	case VK_VLAN:
		if (!fr->vlan_oxm) {
			/* dl_vlan: a VID, or 0xffff for "no tag" (ovs-ofctl). */
			rc = parse_u64(v, &n);
			if (rc == 0 && n == 0xffff && !setf)
				n = 0;
			else if (rc == 0 && n <= 0xfff)
				n |= VID_PRESENT;
			else
				return fail(err, tok, -EINVAL,
					    setf ? "bad VLAN id '%.*s': expected 0..4095"
						 : "bad VLAN id '%.*s': expected 0..4095 or 0xffff",
					    (int)v.n, v.p);
			put_be(value, 2, n);
			return 0;
		}
		break; /* vlan_vid: a plain 13-bit number */
	default:
		break;
	}

	rc = parse_bytes(v, size, value);
	if (rc == -EINVAL)
		return fail(err, tok, -EINVAL, "bad number '%.*s' for %s", (int)v.n, v.p, fname);
	if (rc || !fits_bits(value, size, bits))
		return fail(err, tok, -EINVAL, "value '%.*s' too wide for %u-bit field %s",
			    (int)v.n, v.p, bits, fname);
	if (has_mask) {
		rc = parse_bytes(mk, size, mask);
		if (rc == -EINVAL)
			return fail(err, tok, -EINVAL, "bad mask '%.*s' for %s", (int)mk.n, mk.p,
				    fname);
		if (rc || !fits_bits(mask, size, bits))
			return fail(err, tok, -EINVAL, "mask '%.*s' too wide for %u-bit field %s",
				    (int)mk.n, mk.p, bits, fname);
	}
	return 0;
}

/*
 * Prerequisites.
 */

/* "tcp or tcp6", "ip", "arp", ...: what the match needs for a field. */
static void
prereq_desc(const uint16_t *types, unsigned n_types, int proto, char *buf, size_t size)
{
	static const struct {
		int proto;
		const char *v4, *v6;
	} protos[] = {{6, "tcp", "tcp6"},
		      {17, "udp", "udp6"},
		      {132, "sctp", "sctp6"},
		      {1, "icmp", NULL},
		      {58, NULL, "icmp6"}};
	bool v4 = false, v6 = false;

	for (unsigned i = 0; i < n_types; i++) {
		v4 |= types[i] == 0x0800;
		v6 |= types[i] == 0x86dd;
	}
	if (proto >= 0) {
		for (unsigned i = 0; i < SL_ARRAY_SIZE(protos); i++) {
			if (protos[i].proto != proto)
				continue;
			if (v4 && v6 && protos[i].v4 && protos[i].v6)
				snprintf(buf, size, "%s or %s", protos[i].v4, protos[i].v6);
			else
				snprintf(buf, size, "%s", v6 && !v4 ? protos[i].v6 : protos[i].v4);
			return;
		}
		snprintf(buf, size, "nw_proto=%d", proto);
		return;
	}
	if (v4 && v6)
		snprintf(buf, size, "ip or ipv6");
	else if (v4 || v6)
		snprintf(buf, size, "%s", v4 ? "ip" : "ipv6");
	else if (n_types == 1 && types[0] == 0x0806)
		snprintf(buf, size, "arp");
	else if (n_types == 2 && types[0] == 0x8847 && types[1] == 0x8848)
		snprintf(buf, size, "mpls or mplsm");
	else
		snprintf(buf, size, "dl_type=0x%04x", n_types ? types[0] : 0);
}

/* Check that @m holds the eth_type / ip_proto prerequisites of field @f. */
static int
check_prereq(struct sl_parse_error *err, const struct sl_match *m, const struct sl_field *f,
	     const char *what, struct span tok)
{
	uint16_t types[2];
	unsigned n_types;
	int proto;
	long eth;
	bool ok = false;
	char desc[48], fname[48];

	if (f->id == SL_FIELD_RAW)
		return 0; /* protocol-oblivious: no prerequisites */
	sl_field_prereq(f->id, types, &n_types, &proto);
	eth = sl_match_exact_value(m, SL_FIELD_ETH_TYPE);
	for (unsigned i = 0; i < n_types; i++)
		ok |= eth == types[i];
	if ((n_types && !ok) ||
	    (proto >= 0 && sl_match_exact_value(m, SL_FIELD_IP_PROTO) != proto)) {
		prereq_desc(types, n_types, proto, desc, sizeof(desc));
		sl_field_format(f, fname, sizeof(fname));
		return fail(err, tok, -EINVAL, "%s%s requires %s", what, fname, desc);
	}
	return 0;
}

/*
 * Flow parsing.
 */

/* Per-parse state. */
struct parser {
	struct sl_parse_error *err;
	struct sl_flow_spec *fs;
	struct span text;                         /* the whole input, for errors */
	bool filter;                              /* del-flows / dump-flows syntax */
	uint32_t *out_port;                       /* filter: where out_port=P goes, or NULL */
	uint32_t *out_group;                      /* filter: where out_group=G goes, or NULL */
	unsigned seen;                            /* SEEN_* keys already given */
	struct span field_tok[SL_KEY_FIELDS_MAX]; /* token that added each match field */
	struct span apply_tok[SL_ACTIONS_MAX];    /* token of each apply action */
	struct span write_tok[SL_ACTIONS_MAX];    /* token of each write action */
	bool bucket;                              /* a group bucket's actions: no match to check */
	const struct sl_port_names *ports;        /* port names the caller knows, or NULL */
};

enum {
	SEEN_TABLE = 1 << 0,
	SEEN_PRIORITY = 1 << 1,
	SEEN_COOKIE = 1 << 2,
	SEEN_IDLE = 1 << 3,
	SEEN_HARD = 1 << 4,
	SEEN_KIND = 1 << 5,
	SEEN_FIELDS = 1 << 6,
	SEEN_SIZE = 1 << 7,
	SEEN_NAME = 1 << 8,
	SEEN_UPDATE = 1 << 9,
};

static const struct {
	const char *name;
	uint16_t eth_type;
	int proto; /* -1: none */
} shorthands[] = {
	{"tcp", 0x0800, 6},   {"udp", 0x0800, 17},   {"sctp", 0x0800, 132},  {"icmp", 0x0800, 1},
	{"tcp6", 0x86dd, 6},  {"udp6", 0x86dd, 17},  {"sctp6", 0x86dd, 132}, {"icmp6", 0x86dd, 58},
	{"ip", 0x0800, -1},   {"ipv6", 0x86dd, -1},  {"arp", 0x0806, -1},    {"rarp", 0x8035, -1},
	{"mpls", 0x8847, -1}, {"mplsm", 0x8848, -1},
};

static const struct {
	const char *name;
	uint16_t flag;
} flow_flags[] = {
	{"send_flow_rem", SL_FF_SEND_FLOW_REM},
	{"check_overlap", SL_FF_CHECK_OVERLAP},
	{"reset_counts", SL_FF_RESET_COUNTS},
	{"no_packet_counts", SL_FF_NO_PKT_COUNTS},
	{"no_byte_counts", SL_FF_NO_BYT_COUNTS},
	{"low_latency", SL_FF_LOW_LATENCY}, /* Sluice: the fast forwarding path */
};

/*
 * Add a constraint to the match.  An identical repeat is accepted (so "ip"
 * then "dl_type=0x0800" is fine), a different one is a conflict; an all-zero
 * mask is a wildcard and adds nothing.
 */
static int
match_add(struct parser *ps, struct span tok, const struct sl_field *f, const uint8_t *value,
	  const uint8_t *mask)
{
	struct sl_match *m = &ps->fs->match;
	const struct sl_match_field *old = sl_match_get(m, f);
	unsigned size = sl_field_size(f);
	uint8_t v[SL_FIELD_SIZE_MAX], mk[SL_FIELD_SIZE_MAX], full[SL_FIELD_SIZE_MAX];
	char fname[48];
	int rc;

	full_mask(f, full);
	for (unsigned i = 0; i < size; i++) {
		mk[i] = mask[i] & full[i];
		v[i] = value[i] & mk[i];
	}
	sl_field_format(f, fname, sizeof(fname));
	if (old) {
		if (memcmp(old->mask, mk, size) || memcmp(old->value, v, size))
			return fail(ps->err, tok, -EINVAL,
				    "conflicts with an earlier constraint on %s", fname);
		return 0;
	}
	if (is_zero(mk, size))
		return 0;
	rc = sl_match_set(m, f, v, mk);
	if (rc == -E2BIG)
		return fail(ps->err, tok, rc, "too many match fields (max %d)", SL_KEY_FIELDS_MAX);
	if (rc)
		return fail(ps->err, tok, rc, "cannot match on %s", fname);
	ps->field_tok[m->n_fields - 1] = tok;
	return 0;
}

static int
match_add_exact(struct parser *ps, struct span tok, enum sl_field_id id, uint64_t val)
{
	struct sl_field f = {.id = (uint8_t)id};
	uint8_t v[SL_FIELD_SIZE_MAX], mk[SL_FIELD_SIZE_MAX];

	put_be(v, sl_field_size(&f), val);
	full_mask(&f, mk);
	return match_add(ps, tok, &f, v, mk);
}

/*
 * Item scanning: items are separated by commas or white space at
 * parenthesis depth 0.  Returns 1 with the item, 0 at the end, or -EINVAL
 * for unbalanced parentheses.
 */
static int
next_item(struct sl_parse_error *err, const char **pos, struct span *item)
{
	const char *p = *pos;
	int depth = 0;

	while (*p == ',' || isspace((unsigned char)*p))
		p++;
	if (*p == '\0')
		return 0;
	item->p = p;
	for (; *p; p++) {
		if (*p == '(') {
			depth++;
		} else if (*p == ')') {
			if (--depth < 0)
				break;
		} else if (depth == 0 && (*p == ',' || isspace((unsigned char)*p))) {
			break;
		}
	}
	item->n = (size_t)(p - item->p);
	if (depth != 0) {
		if (depth < 0)
			item->n++;
		return fail(err, *item, -EINVAL, "unbalanced parentheses");
	}
	*pos = p;
	return 1;
}

/* Split "key=value" at the first '=' outside parentheses. */
static bool
split_kv(struct span item, struct span *key, struct span *val)
{
	int depth = 0;

	for (size_t i = 0; i < item.n; i++) {
		char c = item.p[i];

		if (c == '(')
			depth++;
		else if (c == ')')
			depth--;
		else if (c == '=' && depth == 0) {
			*key = (struct span){item.p, i};
			*val = (struct span){item.p + i + 1, item.n - i - 1};
			return true;
		}
	}
	*key = item;
	*val = (struct span){item.p + item.n, 0};
	return false;
}

static int
once(struct parser *ps, struct span tok, struct span key, unsigned bit)
{
	if (ps->seen & bit)
		return fail(ps->err, tok, -EINVAL, "duplicate '%.*s'", (int)key.n, key.p);
	ps->seen |= bit;
	return 0;
}

/* A "key=N" with N in 0..max. */
static int
key_uint(struct parser *ps, struct span tok, struct span key, struct span val, uint64_t max,
	 uint64_t *out)
{
	if (parse_uint(val, max, out))
		return fail(ps->err, tok, -EINVAL, "bad %.*s '%.*s': expected 0..%llu", (int)key.n,
			    key.p, (int)val.n, val.p, (unsigned long long)max);
	return 0;
}

/*
 * ovs-ofctl's vlan_tci=TCI[/MASK]: the 802.1Q TCI with 0x1000 meaning "a tag
 * is present" (vlan_tci=0 is an untagged frame).  It becomes OpenFlow 1.3's
 * vlan_vid (the low 13 bits) and vlan_pcp (the top 3, exact or absent; a
 * PCP needs a tag, so it is only taken with the present bit matched as 1).
 */
static int
vlan_tci_item(struct parser *ps, struct span tok, struct span val)
{
	long slash = span_find(val, '/');
	struct span v = val, mk = {NULL, 0};
	uint64_t tci, m = 0xffff;
	uint8_t vv[2], vm[2], pv;
	int rc;

	if (slash >= 0) {
		v.n = (size_t)slash;
		mk = (struct span){val.p + slash + 1, val.n - (size_t)slash - 1};
	}
	if (parse_uint(v, 0xffff, &tci) || (slash >= 0 && parse_uint(mk, 0xffff, &m)))
		return fail(ps->err, tok, -EINVAL, "bad vlan_tci: expected 16-bit TCI[/MASK]");
	tci &= m;
	unsigned pcp_mask = (unsigned)(m >> 13);
	if (pcp_mask != 0 && pcp_mask != 7)
		return fail(
			ps->err, tok, -EINVAL,
			"vlan_tci: the priority bits (0xe000) must be all in or all out of the mask");
	if (pcp_mask && !((m & 0x1000) && (tci & 0x1000)) && (tci >> 13) != 0)
		return fail(ps->err, tok, -EINVAL, "vlan_tci: a priority needs a tag (0x1000)");
	put_be(vv, 2, tci & 0x1fff);
	put_be(vm, 2, m & 0x1fff);
	if ((m & 0x1fff) != 0 &&
	    (rc = match_add(ps, tok, &(struct sl_field){.id = SL_FIELD_VLAN_VID}, vv, vm)))
		return rc;
	if (pcp_mask && (m & 0x1000) && (tci & 0x1000)) {
		uint8_t full = 7;
		pv = (uint8_t)(tci >> 13);
		return match_add(ps, tok, &(struct sl_field){.id = SL_FIELD_VLAN_PCP}, &pv, &full);
	}
	return 0;
}

/* parse_port, then the caller's port names (ovs-ofctl --names) for anything else. */
static int
parse_port_named(const struct parser *ps, struct span s, uint32_t *port)
{
	if (parse_port(s, port) == 0)
		return 0;
	if (ps->ports == NULL || ps->ports->to_number == NULL || s.n == 0)
		return -EINVAL;
	return ps->ports->to_number(ps->ports->arg, s.p, s.n, port) == 0 ? 0 : -EINVAL;
}

/* One match / flow-entry item of a flow (not actions). */
static int
flow_item(struct parser *ps, struct span tok)
{
	struct sl_flow_spec *fs = ps->fs;
	struct span key, val;
	uint8_t value[SL_FIELD_SIZE_MAX], mask[SL_FIELD_SIZE_MAX];
	struct fref fr;
	uint64_t n;
	int rc;

	if (!split_kv(tok, &key, &val)) {
		for (unsigned i = 0; i < SL_ARRAY_SIZE(shorthands); i++) {
			if (!span_eq(key, shorthands[i].name))
				continue;
			rc = match_add_exact(ps, tok, SL_FIELD_ETH_TYPE, shorthands[i].eth_type);
			if (rc == 0 && shorthands[i].proto >= 0)
				rc = match_add_exact(ps, tok, SL_FIELD_IP_PROTO,
						     (uint64_t)shorthands[i].proto);
			return rc;
		}
		for (unsigned i = 0; i < SL_ARRAY_SIZE(flow_flags); i++) {
			if (!span_eq(key, flow_flags[i].name))
				continue;
			if (ps->filter)
				return fail(ps->err, tok, -EINVAL, "flag not allowed in a filter");
			fs->flags |= flow_flags[i].flag;
			return 0;
		}
		if (span_eq(key, "actions"))
			return fail(ps->err, tok, -EINVAL, "expected actions=...");
		if (span_eq(key, "drop") || span_eq(key, "output"))
			return fail(ps->err, tok, -EINVAL, "actions must follow 'actions='");
		if (resolve_field(ps->err, key, &fs->match, tok, &fr) == 0)
			return fail(ps->err, tok, -EINVAL, "missing value for %.*s", (int)key.n,
				    key.p);
		return fail(ps->err, tok, -EINVAL, "unknown keyword '%.*s'", (int)SL_MIN(key.n, 64),
			    key.p);
	}
	if (key.n == 0)
		return fail(ps->err, tok, -EINVAL, "missing key before '='");

	if (span_eq(key, "table")) {
		if ((rc = once(ps, tok, key, SEEN_TABLE)) ||
		    (rc = key_uint(ps, tok, key, val, TABLE_ID_MAX, &n)))
			return rc;
		fs->table_id = (uint8_t)n;
		return 0;
	}
	if (span_eq(key, "priority")) {
		if ((rc = once(ps, tok, key, SEEN_PRIORITY)) ||
		    (rc = key_uint(ps, tok, key, val, UINT16_MAX, &n)))
			return rc;
		fs->priority = (uint16_t)n;
		return 0;
	}
	if (span_eq(key, "idle_timeout") || span_eq(key, "hard_timeout")) {
		bool idle = span_eq(key, "idle_timeout");

		if (ps->filter)
			return fail(ps->err, tok, -EINVAL, "timeouts are not allowed in a filter");
		if ((rc = once(ps, tok, key, idle ? SEEN_IDLE : SEEN_HARD)) ||
		    (rc = key_uint(ps, tok, key, val, UINT16_MAX, &n)))
			return rc;
		if (idle)
			fs->idle_timeout = (uint16_t)n;
		else
			fs->hard_timeout = (uint16_t)n;
		return 0;
	}
	if (span_eq(key, "cookie")) {
		long slash = span_find(val, '/');
		struct span v = val, mk = {NULL, 0};
		uint64_t c, cm = 0;

		if ((rc = once(ps, tok, key, SEEN_COOKIE)))
			return rc;
		if (slash >= 0) {
			v.n = (size_t)slash;
			mk = (struct span){val.p + slash + 1, val.n - (size_t)slash - 1};
		}
		/* ovs-ofctl writes an exact cookie match as V/-1. */
		if (slash >= 0 && span_eq(mk, "-1"))
			mk = span_of("0xffffffffffffffff");
		if (parse_u64(v, &c) || (slash >= 0 && parse_u64(mk, &cm)))
			return fail(ps->err, tok, -EINVAL,
				    "bad cookie: expected a 64-bit VALUE[/MASK]");
		fs->cookie = c;
		fs->cookie_mask = cm;
		return 0;
	}
	if (span_eq(key, "kind") || span_eq(key, "fields") || span_eq(key, "size") ||
	    span_eq(key, "name"))
		return fail(ps->err, tok, -EINVAL, "'%.*s' belongs to a table declaration",
			    (int)key.n, key.p);
	if (span_eq(key, "actions"))
		return fail(ps->err, tok, -EINVAL, "actions are not allowed in a filter");
	if (ps->out_port && span_eq(key, "out_port")) {
		uint32_t port;

		/* Any output port a flow can name; "ANY" restores the default (no filter). */
		if (span_caseeq(val, "ANY")) {
			port = SL_PORT_ANY;
		} else if (parse_port_named(ps, val, &port)) {
			return fail(
				ps->err, tok, -EINVAL,
				"bad out_port '%.*s': expected 1..0xffffff00, a reserved name%s",
				(int)SL_MIN(val.n, 64), val.p,
				ps->ports ? " or a port's name" : "");
		}
		*ps->out_port = port;
		return 0;
	}
	if (ps->out_group && span_eq(key, "out_group")) {
		if (span_caseeq(val, "ANY")) {
			*ps->out_group = SL_GROUP_ID_ANY;
			return 0;
		}
		if ((rc = key_uint(ps, tok, key, val, SL_GROUP_ID_MAX, &n)))
			return rc;
		*ps->out_group = (uint32_t)n;
		return 0;
	}

	if (span_eq(key, "vlan_tci"))
		return vlan_tci_item(ps, tok, val);
	if ((rc = resolve_field(ps->err, key, &fs->match, tok, &fr)))
		return rc;
	/* A port's name becomes its number; parse_value then checks it as any number. */
	char num[16];
	uint32_t named;
	if (field_vkind(&fr.f) == VK_PORT && ps->ports && parse_port(val, &named) != 0 &&
	    parse_port_named(ps, val, &named) == 0) {
		snprintf(num, sizeof(num), "%u", (unsigned)named);
		val = span_of(num);
	} else if (field_vkind(&fr.f) == VK_PORT && ps->ports && span_find(val, '/') < 0 &&
		   parse_port(val, &named) != 0) {
		return fail(ps->err, tok, -EINVAL,
			    "bad port '%.*s': expected 1..0xffffff00, LOCAL, CONTROLLER or a "
			    "port's name",
			    (int)SL_MIN(val.n, 64), val.p);
	}
	if ((rc = parse_value(ps->err, tok, &fr, val, false, value, mask)))
		return rc;
	return match_add(ps, tok, &fr.f, value, mask);
}

/* Check the prerequisites of every match field; the error names its token. */
static int
check_match_prereqs(struct parser *ps)
{
	const struct sl_match *m = &ps->fs->match;
	struct sl_parse_error *err = ps->err;
	int rc, bad;

	for (unsigned i = 0; i < m->n_fields; i++)
		if ((rc = check_prereq(err, m, &m->fields[i].f, "", ps->field_tok[i])))
			return rc;
	/* The full check covers what sl_field_prereq cannot (dl_vlan_pcp, nd_target). */
	bad = sl_match_prereq_check(m, err->msg, sizeof(err->msg));
	if (bad < 0)
		return 0;
	set_token(err, ps->field_tok[bad]);
	return -EINVAL;
}

/*
 * Actions.
 */

/* An action list item split as NAME[:ARG], NAME=ARG or NAME(ARG). */
struct act_item {
	struct span tok; /* the whole item */
	struct span name;
	struct span arg;
	char sep; /* ':', '=', '(' or 0 (no argument) */
};

static int
split_action(struct sl_parse_error *err, struct span tok, struct act_item *it)
{
	size_t i = 0;

	it->tok = tok;
	while (i < tok.n && tok.p[i] != ':' && tok.p[i] != '=' && tok.p[i] != '(')
		i++;
	it->name = (struct span){tok.p, i};
	it->sep = i < tok.n ? tok.p[i] : 0;
	it->arg = (struct span){tok.p + tok.n, 0};
	if (it->sep == '(') {
		if (tok.p[tok.n - 1] != ')')
			return fail(err, tok, -EINVAL, "text after ')'");
		it->arg = (struct span){tok.p + i + 1, tok.n - i - 2};
	} else if (it->sep) {
		it->arg = (struct span){tok.p + i + 1, tok.n - i - 1};
		if (it->arg.n == 0)
			return fail(err, tok, -EINVAL, "missing argument after '%c'", it->sep);
	}
	if (it->name.n == 0)
		return fail(err, tok, -EINVAL, "missing action name");
	return 0;
}

/*
 * Next comma-separated element of an action list (parenthesis-aware),
 * trimmed.  Returns 1, 0 at the end of the list, or -EINVAL.
 */
static int
next_action(struct sl_parse_error *err, struct span *rest, struct span *tok)
{
	int depth = 0;
	size_t i;

	if (rest->p == NULL)
		return 0;
	for (i = 0; i < rest->n; i++) {
		if (rest->p[i] == '(')
			depth++;
		else if (rest->p[i] == ')' && --depth < 0)
			return fail(err, (struct span){rest->p, i + 1}, -EINVAL,
				    "unbalanced parentheses");
		else if (rest->p[i] == ',' && depth == 0)
			break;
	}
	*tok = span_trim((struct span){rest->p, i});
	if (depth)
		return fail(err, *tok, -EINVAL, "unbalanced parentheses");
	if (i < rest->n)
		*rest = (struct span){rest->p + i + 1, rest->n - i - 1};
	else
		*rest = (struct span){NULL, 0}; /* the last element has been returned */
	if (tok->n == 0)
		return fail(err, (struct span){",", 1}, -EINVAL, "empty action in list");
	return 1;
}

static int
need_no_arg(struct sl_parse_error *err, const struct act_item *it)
{
	if (it->sep)
		return fail(err, it->tok, -EINVAL, "%.*s takes no argument", (int)it->name.n,
			    it->name.p);
	return 0;
}

static int
need_arg(struct sl_parse_error *err, const struct act_item *it)
{
	if (it->sep != ':' && it->sep != '=')
		return fail(err, it->tok, -EINVAL, "%.*s needs an argument (%.*s:VALUE)",
			    (int)it->name.n, it->name.p, (int)it->name.n, it->name.p);
	return 0;
}

static int
act_uint(struct sl_parse_error *err, const struct act_item *it, uint64_t max, uint64_t *out)
{
	int rc = need_arg(err, it);

	if (rc == 0 && parse_uint(it->arg, max, out))
		rc = fail(err, it->tok, -EINVAL, "bad %.*s argument '%.*s': expected 0..%llu",
			  (int)it->name.n, it->name.p, (int)it->arg.n, it->arg.p,
			  (unsigned long long)max);
	return rc;
}

/* A set_field action on @fr with value text @val; checks writability and prerequisites. */
static int
make_set_field(struct parser *ps, const struct act_item *it, const struct fref *fr, struct span val,
	       struct sl_action *a)
{
	uint8_t mask[SL_FIELD_SIZE_MAX];
	char fname[48];
	int rc;

	if (fr->f.id != SL_FIELD_RAW && !sl_field_writable(fr->f.id)) {
		sl_field_format(&fr->f, fname, sizeof(fname));
		return fail(ps->err, it->tok, -EINVAL, "field %s is not writable", fname);
	}
	rc = parse_value(ps->err, it->tok, fr, val, true, a->set_field.value, mask);
	/*
	 * Prerequisites: once every action is known (check_set_field_prereqs), as
	 * the actions before may push or pop.  A bucket has no match: a packet
	 * without the field is left alone at run time.
	 */
	a->type = SL_ACT_SET_FIELD;
	a->set_field.f = fr->f;
	return rc;
}

/* Reserved ports that are actions by themselves ("IN_PORT", "flood", ...). */
static bool
bare_port(struct span name, uint32_t *port)
{
	static const char *const bare[] = {"IN_PORT", "ALL",    "FLOOD",
					   "LOCAL",   "NORMAL", "CONTROLLER"};

	for (unsigned i = 0; i < SL_ARRAY_SIZE(bare); i++)
		if (span_caseeq(name, bare[i]))
			return parse_port(name, port) == 0;
	return false;
}

/*
 * set_state:STATE or set_state(STATE[,table=T][,idle_ms=MS][,hard_ms=MS][,rollback=R]):
 * the OpenState action.  Without table= it writes the state table the
 * packet last passed.
 */
static int
parse_set_state(struct sl_parse_error *err, const struct act_item *it, struct sl_action *a)
{
	struct span rest = it->arg, tok;
	bool first = true;
	uint64_t n;
	int rc;

	a->type = SL_ACT_SET_STATE;
	a->set_state.table_id = SL_STATE_TABLE_AUTO;
	if (it->sep == ':' || it->sep == '=')
		return act_uint(err, it, UINT32_MAX, &n)
			       ? -EINVAL
			       : (a->set_state.set.state = (uint32_t)n, 0);
	if (it->sep != '(' || span_trim(rest).n == 0)
		return fail(err, it->tok, -EINVAL,
			    "expected set_state:STATE or set_state(STATE,table=T,idle_ms=MS,"
			    "hard_ms=MS,rollback=R)");
	while ((rc = next_action(err, &rest, &tok)) > 0) {
		struct span key, val;
		uint64_t max = UINT32_MAX;

		if (first) {
			first = false;
			if (parse_uint(tok, UINT32_MAX, &n))
				return fail(err, tok, -EINVAL, "bad state: expected 0..4294967295");
			a->set_state.set.state = (uint32_t)n;
			continue;
		}
		if (!split_kv(tok, &key, &val))
			return fail(err, tok, -EINVAL, "expected KEY=VALUE in set_state(...)");
		if (span_eq(key, "table"))
			max = TABLE_ID_MAX;
		if (parse_uint(val, max, &n))
			return fail(err, tok, -EINVAL, "bad %.*s: expected 0..%llu", (int)key.n,
				    key.p, (unsigned long long)max);
		if (span_eq(key, "table"))
			a->set_state.table_id = (uint8_t)n;
		else if (span_eq(key, "idle_ms"))
			a->set_state.set.idle_ms = (uint32_t)n;
		else if (span_eq(key, "hard_ms"))
			a->set_state.set.hard_ms = (uint32_t)n;
		else if (span_eq(key, "rollback"))
			a->set_state.set.rollback = (uint32_t)n;
		else
			return fail(err, tok, -EINVAL,
				    "unknown set_state key '%.*s': expected table, idle_ms, "
				    "hard_ms or rollback",
				    (int)SL_MIN(key.n, 32), key.p);
	}
	return rc;
}

/* One plain action (not an instruction). */
static int
parse_action(struct parser *ps, const struct act_item *it, struct sl_action *a)
{
	struct sl_parse_error *err = ps->err;
	struct span name = it->name;
	struct fref fr;
	uint64_t n;
	uint32_t port;
	int rc;

	memset(a, 0, sizeof(*a));
	if (span_eq(name, "set_state"))
		return parse_set_state(err, it, a);
	if (it->sep == '(')
		return fail(err, it->tok, -EINVAL, "unexpected '(' after %.*s", (int)name.n,
			    name.p);
	if (isdigit((unsigned char)name.p[0]) && !it->sep) {
		if (parse_port(name, &port))
			return fail(err, it->tok, -EINVAL,
				    "bad output port: expected 1..0xffffff00");
		a->type = SL_ACT_OUTPUT;
		a->output.port = port;
		return 0;
	}
	if (bare_port(name, &port)) {
		a->type = SL_ACT_OUTPUT;
		a->output.port = port;
		if (port != SL_PORT_CONTROLLER)
			return need_no_arg(err, it);
		a->output.max_len = CONTROLLER_MAX_LEN_ALL;
		if (!it->sep)
			return 0;
		if ((rc = act_uint(err, it, UINT16_MAX, &n)))
			return rc;
		a->output.max_len = (uint16_t)n;
		return 0;
	}
	if (span_eq(name, "output")) {
		if ((rc = need_arg(err, it)))
			return rc;
		if (parse_port_named(ps, it->arg, &port) || port == SL_PORT_ANY)
			return fail(err, it->tok, -EINVAL,
				    "bad output port '%.*s': expected 1..0xffffff00, a reserved "
				    "name%s",
				    (int)it->arg.n, it->arg.p,
				    ps->ports ? " or a port's name" : "");
		a->type = SL_ACT_OUTPUT;
		a->output.port = port;
		if (port == SL_PORT_CONTROLLER)
			a->output.max_len = CONTROLLER_MAX_LEN_ALL;
		return 0;
	}
	if (span_eq(name, "drop"))
		return fail(err, it->tok, -EINVAL, "drop must be the only action");
	if (span_eq(name, "set_field")) {
		struct span arg = it->arg, val, fname;
		const char *arrow = NULL;

		if ((rc = need_arg(err, it)))
			return rc;
		for (size_t i = 0; i + 1 < arg.n && arrow == NULL; i++)
			if (arg.p[i] == '-' && arg.p[i + 1] == '>')
				arrow = arg.p + i;
		if (arrow == NULL)
			return fail(err, it->tok, -EINVAL, "set_field needs VALUE->FIELD");
		val = (struct span){arg.p, (size_t)(arrow - arg.p)};
		fname = (struct span){arrow + 2, arg.n - val.n - 2};
		if (fname.n == 0)
			return fail(err, it->tok, -EINVAL, "set_field needs VALUE->FIELD");
		if ((rc = resolve_field(err, fname, &ps->fs->match, it->tok, &fr)))
			return rc;
		return make_set_field(ps, it, &fr, val, a);
	}
	if (span_eq(name, "mod_vlan_vid")) {
		if ((rc = need_arg(err, it)))
			return rc;
		fr = (struct fref){.f = {.id = SL_FIELD_VLAN_VID}};
		return make_set_field(ps, it, &fr, it->arg, a);
	}
	if (span_eq(name, "mod_dl_src") || span_eq(name, "mod_dl_dst") ||
	    span_eq(name, "mod_nw_src") || span_eq(name, "mod_nw_dst")) {
		static const enum sl_field_id ids[] = {SL_FIELD_ETH_SRC, SL_FIELD_ETH_DST,
						       SL_FIELD_IPV4_SRC, SL_FIELD_IPV4_DST};
		unsigned k = (name.p[4] == 'n') * 2 + (name.p[7] == 'd');

		if ((rc = need_arg(err, it)))
			return rc;
		fr = (struct fref){.f = {.id = (uint8_t)ids[k]}};
		return make_set_field(ps, it, &fr, it->arg, a);
	}
	if (span_eq(name, "mod_tp_src") || span_eq(name, "mod_tp_dst")) {
		bool src = span_eq(name, "mod_tp_src");
		long proto = sl_match_exact_value(&ps->fs->match, SL_FIELD_IP_PROTO);

		if ((rc = need_arg(err, it)))
			return rc;
		fr = (struct fref){{0}};
		if (proto == 6)
			fr.f.id = src ? SL_FIELD_TCP_SRC : SL_FIELD_TCP_DST;
		else if (proto == 17)
			fr.f.id = src ? SL_FIELD_UDP_SRC : SL_FIELD_UDP_DST;
		else if (proto == 132)
			fr.f.id = src ? SL_FIELD_SCTP_SRC : SL_FIELD_SCTP_DST;
		else
			return fail(err, it->tok, -EINVAL,
				    "%.*s requires tcp, udp or sctp in the match", (int)name.n,
				    name.p);
		return make_set_field(ps, it, &fr, it->arg, a);
	}
	if (span_eq(name, "push_vlan")) {
		if ((rc = act_uint(err, it, UINT16_MAX, &n)))
			return rc;
		if (n != 0x8100 && n != 0x88a8)
			return fail(err, it->tok, -EINVAL, "push_vlan takes 0x8100 or 0x88a8");
		a->type = SL_ACT_PUSH_VLAN;
		a->ethertype = (uint16_t)n;
		return 0;
	}
	if (span_eq(name, "pop_vlan") || span_eq(name, "strip_vlan")) {
		a->type = SL_ACT_POP_VLAN;
		return need_no_arg(err, it);
	}
	if (span_eq(name, "push_mpls") || span_eq(name, "pop_mpls")) {
		if ((rc = act_uint(err, it, UINT16_MAX, &n)))
			return rc;
		a->type = span_eq(name, "push_mpls") ? SL_ACT_PUSH_MPLS : SL_ACT_POP_MPLS;
		if (a->type == SL_ACT_PUSH_MPLS && n != 0x8847 && n != 0x8848)
			return fail(err, it->tok, -EINVAL, "push_mpls takes 0x8847 or 0x8848");
		a->ethertype = (uint16_t)n;
		return 0;
	}
	if (span_eq(name, "push_pbb")) {
		if ((rc = act_uint(err, it, UINT16_MAX, &n)))
			return rc;
		if (n != 0x88e7)
			return fail(err, it->tok, -EINVAL, "push_pbb takes 0x88e7");
		a->type = SL_ACT_PUSH_PBB;
		a->ethertype = (uint16_t)n;
		return 0;
	}
	if (span_eq(name, "pop_pbb")) {
		a->type = SL_ACT_POP_PBB;
		return need_no_arg(err, it);
	}
	if (span_eq(name, "dec_mpls_ttl")) {
		a->type = SL_ACT_DEC_MPLS_TTL;
		return need_no_arg(err, it);
	}
	if (span_eq(name, "set_mpls_ttl")) {
		if ((rc = act_uint(err, it, UINT8_MAX, &n)))
			return rc;
		a->type = SL_ACT_SET_MPLS_TTL;
		a->ttl = (uint8_t)n;
		return 0;
	}
	if (span_eq(name, "dec_ttl")) {
		a->type = SL_ACT_DEC_NW_TTL;
		return need_no_arg(err, it);
	}
	if (span_eq(name, "copy_ttl_out") || span_eq(name, "copy_ttl_in")) {
		a->type = span_eq(name, "copy_ttl_in") ? SL_ACT_COPY_TTL_IN : SL_ACT_COPY_TTL_OUT;
		return need_no_arg(err, it);
	}
	if (span_eq(name, "mod_nw_ttl") || span_eq(name, "set_nw_ttl") ||
	    span_eq(name, "set_ttl")) {
		if ((rc = act_uint(err, it, UINT8_MAX, &n)))
			return rc;
		a->type = SL_ACT_SET_NW_TTL;
		a->ttl = (uint8_t)n;
		return 0;
	}
	if (span_eq(name, "group")) {
		if ((rc = act_uint(err, it, GROUP_ID_MAX, &n)))
			return rc;
		a->type = SL_ACT_GROUP;
		a->group_id = (uint32_t)n;
		return 0;
	}
	if (span_eq(name, "set_queue")) {
		if ((rc = act_uint(err, it, UINT32_MAX, &n)))
			return rc;
		a->type = SL_ACT_SET_QUEUE;
		a->queue_id = (uint32_t)n;
		return 0;
	}
	if (span_eq(name, "goto_table") || span_eq(name, "write_actions") ||
	    span_eq(name, "write_metadata") || span_eq(name, "clear_actions"))
		return fail(err, it->tok, -EINVAL, "instruction %.*s not allowed here", (int)name.n,
			    name.p);
	return fail(err, it->tok, -EINVAL, "unknown action '%.*s'", (int)SL_MIN(name.n, 64),
		    name.p);
}

static int
append_action(struct parser *ps, struct span tok, struct sl_action *list, uint8_t *n,
	      const struct sl_action *a)
{
	if (*n >= SL_ACTIONS_MAX)
		return fail(ps->err, tok, -E2BIG, "too many actions (max %d)", SL_ACTIONS_MAX);
	list[(*n)++] = *a;
	return 0;
}

static int
parse_write_actions(struct parser *ps, const struct act_item *it)
{
	struct sl_instructions *in = &ps->fs->insns;
	struct span rest = it->arg, tok;
	struct act_item sub;
	struct sl_action a;
	int rc;

	if (it->sep != '(')
		return fail(ps->err, it->tok, -EINVAL, "expected write_actions(ACTION,...)");
	in->has_write = true;
	if (span_trim(rest).n == 0)
		return 0;
	while ((rc = next_action(ps->err, &rest, &tok)) > 0) {
		if ((rc = split_action(ps->err, tok, &sub)) || (rc = parse_action(ps, &sub, &a)))
			return rc;
		for (unsigned i = 0; i < in->n_write; i++)
			if (sl_action_same_set_slot(&in->write[i], &a))
				return fail(ps->err, tok, -EINVAL,
					    "the action set already has this kind of action");
		if ((rc = append_action(ps, tok, in->write, &in->n_write, &a)))
			return rc;
		ps->write_tok[in->n_write - 1] = tok;
	}
	return rc;
}

enum {
	INSN_CLEAR = 1 << 0,
	INSN_WRITE = 1 << 1,
	INSN_METADATA = 1 << 2,
	INSN_GOTO = 1 << 3,
};

/*
 * set_field prerequisites, checked as Open vSwitch checks them: against the
 * match as the actions before each set_field leave the packet
 * (sl_actions_prereq_check: a push_mpls makes it MPLS, a pop_mpls what it
 * names).  The error names the set_field's token.
 */
static int
check_set_field_prereqs(struct parser *ps)
{
	const struct sl_instructions *in = &ps->fs->insns;
	int bad = sl_actions_prereq_check(&ps->fs->match, in);
	const struct sl_action *a;
	struct span tok;
	char fname[48];
	int rc;

	if (bad < 0)
		return 0;
	a = bad < in->n_apply ? &in->apply[bad] : &in->write[bad - in->n_apply];
	tok = bad < in->n_apply ? ps->apply_tok[bad] : ps->write_tok[bad - in->n_apply];
	rc = check_prereq(ps->err, &ps->fs->match, &a->set_field.f, "set_field on ", tok);
	if (rc != 0)
		return rc;
	sl_field_format(&a->set_field.f, fname, sizeof(fname));
	return fail(ps->err, tok, -EINVAL,
		    "set_field on %s: a push or pop before it leaves a packet without that field",
		    fname);
}

static int
parse_actions(struct parser *ps, struct span list)
{
	struct sl_instructions *in = &ps->fs->insns;
	struct sl_parse_error *err = ps->err;
	struct span rest, tok;
	struct act_item it;
	struct sl_action a;
	unsigned insns = 0, bit;
	uint64_t n;
	int rc;

	list = span_trim(list);
	if (list.n == 0 || span_eq(list, "drop"))
		return 0;
	rest = list;
	while ((rc = next_action(err, &rest, &tok)) > 0) {
		if ((rc = split_action(err, tok, &it)))
			return rc;
		/* The meter instruction runs first, so it is written first (as ovs-ofctl wants). */
		if (span_eq(it.name, "meter")) {
			if (in->meter_id != 0)
				return fail(err, tok, -EINVAL, "duplicate instruction meter");
			if (in->n_apply || in->has_apply || insns)
				return fail(err, tok, -EINVAL, "meter must come first");
			if ((rc = act_uint(err, &it, SL_METER_ID_MAX, &n)))
				return rc;
			if (n == 0)
				return fail(err, tok, -EINVAL, "bad meter: expected 1..0xffff0000");
			in->meter_id = (uint32_t)n;
			continue;
		}
		bit = span_eq(it.name, "clear_actions")    ? INSN_CLEAR
		      : span_eq(it.name, "write_actions")  ? INSN_WRITE
		      : span_eq(it.name, "write_metadata") ? INSN_METADATA
		      : span_eq(it.name, "goto_table")     ? INSN_GOTO
							   : 0;
		if (bit == 0) {
			if (insns)
				return fail(err, tok, -EINVAL,
					    "actions must come before instructions");
			if ((rc = parse_action(ps, &it, &a)) ||
			    (rc = append_action(ps, tok, in->apply, &in->n_apply, &a)))
				return rc;
			ps->apply_tok[in->n_apply - 1] = tok;
			in->has_apply = true;
			continue;
		}
		if (insns & bit)
			return fail(err, tok, -EINVAL, "duplicate instruction %.*s", (int)it.name.n,
				    it.name.p);
		insns |= bit;
		switch (bit) {
		case INSN_CLEAR:
			if ((rc = need_no_arg(err, &it)))
				return rc;
			in->clear = true;
			break;
		case INSN_WRITE:
			if ((rc = parse_write_actions(ps, &it)))
				return rc;
			break;
		case INSN_METADATA: {
			long slash;
			struct span v, mk;
			uint64_t md, mm = UINT64_MAX;

			if ((rc = need_arg(err, &it)))
				return rc;
			slash = span_find(it.arg, '/');
			v = it.arg;
			if (slash >= 0) {
				v.n = (size_t)slash;
				mk = (struct span){it.arg.p + slash + 1,
						   it.arg.n - (size_t)slash - 1};
			}
			if (parse_u64(v, &md) || (slash >= 0 && parse_u64(mk, &mm)))
				return fail(err, tok, -EINVAL,
					    "bad write_metadata: expected a 64-bit VALUE[/MASK]");
			in->has_metadata = true;
			in->metadata = md & mm;
			in->metadata_mask = mm;
			break;
		}
		case INSN_GOTO:
			if ((rc = act_uint(err, &it, TABLE_ID_MAX, &n)))
				return rc;
			if (n <= ps->fs->table_id)
				return fail(err, tok, -EINVAL,
					    "goto_table must go forward: %llu is not after "
					    "table %u",
					    (unsigned long long)n, ps->fs->table_id);
			in->goto_table = (int16_t)n;
			break;
		}
	}
	return rc;
}

static int
flow_parse(const char *text, const struct sl_port_names *ports, struct sl_flow_spec *fs,
	   bool filter, uint32_t *out_port, uint32_t *out_group, struct sl_parse_error *err)
{
	struct sl_parse_error dummy;
	struct parser ps;
	struct span item, actions = {NULL, 0};
	const char *pos = text;
	int rc = 0;

	if (err == NULL)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	memset(&ps, 0, sizeof(ps));
	ps.err = err;
	ps.fs = fs;
	ps.filter = filter;
	ps.out_port = out_port;
	ps.out_group = out_group;
	ps.ports = ports;
	if (out_port)
		*out_port = SL_PORT_ANY;
	if (out_group)
		*out_group = SL_GROUP_ID_ANY;
	ps.text = span_trim(span_of(text));
	sl_flow_spec_init(fs);
	if (filter)
		fs->table_id = 0xff; /* all tables */

	for (;;) {
		/* "actions=" takes the rest of the line, whatever it holds. */
		while (*pos == ',' || isspace((unsigned char)*pos))
			pos++;
		if (strncmp(pos, "actions=", 8) == 0 && !filter) {
			actions = span_of(pos + 8);
			break;
		}
		if ((rc = next_item(err, &pos, &item)) <= 0)
			break;
		if ((rc = flow_item(&ps, item)))
			return rc;
	}
	if (rc < 0)
		return rc;
	if (!filter && actions.p == NULL)
		return fail(err, ps.text, -EINVAL, "missing actions=");
	if ((rc = check_match_prereqs(&ps)))
		return rc;
	if (actions.p && (rc = parse_actions(&ps, actions)) == 0)
		rc = check_set_field_prereqs(&ps);
	return rc;
}

int
sl_flow_parse(const char *text, struct sl_flow_spec *fs, struct sl_parse_error *err)
{
	return flow_parse(text, NULL, fs, false, NULL, NULL, err);
}

int
sl_flow_parse_names(const char *text, const struct sl_port_names *pn, struct sl_flow_spec *fs,
		    struct sl_parse_error *err)
{
	return flow_parse(text, pn, fs, false, NULL, NULL, err);
}

int
sl_flow_parse_filter(const char *text, struct sl_flow_spec *fs, struct sl_parse_error *err)
{
	return flow_parse(text, NULL, fs, true, NULL, NULL, err);
}

int
sl_flow_parse_filter_out(const char *text, struct sl_flow_spec *fs, uint32_t *out_port,
			 uint32_t *out_group, struct sl_parse_error *err)
{
	return flow_parse(text, NULL, fs, true, out_port, out_group, err);
}

int
sl_flow_parse_filter_names(const char *text, const struct sl_port_names *pn,
			   struct sl_flow_spec *fs, uint32_t *out_port, uint32_t *out_group,
			   struct sl_parse_error *err)
{
	return flow_parse(text, pn, fs, true, out_port, out_group, err);
}

/*
 * Groups (ovs-ofctl add-groups syntax).
 */

static const struct {
	const char *name;
	uint8_t type;
} group_types[] = {
	{"all", SL_GROUP_ALL}, {"select", SL_GROUP_SELECT},    {"indirect", SL_GROUP_INDIRECT},
	{"ff", SL_GROUP_FF},   {"fast_failover", SL_GROUP_FF},
};

/* Where the next "bucket=" item of @s starts (at an item boundary, outside parentheses), or NULL. */
static const char *
find_bucket(struct span s)
{
	int depth = 0;

	for (size_t i = 0; i + 7 <= s.n; i++) {
		char c = s.p[i];
		if (c == '(')
			depth++;
		else if (c == ')')
			depth--;
		else if (depth == 0 &&
			 (i == 0 || s.p[i - 1] == ',' || isspace((unsigned char)s.p[i - 1])) &&
			 strncmp(s.p + i, "bucket=", 7) == 0)
			return s.p + i;
	}
	return NULL;
}

/* One bucket: "[weight:W,][watch_port:P,][watch_group:G,][actions=]A,A...". */
static int
bucket_parse(struct parser *ps, struct span body, uint8_t type, struct sl_bucket_spec *b)
{
	struct span rest = span_trim(body), tok;
	bool in_actions = false;
	struct act_item it;
	struct sl_action a;
	uint64_t n;
	int rc;

	b->weight = type == SL_GROUP_SELECT ? 1 : 0; /* ovs-ofctl's default weight */
	b->watch_port = SL_PORT_ANY;
	b->watch_group = SL_GROUP_ID_ANY;
	while (rest.n > 0 &&
	       (rest.p[rest.n - 1] == ',' || isspace((unsigned char)rest.p[rest.n - 1])))
		rest.n--;
	if (rest.n == 0)
		return 0; /* no actions: the bucket drops */
	while ((rc = next_action(ps->err, &rest, &tok)) > 0) {
		if (!in_actions && span_starts(tok, "actions=")) {
			in_actions = true;
			tok = span_trim((struct span){tok.p + 8, tok.n - 8});
			if (tok.n == 0 || span_eq(tok, "drop"))
				continue;
		}
		if ((rc = split_action(ps->err, tok, &it)))
			return rc;
		if (!in_actions && it.sep == ':' && span_eq(it.name, "weight")) {
			if ((rc = act_uint(ps->err, &it, UINT16_MAX, &n)))
				return rc;
			b->weight = (uint16_t)n;
			continue;
		}
		if (!in_actions && it.sep == ':' && span_eq(it.name, "watch_port")) {
			uint32_t port;
			if (parse_port_named(ps, it.arg, &port))
				return fail(ps->err, tok, -EINVAL,
					    "bad watch_port: expected 1..0xffffff00, a reserved "
					    "name%s",
					    ps->ports ? " or a port's name" : "");
			b->watch_port = port;
			continue;
		}
		if (!in_actions && it.sep == ':' && span_eq(it.name, "watch_group")) {
			if ((rc = act_uint(ps->err, &it, GROUP_ID_MAX, &n)))
				return rc;
			b->watch_group = (uint32_t)n;
			continue;
		}
		if (span_eq(it.name, "bucket_id"))
			return fail(ps->err, tok, -EINVAL,
				    "bucket_id needs OpenFlow 1.5 (not supported)");
		in_actions = true; /* bucket parameters come before the actions */
		if ((rc = parse_action(ps, &it, &a)) ||
		    (rc = append_action(ps, tok, b->actions, &b->n_actions, &a)))
			return rc;
	}
	return rc;
}

int
sl_group_parse(const char *text, struct sl_group_spec *gs, struct sl_parse_error *err)
{
	return sl_group_parse_names(text, NULL, gs, err);
}

int
sl_group_parse_names(const char *text, const struct sl_port_names *pn, struct sl_group_spec *gs,
		     struct sl_parse_error *err)
{
	struct sl_parse_error dummy;
	struct sl_flow_spec scratch; /* parse_action's context: an empty match */
	struct parser ps;
	struct span all, head, rest, tok, key, val;
	const char *at;
	uint64_t n;
	bool have_id = false, have_type = false;
	int rc = 0;

	if (err == NULL)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	memset(&ps, 0, sizeof(ps));
	sl_flow_spec_init(&scratch);
	ps.err = err;
	ps.fs = &scratch;
	ps.bucket = true;
	ps.ports = pn;
	memset(gs, 0, offsetof(struct sl_group_spec, buckets));
	all = span_trim(span_of(text));
	ps.text = all;
	at = find_bucket(all);
	head = (struct span){all.p, at != NULL ? (size_t)(at - all.p) : all.n};
	while (head.n > 0 &&
	       (head.p[head.n - 1] == ',' || isspace((unsigned char)head.p[head.n - 1])))
		head.n--;
	rest = head;
	while (rest.n > 0 && (rc = next_action(err, &rest, &tok)) > 0) {
		split_kv(tok, &key, &val);
		if (span_eq(key, "group_id")) {
			if (have_id)
				return fail(err, tok, -EINVAL, "duplicate 'group_id'");
			if (parse_uint(val, GROUP_ID_MAX, &n))
				return fail(err, tok, -EINVAL,
					    "bad group_id: expected 0..0xffffff00");
			gs->group_id = (uint32_t)n;
			have_id = true;
		} else if (span_eq(key, "type")) {
			unsigned i;
			if (have_type)
				return fail(err, tok, -EINVAL, "duplicate 'type'");
			for (i = 0; i < SL_ARRAY_SIZE(group_types); i++)
				if (span_eq(val, group_types[i].name))
					break;
			if (i == SL_ARRAY_SIZE(group_types))
				return fail(err, tok, -EINVAL,
					    "bad group type: expected all, select, indirect or ff");
			gs->type = group_types[i].type;
			have_type = true;
		} else {
			return fail(err, tok, -EINVAL,
				    "unknown group item: expected group_id=, type= or bucket=");
		}
	}
	if (rc < 0)
		return rc;
	if (!have_id)
		return fail(err, all, -EINVAL, "missing group_id=");
	if (!have_type)
		return fail(err, all, -EINVAL, "missing type= (all, select, indirect or ff)");
	while (at != NULL) {
		struct span after = {at + 7, all.n - (size_t)(at + 7 - all.p)};
		const char *next = find_bucket(after);
		struct span body = {after.p, next != NULL ? (size_t)(next - after.p) : after.n};

		if (gs->n_buckets == SL_GROUP_BUCKETS_MAX)
			return fail(err, (struct span){at, 7}, -E2BIG, "too many buckets (max %d)",
				    SL_GROUP_BUCKETS_MAX);
		memset(&gs->buckets[gs->n_buckets], 0, sizeof(gs->buckets[0]));
		if ((rc = bucket_parse(&ps, body, gs->type, &gs->buckets[gs->n_buckets])))
			return rc;
		gs->n_buckets++;
		at = next;
	}
	return 0;
}

/* Meter flags as ovs-ofctl spells them. */
static const struct {
	const char *name;
	uint16_t flag;
} meter_flags[] = {
	{"kbps", SL_METER_KBPS},
	{"pktps", SL_METER_PKTPS},
	{"burst", SL_METER_BURST},
	{"stats", SL_METER_STATS},
};

/* Next word of a meter: separated by commas and/or blanks.  False at the end. */
static bool
next_word(struct span *rest, struct span *tok)
{
	size_t i = 0, j;

	while (i < rest->n && (rest->p[i] == ',' || isspace((unsigned char)rest->p[i])))
		i++;
	for (j = i; j < rest->n && rest->p[j] != ',' && !isspace((unsigned char)rest->p[j]); j++)
		;
	*tok = (struct span){rest->p + i, j - i};
	*rest = (struct span){rest->p + j, rest->n - j};
	return tok->n > 0;
}

int
sl_meter_parse(const char *text, struct sl_meter_spec *ms, struct sl_parse_error *err)
{
	struct sl_parse_error dummy;
	struct span all, rest, tok, key, val;
	struct sl_meter_band_spec *band = NULL;
	bool have_id = false, in_bands = false;
	uint64_t n;

	if (err == NULL)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	memset(ms, 0, sizeof(*ms));
	all = span_trim(span_of(text));
	rest = all;
	while (next_word(&rest, &tok)) {
		split_kv(tok, &key, &val);
		if (span_eq(key, "bands")) {
			if (in_bands)
				return fail(err, tok, -EINVAL, "duplicate 'bands='");
			in_bands = true;
			if (val.n == 0)
				continue;
			/* "bands=type=drop": the first band's type follows. */
			tok = val;
			split_kv(tok, &key, &val);
		}
		if (!in_bands) {
			unsigned i;
			if (span_eq(key, "meter")) {
				if (have_id)
					return fail(err, tok, -EINVAL, "duplicate 'meter'");
				if (parse_uint(val, SL_METER_ID_MAX, &n) || n == 0)
					return fail(err, tok, -EINVAL,
						    "bad meter id: expected 1..0xffff0000");
				ms->meter_id = (uint32_t)n;
				have_id = true;
				continue;
			}
			for (i = 0; i < SL_ARRAY_SIZE(meter_flags); i++)
				if (span_eq(tok, meter_flags[i].name))
					break;
			if (i == SL_ARRAY_SIZE(meter_flags))
				return fail(err, tok, -EINVAL,
					    "unknown meter item: expected meter=, kbps, pktps, "
					    "burst, stats or bands=");
			ms->flags |= meter_flags[i].flag;
			continue;
		}
		if (span_eq(key, "type")) {
			if (ms->n_bands == SL_METER_BANDS_MAX)
				return fail(err, tok, -E2BIG, "too many bands (max %d)",
					    SL_METER_BANDS_MAX);
			band = &ms->bands[ms->n_bands++];
			if (span_eq(val, "drop"))
				band->type = SL_BAND_DROP;
			else if (span_eq(val, "dscp_remark"))
				band->type = SL_BAND_DSCP_REMARK;
			else
				return fail(err, tok, -EINVAL,
					    "bad band type: expected drop or dscp_remark");
			continue;
		}
		if (band == NULL)
			return fail(err, tok, -EINVAL, "a band starts with type=");
		if (span_eq(key, "rate")) {
			if (parse_uint(val, UINT32_MAX, &n) || n == 0)
				return fail(err, tok, -EINVAL, "bad rate: expected 1..4294967295");
			band->rate = (uint32_t)n;
		} else if (span_eq(key, "burst_size")) {
			if (parse_uint(val, UINT32_MAX, &n))
				return fail(err, tok, -EINVAL,
					    "bad burst_size: expected 0..4294967295");
			band->burst = (uint32_t)n;
		} else if (span_eq(key, "prec_level")) {
			if (band->type != SL_BAND_DSCP_REMARK)
				return fail(err, tok, -EINVAL,
					    "prec_level is for dscp_remark bands");
			if (parse_uint(val, 3, &n) || n == 0)
				return fail(err, tok, -EINVAL, "bad prec_level: expected 1..3");
			band->prec_level = (uint8_t)n;
		} else {
			return fail(err, tok, -EINVAL,
				    "unknown band item: expected type=, rate=, burst_size= or "
				    "prec_level=");
		}
	}
	if (!have_id)
		return fail(err, all, -EINVAL, "missing meter=");
	if (!(ms->flags & (SL_METER_KBPS | SL_METER_PKTPS)))
		ms->flags |= SL_METER_KBPS; /* ovs-ofctl's default */
	if ((ms->flags & SL_METER_KBPS) && (ms->flags & SL_METER_PKTPS))
		return fail(err, all, -EINVAL, "kbps and pktps exclude each other");
	for (unsigned b = 0; b < ms->n_bands; b++) {
		if (ms->bands[b].rate == 0)
			return fail(err, all, -EINVAL, "band %u has no rate=", b + 1);
		if (ms->bands[b].type == SL_BAND_DSCP_REMARK && ms->bands[b].prec_level == 0)
			ms->bands[b].prec_level = 1; /* ovs-ofctl's default */
	}
	return 0;
}

int
sl_state_line_parse(const char *text, uint8_t *table_id, struct sl_match *key,
		    struct sl_state_set *set, struct sl_parse_error *err)
{
	static __thread struct sl_flow_spec fs; /* about 5 kB: off the stack */
	struct sl_parse_error dummy;
	struct span all, rest, tok;
	char buf[2048];
	uint64_t n;
	unsigned i = 0;

	if (err == NULL)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	memset(set, 0, sizeof(*set));
	all = span_trim(span_of(text));
	rest = all;
	/* "state" TABLE KEY STATE, then options; words are separated by blanks. */
	while (rest.n > 0) {
		size_t a = 0, b;
		while (a < rest.n && isspace((unsigned char)rest.p[a]))
			a++;
		for (b = a; b < rest.n && !isspace((unsigned char)rest.p[b]); b++)
			;
		tok = (struct span){rest.p + a, b - a};
		rest = (struct span){rest.p + b, rest.n - b};
		if (tok.n == 0)
			break;
		switch (i++) {
		case 0:
			if (!span_eq(tok, "state"))
				return fail(err, tok, -EINVAL, "a state line starts with 'state'");
			break;
		case 1:
			if (parse_uint(tok, SL_TABLES_MAX - 1, &n))
				return fail(err, tok, -EINVAL, "bad table: expected 0..%u",
					    SL_TABLES_MAX - 1);
			*table_id = (uint8_t)n;
			break;
		case 2:
			if (tok.n >= sizeof(buf))
				return fail(err, tok, -EINVAL, "key too long");
			memcpy(buf, tok.p, tok.n);
			buf[tok.n] = '\0';
			if (sl_flow_parse_filter(buf, &fs, err) < 0)
				return -EINVAL;
			if (fs.table_id != 0xff || fs.cookie_mask)
				return fail(err, tok, -EINVAL, "the key holds match fields only");
			*key = fs.match;
			break;
		case 3:
			if (parse_uint(tok, UINT32_MAX, &n))
				return fail(err, tok, -EINVAL, "bad state: expected 0..4294967295");
			set->state = (uint32_t)n;
			break;
		default: {
			struct span k, v;
			uint32_t *dst = NULL;
			split_kv(tok, &k, &v);
			if (span_eq(k, "idle_ms"))
				dst = &set->idle_ms;
			else if (span_eq(k, "hard_ms"))
				dst = &set->hard_ms;
			else if (span_eq(k, "rollback"))
				dst = &set->rollback;
			if (dst == NULL || parse_uint(v, UINT32_MAX, &n))
				return fail(err, tok, -EINVAL,
					    "expected idle_ms=N, hard_ms=N or rollback=S");
			*dst = (uint32_t)n;
			break;
		}
		}
	}
	if (i < 4)
		return fail(err, all, -EINVAL,
			    "expected: state TABLE KEY STATE [idle_ms=N] "
			    "[hard_ms=N] [rollback=S]");
	return 0;
}

/*
 * Formatting.
 */

/* An snprintf-style string builder: len counts what would have been written. */
struct sbuf {
	char *buf;
	size_t size;
	size_t len;
	const struct sl_port_names *ports; /* port names to print, or NULL */
};

static void __attribute__((format(printf, 2, 3))) sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	if (b->len < b->size)
		n = vsnprintf(b->buf + b->len, b->size - b->len, fmt, ap);
	else
		n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->len += (size_t)n;
}

static void
sb_init(struct sbuf *b, char *buf, size_t size)
{
	b->buf = buf;
	b->size = size;
	b->len = 0;
	b->ports = NULL;
	if (size)
		buf[0] = '\0';
}

static int
sb_result(const struct sbuf *b)
{
	return b->len > INT32_MAX ? INT32_MAX : (int)b->len;
}

/* Minimal hex of a big-endian number: "0x0", "0x1234". */
static void
sb_hex(struct sbuf *b, const uint8_t *v, unsigned size)
{
	unsigned i = 0;

	while (i + 1 < size && v[i] == 0)
		i++;
	sb_printf(b, "0x%x", v[i]);
	for (i++; i < size; i++)
		sb_printf(b, "%02x", v[i]);
}

static void
sb_mac(struct sbuf *b, const uint8_t *m)
{
	sb_printf(b, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

/*
 * The caller's name for @port when it reads back as that port: only
 * [A-Za-z0-9_.:-], not a number, a reserved name or ANY.  NULL otherwise.
 */
static const char *
readable_port_name(const struct sl_port_names *pn, uint32_t port)
{
	const char *name = pn && pn->to_name ? pn->to_name(pn->arg, port) : NULL;
	uint32_t dummy;

	if (name == NULL || name[0] == '\0' || strlen(name) > 64 ||
	    parse_port(span_of(name), &dummy) == 0 || span_caseeq(span_of(name), "ANY"))
		return NULL;
	for (const char *c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("_.:-", *c))
			return NULL;
	return name;
}

/* VALUE[/MASK] of field @f in its syntax (dl_vlan/vlan_vid are handled by the callers). */
static void
sb_value(struct sbuf *b, const struct sl_field *f, const uint8_t *value, const uint8_t *mask)
{
	unsigned size = sl_field_size(f);
	bool full = mask == NULL || is_full_mask(f, mask);
	char addr[INET6_ADDRSTRLEN];
	const char *pname;
	int plen;

	switch (field_vkind(f)) {
	case VK_PORT:
		if (full && (pname = readable_port_name(b->ports, (uint32_t)get_be(value, 4)))) {
			sb_printf(b, "%s", pname);
			break;
		}
		pname = port_name((uint32_t)get_be(value, 4));
		if (pname && full &&
		    (get_be(value, 4) == SL_PORT_LOCAL || get_be(value, 4) == SL_PORT_CONTROLLER))
			sb_printf(b, "%s", pname);
		else
			sb_printf(b, "%u", (unsigned)get_be(value, 4));
		break;
	case VK_MAC:
		sb_mac(b, value);
		if (!full) {
			sb_printf(b, "/");
			sb_mac(b, mask);
		}
		return;
	case VK_IPV4:
	case VK_IPV6: {
		int af = field_vkind(f) == VK_IPV4 ? AF_INET : AF_INET6;

		inet_ntop(af, value, addr, sizeof(addr));
		sb_printf(b, "%s", addr);
		if (full)
			return;
		plen = prefix_len(mask, size);
		if (plen >= 0) {
			sb_printf(b, "/%d", plen);
		} else {
			inet_ntop(af, mask, addr, sizeof(addr));
			sb_printf(b, "/%s", addr);
		}
		return;
	}
	case VK_DEC:
		if (full) {
			sb_printf(b, "%llu", (unsigned long long)get_be(value, size));
			return;
		}
		sb_hex(b, value, size);
		break;
	default:
		if (f->id == SL_FIELD_ETH_TYPE)
			sb_printf(b, "0x%04x", (unsigned)get_be(value, 2));
		else
			sb_hex(b, value, size);
		break;
	}
	if (!full) {
		sb_printf(b, "/");
		sb_hex(b, mask, size);
	}
}

static void
sb_field_name(struct sbuf *b, const struct sl_field *f)
{
	char name[48];

	sl_field_format(f, name, sizeof(name));
	sb_printf(b, "%s", name);
}

/* Registry order, raw fields last by base, offset and width. */
static int
field_cmp(const struct sl_field *a, const struct sl_field *b)
{
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	if (a->raw_base != b->raw_base)
		return a->raw_base < b->raw_base ? -1 : 1;
	if (a->raw_bit_off != b->raw_bit_off)
		return a->raw_bit_off < b->raw_bit_off ? -1 : 1;
	if (a->raw_n_bits != b->raw_n_bits)
		return a->raw_n_bits < b->raw_n_bits ? -1 : 1;
	return 0;
}

static void
sb_match(struct sbuf *b, const struct sl_match *m)
{
	long eth = sl_match_exact_value(m, SL_FIELD_ETH_TYPE),
	     proto = sl_match_exact_value(m, SL_FIELD_IP_PROTO);
	bool skip_eth = false, skip_proto = false, first = true;
	unsigned order[SL_KEY_FIELDS_MAX], n = 0;

	/* The shorthand covering dl_type (and nw_proto) comes first. */
	for (unsigned pass = 0; pass < 2 && !skip_eth; pass++) {
		for (unsigned i = 0; i < SL_ARRAY_SIZE(shorthands); i++) {
			if (shorthands[i].eth_type != eth ||
			    (pass == 0 ? shorthands[i].proto < 0 || shorthands[i].proto != proto
				       : shorthands[i].proto >= 0))
				continue;
			sb_printf(b, "%s", shorthands[i].name);
			first = false;
			skip_eth = true;
			skip_proto = pass == 0;
			break;
		}
	}

	/* Then the other fields in a fixed order, whatever order they were added in. */
	for (unsigned i = 0; i < m->n_fields && i < SL_KEY_FIELDS_MAX; i++) {
		unsigned j = n++;

		while (j > 0 && field_cmp(&m->fields[order[j - 1]].f, &m->fields[i].f) > 0) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	for (unsigned k = 0; k < n; k++) {
		const struct sl_match_field *mf = &m->fields[order[k]];
		const struct sl_field *f = &mf->f;

		if ((skip_eth && f->id == SL_FIELD_ETH_TYPE) ||
		    (skip_proto && f->id == SL_FIELD_IP_PROTO))
			continue;
		sb_printf(b, "%s", first ? "" : ",");
		first = false;
		if (f->id == SL_FIELD_VLAN_VID) {
			unsigned v = (unsigned)get_be(mf->value, 2);
			unsigned mk = (unsigned)get_be(mf->mask, 2);

			if (mk == 0x1fff && (v & VID_PRESENT))
				sb_printf(b, "dl_vlan=%u", v & 0xfff);
			else if (mk == 0x1fff && v == 0)
				sb_printf(b, "dl_vlan=0xffff");
			else if (mk == 0x1fff)
				sb_printf(b, "vlan_vid=0x%x", v);
			else
				sb_printf(b, "vlan_vid=0x%x/0x%x", v, mk);
			continue;
		}
		sb_field_name(b, f);
		sb_printf(b, "=");
		sb_value(b, f, mf->value, mf->mask);
	}
}

static void
sb_action(struct sbuf *b, const struct sl_action *a)
{
	const char *pname;

	switch (a->type) {
	case SL_ACT_OUTPUT:
		pname = port_name(a->output.port);
		if (a->output.port == SL_PORT_CONTROLLER && a->output.max_len != 0xffff)
			sb_printf(b, "CONTROLLER:%u", a->output.max_len);
		else if (pname && a->output.port != SL_PORT_TABLE)
			sb_printf(b, "%s", pname);
		else if (pname)
			sb_printf(b, "output:%s", pname);
		else if ((pname = readable_port_name(b->ports, a->output.port)))
			sb_printf(b, "output:%s", pname);
		else
			sb_printf(b, "output:%u", a->output.port);
		break;
	case SL_ACT_SET_FIELD: {
		const struct sl_field *f = &a->set_field.f;

		if (f->id == SL_FIELD_VLAN_VID) {
			unsigned v = (unsigned)get_be(a->set_field.value, 2);

			if (v & VID_PRESENT)
				sb_printf(b, "mod_vlan_vid:%u", v & 0xfff);
			else
				sb_printf(b, "set_field:0x%x->vlan_vid", v);
			break;
		}
		sb_printf(b, "set_field:");
		sb_value(b, f, a->set_field.value, NULL);
		sb_printf(b, "->");
		sb_field_name(b, f);
		break;
	}
	case SL_ACT_PUSH_VLAN:
		sb_printf(b, "push_vlan:0x%04x", a->ethertype);
		break;
	case SL_ACT_POP_VLAN:
		sb_printf(b, "pop_vlan");
		break;
	case SL_ACT_SET_NW_TTL:
		sb_printf(b, "mod_nw_ttl:%u", a->ttl);
		break;
	case SL_ACT_DEC_NW_TTL:
		sb_printf(b, "dec_ttl");
		break;
	case SL_ACT_PUSH_MPLS:
		sb_printf(b, "push_mpls:0x%04x", a->ethertype);
		break;
	case SL_ACT_POP_MPLS:
		sb_printf(b, "pop_mpls:0x%04x", a->ethertype);
		break;
	case SL_ACT_SET_MPLS_TTL:
		sb_printf(b, "set_mpls_ttl:%u", a->ttl);
		break;
	case SL_ACT_DEC_MPLS_TTL:
		sb_printf(b, "dec_mpls_ttl");
		break;
	case SL_ACT_PUSH_PBB:
		sb_printf(b, "push_pbb:0x%04x", a->ethertype);
		break;
	case SL_ACT_POP_PBB:
		sb_printf(b, "pop_pbb");
		break;
	case SL_ACT_COPY_TTL_OUT:
		sb_printf(b, "copy_ttl_out");
		break;
	case SL_ACT_COPY_TTL_IN:
		sb_printf(b, "copy_ttl_in");
		break;
	case SL_ACT_GROUP:
		sb_printf(b, "group:%u", a->group_id);
		break;
	case SL_ACT_SET_QUEUE:
		sb_printf(b, "set_queue:%u", a->queue_id);
		break;
	case SL_ACT_SET_STATE: {
		const struct sl_state_set *st = &a->set_state.set;

		if (a->set_state.table_id == SL_STATE_TABLE_AUTO && !st->idle_ms && !st->hard_ms &&
		    !st->rollback) {
			sb_printf(b, "set_state:%u", st->state);
			break;
		}
		sb_printf(b, "set_state(%u", st->state);
		if (a->set_state.table_id != SL_STATE_TABLE_AUTO)
			sb_printf(b, ",table=%u", a->set_state.table_id);
		if (st->idle_ms)
			sb_printf(b, ",idle_ms=%u", st->idle_ms);
		if (st->hard_ms)
			sb_printf(b, ",hard_ms=%u", st->hard_ms);
		if (st->rollback)
			sb_printf(b, ",rollback=%u", st->rollback);
		sb_printf(b, ")");
		break;
	}
	default:
		sb_printf(b, "unknown_action_%u", a->type);
		break;
	}
}

static void
sb_action_list(struct sbuf *b, const struct sl_action *list, unsigned n, bool *first)
{
	for (unsigned i = 0; i < n && i < SL_ACTIONS_MAX; i++) {
		sb_printf(b, "%s", *first ? "" : ",");
		*first = false;
		sb_action(b, &list[i]);
	}
}

static void
sb_insns(struct sbuf *b, const struct sl_instructions *in)
{
	bool first = true;

	if (in->meter_id != 0) {
		sb_printf(b, "meter:%u", in->meter_id);
		first = false;
	}
	if (in->has_apply)
		sb_action_list(b, in->apply, in->n_apply, &first);
	if (in->clear) {
		sb_printf(b, "%sclear_actions", first ? "" : ",");
		first = false;
	}
	if (in->has_write) {
		bool inner = true;

		sb_printf(b, "%swrite_actions(", first ? "" : ",");
		sb_action_list(b, in->write, in->n_write, &inner);
		sb_printf(b, ")");
		first = false;
	}
	if (in->has_metadata) {
		sb_printf(b, "%swrite_metadata:0x%llx", first ? "" : ",",
			  (unsigned long long)in->metadata);
		if (in->metadata_mask != UINT64_MAX)
			sb_printf(b, "/0x%llx", (unsigned long long)in->metadata_mask);
		first = false;
	}
	if (in->goto_table >= 0) {
		sb_printf(b, "%sgoto_table:%d", first ? "" : ",", in->goto_table);
		first = false;
	}
	if (first)
		sb_printf(b, "drop");
}

int
sl_flow_format_match(const struct sl_match *m, char *buf, size_t size)
{
	return sl_flow_format_match_names(m, NULL, buf, size);
}

int
sl_flow_format_match_names(const struct sl_match *m, const struct sl_port_names *pn, char *buf,
			   size_t size)
{
	struct sbuf b;

	sb_init(&b, buf, size);
	b.ports = pn;
	sb_match(&b, m);
	return sb_result(&b);
}

int
sl_flow_format_actions(const struct sl_instructions *in, char *buf, size_t size)
{
	return sl_flow_format_actions_names(in, NULL, buf, size);
}

int
sl_flow_format_actions_names(const struct sl_instructions *in, const struct sl_port_names *pn,
			     char *buf, size_t size)
{
	struct sbuf b;

	sb_init(&b, buf, size);
	b.ports = pn;
	sb_insns(&b, in);
	return sb_result(&b);
}

int
sl_queue_parse(const char *text, struct sl_queue_spec *qs, struct sl_parse_error *err)
{
	struct sl_parse_error dummy;
	struct span rest, tok, key, val;
	bool have_id = false, have_port = false;
	uint64_t n;

	if (err == NULL)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	memset(qs, 0, sizeof(*qs));
	rest = span_trim(span_of(text));
	while (next_word(&rest, &tok)) {
		split_kv(tok, &key, &val);
		if (span_eq(key, "queue")) {
			if (have_id)
				return fail(err, tok, -EINVAL, "duplicate 'queue'");
			if (parse_uint(val, UINT32_MAX - 1, &n))
				return fail(err, tok, -EINVAL,
					    "bad queue id: expected 0..0xfffffffe");
			qs->queue_id = (uint32_t)n;
			have_id = true;
		} else if (span_eq(key, "port")) {
			if (parse_uint(val, 1024, &n) || n == 0)
				return fail(err, tok, -EINVAL, "bad port: expected 1..1024");
			qs->port_no = (uint32_t)n;
			have_port = true;
		} else if (span_eq(key, "max_rate") || span_eq(key, "min_rate") ||
			   span_eq(key, "burst")) {
			if (parse_uint(val, UINT64_MAX / 1000, &n))
				return fail(err, tok, -EINVAL,
					    "bad %.*s: expected a number of kbit%s", (int)key.n,
					    key.p, span_eq(key, "burst") ? "" : "/s");
			if (span_eq(key, "max_rate"))
				qs->max_rate = n;
			else if (span_eq(key, "min_rate"))
				qs->min_rate = n;
			else
				qs->burst = n;
		} else {
			return fail(
				err, tok, -EINVAL,
				"unknown queue item: expected queue=, port=, max_rate=, burst= or "
				"min_rate=");
		}
	}
	if (!have_id || !have_port || qs->max_rate == 0)
		return fail(err, span_trim(span_of(text)), -EINVAL,
			    "a queue needs queue=Q, port=P and max_rate=KBPS (above 0)");
	return 0;
}

int
sl_queue_format(const struct sl_queue_spec *qs, char *buf, size_t size)
{
	struct sbuf b;

	sb_init(&b, buf, size);
	sb_printf(&b, "queue=%u,port=%u,max_rate=%llu", qs->queue_id, qs->port_no,
		  (unsigned long long)qs->max_rate);
	if (qs->burst)
		sb_printf(&b, ",burst=%llu", (unsigned long long)qs->burst);
	if (qs->min_rate)
		sb_printf(&b, ",min_rate=%llu", (unsigned long long)qs->min_rate);
	return sb_result(&b);
}

int
sl_port_format(uint32_t port, const struct sl_port_names *pn, char *buf, size_t size)
{
	const char *name = readable_port_name(pn, port);

	if (name == NULL)
		name = port_name(port);
	return name ? snprintf(buf, size, "%s", name) : snprintf(buf, size, "%u", (unsigned)port);
}

int
sl_meter_format(const struct sl_meter_spec *ms, char *buf, size_t size)
{
	struct sbuf b;

	sb_init(&b, buf, size);
	sb_printf(&b, "meter=%u", ms->meter_id);
	for (unsigned i = 0; i < SL_ARRAY_SIZE(meter_flags); i++)
		if (ms->flags & meter_flags[i].flag)
			sb_printf(&b, ",%s", meter_flags[i].name);
	sb_printf(&b, ",bands=");
	for (unsigned k = 0; k < ms->n_bands; k++) {
		const struct sl_meter_band_spec *bs = &ms->bands[k];
		sb_printf(&b, "%stype=%s,rate=%u", k ? " " : "",
			  bs->type == SL_BAND_DROP ? "drop" : "dscp_remark", bs->rate);
		if (bs->burst)
			sb_printf(&b, ",burst_size=%u", bs->burst);
		if (bs->type == SL_BAND_DSCP_REMARK)
			sb_printf(&b, ",prec_level=%u", bs->prec_level);
	}
	return sb_result(&b);
}

int
sl_flow_format(const struct sl_flow_spec *fs, char *buf, size_t size)
{
	return sl_flow_format_names(fs, NULL, buf, size);
}

int
sl_flow_format_names(const struct sl_flow_spec *fs, const struct sl_port_names *pn, char *buf,
		     size_t size)
{
	struct sbuf b;

	sb_init(&b, buf, size);
	b.ports = pn;
	if (fs->cookie || fs->cookie_mask) {
		sb_printf(&b, "cookie=0x%llx", (unsigned long long)fs->cookie);
		if (fs->cookie_mask)
			sb_printf(&b, "/0x%llx", (unsigned long long)fs->cookie_mask);
		sb_printf(&b, ", ");
	}
	sb_printf(&b, "table=%u, ", fs->table_id);
	if (fs->idle_timeout)
		sb_printf(&b, "idle_timeout=%u, ", fs->idle_timeout);
	if (fs->hard_timeout)
		sb_printf(&b, "hard_timeout=%u, ", fs->hard_timeout);
	for (unsigned i = 0; i < SL_ARRAY_SIZE(flow_flags); i++)
		if (fs->flags & flow_flags[i].flag)
			sb_printf(&b, "%s, ", flow_flags[i].name);
	sb_printf(&b, "priority=%u", fs->priority);
	if (fs->match.n_fields) {
		sb_printf(&b, ",");
		sb_match(&b, &fs->match);
	}
	sb_printf(&b, " actions=");
	sb_insns(&b, &fs->insns);
	return sb_result(&b);
}

/*
 * Table declarations.
 */

static int
parse_field_list(struct parser *ps, struct span tok, struct span val, struct sl_field *fields,
		 uint8_t *n_fields, unsigned max)
{
	struct sl_key_layout layout;
	size_t start = 0;
	int depth = 0, rc;

	if (val.n == 0)
		return fail(ps->err, tok, -EINVAL, "empty field list");
	for (size_t i = 0; i <= val.n; i++) {
		struct span name;
		struct fref fr;

		if (i < val.n && val.p[i] == '(')
			depth++;
		else if (i < val.n && val.p[i] == ')')
			depth--;
		if (i < val.n && (val.p[i] != '+' || depth))
			continue;
		name = (struct span){val.p + start, i - start};
		start = i + 1;
		if (name.n == 0)
			return fail(ps->err, tok, -EINVAL, "empty field name in list");
		if ((rc = resolve_field(ps->err, name, NULL, name, &fr)))
			return rc;
		for (unsigned k = 0; k < *n_fields; k++)
			if (sl_field_equal(&fields[k], &fr.f))
				return fail(ps->err, name, -EINVAL, "duplicate field in list");
		if (*n_fields == max)
			return fail(ps->err, name, -E2BIG, "too many fields (max %u)", max);
		fields[(*n_fields)++] = fr.f;
	}
	rc = sl_key_layout_init(&layout, fields, *n_fields);
	if (rc == -E2BIG)
		return fail(ps->err, tok, rc, "fields too wide for a key (max %d bytes)",
			    SL_KEY_MAX);
	if (rc)
		return fail(ps->err, tok, rc, "invalid field list");
	return 0;
}

static int
table_item(struct parser *ps, struct span tok, struct sl_table_spec *ts)
{
	struct span key, val;
	uint64_t n;
	int kind, rc;

	if (!split_kv(tok, &key, &val))
		return fail(ps->err, tok, -EINVAL, "expected KEY=VALUE in a table declaration");
	if (span_eq(key, "table")) {
		if ((rc = once(ps, tok, key, SEEN_TABLE)) ||
		    (rc = key_uint(ps, tok, key, val, TABLE_ID_MAX, &n)))
			return rc;
		ts->table_id = (uint8_t)n;
		return 0;
	}
	if (span_eq(key, "kind")) {
		char buf[16];

		if ((rc = once(ps, tok, key, SEEN_KIND)))
			return rc;
		if (!span_copy(buf, sizeof(buf), val) || (kind = sl_table_kind_parse(buf)) < 0)
			return fail(ps->err, tok, -EINVAL,
				    "unknown table kind '%.*s': expected direct, exact, lpm, "
				    "mask or state",
				    (int)SL_MIN(val.n, 32), val.p);
		ts->kind = (enum sl_table_kind)kind;
		return 0;
	}
	if (span_eq(key, "fields") || span_eq(key, "lookup")) {
		if ((rc = once(ps, tok, key, SEEN_FIELDS)))
			return rc;
		return parse_field_list(ps, tok, val, ts->fields, &ts->n_fields, SL_KEY_FIELDS_MAX);
	}
	if (span_eq(key, "update")) { /* state tables: the update scope */
		if ((rc = once(ps, tok, key, SEEN_UPDATE)))
			return rc;
		return parse_field_list(ps, tok, val, ts->update, &ts->n_update,
					SL_STATE_FIELDS_MAX);
	}
	if (span_eq(key, "size")) {
		if ((rc = once(ps, tok, key, SEEN_SIZE)))
			return rc;
		if (parse_uint(val, UINT32_MAX, &n) || n == 0)
			return fail(ps->err, tok, -EINVAL, "bad size: expected 1..4294967295");
		ts->max_entries = (uint32_t)n;
		return 0;
	}
	if (span_eq(key, "name")) {
		if ((rc = once(ps, tok, key, SEEN_NAME)))
			return rc;
		if (val.n == 0 || val.n >= sizeof(ts->name))
			return fail(ps->err, tok, -EINVAL, "bad name: 1..%zu characters",
				    sizeof(ts->name) - 1);
		for (size_t i = 0; i < val.n; i++)
			if (!isalnum((unsigned char)val.p[i]) && !strchr("_.-", val.p[i]))
				return fail(ps->err, tok, -EINVAL,
					    "bad name: use letters, digits, '_', '.', '-'");
		span_copy(ts->name, sizeof(ts->name), val);
		return 0;
	}
	return fail(ps->err, tok, -EINVAL, "unknown table declaration key '%.*s'",
		    (int)SL_MIN(key.n, 64), key.p);
}

int
sl_table_spec_parse(const char *text, struct sl_table_spec *ts, struct sl_parse_error *err)
{
	struct sl_parse_error dummy;
	struct parser ps;
	struct span item;
	const char *pos = text;
	int rc;

	if (err == NULL)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	memset(&ps, 0, sizeof(ps));
	memset(ts, 0, sizeof(*ts));
	ps.err = err;
	ps.text = span_trim(span_of(text));
	while ((rc = next_item(err, &pos, &item)) > 0)
		if ((rc = table_item(&ps, item, ts)))
			return rc;
	if (rc < 0)
		return rc;
	if (!(ps.seen & SEEN_TABLE))
		return fail(err, ps.text, -EINVAL, "table declaration without table=");
	if (!(ps.seen & SEEN_KIND))
		return fail(err, ps.text, -EINVAL, "table declaration without kind=");
	if (ts->kind != SL_TABLE_STATE && (ps.seen & SEEN_UPDATE))
		return fail(err, ps.text, -EINVAL, "update= is for kind=state tables only");
	if (ts->kind == SL_TABLE_STATE && ts->n_fields == 0)
		return fail(err, ps.text, -EINVAL, "a state table needs lookup=FIELD+...");
	if (ts->kind == SL_TABLE_STATE && ts->n_fields > SL_STATE_FIELDS_MAX)
		return fail(err, ps.text, -E2BIG, "lookup scope of %u fields (max %d)",
			    ts->n_fields, SL_STATE_FIELDS_MAX);
	if (ts->kind == SL_TABLE_STATE && ts->n_update && ts->n_update != ts->n_fields)
		return fail(err, ps.text, -EINVAL,
			    "lookup scope has %u fields, update scope %u: they must pair up",
			    ts->n_fields, ts->n_update);
	return 0;
}

int
sl_table_spec_format(const struct sl_table_spec *ts, char *buf, size_t size)
{
	struct sbuf b;

	sb_init(&b, buf, size);
	bool st = ts->kind == SL_TABLE_STATE;

	sb_printf(&b, "table=%u,kind=%s", ts->table_id, sl_table_kind_name(ts->kind));
	for (unsigned i = 0; i < ts->n_fields && i < SL_KEY_FIELDS_MAX; i++) {
		sb_printf(&b, "%s", i ? "+" : st ? ",lookup=" : ",fields=");
		sb_field_name(&b, &ts->fields[i]);
	}
	for (unsigned i = 0; st && i < ts->n_update && i < SL_STATE_FIELDS_MAX; i++) {
		sb_printf(&b, "%s", i ? "+" : ",update=");
		sb_field_name(&b, &ts->update[i]);
	}
	if (ts->max_entries)
		sb_printf(&b, ",size=%u", ts->max_entries);
	if (ts->name[0])
		sb_printf(&b, ",name=%.*s", (int)sizeof(ts->name), ts->name);
	return sb_result(&b);
}

/*
 * Flow files.
 */

/* A line is a table declaration when one of its items is "kind=...". */
static bool
is_table_decl(const char *text)
{
	struct sl_parse_error scratch;
	const char *pos = text;
	struct span item;

	for (;;) {
		while (*pos == ',' || isspace((unsigned char)*pos))
			pos++;
		if (strncmp(pos, "actions=", 8) == 0)
			return false;
		if (next_item(&scratch, &pos, &item) <= 0)
			return false;
		if (span_starts(item, "kind="))
			return true;
	}
}

/* Parse one logical line and hand it to its callback. */
static int
load_line(const char *text, const char *path, unsigned lineno,
	  const struct sl_flowfile_callbacks *cb, void *arg, struct sl_parse_error *err)
{
	sl_flowfile_table_fn on_table = cb->on_table;
	sl_flowfile_flow_fn on_flow = cb->on_flow;
	struct sl_flow_spec fs;
	struct sl_table_spec ts;
	struct span t = span_trim(span_of(text));
	int rc;

	/* Directives: "fwd-mode=MODES" (the text goes to the callback as it is). */
	if (t.n > 9 && strncmp(t.p, "fwd-mode=", 9) == 0) {
		char value[1024];

		memset(err, 0, sizeof(*err));
		if (t.n - 9 >= sizeof(value))
			return fail(err, t, -EINVAL, "fwd-mode value too long");
		memcpy(value, t.p + 9, t.n - 9);
		value[t.n - 9] = '\0';
		if (cb->on_directive == NULL)
			return 0;
		snprintf(err->file, sizeof(err->file), "%s", path);
		err->line = lineno;
		rc = cb->on_directive(arg, "fwd-mode", value, err);
		goto done;
	}

	/*
	 * The parsers clear @err, so the location is set after parsing: a
	 * callback that sends the item elsewhere (sluicectl add-flows) reads
	 * where it came from to report a later, asynchronous failure.
	 */
	if (t.n > 6 && strncmp(t.p, "state ", 6) == 0) {
		static __thread struct sl_match key;
		struct sl_state_set set;
		uint8_t table_id = 0;

		rc = sl_state_line_parse(text, &table_id, &key, &set, err);
		if (rc || cb->on_state == NULL)
			return rc;
		snprintf(err->file, sizeof(err->file), "%s", path);
		err->line = lineno;
		rc = cb->on_state(arg, table_id, &key, &set, err);
	} else if (t.n > 6 && strncmp(t.p, "queue=", 6) == 0) {
		struct sl_queue_spec qs;

		rc = sl_queue_parse(text, &qs, err);
		if (rc || cb->on_queue == NULL)
			return rc;
		snprintf(err->file, sizeof(err->file), "%s", path);
		err->line = lineno;
		rc = cb->on_queue(arg, &qs, err);
	} else if (t.n > 6 && strncmp(t.p, "meter=", 6) == 0) {
		struct sl_meter_spec ms;

		rc = sl_meter_parse(text, &ms, err);
		if (rc || cb->on_meter == NULL)
			return rc;
		snprintf(err->file, sizeof(err->file), "%s", path);
		err->line = lineno;
		rc = cb->on_meter(arg, &ms, err);
	} else if (t.n > 9 && strncmp(t.p, "group_id=", 9) == 0) {
		struct sl_group_spec *gs = malloc(sizeof(*gs)); /* about 20 kB: not on the stack */

		if (gs == NULL)
			return fail(err, t, -ENOMEM, "out of memory");
		rc = sl_group_parse_names(text, cb->ports, gs, err);
		if (rc == 0 && cb->on_group != NULL) {
			snprintf(err->file, sizeof(err->file), "%s", path);
			err->line = lineno;
			rc = cb->on_group(arg, gs, err);
		}
		free(gs);
		if (rc == 0 || cb->on_group == NULL)
			return rc;
	} else if (is_table_decl(text)) {
		rc = sl_table_spec_parse(text, &ts, err);
		if (rc || on_table == NULL)
			return rc;
		snprintf(err->file, sizeof(err->file), "%s", path);
		err->line = lineno;
		rc = on_table(arg, &ts, err);
	} else {
		rc = sl_flow_parse_names(text, cb->ports, &fs, err);
		if (rc || on_flow == NULL)
			return rc;
		snprintf(err->file, sizeof(err->file), "%s", path);
		err->line = lineno;
		rc = on_flow(arg, &fs, err);
	}
done:
	if (rc == 0)
		return 0;
	/* A callback failed: make sure the report has a message and a token. */
	if (rc > 0)
		rc = -EINVAL;
	if (err->msg[0] == '\0')
		snprintf(err->msg, sizeof(err->msg), "%s", strerror(-rc));
	if (err->token[0] == '\0')
		set_token(err, span_trim(span_of(text)));
	return rc;
}

/* Append @n bytes of @s to the growing buffer *@buf. */
static int
append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t ncap = SL_MAX(*cap * 2, *len + n + 1);
		char *nb = realloc(*buf, SL_MAX(ncap, (size_t)256));

		if (nb == NULL)
			return -ENOMEM;
		*buf = nb;
		*cap = SL_MAX(ncap, (size_t)256);
	}
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
	return 0;
}

int
sl_flowfile_load(const char *path, sl_flowfile_table_fn on_table, sl_flowfile_flow_fn on_flow,
		 void *arg, struct sl_parse_error *err)
{
	const struct sl_flowfile_callbacks cb = {on_table, on_flow, NULL, NULL};

	return sl_flowfile_load_cb(path, &cb, arg, err);
}

int
sl_flowfile_load_cb(const char *path, const struct sl_flowfile_callbacks *cb, void *arg,
		    struct sl_parse_error *err)
{
	struct sl_parse_error dummy;
	char *line = NULL, *logical = NULL;
	size_t line_cap = 0, log_len = 0, log_cap = 0;
	unsigned lineno = 0, start = 0;
	bool pending = false;
	long got;
	FILE *f;
	int rc = 0;

	if (err == NULL)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	f = fopen(path, "r");
	if (f == NULL) {
		rc = -errno;
		snprintf(err->file, sizeof(err->file), "%s", path);
		return fail(err, span_of(path), rc, "cannot open: %s", strerror(-rc));
	}

	for (;;) {
		size_t n;
		bool more;

		/* Bounded: a read error or an endless line is an error, never an end of file. */
		got = sl_read_line(f, &line, &line_cap, SL_LINE_MAX);
		if (got < 0) {
			rc = (int)got;
			err->line = lineno + 1;
			if (rc == -E2BIG)
				fail(err, span_of(path), rc, "line longer than %d bytes",
				     SL_LINE_MAX);
			else if (rc == -EILSEQ)
				fail(err, span_of(path), rc, "NUL byte in the line");
			else
				fail(err, span_of(path), rc, "read error: %s", strerror(-rc));
			break;
		}
		if (got == 0) {
			if (!pending)
				break;
			/* A backslash on the last line: the logical line ends here. */
			more = false;
			n = 0;
		} else {
			lineno++;
			/* Strip the comment, the newline and trailing blanks; look for '\'. */
			n = strcspn(line, "#\n");
			while (n && isspace((unsigned char)line[n - 1]))
				n--;
			more = n && line[n - 1] == '\\';
			if (more)
				n--;
			if (!pending) {
				start = lineno;
				log_len = 0;
			} else if ((rc = append(&logical, &log_len, &log_cap, " ", 1))) {
				fail(err, span_of(path), rc, "out of memory");
				break;
			}
			if (log_len + n > FLOWFILE_LOGICAL_MAX) {
				rc = -E2BIG;
				err->line = start;
				fail(err, span_of(path), rc, "continued line longer than %d bytes",
				     FLOWFILE_LOGICAL_MAX);
				break;
			}
			if ((rc = append(&logical, &log_len, &log_cap, line, n))) {
				fail(err, span_of(path), rc, "out of memory");
				break;
			}
		}
		pending = more;
		if (more)
			continue;
		if (log_len && span_trim((struct span){logical, log_len}).n &&
		    (rc = load_line(logical, path, start, cb, arg, err))) {
			err->line = start;
			break;
		}
		log_len = 0;
		if (got == 0)
			break;
	}
	if (rc)
		snprintf(err->file, sizeof(err->file), "%s", path);
	free(line);
	free(logical);
	fclose(f);
	return rc;
}
