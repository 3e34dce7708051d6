"""BM25 over the stored chunks (bm25s), with a tokenizer that keeps what users type.

Acronyms and method names ("BMT", "NV-CoT") and exact numbers ("87.43%") are
kept as whole tokens next to their stemmed parts, so they are found as reliably
as paraphrases. The index is built in memory from the store's own chunks; every
process, embedded or talking to a Chroma server, rebuilds it when the store's
content version changes (retrieval/search.py).
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from functools import lru_cache

import numpy as np

log = logging.getLogger(__name__)

BM25_K1 = 0.9
BM25_B = 0.4
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*%?|[^\W\d_]+(?:[-'][^\W_]+)*|[^\W_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def tokenize(text: str) -> list[str]:
    """Lower-cased, stemmed word tokens plus whole compounds and numbers."""
    stem = _stemmer().stemWord
    stop = _stopwords()
    out: list[str] = []
    for m in _TOKEN.finditer(text.lower()):
        tok = m.group(0)
        if tok[0].isdigit():
            out.append(tok.rstrip("%"))
            continue
        if _CJK.search(tok):
            out.extend(c for c in tok if not c.isspace())
            continue
        if "-" in tok or "'" in tok:
            parts = re.split(r"[-']", tok)
            # The compound with its last part stemmed: "fine-tune" matches "fine-tuning".
            out.append("-".join(parts[:-1] + [stem(parts[-1])]))
            out.extend(stem(p) for p in parts if len(p) > 1 and p not in stop)
            continue
        if len(tok) > 1 and tok not in stop:
            out.append(stem(tok))
    return out


# Words that frame a question rather than name its subject ("how do people ...").
# Stored stemmed, as tokenize() emits them.
FRAMING_WORDS = frozenset({
    "how", "do", "doe", "what", "which", "who", "why", "when", "where", "peopl", "paper", "work", "method",
    "approach", "way", "research", "studi", "propos", "use", "someon", "anyon", "know", "tell", "find", "show",
    "explain",
})


def content_tokens(text: str) -> list[str]:
    """The tokens of a question that carry its subject (framing words dropped)."""
    return [t for t in tokenize(text) if t not in FRAMING_WORDS]


class KeywordIndex:
    """BM25 scores for every stored chunk, plus per-term document frequencies."""

    def __init__(self, chunk_ids: list[str], bm25, doc_freq: dict[str, int]) -> None:
        self.chunk_ids = chunk_ids
        self._bm25 = bm25
        self._df = doc_freq

    @classmethod
    def build(cls, chunk_ids: list[str], texts: list[str]) -> KeywordIndex:
        import bm25s

        # Documents as lists of vocabulary ids: millions of token strings would cost far more memory.
        vocab: dict[str, int] = {}
        docs = [[vocab.setdefault(tok, len(vocab)) for tok in tokenize(t) or ["\x00empty"]] for t in texts]
        bm25 = bm25s.BM25(k1=BM25_K1, b=BM25_B)
        if docs:
            bm25.index((docs, vocab), show_progress=False)
        df_ids = Counter(i for doc in docs for i in set(doc))
        return cls(list(chunk_ids), bm25, {tok: df_ids[i] for tok, i in vocab.items() if i in df_ids})

    def __len__(self) -> int:
        return len(self.chunk_ids)

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        """BM25 score of every chunk (aligned with chunk_ids)."""
        known = [t for t in query_tokens if t in self._df]
        if not known or not self.chunk_ids:
            return np.zeros(len(self.chunk_ids), dtype=np.float32)
        return np.asarray(self._bm25.get_scores(known), dtype=np.float32)

    def chunks_with(self, token: str) -> np.ndarray:
        """Indices (into chunk_ids) of the chunks that contain `token`."""
        tid = self._bm25.vocab_dict.get(token) if token in self._df else None
        if tid is None:
            return np.zeros(0, dtype=np.int64)
        # bm25s keeps scores as a sparse matrix with one column per vocabulary token.
        indptr, indices = self._bm25.scores["indptr"], self._bm25.scores["indices"]
        return np.asarray(indices[indptr[tid]:indptr[tid + 1]], dtype=np.int64)

    def df(self, token: str) -> int:
        """How many chunks contain `token`."""
        return self._df.get(token, 0)

    def idf(self, token: str) -> float:
        n = max(len(self.chunk_ids), 1)
        df = self._df.get(token, 0)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))
