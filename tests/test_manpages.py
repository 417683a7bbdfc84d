"""Man pages and bash completion of sluice, sluicectl and sluice-gen.

The man pages are built by meson from docs/man/*.md, which include the user docs
(docs/sluicectl.md, docs/sluice-gen.md, sections of docs/user-guide.md) and the programs'
--help, through pandoc and docs/man/man.lua.  Here they are rendered with ``man -l`` and
checked against the programs' --help, so neither can drift from the other; the bash
completion scripts in dist/bash-completion are run in bash the way bash runs them
(COMP_WORDS, COMP_CWORD, then the completion function).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from sluice.testing import BUILD_DIR

REPO = Path(__file__).resolve().parent.parent
MAN_DIR = BUILD_DIR / "docs" / "man"
PAGES = {"sluice.8": "sluice", "sluicectl.8": "sluicectl", "sluice-gen.1": "sluice-gen"}


def program(name: str) -> Path:
    path = BUILD_DIR / "app" / name
    if not path.exists():
        pytest.skip(f"{path} is not built")
    return path


def help_text(name: str) -> str:
    r = subprocess.run([str(program(name)), "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


def sluicectl_commands() -> list[str]:
    """The commands "sluicectl --help" lists: the first word of each command line."""
    cmds: list[str] = []
    section = False
    for line in help_text("sluicectl").splitlines():
        if line.endswith("commands:"):
            section = True
        elif not line.strip():
            section = False
        elif section and (m := re.match(r"  ([a-z][a-z-]*)", line)):
            cmds.append(m.group(1))
    return sorted(set(cmds))


def long_options(text: str) -> set[str]:
    """The --options of a help text's option lines (not those named in prose)."""
    return {m.group(1) for m in re.finditer(r"^ {2,}(?:-\w, )?(--[a-z][a-z-]*)", text, re.M)}


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    """Each man page rendered by man -l at 80 columns (built first when ninja can)."""
    if shutil.which("pandoc") is None:
        pytest.skip("pandoc is not installed (scripts/setup.sh installs it)")
    if shutil.which("man") is None:
        pytest.skip("man is not installed")
    if (BUILD_DIR / "build.ninja").exists() and os.environ.get("SLUICE_NO_BUILD") != "1":
        r = subprocess.run(["ninja", "-C", str(BUILD_DIR), *(f"docs/man/{p}" for p in PAGES)],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
    out = {}
    for page in PAGES:
        path = MAN_DIR / page
        assert path.exists(), f"{path} not built: reconfigure (meson setup --reconfigure build)"
        # No hyphenation or justification, so words and options are found whole.
        r = subprocess.run(["man", "--nh", "--nj", "-l", "-P", "cat", str(path)],
                           capture_output=True,
                           text=True,
                           timeout=60, env={**os.environ, "MANWIDTH": "80", "LC_ALL": "C.UTF-8"})
        assert r.returncode == 0, r.stderr
        assert "error" not in r.stderr.lower(), r.stderr
        out[page] = r.stdout
    return out


def test_man_pages_render(pages: dict[str, str]) -> None:
    """man -l renders each page with its title, NAME and SYNOPSIS, and the docs in it.

    Steps:
        1. Build the pages; man -l -P cat each at 80 columns.
    Verify:
        The header names the page and section; NAME gives "prog - summary"; SYNOPSIS
        starts with the program; the sections included from the docs are there (the
        sluicectl command tables, sluice-gen's stream keys, the user guide's ports).
    """
    for page, prog in PAGES.items():
        text = pages[page]
        name, section = page.rsplit(".", 1)
        assert text.splitlines()[0].startswith(f"{name.upper()}({section})"), text[:200]
        assert re.search(rf"^NAME\n\s+{re.escape(prog)} - \S", text, re.M), text[:400]
        assert re.search(rf"^SYNOPSIS\n\s+{re.escape(prog)} [\[-]", text, re.M), text[:600]
    assert "OPENFLOW COMMANDS" in pages["sluicectl.8"] and "TELEMETRY COMMANDS" in pages[
        "sluicectl.8"]
    assert "STREAMS" in pages["sluice-gen.1"] and "ip_src=A.B.C.D" in pages["sluice-gen.1"]
    assert re.search(r"^PORTS$", pages["sluice.8"], re.M), pages["sluice.8"][:2000]
    # Links to other docs keep their text only (no url after it); "\|" in a table's code
    # is GitHub's escape, not part of the text.
    assert "ffp.md (ffp.md)" not in pages["sluicectl.8"] and "ffp.md" in pages["sluicectl.8"]
    assert "\\|" not in pages["sluicectl.8"] and "type=all|select|indirect|ff" in pages[
        "sluicectl.8"]


def test_man_pages_cover_the_help(pages: dict[str, str]) -> None:
    """Every sluicectl command and every long option of the three programs' --help is in
    its man page, so a command added to the program without docs fails here."""
    # A line may still break after a word's own hyphen: join those first.
    words = set(re.findall(r"[\w-]+", re.sub(r"-\n\s+", "-", pages["sluicectl.8"])))
    missing = [c for c in sluicectl_commands() if c not in words]
    assert not missing, f"sluicectl commands missing from docs/sluicectl.md: {missing}"
    assert len(sluicectl_commands()) >= 35
    for page, prog in PAGES.items():
        missing = [opt for opt in long_options(help_text(prog)) if opt not in pages[page]]
        assert not missing, f"{page}: options of {prog} --help not in the page: {missing}"


def test_meson_install_layout(tmp_path: Path, pages: dict[str, str]) -> None:
    """meson install puts the man pages in share/man/manN and the completions in
    share/bash-completion/completions."""
    r = subprocess.run(["meson", "install", "-C", str(BUILD_DIR), "--no-rebuild", "--quiet",
                        "--destdir", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    share = next(tmp_path.rglob("share/man")).parent
    for page in PAGES:
        section = page.rsplit(".", 1)[1]
        assert (share / "man" / f"man{section}" / page).is_file(), page
    for prog in ("sluice", "sluicectl"):
        assert (share / "bash-completion" / "completions" / prog).is_file(), prog


def complete(script: str, words: list[str], env: dict[str, str] | None = None) -> list[str]:
    """What bash's programmable completion offers for @words (the last one is completed)."""
    func = "_" + Path(script).name
    code = (f'source "{REPO / "dist" / "bash-completion" / script}"\n'
            f'COMP_WORDS=({" ".join(_quote(w) for w in words)})\n'
            f"COMP_CWORD={len(words) - 1}\n"
            f'COMP_LINE="${{COMP_WORDS[*]}}"; COMP_POINT=${{#COMP_LINE}}\n'
            f'{func}\nprintf "%s\\n" "${{COMPREPLY[@]}}"\n')
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", code], capture_output=True,
                       text=True, timeout=30, env={**os.environ, **(env or {})})
    assert r.returncode == 0, r.stderr
    return sorted(ln for ln in r.stdout.splitlines() if ln)


def _quote(w: str) -> str:
    return "'" + w.replace("'", "'\\''") + "'"


def test_bash_completion_sluicectl(tmp_path: Path) -> None:
    """sluicectl completes its commands (from its --help), options, instance names from
    the management sockets, and fixed values.

    Steps:
        1. Complete an empty command word, prefixes of commands and options, -n with two
           listening sockets br0.mgmt and br1.mgmt (and a plain file) in SLUICE_RUN_DIR,
           stats and capture arguments, options after the command.
    Verify:
        Exactly the matching words; the empty word offers every command of --help.
    """
    ctl = str(program("sluicectl"))
    assert complete("sluicectl", [ctl, ""]) == sluicectl_commands()
    assert complete("sluicectl", [ctl, "dump-f"]) == ["dump-flows"]
    assert complete("sluicectl", [ctl, "--json", "rep"]) == ["replace-flows"]
    assert complete("sluicectl", [ctl, "-t", "unix:/x", "diff"]) == ["diff-flows"]
    assert complete("sluicectl", [ctl, "--na"]) == ["--name", "--names"]
    assert complete("sluicectl", [ctl, "dump-flows", "--no-"]) == ["--no-names", "--no-stats"]
    assert complete("sluicectl", [ctl, "stats", "l"]) == ["latency"]
    assert complete("sluicectl", [ctl, "capture", "st"]) == ["start", "status", "stop"]
    assert complete("sluicectl", [ctl, "capture", "start", "--dir", ""]) == ["both", "rx", "tx"]
    socks = []
    for name in ("br0", "br1"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(str(tmp_path / f"{name}.mgmt"))
        socks.append(s)
    (tmp_path / "stale.mgmt").write_text("")  # no socket: no switch
    try:
        env = {"SLUICE_RUN_DIR": str(tmp_path)}
        assert complete("sluicectl", [ctl, "-n", ""], env) == ["br0", "br1"]
        assert complete("sluicectl", [ctl, "--name", "br1"], env) == ["br1"]
    finally:
        for s in socks:
            s.close()
    flows = tmp_path / "my.flows"
    flows.write_text("")
    assert complete("sluicectl", [ctl, "replace-flows", str(tmp_path / "my.")]) == [str(flows)]


def test_bash_completion_sluice() -> None:
    """sluice completes its options (from its --help) and their fixed values."""
    sw = str(program("sluice"))
    offered = complete("sluice", [sw, "--"])
    assert set(offered) == long_options(help_text("sluice")) | {"--"}, offered
    assert complete("sluice", [sw, "--no-f"]) == ["--no-ffp", "--no-flow-cache"]
    assert complete("sluice", [sw, "--fail-mode", ""]) == ["secure", "standalone"]
    assert complete("sluice", [sw, "--dispatch", "r"]) == ["rss"]
    assert complete("sluice", [sw, "-p", "net_af_p"]) == ["net_af_packet0,iface="]
    assert complete("sluice", [sw, "-p", "net_null0", "--", "--no"]) == []
