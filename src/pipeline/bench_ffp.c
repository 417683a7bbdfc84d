/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_ffp: in-memory cost of the pipeline stage for one scenario of
 * bench/ffp, no I/O: sl_pipeline_run_burst over bursts of 32 frames of a
 * pcap, pipeline-only (FFP and decision cache off) vs composite (FFP on,
 * decision cache off), the contenders of `bench/run ffp`.
 *
 *   bench_ffp FLOWS PCAP [ROUNDS [BURSTS [OPTS]]]
 *
 * OPTS (comma-separated): "nomodel" gives the composite a LUT before every
 * eligible table (sl_pipeline_ffp_cost_model off); "nopath" turns the path
 * records off (the design's per-table LUTs alone); "only" runs the
 * composite alone, "ponly" the pipeline alone (for perf: `perf record`
 * shows the stages of sl_pipeline_run_burst, pipeline_run.c).
 *
 * Rounds interleave the contenders (P C P C ...).  Per contender: median
 * over rounds of the mean ns per packet, and the median per-burst time.
 * The flow file and pcap are what bench/ffp runs (`bench/run ffp
 * --write-files DIR` writes them alone).  Outside the timed region each
 * frame is copied into an rx buffer and initialised (sl_pkt_init), as
 * net_pcap and the worker do per mbuf, so frames are as hot in cache as in
 * the switch.
 */
#include "pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "../core/sl_test.h"
#include "../flowfile/flowfile.h"
#include "../core/sl_bench.h"
#define BURST 32
#define MAX_FRAMES 65536
#define HEADROOM 128

static uint8_t *frames[MAX_FRAMES];
static uint16_t lens[MAX_FRAMES];
static unsigned n_frames;
static uint8_t rxbuf[BURST][HEADROOM + 9216] __attribute__((aligned(64)));

static void
load_pcap(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t gh[24], rh[16];

	SL_VERIFY(f != NULL && fread(gh, 1, 24, f) == 24);
	while (n_frames < MAX_FRAMES && fread(rh, 1, 16, f) == 16) {
		uint32_t cap;
		memcpy(&cap, rh + 8, 4);
		SL_VERIFY(cap <= 9000);
		frames[n_frames] = malloc(HEADROOM + cap + 64);
		SL_VERIFY(fread(frames[n_frames] + HEADROOM, 1, cap, f) == cap);
		lens[n_frames++] = (uint16_t)cap;
	}
	fclose(f);
	SL_VERIFY(n_frames >= BURST);
}

static int
on_table(void *arg, const struct sl_table_spec *ts, struct sl_parse_error *err)
{
	return sl_pipeline_table_declare(arg, ts, err->msg, sizeof(err->msg));
}

static int
on_flow(void *arg, const struct sl_flow_spec *fs, struct sl_parse_error *err)
{
	return sl_pipeline_flow_add(arg, fs, err->msg, sizeof(err->msg));
}

int
main(int argc, char **argv)
{
	static const char *const names[2] = {"pipeline", "composite"};
	struct sl_pipeline *pls[2];
	struct sl_pipeline_ctx *ctxs[2];
	struct sl_pipeline_hooks hooks = {0};
	bool up[4] = {true, true, true, true};
	unsigned rounds, bursts;
	double *res[2];
	uint64_t *bt[2];
	unsigned long ll_pkts[2] = {0}, fwd[2] = {0};

	if (argc < 3) {
		fprintf(stderr, "usage: bench_ffp FLOWS PCAP [ROUNDS [BURSTS]]\n");
		return 2;
	}
	rounds = argc > 3 ? (unsigned)atoi(argv[3]) : 9;
	bursts = argc > 4 ? (unsigned)atoi(argv[4]) : 20000;
	const char *opts = argc > 5 ? argv[5] : "";
	unsigned only = strstr(opts, "ponly") ? 0 : strstr(opts, "only") != NULL;
	unsigned last = strstr(opts, "ponly") ? 1 : 2;
	load_pcap(argv[2]);
	for (unsigned k = 0; k < 2; k++) {
		struct sl_parse_error pe;
		char msg[512];

		SL_VERIFY(sl_pipeline_create(&pls[k]) == 0);
		sl_pipeline_ports_set(pls[k], 3, up);
		sl_pipeline_cache_enable(pls[k], false);
		sl_pipeline_ffp_enable(pls[k], k == 1);
		sl_pipeline_ffp_cost_model(pls[k], strstr(opts, "nomodel") == NULL);
		/* The plain pipeline (k = 0) has no flow cache either: it is the design's baseline. */
		sl_pipeline_ffp_path_enable(pls[k], k == 1 && strstr(opts, "nopath") == NULL);
		memset(&pe, 0, sizeof(pe));
		if (sl_flowfile_load(argv[1], on_table, on_flow, pls[k], &pe) < 0) {
			sl_parse_error_format(&pe, msg, sizeof(msg));
			fprintf(stderr, "%s\n", msg);
			return 1;
		}
		sl_pipeline_commit(pls[k]);
		sl_pipeline_publish(pls[k]);
		SL_VERIFY((ctxs[k] = sl_pipeline_ctx_create(pls[k])) != NULL);
		res[k] = calloc(rounds, sizeof(double));
		bt[k] = calloc((size_t)rounds * bursts, sizeof(uint64_t));
	}
	double hz = sl_bench_tsc_hz();
	for (unsigned r = 0; r < rounds; r++) {
		for (unsigned k = only; k < last; k++) {
			struct sl_pkt pkts[BURST];
			uint32_t out[BURST];
			uint8_t dr[BURST];
			uint64_t cycles = 0;

			for (unsigned b = 0; b < bursts; b++) {
				unsigned base =
					(unsigned)(((uint64_t)b * BURST) % (n_frames - BURST + 1));
				uint64_t t0, c;

				/* Copied into rx buffers first, as net_pcap does per packet. */
				for (unsigned i = 0; i < BURST; i++) {
					memcpy(rxbuf[i] + HEADROOM, frames[base + i] + HEADROOM,
					       lens[base + i]);
					sl_pkt_init(&pkts[i], rxbuf[i] + HEADROOM, lens[base + i],
						    HEADROOM, 1);
				}
				t0 = __rdtsc();
				fwd[k] += sl_pipeline_run_burst(pls[k], ctxs[k], pkts, BURST,
								&hooks, out, dr);
				c = __rdtsc() - t0;
				cycles += c;
				bt[k][(size_t)r * bursts + b] = c;
				ll_pkts[k] += (unsigned long)__builtin_popcountll(
					sl_pipeline_ll_lanes(ctxs[k]) & 0xffffffffu);
			}
			res[k][r] = (double)cycles / ((double)bursts * BURST) / hz * 1e9;
		}
	}
	for (unsigned k = 0; k < 2; k++) {
		qsort(res[k], rounds, sizeof(double), sl_bench_cmp_double);
		qsort(bt[k], (size_t)rounds * bursts, sizeof(uint64_t), sl_bench_cmp_u64);
		printf("%-9s ns/pkt median %.2f (min %.2f max %.2f)  burst p50 %.0f ns p99 %.0f ns  "
		       "forwarded %lu  ll %lu\n",
		       names[k], res[k][rounds / 2], res[k][0], res[k][rounds - 1],
		       (double)bt[k][(size_t)rounds * bursts / 2] / hz * 1e9,
		       (double)bt[k][(size_t)rounds * bursts * 99 / 100] / hz * 1e9, fwd[k],
		       ll_pkts[k]);
	}
	printf("ratio_ns_per_pkt %.3f  reduction_burst_p50 %.3f\n",
	       res[0][rounds / 2] / res[1][rounds / 2],
	       1.0 - (double)bt[1][(size_t)rounds * bursts / 2] /
			       (double)bt[0][(size_t)rounds * bursts / 2]);
	for (unsigned t = 0; t < 3; t++) {
		struct sl_ffp_lut_stats st;
		const struct sl_pipeline_ctx *c1[1] = {ctxs[1]};
		sl_pipeline_ffp_lut_stats(c1, 1, t, &st);
		struct sl_ffp_table_info ti;
		sl_pipeline_ffp_table_info(pls[1], t, &ti);
		printf("table %u active %d adaptive %d search %u ns probe %u ns; lut entries %lu hits %lu "
		       "misses %lu\n",
		       t, ti.active, ti.adaptive, ti.search_ns, ti.probe_ns,
		       (unsigned long)st.entries, (unsigned long)st.hits, (unsigned long)st.misses);
	}
	struct sl_ffp_path_stats ps;
	const struct sl_pipeline_ctx *c1[1] = {ctxs[1]};
	sl_pipeline_ffp_path_stats(pls[1], c1, 1, &ps);
	printf("path tables %u key %u B probing %lu; entries %lu hits %lu misses %lu inserts %lu "
	       "stale %lu evictions %lu\n",
	       ps.n_tables, ps.key_bytes, (unsigned long)ps.probing, (unsigned long)ps.entries,
	       (unsigned long)ps.hits, (unsigned long)ps.misses, (unsigned long)ps.inserts,
	       (unsigned long)ps.stale, (unsigned long)ps.evictions);
	return 0;
}
