"""How much of a question one paper speaks to, word by word: what the question-level decision reads.

A near miss shares a paper's topic and asks for one thing the paper does not do ("a Mamba backbone for point
clouds" of a point-cloud paper without Mamba). Sentence vectors blur that one word into the topic; here each of
the question's content words, read in its context, is matched with the paper's tokens in theirs (BERTScore's
recall), and the matches are averaged with the words' IDF as weights, so a rare word the paper never speaks to
counts most. Names ("DBSCAN", "LLaVA") are checked by their letters too: a paraphrase changes a question's common
words, rarely its names. And the question is read again with each word left out: a near miss comes closer to the
paper without its constraint, an answered question does not (`leave_out`). A question that says the paper's own
short name asks about that paper (`named`). And the question is read together with the paper's abstract, as one
text: the model's attention reads each in the light of the other, which the two vectors apart cannot (`joint`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from paperbot.protocols import TextEmbedder
from paperbot.records import Paper
from paperbot.text import STOPWORDS, names, says_name, sentences, word_spans
from retrieval.instances import says_by_name
from retrieval.keyword import content_tokens

JOINT_CHARS = 1500  # of the abstract read beside the question (the model reads 256 word pieces of the whole)
CACHED_PAPERS = 64  # papers whose token vectors are kept (float16, about 230 KB each: 15 MB in all)


@dataclass(frozen=True)
class QuestionWords:
    """A question's content words: their character spans, IDF weights and vectors read in context."""

    spans: tuple[tuple[int, int], ...]
    weights: np.ndarray
    vectors: np.ndarray  # (words, dimension), unit rows
    names: tuple[str, ...]


def question_words(embedder: TextEmbedder, text: str, idf: Callable[[str], float]) -> QuestionWords | None:
    """The question's content words (stopwords and framing words left out), or None when it has none."""
    found = []
    for start, end, word in word_spans(text):
        tokens = content_tokens(word)
        if word.lower() in STOPWORDS or not tokens or (len(word) < 2 and not word.isdigit()):
            continue
        found.append((start, end, max(idf(t) for t in tokens)))
    if not found:
        return None
    ((token_spans, token_vectors),) = embedder.encode_tokens([text])
    starts = np.array([a for a, _ in token_spans], dtype=np.int64)
    ends = np.array([b for _, b in token_spans], dtype=np.int64)
    spans, weights, vectors = [], [], []
    for a, b, weight in found:
        inside = (starts >= a) & (ends <= b)
        if not inside.any():  # past the model's window
            continue
        v = token_vectors[inside].mean(axis=0)
        vectors.append(v / (np.linalg.norm(v) or 1.0))
        spans.append((a, b))
        weights.append(weight)
    if not spans:
        return None
    return QuestionWords(tuple(spans), np.array(weights, dtype=np.float32),
                         np.array(vectors, dtype=np.float32), tuple(names(text)))


class PaperTokens:
    """Each paper's token vectors (title and abstract sentences, each read in context), LRU-cached."""

    def __init__(self, embedder: TextEmbedder, size: int = CACHED_PAPERS) -> None:
        self.embedder = embedder
        self.size = size
        self._cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, paper: Paper) -> np.ndarray:
        key = (paper.paper_id, paper.content_hash)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        texts = [t for t in [paper.title or paper.label, *sentences(paper.abstract)] if t.strip()]
        rows = [v for _, v in self.embedder.encode_tokens(texts) if len(v)]
        tokens = (np.concatenate(rows) if rows else np.zeros((0, self.embedder.dimension))).astype(np.float16)
        with self._lock:
            self._cache[key] = tokens
            while len(self._cache) > self.size:
                self._cache.popitem(last=False)
        return tokens


def support(words: QuestionWords, tokens: np.ndarray) -> float:
    """The IDF-weighted mean, over the question's words, of each word's best match among the paper's tokens."""
    if not tokens.size:
        return 0.0
    best = (words.vectors @ tokens.astype(np.float32).T).max(axis=1)
    return float((words.weights * best).sum() / (words.weights.sum() or 1.0))


def unnamed(words: QuestionWords, paper: Paper) -> float:
    """1 when the paper never says one of the question's names (its title, keywords and abstract), else 0; a
    general term's name says the term ("Llama 3" says "LLMs": retrieval/instances.py)."""
    text = " ".join([paper.title, paper.label, " ".join(paper.keywords), paper.abstract])
    return float(any(not says_name(name, text) and not says_by_name(name, text) for name in words.names))


def paper_name(paper: Paper) -> str:
    """The paper's short name: its title before a colon ("FineStyle" of "FineStyle: Fine-grained …"), or its title
    or label when that is one or two words ("BMT"); "" when it has none."""
    head = (paper.title or paper.label).split(":", 1)[0].strip()
    return head if 0 < len(head.split()) <= 2 else ""


def distinctive_name(name: str) -> bool:
    """Whether a paper's short name could be no common word: one word with two capitals or more, or letters and
    digits ("BMT", "DiffAug", "Meta-Controller", "D2R2"; not "Devyn", "Frolic", nor "Scaling Laws")."""
    return bool(name) and " " not in name and (sum(c.isupper() for c in name) >= 2 or (
        any(c.isdigit() for c in name) and any(c.isalpha() for c in name)))


def named(text: str, paper: Paper) -> float:
    """1 when the question says the paper's short name ("How much compute does ThinkSafe need?"), else 0."""
    name = paper_name(paper)
    return float(bool(name) and says_name(name, text))


def leave_out(embedder: TextEmbedder, text: str, words: QuestionWords, question_vector: np.ndarray,
              paper_vectors: np.ndarray) -> float:
    """The most the question comes closer to the paper with one of its words left out: over its content words, the
    word's IDF share times the rise in cosine to the paper's nearest chunk (`paper_vectors`, unit rows) when the
    question is read without it. Near 0 when every word pulls towards the paper, and 0 for a question of one
    content word: left without it, nothing of the question is left to compare ("sycophancy", "results")."""
    if not len(paper_vectors) or len(words.spans) < 2:
        return 0.0
    variants = embedder.encode([text[:a] + text[b:] for a, b in words.spans])
    vectors = paper_vectors.astype(np.float32)
    whole = float((vectors @ question_vector.astype(np.float32)).max())
    without = (np.asarray(variants, dtype=np.float32) @ vectors.T).max(axis=1)
    share = words.weights / (words.weights.sum() or 1.0)
    return float((share * (without - whole)).max())


def joint(embedder: TextEmbedder, text: str, words: QuestionWords, question_vector: np.ndarray,
          paper: Paper) -> float | None:
    """The cosine between the question and the question read together with the paper's abstract as one text
    ("question [SEP] abstract", as far as the model reads): its pooled vector is mostly the abstract's words, each
    read in the light of the question's. A cross-encoder's reading, crudely, by the same model. None for a question
    of one content word ("limitations"): beside a whole abstract it is read as nothing but the abstract."""
    if len(words.spans) < 2:
        return None
    body = (paper.abstract or paper.title or paper.label)[:JOINT_CHARS]
    vector = embedder.encode([f"{text} [SEP] {body}"])[0]
    return float(np.dot(np.asarray(vector, dtype=np.float32), np.asarray(question_vector, dtype=np.float32)))
