"""A stand-in process for the fast several-process tests: a tiny OpenAI-shaped HTTP server.

It stands in for an engine server, the router or a companion because none of them can start
within the fast suite (a vLLM CPU server takes minutes to start; the router and companions live
in environments the fast suite does not install). The engine tier (``-m engine``) starts the real
ones. It accepts any options (``--host``/``--port`` say where it listens), writes what it was
started with and when into its log, and can be told to start slowly, to exit before it is
ready, or to ignore SIGINT.

    python standin_server.py --role ROLE [--ready-after S] [--exit-code N] [--stubborn] [ANY OPTIONS...]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PATH = os.path.abspath(__file__)


def _handler(role: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            return

        def _send(self, status: int, body: str, kind: str = "application/json") -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            if self.path in ("/health", "/readiness"):
                self._send(200, json.dumps({"role": role}))
            elif self.path == "/v1/models":
                self._send(200, json.dumps({"data": [{"id": "tiny", "object": "model"}]}))
            elif self.path == "/metrics":
                self._send(200, "# TYPE standin_up gauge\nstandin_up 1.0\n", "text/plain")
            else:
                self._send(404, "{}")

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("content-length") or 0))
            message = {"role": "assistant", "content": f"hello from {role}"}
            self._send(200, json.dumps({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}))

    return Handler


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--role", default="server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int)
    parser.add_argument("--ready-after", type=float, default=0.0)
    parser.add_argument("--exit-code", type=int)
    parser.add_argument("--stubborn", action="store_true")
    known, _ = parser.parse_known_args(argv)
    print(json.dumps({"started": time.time(), "argv": argv, "pid": os.getpid(), "pgid": os.getpgid(0)}), flush=True)
    if known.stubborn:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    time.sleep(known.ready_after)
    if known.exit_code is not None:
        print(f"{known.role}: boom, exiting with {known.exit_code}", flush=True)
        return known.exit_code
    server = ThreadingHTTPServer((known.host, known.port), _handler(known.role))
    print(json.dumps({"ready": time.time()}), flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
