"""A numbered passage of the prompt, read once: its sentences, content words and hard facts."""

from __future__ import annotations

from dataclasses import dataclass

from paperbot.text import GENERIC_WORDS, content_words
from paperbot.text import sentences as split_text
from retrieval.grounding.facts import Evidence, plain


@dataclass(frozen=True)
class Passage:
    """A numbered passage of the prompt: its label and the sentences the model was shown."""

    n: int
    label: str
    text: str
    sentences: tuple[str, ...] = ()
    words: frozenset[str] = frozenset()
    evidence: Evidence | None = None

    @classmethod
    def of(cls, n: int, label: str, text: str) -> Passage:
        sentences = tuple(s for part in text.split(" … ") for s in split_text(part))  # " … ": quotes apart
        return cls(n, label, text, sentences or (text,),
                   frozenset(content_words(label + " " + plain(text), ignore=GENERIC_WORDS)),
                   Evidence.of(label + ": " + text))
