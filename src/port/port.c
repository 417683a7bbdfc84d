/* SPDX-License-Identifier: BSD-3-Clause */
/* Control path: probing, configuring and starting ethdev ports. */
#include "port.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_bus.h>
#include <rte_common.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_mempool.h>

#define RX_DESC 1024
#define TX_DESC 1024

static int
fail(char *err, size_t size, int rc, const char *devargs, const char *step)
{
	snprintf(err, size, "port '%s': %s failed: %s", devargs, step, strerror(rc < 0 ? -rc : rc));
	return rc < 0 ? rc : -rc;
}

/* Find the ethdev a devargs string names (probing it if it is not there yet). */
static int
find_port(const char *devargs, uint16_t *id)
{
	struct rte_dev_iterator it;
	uint16_t pid;

	RTE_ETH_FOREACH_MATCHING_DEV(pid, devargs, &it)
	{
		*id = pid;
		rte_eth_iterator_cleanup(&it);
		return 0;
	}
	return -ENODEV;
}

/*
 * The next "key=value" of devargs being walked (@buf a copy, @save NULL at
 * first: the device name is skipped); keys without a value are passed over.
 * Returns false at the end.
 */
static bool
devargs_next(char *buf, char **save, const char **key, const char **val)
{
	char *kv;

	if (*save == NULL)
		strtok_r(buf, ",", save); /* the device name */
	while ((kv = strtok_r(NULL, ",", save)) != NULL) {
		char *eq = strchr(kv, '=');
		if (eq == NULL)
			continue;
		*eq = '\0';
		*key = kv;
		*val = eq + 1;
		return true;
	}
	return false;
}

/*
 * Why a probe failed, from the arguments Sluice understands: a pcap file
 * that cannot be read or written, an interface that does not exist.  PMDs
 * report all of these as "Operation not permitted".  Returns false when
 * nothing is found (the EAL's own lines above say more).
 */
static bool
probe_diagnose(const char *devargs, char *why, size_t size)
{
	char buf[SL_PORT_DEVARGS_MAX], *save = NULL;
	const char *key, *val;

	snprintf(buf, sizeof(buf), "%s", devargs);
	while (devargs_next(buf, &save, &key, &val)) {
		if (strcmp(key, "rx_pcap") == 0 && access(val, R_OK) < 0) {
			snprintf(why, size, "rx_pcap file '%s': %s", val, strerror(errno));
			return true;
		}
		if (strcmp(key, "tx_pcap") == 0) {
			char dir[512];
			snprintf(dir, sizeof(dir), "%s", val);
			const char *d = dirname(dir);
			if (access(d, W_OK) < 0) {
				snprintf(why, size, "tx_pcap file '%s': directory '%s': %s", val, d,
					 strerror(errno));
				return true;
			}
		}
		if ((strcmp(key, "iface") == 0 || strcmp(key, "rx_iface") == 0 ||
		     strcmp(key, "tx_iface") == 0 || strcmp(key, "rx_iface_in") == 0) &&
		    strncmp(devargs, "net_tap", 7) != 0 && if_nametoindex(val) == 0) {
			snprintf(why, size,
				 "%s '%s': no such network interface (in this namespace)", key,
				 val);
			return true;
		}
	}
	return false;
}

/*
 * Devargs the vdev drivers read as numbers: they take "abc" as 0 and fail
 * later with a misleading cause (net_null's size=abc: "rx queue setup:
 * Cannot allocate memory").  Names the key and value; false when all parse.
 */
static bool
devargs_numbers_bad(const char *devargs, char *why, size_t size)
{
	static const char *const numeric[] = {
		"size",        "copy",        "no-rx",      "infinite_rx",  "qpairs",
		"blocksz",     "framesz",     "framecnt",   "qdisc_bypass", "start_queue",
		"queue_count", "busy_budget", "force_copy", "shared_umem",
	};
	char buf[SL_PORT_DEVARGS_MAX], *save = NULL, *end;
	const char *key, *val;

	snprintf(buf, sizeof(buf), "%s", devargs);
	while (devargs_next(buf, &save, &key, &val)) {
		for (size_t k = 0; k < sizeof(numeric) / sizeof(numeric[0]); k++) {
			if (strcmp(key, numeric[k]) != 0)
				continue;
			errno = 0;
			(void)strtoul(val, &end, 0);
			if (val[0] == '\0' || *end != '\0' || errno != 0 || val[0] == '-') {
				snprintf(why, size, "'%s=%s': not a number", key, val);
				return true;
			}
		}
	}
	return false;
}

/* The kernel interface a port's devargs name (iface=, rx_iface=, rx_iface_in=), or "". */
static void
kernel_iface_of(const char *devargs, char *iface, size_t size)
{
	static const char *const keys[] = {"iface=", "rx_iface=", "rx_iface_in="};

	iface[0] = '\0';
	if (strncmp(devargs, "net_af_packet", 13) != 0 && strncmp(devargs, "net_af_xdp", 10) != 0 &&
	    strncmp(devargs, "net_pcap", 8) != 0)
		return; /* net_tap reports its link itself */
	for (const char *p = strchr(devargs, ','); p != NULL; p = strchr(p + 1, ',')) {
		for (unsigned k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			size_t n = strlen(keys[k]);
			if (strncmp(p + 1, keys[k], n) == 0) {
				size_t len = strcspn(p + 1 + n, ",");
				snprintf(iface, size, "%.*s", (int)len, p + 1 + n);
				return;
			}
		}
	}
}

/*
 * af_packet sockets also receive what other sockets send out of their
 * interface (the namespace's own neighbour and multicast frames), which a
 * learning controller takes for hosts behind the port.  DPDK 22.11's PMD
 * does not ask the kernel to skip them, and its sockets are in a fanout
 * group, where PACKET_IGNORE_OUTGOING has no effect: find its packet
 * sockets on @ifindex among our file descriptors and give each a socket
 * filter that drops PACKET_OUTGOING frames.  Returns how many were set.
 */
static unsigned
packet_sockets_ignore_outgoing(unsigned ifindex)
{
	static struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_PKTTYPE),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0),
		BPF_STMT(BPF_RET | BPF_K, 0x7fffffff),
	};
	const struct sock_fprog prog = {.len = sizeof(code) / sizeof(code[0]), .filter = code};
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned n = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name), dom = 0;
		socklen_t len = sizeof(dom);
		struct sockaddr_ll sll;
		socklen_t sl = sizeof(sll);

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dirfd(d))
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) < 0 || dom != AF_PACKET)
			continue;
		if (getsockname(fd, (struct sockaddr *)&sll, &sl) < 0 ||
		    (unsigned)sll.sll_ifindex != ifindex)
			continue;
		if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) == 0)
			n++;
	}
	closedir(d);
	return n;
}

bool
sl_port_name_valid(const char *name)
{
	size_t n = strlen(name);
	bool digits = true;

	if (n == 0 || n > SL_PORT_NAME_MAX || strcmp(name, "LOCAL") == 0)
		return false;
	for (const char *c = name; *c; c++) {
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != '.' && *c != '-' && *c != ':')
			return false;
		digits &= isdigit((unsigned char)*c) != 0;
	}
	return !digits; /* a number is a port number */
}

int
sl_port_args_parse(const char *spec, struct sl_port_args *a, char *err, size_t err_size)
{
	char buf[sizeof(a->devargs)], *save = NULL, *kv;
	size_t n = 0;

	memset(a, 0, sizeof(*a));
	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, err_size, "port '%.40s...': arguments too long (at most %zu bytes)",
			 spec, sizeof(buf) - 1);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	for (kv = strtok_r(buf, ",", &save); kv != NULL; kv = strtok_r(NULL, ",", &save)) {
		if (strncmp(kv, "name=", 5) == 0) {
			if (!sl_port_name_valid(kv + 5)) {
				snprintf(
					err, err_size,
					"port '%s': bad name '%s' (1..%d characters of A-Z a-z 0-9 "
					"_ . - :, not a number, not LOCAL)",
					spec, kv + 5, SL_PORT_NAME_MAX);
				return -EINVAL;
			}
			snprintf(a->name, sizeof(a->name), "%s", kv + 5);
			continue;
		}
		if (strncmp(kv, "ofport=", 7) == 0) {
			char *end;
			unsigned long v = strtoul(kv + 7, &end, 10);
			if (kv[7] < '1' || kv[7] > '9' || *end != '\0' || v > SL_PORTS_MAX) {
				snprintf(err, err_size, "port '%s': bad ofport '%s' (1..%d)", spec,
					 kv + 7, SL_PORTS_MAX);
				return -EINVAL;
			}
			a->of_no = (uint32_t)v;
			continue;
		}
		n += (size_t)snprintf(a->devargs + n, sizeof(a->devargs) - n, "%s%s", n ? "," : "",
				      kv);
	}
	if (n == 0 || a->devargs[0] == '\0' || strchr(a->devargs, '=') == a->devargs ||
	    strchr(spec, ',') == spec) {
		snprintf(err, err_size,
			 "port '%s': no device (expected DEVARGS[,name=NAME][,ofport=N])", spec);
		return -EINVAL;
	}
	return 0;
}

const char *
sl_port_no_format(uint32_t of_no, char *buf, size_t size)
{
	if (of_no == SL_PORT_NO_LOCAL)
		snprintf(buf, size, "LOCAL");
	else
		snprintf(buf, size, "%u", of_no);
	return buf;
}

int
sl_port_find(const struct sl_port *ports, const char *name_or_no)
{
	char *end;
	unsigned long v;

	if (strcmp(name_or_no, "LOCAL") == 0)
		return ports[SL_PORT_SLOT_LOCAL].of_no != 0 ? SL_PORT_SLOT_LOCAL : -ENOENT;
	v = strtoul(name_or_no, &end, 10);
	if (name_or_no[0] >= '0' && name_or_no[0] <= '9' && *end == '\0') {
		int s = v <= UINT32_MAX ? sl_port_slot((uint32_t)v) : -1;
		return s >= 0 && ports[s].of_no != 0 ? s : -ENOENT;
	}
	for (int s = 0; s < SL_PORT_SLOTS; s++)
		if (ports[s].of_no != 0 && strcmp(ports[s].name, name_or_no) == 0)
			return s;
	return -ENOENT;
}

unsigned
sl_port_count(const struct sl_port *ports)
{
	unsigned n = 0;

	for (unsigned s = 0; s < SL_PORT_SLOTS; s++)
		n += ports[s].of_no != 0;
	return n;
}

/* The iface= of an af_packet, af_xdp or tap port, or "" (the default name). */
static void
iface_name_of(const char *devargs, char *iface, size_t size)
{
	iface[0] = '\0';
	if (strncmp(devargs, "net_af_packet", 13) != 0 && strncmp(devargs, "net_af_xdp", 10) != 0 &&
	    strncmp(devargs, "net_tap", 7) != 0)
		return;
	for (const char *p = strchr(devargs, ','); p != NULL; p = strchr(p + 1, ',')) {
		if (strncmp(p + 1, "iface=", 6) == 0) {
			size_t len = strcspn(p + 7, ",");
			snprintf(iface, size, "%.*s", (int)len, p + 7);
			return;
		}
	}
}

int
sl_port_open(const char *devargs, const char *name, uint32_t of_no, struct rte_mempool *mp,
	     uint16_t n_rxq, uint16_t n_txq, struct sl_port *port, char *err, size_t err_size)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	char dflt[64];
	bool probed = false;
	uint16_t id = RTE_MAX_ETHPORTS;
	int rc;

	memset(port, 0, sizeof(*port));
	iface_name_of(devargs, dflt, sizeof(dflt));
	if (name[0] == '\0' && dflt[0] != '\0' && !sl_port_name_valid(dflt)) {
		snprintf(err, err_size,
			 "port '%s': the default name '%s' is not a port name: give "
			 "name=NAME",
			 devargs, dflt);
		return -EINVAL;
	}
	if (find_port(devargs, &id) < 0) {
		char why[400];
		if (devargs_numbers_bad(devargs, why, sizeof(why))) {
			snprintf(err, err_size, "port '%s': %s", devargs, why);
			return -EINVAL;
		}
		rc = rte_dev_probe(devargs);
		if (rc < 0) {
			/* A configuration error whatever errno the PMD chose: -EINVAL (exit 2). */
			if (probe_diagnose(devargs, why, sizeof(why)))
				snprintf(err, err_size, "port '%s': %s", devargs, why);
			else
				snprintf(
					err, err_size,
					"port '%s': the EAL cannot attach it: unknown device name or "
					"arguments its driver refuses (see the EAL lines above)",
					devargs);
			return -EINVAL;
		}
		probed = true;
		if (find_port(devargs, &id) < 0) {
			rc = fail(err, err_size, -ENODEV, devargs, "finding the probed port");
			goto remove;
		}
	}
	rc = rte_eth_dev_info_get(id, &info);
	if (rc < 0) {
		rc = fail(err, err_size, rc, devargs, "dev_info_get");
		goto remove;
	}
	if (n_rxq > info.max_rx_queues || n_txq > info.max_tx_queues) {
		snprintf(err, err_size, "port '%s': needs %u rx / %u tx queues, device has %u / %u",
			 devargs, n_rxq, n_txq, info.max_rx_queues, info.max_tx_queues);
		rc = -EINVAL;
		goto remove;
	}
	memset(&conf, 0, sizeof(conf));
	if (n_rxq > 1) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf =
			(RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) &
			info.flow_type_rss_offloads;
	}
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	rc = rte_eth_dev_configure(id, n_rxq, n_txq, &conf);
	if (rc < 0) {
		rc = fail(err, err_size, rc, devargs, "configure");
		goto remove;
	}
	uint16_t nb_rx = RX_DESC, nb_tx = TX_DESC;
	rte_eth_dev_adjust_nb_rx_tx_desc(id, &nb_rx, &nb_tx);
	for (uint16_t q = 0; q < n_rxq; q++) {
		rc = rte_eth_rx_queue_setup(id, q, nb_rx, rte_eth_dev_socket_id(id), NULL, mp);
		if (rc < 0) {
			rc = fail(err, err_size, rc, devargs, "rx queue setup (too few mbufs?)");
			goto remove;
		}
	}
	for (uint16_t q = 0; q < n_txq; q++) {
		rc = rte_eth_tx_queue_setup(id, q, nb_tx, rte_eth_dev_socket_id(id), NULL);
		if (rc < 0) {
			rc = fail(err, err_size, rc, devargs, "tx queue setup");
			goto remove;
		}
	}
	rc = rte_eth_dev_start(id);
	if (rc < 0) {
		rc = fail(err, err_size, rc, devargs, "start");
		goto remove;
	}
	rte_eth_promiscuous_enable(
		id); /* not every PMD supports it; a switch wants it where it can */
	port->dpdk_id = id;
	port->of_no = of_no;
	port->n_rxq = n_rxq;
	port->n_txq = n_txq;
	rte_eth_dev_get_name_by_port(id, port->dev_name);
	if (dflt[0] == '\0') /* the device name; OpenFlow keeps 15 characters of it */
		snprintf(dflt, sizeof(dflt), "%.*s", SL_PORT_NAME_MAX, port->dev_name);
	snprintf(port->name, sizeof(port->name), "%.*s", SL_PORT_NAME_MAX, name[0] ? name : dflt);
	snprintf(port->devargs, sizeof(port->devargs), "%s", devargs);
	kernel_iface_of(devargs, port->kernel_iface, sizeof(port->kernel_iface));
	if (port->kernel_iface[0] != '\0') {
		port->kernel_ifindex = if_nametoindex(port->kernel_iface);
		if (strncmp(devargs, "net_af_packet", 13) == 0)
			packet_sockets_ignore_outgoing(port->kernel_ifindex);
	}
	if (rte_eth_macaddr_get(id, &mac) == 0)
		memcpy(port->mac, mac.addr_bytes, 6);
	return 0;

remove:
	/* A device this call attached goes again: a failed add leaves nothing behind. */
	if (probed && rte_eth_dev_is_valid_port(id)) {
		struct rte_device *dev = rte_eth_dev_info_get(id, &info) == 0 ? info.device : NULL;
		rte_eth_dev_close(id);
		if (dev != NULL)
			rte_dev_remove(dev);
	}
	return rc;
}

int
sl_port_lookup(const char *devargs, uint16_t *id)
{
	return find_port(devargs, id);
}

void
sl_port_link_down(const struct sl_port *port)
{
	rte_eth_dev_set_link_down(port->dpdk_id); /* not every PMD has it: then nothing changes */
}

void
sl_port_close(struct sl_port *port)
{
	struct rte_eth_dev_info info;

	if (port->of_no == 0)
		return;
	rte_eth_dev_stop(port->dpdk_id);
	if (rte_eth_dev_info_get(port->dpdk_id, &info) == 0 && info.device != NULL) {
		rte_eth_dev_close(port->dpdk_id);
		rte_dev_remove(info.device);
	} else {
		rte_eth_dev_close(port->dpdk_id);
	}
	port->of_no = 0;
}

void
sl_port_link(const struct sl_port *port, struct sl_port_link *link)
{
	struct rte_eth_link l;

	memset(link, 0, sizeof(*link));
	if (rte_eth_link_get_nowait(port->dpdk_id, &l) < 0)
		return;
	link->up = l.link_status == RTE_ETH_LINK_UP;
	if (port->kernel_iface[0] != '\0') {
		/*
		 * The kernel's word: up and running (carrier), and still the
		 * interface the port opened (one deleted and made again under the
		 * same name is another interface: the port's sockets are gone).
		 */
		struct ifreq ifr;
		int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", port->kernel_iface);
		link->up = fd >= 0 && if_nametoindex(port->kernel_iface) == port->kernel_ifindex &&
			   ioctl(fd, SIOCGIFFLAGS, &ifr) == 0 && (ifr.ifr_flags & IFF_UP) &&
			   (ifr.ifr_flags & IFF_RUNNING);
		if (fd >= 0)
			close(fd);
	}
	link->speed_mbps = l.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0 : l.link_speed;
	link->full_duplex = l.link_duplex == RTE_ETH_LINK_FULL_DUPLEX;
}

void
sl_port_hw_stats(const struct sl_port *port, struct sl_port_hw_stats *st)
{
	struct rte_eth_stats s;

	memset(st, 0, sizeof(*st));
	if (rte_eth_stats_get(port->dpdk_id, &s) < 0)
		return;
	st->ipackets = s.ipackets;
	st->opackets = s.opackets;
	st->ibytes = s.ibytes;
	st->obytes = s.obytes;
	st->imissed = s.imissed;
	st->ierrors = s.ierrors;
	st->oerrors = s.oerrors;
	st->rx_nombuf = s.rx_nombuf;
}
