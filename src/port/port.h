/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * port: DPDK ethdev ports from devargs, numbered as OpenFlow ports.
 *
 * Any devargs DPDK can probe works: virtual devices (net_pcap0,rx_pcap=...,
 * net_null0, net_tap0,iface=..., net_af_packet0,iface=..., net_af_xdp0,...,
 * net_ring0, net_memif0,...) and PCI addresses (0000:01:00.0) on a real
 * server.  Ports given at start are probed after EAL init, in the order
 * given, and numbered 1, 2, ... unless they say ofport=N; more are added and
 * removed at run time (sluicectl add-port / del-port).
 *
 * The switch's ports live in one array of SL_PORT_SLOTS slots: slot i holds
 * OpenFlow port i + 1, the last slot (SL_PORT_SLOT_LOCAL) holds LOCAL, the
 * port to the host stack (a TAP interface named after the switch, like Open
 * vSwitch's bridge-internal port).  A slot whose of_no is 0 is free.
 *
 * Every port has a user-facing name (struct sl_port.name): name=NAME in its
 * arguments, else the kernel interface of an af_packet/af_xdp/tap port
 * (iface=), else the ethdev name (net_null0).  Names are what OpenFlow's
 * port descriptions, sluicectl, telemetry and captures show.
 *
 * af_packet ports: the PMD's fanout group id (PID ^ ifindex) may be taken in
 * the network namespace; this component's setsockopt (fanout.c, for the
 * whole process) then has the kernel pick a free one for the port's sockets.
 * Frames other sockets send out of the interface are filtered out.
 *
 * Concurrency: sl_port_open/close on the control thread (the main thread
 * before the workers run); a slot is written only while no worker reads it
 * (worker.h: sl_worker_port_publish).  sl_port_link and the stats readers
 * from the control thread.
 */
#ifndef SL_PORT_H
#define SL_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rte_mempool;

/** Most ports one Sluice process drives (OpenFlow numbers 1..SL_PORTS_MAX), LOCAL aside. */
#define SL_PORTS_MAX 64
/** Slots of a port array: the numbered ports, then LOCAL. */
#define SL_PORT_SLOTS (SL_PORTS_MAX + 1)
/** The slot of LOCAL. */
#define SL_PORT_SLOT_LOCAL SL_PORTS_MAX
/** OpenFlow's number of LOCAL (OFPP_LOCAL; pipeline.h's SL_PORT_LOCAL). */
#define SL_PORT_NO_LOCAL 0xfffffffeu
/** Longest port name (OpenFlow's port name field holds 15 characters). */
#define SL_PORT_NAME_MAX 15
/** Longest devargs string (file paths make them long). */
#define SL_PORT_DEVARGS_MAX 1024

/** Most rx queues of one port (sluice --rx-queues). */
#define SL_RX_QUEUES_MAX 64

/** An open port. */
struct sl_port {
	uint16_t dpdk_id; /* ethdev port id */
	uint32_t of_no;   /* OpenFlow port number: 1..SL_PORTS_MAX or SL_PORT_NO_LOCAL; 0: free */
	char name[SL_PORT_NAME_MAX + 1];   /* user-facing name (see above) */
	char dev_name[64];                 /* ethdev name (e.g. net_pcap0) */
	char devargs[SL_PORT_DEVARGS_MAX]; /* as given to DPDK (name= and ofport= taken out) */
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

/** What a port's arguments ask for: DEVARGS[,name=NAME][,ofport=N]. */
struct sl_port_args {
	char devargs[SL_PORT_DEVARGS_MAX]; /* for DPDK: the arguments without name= and ofport= */
	char name[SL_PORT_NAME_MAX + 1];   /* "" unless name= was given */
	uint32_t of_no;                    /* ofport=N, else 0 (the caller picks) */
};

/**
 * Split a port's arguments: name=NAME and ofport=N are Sluice's, the rest
 * goes to DPDK.  A name is 1..15 characters of A-Z a-z 0-9 _ . - : and not
 * a number (NAME|N must tell them apart) nor "LOCAL".
 *
 * @return 0; -EINVAL with @err naming the bad value.  Any thread.
 */
int sl_port_args_parse(const char *spec, struct sl_port_args *a, char *err, size_t err_size);

/** True when @name is a valid port name (see sl_port_args_parse). */
bool sl_port_name_valid(const char *name);

/**
 * The slot of OpenFlow port @of_no in a port array (of SL_PORT_SLOTS), or -1
 * when no slot can hold it.
 */
static inline int
sl_port_slot(uint32_t of_no)
{
	if (of_no == SL_PORT_NO_LOCAL)
		return SL_PORT_SLOT_LOCAL;
	return of_no >= 1 && of_no <= SL_PORTS_MAX ? (int)of_no - 1 : -1;
}

/** The open port numbered @of_no in @ports (SL_PORT_SLOTS slots), or NULL. */
static inline struct sl_port *
sl_port_get(struct sl_port *ports, uint32_t of_no)
{
	int s = sl_port_slot(of_no);

	return s >= 0 && ports[s].of_no != 0 ? &ports[s] : NULL;
}

/**
 * Find a port by name, by OpenFlow number, or "LOCAL".
 *
 * @return its slot; -ENOENT.  Control thread.
 */
int sl_port_find(const struct sl_port *ports, const char *name_or_no);

/** A port's OpenFlow number as people read it: "3", or "LOCAL".  @return @buf. */
const char *sl_port_no_format(uint32_t of_no, char *buf, size_t size);

/** The ethdev @devargs name if it exists already (not probed by this call): 0 or -ENODEV. */
int sl_port_lookup(const char *devargs, uint16_t *id);

/** Ports open in @ports (SL_PORT_SLOTS slots), LOCAL included. */
unsigned sl_port_count(const struct sl_port *ports);

/**
 * Probe and start a port.
 *
 * @param devargs  DPDK devargs string (sl_port_args.devargs).
 * @param name     Its name, or "" for the default (see above).
 * @param of_no    OpenFlow number to give it.
 * @param mp       Mempool for its rx queues.
 * @param n_rxq    Rx queues (each polled by one worker or the I/O core).
 * @param n_txq    Tx queues (one per worker sending on it).
 * @param port     Out: the port.
 * @param err      Out: message naming the devargs and the failing step.
 * @return 0 or -errno (-EINVAL: the EAL cannot attach it, or a bad
 *         default name).  Control thread, after EAL init.
 */
int sl_port_open(const char *devargs, const char *name, uint32_t of_no, struct rte_mempool *mp,
		 uint16_t n_rxq, uint16_t n_txq, struct sl_port *port, char *err, size_t err_size);

/**
 * Take a started port's link down (net_tap: its kernel interface too, as a
 * bridge's LOCAL port starts).  Control thread.
 */
void sl_port_link_down(const struct sl_port *port);

/** Stop and close a port, removing a probed vdev; its slot becomes free.  Control thread. */
void sl_port_close(struct sl_port *port);

/** Current link state (non-blocking).  Control thread. */
void sl_port_link(const struct sl_port *port, struct sl_port_link *link);

/** Device counters.  Control thread. */
void sl_port_hw_stats(const struct sl_port *port, struct sl_port_hw_stats *st);

#endif /* SL_PORT_H */
