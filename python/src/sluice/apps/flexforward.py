"""FlexForward controller app for os-ken: discover the fabric, program it, switch modes.

Start: ``SLUICE_FF_CONFIG=cfg.json python -m sluice.apps.run flexforward``.  The JSON
config says how many switches and links to expect, where the hosts are attached, the
initial mode and the control socket::

    {"switches": 8, "links": 12, "mode": "hypercube", "drain_ms": 50,
     "control": "/tmp/ff.sock",
     "hosts": [{"name": "A", "mac": "02:..", "ip": "10.0.0.1", "dpid": 1, "port": 4}, ...]}

What it does:
1. Discovery: on connect it installs ``dl_type=0x88cc -> CONTROLLER``, reads the port
   list and sends an LLDP frame (chassis ``dpid:HEX``, port id = port number) out of
   every port, every 0.5 s until the expected links are all seen in packet-ins.
2. Plan (:mod:`sluice.flexforward`): hypercube addresses, pairwise co-prime KeyFlow
   keys, CRT route IDs; static rules (OpenFlow shortest paths on real MACs, egress
   rules restoring the real MAC of tableless packets) and the ingress rules of the
   initial mode; every switch gets its engine(s) with SL_OFPX_SET_FWD_MODE.
3. Control socket (unix stream, one JSON line per request): ``{"cmd": "status"}``;
   ``{"cmd": "mode", "mode": "keyflow", "naive": false}`` switches the whole network:
   two-phase by default (all switches accept old and new engines; edges encode for the
   new one; after ``drain_ms`` the old engine is disabled), all at once with
   ``naive`` (the seed paper's behaviour, for comparison).  The reply comes after the
   last barrier reply.
"""

from __future__ import annotations

import json
import os
import socket
import time
from typing import Any

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER
from os_ken.lib import hub
from os_ken.lib.packet import ether_types, ethernet, lldp, packet
from os_ken.ofproto import ofproto_v1_3

from sluice import flexforward as ff
from sluice.osken import set_ev_cls

LLDP_PERIOD = 0.5
BARRIER_TIMEOUT = 10.0


class FlexForward(app_manager.OSKenApp):  # type: ignore[misc]
    """Discovers a hypercube fabric and drives its forwarding modes."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        path = os.environ.get("SLUICE_FF_CONFIG")
        if not path:
            raise RuntimeError("flexforward: set SLUICE_FF_CONFIG to the config file")
        with open(path) as f:
            self.cfg: dict[str, Any] = json.load(f)
        self.dps: dict[int, Any] = {}
        self.ports: dict[int, list[int]] = {}
        self.topo = ff.Topology()
        self.topo.hosts = [ff.Host(**h) for h in self.cfg.get("hosts", [])]
        self.plan: ff.Plan | None = None
        self.mode = str(self.cfg.get("mode", "openflow"))
        self.ready = False
        self.errors: list[str] = []
        self.barriers: dict[int, Any] = {}
        self.switchovers: list[dict[str, Any]] = []
        self.threads = [hub.spawn(self._lldp_loop), hub.spawn(self._control_server)]

    # -- OpenFlow events ---------------------------------------------------

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def _features(self, ev: Any) -> None:
        dp = ev.msg.datapath
        parser = dp.ofproto_parser
        self.dps[dp.id] = dp
        self._flow(dp, ff.PRIO_LLDP, parser.OFPMatch(eth_type=ether_types.ETH_TYPE_LLDP),
                   [parser.OFPActionOutput(dp.ofproto.OFPP_CONTROLLER,
                                           dp.ofproto.OFPCML_NO_BUFFER)])
        dp.send_msg(parser.OFPPortDescStatsRequest(dp, 0))

    @set_ev_cls(ofp_event.EventOFPPortDescStatsReply, MAIN_DISPATCHER)
    def _port_desc(self, ev: Any) -> None:
        dp = ev.msg.datapath
        ports = sorted(p.port_no for p in ev.msg.body if p.port_no < dp.ofproto.OFPP_MAX)
        self.ports[dp.id] = ports
        self.topo.n_ports[dp.id] = len(ports)
        self._send_lldp(dp)

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def _packet_in(self, ev: Any) -> None:
        msg = ev.msg
        pkt = packet.Packet(bytes(msg.data))
        lp = pkt.get_protocol(lldp.lldp)
        if lp is None:
            return
        try:
            chassis = lp.tlvs[0].chassis_id.decode()
            src_dpid = int(chassis.split(":", 1)[1], 16)
            src_port = int(lp.tlvs[1].port_id.decode())
        except (AttributeError, IndexError, ValueError):
            return
        dst_dpid, dst_port = msg.datapath.id, msg.match["in_port"]
        if self.topo.links.get(src_dpid, {}).get(src_port) != (dst_dpid, dst_port):
            self.topo.add_link(src_dpid, src_port, dst_dpid, dst_port)
            self.logger.info("link %x:%d <-> %x:%d (%d links)", src_dpid, src_port, dst_dpid,
                             dst_port, self.topo.n_links())
        self._maybe_ready()

    @set_ev_cls(ofp_event.EventOFPBarrierReply, MAIN_DISPATCHER)
    def _barrier_reply(self, ev: Any) -> None:
        e = self.barriers.pop(ev.msg.xid, None)
        if e is not None:
            e.set()

    @set_ev_cls(ofp_event.EventOFPErrorMsg, MAIN_DISPATCHER)
    def _error(self, ev: Any) -> None:
        m = ev.msg
        code = int(m.exp_type) if m.type == 0xFFFF else int(m.code)
        name = ff.FWD_ERRORS.get(code, "") if m.type == 0xFFFF else ""
        text = f"switch {m.datapath.id:x}: error type {m.type:#x} code {code:#x} {name}"
        self.errors.append(text)
        self.logger.error(text)

    # -- helpers -------------------------------------------------------------

    def _flow(self, dp: Any, prio: int, match: Any, actions: list[Any]) -> None:
        parser = dp.ofproto_parser
        inst = [parser.OFPInstructionActions(dp.ofproto.OFPIT_APPLY_ACTIONS, actions)]
        dp.send_msg(parser.OFPFlowMod(dp, priority=prio, match=match, instructions=inst))

    def _rule(self, r: ff.Rule) -> None:
        dp = self.dps[r.dpid]
        parser = dp.ofproto_parser
        acts: list[Any] = []
        for kind, v in r.actions:
            if kind == "set_dst":
                acts.append(parser.OFPActionSetField(eth_dst=v))
            else:
                acts.append(parser.OFPActionOutput(int(str(v))))
        self._flow(dp, r.priority, parser.OFPMatch(**dict(r.match)), acts)

    def _set_engines(self, dpid: int, modes: frozenset[str]) -> None:
        assert self.plan is not None
        dp = self.dps[dpid]
        body = ff.fwd_mode_body(self.plan.engines(modes, dpid))
        dp.send_msg(dp.ofproto_parser.OFPExperimenter(
            dp, experimenter=ff.SL_EXPERIMENTER_ID, exp_type=ff.SL_OFPX_SET_FWD_MODE,
            data=body))

    def _barrier_all(self, dpids: list[int] | None = None) -> None:
        events = []
        for dpid in dpids if dpids is not None else sorted(self.dps):
            dp = self.dps[dpid]
            req = dp.ofproto_parser.OFPBarrierRequest(dp)
            dp.set_xid(req)
            e = hub.Event()
            self.barriers[req.xid] = e
            dp.send_msg(req)
            events.append(e)
        for e in events:
            if not e.wait(timeout=BARRIER_TIMEOUT):
                raise TimeoutError("no barrier reply")

    def _send_lldp(self, dp: Any) -> None:
        parser = dp.ofproto_parser
        for port in self.ports.get(dp.id, []):
            pkt = packet.Packet()
            pkt.add_protocol(ethernet.ethernet(dst=lldp.LLDP_MAC_NEAREST_BRIDGE,
                                               src="02:00:00:00:00:01",
                                               ethertype=ether_types.ETH_TYPE_LLDP))
            tlvs = [lldp.ChassisID(subtype=lldp.ChassisID.SUB_LOCALLY_ASSIGNED,
                                   chassis_id=f"dpid:{dp.id:016x}".encode()),
                    lldp.PortID(subtype=lldp.PortID.SUB_PORT_COMPONENT,
                                port_id=str(port).encode()),
                    lldp.TTL(ttl=120), lldp.End()]
            pkt.add_protocol(lldp.lldp(tlvs))
            pkt.serialize()
            dp.send_msg(parser.OFPPacketOut(
                datapath=dp, buffer_id=dp.ofproto.OFP_NO_BUFFER,
                in_port=dp.ofproto.OFPP_CONTROLLER,
                actions=[parser.OFPActionOutput(port)], data=pkt.data))

    def _lldp_loop(self) -> None:
        while True:
            hub.sleep(LLDP_PERIOD)
            if self.ready:
                continue
            for dp in list(self.dps.values()):
                self._send_lldp(dp)

    def _maybe_ready(self) -> None:
        if self.ready or self.plan is not None:
            return
        if len(self.dps) < int(self.cfg["switches"]) or \
                self.topo.n_links() < int(self.cfg["links"]) or \
                len(self.topo.n_ports) < int(self.cfg["switches"]):
            return
        try:
            self.plan = ff.make_plan(self.topo)
        except ValueError as e:
            self.errors.append(f"plan: {e}")
            self.logger.error("plan: %s", e)
            return
        hub.spawn(self._program)

    def _program(self) -> None:
        assert self.plan is not None
        t0 = time.monotonic()
        for r in self.plan.static_rules() + self.plan.ingress_rules(self.mode):
            self._rule(r)
        for dpid in sorted(self.dps):
            self._set_engines(dpid, frozenset({self.mode}))
        self._barrier_all()
        self.ready = True
        self.logger.info("fabric ready in mode %s (%.0f ms): addresses %s keys %s", self.mode,
                         (time.monotonic() - t0) * 1e3, self.plan.addr, self.plan.keys)

    def switch_mode(self, new: str, naive: bool = False) -> dict[str, Any]:
        """Change every switch to @new (see the module docstring); returns timings."""
        assert self.plan is not None
        if new not in ff.MODES:
            raise ValueError(f"unknown mode {new}")
        old, t0 = self.mode, time.monotonic()
        edges = sorted({h.dpid for h in self.topo.hosts})
        steps: list[tuple[str, float]] = []
        if naive:
            for dpid in sorted(self.dps):
                self._set_engines(dpid, frozenset({new}))
            for r in self.plan.ingress_rules(new):
                self._rule(r)
            self._barrier_all()
            steps.append(("all", time.monotonic() - t0))
        else:
            for step, modes in ff.switchover_plan(old, new):
                if step == "engines":
                    for dpid in sorted(self.dps):
                        self._set_engines(dpid, modes)
                    self._barrier_all()
                elif step == "ingress":
                    for r in self.plan.ingress_rules(new):
                        self._rule(r)
                    self._barrier_all(edges)
                else:
                    hub.sleep(float(self.cfg.get("drain_ms", 50)) / 1000)
                steps.append((step, time.monotonic() - t0))
        self.mode = new
        rec = {"from": old, "to": new, "naive": naive, "steps": steps,
               "ms": (time.monotonic() - t0) * 1e3}
        self.switchovers.append(rec)
        self.logger.info("mode %s -> %s in %.1f ms%s", old, new, rec["ms"],
                         " (naive)" if naive else "")
        return rec

    # -- control socket ---------------------------------------------------------

    def _control_server(self) -> None:
        path = str(self.cfg["control"])
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(4)
        while True:
            conn, _ = srv.accept()
            hub.spawn(self._serve, conn)

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            f = conn.makefile("rw")
            for line in f:
                try:
                    req = json.loads(line)
                    if req.get("cmd") == "status":
                        rep: dict[str, Any] = {
                            "ready": self.ready, "mode": self.mode, "errors": self.errors,
                            "switches": len(self.dps), "links": self.topo.n_links(),
                            "addresses": {f"{k:x}": v for k, v in
                                          (self.plan.addr.items() if self.plan else [])},
                            "keys": {f"{k:x}": v for k, v in
                                     (self.plan.keys.items() if self.plan else [])}}
                    elif req.get("cmd") == "mode":
                        if not self.ready:
                            raise RuntimeError("fabric not ready")
                        rep = {"ok": True, **self.switch_mode(str(req["mode"]),
                                                              bool(req.get("naive")))}
                    else:
                        rep = {"error": f"unknown command {req.get('cmd')!r}"}
                except Exception as e:  # noqa: BLE001 - reported to the client
                    rep = {"error": str(e)}
                f.write(json.dumps(rep) + "\n")
                f.flush()
