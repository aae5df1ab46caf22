"""A tiny HTTP server on 127.0.0.1 that answers by a handler function (for protocol tests)."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

Handler = Callable[[str, str, dict[str, Any]], tuple[int, Any]]
"""(method, path, json body) -> (status, json reply)."""


@contextmanager
def loopback(handler: Handler, port: int = 0) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Serve ``handler`` on a loopback port (default: a free one); yield (base URL, requests)."""
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
            if isinstance(reply, Events):
                data = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in reply)
                data += b"data: [DONE]\n\n"
                kind = "text/event-stream"
            else:
                data, kind = json.dumps(reply).encode(), "application/json"
            try:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up first (timeout tests)

        do_GET = do_POST = _serve

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), _H)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requests
    finally:
        server.shutdown()
        server.server_close()


class Events(list[dict[str, Any]]):
    """A reply sent as server-sent events (``data: {...}`` each, then ``data: [DONE]``)."""


def streamed_completion(content: str) -> Events:
    """An OpenAI chat-completions reply streamed in chunks of one word, as ``stream: true``
    asks (role first, then the content, then the finish reason)."""
    words = [w + " " for w in content.split(" ")]
    words[-1] = words[-1].rstrip(" ")

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [choice],
        }

    return Events(
        [chunk({"role": "assistant", "content": ""})]
        + [chunk({"content": w}) for w in words]
        + [chunk({}, "stop")]
    )


def chat_completion(content: str, top: dict[str, float] | None = None) -> dict[str, Any]:
    """An OpenAI chat-completions reply carrying ``content``.

    ``top`` (token -> log-probability) adds the first token's ``logprobs`` as OpenAI and
    llama.cpp return them.
    """
    logprobs = None
    if top is not None:
        alternatives = [{"token": t, "logprob": lp, "bytes": None} for t, lp in top.items()]
        first = {"token": content, "logprob": max(top.values()), "bytes": None}
        logprobs = {"content": [first | {"top_logprobs": alternatives}], "refusal": None}
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
                "logprobs": logprobs,
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }


def scripted_model(answer: str, standalone: str = "", verdict_score: float = 0.9) -> Handler:
    """An OpenAI-compatible chat endpoint that plays a well-behaved CRAG model.

    ``answer`` should cite its document (``"... [S1]"``) as the generator is asked to.

    Yes/no verdicts are "yes" with log-probabilities giving P(yes) = ``verdict_score``;
    structured calls are answered from the requested JSON schema's fields (every judge says
    yes); free-text calls by the prompt's wording: a search query, a standalone question, or
    ``answer`` for the generator.
    """

    def handler(method: str, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        if not path.endswith("/chat/completions"):
            return 404, {"error": {"message": f"no route {path}"}}
        text = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
        if body.get("tools"):  # the agent loop: search once, then answer
            return 200, loop_step(body, text, answer)
        if text.rstrip().endswith("Reply with one word: yes or no."):
            top = {"yes": math.log(verdict_score), "no": math.log(1 - verdict_score)}
            return 200, chat_completion("yes", top=top)
        schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema", {})
        fields = set(schema.get("properties", {}))
        if fields:
            reply = {f: "yes" if f in JUDGE_VERDICTS else "" for f in fields}
            return 200, chat_completion(json.dumps(reply))
        if "You write search queries" in text:
            return 200, chat_completion(text.split("Question:", 1)[1].splitlines()[0].strip())
        if "follow-up question" in text.lower():
            return 200, chat_completion(standalone)
        if body.get("stream"):
            return 200, streamed_completion(answer)
        return 200, chat_completion(answer)

    return handler


def loop_step(body: dict[str, Any], text: str, answer: str) -> dict[str, Any]:
    """The agent loop's step as a tool-calling model takes it: a ``search`` for the question
    first (a ``tool_calls`` reply), then ``answer`` once a tool's result is in the messages."""
    if any(m.get("role") == "tool" for m in body.get("messages", [])):
        return chat_completion(answer)
    question = text.rsplit("Question:", 1)[-1].strip().splitlines()[0]
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "search", "arguments": json.dumps({"query": question})},
    }
    reply = chat_completion("")
    reply["choices"][0]["message"] |= {"content": None, "tool_calls": [call]}
    reply["choices"][0]["finish_reason"] = "tool_calls"
    return reply


JUDGE_VERDICTS = {"contains_answer", "grounded", "answers_question"}


@contextmanager
def langsmith_recorder() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A loopback LangSmith endpoint: ``GET /info`` is 404 (no optional features), run
    ingestion (``POST /runs/multipart``, or ``/runs/batch``) is accepted and recorded.

    Yields (URL, requests); each request has ``method``, ``path``, ``raw`` (bytes) and
    ``parts``: (part name, decoded JSON) for multipart bodies.
    """
    import email.parser
    import email.policy

    requests: list[dict[str, Any]] = []

    class _H(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            entry: dict[str, Any] = {"method": self.command, "path": self.path, "raw": raw}
            ctype = self.headers.get("Content-Type", "")
            if ctype.startswith("multipart/"):
                message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                    b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + raw
                )
                entry["parts"] = [
                    (
                        part.get_param("name", header="content-disposition"),
                        json.loads(cast(bytes, part.get_payload(decode=True)) or b"null"),
                    )
                    for part in message.iter_parts()
                ]
            requests.append(entry)
            status = 404 if self.path.startswith("/info") else 202
            data = b'{"detail": "Not Found"}' if status == 404 else b"{}"
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = _serve

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), _H)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requests
    finally:
        server.shutdown()
        server.server_close()


def traced_runs(requests: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Runs reassembled from multipart ingestion parts (``post.<id>``, ``patch.<id>.outputs``)."""
    runs: dict[str, dict[str, Any]] = {}
    for request in requests:
        for name, value in request.get("parts", []):
            _op, run_id, *field = name.split(".")
            run = runs.setdefault(run_id, {})
            if field:
                run[field[0]] = value
            elif isinstance(value, dict):
                run.update(value)
    return runs
