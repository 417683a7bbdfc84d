/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_key_extract: the packet parser and flow-key extraction (src/pkt) on
 * arbitrary frames, in the manner of Open vSwitch's flow_extract_target.c.
 *
 * Input: byte 0 is the number of fields (0..8, modulo 9), then 4 bytes per
 * field (field id, raw base, raw bit offset / 4, raw width - 1), then the
 * 32-bit ingress port, then the frame.  The frame is copied into a buffer of
 * exactly its size, so ASan sees any read past its end.  A field list the
 * layout refuses (a raw field out of range) falls back to a layout of every
 * OXM field that fits.
 *
 * Oracles beyond ASan/UBSan (a failure aborts):
 *   - the parsed offsets stay inside the frame and in layer order;
 *   - sl_key_extract and sl_key_extract_ops (no plain-IPv4 shortcut) write
 *     the same key;
 *   - extracting from a copy of the frame gives the same key (no read of
 *     anything but the frame and the context);
 *   - each field's bytes in the key are what sl_pkt_field_read returns;
 *   - the key's padding after the last field is zero;
 *   - extraction leaves the frame as it was;
 *   - a frame that passes sl_pkt_ipv4_plain_len, and a copy changed
 *     everywhere but the bytes that test reads (sl_pkt_ipv4_plain_like, the
 *     rule the flow cache's trains skip the test by): the copy passes with
 *     the same total length.
 */
#include "../src/pkt/pkt.h"

#include <stdlib.h>
#include <string.h>

#define FIELDS_MAX 8

static void
check(bool ok)
{
	if (!ok)
		abort();
}

/* Offsets after parsing: inside the frame, L2 <= L3 <= L4. */
static void
check_offsets(const struct sl_pkt *p)
{
	if (p->l2_end == SL_OFS_UNSET)
		return;
	check(p->l2_end <= p->len);
	check(p->l3_ofs >= p->l2_end && p->l3_ofs <= p->len);
	if (p->l4_ofs != SL_OFS_UNSET)
		check(p->l4_ofs >= p->l3_ofs && p->l4_ofs <= p->len);
	check(p->ip_end <= p->len);
}

/* A layout of the OXM fields in id order, as many as fit one key. */
static void
layout_all(struct sl_key_layout *l)
{
	struct sl_field f[SL_FIELD__MAX];
	unsigned n = 0, size = 0;

	for (unsigned id = 0; id < SL_FIELD__MAX; id++) {
		f[n] = (struct sl_field){.id = (uint8_t)id};
		if (id == SL_FIELD_RAW || n >= SL_KEY_FIELDS_MAX ||
		    size + sl_field_size(&f[n]) > SL_KEY_MAX - 8)
			continue;
		size += sl_field_size(&f[n]);
		n++;
	}
	check(sl_key_layout_init(l, f, n) == 0);
}

static void
extract_check(const struct sl_key_layout *l, const uint8_t *frame, size_t len, uint32_t in_port)
{
	uint8_t *a = malloc(len ? len : 1), *b = malloc(len ? len : 1);
	uint8_t ka[SL_KEY_MAX], kb[SL_KEY_MAX], kc[SL_KEY_MAX], v[SL_FIELD_SIZE_MAX];
	struct sl_pkt pa, pb, pc;
	unsigned end = 0;

	check(a && b);
	memcpy(a, frame, len);
	memcpy(b, frame, len);
	memset(ka, 0xa5, sizeof ka);
	memset(kb, 0x5a, sizeof kb);
	memset(kc, 0x3c, sizeof kc);

	sl_pkt_init(&pa, a, (uint16_t)len, 0, in_port);
	sl_key_extract(l, &pa, ka);
	check_offsets(&pa);
	sl_pkt_init(&pb, b, (uint16_t)len, 0, in_port);
	sl_key_extract_ops(l, &pb, kb);
	check_offsets(&pb);
	check(memcmp(ka, kb, l->key_size) == 0);
	check(memcmp(a, frame, len) == 0 && memcmp(b, frame, len) == 0);

	/* A fresh context on the copy, fully parsed first: the same key. */
	sl_pkt_init(&pc, b, (uint16_t)len, 0, in_port);
	sl_pkt_parse_l4(&pc);
	check_offsets(&pc);
	sl_key_extract(l, &pc, kc);
	check(memcmp(ka, kc, l->key_size) == 0);

	for (unsigned i = 0; i < l->n_fields; i++) {
		unsigned size = sl_field_size(&l->fields[i]);

		check(l->offsets[i] + size <= l->key_size);
		sl_pkt_field_read(&pc, &l->fields[i], v);
		check(memcmp(ka + l->offsets[i], v, size) == 0);
		if (l->offsets[i] + size > end)
			end = l->offsets[i] + size;
	}
	for (unsigned i = end; i < l->key_size; i++)
		check(ka[i] == 0);
	check(memcmp(b, frame, len) == 0);
	free(a);
	free(b);
}

/*
 * The train rule (sl_pkt_ipv4_plain_like): @frame, if plain IPv4, against a
 * copy whose every byte the plain test does not read is changed by @salt.
 */
static void
plain_like_check(const uint8_t *frame, size_t len, uint32_t salt)
{
	uint8_t *a = malloc(len ? len : 1), *b = malloc(len ? len : 1);
	struct sl_pkt pa, pb;

	check(a && b);
	memcpy(a, frame, len);
	memcpy(b, frame, len);
	sl_pkt_init(&pa, a, (uint16_t)len, 0, 1);
	unsigned tot = sl_pkt_ipv4_plain_len(&pa, 0);
	if (tot != 0) {
		for (size_t i = 0; i < len; i++) {
			uint64_t m = sl_pkt_ipv4_plain_word_mask((unsigned)(i / 8));
			uint8_t mb[8];
			memcpy(mb, &m, 8); /* the word's bytes in frame order */
			bool read = mb[i % 8] != 0 || (i == 46 && a[23] == 6);
			if (!read)
				b[i] ^= (uint8_t)(salt >> (8 * (i % 4))) | 1;
		}
		sl_pkt_init(&pb, b, (uint16_t)len, 0, 1);
		check(sl_pkt_ipv4_plain_like(&pa, &pb));
		check(sl_pkt_ipv4_plain_len(&pb, 0) == tot);
	}
	free(a);
	free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_field fields[FIELDS_MAX];
	struct sl_key_layout l;
	unsigned n_fields;
	uint32_t in_port;
	size_t pos;

	if (size < 1)
		return 0;
	n_fields = data[0] % (FIELDS_MAX + 1);
	pos = 1 + 4 * (size_t)n_fields + 4;
	if (size < pos || size - pos > UINT16_MAX)
		return 0;
	for (unsigned i = 0; i < n_fields; i++) {
		const uint8_t *d = data + 1 + 4 * i;

		fields[i] = (struct sl_field){
			.id = (uint8_t)(d[0] % SL_FIELD__MAX),
			.raw_base = (uint8_t)(d[1] % 3),
			.raw_bit_off = (uint16_t)(d[2] * 4),
			.raw_n_bits = (uint16_t)(d[3] % SL_RAW_BITS_MAX + 1),
		};
	}
	memcpy(&in_port, data + pos - 4, 4);
	if (n_fields == 0 || sl_key_layout_init(&l, fields, n_fields) != 0)
		layout_all(&l);
	extract_check(&l, data + pos, size - pos, in_port);
	plain_like_check(data + pos, size - pos, in_port);
	return 0;
}
