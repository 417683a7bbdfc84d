"""Run an os-ken controller app: ``python -m sluice.apps.run [OPTIONS] APP [APP ...]``.

PyPI os-ken 4.x ships no ``osken-manager``; this is the small equivalent.  It
sets ``OSKEN_HUB_TYPE=eventlet`` before os_ken is imported, passes the listen
options to oslo.config (``ofp_tcp_listen_port``, ``ofp_listen_host``), loads
the apps with ``AppManager`` and blocks until SIGTERM/SIGINT.  APP is a name
from ``sluice.apps.APPS`` (``learning_switch``) or an importable module path.

With ``--ctl-privkey``, ``--ctl-cert`` and ``--ca-certs`` (osken-manager's
options) the controller listens with TLS instead, on ``--ofp-ssl-listen-port``,
and accepts only switches whose certificate the CA signed (Sluice:
``-C ssl:HOST:PORT --private-key ... --certificate ... --ca-cert ...``).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import signal
import sys
import warnings

os.environ.setdefault("OSKEN_HUB_TYPE", "eventlet")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sluice.apps.run", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ofp-tcp-listen-port", type=int, default=6653,
                    help="OpenFlow TCP port to listen on (default 6653)")
    ap.add_argument("--ofp-listen-host", default="127.0.0.1",
                    help="address to listen on (default 127.0.0.1)")
    ap.add_argument("--ofp-ssl-listen-port", type=int, default=6653,
                    help="OpenFlow TLS port to listen on, with --ctl-privkey (default 6653)")
    ap.add_argument("--ctl-privkey", metavar="FILE", help="TLS: the controller's private key")
    ap.add_argument("--ctl-cert", metavar="FILE", help="TLS: the controller's certificate")
    ap.add_argument("--ca-certs", metavar="FILE",
                    help="TLS: CA certificate switches' certificates must chain to")
    ap.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    ap.add_argument("apps", nargs="+", metavar="APP")
    a = ap.parse_args(argv)
    tls = [a.ctl_privkey, a.ctl_cert, a.ca_certs]
    if any(tls) and not all(tls):
        ap.error("TLS needs --ctl-privkey, --ctl-cert and --ca-certs together")

    if os.environ["OSKEN_HUB_TYPE"] == "eventlet":
        warnings.filterwarnings("ignore", message="Eventlet is deprecated")
        # eventlet has no type information; imported by name (os-ken's dependency).
        importlib.import_module("eventlet").monkey_patch()
    # Importing the controller module registers its oslo.config CLI options,
    # which must exist before CONF parses.
    from os_ken import cfg
    from os_ken.base import app_manager
    from os_ken.controller import controller  # noqa: F401
    from os_ken.lib import hub

    from sluice.apps import APPS

    conf = [f"--ofp-tcp-listen-port={a.ofp_tcp_listen_port}",
            f"--ofp-listen-host={a.ofp_listen_host}"]
    if all(tls):
        # os-ken then serves TLS only, with CERT_REQUIRED against the CA file.
        conf += [f"--ofp-ssl-listen-port={a.ofp_ssl_listen_port}",
                 f"--ctl-privkey={a.ctl_privkey}", f"--ctl-cert={a.ctl_cert}",
                 f"--ca-certs={a.ca_certs}"]
    cfg.CONF(args=conf, project="os_ken", version="sluice")
    logging.basicConfig(level=logging.DEBUG if a.verbose else logging.INFO, stream=sys.stdout,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    modules = [APPS.get(name, name) for name in a.apps]

    mgr = app_manager.AppManager.get_instance()
    mgr.load_apps(modules)
    contexts = mgr.create_contexts()
    services = mgr.instantiate_apps(**contexts)

    stopping = False

    def stop(signum: int, _frame: object) -> None:
        # A handler runs inside whichever greenlet was running (the hub, a
        # connection's send loop...): raising or switching greenlets from
        # there is unsafe, so it only sets a flag the main greenlet polls.
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # Printed once the handlers are in place: a caller may stop us from here on.
    where = (f"ssl:{a.ofp_listen_host}:{a.ofp_ssl_listen_port}" if all(tls)
             else f"tcp:{a.ofp_listen_host}:{a.ofp_tcp_listen_port}")
    print(f"sluice.apps.run: {', '.join(a.apps)} listening on {where}", flush=True)
    try:
        while not stopping and not all(t.dead for t in services):
            hub.sleep(0.2)
    finally:
        for t in services:
            hub.kill(t)
        mgr.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
