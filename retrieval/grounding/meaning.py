"""Meaning: greedy token alignment of a sentence with the passages it cites (BERTScore precision), with the
share of its stemmed content words they contain."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from paperbot.text import GENERIC_WORDS, content_words, stem, word_spans
from retrieval.grounding.facts import STOP_STEMS, STOPWORDS, plain

if TYPE_CHECKING:
    from retrieval.grounding.passage import Passage

# Who says it, not what is said: "The authors describe IM as …", "In other words, …", "… are argued to …", "two
# issues raised by the authors". A passage states its claims without naming its authors, so these words are left out
# of what is matched (the facts are read with them).
_LEAD = (r"(?:in other words|notably|in short|put simply|taken together|overall|in this way|that is|"
         r"as the title (?:indicates|suggests|says))")
_FRAMING = re.compile(
    rf"^(?:{_LEAD}\b,?\s*)?"
    r"(?:(?:(?:the|its|their)\s+)?(?:authors?|paper|work|study|they)\s+(?:also\s+)?"
    r"(?:describ|say|said|present|report|claim|note|argu|stat|frame|characteri[sz]|highlight|position|call)\w*"
    r"\s+(?:(?:it|this|that|them|these|the method|their method)\s+)?(?:as\s+|that\s+)?)?", re.I)
_ATTRIBUTED = re.compile(
    r"(?<=\s)(?:is|are|was|were)\s+(?:argued|said|claimed|reported|framed)\s+(?:to\s+be\s+|to\s+)"
    r"|(?<=\s)(?:is|are|was|were)\s+(?:presented|described|framed|characteri[sz]ed|positioned)\s+as\s+"
    r"|,?\s*according to the authors,?|\s+(?:raised|identified|noted)\s+by\s+the\s+authors\b", re.I)


def unframed(bare: str) -> str:
    """`bare` without the words that say who claims it ("The authors say it is …" → "it is …")."""
    return " ".join(_ATTRIBUTED.sub(" ", _FRAMING.sub("", bare, count=1)).split()) or bare


TokenVectors = tuple[list[tuple[int, int]], np.ndarray]  # (character span of each token, unit vectors)


class TokenEncoder(Protocol):
    """What the check needs of an embedder (ingest/embed.Embedder): sentence vectors and token vectors."""

    def encode(self, texts: list[str]) -> np.ndarray: ...

    def encode_tokens(self, texts: list[str]) -> list[TokenVectors]: ...


class Meaning:
    """Greedy token alignment of a sentence with passages (BERTScore precision), plus stem coverage.

    The passages' token vectors are computed once per reply, on first use.
    """

    def __init__(self, passages: Sequence[Passage], encoder: TokenEncoder | None) -> None:
        self.passages = {p.n: p for p in passages}
        self.encoder = encoder
        self._tokens: dict[int, np.ndarray] | None = None

    def _passage_tokens(self) -> dict[int, np.ndarray]:
        if self._tokens is None:
            if self.encoder is None:
                raise ValueError("token alignment needs an encoder")
            ns = list(self.passages)
            rows = self.encoder.encode_tokens([f"{self.passages[n].label}: {plain(self.passages[n].text)}" for n in ns])
            self._tokens = {n: vectors for n, (_, vectors) in zip(ns, rows)}
        return self._tokens

    def sentence_tokens(self, bare: str) -> np.ndarray | None:
        """The unit vectors of the sentence's content tokens (stopwords, punctuation, citations left out)."""
        if self.encoder is None:
            return None
        bare = unframed(bare)
        ((spans, vectors),) = self.encoder.encode_tokens([bare])
        words = [(a, b, w.lower()) for a, b, w in word_spans(bare)]
        keep = []
        for k, (a, _) in enumerate(spans):
            word = next((w for s, e, w in words if s <= a < e), "")
            if word and word not in STOPWORDS and stem(word) not in STOP_STEMS and (len(word) > 1 or word.isdigit()):
                keep.append(k)
        return vectors[keep] if keep else None

    def score(self, bare: str, cited: Sequence[int], tokens: np.ndarray | None, asked: frozenset[str]) -> float:
        """Support of `bare` by the passages `cited` together, 0–1: mean of token alignment and stem coverage."""
        passages = [self.passages[n] for n in cited if n in self.passages]
        if not passages:
            return 0.0
        words = content_words(unframed(bare), ignore=GENERIC_WORDS)
        covered = frozenset().union(*(p.words for p in passages))
        words -= asked - covered  # the question's words count when the passage has them, else not at all
        lexical = len(words & covered) / len(words) if words else 0.0
        if tokens is None or self.encoder is None:
            return lexical
        table = self._passage_tokens()
        stack = np.concatenate([table[p.n] for p in passages if table[p.n].size])
        if not stack.size:
            return lexical
        aligned = float((tokens @ stack.T).max(axis=1).mean())
        return (lexical + aligned) / 2
