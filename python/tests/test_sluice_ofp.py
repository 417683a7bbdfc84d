"""sluice.ofp's Sluice experimenter encoders, byte for byte against the C codec.

Golden bytes: docs/openflow-experimenter.md's examples (checked by src/ofp/test_ofp.c),
fuzz/corpus/table_declare_mask, and data/table_declare_golden.txt, written by
sl_ofp_table_declare_encode itself (data/golden_table_declare.c regenerates it).
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from sluice import ofp
from sluice.ofp import TableDecl, TableKind

DATA = Path(__file__).parent / "data"

DOCS_LPM = bytes.fromhex(
    "04 04 00 3c 00 00 00 10 53 4c 55 43 00 00 00 01"
    "02 02 00 00 00 00 10 00 66 69 62 00 00 00 00 00"
    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
    "00 00 00 00 00 00 00 00 80 00 18 04")
# fuzz/corpus/table_declare_mask (docs: "a mask table with a raw field").
DOCS_MASK = bytes.fromhex(
    "0404004c0000025b534c554300000001040300000000000061636c00000000000000000000000000"
    "000000000000000000000000000000008000160480001c02ffff000a534c5543020c0060")
ROUNDTRIP_FIELDS = ["in_port", "ipv6_label", "raw(l4,96,12)", "nw_ttl"]


def golden() -> list[tuple[str, bytes]]:
    out = []
    for line in (DATA / "table_declare_golden.txt").read_text().splitlines():
        label, _, hexbytes = line.partition(" ")
        out.append((label, bytes.fromhex(hexbytes)))
    return out


def encode_like_c(label: str) -> bytes:
    """What golden_table_declare.c encoded under @label, with the Python encoder."""
    kind, _, arg = label.partition(":")
    if kind == "field":
        return ofp.table_declare(7, "exact", [arg], 100, arg, xid=1)
    if kind == "roundtrip":
        return ofp.table_declare(3, arg, ROUNDTRIP_FIELDS, 0xFFFFFFFE,
                                 "0123456789012345678901234567890", xid=0xDEADBEEF)
    if kind == "raw":
        base, off, bits = (int(x) for x in arg.split(","))
        name = ["pkt", "l3", "l4"][base]
        return ofp.table_declare(253, TableKind.MASK, [f"raw({name},{off},{bits})"])
    assert label == "empty"
    return ofp.table_declare(0, TableKind.DIRECT)


@pytest.mark.parametrize(("label", "want"), golden(), ids=[g[0] for g in golden()])
def test_table_declare_matches_c_encoder(label: str, want: bytes) -> None:
    assert encode_like_c(label).hex() == want.hex()


def test_golden_covers_every_field() -> None:
    labels = {label.partition(":")[2] for label, _ in golden() if label.startswith("field:")}
    assert labels == set(ofp.FIELDS) | {"nw_ttl"}


def test_docs_examples() -> None:
    assert ofp.table_declare(2, "lpm", ["nw_dst"], 4096, "fib", xid=0x10) == DOCS_LPM
    assert ofp.table_declare(4, "mask", ["nw_src", "tcp_dst", "raw(l4,96,12)"], name="acl",
                             xid=0x25B) == DOCS_MASK
    # The os-ken snippet of the doc builds the same data.
    data = struct.pack("!BBxxI32s", 2, 2, 4096, b"fib") + struct.pack("!I", 0x80001804)
    assert ofp.table_declare_data(2, TableKind.LPM, ["nw_dst"], 4096, "fib") == data


def test_fuzz_corpus_file_when_present() -> None:
    corpus = Path(__file__).resolve().parents[2] / "fuzz" / "corpus" / "table_declare_mask"
    if not corpus.exists():
        pytest.skip("not in a Sluice source tree")
    assert corpus.read_bytes() == DOCS_MASK


def test_experimenter_oxm_docs_examples() -> None:
    assert ofp.oxm_nw_ttl(64) == bytes.fromhex("ffff0205534c554340")
    assert ofp.oxm_id("nw_ttl") == bytes.fromhex("ffff0205534c5543")
    # Value bits outside the mask are cleared, as the switch reads them back.
    assert ofp.oxm_raw("l4", 0, 16, 0x1234, 0xFF00) == bytes.fromhex(
        "ffff010c534c5543021000001200ff00")
    assert ofp.oxm_id("raw(l4,0,16)") == bytes.fromhex("ffff000a534c554302100000")
    assert ofp.action_set_field(ofp.oxm_raw(ofp.RAW_BASE_L3, 8, 8, 5)) == bytes.fromhex(
        "00 19 00 18 ff ff 00 09 53 4c 55 43 01 08 00 08 05 00 00 00 00 00 00 00")


def test_oxm_raw_value_sizes_and_errors() -> None:
    assert ofp.oxm_raw("pkt", 0, 1, 1)[-1:] == b"\x01"
    assert len(ofp.oxm_raw("l3", 0, 128, b"\xff" * 16)) == 12 + 16
    assert ofp.oxm_raw("l4", 3, 12, b"\x0a\xbc") == ofp.oxm_raw(2, 3, 12, 0xABC)
    with pytest.raises(ValueError):
        ofp.oxm_raw("l4", 0, 12, 0x1000)  # above 12 bits
    with pytest.raises(ValueError):
        ofp.oxm_raw("l5", 0, 8, 0)
    with pytest.raises(ValueError):
        ofp.oxm_raw("l4", 0, 129, 0)
    with pytest.raises(ValueError):
        ofp.oxm_raw("l4", 70000, 8, 0)
    with pytest.raises(ValueError):
        ofp.oxm_raw("l4", 0, 16, b"\x01")
    with pytest.raises(ValueError):
        ofp.oxm_nw_ttl(256)


def test_oxm_ids_aliases_and_bytes() -> None:
    assert ofp.oxm_id("ipv4_dst") == ofp.oxm_id("nw_dst") == b"\x80\x00\x18\x04"
    assert ofp.oxm_id("ip_ttl") == ofp.oxm_id("nw_ttl")
    assert ofp.oxm_id("eth_dst") == ofp.oxm_id("dl_dst")
    assert ofp.oxm_id(" raw( l3 , 8 , 8 ) ") == ofp.oxm_id("raw(l3,8,8)")
    assert ofp.oxm_id(b"\x80\x00\x18\x04") == b"\x80\x00\x18\x04"
    for bad in ("tunnel_id", "raw(l4,0)", "raw(l9,0,8)", "raw(l4,0,0)", "tp_dst"):
        with pytest.raises(ValueError):
            ofp.oxm_id(bad)


def test_oxm_id_names_round_trip() -> None:
    for name in [*ofp.FIELDS, "nw_ttl", "raw(pkt,96,16)", "raw(l3,65535,128)"]:
        data = ofp.oxm_id(name)
        assert ofp.oxm_id_name(data) == (name, len(data))
    with pytest.raises(ValueError):
        ofp.oxm_id_name(b"\x80\x00\x98\x08")  # tunnel_id: no Sluice field
    with pytest.raises(ValueError):
        ofp.oxm_id_name(b"\xff\xff\x00\x0a\x53\x4c\x55\x43\x02")  # cut short


def test_table_kind_parse() -> None:
    assert TableKind.parse("ternary") is TableKind.MASK
    assert TableKind.parse("LPM") is TableKind.LPM
    assert TableKind.parse(0) is TableKind.DIRECT
    assert TableKind.MASK.flow_name == "mask"
    with pytest.raises(ValueError):
        TableKind.parse("hash")
    with pytest.raises(ValueError):
        TableKind.parse(4)


@pytest.mark.parametrize(("args", "why"), [
    ((254, "exact"), "table id"),
    ((0, "exact", (), 0, "x" * 32), "name"),
    ((0, "exact", (), 0, "a\0b"), "name"),
    ((0, "exact", (), 1 << 32), "max_entries"),
    ((0, "exact", ["nw_dst"] * 25), "fields"),
])
def test_table_declare_refuses_what_the_codec_refuses(args: tuple, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        ofp.table_declare_data(*args)


def test_name_of_31_bytes_fits() -> None:
    msg = ofp.table_declare(1, "exact", name="n" * 31)
    assert msg[24:56] == b"n" * 31 + b"\0"


def test_table_decl_parse_encode_decode() -> None:
    line = "table=4,kind=mask,fields=nw_src+tcp_dst+raw(l4,96,12),name=acl"
    d = TableDecl.parse(line)
    assert d == TableDecl(4, TableKind.MASK, ("nw_src", "tcp_dst", "raw(l4,96,12)"), 0, "acl")
    assert d.encode(0x25B) == DOCS_MASK
    assert d.flow_syntax() == line
    assert TableDecl.decode(DOCS_MASK) == d
    lpm = TableDecl.parse("table=2,kind=lpm,fields=nw_dst,size=4096,name=fib")
    assert lpm.encode(0x10) == DOCS_LPM
    assert lpm.flow_syntax() == "table=2,kind=lpm,fields=nw_dst,size=4096,name=fib"
    assert TableDecl.parse("table=0,kind=direct").data() == ofp.table_declare_data(0, 0)
    # Fields given as encoded ids print as names.
    assert TableDecl(1, TableKind.EXACT, (b"\x80\x00\x06\x06",)).flow_syntax() == \
        "table=1,kind=exact,fields=dl_dst"


@pytest.mark.parametrize("line", [
    "table=1,fields=nw_dst",  # no kind
    "table=1,kind=lpm,kind=mask",
    "table=1,kind=lpm,color=red",
    "table=1,kind=lpm,fields=nw_dst+bogus",
    "table=300,kind=lpm",
    "table=1,kind=lpm,nw_dst",
])
def test_table_decl_parse_errors(line: str) -> None:
    with pytest.raises(ValueError):
        TableDecl.parse(line)


def test_table_decl_decode_refuses_other_messages() -> None:
    with pytest.raises(ValueError):
        TableDecl.decode(ofp.barrier_request())
    other = ofp.experimenter(0x2320, 1, b"\0" * 40)
    with pytest.raises(ValueError):
        TableDecl.decode(other)


def test_error_decoding() -> None:
    # The switch's reply to a refused declaration: its first 64 bytes as data.
    refused = ofp.table_declare(4, "lpm", ["nw_dst", "tcp_dst"], xid=6)
    raw = ofp.message(ofp.OFPT_ERROR, struct.pack("!HH", 8, 1) + refused[:64], xid=6)
    e = ofp.parse_error(ofp.Msg(4, ofp.OFPT_ERROR, 6, raw))
    assert (e.type, e.code, e.experimenter) == (8, 1, None)
    assert e.name == "OFPET_TABLE_MOD_FAILED/OFPTMFC_BAD_CONFIG"
    assert e.declared_table == 4
    assert e.data == refused[:64]
    # Not a declaration: no table.
    fm = ofp.flow_mod([], [ofp.action_output(1)])
    e2 = ofp.parse_error_bytes(ofp.message(ofp.OFPT_ERROR, struct.pack("!HH", 4, 10) + fm))
    assert e2.name == "OFPET_BAD_MATCH/OFPBMC_DUP_FIELD" and e2.declared_table is None
    # Experimenter errors: exp_code, experimenter id, then data.
    exp = ofp.message(ofp.OFPT_ERROR, struct.pack("!HHI", 0xFFFF, 2600, 0x4F4E4600) + fm)
    e3 = ofp.parse_error_bytes(exp)
    assert (e3.type, e3.code, e3.experimenter, e3.data) == (0xFFFF, 2600, 0x4F4E4600, fm)
    assert e3.name == "OFPET_EXPERIMENTER/0x4f4e4600/ONFBIC_DUP_INSTRUCTION"
    assert ofp.error_name(99, 5) == "99/5"
    assert ofp.error_name(1, 99) == "OFPET_BAD_REQUEST/99"
    with pytest.raises(ValueError):
        ofp.parse_error_bytes(ofp.barrier_request())


def test_table_declare_target() -> None:
    assert ofp.table_declare_target(DOCS_LPM) == 2
    assert ofp.table_declare_target(DOCS_LPM[:17]) == 2
    assert ofp.table_declare_target(DOCS_LPM[:16]) is None
    assert ofp.table_declare_target(ofp.experimenter(ofp.SL_EXPERIMENTER_ID, 2, b"\0")) is None


def test_client_poll_returns_whole_messages_without_waiting() -> None:
    """Client.poll: None until a whole message has arrived (a header alone, then half a
    body), then the message; a closed peer raises ConnectionClosed."""
    import socket

    a, b = socket.socketpair()
    a.setblocking(False)
    c = ofp.Client(a)
    msg = ofp.echo_request(b"0123456789", xid=7)
    assert c.poll() is None
    b.sendall(msg[:8])
    assert c.poll() is None
    b.sendall(msg[8:12])
    assert c.poll() is None
    b.sendall(msg[12:])
    m = c.poll()
    assert m is not None and m.type == ofp.OFPT_ECHO_REQUEST and m.xid == 7 and m.raw == msg
    assert c.poll() is None
    b.close()
    with pytest.raises(ofp.ConnectionClosed):
        c.poll()
    a.close()
