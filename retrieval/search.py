"""Hybrid retrieval: dense (Chroma) + keyword (BM25) fused per paper, with verbatim snippets
(papers like a paper or a text: retrieval/similar.py).

Fusion: each signal is taken per paper as the best score of its chunks, turned
into a z-score over the candidate papers (the union of both signals' top
candidates), and the two z-scores are averaged with equal weights. On BEIR
SciFact this beats reciprocal-rank fusion (see docs/benchmarks.md).

Abstention: a paper counts as relevant when the probability that it answers
(retrieval/decision.py, from its rank score, its best sentence's, its share of
the question's terms and its margins over the others) reaches
RETRIEVAL_MIN_CONFIDENCE. A new question is then decided by the question-level
check (`answered`, reading the question word by word: retrieval/support.py): its
most probable paper (from RETRIEVAL_MIN_CHECKED) is cited when the question
reaches RETRIEVAL_MIN_ANSWERED, and no paper is cited when it does not; follow-ups
about cited papers keep the per-paper decision. A Chinese question searched as its
word-by-word translation (not the asker's own words: its stray words lower every
paper's probability) cites its papers from RETRIEVAL_MIN_CONFIDENCE_TRANSLATED, and
nothing when the question-level probability is below RETRIEVAL_MIN_ANSWERED_TRANSLATED
(a far lower bar: the check only abstains for it). A new question made only of words
every abstract uses (GENERAL_WORDS: "model", "results") is not answered at all. When no candidate is relevant
the result abstains but still lists the closest papers. Quotes are the sentences retrieval/snippets.py
ranks first. Chat noise (mentions, emoji, links) is removed before anything is
searched (paperbot.text.search_text), and typos are mended against the words of the papers the question may see
(retrieval/spelling.py).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ingest.store import Store
from paperbot.errors import EmptyCorpusError
from paperbot.protocols import TextEmbedder
from paperbot.records import Paper, Reach, paper_id_of
from paperbot.settings import RetrievalSettings
from paperbot.text import (STOPWORDS, about_names, asked_names, asks_for_code, asks_how, asks_quantity,
                           points_elsewhere, search_text, split_sentences, topic_called, typed_words)
from retrieval.filters import Filters, no_match_notice, select
from retrieval.instances import said_by
from retrieval.keyword import content_tokens, tokenize
from retrieval.decision import QuestionEvidence, answered, confidence, evidence
from retrieval.support import PaperTokens, joint, leave_out, named, question_words, support, unnamed
from retrieval.spelling import mend, other_language, typos
from retrieval.snippets import ScoredSentence, best_answer, question_terms, quotes_of, score_sentences
from retrieval.types import TOO_GENERAL, Hit, Quote, SearchResult
from retrieval.view import CorpusView, ViewFileError, store_identity

__all__ = ["CorpusView", "RankedPaper", "Retriever"]

log = logging.getLogger(__name__)

CANDIDATES = 100
# A filter that keeps at least this share of the papers (posters, a big track) searches the vector index and
# drops the rest: scoring nearly every chunk exactly from its float16 vector costs more than the query itself.
BROAD_FILTER = 0.5
MAX_QUERY_CHARS = 2000
# Papers whose sentence vectors are kept in memory for snippets (float16, about 8 KB each); reading them
# from the store costs about 30 ms per answer at 20,000 papers.
SENTENCE_CACHE_PAPERS = 2000
RELATIVE = 0.3  # once a paper is cited, others reaching this share of its probability are cited too (a near tie)
# A new question made only of these words ("model", "learning", "experiments") names nothing that picks one paper out:
# it is not answered. They are the stems in 15 % or more of the chunks of 764 real NeurIPS 2024 abstracts
# (../shared/labelled/neurips2024_papers), without function words and without the field's topics (optimization,
# generation, language, image, distribution, sampling, function): fixed, so that a small library on one topic, where
# its topic's words are everywhere, is not read as general. Every readers' question holds a word in 1.6 % of those
# chunks at most.
GENERAL_WORDS = frozenset("model learn method propos train perform base data use demonstr result task approach effect "
                          "show improv introduc framework novel achiev effici larg algorithm exist work experi dataset "
                          "paper time challeng state general signific network problem specif neural set high provid "
                          "differ".split())


@dataclass
class RankedPaper:
    paper_id: str
    score: float
    dense: float
    lexical: float  # IDF-weighted share of the query's terms found in the paper
    bm25: float
    missing: float = 0.0  # the largest share of one query term the paper lacks
    missing_known: float = 0.0  # ... of one the paper lacks and others have
    terms: int = 0  # the query's content terms
    complement: float = 0.0  # the largest share of the query's terms it lacks that one other ranked paper holds


def too_general(query: str) -> bool:
    """Whether `query` is made only of GENERAL_WORDS ("model", "learning methods")."""
    words = set(content_tokens(query))
    return bool(words) and words <= GENERAL_WORDS


class Retriever:
    """Searches one store; safe to share between threads.

    `view_file`: where the serving view is saved beside the store (retrieval/view.py); None keeps it
    in memory only.
    """

    def __init__(self, store: Store, embedder: TextEmbedder, settings: RetrievalSettings | None = None,
                 view_file: Path | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings or RetrievalSettings()
        self.view_file = view_file
        self._view: CorpusView | None = None
        self._view_lock = threading.Lock()
        self._lock = threading.Lock()
        self._sentence_cache: OrderedDict[str, tuple[list[Quote], np.ndarray]] = OrderedDict()
        self._sentence_version = ""
        self._tokens = PaperTokens(embedder)

    # -- the serving view: read from its file, or rebuilt when the store's content version changes ----

    def view(self) -> CorpusView:
        version = self.store.content_version()
        view = self._view
        if view is not None and view.version == version:
            return view
        if view is not None and not self._view_lock.acquire(blocking=False):
            # Another thread is building the new version's view (seconds at conference scale): searches
            # beside it answer from the current one instead of each holding a worker thread while they wait.
            return view
        if view is None:
            self._view_lock.acquire()
        try:
            if self._view is None or self._view.version != version:
                self._view = self._open_view(version)
            return self._view
        finally:
            self._view_lock.release()

    def _open_view(self, version: str) -> CorpusView:
        """The saved view when it is this version's, else one built from the store (and saved)."""
        path = self.view_file
        if path is not None:
            try:
                view = CorpusView.load(path, version, store_identity(self.store.settings))
                log.info("read the serving view (%d papers) from %s", len(view.papers), path)
                return view
            except ViewFileError as exc:
                if exc.kind == "missing":
                    log.info("no saved serving view at %s yet: building it from the store, once", path)
                elif exc.kind == "stale":
                    log.info("the saved serving view at %s is %s: rebuilding it", path, exc)
                else:
                    log.warning("the saved serving view at %s is %s: rebuilding it from the store", path, exc)
        log.info("building the serving view for store version %s", version)
        view = CorpusView.from_store(self.store, version)
        if path is not None:
            self._save(view, path)
        return view

    def _save(self, view: CorpusView, path: Path) -> None:
        """Save a freshly built view unless the store moved on meanwhile (an ingest writing beside us)."""
        try:
            if self.store.write_in_progress() or self.store.content_version() != view.version:
                log.info("not saving the serving view: the store changed while it was built")
                return
            view.save(path, store_identity(self.store.settings))
            log.info("saved the serving view to %s", path)
        except OSError as exc:
            log.warning("cannot save the serving view to %s (%s); it is rebuilt at every start", path,
                        exc.strerror or exc)

    def papers(self, reach: Reach = Reach.ALL) -> list[Paper]:
        papers = self.view().papers.values()
        return list(papers) if reach.everything else [p for p in papers if reach.sees(p)]

    def paper(self, paper_id: str, reach: Reach = Reach.ALL) -> Paper | None:
        """The paper with this id, when `reach` sees it."""
        paper = self.view().papers.get(paper_id)
        return paper if paper is not None and reach.sees(paper) else None

    # -- ranking -------------------------------------------------------------------

    def rank(self, query: str, depth: int = CANDIDATES, query_vector: np.ndarray | None = None,
             mode: str = "hybrid", view: CorpusView | None = None, allowed: np.ndarray | None = None,
             query_tokens: list[str] | None = None) -> list[RankedPaper]:
        """Papers best first (no snippets). `mode` is hybrid, dense or lexical (the last two for evaluation).

        `allowed` (a mask over the view's papers) restricts the candidates before anything is
        ranked: the vector search runs only over those papers' chunks and BM25 scores of the
        others are dropped. `query_tokens` replaces the query's own BM25 terms (similar papers).
        """
        view = view or self.view()
        if not view.papers:
            raise EmptyCorpusError("the store holds no papers yet: run `paperbot ingest` first")
        query = query[:MAX_QUERY_CHARS]
        qvec = self.embedder.encode([query])[0] if query_vector is None else query_vector
        n_papers = len(view.papers)
        pids = list(view.papers)

        dense = np.full(n_papers, np.nan, dtype=np.float32)
        n_nearest = max(depth * 3, 50)
        share = 1.0 if allowed is None else float(allowed.mean())
        if share >= BROAD_FILTER:  # the vector index's nearest chunks, the allowed ones kept
            for cid, sim in self.store.query(qvec, n=int(np.ceil(n_nearest / share))):
                i = view.paper_index.get(paper_id_of(cid))
                if i is not None and not sim <= dense[i] and (allowed is None or allowed[i]):
                    dense[i] = sim
        if allowed is not None and (share < BROAD_FILTER
                                    or np.count_nonzero(~np.isnan(dense)) < min(depth, int(np.count_nonzero(allowed)))):
            # every allowed chunk scored exactly: cheaper than asking the vector index to filter
            rows = np.flatnonzero(allowed[view.chunk_paper_idx])
            sims = view.vectors_of(rows, self.store).astype(np.float32) @ qvec.astype(np.float32)
            np.fmax.at(dense, view.chunk_paper_idx[rows], sims)

        q_tokens = tokenize(query) if query_tokens is None else query_tokens
        bm25 = np.zeros(n_papers, dtype=np.float32)
        np.maximum.at(bm25, view.chunk_paper_idx, view.keyword.scores(q_tokens))
        if allowed is not None:
            dense[~allowed] = np.nan
            bm25[~allowed] = 0.0

        dense_top = np.flatnonzero(~np.isnan(dense))
        dense_top = dense_top[np.argsort(-dense[dense_top], kind="stable")][:depth]
        lex_top = np.argsort(-bm25, kind="stable")[:depth]
        lex_top = lex_top[bm25[lex_top] > 0]
        if mode == "dense":
            cand, fused = dense_top, dense[dense_top]
        elif mode == "lexical":
            cand, fused = lex_top, bm25[lex_top]
        else:
            cand = np.unique(np.concatenate([dense_top, lex_top])).astype(np.int64)
            missing = cand[np.isnan(dense[cand])]
            if missing.size:
                dense[missing] = self._dense_for(view, missing, qvec)
            fused = _z(dense[cand]) + _z(bm25[cand])
        order = np.argsort(-fused, kind="stable")[:depth]
        weights = {t: view.keyword.idf(t) for t in set(content_tokens(query))}
        tokens = list(weights)
        present = view.term_presence(tokens)  # (terms, papers): which of the query's terms each paper holds
        said = said_by(query)  # a general term ("LLMs") is held by the papers naming one ("Llama 3")
        for row, token in enumerate(tokens):
            for way in said.get(token, ()):
                present[row] |= view.term_presence(sorted(way)).all(axis=0)
        term_share = np.array([weights[t] for t in tokens], dtype=np.float32) / (sum(weights.values()) or 1.0)
        lacking = np.where(present, 0.0, term_share[:, None]).astype(np.float32)  # each term's share, where absent
        coverage = term_share @ present if tokens else np.zeros(n_papers, dtype=np.float32)
        missing = lacking.max(axis=0) if tokens else np.zeros(n_papers, dtype=np.float32)
        corpus_has = np.array([view.keyword.df(t) > 0 for t in tokens], dtype=bool)
        known = lacking[corpus_has].max(axis=0) if corpus_has.any() else np.zeros(n_papers, dtype=np.float32)
        chosen = cand[order].astype(np.int64)
        held = present[:, chosen].astype(np.float32)
        # the most of what each paper lacks that one other ranked paper holds: a question joining two topics
        elsewhere = ((1 - held) * term_share[:, None]).T @ held if tokens else np.zeros((len(chosen),) * 2)
        np.fill_diagonal(elsewhere, 0.0)
        complement = elsewhere.max(axis=1) if len(chosen) > 1 else np.zeros(len(chosen))
        ranked = []
        for n, j in enumerate(order):
            i = int(cand[j])
            d = float(dense[i]) if not np.isnan(dense[i]) else -1.0
            ranked.append(RankedPaper(pids[i], float(fused[j]), d, float(coverage[i]), float(bm25[i]),
                                      float(missing[i]), float(known[i]), len(weights), float(complement[n])))
        return ranked

    def _dense_for(self, view: CorpusView, paper_idx: np.ndarray, qvec: np.ndarray) -> np.ndarray:
        """Exact best-chunk similarity for papers the vector search did not return."""
        rows = np.flatnonzero(np.isin(view.chunk_paper_idx, paper_idx))
        best = np.full(len(view.papers), -1.0, dtype=np.float32)
        vectors = view.read_vectors_of(rows)
        if vectors is not None:  # read for a filter already: no store call
            np.fmax.at(best, view.chunk_paper_idx[rows], vectors.astype(np.float32) @ qvec.astype(np.float32))
        else:
            got = self.store.get_embeddings([view.chunk_ids[k] for k in rows])
            for k in rows:
                vec = got.get(view.chunk_ids[k])
                if vec is not None:
                    i = view.chunk_paper_idx[k]
                    best[i] = max(best[i], float(np.dot(vec, qvec)))
        return best[paper_idx]

    # -- search with snippets and abstention ----------------------------------------

    def search(self, query: str, k: int | None = None, filters: Filters | None = None,
               within: Sequence[str] | None = None, reach: Reach = Reach.ALL,
               translated: bool = False) -> SearchResult:
        """Papers best first with their answering sentences; `within` (paper ids) restricts the candidates
        like a filter (a follow-up about papers cited earlier), so the others neither rank nor set the bar;
        `reach` (the server libraries the question may see) restricts them the same way. `translated`: the query
        is a word-by-word translation, not the asker's own words: papers are cited from
        RETRIEVAL_MIN_CONFIDENCE_TRANSLATED, and none when the question-level probability is below
        RETRIEVAL_MIN_ANSWERED_TRANSLATED."""
        shown, query = search_text(query), search_text(query, mark=False)  # what was searched, as shown; as embedded
        k = k or self.settings.top_k
        filters = filters or None
        if not query:
            return SearchResult(query=shown, hits=[], abstained=True, reason="empty question", filters=filters)
        view = self.view()
        seen = allowed = view.reach_mask(reach) if view.papers else None
        if not translated:  # a translation's words are the dictionary's, not typed (Library.search reads its typos)
            mended = self._typos(view, query, reach, seen)
            shown, query = mend(shown, mended), mend(query, mended)
        if within is not None:
            if not view.papers:
                raise EmptyCorpusError("the store holds no papers yet: run `paperbot ingest` first")
            listed = np.zeros(len(view.papers), dtype=bool)
            listed[[view.paper_index[p] for p in within if p in view.paper_index]] = True
            allowed = listed if allowed is None else allowed & listed
            if not allowed.any():
                return SearchResult(query=shown, hits=[], abstained=True, reason="none of those papers is stored",
                                    filters=filters)
        if filters:
            if not view.papers:
                raise EmptyCorpusError("the store holds no papers yet: run `paperbot ingest` first")
            allowed = view.mask(filters) if allowed is None else allowed & view.mask(filters)
            if not allowed.any():
                notice = no_match_notice(filters, self.papers(reach), view.filter_index if seen is None else None)
                return SearchResult(query=shown, hits=[], abstained=True, reason=notice.split("\n")[0],
                                    filters=filters, notice=notice)
        qvec = self.embedder.encode([query[:MAX_QUERY_CHARS]])[0]
        ranked = self.rank(query, depth=max(CANDIDATES, k), query_vector=qvec, view=view, allowed=allowed)[:k]
        called = set() if within is not None or not view.papers or not about_names(query) else {
            pid for pid in view.called(query) if allowed is None or allowed[view.paper_index[pid]]}
        if called:
            ranked = self._called_first(view, ranked, called, query, qvec, k)
        bar = self.settings.min_confidence_translated if translated else self.settings.min_confidence
        code = asks_for_code(query)  # quoted with the sentence saying where the code is
        hits = self._with_quotes(view, ranked, query, qvec, bar, code)
        if called and code and not any(
                h.paper_id in called and any(points_elsewhere(q.text) for q in h.quotes) for h in hits):
            called = set()  # "is the BMT code public?" where BMT's abstract links nothing: decided on its words
        if called:
            # a question about papers it calls by their own names ("What is BMT?", "compare DRL and BMT"): those
            # papers are the answer, whatever else its words come close to
            hits = [replace(h, relevant=h.paper_id in called, plausible=h.plausible or h.paper_id in called)
                    for h in hits]
            return SearchResult(query=shown, hits=hits, abstained=False, reason="", filters=filters)
        question = chance = None
        if within is None and not filters and too_general(query):
            hits = [replace(h, relevant=False, plausible=False) for h in hits]
            return SearchResult(query=shown, hits=hits, abstained=True, reason=TOO_GENERAL, filters=filters)
        # a follow-up's papers are known: no question check; nor where its bar (0) could change nothing. Where it
        # checks, the question-level model decides: the most probable paper is cited when the question is answered
        # (even short of the per-paper bar), and nothing when it is not. A translation is checked only to abstain:
        # below its own bar nothing is cited, above it the per-paper bar decides.
        floor = self.settings.min_answered_translated if translated else self.settings.min_answered
        if within is None and floor > 0 and (not translated or any(h.relevant for h in hits)):
            first = max((i for i, h in enumerate(hits) if h.evidence is not None and h.confidence is not None
                         and h.confidence >= self.settings.min_checked),
                        key=lambda i: hits[i].confidence or 0.0, default=None)
            question = None if first is None else self._question_evidence(view, hits[first], query, qvec)
            if first is not None and question is not None:
                chance = answered(question)
                if chance < floor:
                    hits = [replace(h, relevant=False) for h in hits]
                elif not translated:
                    hits[first] = replace(hits[first], relevant=True, plausible=True)
        abstained = not any(h.relevant for h in hits)
        reason = "no paper in the corpus is close enough to the question" if abstained else ""
        # the words no paper says, of a question in English (a French one's would all be listed)
        unsaid = self._unsaid(view, query, reach, seen) if abstained and not translated and not other_language(query) \
            else ()
        return SearchResult(query=shown, hits=hits, abstained=abstained, reason=reason, filters=filters,
                            question=question, answered=chance, unsaid=unsaid)

    def _called_first(self, view: CorpusView, ranked: list[RankedPaper], called: set[str], query: str,
                      qvec: np.ndarray, k: int) -> list[RankedPaper]:
        """`ranked` with the papers the question names (`called`) first, ranked among themselves, those it had
        not ranked high enough to keep included; then the others, to `k` in all."""
        missing = called - {r.paper_id for r in ranked}
        if missing:
            mask = np.zeros(len(view.papers), dtype=bool)
            mask[[view.paper_index[pid] for pid in missing]] = True
            ranked = ranked + self.rank(query, depth=len(missing), query_vector=qvec, view=view, allowed=mask)
        first = [r for r in ranked if r.paper_id in called]
        return first + [r for r in ranked if r.paper_id not in called][:max(0, k - len(first))]

    def _unsaid(self, view: CorpusView, query: str, reach: Reach, seen: np.ndarray | None) -> tuple[str, ...]:
        """The words of `query`, as typed, that no chunk of the papers `seen` (a mask over the papers `reach` sees;
        None: all) holds in any form: no term of the word, and no word the papers use starting as it does
        ("purify" is said where they say "purification"). At most three: "bathymetry", "sonar"."""
        chunks = _chunks_seen(view, seen)
        words = view.words(reach)
        out: dict[str, str] = {}
        for word in typed_words(query):
            tokens = content_tokens(word) if word.lower() not in STOPWORDS else []
            if not tokens or any(_any_in(view.keyword.chunks_with(t), chunks) for t in tokens):
                continue
            key = " ".join(tokens)  # "fingerprint" and "fingerprints" are listed once
            if key not in out and not words.any_starting(word.lower()[:max(5, len(word) - 3)]):
                out[key] = word
        return tuple(out.values())[:3]

    def typos(self, text: str, reach: Reach = Reach.ALL) -> dict[str, str]:
        """The typos of `text` and the words they mend to, read against the papers `reach` sees
        (retrieval/spelling.py)."""
        view = self.view()
        return self._typos(view, text, reach, view.reach_mask(reach) if view.papers else None)

    def _typos(self, view: CorpusView, text: str, reach: Reach, seen: np.ndarray | None) -> dict[str, str]:
        """`typos` in `view`, whose papers `reach` sees by the mask `seen` (None: all)."""
        return typos(text, view.keyword, view.words(reach), _chunks_seen(view, seen)) if view.papers else {}

    def _question_evidence(self, view: CorpusView, first: Hit, query: str,
                           query_vector: np.ndarray) -> QuestionEvidence | None:
        """What the question-level model reads of the paper that would be cited first (None: nothing to read)."""
        if first.evidence is None or first.confidence is None:
            return None
        text = query[:MAX_QUERY_CHARS]
        words = question_words(self.embedder, text, view.keyword.idf)
        if words is None:
            return None
        chunks = view.vectors_of(view.chunk_rows(first.paper_id), self.store)
        # a paper is named by its short name ("ThinkSafe") or by its title's words ("the sycophancy paper") when
        # no other title holds them
        by_title = view.titled(topic_called(text)) == [first.paper_id]
        return QuestionEvidence(first.evidence, first.confidence, support(words, self._tokens(first.paper)),
                                unnamed(words, first.paper), leave_out(self.embedder, text, words, query_vector, chunks),
                                max(named(text, first.paper), float(by_title)),
                                joint(self.embedder, text, words, query_vector, first.paper))

    def browse(self, filters: Filters, reach: Reach = Reach.ALL) -> list[Paper]:
        """Every paper `reach` sees passing `filters`, orals first, then by title."""
        view = self.view()
        return [p for p in select(list(view.papers.values()), filters, view.filter_index) if reach.sees(p)]

    def is_relevant(self, r: RankedPaper) -> bool:
        """The rule for a paper with no sentence to judge (no abstract yet): its best chunk, title included."""
        return r.dense >= self.settings.min_dense or r.lexical >= self.settings.min_lexical

    def _sentences(self, view: CorpusView, paper_ids: list[str]) -> dict[str, tuple[list[Quote], np.ndarray]]:
        """Each paper's sentences and their embeddings, cached per store version (LRU)."""
        out: dict[str, tuple[list[Quote], np.ndarray]] = {}
        todo: list[tuple[str, list[Quote]]] = []
        with self._lock:
            if self._sentence_version != view.version:
                self._sentence_cache.clear()
                self._sentence_version = view.version
            for pid in paper_ids:
                if pid in self._sentence_cache:
                    self._sentence_cache.move_to_end(pid)
                    out[pid] = self._sentence_cache[pid]
                else:
                    abstract = view.papers[pid].abstract
                    todo.append((pid, [Quote(abstract[s.start:s.end], s.start, s.end) for s in split_sentences(abstract)]))
        if todo:  # vectors computed at ingest; papers stored without them are embedded now
            stored = self.store.snippets.vectors({pid: view.papers[pid].content_hash for pid, _ in todo})
            missing = []
            for pid, quotes in todo:
                rows = stored.get(pid, [])
                if [(q.start, q.end) for q in quotes] == [(a, b) for a, b, _ in rows]:
                    out[pid] = (quotes, np.asarray([v for _, _, v in rows], dtype=np.float16))
                else:
                    missing.append((pid, quotes))
            self._remember({pid: out[pid] for pid, _ in todo if pid in out})
            todo = missing
        if todo:
            vecs = self.embedder.encode([q.text for _, quotes in todo for q in quotes])
            i = 0
            for pid, quotes in todo:
                out[pid] = (quotes, np.asarray(vecs[i:i + len(quotes)], dtype=np.float16))
                i += len(quotes)
            self._remember({pid: out[pid] for pid, _ in todo})
        return out

    def _remember(self, entries: dict[str, tuple[list[Quote], np.ndarray]]) -> None:
        with self._lock:
            self._sentence_cache.update(entries)
            while len(self._sentence_cache) > SENTENCE_CACHE_PAPERS:
                self._sentence_cache.popitem(last=False)

    def sentences_for(self, query: str, paper_ids: Sequence[str]) -> dict[str, list[ScoredSentence]]:
        """Each stored paper's sentences scored against `query`, best quote first (what quotes are chosen from)."""
        view = self.view()
        query = search_text(query, mark=False)
        qvec = self.embedder.encode([query[:MAX_QUERY_CHARS]])[0]
        known = [pid for pid in paper_ids if pid in view.papers]
        return dict(zip(known, self._scored(view, known, query, qvec)))

    def _scored(self, view: CorpusView, paper_ids: list[str], query: str,
                qvec: np.ndarray) -> list[list[ScoredSentence]]:
        """Each paper's sentences scored against the query, best quote first (retrieval/snippets.py)."""
        cached = self._sentences(view, paper_ids)
        terms = question_terms(view.keyword, query)
        quantity, how, asked = asks_quantity(query), asks_how(query), asked_names(query)
        said = said_by(query)
        return [score_sentences(*cached[pid], qvec, terms, title=view.papers[pid].title or view.papers[pid].label,
                                quantity=quantity, how=how, said=said, asked=asked) for pid in paper_ids]

    def _with_quotes(self, view: CorpusView, ranked: list[RankedPaper], query: str, qvec: np.ndarray,
                     min_confidence: float, code: bool = False) -> list[Hit]:
        """Each paper with the sentences that best answer the query, and whether it answers (retrieval/decision.py):
        from `min_confidence`, or a share of the best paper's probability once one reaches it. `code`: the question
        asks for the code (`asks_for_code`), which the sentence saying where it is answers (`quotes_of`)."""
        scored = self._scored(view, [r.paper_id for r in ranked], query, qvec)
        best = [best_answer(s) for s in scored]
        found = evidence([r.score for r in ranked], best, [r.lexical for r in ranked], [r.missing for r in ranked],
                         [r.dense for r in ranked], [max((x.cosine for x in s), default=0.0) for s in scored],
                         [max((x.titled for x in s), default=0.0) for s in scored],
                         [r.missing_known for r in ranked], ranked[0].terms if ranked else 0,
                         [r.complement for r in ranked])
        probs = [None if e is None else confidence(e) for e in found]
        top = max((p for p in probs if p is not None), default=0.0)
        bar = min_confidence if top < min_confidence else min(min_confidence, RELATIVE * top)
        hits = []
        for r, sentences, a, e, p in zip(ranked, scored, best, found, probs):
            relevant = self.is_relevant(r) if p is None else p >= bar
            plausible = relevant if p is None else relevant or p >= self.settings.llm_min_confidence
            hits.append(Hit(paper=view.papers[r.paper_id], score=r.score, quotes=quotes_of(sentences, code),
                            dense=r.dense, lexical=r.lexical, relevant=relevant,
                            answer=a, confidence=p, plausible=plausible, evidence=e))
        return hits


def _chunks_seen(view: CorpusView, seen: np.ndarray | None) -> np.ndarray | None:
    """The chunks of the papers the mask `seen` keeps (None: all)."""
    return None if seen is None else seen[view.chunk_paper_idx]


def _any_in(chunks: np.ndarray, seen: np.ndarray | None) -> bool:
    return bool(len(chunks)) and (seen is None or bool(seen[chunks].any()))


def _unit(v: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(v))
    return v / norm if norm else v


def _z(x: np.ndarray) -> np.ndarray:
    std = float(x.std()) if x.size >= 2 else 0.0  # no candidates (a view older than the store) scores nothing
    if std < 1e-9:
        return np.zeros_like(x, dtype=np.float32)
    return ((x - x.mean()) / std).astype(np.float32)
