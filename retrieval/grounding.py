"""Only grounded text is shown as an LLM answer: the model's reply, cleaned and checked sentence by sentence.

Small models produce debris that looks like an answer: chat-template tokens and
role markers, the prompt echoed back (the passage list, "Question:" lines, the
rules), a literal "[n]", one sentence repeated to the length cap, and sentences
credited to the wrong passage. `ground_reply` removes the debris, then keeps a
sentence only when it cites a passage that supports it:

* support is measured against the cited passage's sentences (the very text the
  model was given): the share of the sentence's content words found in the
  passage (lexical), and the best cosine similarity between the sentence and
  one passage sentence (the retrieval embedder), combined as
  ``max(lexical, (lexical + cosine) / 2)``;
* a sentence whose cited passage scores below `SUPPORT_THRESHOLD`, or that
  another passage supports clearly better (by `RECITE_MARGIN`), gets that
  passage's number, or is dropped when no passage supports it;
* a sentence without a citation gets the passage that supports it, or is dropped;
* a sentence not in English is checked by the words it shares with the passage
  (paper names, acronyms, numbers, technical terms); one with none of them
  cannot be checked and is kept only beside at least one checked sentence.

The thresholds were calibrated by benchmarks/llm_grounding.py on recorded
replies of small real models and on scripted good answers (docs/llm.md).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from paperbot.language import guess_language
from paperbot.text import content_words as text_content_words
from paperbot.text import sentences as split_sentences
from paperbot.text import words as _words
from retrieval import prompts

SUPPORT_THRESHOLD = 0.6  # calibrated: benchmarks/llm_grounding.py (docs/llm.md)
RECITE_MARGIN = 0.25  # another passage must support a sentence this much better to take its citation
LOOP_REPEATS = 4  # copies of one sentence that make a reply a loop (recorded loops: 8 to 20)
MIN_WORDS = 3  # content words a checked sentence needs; shorter ones are filler ("Yes [1].")

Embed = Callable[[list[str]], np.ndarray]  # texts → unit vectors, one row each

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
    lines = []
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
                head = start[:40].rsplit(" ", 1)[0] if len(start) > 40 else start
                if head and len(head) >= 6 and rest.startswith(head):
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


# -- support ----------------------------------------------------------------------------------

# Words any sentence about papers may use: they support nothing by themselves.
GENERIC_WORDS = frozenset(
    "using use used based paper papers passage passages approach method methods propose proposes proposed introduce "
    "introduces show shows work study studies new one two three first second answer question".split())


def content_words(text: str, latin_only: bool = False) -> set[str]:
    """The toolkit's content words, less the generic ones; `latin_only` keeps Latin-script ones (names, terms,
    numbers a sentence in another language shares with an English passage)."""
    found = text_content_words(text, ignore=GENERIC_WORDS)
    return {w for w in found if w.isascii()} if latin_only else found


@dataclass(frozen=True)
class Passage:
    """A numbered passage of the prompt: its label and the sentences the model was shown."""

    n: int
    label: str
    text: str
    sentences: tuple[str, ...] = ()
    words: frozenset[str] = frozenset()

    @classmethod
    def of(cls, n: int, label: str, text: str) -> Passage:
        sentences = tuple(s for part in text.split(" … ") for s in split_sentences(part))
        return cls(n, label, text, sentences or (text,), frozenset(content_words(label + " " + text)))


@dataclass
class Grounding:
    """What became of a reply: the text shown (empty when nothing is grounded) and why things were removed."""

    text: str
    used: list[int] = field(default_factory=list)
    removed: dict[str, int] = field(default_factory=dict)  # reason → sentences (or lines) removed
    recited: int = 0  # sentences given another passage's number
    scores: list[tuple[str, int | None, float]] = field(default_factory=list)  # (sentence, cited, support)

    def count(self, reason: str, n: int = 1) -> None:
        if n:
            self.removed[reason] = self.removed.get(reason, 0) + n

    @property
    def problem(self) -> str | None:
        """Why nothing is shown: the commonest removal reason, or None when text is left."""
        if self.text:
            return None
        return max(self.removed, key=self.removed.get) if self.removed else "empty"


def ground_reply(text: str, passages: Sequence[Passage], embed: Embed | None = None, *, question: str = "",
                 threshold: float | None = None, margin: float | None = None) -> Grounding:
    """Keep the sentences of `text` (already sanitized, citations already valid) that their passage supports.

    Words of `question` do not count as support: a sentence must bring something the passage says.
    """
    threshold = SUPPORT_THRESHOLD if threshold is None else threshold
    margin = RECITE_MARGIN if margin is None else margin
    asked = frozenset(content_words(question))
    g = Grounding(text="")
    body, echoed = remove_echo(text, passages)
    g.count("echo", echoed)
    placeholders = len(_PLACEHOLDER.findall(body))
    body = _PLACEHOLDER.sub("", body)
    g.count("placeholder", placeholders)
    by_n = {p.n: p for p in passages}
    sentences = split_sentences(body, lines=True)
    # A repeated sentence is shown once; one said LOOP_REPEATS times or more is a weak model's loop: every copy goes.
    keys = [_normalized(s) for s in sentences]
    said = Counter(k for k in keys if k)
    seen: set[str] = set()
    unique: list[str] = []
    for s, key in zip(sentences, keys):
        if not key:
            continue
        if key in seen or said[key] >= LOOP_REPEATS:
            g.count("repeated")
            continue
        seen.add(key)
        unique.append(s)
    if not unique or not passages:
        g.count("empty" if not unique else "no passage")
        return g
    cosines = _cosines(unique, passages, embed)
    kept: list[tuple[str, bool]] = []  # sentence as shown, checked?
    for i, sentence in enumerate(unique):
        cited = [n for n in dict.fromkeys(int(x) for x in _CITE.findall(sentence)) if n in by_n]
        bare = _CITE.sub("", sentence).strip()
        english = guess_language(bare) == "en"
        if _META.search(bare):
            g.count("echo")
            continue
        if english and (len(content_words(bare)) < MIN_WORDS or not content_words(bare) - asked):
            g.count("filler")  # too short, or only the question's words
            continue
        if not english and not content_words(bare, latin_only=True):
            # Nothing to check it by (no name, term or number in common is possible): kept only beside
            # checked sentences, and only with a citation.
            if cited:
                kept.append((sentence, False))
            else:
                g.count("uncited")
            continue
        cos = cosines[i] if english and cosines is not None else None
        scores = {p.n: _score(bare, [p], cos, english, asked) for p in passages}
        best = max(scores, key=scores.get)
        together = 0.0
        # A passage cited beside others must contribute; alone, it must support the sentence.
        good = [n for n in cited if scores[n] >= (threshold if len(cited) == 1 else threshold / 2)]
        if len(good) > 1:
            together = _score(bare, [by_n[n] for n in good], cos, english, asked)
        elif good:
            together = scores[good[0]]
        g.scores.append((sentence, cited[0] if cited else None, together))
        if good and together >= threshold and not (best not in good and scores[best] - together >= margin):
            kept.append((sentence if good == cited else _cite(bare, good), True))
        elif scores[best] >= threshold:
            g.recited += 1
            kept.append((_cite(bare, [best]), True))
        else:
            g.count("unsupported" if cited else "uncited")
    if not any(checked for _, checked in kept):
        g.count("unsupported", len(kept))
        return g
    g.text = _join([s for s, _ in kept])
    g.used = [int(n) for n in dict.fromkeys(_CITE.findall(g.text))]
    return g


def _score(sentence: str, cited: Sequence[Passage], cosines: dict[int, float] | None, english: bool,
           asked: frozenset[str] = frozenset()) -> float:
    """How well `cited` (together) support `sentence`: max(lexical, (lexical + best cosine) / 2).

    lexical: the share of the sentence's content words, other than the question's, found in the passages.
    """
    words = content_words(sentence, latin_only=not english) - asked
    if not words or not cited:
        return 0.0
    covered = frozenset().union(*(p.words for p in cited))
    lexical = len(words & covered) / len(words)
    if cosines is None:
        return lexical
    cosine = max(cosines[p.n] for p in cited)
    return max(lexical, (lexical + cosine) / 2)


def _cite(sentence: str, numbers: Sequence[int]) -> str:
    """`sentence` with `numbers` cited before its final punctuation."""
    marks = "".join(f"[{n}]" for n in numbers)
    m = re.search(r"([.!?。！？]+)$", sentence)
    if m:
        return f"{sentence[: m.start()].rstrip()} {marks}{m.group(1)}"
    return f"{sentence} {marks}"


def _cosines(sentences: list[str], passages: Sequence[Passage], embed: Embed | None):
    """[i][n] → the best cosine between sentence i and one sentence of passage n; None without an embedder."""
    if embed is None:
        return None
    bare = [_CITE.sub("", s).strip() for s in sentences]
    rows = [(p.n, ps) for p in passages for ps in p.sentences]
    vectors = embed(bare + [ps for _, ps in rows])
    a, b = vectors[: len(bare)], vectors[len(bare):]
    sims = a @ b.T
    out = []
    for i in range(len(bare)):
        best: dict[int, float] = {}
        for j, (n, _) in enumerate(rows):
            best[n] = max(best.get(n, -1.0), float(sims[i, j]))
        out.append(best)
    return out


def _join(sentences: list[str]) -> str:
    out = ""
    for s in sentences:
        if out and not re.search(r"[\u3000-\u9fff\uff00-\uffef]$", out):
            out += " "
        out += s
    return out
