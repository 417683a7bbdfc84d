"""An OpenFlow 1.3 L2 learning switch for os-ken (modelled on Ryu's simple_switch_13).

On connect it installs a table-miss entry (priority 0, match all,
output:CONTROLLER with max_len NO_BUFFER, so packet_ins carry whole frames).
On each packet_in it learns src MAC -> in_port per datapath, then:
- destination known: installs ``in_port, eth_dst -> output:PORT`` (priority
  ``FLOW_PRIORITY``, ``IDLE_TIMEOUT`` seconds) and packet_outs the frame there;
- destination unknown: packet_outs the frame to FLOOD, installs nothing.
The flow_mod is sent before the packet_out, so once the packet_out's frame has
left the switch, later frames of that flow take the flow entry.  LLDP frames
are ignored.  Start it with ``python -m sluice.apps.run learning_switch``.
"""

from __future__ import annotations

from typing import Any

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER
from os_ken.lib.packet import ether_types, ethernet, packet
from os_ken.ofproto import ofproto_v1_3

from sluice.osken import set_ev_cls

#: Priority of learned flows (above the table-miss entry's 0).
FLOW_PRIORITY = 1
#: Idle timeout of learned flows, seconds.
IDLE_TIMEOUT = 60


class LearningSwitch13(app_manager.OSKenApp):  # type: ignore[misc]
    """MAC learning switch: one table (0), flows on in_port + eth_dst."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: datapath id -> {MAC -> port}
        self.mac_to_port: dict[int, dict[str, int]] = {}

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev: Any) -> None:
        """Install the table-miss entry: everything unmatched goes to the controller."""
        dp = ev.msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        actions = [parser.OFPActionOutput(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)]
        self.add_flow(dp, 0, parser.OFPMatch(), actions, idle_timeout=0)
        self.logger.info("datapath %016x connected", dp.id)

    def add_flow(self, dp: Any, priority: int, match: Any, actions: list[Any],
                 idle_timeout: int = IDLE_TIMEOUT) -> None:
        """flow_mod ADD to table 0 with one apply_actions instruction."""
        ofp, parser = dp.ofproto, dp.ofproto_parser
        inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)]
        dp.send_msg(parser.OFPFlowMod(datapath=dp, priority=priority, match=match,
                                      instructions=inst, idle_timeout=idle_timeout,
                                      buffer_id=ofp.OFP_NO_BUFFER))

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev: Any) -> None:
        """Learn, then forward (flow + packet_out) or flood (packet_out only)."""
        msg = ev.msg
        dp = msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        in_port = msg.match["in_port"]
        eth = packet.Packet(msg.data).get_protocol(ethernet.ethernet)
        if eth is None or eth.ethertype == ether_types.ETH_TYPE_LLDP:
            return
        table = self.mac_to_port.setdefault(dp.id, {})
        table[eth.src] = in_port
        out_port = table.get(eth.dst, ofp.OFPP_FLOOD)
        if out_port == in_port:
            return  # never send a frame back where it came from
        actions = [parser.OFPActionOutput(out_port)]
        if out_port != ofp.OFPP_FLOOD:
            self.add_flow(dp, FLOW_PRIORITY, parser.OFPMatch(in_port=in_port, eth_dst=eth.dst),
                          actions)
        # Sluice does not buffer: buffer_id is NO_BUFFER and the frame travels back.
        data = msg.data if msg.buffer_id == ofp.OFP_NO_BUFFER else None
        dp.send_msg(parser.OFPPacketOut(datapath=dp, buffer_id=msg.buffer_id, in_port=in_port,
                                        actions=actions, data=data))
