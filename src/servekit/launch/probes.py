"""What ``verify`` asks a running OpenAI-compatible server, one probe per question.

Each probe returns ``Probe(name, ok, detail)`` and never raises: a refused connection, a bad
status or a malformed reply is a failed probe whose detail says what came back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import httpx
import jsonschema

from servekit.records import record

CHAT_PROMPT = [{"role": "user", "content": "Say hello."}]
MAX_TOKENS = 8
SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"],
          "additionalProperties": False}
TOOL = {"type": "function", "function": {
    "name": "get_time", "description": "The current time in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}


@record
class Probe:
    name: str
    ok: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@record
class Target:
    """The server probed: its base URL, the model name it serves, its readiness path."""

    url: str
    served_name: str
    readiness_path: str = "/health"
    timeout: float = 120.0
    metrics_url: str | None = None
    """Where ``/metrics`` is served when not beside the API (MAX: a port of its own)."""


def _guarded(name: str, body: Callable[[], Probe]) -> Probe:
    try:
        return body()
    except httpx.HTTPError as exc:
        return Probe(name, False, f"{type(exc).__name__}: {exc}")
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        return Probe(name, False, f"unexpected reply: {type(exc).__name__}: {exc}")


def _chat(target: Target, **extra: Any) -> httpx.Response:
    body = {"model": target.served_name, "messages": CHAT_PROMPT, "temperature": 0, "max_tokens": MAX_TOKENS,
            **extra}
    return httpx.post(f"{target.url}/v1/chat/completions", json=body, timeout=target.timeout)


def _status_problem(response: httpx.Response) -> str | None:
    if response.status_code == 200:
        return None
    return f"HTTP {response.status_code}: {response.text[:300]}"


def probe_health(target: Target) -> Probe:
    def body() -> Probe:
        response = httpx.get(f"{target.url}{target.readiness_path}", timeout=10)
        return Probe("health", response.status_code == 200, f"GET {target.readiness_path} -> {response.status_code}")
    return _guarded("health", body)


def probe_models(target: Target) -> Probe:
    def body() -> Probe:
        response = httpx.get(f"{target.url}/v1/models", timeout=30)
        if problem := _status_problem(response):
            return Probe("models", False, problem)
        ids = [m.get("id") for m in response.json().get("data", [])]
        ok = target.served_name in ids
        return Probe("models", ok, f"/v1/models lists {ids}" + ("" if ok else f"; {target.served_name!r} missing"))
    return _guarded("models", body)


def probe_chat(target: Target) -> Probe:
    """Two identical requests at temperature 0: both return text, the same text."""
    def body() -> Probe:
        texts = []
        for _ in range(2):
            response = _chat(target)
            if problem := _status_problem(response):
                return Probe("chat", False, problem)
            texts.append(response.json()["choices"][0]["message"]["content"] or "")
        if not texts[0]:
            return Probe("chat", False, "the completion returned no text")
        same = texts[0] == texts[1]
        return Probe("chat", same, f"returned {texts[0]!r}" + ("; identical twice" if same else
                                                               f"; then {texts[1]!r} (not deterministic)"))
    return _guarded("chat", body)


def probe_stream(target: Target) -> Probe:
    def body() -> Probe:
        chunks, done = 0, False
        body_json = {"model": target.served_name, "messages": CHAT_PROMPT, "temperature": 0,
                     "max_tokens": MAX_TOKENS, "stream": True}
        with httpx.stream("POST", f"{target.url}/v1/chat/completions", json=body_json,
                          timeout=target.timeout) as response:
            if response.status_code != 200:
                return Probe("stream", False, f"HTTP {response.status_code}")
            for line in response.iter_lines():
                if line.startswith("data:"):
                    payload = line[5:].strip()
                    done = done or payload == "[DONE]"
                    chunks += payload != "[DONE]"
        ok = chunks > 0 and done
        return Probe("stream", ok, f"{chunks} chunks" + (", then [DONE]" if done else ", no [DONE]"))
    return _guarded("stream", body)


def probe_tools(target: Target, parser: str | None) -> Probe:
    """A request with tools and ``tool_choice: auto`` is accepted only where a tool parser is active."""
    def body() -> Probe:
        response = _chat(target, tools=[TOOL], tool_choice="auto")
        if problem := _status_problem(response):
            return Probe("tool_calling", False, problem)
        message = response.json()["choices"][0]["message"]
        calls = len(message.get("tool_calls") or [])
        return Probe("tool_calling", True, f"accepted with tool parser {parser}; {calls} tool call(s)")
    return _guarded("tool_calling", body)


def probe_reasoning(target: Target, parser: str | None) -> Probe:
    def body() -> Probe:
        response = _chat(target)
        if problem := _status_problem(response):
            return Probe("reasoning", False, problem)
        message = response.json()["choices"][0]["message"]
        field = next((k for k in ("reasoning", "reasoning_content") if k in message), None)
        leaked = "</think>" in (message.get("content") or "")
        ok = field is not None and not leaked
        detail = f"reasoning parser {parser}: field {field!r}"
        detail += "; a </think> tag leaked into content" if leaked else ""
        return Probe("reasoning", ok, detail)
    return _guarded("reasoning", body)


def probe_structured(target: Target) -> Probe:
    def body() -> Probe:
        fmt = {"type": "json_schema", "json_schema": {"name": "probe", "schema": SCHEMA}}
        response = _chat(target, response_format=fmt, max_tokens=64)
        if problem := _status_problem(response):
            return Probe("structured_output", False, problem)
        text = response.json()["choices"][0]["message"]["content"] or ""
        try:
            jsonschema.validate(json.loads(text), SCHEMA)
        except (ValueError, jsonschema.ValidationError) as exc:
            return Probe("structured_output", False, f"reply {text[:120]!r} does not validate: {str(exc)[:200]}")
        return Probe("structured_output", True, f"reply {text!r} validates against the schema sent")
    return _guarded("structured_output", body)
