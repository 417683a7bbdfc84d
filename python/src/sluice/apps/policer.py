"""An OpenFlow 1.3 port policer for os-ken: a meter in front of the switch's own learning.

On connect it installs meter ``METER_ID`` (packets per second, one drop band of ``RATE``
with a burst of ``BURST`` packets), then ``in_port=1 -> meter, NORMAL`` and, below it,
``NORMAL`` for everything else: the datapath learns MACs and forwards by itself (no
packet-ins), and traffic into port 1 is rate-limited, as a Faucet-style controller limits a
port with a meter.  Start it with ``python -m sluice.apps.run policer``.
"""

from __future__ import annotations

from typing import Any

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER
from os_ken.ofproto import ofproto_v1_3

from sluice.osken import set_ev_cls

METER_ID = 1
#: Drop band rate, packets per second, and its burst in packets.
RATE = 5
BURST = 5


class Policer13(app_manager.OSKenApp):  # type: ignore[misc]
    """Port 1 -> meter -> NORMAL; anything else -> NORMAL."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev: Any) -> None:
        dp = ev.msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        band = parser.OFPMeterBandDrop(rate=RATE, burst_size=BURST)
        dp.send_msg(parser.OFPMeterMod(datapath=dp, command=ofp.OFPMC_ADD,
                                       flags=ofp.OFPMF_PKTPS | ofp.OFPMF_BURST | ofp.OFPMF_STATS,
                                       meter_id=METER_ID, bands=[band]))
        normal = parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS,
                                              [parser.OFPActionOutput(ofp.OFPP_NORMAL)])
        policed = [parser.OFPInstructionMeter(METER_ID, ofp.OFPIT_METER), normal]
        for prio, match, inst in ((10, parser.OFPMatch(in_port=1), policed),
                                  (1, parser.OFPMatch(), [normal])):
            dp.send_msg(parser.OFPFlowMod(datapath=dp, priority=prio, match=match,
                                          instructions=inst, buffer_id=ofp.OFP_NO_BUFFER))
        self.logger.info("datapath %016x: meter %d (%d pkt/s, burst %d) on port 1",
                         dp.id, METER_ID, RATE, BURST)
