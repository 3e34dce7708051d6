"""Searching for a follow-up (retrieval/followup.py's `FollowUp`): the corpus, or the papers it is about.

Blocking (run it in a worker thread). The library searches a Chinese question (or a Chinese follow-up to an
English conversation) in English, without a language model (retrieval/translate.py `english_query`); English
text is searched unchanged.

* no papers: the corpus, as for any question; a follow-up with a topic of its own (`alone`)
  is searched alone first and stays alone when that retrieves well (a topic change);
* pinned papers (the user named them): each is kept and quoted, with its closest sentence
  when retrieval did not rank it;
* a pronoun (`single`): the one paper of those cited last that the query matches best;
* scope ("which of these …"): the papers shown last, with retrieval's verdict on each, and
  those of the others the conversation's topic retrieves (what "More sources" lists) that
  answer better than any paper shown, so "which of these uses X?" finds the one that does
  even when it was not among the three cited, or finds that none does;
* code ("any with code?"): the papers shown whose abstract says the code is released, quoted
  with that sentence; the topic's other papers when none of those shown does.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from paperbot.protocols import PaperLibrary
from retrieval.filters import Filters
from paperbot.text import REFERENCE_WORDS, content_words
from retrieval.followup import FollowUp, best_sentence, code_sentence, terms
from retrieval.types import Hit, SearchResult

log = logging.getLogger(__name__)

SCOPE_DEPTH = 25  # papers searched when a follow-up is about papers shown earlier (and the topic's, to widen)
NONE_DISCUSSED = "none of the papers discussed answers this"


def search_resolved(library: PaperLibrary, followup: FollowUp, k: int | None = None,
                    filters: Filters | None = None) -> SearchResult:
    """What retrieval gives `followup`; `result.query` is the (English) query that was searched."""
    if followup.alone:
        alone = library.search(followup.alone, k, filters)
        if not alone.abstained:
            log.info("a topic of its own: %r searched without the conversation", followup.alone)
            return alone
    if not followup.papers:
        return library.search(followup.query, k, filters)
    return scoped_search(library, followup.query, followup, k, filters)


def scoped_search(library: PaperLibrary, query: str, followup: FollowUp, k: int | None = None,
                  filters: Filters | None = None) -> SearchResult:
    """`query` answered only from `followup.papers` (widened to the topic's papers for a scope question).

    Retrieval ranks only the papers in scope (`within`), so whether one answers is judged among them.
    """
    scope = list(followup.papers)
    widen = bool(followup.topic) and not followup.pinned and not followup.single
    if widen:  # the papers the topic retrieves count as shown too (More sources lists them)
        topic = library.search(followup.topic, SCOPE_DEPTH, filters)
        scope += [h.paper_id for h in topic.hits if h.paper_id not in followup.papers]
    found = library.search(query, max(k or 0, SCOPE_DEPTH, len(scope)), filters, within=scope)
    by_id = {h.paper_id: h for h in found.hits}

    def hit_for(pid: str) -> Hit | None:
        hit = by_id.get(pid)
        if hit is None:
            paper = library.paper(pid)
            if paper is None:
                return None
            hit = Hit(paper=paper, score=0.0, quotes=(best_sentence(paper.abstract, query),), relevant=False)
        if followup.code:
            quote = code_sentence(hit.paper.abstract)
            hit = replace(hit, quotes=(quote,) if quote else hit.quotes, relevant=quote is not None,
                          plausible=quote is not None)
        return hit

    hits = [h for pid in followup.papers if (h := hit_for(pid)) is not None]
    if followup.pinned:
        hits = [replace(h, relevant=True) for h in hits]
    elif followup.single and hits:
        # The cited paper whose abstract shares most of the follow-up's terms; on a tie the earlier citation.
        best = max(enumerate(hits), key=lambda ih: (_overlap(ih[1], query), -ih[0]))[1]
        hits = [replace(best, relevant=True)]
    else:
        if widen:
            best_shown = max((h.score for h in hits if h.relevant), default=None)
            if best_shown is None or not followup.code:  # code: the topic's papers only when none shown has code
                wider = [h for pid in scope[len(followup.papers):] if (h := hit_for(pid)) is not None and h.relevant]
                hits += [h for h in wider if best_shown is None or h.score > best_shown]  # answers better
        # Code: the papers shown first, then the topic's, in order; otherwise the best answer first.
        hits.sort(key=(lambda h: not h.relevant) if followup.code else (lambda h: (not h.relevant, -h.score)))
    abstained = not any(h.relevant for h in hits)
    return SearchResult(query=query, hits=hits, abstained=abstained, reason=NONE_DISCUSSED if abstained else "",
                        filters=found.filters)


def _overlap(hit: Hit, query: str) -> int:
    want = {w[:5] for w in terms(query)}
    words = content_words(hit.paper.label + " " + hit.paper.abstract, ignore=REFERENCE_WORDS, topics_only=True)
    return len(want & {w[:5] for w in words})
