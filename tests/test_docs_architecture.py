"""docs/architecture.md against the source tree, so the map stays true as the code moves.

The document places each step of a packet's and of an OpenFlow message's path in a file with
code spans of the form ``src/dir/file.c: name, name`` (a function, a macro, ``struct name`` or
a table). This test reads the tree, not a build: every such name must be defined in that file
(the tree is clang-formatted with the return type on its own line, so a definition starts a
line with ``name(``), every file and folder the document names must exist, every function it
names anywhere must be placed in its file by at least one such span, and the component map
must list every component folder under src/. No switch runs; it takes well under a second.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"

# `src/pipeline/pipeline_run.c: table_lookup, table_execute` (the span may wrap lines).
ATTRIBUTION = re.compile(r"^((?:src|app)/[\w./-]+\.[ch]):\s+(.+)$", re.S)
# A name in an attribution: an identifier, or "struct NAME" / "enum NAME".
NAME = re.compile(r"(?:(struct|enum)\s+)?([A-Za-z_]\w*)")
# Paths from the repository root, anywhere in the text ("app/sluicectl*.c" is a glob).
ROOTS = "src|app|tests|docs|fuzz|tools|python|bench|scripts|dist|examples|debian"
REPO_PATH = re.compile(rf"(?<![\w/.-])((?:{ROOTS})/[\w./*-]*[\w*])")
# A bare C file name ("meter.c", "pipeline_priv.h"), not part of a path.
BARE_FILE = re.compile(r"(?<![\w/.*-])([A-Za-z_][\w-]*\.[ch])\b")
# Markdown links to other documents.
LINK = re.compile(r"\]\(([^)#\s:]+)(?:#[^)]*)?\)")
# Words the document uses as names of something else that a static function shares: the
# scheduler "hrw" (--sched hrw) is not a reference to dispatch.c's hrw().
NOT_FUNCTIONS = {"hrw"}


def strip_fences(text: str) -> str:
    """The text without fenced code blocks (the diagrams), whose ``` would pair up spans."""
    return re.sub(r"^[ \t]*```.*?^[ \t]*```[^\n]*$", "", text, flags=re.M | re.S)


def code_spans(text: str) -> list[str]:
    """Every inline code span, whitespace (line breaks inside a span) collapsed."""
    return [" ".join(s.split()) for s in re.findall(r"`([^`]+)`", strip_fences(text))]


def attributions(text: str) -> list[tuple[str, str]]:
    """(file, name) for every name a ``file: names`` span places in a file."""
    out = []
    for span in code_spans(text):
        m = ATTRIBUTION.match(span)
        if m is None:
            continue
        for item in m.group(2).split(","):
            item = item.strip()
            n = NAME.fullmatch(item)
            out.append((m.group(1), item if n is not None else f"<not a name: {item!r}>"))
    return out


def defined_in(source: str, name: str) -> bool:
    """Whether @source defines @name: a function, a macro, a struct/enum or a table."""
    n = NAME.fullmatch(name)
    if n is None:
        return False
    kind, ident = n.group(1), re.escape(n.group(2))
    if kind is not None:
        return re.search(rf"^{kind} {ident} \{{", source, re.M) is not None
    patterns = (
        # Return type on the line above (clang-format AlwaysBreakAfterReturnType), then the
        # parameters (no ';' or '{' among them) and the body: a prototype does not match.
        rf"^{ident}\([^;{{]*\)\s*\{{",
        rf"^#\s*define\s+{ident}\b",
        # A table: "static const struct x name[] = {", or "} name[] = {" after a struct body.
        rf"^(?:[A-Za-z_][^;=(\n]*[\s*]|\}}\s*){ident}\s*\[[^\]\n]*\]\s*=",
    )
    return any(re.search(p, source, re.M) for p in patterns)


@cache
def source(rel: str) -> str:
    return (ROOT / rel).read_text(errors="replace")


def attribution_problems(text: str) -> list[str]:
    """Every ``file: name`` whose file is missing or does not define the name."""
    problems = []
    for rel, name in attributions(text):
        if not (ROOT / rel).is_file():
            problems.append(f"{rel}: no such file (for {name})")
        elif not defined_in(source(rel), name):
            problems.append(f"{rel}: {name} is not defined there")
    return problems


def c_sources() -> Iterable[Path]:
    """The C files of the switch and its tools (src/, app/), tests and benchmarks left out."""
    for path in sorted([*ROOT.glob("src/**/*.[ch]"), *ROOT.glob("app/*.[ch]")]):
        if not path.name.startswith(("test_", "bench_")):
            yield path


@cache
def function_index() -> dict[str, frozenset[str]]:
    """Function name -> the files that define it (static functions included)."""
    index: dict[str, set[str]] = {}
    for path in c_sources():
        rel = path.relative_to(ROOT).as_posix()
        for m in re.finditer(r"^([A-Za-z_]\w*)\([^;{]*\)\s*\{", source(rel), re.M):
            index.setdefault(m.group(1), set()).add(rel)
    return {k: frozenset(v) for k, v in index.items()}


def unplaced_functions(text: str) -> list[str]:
    """Functions the document names (`name` or `name(...)`) but never places in a file."""
    placed = {name for _, name in attributions(text)}
    folders = {p.name for p in (ROOT / "src").iterdir() if p.is_dir()}
    index = function_index()
    missing = set()
    for span in code_spans(text):
        m = re.fullmatch(r"([A-Za-z_]\w*)(?:\(.*\))?", span)
        if m is None:
            continue
        name = m.group(1)
        if name in index and name not in placed and name not in folders | NOT_FUNCTIONS:
            missing.add(f"{name} (defined in {', '.join(sorted(index[name]))})")
    return sorted(missing)


def path_problems(text: str) -> list[str]:
    """Paths, bare C file names and document links that name nothing in the tree."""
    problems = []
    for rel in sorted(set(REPO_PATH.findall(text))):
        if "*" in rel:
            if not any(ROOT.glob(rel)):
                problems.append(f"{rel}: matches no file")
        elif not (ROOT / rel).exists():
            problems.append(f"{rel}: no such file or folder")
    names = {p.name for d in ("src", "app", "fuzz") for p in (ROOT / d).rglob("*.[ch]")}
    for bare in sorted(set(BARE_FILE.findall(text))):
        if bare not in names:
            problems.append(f"{bare}: no file of that name under src/, app/ or fuzz/")
    for link in sorted(set(LINK.findall(text))):
        if not link.startswith(("http:", "https:")) and not (DOC.parent / link).exists():
            problems.append(f"link {link}: no such file next to {DOC.name}")
    return problems


def component_map_folders(text: str) -> set[str]:
    """The first column of the component map's table."""
    sec = re.search(r"^## \d+\. Component map$(.*?)(?=^## )", text, re.M | re.S)
    assert sec is not None, "no '## N. Component map' section"
    return set(re.findall(r"^\| `(\w+)` \|", sec.group(1), re.M))


@pytest.fixture(scope="module")
def doc() -> str:
    return DOC.read_text()


def test_every_placed_name_is_defined_in_its_file(doc: str) -> None:
    """Each ``file: name`` of the document names a definition in that file.

    Steps:
        Collect every code span ``src/.../file.c: a, b`` (or app/...) of the document.
    Verify:
        There are at least 250 of them (the two indexes alone place most steps), the file
        exists, and each name is defined in it: ``name(`` at the start of a line followed by
        the body, a #define, ``struct name {`` or a table ``name[] =``.
    """
    assert len(attributions(doc)) >= 250
    assert attribution_problems(doc) == []


def test_every_named_function_is_placed_in_a_file(doc: str) -> None:
    """A function the document names is one hop away: some span says which file holds it.

    Steps:
        Collect every code span that is a bare identifier (or ``name(...)``) and defined as a
        function in src/ or app/ (tests and benchmarks aside).
    Verify:
        Each such name also appears in a ``file: name`` span.
    """
    assert unplaced_functions(doc) == []


def test_every_file_and_link_exists(doc: str) -> None:
    """Paths (src/..., app/..., docs/...), bare C file names and links name real files.

    Steps:
        Collect repository paths (globs included), bare ``*.c``/``*.h`` names and relative
        Markdown links from the whole document.
    Verify:
        Each path exists, each glob matches, each bare name is some file's name under src/,
        app/ or fuzz/, and each link resolves from docs/.
    """
    assert path_problems(doc) == []


def test_component_map_lists_every_component(doc: str) -> None:
    """The component map has one row per component folder under src/, and no other.

    Steps:
        Read the first column of the component map and list src/*/ folders with a meson.build.
    Verify:
        The two sets are equal.
    """
    folders = {p.parent.name for p in (ROOT / "src").glob("*/meson.build")}
    assert component_map_folders(doc) == folders


def test_checker_catches_a_wrong_name(doc: str) -> None:
    """The checks above would fail on a misspelled or misplaced name, not pass vacuously.

    Steps:
        Misspell one placed name; move another to a file that does not define it; name a
        function that no span places; name a file that does not exist.
    Verify:
        Each change is reported by the matching check.
    """
    span = "`src/pipeline/pipeline_run.c: table_lookup"
    assert span in doc
    bad = doc.replace(span, span + "x", 1)
    assert "src/pipeline/pipeline_run.c: table_lookupx is not defined there" in (
        attribution_problems(bad)
    )
    moved = doc.replace(span, "`src/pipeline/pipeline.c: table_lookup", 1)
    assert "src/pipeline/pipeline.c: table_lookup is not defined there" in (
        attribution_problems(moved)
    )
    assert any(
        p.startswith("sl_pipeline_tsc ")
        for p in unplaced_functions(doc + "\nSee `sl_pipeline_tsc`.\n")
    )
    assert "src/pipeline/pipeline_runn.c: no such file or folder" in path_problems(
        doc + "\nSee src/pipeline/pipeline_runn.c.\n"
    )
