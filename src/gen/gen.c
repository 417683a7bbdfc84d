/* SPDX-License-Identifier: BSD-3-Clause */
/* Control path: stream specifications, frame building, histograms (no DPDK). */
#include "gen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FRAMES_BYTES_MAX (512ull << 20)

static int
bad(char *err, size_t size, const char *key, const char *val, const char *why)
{
	snprintf(err, size, "stream: %s=%s: %s", key, val, why);
	return -EINVAL;
}

/* "VALUE" or "VALUE+N": split off the count (1 when absent). */
static int
split_count(char *val, uint32_t *count)
{
	char *plus = strchr(val, '+');
	char *end;
	unsigned long n;

	*count = 1;
	if (plus == NULL)
		return 0;
	*plus = '\0';
	n = strtoul(plus + 1, &end, 0);
	if (*end != '\0' || n == 0 || n > SL_GEN_FRAMES_MAX)
		return -1;
	*count = (uint32_t)n;
	return 0;
}

static int
parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	char tail;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
		return -1;
	for (int i = 0; i < 6; i++) {
		if (v[i] > 255)
			return -1;
		mac[i] = (uint8_t)v[i];
	}
	return 0;
}

static int
parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s == '\0' || *s == '-')
		return -1;
	v = strtoull(s, &end, 0);
	if (*end != '\0' || v > max)
		return -1;
	*out = v;
	return 0;
}

static int
parse_rate(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end != '\0' || !(v > 0) || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

double
sl_gen_l1_pps(uint32_t size, double gbps)
{
	return gbps * 1e9 / ((double)(size + SL_GEN_L1_OVERHEAD) * 8.0);
}

int
sl_gen_stream_parse(const char *text, struct sl_gen_stream_spec *s, char *err, size_t err_size)
{
	char buf[1024], *save = NULL, *tok;
	double gbps = 0, mbps = 0, pps = 0;
	int n_rates = 0;

	memset(s, 0, sizeof(*s));
	s->size = 128;
	s->vlan = -1;
	s->eth_type = 0x0800;
	s->proto = 17;
	s->sport = 1024;
	s->dport = 1024;
	s->eth_dst_count = s->eth_src_count = s->ip_src_count = s->ip_dst_count = 1;
	s->sport_count = s->dport_count = 1;
	memcpy(s->eth_src, (const uint8_t[]){0x02, 0, 0, 0, 0, 0x01}, 6);
	memcpy(s->eth_dst, (const uint8_t[]){0x02, 0, 0, 0, 0, 0x02}, 6);
	s->ip_src = 0x0a000001; /* 10.0.0.1 */
	s->ip_dst = 0x0a010001; /* 10.1.0.1 */
	snprintf(s->name, sizeof(s->name), "s");
	if (strlen(text) >= sizeof(buf)) {
		snprintf(err, err_size, "stream: specification longer than %zu bytes",
			 sizeof(buf) - 1);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", text);
	bool size_given = false;
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		char *key = tok, *val;
		uint64_t u;
		uint32_t count;

		if (eq == NULL) {
			snprintf(err, err_size, "stream: '%s': expected key=value", tok);
			return -EINVAL;
		}
		*eq = '\0';
		val = eq + 1;
		if (strcmp(key, "name") == 0) {
			if (*val == '\0' || strlen(val) >= sizeof(s->name))
				return bad(err, err_size, key, val, "1..31 characters");
			snprintf(s->name, sizeof(s->name), "%s", val);
		} else if (strcmp(key, "size") == 0) {
			if (parse_u64(val, SL_GEN_SIZE_MAX, &u) < 0 || u < SL_GEN_SIZE_MIN)
				return bad(err, err_size, key, val, "frame size must be 64..9018");
			s->size = (uint32_t)u;
			size_given = true;
		} else if (strcmp(key, "gbps") == 0) {
			if (parse_rate(val, &gbps) < 0)
				return bad(err, err_size, key, val, "expected a positive number");
			n_rates++;
		} else if (strcmp(key, "mbps") == 0) {
			if (parse_rate(val, &mbps) < 0)
				return bad(err, err_size, key, val, "expected a positive number");
			n_rates++;
		} else if (strcmp(key, "pps") == 0) {
			if (parse_rate(val, &pps) < 0)
				return bad(err, err_size, key, val, "expected a positive number");
			n_rates++;
		} else if (strcmp(key, "eth_src") == 0 || strcmp(key, "eth_dst") == 0) {
			bool dst = key[4] == 'd';
			if (split_count(val, &count) < 0)
				return bad(err, err_size, key, val, "bad +N count");
			if (parse_mac(val, dst ? s->eth_dst : s->eth_src) < 0)
				return bad(err, err_size, key, val,
					   "expected a MAC aa:bb:cc:dd:ee:ff[+N]");
			*(dst ? &s->eth_dst_count : &s->eth_src_count) = count;
		} else if (strcmp(key, "vlan") == 0) {
			if (parse_u64(val, 4095, &u) < 0)
				return bad(err, err_size, key, val, "VLAN id must be 0..4095");
			s->vlan = (int)u;
		} else if (strcmp(key, "eth_type") == 0) {
			if (parse_u64(val, 0xffff, &u) < 0 || u < 0x600)
				return bad(err, err_size, key, val,
					   "expected an EtherType 0x0600..0xffff");
			s->eth_type = (uint16_t)u;
		} else if (strcmp(key, "ip_src") == 0 || strcmp(key, "ip_dst") == 0) {
			bool dst = key[3] == 'd';
			struct in_addr a;
			if (split_count(val, &count) < 0)
				return bad(err, err_size, key, val, "bad +N count");
			if (inet_pton(AF_INET, val, &a) != 1)
				return bad(err, err_size, key, val, "expected an IPv4 address[+N]");
			*(dst ? &s->ip_dst : &s->ip_src) = ntohl(a.s_addr);
			*(dst ? &s->ip_dst_count : &s->ip_src_count) = count;
		} else if (strcmp(key, "proto") == 0) {
			if (strcmp(val, "tcp") == 0)
				s->proto = 6;
			else if (strcmp(val, "udp") == 0)
				s->proto = 17;
			else if (parse_u64(val, 255, &u) == 0)
				s->proto = (uint8_t)u;
			else
				return bad(err, err_size, key, val, "expected tcp, udp or 0..255");
		} else if (strcmp(key, "sport") == 0 || strcmp(key, "dport") == 0) {
			bool dst = key[0] == 'd';
			if (split_count(val, &count) < 0)
				return bad(err, err_size, key, val, "bad +N count");
			if (parse_u64(val, 65535, &u) < 0)
				return bad(err, err_size, key, val, "port must be 0..65535");
			*(dst ? &s->dport : &s->sport) = (uint16_t)u;
			*(dst ? &s->dport_count : &s->sport_count) = count;
		} else if (strcmp(key, "flows") == 0) {
			if (parse_u64(val, SL_GEN_FRAMES_MAX, &u) < 0 || u == 0)
				return bad(err, err_size, key, val, "flows must be 1..1048576");
			s->flows = (uint32_t)u;
		} else if (strcmp(key, "drop") == 0) {
			if (strcmp(val, "0") != 0 && strcmp(val, "1") != 0)
				return bad(err, err_size, key, val, "expected 0 or 1");
			s->expect_drop = val[0] == '1';
		} else if (strcmp(key, "pcap") == 0) {
			if (*val == '\0' || strlen(val) >= sizeof(s->pcap))
				return bad(err, err_size, key, val, "file name empty or too long");
			snprintf(s->pcap, sizeof(s->pcap), "%s", val);
		} else {
			snprintf(
				err, err_size,
				"stream: unknown key '%s' (name, size, gbps, mbps, pps, "
				"eth_src, eth_dst, vlan, eth_type, ip_src, ip_dst, proto, sport, dport, "
				"flows, drop, pcap)",
				key);
			return -EINVAL;
		}
	}
	if (n_rates != 1) {
		snprintf(err, err_size, "stream '%s': give exactly one rate (gbps=, mbps= or pps=)",
			 s->name);
		return -EINVAL;
	}
	if (s->pcap[0] != '\0' && !size_given)
		s->size = 0; /* the pcap's own frame sizes */
	if (pps > 0) {
		s->pps = pps;
	} else {
		if (s->size == 0) {
			snprintf(err, err_size,
				 "stream '%s': a layer-1 rate needs size= with pcap=", s->name);
			return -EINVAL;
		}
		s->l1_gbps = gbps > 0 ? gbps : mbps / 1000.0;
		s->pps = sl_gen_l1_pps(s->size, s->l1_gbps);
	}
	return 0;
}

/* IPv4 header checksum over 20 bytes. */
static uint16_t
ip_csum(const uint8_t *h)
{
	uint32_t sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void
put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

static void
mac_add(uint8_t *dst, const uint8_t base[6], uint32_t add)
{
	uint32_t low = (uint32_t)base[2] << 24 | (uint32_t)base[3] << 16 | (uint32_t)base[4] << 8 |
		       base[5];
	dst[0] = base[0];
	dst[1] = base[1];
	put32(dst + 2, low + add);
}

/* Bytes of headers a template frame has (the signature must start at or after them). */
static uint32_t
template_headers(const struct sl_gen_stream_spec *s, uint32_t *l3, uint32_t *l4)
{
	uint32_t n = 14 + (s->vlan >= 0 ? 4 : 0);

	*l3 = n;
	*l4 = 0;
	if (s->eth_type != 0x0800)
		return n;
	n += 20;
	*l4 = n;
	if (s->proto == 6)
		n += 20;
	else if (s->proto == 17)
		n += 8;
	return n;
}

static void
template_fill(const struct sl_gen_stream_spec *s, uint8_t *f, uint32_t len, uint32_t k)
{
	uint32_t l3, l4, off = 12;

	memset(f, 0, len);
	template_headers(s, &l3, &l4);
	mac_add(f, s->eth_dst, k % s->eth_dst_count);
	mac_add(f + 6, s->eth_src, k % s->eth_src_count);
	if (s->vlan >= 0) {
		put16(f + 12, 0x8100);
		put16(f + 14, (uint32_t)s->vlan);
		off = 16;
	}
	put16(f + off, s->eth_type);
	if (s->eth_type != 0x0800)
		return;
	uint8_t *ip = f + l3;
	ip[0] = 0x45;
	put16(ip + 2, len - l3);
	ip[8] = 64;
	ip[9] = s->proto;
	put32(ip + 12, s->ip_src + k % s->ip_src_count);
	put32(ip + 16, s->ip_dst + k % s->ip_dst_count);
	put16(ip + 10, ip_csum(ip));
	uint8_t *l4p = f + l4;
	if (s->proto == 6 || s->proto == 17) {
		put16(l4p, s->sport + k % s->sport_count);
		put16(l4p + 2, s->dport + k % s->dport_count);
	}
	if (s->proto == 17) {
		put16(l4p + 4, len - l4); /* checksum 0: none */
	} else if (s->proto == 6) {
		l4p[12] = 5 << 4;
		l4p[13] = 0x10; /* ACK */
		put16(l4p + 14, 0xffff);
	}
}

static uint32_t
max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

static int
frames_alloc(struct sl_gen_frames *f, uint32_t n, uint32_t stride, const char *name, char *err,
	     size_t err_size)
{
	if ((uint64_t)n * stride > FRAMES_BYTES_MAX) {
		snprintf(err, err_size, "stream '%s': %u frames of %u bytes exceed %llu MB", name,
			 n, stride, FRAMES_BYTES_MAX >> 20);
		return -EINVAL;
	}
	f->data = malloc((size_t)n * stride);
	f->lens = malloc((size_t)n * sizeof(uint32_t));
	if (f->data == NULL || f->lens == NULL) {
		sl_gen_frames_free(f);
		snprintf(err, err_size, "stream '%s': out of memory for %u frames", name, n);
		return -ENOMEM;
	}
	f->n = n;
	f->stride = stride;
	return 0;
}

static int
frames_from_pcap(const struct sl_gen_stream_spec *s, struct sl_gen_frames *f, char *err,
		 size_t err_size)
{
	char ebuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	uint32_t n = 0, stride = s->size ? s->size - SL_GEN_FCS : 0;
	pcap_t *pc;
	int rc;

	/* Pass 1: count frames and find the largest. */
	pc = pcap_open_offline(s->pcap, ebuf);
	if (pc == NULL) {
		snprintf(err, err_size, "stream '%s': pcap=%s: %s", s->name, s->pcap, ebuf);
		return -EINVAL;
	}
	while ((rc = pcap_next_ex(pc, &h, &data)) == 1) {
		if (n == SL_GEN_FRAMES_MAX)
			break;
		n++;
		if (s->size == 0)
			stride = max_u32(stride, h->caplen);
	}
	pcap_close(pc);
	if (n == 0) {
		snprintf(err, err_size, "stream '%s': pcap=%s has no frames", s->name, s->pcap);
		return -EINVAL;
	}
	stride = max_u32(stride, SL_GEN_SIZE_MIN - SL_GEN_FCS); /* room to pad runts */
	if (stride + SL_GEN_FCS > SL_GEN_SIZE_MAX) {
		snprintf(err, err_size, "stream '%s': pcap=%s has frames over %u bytes", s->name,
			 s->pcap, SL_GEN_SIZE_MAX);
		return -EINVAL;
	}
	rc = frames_alloc(f, n, stride, s->name, err, err_size);
	if (rc < 0)
		return rc;
	/* Pass 2: copy (truncated or zero-padded to size= when given). */
	pc = pcap_open_offline(s->pcap, ebuf);
	if (pc == NULL) {
		sl_gen_frames_free(f);
		snprintf(err, err_size, "stream '%s': pcap=%s: %s", s->name, s->pcap, ebuf);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < n && pcap_next_ex(pc, &h, &data) == 1; i++) {
		uint8_t *dst = f->data + (size_t)i * stride;
		uint32_t len = s->size ? stride : h->caplen;
		uint32_t copy = h->caplen < len ? h->caplen : len;

		if (len + SL_GEN_FCS < SL_GEN_SIZE_MIN)
			len = SL_GEN_SIZE_MIN - SL_GEN_FCS; /* pad runts to the minimum frame */
		memset(dst, 0, stride);
		memcpy(dst, data, copy);
		if (len < 14 + SL_GEN_SIG_SIZE) {
			pcap_close(pc);
			sl_gen_frames_free(f);
			snprintf(err, err_size,
				 "stream '%s': pcap=%s frame %u has %u bytes, fewer "
				 "than a header and the %u-byte signature",
				 s->name, s->pcap, i + 1, len, SL_GEN_SIG_SIZE);
			return -EINVAL;
		}
		f->lens[i] = len;
	}
	pcap_close(pc);
	return 0;
}

int
sl_gen_frames_build(const struct sl_gen_stream_spec *s, struct sl_gen_frames *f, char *err,
		    size_t err_size)
{
	uint32_t l3, l4, hdr, len, n;
	int rc;

	memset(f, 0, sizeof(*f));
	if (s->pcap[0] != '\0')
		return frames_from_pcap(s, f, err, err_size);
	len = s->size - SL_GEN_FCS;
	hdr = template_headers(s, &l3, &l4);
	/*
	 * Small frames: the signature may cover the TCP or UDP header after its
	 * ports (sequence and acknowledgement numbers, flags, window, checksums,
	 * UDP length), which no switch of the decomposition study matches or
	 * rewrites: 64-byte VLAN + IPv4 + TCP frames (the decomposition study's Pipelines 1-3)
	 * leave only 2 bytes after the headers.
	 */
	if (l4 != 0 && (s->proto == 6 || s->proto == 17) && hdr + SL_GEN_SIG_SIZE > len)
		hdr = l4 + 4;
	if (hdr + SL_GEN_SIG_SIZE > len) {
		snprintf(err, err_size,
			 "stream '%s': size=%u is too small: %u bytes of headers + "
			 "the %u-byte signature need size >= %u",
			 s->name, s->size, hdr, SL_GEN_SIG_SIZE,
			 hdr + SL_GEN_SIG_SIZE + SL_GEN_FCS);
		return -EINVAL;
	}
	n = s->flows;
	if (n == 0) {
		n = max_u32(s->eth_dst_count, s->eth_src_count);
		n = max_u32(n, max_u32(s->ip_src_count, s->ip_dst_count));
		n = max_u32(n, max_u32(s->sport_count, s->dport_count));
	}
	rc = frames_alloc(f, n, len, s->name, err, err_size);
	if (rc < 0)
		return rc;
	for (uint32_t k = 0; k < n; k++) {
		template_fill(s, f->data + (size_t)k * len, len, k);
		f->lens[k] = len;
	}
	return 0;
}

void
sl_gen_frames_free(struct sl_gen_frames *f)
{
	free(f->data);
	free(f->lens);
	memset(f, 0, sizeof(*f));
}

void
sl_gen_hist_init(struct sl_gen_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min_ns = UINT64_MAX;
}

uint64_t
sl_gen_hist_bucket_low(unsigned b)
{
	unsigned shift;

	if (b < 2 * SL_GEN_HIST_SUB)
		return b;
	shift = b / SL_GEN_HIST_SUB - 1;
	return (uint64_t)(b - shift * SL_GEN_HIST_SUB) << shift;
}

void
sl_gen_hist_merge(struct sl_gen_hist *dst, const struct sl_gen_hist *src)
{
	if (src->count == 0)
		return;
	dst->count += src->count;
	dst->sum_ns += src->sum_ns;
	if (src->min_ns < dst->min_ns)
		dst->min_ns = src->min_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	for (unsigned b = 0; b < SL_GEN_HIST_BUCKETS; b++)
		dst->buckets[b] += src->buckets[b];
}

uint64_t
sl_gen_hist_quantile(const struct sl_gen_hist *h, double q)
{
	uint64_t rank, seen = 0;

	if (h->count == 0)
		return 0;
	if (q >= 1.0)
		return h->max_ns;
	rank = (uint64_t)ceil(q * (double)h->count);
	if (rank == 0)
		rank = 1;
	for (unsigned b = 0; b < SL_GEN_HIST_BUCKETS; b++) {
		seen += h->buckets[b];
		if (seen >= rank) {
			uint64_t v = sl_gen_hist_bucket_low(b);
			if (v < h->min_ns)
				v = h->min_ns;
			if (v > h->max_ns)
				v = h->max_ns;
			return v;
		}
	}
	return h->max_ns;
}
