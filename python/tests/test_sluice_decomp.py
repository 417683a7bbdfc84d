"""sluice.decomp: seed 001's test cases and its analysis procedure (no switch needed)."""

from __future__ import annotations

import re

import pytest

from sluice import decomp


def test_pipeline_costs_are_the_seeds() -> None:
    """Steps: analyse Pipelines 1-3 (TC4-TC6).  Verify: rows x match fields per table and the
    totals are the seed's 200 / 54 / 53, and the longest chains are 1 / 2 / 3 tables."""
    p1, p2, p3 = (decomp.analyse(decomp.flows(c)) for c in ("tc4", "tc5", "tc6"))
    assert [(t.rows, len(t.fields), t.cost) for t in p1.tables] == [(25, 8, 200)]
    assert [(t.rows, len(t.fields), t.cost) for t in p2.tables] == [(7, 6, 42), (6, 2, 12)]
    assert [(t.rows, len(t.fields), t.cost) for t in p3.tables] == [
        (3, 3, 9), (3, 4, 12), (5, 4, 20), (6, 2, 12)]
    assert (p1.total, p2.total, p3.total) == (200, 54, 53)
    assert (p1.longest_chain, p2.longest_chain, p3.longest_chain) == (1, 2, 3)


def test_undeclared_tables_count_the_fields_used() -> None:
    """Steps: a rule set without declarations.  Verify: columns are the union of the matched
    fields, tp_dst becomes tcp_dst/udp_dst, and `tcp` implies dl_type and nw_proto."""
    a = decomp.analyse(["table=0,priority=5,tcp,tp_dst=80 actions=goto_table:2",
                        "table=0,priority=5,udp,nw_dst=10.0.0.0/8,tp_dst=53 actions=drop",
                        "table=2,dl_vlan=3 actions=output:1", "# comment", ""])
    assert a.tables[0].fields == ["dl_type", "nw_dst", "nw_proto", "tcp_dst", "udp_dst"]
    assert not a.tables[0].declared
    assert a.tables[0].cost == 2 * 5 and a.tables[1].cost == 1
    assert a.longest_chain == 2


@pytest.mark.parametrize("n", [1, 2, 4, 8, 64, 254])
def test_goto_chain_length(n: int) -> None:
    """Verify: TC3 with N tables has L = N and N tables."""
    a = decomp.analyse(decomp.flows(f"tc3_{n}"))
    assert a.longest_chain == n and len(a.tables) == n
    with pytest.raises(ValueError):
        decomp.flows("tc3_255")


def test_verdict() -> None:
    """Verify: the static check says L < N is safe and L >= N is not."""
    p3 = decomp.analyse(decomp.flows("tc6"))
    assert "< N = 4" in p3.verdict(4)
    assert ">= N = 3" in p3.verdict(3) and "--chain-warn 3" in p3.verdict(3)
    assert "no chain length" in p3.verdict(None)


def test_tc2_depth_and_side_stream() -> None:
    """Verify: TC2 has D unique high-priority MACs plus two forwarding rows; the main stream's
    destination is none of them; the side stream is 1 Mb/s and cycles through all D."""
    for case, depth in (("tc2_1k", 1024), ("tc2_32k", 32768)):
        lines = decomp.flows(case)
        macs = {re.search(r"dl_dst=([0-9a-f:]+)", ln).group(1)  # type: ignore[union-attr]
                for ln in lines if "priority=200" in ln}
        assert len(macs) == depth and len(lines) == depth + 2
        main, side = decomp.streams(case, 1.0, 128)
        assert "eth_dst=02:00:00:00:00:02" in main and "02:00:00:00:00:02" not in macs
        assert "mbps=1," in side and f"eth_dst={decomp.tc2_mac(0)}+{depth}" in side
        assert decomp.tc2_mac(depth - 1) in macs


def test_tc456_streams_cover_every_row() -> None:
    """Verify: 24 forwarding streams, one per (VLAN, known/unknown MAC, service) row of
    Pipeline 1, plus three expected-dropped ones; the rates add up to the asked rate; 64-byte
    frames stay 64 bytes (sluice-gen's signature covers the TCP header after the ports)."""
    st = decomp.streams("tc4", 2.5, 64)
    assert len(st) == 27 and sum("drop=1" in s for s in st) == 3
    rows = {(re.search(r"vlan=(\d)", s).group(1),  # type: ignore[union-attr]
             re.search(r"eth_dst=([0-9a-f:]+)", s).group(1),  # type: ignore[union-attr]
             re.search(r"dport=(\d+)", s).group(1))  # type: ignore[union-attr]
            for s in st if "drop=1" not in s}
    assert len(rows) == 24
    assert abs(sum(float(re.search(r"gbps=([\d.e-]+)", s).group(1))  # type: ignore[union-attr]
                   for s in st) - 2.5) < 1e-4
    assert all("size=64" in s for s in st)


def test_ovs_lines_have_no_declarations() -> None:
    lines = decomp.strip_declarations(decomp.flows("tc6"))
    assert not any("kind=" in ln for ln in lines) and len(lines) == 17


def test_cli(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    """Steps: python -m sluice.decomp on Pipeline 3's flow file, with and without N; on a
    missing file.  Verify: the cost table and the verdict; exit 2 naming the file."""
    import pathlib

    assert isinstance(tmp_path, pathlib.Path)
    f = tmp_path / "p3.flows"
    f.write_text("\n".join(decomp.flows("tc6")) + "\n")
    assert decomp.main([str(f), "--n", "3"]) == 0
    out = capsys.readouterr().out
    assert "total cost 53" in out and "| 2 | 5 | 4 (" in out and "L = 3 >= N = 3" in out
    assert decomp.main([str(f)]) == 0
    assert "give --n N" in capsys.readouterr().out
    assert decomp.main([str(tmp_path / "none.flows")]) == 2
    assert "none.flows" in capsys.readouterr().out
