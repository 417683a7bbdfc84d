/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluice-gen: a DPDK traffic generator and receiver for testing switches.
 *
 * Sends streams (templates or pcap frames, each at its own rate) out of one
 * DPDK port and measures what comes back on another: per-stream counts,
 * loss, reordering and latency (TSC timestamps in the frames).  Any devargs
 * work; net_memif connects it to any DPDK switch in another process.
 *
 * Exit codes: 0 success (loss is a result, not an error); 1 runtime failure
 * (EAL, ports, link never up, memory); 2 usage or a bad stream.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "../src/core/core.h"
#include "../src/gen/gen.h"
#include "../src/port/port.h"
#include "sl_config.h"

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2

struct options {
	const char *tx, *rx;
	const char *json_path;
	double duration, drain, link_timeout, batch_us;
	unsigned burst, mbufs;
	bool quiet;
	bool commands; /* run trials on request from stdin */
	unsigned rx_queues, tx_queues;
	unsigned n_streams;
	struct sl_gen_stream_spec *specs;
};

static volatile bool stop_flag;

static void
on_signal(int sig)
{
	(void)sig;
	stop_flag = true;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"Usage: sluice-gen [OPTIONS] -- [EAL-OPTIONS]\n"
		"Send timestamped streams out of one DPDK port, measure them on another.\n\n"
		"  -t, --tx DEVARGS         transmit port (any DPDK devargs, e.g.\n"
		"                           net_memif0,role=client,socket=/tmp/sw.sock,id=0)\n"
		"  -r, --rx DEVARGS         receive port (default: the transmit port)\n"
		"      --rx-queues N        poll N rx queues of the receive port (default 1; a\n"
		"                           switch such as OVS may send on queue 1)\n"
		"      --tx-queues N        send on N tx queues of the transmit port, a burst\n"
		"                           each in turn (default 1; several give a device that\n"
		"                           polls them all more ring room to ride out stalls)\n"
		"  -s, --stream SPEC        a stream (repeatable), key=value,...:\n"
		"                           name=S size=64..9018 (FCS included, default 128)\n"
		"                           gbps=X|mbps=X (layer 1: +20 B/frame) | pps=X\n"
		"                           eth_src=MAC eth_dst=MAC[+N] vlan=ID eth_type=0xNNNN\n"
		"                           ip_src=A.B.C.D[+N] ip_dst=A.B.C.D[+N]\n"
		"                           proto=udp|tcp|N sport=P[+N] dport=P[+N] flows=N\n"
		"                           drop=1 (expected dropped) pcap=FILE (its frames)\n"
		"  -S, --streams FILE       streams, one SPEC per line (# comments)\n"
		"  -d, --duration SEC       transmit time (default 5)\n"
		"      --drain SEC          keep receiving after the last frame (default 0.2)\n"
		"  -b, --burst N            tx/rx burst 1..64 (default 32)\n"
		"      --batch-us US        send the frames due at most every US microseconds\n"
		"                           (default 0: each frame as soon as it is due; a few us\n"
		"                           give the device fuller bursts, as a NIC's coalescing)\n"
		"  -m, --mbufs N            mbufs in the pool (default 16384)\n"
		"      --link-timeout SEC   wait this long for the ports' links (default 10)\n"
		"  -j, --json FILE          write the results as JSON\n"
		"  -q, --quiet              no table on stdout\n"
		"      --commands           keep the ports up and run trials on request, one\n"
		"                           line each on stdin: 'run STREAMS_FILE SECONDS\n"
		"                           JSON_FILE' (answers 'ok JSON_FILE' or 'error ...'),\n"
		"                           'quit'; 'ready' once the links are up\n"
		"  -V, --version            print the version\n"
		"  -h, --help               this help\n\n"
		"Default EAL options: -l 0 --no-huge -m 512 --no-pci --no-telemetry\n"
		"--file-prefix=sluice-gen-PID.\n"
		"Frames carry a 16-byte signature (stream, sequence, TSC) in their last bytes.\n"
		"Exit codes: 0 ok (loss is a result), 1 runtime failure, 2 usage or bad stream.\n");
}

static int
add_stream(struct options *o, const char *text)
{
	struct sl_gen_stream_spec *s;
	char err[512];

	if (o->n_streams == SL_GEN_STREAMS_MAX) {
		fprintf(stderr, "sluice-gen: more than %d streams\n", SL_GEN_STREAMS_MAX);
		return -1;
	}
	s = realloc(o->specs, (o->n_streams + 1) * sizeof(*s));
	if (s == NULL) {
		fprintf(stderr, "sluice-gen: out of memory\n");
		return -1;
	}
	o->specs = s;
	if (sl_gen_stream_parse(text, &s[o->n_streams], err, sizeof(err)) < 0) {
		fprintf(stderr, "sluice-gen: %s\n", err);
		return -1;
	}
	for (unsigned i = 0; i < o->n_streams; i++) {
		if (strcmp(s[i].name, s[o->n_streams].name) == 0) {
			fprintf(stderr, "sluice-gen: stream name '%s' given twice\n", s[i].name);
			return -1;
		}
	}
	if (strcmp(s[o->n_streams].name, "s") == 0)
		snprintf(s[o->n_streams].name, sizeof(s->name), "s%u", o->n_streams);
	o->n_streams++;
	return 0;
}

static int
add_stream_file(struct options *o, const char *path)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	long got;
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		fprintf(stderr, "sluice-gen: --streams %s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((got = sl_read_line(f, &line, &cap, SL_LINE_MAX)) != 0) {
		char *p = line, *end;
		lineno++;
		if (got < 0) { /* never cut a line or stop early without saying so */
			fprintf(stderr, "sluice-gen: --streams %s:%u: %s\n", path, lineno,
				got == -E2BIG    ? "line too long"
				: got == -EILSEQ ? "NUL byte in the line"
						 : strerror((int)-got));
			free(line);
			fclose(f);
			return -1;
		}
		while (*p == ' ' || *p == '\t')
			p++;
		end = p + strlen(p);
		while (end > p && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
			*--end = '\0';
		if (*p == '\0' || *p == '#')
			continue;
		if (add_stream(o, p) < 0) {
			fprintf(stderr, "sluice-gen: (in %s:%u)\n", path, lineno);
			free(line);
			fclose(f);
			return -1;
		}
	}
	free(line);
	fclose(f);
	return 0;
}

static int
parse_double(const char *opt, const char *s, double min, double max, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end != '\0' || !(v >= min && v <= max)) {
		fprintf(stderr, "sluice-gen: %s '%s': expected a number in %g..%g\n", opt, s, min,
			max);
		return -1;
	}
	*out = v;
	return 0;
}

/* A whole number in [lo, hi] (queue counts). */
static int
parse_whole(const char *opt, const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	double v;

	if (parse_double(opt, s, lo, hi, &v) < 0)
		return -1;
	if (v != (unsigned)v) {
		fprintf(stderr, "sluice-gen: %s '%s': expected a whole number\n", opt, s);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

static int
parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
		{"tx", required_argument, NULL, 't'},
		{"rx", required_argument, NULL, 'r'},
		{"stream", required_argument, NULL, 's'},
		{"streams", required_argument, NULL, 'S'},
		{"duration", required_argument, NULL, 'd'},
		{"drain", required_argument, NULL, 1},
		{"burst", required_argument, NULL, 'b'},
		{"mbufs", required_argument, NULL, 'm'},
		{"link-timeout", required_argument, NULL, 2},
		{"batch-us", required_argument, NULL, 3},
		{"json", required_argument, NULL, 'j'},
		{"quiet", no_argument, NULL, 'q'},
		{"commands", no_argument, NULL, 4},
		{"rx-queues", required_argument, NULL, 5},
		{"tx-queues", required_argument, NULL, 6},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	double v;
	int c;

	o->duration = 5;
	o->drain = 0.2;
	o->link_timeout = 10;
	o->burst = 32;
	o->mbufs = 16384;
	o->rx_queues = 1;
	o->tx_queues = 1;
	while ((c = getopt_long(argc, argv, "t:r:s:S:d:b:m:j:qVh", longs, NULL)) != -1) {
		switch (c) {
		case 't':
			o->tx = optarg;
			break;
		case 'r':
			o->rx = optarg;
			break;
		case 's':
			if (add_stream(o, optarg) < 0)
				return -1;
			break;
		case 'S':
			if (add_stream_file(o, optarg) < 0)
				return -1;
			break;
		case 'd':
			if (parse_double("--duration", optarg, 0.001, 86400, &o->duration) < 0)
				return -1;
			break;
		case 1:
			if (parse_double("--drain", optarg, 0, 60, &o->drain) < 0)
				return -1;
			break;
		case 2:
			if (parse_double("--link-timeout", optarg, 0, 600, &o->link_timeout) < 0)
				return -1;
			break;
		case 3:
			if (parse_double("--batch-us", optarg, 0, 1e6, &o->batch_us) < 0)
				return -1;
			break;
		case 'b':
			if (parse_double("--burst", optarg, 1, SL_BURST_MAX_GEN, &v) < 0)
				return -1;
			o->burst = (unsigned)v;
			break;
		case 'm':
			if (parse_double("--mbufs", optarg, 1024, 1 << 24, &v) < 0)
				return -1;
			o->mbufs = (unsigned)v;
			break;
		case 'j':
			o->json_path = optarg;
			break;
		case 4:
			o->commands = true;
			break;
		case 5:
			if (parse_whole("--rx-queues", optarg, 1, 16, &o->rx_queues) < 0)
				return -1;
			break;
		case 6:
			if (parse_whole("--tx-queues", optarg, 1, 16, &o->tx_queues) < 0)
				return -1;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'V':
			printf("sluice-gen %s\n", SL_VERSION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (o->tx == NULL) {
		fprintf(stderr, "sluice-gen: --tx DEVARGS is required\n");
		return -1;
	}
	if (o->n_streams == 0 && !o->commands) {
		fprintf(stderr, "sluice-gen: give at least one --stream or --streams FILE\n");
		return -1;
	}
	if (o->rx == NULL)
		o->rx = o->tx;
	return 0;
}

static bool
has_file_prefix(int argc, char **argv, int first)
{
	for (int i = first; i < argc; i++)
		if (strncmp(argv[i], "--file-prefix", 13) == 0)
			return true;
	return false;
}

static bool
wait_link(const struct sl_port *p, double timeout_s)
{
	uint64_t end = rte_rdtsc() + (uint64_t)(timeout_s * (double)rte_get_tsc_hz());
	struct sl_port_link l;

	for (;;) {
		sl_port_link(p, &l);
		if (l.up)
			return true;
		if (rte_rdtsc() >= end || stop_flag)
			return false;
		rte_delay_ms(10);
	}
}

/* Derived figures of one stream (or the total). */
struct figures {
	uint64_t tx, rx, lost, rejected, reordered;
	double loss_pct;
};

static struct figures
figures_of(const struct sl_gen_stream_stats *st)
{
	struct figures f = {.tx = st->tx,
			    .rx = st->rx,
			    .rejected = st->tx_rejected,
			    .reordered = st->reordered};
	f.lost = st->tx > st->rx ? st->tx - st->rx : 0;
	f.loss_pct = st->tx ? 100.0 * (double)f.lost / (double)st->tx : 0;
	return f;
}

static void
json_hist(FILE *f, const struct sl_gen_hist *h, bool buckets)
{
	fprintf(f,
		"{\"count\": %" PRIu64 ", \"min\": %" PRIu64 ", \"avg\": %.1f, \"p50\": %" PRIu64
		", \"p99\": %" PRIu64 ", \"p999\": %" PRIu64 ", \"max\": %" PRIu64,
		h->count, h->count ? h->min_ns : 0,
		h->count ? (double)h->sum_ns / (double)h->count : 0.0, sl_gen_hist_quantile(h, 0.5),
		sl_gen_hist_quantile(h, 0.99), sl_gen_hist_quantile(h, 0.999), h->max_ns);
	if (buckets) {
		bool first = true;
		fprintf(f, ", \"histogram\": [");
		for (unsigned b = 0; b < SL_GEN_HIST_BUCKETS; b++) {
			if (h->buckets[b] == 0)
				continue;
			fprintf(f, "%s[%" PRIu64 ", %" PRIu64 "]", first ? "" : ", ",
				sl_gen_hist_bucket_low(b), h->buckets[b]);
			first = false;
		}
		fprintf(f, "]");
	}
	fprintf(f, "}");
}

static void
json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static int
write_json(const char *path, const struct options *o, const struct sl_gen_stream_stats *stats,
	   const struct sl_gen_stream_stats *total, const struct sl_gen_run_totals *tot,
	   const struct sl_port_hw_stats *txs, const struct sl_port_hw_stats *rxs)
{
	FILE *f = fopen(path, "w");
	double offered_pps = 0, offered_l1 = 0;

	if (f == NULL) {
		fprintf(stderr, "sluice-gen: --json %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f,
		"{\n \"version\": \"%s\", \"tsc_hz\": %" PRIu64 ", \"duration_s\": %.6f, "
		"\"tx_seconds\": %.6f,\n \"tx_port\": ",
		SL_VERSION, tot->tsc_hz, o->duration, tot->tx_seconds);
	json_string(f, o->tx);
	fprintf(f, ", \"rx_port\": ");
	json_string(f, o->rx);
	fprintf(f,
		",\n \"rx_foreign\": %" PRIu64 ", \"late_max_us\": %.3f, \"alloc_fail\": %" PRIu64
		",\n \"tx_port_opackets\": %" PRIu64 ", \"tx_port_oerrors\": %" PRIu64
		", \"rx_port_ipackets\": %" PRIu64 ", \"rx_port_imissed\": %" PRIu64
		",\n \"streams\": [\n",
		tot->rx_foreign, (double)tot->late_max_cycles * 1e6 / (double)tot->tsc_hz,
		tot->alloc_fail, txs->opackets, txs->oerrors, rxs->ipackets, rxs->imissed);
	for (unsigned s = 0; s < o->n_streams; s++) {
		const struct sl_gen_stream_spec *sp = &o->specs[s];
		const struct sl_gen_stream_stats *st = &stats[s];
		struct figures fg = figures_of(st);

		offered_pps += sp->expect_drop ? 0 : sp->pps;
		fprintf(f, "  {\"name\": ");
		json_string(f, sp->name);
		fprintf(f,
			", \"frame_size\": %u, \"expect_drop\": %s, \"offered_pps\": %.3f, "
			"\"offered_l1_gbps\": %.6f, \"tx\": %" PRIu64 ", \"tx_rejected\": %" PRIu64
			", \"tx_bytes\": %" PRIu64 ", \"rx\": %" PRIu64 ", \"rx_bytes\": %" PRIu64
			", \"lost\": %" PRIu64 ", \"loss_pct\": %.6f, \"reordered\": %" PRIu64
			", \"latency_ns\": ",
			sp->size, sp->expect_drop ? "true" : "false", sp->pps,
			sp->size ? sp->pps * (sp->size + SL_GEN_L1_OVERHEAD) * 8 / 1e9 : 0, st->tx,
			st->tx_rejected, st->tx_bytes, st->rx, st->rx_bytes, fg.lost, fg.loss_pct,
			st->reordered);
		if (!sp->expect_drop && sp->size)
			offered_l1 += sp->pps * (sp->size + SL_GEN_L1_OVERHEAD) * 8 / 1e9;
		json_hist(f, &st->lat, true);
		fprintf(f, "}%s\n", s + 1 < o->n_streams ? "," : "");
	}
	struct figures tf = figures_of(total);
	fprintf(f,
		" ],\n \"total\": {\"offered_pps\": %.3f, \"offered_l1_gbps\": %.6f, "
		"\"tx\": %" PRIu64 ", \"tx_rejected\": %" PRIu64 ", \"rx\": %" PRIu64
		", \"lost\": %" PRIu64 ", \"loss_pct\": %.6f, \"reordered\": %" PRIu64
		", \"tx_pps\": %.3f, \"latency_ns\": ",
		offered_pps, offered_l1, tf.tx, tf.rejected, tf.rx, tf.lost, tf.loss_pct,
		tf.reordered, tot->tx_seconds > 0 ? (double)tf.tx / tot->tx_seconds : 0.0);
	json_hist(f, &total->lat, true);
	fprintf(f, "}\n}\n");
	if (fclose(f) != 0) {
		fprintf(stderr, "sluice-gen: --json %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static void
print_line(const char *name, const struct sl_gen_stream_stats *st, bool drop)
{
	struct figures fg = figures_of(st);
	const struct sl_gen_hist *h = &st->lat;

	printf("%-12s %12" PRIu64 " %10" PRIu64 " %12" PRIu64 " %9.4f %8" PRIu64
	       " %8.2f %8.2f %8.2f %8.2f %8.2f %9.2f%s\n",
	       name, fg.tx, fg.rejected, fg.rx, drop ? 0.0 : fg.loss_pct, fg.reordered,
	       h->count ? (double)h->min_ns / 1e3 : 0, h->count ? h->sum_ns / 1e3 / h->count : 0,
	       sl_gen_hist_quantile(h, 0.5) / 1e3, sl_gen_hist_quantile(h, 0.99) / 1e3,
	       sl_gen_hist_quantile(h, 0.999) / 1e3, h->max_ns / 1e3,
	       drop ? "  (expected dropped)" : "");
}

/* Build every stream's frames; the largest frame in *max_len.  Exit status on failure. */
static int
frames_build_all(const struct options *o, struct sl_gen_frames **out, uint32_t *max_len)
{
	struct sl_gen_frames *frames = calloc(o->n_streams, sizeof(*frames));
	char err[512];
	int rc;

	*out = NULL;
	if (frames == NULL) {
		fprintf(stderr, "sluice-gen: out of memory\n");
		return EXIT_RUNTIME;
	}
	for (unsigned s = 0; s < o->n_streams; s++) {
		rc = sl_gen_frames_build(&o->specs[s], &frames[s], err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "sluice-gen: %s\n", err);
			for (unsigned k = 0; k < s; k++)
				sl_gen_frames_free(&frames[k]);
			free(frames);
			return rc == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
		}
		for (uint32_t k = 0; k < frames[s].n; k++)
			if (frames[s].lens[k] > *max_len)
				*max_len = frames[s].lens[k];
	}
	*out = frames;
	return 0;
}

static void
frames_free_all(const struct options *o, struct sl_gen_frames *frames)
{
	for (unsigned s = 0; frames != NULL && s < o->n_streams; s++)
		sl_gen_frames_free(&frames[s]);
	free(frames);
}

/* One run of o's streams: send, receive, print, write JSON.  Exit status. */
static int
trial(const struct options *o, const struct sl_port *ports, unsigned n_open, struct rte_mempool *mp,
      const struct sl_gen_frames *frames, const char *json_path)
{
	struct sl_gen_stream_stats *stats = calloc(o->n_streams, sizeof(*stats));
	struct sl_gen_stream_stats *total = calloc(1, sizeof(*total));
	struct sl_gen_run_totals tot;
	int status = EXIT_RUNTIME, rc;

	if (stats == NULL || total == NULL) {
		fprintf(stderr, "sluice-gen: out of memory\n");
		goto out;
	}
	/* Drain anything still queued at the receiver (e.g. from an earlier run). */
	{
		struct rte_mbuf *junk[32];
		uint16_t n, rxp = ports[n_open - 1].dpdk_id;
		for (uint16_t q = 0; q < o->rx_queues; q++)
			while ((n = rte_eth_rx_burst(rxp, q, junk, 32)) > 0)
				rte_pktmbuf_free_bulk(junk, n);
	}
	struct sl_gen_run_params rp = {
		.tx_port = ports[0].dpdk_id,
		.rx_port = ports[n_open - 1].dpdk_id,
		.rx_queues = (uint16_t)o->rx_queues,
		.tx_queues = (uint16_t)o->tx_queues,
		.mp = mp,
		.duration_s = o->duration,
		.drain_s = o->drain,
		.burst = o->burst,
		.batch_s = o->batch_us / 1e6,
		.n_streams = o->n_streams,
		.specs = o->specs,
		.frames = frames,
		.stop = &stop_flag,
	};
	rc = sl_gen_run(&rp, stats, &tot);
	if (rc < 0) {
		fprintf(stderr, "sluice-gen: run failed: %s\n", strerror(-rc));
		goto out;
	}
	sl_gen_hist_init(&total->lat);
	for (unsigned s = 0; s < o->n_streams; s++) {
		if (o->specs[s].expect_drop)
			continue;
		total->tx += stats[s].tx;
		total->tx_rejected += stats[s].tx_rejected;
		total->rx += stats[s].rx;
		total->reordered += stats[s].reordered;
		sl_gen_hist_merge(&total->lat, &stats[s].lat);
	}
	struct sl_port_hw_stats txs, rxs;
	sl_port_hw_stats(&ports[0], &txs);
	sl_port_hw_stats(&ports[n_open - 1], &rxs);
	if (!o->quiet) {
		printf("%-12s %12s %10s %12s %9s %8s %8s %8s %8s %8s %8s %9s\n", "stream", "tx",
		       "rejected", "rx", "loss%", "reorder", "min_us", "avg_us", "p50_us", "p99_us",
		       "p99.9_us", "max_us");
		for (unsigned s = 0; s < o->n_streams; s++)
			print_line(o->specs[s].name, &stats[s], o->specs[s].expect_drop);
		if (o->n_streams > 1)
			print_line("total", total, false);
		printf("sent for %.3f s: %.3f Mpps; foreign frames received: %" PRIu64
		       "; sender fell behind by at most %.1f us\n",
		       tot.tx_seconds, tot.tx_seconds > 0 ? total->tx / tot.tx_seconds / 1e6 : 0,
		       tot.rx_foreign, (double)tot.late_max_cycles * 1e6 / (double)tot.tsc_hz);
		fflush(stdout);
	}
	status = 0;
	if (json_path != NULL && write_json(json_path, o, stats, total, &tot, &txs, &rxs) < 0)
		status = EXIT_RUNTIME;
out:
	free(stats);
	free(total);
	return status;
}

/*
 * --commands: keep the ports up and run trials on request, one line each on stdin:
 *   run STREAMS_FILE DURATION_S JSON_FILE   ->  "ok JSON_FILE" or "error MESSAGE"
 *   quit (or end of input)
 * so a benchmark driver never reconnects its ports between trials.
 */
static int
command_loop(struct options *o, const struct sl_port *ports, unsigned n_open,
	     struct rte_mempool *mp, uint32_t room)
{
	char line[2048];

	while (!stop_flag && fgets(line, sizeof(line), stdin) != NULL) {
		char file[1024], json[1024];
		double duration;
		struct sl_gen_frames *frames;
		uint32_t max_len = 0;
		int rc;

		if (strncmp(line, "quit", 4) == 0)
			break;
		if (sscanf(line, "run %1023s %lf %1023s", file, &duration, json) != 3 ||
		    !(duration > 0)) {
			printf("error expected 'run STREAMS_FILE DURATION_S JSON_FILE' or 'quit'\n");
			fflush(stdout);
			continue;
		}
		free(o->specs);
		o->specs = NULL;
		o->n_streams = 0;
		if (add_stream_file(o, file) < 0 || o->n_streams == 0) {
			printf("error bad or empty streams file %s (see stderr)\n", file);
			fflush(stdout);
			continue;
		}
		rc = frames_build_all(o, &frames, &max_len);
		if (rc == 0 && max_len > room) {
			fprintf(stderr, "sluice-gen: frames of %u bytes exceed the mbufs' %u\n",
				max_len, room);
			frames_free_all(o, frames);
			rc = EXIT_USAGE;
		}
		if (rc != 0) {
			printf("error cannot build the frames of %s (see stderr)\n", file);
			fflush(stdout);
			continue;
		}
		o->duration = duration;
		rc = trial(o, ports, n_open, mp, frames, json);
		frames_free_all(o, frames);
		printf(rc == 0 ? "ok %s\n" : "error trial failed (%s)\n", json);
		fflush(stdout);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct options o = {0};
	struct sl_port ports[2];
	unsigned n_open = 0;
	struct rte_mempool *mp = NULL;
	struct sl_gen_frames *frames = NULL;
	char *eal_argv[64], prefix[64], rundir[512], err[512];
	int first_eal = argc, n_eal = 0, status = EXIT_RUNTIME;
	uint32_t max_len = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			first_eal = i + 1;
			break;
		}
	}
	/* getopt sees only our options. */
	int our_argc = first_eal < argc || (first_eal == argc && argc > 1 &&
					    strcmp(argv[argc - 1], "--") == 0)
			       ? first_eal - 1
			       : argc;
	if (parse_options(our_argc, argv, &o) < 0) {
		free(o.specs);
		return EXIT_USAGE;
	}
	if (o.n_streams > 0) {
		status = frames_build_all(&o, &frames, &max_len);
		if (status != 0)
			goto out_free;
		status = EXIT_RUNTIME;
	}

	/* EAL: the user's options after '--', else ours (one lcore, no hugepages). */
	snprintf(prefix, sizeof(prefix), "--file-prefix=sluice-gen-%d", (int)getpid());
	eal_argv[n_eal++] = argv[0];
	if (first_eal < argc) {
		for (int i = first_eal; i < argc && n_eal < 62; i++)
			eal_argv[n_eal++] = argv[i];
		if (!has_file_prefix(argc, argv, first_eal))
			eal_argv[n_eal++] = prefix;
	} else {
		eal_argv[n_eal++] = "-l0";
		eal_argv[n_eal++] = "--no-huge";
		eal_argv[n_eal++] = "-m512";
		eal_argv[n_eal++] = "--no-pci";
		eal_argv[n_eal++] = "--log-level=lib.eal:error";
		eal_argv[n_eal++] = "--no-telemetry";
		eal_argv[n_eal++] = prefix;
	}
	if (rte_eal_init(n_eal, eal_argv) < 0) {
		fprintf(stderr, "sluice-gen: EAL init failed: %s\n", rte_strerror(rte_errno));
		goto out_free;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* With --commands, later streams' frames must fit these mbufs (2048 bytes of data). */
	uint32_t room = max_len > 2048 ? max_len : 2048;
	mp = rte_pktmbuf_pool_create("sluice_gen", o.mbufs, 256, 0,
				     (uint16_t)(RTE_PKTMBUF_HEADROOM + room), rte_socket_id());
	if (mp == NULL) {
		fprintf(stderr,
			"sluice-gen: mempool of %u mbufs: %s (raise -m in the EAL "
			"options or lower --mbufs)\n",
			o.mbufs, rte_strerror(rte_errno));
		goto out_eal;
	}
	bool same = strcmp(o.rx, o.tx) == 0;
	if (sl_port_open(o.tx, "", 1, mp, same ? (uint16_t)o.rx_queues : 1, (uint16_t)o.tx_queues,
			 &ports[0], err, sizeof(err)) < 0) {
		fprintf(stderr, "sluice-gen: --tx: %s\n", err);
		goto out_eal;
	}
	n_open = 1;
	if (!same) {
		if (sl_port_open(o.rx, "", 2, mp, (uint16_t)o.rx_queues, 1, &ports[1], err,
				 sizeof(err)) < 0) {
			fprintf(stderr, "sluice-gen: --rx: %s\n", err);
			goto out_ports;
		}
		n_open = 2;
	}
	for (unsigned i = 0; i < n_open; i++) {
		if (!wait_link(&ports[i], o.link_timeout)) {
			fprintf(stderr,
				"sluice-gen: port '%s': link not up after %.1f s (is the "
				"peer running?)\n",
				ports[i].devargs, o.link_timeout);
			goto out_ports;
		}
	}
	if (o.commands) {
		printf("ready\n");
		fflush(stdout);
		status = command_loop(&o, ports, n_open, mp, room);
	} else {
		status = trial(&o, ports, n_open, mp, frames, o.json_path);
	}
out_ports:
	/* Receive port first: with a memif pair in one process (loopback) its client side must
	 * go before the server that owns the socket (the other order faults in DPDK 22.11). */
	for (unsigned i = n_open; i-- > 0;)
		sl_port_close(&ports[i]);
out_eal:
	rte_mempool_free(mp);
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	sl_dir_remove(rundir);
out_free:
	frames_free_all(&o, frames);
	free(o.specs);
	return status;
}
