"""The model client against a real HTTP server on loopback that answers like a chat endpoint."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from issuebench.errors import IssuebenchError
from issuebench.setup.model import ModelClient, parse_fix


class _ChatServer:
    def __init__(self, answer: str, status: int = 200) -> None:
        self.answer, self.status, self.requests = answer, status, []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": outer.answer}}]})
                self.send_response(outer.status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(payload.encode())

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def server() -> Iterator[_ChatServer]:
    srv = _ChatServer('Sure:\n```json\n{"packages_add": ["six"], "python": "3.9", "reason": "six"}\n```')
    yield srv
    srv.server.shutdown()


def test_proposes_a_fix_over_http(server: _ChatServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ISSUEBENCH_MODEL_API_KEY", "k123")
    client = ModelClient.from_arg(f"{server.url}/tiny-model")
    assert client.model == "tiny-model"
    fix = client.propose_fix(error_excerpt="No module named 'six'", files={"setup.py": "setup()"},
                             spec_json="{}", history=[])
    assert fix is not None and fix.packages_add == ["six"] and fix.python == "3.9"
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer k123"
    assert request["body"]["model"] == "tiny-model"
    assert "No module named 'six'" in request["body"]["messages"][1]["content"]


def test_http_error_is_an_issuebench_error() -> None:
    srv = _ChatServer("{}", status=500)
    try:
        with pytest.raises(IssuebenchError, match="HTTP 500"):
            ModelClient(srv.url, "m").chat([{"role": "user", "content": "x"}])
    finally:
        srv.server.shutdown()


def test_parse_fix_ignores_junk_and_bad_fields() -> None:
    assert parse_fix("no json here") is None
    assert parse_fix('{"reason": "nothing to do"}') is None
    fix = parse_fix('{"python": "three", "packages_add": "attrs", "install": ["pip install -e ."]}')
    assert fix.python is None and fix.packages_add == ["attrs"] and fix.install == ["pip install -e ."]


def test_model_argument_forms() -> None:
    assert ModelClient.from_arg("http://h:1/v1#org/model").model == "org/model"
    assert ModelClient.from_arg("http://h:1/v1/org/model").base_url == "http://h:1/v1"
    with pytest.raises(IssuebenchError):
        ModelClient.from_arg("not-a-url")
