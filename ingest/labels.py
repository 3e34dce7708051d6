"""Human labels for untitled abstracts, and links found in their text.

A label is the method the abstract names ("NV-CoT", "ThinkSafe") when it names
one, else a short phrase from the sentence that states the contribution.
"""

from __future__ import annotations

import re

from paperbot.text import sentences as split_sentences

MAX_LABEL_CHARS = 60

# Acronyms that name a field or a baseline rather than the paper's own method.
_COMMON = {
    "AI", "API", "BERT", "CNN", "CNNs", "CoT", "DPO", "GNN", "GNNs", "GPT", "GPU", "GPUs", "GRPO", "LLM",
    "LLMs", "LoRA", "MDP", "MDPs", "ML", "MLLM", "MLLMs", "MLP", "MoE", "NLP", "OOD", "PPO", "QD", "RAG",
    "RL", "RLHF", "RLVR", "SFT", "SGD", "SOTA", "VLM", "VLMs", "VLA", "ViT", "KL", "IID", "LM", "LMs",
    "NeurIPS", "ICML", "ICLR", "GitHub", "HuggingFace", "PyTorch", "BFMs", "BFM", "CMDPs", "CMDP", "GP", "GPs",
}
_CONTRIB = re.compile(
    r"\b(?:we|this paper|this work|our work|this position paper)\s+(?:\w+\s+){0,2}?"
    r"(?:propose|introduce|present|call|term|dub|name|develop|design|build|release|establish|stud(?:y|ies|ied)"
    r"|investigat|characteriz|analy[sz]|trac(?:e|es|ed)\b|argu|examin|formaliz|explain)\w*\b"
    r"|\bour\s+(?:method|approach|framework|algorithm|system)\b",
    re.IGNORECASE,
)
_STRONG = re.compile(r"propose|introduce|present|call|term|dub|name", re.IGNORECASE)
_NAME = re.compile(r"(?<![\w\\])([A-Za-z][A-Za-z0-9]*(?:[-+][A-Za-z0-9]+)*)(?![\w])")
_PAREN = re.compile(r"\(\s*([A-Za-z][A-Za-z0-9]*(?:[-+][A-Za-z0-9]+)*)\s*(?:\)|,|;)")
_WRAPPERS = [
    (re.compile(r"\\(?:textbf|textit|emph|texttt|textsc|mathrm|mathbf|text)\{([^{}]*)\}"), r"\1"),
    (re.compile(r"\*\*([^*]+)\*\*"), r"\1"),
    (re.compile(r"(?<!\w)_([^_]+)_(?!\w)"), r"\1"),
    (re.compile(r"[{}]"), ""),
]
_FIRST = re.compile(r"\s+(?:(?:a|an|the|our|new|novel)\s+)?([A-Z][A-Za-z0-9]*(?:[-+][A-Za-z0-9]+)*)(?![\w+-])(?!\s+[A-Z])(\s+\()?")
# Two or more title-case words right after "we propose" ("Shaping-Aware Reward-Robust RL").
_TITLED = re.compile(r"\s+([A-Z][\w]*(?:-[A-Z]?[\w]+)*(?:\s+[A-Z][\w]*(?:-[A-Z]?[\w]+)*)+)(?=\s*[,(;:.]|\s+(?:which|that|for|to)\b)")
_DETERMINER = re.compile(r"^(?:this|these|that|those)\s+(?!(?:in|on|of|for|to|with|by|at|as|is|are|was|were)\b)(?=\w+\s+\w)",
                         re.IGNORECASE)
_ANAPHOR = re.compile(r"(?:this|that|these|those|such|it|them)\b", re.IGNORECASE)
_CLAUSE = re.compile(r",?\s+and\s+(?:then\s+)?(?:show|prove|demonstrate|find|derive|establish|obtain)\w*\b"
                     r"|,?\s+by\s+(?:deriving|analy[sz]ing|developing|proving)\b|;\s|,\s+(?:in\s+)?(?:which|where)\b|,?\s+and\s+(?:how|why|when|whether)\b")
_DANGLING = re.compile(r"(?:\s+(?:the|a|an|of|in|on|for|to|and|or|with|by|that|which|from|as|at|its|their))+$",
                       re.IGNORECASE)
_LINK = re.compile(r"https?://[^\s<>\"')\]}]+")


def _plain(text: str) -> str:
    for pattern, repl in _WRAPPERS:
        text = pattern.sub(repl, text)
    return text


def _is_name(token: str) -> bool:
    """A coined method name: two or more capitals, or capitals with digits (NV-CoT, ThinkSafe, AS2)."""
    if token in _COMMON or token.rstrip("s") in _COMMON or len(token) < 2 or len(token) > 30:
        return False
    caps = sum(c.isupper() for c in token)
    return caps >= 2 or (caps >= 1 and any(c.isdigit() for c in token))


def derive_label(abstract: str) -> str:
    """The method the abstract names, else what its first contribution sentence says it proposes or studies."""
    text = _plain(abstract)
    sentences = split_sentences(text) or [text]
    contrib = [s for s in sentences if _CONTRIB.search(s)]
    # "We propose/introduce ..." sentences name the method more often than "we study ...".
    for s in sorted(contrib, key=lambda s: not _STRONG.search(_contribution(s).group(0))):
        name = _named(s, text)
        if name:
            return name
    # A phrase: what the first contribution sentence says (a later one is often an aside, "we also present a
    # preliminary study on …", or the conclusion's "three promising research directions"), else the opening.
    for base in contrib:
        rest = base[_contribution(base).end():]
        phrase = _phrase(rest)
        if not re.match(r"\s*that\b", rest):  # "argue that this issue stems …" is a claim, not a subject
            phrase = _DETERMINER.sub("", phrase)  # "explains this shrinkage issue of RLVR" → "shrinkage issue of RLVR"
        if phrase and not _ANAPHOR.match(phrase):
            return _shorten(phrase[:1].upper() + phrase[1:])
    return _shorten(_phrase(sentences[0])) or "Untitled abstract"


def _contribution(sentence: str) -> re.Match[str]:
    """Where a contribution sentence says what it does ("we propose"): such sentences always have it."""
    m = _CONTRIB.search(sentence)
    if m is None:
        raise ValueError(f"not a contribution sentence: {sentence[:60]!r}")
    return m


def _named(sentence: str, text: str) -> str:
    """The method a contribution sentence names, or ""."""
    m = _contribution(sentence)
    tail = sentence[m.start():]
    # "We introduce AS2 (...)", "we propose Psy-CoT, ...", "we introduce Devyn (Developing ...)".
    first = _FIRST.match(sentence, m.end())
    if first and (_is_name(first.group(1)) or first.group(2)) and first.group(1) not in _COMMON:
        return first.group(1)
    # A name in parentheses wins ("Numerical Visual CoT (NV-CoT)"), then a name in title case right after
    # a strong verb ("we propose Shaping-Aware Reward-Robust RL, which …"), then a coined name, preferring
    # one the abstract repeats.
    for p in _PAREN.finditer(tail):
        if _is_name(p.group(1)):
            return p.group(1)
    if not _STRONG.search(m.group(0)):  # "we study …": a capitalized word there is rarely the paper's own
        return ""
    titled = _TITLED.match(sentence, m.end())
    if titled and len(titled.group(1)) <= MAX_LABEL_CHARS:
        return titled.group(1)
    names = [n.group(1) for n in _NAME.finditer(tail) if _is_name(n.group(1))]
    if names:
        return max(names, key=lambda n: (text.count(n) > 1, -names.index(n)))
    return ""


def _phrase(text: str) -> str:
    """A clause as a label: leading articles gone, cut before math and before a second clause."""
    text = re.sub(r"^[\s,:]*(?:that|a|an|the|to)?\s+(?:(?:novel|new)(?:\s+and\s+\w+)?\s+)?", "", text)
    text = text.split("$", 1)[0]
    text = _CLAUSE.split(text, 1)[0]
    return _DANGLING.sub("", " ".join(text.split()).strip(" .,;:"))


def _shorten(phrase: str) -> str:
    if len(phrase) <= MAX_LABEL_CHARS:
        return phrase
    cut = phrase[:MAX_LABEL_CHARS].rsplit(" ", 1)[0]
    cut = _DANGLING.sub("", cut.rstrip(" ,;:-"))  # "… learning in the…" reads "… learning…"
    return cut.rstrip(" ,;:-") + "…"


def find_links(text: str) -> tuple[str, ...]:
    """URLs in the text (code, models, project pages), trailing punctuation removed, in order."""
    seen: dict[str, None] = {}
    for m in _LINK.finditer(text):
        seen.setdefault(m.group(0).rstrip(".,;:"), None)
    return tuple(seen)
