/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the schedulers: the hash and the HRW formula on known
 * vectors, RR per burst, out-buffer flushing, flow affinity while nothing
 * is overloaded, Algorithm 1's adjustment conditions one by one, and the
 * ordered mode against a random system of workers (never reorders, while
 * adaptive in the same system does).
 */
#include "dispatch.h"

#include <errno.h>
#include <string.h>

#include "../core/sl_test.h"

uint32_t sl_dispatch_crc32_bytes(const uint8_t *p, size_t n);

/* ---- a fake system of workers: FIFO queues the test drains by hand ---- */

#define QMAX 4096
#define NW_MAX 16

struct pkt {
	uint32_t flow;
	uint32_t seq;
};

struct sys {
	unsigned n;
	unsigned ring_size;
	unsigned used_override[NW_MAX]; /* UINT32_MAX: report the real queue length */
	struct pkt *q[NW_MAX][QMAX];
	unsigned head[NW_MAX], tail[NW_MAX];
	uint64_t done[NW_MAX];
	unsigned refuse; /* enqueue refuses everything when set */
	uint64_t refused;
};

static unsigned
sys_enqueue(void *arg, unsigned w, void *const objs[], unsigned n)
{
	struct sys *s = arg;
	unsigned k = 0;

	if (s->refuse) {
		s->refused += n;
		return 0;
	}
	for (; k < n && s->tail[w] - s->head[w] < s->ring_size; k++)
		s->q[w][s->tail[w]++ % QMAX] = objs[k];
	s->refused += n - k;
	return k;
}

static unsigned
sys_used(void *arg, unsigned w)
{
	struct sys *s = arg;

	return s->used_override[w] != UINT32_MAX ? s->used_override[w] : s->tail[w] - s->head[w];
}

static uint64_t
sys_done(void *arg, unsigned w)
{
	return ((struct sys *)arg)->done[w];
}

static void
sys_init(struct sys *s, unsigned n, unsigned ring_size)
{
	memset(s, 0, sizeof(*s));
	s->n = n;
	s->ring_size = ring_size;
	for (unsigned i = 0; i < NW_MAX; i++)
		s->used_override[i] = UINT32_MAX;
}

static struct sl_dispatch *
mk(struct sys *s, enum sl_sched sched, double thr, unsigned burst, unsigned out_burst)
{
	struct sl_dispatch_params p = {
		.n_workers = s->n,
		.sched = sched,
		.threshold = thr,
		.burst = burst,
		.out_burst = out_burst,
		.ring_size = s->ring_size,
		.order_buckets = 256,
		.ops = {.enqueue = sys_enqueue, .ring_used = sys_used, .done = sys_done, .arg = s},
	};
	struct sl_dispatch *d;
	int rc = sl_dispatch_create(&p, &d);

	CHECK(rc == 0, "create: %d", rc);
	return d;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t
rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 11);
}

/* ---- tests ---- */

static void
test_hash(void)
{
	const uint8_t msg[] = "123456789";
	struct sl_dispatch_tuple t = {
		.src = 0x0a000001, .dst = 0xc0a80102, .ports = 1234u << 16 | 80, .proto = 6};
	uint8_t le[16];
	uint64_t a = (uint64_t)t.src << 32 | t.dst, b = (uint64_t)t.ports << 32 | t.proto;

	/* The CRC32-C check value (RFC 3720). */
	CHECK(sl_dispatch_crc32_bytes(msg, 9) == 0xe3069283u, "crc32c check value %08x",
	      sl_dispatch_crc32_bytes(msg, 9));
	for (int i = 0; i < 8; i++) {
		le[i] = (uint8_t)(a >> (8 * i));
		le[8 + i] = (uint8_t)(b >> (8 * i));
	}
	/* The instruction path (when built for SSE4.2) equals the portable one. */
	CHECK(sl_dispatch_crc32(&t) == sl_dispatch_crc32_bytes(le, 16), "tuple crc");
}

static void
test_hrw_vectors(void)
{
	/* Computed independently: (A*((A*T+B) xor D)+B) mod 2^31 with unbounded integers. */
	static const struct {
		uint32_t t, d, w;
	} v[] = {
		{0, 0, 1406932606u},
		{1, 0x12345678, 4405951u},
		{3, 0x7fffffff, 578169932u},
		{7, 0x2468ace, 232503723u},
	};
	for (unsigned i = 0; i < SL_ARRAY_SIZE(v); i++)
		CHECK(sl_dispatch_hrw_weight(v[i].t, v[i].d) == v[i].w, "vector %u: %u", i,
		      sl_dispatch_hrw_weight(v[i].t, v[i].d));
	/* The formula itself, with 128-bit arithmetic, on random digests and workers. */
	for (int k = 0; k < 10000; k++) {
		uint32_t d = rnd() & 0x7fffffff, t = rnd() % 64;
		unsigned __int128 x = (unsigned __int128)SL_DISPATCH_HRW_A * t + SL_DISPATCH_HRW_B;
		x = (unsigned __int128)SL_DISPATCH_HRW_A * (x ^ d) + SL_DISPATCH_HRW_B;
		uint32_t want = (uint32_t)(x % ((unsigned __int128)1 << 31));
		if (sl_dispatch_hrw_weight(t, d) != want) {
			CHECK(0, "formula t=%u d=%u", t, d);
			break;
		}
	}
	/* sl_dispatch_hrw is the argmax (lowest index on ties). */
	for (int k = 0; k < 2000; k++) {
		uint32_t d = rnd() & 0x7fffffff;
		unsigned n = 1 + rnd() % 16, best = 0;
		for (unsigned j = 1; j < n; j++)
			if (sl_dispatch_hrw_weight(j, d) > sl_dispatch_hrw_weight(best, d))
				best = j;
		if (sl_dispatch_hrw(d, n) != best) {
			CHECK(0, "argmax d=%u n=%u", d, n);
			break;
		}
	}
	CHECK(1, "hrw");
}

static void
test_names(void)
{
	for (int s = 0; s < SL_SCHED__MAX; s++)
		CHECK(sl_sched_parse(sl_sched_name((enum sl_sched)s)) == s, "name %d", s);
	CHECK(sl_sched_parse("wrr") == -EINVAL, "unknown");
}

static void
test_params(void)
{
	struct sys s;
	struct sl_dispatch *d;
	struct sl_dispatch_params p = {
		.n_workers = 2,
		.sched = SL_SCHED_HRW,
		.threshold = 0.25,
		.burst = 32,
		.out_burst = 32,
		.ring_size = 1024,
		.ops = {.enqueue = sys_enqueue, .ring_used = sys_used, .done = sys_done, .arg = &s},
	};
	struct sl_dispatch_params q;

	q = p, q.threshold = 1.5;
	CHECK(sl_dispatch_create(&q, &d) == -EINVAL, "threshold > 1");
	q = p, q.threshold = -0.1;
	CHECK(sl_dispatch_create(&q, &d) == -EINVAL, "threshold < 0");
	q = p, q.n_workers = 0;
	CHECK(sl_dispatch_create(&q, &d) == -EINVAL, "0 workers");
	q = p, q.n_workers = SL_DISPATCH_WORKERS_MAX + 1;
	CHECK(sl_dispatch_create(&q, &d) == -EINVAL, "too many workers");
	q = p, q.sched = SL_SCHED__MAX;
	CHECK(sl_dispatch_create(&q, &d) == -EINVAL, "bad sched");
	q = p, q.order_buckets = 1000;
	CHECK(sl_dispatch_create(&q, &d) == -EINVAL, "buckets not a power of two");
	CHECK(sl_dispatch_create(&p, &d) == 0, "valid");
	CHECK(sl_dispatch_request(d, SL_SCHED__MAX, -1) == -EINVAL, "request bad sched");
	CHECK(sl_dispatch_request(d, -1, 2.0) == -EINVAL, "request bad threshold");
	sl_dispatch_destroy(d);
	sl_dispatch_destroy(NULL);
}

static void
test_rr_and_flush(void)
{
	struct sys s;
	struct pkt pk[64];
	void *objs[64];
	uint32_t h[64];
	uint16_t tg[64];
	struct sl_dispatch *d;
	struct sl_dispatch_worker_stats st;

	sys_init(&s, 3, 1024);
	d = mk(&s, SL_SCHED_RR, 0.25, 32, 4);
	for (unsigned i = 0; i < 64; i++) {
		objs[i] = &pk[i];
		h[i] = rnd();
	}
	for (unsigned b = 0; b < 6; b++) {
		sl_dispatch_burst(d, objs, h, 10, tg);
		bool same = true;
		for (unsigned i = 0; i < 10; i++)
			same &= tg[i] == b % 3;
		CHECK(same, "rr burst %u goes whole to worker %u", b, b % 3);
	}
	/* 20 packets per worker, out_burst 4: five flushes each, nothing pending. */
	for (unsigned w = 0; w < 3; w++) {
		sl_dispatch_worker_stats(d, w, &st);
		CHECK(st.packets == 20 && st.enqueued == 20 && st.flushes == 5, "w%u %lu %lu %lu",
		      w, (unsigned long)st.packets, (unsigned long)st.enqueued,
		      (unsigned long)st.flushes);
		CHECK(s.tail[w] == 20, "ring of %u holds 20", w);
	}
	/* A partial out-buffer waits for flush(); a refusing ring counts ring_full. */
	sl_dispatch_burst(d, objs, h, 3, tg);
	CHECK(sl_dispatch_pending(d, 0) == 3, "3 pending");
	s.refuse = 1;
	sl_dispatch_flush(d);
	CHECK(sl_dispatch_pending(d, 0) == 0, "flushed");
	sl_dispatch_worker_stats(d, 0, &st);
	CHECK(st.ring_full == 3 && st.packets == st.enqueued + st.ring_full, "ring_full %lu",
	      (unsigned long)st.ring_full);
	sl_dispatch_destroy(d);
}

static void
test_crc32_sched(void)
{
	struct sys s;
	struct pkt pk[32];
	void *objs[32];
	uint32_t h[32];
	uint16_t tg[32];
	struct sl_dispatch *d;

	sys_init(&s, 5, 1024);
	d = mk(&s, SL_SCHED_CRC32, 0.25, 32, 32);
	for (unsigned i = 0; i < 32; i++) {
		objs[i] = &pk[i];
		h[i] = rnd();
	}
	sl_dispatch_burst(d, objs, h, 32, tg);
	bool ok = true;
	for (unsigned i = 0; i < 32; i++)
		ok &= tg[i] == (uint16_t)(((uint64_t)h[i] * 5) >> 32);
	CHECK(ok, "crc32 target = hash * n >> 32");
	sl_dispatch_flush(d);
	sl_dispatch_destroy(d);
}

/*
 * While no ring is above the threshold, adaptive places every flow on its
 * HRW worker; ordered keeps every flow on one worker (its bucket's: the HRW
 * worker of the bucket's first flow).
 */
static void
test_affinity(enum sl_sched sched)
{
	struct sys s;
	struct pkt pk[32];
	void *objs[32];
	uint32_t h[32], flows[40];
	uint16_t tg[32];
	int where[40];
	struct sl_dispatch *d;
	bool ok = true;

	for (unsigned f = 0; f < 40; f++)
		where[f] = -1;
	sys_init(&s, 7, 1024);
	d = mk(&s, sched, 0.25, 32, 8);
	for (unsigned f = 0; f < 40; f++)
		flows[f] = rnd();
	/* Colliding ids in the target[] cache: same low bits, different flows. */
	flows[1] = (flows[0] & 31) | (flows[1] & ~31u);
	flows[2] = (flows[0] & 31) | (flows[2] & ~31u);
	for (unsigned b = 0; b < 200; b++) {
		unsigned fi[32];
		for (unsigned i = 0; i < 32; i++) {
			objs[i] = &pk[i];
			fi[i] = rnd() % (b % 2 ? 3 : 40);
			h[i] = flows[fi[i]];
			/* Rings up to exactly the threshold (256 of 1024): not overloaded. */
			for (unsigned w = 0; w < 7; w++)
				s.used_override[w] = rnd() % 257;
		}
		sl_dispatch_burst(d, objs, h, 32, tg);
		for (unsigned i = 0; i < 32; i++) {
			if (sched == SL_SCHED_ADAPTIVE)
				ok &= tg[i] == sl_dispatch_hrw(h[i] & 0x7fffffff, 7);
			if (where[fi[i]] < 0)
				where[fi[i]] = tg[i];
			ok &= where[fi[i]] == tg[i];
		}
		/* Drain everything so the fake rings never fill. */
		for (unsigned w = 0; w < 7; w++) {
			s.done[w] += s.tail[w] - s.head[w];
			s.head[w] = s.tail[w];
		}
	}
	CHECK(ok, "%s: every packet on its flow's one worker", sl_sched_name(sched));
	CHECK(sl_dispatch_adjustments(d) == 0, "%s: no adjustment", sl_sched_name(sched));
	sl_dispatch_flush(d);
	sl_dispatch_destroy(d);
}

/* The worker AHRW must pick: argmax (ring_size - used) * W(j, D) over used <= thr_slots. */
static unsigned
ahrw_ref(const struct sys *s, uint32_t id, unsigned thr_slots, unsigned fallback)
{
	uint64_t best_w = 0;
	int best = -1;

	for (unsigned j = 0; j < s->n; j++) {
		unsigned u = sys_used((void *)s, j);
		if (u > thr_slots)
			continue;
		uint64_t w = (uint64_t)(s->ring_size - u) * sl_dispatch_hrw_weight(j, id);
		if (best < 0 || w > best_w) {
			best_w = w;
			best = (int)j;
		}
	}
	return best < 0 ? fallback : (unsigned)best;
}

static void
test_algorithm1(void)
{
	struct sys s;
	struct pkt pk[32];
	void *objs[32];
	uint32_t h[32];
	uint16_t tg[32];
	struct sl_dispatch *d;
	uint32_t flow = 0, id;
	unsigned home;

	for (unsigned i = 0; i < 32; i++)
		objs[i] = &pk[i];
	sys_init(&s, 4, 1000);
	d = mk(&s, SL_SCHED_ADAPTIVE, 0.25, 32, 32);
	/* A flow whose HRW home is worker 2. */
	do
		flow = rnd();
	while (sl_dispatch_hrw(flow & 0x7fffffff, 4) != 2);
	id = flow & 0x7fffffff;
	home = 2;
	for (unsigned i = 0; i < 32; i++)
		h[i] = flow;

	/* (a) tau exactly at the threshold (250/1000): no adjustment. */
	s.used_override[home] = 250;
	sl_dispatch_burst(d, objs, h, 1, tg);
	CHECK(tg[0] == home && sl_dispatch_adjustments(d) == 0, "tau == threshold: stays");
	sl_dispatch_flush(d);

	/* (b) tau above it with an empty out-buffer: AHRW over the others, weights scaled by mu. */
	s.used_override[home] = 251;
	s.used_override[0] = 10;
	s.used_override[1] = 200;
	s.used_override[3] = 900; /* overloaded too: excluded */
	unsigned want = ahrw_ref(&s, id, 250, home);
	sl_dispatch_burst(d, objs, h, 4, tg);
	CHECK(want != home && want != 3, "reference picks a non-overloaded worker");
	CHECK(tg[0] == want && tg[1] == want && tg[2] == want && tg[3] == want,
	      "the whole Subflow follows the adjustment: %u %u %u %u want %u", tg[0], tg[1], tg[2],
	      tg[3], want);
	CHECK(sl_dispatch_adjustments(d) == 1, "one adjustment per Subflow and burst: %lu",
	      (unsigned long)sl_dispatch_adjustments(d));
	struct sl_dispatch_worker_stats st;
	sl_dispatch_worker_stats(d, home, &st);
	CHECK(st.adjust_from == 1, "adjust_from");
	sl_dispatch_worker_stats(d, want, &st);
	CHECK(st.adjust_to == 1, "adjust_to");
	sl_dispatch_flush(d);

	/* mu matters: make the HRW-preferred of the two candidates nearly full (still <= 25 %). */
	{
		unsigned a = 0, b = 1, first;
		first = sl_dispatch_hrw_weight(a, id) > sl_dispatch_hrw_weight(b, id) ? a : b;
		unsigned other = first == a ? b : a;
		s.used_override[first] = 250;
		s.used_override[other] = 0;
		want = ahrw_ref(&s, id, 250, home);
		sl_dispatch_burst(d, objs, h, 1, tg);
		CHECK(tg[0] == want, "mu-scaled choice %u want %u", tg[0], want);
		sl_dispatch_flush(d);
	}

	/* (c) next burst, home no longer overloaded: back home (target[] is per burst). */
	s.used_override[home] = 0;
	sl_dispatch_burst(d, objs, h, 1, tg);
	CHECK(tg[0] == home, "fresh target[] each burst: back home");
	uint64_t adj = sl_dispatch_adjustments(d);

	/* (d) home overloaded but its out-buffer holds a packet: greedy, no adjustment. */
	s.used_override[home] = 999;
	CHECK(sl_dispatch_pending(d, home) == 1, "one pending at home");
	sl_dispatch_burst(d, objs, h, 3, tg);
	CHECK(tg[0] == home && tg[1] == home && tg[2] == home, "pending > 0: stays home");
	CHECK(sl_dispatch_adjustments(d) == adj, "no adjustment");
	sl_dispatch_flush(d);

	/* (e) every worker overloaded: nowhere better, stays. */
	for (unsigned w = 0; w < 4; w++)
		s.used_override[w] = 600;
	sl_dispatch_burst(d, objs, h, 2, tg);
	CHECK(tg[0] == home && tg[1] == home, "all overloaded: stays");
	sl_dispatch_flush(d);

	/* (f) runtime request: threshold 0.7 makes 600/1000 not overloaded... */
	CHECK(sl_dispatch_request(d, -1, 0.7) == 0, "request");
	s.used_override[home] = 650;
	s.used_override[0] = 0;
	sl_dispatch_burst(d, objs, h, 1, tg);
	CHECK(tg[0] == home, "threshold 0.7 applied");
	sl_dispatch_flush(d);
	/* ...and switching to hrw ignores load entirely. */
	CHECK(sl_dispatch_request(d, SL_SCHED_HRW, -1) == 0, "request hrw");
	s.used_override[home] = 1000;
	sl_dispatch_burst(d, objs, h, 1, tg);
	CHECK(tg[0] == home && sl_dispatch_sched(d) == SL_SCHED_HRW, "hrw ignores load");
	sl_dispatch_flush(d);
	sl_dispatch_destroy(d);
}

/*
 * A random system: bursts of skewed flows, workers that drain at random
 * rates (one is slow, so it overloads), the processing order of all
 * workers interleaved at random.  Returns packets that left before an
 * earlier packet of their flow; *moves gets the scheduler's adjustments.
 */
static uint64_t
reorder_run(enum sl_sched sched, uint64_t seed, uint64_t *adjust, uint64_t *delivered)
{
	static struct sys s;
	static struct pkt pool[1 << 16];
	uint32_t next_seq[64] = {0}, last_out[64] = {0};
	bool seen[64] = {false};
	uint64_t reordered = 0;
	unsigned pi = 0;
	struct sl_dispatch *d;

	rng_state = seed;
	sys_init(&s, 4, 64);
	d = mk(&s, sched, 0.25, 32, 4);
	*delivered = 0;
	for (unsigned round = 0; round < 3000; round++) {
		void *objs[32];
		uint32_t h[32];
		unsigned n = 1 + rnd() % 32;

		for (unsigned i = 0; i < n; i++) {
			/* Skew: flow 0 and 1 are elephants. */
			unsigned r = rnd() % 100;
			unsigned f = r < 30 ? 0 : r < 50 ? 1 : 2 + rnd() % 62;
			struct pkt *p = &pool[pi++ % SL_ARRAY_SIZE(pool)];
			p->flow = f;
			p->seq = next_seq[f]++;
			objs[i] = p;
			h[i] = f * 0x9e3779b1u;
		}
		sl_dispatch_burst(d, objs, h, n, NULL);
		if (rnd() % 4 == 0)
			sl_dispatch_flush(d);
		/* Workers run in a random order, worker 0 at a quarter of the others' speed. */
		for (unsigned k = 0; k < 4; k++) {
			unsigned w = rnd() % 4;
			unsigned budget = w == 0 ? rnd() % 4 : rnd() % 16;
			while (budget-- > 0 && s.head[w] != s.tail[w]) {
				struct pkt *p = s.q[w][s.head[w]++ % QMAX];
				if (seen[p->flow] && p->seq < last_out[p->flow])
					reordered++;
				else
					last_out[p->flow] = p->seq;
				seen[p->flow] = true;
				s.done[w]++;
				(*delivered)++;
			}
		}
	}
	*adjust = sl_dispatch_adjustments(d);
	sl_dispatch_flush(d);
	sl_dispatch_destroy(d);
	return reordered;
}

static void
test_ordered(void)
{
	uint64_t adj_a, adj_o, del_a, del_o, ro_a, ro_o;

	for (uint64_t seed = 1; seed <= 5; seed++) {
		ro_a = reorder_run(SL_SCHED_ADAPTIVE, seed * 7919, &adj_a, &del_a);
		ro_o = reorder_run(SL_SCHED_ORDERED, seed * 7919, &adj_o, &del_o);
		CHECK(adj_a > 0 && ro_a > 0, "seed %lu: adaptive adjusts (%lu) and reorders (%lu)",
		      (unsigned long)seed, (unsigned long)adj_a, (unsigned long)ro_a);
		CHECK(adj_o > 0, "seed %lu: ordered moves flows too (%lu)", (unsigned long)seed,
		      (unsigned long)adj_o);
		CHECK(ro_o == 0, "seed %lu: ordered never reorders (%lu)", (unsigned long)seed,
		      (unsigned long)ro_o);
		CHECK(del_o > 10000, "seed %lu: traffic flowed (%lu)", (unsigned long)seed,
		      (unsigned long)del_o);
	}
}

static void
test_tuple(void)
{
	uint8_t f[80] = {0};
	struct sl_dispatch_tuple t, t2;

	/* IPv4/TCP behind one VLAN tag. */
	f[12] = 0x81, f[13] = 0x00, f[16] = 0x08, f[17] = 0x00;
	uint8_t *ip = f + 18;
	ip[0] = 0x45, ip[9] = 6;
	ip[12] = 10, ip[15] = 1, ip[16] = 192, ip[17] = 168, ip[19] = 2;
	ip[20] = 0x04, ip[21] = 0xd2, ip[22] = 0x00, ip[23] = 0x50;
	sl_dispatch_tuple_extract(f, 60, &t);
	CHECK(t.src == 0x0a000001 && t.dst == 0xc0a80002 && t.proto == 6 &&
		      t.ports == (1234u << 16 | 80),
	      "ipv4 tcp %08x %08x %x %08x", t.src, t.dst, t.proto, t.ports);
	/* A fragment: no ports. */
	ip[6] = 0x20;
	sl_dispatch_tuple_extract(f, 60, &t2);
	CHECK(t2.ports == 0 && t2.src == t.src, "fragment without ports");
	ip[6] = 0;
	/* Truncated before the ports: no ports, no overread. */
	sl_dispatch_tuple_extract(f, 18 + 21, &t2);
	CHECK(t2.ports == 0 && t2.src == t.src, "truncated");
	/* IPv6/UDP. */
	memset(f, 0, sizeof(f));
	f[12] = 0x86, f[13] = 0xdd;
	ip = f + 14;
	ip[6] = 17;
	ip[8 + 15] = 1;
	ip[24 + 15] = 2;
	ip[40] = 0x00, ip[41] = 0x35, ip[42] = 0x12, ip[43] = 0x34;
	sl_dispatch_tuple_extract(f, 14 + 48, &t);
	CHECK(t.src == 1 && t.dst == 2 && t.proto == 17 && t.ports == (53u << 16 | 0x1234),
	      "ipv6 udp");
	/* ARP: MACs and the ethertype. */
	memset(f, 0, sizeof(f));
	f[12] = 0x08, f[13] = 0x06, f[5] = 7;
	sl_dispatch_tuple_extract(f, 42, &t);
	CHECK(t.proto == (0x10000u | 0x0806), "arp");
	sl_dispatch_tuple_extract(f, 5, &t);
	CHECK(t.ports == 0, "runt");
}

int
main(void)
{
	test_hash();
	test_hrw_vectors();
	test_names();
	test_params();
	test_rr_and_flush();
	test_crc32_sched();
	test_affinity(SL_SCHED_ADAPTIVE);
	test_affinity(SL_SCHED_ORDERED);
	test_algorithm1();
	test_ordered();
	test_tuple();
	return sl_test_summary();
}
