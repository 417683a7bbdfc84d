#!/usr/bin/env bash
# The main job: build Sluice and run it on a built-in example, no NIC, no controller.
# Generated traffic (a pcap this script writes) enters port 1 (net_pcap, replayed in a
# loop) and crosses the seed-000 three-stage pipeline (Ethernet mask table -> ACL mask
# table -> FIB on an LPM table); forwarded packets leave through port 2 (net_null).
# Per-second rates, then final per-port, per-table and per-drop-reason counters.
#   SL_DEMO_SECONDS=N  run time (default 10)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
out="$root/demo-out"
mkdir -p "$out"
python3 tools/sluice_traffic.py rules three-stage "$out/three-stage.flows"
python3 tools/sluice_traffic.py pcap three-stage "$out/traffic.pcap" --flows 10000 --mix demo
echo
echo "== demo: $(grep -vc '^#\|^table=[0-9]*,kind' "$out/three-stage.flows") flows in 3 tables; traffic: $out/traffic.pcap"
echo "   (10,000 flows, plus frames the switch must drop: ARP with no rule, TTL 1, runts)"
exec build/app/sluice \
	--port "net_pcap0,rx_pcap=$out/traffic.pcap,infinite_rx=1" \
	--port "net_null0,no-rx=1" \
	--flows "$out/three-stage.flows" \
	--duration "${SL_DEMO_SECONDS:-10}" --json "$out/counters.json"
