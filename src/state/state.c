/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * State tables: a two-choice bucketised hash with a single writer.
 *
 * Fast path (the worker, the only writer): sl_state_lookup_burst,
 * sl_state_set_pkt, sl_state_service.  Control path: create/destroy,
 * sl_state_ctl_post (single producer of the command ring) and
 * sl_state_dump (seqlock reader).
 *
 * Slots: bucket b holds slots b*8 .. b*8+7.  sigs[slot] is 0 for a free
 * slot, else 16 bits of the key's hash with the low bit set; only the
 * writer reads signatures.  The entry of a slot holds its own `used` flag
 * and sequence count, which is what a dump reads.
 */
#include "state.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>

#define WAYS 8

struct st_entry {
	uint32_t seq;  /* odd while the writer changes the entry */
	uint32_t used; /* 1 when the slot holds a key */
	uint32_t state;
	uint32_t rollback;
	uint32_t idle_ms; /* as configured, for dumps */
	uint32_t hard_ms;
	uint64_t idle_tsc;      /* idle timeout in ticks, 0 = none */
	uint64_t last_tsc;      /* last lookup hit or set */
	uint64_t hard_deadline; /* tick at which the hard timeout fires, 0 = none */
	uint8_t key[];          /* key_size bytes */
};

struct sl_state {
	/* Read-mostly part. */
	struct sl_key_layout lookup;
	struct sl_key_layout update;
	unsigned key_size;
	unsigned stride;  /* bytes per entry (64 when the entry fits a cache line) */
	bool same_scope;  /* update scope == lookup scope: lookups find the update slot */
	size_t ents_size; /* bytes mapped for sigs + entries */
	uint32_t capacity;
	uint32_t bucket_mask; /* n_buckets - 1 */
	uint64_t tsc_hz;
	uint64_t ticks_per_ms; /* ceil(tsc_hz / 1000) */
	uint16_t *sigs;        /* n_buckets * WAYS */
	uint8_t *ents;         /* n_buckets * WAYS entries of `stride` bytes */
	size_t footprint;
	uint32_t sweep;     /* next bucket the housekeeping checks */
	uint32_t gen;       /* bumped whenever an entry leaves or changes slot (hints) */
	const void *writer; /* the worker that claimed the table (atomic), NULL: none yet */
	struct sl_state_stats st SL_CACHE_ALIGNED; /* writer-only counters */
	/* Command ring: the control thread produces, the worker consumes. */
	uint32_t ring_head SL_CACHE_ALIGNED; /* next slot to fill (producer) */
	uint32_t ring_tail SL_CACHE_ALIGNED; /* next slot to apply (consumer) */
	struct sl_state_cmd ring[SL_STATE_RING];
};

static int __attribute__((format(printf, 4, 5)))
fail(char *err, size_t size, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && size > 0) {
		va_start(ap, fmt);
		vsnprintf(err, size, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static uint32_t
pow2_at_least(uint64_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* Entries that fit a cache line take a whole one: one miss per lookup, never two. */
static unsigned
entry_stride(unsigned key_size)
{
	unsigned n = (unsigned)((sizeof(struct st_entry) + key_size + 7) & ~7u);

	return n <= 64 ? 64 : n;
}

/* Buckets for a capacity: about 1.25 slots per entry, at least one bucket. */
static uint32_t
n_buckets_for(uint32_t capacity)
{
	uint64_t slots = (uint64_t)capacity + capacity / 4;

	return pow2_at_least(SL_DIV_ROUND_UP(slots, WAYS));
}

size_t
sl_state_footprint_for(uint32_t capacity, unsigned key_size)
{
	size_t slots = (size_t)n_buckets_for(capacity) * WAYS;

	return sizeof(struct sl_state) + ((slots * sizeof(uint16_t) + 63) & ~(size_t)63) +
	       slots * entry_stride(key_size);
}

int
sl_state_create(const struct sl_state_params *p, struct sl_state **out, char *err, size_t err_size)
{
	const struct sl_field *upd = p->n_update ? p->update : p->lookup;
	unsigned n_upd = p->n_update ? p->n_update : p->n_lookup;
	uint32_t cap = p->capacity ? p->capacity : SL_STATE_CAPACITY_DEFAULT;
	struct sl_state *s;
	size_t slots;
	char name[48];
	int rc;

	*out = NULL;
	if (p->n_lookup == 0)
		return fail(err, err_size, -EINVAL, "a state table needs a lookup scope");
	if (p->n_lookup > SL_STATE_FIELDS_MAX || n_upd > SL_STATE_FIELDS_MAX)
		return fail(err, err_size, -EINVAL, "a scope has at most %d fields (got %u)",
		            SL_STATE_FIELDS_MAX, SL_MAX(p->n_lookup, n_upd));
	if (n_upd != p->n_lookup)
		return fail(err, err_size, -EINVAL,
		            "lookup scope has %u fields, update scope %u: they must pair up",
		            p->n_lookup, n_upd);
	if (cap > SL_STATE_CAPACITY_MAX)
		return fail(err, err_size, -EINVAL, "state table size %u exceeds %u", cap,
		            SL_STATE_CAPACITY_MAX);
	if (p->tsc_hz == 0)
		return fail(err, err_size, -EINVAL, "tsc_hz is 0");
	for (unsigned i = 0; i < p->n_lookup; i++) {
		const struct sl_field *a = &p->lookup[i], *b = &upd[i];

		if (a->id >= SL_FIELD__MAX || b->id >= SL_FIELD__MAX)
			return fail(err, err_size, -EINVAL, "scope field %u: unknown field id", i);
		if (a->id == SL_FIELD_STATE || b->id == SL_FIELD_STATE)
			return fail(err, err_size, -EINVAL, "'state' cannot be part of a scope");
		if (sl_field_bits(a) != sl_field_bits(b)) {
			char an[48];
			sl_field_format(a, an, sizeof(an));
			sl_field_format(b, name, sizeof(name));
			return fail(err, err_size, -EINVAL,
			            "scope field %u: lookup %s (%u bits) and update %s (%u bits) "
			            "differ in width",
			            i + 1, an, sl_field_bits(a), name, sl_field_bits(b));
		}
		for (unsigned k = 0; k < i; k++)
			if (sl_field_equal(&p->lookup[k], a) || sl_field_equal(&upd[k], b)) {
				sl_field_format(sl_field_equal(&p->lookup[k], a) ? a : b, name,
				                sizeof(name));
				return fail(err, err_size, -EINVAL, "duplicate field %s in a scope",
				            name);
			}
	}
	s = aligned_alloc(64, (sizeof(*s) + 63) & ~(size_t)63);
	if (s == NULL)
		return fail(err, err_size, -ENOMEM, "out of memory");
	memset(s, 0, sizeof(*s));
	if ((rc = sl_key_layout_init(&s->lookup, p->lookup, p->n_lookup)) < 0 ||
	    (rc = sl_key_layout_init(&s->update, upd, n_upd)) < 0) {
		free(s);
		return fail(err, err_size, rc, "scope does not fit a key of %d bytes", SL_KEY_MAX);
	}
	s->key_size = s->lookup.key_size;
	s->stride = entry_stride(s->key_size);
	s->capacity = cap;
	s->bucket_mask = n_buckets_for(cap) - 1;
	s->tsc_hz = p->tsc_hz;
	s->ticks_per_ms = (p->tsc_hz + 999) / 1000;
	slots = ((size_t)s->bucket_mask + 1) * WAYS;
	/*
	 * One anonymous mapping for signatures and entries, with transparent
	 * huge pages requested: lookups land anywhere in it, and 4 KB pages
	 * would cost a TLB miss per packet once the table outgrows the TLB.
	 */
	size_t sig_bytes = (slots * sizeof(uint16_t) + 63) & ~(size_t)63;
	s->ents_size = sig_bytes + slots * s->stride;
	void *mem =
	    mmap(NULL, s->ents_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		s->ents_size = 0;
		sl_state_destroy(s);
		return fail(err, err_size, -ENOMEM, "out of memory for %u state entries", cap);
	}
	if (s->ents_size >= (2u << 20))
		madvise(mem, s->ents_size, MADV_HUGEPAGE); /* best effort */
	/* Fault every page in now, on the control thread, never on the datapath. */
	memset(mem, 0, s->ents_size);
	s->sigs = mem;
	s->ents = (uint8_t *)mem + sig_bytes;
	s->same_scope = true;
	for (unsigned i = 0; i < s->lookup.n_fields; i++)
		s->same_scope &= sl_field_equal(&s->lookup.fields[i], &s->update.fields[i]);
	s->footprint = sl_state_footprint_for(cap, s->key_size);
	s->st.capacity = cap;
	s->st.bytes = s->footprint;
	*out = s;
	return 0;
}

void
sl_state_destroy(struct sl_state *s)
{
	if (s == NULL)
		return;
	if (s->ents_size)
		munmap(s->sigs, s->ents_size);
	free(s);
}

const struct sl_key_layout *
sl_state_layout(const struct sl_state *s, bool update)
{
	return update ? &s->update : &s->lookup;
}

unsigned
sl_state_key_size(const struct sl_state *s)
{
	return s->key_size;
}

uint32_t
sl_state_capacity(const struct sl_state *s)
{
	return s->capacity;
}

size_t
sl_state_footprint(const struct sl_state *s)
{
	return s->footprint;
}

/* The rest of the file, up to the control-thread section, runs on the writer. */

static inline struct st_entry *
entry_at(const struct sl_state *s, uint32_t slot)
{
	return (struct st_entry *)(s->ents + (size_t)slot * s->stride);
}

static inline uint64_t
key_hash(const uint8_t *key, unsigned size)
{
	uint64_t h = 0x84222325cbf29ce4ull;

	for (unsigned i = 0; i < size; i += 8) {
		uint64_t w;
		memcpy(&w, key + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	return h * 0xbf58476d1ce4e5b9ull;
}

/* The key's two buckets and signature. */
static inline void
key_place(const struct sl_state *s, uint64_t h, uint32_t *b1, uint32_t *b2, uint16_t *sig)
{
	*b1 = (uint32_t)(h >> 20) & s->bucket_mask;
	*b2 = (uint32_t)(h >> 40) & s->bucket_mask;
	if (*b2 == *b1)
		*b2 = *b1 ^ 1u; /* distinct when there are two buckets or more */
	*b2 &= s->bucket_mask;
	*sig = (uint16_t)(h | 1);
}

static inline bool
key_equal(const uint8_t *a, const uint8_t *b, unsigned size)
{
	uint64_t diff = 0;

	for (unsigned i = 0; i < size; i += 8) {
		uint64_t x, y;
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		diff |= x ^ y;
	}
	return diff == 0;
}

/* The slot holding @key in bucket @b, or -1. */
static inline int
bucket_find(const struct sl_state *s, uint32_t b, uint16_t sig, const uint8_t *key)
{
	const uint16_t *sg = &s->sigs[(size_t)b * WAYS];

	for (unsigned w = 0; w < WAYS; w++)
		if (sg[w] == sig && key_equal(entry_at(s, b * WAYS + w)->key, key, s->key_size))
			return (int)(b * WAYS + w);
	return -1;
}

static inline int
find_slot(const struct sl_state *s, const uint8_t *key, uint32_t *b1, uint32_t *b2, uint16_t *sig)
{
	int slot;

	key_place(s, key_hash(key, s->key_size), b1, b2, sig);
	if ((slot = bucket_find(s, *b1, *sig, key)) >= 0)
		return slot;
	return bucket_find(s, *b2, *sig, key);
}

/* Seqlock writer side: the dump reader retries while seq is odd or changed. */
static inline void
write_begin(struct st_entry *e)
{
	__atomic_store_n(&e->seq, e->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void
write_end(struct st_entry *e)
{
	__atomic_store_n(&e->seq, e->seq + 1, __ATOMIC_RELEASE);
}

static inline bool
entry_expired(const struct st_entry *e, uint64_t now)
{
	return (e->hard_deadline != 0 && now >= e->hard_deadline) ||
	       (e->idle_tsc != 0 && now - e->last_tsc >= e->idle_tsc);
}

static void
slot_free(struct sl_state *s, uint32_t slot)
{
	struct st_entry *e = entry_at(s, slot);

	write_begin(e);
	e->used = 0;
	write_end(e);
	s->sigs[slot] = 0;
	s->st.n_entries--;
	s->gen++;
}

/*
 * A timeout passed: the flow goes to its rollback state with no timeouts
 * (the entry leaves when that is 0).  Returns the state now in force.
 */
static uint32_t
entry_roll_back(struct sl_state *s, uint32_t slot)
{
	struct st_entry *e = entry_at(s, slot);
	uint32_t rb = e->rollback;

	s->st.expired++;
	if (rb == 0) {
		slot_free(s, slot);
		s->st.deletes++;
		return 0;
	}
	write_begin(e);
	e->state = rb;
	e->rollback = 0;
	e->idle_tsc = e->hard_deadline = 0;
	e->idle_ms = e->hard_ms = 0;
	write_end(e);
	return rb;
}

static inline uint64_t
ms_to_ticks(const struct sl_state *s, uint32_t ms)
{
	return (uint64_t)ms * s->ticks_per_ms; /* no division on the datapath */
}

static void
entry_fill(struct sl_state *s, struct st_entry *e, const struct sl_state_set *a, uint64_t now)
{
	e->state = a->state;
	e->rollback = a->rollback;
	e->idle_ms = a->idle_ms;
	e->hard_ms = a->hard_ms;
	e->idle_tsc = a->idle_ms ? ms_to_ticks(s, a->idle_ms) : 0;
	e->hard_deadline = a->hard_ms ? now + ms_to_ticks(s, a->hard_ms) : 0;
	e->last_tsc = now;
}

/* A free slot in @b, or -1. */
static inline int
bucket_free_slot(const struct sl_state *s, uint32_t b)
{
	for (unsigned w = 0; w < WAYS; w++)
		if (s->sigs[b * WAYS + w] == 0)
			return (int)(b * WAYS + w);
	return -1;
}

static inline unsigned
bucket_count(const struct sl_state *s, uint32_t b)
{
	unsigned n = 0;

	for (unsigned w = 0; w < WAYS; w++)
		n += s->sigs[b * WAYS + w] != 0;
	return n;
}

/*
 * Both buckets of a new key are full: move one entry of the full bucket @b
 * to its other bucket if that has room, and return the slot it left (or
 * -1).  The entry is written at its new place before it leaves the old
 * one, so a lookup finds it throughout; a dump running at the same time may
 * see it twice or not at all (dumps are per-entry consistent, not
 * snapshots).
 */
static int
bucket_make_room(struct sl_state *s, uint32_t b)
{
	for (unsigned w = 0; w < WAYS; w++) {
		uint32_t from = b * WAYS + w, o1, o2, alt;
		struct st_entry *e = entry_at(s, from), *ne;
		uint16_t sig;
		int to;

		key_place(s, key_hash(e->key, s->key_size), &o1, &o2, &sig);
		alt = o1 == b ? o2 : o1;
		if ((to = bucket_free_slot(s, alt)) < 0)
			continue;
		ne = entry_at(s, (uint32_t)to);
		write_begin(ne);
		memcpy((uint8_t *)ne + sizeof(ne->seq), (uint8_t *)e + sizeof(e->seq),
		       s->stride - sizeof(e->seq));
		write_end(ne);
		s->sigs[to] = s->sigs[from];
		write_begin(e);
		e->used = 0;
		write_end(e);
		s->sigs[from] = 0;
		s->gen++;
		return (int)from;
	}
	return -1;
}

/*
 * An entry in @b whose timeout passed and whose rollback state is 0, so
 * that it stands for nothing any more (reusable), or -1.  An expired entry
 * with a rollback state is a live flow in that state and stays.
 */
static int
bucket_expired_slot(const struct sl_state *s, uint32_t b, uint64_t now)
{
	for (unsigned w = 0; w < WAYS; w++) {
		uint32_t slot = b * WAYS + w;
		const struct st_entry *e = entry_at(s, slot);
		if (s->sigs[slot] != 0 && e->rollback == 0 && entry_expired(e, now))
			return (int)slot;
	}
	return -1;
}

int
sl_state_set_key(struct sl_state *s, const uint8_t *key, const struct sl_state_set *a, uint64_t now)
{
	uint32_t b1, b2;
	uint16_t sig;
	int slot = find_slot(s, key, &b1, &b2, &sig);
	bool remove = a->state == 0 && a->rollback == 0;
	struct st_entry *e;

	if (slot >= 0) {
		if (remove) {
			slot_free(s, (uint32_t)slot);
			s->st.deletes++;
			return 0;
		}
		e = entry_at(s, (uint32_t)slot);
		write_begin(e);
		entry_fill(s, e, a, now);
		write_end(e);
		s->st.sets++;
		return 0;
	}
	if (remove)
		return 0; /* state 0 is what a missing entry means already */
	slot = -1;
	if (s->st.n_entries < s->capacity) {
		/* The less loaded of the two buckets, then one cuckoo move if both are full. */
		slot = bucket_count(s, b2) < bucket_count(s, b1) ? bucket_free_slot(s, b2)
		                                                 : bucket_free_slot(s, b1);
		if (slot < 0)
			slot = bucket_make_room(s, b1);
		if (slot < 0)
			slot = bucket_make_room(s, b2);
	}
	if (slot < 0) {
		/* Full: only an entry whose timeout passed may make room. */
		slot = bucket_expired_slot(s, b1, now);
		if (slot < 0)
			slot = bucket_expired_slot(s, b2, now);
		if (slot < 0) {
			s->st.refused++;
			return -ENOSPC;
		}
		s->st.expired++;
		s->st.evicted++;
		s->st.n_entries--;
		s->gen++;
	}
	e = entry_at(s, (uint32_t)slot);
	write_begin(e);
	memcpy(e->key, key, s->key_size);
	entry_fill(s, e, a, now);
	e->used = 1;
	write_end(e);
	s->sigs[slot] = sig;
	s->st.n_entries++;
	s->st.inserts++;
	return 0;
}

int
sl_state_set_pkt(struct sl_state *s, struct sl_pkt *p, const struct sl_state_set *a, uint64_t now)
{
	uint8_t key[SL_KEY_MAX] __attribute__((aligned(8)));
	uint32_t hint = p->state_slot;

	/*
	 * The lookup stage left the slot of this packet's update-scope entry.
	 * It holds while (a) it came from this table, (b) no entry of the
	 * table left or moved since (generation), and (c) the packet's headers
	 * were not written since (sl_pkt_field_write and sl_pkt_reparse drop
	 * it): then the update key is the one the stage saw, in that slot, and
	 * neither extraction nor search is needed.
	 */
	if (hint != UINT32_MAX && p->state_owner == s && p->state_gen == s->gen &&
	    (a->state != 0 || a->rollback != 0)) {
		struct st_entry *e = entry_at(s, hint);
		SL_ASSERT(s->sigs[hint] != 0);
		write_begin(e);
		entry_fill(s, e, a, now);
		write_end(e);
		s->st.sets++;
		return 0;
	}
	sl_key_extract(&s->update, p, key);
	return sl_state_set_key(s, key, a, now);
}

int
sl_state_del_key(struct sl_state *s, const uint8_t *key)
{
	uint32_t b1, b2;
	uint16_t sig;
	int slot = find_slot(s, key, &b1, &b2, &sig);

	if (slot < 0)
		return -ENOENT;
	slot_free(s, (uint32_t)slot);
	s->st.deletes++;
	return 0;
}

void
sl_state_clear(struct sl_state *s)
{
	uint32_t slots = (s->bucket_mask + 1) * WAYS;

	for (uint32_t i = 0; i < slots; i++)
		if (s->sigs[i] != 0) {
			slot_free(s, i);
			s->st.deletes++;
		}
}

uint32_t
sl_state_get_key(const struct sl_state *s, const uint8_t *key, uint64_t now)
{
	uint32_t b1, b2;
	uint16_t sig;
	int slot = find_slot(s, key, &b1, &b2, &sig);
	const struct st_entry *e;

	if (slot < 0)
		return 0;
	e = entry_at(s, (uint32_t)slot);
	return entry_expired(e, now) ? e->rollback : e->state;
}

/* Staged search of one key per lane: where it is after stage 1 (hash) and stage 2 (signature). */
struct probe {
	uint32_t b1[SL_BURST_MAX], b2[SL_BURST_MAX];
	uint16_t sig[SL_BURST_MAX];
	int slot[SL_BURST_MAX];
};

/* Stage 1: hash each lane's key and prefetch both buckets' signature lines. */
static inline void
probe_hash(const struct sl_state *s, struct probe *pr, uint64_t lanes, uint8_t (*keys)[SL_KEY_MAX])
{
	unsigned i;

	SL_FOR_EACH_LANE (i, lanes) {
		key_place(s, key_hash(keys[i], s->key_size), &pr->b1[i], &pr->b2[i], &pr->sig[i]);
		sl_prefetch0(&s->sigs[(size_t)pr->b1[i] * WAYS]);
		sl_prefetch0(&s->sigs[(size_t)pr->b2[i] * WAYS]);
	}
}

/* Stage 2: the candidate slot by signature; prefetch its entry. */
static inline void
probe_sig(const struct sl_state *s, struct probe *pr, uint64_t lanes)
{
	unsigned i;

	SL_FOR_EACH_LANE (i, lanes) {
		const uint16_t *g1 = &s->sigs[(size_t)pr->b1[i] * WAYS];
		const uint16_t *g2 = &s->sigs[(size_t)pr->b2[i] * WAYS];
		int c = -1;

		for (unsigned w = 0; w < WAYS && c < 0; w++)
			if (g1[w] == pr->sig[i])
				c = (int)(pr->b1[i] * WAYS + w);
		for (unsigned w = 0; w < WAYS && c < 0; w++)
			if (g2[w] == pr->sig[i])
				c = (int)(pr->b2[i] * WAYS + w);
		pr->slot[i] = c;
		if (c >= 0)
			sl_prefetch0(entry_at(s, (uint32_t)c));
	}
}

/*
 * Stage 3 for one lane: the slot holding the key, or -1.  The candidate was
 * chosen before earlier lanes of this burst ran: one of them may have
 * expired or moved it (the same key twice in a burst), so the signature is
 * checked again, not only the key; a signature collision falls back to a
 * full search of both buckets.
 */
static inline int
probe_resolve(const struct sl_state *s, const struct probe *pr, unsigned i, const uint8_t *key)
{
	int c = pr->slot[i];

	if (c >= 0 && s->sigs[c] == pr->sig[i] &&
	    key_equal(entry_at(s, (uint32_t)c)->key, key, s->key_size))
		return c;
	c = bucket_find(s, pr->b1[i], pr->sig[i], key);
	return c >= 0 ? c : bucket_find(s, pr->b2[i], pr->sig[i], key);
}

void
sl_state_lookup_burst(struct sl_state *s, struct sl_pkt *pkts, uint64_t lanes, uint64_t now,
                      uint8_t (*keys)[SL_KEY_MAX])
{
	struct probe lk, up;
	uint8_t ukeys[SL_BURST_MAX][SL_KEY_MAX] __attribute__((aligned(8)));
	bool both = !s->same_scope;
	unsigned i;

	/*
	 * When the scopes differ (MAC learning: lookup dl_dst, update dl_src),
	 * most packets will set_state their update key, so its slot is found
	 * here too, in the same stages, and left as the packet's hint: the
	 * misses of both searches overlap.
	 *
	 * Extraction is a pass of its own: the extractor writes a key in small
	 * stores, and reading it back as 8-byte words at once stalls on store
	 * forwarding (measured: a third of the lookup's cycles).
	 */
	SL_FOR_EACH_LANE (i, lanes)
		sl_key_extract(&s->lookup, &pkts[i], keys[i]);
	if (both)
		SL_FOR_EACH_LANE (i, lanes)
			sl_key_extract(&s->update, &pkts[i], ukeys[i]);
	probe_hash(s, &lk, lanes, keys);
	if (both)
		probe_hash(s, &up, lanes, ukeys);
	probe_sig(s, &lk, lanes);
	if (both)
		probe_sig(s, &up, lanes);

	/* Stage 3: the states, timeouts applied; the hints when the scopes are the same. */
	SL_FOR_EACH_LANE (i, lanes) {
		int c = probe_resolve(s, &lk, i, keys[i]);
		struct st_entry *e;

		pkts[i].state_slot = UINT32_MAX;
		if (c < 0) {
			pkts[i].state = 0;
			continue;
		}
		e = entry_at(s, (uint32_t)c);
		if (sl_unlikely(entry_expired(e, now))) {
			pkts[i].state = entry_roll_back(s, (uint32_t)c);
			continue;
		}
		if (e->idle_tsc != 0)
			__atomic_store_n(&e->last_tsc, now, __ATOMIC_RELAXED);
		pkts[i].state = e->state;
		if (!both) {
			pkts[i].state_slot = (uint32_t)c;
			pkts[i].state_gen = s->gen;
			pkts[i].state_owner = s;
		}
		s->st.hits++;
	}
	s->st.lookups += (uint64_t)__builtin_popcountll(lanes);
	if (!both)
		return;
	/* Stage 4: the update keys' slots as hints (after stage 3's rollbacks). */
	SL_FOR_EACH_LANE (i, lanes) {
		int c = probe_resolve(s, &up, i, ukeys[i]);

		pkts[i].state_slot = c < 0 ? UINT32_MAX : (uint32_t)c;
		pkts[i].state_gen = s->gen;
		pkts[i].state_owner = s;
	}
}

bool
sl_state_claim(struct sl_state *s, const void *who)
{
	const void *w = __atomic_load_n(&s->writer, __ATOMIC_ACQUIRE);

	if (sl_likely(w == who))
		return true;
	if (w != NULL)
		return false;
	return __atomic_compare_exchange_n(&s->writer, &w, who, false, __ATOMIC_ACQ_REL,
	                                   __ATOMIC_ACQUIRE) ||
	       w == who;
}

void
sl_state_count_foreign(struct sl_state *s)
{
	__atomic_fetch_add(&s->st.foreign, 1, __ATOMIC_RELAXED);
}

/* Seqlock read of one entry for a reader that is not the writer: false when it is not @key's. */
static bool
entry_read(const struct st_entry *e, const uint8_t *key, unsigned key_size, uint64_t now,
           uint32_t *state)
{
	for (int tries = 0; tries < 64; tries++) {
		uint32_t s1 = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE), st, rb, used;
		uint64_t idle, hard, last;
		bool match;

		if (s1 & 1)
			continue;
		used = e->used;
		match = key_equal(e->key, key, key_size);
		st = e->state;
		rb = e->rollback;
		idle = e->idle_tsc;
		hard = e->hard_deadline;
		last = __atomic_load_n(&e->last_tsc, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) != s1)
			continue;
		if (!used || !match)
			return false;
		*state =
		    ((hard != 0 && now >= hard) || (idle != 0 && now - last >= idle)) ? rb : st;
		return true;
	}
	return false; /* the writer keeps changing it: read as no entry this time */
}

void
sl_state_peek_burst(const struct sl_state *s, struct sl_pkt *pkts, uint64_t lanes, uint64_t now,
                    uint8_t (*keys)[SL_KEY_MAX])
{
	unsigned i;

	SL_FOR_EACH_LANE (i, lanes)
		sl_key_extract(&s->lookup, &pkts[i], keys[i]);
	SL_FOR_EACH_LANE (i, lanes) {
		uint32_t b[2], st = 0;
		uint16_t sig;
		bool found = false;

		key_place(s, key_hash(keys[i], s->key_size), &b[0], &b[1], &sig);
		for (unsigned k = 0; k < 2 && !found; k++)
			for (unsigned w = 0; w < WAYS && !found; w++) {
				uint32_t slot = b[k] * WAYS + w;
				found =
				    __atomic_load_n(&s->sigs[slot], __ATOMIC_RELAXED) == sig &&
				    entry_read(entry_at(s, slot), keys[i], s->key_size, now, &st);
			}
		pkts[i].state = found ? st : 0;
		pkts[i].state_slot = UINT32_MAX;
	}
}

int
sl_state_cmd_apply(struct sl_state *s, const struct sl_state_cmd *c, uint64_t now)
{
	s->st.commands++;
	switch (c->op) {
	case SL_STATE_CMD_SET:
		return sl_state_set_key(s, c->key, &c->set, now);
	case SL_STATE_CMD_DEL:
		return sl_state_del_key(s, c->key);
	case SL_STATE_CMD_CLEAR:
		sl_state_clear(s);
		return 0;
	default:
		return -EINVAL;
	}
}

void
sl_state_service(struct sl_state *s, uint64_t now)
{
	uint32_t head = __atomic_load_n(&s->ring_head, __ATOMIC_ACQUIRE);
	uint32_t tail = s->ring_tail;

	if (head != tail) {
		while (tail != head) {
			sl_state_cmd_apply(s, &s->ring[tail % SL_STATE_RING], now);
			tail++;
		}
		__atomic_store_n(&s->ring_tail, tail, __ATOMIC_RELEASE);
	}
	/*
	 * Housekeeping: one bucket every 8th call (the sweep's cache misses
	 * should not cost every burst), so a full sweep takes 8 * n_buckets
	 * calls; lookups expire the entries they meet on their own.
	 */
	if ((++s->sweep & 7) != 0)
		return;
	uint32_t b = (s->sweep >> 3) & s->bucket_mask;
	for (unsigned w = 0; w < WAYS; w++) {
		uint32_t sl = b * WAYS + w;
		if (s->sigs[sl] != 0 && entry_expired(entry_at(s, sl), now))
			entry_roll_back(s, sl);
	}
}

/*
 * Control thread.
 */

int
sl_state_ctl_post(struct sl_state *s, const struct sl_state_cmd *c)
{
	uint32_t head = s->ring_head;

	if (head - __atomic_load_n(&s->ring_tail, __ATOMIC_ACQUIRE) >= SL_STATE_RING)
		return -ENOBUFS;
	s->ring[head % SL_STATE_RING] = *c;
	__atomic_store_n(&s->ring_head, head + 1, __ATOMIC_RELEASE);
	return 0;
}

bool
sl_state_ctl_pending(const struct sl_state *s)
{
	return __atomic_load_n(&s->ring_tail, __ATOMIC_ACQUIRE) != s->ring_head;
}

static uint32_t
ticks_to_ms(const struct sl_state *s, uint64_t ticks)
{
	uint64_t ms = (uint64_t)(((unsigned __int128)ticks * 1000 + s->tsc_hz - 1) / s->tsc_hz);

	return ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
}

int
sl_state_dump(const struct sl_state *s, uint64_t now, sl_state_dump_fn fn, void *arg)
{
	uint32_t slots = (s->bucket_mask + 1) * WAYS;
	uint8_t key[SL_KEY_MAX];

	for (uint32_t i = 0; i < slots; i++) {
		const struct st_entry *e = entry_at(s, i);
		struct sl_state_entry_info info;
		uint64_t idle_tsc, last, hard;
		uint32_t s1, used;
		int rc, tries = 0;

		/* Seqlock read: copy, then check the writer did not move meanwhile. */
		do {
			if (++tries > 1000)
				break; /* the writer keeps changing it: skip the entry this time */
			s1 = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
			if (s1 & 1)
				continue;
			used = e->used;
			memcpy(key, e->key, s->key_size);
			info.state = e->state;
			info.rollback = e->rollback;
			info.idle_ms = e->idle_ms;
			info.hard_ms = e->hard_ms;
			idle_tsc = e->idle_tsc;
			hard = e->hard_deadline;
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
		} while ((s1 & 1) || __atomic_load_n(&e->seq, __ATOMIC_RELAXED) != s1);
		if (tries > 1000 || !used)
			continue;
		last = __atomic_load_n(&e->last_tsc, __ATOMIC_RELAXED);
		info.key = key;
		info.idle_left_ms = info.hard_left_ms = 0;
		if ((hard != 0 && now >= hard) ||
		    (idle_tsc != 0 && now - last >= idle_tsc && now >= last)) {
			if (info.rollback == 0)
				continue;
			info.state = info.rollback;
			info.rollback = 0;
			info.idle_ms = info.hard_ms = 0;
		} else {
			if (idle_tsc != 0)
				info.idle_left_ms =
				    ticks_to_ms(s, idle_tsc - (now > last ? now - last : 0));
			if (hard != 0)
				info.hard_left_ms = ticks_to_ms(s, hard - now);
		}
		if ((rc = fn(&info, arg)) != 0)
			return rc;
	}
	return 0;
}

void
sl_state_stats_get(const struct sl_state *s, struct sl_state_stats *st)
{
	const uint64_t *src = (const uint64_t *)&s->st;
	uint64_t *dst = (uint64_t *)st;

	static_assert(sizeof(*st) % 8 == 0, "stats are 64-bit words");
	for (size_t i = 0; i < sizeof(*st) / 8; i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}
