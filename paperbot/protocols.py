"""The seams between the layers, as small Protocols that the real parts and the test fakes both implement.

    TextEmbedder   texts → unit vectors (ingest/embed.py `Embedder`; tests/fakes.py `HashEmbedder`)
    ChatModel      an OpenAI-compatible chat endpoint (retrieval/llm.py `LLMClient`)
    PaperLibrary   what answering a question needs of the corpus (retrieval/library.py `Library`)

Code that receives one of these calls it as it is: no `hasattr` or `getattr` about what it was given.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from paperbot.records import Paper
    from retrieval.filters import Filters
    from retrieval.llm import Completion
    from retrieval.types import SearchResult


class WordPieces(NamedTuple):
    """A text's word pieces as its model's tokenizer gives them, no special tokens, nothing cut."""

    ids: np.ndarray  # int64, one per piece
    offsets: np.ndarray  # int64 (pieces, 2): each piece's characters, text[start:end]


@runtime_checkable
class TextEmbedder(Protocol):
    """Encodes texts as unit vectors; `name` is pinned to the stores it writes (with `dimension`)."""

    name: str

    @property
    def dimension(self) -> int: ...

    @property
    def max_tokens(self) -> int: ...

    @property
    def device(self) -> str:
        """Where it runs: cpu, cuda or mps."""
        ...

    def count_tokens(self, text: str) -> int: ...

    def word_pieces(self, texts: list[str]) -> list[WordPieces | None] | None:
        """Each text's word pieces, when the pieces of a stretch of text between two whitespace characters are
        those of the whole text there (so a chunk's pieces are its abstract's); else None, for all texts or
        for one."""
        ...

    def encode(self, texts: list[str], batch_size: int | None = None) -> np.ndarray: ...

    def encode_spans(self, texts: list[str], spans: list[list[tuple[int, int]]],
                     batch_size: int | None = None,
                     pieces: list[WordPieces] | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
        """The texts' vectors, and for each text one vector per character span, read in its context; `pieces`
        are the texts' `word_pieces` when the caller has them."""
        ...

    def encode_tokens(self, texts: list[str]) -> list[tuple[list[tuple[int, int]], np.ndarray]]:
        """Per text, the character span and unit vector of each of its tokens, read in context."""
        ...


@runtime_checkable
class ChatModel(Protocol):
    """A chat-completions endpoint with a circuit breaker: `available` is False while it cools down."""

    @property
    def model(self) -> str: ...

    @property
    def available(self) -> bool: ...

    @property
    def secrets(self) -> tuple[str, ...]:
        """What must never be shown or logged (the configured API key): redacted from every reply."""
        ...

    def cooldown_left(self) -> float: ...

    async def chat(self, messages: list[dict], *, on_delta: Callable[[str], Awaitable[None] | None] | None = None,
                   max_tokens: int | None = None, temperature: float | None = None,
                   stream: bool | None = None) -> Completion: ...


@runtime_checkable
class PaperLibrary(Protocol):
    """The corpus as question answering sees it: search, papers by id, and the embedder it searches with."""

    @property
    def embedder(self) -> TextEmbedder: ...

    def search(self, query: str, k: int | None = None, filters: Filters | None = None,
               within: Sequence[str] | None = None) -> SearchResult:
        """Papers for `query` (a Chinese one searched in English), best first."""
        ...

    def paper(self, paper_id: str) -> Paper | None: ...
