"""Terminal rendering of results: what `paperbot ask`, `search` and `chat` print."""

from __future__ import annotations

import textwrap

from paperbot import messages
from retrieval.types import Answer, Hit, SearchResult

WIDTH = 100


def _wrap(text: str, indent: str = "    ") -> str:
    return textwrap.fill(text, width=WIDTH, initial_indent=indent, subsequent_indent=indent)


def _hit_lines(n: int, h: Hit) -> list[str]:
    return [f"[{n}] {h.label} — {h.where}  (score {h.score:.2f})", _wrap(f"\u201c{h.snippet}\u201d")]


def render_search_text(result: SearchResult) -> str:
    lines = [f"Query: {result.query}"]
    if result.abstained:
        lines += [messages.ABSTAIN, messages.ABSTAIN_CLOSEST]
    for n, h in enumerate(result.hits, start=1):
        lines += _hit_lines(n, h)
    return "\n".join(lines)


def render_answer_text(answer: Answer) -> str:
    lines = [f"Q: {answer.question}", ""]
    if answer.abstained:
        lines.append(messages.ABSTAIN)
        if answer.hits:
            lines += ["", messages.ABSTAIN_CLOSEST]
            for n, h in enumerate(answer.hits, start=1):
                lines += _hit_lines(n, h)
        return "\n".join(lines)
    lines += [textwrap.fill(line, width=WIDTH) for line in answer.text.split("\n")]
    lines += ["", "Sources:"]
    for c in answer.citations:
        lines.append(f"[{c.n}] {c.label} — {c.source} #{c.position}")
        lines.append(_wrap(f"\u201c{c.quote}\u201d"))
    footer = f"mode: {answer.mode}"
    if answer.model:
        footer += f" · model: {answer.model}"
    if answer.latency_ms is not None:
        footer += f" · {answer.latency_ms / 1000:.1f} s"
    if answer.tokens:
        footer += f" · {answer.tokens} tokens"
    if answer.extra.get("search_query"):
        footer += f" · searched for: {answer.extra['search_query']}"
    if answer.fallback_reason:
        footer += f" · fell back: {answer.fallback_reason}"
    lines += ["", footer]
    return "\n".join(lines)
