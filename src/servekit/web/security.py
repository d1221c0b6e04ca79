"""What every response of the web application carries, and what every request may send.

A strict Content-Security-Policy (scripts, styles and everything else from this origin only,
no inline code), no MIME sniffing, no framing, and request bodies of at most ``MAX_BODY``
bytes (413 otherwise: the body is read, up to the limit, before the application sees it, so
a missing or false Content-Length does not get past it).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

MAX_BODY = 64 * 1024
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def error_body(status: int, message: str) -> bytes:
    return json.dumps({"error": message, "status": status}).encode()


async def _reply_too_large(send: Send) -> None:
    body = error_body(413, f"request body over {MAX_BODY} bytes")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *HEADERS]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers") or []:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class SecurityMiddleware:
    """Adds the security headers to every response and caps request bodies."""

    def __init__(self, app: App, max_body: int = MAX_BODY) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _declared_length(scope)
        if declared is not None and declared > self.max_body:
            await _reply_too_large(send)
            return
        body = await _read_body(receive, self.max_body)
        if body is None:
            await _reply_too_large(send)
            return
        await self.app(scope, _replay(body, receive), _headed(send))


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole request body, or None once it passes ``limit`` bytes."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(parts)
        chunk = message.get("body") or b""
        size += len(chunk)
        if size > limit:
            return None
        parts.append(chunk)
        if not message.get("more_body"):
            return b"".join(parts)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def _headed(send: Send) -> Send:
    async def headed(message: Message) -> None:
        if message["type"] == "http.response.start":
            names = {name.lower() for name, _ in message.get("headers") or []}
            message["headers"] = [*(message.get("headers") or []), *(h for h in HEADERS if h[0] not in names)]
        await send(message)

    return headed
