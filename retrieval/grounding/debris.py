"""What small models leave in a reply that is not an answer: chat-template tokens, role markers and the prompt
echoed back (passage lines, "Question:" lines, the rules)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from paperbot.text import words as _words
from retrieval import prompts

if TYPE_CHECKING:
    from retrieval.grounding.passage import Passage


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
META = re.compile(r"^\W*(?:the|this|these|that)\s+(?:passage|passages|answer|question|text|context|prompt)s?\b"
                   r"|\b(?:I'm|I am|I'll|I will|let me|feel free|happy to help|ready to assist|as an AI)\b"
                   r"|\bpassage list\b", re.I)
PLACEHOLDER = re.compile(r"\s?\[\s*(?:n|N|x|X|k|i|#|number|num|citation|cite|ref|source|passage)\s*\]")
CITE = re.compile(r"\[(\d{1,3})\]")


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


def _titled(line: str, passage: Passage) -> bool | None:
    """For a line opening with the whole of a label that holds a colon: whether it goes on as the prompt's passage
    line ("Label: text") rather than as a sentence about the paper ("Label uses …"); None for any other line."""
    label = " ".join(passage.label.split())
    if ":" not in label:
        return None
    flat = " ".join(re.sub(r"^\[\d{1,3}\]\s*", "", line).split())
    if not flat.lower().startswith(label.lower()):
        return None
    after = flat[len(label):].lstrip()
    opening = " ".join(_squash(passage.text).split()[:6])
    return not after or after.startswith(":") or bool(opening and _squash(after).startswith(opening))


def echoes_prompt(line: str, passages: Sequence[Passage]) -> bool:
    """A line that reproduces the prompt: a passage line ("[2] Label: …", or "[2]" and the start of the label
    or of the passage), a "Question:" line, a rule."""
    bare = _LIST_MARK.sub("", line.strip())
    if _ECHO_LINE.match(bare):
        return True
    # "[2] Label:" or "Label:", as listed; a title in quotes or markdown emphasis ("“From Data to ICL: …” finds",
    # "*From Data to ICL: …* finds") is the answer citing it
    head = re.match(r"^(?:\[\d{1,3}\]\s*)?(?![\"“”'‘«《「*_])(.{1,200}?)\s*:", bare)
    if head:
        named = _squash(head.group(1))
        for p in passages:
            label, text = _squash(p.label), _squash(p.text)
            titled = _titled(bare, p)
            if titled is not None:  # a title with a colon of its own ("HYDRA-FL: Hybrid … Learning uses …")
                if titled:
                    return True
                continue
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


# -- sentences --------------------------------------------------------------------------------


def normalized(sentence: str) -> str:
    return " ".join(_words(CITE.sub(" ", sentence)))
