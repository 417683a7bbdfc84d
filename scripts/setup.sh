#!/usr/bin/env bash
# Install everything Sluice needs to build, run and test on Debian 12 (as root),
# then configure and build it.  Idempotent: installs only what is missing.
#   scripts/setup.sh            install + build (release) into ./build
#   SL_SKIP_APT=1 scripts/setup.sh   skip apt (e.g. on a machine set up by hand)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

apt_pkgs=(build-essential meson ninja-build pkg-config python3 python3-venv python3-pip
	  dpdk dpdk-dev libdpdk-dev libpcap-dev libssl-dev openssl iproute2 tcpdump clang libclang-rt-14-dev
	  openvswitch-common openvswitch-switch openvswitch-testcontroller iperf3 iputils-ping ethtool tmux
	  mininet net-tools prometheus pandoc man-db libinih-dev tshark clang-format
	  debhelper dh-python pybuild-plugin-pyproject python3-all python3-setuptools lintian)

log() { printf '[setup] %s\n' "$*"; }

if [[ "${SL_SKIP_APT:-0}" != 1 ]]; then
	missing=()
	for p in "${apt_pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	if ((${#missing[@]})); then
		if [[ $(id -u) -ne 0 ]]; then
			echo "setup: missing packages (${missing[*]}); run as root or install them" >&2
			exit 1
		fi
		log "apt-get install ${missing[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	fi
fi

# Python tools for tests and benchmarks, in a venv of the project's own.
if [[ ! -x .venv/bin/python ]]; then
	log "creating .venv"
	python3 -m venv .venv
fi
if ! .venv/bin/python -c "import pytest, scapy" 2>/dev/null; then
	log "pip install pytest scapy"
	.venv/bin/pip install -q --disable-pip-version-check pytest scapy
fi
# os-ken (OpenFlow controller framework for the controller apps; needs
# OSKEN_HUB_TYPE=eventlet, which sluice.apps.run sets) and the project's own
# Python package (python/: import sluice), editable.
if ! OSKEN_HUB_TYPE=eventlet .venv/bin/python -c "import os_ken, eventlet" 2>/dev/null; then
	log "pip install os-ken"
	.venv/bin/pip install -q --disable-pip-version-check "os-ken>=4,<5" eventlet
fi
if ! .venv/bin/python -c "import sluice.osken, mypy" 2>/dev/null; then
	log "pip install -e python/[apps,dev] (the sluice package, mypy)"
	.venv/bin/pip install -q --disable-pip-version-check -e "python/[apps,dev]"
fi
# ruff: the Python lint scripts/test.sh runs (rules in python/pyproject.toml); pinned, since
# new ruff releases add rules.
if ! .venv/bin/ruff --version 2>/dev/null | grep -qx "ruff 0.17.6"; then
	log "pip install ruff"
	.venv/bin/pip install -q --disable-pip-version-check "ruff==0.17.6"
fi
# matplotlib: PNG plots of the benchmarks (bench/run ffp, flexforward, ...).
if ! .venv/bin/python -c "import matplotlib" 2>/dev/null; then
	log "pip install matplotlib"
	.venv/bin/pip install -q --disable-pip-version-check matplotlib
fi

# matplotlib: the PNG plots of the benchmarks (bench/run dispatch, decomposition).
if ! .venv/bin/python -c "import matplotlib" 2>/dev/null; then
	log "pip install matplotlib"
	.venv/bin/pip install -q --disable-pip-version-check matplotlib
fi

if [[ ! -f build/build.ninja ]]; then
	log "meson setup build"
	meson setup build --buildtype=release -Dcpu="${SL_CPU:-native}" >/dev/null
elif command -v pandoc >/dev/null && ! grep -q 'docs/man/sluicectl.8' build/build.ninja; then
	# Configured before pandoc was installed: the man pages need a new look for it.
	log "meson setup --reconfigure build (man pages)"
	meson setup --reconfigure build >/dev/null
fi
log "ninja -C build"
ninja -C build >/dev/null
log "done: build/app/sluice"
