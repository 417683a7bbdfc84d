/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Group chaining and watch_group: a group action inside a bucket runs the
 * other group (select -> indirect -> output, nested "all" groups whose
 * buckets each work on their own copy), the control checks (loops, chains
 * too deep, missing groups, deleting a chained group), fast failover on a
 * watched group's liveness as its ports go down and up, exact per-group and
 * per-bucket counters along a chain, and the workers' own depth bound.
 */
#include "pipeline.h"
#include "pipeline_priv.h"
#include "../core/sl_test.h"

#include <errno.h>
#include <string.h>

#define N_PORTS 4
#define FRAME 64

static struct sl_pipeline *pl;
static struct sl_pipeline_ctx *ctx;
static char err[256];

static const uint8_t mac_a[6] = {0x02, 0, 0, 0, 0, 0xaa}, mac_b[6] = {0x02, 0, 0, 0, 0, 0xbb};
static const uint8_t mac_src0[6] = {0x02, 0, 0, 0, 0, 0x01}, mac_dst0[6] = {0x02, 0, 0, 0, 0, 0x02};

/* Copies the pipeline emits (several outputs): port and frame. */
#define COPIES_MAX 16
static struct {
	uint32_t port;
	uint8_t frame[FRAME];
} copies[COPIES_MAX];
static unsigned n_copies;

static int
emit_copy(void *arg, const struct sl_pkt *p, uint32_t port, const struct sl_pin *pin)
{
	(void)arg;
	(void)pin;
	if (n_copies < COPIES_MAX) {
		copies[n_copies].port = port;
		memcpy(copies[n_copies].frame, p->data, SL_MIN(p->len, (uint16_t)FRAME));
	}
	n_copies++;
	return 0;
}

static const struct sl_pipeline_hooks hooks = {.emit_copy = emit_copy};

static void
ip_frame(uint8_t *d)
{
	memset(d, 0, FRAME);
	memcpy(d, mac_dst0, 6);
	memcpy(d + 6, mac_src0, 6);
	d[12] = 0x08;
	d[14] = 0x45;
	d[17] = FRAME - 14;
	d[22] = 64;
	d[23] = 17;
	d[26] = 10, d[29] = 1;
	d[30] = 10, d[33] = 2;
}

static struct sl_action
act_output(uint32_t port)
{
	return (struct sl_action){.type = SL_ACT_OUTPUT, .output = {.port = port}};
}

static struct sl_action
act_group(uint32_t id)
{
	return (struct sl_action){.type = SL_ACT_GROUP, .group_id = id};
}

static struct sl_action
act_set_mac(enum sl_field_id id, const uint8_t mac[6])
{
	struct sl_action a = {.type = SL_ACT_SET_FIELD};

	a.set_field.f.id = id;
	memcpy(a.set_field.value, mac, 6);
	return a;
}

/* A group spec: @n buckets, empty; the caller fills in actions. */
static struct sl_group_spec
group(uint32_t id, enum sl_group_type type, unsigned n)
{
	struct sl_group_spec gs;

	memset(&gs, 0, sizeof(gs));
	gs.group_id = id;
	gs.type = (uint8_t)type;
	gs.n_buckets = (uint8_t)n;
	for (unsigned b = 0; b < n; b++) {
		gs.buckets[b].watch_port = SL_PORT_ANY;
		gs.buckets[b].watch_group = SL_GROUP_ID_ANY;
		gs.buckets[b].weight = type == SL_GROUP_SELECT ? 1 : 0;
	}
	return gs;
}

static void
bucket_push(struct sl_group_spec *gs, unsigned b, struct sl_action a)
{
	gs->buckets[b].actions[gs->buckets[b].n_actions++] = a;
}

/* The one flow of table 0: every packet goes to group @id. */
static void
flow_to_group(uint32_t id)
{
	struct sl_flow_spec fs;

	sl_pipeline_flow_del(pl, &(struct sl_flow_filter){0}, SL_FLOW_REMOVED_DELETE);
	sl_flow_spec_init(&fs);
	fs.insns.apply[0] = act_group(id);
	fs.insns.n_apply = 1;
	fs.insns.has_apply = true;
	CHECK(sl_pipeline_flow_add(pl, &fs, err, sizeof(err)) == 0, "flow to group %u: %s", id,
	      err);
	sl_pipeline_publish(pl);
}

/* Run one packet from port 4: its frame after, the out port (SL_PORT_DROP and *drop). */
static uint32_t
run_one(uint8_t *frame, uint8_t *drop)
{
	struct sl_pkt p;
	uint32_t out;
	uint8_t d = 0;

	ip_frame(frame);
	sl_pkt_init(&p, frame, FRAME, 0, 4);
	n_copies = 0;
	sl_pipeline_run_burst(pl, ctx, &p, 1, &hooks, &out, &d);
	if (drop != NULL)
		*drop = d;
	return out;
}

static uint64_t
group_packets(uint32_t id, int bucket)
{
	struct sl_group_stats st;

	if (sl_pipeline_group_get(pl, id, NULL, &st) < 0)
		return UINT64_MAX;
	return bucket < 0 ? st.n_packets : st.bucket_packets[bucket];
}

static int
add(const struct sl_group_spec *gs)
{
	return sl_pipeline_group_add(pl, gs, err, sizeof(err));
}

static int
modify(const struct sl_group_spec *gs)
{
	return sl_pipeline_group_modify(pl, gs, err, sizeof(err));
}

/* select 1 -> indirect 2 (set eth_dst, output 2): one output, counted in both groups. */
static void
test_select_indirect(void)
{
	struct sl_group_spec ind = group(2, SL_GROUP_INDIRECT, 1),
			     sel = group(1, SL_GROUP_SELECT, 2);
	uint8_t f[FRAME];

	bucket_push(&ind, 0, act_set_mac(SL_FIELD_ETH_DST, mac_a));
	bucket_push(&ind, 0, act_output(2));
	/* Bucket 0 weighs nothing: every packet takes bucket 1. */
	sel.buckets[0].weight = 0;
	bucket_push(&sel, 0, act_output(3));
	bucket_push(&sel, 1, act_group(2));
	CHECK(add(&sel) == -ENOENT && sl_pipeline_fail(pl) == SL_FAIL_BAD_OUT_GROUP,
	      "chaining to group 2 before it exists: %s", err);
	CHECK(add(&ind) == 0, "%s", err);
	CHECK(add(&sel) == 0, "select chaining to indirect: %s", err);
	flow_to_group(1);
	for (unsigned i = 0; i < 5; i++) {
		uint32_t out = run_one(f, NULL);
		CHECK(out == 2 && memcmp(f, mac_a, 6) == 0 && n_copies == 0,
		      "packet %u: out %u, dst %02x, %u copies", i, out, f[5], n_copies);
	}
	CHECK(group_packets(1, -1) == 5 && group_packets(1, 0) == 0 && group_packets(1, 1) == 5,
	      "select counters %lu/%lu/%lu", (unsigned long)group_packets(1, -1),
	      (unsigned long)group_packets(1, 0), (unsigned long)group_packets(1, 1));
	CHECK(group_packets(2, -1) == 5 && group_packets(2, 0) == 5, "indirect counters %lu",
	      (unsigned long)group_packets(2, -1));

	/* ref_count: flows or groups that forward to it (spec 7.3.5.9). */
	struct sl_group_stats st;
	SL_VERIFY(sl_pipeline_group_get(pl, 2, NULL, &st) == 0);
	CHECK(st.ref_count == 1, "group 2 ref_count %u (group 1 forwards to it)", st.ref_count);
	SL_VERIFY(sl_pipeline_group_get(pl, 1, NULL, &st) == 0);
	CHECK(st.ref_count == 1, "group 1 ref_count %u (the flow)", st.ref_count);

	/* In a bucket, a group wins over an output (action set, section 5.10). */
	struct sl_group_spec both = group(1, SL_GROUP_INDIRECT, 1);
	bucket_push(&both, 0, act_group(2));
	bucket_push(&both, 0, act_output(3));
	CHECK(modify(&both) == 0, "%s", err);
	sl_pipeline_publish(pl);
	CHECK(run_one(f, NULL) == 2 && n_copies == 0, "output:3 with group:2 in one bucket");

	/* Group 2 is chained to: not deleted alone; deleting the chain's head frees it. */
	CHECK(sl_pipeline_group_del(pl, 2) == -EBUSY &&
		      sl_pipeline_fail(pl) == SL_FAIL_CHAINED_GROUP,
	      "delete of a chained group");
	CHECK(sl_pipeline_group_count(pl) == 2 && run_one(f, NULL) == 2, "both still there");
	CHECK(sl_pipeline_group_del(pl, 1) == 1, "delete group 1");
	CHECK(sl_pipeline_group_del(pl, 2) == 1, "then group 2");
	sl_pipeline_publish(pl);
	CHECK(sl_pipeline_group_count(pl) == 0, "no group left");
}

/*
 * Nested "all" groups: 10 = {set eth_dst=a, group:11}, {output:3}; 11 =
 * {set eth_src=b, output:1}, {output:2}.  Every bucket works on the packet as
 * its own group received it: port 1 gets a+b, port 2 a only, port 3 neither.
 */
static void
test_nested_all(void)
{
	struct sl_group_spec outer = group(10, SL_GROUP_ALL, 2), inner = group(11, SL_GROUP_ALL, 2);
	uint8_t f[FRAME];
	bool seen[4] = {false};

	bucket_push(&inner, 0, act_set_mac(SL_FIELD_ETH_SRC, mac_b));
	bucket_push(&inner, 0, act_output(1));
	bucket_push(&inner, 1, act_output(2));
	bucket_push(&outer, 0, act_set_mac(SL_FIELD_ETH_DST, mac_a));
	bucket_push(&outer, 0, act_group(11));
	bucket_push(&outer, 1, act_output(3));
	CHECK(add(&inner) == 0 && add(&outer) == 0, "%s", err);
	flow_to_group(10);
	uint32_t last = run_one(f, NULL);
	/* The copies first, then the packet itself on its last output. */
	for (unsigned i = 0; i <= n_copies && i < COPIES_MAX; i++) {
		uint32_t port = i < n_copies ? copies[i].port : last;
		const uint8_t *d = i < n_copies ? copies[i].frame : f;
		bool dst_a = memcmp(d, mac_a, 6) == 0, src_b = memcmp(d + 6, mac_b, 6) == 0;
		bool dst0 = memcmp(d, mac_dst0, 6) == 0, src0 = memcmp(d + 6, mac_src0, 6) == 0;
		if (port >= 1 && port <= 3)
			seen[port] = true;
		if (port == 1)
			CHECK(dst_a && src_b, "port 1: dst %02x src %02x", d[5], d[11]);
		else if (port == 2)
			CHECK(dst_a && src0, "port 2: dst %02x src %02x", d[5], d[11]);
		else if (port == 3)
			CHECK(dst0 && src0, "port 3: dst %02x src %02x", d[5], d[11]);
		else
			CHECK(false, "output to port %u", port);
	}
	CHECK(n_copies == 2 && seen[1] && seen[2] && seen[3], "%u copies, ports 1-3 seen",
	      n_copies);
	CHECK(group_packets(10, 0) == 1 && group_packets(10, 1) == 1 &&
		      group_packets(11, -1) == 1 && group_packets(11, 0) == 1 &&
		      group_packets(11, 1) == 1,
	      "every bucket counted once");
	sl_pipeline_group_del(pl, SL_GROUP_ID_ALL);
	sl_pipeline_publish(pl);
}

/* Loops (directly, through a third group, through watch_group) and depth. */
static void
test_refusals(void)
{
	struct sl_group_spec a = group(20, SL_GROUP_INDIRECT, 1),
			     b = group(21, SL_GROUP_INDIRECT, 1);
	struct sl_group_spec c = group(22, SL_GROUP_INDIRECT, 1);

	bucket_push(&a, 0, act_group(20));
	CHECK(add(&a) == -ELOOP && sl_pipeline_fail(pl) == SL_FAIL_GROUP_LOOP, "self loop: %s",
	      err);
	a.buckets[0].actions[0] = act_output(1);
	bucket_push(&b, 0, act_group(20));
	bucket_push(&c, 0, act_group(21));
	CHECK(add(&a) == 0 && add(&b) == 0 && add(&c) == 0, "22 -> 21 -> 20: %s", err);
	a.buckets[0].actions[0] = act_group(22);
	CHECK(modify(&a) == -ELOOP && sl_pipeline_fail(pl) == SL_FAIL_GROUP_LOOP,
	      "20 -> 22 closes a loop: %s", err);
	a.buckets[0].actions[0] = act_group(21);
	CHECK(modify(&a) == -ELOOP, "20 -> 21 closes a loop");
	/* Refused changes leave the group as it was. */
	struct sl_group_spec got;
	SL_VERIFY(sl_pipeline_group_get(pl, 20, &got, NULL) == 0);
	CHECK(got.buckets[0].n_actions == 1 && got.buckets[0].actions[0].type == SL_ACT_OUTPUT,
	      "group 20 unchanged");

	/* A watch closes a loop too: 23 (ff) watches 22; 20 chaining to 23 would loop. */
	struct sl_group_spec ff = group(23, SL_GROUP_FF, 1);
	ff.buckets[0].watch_group = 22;
	bucket_push(&ff, 0, act_output(1));
	CHECK(add(&ff) == 0, "ff watching 22: %s", err);
	a.buckets[0].actions[0] = act_group(23);
	CHECK(modify(&a) == -ELOOP, "20 -> 23 ~> 22 -> 21 -> 20");
	ff.buckets[0].watch_group = 23;
	CHECK(modify(&ff) == -ELOOP, "ff watching itself");
	ff.buckets[0].watch_group = 99;
	CHECK(modify(&ff) == -EINVAL && sl_pipeline_fail(pl) == SL_FAIL_BAD_WATCH,
	      "watching a group that does not exist");
	ff.buckets[0].watch_group = SL_GROUP_ID_ANY;
	CHECK(modify(&ff) == -EINVAL && sl_pipeline_fail(pl) == SL_FAIL_BAD_WATCH,
	      "ff bucket watching nothing");
	CHECK(sl_pipeline_group_del(pl, 22) == -EBUSY, "22 is watched by 23 and chained by 21");
	CHECK(sl_pipeline_group_del(pl, SL_GROUP_ID_ALL) == 4, "delete all");

	/* Depth: a chain of SL_GROUP_CHAIN_MAX groups is fine, one more is not. */
	for (uint32_t id = 100; id < 100 + SL_GROUP_CHAIN_MAX; id++) {
		struct sl_group_spec g = group(id, SL_GROUP_INDIRECT, 1);
		bucket_push(&g, 0, id == 100 ? act_output(2) : act_group(id - 1));
		CHECK(add(&g) == 0, "chain link %u: %s", id, err);
	}
	struct sl_group_spec top = group(100 + SL_GROUP_CHAIN_MAX, SL_GROUP_INDIRECT, 1);
	bucket_push(&top, 0, act_group(100 + SL_GROUP_CHAIN_MAX - 1));
	CHECK(add(&top) == -EOPNOTSUPP && sl_pipeline_fail(pl) == SL_FAIL_GROUP_CHAINING,
	      "a chain of %u groups: %s", SL_GROUP_CHAIN_MAX + 1, err);
	/* Lengthening from below counts the groups above. */
	struct sl_group_spec extra = group(99, SL_GROUP_INDIRECT, 1),
			     low = group(100, SL_GROUP_INDIRECT, 1);
	bucket_push(&extra, 0, act_output(2));
	bucket_push(&low, 0, act_group(99));
	CHECK(add(&extra) == 0 && modify(&low) == -EOPNOTSUPP, "100 -> 99 under 7 more groups");
	uint8_t f[FRAME];
	flow_to_group(100 + SL_GROUP_CHAIN_MAX - 1);
	CHECK(run_one(f, NULL) == 2, "through %u groups", SL_GROUP_CHAIN_MAX);
	for (uint32_t id = 100; id < 100 + SL_GROUP_CHAIN_MAX; id++)
		CHECK(group_packets(id, -1) == 1 && group_packets(id, 0) == 1, "group %u counted",
		      id);
	sl_pipeline_group_del(pl, SL_GROUP_ID_ALL);
	sl_pipeline_publish(pl);
}

/*
 * Fast failover on a watched group: 31 (ff) = {watch 1: output 1}, {watch
 * 2: output 2}; 30 (ff) = {watch_group 31: group 31}, {watch port 3:
 * output 3}.  Group 31 is live while port 1 or 2 is.
 */
static void
test_watch_group(void)
{
	struct sl_group_spec w = group(31, SL_GROUP_FF, 2), f30 = group(30, SL_GROUP_FF, 2);
	uint8_t f[FRAME];
	uint8_t drop;

	w.buckets[0].watch_port = 1;
	bucket_push(&w, 0, act_output(1));
	w.buckets[1].watch_port = 2;
	bucket_push(&w, 1, act_output(2));
	f30.buckets[0].watch_group = 31;
	bucket_push(&f30, 0, act_group(31));
	f30.buckets[1].watch_port = 3;
	bucket_push(&f30, 1, act_output(3));
	CHECK(add(&w) == 0 && add(&f30) == 0, "%s", err);
	flow_to_group(30);
	CHECK(run_one(f, NULL) == 1, "all up: port 1");
	sl_pipeline_port_set_live(pl, 1, false);
	CHECK(run_one(f, NULL) == 2, "port 1 down: 31's second bucket");
	sl_pipeline_port_set_live(pl, 2, false);
	CHECK(run_one(f, NULL) == 3, "ports 1, 2 down: group 31 dead, 30's second bucket");
	CHECK(group_packets(30, 0) == 2 && group_packets(30, 1) == 1 && group_packets(31, -1) == 2,
	      "counters: 30 %lu/%lu, 31 %lu", (unsigned long)group_packets(30, 0),
	      (unsigned long)group_packets(30, 1), (unsigned long)group_packets(31, -1));
	sl_pipeline_port_set_live(pl, 3, false);
	CHECK(run_one(f, &drop) == SL_PORT_DROP && drop == SL_DROP_NO_OUTPUT,
	      "nothing live: dropped, no-output (%u)", drop);
	/* A modify of the watched group changes its liveness at once (31 takes the packet). */
	struct sl_group_spec w2 = group(31, SL_GROUP_FF, 1);
	w2.buckets[0].watch_port = 4;
	bucket_push(&w2, 0, act_set_mac(SL_FIELD_ETH_DST, mac_a));
	bucket_push(&w2, 0, act_output(SL_PORT_IN_PORT));
	CHECK(modify(&w2) == 0, "%s", err);
	sl_pipeline_publish(pl);
	CHECK(run_one(f, NULL) == 4 && memcmp(f, mac_a, 6) == 0 && group_packets(31, 0) == 1,
	      "31 watches port 4 now: live again");
	CHECK(modify(&w) == 0, "%s", err);
	sl_pipeline_publish(pl);
	CHECK(run_one(f, &drop) == SL_PORT_DROP, "back to ports 1, 2: dead");
	sl_pipeline_port_set_live(pl, 2, true);
	CHECK(run_one(f, NULL) == 2, "port 2 up again");
	/* Watching an indirect group: live while it has its bucket (it watches nothing). */
	struct sl_group_spec ind = group(32, SL_GROUP_INDIRECT, 1), f33 = group(33, SL_GROUP_FF, 1);
	bucket_push(&ind, 0, act_output(3));
	f33.buckets[0].watch_group = 32;
	bucket_push(&f33, 0, act_output(2));
	CHECK(add(&ind) == 0 && add(&f33) == 0, "%s", err);
	flow_to_group(33);
	CHECK(run_one(f, NULL) == 2, "an indirect group is live");
	for (uint32_t p = 1; p <= N_PORTS; p++)
		sl_pipeline_port_set_live(pl, p, true);
	sl_pipeline_group_del(pl, SL_GROUP_ID_ALL);
	sl_pipeline_publish(pl);
}

/*
 * The workers' bound: a loop the control thread would refuse, made by hand
 * (41's bucket pointed back at 40), ends in a group-chain drop after
 * SL_GROUP_CHAIN_MAX groups instead of recursing.
 */
static void
test_worker_bound(void)
{
	struct sl_group_spec a = group(40, SL_GROUP_INDIRECT, 1),
			     b = group(41, SL_GROUP_INDIRECT, 1);
	uint8_t f[FRAME], drop = 0;
	uint64_t drops[SL_DROP__MAX];
	const struct sl_pipeline_ctx *cs[1] = {ctx};

	bucket_push(&a, 0, act_group(41));
	bucket_push(&b, 0, act_output(1));
	CHECK(add(&b) == 0 && add(&a) == 0, "%s", err);
	flow_to_group(40);
	struct pl_bucket *pb = &pl_group_find(pl, 41)->body->buckets[0];
	struct sl_action saved = pb->run[0];
	pb->run[0] = act_group(40);
	pb->run[0].ref = pl_group_find(pl, 40);
	sl_pipeline_drop_stats(cs, 1, drops);
	uint64_t before = drops[SL_DROP_GROUP_CHAIN];
	CHECK(run_one(f, &drop) == SL_PORT_DROP && drop == SL_DROP_GROUP_CHAIN, "drop %u", drop);
	sl_pipeline_drop_stats(cs, 1, drops);
	CHECK(drops[SL_DROP_GROUP_CHAIN] == before + 1, "group-chain counted");
	CHECK(group_packets(40, -1) == SL_GROUP_CHAIN_MAX / 2 &&
		      group_packets(41, -1) == SL_GROUP_CHAIN_MAX / 2,
	      "each group entered %u times: %lu, %lu", SL_GROUP_CHAIN_MAX / 2,
	      (unsigned long)group_packets(40, -1), (unsigned long)group_packets(41, -1));
	CHECK(strcmp(sl_drop_reason_name(SL_DROP_GROUP_CHAIN), "group-chain") == 0, "name");
	pb->run[0] = saved;
	sl_pipeline_group_del(pl, SL_GROUP_ID_ALL);
	sl_pipeline_publish(pl);
}

int
main(void)
{
	bool up[N_PORTS] = {true, true, true, true};

	SL_VERIFY(sl_pipeline_create(&pl) == 0);
	sl_pipeline_ports_set(pl, N_PORTS, up);
	ctx = sl_pipeline_ctx_create(pl);
	SL_VERIFY(ctx != NULL);
	test_select_indirect();
	test_nested_all();
	test_refusals();
	test_watch_group();
	test_worker_bound();
	sl_pipeline_ctx_destroy(ctx);
	sl_pipeline_destroy(pl);
	return sl_test_summary();
}
