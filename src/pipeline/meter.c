/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Meters (OpenFlow 1.3 section 5.7): the id -> slot map, adding, modifying
 * and deleting meters, reading them back, and the per-packet band choice.
 *
 * Each band is a token bucket kept as GCRA (the generic cell rate
 * algorithm, ITU-T I.371): one 64-bit "theoretical arrival time" (TAT)
 * instead of a token count and a refill stamp.  A packet costing `inc`
 * (its share of the rate, in time) fits while max(TAT, now) + inc - now
 * stays within the burst tolerance `tau`; fitting moves TAT to that sum.
 * One word of state means several workers share a band through one
 * compare-and-swap, without a lock, and the long-run rate is exact: TAT
 * advances by exactly the time the admitted bytes or packets are worth.
 *
 * Time is the TSC in 1/16 cycles (13 years before the 64-bit sum wraps at
 * 2.8 GHz); a kbps band's cost per byte is kept in 2^-16 of that unit, so
 * a 64-byte packet at 100 Gbit/s is still charged within 0.5 %.
 *
 * Memory: as for groups (group.c), a slot lives until its meter is
 * deleted and a body until it is replaced; both are freed after the next
 * grace period, since workers may still hold them.
 */
#include "pipeline.h"
#include "pipeline_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Most meters a pipeline holds (OVS-DPDK's default is 200000; 65536 as for groups). */
#define METERS_MAX 65536

struct pl_meters {
	unsigned n, cap;
	struct pl_meter_slot **slots; /* sorted by id: binary search, ordered dumps */
	unsigned n_retired, retired_cap;
	void **retired; /* freed after the next grace period */
};

int
pl_meters_create(struct sl_pipeline *pl)
{
	pl->meters = calloc(1, sizeof(*pl->meters));
	return pl->meters != NULL ? 0 : -ENOMEM;
}

void
pl_meters_destroy(struct sl_pipeline *pl)
{
	struct pl_meters *ms = pl->meters;

	if (ms == NULL)
		return;
	for (unsigned i = 0; i < ms->n; i++) {
		free(ms->slots[i]->body);
		free(ms->slots[i]);
	}
	pl_meters_reclaim(pl);
	free(ms->slots);
	free(ms->retired);
	free(ms);
}

static unsigned
slot_pos(const struct pl_meters *ms, uint32_t id, bool *found)
{
	unsigned lo = 0, hi = ms->n;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (ms->slots[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < ms->n && ms->slots[lo]->id == id;
	return lo;
}

struct pl_meter_slot *
pl_meter_find(struct sl_pipeline *pl, uint32_t id)
{
	bool found;
	unsigned pos = slot_pos(pl->meters, id, &found);

	return found ? pl->meters->slots[pos] : NULL;
}

/* Free @mem after the next grace period; without memory for the list, wait now. */
static void
retire(struct sl_pipeline *pl, void *mem)
{
	struct pl_meters *ms = pl->meters;

	if (mem == NULL)
		return;
	if (ms->n_retired == ms->retired_cap) {
		unsigned cap = ms->retired_cap ? ms->retired_cap * 2 : 16;
		void **n = realloc(ms->retired, cap * sizeof(*n));
		if (n == NULL) {
			if (pl->sync != NULL)
				pl->sync(pl->sync_arg);
			free(mem);
			return;
		}
		ms->retired = n;
		ms->retired_cap = cap;
	}
	ms->retired[ms->n_retired++] = mem;
}

bool
pl_meters_dirty(const struct sl_pipeline *pl)
{
	return pl->meters->n_retired > 0;
}

void
pl_meters_reclaim(struct sl_pipeline *pl)
{
	struct pl_meters *ms = pl->meters;

	for (unsigned i = 0; i < ms->n_retired; i++)
		free(ms->retired[i]);
	ms->n_retired = 0;
}

/* 1/16-cycle time units a second is worth. */
static uint64_t
units_per_second(void)
{
	return sl_pipeline_tsc_hz() << 4;
}

/* Check a spec and build its body (buckets full: the first burst passes). */
static int
body_build(struct sl_pipeline *pl, const struct sl_meter_spec *ms, struct pl_meter **out, char *err,
	   size_t err_size)
{
	uint16_t unit = ms->flags & (SL_METER_KBPS | SL_METER_PKTPS);
	unsigned __int128 ups = units_per_second();
	struct pl_meter *m;

	if (ms->meter_id == 0 || ms->meter_id > SL_METER_ID_MAX)
		return pl_err(pl, SL_FAIL_BAD_METER_ID, err, err_size, -EINVAL,
			      "meter id %u out of range 1..%u", ms->meter_id, SL_METER_ID_MAX);
	if ((ms->flags & ~(SL_METER_KBPS | SL_METER_PKTPS | SL_METER_BURST | SL_METER_STATS)) ||
	    (unit != SL_METER_KBPS && unit != SL_METER_PKTPS))
		return pl_err(pl, SL_FAIL_BAD_METER_FLAGS, err, err_size, -EINVAL,
			      "meter %u: flags 0x%x need exactly one of kbps and pktps",
			      ms->meter_id, ms->flags);
	if (ms->n_bands > SL_METER_BANDS_MAX)
		return pl_err(pl, SL_FAIL_TOO_MANY_BANDS, err, err_size, -EINVAL,
			      "meter %u: %u bands, at most %u", ms->meter_id, ms->n_bands,
			      SL_METER_BANDS_MAX);
	for (unsigned b = 0; b < ms->n_bands; b++) {
		const struct sl_meter_band_spec *bs = &ms->bands[b];
		if (bs->type != SL_BAND_DROP && bs->type != SL_BAND_DSCP_REMARK)
			return pl_err(pl, SL_FAIL_BAD_BAND, err, err_size, -EINVAL,
				      "meter %u band %u: type %u is not drop or dscp_remark",
				      ms->meter_id, b + 1, bs->type);
		if (bs->rate == 0)
			return pl_err(pl, SL_FAIL_BAD_RATE, err, err_size, -EINVAL,
				      "meter %u band %u: rate 0", ms->meter_id, b + 1);
		if (bs->type == SL_BAND_DSCP_REMARK && (bs->prec_level < 1 || bs->prec_level > 3))
			return pl_err(pl, SL_FAIL_BAD_BAND_VALUE, err, err_size, -EINVAL,
				      "meter %u band %u: prec_level %u out of range 1..3",
				      ms->meter_id, b + 1, bs->prec_level);
	}
	m = aligned_alloc(64, (sizeof(*m) + ms->n_bands * sizeof(m->bands[0]) + 63) / 64 * 64);
	if (m == NULL)
		return pl_err(pl, SL_FAIL_NOMEM, err, err_size, -ENOMEM, "out of memory");
	memset(m, 0, sizeof(*m) + ms->n_bands * sizeof(m->bands[0]));
	m->flags = ms->flags;
	m->n_bands = ms->n_bands;
	for (unsigned b = 0; b < ms->n_bands; b++) {
		const struct sl_meter_band_spec *bs = &ms->bands[b];
		struct pl_meter_band *mb = &m->bands[b];
		/* Without a burst size: one second of the rate (as Open vSwitch does). */
		uint32_t burst = (ms->flags & SL_METER_BURST) && bs->burst ? bs->burst : bs->rate;
		unsigned __int128 inc, tau;

		mb->spec = *bs;
		if (unit == SL_METER_PKTPS)
			inc = ups / bs->rate; /* per packet */
		else
			inc = (ups * 8 << 16) / ((unsigned __int128)bs->rate * 1000); /* per byte */
		mb->inc = inc > 0 ? (uint64_t)inc : 1;
		/* burst / rate seconds, in the same units for both kinds: cap so sums never wrap. */
		tau = ups * burst / bs->rate;
		mb->tau = tau < (UINT64_C(1) << 62) ? (uint64_t)tau : UINT64_C(1) << 62;
		mb->tat = 0;
	}
	*out = m;
	return 0;
}

int
sl_pipeline_meter_add(struct sl_pipeline *pl, const struct sl_meter_spec *ms, char *err,
		      size_t err_size)
{
	struct pl_meters *mt = pl->meters;
	struct pl_meter_slot *slot;
	struct pl_meter *body = NULL;
	bool found;
	unsigned pos;
	int rc;

	pl->fail = SL_FAIL_NONE;
	pos = slot_pos(mt, ms->meter_id, &found);
	if (found)
		return pl_err(pl, SL_FAIL_METER_EXISTS, err, err_size, -EEXIST,
			      "meter %u already exists", ms->meter_id);
	if (mt->n >= METERS_MAX)
		return pl_err(pl, SL_FAIL_TOO_MANY_METERS, err, err_size, -ENOSPC,
			      "too many meters (%u)", METERS_MAX);
	rc = body_build(pl, ms, &body, err, err_size);
	if (rc < 0)
		return rc;
	if (mt->n == mt->cap) {
		unsigned cap = mt->cap ? mt->cap * 2 : 16;
		struct pl_meter_slot **n = realloc(mt->slots, cap * sizeof(*n));
		if (n == NULL) {
			free(body);
			return pl_err(pl, SL_FAIL_NOMEM, err, err_size, -ENOMEM, "out of memory");
		}
		mt->slots = n;
		mt->cap = cap;
	}
	slot = aligned_alloc(64, (sizeof(*slot) + 63) / 64 * 64);
	if (slot == NULL) {
		free(body);
		return pl_err(pl, SL_FAIL_NOMEM, err, err_size, -ENOMEM, "out of memory");
	}
	memset(slot, 0, sizeof(*slot));
	slot->id = ms->meter_id;
	slot->body = body;
	slot->created_tsc = sl_pipeline_tsc();
	memmove(&mt->slots[pos + 1], &mt->slots[pos], (mt->n - pos) * sizeof(mt->slots[0]));
	mt->slots[pos] = slot;
	mt->n++;
	return 0;
}

int
sl_pipeline_meter_modify(struct sl_pipeline *pl, const struct sl_meter_spec *ms, char *err,
			 size_t err_size)
{
	struct pl_meter_slot *slot;
	struct pl_meter *body = NULL, *old;
	int rc;

	pl->fail = SL_FAIL_NONE;
	if (ms->meter_id == 0 || ms->meter_id > SL_METER_ID_MAX)
		return pl_err(pl, SL_FAIL_BAD_METER_ID, err, err_size, -EINVAL,
			      "meter id %u out of range 1..%u", ms->meter_id, SL_METER_ID_MAX);
	slot = pl_meter_find(pl, ms->meter_id);
	if (slot == NULL)
		return pl_err(pl, SL_FAIL_UNKNOWN_METER, err, err_size, -ENOENT,
			      "meter %u does not exist", ms->meter_id);
	rc = body_build(pl, ms, &body, err, err_size);
	if (rc < 0)
		return rc;
	old = slot->body;
	__atomic_store_n(&slot->body, body, __ATOMIC_RELEASE);
	retire(pl, old);
	return 0;
}

static void
meter_del_one(struct sl_pipeline *pl, unsigned pos)
{
	struct pl_meters *mt = pl->meters;
	struct pl_meter_slot *slot = mt->slots[pos];
	struct sl_flow_filter flt;

	/* Flows naming the meter go first (spec 6.6: they are removed too). */
	sl_flow_filter_init(&flt);
	flt.meter_id = slot->id;
	sl_pipeline_flow_del(pl, &flt, SL_FLOW_REMOVED_DELETE);
	memmove(&mt->slots[pos], &mt->slots[pos + 1], (mt->n - pos - 1) * sizeof(mt->slots[0]));
	mt->n--;
	retire(pl, slot->body);
	retire(pl, slot);
}

unsigned
sl_pipeline_meter_del(struct sl_pipeline *pl, uint32_t meter_id)
{
	struct pl_meters *mt = pl->meters;
	unsigned n = 0;
	bool found;

	if (meter_id == SL_METER_ID_ALL) {
		while (mt->n > 0) {
			meter_del_one(pl, mt->n - 1);
			n++;
		}
		return n;
	}
	unsigned pos = slot_pos(mt, meter_id, &found);
	if (!found)
		return 0;
	meter_del_one(pl, pos);
	return 1;
}

int
sl_pipeline_meter_get(const struct sl_pipeline *pl, uint32_t meter_id, struct sl_meter_spec *ms,
		      struct sl_meter_stats *st)
{
	bool found;
	unsigned pos = slot_pos(pl->meters, meter_id, &found);
	const struct pl_meter_slot *slot;
	const struct pl_meter *m;

	if (!found)
		return -ENOENT;
	slot = pl->meters->slots[pos];
	m = slot->body;
	if (ms != NULL) {
		memset(ms, 0, sizeof(*ms));
		ms->meter_id = slot->id;
		ms->flags = m->flags;
		ms->n_bands = m->n_bands;
		for (unsigned b = 0; b < m->n_bands; b++)
			ms->bands[b] = m->bands[b].spec;
	}
	if (st != NULL) {
		memset(st, 0, sizeof(*st));
		st->flow_count = slot->ref_count;
		st->packets = __atomic_load_n(&slot->n_packets, __ATOMIC_RELAXED);
		st->bytes = __atomic_load_n(&slot->n_bytes, __ATOMIC_RELAXED);
		st->created_tsc = slot->created_tsc;
		st->n_bands = m->n_bands;
		for (unsigned b = 0; b < m->n_bands; b++) {
			st->band_packets[b] =
				__atomic_load_n(&m->bands[b].n_packets, __ATOMIC_RELAXED);
			st->band_bytes[b] = __atomic_load_n(&m->bands[b].n_bytes, __ATOMIC_RELAXED);
		}
	}
	return 0;
}

unsigned
sl_pipeline_meter_ids(const struct sl_pipeline *pl, unsigned start, uint32_t *ids, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = start; i < pl->meters->n && n < max; i++)
		ids[n++] = pl->meters->slots[i]->id;
	return n;
}

void
sl_pipeline_meter_features(struct sl_meter_features *mf)
{
	mf->max_meter = METERS_MAX;
	mf->band_types = 1u << SL_BAND_DROP | 1u << SL_BAND_DSCP_REMARK;
	mf->capabilities = SL_METER_KBPS | SL_METER_PKTPS | SL_METER_BURST | SL_METER_STATS;
	mf->max_bands = SL_METER_BANDS_MAX;
	mf->max_color = 0;
}

/* The rest of this file runs on the workers. */

/*
 * DSCP remark: add @prec levels to the drop precedence of an assured-
 * forwarding code point (RFC 2597: AFxy = 8x + 2y, y the precedence 1..3),
 * at most to 3.  Other code points, and packets that are not IP, stay as
 * they are: only AF code points have a precedence to raise.
 */
static void
dscp_remark(struct sl_pkt *p, uint8_t prec)
{
	const struct sl_field f = {.id = SL_FIELD_IP_DSCP};
	uint8_t d, x, y;

	sl_pkt_field_read(p, &f, &d);
	x = d >> 3;
	y = (d >> 1) & 3;
	if ((d & 1) || x < 1 || x > 4 || y < 1)
		return;
	y = (uint8_t)(y + prec > 3 ? 3 : y + prec);
	d = (uint8_t)(x << 3 | y << 1);
	(void)sl_pkt_field_write(p, &f, &d);
}

bool
pl_meter_run(const struct sl_pipeline *pl, struct pl_meter_slot *slot, struct sl_pkt *p,
	     uint64_t tsc)
{
	struct pl_meter *m = __atomic_load_n(&slot->body, __ATOMIC_ACQUIRE);
	uint64_t now = tsc << 4;
	bool kbps = m->flags & SL_METER_KBPS;
	int hit = -1;

	pl_count(pl, &slot->n_packets, 1);
	pl_count(pl, &slot->n_bytes, p->len);
	for (unsigned b = 0; b < m->n_bands; b++) {
		struct pl_meter_band *mb = &m->bands[b];
		uint64_t inc =
			kbps ? (uint64_t)(((unsigned __int128)p->len * mb->inc) >> 16) : mb->inc;
		/* Exceeded bands compete: the one with the highest rate applies. */
		if (!pl_gcra_take(&mb->tat, mb->tau, now, inc) &&
		    (hit < 0 || mb->spec.rate > m->bands[hit].spec.rate))
			hit = (int)b;
	}
	if (hit < 0)
		return true;
	pl_count(pl, &m->bands[hit].n_packets, 1);
	pl_count(pl, &m->bands[hit].n_bytes, p->len);
	if (m->bands[hit].spec.type == SL_BAND_DROP)
		return false;
	dscp_remark(p, m->bands[hit].spec.prec_level);
	return true;
}
