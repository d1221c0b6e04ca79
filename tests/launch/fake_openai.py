"""A small OpenAI-compatible HTTP server on 127.0.0.1 for the probe-logic unit tests only.

It stands in for a real engine solely so the probes' own logic (status handling, parsing,
schema validation, streaming, metrics text) can be tested fast; the real engines are tested
in the engine tier (``-m engine``). ``behaviour`` switches what it gets wrong.
"""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

METRICS = """# HELP vllm:num_requests_running Running requests.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="tiny"} 0.0
# HELP vllm:prompt_tokens_total Prompt tokens.
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{model_name="tiny"} 42.0
"""


@dataclass
class Behaviour:
    served_name: str = "tiny"
    listed_name: str | None = None  # what /v1/models lists (default: served_name)
    reply: str = "hello"
    structured_reply: str = '{"ok": true}'
    tools_status: int = 200
    metrics: str = METRICS
    requests: list[dict] = field(default_factory=list)


def _handler(behaviour: Behaviour) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            return

        def _send(self, status: int, body: str, kind: str = "application/json") -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            if self.path == "/health":
                self._send(200, "")
            elif self.path == "/v1/models":
                name = behaviour.listed_name or behaviour.served_name
                self._send(200, json.dumps({"object": "list", "data": [{"id": name, "object": "model"}]}))
            elif self.path == "/metrics":
                self._send(200, behaviour.metrics, "text/plain")
            else:
                self._send(404, "{}")

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            behaviour.requests.append(body)
            if body.get("tools") and behaviour.tools_status != 200:
                self._send(behaviour.tools_status, json.dumps({"error": "tool choice auto needs a parser"}))
                return
            text = behaviour.structured_reply if body.get("response_format") else behaviour.reply
            if body.get("stream"):
                self._stream(text)
                return
            message = {"role": "assistant", "content": text, "reasoning": None, "tool_calls": []}
            self._send(200, json.dumps({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}))

        def _stream(self, text: str) -> None:
            chunks = [json.dumps({"choices": [{"delta": {"content": ch}}]}) for ch in text]
            body = "".join(f"data: {c}\n\n" for c in chunks) + "data: [DONE]\n\n"
            self._send(200, body, "text/event-stream")

    return Handler


@contextmanager
def fake_server(behaviour: Behaviour | None = None) -> Iterator[tuple[str, Behaviour]]:
    behaviour = behaviour or Behaviour()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(behaviour))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", behaviour
    finally:
        server.shutdown()
        server.server_close()
