"""The field's general terms said by their instances: a paper that evaluates "Llama 3.1 8B" and "OLMo" speaks of LLMs
though its abstract never writes "LLM" or "language model".

A question's terms are matched word by word (retrieval/search.py, retrieval/snippets.py) and its names letter by
letter (retrieval/support.py); without this, "which paper studies sycophancy in LLMs?" finds the sycophancy paper
first and is then abstained on, because the one word it lacks is the question's second rarest. The terms and their
names are reviewed data (retrieval/data/instances.tsv), only names that mean nothing else in an abstract.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

from paperbot.text import says_name
from retrieval.keyword import content_tokens, tokenize


@dataclass(frozen=True)
class Term:
    """One general term: its written forms ("LLM", "large language model") and the names that say it."""

    forms: tuple[str, ...]
    names: tuple[str, ...]

    def said_in(self, text: str) -> bool:
        """Whether `text` writes one of the term's forms as words (case and a plural aside)."""
        return any(_form_pattern(form).search(text) for form in self.forms)


def load(text: str | None = None) -> tuple[Term, ...]:
    """The terms of the TSV `text` (default: the shipped file); a malformed line is named in the error."""
    if text is None:
        text = resources.files("retrieval").joinpath("data/instances.tsv").read_text(encoding="utf-8")
    terms = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        forms, sep, names = line.partition("\t")
        form_list = tuple(f.strip() for f in forms.split("|") if f.strip())
        name_list = tuple(n.strip() for n in names.split(",") if n.strip())
        if not sep or not form_list or not name_list:
            raise ValueError(f"instances.tsv line {number}: expected 'form|form<TAB>name, name', got {line!r}")
        terms.append(Term(form_list, name_list))
    return tuple(terms)


@cache
def _shipped() -> tuple[Term, ...]:
    return load()


@cache
def _form_pattern(form: str) -> re.Pattern[str]:
    return re.compile(r"(?<![^\W_])" + re.escape(form) + r"(?:s|es)?(?![^\W_])", re.IGNORECASE)


def _name_token(name: str) -> str:
    """The token a name is indexed by ("llama" of "LLaMA", "gpt-4v" of "GPT-4V")."""
    return tokenize(name)[0]


def said_by(question: str, terms: tuple[Term, ...] | None = None) -> dict[str, tuple[frozenset[str], ...]]:
    """For each content token of a general term the question writes ("llm"; "languag" and "model" of "language
    models"), the ways a text says the term otherwise: each a set of tokens it holds all of, one of the names
    ("llama") or another form's words ("larg", "languag", "model")."""
    out: dict[str, set[frozenset[str]]] = {}
    for term in _shipped() if terms is None else terms:
        written = [m.group() for form in term.forms for m in _form_pattern(form).finditer(question)]
        if not written:
            continue
        ways = {frozenset({_name_token(n)}) for n in term.names}
        ways |= {frozenset(content_tokens(form)) for form in term.forms if content_tokens(form)}
        for words in written:  # keyed by the question's own tokens ("llms" of "LLMs")
            for token in content_tokens(words):
                out.setdefault(token, set()).update(w for w in ways if token not in w)
    return {token: tuple(sorted(ways, key=sorted)) for token, ways in out.items()}


def holding(held: set[str], said: Mapping[str, tuple[frozenset[str], ...]]) -> set[str]:
    """`held` (a text's tokens) with the general terms it says another way (by a name or another form)."""
    return held | {token for token, ways in said.items() if token not in held and any(w <= held for w in ways)}


def says_by_name(name: str, text: str, terms: tuple[Term, ...] | None = None) -> bool:
    """Whether `text` says the question's name `name` ("LLMs") by one of the names of the term it writes."""
    for term in _shipped() if terms is None else terms:
        if term.said_in(name) and any(says_name(n, text) for n in term.names):
            return True
    return False
