"""Shared pieces for the reliability suite: generated corpora, stores, a scriptable LLM endpoint, secrets."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from ingest.parse import parse_file
from paperbot.settings import BUNDLED_CORPUS

# Shaped like the real thing, so that both the exact-value and the shape-based redaction are exercised.
DISCORD_TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GhIjKl.SeCrEtToKeNvAlUeAbCdEfGhIjKlMnOpQrStUv"
LLM_KEY = "sk-test-VerySecretKeyValue0123456789abcdef"


def bundled_papers():
    return [p for f in sorted(BUNDLED_CORPUS.iterdir()) for p in parse_file(f)]


def generate_corpus(path: Path, n: int) -> Path:
    """`n` distinct papers made from the bundled abstracts (JSON Lines with their own ids)."""
    base = bundled_papers()
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            p = base[i % len(base)]
            out.write(json.dumps({"id": f"gen{i:04d}", "title": f"Replication {i} of {p.label}",
                                  "abstract": f"Replication study number {i}. {p.abstract}"}) + "\n")
    return path


class Endpoint:
    """An OpenAI-compatible endpoint on loopback whose answers the test scripts: (status, JSON body)."""

    def __init__(self, answer: Callable[[str, dict], tuple[int, dict]]) -> None:
        self.requests: list[tuple[str, str, dict]] = []  # (method, path, headers)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self):
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                outer.requests.append((self.command, self.path, dict(self.headers)))
                status, body = answer(self.path, dict(self.headers))
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            do_GET = do_POST = _serve  # noqa: N815 - http.server's naming

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> Endpoint:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
