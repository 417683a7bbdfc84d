/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stateful pipelines end to end (no DPDK): the flow syntax of state tables
 * and set_state, the examples' state machines (port knocking, MAC learning,
 * reply-updates-request scopes, SYN-flood detection) run through
 * sl_pipeline_run_burst, controller commands, dumps and errors.
 */
#include "pipeline.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "../core/sl_test.h"
#include "../flowfile/flowfile.h"

static struct sl_pipeline *pl;
static struct sl_pipeline_ctx *ctx;
static unsigned n_copies;
static uint32_t copy_ports[16];

static int
emit_copy(void *arg, const struct sl_pkt *p, uint32_t port, const struct sl_pin *pin)
{
	(void)arg;
	(void)p;
	(void)pin;
	if (n_copies < 16)
		copy_ports[n_copies] = port;
	n_copies++;
	return 0;
}

static void
load(const char *const *lines)
{
	char err[256];

	sl_pipeline_destroy(pl);
	sl_pipeline_ctx_destroy(ctx);
	SL_VERIFY(sl_pipeline_create(&pl) == 0);
	bool up[4] = {true, true, true, true};
	sl_pipeline_ports_set(pl, 4, up);
	for (; *lines; lines++) {
		struct sl_parse_error pe;
		int rc;
		if (strstr(*lines, "kind=")) {
			struct sl_table_spec ts;
			rc = sl_table_spec_parse(*lines, &ts, &pe);
			CHECK(rc == 0, "parse %s: %s", *lines, pe.msg);
			rc = sl_pipeline_table_declare(pl, &ts, err, sizeof(err));
		} else {
			struct sl_flow_spec fs;
			rc = sl_flow_parse(*lines, &fs, &pe);
			CHECK(rc == 0, "parse %s: %s", *lines, pe.msg);
			rc = sl_pipeline_flow_add(pl, &fs, err, sizeof(err));
		}
		CHECK(rc == 0, "%s: %s", *lines, err);
	}
	sl_pipeline_commit(pl);
	ctx = sl_pipeline_ctx_create(pl);
	SL_VERIFY(ctx != NULL);
}

/* Build a frame: Ethernet src/dst MAC last bytes, IPv4 src/dst, proto (6/17), ports, TCP flags. */
static unsigned
frame(uint8_t *f, uint8_t dmac, uint8_t smac, uint32_t src, uint32_t dst, uint8_t proto,
      uint16_t sp, uint16_t dp, uint8_t tcp_flags)
{
	memset(f, 0, 80);
	memcpy(f, "\x02\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x08\x00", 14);
	f[5] = dmac;
	f[11] = smac;
	f[14] = 0x45;
	f[17] = 60;
	f[22] = 64;
	f[23] = proto;
	for (int i = 0; i < 4; i++) {
		f[26 + i] = (uint8_t)(src >> (24 - 8 * i));
		f[30 + i] = (uint8_t)(dst >> (24 - 8 * i));
	}
	f[34] = (uint8_t)(sp >> 8);
	f[35] = (uint8_t)sp;
	f[36] = (uint8_t)(dp >> 8);
	f[37] = (uint8_t)dp;
	if (proto == 6) {
		f[46] = 0x50;
		f[47] = tcp_flags;
	}
	return 74;
}

/* Run one packet; returns its output port (0 = dropped). */
static uint32_t
run1(uint32_t in_port, uint8_t dmac, uint8_t smac, uint32_t src, uint32_t dst, uint8_t proto,
     uint16_t sp, uint16_t dp, uint8_t flags)
{
	static uint8_t f[128];
	struct sl_pkt p;
	struct sl_pipeline_hooks hooks = {.emit_copy = emit_copy};
	uint32_t out = 0;
	uint8_t drop = 0;
	unsigned len = frame(f + 32, dmac, smac, src, dst, proto, sp, dp, flags);

	n_copies = 0;
	sl_pkt_init(&p, f + 32, (uint16_t)len, 32, in_port);
	sl_pipeline_run_burst(pl, ctx, &p, 1, &hooks, &out, &drop);
	return out;
}

#define A 0x0a000001u
#define B 0x0a000002u
#define C 0x0a000003u

static const char *const knock[] = {
	"table=0,kind=state,lookup=nw_src,update=nw_src,size=1024",
	"table=1,priority=100,state=3,tcp,tcp_dst=22,actions=set_state(3,idle_ms=60000),output:2",
	"table=1,priority=90,udp,udp_dst=1111,actions=set_state:1",
	"table=1,priority=80,state=1,udp,udp_dst=2222,actions=set_state:2",
	"table=1,priority=80,state=2,udp,udp_dst=3333,actions=set_state(3,idle_ms=60000)",
	"table=1,priority=0,actions=set_state:0",
	NULL,
};

static uint32_t
ssh(uint32_t src)
{
	return run1(1, 2, 1, src, B, 6, 40000, 22, 0x02);
}

static uint32_t
udp(uint32_t src, uint16_t dp)
{
	return run1(1, 2, 1, src, B, 17, 40000, dp, 0);
}

static void
test_port_knocking(void)
{
	load(knock);
	CHECK(ssh(A) == 0, "closed at first");
	CHECK(udp(A, 1111) == 0 && udp(A, 2222) == 0 && udp(A, 3333) == 0, "knocks are dropped");
	CHECK(ssh(A) == 2, "open after the sequence");
	CHECK(ssh(A) == 2, "stays open");
	CHECK(ssh(C) == 0, "another host is still closed");
	/* A wrong sequence closes. */
	udp(A, 1111);
	udp(A, 3333);
	CHECK(ssh(A) == 0, "wrong order: closed");
	udp(A, 2222);
	udp(A, 3333);
	CHECK(ssh(A) == 0, "a partial sequence does not open");
	udp(A, 1111);
	udp(A, 2222);
	udp(A, 3333);
	CHECK(ssh(A) == 2, "reopened");
	/* Controller commands: close A, open C, dump. */
	struct sl_flow_spec fs;
	char err[256];
	struct sl_state_set closed = {.state = 0}, open = {.state = 3};
	CHECK(sl_flow_parse_filter("ip,nw_src=10.0.0.1", &fs, NULL) == 0, "filter");
	CHECK(sl_pipeline_state_set(pl, 0, &fs.match, &closed, err, sizeof(err)) == 0, "%s", err);
	CHECK(ssh(A) == 0, "closed by the controller");
	CHECK(sl_flow_parse_filter("ip,nw_src=10.0.0.3", &fs, NULL) == 0, "filter");
	CHECK(sl_pipeline_state_set(pl, 0, &fs.match, &open, err, sizeof(err)) == 0, "%s", err);
	CHECK(ssh(C) == 2, "opened by the controller");
	CHECK(sl_flow_parse_filter("ip,nw_dst=10.0.0.3", &fs, NULL) == 0, "filter");
	CHECK(sl_pipeline_state_set(pl, 0, &fs.match, &open, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "nw_dst") != NULL,
	      "field outside the scope: %s", err);
	CHECK(sl_flow_parse_filter("ip,nw_src=10.0.0.0/8", &fs, NULL) == 0, "filter");
	CHECK(sl_pipeline_state_set(pl, 0, &fs.match, &open, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "masked") != NULL,
	      "masked key: %s", err);
	CHECK(sl_pipeline_state_set(pl, 1, &fs.match, &open, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "not a state table") != NULL,
	      "table 1: %s", err);
	const struct sl_state *st = sl_pipeline_state_table(pl, 0);
	struct sl_state_stats ss;
	sl_state_stats_get(st, &ss);
	CHECK(ss.n_entries == 1 && ss.capacity == 1024, "one entry (C): %u", ss.n_entries);
	CHECK(sl_pipeline_state_del(pl, 0, NULL, err, sizeof(err)) == 0, "clear");
	CHECK(ssh(C) == 0, "cleared");
}

static void
test_timeout(void)
{
	static const char *const lines[] = {
		"table=0,kind=state,lookup=nw_src,size=16",
		"table=1,priority=100,state=0,udp,actions=set_state(5,hard_ms=1,rollback=7)",
		"table=1,priority=100,state=5,udp,actions=output:2",
		"table=1,priority=100,state=7,udp,actions=output:3",
		NULL,
	};
	load(lines);
	CHECK(udp(A, 1) == 0, "state 0: sets 5");
	CHECK(udp(A, 1) == 2 || udp(A, 1) == 3, "state 5 (or 7 on a slow machine)");
	usleep(20000);
	CHECK(udp(A, 1) == 3, "hard timeout passed: rollback state 7");
}

static void
test_mac_learning(void)
{
	/* Learn in the data plane: state of a MAC = the port it was last seen on. */
	static const char *lines[40];
	static char buf[40][160];
	unsigned n = 0;

	lines[n++] = "table=0,kind=state,lookup=dl_dst,update=dl_src,size=4096";
	for (unsigned i = 1; i <= 3; i++) {
		snprintf(buf[n], sizeof(buf[n]),
			 "table=1,priority=10,in_port=%u,state=0,actions=set_state:%u,FLOOD", i, i);
		lines[n] = buf[n];
		n++;
		for (unsigned j = 1; j <= 3; j++) {
			snprintf(buf[n], sizeof(buf[n]),
				 "table=1,priority=10,in_port=%u,state=%u,actions=set_state:%u,"
				 "output:%u",
				 i, j, i, j);
			lines[n] = buf[n];
			n++;
		}
	}
	lines[n] = NULL;
	load(lines);
	/* A (mac 0xa) on port 1 -> B (mac 0xb): unknown, flooded to 2, 3 and 4. */
	uint32_t out = run1(1, 0xb, 0xa, A, B, 17, 1, 2, 0);
	CHECK(out == 4 && n_copies == 2, "flood: last port %u, %u copies", out, n_copies);
	/* B on port 2 -> A: A was learned on port 1. */
	CHECK(run1(2, 0xa, 0xb, B, A, 17, 2, 1, 0) == 1, "B -> A unicast to port 1");
	CHECK(n_copies == 0, "no copies");
	CHECK(run1(1, 0xb, 0xa, A, B, 17, 1, 2, 0) == 2, "A -> B unicast to port 2");
	/* A moves to port 3. */
	CHECK(run1(3, 0xb, 0xa, A, B, 17, 1, 2, 0) == 2, "A (now on 3) -> B");
	CHECK(run1(2, 0xa, 0xb, B, A, 17, 2, 1, 0) == 3, "B -> A follows the move");
	/* Output to the ingress port is refused, counted as in-port-loop. */
	CHECK(run1(3, 0xa, 0xc, C, A, 17, 2, 1, 0) == 0, "A's port is the ingress port: dropped");
}

static void
test_scopes(void)
{
	/* The reply updates the request's flow: only replied-to flows pass. */
	static const char *const lines[] = {
		"table=0,kind=state,lookup=nw_src+nw_dst,update=nw_dst+nw_src,size=1024",
		"table=1,priority=10,in_port=1,actions=output:2",
		"table=1,priority=10,in_port=2,actions=set_state:1,output:1",
		"table=1,priority=20,in_port=1,state=1,actions=set_state(2,table=0),output:3",
		NULL,
	};
	load(lines);
	CHECK(run1(1, 2, 1, A, B, 17, 1, 2, 0) == 2, "request A->B: state 0");
	CHECK(run1(2, 1, 2, B, A, 17, 2, 1, 0) == 1, "reply B->A sets the A->B flow");
	CHECK(run1(1, 2, 1, A, B, 17, 1, 2, 0) == 3, "request A->B now in state 1");
	CHECK(run1(1, 2, 1, A, C, 17, 1, 2, 0) == 2, "A->C untouched");

	/* The request's set_state wrote the reply's flow (B->A) in its turn. */
	struct dump {
		unsigned n;
		char text[256];
	} d = {0};
	int fn(const struct sl_match *key, const struct sl_state_entry_info *e, void *arg);
	CHECK(sl_pipeline_state_dump(pl, 0, fn, &d) == 0 && d.n == 2, "dump: %u entries", d.n);
	CHECK(strstr(d.text, "ip,nw_src=10.0.0.1,nw_dst=10.0.0.2 state=1;") &&
		      strstr(d.text, "ip,nw_src=10.0.0.2,nw_dst=10.0.0.1 state=2;"),
	      "dump: %s", d.text);
}

int
fn(const struct sl_match *key, const struct sl_state_entry_info *e, void *arg)
{
	struct {
		unsigned n;
		char text[256];
	} *d = arg;
	char m[200];

	sl_flow_format_match(key, m, sizeof(m));
	size_t used = strlen(d->text);
	snprintf(d->text + used, sizeof(d->text) - used, "%s state=%u;", m, e->state);
	d->n++;
	return 0;
}

static void
test_syntax(void)
{
	struct sl_table_spec ts;
	struct sl_flow_spec fs;
	struct sl_parse_error pe;
	char buf[512], err[256];

	CHECK(sl_table_spec_parse("table=3,kind=state,lookup=nw_src+tcp_src,"
				  "update=nw_dst+tcp_dst,size=100,name=conn",
				  &ts, &pe) == 0,
	      "%s", pe.msg);
	sl_table_spec_format(&ts, buf, sizeof(buf));
	CHECK(strcmp(buf, "table=3,kind=state,lookup=nw_src+tcp_src,update=nw_dst+tcp_dst,"
			  "size=100,name=conn") == 0,
	      "format: %s", buf);
	CHECK(sl_table_spec_parse("table=3,kind=mask,fields=nw_src,update=nw_dst", &ts, &pe) ==
		      -EINVAL,
	      "update= on a mask table");
	CHECK(sl_table_spec_parse("table=3,kind=state,lookup=nw_src,update=nw_dst+tcp_dst", &ts,
				  &pe) == -EINVAL &&
		      strstr(pe.msg, "pair up"),
	      "scope sizes: %s", pe.msg);
	CHECK(sl_table_spec_parse("table=3,kind=state,size=5", &ts, &pe) == -EINVAL,
	      "state without lookup");
	static const char *const round[] = {
		"table=1, priority=5,state=3 actions=set_state:4,output:2",
		"table=1, priority=5,state=3 actions=set_state(4,table=0,idle_ms=10,hard_ms=20,"
		"rollback=1),goto_table:2",
	};
	for (unsigned i = 0; i < SL_ARRAY_SIZE(round); i++) {
		CHECK(sl_flow_parse(round[i], &fs, &pe) == 0, "%s: %s", round[i], pe.msg);
		sl_flow_format(&fs, buf, sizeof(buf));
		CHECK(strcmp(buf, round[i]) == 0, "round trip: %s", buf);
	}
	CHECK(sl_flow_parse("actions=set_state(1,idle=5)", &fs, &pe) == -EINVAL &&
		      strstr(pe.msg, "idle_ms"),
	      "unknown key: %s", pe.msg);
	CHECK(sl_flow_parse("actions=set_state:x", &fs, &pe) == -EINVAL, "bad state");

	/* Pipeline-side checks. */
	load((const char *const[]){"table=0,kind=state,lookup=nw_src", NULL});
	CHECK(sl_flow_parse("table=0,actions=output:1", &fs, &pe) == 0, "parse");
	CHECK(sl_pipeline_flow_add(pl, &fs, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "state table"),
	      "flow in a state table: %s", err);
	CHECK(sl_flow_parse("table=1,actions=set_state(1,table=2)", &fs, &pe) == 0, "parse");
	CHECK(sl_pipeline_flow_add(pl, &fs, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "table 2 is not a state table"),
	      "set_state to a non-state table: %s", err);
	CHECK(sl_flow_parse("table=1,actions=write_actions(set_state:1)", &fs, &pe) == 0, "%s",
	      pe.msg);
	CHECK(sl_pipeline_flow_add(pl, &fs, err, sizeof(err)) == -EINVAL, "set_state in write");
	CHECK(sl_table_spec_parse("table=253,kind=state,lookup=nw_src", &ts, &pe) == 0, "parse");
	CHECK(sl_pipeline_table_declare(pl, &ts, err, sizeof(err)) == -EINVAL, "no next table: %s",
	      err);
	/* Redeclaring a state table as a classifier removes the state stage. */
	CHECK(sl_table_spec_parse("table=0,kind=mask", &ts, &pe) == 0, "parse");
	CHECK(sl_pipeline_table_declare(pl, &ts, err, sizeof(err)) == 0, "%s", err);
	CHECK(sl_pipeline_state_table(pl, 0) == NULL, "no longer a state table");
}

/*
 * Two workers on one pipeline: the first to run the state table is its
 * writer; the other reads the states it wrote and its set_states are
 * refused and counted (foreign), never written.
 */
static void
test_second_worker(void)
{
	struct sl_pipeline_ctx *mine, *other;
	struct sl_state_stats st;

	load(knock);
	mine = ctx;
	other = sl_pipeline_ctx_create(pl);
	SL_VERIFY(other != NULL);
	udp(A, 1111);
	udp(A, 2222);
	udp(A, 3333);
	CHECK(ssh(A) == 2, "open through the writer");
	ctx = other;
	CHECK(ssh(A) == 2, "the other worker reads the state");
	udp(C, 1111);
	udp(C, 2222);
	udp(C, 3333);
	CHECK(ssh(C) == 0, "its set_states were not written");
	sl_state_stats_get(sl_pipeline_state_table(pl, 0), &st);
	CHECK(st.foreign == 5 /* A's ssh, C's four packets */, "foreign set_states counted: %lu",
	      (unsigned long)st.foreign);
	sl_pipeline_service(pl, other); /* services nothing it does not own */
	ctx = mine;
	CHECK(ssh(A) == 2, "the writer still sees A open");
	sl_pipeline_ctx_destroy(other);
}

int
main(void)
{
	test_syntax();
	test_port_knocking();
	test_timeout();
	test_mac_learning();
	test_scopes();
	test_second_worker();
	sl_pipeline_destroy(pl);
	sl_pipeline_ctx_destroy(ctx);
	return sl_test_summary();
}
