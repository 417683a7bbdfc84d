"""sluicectl as an ovs-ofctl user types it: --names, diff-flows, replace-flows.

Against a real Sluice (the ``env`` fixture of test_sluicectl.py: ports net_pcap0 and
net_pcap1, port 1 replaying frames that the startup flow ``priority=10,in_port=1
actions=output:2`` forwards) and, where installed, against ``ovs-ofctl diff-flows`` on the
same switch.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from test_sluicectl import Env, env, flows_of, have_ofctl, sluicectl_bin, wait_rx  # noqa: F401

from sluice import testing

STARTUP = "table=0, priority=10,in_port=1 actions=output:2"


def no_stats(env: Env, *args: str) -> list[str]:  # noqa: F811 (fixture)
    return [ln.strip() for ln in env.ctl.ok("dump-flows", "--no-stats", "--sort", *args)
            .splitlines()]


def write(path: Path, *lines: str) -> str:
    path.write_text("".join(ln + "\n" for ln in lines))
    return str(path)


def test_names(env: Env) -> None:  # noqa: F811 (fixture)
    """--names prints port names in flows and groups; names are read in input either way.

    Steps:
        1. add-flow and add-group naming ports (no --names); dump-flows and dump-groups
           with and without --names, text and JSON; dump-flows out_port=NAME; a flow file
           that names ports.
        2. A name no port has, in add-flow, a filter and a group.
    Verify:
        The flows hold port numbers (plain dump-flows); --names shows net_pcap0/net_pcap1
        in in_port, output and watch_port; the filter selects by the named port; unknown
        names exit 2 naming the name, and nothing is added.
    """
    ctl = env.ctl
    ctl.ok("add-flow", "table=1,priority=7,in_port=net_pcap1 actions=output:net_pcap0")
    ctl.ok("add-group", "group_id=3,type=ff,bucket=watch_port:net_pcap1,output:net_pcap1")
    assert no_stats(env, "table=1") == ["table=1, priority=7,in_port=2 actions=output:1"]
    assert no_stats(env, "--names", "table=1") == [
        "table=1, priority=7,in_port=net_pcap1 actions=output:net_pcap0"]
    assert no_stats(env, "--names", "table=0") == [
        "table=0, priority=10,in_port=net_pcap0 actions=output:net_pcap1"]
    # --no-names (ovs-ofctl's) switches them off again.
    assert no_stats(env, "--names", "--no-names", "table=1") == [
        "table=1, priority=7,in_port=2 actions=output:1"]
    (f,) = ctl.json("--names", "dump-flows", "table=1")["flows"]
    assert (f["match"], f["actions"]) == ("in_port=net_pcap1", "output:net_pcap0")
    assert {x.int("priority") for x in flows_of(ctl, "out_port=net_pcap0")} == {7}
    assert {x.int("priority") for x in flows_of(ctl, "in_port=net_pcap0")} == {10}
    groups = ctl.ok("--names", "dump-groups")
    assert "group_id=3,type=ff,bucket=watch_port:net_pcap1,actions=output:net_pcap1" in groups
    assert "watch_port:2,actions=output:2" in ctl.ok("dump-groups")
    flows = write(env.tmp / "named.flows",
                  "table=2,priority=1,in_port=net_pcap0 actions=output:net_pcap1")
    ctl.ok("add-flows", flows)
    assert no_stats(env, "table=2") == ["table=2, priority=1,in_port=1 actions=output:2"]

    for args, token in ((("add-flow", "in_port=eth9 actions=drop"), "'eth9'"),
                        (("add-flow", "ip actions=output:eth9"), "'eth9'"),
                        (("dump-flows", "out_port=eth9"), "'eth9'"),
                        (("add-group", "group_id=4,type=ff,bucket=watch_port:eth9,output:1"),
                         "watch_port")):
        r = ctl(*args)
        assert r.returncode == 2 and token in r.stderr, (args, r.stderr)
    assert len(flows_of(ctl)) == 3 and "group_id=4" not in ctl.ok("dump-groups")


def test_diff_flows(env: Env) -> None:  # noqa: F811 (fixture)
    """diff-flows between the switch and flow files, ovs-ofctl's -/+ lines and exit codes.

    Steps:
        1. Add flows; save a file equal to the switch (from dump-flows --no-stats).
        2. diff-flows TARGET FILE, FILE TARGET, FILE FILE; a file with one flow changed
           (actions), one changed (cookie), one gone and one new; ovs-ofctl diff-flows
           of the same switch and file.
        3. diff-flows with a file that does not parse, and a source that is neither.
    Verify:
        Equal sources: exit 0, no output.  Different: exit 2, '-' lines for SOURCE1's
        versions and '+' for SOURCE2's, one pair per changed flow, flows only in one
        source on their own; ovs-ofctl reports the same flows; --json gives the lines and
        the count; errors exit 2 and name FILE:LINE or the source.
    """
    ctl = env.ctl
    for fl in ("table=1,cookie=0x10,priority=5,ip actions=output:1",
               "table=1,priority=6,udp,tp_dst=53 actions=output:2",
               "table=3,priority=1 actions=drop"):
        ctl.ok("add-flow", fl)
    same = write(env.tmp / "same.flows", *no_stats(env))
    for a, b in ((env.target, same), (same, env.target), (same, same)):
        r = ctl("diff-flows", a, b)
        assert (r.returncode, r.stdout, r.stderr) == (0, "", ""), (a, b, r)

    changed = write(env.tmp / "changed.flows",
                    STARTUP,
                    "table=1,cookie=0x10,priority=5,ip actions=output:2",   # actions
                    "table=1,cookie=0x11,priority=6,udp,tp_dst=53 actions=output:2",  # cookie
                    "table=2,priority=9,arp actions=drop")                  # new; table 3 gone
    r = ctl("diff-flows", env.target, changed)
    assert r.returncode == 2 and r.stderr == "", r
    # By table, then priority high to low; a changed flow is a -/+ pair.
    assert r.stdout.splitlines() == [
        "-table=1, priority=6,udp,udp_dst=53 actions=output:2",
        "+cookie=0x11, table=1, priority=6,udp,udp_dst=53 actions=output:2",
        "-cookie=0x10, table=1, priority=5,ip actions=output:1",
        "+cookie=0x10, table=1, priority=5,ip actions=output:2",
        "+table=2, priority=9,arp actions=drop",
        "-table=3, priority=1 actions=drop",
    ], r.stdout
    js = ctl("--json", "diff-flows", changed, env.target)
    assert js.returncode == 2
    doc = json.loads(js.stdout)
    assert doc["differences"] == 4 and len(doc["lines"]) == 6
    assert doc["lines"][2] == "-cookie=0x10, table=1, priority=5,ip actions=output:2"
    if have_ofctl():
        theirs = testing.ofctl(env.target, "diff-flows", changed, check=False)
        signs = sorted((ln[0], re.search(r"priority=(\d+)", ln).group(1))  # type: ignore
                       for ln in theirs.splitlines())
        ours = sorted((ln[0], re.search(r"priority=(\d+)", ln).group(1))  # type: ignore
                      for ln in r.stdout.splitlines())
        assert signs == ours, (theirs, r.stdout)

    bad = write(env.tmp / "bad.flows", STARTUP, "priority=1,ip,tp_dst=80 actions=drop")
    r = ctl("diff-flows", env.target, bad)
    assert r.returncode == 2 and f"{bad}:2:" in r.stderr and r.stdout == "", r
    r = ctl("diff-flows", bad, "no such name")
    assert r.returncode == 2 and "'no such name' is neither a file nor a switch" in r.stderr
    r = ctl("diff-flows", bad)
    assert r.returncode == 2 and "missing argument" in r.stderr


def test_replace_flows(env: Env) -> None:  # noqa: F811 (fixture)
    """replace-flows sends only what differs, keeps unchanged flows and their counters.

    Steps:
        1. Wait for the replayed frames (the startup flow counts them); add three flows.
        2. replace-flows FILE (--json): the startup flow unchanged, one flow with new
           actions, one with a new cookie, one new flow, one flow left out.
        3. replace-flows SWITCH FILE with the same file; then with a file the switch
           refuses a line of, and with a file that does not parse.
    Verify:
        Counts added 2, modified 1, deleted 1, unchanged 1 and five messages (a delete,
        a modify, two adds, plus nothing for the unchanged flow); diff-flows then finds
        the switch equal to the file; the startup flow kept n_packets and its duration
        went on; the second run sends nothing.  A refused line exits 1 naming FILE:LINE;
        a syntax error exits 2 and changes nothing.
    """
    ctl = env.ctl
    wait_rx(ctl, 1, len(env.frames))
    (before,) = flows_of(ctl, "table=0")
    assert before.int("n_packets") == len(env.frames)
    for fl in ("table=1,cookie=0x10,priority=5,ip actions=output:1",
               "table=1,priority=6,udp actions=output:2",
               "table=3,priority=1 actions=drop"):
        ctl.ok("add-flow", fl)
    target = write(env.tmp / "target.flows",
                   "# the switch as it should be",
                   STARTUP,
                   "table=1,cookie=0x10,priority=5,ip actions=output:2",
                   "table=1,cookie=0x12,priority=6,udp actions=output:2",
                   "table=2,priority=9,arp actions=output:net_pcap0",
                   "group_id=1,type=all,bucket=output:1")  # not a flow: left alone
    doc = ctl.json("replace-flows", target)
    assert {k: doc[k] for k in ("added", "modified", "deleted", "unchanged")} == \
        {"added": 2, "modified": 1, "deleted": 1, "unchanged": 1}, doc
    assert doc["messages"] == 4 and doc["errors"] == [], doc
    r = ctl("diff-flows", env.target, target)
    assert (r.returncode, r.stdout) == (0, ""), r
    (after,) = flows_of(ctl, "table=0")
    assert after.int("n_packets") == before.int("n_packets")
    assert float(after.fields["duration"]) >= float(before.fields["duration"])
    assert "no groups" in ctl.ok("dump-groups")

    doc = ctl.json("replace-flows", env.target, target)
    assert (doc["messages"], doc["unchanged"]) == (0, 4), doc
    assert ctl.ok("replace-flows", env.target, target) == ""

    # low_latency is a mark of its own (SL_OFPX_LL_SET): set and cleared as the file says.
    ll = write(env.tmp / "ll.flows", STARTUP, "low_latency,priority=50,udp actions=output:2")
    assert ctl.json("replace-flows", ll)["added"] == 1
    assert "low_latency, priority=50,udp actions=output:2" in ctl.ok("dump-flows")
    assert ctl("diff-flows", env.target, ll).returncode == 0
    plain = write(env.tmp / "plain.flows", STARTUP, "priority=50,udp actions=output:2")
    assert ctl.json("replace-flows", plain)["added"] == 1
    assert "low_latency" not in ctl.ok("dump-flows")
    assert ctl("diff-flows", env.target, plain).returncode == 0

    refused = write(env.tmp / "refused.flows", STARTUP,
                    "table=1,priority=4,ip actions=group:77")
    r = ctl("replace-flows", refused)
    assert r.returncode == 1 and f"{refused}:2: the switch refused it" in r.stderr, r
    assert no_stats(env) == [STARTUP]  # the deletes and the good line went through

    bad = write(env.tmp / "bad.flows", "table=7,priority=1 actions=drop", "priority=x")
    r = ctl("replace-flows", bad)
    assert r.returncode == 2 and f"{bad}:2:" in r.stderr, r
    assert no_stats(env) == [STARTUP]
    r = ctl("replace-flows", str(env.tmp / "missing.flows"))
    assert r.returncode == 2 and "missing.flows" in r.stderr, r
    r = ctl("replace-flows", bad, bad)
    assert r.returncode == 2 and "is no switch" in r.stderr, r
