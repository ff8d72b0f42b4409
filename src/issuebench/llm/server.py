"""A loopback HTTP server speaking the chat-completions API, answering from a replay script.

Tests and the demo point the real client (the `openai` package, over real HTTP) at it. It can
inject faults, one per request in order: "429" (rate limit, with Retry-After), "500", "502",
"503", "400" (a refused request, which is not retried), "slow:SECONDS" (answer late, to trip the
client's timeout), "drop" (close without answering), "ok". After the list runs out every request
is answered normally.

    with LoopbackServer(ReplayModel(script), faults=["429", "500"]) as server:
        model = OpenAIModel("replay", base_url=server.url)
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from issuebench.llm.replay import ReplayModel, usage_of


class LoopbackServer:
    def __init__(self, model: ReplayModel, *, faults: Iterable[str] = (), host: str = "127.0.0.1",
                 port: int = 0) -> None:
        self.model = model
        self._faults: deque[str] = deque(faults)
        self._lock = threading.Lock()
        self.requests = 0              # every request that reached the server
        self.answered = 0              # requests answered with a completion
        self.fault_log: list[str] = []
        self.api_keys: set[str] = set()  # bearer keys the requests carried: tests check they reach clients
        self._httpd = ThreadingHTTPServer((host, port), _handler(self))
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # a slow answer in flight never holds up stop()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> LoopbackServer:
        # A short poll interval: stop() returns at once instead of after half a second.
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="loopback-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def add_faults(self, faults: Iterable[str]) -> None:
        with self._lock:
            self._faults.extend(faults)

    def next_fault(self) -> str:
        with self._lock:
            self.requests += 1
            fault = self._faults.popleft() if self._faults else "ok"
            if fault != "ok":
                self.fault_log.append(fault)
            return fault

    def complete(self, body: dict[str, Any]) -> dict[str, Any] | None:
        messages = body.get("messages") or []
        scripted = self.model.pick(messages)
        if scripted is None:
            return None
        usage = usage_of(scripted, messages)
        with self._lock:
            self.answered += 1
            n = self.answered
        return {
            "id": f"chatcmpl-loopback-{n}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model") or self.model.name,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": scripted.content}}],
            "usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                      "total_tokens": usage.prompt_tokens + usage.completion_tokens},
        }


def _handler(server: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    """The request handler class bound to this server (http.server makes one handler per request)."""
    return type("Handler", (_Handler,), {"loopback": server})


class _Handler(BaseHTTPRequestHandler):
    """A POST to /chat/completions, in order: the bearer key noted -> the next injected fault, if
    any -> the scripted answer. GET /models lists the one model."""

    protocol_version = "HTTP/1.1"
    loopback: LoopbackServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests and the demo print enough
        pass

    def _send(self, code: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        blob = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(blob)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(blob)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": self.loopback.model.name, "object": "model"}]})
        else:
            self._send(404, {"error": {"message": "not found", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        self.loopback.api_keys.add(str(self.headers.get("Authorization") or "").removeprefix("Bearer "))
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": "not found", "type": "not_found"}})
            return
        if not self._injected(self.loopback.next_fault()):
            self._answer(raw)

    def _injected(self, fault: str) -> bool:
        """Play the fault; True when it was the whole reply (a slow answer still gets answered)."""
        if fault in ("400", "429", "500", "502", "503"):
            code = int(fault)
            headers = {"Retry-After": "0"} if code == 429 else None
            self._send(code, {"error": {"message": f"injected {code}", "type": "injected"}}, headers)
            return True
        if fault == "drop":
            self.close_connection = True
            self.connection.close()
            return True
        if fault.startswith("slow:"):
            time.sleep(float(fault.split(":", 1)[1]))
        return False

    def _answer(self, raw: bytes) -> None:
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
            return
        answer = self.loopback.complete(body)
        if answer is None:
            self._send(400, {"error": {"message": "no scripted answer", "type": "invalid_request_error"}})
            return
        try:
            self._send(200, answer)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout) while we were slow on purpose
