"""A stand-in for ``python -m vllm.entrypoints.openai.api_server``: the arguments the plugin passes, vLLM's routes.

It serves a transformers folder through the test suite's vLLM-compatible completions server
(``tests/conformance/runner/server.py``), adds vLLM's ``/health`` and ``/version``, and leaves a ``vllm_dist_*`` file in
its temporary folder as vLLM does. So that tests can see what the plugin did with it, each start writes its process id,
arguments and a few environment variables to a file in ``$STAND_IN_VLLM_STARTS``; ``$STAND_IN_VLLM_DELAY`` seconds
are spent on every completion (a run that lasts long enough to be interrupted).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[6]
VERSION = "0.0.0+stand-in"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--served-model-name", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args, rest = parser.parse_known_args(argv)
    starts = os.environ.get("STAND_IN_VLLM_STARTS")
    if starts:
        record = {
            "pid": os.getpid(),
            "argv": argv,
            "environment": {name: os.environ.get(name) for name in ("TMPDIR", "VLLM_HOST_IP", "CUDA_VISIBLE_DEVICES")},
        }
        Path(starts, f"{os.getpid()}.json").write_text(json.dumps(record))
    Path(tempfile.mkstemp(prefix="vllm_dist_")[1]).write_text("stand-in")  # as vLLM leaves one per start
    sys.path.insert(0, str(REPOSITORY))
    from tests.conformance.runner import server

    engine = server.Engine(Path(args.model))  # a folder that cannot load ends the process here, as vLLM's would
    server.NAME = args.served_model_name  # what GET /v1/models lists
    delay = float(os.environ.get("STAND_IN_VLLM_DELAY") or 0)
    served = server.handler(engine)

    class Handler(served):  # type: ignore[misc, valid-type]
        def do_GET(self) -> None:
            if self.path == "/health":
                self._send(200, {})
            elif self.path == "/version":
                self._send(200, {"version": VERSION})
            else:
                super().do_GET()

        def do_POST(self) -> None:
            time.sleep(delay)
            super().do_POST()

    print(f"unused arguments: {rest}", flush=True)
    ThreadingHTTPServer((args.host, args.port), Handler).serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
