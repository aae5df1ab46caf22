"""A tiny HTTP server on 127.0.0.1 that answers by a handler function (for protocol tests)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Handler = Callable[[str, str, dict[str, Any]], tuple[int, Any]]
"""(method, path, json body) -> (status, json reply)."""


@contextmanager
def loopback(handler: Handler) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Serve ``handler`` on a free loopback port; yield (base URL, recorded requests)."""
    requests: list[dict[str, Any]] = []

    class _H(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw.strip() else {}
            requests.append(
                {
                    "method": self.command,
                    "path": self.path,
                    "body": body,
                    "headers": dict(self.headers),
                }
            )
            status, reply = handler(self.command, self.path, body)
            data = json.dumps(reply).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up first (timeout tests)

        do_GET = do_POST = _serve

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), _H)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requests
    finally:
        server.shutdown()
        server.server_close()


def chat_completion(content: str) -> dict[str, Any]:
    """An OpenAI chat-completions reply carrying ``content``."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }
