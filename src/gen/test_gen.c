/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests: stream parsing, frame building, signatures, histograms (no EAL). */
#include "gen.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../core/sl_test.h"

static unsigned
get16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static void
test_parse(void)
{
	struct sl_gen_stream_spec s;
	char err[256];

	CHECK(sl_gen_stream_parse("name=main,size=128,gbps=1", &s, err, sizeof(err)) == 0, "%s",
	      err);
	CHECK(strcmp(s.name, "main") == 0, "name %s", s.name);
	/* 1 Gb/s of 128-byte frames on the wire: 148 bytes each with preamble and gap. */
	CHECK(fabs(s.pps - 1e9 / (148.0 * 8)) < 1e-6, "pps %f", s.pps);
	CHECK(s.l1_gbps == 1.0, "gbps %f", s.l1_gbps);
	CHECK(sl_gen_stream_parse("mbps=1,size=64", &s, err, sizeof(err)) == 0, "%s", err);
	CHECK(fabs(s.pps - 1e6 / (84.0 * 8)) < 1e-6, "pps %f", s.pps);
	CHECK(sl_gen_stream_parse("pps=1000,eth_dst=02:00:00:00:10:00+32768,vlan=2,proto=tcp,"
				  "dport=80+3,ip_src=10.1.2.3+4,drop=1",
				  &s, err, sizeof(err)) == 0,
	      "%s", err);
	CHECK(s.pps == 1000 && s.eth_dst_count == 32768 && s.vlan == 2 && s.proto == 6 &&
		      s.dport == 80 && s.dport_count == 3 && s.ip_src == 0x0a010203 &&
		      s.ip_src_count == 4 && s.expect_drop,
	      "fields");

	/* Errors name the key and the value. */
	CHECK(sl_gen_stream_parse("size=63,pps=1", &s, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "size=63") != NULL,
	      "%s", err);
	CHECK(sl_gen_stream_parse("size=128", &s, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "rate") != NULL,
	      "%s", err);
	CHECK(sl_gen_stream_parse("pps=1,gbps=1", &s, err, sizeof(err)) == -EINVAL, "two rates");
	CHECK(sl_gen_stream_parse("pps=-1", &s, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "pps=-1") != NULL,
	      "%s", err);
	CHECK(sl_gen_stream_parse("pps=1,vlan=4096", &s, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "vlan=4096") != NULL,
	      "%s", err);
	CHECK(sl_gen_stream_parse("pps=1,eth_dst=02:00:00", &s, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "eth_dst=02:00:00") != NULL,
	      "%s", err);
	CHECK(sl_gen_stream_parse("pps=1,colour=red", &s, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "colour") != NULL,
	      "%s", err);
	CHECK(sl_gen_stream_parse("pps=1,dport=80+0", &s, err, sizeof(err)) == -EINVAL, "+0");
	CHECK(sl_gen_stream_parse("pps=1,ip_dst=10.0.0.300", &s, err, sizeof(err)) == -EINVAL,
	      "bad ip");
	CHECK(sl_gen_stream_parse("pps", &s, err, sizeof(err)) == -EINVAL, "no =");
}

static void
test_frames(void)
{
	struct sl_gen_stream_spec s;
	struct sl_gen_frames f;
	char err[256];

	CHECK(sl_gen_stream_parse("pps=1,size=128,vlan=1,proto=tcp,ip_src=10.0.1.1+3,"
				  "ip_dst=10.0.2.1,dport=443,eth_dst=02:00:00:00:00:fe+2",
				  &s, err, sizeof(err)) == 0,
	      "%s", err);
	CHECK(sl_gen_frames_build(&s, &f, err, sizeof(err)) == 0, "%s", err);
	CHECK(f.n == 3, "n %u (largest range count)", f.n);
	for (uint32_t k = 0; k < f.n; k++) {
		const uint8_t *d = f.data + (size_t)k * f.stride;
		uint32_t sum = 0;

		CHECK(f.lens[k] == 124, "len %u (128 - FCS)", f.lens[k]);
		CHECK(d[5] == (uint8_t)(0xfe + k % 2) && d[4] == 0, "eth_dst %u", k);
		CHECK(get16(d + 12) == 0x8100 && get16(d + 14) == 1 && get16(d + 16) == 0x0800,
		      "vlan tag");
		CHECK(d[18] == 0x45 && d[27] == 6 && get16(d + 20) == 124 - 18, "ip header");
		CHECK(d[18 + 15] == 1 + k, "ip_src low byte %u", d[33]);
		for (int i = 0; i < 20; i += 2)
			sum += get16(d + 18 + i);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		CHECK(sum == 0xffff, "ip checksum verifies (%x)", sum);
		CHECK(get16(d + 38 + 2) == 443, "dport");
	}
	sl_gen_frames_free(&f);

	/* 64-byte frames: untagged UDP fits after its headers (42 + 16 <= 60). */
	CHECK(sl_gen_stream_parse("pps=1,size=64", &s, err, sizeof(err)) == 0, "%s", err);
	CHECK(sl_gen_frames_build(&s, &f, err, sizeof(err)) == 0, "%s", err);
	CHECK(f.n == 1 && f.lens[0] == 60, "64-byte udp");
	sl_gen_frames_free(&f);
	/* VLAN + TCP (58 bytes of headers): the signature covers the TCP header after its ports. */
	CHECK(sl_gen_stream_parse("name=x,pps=1,size=64,vlan=1,proto=tcp,sport=1234,dport=443", &s,
				  err, sizeof(err)) == 0,
	      "%s", err);
	CHECK(sl_gen_frames_build(&s, &f, err, sizeof(err)) == 0, "%s", err);
	CHECK(f.n == 1 && f.lens[0] == 60, "64-byte vlan tcp");
	{
		uint8_t d[60];
		uint16_t st;
		uint32_t seq;
		uint64_t tsc;

		memcpy(d, f.data, 60);
		sl_gen_sig_write(d, 60, 7, 99, 0x123456789aULL);
		CHECK(get16(d + 14) == 1 && d[18 + 9] == 6, "vlan and protocol kept");
		CHECK(get16(d + 38) == 1234 && get16(d + 40) == 443,
		      "ports kept after the signature");
		CHECK(sl_gen_sig_read(d, 60, &st, &seq, &tsc) && st == 7 && seq == 99 &&
			      tsc == 0x123456789aULL,
		      "signature read back");
	}
	sl_gen_frames_free(&f);
	CHECK(sl_gen_stream_parse("pps=1,pcap=/nonexistent.pcap", &s, err, sizeof(err)) == 0, "%s",
	      err);
	CHECK(sl_gen_frames_build(&s, &f, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "/nonexistent.pcap") != NULL,
	      "%s", err);
}

static void
test_sig(void)
{
	uint8_t frame[60] = {0};
	uint16_t s;
	uint32_t seq;
	uint64_t tsc;

	CHECK(!sl_gen_sig_read(frame, sizeof(frame), &s, &seq, &tsc), "no magic in zeros");
	sl_gen_sig_write(frame, sizeof(frame), 7, 0xdeadbeef, 0x123456789abcdefull);
	CHECK(sl_gen_sig_read(frame, sizeof(frame), &s, &seq, &tsc) && s == 7 &&
		      seq == 0xdeadbeef && tsc == 0x123456789abcdefull,
	      "round trip");
	CHECK(frame[43] == 0, "writes only the last 16 bytes");
	CHECK(!sl_gen_sig_read(frame, 15, &s, &seq, &tsc), "too short");
}

static void
test_hist(void)
{
	static struct sl_gen_hist h, h2;
	uint64_t prev = 0;

	/* Bucket edges increase, each value lands in a bucket whose low edge is <= it, and the
	 * next bucket's low edge is above it (width <= 1/32). */
	for (unsigned b = 1; b < SL_GEN_HIST_BUCKETS; b++) {
		uint64_t lo = sl_gen_hist_bucket_low(b);
		CHECK(lo > prev, "bucket %u low %llu after %llu", b, (unsigned long long)lo,
		      (unsigned long long)prev);
		prev = lo;
	}
	for (uint64_t v = 0; v < (1ull << 34); v = v * 3 / 2 + 1) {
		unsigned b = sl_gen_hist_bucket(v);
		CHECK(sl_gen_hist_bucket_low(b) <= v && v < sl_gen_hist_bucket_low(b + 1),
		      "value %llu bucket %u", (unsigned long long)v, b);
		CHECK(v < 64 || (double)(sl_gen_hist_bucket_low(b + 1) -
					 sl_gen_hist_bucket_low(b)) <= (double)v / 31.9,
		      "width at %llu", (unsigned long long)v);
	}
	sl_gen_hist_init(&h);
	CHECK(sl_gen_hist_quantile(&h, 0.5) == 0, "empty");
	for (uint64_t v = 1; v <= 1000; v++)
		sl_gen_hist_add(&h, v * 1000); /* 1..1000 us */
	CHECK(h.count == 1000 && h.min_ns == 1000 && h.max_ns == 1000000, "summary");
	uint64_t p50 = sl_gen_hist_quantile(&h, 0.5), p99 = sl_gen_hist_quantile(&h, 0.99);
	CHECK(p50 <= 500000 && p50 > 500000 * 0.96, "p50 %llu", (unsigned long long)p50);
	CHECK(p99 <= 990000 && p99 > 990000 * 0.96, "p99 %llu", (unsigned long long)p99);
	CHECK(sl_gen_hist_quantile(&h, 1.0) == 1000000, "p100 is the max");
	sl_gen_hist_init(&h2);
	sl_gen_hist_add(&h2, 5);
	sl_gen_hist_merge(&h2, &h);
	CHECK(h2.count == 1001 && h2.min_ns == 5 && h2.max_ns == 1000000, "merge");
}

int
main(void)
{
	test_parse();
	test_frames();
	test_sig();
	test_hist();
	return sl_test_summary();
}
