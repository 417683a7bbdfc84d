"""The fast forwarding path's experimenter messages (docs/openflow.md 12.7, 12.8):
the Python encoders and the os-ken helpers produce the bytes the C codec's golden
vectors (src/ofp/test_ofp.c, test_ffp_experimenter) pin."""

from __future__ import annotations

import pytest

from sluice import ofp, osken

# The docs' examples, byte for byte (the same hex as src/ofp/test_ofp.c).
LL_SET_HEX = ("04040038000000075 34c554300000002".replace(" ", "")
              + "01010001006400000000000000000000"
              + "00000000000000000001000a80000a02"
              + "86dd000000000000")
FFP_CONFIG_HEX = "040400180000000853 4c554300000003030000 3c000003e8".replace(" ", "")


def test_ll_set_bytes() -> None:
    eth_ipv6 = ofp.oxm(ofp.OFPXMT_ETH_TYPE, bytes.fromhex("86dd"))
    got = ofp.ll_set(1, [eth_ipv6], on=True, priority=100, strict=True, xid=7)
    assert got.hex() == LL_SET_HEX


def test_ll_set_osken_with_ofpmatch() -> None:
    dp = osken.offline_datapath()
    msg = osken.ll_set_msg(dp, 1, dp.ofproto_parser.OFPMatch(eth_type=0x86DD), priority=100)
    assert osken.encode(msg, xid=7).hex() == LL_SET_HEX


def test_ffp_config_bytes() -> None:
    assert ofp.ffp_config(True, auto_pps=1000, auto_min_timeout=60, xid=8).hex() == \
        FFP_CONFIG_HEX
    dp = osken.offline_datapath()
    msg = osken.ffp_config_msg(dp, True, auto_pps=1000, auto_min_timeout=60)
    assert osken.encode(msg, xid=8).hex() == FFP_CONFIG_HEX


@pytest.mark.parametrize("table_id,strict", [(254, True), (255, True), (-1, False)])
def test_ll_set_refuses_bad_tables(table_id: int, strict: bool) -> None:
    with pytest.raises(ValueError):
        ofp.ll_set_data(table_id, [], strict=strict)


def test_ll_set_all_tables_non_strict() -> None:
    data = ofp.ll_set_data(255, [], strict=False, on=False)
    assert data[:4] == bytes([255, 0, 0, 0])
