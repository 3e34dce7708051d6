"""Typos in a question, mended against the library's own words before it is searched.

"discrimnators for flow maching" shares no word with the paper on discriminators for flow matching, and its
misspelt words cut the embedding into other word pieces: it cited another paper. A word is read as a typo when
the library (the papers the question may see) uses it in no form, as written or with another ending, and it is no
English word either (pyspellchecker's list of about 160,000), so real words a library lacks ("defer", "curation",
"pasta") stay as they are. It becomes the spelling one slip away (a letter dropped, doubled, swapped with its
neighbour, struck on a neighbouring key or the wrong vowel) that the library uses, in that form or another
("discriminators" where it says "discriminator"); of several, the one whose chunks most often hold the question's
other words ("flow maching": "matching", not "machine"). Words with capitals inside ("LoRA", "DPO"), short words and
words with digits are names and stay, and so does a question with letters of another language ("affinés avec des
masques" is French, not typos). The question shown as searched is the mended one.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Container

import numpy as np

from paperbot.text import BM25_STOPWORDS, stem_function
from retrieval.keyword import KeywordIndex, content_tokens

log = logging.getLogger(__name__)

MIN_LENGTH = 4  # shorter words are too often abbreviations ("ecg", "gnn") and have too many neighbours
# a word, or a part of a compound ("fine-tune"), or one beside Chinese ("用flow"); not "doesn't" nor "word2vec"
_EDGE = "A-Za-z0-9_'’"
_WORD = re.compile(rf"(?<![{_EDGE}])[A-Za-z]+(?![{_EDGE}])")
# a letter neither English, Greek (symbols: "ε-greedy") nor Chinese
_OTHER_LETTERS = re.compile(r"[^\W\d_A-Za-z\u0370-\u03FF\u2E80-\u9FFF\uF900-\uFAFF]")
_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_VOWELS = set("aeiou")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _neighbours() -> dict[str, set[str]]:
    """The keys next to each letter on a QWERTY keyboard (same row, and the rows above and below)."""
    where = {c: (r, i) for r, row in enumerate(_ROWS) for i, c in enumerate(row)}
    return {c: {d for d, (s, j) in where.items() if d != c and abs(s - r) <= 1 and abs(j - i + (s - r) * 0.5) <= 1}
            for c, (r, i) in where.items()}


_NEAR = _neighbours()


def slips(word: str) -> set[str]:
    """The spellings `word` may have been meant as, one slip away (lower case)."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    out = {a + b[1:] for a, b in splits if b}  # a letter struck twice or by mistake
    out |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}  # two letters swapped
    out |= {a + c + b for a, b in splits for c in _LETTERS}  # a letter dropped
    out |= {a + c + b[1:] for a, b in splits if b for c in _NEAR.get(b[0], ())}  # a neighbouring key
    out |= {a + c + b[1:] for a, b in splits if b and b[0] in _VOWELS for c in _VOWELS}  # the wrong vowel
    out.discard(word)
    return out


@functools.lru_cache(maxsize=1)
def english() -> frozenset[str]:
    """English words (pyspellchecker's list, about 160,000), read on first use (0.2 s)."""
    from spellchecker import SpellChecker
    return frozenset(SpellChecker(language="en", distance=1).word_frequency.dictionary)


def typos(text: str, index: KeywordIndex, library_words: Container[str],
          seen: np.ndarray | None = None) -> dict[str, str]:
    """The typos of `text` (lower case) and the words they mend to (the module's doc), read against
    `library_words` (every word of the library, lower case) and `index` (its chunks; `seen`: a mask of those the
    question may see, None for all)."""
    if other_language(text):  # "affinés avec des masques": its words are not typos
        return {}
    stem = stem_function()
    mended: dict[str, str] = {}
    for m in _WORD.finditer(text):
        word = m.group(0)
        lower = word.lower()
        if lower in mended or len(word) < MIN_LENGTH or not word[1:].islower() or lower in BM25_STOPWORDS \
                or _known(lower, library_words):
            continue
        best = _best(lower, index, library_words, stem, _beside(text, word, index), seen)
        if best is not None:
            mended[lower] = best
    if mended:
        log.info("typos read in the question: %s", ", ".join(f"{a} → {b}" for a, b in mended.items()))
    return mended


def other_language(text: str) -> bool:
    """Whether `text` holds letters of a language other than English and Chinese ("modèles"; Greek symbols aside)."""
    return bool(_OTHER_LETTERS.search(text))


def mend(text: str, mended: dict[str, str]) -> str:
    """`text` with the words of `mended` (from `typos`) replaced, their case kept."""
    if not mended:
        return text
    return _WORD.sub(lambda m: _cased(mended.get(m.group(0).lower()), m.group(0)), text)


_ENDINGS = ("s", "es", "d", "ed", "ing", "r", "er", "ers")


def _known(word: str, library_words: Container[str]) -> bool:
    """Whether `word` is English, or a library word in another form ("denoiser" where it says "denoisers")."""
    return word in library_words or word in english() or _other_form(word, library_words)


def _other_form(word: str, library_words: Container[str]) -> bool:
    """Whether the library says `word` with another ending ("discriminator" for "discriminators")."""
    return any(word.endswith(e) and word[:-len(e)] in library_words or word + e in library_words for e in _ENDINGS)


def _beside(text: str, word: str, index: KeywordIndex) -> list[tuple[float, np.ndarray]]:
    """The question's other content words, as (IDF, a mask of the chunks holding it)."""
    out = []
    for token in set(content_tokens(re.sub(rf"(?<![{_EDGE}]){re.escape(word)}(?![{_EDGE}])", " ", text))):
        chunks = index.chunks_with(token)
        if len(chunks):
            mask = np.zeros(len(index), dtype=bool)
            mask[chunks] = True
            out.append((index.idf(token), mask))
    return out


def _best(word: str, index: KeywordIndex, library_words: Container[str], stem: Callable[[str], str],
          beside: list[tuple[float, np.ndarray]], seen: np.ndarray | None) -> str | None:
    """The slip of `word` the library uses (or an English word it uses in another form) that goes best with the
    question's other words, or None.

    Scored by how often the others come with it: the IDF-weighted share of its chunks holding each ("maching"
    beside "flow" is "matching": most chunks with "matching" say "flow", few with "machine" do); then by how many
    chunks hold it. An English word the library lacks is not offered: jargon the word list lacks would be read as
    its typo ("deraining" as "draining").
    """
    scored = []
    for candidate in slips(word):
        if len(candidate) < MIN_LENGTH or candidate not in library_words and not (
                candidate in english() and _other_form(candidate, library_words)):
            continue
        chunks = index.chunks_with(stem(candidate))
        if seen is not None:
            chunks = chunks[seen[chunks]]
        if len(chunks):
            together = sum(idf * mask[chunks].sum() for idf, mask in beside) / (len(chunks) + 1)
            scored.append((together, len(chunks), candidate))
    return max(scored)[2] if scored else None


def _cased(mended: str | None, word: str) -> str:
    if mended is None:
        return word
    return mended.capitalize() if word[0].isupper() else mended
