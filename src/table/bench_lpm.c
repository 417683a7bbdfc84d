/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Micro-benchmark of the lpm table: ns per lookup through lookup_burst
 * (bursts of 32, and of 1 for comparison) for IPv4 with 1,000 and 100,000
 * random prefixes (/8../32, mostly /16../24) and IPv6 with 10,000.  Keys are
 * random addresses inside random prefixes of the table (90 %) or anywhere.
 *
 * Usage: bench_lpm [lookups-per-case], default 4,000,000.
 */
#include "table.h"

#include <string.h>
#include <time.h>

#define N_KEYS (1u << 16) /* distinct keys, cycled through */

static uint64_t rng_state = 0xbe4c4b1ee5ull;

static uint64_t
rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Keep the first @plen bits of a @n_bytes-byte big-endian field. */
static void
truncate_bytes(uint8_t *v, unsigned n_bytes, unsigned plen)
{
	for (unsigned i = 0; i < n_bytes; i++) {
		unsigned keep = plen > 8 * i ? SL_MIN(plen - 8 * i, 8u) : 0;
		v[i] &= (uint8_t)(0xff00 >> keep);
	}
}

static unsigned
ipv4_len(void)
{
	unsigned x = (unsigned)(rnd() % 100);

	if (x < 5)
		return 8 + (unsigned)(rnd() % 8); /* /8../15 */
	if (x < 90)
		return 16 + (unsigned)(rnd() % 9); /* /16../24 */
	return 25 + (unsigned)(rnd() % 8);         /* /25../32 */
}

static unsigned
ipv6_len(void)
{
	unsigned x = (unsigned)(rnd() % 100);

	if (x < 10)
		return 16 + (unsigned)(rnd() % 16); /* /16../31 */
	if (x < 85)
		return 32 + (unsigned)(rnd() % 33); /* /32../64 */
	return 65 + (unsigned)(rnd() % 64);         /* /65../128 */
}

static void
bench(const char *label, unsigned bits, unsigned n_prefixes, unsigned (*len_fn)(void),
      unsigned long n_lookups)
{
	unsigned n_bytes = bits / 8, key_size = SL_MAX(8u, n_bytes);
	struct sl_table_params p = {
		.kind = SL_TABLE_LPM,
		.key_size = (uint16_t)key_size,
		.lpm_bits = (uint16_t)bits,
	};
	struct sl_rule *rules = calloc(n_prefixes, sizeof(*rules));
	uint8_t *keybuf = calloc(N_KEYS, key_size);
	struct sl_table_stats st;
	struct sl_table *t;
	unsigned n = 0;
	double t0, t1;

	if (rules == NULL || keybuf == NULL || sl_table_create(&p, &t) != 0)
		abort();

	t0 = now_ns();
	while (n < n_prefixes) {
		struct sl_rule *r = &rules[n];
		unsigned plen = len_fn();

		memset(r, 0, sizeof(*r));
		for (unsigned i = 0; i < n_bytes; i++)
			r->value[i] = (uint8_t)rnd();
		memset(r->mask, 0xff, n_bytes);
		truncate_bytes(r->value, n_bytes, plen);
		truncate_bytes(r->mask, n_bytes, plen);
		r->data = (void *)(uintptr_t)(n + 1);
		if (sl_table_add(t, r) == 0)
			n++;
	}
	t1 = now_ns();
	sl_table_stats_read(t, &st);

	for (unsigned k = 0; k < N_KEYS; k++) {
		uint8_t *key = keybuf + (size_t)k * key_size;

		for (unsigned i = 0; i < n_bytes; i++)
			key[i] = (uint8_t)rnd();
		if (rnd() % 10 != 0) {
			const struct sl_rule *r = &rules[rnd() % n];

			for (unsigned i = 0; i < n_bytes; i++)
				key[i] = (key[i] & ~r->mask[i]) | r->value[i];
		}
	}

	for (unsigned burst = 32; burst >= 1; burst = burst == 32 ? 1 : 0) {
		const uint8_t *keys[SL_BURST_MAX];
		void *hits[SL_BURST_MAX];
		uint64_t n_hits = 0, lanes = sl_lanes_first(burst);
		unsigned long done = 0;
		unsigned k = 0;
		double start, ns;

		start = now_ns();
		while (done < n_lookups) {
			for (unsigned i = 0; i < burst; i++) {
				keys[i] = keybuf + (size_t)k * key_size;
				k = (k + 1) & (N_KEYS - 1);
			}
			n_hits += (uint64_t)__builtin_popcountll(
				sl_table_lookup_burst(t, keys, lanes, hits));
			done += burst;
		}
		ns = now_ns() - start;
		printf("%-10s %7u prefixes  burst %2u: %6.2f ns/lookup  (hit %.0f %%)\n", label, n,
		       burst, ns / (double)done, 100.0 * (double)n_hits / (double)done);
		if (burst == 1)
			break;
	}
	printf("%-10s %7u prefixes  %u trie nodes, %.1f MiB, add %.0f ns/rule\n", label, n,
	       st.n_groups, (double)st.mem_bytes / (1 << 20), (t1 - t0) / n);

	sl_table_destroy(t);
	free(keybuf);
	free(rules);
}

int
main(int argc, char **argv)
{
	unsigned long n_lookups = argc > 1 ? strtoul(argv[1], NULL, 0) : 4000000;

	bench("ipv4", 32, 1000, ipv4_len, n_lookups);
	bench("ipv4", 32, 100000, ipv4_len, n_lookups);
	bench("ipv6", 128, 10000, ipv6_len, n_lookups);
	return 0;
}
