"""Plain-text pieces every front end shows the same way: the answer's footer (in the answer's language),
a paper's slots in the program, LaTeX made readable, questions cleaned of invisible text."""

from __future__ import annotations

import re
import unicodedata

from paperbot.messages import text
from paperbot.records import Slot
from retrieval.types import Answer


def duration(ms: float, lang: str = "en") -> str:
    """A short time as people read it: "40 ms" below a second (never "0.0 s"), "2.3 s" above."""
    if ms < 1000:
        return text("FOOTER_MS", lang, ms=max(1, round(ms)))
    return text("FOOTER_SECONDS", lang, seconds=ms / 1000)


def slot_time(slot: Slot, lang: str = "en") -> str:
    """"Tue 10:00" in the program's own local time (the offset it was given with); "" when unknown."""
    starts = slot.starts
    if starts is None:
        return ""
    weekday = text("WEEKDAYS", lang).split()[starts.weekday()]
    return text("SLOT_TIME", lang, weekday=weekday, time=starts.strftime("%H:%M"))


def poster_number(slot: Slot, lang: str = "en") -> str:
    number = slot.poster_position.lstrip("#").strip()
    return text("POSTER_NUMBER", lang, number=number) if number else ""


def slot_line(slot: Slot, lang: str = "en") -> str:
    """"Oral Session 2B · Tue 10:00 · Hall A", "Poster Session 3 · Wed 11:00 · #1234" (room when no number)."""
    place = poster_number(slot, lang) if slot.kind == "poster" and slot.poster_position else slot.room
    return " · ".join(p for p in (slot.session or slot.kind, slot_time(slot, lang), place) if p)


def plan_slot_heading(slot, lang: str = "en") -> str:  # slot: retrieval.plan.PlanSlot
    """"10:00–10:15 · Oral Session 2A · Hall A · ⚠ clashes with Oral Session 2B" (local times)."""
    starts, ends = slot.slot.starts, slot.slot.ends
    when = (starts.strftime("%H:%M") + (ends.strftime("–%H:%M") if ends is not None else "")) if starts else ""
    parts = [when, slot.session or slot.kind, slot.room]
    if slot.clashes:
        parts.append("⚠ " + text("PLAN_CLASH", lang, sessions=", ".join(slot.clashes)))
    return " · ".join(p for p in parts if p)


def answer_footer(answer: Answer, *, detail: bool = False) -> str:
    """mode · model · time · tokens · what was searched · notes · why the LLM answer was not used.

    `detail` adds the operator's detail of a failure (`paperbot ask` in a terminal); a public footer
    (Discord) never shows it: it names no endpoint and quotes no server, but it is not for everyone either.
    """
    lang = answer.language
    parts = [text("FOOTER_MODE", lang, mode=answer.mode)]
    if answer.model:
        parts.append(text("FOOTER_MODEL", lang, model=answer.model))
    if answer.latency_ms is not None:
        parts.append(duration(answer.latency_ms, lang))
    if answer.tokens:
        parts.append(text("FOOTER_TOKENS", lang, tokens=answer.tokens))
    if answer.search_query:
        parts.append(text("FOOTER_SEARCHED", lang, query=answer.search_query))
    parts += answer.notes
    if answer.fallback_reason:
        reason = answer.fallback_reason
        if detail and answer.fallback_detail:
            reason += f" ({answer.fallback_detail})"
        parts.append(text("FOOTER_FELL_BACK", lang, reason=reason))
    return " · ".join(parts)


# "!nollm question", "/ask --no-llm question", "--no-llm question": answer this one without the language model.
_NO_LLM = re.compile(r"^\s*(?:/ask\s+)?(?:!no-?llm|--no-llm)(?:\s+|$)", re.I)


def without_llm_prefix(question: str) -> tuple[str, bool]:
    """(question without a "!nollm" / "--no-llm" prefix, whether the language model may answer it)."""
    m = _NO_LLM.match(question)
    return (question[m.end():].strip(), False) if m else (question, True)


# -- LaTeX in titles and abstracts, as readable text ---------------------------------------------------

_GREEK = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau "
          "upsilon phi chi psi omega").split()
_SYMBOLS = {
    **{name: chr(0x3B1 + i + (1 if i >= 17 else 0)) for i, name in enumerate(_GREEK)},
    **{name.capitalize(): chr(0x391 + i + (1 if i >= 17 else 0)) for i, name in enumerate(_GREEK)},
    "varepsilon": "ε", "vartheta": "ϑ", "varphi": "φ", "varrho": "ϱ", "varsigma": "ς", "ell": "ℓ",
    "times": "×", "cdot": "·", "cdots": "⋯", "ldots": "…", "dots": "…", "leq": "≤", "le": "≤", "geq": "≥",
    "ge": "≥", "neq": "≠", "ne": "≠", "approx": "≈", "sim": "∼", "simeq": "≃", "equiv": "≡", "propto": "∝",
    "infty": "∞", "pm": "±", "mp": "∓", "in": "∈", "notin": "∉", "subset": "⊂", "subseteq": "⊆", "cup": "∪",
    "cap": "∩", "forall": "∀", "exists": "∃", "partial": "∂", "nabla": "∇", "sum": "Σ", "prod": "Π",
    "int": "∫", "sqrt": "√", "to": "→", "rightarrow": "→", "leftarrow": "←", "Rightarrow": "⇒",
    "leftrightarrow": "↔", "mapsto": "↦", "log": "log", "exp": "exp", "max": "max", "min": "min",
    "arg": "arg", "top": "⊤", "star": "⋆", "circ": "∘", "ast": "∗", "%": "%", "&": "&", "_": "_", "#": "#",
    "{": "{", "}": "}", ",": " ", ";": " ", "quad": " ", "qquad": " ", "!": "", " ": " ",
}
_BLACKBOARD = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ", "E": "𝔼", "P": "ℙ"}
_SUPER = str.maketrans("0123456789+-=()nTi", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿᵀⁱ")
_SUB = str.maketrans("0123456789+-=()aeiojkntx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑᵢₒⱼₖₙₜₓ")
_MATH = re.compile(r"(?<![\\\w])\$\$?(?!\s)(.+?)(?<![\s\\])\$\$?(?!\d)", re.S)
_FONT = re.compile(r"\\(?:text|textbf|textit|textrm|texttt|textsc|emph|mathrm|mathbf|mathit|mathsf|mathtt|"
                   r"operatorname|boldsymbol|bm|mathcal|mathscr|mathfrak)\s*\{([^{}]*)\}")
_BB = re.compile(r"\\mathbb\s*\{\s*([A-Za-z])\s*\}")
_COMMAND = re.compile(r"\\([A-Za-z]+|[%&_#{},;! ])")
_SCRIPT = re.compile(r"([\^_])(\{[^{}]*\}|[A-Za-z0-9+\-=])")


def _scripted(m: re.Match) -> str:
    body = m.group(2).strip("{}")
    table = _SUPER if m.group(1) == "^" else _SUB
    converted = body.translate(table)
    if all(c != o or not c.isalnum() for c, o in zip(converted, body)) or len(body) == 1 and converted != body:
        return converted
    return ("^" if m.group(1) == "^" else "_") + (body if len(body) == 1 else f"({body})")


def _math(body: str) -> str:
    body = _BB.sub(lambda m: _BLACKBOARD.get(m.group(1), m.group(1)), body)
    for _ in range(3):  # nested fonts: \mathbf{\text{x}}
        body = _FONT.sub(r"\1", body)
    body = _COMMAND.sub(lambda m: _SYMBOLS.get(m.group(1), m.group(1)), body)
    body = _SCRIPT.sub(_scripted, body)
    return body.replace("{", "").replace("}", "").replace("~", " ")


def readable(text: str) -> str:
    """LaTeX as people read it: `$\\beta$-DPO` → `β-DPO`, `$O(n^2)$` → `O(n²)`; other text unchanged.

    For display only (Discord and the terminal); stored text and JSON keep the source.
    """
    if "\\" not in text and "$" not in text:
        return text
    text = _MATH.sub(lambda m: _math(m.group(1)), text)
    for _ in range(2):
        text = _FONT.sub(r"\1", text)
    return re.sub(r"\\([%&_#$])", r"\1", text)


def clean_question(text: str) -> str:
    """A question as typed, without invisible format characters (zero-width, bidi controls, BOM) and extra space.

    A question made only of such characters is empty.
    """
    return " ".join("".join(c for c in text if unicodedata.category(c) != "Cf").split())
