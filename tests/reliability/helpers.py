"""Shared pieces for the reliability suite: generated corpora and secrets shaped like real ones."""

from __future__ import annotations

import json
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
