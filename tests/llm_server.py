"""The one scripted OpenAI-compatible endpoint for tests: a real HTTP server on loopback."""

from __future__ import annotations

import collections
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def chunk(content: str | None = None, finish: str | None = None, usage: dict | None = None) -> dict:
    out: dict = {"object": "chat.completion.chunk", "model": "scripted",
                 "choices": [{"index": 0, "delta": {"content": content} if content else {}, "finish_reason": finish}]}
    if usage is not None:
        out = {"object": "chat.completion.chunk", "model": "scripted", "choices": [], "usage": usage}
    return out


def completion(text: str, usage: dict | None = None) -> dict:
    return {"object": "chat.completion", "model": "scripted", "usage": usage or {},
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}


class Reply:
    """One scripted HTTP reply."""

    def __init__(self, status: int = 200, body: bytes = b"", content_type: str = "application/json",
                 headers: dict | None = None, delay: float = 0.0, sse: list[str] | None = None,
                 pause: float = 0.0) -> None:
        self.status, self.body, self.content_type = status, body, content_type
        self.headers, self.delay, self.sse, self.pause = headers or {}, delay, sse, pause

    @classmethod
    def json(cls, data, status: int = 200, **kw) -> Reply:
        return cls(status, json.dumps(data).encode(), **kw)

    @classmethod
    def answer(cls, text: str, usage: dict | None = None, model: str = "scripted") -> Reply:
        return cls.json(completion(text, usage) | {"model": model})

    @classmethod
    def error(cls, status: int, message: str, **kw) -> Reply:
        """An OpenAI-style error body (`{"error": {"message": …}}`) with `status`."""
        return cls.json({"error": {"message": message, "type": "invalid_request_error"}}, status, **kw)

    @classmethod
    def stream_error(cls, message: str, pieces: list[str] = ()) -> Reply:
        """A stream (HTTP 200) whose events, after `pieces`, carry an error object, as vLLM and OpenAI send."""
        events = [json.dumps(chunk(p)) for p in pieces] + [json.dumps({"error": {"message": message}}), "[DONE]"]
        return cls(sse=events, content_type="text/event-stream")

    @classmethod
    def recorded(cls, record: dict) -> Reply:
        """The reply a real server gave, from a recording (tests/data/llm_recordings): raw JSON or raw SSE lines."""
        if record.get("sse") is not None:
            lines = [line for line in record["sse"] if line.startswith("data:")]
            return cls(sse=[line[5:].strip() for line in lines], content_type="text/event-stream")
        raw = record["response"]
        return cls(body=(raw if isinstance(raw, str) else json.dumps(raw)).encode())

    @classmethod
    def stream(cls, pieces: list[str], *, done: bool = True, usage: dict | None = None,
               model: str = "scripted", pause: float = 0.0) -> Reply:
        """A streamed reply, one event per piece, `pause` seconds between events (a model writing)."""
        events = [json.dumps(chunk(p)) for p in pieces]
        if done:
            events.append(json.dumps(chunk(finish="stop")))
            if usage:
                events.append(json.dumps(chunk(usage=usage)))
            events.append("[DONE]")
        events = [e.replace('"model": "scripted"', json.dumps({"model": model})[1:-1]) for e in events]
        return cls(sse=events, content_type="text/event-stream", pause=pause)


class Endpoint:
    """A real HTTP server on 127.0.0.1 playing queued replies and recording every request.

    Replies come from the queue (`enqueue`), or, when `answer` is given, from
    `answer(path, headers) -> (status, JSON body)` for every request, GET or POST.
    """

    def __init__(self, answer: Callable[[str, dict], tuple[int, Any]] | None = None) -> None:
        self.replies: collections.deque[Reply] = collections.deque()
        self.requests: list[dict] = []  # {"method", "path", "headers", "body"}
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                self.do_POST()

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                endpoint.requests.append({"method": self.command, "path": self.path, "headers": dict(self.headers),
                                          "body": json.loads(raw) if raw else None})
                if answer is not None:
                    status, body = answer(self.path, dict(self.headers))
                    reply = Reply.json(body, status)
                else:
                    reply = endpoint.replies.popleft() if endpoint.replies else Reply.json({"error": "unscripted"}, 599)
                time.sleep(reply.delay)
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    if reply.sse is None:
                        self.send_header("Content-Length", str(len(reply.body)))
                        self.end_headers()
                        self.wfile.write(reply.body)
                        return
                    self.end_headers()  # no length: the stream ends when the connection closes
                    for event in reply.sse:
                        self.wfile.write(f"data: {event}\n\n".encode())
                        self.wfile.flush()
                        time.sleep(reply.pause)
                    self.close_connection = True
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        # A short poll: shutdown() waits for the loop's next poll (0.5 s by default, once per endpoint).
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    base_url = url

    def __enter__(self) -> Endpoint:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def enqueue(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
