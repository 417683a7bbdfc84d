/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Schedulers of the I/O core (fast path, except create/destroy/request).
 *
 * One loop per scheduler kind, chosen once per burst, so the per-packet
 * code has no switch.  Out-buffers are arrays of opaque pointers, flushed
 * through the owner's enqueue callback when they reach out_burst.
 */
#include "dispatch.h"

#include <errno.h>
#include <string.h>

#ifdef __SSE4_2__
#include <nmmintrin.h>
#endif

#define NO_WORKER 0xffffu
#define ORDER_BUCKETS_DEFAULT 16384u

/* One target[] entry: the decision for the Subflow whose packet id is @id. */
struct cache_ent {
	uint32_t id;
	int32_t worker; /* -1: no decision yet in this burst */
};

/*
 * Ordered mode: where a bucket of flows is, and the sequence number its last
 * packet got there (low 32 bits: fewer than 2^31 packets are ever in flight
 * to one worker, so wrap-around differences stay exact).
 */
struct bucket {
	uint16_t worker; /* NO_WORKER: no packet since ordered mode began */
	uint16_t away;   /* placed off its HRW home by an adjustment */
	uint32_t last_seq;
};

struct sl_dispatch {
	struct sl_dispatch_params p;
	unsigned n; /* workers */
	enum sl_sched sched;
	double threshold;
	unsigned thr_slots; /* adjust when used > thr_slots (tau > threshold) */
	uint32_t rr_next;
	uint32_t cache_mask;
	struct cache_ent cache[SL_BURST_MAX];
	uint32_t hrw_t[SL_DISPATCH_WORKERS_MAX]; /* A * T + B per worker */
	uint16_t n_out[SL_DISPATCH_WORKERS_MAX];
	uint64_t sent[SL_DISPATCH_WORKERS_MAX]; /* sequence numbers handed out per worker */
	struct bucket *buckets;
	uint32_t bucket_mask;
	uint64_t adjustments;
	struct sl_dispatch_worker_stats st[SL_DISPATCH_WORKERS_MAX];
	/* Ordered mode: per-burst snapshots of every worker's ring use and done counter. */
	unsigned snap_used[SL_DISPATCH_WORKERS_MAX];
	uint32_t snap_done[SL_DISPATCH_WORKERS_MAX];
	/* Requests from the control thread, applied by the I/O core at a burst start. */
	int req_sched;
	double req_threshold;
	uint32_t req_gen, applied_gen;
	void *out[SL_DISPATCH_WORKERS_MAX][SL_BURST_MAX] SL_CACHE_ALIGNED;
};

static const char *const sched_names[SL_SCHED__MAX] = {
	[SL_SCHED_RR] = "rr",           [SL_SCHED_CRC32] = "crc32",
	[SL_SCHED_HRW] = "hrw",         [SL_SCHED_ADAPTIVE] = "adaptive",
	[SL_SCHED_ORDERED] = "ordered",
};

const char *
sl_sched_name(enum sl_sched s)
{
	return (unsigned)s < SL_SCHED__MAX ? sched_names[s] : "?";
}

int
sl_sched_parse(const char *name)
{
	for (unsigned i = 0; i < SL_SCHED__MAX; i++)
		if (strcmp(name, sched_names[i]) == 0)
			return (int)i;
	return -EINVAL;
}

/* ---- 5-tuple and hash ---- */

static inline uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void
sl_dispatch_tuple_extract(const uint8_t *f, uint32_t len, struct sl_dispatch_tuple *t)
{
	uint32_t off = 12;
	uint16_t type;
	uint8_t proto;

	memset(t, 0, sizeof(*t));
	if (len < 14) {
		for (uint32_t i = 0; i < len && i < 12; i++)
			t->src = t->src << 8 | f[i];
		return;
	}
	type = rd16(f + off);
	for (int v = 0; v < 2 && (type == 0x8100 || type == 0x88a8) && off + 6 <= len; v++) {
		off += 4;
		type = rd16(f + off);
	}
	off += 2;
	if (type == 0x0800 && off + 20 <= len) {
		const uint8_t *ip = f + off;
		uint32_t ihl = (uint32_t)(ip[0] & 0xf) * 4;

		proto = ip[9];
		t->src = rd32(ip + 12);
		t->dst = rd32(ip + 16);
		t->proto = proto;
		/* All fragments of a datagram on one worker: ports only when unfragmented. */
		if ((rd16(ip + 6) & 0x3fff) == 0 && ihl >= 20 && off + ihl + 4 <= len &&
		    (proto == 6 || proto == 17 || proto == 132))
			t->ports = rd32(ip + ihl);
		return;
	}
	if (type == 0x86dd && off + 40 <= len) {
		const uint8_t *ip = f + off;

		proto = ip[6];
		for (int i = 0; i < 4; i++) {
			t->src ^= rd32(ip + 8 + 4 * i);
			t->dst ^= rd32(ip + 24 + 4 * i);
		}
		t->proto = proto;
		if (off + 44 <= len && (proto == 6 || proto == 17 || proto == 132))
			t->ports = rd32(ip + 40);
		return;
	}
	t->src = rd32(f + 2);
	t->dst = rd32(f + 8);
	t->proto = 0x10000u | type;
}

/* CRC32-C (Castagnoli, reflected 0x82f63b78), one byte at a time: the portable path. */
static uint32_t
crc32c_byte(uint32_t crc, uint8_t b)
{
	crc ^= b;
	for (int k = 0; k < 8; k++)
		crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
	return crc;
}

static inline uint32_t
crc32c_u64(uint32_t crc, uint64_t v)
{
#ifdef __SSE4_2__
	return (uint32_t)_mm_crc32_u64(crc, v);
#else
	for (int i = 0; i < 8; i++)
		crc = crc32c_byte(crc, (uint8_t)(v >> (8 * i)));
	return crc;
#endif
}

uint32_t
sl_dispatch_crc32(const struct sl_dispatch_tuple *t)
{
	uint32_t crc = 0xffffffffu;

	crc = crc32c_u64(crc, (uint64_t)t->src << 32 | t->dst);
	crc = crc32c_u64(crc, (uint64_t)t->ports << 32 | t->proto);
	return ~crc;
}

/* Exposed for the unit test only (portable path vs the instruction). */
uint32_t sl_dispatch_crc32_bytes(const uint8_t *p, size_t n);
uint32_t
sl_dispatch_crc32_bytes(const uint8_t *p, size_t n)
{
	uint32_t crc = 0xffffffffu;

	for (size_t i = 0; i < n; i++)
		crc = crc32c_byte(crc, p[i]);
	return ~crc;
}

unsigned
sl_dispatch_hrw(uint32_t digest, unsigned n_workers)
{
	unsigned best = 0;
	uint32_t best_w = sl_dispatch_hrw_weight(0, digest);

	for (unsigned j = 1; j < n_workers; j++) {
		uint32_t w = sl_dispatch_hrw_weight(j, digest);
		if (w > best_w) {
			best_w = w;
			best = j;
		}
	}
	return best;
}

/* ---- create / request / stats (control path) ---- */

static void
apply(struct sl_dispatch *d, enum sl_sched s, double threshold)
{
	if (s == SL_SCHED_ORDERED && d->sched != SL_SCHED_ORDERED)
		for (uint32_t i = 0; i <= d->bucket_mask; i++)
			d->buckets[i] = (struct bucket){.worker = NO_WORKER};
	d->sched = s;
	d->threshold = threshold;
	d->thr_slots = (unsigned)(threshold * (double)d->p.ring_size);
}

int
sl_dispatch_create(const struct sl_dispatch_params *p, struct sl_dispatch **out)
{
	struct sl_dispatch *d;
	unsigned nb = p->order_buckets ? p->order_buckets : ORDER_BUCKETS_DEFAULT;
	unsigned c = 1;

	*out = NULL;
	if (p->n_workers < 1 || p->n_workers > SL_DISPATCH_WORKERS_MAX ||
	    (unsigned)p->sched >= SL_SCHED__MAX || !(p->threshold >= 0 && p->threshold <= 1) ||
	    p->burst < 1 || p->burst > SL_BURST_MAX || p->out_burst < 1 ||
	    p->out_burst > SL_BURST_MAX || p->ring_size < 1 || (nb & (nb - 1)) != 0 ||
	    nb > (1u << 24) || p->ops.enqueue == NULL || p->ops.ring_used == NULL ||
	    p->ops.done == NULL)
		return -EINVAL;
	d = aligned_alloc(64, sizeof(*d));
	if (d == NULL)
		return -ENOMEM;
	memset(d, 0, sizeof(*d));
	d->buckets = calloc(nb, sizeof(*d->buckets));
	if (d->buckets == NULL) {
		free(d);
		return -ENOMEM;
	}
	d->p = *p;
	d->p.order_buckets = nb;
	d->n = p->n_workers;
	d->bucket_mask = nb - 1;
	while (c < p->burst)
		c <<= 1;
	d->cache_mask = c - 1;
	for (unsigned j = 0; j < d->n; j++)
		d->hrw_t[j] = SL_DISPATCH_HRW_A * j + SL_DISPATCH_HRW_B;
	d->sched = SL_SCHED__MAX; /* so apply() initialises the buckets for ordered */
	apply(d, p->sched, p->threshold);
	d->req_sched = (int)p->sched;
	d->req_threshold = p->threshold;
	*out = d;
	return 0;
}

void
sl_dispatch_destroy(struct sl_dispatch *d)
{
	if (d == NULL)
		return;
	free(d->buckets);
	free(d);
}

int
sl_dispatch_request(struct sl_dispatch *d, int sched, double threshold)
{
	if (sched >= SL_SCHED__MAX || threshold > 1 || threshold != threshold)
		return -EINVAL;
	if (sched >= 0)
		d->req_sched = sched;
	if (threshold >= 0)
		d->req_threshold = threshold;
	/* The generation is the release point: the I/O core reads both fields after it. */
	__atomic_fetch_add(&d->req_gen, 1, __ATOMIC_RELEASE);
	return 0;
}

enum sl_sched
sl_dispatch_sched(const struct sl_dispatch *d)
{
	return (enum sl_sched)d->req_sched;
}

double
sl_dispatch_threshold(const struct sl_dispatch *d)
{
	return d->req_threshold;
}

void
sl_dispatch_worker_stats(const struct sl_dispatch *d, unsigned worker,
			 struct sl_dispatch_worker_stats *st)
{
	if (worker >= d->n) {
		memset(st, 0, sizeof(*st));
		return;
	}
	*st = d->st[worker];
}

uint64_t
sl_dispatch_adjustments(const struct sl_dispatch *d)
{
	return d->adjustments;
}

unsigned
sl_dispatch_pending(const struct sl_dispatch *d, unsigned worker)
{
	return worker < d->n ? d->n_out[worker] : 0;
}

/* ---- fast path ---- */

static void
flush_one(struct sl_dispatch *d, unsigned w)
{
	unsigned k = d->n_out[w];
	unsigned a = d->p.ops.enqueue(d->p.ops.arg, w, d->out[w], k);

	d->st[w].enqueued += a;
	d->st[w].ring_full += k - a;
	d->st[w].flushes++;
	/* Refused packets never reach the worker: take their sequence numbers back. */
	d->sent[w] -= k - a;
	d->n_out[w] = 0;
}

void
sl_dispatch_flush(struct sl_dispatch *d)
{
	for (unsigned w = 0; w < d->n; w++)
		if (d->n_out[w] != 0)
			flush_one(d, w);
}

static inline void
put(struct sl_dispatch *d, unsigned w, void *obj)
{
	d->out[w][d->n_out[w]++] = obj;
	d->sent[w]++;
	d->st[w].packets++;
	if (d->n_out[w] == d->p.out_burst)
		flush_one(d, w);
}

static inline unsigned
hrw(const struct sl_dispatch *d, uint32_t digest)
{
	uint32_t w[SL_DISPATCH_WORKERS_MAX];
	unsigned best = 0;

	/* Two passes: the weights vectorise (8 lanes of 32-bit multiplies with AVX2). */
	for (unsigned j = 0; j < d->n; j++)
		w[j] = (SL_DISPATCH_HRW_A * (d->hrw_t[j] ^ digest) + SL_DISPATCH_HRW_B) &
		       0x7fffffffu;
	for (unsigned j = 1; j < d->n; j++)
		if (w[j] > w[best])
			best = j;
	return best;
}

/* Worker @c is overloaded by Algorithm 1's test: empty out-buffer and tau above the threshold. */
static inline bool
overloaded(const struct sl_dispatch *d, unsigned c)
{
	return d->n_out[c] == 0 && d->p.ops.ring_used(d->p.ops.arg, c) > d->thr_slots;
}

/*
 * AHRW: the worker maximising mu_j * W(j, D) over the workers whose load
 * factor does not exceed the threshold, mu_j = 1 - tau_j (in slots:
 * ring_size - used, the same argmax).  @used[j] is worker j's ring use, live
 * (adaptive) or from the burst's snapshot (ordered).  @c when every worker is
 * above the threshold.
 */
static unsigned
ahrw_over(struct sl_dispatch *d, uint32_t digest, unsigned c, const unsigned used[])
{
	uint64_t best_w = 0;
	unsigned best = c;
	bool found = false;

	for (unsigned j = 0; j < d->n; j++) {
		if (used[j] > d->thr_slots)
			continue;
		uint64_t mu = used[j] < d->p.ring_size ? d->p.ring_size - used[j] : 0;
		uint64_t w = mu * sl_dispatch_hrw_weight(j, digest);
		if (!found || w > best_w) {
			best_w = w;
			best = j;
			found = true;
		}
	}
	if (best != c) {
		d->adjustments++;
		d->st[c].adjust_from++;
		d->st[best].adjust_to++;
	}
	return best;
}

/* AHRW on the rings' live use (Algorithm 1). */
static unsigned
ahrw(struct sl_dispatch *d, uint32_t digest, unsigned c)
{
	unsigned used[SL_DISPATCH_WORKERS_MAX];

	for (unsigned j = 0; j < d->n; j++)
		used[j] = d->p.ops.ring_used(d->p.ops.arg, j);
	return ahrw_over(d, digest, c, used);
}

static void
burst_adaptive(struct sl_dispatch *d, void *const objs[], const uint32_t hashes[], unsigned n,
	       uint16_t targets[])
{
	/* Line 1: a fresh target[] per burst: the previous burst's decisions do not carry over. */
	for (uint32_t i = 0; i <= d->cache_mask; i++)
		d->cache[i].worker = -1;
	for (unsigned i = 0; i < n; i++) {
		uint32_t id = hashes[i] & 0x7fffffffu;
		struct cache_ent *e = &d->cache[id & d->cache_mask];
		unsigned c;

		/* Lines 3-8: the Subflow's decision, computed once per burst. */
		if (e->worker < 0 || e->id != id) {
			e->id = id;
			e->worker = (int32_t)hrw(d, id);
		}
		c = (unsigned)e->worker;
		/* Lines 9-16: adjust only when nothing waits for c and c's ring is filling. */
		if (overloaded(d, c)) {
			c = ahrw(d, id, c);
			e->worker = (int32_t)c;
		}
		if (targets != NULL)
			targets[i] = (uint16_t)c;
		put(d, c, objs[i]);
	}
}

/*
 * Ordered mode works on a snapshot taken at the start of each burst: a
 * worker's ring use (overloaded or not, and mu for AHRW) and its done
 * counter.  The done counter only grows, so a stale value can only make a
 * bucket look busier than it is: a move decided on it is still safe.
 */
static inline bool
drained(const struct sl_dispatch *d, const struct bucket *b)
{
	uint32_t sent = (uint32_t)d->sent[b->worker], last = b->last_seq;

	/* Packets refused by a full ring gave their numbers back: never wait beyond sent. */
	if ((int32_t)(last - sent) > 0)
		last = sent;
	return (int32_t)(d->snap_done[b->worker] - last) >= 0;
}

/* AHRW on the burst's snapshot of ring use (ordered mode). */
static unsigned
ahrw_snap(struct sl_dispatch *d, uint32_t digest, unsigned c)
{
	return ahrw_over(d, digest, c, d->snap_used);
}

static void
burst_ordered(struct sl_dispatch *d, void *const objs[], const uint32_t hashes[], unsigned n,
	      uint16_t targets[])
{
	bool over[SL_DISPATCH_WORKERS_MAX];

	for (unsigned j = 0; j < d->n; j++) {
		d->snap_used[j] = d->p.ops.ring_used(d->p.ops.arg, j);
		d->snap_done[j] = (uint32_t)d->p.ops.done(d->p.ops.arg, j);
		over[j] = d->snap_used[j] > d->thr_slots;
	}
	for (unsigned i = 0; i < n; i++) {
		uint32_t id = hashes[i] & 0x7fffffffu;
		struct bucket *b = &d->buckets[id & d->bucket_mask];
		unsigned c = b->worker;

		/*
		 * A bucket may move only when its worker finished all its packets:
		 * away from an overloaded worker, or back home after an adjustment.
		 */
		if (c == NO_WORKER || ((b->away || over[c]) && drained(d, b))) {
			unsigned home = hrw(d, id);
			/*
			 * Hysteresis: an away bucket returns home only once home is
			 * at half the threshold, so drained flows do not all flock
			 * back the moment home dips below it (they would get stuck
			 * behind its queue when it fills again).
			 */
			bool home_ok = b->away && c != NO_WORKER
					       ? d->snap_used[home] <= d->thr_slots / 2
					       : !over[home];
			unsigned to = home_ok ? home : ahrw_snap(d, id, home);

			b->away = to != home;
			if (to != c) {
				if (c != NO_WORKER)
					d->st[to].moves++;
				b->worker = (uint16_t)to;
			}
			c = to;
		}
		if (targets != NULL)
			targets[i] = (uint16_t)c;
		b->last_seq = (uint32_t)(d->sent[c] + 1);
		put(d, c, objs[i]);
	}
}

unsigned
sl_dispatch_burst(struct sl_dispatch *d, void *const objs[], const uint32_t hashes[], unsigned n,
		  uint16_t targets[])
{
	uint32_t gen = __atomic_load_n(&d->req_gen, __ATOMIC_ACQUIRE);

	if (sl_unlikely(gen != d->applied_gen)) {
		d->applied_gen = gen;
		apply(d, (enum sl_sched)d->req_sched, d->req_threshold);
	}
	switch (d->sched) {
	case SL_SCHED_RR: {
		unsigned w = d->rr_next;
		d->rr_next = w + 1 == d->n ? 0 : w + 1;
		for (unsigned i = 0; i < n; i++) {
			if (targets != NULL)
				targets[i] = (uint16_t)w;
			put(d, w, objs[i]);
		}
		break;
	}
	case SL_SCHED_CRC32:
		for (unsigned i = 0; i < n; i++) {
			/* fastrange: the high half of hash * n is uniform on [0, n) like hash % n. */
			unsigned w = (unsigned)(((uint64_t)hashes[i] * d->n) >> 32);
			if (targets != NULL)
				targets[i] = (uint16_t)w;
			put(d, w, objs[i]);
		}
		break;
	case SL_SCHED_HRW:
		for (unsigned i = 0; i < n; i++) {
			unsigned w = hrw(d, hashes[i] & 0x7fffffffu);
			if (targets != NULL)
				targets[i] = (uint16_t)w;
			put(d, w, objs[i]);
		}
		break;
	case SL_SCHED_ADAPTIVE:
		burst_adaptive(d, objs, hashes, n, targets);
		break;
	case SL_SCHED_ORDERED:
		burst_ordered(d, objs, hashes, n, targets);
		break;
	default:
		break;
	}
	return n;
}
