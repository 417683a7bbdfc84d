/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * State tables under traffic: a worker thread runs bursts through a
 * stateful pipeline without pause (and services the state tables, as the
 * datapath's loop does) while the control thread sets and deletes states,
 * dumps the table and replaces it with a new declaration, with the
 * epoch-based grace period of test_pipeline_concurrent.c.
 *
 * Sources 0..499 belong to the worker (udp_dst 1: set_state:5), sources
 * 500..999 to the control thread (state 9 set by command; udp_dst 2 goes to
 * port 3 in state 9, else to port 2).  Checks: every outcome is one the
 * pipeline can give; every dumped entry is consistent (worker keys in state
 * 5, control keys in state 9); after the run, every control key the
 * controller last set is in state 9 as the data plane sees it.
 */
#include "pipeline.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "../core/sl_test.h"
#include "../flowfile/flowfile.h"

#define N_KEYS 1000
#define HALF 500

static struct sl_pipeline *pl;
static struct sl_pipeline_ctx *ctx;
static volatile uint64_t epoch;
static volatile int stop;
static uint64_t bad_outcomes, bursts_out3;

static void
sync_fn(void *arg)
{
	uint64_t e0 = __atomic_load_n(&epoch, __ATOMIC_ACQUIRE);
	unsigned spins = 0;

	(void)arg;
	while (__atomic_load_n(&epoch, __ATOMIC_ACQUIRE) == e0 && !stop)
		sl_test_relax(&spins);
}

static void
frame(uint8_t *f, uint32_t key, uint16_t dport)
{
	uint32_t src = 0x0a000000u + key;

	memset(f, 0, 64);
	memcpy(f, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00", 14);
	f[14] = 0x45;
	f[17] = 50;
	f[22] = 64;
	f[23] = 17;
	for (int i = 0; i < 4; i++)
		f[26 + i] = (uint8_t)(src >> (24 - 8 * i));
	f[36] = (uint8_t)(dport >> 8);
	f[37] = (uint8_t)dport;
}

static void
run_keys(uint32_t first, unsigned n, uint32_t *outs)
{
	static uint8_t frames[32][64];
	struct sl_pkt pkts[32];
	uint8_t drops[32];

	for (unsigned i = 0; i < n; i++) {
		uint32_t k = first + i;
		frame(frames[i], k, k < HALF ? 1 : 2);
		sl_pkt_init(&pkts[i], frames[i], 64, 0, 1);
	}
	sl_pipeline_run_burst(pl, ctx, pkts, n, NULL, outs, drops);
}

static void *
worker(void *arg)
{
	uint32_t outs[32];
	uint64_t n = 0;

	(void)arg;
	while (!stop) {
		uint32_t first = (uint32_t)((n * 32) % N_KEYS);
		run_keys(first, 32, outs);
		for (unsigned i = 0; i < 32; i++) {
			uint32_t k = first + i;
			bool ok = k < HALF ? outs[i] == 2 : (outs[i] == 2 || outs[i] == 3);
			bad_outcomes += !ok;
			bursts_out3 += outs[i] == 3;
		}
		sl_pipeline_service(pl, ctx);
		__atomic_store_n(&epoch, epoch + 1, __ATOMIC_RELEASE);
		n++;
	}
	return NULL;
}

struct dump_check {
	unsigned n, bad;
};

static int
check_entry(const struct sl_match *key, const struct sl_state_entry_info *e, void *arg)
{
	struct dump_check *d = arg;
	const struct sl_match_field *mf = NULL;

	for (unsigned i = 0; i < key->n_fields; i++)
		if (key->fields[i].f.id == SL_FIELD_IPV4_SRC)
			mf = &key->fields[i];
	uint32_t k = mf ? ((uint32_t)mf->value[2] << 8 | mf->value[3]) : UINT32_MAX;
	d->n++;
	if (k >= N_KEYS || e->state != (k < HALF ? 5u : 9u))
		d->bad++;
	return 0;
}

static int
set_key(uint32_t k, uint32_t state)
{
	struct sl_match m = {0};
	struct sl_field fe = {.id = SL_FIELD_ETH_TYPE}, fs = {.id = SL_FIELD_IPV4_SRC};
	uint8_t et[2] = {0x08, 0x00}, etm[2] = {0xff, 0xff}, v[4], vm[4] = {0xff, 0xff, 0xff, 0xff};
	uint32_t src = 0x0a000000u + k;
	struct sl_state_set a = {.state = state};
	char err[200];

	v[0] = (uint8_t)(src >> 24);
	v[1] = (uint8_t)(src >> 16);
	v[2] = (uint8_t)(src >> 8);
	v[3] = (uint8_t)src;
	sl_match_set(&m, &fe, et, etm);
	sl_match_set(&m, &fs, v, vm);
	int rc = sl_pipeline_state_set(pl, 0, &m, &a, err, sizeof(err));
	if (rc)
		fprintf(stderr, "set %u: %s\n", k, err);
	return rc;
}

static void
declare(void)
{
	struct sl_table_spec ts;
	struct sl_parse_error pe;
	char err[200];

	SL_VERIFY(sl_table_spec_parse("table=0,kind=state,lookup=nw_src,size=4096", &ts, &pe) == 0);
	SL_VERIFY(sl_pipeline_table_declare(pl, &ts, err, sizeof(err)) == 0);
}

int
main(int argc, char **argv)
{
	static const char *const flows[] = {
		"table=1,priority=10,udp,udp_dst=1,actions=set_state:5,output:2",
		"table=1,priority=20,state=9,udp,udp_dst=2,actions=output:3",
		"table=1,priority=10,udp,udp_dst=2,actions=output:2",
	};
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 300;
	struct dump_check d = {0};
	unsigned dumps = 0, redeclares = 0, sets = 0;
	pthread_t th;
	char err[200];

	SL_VERIFY(sl_pipeline_create(&pl) == 0);
	bool up[3] = {true, true, true};
	sl_pipeline_ports_set(pl, 3, up);
	declare();
	for (unsigned i = 0; i < SL_ARRAY_SIZE(flows); i++) {
		struct sl_flow_spec fs;
		SL_VERIFY(sl_flow_parse(flows[i], &fs, NULL) == 0);
		SL_VERIFY(sl_pipeline_flow_add(pl, &fs, err, sizeof(err)) == 0);
	}
	sl_pipeline_commit(pl);
	ctx = sl_pipeline_ctx_create(pl);
	sl_pipeline_set_sync(pl, sync_fn, NULL);
	pthread_create(&th, NULL, worker, NULL);
	for (unsigned r = 0; r < rounds; r++) {
		for (uint32_t k = HALF + r % 7; k < N_KEYS; k += 7) {
			CHECK(set_key(k, 9) == 0, "set");
			sets++;
		}
		if (r % 5 == 4)
			for (uint32_t k = HALF + r % 11; k < N_KEYS; k += 11)
				CHECK(set_key(k, 0) == 0, "delete");
		if (r % 3 == 0) {
			struct dump_check one = {0};
			CHECK(sl_pipeline_state_dump(pl, 0, check_entry, &one) == 0, "dump");
			d.n += one.n;
			d.bad += one.bad;
			dumps++;
		}
		if (r % 50 == 49) {
			declare(); /* a fresh table: every state goes, after a grace period */
			redeclares++;
		}
		sl_pipeline_publish(pl);
	}
	/* Finally every control key in state 9, then stop the worker. */
	for (uint32_t k = HALF; k < N_KEYS; k++)
		CHECK(set_key(k, 9) == 0, "final set");
	struct sl_state_stats st;
	CHECK(sl_pipeline_state_stats(pl, 0, &st) == 0, "stats");
	stop = 1;
	pthread_join(th, NULL);
	sl_pipeline_set_sync(pl, NULL, NULL);
	sl_pipeline_service(pl, ctx);
	uint32_t outs[32];
	unsigned wrong = 0;
	for (uint32_t k = HALF; k < N_KEYS; k += 32) {
		unsigned n = N_KEYS - k < 32 ? N_KEYS - k : 32;
		run_keys(k, n, outs);
		for (unsigned i = 0; i < n; i++)
			wrong += outs[i] != 3;
	}
	printf("%u rounds, %u sets, %u dumps (%u entries), %u redeclarations, %lu bursts\n", rounds,
	       sets, dumps, d.n, redeclares, (unsigned long)epoch);
	CHECK(bad_outcomes == 0, "%lu impossible outcomes", (unsigned long)bad_outcomes);
	CHECK(d.bad == 0, "%u inconsistent entries in dumps", d.bad);
	CHECK(wrong == 0, "%u control keys not in state 9 after the run", wrong);
	CHECK(bursts_out3 > 0 && epoch > rounds, "the worker saw the controller's states");
	sl_pipeline_ctx_destroy(ctx);
	sl_pipeline_destroy(pl);
	return sl_test_summary();
}
