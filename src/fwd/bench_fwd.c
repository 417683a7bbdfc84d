/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_fwd: in-memory cost per packet (ns) of each forwarding mode on one
 * switch, no I/O: sl_fwd_run_burst over bursts of 32 prepared frames.
 *
 *   openflow   the pipeline with N_L2 (default 1,000) L2 entries
 *              "dl_dst=MAC,actions=output:P" (what a controller installs for
 *              shortest paths), frames to random ones of those MACs
 *   hypercube  own address 0, 4 neighbours; frames to random addresses 1..15
 *   keyflow    key 13 on a 4-port switch; random route IDs with residue 1..4
 *   openflow_exact  the same L2 entries in a table declared kind=exact on dl_dst
 *              (the best case for a table lookup; reported beside the default)
 *
 * Usage: bench_fwd [ROUNDS [BURSTS_PER_ROUND [N_L2]]].  Rounds interleave the
 * modes (O H K O H K ...); the result per mode is the median over rounds.
 * The hops byte the engines spend is restored between bursts, outside the
 * timed region.  Output: one "ns_per_pkt_MODE=X" line per mode, then
 * "tsc_hz=Y".
 */
#include "fwd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "../flowfile/flowfile.h"
#include "../core/sl_bench.h"

#define BURST 32
#define N_FRAMES 4096
#define N_PORTS 4

#define N_CONT 4

static uint8_t frames[N_CONT][N_FRAMES][64];

static void
mac_of(unsigned i, uint8_t *m)
{
	m[0] = 0x02;
	m[1] = 0x10;
	m[2] = (uint8_t)(i >> 24);
	m[3] = (uint8_t)(i >> 16);
	m[4] = (uint8_t)(i >> 8);
	m[5] = (uint8_t)i;
}

int
main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 9;
	unsigned bursts = argc > 2 ? (unsigned)atoi(argv[2]) : 20000;
	unsigned n_l2 = argc > 3 ? (unsigned)atoi(argv[3]) : 1000;
	static const char *const names[N_CONT] = {"openflow", "hypercube", "keyflow",
						  "openflow_exact"};
	static const char *const modes[N_CONT] = {
		"openflow", "hypercube:addr=0,nbr=1@1,nbr=2@2,nbr=4@3,nbr=8@4", "keyflow:key=13",
		"openflow"};
	struct sl_pipeline *pls[2];
	struct sl_pipeline_ctx *pctxs[2];
	struct sl_fwd *f;
	struct sl_fwd_ctx *c;
	struct sl_fwd_params fp[N_CONT];
	struct sl_pipeline_hooks hooks = {0};
	bool up[N_PORTS] = {true, true, true, true};
	double *res[N_CONT];
	char err[256];
	uint64_t seed = 42;
	unsigned long forwarded[N_CONT] = {0};
	struct sl_table_spec ts = {.table_id = 0, .kind = SL_TABLE_EXACT, .n_fields = 1};
	struct sl_parse_error tpe;

	for (unsigned k = 0; k < 2; k++) {
		SL_VERIFY(sl_pipeline_create(&pls[k]) == 0);
		sl_pipeline_ports_set(pls[k], N_PORTS, up);
	}
	SL_VERIFY(sl_table_spec_parse("table=0,kind=exact,fields=dl_dst", &ts, &tpe) == 0);
	if (sl_pipeline_table_declare(pls[1], &ts, err, sizeof(err)) < 0) {
		fprintf(stderr, "declare: %s\n", err);
		return 1;
	}
	for (unsigned i = 0; i < 2 * n_l2; i++) {
		struct sl_flow_spec fs;
		struct sl_parse_error pe;
		char text[128];
		uint8_t m[6];

		mac_of(i % n_l2, m);
		snprintf(text, sizeof(text),
			 "priority=100,dl_dst=%02x:%02x:%02x:%02x:%02x:%02x,actions=output:%u",
			 m[0], m[1], m[2], m[3], m[4], m[5], 2 + i % n_l2 % 3);
		SL_VERIFY(sl_flow_parse(text, &fs, &pe) == 0);
		if (sl_pipeline_flow_add(pls[i / n_l2], &fs, err, sizeof(err)) < 0) {
			fprintf(stderr, "%s: %s\n", text, err);
			return 1;
		}
	}
	for (unsigned k = 0; k < 2; k++) {
		sl_pipeline_commit(pls[k]);
		sl_pipeline_publish(pls[k]);
		pctxs[k] = sl_pipeline_ctx_create(pls[k]);
	}
	SL_VERIFY(sl_fwd_create(N_PORTS, &f) == 0 && (c = sl_fwd_ctx_create(f)) != NULL);
	for (unsigned m = 0; m < N_CONT; m++) {
		SL_VERIFY(sl_fwd_params_parse(modes[m], &fp[m], err, sizeof(err)) == 0);
		res[m] = calloc(rounds, sizeof(double));
	}
	for (unsigned i = 0; i < N_FRAMES; i++) {
		for (unsigned m = 0; m < N_CONT; m++) {
			uint8_t *fr = frames[m][i];
			uint32_t v;

			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			memset(fr, 0, 64);
			if (m == 0 || m == 3) {
				mac_of((unsigned)(seed >> 33) % n_l2, fr);
			} else {
				v = m == 1 ? 1 + (uint32_t)(seed >> 33) % 15
					   : 13 * (uint32_t)((seed >> 33) % 100000) + 1 +
						     (uint32_t)(seed >> 20) % 4;
				fr[0] = (uint8_t)(v >> 24);
				fr[1] = (uint8_t)(v >> 16);
				fr[2] = (uint8_t)(v >> 8);
				fr[3] = (uint8_t)v;
				fr[4] = m == 1 ? 0xf1 : 0xf2;
				fr[5] = 64;
			}
			fr[6] = 0x02;
			fr[12] = 0x08;
		}
	}
	double hz = sl_bench_tsc_hz();
	for (unsigned r = 0; r < rounds; r++) {
		for (unsigned m = 0; m < N_CONT; m++) {
			struct sl_pkt pkts[BURST];
			uint32_t out[BURST];
			uint8_t dr[BURST];
			uint64_t cycles = 0;

			SL_VERIFY(sl_fwd_set(f, &fp[m], NULL, err, sizeof(err)) == 0);
			for (unsigned b = 0; b < bursts; b++) {
				unsigned base = (b * BURST) % N_FRAMES;
				uint64_t t0;

				for (unsigned i = 0; i < BURST; i++) {
					frames[m][base + i][5] = 64;
					/* in_port 5 never equals an output: no fwd-loop drops. */
					sl_pkt_init(&pkts[i], frames[m][base + i], 64, 0, 5);
				}
				t0 = __rdtsc();
				forwarded[m] += sl_fwd_run_burst(c, pls[m == 3], pctxs[m == 3],
								 pkts, BURST, &hooks, out, dr);
				cycles += __rdtsc() - t0;
			}
			res[m][r] = (double)cycles / ((double)bursts * BURST) / hz * 1e9;
		}
	}
	for (unsigned m = 0; m < N_CONT; m++) {
		qsort(res[m], rounds, sizeof(double), sl_bench_cmp_double);
		printf("ns_per_pkt_%s=%.2f min=%.2f max=%.2f forwarded=%lu of %lu\n", names[m],
		       res[m][rounds / 2], res[m][0], res[m][rounds - 1], forwarded[m],
		       (unsigned long)rounds * bursts * BURST);
	}
	printf("tsc_hz=%.0f\nl2_entries=%u\n", hz, n_l2);
	sl_fwd_ctx_destroy(c);
	sl_fwd_destroy(f);
	for (unsigned k = 0; k < 2; k++) {
		sl_pipeline_ctx_destroy(pctxs[k]);
		sl_pipeline_destroy(pls[k]);
	}
	return 0;
}
