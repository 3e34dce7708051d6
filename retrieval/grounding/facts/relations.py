"""Which way round: opposite words before the same thing, "from A to B", what is compared with what, which way
a relation runs (made from, given, followed by, caused by, input and output), what is kept or lost, fixed or
adapting, a word against its negating prefix, and degrees ("less suited")."""

from __future__ import annotations

import re
from itertools import combinations

from paperbot.text import GENERIC_WORDS, stem
from retrieval.grounding.facts.words import ordered_stems


# "less suited" against "best suited": a degree word before the same word, in the other direction.
_DEGREE = re.compile(r"\b(more|most|better|best|highly|well|greatly|less|least|worse|worst|poorly|barely)"
                     r"\s+([a-z][a-z-]+)", re.I)
_DEGREE_DOWN = frozenset({"less", "least", "worse", "worst", "poorly", "barely"})


# "erases a model's latent knowledge" against "models retain latent knowledge": opposite verbs on the same thing.
KEEPS = re.compile(r"\b(?:retain|keep|preserv|maintain|restor)\w*\s+((?:[\w'’-]+\s*){1,3})", re.I)
LOSES = re.compile(r"\b(?:eras|los[et]|remov|destroy|discard|forget|forgot|eliminat)\w*\s+((?:[\w'’-]+\s*){1,3})", re.I)
# "a fixed parameter budget" against "a budget that grows with …".
_FIXED = re.compile(r"\b(?:fixed|constant|static|unchanged)(?:,\s*[a-z-]+)?\s+((?:[a-z][\w-]*\s*){1,2})", re.I)
# "adaptively-deformed UV coordinates" against "a fixed UV grid": what a passage says adapts or is learned.
ADAPTIVE = re.compile(r"\b(?:adaptive(?:ly)?(?:-[a-z]+)?|dynamic(?:ally)?(?:-[a-z]+)?|learn(?:ed|able)|trainable|"
                      r"(?:data|input)-dependent)\s+((?:[a-z][\w-]*\s*){1,2})", re.I)
_GROWING = re.compile(r"\b([a-z][a-z-]+)\s+(?:that|which)\s+(?:grows?|increases?|varies|vary|changes?|scales?)\b"
                      r"|\b(?:growing|increasing|varying|changing)\s+((?:[a-z][\w-]*\s*){1,2})", re.I)


# "from 54.68% to 76.73%", "a transition from positional to semantic": which comes first.
_FROM_TO = re.compile(r"\bfrom\s+(?:the\s+|a\s+|an\s+)?([\w.-]+)%?\s+to\s+(?:the\s+|a\s+|an\s+)?([\w.-]+)", re.I)
# "checking a certificate is much simpler than finding one": what is compared with what, in which order.
_THAN = re.compile(r"((?:[\w'’-]+\s+){1,4}?)(?:is\s+|are\s+|was\s+|were\s+)?(?:much\s+|far\s+|significantly\s+|"
                   r"considerably\s+)?(?:more\s+|less\s+)?([a-z]+)\s+than\s+((?:[\w'’-]+\s*){1,3})", re.I)


# "close to the expected return" against "far from the expected return", "the next state" against "the current
# state": opposite words, or the two roles of a pair, before the same thing.
_OPPOSITES = (("close", "far"), ("near", "far"), ("high", "low"), ("higher", "lower"), ("large", "small"),
              ("larger", "smaller"), ("more", "fewer"), ("more", "less"), ("fast", "slow"), ("faster", "slower"),
              ("early", "late"), ("strong", "weak"), ("stronger", "weaker"), ("easy", "hard"), ("easier", "harder"),
              ("simple", "complex"),
              ("increase", "decrease"), ("increases", "decreases"), ("increasing", "decreasing"),
              ("improve", "degrade"), ("improves", "degrades"), ("dense", "sparse"), ("short", "long"),
              ("shorter", "longer"), ("positive", "negative"), ("online", "offline"), ("stable", "unstable"),
              ("linear", "nonlinear"), ("absolute", "relative"),
              ("current", "next"), ("previous", "next"), ("source", "target"), ("teacher", "student"),
              ("encoder", "decoder"), ("input", "output"), ("local", "global"), ("spatial", "temporal"),
              ("forward", "backward"), ("upstream", "downstream"), ("inner", "outer"), ("coarse", "fine"),
              ("explicit", "implicit"), ("internal", "external"), ("generator", "discriminator"),
              ("actor", "critic"), ("real", "synthetic"), ("discrete", "continuous"), ("shallow", "deep"),
              ("deterministic", "stochastic"), ("centralized", "decentralized"), ("homogeneous", "heterogeneous"),
              ("minimize", "maximize"), ("minimizes", "maximizes"), ("minimizing", "maximizing"),
              ("intra", "inter"), ("pre", "post"), ("under", "over"), ("white", "black"), ("single", "multi"),
              ("self", "cross"), ("clean", "noisy"), ("within", "beyond"), ("inside", "outside"),
              ("server", "client"), ("servers", "clients"),
              # how much: "a minor limitation" where the passage says "a significant limitation"
              *((big, small) for big in ("significant", "substantial", "major", "considerable", "dramatic")
                for small in ("minor", "marginal", "slight", "modest", "negligible")),
              # how fast something grows: "a logarithmic number of samples" where the passage says "polynomial"
              *combinations(("logarithmic", "polylogarithmic", "sublinear", "linear", "superlinear", "quadratic",
                             "cubic", "polynomial", "exponential"), 2))
# A word made with one of these prefixes is read against the same word made with the other, wherever the passage
# says it: "underconfident" where it says "overconfident", "intra-class" where it says "inter-class".
SWAPPED_PREFIXES = (("under", "over"), ("intra", "inter"), ("up", "down"))
# "a replay-based method" where the passage says "a replay-free method": the second half of a compound, one way or
# the other.
SWAPPED_SUFFIXES = (("free", "based"), ("free", "dependent"), ("free", "driven"), ("agnostic", "specific"),
                    ("agnostic", "dependent"), ("independent", "dependent"))
_BOTH_WAYS = (*_OPPOSITES, *(pair[::-1] for pair in _OPPOSITES))
_OPPOSITE = {a: frozenset(o for w, o in _BOTH_WAYS if w == a) for a, _ in _BOTH_WAYS}  # "far": {"close", "near"}
_PRECEDING = re.compile(r"(?<![\w'’-])([a-z][a-z-]*[a-z])\s+(?=((?:[\w'’-]+\s*){1,3}))", re.I)


def opposites(word: str) -> frozenset[str]:
    """The opposites of `word`, or of a hyphenated word's first part: "inter-frame" for "intra-frame"."""
    word = word.lower()
    if word in _OPPOSITE:
        return _OPPOSITE[word]
    head, dash, tail = word.partition("-")
    return frozenset(o + dash + tail for o in _OPPOSITE.get(head, ())) if dash and tail else frozenset()


def opposed(text: str) -> set[tuple[str, str]]:
    """(the word, what follows it) for every word that has an opposite, what follows read as its first stem and as
    its first two: "far from the expected return" gives ("far", "expect") and ("far", "expect return")."""
    out = set()
    for m in _PRECEDING.finditer(text):
        if opposites(m.group(1)):
            after = ordered_stems(m.group(2))[:2]
            out |= {(m.group(1).lower(), " ".join(after[:n])) for n in (1, 2) if len(after) >= n}
    return out


def side_by_side(text: str) -> set[str]:
    """The words said within three words of one of their opposites: "local and global", "single-turn rather than
    multi-turn"."""
    words = re.findall(r"[a-z][a-z-]*[a-z]", text.lower())
    return {w for i, w in enumerate(words) for other in words[max(0, i - 3):i + 4] if other in opposites(w)}


# "either a positional … or a semantic attention mechanism …, and a phase transition from the former to the latter":
# the two a passage names before it refers back to them.
_ALTERNATIVES = re.compile(r"\b(?:either|both|between)\s+(?:(?:a|an|the)\s+)?([\w-]+)[^.;]*?\b(?:or|and)\s+"
                           r"(?:(?:a|an|the)\s+)?([\w-]+)", re.I)
_FORMER_LATTER = re.compile(r"\bthe\s+(former|latter)\b", re.I)


def resolved(text: str) -> str:
    """`text` with "the former" and "the latter" replaced by the two things named before them ("either A … or B")."""
    if not _FORMER_LATTER.search(text):
        return text
    out, last = [], 0
    for m in _FORMER_LATTER.finditer(text):
        named = list(_ALTERNATIVES.finditer(text, 0, m.start()))
        if named:
            out += [text[last:m.start()], named[-1].group(1 if m.group(1).lower() == "former" else 2)]
            last = m.end()
    return "".join(out) + text[last:]


def orders(text: str) -> set[tuple[str, str]]:
    """(first, second) of every "from A to B": numbers as written, words as stems."""
    out = set()
    for m in _FROM_TO.finditer(text):
        a, b = (x if re.fullmatch(r"[\d.]+", x) else stem(x.lower()) for x in (m.group(1).rstrip("."),
                                                                           m.group(2).rstrip(".")))
        if a != b:
            out.add((a, b))
    return out


def comparisons(text: str) -> list[tuple[frozenset[str], str, frozenset[str]]]:
    """(what is said to be more so, the comparative, what it is compared with), each side as its own stems."""
    out = []
    for m in _THAN.finditer(text):
        left, right = set(ordered_stems(m.group(1))), set(ordered_stems(m.group(3))[:2])
        if left - right and right - left:
            out.append((frozenset(left - right), stem(m.group(2).lower()), frozenset(right - left)))
    return out


# "predict label distributions from ternary labels", "the next state given the current state", "inaccurate normals
# caused by the Gaussians converging", "a downscaler followed by a diffusion model": which way a relation runs, for
# relations whose sides a paraphrase keeps apart. Each is read as (kind, the first side, the second side): what a
# thing is made from, what is given, what comes first, what causes, whichever way round the words put them.
_RELATIONS = (
    ("from", r"from"), ("given", r"given|conditioned on"), ("into", r"into"), ("instead", r"instead of|rather than"),
    ("step", r"followed by|then"), ("-step", r"preceded by"),
    ("cause", r"caus(?:es|ing|e)|caused(?!\s+by)|lead(?:s|ing)? to|led to|result(?:s|ed|ing)? in|giv(?:es|ing) rise to|"
              r"induc(?:es|ing)"),
    ("-cause", r"caused by|induced by|driven by|due to|result(?:s|ed|ing)? from|stem(?:s|med|ming)? from|"
               r"aris(?:es|ing) from|because of"),
)
_RELATED = re.compile(r"\b(?:" + "|".join(f"(?P<k{i}>{words})" for i, (_, words) in enumerate(_RELATIONS))
                      + r")\s+(?!(?:which|whom|what|where|that|it|them)\b)", re.I)
_WORDS_BEFORE = re.compile(r"((?:[\w'’-]+\s+){0,3}[\w'’-]+),?\s*$")
_WORDS_AFTER = re.compile(r"(?:[\w'’-]+\s*){1,3}")
_STEPS = re.compile(r"\bfirst\s+((?:[\w'’-]+[\s,]+){1,14}?)(?:and\s+)?then\s+((?:[\w'’-]+\s*){1,6})", re.I)
# "a mapping from the algebraic specification to a positional encoding": the second is made from the first.
_FROM_TO_WORDS = re.compile(r"\bfrom\s+((?:[\w'’-]+\s+){0,5}?[\w'’-]+)\s+to\s+((?:[\w'’-]+\s*){1,3})", re.I)
# "takes language input and generates simulations in code", "maps the specification to an encoding": what is made
# from what, said as input and output.
_TAKES = re.compile(r"\btak(?:e|es|ing)\s+((?:[\w'’-]+\s+){0,5}?[\w'’-]+)\s+(?:as\s+(?:input|inputs)\s+)?and\s+"
                    r"(?:generat|produc|output|return|synthesi[sz]|creat|predict|emit)\w*\s+((?:[\w'’-]+\s*){1,3})",
                    re.I)
_MAPS = re.compile(r"\b(?:map|convert|translat|transform)\w*\s+((?:[\w'’-]+\s+){0,5}?[\w'’-]+)\s+(?:to|into)\s+"
                   r"((?:[\w'’-]+\s*){1,3})", re.I)
_TRACED = re.compile(r"\b(?:trac|attribut)\w*\s+((?:[\w'’-]+[\s,]+){1,8}?)(?:back\s+)?to\s+((?:[\w'’-]+\s*){1,3})",
                     re.I)


def directed(text: str) -> list[tuple[str, frozenset[str], frozenset[str]]]:
    """(the kind of relation, its first side, its second side) for every directed relation, each side as its own
    stems (those of both sides left out): "derives labels from distributions" is ("from", {"deriv", "label"},
    {"distribut"}); "normals caused by converging Gaussians" is ("cause", {"converg", "gaussian"}, {"normal"})."""
    found = []
    for m in _RELATED.finditer(text):  # the relation first, then the words either side of it (cheaper than a search)
        kind = _RELATIONS[int((m.lastgroup or "k0")[1:])][0]
        before = _WORDS_BEFORE.search(text, max(0, m.start() - 120), m.start())
        after = _WORDS_AFTER.match(text, m.end())
        then = m.group(0).lower().startswith("then")  # a step only after a comma or "and": ", then", "and then"
        if before and after and (not then or re.search(r"(?:,|\band)\s*$", text[max(0, m.start() - 8):m.start()])):
            found.append((kind, before.group(1), after.group(0)))
    found += [("step", m.group(1), m.group(2)) for m in _STEPS.finditer(text)]
    found += [("-cause", m.group(1), m.group(2)) for m in _TRACED.finditer(text)]  # "traces X back to Y": Y causes X
    found += [("-from", m.group(1), m.group(2)) for m in _FROM_TO_WORDS.finditer(text)]  # "from X to Y": Y from X
    found += [("-from", m.group(1), m.group(2)) for m in (*_TAKES.finditer(text), *_MAPS.finditer(text))]
    out = []
    for kind, first, second in found:
        left, right = set(ordered_stems(first)), set(ordered_stems(second)[:4 if kind == "step" else 3])
        if left - right and right - left:
            a, b = frozenset(left - right), frozenset(right - left)
            out.append((kind.lstrip("-"), *((b, a) if kind.startswith("-") else (a, b))))
    return out


def degrees(text: str) -> set[tuple[bool, str]]:
    """(down, the word's stem) of every "more X" / "less X": "less suited" is (True, "suit")."""
    return {(m.group(1).lower() in _DEGREE_DOWN, s) for m in _DEGREE.finditer(text)
            for s in ordered_stems(m.group(2))[:1]}


def kept(text: str, verbs: re.Pattern[str]) -> set[str]:
    """What `text` says is kept (or lost): the words after the verb, stemmed."""
    return {s for m in verbs.finditer(text) for s in ordered_stems(m.group(1))[:3] if s not in GENERIC_WORDS}


# "dissimilar" against "similar", "non-deforming" against "deforming": a word and its negating prefix before one thing.
NEGATING_PREFIXES = ("dis", "un", "non-", "non", "in", "im", "ir")
PREFIXED = re.compile(r"(?<![\w-])((?:dis|un|non-?|in|im|ir)([a-z]{4,}))\s+(?=((?:[\w'’-]+\s*){1,3}))", re.I)
WORD_BEFORE = re.compile(r"(?<![\w-])([a-z]{4,})\s+(?=((?:[\w'’-]+\s*){1,3}))", re.I)
_FOLLOWED = re.compile(r"(?<![\w'’-])([\w'’-]+)\s+(?=((?:[\w'’-]+\s*){1,3}))")


def followed(text: str) -> set[tuple[str, str]]:
    """(a word, the stem of the first content word after it) for every word of `text`: "similar model capabilities"
    gives ("similar", "model"). A hyphenated word is one word ("non-convex")."""
    return {(m.group(1).lower(), after[0]) for m in _FOLLOWED.finditer(text)
            if (after := ordered_stems(m.group(2))[:1])}


def fixed(text: str) -> set[str]:
    return {s for m in _FIXED.finditer(text) for s in ordered_stems(m.group(1))[:2]}


def growing(text: str) -> set[str]:
    return {s for m in _GROWING.finditer(text) for s in ordered_stems(m.group(1) or m.group(2))[:2]}
