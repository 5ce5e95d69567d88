"""``pypads ui``: MLflow's UI on the store runs go to.

The command replaces itself with ``python -m mlflow ui`` (``exec``), so that Ctrl-C and
a job manager's SIGTERM reach the server itself and nothing is left running behind it.
"""

from __future__ import annotations

import argparse
import os
import sys

from pypads.cli import CliError
from pypads.cli.common import add_uri_argument, command_store

DESCRIPTIONS = {
    "ui": "Start MLflow's UI on the store runs go to (pypads' embedded store by default) and print "
          "its URL. Ctrl-C stops it. A tracking server is not started again: its URL is printed.",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_uri_argument(parser)
    parser.add_argument("--port", type=int, default=5000, help="port to listen on (default: 5000)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default: 127.0.0.1, this machine only)")
    # One person's UI: MLflow's default of 4 workers takes 4 times as long to start.
    parser.add_argument("--workers", type=int, default=1, help="server processes (default: 1)")


def main(options: argparse.Namespace) -> int:
    store = command_store(options)
    if not store.is_local:
        # A tracking server has a UI of its own: starting another on it would not work.
        print(f"runs go to a tracking server: open {store.display_uri} in a browser")
        return 0
    if not 0 < options.port < 65536:
        raise CliError(f"--port {options.port}: not a port number (1-65535)")
    if options.workers < 1:
        raise CliError(f"--workers {options.workers}: must be at least 1")
    command = [sys.executable, "-m", "mlflow", "ui", "--backend-store-uri", store.tracking_uri,
               "--host", options.host, "--port", str(options.port), "--workers", str(options.workers)]
    if store.artifact_root is not None:
        # Experiments pypads created name their artifact folder already; this is for
        # ones created from the UI, which would otherwise go to ./mlartifacts.
        command += ["--default-artifact-root", store.artifact_root.as_uri()]
    host = f"[{options.host}]" if ":" in options.host else options.host
    print(f"MLflow UI for {store.display_uri}: http://{host}:{options.port} (Ctrl-C stops it)", flush=True)
    try:
        os.execv(sys.executable, command)
    except OSError as error:
        raise CliError(f"cannot start the MLflow UI ({' '.join(command[:4])}): {error}") from None
    return 1  # not reached: exec replaced this process
