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
    "NeurIPS", "ICML", "ICLR", "GitHub", "HuggingFace", "PyTorch", "BFMs", "BFM", "CMDPs", "CMDP",
}
_CONTRIB = re.compile(
    r"\b(?:we|this paper|this work|our work)\s+(?:\w+\s+){0,2}?"
    r"(?:propose|introduce|present|call|term|dub|name|develop|design|build|release|establish|study|investigate)\w*\b",
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
    text = _plain(abstract)
    sentences = split_sentences(text) or [text]
    contrib = [s for s in sentences if _CONTRIB.search(s)]
    # "We propose/introduce ..." sentences name the method more often than "we study ...".
    contrib.sort(key=lambda s: not _STRONG.search(_CONTRIB.search(s).group(0)))
    for s in contrib:
        m = _CONTRIB.search(s)
        tail = s[m.start():]
        # "We introduce AS2 (...)", "we propose Psy-CoT, ...", "we introduce Devyn (Developing ...)".
        first = _FIRST.match(s, m.end())
        if first and (_is_name(first.group(1)) or first.group(2)) and first.group(1) not in _COMMON:
            return first.group(1)
        # A name in parentheses wins ("Numerical Visual CoT (NV-CoT)"), then a coined
        # name, preferring one the abstract repeats.
        for m in _PAREN.finditer(tail):
            if _is_name(m.group(1)):
                return m.group(1)
        names = [m.group(1) for m in _NAME.finditer(tail) if _is_name(m.group(1))]
        if names:
            return max(names, key=lambda n: (text.count(n) > 1, -names.index(n)))
    # 3. A short phrase: what the contribution sentence says, else the opening sentence.
    base = contrib[0] if contrib else sentences[0]
    m = _CONTRIB.search(base)
    phrase = base[m.end():] if m and contrib else base
    phrase = re.sub(r"^[\s,:]*(?:that|a|an|the|to)?\s+", "", phrase).strip(" .,;:")
    phrase = re.sub(r"\$[^$]*\$", "", phrase)
    phrase = " ".join(phrase.split())
    return _shorten(phrase[:1].upper() + phrase[1:]) or "Untitled abstract"


def _shorten(phrase: str) -> str:
    if len(phrase) <= MAX_LABEL_CHARS:
        return phrase
    cut = phrase[:MAX_LABEL_CHARS].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:-") + "…"


def find_links(text: str) -> tuple[str, ...]:
    """URLs in the text (code, models, project pages), trailing punctuation removed, in order."""
    seen: dict[str, None] = {}
    for m in _LINK.finditer(text):
        seen.setdefault(m.group(0).rstrip(".,;:"), None)
    return tuple(seen)
