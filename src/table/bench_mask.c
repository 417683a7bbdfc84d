/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Micro-benchmark of the mask table: ns per key, bursts of 32.
 *
 * Key: a 16-byte IPv4 5-tuple {proto, pad[3], src, dst, sport, dport}.
 * Rules: src/dst prefixes of 8..32 bits, ports exact, 0xff00-masked or
 * wildcard, protocol exact or wildcard, distinct priorities.  Traffic is the
 * worst case for early exit: 45 % of keys hit one of the lowest-priority
 * rules, 45 % miss everything, 10 % hit a random rule.
 *
 *   (a) 100 rules, 100 distinct masks     (b) 10,000 rules    (c) 100,000 rules
 *   (d) 1,000 rules with ~1,000 masks     (e) masks sweep: where the snapshot starts to pay
 *
 * and the few-mask tables an OpenFlow pipeline is full of, all keys hitting:
 *   (f) 1 rule on in_port, 8-byte key     (g) 8 rules dl_dst/ff:ff:ff:ff:ff:00 + dl_type, 8-byte
 *   (h) 100 rules, one 5-tuple mask, 16-byte key
 *
 * Each configuration runs TSS-only and hybrid (snapshot, empty delta), and
 * hybrid with a delta of 1/16 of the rules; contenders are interleaved and
 * the median of the repeats is printed.  Then snapshot build time and
 * add/delete rates.  Usage: bench_mask [repeats] [skip-100k | quick]
 * ("quick": only (f)-(h) and the sweep).
 */
#include "table.h"
#include "mask/mask_priv.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>

#define KEY_SIZE 16
#define N_KEYS 8192
#define BURST 32

static uint64_t rng_state = 0x1234567;

static uint64_t
rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* One random 5-tuple rule; @max_plen < 32 limits the mask variety (sweep). */
static void
make_rule(struct sl_rule *r, uint32_t prio, unsigned n_shapes)
{
	static const uint16_t port_masks[] = {0xffff, 0xff00, 0};
	unsigned shape = n_shapes ? (unsigned)(rnd() % n_shapes) : 0;
	unsigned sl, dl;
	uint32_t sm, dm;
	uint16_t spm, dpm;
	uint8_t pm;

	if (n_shapes) {
		/* Sweep: n_shapes distinct masks. */
		sl = 8 + shape % 25;
		dl = 8 + (shape / 25) % 25;
		spm = port_masks[(shape / 625) % 3];
		dpm = port_masks[(shape / 1875) % 3];
		pm = (shape / 5625) % 2 ? 0 : 0xff;
	} else {
		sl = 8 + (unsigned)(rnd() % 25);
		dl = 8 + (unsigned)(rnd() % 25);
		spm = port_masks[rnd() % 3];
		dpm = port_masks[rnd() % 3];
		pm = rnd() % 4 ? 0xff : 0;
	}
	sm = sl ? ~0u << (32 - sl) : 0;
	dm = dl ? ~0u << (32 - dl) : 0;
	memset(r, 0, sizeof(*r));
	r->mask[0] = pm;
	r->value[0] = (uint8_t)((rnd() % 2 ? 6 : 17) & pm);
	put32(r->mask + 4, sm);
	put32(r->value + 4, (uint32_t)rnd() & sm);
	put32(r->mask + 8, dm);
	put32(r->value + 8, (uint32_t)rnd() & dm);
	put16(r->mask + 12, spm);
	put16(r->value + 12, (uint16_t)rnd() & spm);
	put16(r->mask + 14, dpm);
	put16(r->value + 14, (uint16_t)rnd() & dpm);
	r->priority = prio;
}

static void
key_from_rule(uint8_t *key, const struct sl_rule *r)
{
	for (unsigned j = 0; j < KEY_SIZE; j++)
		key[j] = r->value[j] | ((uint8_t)rnd() & ~r->mask[j]);
	key[1] = key[2] = key[3] = 0;
}

/* Rules get priorities 1..n (rule i has priority i + 1), so rules[0..n/10) are the lowest. */
static struct sl_rule *
make_rules(unsigned n, unsigned n_shapes, bool distinct_masks)
{
	struct sl_rule *rules = calloc(n, sizeof(*rules));

	for (unsigned i = 0; i < n; i++) {
		for (;;) {
			bool dup = false;

			make_rule(&rules[i], i + 1, n_shapes);
			if (!distinct_masks)
				break;
			for (unsigned j = 0; j < i && !dup; j++)
				dup = memcmp(rules[j].mask, rules[i].mask, KEY_SIZE) == 0;
			if (!dup)
				break;
		}
		rules[i].data = &rules[i];
	}
	return rules;
}

static uint8_t (*keys)[KEY_SIZE];

static void
make_keys(const struct sl_rule *rules, unsigned n)
{
	for (unsigned i = 0; i < N_KEYS; i++) {
		unsigned roll = (unsigned)(rnd() % 100);

		if (roll < 45) {
			key_from_rule(keys[i], &rules[rnd() % SL_MAX(n / 10, 1u)]);
		} else if (roll < 55) {
			key_from_rule(keys[i], &rules[rnd() % n]);
		} else {
			for (unsigned j = 0; j < KEY_SIZE; j++)
				keys[i][j] = (uint8_t)rnd();
			keys[i][0] = 50; /* a protocol no rule names */
			keys[i][1] = keys[i][2] = keys[i][3] = 0;
		}
	}
}

static volatile uint64_t sink;

/* ns per key over ~@budget seconds of bursts over N_KEYS keys of @stride bytes at @kbuf. */
static double
measure_keys(const struct sl_table *t, const uint8_t *kbuf, unsigned stride, double budget)
{
	const uint8_t *kp[BURST];
	void *hits[BURST];
	uint64_t n_bursts = 0, acc = 0;
	double t0 = now(), t1;
	unsigned pos = 0;

	do {
		for (unsigned r = 0; r < 16; r++) {
			for (unsigned i = 0; i < BURST; i++)
				kp[i] = kbuf + (size_t)((pos + i) % N_KEYS) * stride;
			pos = (pos + BURST) % N_KEYS;
			acc += __builtin_popcountll(
				sl_table_lookup_burst(t, kp, sl_lanes_first(BURST), hits));
			n_bursts++;
		}
		t1 = now();
	} while (t1 - t0 < budget);
	sink += acc;
	return (t1 - t0) * 1e9 / (double)(n_bursts * BURST);
}

static double
measure(const struct sl_table *t, double budget)
{
	return measure_keys(t, keys[0], KEY_SIZE, budget);
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	return v[n / 2];
}

static struct sl_table *
make_table_ks(const struct sl_rule *rules, unsigned n, bool snap, double *add_rate,
	      uint16_t key_size)
{
	struct sl_table_params p = {.kind = SL_TABLE_MASK, .key_size = key_size};
	struct sl_mask_tuning tu;
	struct sl_table *t;
	double t0;

	if (sl_table_create(&p, &t) != 0)
		abort();
	/* Measuring the add rate: the real policy.  Otherwise: one build at the end. */
	sl_mask_tuning_get(t->impl, &tu);
	tu.snap_enable = snap && add_rate != NULL;
	tu.snap_min_subs = 1; /* the sweep measures the snapshot with few masks too */
	sl_mask_tuning_set(t->impl, &tu);
	t0 = now();
	for (unsigned i = 0; i < n; i++)
		if (sl_table_add(t, &rules[i]) != 0)
			abort();
	if (add_rate)
		*add_rate = n / (now() - t0);
	tu.snap_enable = snap;
	sl_mask_tuning_set(t->impl, &tu);
	return t;
}

static struct sl_table *
make_table(const struct sl_rule *rules, unsigned n, bool snap, double *add_rate)
{
	return make_table_ks(rules, n, snap, add_rate, KEY_SIZE);
}

static unsigned repeats = 5;

/* One configuration: TSS-only vs hybrid vs hybrid with a delta. */
static void
run_config(const char *name, unsigned n, unsigned n_shapes, bool distinct)
{
	struct sl_rule *rules = make_rules(n, n_shapes, distinct);
	unsigned n_delta = n / 16;
	struct sl_table *tss, *hyb, *hyd;
	struct sl_mask_tuning tu;
	struct sl_mask_info info;
	double v_tss[16], v_hyb[16], v_hyd[16], budget = n >= 10000 ? 0.15 : 0.08;

	make_keys(rules, n);
	tss = make_table(rules, n, false, NULL);
	hyb = make_table(rules, n, true, NULL);
	sl_mask_snapshot_build(hyb->impl);
	/* Hybrid with a delta: build over n - n_delta rules, add the rest. */
	hyd = make_table(rules, n - n_delta, true, NULL);
	sl_mask_tuning_get(hyd->impl, &tu);
	tu.delta_min = n;
	tu.soft_duty_pct = 0;
	sl_mask_tuning_set(hyd->impl, &tu);
	sl_mask_snapshot_build(hyd->impl);
	for (unsigned i = n - n_delta; i < n; i++)
		sl_table_add(hyd, &rules[i]);
	for (unsigned r = 0; r < repeats; r++) {
		v_tss[r] = measure(tss, budget);
		v_hyb[r] = measure(hyb, budget);
		v_hyd[r] = measure(hyd, budget);
	}
	sl_mask_info_get(hyd->impl, &info);
	printf("%-34s %7u %6u | %9.1f %9.1f %9.1f  (delta %u rules / %u masks)\n", name, n,
	       info.n_subs, median(v_tss, repeats), median(v_hyb, repeats), median(v_hyd, repeats),
	       info.delta_rules, info.delta_subs);
	sl_table_destroy(tss);
	sl_table_destroy(hyb);
	sl_table_destroy(hyd);
	free(rules);
}

/*
 * A few-mask table where every key hits: TSS-only vs a forced snapshot.
 * @kind: 'f' in_port (1 rule), 'g' dl_dst/40 + dl_type (8 rules), 'h' 5-tuple (100 rules).
 */
static void
run_small(const char *name, char kind)
{
	unsigned ks = kind == 'h' ? 16 : 8, n = kind == 'f' ? 1 : kind == 'g' ? 8 : 100;
	struct sl_rule *rules = calloc(n, sizeof(*rules));
	uint8_t *kbuf = calloc(N_KEYS, ks);
	struct sl_table *tss, *hyb;
	double v_tss[16], v_hyb[16];

	for (unsigned i = 0; i < n; i++) {
		struct sl_rule *r = &rules[i];

		r->priority = 100 + i;
		r->data = r;
		if (kind == 'f') {
			/* in_port (4 bytes) + 4 bytes of padding. */
			memset(r->mask, 0xff, 4);
			put32(r->value, 1);
		} else if (kind == 'g') {
			/* dl_dst (6) with the last byte wildcarded, dl_type (2). */
			memset(r->mask, 0xff, 8);
			r->mask[5] = 0;
			for (unsigned j = 0; j < 5; j++)
				r->value[j] = (uint8_t)rnd();
			r->value[0] &= 0xfe;
			put16(r->value + 6, 0x0800);
		} else {
			/* proto exact, src /24, dst exact, dport exact. */
			r->mask[0] = 0xff;
			r->value[0] = 6;
			put32(r->mask + 4, 0xffffff00);
			put32(r->value + 4, (uint32_t)rnd() & 0xffffff00);
			put32(r->mask + 8, 0xffffffff);
			put32(r->value + 8, (uint32_t)rnd());
			put16(r->mask + 14, 0xffff);
			put16(r->value + 14, (uint16_t)rnd());
		}
	}
	for (unsigned k = 0; k < N_KEYS; k++) {
		const struct sl_rule *r = &rules[rnd() % n];
		uint8_t *key = kbuf + (size_t)k * ks;

		for (unsigned j = 0; j < ks; j++)
			key[j] = r->value[j] | ((uint8_t)rnd() & ~r->mask[j]);
		if (kind == 'f')
			memset(key + 4, 0, 4);
	}
	tss = make_table_ks(rules, n, false, NULL, (uint16_t)ks);
	hyb = make_table_ks(rules, n, true, NULL, (uint16_t)ks);
	sl_mask_snapshot_build(hyb->impl);
	for (unsigned r = 0; r < repeats; r++) {
		v_tss[r] = measure_keys(tss, kbuf, ks, 0.05);
		v_hyb[r] = measure_keys(hyb, kbuf, ks, 0.05);
	}
	printf("%-34s %7u %6u | %9.1f %9.1f %9s  (key %u, all hit)\n", name, n, 1u,
	       median(v_tss, repeats), median(v_hyb, repeats), "-", ks);
	sl_table_destroy(tss);
	sl_table_destroy(hyb);
	free(kbuf);
	free(rules);
}

/* Snapshot build time and add/delete rates. */
static void
run_update_rates(unsigned n)
{
	struct sl_rule *rules = make_rules(n, 0, false);
	struct sl_table *t;
	struct sl_mask_info info;
	struct sl_table_stats st;
	double add_tss, add_hyb, t0, b;

	t = make_table(rules, n, false, &add_tss);
	t0 = now();
	for (unsigned i = 0; i < n; i++)
		sl_table_del(t, &rules[i], NULL);
	printf("%u rules, TSS only:  add %.0f rules/s, delete %.0f rules/s\n", n, add_tss,
	       n / (now() - t0));
	sl_table_destroy(t);

	t = make_table(rules, n, true, &add_hyb);
	sl_mask_info_get(t->impl, &info);
	sl_table_stats_read(t, &st);
	t0 = now();
	sl_mask_snapshot_build(t->impl);
	b = now() - t0;
	printf("%u rules, hybrid:    add %.0f rules/s (%" PRIu64
	       " rebuilds on the way), snapshot build %.3f s, %u masks, %.1f MB TSS\n",
	       n, add_hyb, info.n_rebuilds, b, info.n_subs, st.mem_bytes / 1e6);
	/* Steady-state churn: delete and re-add random rules. */
	t0 = now();
	for (unsigned i = 0; i < n / 4; i++) {
		unsigned j = (unsigned)(rnd() % n);
		sl_table_del(t, &rules[j], NULL);
		sl_table_add(t, &rules[j]);
	}
	sl_mask_info_get(t->impl, &info);
	printf("%u rules, hybrid:    churn (del+add) %.0f pairs/s, %" PRIu64 " rebuilds total\n", n,
	       (n / 4) / (now() - t0), info.n_rebuilds);
	t0 = now();
	for (unsigned i = 0; i < n; i++)
		sl_table_del(t, &rules[i], NULL);
	printf("%u rules, hybrid:    delete all %.0f rules/s\n", n, n / (now() - t0));
	sl_table_destroy(t);
	free(rules);
}

int
main(int argc, char **argv)
{
	char prefix[64];
	char *eal_args[] = {argv[0],       "--no-huge", "-m", "1024", "--no-pci",
			    "--no-shconf", prefix,      "-l", "0",    "--log-level=error"};
	bool big = true, quick = false;

	if (argc > 1)
		repeats = SL_MAX(1u, SL_MIN(15u, (unsigned)atoi(argv[1])));
	if (argc > 2)
		big = false;
	if (argc > 2 && strcmp(argv[2], "quick") == 0)
		quick = true;
	snprintf(prefix, sizeof(prefix), "--file-prefix=sl_tern_%d", (int)getpid());
	if (rte_eal_init((int)SL_ARRAY_SIZE(eal_args), eal_args) < 0) {
		fprintf(stderr, "rte_eal_init failed\n");
		return 1;
	}
	keys = calloc(N_KEYS, KEY_SIZE);
	printf("ns/key, burst %d, median of %u; traffic: 45%% lowest-priority hits, 45%% misses\n",
	       BURST, repeats);
	printf("%-34s %7s %6s | %9s %9s %9s\n", "config", "rules", "masks", "tss", "hybrid",
	       "hyb+delta");
	run_small("(f) in_port, 1 rule", 'f');
	run_small("(g) dl_dst/40+dl_type, 8 rules", 'g');
	run_small("(h) 5-tuple, 1 mask, 100 rules", 'h');
	if (!quick) {
		run_config("(a) 100 rules, distinct masks", 100, 0, true);
		run_config("(d) 1000 rules, ~1000 masks", 1000, 0, true);
		run_config("(b) 10K rules", 10000, 0, false);
	}
	if (big)
		run_config("(c) 100K rules", 100000, 0, false);
	for (unsigned m = 1; m <= 64; m *= 2) {
		char name[64];
		snprintf(name, sizeof(name), "(e) sweep: %u masks", m);
		run_config(name, 1000, m, false);
	}
	if (!quick)
		run_update_rates(10000);
	if (big)
		run_update_rates(100000);
	{
		char rundir[4096];
		snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
		rte_eal_cleanup();
		sl_dir_remove(rundir); /* DPDK leaves /var/run/dpdk/PREFIX behind */
	}
	return 0;
}
