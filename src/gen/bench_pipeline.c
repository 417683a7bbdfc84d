/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_pipeline: in-memory cost per packet (ns) of the pipeline alone (no
 * I/O) for the decomposition test cases, with the generator's own frames.
 *
 * Each case is a file of lines "flow ROW", "table DECL", "group GROUP"
 * (ovs-ofctl add-group syntax) and "stream SPEC" (a sluice-gen
 * stream, built with sl_gen_frames_build): bench/pipeline_cost.py writes
 * them from python/src/sluice/decomp.py.  Frames of the streams are
 * interleaved round-robin (the streams of one case share the rate equally,
 * as decomp.streams() makes them), enter on port 1 of a two-port switch and
 * go through sl_pipeline_run_burst in bursts of 32; frames are copied into
 * place outside the timed region (actions may change them).
 *
 * A line "option no-flow-cache" runs the case without the whole-pipeline
 * flow cache (sluice --no-flow-cache).  The search budget is sluice's
 * default (--search-budget).
 *
 * Usage: bench_pipeline [-l] ROUNDS BURSTS NAME=FILE...  -l marks every
 * entry low-latency, so the FFP (its path records) carries all packets, as
 * auto-promotion (--ffp-auto) does in the switch.  Rounds interleave the
 * cases (A B C A B C ...); the result per case is the median over rounds.
 * Output: "ns_per_pkt_NAME=X min=.. max=.. out=.." lines, then "tsc_hz=Y".
 */
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "../flowfile/flowfile.h"
#include "../pipeline/pipeline.h"
#include "../core/sl_bench.h"

#define BURST 32
#define N_FRAMES 4096
#define HEADROOM 128
#define FRAME_MAX 2048
#define N_CASES_MAX 16

static bool mark_all; /* -l */

struct bcase {
	const char *name;
	struct sl_pipeline *pl;
	struct sl_pipeline_ctx *ctx;
	uint8_t (*frames)[FRAME_MAX];
	uint16_t lens[N_FRAMES];
	double *res;
	unsigned long out;
};

static int
add_group(struct sl_pipeline *pl, const char *text)
{
	static struct sl_group_spec gs;
	struct sl_parse_error perr;
	char err[256];

	/* ovs-ofctl add-group syntax, as flow files hold it (chained groups too). */
	if (sl_group_parse(text, &gs, &perr) < 0) {
		fprintf(stderr, "group %s: %s\n", text, perr.msg);
		return -1;
	}
	if (sl_pipeline_group_add(pl, &gs, err, sizeof(err)) < 0) {
		fprintf(stderr, "group %s: %s\n", text, err);
		return -1;
	}
	return 0;
}

static int
load_case(struct bcase *c, const char *path)
{
	static struct sl_gen_frames fr[64];
	unsigned n_streams = 0;
	bool up[2] = {true, true};
	char line[1024], err[256];
	FILE *fp = fopen(path, "r");

	if (fp == NULL || sl_pipeline_create(&c->pl) != 0)
		return -1;
	sl_pipeline_ports_set(c->pl, 2, up);
	while (fgets(line, sizeof(line), fp) != NULL) {
		char *sp = strchr(line, ' '), *nl = strchr(line, '\n');
		struct sl_parse_error pe;

		if (nl != NULL)
			*nl = 0;
		if (sp == NULL)
			continue;
		*sp++ = 0;
		if (strcmp(line, "flow") == 0) {
			struct sl_flow_spec fs;
			if (sl_flow_parse(sp, &fs, &pe) != 0 ||
			    sl_pipeline_flow_add(c->pl, &fs, err, sizeof(err)) < 0) {
				fprintf(stderr, "flow %s: %s\n", sp, err);
				return -1;
			}
		} else if (strcmp(line, "table") == 0) {
			struct sl_table_spec ts;
			if (sl_table_spec_parse(sp, &ts, &pe) != 0 ||
			    sl_pipeline_table_declare(c->pl, &ts, err, sizeof(err)) < 0) {
				fprintf(stderr, "table %s: failed\n", sp);
				return -1;
			}
		} else if (strcmp(line, "group") == 0) {
			if (add_group(c->pl, sp) < 0)
				return -1;
		} else if (strcmp(line, "option") == 0) {
			/* "option no-flow-cache": the per-table path alone (sluice --no-flow-cache). */
			if (strcmp(sp, "no-flow-cache") != 0) {
				fprintf(stderr, "option %s: unknown\n", sp);
				return -1;
			}
			sl_pipeline_ffp_path_enable(c->pl, false);
		} else if (strcmp(line, "stream") == 0 && n_streams < 64) {
			struct sl_gen_stream_spec s;
			if (sl_gen_stream_parse(sp, &s, err, sizeof(err)) != 0 ||
			    sl_gen_frames_build(&s, &fr[n_streams], err, sizeof(err)) != 0) {
				fprintf(stderr, "stream %s: %s\n", sp, err);
				return -1;
			}
			n_streams++;
		}
	}
	fclose(fp);
	if (n_streams == 0)
		return -1;
	sl_pipeline_commit(c->pl);
	{
		/* As sluice runs it: the default search budget (--search-budget). */
		const struct sl_search_budget sb = {.share_pct = SL_SEARCH_BUDGET_PCT_DEFAULT,
						    .cost_ns = SL_SEARCH_BUDGET_COST_NS_DEFAULT};
		sl_pipeline_search_budget_set(c->pl, &sb);
	}
	if (mark_all) {
		/* Every entry low-latency: what --ffp-auto does to entries hit steadily (docs/ffp.md). */
		struct sl_flow_filter flt;
		sl_flow_filter_init(&flt);
		flt.table_id = 255;
		sl_pipeline_flow_set_ll(c->pl, &flt, true);
	}
	sl_pipeline_publish(c->pl);
	c->ctx = sl_pipeline_ctx_create(c->pl);
	c->frames = calloc(N_FRAMES, FRAME_MAX);
	if (c->ctx == NULL || c->frames == NULL)
		return -1;
	sl_pipeline_ctx_defer_credits(c->ctx, true);
	/* Round-robin over the streams, each cycling through its own frames. */
	for (unsigned i = 0; i < N_FRAMES; i++) {
		const struct sl_gen_frames *f = &fr[i % n_streams];
		unsigned k = (i / n_streams) % f->n;
		uint32_t len = f->lens[k];

		if (len + HEADROOM > FRAME_MAX)
			return -1;
		memcpy(c->frames[i] + HEADROOM, f->data + (size_t)k * f->stride, len);
		c->lens[i] = (uint16_t)len;
	}
	for (unsigned s = 0; s < n_streams; s++)
		sl_gen_frames_free(&fr[s]);
	return 0;
}

int
main(int argc, char **argv)
{
	static uint8_t work[BURST][FRAME_MAX];
	struct bcase cases[N_CASES_MAX];
	struct sl_pipeline_hooks hooks = {0};
	unsigned n_cases = 0, rounds, bursts;

	if (argc > 1 && strcmp(argv[1], "-l") == 0) {
		mark_all = true;
		argv++;
		argc--;
	}
	if (argc < 4) {
		fprintf(stderr, "usage: bench_pipeline [-l] ROUNDS BURSTS NAME=FILE...\n");
		return 2;
	}
	rounds = (unsigned)atoi(argv[1]);
	bursts = (unsigned)atoi(argv[2]);
	for (int a = 3; a < argc && n_cases < N_CASES_MAX; a++) {
		char *eq = strchr(argv[a], '=');
		struct bcase *c = &cases[n_cases];

		memset(c, 0, sizeof(*c));
		if (eq == NULL)
			return 2;
		*eq = 0;
		c->name = argv[a];
		if (load_case(c, eq + 1) < 0) {
			fprintf(stderr, "cannot load case %s from %s\n", c->name, eq + 1);
			return 1;
		}
		c->res = calloc(rounds, sizeof(double));
		n_cases++;
	}
	double hz = sl_bench_tsc_hz();
	for (unsigned r = 0; r < rounds; r++) {
		for (unsigned m = 0; m < n_cases; m++) {
			struct bcase *c = &cases[m];
			struct sl_pkt pkts[BURST];
			uint32_t out[BURST];
			uint8_t dr[BURST];
			uint64_t cycles = 0;

			for (unsigned b = 0; b < bursts; b++) {
				unsigned base = (b * BURST) % N_FRAMES;
				uint64_t t0;

				for (unsigned i = 0; i < BURST; i++) {
					memcpy(work[i] + HEADROOM, c->frames[base + i] + HEADROOM,
					       c->lens[base + i]);
					sl_pkt_init(&pkts[i], work[i] + HEADROOM, c->lens[base + i],
						    HEADROOM, 1);
				}
				t0 = __rdtsc();
				c->out += sl_pipeline_run_burst(c->pl, c->ctx, pkts, BURST, &hooks,
								out, dr);
				/* As the datapath worker: deferred credits, flushed every 256 bursts. */
				if ((b & 255) == 255)
					sl_pipeline_ctx_flush_credits(c->pl, c->ctx);
				cycles += __rdtsc() - t0;
			}
			c->res[r] = (double)cycles / ((double)bursts * BURST) / hz * 1e9;
		}
	}
	for (unsigned m = 0; m < n_cases; m++) {
		struct bcase *c = &cases[m];

		qsort(c->res, rounds, sizeof(double), sl_bench_cmp_double);
		printf("ns_per_pkt_%s=%.2f min=%.2f max=%.2f out=%lu of %lu\n", c->name,
		       c->res[rounds / 2], c->res[0], c->res[rounds - 1], c->out,
		       (unsigned long)rounds * bursts * BURST);
		sl_pipeline_ctx_destroy(c->ctx);
		sl_pipeline_destroy(c->pl);
		free(c->frames);
		free(c->res);
	}
	printf("tsc_hz=%.0f\n", hz);
	return 0;
}
