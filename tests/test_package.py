"""The Debian packages (debian/, scripts/deb.sh): what they ship, and a real install, start
under the unit, remove and purge.

The .debs come from $SLUICE_DEB_DIR (scripts/test.sh builds them there with scripts/deb.sh,
which also runs lintian), else scripts/deb.sh builds them into a temporary directory (under a
minute on 2 cores).  The install runs ``dpkg -i`` in a chroot whose root is an overlay of this
machine's / (``unshare -m``; the upper layer is a temporary directory): dpkg's database and the
maintainer scripts run for real, nothing reaches the host, and the upper layer holds exactly
what the packages changed.  There is no systemd in the chroot, so "start under the unit" runs
the unit's ExecStart the way systemd would (sluice-service start NAME: /etc/sluice/NAME.conf),
%i replaced.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from sluice import testing

REPO = Path(__file__).resolve().parent.parent
SYS_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
UNIT = "lib/systemd/system/sluice@.service"
#: Written by dpkg and its triggers, not by the packages: not leftovers.
BOOKKEEPING = ("var/lib/dpkg/", "var/log/", "var/cache/", "tmp/")


@pytest.fixture(scope="module")
def debs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sluice and python3-sluice .debs: from $SLUICE_DEB_DIR, else built now."""
    env = os.environ.get("SLUICE_DEB_DIR")
    if env:
        out = Path(env)
    else:
        if not shutil.which("dpkg-buildpackage") or not shutil.which("dh"):
            pytest.skip("needs dpkg-dev and debhelper (scripts/setup.sh installs them)")
        out = tmp_path_factory.mktemp("debs")
        r = subprocess.run(["bash", str(REPO / "scripts" / "deb.sh"), str(out)],
                           capture_output=True, text=True, timeout=1200,
                           env=dict(os.environ, DEB_BUILD_OPTIONS="nocheck"))
        assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    found = {}
    for name, pattern in [("sluice", "sluice_*_amd64.deb"), ("python3-sluice",
                                                             "python3-sluice_*_all.deb")]:
        paths = sorted(out.glob(pattern))
        assert len(paths) == 1, f"{pattern} in {out}: {paths}"
        found[name] = paths[0]
    return found


def _contents(deb: Path) -> set[str]:
    out = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], capture_output=True,
                         check=True).stdout
    names = subprocess.run(["tar", "-t"], input=out, capture_output=True, check=True).stdout
    return {n.removeprefix("./").rstrip("/") for n in names.decode().splitlines()}


def _field(deb: Path, name: str) -> str:
    return subprocess.run(["dpkg-deb", "-f", str(deb), name], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_sluice_package_contents(debs: dict[str, Path], tmp_path: Path) -> None:
    """Steps: list the sluice .deb and read its control fields; extract it.
    Verify: the three binaries, the template unit (ExecStart = the shipped sluice-service, its
    Documentation file shipped uncompressed), the docs, the example configuration and
    /etc/sluice are there; no Python package (that is python3-sluice); Depends names the
    DPDK libraries, the mempool ring driver and libssl; every man page shipped renders."""
    files = _contents(debs["sluice"])
    for f in ["usr/bin/sluice", "usr/bin/sluicectl", "usr/bin/sluice-gen", UNIT, "etc/sluice",
              "usr/share/doc/sluice/user-guide.md", "usr/share/doc/sluice/sluice.conf.example",
              "usr/share/doc/sluice/copyright"]:
        assert f in files, f
    assert not [f for f in files if "python3" in f]
    depends = _field(debs["sluice"], "Depends")
    for lib in ["librte-eal23", "librte-ethdev23", "librte-mempool-ring23", "libssl3"]:
        assert lib in depends, depends
    assert _field(debs["sluice"], "Architecture") == "amd64"

    subprocess.run(["dpkg-deb", "-x", str(debs["sluice"]), str(tmp_path)], check=True)
    unit = (tmp_path / UNIT).read_text()
    start = re.search(r"^ExecStart=(\S+)/sluice-service start %i$", unit, re.M)
    assert start and f"{start.group(1)}/sluice-service".lstrip("/") in files, unit
    doc = re.search(r"^Documentation=file:(\S+)", unit, re.M)
    assert doc and (tmp_path / doc.group(1).lstrip("/")).is_file(), unit

    pages = [f for f in files if f.startswith("usr/share/man/man") and f.endswith(".gz")]
    if pages and shutil.which("man"):
        for page in pages:
            r = subprocess.run(["man", "-l", str(tmp_path / page)], capture_output=True,
                               text=True, timeout=30, env=dict(os.environ, MANPAGER="cat"))
            assert r.returncode == 0 and r.stdout.strip(), (page, r.stderr)


def test_python_package_contents(debs: dict[str, Path]) -> None:
    """Steps: list the python3-sluice .deb.
    Verify: the package sits in /usr/lib/python3/dist-packages with its wheel metadata
    (dist-info with the version of the .deb) and py.typed; Depends on python3."""
    files = _contents(debs["python3-sluice"])
    site = "usr/lib/python3/dist-packages/"
    version = _field(debs["python3-sluice"], "Version")
    for f in ["sluice/__init__.py", "sluice/mininet.py", "sluice/testing.py", "sluice/py.typed",
              f"sluice-{version}.dist-info/METADATA"]:
        assert site + f in files, f
    assert "python3" in _field(debs["python3-sluice"], "Depends")


class OverlayRoot:
    """A chroot whose root is this machine's / under a copy-on-write layer (``upper``)."""

    def __init__(self, base: Path) -> None:
        self.upper, self.work, self.merged = base / "upper", base / "work", base / "merged"
        for d in (self.upper, self.work, self.merged):
            d.mkdir()

    def run(self, script: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        """Run @script with /bin/sh -e inside the root: a fresh mount namespace, /dev, /proc
        and /sys from the host, an empty /run (so no systemd appears to run)."""
        m = self.merged
        mounts = (f"set -e\n"
                  f"mount -t overlay overlay -o lowerdir=/,upperdir={self.upper},"
                  f"workdir={self.work} {m}\n"
                  f"mount --rbind /dev {m}/dev\nmount -t proc proc {m}/proc\n"
                  f"mount --rbind /sys {m}/sys\nmount -t tmpfs tmpfs {m}/run\n"
                  f'exec chroot {m} /usr/bin/env -i PATH={SYS_PATH} LC_ALL=C.UTF-8 '
                  f'/bin/sh -ec "$1"\n')
        proc = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", mounts,
                                 "sh", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            raise AssertionError(f"timed out: {script}\n{out}") from None
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, "")

    def check(self, script: str, timeout: float = 180) -> str:
        r = self.run(script, timeout)
        assert r.returncode == 0, f"{script}\n{r.stdout}"
        return r.stdout

    def changed(self) -> list[str]:
        """What the root holds that this machine does not: files and links in the upper
        layer, and directories there that do not exist on the host; dpkg's own
        bookkeeping excluded."""
        out = []
        for dirpath, dirnames, filenames in os.walk(self.upper):
            rel_dir = os.path.relpath(dirpath, self.upper)
            for name in filenames + [d for d in dirnames
                                     if os.path.islink(os.path.join(dirpath, d))]:
                out.append(os.path.normpath(os.path.join(rel_dir, name)))
            for name in dirnames:
                rel = os.path.normpath(os.path.join(rel_dir, name))
                path = os.path.join(dirpath, name)
                if os.path.lexists("/" + rel) or os.path.islink(path):
                    continue
                # systemctl enable makes X.wants/ when the host has none; it is the
                # administrator's, like the link in it.
                if rel.startswith("etc/systemd/system/") and not os.listdir(path):
                    continue
                out.append(rel + "/")
        return sorted(p for p in out if not p.startswith(BOOKKEEPING))


def _overlay_usable() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    r = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    return r.returncode == 0 and "overlay" in Path("/proc/filesystems").read_text()


def test_install_start_remove_purge(debs: dict[str, Path], tmp_path: Path) -> None:
    """Steps: in an overlay root, dpkg -i both packages; import the Python package with the
    system python3; write /etc/sluice/NAME.conf (two net_null ports, no hugepages), run the
    unit's ExecStart for instance NAME as systemd would, query it with sluicectl -n NAME,
    `systemd-analyze verify` the unit, `systemctl enable sluice@NAME`, stop it with the
    unit's KillSignal; dpkg -r; dpkg -P.
    Verify: install and removal succeed; installing enables and starts nothing; import
    sluice.mininet works with no PYTHONPATH and finds /usr/bin/sluice and the package's
    version; the switch comes up with both ports and exits 0 on SIGTERM; after dpkg -r only the
    administrator's files remain (NAME.conf, the enable link); after dpkg -P nothing at all."""
    if not _overlay_usable():
        pytest.skip("needs root, unshare and overlayfs")
    root = OverlayRoot(tmp_path)
    inbox = root.upper / "var" / "tmp" / "sluice-debs"   # seen in the root as /var/tmp/...
    inbox.mkdir(parents=True)
    for deb in debs.values():
        shutil.copy(deb, inbox)
    version = _field(debs["sluice"], "Version")

    out = root.check("dpkg -i /var/tmp/sluice-debs/*.deb\n"
                     "dpkg-query -W -f='${Package} ${Status}\\n' sluice python3-sluice")
    assert "sluice install ok installed" in out and "python3-sluice install ok installed" in out
    shutil.rmtree(inbox)
    enabled = [p for p in root.changed()
               if p.startswith(("etc/systemd/", "var/lib/systemd/")) and "sluice" in p]
    assert not enabled, f"installing enabled something: {enabled}"

    probe = ("import importlib.metadata, sluice, sluice.testing\n"
             "print('file', sluice.__file__)\n"
             "print('bin', sluice.testing.sluice_binary())\n"
             "print('version', importlib.metadata.version('sluice'))\n"
             "try:\n    import mininet.node\nexcept ImportError:\n    print('no mininet')\n"
             "else:\n    import sluice.mininet\n"
             "    print('mininet', sluice.mininet.SluiceSwitch.__module__)\n")
    out = root.check(f"cd / && python3 -c {shlex.quote(probe)}")
    assert "file /usr/lib/python3/dist-packages/sluice/__init__.py" in out, out
    assert "bin /usr/bin/sluice" in out and f"version {version}" in out, out
    assert "mininet sluice.mininet" in out or "no mininet" in out, out

    name = testing.unique("pkg")
    unit_text = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(debs["sluice"])],
                               capture_output=True, check=True).stdout
    text = subprocess.run(["tar", "-xO", "./" + UNIT], input=unit_text, capture_output=True,
                          check=True).stdout.decode()
    exec_start = re.search(r"^ExecStart=[-@+!:]*(.*)$", text, re.M)
    kill_signal = re.search(r"^KillSignal=SIG(\w+)$", text, re.M)
    assert exec_start and kill_signal, text
    conf = f"/etc/sluice/{name}.conf"  # sluice-service start NAME reads it (--config)
    command = exec_start.group(1).replace("%i", name)
    service = f"""
        cat > {conf} <<'EOF'
[switch]
# no TAP on the host: the root shares its network namespace
no-local = true
[port.n0]
devargs = net_null0,no-rx=1
[port.n1]
devargs = net_null1,no-rx=1
[eal]
args = --no-huge -m 256 --no-pci -l 0
EOF
        {command} > /tmp/{name}.log 2>&1 &
        pid=$!
        i=0
        until grep -q '^sluice: name {name}:' /tmp/{name}.log; do
            i=$((i + 1)); [ $i -lt 300 ] || {{ cat /tmp/{name}.log; kill -KILL $pid; exit 1; }}
            kill -0 $pid || {{ cat /tmp/{name}.log; exit 1; }}
            sleep 0.1
        done
        sluicectl -n {name} show
        systemd-analyze verify /{UNIT} && echo "unit verified"
        systemctl enable sluice@{name}.service
        kill -{kill_signal.group(1)} $pid
        rc=0; wait $pid || rc=$?
        echo "exit status $rc"
    """
    out = root.check(service, timeout=120)
    assert re.search(r"^\s+1\s+n0\s", out, re.M), out
    assert re.search(r"^\s+2\s+n1\s", out, re.M), out
    assert "exit status 0" in out and "unit verified" in out, out

    root.check("dpkg -r sluice python3-sluice")
    left = [p for p in root.changed()
            if not (p.startswith("etc/systemd/system/") and p.endswith("/"))]
    wants = f"etc/systemd/system/multi-user.target.wants/sluice@{name}.service"
    assert left == sorted(["etc/sluice/", conf.lstrip("/"), wants]), left

    out = root.check("dpkg -P sluice python3-sluice\n"
                     "ls /var/lib/dpkg/info | grep sluice || true")
    assert "sluice." not in out, out
    assert root.changed() == []
