"""``HEAD`` answered for every path that answers ``GET``: the same status and headers (the
Content-Length of the body a GET would get), no body, as RFC 9110 section 9.3.2 asks
(https://www.rfc-editor.org/rfc/rfc9110#name-head). FastAPI routes declared with ``get`` answer
only GET, so the request is passed on as a GET and the body is dropped on the way out."""

from __future__ import annotations

from servekit.web.security import App, Message, Receive, Scope, Send


class HeadAsGet:
    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "HEAD":
            await self.app(scope, receive, send)
            return

        async def without_body(message: Message) -> None:
            if message.get("type") == "http.response.body":
                if message.get("more_body"):
                    return
                message = {"type": "http.response.body", "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, without_body)
