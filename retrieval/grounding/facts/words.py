"""The words the fact readers share: passage text made plain (LaTeX rendered, accents dropped), the names a
sentence relies on, its content stems in order, its clauses, and whether a negation comes just before a word."""

from __future__ import annotations

import re
import unicodedata

from paperbot.text import STOPWORDS as TEXT_STOPWORDS
from paperbot.text import GENERIC_WORDS, readable, stem


STOPWORDS = TEXT_STOPWORDS | GENERIC_WORDS
STOP_STEMS = frozenset(stem(w) for w in STOPWORDS) | STOPWORDS


SUPERSCRIPTS = str.maketrans({c: f"^{d}" for d, c in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")} | {"⁻": "-"})


def plain(text: str) -> str:
    """Passage text as people read it (LaTeX rendered: 4.2$\\times$ → 4.2×, 10\\% → 10%), with Greek letters also
    spelled out (β-DPO is also "beta-DPO"), accents dropped ("Rényi" is "Renyi") and negations written out ("don't"
    is "do not"), to find numbers, names and denials in."""
    text = uncontracted(unaccented(text)).translate(SUPERSCRIPTS)  # "α³" is "α^3", as written or as rendered from LaTeX
    shown = re.sub(r"%(?=[^\W\d_])", "% ", readable(text))  # "100\%constraint": 100 % of something
    shown = shown.translate(SUPERSCRIPTS)
    spelled = re.sub(r"[$\\{}]", "", text)
    return shown if shown == spelled else f"{shown} {spelled}"


def unaccented(text: str) -> str:
    """`text` with the accents of Latin letters dropped ("Rényi" → "Renyi"); other scripts are left as they are."""
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


_CONTRACTED = re.compile(r"\b([A-Za-z]+?)n['’]t\b")
_IRREGULAR = {"ca": "can", "wo": "will", "sha": "shall", "ai": "is"}  # can't, won't, shan't, ain't


def uncontracted(text: str) -> str:
    """`text` with its negations written out: "don’t" → "do not", "won't" → "will not", "can't" → "can not"."""
    return _CONTRACTED.sub(lambda m: f"{_IRREGULAR.get(m.group(1).lower(), m.group(1))} not", text)


TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+@’'_-]*[A-Za-z0-9+]|[A-Za-z]")


def names(text: str) -> list[str]:
    """Names the sentence relies on: acronyms (BMT), CamelCase (IFEval, LoRA), letters with digits (Qwen3, AS2)."""
    out = []
    for m in TOKEN.finditer(text):
        token = re.sub(r"(?:['’]s|['’])$", "", m.group(0)).rstrip(".")
        if not re.search(r"[A-Za-z]", token) or re.fullmatch(r"\d+(?:\.\d+)?[KMBkmbx]", token):
            continue
        upper = sum(c.isupper() for c in token)
        if (upper >= 2 or re.search(r"[a-z][A-Z]", token)
                or (re.search(r"\d", token) and re.search(r"[A-Za-z]{2}", token))):
            out.append(token)
    return out


SENTENCE_NEGATION = re.compile(r"\b(?:without|no|zero|not|never|cannot|fail\w*|unable|lack\w*|rather than|instead of|"
                               r"avoid\w*|free)\b|无需|不|没有|无", re.I)


def after_negation(text: str, start: int, reach: int = 16) -> bool:
    """Whether a negation comes just before `start` ("not all", "rather than multi-turn"): read with it, not alone."""
    return bool(SENTENCE_NEGATION.search(text[max(0, start - reach):start]))


def clauses(text: str) -> list[str]:
    """`text` cut after every full stop, semicolon, question or exclamation mark: what one statement says."""
    return re.split(r"(?<=[.;!?])\s+", text)


def ordered_stems(text: str) -> list[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return list(dict.fromkeys(stem(w) for w in words if w not in STOPWORDS and len(w) > 1))
