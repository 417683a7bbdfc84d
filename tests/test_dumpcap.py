"""dpdk-dumpcap (a DPDK secondary process) capturing a running Sluice's port.

Secondary processes need hugepages and a multi-process EAL, which the default run
(``--no-huge``/``--in-memory``) does not have.  This test reserves 2 MB pages for itself,
mounts a private hugetlbfs, and gives everything back afterwards (pages, mount, files).
It is skipped when pages cannot be reserved, and shows that without them Sluice says why.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from scapy.all import IP, UDP, Ether, rdpcap, wrpcap  # type: ignore[attr-defined]

from sluice import testing

DUMPCAP = shutil.which("dpdk-dumpcap")
NR = Path("/proc/sys/vm/nr_hugepages")
PAGES = 160  # 320 MB: the switch's pool plus the capture's


@contextlib.contextmanager
def hugepages(n: int) -> Iterator[str]:
    """Reserve @n more 2 MB pages and mount a private hugetlbfs; yields its path."""
    before = int(NR.read_text())
    mnt = tempfile.mkdtemp(prefix="sl-huge-")
    mounted = False
    try:
        NR.write_text(str(before + n))
        free = next(int(ln.split()[1]) for ln in Path("/proc/meminfo").read_text().splitlines()
                    if ln.startswith("HugePages_Free:"))
        if free < n:
            pytest.skip(f"could reserve only {free} of {n} hugepages")
        subprocess.run(["mount", "-t", "hugetlbfs", "-o", "pagesize=2M", "nodev", mnt],
                       check=True)
        mounted = True
        yield mnt
    finally:
        if mounted:
            for f in Path(mnt).iterdir():
                with contextlib.suppress(OSError):
                    f.unlink()
            subprocess.run(["umount", mnt], check=False)
        os.rmdir(mnt)
        NR.write_text(str(before))


def test_dumpcap_refused_without_hugepages(sluice_bin: Path) -> None:
    if int(NR.read_text()) > 0:
        pytest.skip("hugepages are reserved on this machine")
    r = subprocess.run([str(sluice_bin), "-p", "net_null0", "--dumpcap", "-d", "1"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    assert "--dumpcap" in r.stderr and "hugepages" in r.stderr


def test_dumpcap_captures_a_port(sluice_bin: Path, tmp_path: Path) -> None:
    if DUMPCAP is None or os.geteuid() != 0:
        pytest.skip("needs root and dpdk-dumpcap (Debian package dpdk)")
    frames = [Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
              / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=5000 + i, dport=9)
              for i in range(16)]
    name = testing.unique("dc")
    # A short path: the secondary re-probes the vdev from devargs cut to 64 bytes.
    pcap = Path(f"/tmp/{name}.pcap")
    wrpcap(str(pcap), frames)
    out = tmp_path / "dumpcap.pcapng"
    try:
        _capture(sluice_bin, tmp_path, name, pcap, out)
    finally:
        pcap.unlink()
    got = rdpcap(str(out))
    assert len(got) >= 40
    sent = {bytes(f) for f in frames}
    assert all(bytes(p) in sent for p in got)


def _capture(sluice_bin: Path, tmp_path: Path, name: str, pcap: Path, out: Path) -> None:
    flows = tmp_path / "f.flows"
    flows.write_text("table=0,priority=1 actions=output:2\n")
    with hugepages(PAGES) as mnt:
        # Explicit EAL options: hugepages from the private mount, multi-process (no
        # --in-memory), no PCI; Sluice adds --file-prefix=NAME.
        cmd = [str(sluice_bin), "--name", name, "-p", f"net_pcap0,rx_pcap={pcap},infinite_rx=1",
               "-p", "net_null1,no-rx=1", "-f", str(flows), "-m", "8192", "-q",
               "--", "-l", "0,1", f"--huge-dir={mnt}", "-m", "256", "--no-pci",
               "--log-level=lib.eal:error"]
        with testing.Proc(cmd, name="sluice") as sw:
            sw.wait_output(r"sluice: name ", timeout=30)
            r = subprocess.run([DUMPCAP, f"--file-prefix={name}", "-i", "net_pcap0", "-c", "40",
                                "-w", str(out), "-q"], capture_output=True, text=True,
                               timeout=60)
            assert r.returncode == 0, r.stdout + r.stderr
            assert sw.stop() == 0, sw.output
        assert not [f for f in os.listdir(mnt) if f.startswith(name)], "hugepage files left"
