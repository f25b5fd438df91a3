"""``autograd-lab start [--dir DIR] [--no-browser] [-- JUPYTERLAB OPTIONS]``: copy the course
notebooks into a working folder and open JupyterLab there."""
from __future__ import annotations

import argparse
from pathlib import Path


def port_number(text: str) -> int:
    """argparse type: a TCP port, 1-65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number such as 8888, got {text!r}") \
            from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 1 to 65535, got {value}")
    return value


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "start", help="copy the course notebooks into a working folder and open JupyterLab "
        "there (your own files are never overwritten)",
        usage="%(prog)s [options] [-- JUPYTERLAB OPTIONS ...]",
        description="Copy the course notebooks into your working folder (a notebook you "
        "already have there is never overwritten) and open JupyterLab on it. JupyterLab runs "
        "until you press Ctrl+C; run start again to go on where you left off. If JupyterLab "
        "already runs for the folder, its address is printed instead. Options after `--` go "
        "to JupyterLab as they are, e.g. autograd-lab start -- --ServerApp.open_browser=False.")
    p.add_argument("--dir", type=Path, default=Path("autograd_lab_work"),
                   help="working folder (default: ./autograd_lab_work)")
    p.add_argument("--course", type=Path, default=None,
                   help="folder of course notebooks (default: course/ of the checkout)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser tab")
    p.add_argument("--port", type=port_number, default=None,
                   help="port for JupyterLab (default: 8888, or the next free one)")
    p.add_argument("--ip", default=None,
                   help="address JupyterLab listens on (default: localhost)")
    p.add_argument("--update", action="store_true",
                   help="write the course's newer version of a notebook beside yours, as "
                        "NAME.new.ipynb (yours is never changed)")
    # what follows `--` is not parsed here: main() hands it over as `passthrough`
    p.set_defaults(func=run, passthrough=[], takes_passthrough=True)


def run(args: argparse.Namespace) -> int:
    from ..learner.start import start
    return start(args.dir, course=args.course, open_browser=not args.no_browser, port=args.port,
                 ip=args.ip, jupyter_args=args.passthrough, update_notebooks=args.update)
