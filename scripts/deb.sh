#!/usr/bin/env bash
# Build the Debian packages (sluice, python3-sluice) from a clean export of the
# source tree, check them with lintian, and leave the .debs in OUTDIR.
#   scripts/deb.sh [--worktree] [OUTDIR]     (default OUTDIR: ./build-deb)
# The export is `git archive HEAD`, so build directories, .venv and benchmark
# output never reach dpkg-buildpackage; --worktree exports the working tree's
# files instead (tracked and untracked, minus .gitignore'd ones) to try
# uncommitted changes.  DEB_BUILD_OPTIONS passes through (scripts/test.sh sets
# nocheck: it runs the meson 'fast' suite itself).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

worktree=0
if [[ "${1:-}" == --worktree ]]; then
	worktree=1
	shift
fi
out="$(mkdir -p "${1:-build-deb}" && cd "${1:-build-deb}" && pwd)"
rm -f "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes   # never test an older build
log() { printf '[deb] %s\n' "$*"; }

# The system toolchain only: pybuild must find the Debian python3 (with
# python3-build and dh-python), not a pyenv or venv python earlier in PATH.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
unset VIRTUAL_ENV PYTHONPATH PYTHONHOME

tmp="$(mktemp -d /tmp/sluice-deb.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
src="$tmp/sluice"
mkdir "$src"
if ((worktree)); then
	git ls-files -z -co --exclude-standard |
		(while IFS= read -r -d '' f; do [[ -e "$f" ]] && printf '%s\0' "$f"; done) |
		tar --null -T - -cf - | tar -x -C "$src"
else
	git archive HEAD | tar -x -C "$src"
fi

log "dpkg-buildpackage -us -uc -b (DEB_BUILD_OPTIONS='${DEB_BUILD_OPTIONS:-}')"
start=$SECONDS
if ! (cd "$src" && dpkg-buildpackage -us -uc -b -j2) >"$tmp/build.log" 2>&1; then
	tail -40 "$tmp/build.log" >&2
	echo "deb: dpkg-buildpackage failed (log above)" >&2
	exit 1
fi
log "built in $((SECONDS - start)) s"
mv "$tmp"/*.deb "$tmp"/*.buildinfo "$tmp"/*.changes "$out"/

# Errors and warnings fail; the accepted ones are in debian/*.lintian-overrides,
# each with the reason.
log "lintian"
lintian --fail-on error,warning "$out"/*.changes
ls -1 "$out"/*.deb
