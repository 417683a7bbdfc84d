/* SPDX-License-Identifier: BSD-3-Clause */
/* metrics: the exporter's state, shared by the server (metrics.c) and the collector (collect.c). */
#ifndef SL_METRICS_PRIV_H
#define SL_METRICS_PRIV_H

#include <sys/socket.h>

#include "../stats/stats.h"
#include "metrics.h"

enum client_state {
	CLIENT_FREE,
	CLIENT_READING,  /* the request head */
	CLIENT_WRITING,  /* the answer */
	CLIENT_DRAINING, /* answer sent, write side shut: read until EOF so close sends no RST */
};

struct client {
	enum client_state state;
	int fd;
	uint64_t deadline_ms; /* CLOCK_MONOTONIC: closed when reached */
	size_t req_len;
	char req[SL_METRICS_REQUEST_MAX];
	char *resp; /* heap: head + body */
	size_t resp_len, resp_off;
};

struct sl_metrics {
	int listen_fd;
	char address[64]; /* "127.0.0.1:9464" */
	char switch_name[64];
	struct sl_stats_src src;
	double start_time;    /* Unix time at create */
	uint64_t scrapes;     /* 200 answers */
	uint64_t http_errors; /* 4xx/5xx answers */
	uint64_t refused;     /* connections closed on accept: all slots busy */
	uint64_t timeouts;    /* connections closed at their deadline */
	struct client clients[SL_METRICS_CLIENTS];
};

#endif /* SL_METRICS_PRIV_H */
