"""Deterministic stand-ins for the edges, used only where the real model is beside the point."""

from __future__ import annotations

import hashlib
import re

import numpy as np


class HashEmbedder:
    """A `paperbot.protocols.TextEmbedder`: bag-of-words vectors from hashed tokens; fast, deterministic,
    counts its work."""

    def __init__(self, name: str = "test-hash", dimension: int = 64) -> None:
        self.name = name
        self.dimension = dimension
        self.max_tokens = 256
        self.device = "cpu"
        self.encoded = 0

    def count_tokens(self, text: str) -> int:
        return len(text.split()) + 2

    def word_pieces(self, texts: list[str]) -> None:
        return None  # chunks are sized one text at a time

    def encode(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        self.encoded += len(texts)
        return self._vectors(texts)

    def _vectors(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for tok in re.findall(r"\w+", text.lower()):
                h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=4).digest(), "little")
                out[i, h % self.dimension] += 1.0
            norm = np.linalg.norm(out[i])
            out[i] = out[i] / norm if norm else out[i]
            if not norm:
                out[i, 0] = 1.0
        return out

    def encode_spans(self, texts: list[str], spans: list[list[tuple[int, int]]],
                     batch_size: int | None = None, pieces: None = None) -> tuple[np.ndarray, list[np.ndarray]]:
        """Each span encoded on its own (the real model pools it from the text's forward pass)."""
        pooled = [self._vectors([text[a:b] for a, b in text_spans]) for text, text_spans in zip(texts, spans)]
        return self.encode(texts), pooled

    def encode_tokens(self, texts: list[str]) -> list[tuple[list[tuple[int, int]], np.ndarray]]:
        """Each word a token, its vector its own hash (the real model reads it in context)."""
        out = []
        for text in texts:
            spans = [(m.start(), m.end()) for m in re.finditer(r"\w+", text)]
            out.append((spans, self._vectors([text[a:b] for a, b in spans]) if spans
                        else np.zeros((0, self.dimension), np.float32)))
        return out
