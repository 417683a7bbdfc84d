/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics: a Prometheus exporter.  `sluice --metrics [ADDR:]PORT` serves
 * the switch's counters at http://ADDR:PORT/metrics in the Prometheus text
 * exposition format (version 0.0.4); docs/user-guide.md lists the metrics,
 * dist/grafana-sluice.json graphs them.
 *
 * Why a small server of our own, on the control thread: every figure is
 * read through src/stats, whose readers belong to the control thread (the
 * same ones DPDK telemetry uses), so serving there needs no lock and no
 * mailbox, and a scrape costs the datapath nothing: workers are never
 * touched, their counters are read as they run.  The control loop calls
 * sl_metrics_run() every round (1 to 4 ms), which is the added latency of
 * a scrape.
 *
 * The network is untrusted.  The server answers GET /metrics (200), any
 * other path (404), any other method (405), a malformed request (400), a
 * request head over SL_METRICS_REQUEST_MAX bytes (431) and HTTP other than
 * 1.0/1.1 (505); every answer closes the connection.  Sockets are
 * non-blocking; a client gets SL_METRICS_CLIENT_TIMEOUT_MS to send its
 * request and read the answer, and at most SL_METRICS_CLIENTS connections
 * are open at once (more are closed on accept).  Nothing a client sends is
 * kept past its connection.
 *
 * The request parser and the exposition writer need no DPDK: the unit test
 * and the fuzz target (fuzz/fuzz_http.c) use them alone.
 */
#ifndef SL_METRICS_H
#define SL_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- HTTP request head (any thread, pure) ---- */

#define SL_METRICS_REQUEST_MAX 4096 /* bytes of request line + headers */

/**
 * Decide what to answer to a request head.
 *
 * @param buf  the bytes received so far (not NUL-terminated; any bytes).
 * @param len  how many.
 * @return 0 while the head is incomplete and shorter than
 *         SL_METRICS_REQUEST_MAX (read more), else the HTTP status to
 *         answer: 200 (GET /metrics, with or without a query), 400
 *         (malformed: bad request line, control bytes, a header line
 *         without ':'), 404 (another path), 405 (another method), 431 (no
 *         end of head within SL_METRICS_REQUEST_MAX bytes) or 505 (not
 *         HTTP/1.0 or HTTP/1.1).  A malformed request line (400, 505) is
 *         answered as soon as it is complete; 200, 404 and 405 once the
 *         head is.
 */
int sl_metrics_request_parse(const char *buf, size_t len);

/* ---- Exposition writer (any thread, pure) ---- */

/** Text being built; grows on the heap up to SL_METRICS_TEXT_MAX bytes. */
#define SL_METRICS_TEXT_MAX (16u << 20)
struct sl_metrics_text {
	char *buf;
	size_t len, cap;
	bool failed; /* out of memory or over SL_METRICS_TEXT_MAX: the text is cut */
};

/** Metric types (the # TYPE line). */
enum sl_metrics_type {
	SL_METRICS_COUNTER,
	SL_METRICS_GAUGE,
	SL_METRICS_HISTOGRAM,
};

/** An empty text.  Free it with sl_metrics_text_free (NULL-safe buffer). */
void sl_metrics_text_init(struct sl_metrics_text *t);
void sl_metrics_text_free(struct sl_metrics_text *t);

/**
 * Start a metric family: its # HELP and # TYPE lines.  Every sample of
 * @name must follow before the next family (the format wants them
 * together).  @name: [a-zA-Z_:][a-zA-Z0-9_:]* (the caller's constant);
 * @help: one line (backslashes and newlines are escaped).
 */
void sl_metrics_family(struct sl_metrics_text *t, const char *name, enum sl_metrics_type type,
		       const char *help);

/**
 * One sample: `name{k1="v1",...} value`.
 * @param labels  NULL, or pairs of key and value ending with a NULL key:
 *                {"port", "1", "name", "net_ring0", NULL}.  Keys are the
 *                caller's constants; values are escaped (\\, \", \n), so
 *                any text may be a value.
 */
void sl_metrics_u64(struct sl_metrics_text *t, const char *name, const char *const labels[],
		    uint64_t value);
void sl_metrics_f64(struct sl_metrics_text *t, const char *name, const char *const labels[],
		    double value);

/**
 * A histogram's samples: NAME_bucket{...,le="E"} (cumulative), the +Inf
 * bucket, NAME_sum and NAME_count (equal to the +Inf bucket, whatever
 * count a racy snapshot gave).
 *
 * @param le      upper edges of buckets 0 .. @n - 2 (seconds, increasing);
 *                bucket @n - 1 is +Inf.
 * @param counts  samples in each bucket (not cumulative), @n of them.
 * @param sum     the sum of the samples (seconds).
 */
void sl_metrics_histogram(struct sl_metrics_text *t, const char *name, const char *const labels[],
			  const double le[], const uint64_t counts[], unsigned n, double sum);

/* ---- The exporter (control thread) ---- */

#define SL_METRICS_CLIENTS 8              /* connections open at once */
#define SL_METRICS_CLIENT_TIMEOUT_MS 5000 /* to send a request, then to read the answer */

struct sl_stats_src;
struct sl_metrics;

/** What to serve and where. */
struct sl_metrics_params {
	const char *listen;             /* "PORT" (on 127.0.0.1), "ADDR:PORT" or "[IPV6]:PORT";
				     PORT 0 picks a free one (sl_metrics_port) */
	const char *switch_name;        /* the label switch="..." on every sample */
	const struct sl_stats_src *src; /* what to read (copied) */
};

/**
 * Check a --metrics value without opening anything.
 * @return 0 or -EINVAL (the reason in @err).  Any thread.
 */
int sl_metrics_listen_check(const char *listen, char *err, size_t err_size);

/**
 * Open the listening socket.
 * @return 0 or -EINVAL (bad address), -EADDRINUSE, -EACCES, -ENOMEM or
 *         another socket -errno; the reason in @err.  Init only.
 */
int sl_metrics_create(const struct sl_metrics_params *p, struct sl_metrics **out, char *err,
		      size_t err_size);

/** The local address and port listened on ("127.0.0.1:9464", "[::1]:9464"). */
const char *sl_metrics_address(const struct sl_metrics *m);

/**
 * Accept, read, answer and close what is ready, without blocking.  Cheap
 * when idle (one accept and a scan of the open connections).  Control
 * thread, every round.
 */
void sl_metrics_run(struct sl_metrics *m);

/**
 * Write the metrics text of the switch into @t (what GET /metrics
 * returns).  Control thread.
 */
void sl_metrics_collect(const struct sl_metrics *m, struct sl_metrics_text *t);

/** Close every connection and the listener.  NULL-safe.  Control thread. */
void sl_metrics_destroy(struct sl_metrics *m);

#endif /* SL_METRICS_H */
