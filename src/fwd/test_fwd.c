/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwd unit tests: text form, parameter checks, each engine against a
 * per-packet reference, bursts of every size mixing engines and the
 * pipeline (results land in the right lanes, packet-in details too),
 * drop counters, and configuration swaps through the sync hook.
 */
#include "fwd.h"

#include <string.h>

#include "../core/sl_test.h"
#include "../flowfile/flowfile.h"

#define N_PORTS 4

static uint64_t rng = 88172645463325252ull;
static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static unsigned n_syncs;
static void
count_sync(void *arg)
{
	(void)arg;
	n_syncs++;
}

static void
frame(uint8_t *buf, uint32_t value, uint8_t tag, uint8_t hops)
{
	memset(buf, 0, 64);
	buf[0] = (uint8_t)(value >> 24);
	buf[1] = (uint8_t)(value >> 16);
	buf[2] = (uint8_t)(value >> 8);
	buf[3] = (uint8_t)value;
	buf[4] = tag;
	buf[5] = hops;
	buf[6] = 0x02; /* src MAC 02:00:00:00:00:01 */
	buf[11] = 0x01;
	buf[12] = 0x08; /* IPv4 ethertype, no payload needed */
}

static enum sl_fwd_fail
try_params(struct sl_fwd *f, const char *text)
{
	struct sl_fwd_params p;
	char err[256];

	if (sl_fwd_params_parse(text, &p, err, sizeof(err)) < 0)
		return (enum sl_fwd_fail) - 1;
	return sl_fwd_params_check(f, &p, err, sizeof(err));
}

static void
test_text(struct sl_fwd *f)
{
	struct sl_fwd_params p, q;
	char err[256], buf[512], buf2[512];
	const char *text = "hypercube:addr=5,nbr=4@1,nbr=7@2,nbr=1@3,tag=0xc1;keyflow:key=13";

	CHECK(sl_fwd_params_parse(text, &p, err, sizeof(err)) == 0, "%s", err);
	CHECK(p.n_modes == 2 && p.modes[0].mode == SL_FWD_HYPERCUBE && p.modes[0].tag == 0xc1 &&
		      p.modes[0].hc.addr == 5 && p.modes[0].hc.n_neigh == 3 &&
		      p.modes[0].hc.neigh[1].addr == 7 && p.modes[0].hc.neigh[1].port == 2,
	      "hypercube parsed");
	CHECK(p.modes[1].mode == SL_FWD_KEYFLOW && p.modes[1].kf.key == 13 &&
		      p.modes[1].tag == 0xf2,
	      "keyflow parsed with its default tag");
	CHECK(sl_fwd_params_format(&p, buf, sizeof(buf)) > 0, "format");
	CHECK(sl_fwd_params_parse(buf, &q, err, sizeof(err)) == 0, "reparse %s: %s", buf, err);
	CHECK(sl_fwd_params_format(&q, buf2, sizeof(buf2)) > 0 && strcmp(buf, buf2) == 0,
	      "round trip %s / %s", buf, buf2);
	CHECK(sl_fwd_params_parse("openflow", &p, err, sizeof(err)) == 0 && p.n_modes == 0,
	      "openflow = no engine");
	CHECK(sl_fwd_params_format(&p, buf, sizeof(buf)) > 0 && strcmp(buf, "openflow") == 0,
	      "openflow formats as %s", buf);
	CHECK(sl_fwd_params_parse("bcube:x=1", &p, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "bcube") != NULL,
	      "unknown mode named: %s", err);
	CHECK(sl_fwd_params_parse("keyflow:key=abc", &p, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "abc") != NULL,
	      "bad number named: %s", err);
	CHECK(sl_fwd_params_parse("keyflow:tag=300", &p, err, sizeof(err)) == -EINVAL, "tag range");
	CHECK(sl_fwd_params_parse("hypercube:nbr=4", &p, err, sizeof(err)) == -EINVAL,
	      "nbr without port");
	CHECK(sl_fwd_params_parse("keyflow:key", &p, err, sizeof(err)) == -EINVAL, "no '='");
	/* A mode's required keys ("hypercube:" was accepted). */
	CHECK(sl_fwd_params_parse("hypercube:", &p, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "missing addr=") != NULL,
	      "hypercube without addr: %s", err);
	CHECK(sl_fwd_params_parse("hypercube", &p, err, sizeof(err)) == -EINVAL,
	      "hypercube without parameters");
	CHECK(try_params(f, "hypercube:addr=1") == SL_FWD_FAIL_BAD_PARAM,
	      "hypercube without neighbours");
	CHECK(sl_fwd_params_parse("keyflow:tag=0xf2", &p, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "missing key=") != NULL,
	      "keyflow without key: %s", err);
	CHECK(sl_fwd_params_parse("openflow:x=1", &p, err, sizeof(err)) == -EINVAL,
	      "openflow takes no parameters");

	/* Checks against a 4-port switch. */
	CHECK(try_params(f, "keyflow:key=5") == SL_FWD_FAIL_NONE, "key 5 > 4 ports");
	CHECK(try_params(f, "keyflow:key=4") == SL_FWD_FAIL_BAD_PARAM, "key 4 = port count");
	CHECK(try_params(f, "keyflow:key=0") == SL_FWD_FAIL_BAD_PARAM, "key 0");
	CHECK(try_params(f, "hypercube:addr=0,nbr=1@1,nbr=1@2") == SL_FWD_FAIL_DUP_NEIGHBOR,
	      "duplicate neighbour");
	CHECK(try_params(f, "hypercube:addr=0,nbr=3@1") == SL_FWD_FAIL_BAD_PARAM,
	      "neighbour two bits away");
	CHECK(try_params(f, "hypercube:addr=0,nbr=0@1") == SL_FWD_FAIL_BAD_PARAM,
	      "neighbour with own address");
	CHECK(try_params(f, "hypercube:addr=0,nbr=1@5") == SL_FWD_FAIL_BAD_PORT, "port 5");
	CHECK(try_params(f, "hypercube:addr=0,nbr=1@0") == SL_FWD_FAIL_BAD_PORT, "port 0");
	CHECK(try_params(f, "hypercube:addr=0,nbr=1@1,nbr=2@1") == SL_FWD_FAIL_BAD_PORT,
	      "two neighbours on one port");
	CHECK(try_params(f, "hypercube:addr=0,nbr=1@1,tag=7;keyflow:key=9,tag=7") ==
		      SL_FWD_FAIL_DUP_TAG,
	      "duplicate tag");
	CHECK(try_params(f, "keyflow:key=9;keyflow:key=11") == SL_FWD_FAIL_DUP_MODE,
	      "duplicate mode");
	p = (struct sl_fwd_params){.n_modes = 1};
	p.modes[0].mode = (enum sl_fwd_mode)7;
	CHECK(sl_fwd_params_check(f, &p, err, sizeof(err)) == SL_FWD_FAIL_UNKNOWN_MODE,
	      "unknown mode number");
}

/* Reference: one packet, written independently of the engines. */
struct ref {
	uint32_t out; /* port, SL_FWD_LOCAL, SL_PORT_DROP */
	uint8_t drop;
	uint8_t hops_after;
};

static struct ref
ref_forward(uint32_t value, uint8_t tag, uint8_t hops, uint32_t in_port)
{
	struct ref r = {SL_PORT_DROP, 0, hops};
	uint32_t port = 0;

	if (tag == 0xf1) { /* hypercube, own address 0, neighbours 1@1 2@2 4@3 */
		if (value == 0)
			return (struct ref){SL_FWD_LOCAL, 0, hops};
		unsigned b = (unsigned)__builtin_ctz(value);
		port = b < 3 ? b + 1 : 0;
	} else if (tag == 0xf2) { /* keyflow, key 7, 4 ports */
		uint32_t m = value % 7;
		if (m == 0)
			return (struct ref){SL_FWD_LOCAL, 0, hops};
		port = m <= N_PORTS ? m : 0;
	} else {
		return (struct ref){SL_FWD_LOCAL, 0, hops}; /* to the pipeline */
	}
	if (port == 0) {
		r.drop = SL_DROP_FWD_NO_ROUTE;
	} else if (port == in_port) {
		r.drop = SL_DROP_FWD_LOOP;
	} else if (hops == 0) {
		r.drop = SL_DROP_FWD_HOP_LIMIT;
	} else {
		r.out = port;
		r.hops_after = (uint8_t)(hops - 1);
	}
	return r;
}

static void
add_flow(struct sl_pipeline *pl, const char *text)
{
	struct sl_flow_spec fs;
	struct sl_parse_error pe;
	char err[256];

	SL_VERIFY(sl_flow_parse(text, &fs, &pe) == 0);
	if (sl_pipeline_flow_add(pl, &fs, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", text, err);
		SL_VERIFY(0);
	}
}

static void
test_bursts(struct sl_fwd *f, struct sl_pipeline *pl)
{
	static const unsigned sizes[] = {0, 1, 3, 4, 5, 31, 32, 33, 63, 64};
	struct sl_pipeline_ctx *pctx = sl_pipeline_ctx_create(pl);
	struct sl_pipeline_ctx *ref_ctx = sl_pipeline_ctx_create(pl);
	struct sl_fwd_ctx *c = sl_fwd_ctx_create(f);
	const struct sl_fwd_ctx *ctxs[1] = {c};
	const struct sl_pipeline_ctx *pctxs[1] = {pctx};
	struct sl_pipeline_hooks hooks = {0};
	struct sl_fwd_params p;
	struct sl_fwd_stats st;
	uint64_t drops[SL_DROP__MAX], pdrops[SL_DROP__MAX];
	uint64_t exp_fwd_drops[SL_DROP__MAX] = {0}, exp_pl = 0, exp_pins = 0, n_pins = 0;
	char err[256];

	SL_VERIFY(pctx != NULL && c != NULL);
	/* Pipeline: tagged-for-local packets get their real MAC back and go to port 4;
	 * port 4's untagged packets go to the controller (packet-in reason ACTION, cookie 0x77),
	 * everything else untagged goes to port 1. */
	add_flow(pl, "priority=10,dl_dst=00:00:00:00:f1:00/00:00:00:00:ff:00,"
		     "actions=set_field:02:00:00:00:00:0b->dl_dst,output:4");
	add_flow(pl, "priority=10,dl_dst=00:00:00:00:f2:00/00:00:00:00:ff:00,"
		     "actions=set_field:02:00:00:00:00:0c->dl_dst,output:4");
	add_flow(pl, "priority=5,cookie=0x77,in_port=4,actions=CONTROLLER:128");
	add_flow(pl, "priority=1,actions=output:1");
	sl_pipeline_publish(pl);

	SL_VERIFY(sl_fwd_params_parse("hypercube:addr=0,nbr=1@1,nbr=2@2,nbr=4@3;keyflow:key=7", &p,
				      err, sizeof(err)) == 0);
	SL_VERIFY(sl_fwd_set(f, &p, NULL, err, sizeof(err)) == 0);

	for (unsigned round = 0; round < 200; round++) {
		unsigned n = sizes[round % SL_ARRAY_SIZE(sizes)];
		static uint8_t bufs[SL_BURST_MAX][64];
		struct sl_pkt pkts[SL_BURST_MAX];
		uint32_t out[SL_BURST_MAX];
		uint8_t dr[SL_BURST_MAX];
		struct ref refs[SL_BURST_MAX];
		uint8_t tags[SL_BURST_MAX];
		uint32_t in_ports[SL_BURST_MAX];
		static const uint8_t tag_choice[] = {0xf1, 0xf2, 0x00, 0x33};

		for (unsigned i = 0; i < n; i++) {
			uint32_t value = (uint32_t)(rnd() % 12);
			uint8_t hops = (uint8_t)(rnd() % 3);

			tags[i] = tag_choice[rnd() % 4];
			/* Only round 1 of every 10: all untagged (the in-place pipeline path). */
			if (round % 10 == 1)
				tags[i] = 0x33;
			in_ports[i] = (uint32_t)(rnd() % N_PORTS) + 1;
			frame(bufs[i], value, tags[i], hops);
			sl_pkt_init(&pkts[i], bufs[i], 64, 0, in_ports[i]);
			refs[i] = ref_forward(value, tags[i], hops, in_ports[i]);
		}
		/*
		 * Differential reference: the lanes the pipeline handles (untagged and
		 * locally delivered ones), run alone through sl_pipeline_run_burst on
		 * copies of their frames, must get exactly the same results.
		 */
		static uint8_t ref_bufs[SL_BURST_MAX][64];
		struct sl_pkt ref_pkts[SL_BURST_MAX];
		uint32_t ref_out[SL_BURST_MAX];
		uint8_t ref_dr[SL_BURST_MAX], ref_lane[SL_BURST_MAX];
		unsigned n_ref = 0;

		for (unsigned i = 0; i < n; i++) {
			if (refs[i].out != SL_FWD_LOCAL)
				continue;
			memcpy(ref_bufs[n_ref], bufs[i], 64);
			sl_pkt_init(&ref_pkts[n_ref], ref_bufs[n_ref], 64, 0, in_ports[i]);
			ref_lane[n_ref++] = (uint8_t)i;
		}
		sl_pipeline_run_burst(pl, ref_ctx, ref_pkts, n_ref, &hooks, ref_out, ref_dr);
		sl_fwd_run_burst(c, pl, pctx, pkts, n, &hooks, out, dr);
		for (unsigned k = 0; k < n_ref; k++) {
			unsigned i = ref_lane[k];

			CHECK(out[i] == ref_out[k] &&
				      (out[i] != SL_PORT_DROP || dr[i] == ref_dr[k]) &&
				      memcmp(ref_bufs[k], pkts[i].data, 64) == 0,
			      "round %u lane %u: pipeline alone gives out %u drop %u", round, i,
			      ref_out[k], ref_dr[k]);
		}
		for (unsigned i = 0; i < n; i++) {
			if (refs[i].out != SL_FWD_LOCAL) {
				CHECK(out[i] == refs[i].out,
				      "round %u lane %u tag %02x: out %u, want %u", round, i,
				      tags[i], out[i], refs[i].out);
				if (refs[i].out == SL_PORT_DROP) {
					CHECK(dr[i] == refs[i].drop, "lane %u: drop %u want %u", i,
					      dr[i], refs[i].drop);
					exp_fwd_drops[refs[i].drop]++;
				} else {
					CHECK(bufs[i][5] == refs[i].hops_after, "hops byte spent");
				}
				continue;
			}
			exp_pl++;
			/* Through the pipeline: tagged-local lanes restored to port 4;
			 * untagged lanes from port 4 to the controller, others to port 1. */
			if ((tags[i] == 0xf1 || tags[i] == 0xf2) && in_ports[i] == 4) {
				CHECK(out[i] == SL_PORT_DROP && dr[i] == SL_DROP_IN_PORT_LOOP,
				      "local delivery to the ingress port refused by the pipeline");
			} else if (tags[i] == 0xf1 || tags[i] == 0xf2) {
				CHECK(out[i] == 4 &&
					      pkts[i].data[5] == (tags[i] == 0xf1 ? 0x0b : 0x0c),
				      "round %u lane %u: local delivery out %u mac %02x", round, i,
				      out[i], pkts[i].data[5]);
			} else if (in_ports[i] == 4) {
				const struct sl_pin *pin = sl_pipeline_pin(pctx, i);
				CHECK(out[i] == SL_PORT_CONTROLLER && pin->cookie == 0x77 &&
					      pin->in_port == 4 && pin->max_len == 128,
				      "round %u lane %u: packet-in details in the lane's slot",
				      round, i);
				exp_pins++;
				n_pins++;
			} else if (in_ports[i] == 1) {
				CHECK(out[i] == SL_PORT_DROP && dr[i] == SL_DROP_IN_PORT_LOOP,
				      "output:1 from port 1 refused");
			} else {
				CHECK(out[i] == 1, "round %u lane %u: untagged to port 1, got %u",
				      round, i, out[i]);
			}
		}
	}
	sl_fwd_stats_read(ctxs, 1, &st);
	CHECK(st.packets[SL_FWD_OPENFLOW] == exp_pl, "pipeline packets %lu want %lu",
	      (unsigned long)st.packets[SL_FWD_OPENFLOW], (unsigned long)exp_pl);
	CHECK(st.bursts_mixed > 0, "mixed bursts happened");
	memset(drops, 0, sizeof(drops));
	sl_fwd_drop_stats(c, drops);
	for (unsigned r = 0; r < SL_DROP__MAX; r++)
		CHECK(drops[r] == exp_fwd_drops[r], "drop %s: %lu want %lu", sl_drop_reason_name(r),
		      (unsigned long)drops[r], (unsigned long)exp_fwd_drops[r]);
	CHECK(exp_fwd_drops[SL_DROP_FWD_NO_ROUTE] && exp_fwd_drops[SL_DROP_FWD_LOOP] &&
		      exp_fwd_drops[SL_DROP_FWD_HOP_LIMIT],
	      "every fwd drop reason exercised");
	sl_pipeline_drop_stats(pctxs, 1, pdrops);
	CHECK(n_pins > 0, "packet-ins exercised");
	CHECK(st.drops[SL_FWD_HYPERCUBE] + st.drops[SL_FWD_KEYFLOW] ==
		      exp_fwd_drops[SL_DROP_FWD_NO_ROUTE] + exp_fwd_drops[SL_DROP_FWD_LOOP] +
			      exp_fwd_drops[SL_DROP_FWD_HOP_LIMIT],
	      "per-mode drops add up");
	(void)exp_pins;

	/* Back to openflow: every packet goes to the pipeline, tagged or not. */
	SL_VERIFY(sl_fwd_params_parse("openflow", &p, err, sizeof(err)) == 0);
	unsigned syncs = n_syncs;
	CHECK(sl_fwd_set(f, &p, NULL, err, sizeof(err)) == 0, "set openflow");
	CHECK(n_syncs == syncs + 1, "a grace period per change");
	{
		static uint8_t buf[64];
		struct sl_pkt pk;
		uint32_t o;
		uint8_t d;

		frame(buf, 3, 0xf1, 5);
		sl_pkt_init(&pk, buf, 64, 0, 2);
		sl_fwd_run_burst(c, pl, pctx, &pk, 1, &hooks, &o, &d);
		CHECK(o == 4 && buf[5] == 0x0b,
		      "openflow mode: tagged packet handled by the pipeline");
	}
	/* A refused configuration leaves the old one. */
	SL_VERIFY(sl_fwd_params_parse("keyflow:key=2", &p, err, sizeof(err)) == 0);
	enum sl_fwd_fail fail;
	CHECK(sl_fwd_set(f, &p, &fail, err, sizeof(err)) == -EINVAL &&
		      fail == SL_FWD_FAIL_BAD_PARAM && strstr(err, "key 2") != NULL,
	      "refused: %s", err);
	sl_fwd_get(f, &p);
	CHECK(p.n_modes == 0, "still openflow");
	CHECK(sl_fwd_run_burst(NULL, pl, pctx, NULL, 0, &hooks, NULL, NULL) == 0,
	      "NULL context = plain pipeline");
	sl_fwd_ctx_destroy(c);
	sl_pipeline_ctx_destroy(pctx);
	sl_pipeline_ctx_destroy(ref_ctx);
}

int
main(void)
{
	struct sl_fwd *f;
	struct sl_pipeline *pl;
	bool up[N_PORTS] = {true, true, true, true};

	SL_VERIFY(sl_fwd_create(N_PORTS, &f) == 0);
	CHECK(sl_fwd_create(0, &(struct sl_fwd *){NULL}) == -EINVAL, "no ports");
	sl_fwd_set_sync(f, count_sync, NULL);
	SL_VERIFY(sl_pipeline_create(&pl) == 0);
	sl_pipeline_ports_set(pl, N_PORTS, up);
	test_text(f);
	test_bursts(f, pl);
	sl_pipeline_destroy(pl);
	sl_fwd_destroy(f);
	return sl_test_summary();
}
