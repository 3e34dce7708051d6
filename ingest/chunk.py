"""Sentence-aligned chunks with overlap (sentences come from the shared toolkit, paperbot/text.py).

Chunks are sized for the embedding model's window (all-MiniLM-L6-v2 reads 256
word pieces and truncates the rest), so no text is silently dropped: a chunk
holds whole sentences up to ``max_tokens``, and the next chunk starts with the
last ``overlap`` sentences of the previous one. A single sentence longer than the
window is cut at word boundaries.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from paperbot.text import Span, split_sentences

DEFAULT_MAX_TOKENS = 200
DEFAULT_OVERLAP = 1


@dataclass(frozen=True)
class Chunk:
    index: int
    start: int
    end: int
    text: str


def approx_tokens(text: str) -> int:
    """Word-piece estimate used when no tokenizer is at hand (≈1.35 pieces per word)."""
    return int(len(text.split()) * 1.35) + 1


def chunk_text(
    text: str,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    overlap: int = DEFAULT_OVERLAP,
    count_tokens: Callable[[str], int] = approx_tokens,
    sentences: list[Span] | None = None,
) -> list[Chunk]:
    """Split `text` into sentence-aligned chunks whose spans cover every character of it.

    `sentences` are `split_sentences(text)` when the caller has them already.
    """
    count_tokens = functools.lru_cache(maxsize=None)(count_tokens)  # each sentence is measured twice below
    units = []
    for s in split_sentences(text) if sentences is None else sentences:
        units.extend(_split_long(text, s, max_tokens, count_tokens))
    if not units:
        return []
    sizes = [count_tokens(text[u.start:u.end]) for u in units]
    chunks: list[Chunk] = []
    i = 0
    while i < len(units):
        j, total = i, 0
        while j < len(units) and (j == i or total + sizes[j] <= max_tokens):
            total += sizes[j]
            j += 1
        start, end = units[i].start, units[j - 1].end
        chunks.append(Chunk(len(chunks), start, end, text[start:end]))
        if j >= len(units):
            break
        # Step back `overlap` sentences, but always move forward.
        i = max(j - overlap, i + 1)
    return chunks


def _split_long(text: str, span: Span, max_tokens: int, count_tokens: Callable[[str], int]) -> list[Span]:
    if count_tokens(text[span.start:span.end]) <= max_tokens:
        return [span]
    pieces: list[Span] = []
    words = [(m.start() + span.start, m.end() + span.start) for m in re.finditer(r"\S+", text[span.start:span.end])]

    def cut(lo: int, hi: int) -> None:
        # Words that split into many pieces (ids, numbers, formulas) can overflow a group: halve it.
        piece = Span(words[lo][0], words[hi - 1][1])
        if hi - lo == 1 or count_tokens(text[piece.start:piece.end]) <= max_tokens:
            pieces.append(piece)
        else:
            cut(lo, (lo + hi) // 2)
            cut((lo + hi) // 2, hi)

    # Words of ~max_tokens/1.35 fit a window; cut conservatively to stay under it.
    step = max(1, int(max_tokens / 1.6))
    for k in range(0, len(words), step):
        cut(k, min(k + step, len(words)))
    return pieces
