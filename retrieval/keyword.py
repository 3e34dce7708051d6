"""BM25 over the stored chunks, with a tokenizer that keeps what users type.

Acronyms and method names ("BMT", "NV-CoT") and exact numbers ("87.43%") are
kept as whole tokens next to their stemmed parts, so they are found as reliably
as paraphrases. The index is built from the store's own chunks when the store's
content version changes, and saved with the rest of the serving view beside the
store (retrieval/view.py), so a process that starts on an unchanged store reads it.
"""

from __future__ import annotations

import logging
import math
import re
import time
from array import array
from collections.abc import Callable, Iterable

import numpy as np

from paperbot.text import BM25_STOPWORDS, CJK_CHAR, stem_function

log = logging.getLogger(__name__)

REPEAT_SLICE = 4000  # chunks whose token owners are spelled out at a time when an index is finished
BM25_K1 = 0.9
BM25_B = 0.4
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*%?|[^\W\d_]+(?:[-'][^\W_]+)*|[^\W_]+")


def tokenize(text: str) -> list[str]:
    """Lower-cased, stemmed word tokens plus whole compounds and numbers."""
    stem, stop = stem_function(), BM25_STOPWORDS
    out: list[str] = []
    for word in _TOKEN.findall(text.lower()):
        out.extend(_tokens_of(word, stem, stop))
    return out


def _tokens_of(tok: str, stem: Callable[[str], str], stop: frozenset[str]) -> tuple[str, ...]:
    """The tokens of one lower-cased word, number or compound matched by _TOKEN (`tokenize` word by word)."""
    if tok[0].isdigit():
        return (tok.rstrip("%"),)
    if CJK_CHAR.search(tok):
        return tuple(c for c in tok if not c.isspace())
    if "-" in tok or "'" in tok:
        parts = re.split(r"[-']", tok)
        # The compound with its last part stemmed: "fine-tune" matches "fine-tuning".
        return ("-".join(parts[:-1] + [stem(parts[-1])]), *(stem(p) for p in parts if len(p) > 1 and p not in stop))
    if len(tok) > 1 and tok not in stop:
        return (stem(tok),)
    return ()


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
    """BM25 (Lucene's variant, as bm25s scores it) over every stored chunk, held as flat arrays.

    Each term's postings (the chunks holding it and their precomputed BM25 weights) are
    contiguous, so a query adds a few slices. The index is built from token ids packed in
    one array, never from per-chunk lists of Python objects: at 56,000 chunks those cost
    hundreds of MB on the way and leave the heap fragmented for the life of the process.
    """

    def __init__(self, chunk_ids: list[str], vocab: dict[str, int], indptr: np.ndarray, postings: np.ndarray,
                 weights: np.ndarray) -> None:
        self.chunk_ids = chunk_ids
        self._vocab = vocab
        self._indptr = indptr  # term id -> its postings' range
        self._postings = postings  # chunk indices, grouped by term
        self._weights = weights  # BM25 weight of the term in that chunk

    @classmethod
    def build(cls, chunk_ids: list[str], texts: Iterable[str]) -> KeywordIndex:
        builder = KeywordBuilder()
        for text in texts:
            builder.add(text)
        return builder.finish(chunk_ids)

    def __len__(self) -> int:
        return len(self.chunk_ids)

    @property
    def indptr(self) -> np.ndarray:
        return self._indptr

    @property
    def postings(self) -> np.ndarray:
        return self._postings

    @property
    def weights(self) -> np.ndarray:
        return self._weights

    def terms(self) -> list[str]:
        """The vocabulary in term-id order (what a saved view stores to rebuild `vocab`)."""
        out = [""] * len(self._vocab)
        for term, tid in self._vocab.items():
            out[tid] = term
        return out

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        """BM25 score of every chunk (aligned with chunk_ids); a repeated query term counts again."""
        out = np.zeros(len(self.chunk_ids), dtype=np.float32)
        for token in query_tokens:
            tid = self._vocab.get(token)
            if tid is not None:
                lo, hi = self._indptr[tid], self._indptr[tid + 1]
                out[self._postings[lo:hi]] += self._weights[lo:hi]  # a term's chunks are distinct
        return out

    def chunks_with(self, token: str) -> np.ndarray:
        """Indices (into chunk_ids) of the chunks that contain `token`."""
        tid = self._vocab.get(token)
        if tid is None:
            return np.zeros(0, dtype=np.int64)
        return self._postings[self._indptr[tid]:self._indptr[tid + 1]].astype(np.int64)

    def df(self, token: str) -> int:
        """How many chunks contain `token`."""
        tid = self._vocab.get(token)
        return 0 if tid is None else int(self._indptr[tid + 1] - self._indptr[tid])

    def idf(self, token: str) -> float:
        n = max(len(self.chunk_ids), 1)
        df = self.df(token)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))


class KeywordBuilder:
    """Collects chunks' token ids one chunk at a time; `finish` turns them into a KeywordIndex."""

    def __init__(self) -> None:
        self._vocab: dict[str, int] = {}
        self._tokens = array("i")  # every chunk's token ids, one after the other
        self._lengths = array("i")  # tokens per chunk
        # Each distinct word of the text, tokenized once, as token ids (words recur: a 20,000-paper
        # corpus has about 100,000 distinct ones in 4.5 million). Gone with the builder.
        self._ids_of: dict[str, tuple[int, ...]] = {}

    def add(self, text: str) -> None:
        """Index one chunk's text: the ids of `tokenize(text)`."""
        ids_of, vocab = self._ids_of, self._vocab
        stem, stop = stem_function(), BM25_STOPWORDS
        ids: list[int] = []
        for word in _TOKEN.findall(text.lower()):
            found = ids_of.get(word)
            if found is None:
                found = ids_of[word] = tuple(vocab.setdefault(t, len(vocab)) for t in _tokens_of(word, stem, stop))
            ids.extend(found)
        self._tokens.extend(ids)
        self._lengths.append(len(ids))

    def finish(self, chunk_ids: list[str]) -> KeywordIndex:
        n = len(self._lengths)
        if n != len(chunk_ids):
            raise ValueError(f"{len(chunk_ids)} chunk ids for {n} indexed texts")
        n_terms = len(self._vocab)
        lengths = np.frombuffer(self._lengths, dtype=np.int32).astype(np.float32)
        doc_len = np.maximum(lengths, 1.0)  # an empty chunk counts as one (unmatchable) token, as in bm25s
        # (term, chunk) pairs with their counts, grouped by term: one sort of packed keys.
        keys = np.frombuffer(self._tokens, dtype=np.int32).astype(np.int64) * max(n, 1)
        counts = np.frombuffer(self._lengths, dtype=np.int32)
        at = 0
        for lo in range(0, n, REPEAT_SLICE):  # np.repeat holds the GIL: in slices, with a pause between
            part = np.repeat(np.arange(lo, min(lo + REPEAT_SLICE, n), dtype=np.int64), counts[lo:lo + REPEAT_SLICE])
            keys[at:at + len(part)] += part
            at += len(part)
            time.sleep(0.001)
        keys, tf = np.unique(keys, return_counts=True)
        terms, postings = np.divmod(keys, max(n, 1))
        del keys
        df = np.bincount(terms, minlength=n_terms)
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        idf = np.log1p((n - df + 0.5) / (df + 0.5)).astype(np.float32)
        tf = tf.astype(np.float32)
        norm = BM25_K1 * ((1 - BM25_B) + BM25_B * doc_len / float(doc_len.mean() if n else 1.0))
        weights = idf[terms] * tf / (norm[postings] + tf)
        vocab, self._vocab = self._vocab, {}
        self._tokens, self._lengths = array("i"), array("i")
        return KeywordIndex(chunk_ids, vocab, indptr, postings.astype(np.int32), weights.astype(np.float32))
