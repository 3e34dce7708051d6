"""Only checked text is shown as an LLM answer: the model's reply, cleaned and judged sentence by sentence.

Small models produce debris that looks like an answer: chat-template tokens and
role markers, the prompt echoed back (the passage list, "Question:" lines, the
rules), a literal "[n]", one sentence repeated to the length cap. Capable models
produce something subtler: a fluent sentence with one wrong number, "outperforms"
where the paper says "matches", a result credited to the wrong paper. Each
sentence of a reply is judged on its own (`Checker.judge`), so a stream can be
shown sentence by sentence with nothing shown ever withdrawn (retrieval/checks.py):

* **hard facts, exactly**: every number with its unit (%, ×, points, K/M/B), every
  name (acronyms, CamelCase, names with digits or inner capitals) must appear in
  the passages the sentence cites, or in the question; a comparison
  ("outperforms", "state-of-the-art", 超过) needs comparative wording there, and is
  refused where the passage puts the same thing on par ("matches full
  fine-tuning"); a number the passage ties to another benchmark ("99.94 % on
  CLEVR-Hans3") cannot be moved to a different one; what the passage says is done
  "without" something the sentence may not claim it is done with;
* **meaning**: the sentence's content words, as the embedder reads them in
  context, are aligned greedily with the cited passages' tokens (BERTScore-style
  precision, from the same forward pass that gives a sentence vector), averaged
  with the share of its stemmed content words the passages contain (the
  question's words count when the passage has them, and are left out when it
  has not); the sentence is supported at `SUPPORT_THRESHOLD` or above;
* a sentence its citations do not support is given the one passage that does
  (re-cited), or removed; an uncited sentence is given the passage that supports
  it, or removed;
* an honest gap ("The passages do not say whether…", "段落没有说明…") is
  recognized by its form, checked for facts against every passage, and shown
  uncited behind `HEDGE_MARK`;
* a sentence in another script (Chinese) is checked by its anchors: the numbers,
  names and English terms it keeps (the prompt asks for them), exactly as above;
  one without any anchor cannot be checked (the English embedder does not read
  Chinese: benchmarks/llm_grounding.py measures it) and is removed with a note.

The thresholds are calibrated by benchmarks/llm_grounding.py on a labelled set of
capable-model answers and on recorded replies of small real models (docs/llm.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from paperbot.language import guess_language
from paperbot.text import STOPWORDS as TEXT_STOPWORDS
from paperbot.text import GENERIC_WORDS, content_words
from paperbot.text import sentences as split_text
from paperbot.text import WIDE_END, readable, stem
from paperbot.text import words as _words
from retrieval import prompts

SUPPORT_THRESHOLD = 0.66  # calibrated: benchmarks/llm_grounding.py --sweep (docs/llm.md)
MIN_WORDS = 3  # content words a checked sentence needs; shorter ones are filler ("Yes [1].")
HEDGE_MARK = "ⓘ"  # before a sentence that says what the passages do not cover (it cites nothing)

TokenVectors = tuple[list[tuple[int, int]], np.ndarray]  # (character span of each token, unit vectors)


class Encoder(Protocol):
    """What the check needs of an embedder (ingest/embed.Embedder): sentence vectors and token vectors."""

    def encode(self, texts: list[str]) -> np.ndarray: ...

    def encode_tokens(self, texts: list[str]) -> list[TokenVectors]: ...


# -- debris -------------------------------------------------------------------------------------

# Tokens that end a turn: the reply stops there; what follows is the model playing the next turn.
_TURN_END = re.compile(r"<\|(?:im_end|eot_id|end|endoftext|end_of_text|eom_id)\|>|<end_of_turn>|</s>|<\|END_OF_TURN_TOKEN\|>",
                       re.I)
# Tokens that start a turn, with the role that follows them.
_TURN_START = re.compile(r"(?:<\|im_start\|>|<start_of_turn>|<\|start_header_id\|>)\s*(?:[a-z_]+)?\s*"
                         r"(?:<\|end_header_id\|>)?\s*", re.I)
_OTHER_TOKENS = re.compile(r"<\|[A-Za-z0-9_ .:-]{1,40}\|>|</?s>|<bos>|<eos>|<pad>|<unk>|\[/?INST\]|<</?SYS>>|"
                           r"<start_of_turn>|<end_of_turn>|</?(?:start|end)_of_turn>", re.I)
_ROLE_LINE = re.compile(r"^\s*(?:#+\s*)?(?:user|assistant|system|model|human|ai)\s*:?\s*$", re.I)
_ROLE_PREFIX = re.compile(r"^\s*(?:\*\*)?(?:user|human)(?:\*\*)?\s*:", re.I)
_ANSWER_PREFIX = re.compile(r"^\s*(?:\*\*)?(?:assistant|answer|model|response|回答|答案)(?:\*\*)?\s*[:：]\s*", re.I)
_ECHO_LINE = re.compile(r"^\s*(?:\*\*)?(?:passages?|question|rules|context|sources?|问题)(?:\*\*)?\s*[:：]", re.I)
# Talk about the prompt or the conversation rather than the papers: "The passage is about…", "I'm ready to help".
_META = re.compile(r"^\W*(?:the|this|these|that)\s+(?:passage|passages|answer|question|text|context|prompt)s?\b"
                   r"|\b(?:I'm|I am|I'll|I will|let me|feel free|happy to help|ready to assist|as an AI)\b"
                   r"|\bpassage list\b", re.I)
_PLACEHOLDER = re.compile(r"\s?\[\s*(?:n|N|x|X|k|i|#|number|num|citation|cite|ref|source|passage)\s*\]")
_CITE = re.compile(r"\[(\d{1,3})\]")


def strip_template(text: str) -> str:
    """The reply without chat-template tokens and role markers, cut where the model starts another turn."""
    # A reply may open with a turn header ("<|im_start|>assistant\n…"): drop it, then cut at the next turn.
    text = text.lstrip()
    while True:
        m = _TURN_START.match(text)
        if not m:
            break
        text = text[m.end():]
    for pattern in (_TURN_END, _TURN_START):
        m = pattern.search(text)
        if m and text[: m.start()].strip():
            text = text[: m.start()]
        elif m:
            text = text[m.end():]
    text = _OTHER_TOKENS.sub(" ", text)
    lines: list[str] = []
    for line in text.split("\n"):
        if _ROLE_PREFIX.match(line) and lines:
            break  # the model invents the next question
        if _ROLE_LINE.match(line):
            if any(x.strip() for x in lines):
                break
            continue
        lines.append(_ANSWER_PREFIX.sub("", line))
    return "\n".join(lines)


_PROMPT_LINES = [set(_words(line)) for line in (prompts.SYSTEM + "\n" + prompts.USER).split("\n")
                 if len(_words(line)) >= 4]


_LIST_MARK = re.compile(r"^(?:[-*•]|\d{1,2}[.)])\s+")


def _squash(text: str) -> str:
    return " ".join(_words(text.replace("…", " ")))


def _echoes_prompt(line: str, passages: Sequence[Passage]) -> bool:
    """A line that reproduces the prompt: a passage line ("[2] Label: …", or "[2]" and the start of the label
    or of the passage), a "Question:" line, a rule."""
    bare = _LIST_MARK.sub("", line.strip())
    if _ECHO_LINE.match(bare):
        return True
    head = re.match(r"^(?:\[\d{1,3}\]\s*)?(.{1,200}?)\s*:", bare)  # "[2] Label:" or "Label:", as listed
    if head:
        named = _squash(head.group(1))
        for p in passages:
            label, text = _squash(p.label), _squash(p.text)
            if label and (named == label or (len(named) >= 6 and label.startswith(named))):
                return True
            if len(named) >= 12 and text.startswith(named):  # "The passage's first words: …"
                return True
    m = re.match(r"^\[\d{1,3}\]\s*(.+)$", bare)
    if m:
        rest = _squash(m.group(1))
        for p in passages:
            for start in (_squash(p.label), _squash(p.text)):
                opening = start[:40].rsplit(" ", 1)[0] if len(start) > 40 else start
                if opening and len(opening) >= 6 and rest.startswith(opening):
                    return True
    words = set(_words(bare))
    if len(words) >= 4:
        for prompt_line in _PROMPT_LINES:
            if len(words & prompt_line) >= 0.8 * len(words):
                return True
    return False


def remove_echo(text: str, passages: Sequence[Passage]) -> tuple[str, int]:
    """(text without echoed prompt lines, how many lines were removed)."""
    kept, removed = [], 0
    for line in text.split("\n"):
        if line.strip() and _echoes_prompt(line, passages):
            removed += 1
            continue
        kept.append(line)
    return "\n".join(kept), removed


# -- sentences --------------------------------------------------------------------------------

def _normalized(sentence: str) -> str:
    return " ".join(_words(_CITE.sub(" ", sentence)))



# -- words ------------------------------------------------------------------------------------

STOPWORDS = TEXT_STOPWORDS | GENERIC_WORDS
_STOP_STEMS = frozenset(stem(w) for w in STOPWORDS) | STOPWORDS


def plain(text: str) -> str:
    """Passage text as people read it (LaTeX rendered: 4.2$\\times$ → 4.2×, 10\\% → 10%), with Greek letters also
    spelled out (β-DPO is also "beta-DPO"), to find numbers and names in."""
    shown = re.sub(r"%(?=[^\W\d_])", "% ", readable(text))  # "100\%constraint": 100 % of something
    spelled = re.sub(r"[$\\{}]", "", text)
    return shown if shown == spelled else f"{shown} {spelled}"


# -- hard facts -------------------------------------------------------------------------------

_NUMBER_WORDS = {w: i for i, w in enumerate("two three four five six seven eight nine ten eleven twelve thirteen "
                                            "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split(), 2)}
_NUMBER = re.compile(r"(?<![\w.\-])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?:\s?(%|×|x|-?fold|points?|pp|[KMB])"
                     r"|(?=[\s,;:.)\]/，。、）]|$))(?![A-Za-z0-9])|(?<![\w-])(" + "|".join(_NUMBER_WORDS) + r")\b",
                     re.I)
# Words in a passage that give a count a sentence may state as a number: "a dual-track evaluation" has two tracks.
_IMPLIED = re.compile(r"\b(?:(dual|double|twofold|two-fold|both|pair|twin|bi)|(triple|threefold|three-fold|tri))(?=[\s-])",
                      re.I)
_MULTIPLIER = {"k": 1e3, "m": 1e6, "b": 1e9}
_UNIT = {"%": "%", "×": "x", "x": "x", "fold": "x", "-fold": "x", "point": "pt", "points": "pt", "pp": "pt"}


def numbers(text: str) -> list[tuple[str, float, str | None]]:
    """(as written, value, unit) of every number in `text`; 50K is 50000, "twelve" 12, "1000x" a factor."""
    out: list[tuple[str, float, str | None]] = []
    for m in _NUMBER.finditer(text):
        if m.group(3):
            out.append((m.group(3), float(_NUMBER_WORDS[m.group(3).lower()]), None))
            continue
        value = float(m.group(1).replace(",", ""))
        unit = (m.group(2) or "").lower() or None
        if unit in _MULTIPLIER:
            value, unit = value * _MULTIPLIER[unit], None
        out.append((m.group(0).strip(), value, _UNIT.get(unit or "", unit)))
    return out


_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+@’'_-]*[A-Za-z0-9+]|[A-Za-z]")


def names(text: str) -> list[str]:
    """Names the sentence relies on: acronyms (BMT), CamelCase (IFEval, LoRA), letters with digits (Qwen3, AS2)."""
    out = []
    for m in _TOKEN.finditer(text):
        token = re.sub(r"(?:['’]s|['’])$", "", m.group(0)).rstrip(".")
        if not re.search(r"[A-Za-z]", token) or re.fullmatch(r"\d+(?:\.\d+)?[KMBkmbx]", token):
            continue
        upper = sum(c.isupper() for c in token)
        if upper >= 2 or re.search(r"[a-z][A-Z]", token) or (re.search(r"\d", token) and re.search(r"[A-Za-z]{2}", token)):
            out.append(token)
    return out


_COMPARATIVE = re.compile(r"\b(?:outperform\w*|surpass\w*|beat(?:s|ing)?|better than|superior|exceed\w*|"
                          r"(?:more|less) [\w-]+ than|(?:higher|lower|faster|slower|larger|smaller|stronger) than)\b"
                          r"|超过|优于|胜过|超越|好于|更好", re.I)
_SUPERLATIVE = re.compile(r"\b(?:state[- ]of[- ]the[- ]art|sota|best-performing)\b|最先进|最好|最佳|领先", re.I)
# Words that make a claim absolute; a sentence may use them only where its passage does.
_ABSOLUTE = re.compile(r"\b(?:the only|always|regardless|solely|exclusively|guarantee[sd]?|invariably|entirely)\b", re.I)
_PASSAGE_COMPARATIVE = re.compile(
    r"\b(?:outperform\w*|surpass\w*|beat(?:s|ing)?|better than|(?:competitive|comparable|similar) or better|"
    r"better performance|superior|exceed\w*|"
    r"(?:higher|lower|faster|fewer|less|smaller|larger) than|gains? over|advantage over|state[- ]of[- ]the[- ]art|"
    r"sota|more \w+ than)\b", re.I)
_PASSAGE_SUPERLATIVE = re.compile(r"\b(?:state[- ]of[- ]the[- ]art|sota|best|new record)\b", re.I)
_PARITY = re.compile(r"\b(?:closely matches|matches|match|matching|comparable|on par with|competitive with|similar to)"
                     r"\s+((?:[\w-]+[\s.,;:]*){0,4})", re.I)
_SENTENCE_PARITY = re.compile(r"\b(?:match\w*|comparable|on par|competitive|similar|close to|closely)\b|相当|接近|持平|媲美",
                              re.I)
_NEGATED = re.compile(r"\b(?:(?<!with and )(?<!with or )without|no|zero|not|never|rather than|instead of)"
                      r"\s+((?:[\w'’-]+[\s.,;:]*){1,3})", re.I)
_SENTENCE_NEGATION = re.compile(r"\b(?:without|no|zero|not|never|rather than|instead of|avoid\w*|free)\b|无需|不|没有|无", re.I)
# "less suited" against "best suited": a degree word before the same word, in the other direction.
_DEGREE = re.compile(r"\b(more|most|better|best|highly|well|greatly|less|least|worse|worst|poorly|barely)\s+([a-z][a-z-]+)",
                     re.I)
_DEGREE_DOWN = frozenset({"less", "least", "worse", "worst", "poorly", "barely"})
# "a single forward pass with zero oracle calls" against "a few forward passes": how many, said in words.
_COUNT = re.compile(r"\b(zero|no|a single|single|only one|one|a few|few|a small number of|a handful of|several|"
                    r"multiple|many)\s+((?:[a-z][\w-]*\s*){1,2})", re.I)
_COUNT_CLASS = {"zero": "none", "no": "none", "a single": "one", "single": "one", "only one": "one", "one": "one"}
# "erases a model's latent knowledge" against "models retain latent knowledge": opposite verbs on the same thing.
_KEEPS = re.compile(r"\b(?:retain|keep|preserv|maintain|restor)\w*\s+((?:[\w'’-]+\s*){1,3})", re.I)
_LOSES = re.compile(r"\b(?:eras|los[et]|remov|destroy|discard|forget|forgot|eliminat)\w*\s+((?:[\w'’-]+\s*){1,3})", re.I)
# "a fixed parameter budget" against "a budget that grows with …".
_FIXED = re.compile(r"\b(?:fixed|constant|static|unchanged)\s+((?:[a-z][\w-]*\s*){1,2})", re.I)
_GROWING = re.compile(r"\b([a-z][a-z-]+)\s+(?:that|which)\s+(?:grows?|increases?|varies|vary|changes?|scales?)\b"
                      r"|\b(?:growing|increasing|varying|changing)\s+((?:[a-z][\w-]*\s*){1,2})", re.I)
# "99.94% on CLEVR-Hans3", "在 CLEVR-Hans7 上达到 99.94%", "On CLEVR-Hans7 it reaches 87.77%": which number goes with
# which benchmark.
_BINDING_AFTER = re.compile(r"(\d+(?:\.\d+)?)\s?%?\s+(?:[a-z][a-z-]*\s+){0,3}(?:on|in)\s+([A-Za-z][\w.-]*[A-Za-z0-9])")
_BINDING_BEFORE = re.compile(r"(?:\b[Oo]n|在)\s*([A-Za-z][\w.-]*[A-Za-z0-9])\s*上?[^.。;；\d]{0,24}?(\d+(?:\.\d+)?)\s?%")


def _bindings(text: str) -> set[tuple[float, str]]:
    """(number, the benchmark or setting it is given for): "87.77% on CLEVR-Hans7", "on Visual Sudoku … 99.89%"."""
    out = {(float(v), n.lower()) for v, n in _BINDING_AFTER.findall(text) if names(n) or n[:1].isupper()}
    return out | {(float(v), n.lower()) for n, v in _BINDING_BEFORE.findall(text) if names(n) or n[:1].isupper()}


def _degrees(text: str) -> set[tuple[bool, str]]:
    """(down, the word's stem) of every "more X" / "less X": "less suited" is (True, "suit")."""
    return {(m.group(1).lower() in _DEGREE_DOWN, s) for m in _DEGREE.finditer(text) for s in _ordered_stems(m.group(2))[:1]}


def _counts(text: str) -> set[tuple[str, str]]:
    """(none / one / some, the first word counted): "zero inference-time oracle calls" is ("none", "infer")."""
    out = set()
    for m in _COUNT.finditer(text):
        counted = _ordered_stems(m.group(2))[:1]
        out |= {(_COUNT_CLASS.get(" ".join(m.group(1).lower().split()), "some"), s) for s in counted}
    return out


def _kept(text: str, verbs: re.Pattern[str]) -> set[str]:
    """What `text` says is kept (or lost): the words after the verb, stemmed."""
    return {s for m in verbs.finditer(text) for s in _ordered_stems(m.group(1))[:3] if s not in GENERIC_WORDS}


def _fixed(text: str) -> set[str]:
    return {s for m in _FIXED.finditer(text) for s in _ordered_stems(m.group(1))[:2]}


def _growing(text: str) -> set[str]:
    return {s for m in _GROWING.finditer(text) for s in _ordered_stems(m.group(1) or m.group(2))[:2]}


@dataclass(frozen=True)
class Evidence:
    """What a set of passages (or the question) can vouch for, read once per reply."""

    text: str  # lower case, LaTeX made plain
    cased: str  # the same, as written
    values: frozenset[tuple[float, str | None]]
    stems: frozenset[str]
    comparative: bool
    superlative: bool
    parity: tuple[frozenset[str], ...]  # what the passage puts on par: "matches full fine-tuning"
    negated: tuple[frozenset[str], ...]  # what it says is done without: "without external teachers"
    denied: frozenset[str]  # every word it puts after a negation ("not", "no", "without", "never")
    bindings: frozenset[tuple[float, str]]
    degrees: frozenset[tuple[bool, str]] = frozenset()  # "less suited": (True, "suit")
    counts: frozenset[tuple[str, str]] = frozenset()  # "zero oracle calls": ("none", "oracl")
    fixed: frozenset[str] = frozenset()  # what it says is fixed: "a fixed parameter budget"
    keeps: frozenset[str] = frozenset()  # what it says is retained or preserved
    loses: frozenset[str] = frozenset()  # what it says is erased or lost

    @classmethod
    def of(cls, text: str) -> Evidence:
        flat = " ".join(plain(text).split())
        return cls(
            text=flat.lower(), cased=flat,
            values=frozenset((v, u) for _, v, u in numbers(flat))
            | {(2.0 if m.group(1) else 3.0, None) for m in _IMPLIED.finditer(flat)},
            stems=frozenset(content_words(flat, ignore=GENERIC_WORDS)),
            comparative=bool(_PASSAGE_COMPARATIVE.search(flat)),
            superlative=bool(_PASSAGE_SUPERLATIVE.search(flat)),
            parity=tuple(s for s in (frozenset(list(_ordered_stems(m.group(1)))[:3]) for m in _PARITY.finditer(flat))
                         if len(s) >= 2),
            negated=tuple(s for s in (frozenset(list(_ordered_stems(m.group(1)))[:2]) for m in _NEGATED.finditer(flat))
                          if len(s) == 2),
            denied=frozenset(w for m in _NEGATED.finditer(flat) for w in _ordered_stems(m.group(1))[:3]),
            bindings=frozenset(_bindings(flat)), degrees=frozenset(_degrees(flat)),
            counts=frozenset(_counts(flat)), fixed=frozenset(_fixed(flat)),
            keeps=frozenset(_kept(flat, _KEEPS)), loses=frozenset(_kept(flat, _LOSES)))

    def has_value(self, value: float, unit: str | None) -> bool:
        return any(abs(v - value) <= 1e-9 * max(1.0, abs(value)) and (unit is None or u is None or u == unit)
                   for v, u in self.values)

    def has_name(self, name: str) -> bool:
        """`name` is in the text: as written, singular or plural, inside a longer name ("LLMs" in "MLLMs",
        "GRPO" in "GRPO-style"), or as the initials of consecutive words ("UCB": "upper confidence bound")."""
        low = name.lower()
        forms = {low, low.rstrip("s"), low + "s", low.replace("-", " "), low.replace("-", "")}
        if any(re.search(r"(?<![a-z0-9])" + re.escape(f) + r"(?![a-z0-9])", self.text) for f in forms if f):
            return True
        acronym = re.fullmatch(r"([A-Z][A-Z0-9]{1,7})s?", name)
        core = acronym.group(1) if acronym else name
        if len(core) >= 3:
            for token in re.findall(r"[A-Za-z0-9][A-Za-z0-9.+-]*", self.cased):
                token = token.rstrip(".")
                if acronym and re.sub(r"s$", "", token).endswith(core):
                    return True
                if token.lower().startswith(core.lower()) and re.match(r"[-.\d]", token[len(core):] or "-"):
                    return True
        if acronym:
            initials = core.lower()
            words = re.findall(r"[a-z0-9]+", self.text)
            return any("".join(w[0] for w in words[i:i + len(initials)]) == initials for i in range(len(words)))
        return False


def _ordered_stems(text: str) -> list[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return list(dict.fromkeys(stem(w) for w in words if w not in STOPWORDS and len(w) > 1))


_MENTION = re.compile(r"<[@#][!&]?\d+>")  # Discord mention syntax: its digits are an id, not a number
# Mentions and removed links claim nothing (the front ends neutralize them); they are not checked as words.
_NOT_A_CLAIM = re.compile(r"<[@#][!&]?\d+>|@everyone|@here|\(link removed\)", re.I)


def fact_problem(sentence: str, support: Evidence, asked: Evidence | None = None, *, latin_terms: bool = False,
                 number_words: bool = True, denials: bool = True) -> str | None:
    """Why `support` (the cited passages) cannot vouch for the hard facts of `sentence`; None when it can.

    `latin_terms`: also every English word kept in a sentence in another script (a technical term).
    `number_words`: "five benchmarks" counts as a number (not in a hedge's "the two approaches").
    """
    bare = " ".join(_MENTION.sub(" ", _CITE.sub(" ", sentence)).split())
    for written, value, unit in numbers(bare):
        if not number_words and not written[0].isdigit():
            continue
        if not support.has_value(value, unit) and not (asked and asked.has_value(value, unit)):
            return f"the number {written} is not in the passage"
    for name in names(bare):
        if not support.has_name(name) and not (asked and asked.has_name(name)):
            return f"{name} is not in the passage"
    if latin_terms:
        rest = " ".join(t for t in _TOKEN.findall(bare) if not names(t) and not re.search(r"\d", t))
        words = content_words(" ".join(re.findall(r"[A-Za-z][A-Za-z-]+", rest)), ignore=GENERIC_WORDS, latin_only=True)
        missing = words - support.stems - (asked.stems if asked else frozenset())
        if missing:
            return f"the term {sorted(missing)[0]!r} is not in the passage"
    stems = set(_ordered_stems(bare)) | content_words(bare, ignore=GENERIC_WORDS, latin_only=True)
    if _COMPARATIVE.search(bare):
        if not support.comparative:
            return "the passage makes no such comparison"
        if not _SENTENCE_PARITY.search(bare) and any(p <= stems for p in support.parity):
            return "the passage says it matches, not that it is better"
    if _SUPERLATIVE.search(bare) and not support.superlative:
        return "the passage claims no state of the art"
    for m in _ABSOLUTE.finditer(bare):  # "the only effective route", "regardless of", where the passage hedges
        if not re.search(r"\b" + re.escape(m.group(0).lower()), support.text):
            return f"the passage does not say {m.group(0).lower()!r}"
    if not _SENTENCE_NEGATION.search(bare) and any(n <= stems for n in support.negated):
        return "the passage says it is done without that"
    if denials:  # "supports RL but not supervised fine-tuning" where the passage supports both
        for m in _NEGATED.finditer(bare + " "):
            denied = set(_ordered_stems(m.group(1))[:2])
            if len(denied) == 2 and denied <= support.stems and not denied & support.denied:
                return "the passage does not say it is not so"
    for down, word in _degrees(bare):  # "best suited" where the passage says "less suited"
        if (not down, word) in support.degrees and (down, word) not in support.degrees:
            return "the passage says it the other way round"
    for kind, word in _counts(bare):  # "a few forward passes" where the passage says "a single forward pass"
        said = {k for k, w in support.counts if w == word}
        if said and kind not in said:
            return f"the passage counts {sorted(said)[0]}, not {kind}"
    lost, kept = _kept(bare, _LOSES), _kept(bare, _KEEPS)  # "erases its knowledge" where the passage says "retains"
    if (lost & support.keeps) - support.loses or (kept & support.loses) - support.keeps:
        return "the passage says the opposite"
    if _growing(bare) & support.fixed:  # "a budget that grows" where the passage says "a fixed budget"
        return "the passage says it is fixed"
    bound = _bindings(bare)
    for value, name in bound:
        others = {n for v, n in support.bindings if v == value}
        if others and name not in others:
            return f"the passage gives that number for {sorted(others)[0]}"
    return None


# -- hedges -----------------------------------------------------------------------------------

_HEDGE = re.compile(
    r"^\W*(?:(?:however|but|unfortunately|note that),?\s+)?(?:"
    r"(?:the|these)?\s*(?:provided\s+|given\s+|retrieved\s+|available\s+)?(?:passages?|abstracts?|sources?|excerpts?)\s+"
    r"(?:do(?:es)?\s+not|don['’]t|doesn['’]t|did\s+not|never)\b"
    r"|none of the (?:passages|abstracts|papers|sources)\b|no passage\b"
    r"|it is (?:not|un)(?:clear|stated|specified|known|reported)\b"
    r"|(?:this|that|it) is not (?:stated|reported|described|specified|covered|given|mentioned)\b"
    r"|there is no (?:information|mention|detail)\b)"
    r"|(?:段落|文中|摘要|这些段落|所给段落|材料|资料)(?:中|里)?(?:并)?(?:没有|未|没)(?:有)?(?:说明|提及|提到|给出|报告|描述|指出|涉及|比较|解释|讨论|交代)"
    r"|不清楚|尚不明确|未说明|未提及|没有提到|没有说明", re.I)


def is_hedge(sentence: str) -> bool:
    """A sentence that says what the passages do not cover, recognized by its form."""
    return bool(_HEDGE.search(_CITE.sub("", sentence)))


# -- meaning ----------------------------------------------------------------------------------


class Meaning:
    """Greedy token alignment of a sentence with passages (BERTScore precision), plus stem coverage.

    The passages' token vectors are computed once per reply, on first use.
    """

    def __init__(self, passages: Sequence[Passage], encoder: Encoder | None) -> None:
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
        ((spans, vectors),) = self.encoder.encode_tokens([bare])
        words = [(m.start(), m.end(), m.group(0).lower()) for m in re.finditer(r"[^\W_]+", bare)]
        keep = []
        for k, (a, _) in enumerate(spans):
            word = next((w for s, e, w in words if s <= a < e), "")
            if word and word not in STOPWORDS and stem(word) not in _STOP_STEMS and (len(word) > 1 or word.isdigit()):
                keep.append(k)
        return vectors[keep] if keep else None

    def score(self, bare: str, cited: Sequence[int], tokens: np.ndarray | None, asked: frozenset[str]) -> float:
        """Support of `bare` by the passages `cited` together, 0–1: mean of token alignment and stem coverage."""
        passages = [self.passages[n] for n in cited if n in self.passages]
        if not passages:
            return 0.0
        words = content_words(bare, ignore=GENERIC_WORDS)
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


# -- the check of one sentence ----------------------------------------------------------------


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


@dataclass(frozen=True)
class Decision:
    """What becomes of one sentence: `shown` (empty when removed), or the `reason` (a removal kind) and `why`."""

    sentence: str
    shown: str = ""
    reason: str | None = None  # echo, filler, unsupported, uncited, fact, uncheckable
    why: str = ""
    checked: bool = False  # a claim its passage supports (hedges and removed sentences are not)
    recited: bool = False
    score: float = 0.0


class Checker:
    """Judges the sentences of one reply against its passages, one at a time (see the module docstring)."""

    def __init__(self, passages: Sequence[Passage], encoder: Encoder | None = None, *, question: str = "",
                 threshold: float | None = None) -> None:
        self.passages = list(passages)
        self.by_n = {p.n: p for p in self.passages}
        self.threshold = SUPPORT_THRESHOLD if threshold is None else threshold
        self.asked = frozenset(content_words(question, ignore=GENERIC_WORDS))
        self.asked_evidence = Evidence.of(question) if question.strip() else None
        self.everything = Evidence.of(" ".join(f"{p.label}: {p.text}" for p in self.passages))
        self.meaning = Meaning(self.passages, encoder)

    def _evidence(self, ns: Sequence[int]) -> Evidence:
        if len(ns) == 1:
            return self.by_n[ns[0]].evidence or Evidence.of(self.by_n[ns[0]].text)
        return Evidence.of(" ".join(f"{self.by_n[n].label}: {self.by_n[n].text}" for n in ns))

    def judge(self, sentence: str) -> Decision:
        cited = [n for n in dict.fromkeys(int(x) for x in _CITE.findall(sentence)) if n in self.by_n]
        bare = " ".join(_NOT_A_CLAIM.sub(" ", _CITE.sub(" ", sentence)).split())  # what is checked
        bare = re.sub(r"\s+([.,;:!?。，；：！？])", r"\1", bare)
        if not bare or not self.passages:
            return Decision(sentence, reason="filler", why="nothing to check")
        english = guess_language(bare) == "en"
        if is_hedge(bare):
            problem = fact_problem(bare, self.everything, self.asked_evidence, number_words=False, denials=False)
            if problem:
                return Decision(sentence, reason="fact", why=problem)
            return Decision(sentence, shown=f"{HEDGE_MARK} {bare}")
        if _META.search(bare):
            return Decision(sentence, reason="echo", why="talks about the prompt")
        if re.match(r"\s*\[\d{1,3}\]", sentence):
            return Decision(sentence, reason="echo", why="lists a passage")
        claimed = content_words(bare, ignore=GENERIC_WORDS)
        if english and (len(claimed) < MIN_WORDS or not claimed - self.asked):
            return Decision(sentence, reason="filler", why="says nothing beyond the question")
        anchored = bool(numbers(bare) or names(bare) or re.search(r"[A-Za-z]{3}", bare))
        if not english and not anchored:
            return Decision(sentence, reason="uncheckable", why="no name, term or number to check it by")
        tokens = self.meaning.sentence_tokens(bare) if english else None

        def supported(ns: Sequence[int]) -> tuple[bool, str, float]:
            problem = fact_problem(bare, self._evidence(ns), self.asked_evidence, latin_terms=not english)
            if problem:
                return False, problem, 0.0
            if not english:
                return True, "", 1.0  # every anchor is in the passage
            score = self.meaning.score(bare, ns, tokens, self.asked)
            if len(ns) > 1 and min(self.meaning.score(bare, [n], tokens, self.asked) for n in ns) < self.threshold / 2:
                return False, "not supported by every passage it cites", score  # each cited passage contributes
            return score >= self.threshold, "" if score >= self.threshold else "not supported", score

        why, best = "", 0.0
        if cited:
            ok, why, best = supported(cited)
            if ok:
                return Decision(sentence, shown=sentence, checked=True, score=best)
        candidates = []
        for p in self.passages:
            if [p.n] == cited:
                continue
            ok, _, score = supported([p.n])
            if ok:
                candidates.append((score, p.n))
        if candidates:
            score, n = max(candidates)
            return Decision(sentence, shown=_cite(bare, [n]), checked=True, recited=bool(cited), score=score)
        if not cited:
            return Decision(sentence, reason="uncited", why="cites no passage, and none supports it")
        reason = "fact" if why and not why.startswith("not supported") else "unsupported"
        return Decision(sentence, reason=reason, why=why or "not supported", score=best)


# -- a whole reply ----------------------------------------------------------------------------


@dataclass
class Grounding:
    """What became of a reply: the text shown (empty when nothing is checked) and why things were removed."""

    text: str
    used: list[int] = field(default_factory=list)
    removed: dict[str, int] = field(default_factory=dict)  # reason → sentences (or lines) removed
    recited: int = 0  # sentences given another passage's number
    decisions: list[Decision] = field(default_factory=list)

    def count(self, reason: str, n: int = 1) -> None:
        if n:
            self.removed[reason] = self.removed.get(reason, 0) + n

    @property
    def problem(self) -> str | None:
        """Why nothing is shown: the commonest removal reason, or None when text is left."""
        if self.text:
            return None
        return max(self.removed, key=lambda why: self.removed[why]) if self.removed else "empty"


def _cite(sentence: str, numbers_: Sequence[int]) -> str:
    """`sentence` with `numbers_` cited before its final punctuation."""
    marks = "".join(f"[{n}]" for n in numbers_)
    m = re.search(r"([.!?。！？]+)$", sentence)
    if m:
        return f"{sentence[: m.start()].rstrip()} {marks}{m.group(1)}"
    return f"{sentence} {marks}"


def join_sentences(sentences: Sequence[str]) -> str:
    """Sentences as one text: a space between them, none after Chinese punctuation."""
    out = ""
    for s in sentences:
        if out and not WIDE_END.search(out):
            out += " "
        out += s
    return out
