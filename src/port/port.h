/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * port: DPDK ethdev ports from devargs, numbered as OpenFlow ports 1..N.
 *
 * Any devargs DPDK can probe works: virtual devices (net_pcap0,rx_pcap=...,
 * net_null0, net_tap0,iface=..., net_af_packet0,iface=..., net_af_xdp0,...,
 * net_ring0, net_memif0,...) and PCI addresses (0000:01:00.0) on a real
 * server.  Ports are probed after EAL init, in the order given, so port N is
 * always the Nth devargs on the command line.
 *
 * Concurrency: sl_port_open/close on the main thread before/after the
 * workers run; sl_port_link and the stats readers from the control thread.
 */
#ifndef SL_PORT_H
#define SL_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rte_mempool;

/** Most ports one Sluice process drives. */
#define SL_PORTS_MAX 64

/** Most rx queues of one port (sluice --rx-queues). */
#define SL_RX_QUEUES_MAX 64

/** An open port. */
struct sl_port {
	uint16_t dpdk_id;  /* ethdev port id */
	uint32_t of_no;    /* OpenFlow port number, 1..N */
	char name[64];     /* ethdev name (e.g. net_pcap0) */
	char devargs[256]; /* as given */
	uint8_t mac[6];
	uint16_t n_rxq;
	uint16_t n_txq;
	/*
	 * A port over a kernel interface (af_packet, af_xdp, pcap iface=): its
	 * name and the ifindex it was opened on.  Their PMDs report the link
	 * as always up; sl_port_link asks the kernel instead.
	 */
	char kernel_iface[16];
	unsigned kernel_ifindex;
};

/** Link state as OpenFlow shows it. */
struct sl_port_link {
	bool up;
	uint32_t speed_mbps; /* 0 if unknown */
	bool full_duplex;
};

/** Device counters read from ethdev (what the PMD saw, beside Sluice's own). */
struct sl_port_hw_stats {
	uint64_t ipackets, opackets, ibytes, obytes;
	uint64_t imissed; /* dropped by the device: rx ring full */
	uint64_t ierrors, oerrors, rx_nombuf;
};

/**
 * Probe and start a port.
 *
 * @param devargs  DPDK devargs string.
 * @param of_no    OpenFlow number to give it.
 * @param mp       Mempool for its rx queues.
 * @param n_rxq    Rx queues (each polled by one worker or the I/O core).
 * @param n_txq    Tx queues (one per worker sending on it).
 * @param port     Out: the port.
 * @param err      Out: message naming the devargs and the failing step.
 * @return 0 or -errno.  Main thread, after EAL init.
 */
int sl_port_open(const char *devargs, uint32_t of_no, struct rte_mempool *mp, uint16_t n_rxq,
		 uint16_t n_txq, struct sl_port *port, char *err, size_t err_size);

/** Stop and close a port, removing a probed vdev.  Main thread. */
void sl_port_close(struct sl_port *port);

/** Current link state (non-blocking).  Control thread. */
void sl_port_link(const struct sl_port *port, struct sl_port_link *link);

/** Device counters.  Control thread. */
void sl_port_hw_stats(const struct sl_port *port, struct sl_port_hw_stats *st);

#endif /* SL_PORT_H */
