/* SPDX-License-Identifier: BSD-3-Clause */
/* Control path: OXM TLVs and ofp_match <-> struct sl_match. */
#include "ofp.h"

#include <string.h>

#include "ofp_priv.h"

/* The field with OXM basic number @oxm, or -1.  36 fields: a scan is cheap enough here. */
static int
field_by_oxm(unsigned oxm)
{
	for (unsigned id = 0; id < SL_FIELD__MAX; id++)
		if (sl_field_oxm(id) == (int)oxm)
			return (int)id;
	return -1;
}

unsigned
ofp_field_wire_size(const struct sl_field *f)
{
	unsigned size = sl_field_size(f);

	/*
	 * OXM carries the 20-bit ipv6_flabel and mpls_label in 32 bits (spec table
	 * 12); the 24-bit pbb_isid in 3 bytes, as it is.
	 */
	return f->id != SL_FIELD_RAW && f->id != SL_FIELD_PBB_ISID && size == 3 ? 4 : size;
}

/* Mask of the top key byte of @f: bits above the field's width are never used. */
static uint8_t
top_byte_mask(const struct sl_field *f)
{
	return (uint8_t)(0xff >> (sl_field_size(f) * 8 - sl_field_bits(f)));
}

/* True when @mask (key encoding) covers every bit of @f. */
static bool
mask_is_full(const struct sl_field *f, const uint8_t *mask)
{
	unsigned size = sl_field_size(f);

	if ((mask[0] & top_byte_mask(f)) != top_byte_mask(f))
		return false;
	for (unsigned i = 1; i < size; i++)
		if (mask[i] != 0xff)
			return false;
	return true;
}

static bool
mask_is_zero(const struct sl_field *f, const uint8_t *mask)
{
	unsigned size = sl_field_size(f);

	if (mask[0] & top_byte_mask(f))
		return false;
	return all_zero(mask + 1, size - 1);
}

int
ofp_oxm_decode(const uint8_t *p, size_t avail, bool id_only, struct sl_match_field *mf,
	       bool *masked, size_t *tlv_len, struct sl_ofp_error *err)
{
	uint32_t h;
	unsigned oxm_len, hm, size, wsize, hdr; /* hdr: bytes before the value */
	const uint8_t *v;

	if (avail < 4)
		return FAIL_BMC(err, BAD_LEN);
	h = rd32(p);
	oxm_len = OXM_LENGTH(h);
	hm = OXM_HASMASK(h);
	if (!id_only && 4 + (size_t)oxm_len > avail)
		return FAIL_BMC(err, BAD_LEN);
	memset(mf, 0, sizeof(*mf));

	if (OXM_CLASS(h) == OFPXMC_OPENFLOW_BASIC) {
		int id = field_by_oxm(OXM_FIELD(h));
		if (id < 0)
			return FAIL_BMC(err, BAD_FIELD);
		mf->f.id = (uint8_t)id;
		hdr = 4;
	} else if (OXM_CLASS(h) == OFPXMC_EXPERIMENTER) {
		/* Experimenter OXM: the 32-bit experimenter id is part of the payload. */
		if (oxm_len < 4 || avail < 8)
			return FAIL_BMC(err, BAD_LEN);
		if (rd32(p + 4) != SL_OFP_EXPERIMENTER_ID)
			return FAIL_BMC(err, BAD_FIELD);
		if (OXM_FIELD(h) == SL_OXM_SL_IP_TTL) {
			mf->f.id = SL_FIELD_IP_TTL;
			hdr = 8;
		} else if (OXM_FIELD(h) == SL_OXM_SL_STATE) {
			mf->f.id = SL_FIELD_STATE;
			hdr = 8;
		} else if (OXM_FIELD(h) == SL_OXM_SL_RAW) {
			if (oxm_len < 8 || avail < 12)
				return FAIL_BMC(err, BAD_LEN);
			mf->f.id = SL_FIELD_RAW;
			mf->f.raw_base = p[8];
			mf->f.raw_n_bits = p[9];
			mf->f.raw_bit_off = rd16(p + 10);
			if (mf->f.raw_base > SL_RAW_BASE_L4 || mf->f.raw_n_bits == 0 ||
			    mf->f.raw_n_bits > SL_RAW_BITS_MAX)
				return FAIL_BMC(err, BAD_FIELD);
			hdr = 12;
		} else {
			return FAIL_BMC(err, BAD_FIELD);
		}
	} else {
		return FAIL_BMC(err, BAD_FIELD);
	}

	size = sl_field_size(&mf->f);
	wsize = ofp_field_wire_size(&mf->f);
	if (oxm_len != hdr - 4 + wsize * (hm ? 2 : 1))
		return FAIL_BMC(err, BAD_LEN);
	*masked = hm;
	if (id_only) {
		*tlv_len = hdr;
		return 0;
	}
	*tlv_len = 4 + oxm_len;

	/*
	 * Wire value: wsize bytes, network order; key encoding: the low size
	 * bytes.  Bits above the field's width in the value are an error;
	 * in the mask they are ignored (OVS masks them off the same way).
	 */
	v = p + hdr;
	if (!all_zero(v, wsize - size) || (v[wsize - size] & ~top_byte_mask(&mf->f)))
		return FAIL_BMC(err, BAD_VALUE);
	memcpy(mf->value, v + wsize - size, size);
	if (hm) {
		memcpy(mf->mask, v + wsize + wsize - size, size);
		mf->mask[0] &= top_byte_mask(&mf->f);
	} else {
		memset(mf->mask, 0xff, size);
		mf->mask[0] = top_byte_mask(&mf->f);
	}
	for (unsigned i = 0; i < size; i++)
		mf->value[i] &= mf->mask[i];
	/* in_port: a port a packet can come in on (0 is none; as the flow syntax checks). */
	if (mf->f.id == SL_FIELD_IN_PORT) {
		uint32_t port = rd32(mf->value);
		if (port == 0 || (port > SL_PORT_MAX_PHYS && port != SL_PORT_LOCAL &&
				  port != SL_PORT_CONTROLLER))
			return FAIL_BMC(err, BAD_VALUE);
	}
	return 0;
}

int
sl_ofp_match_decode(const uint8_t *p, size_t avail, struct sl_match *m, size_t *consumed,
		    struct sl_ofp_error *err)
{
	uint64_t seen = 0; /* OXM-numbered fields already met (raw fields: sl_match_get) */
	size_t len, ofs;
	char why[128];

	static_assert(SL_FIELD__MAX <= 64, "field bitmap");
	m->n_fields = 0;
	if (avail < sizeof(struct ofp_match))
		return FAIL_BMC(err, BAD_LEN);
	if (rd16(p) != OFPMT_OXM)
		return FAIL_BMC(err, BAD_TYPE);
	len = rd16(p + 2);
	if (len < sizeof(struct ofp_match) || pad8(len) > avail)
		return FAIL_BMC(err, BAD_LEN);
	if (!all_zero(p + len, pad8(len) - len))
		return FAIL_BMC(err, BAD_LEN);

	for (ofs = 4; ofs < len;) {
		struct sl_match_field mf;
		bool masked;
		size_t tlv;

		if (ofp_oxm_decode(p + ofs, len - ofs, false, &mf, &masked, &tlv, err) < 0)
			return -1;
		ofs += tlv;
		if (mf.f.id != SL_FIELD_RAW) {
			if (seen & (UINT64_C(1) << mf.f.id))
				return FAIL_BMC(err, DUP_FIELD);
			seen |= UINT64_C(1) << mf.f.id;
		} else if (sl_match_get(m, &mf.f) != NULL) {
			return FAIL_BMC(err, DUP_FIELD);
		}
		if (masked && !sl_field_maskable(&mf.f) && !mask_is_full(&mf.f, mf.mask))
			return FAIL_BMC(err, BAD_MASK);
		if (mask_is_zero(&mf.f, mf.mask))
			continue; /* a wildcard: constrains nothing, implies no prerequisite */
		if (m->n_fields == SL_KEY_FIELDS_MAX)
			return FAIL_BMC(err, BAD_FIELD);
		if (sl_match_set(m, &mf.f, mf.value, mf.mask) < 0)
			return FAIL_BMC(err, BAD_FIELD);
	}
	if (sl_match_prereq_check(m, why, sizeof(why)) >= 0)
		return FAIL_BMC(err, BAD_PREREQ);
	*consumed = pad8(len);
	return 0;
}

int
ofp_oxm_encode(struct sl_ofp_buf *b, const struct sl_field *f, const uint8_t *value,
	       const uint8_t *mask, bool masked, bool id_only)
{
	unsigned size = sl_field_size(f), wsize = ofp_field_wire_size(f);
	unsigned n_vals = masked ? 2 : 1;
	uint8_t *p;
	size_t hdr;
	int oxm;

	if (f->id == SL_FIELD_RAW || f->id == SL_FIELD_IP_TTL || f->id == SL_FIELD_STATE) {
		/* Sluice experimenter OXM (docs/openflow-experimenter.md). */
		bool raw = f->id == SL_FIELD_RAW;
		hdr = raw ? 12 : 8;
		p = ofp_buf_put(b, id_only ? hdr : hdr + wsize * n_vals);
		if (p == NULL)
			return -ENOMEM;
		wr32(p, OXM_HEADER(OFPXMC_EXPERIMENTER,
				   raw                       ? SL_OXM_SL_RAW
				   : f->id == SL_FIELD_STATE ? SL_OXM_SL_STATE
							     : SL_OXM_SL_IP_TTL,
				   masked, hdr - 4 + wsize * n_vals));
		wr32(p + 4, SL_OFP_EXPERIMENTER_ID);
		if (raw) {
			p[8] = f->raw_base;
			p[9] = (uint8_t)f->raw_n_bits;
			wr16(p + 10, f->raw_bit_off);
		}
	} else {
		if ((oxm = sl_field_oxm(f->id)) < 0)
			return -EINVAL;
		hdr = 4;
		p = ofp_buf_put(b, id_only ? hdr : hdr + wsize * n_vals);
		if (p == NULL)
			return -ENOMEM;
		wr32(p, OXM_HEADER(OFPXMC_OPENFLOW_BASIC, oxm, masked, wsize * n_vals));
	}
	if (id_only)
		return 0;
	/* Key encoding is right-aligned: the wire's extra leading bytes stay zero. */
	memcpy(p + hdr + wsize - size, value, size);
	if (masked)
		memcpy(p + hdr + wsize + wsize - size, mask, size);
	return 0;
}

int
sl_ofp_match_encode(struct sl_ofp_buf *b, const struct sl_match *m)
{
	size_t start = b->len, len;
	int rc;

	if (ofp_buf_put(b, sizeof(struct ofp_match)) == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < m->n_fields; i++) {
		const struct sl_match_field *mf = &m->fields[i];
		bool masked = !mask_is_full(&mf->f, mf->mask);

		rc = ofp_oxm_encode(b, &mf->f, mf->value, mf->mask, masked, false);
		if (rc < 0) {
			b->len = start;
			return rc;
		}
	}
	len = b->len - start;
	wr16(b->data + start, OFPMT_OXM);
	wr16(b->data + start + 2, (uint16_t)len);
	if (ofp_buf_put(b, pad8(len) - len) == NULL && pad8(len) != len) {
		b->len = start;
		return -ENOMEM;
	}
	return 0;
}

size_t
ofp_match_wire_len(const struct sl_match *m)
{
	size_t len = sizeof(struct ofp_match);

	for (unsigned i = 0; i < m->n_fields; i++) {
		const struct sl_match_field *mf = &m->fields[i];
		unsigned hdr = mf->f.id == SL_FIELD_RAW                                    ? 12
			       : mf->f.id == SL_FIELD_IP_TTL || mf->f.id == SL_FIELD_STATE ? 8
											   : 4;
		len += hdr + ofp_field_wire_size(&mf->f) * (mask_is_full(&mf->f, mf->mask) ? 1 : 2);
	}
	return pad8(len);
}
