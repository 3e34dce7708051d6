"""How much and how many: numbers with their units, counts said in words, in Chinese numerals or as compounds
("two-player"; the labels of a list count nothing), numbers tied to a benchmark or said to go up or down,
proportions, places in a series, norms, the power of a logarithm and asymptotic bounds."""

from __future__ import annotations

import re

from paperbot.text import HAN, ZH_DIGITS, readable, stem
from retrieval.grounding.facts.words import STOPWORDS, after_negation, clauses, names, ordered_stems, unaccented
from retrieval.translate import translate_chinese


NUMBER_WORDS = {w: i for i, w in enumerate("two three four five six seven eight nine ten eleven twelve thirteen "
                                            "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split(), 2)}
# Not part of a name ("Qwen2", "CSL-Daily2"), but a number written against Chinese ("提升了29%", "共有12层") is one.
_NOT_AFTER = rf"(?<![^\W{HAN}])(?<![.\-])"
_NUMBER = re.compile(_NOT_AFTER + r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?:\s?(%|×|x|-?fold|points?|pp|[KMB])"
                     rf"|(?=[\s,;:.)\]/*，。、）°{HAN}]|$))(?![A-Za-z0-9])|(?<![\w-])(" + "|".join(NUMBER_WORDS)
                     + r")\b", re.I)
# "三种边缘设备" (three kinds of edge device): a count in Chinese numerals before a measure word, two to ninety-nine;
# not "这两种" or "前两个" (these two, the first two), nor "A 和 B 两种" (A and B, the two of them), which count
# things already named.
_ZH_COUNTED = re.compile(r"(?<![这那前后上下其每第])([二两三四五六七八九]?十[二三四五六七八九]?|[两二三四五六七八九])"
                         r"(?=\s*(?:种|个|项|类|组|款|篇|位|层|步|条|点|大|方面|部分|阶段|模块|任务|数据集))")
_ZH_LISTED = re.compile(r"[和与及、][^，。；：,;:]{0,40}$")


def zh_counts(text: str) -> list[tuple[str, float]]:
    """(as written, value) of each count in Chinese numerals: "三种" is ("三", 3.0)."""
    out = []
    for m in _ZH_COUNTED.finditer(text):
        if _ZH_LISTED.search(text, 0, m.start()):
            continue
        written = m.group(1)
        tens, _, units = written.partition("十")
        if "十" in written:
            value = ZH_DIGITS.get(tens, 1) * 10 + ZH_DIGITS.get(units, 0)
        else:
            value = ZH_DIGITS[written]
        out.append((written, float(value)))
    return out


# Words in a passage that give a count a sentence may state as a number: "a dual-track evaluation" has two tracks.
_IMPLIED = re.compile(r"\b(?:(dual|double|twofold|two-fold|both|pair|twin|bi)|"
                      r"(triple|threefold|three-fold|tri))(?=[\s-])", re.I)
_MULTIPLIER = {"k": 1e3, "m": 1e6, "b": 1e9}
_UNIT = {"%": "%", "×": "x", "x": "x", "fold": "x", "-fold": "x", "point": "pt", "points": "pt", "pp": "pt"}


# "40-60%", "2.9× ~ 12.5×": a range whose unit is written once (or twice); both ends carry it.
_RANGE = re.compile(rf"(?<![^\W{HAN}])(?<!\.)(\d+(?:\.\d+)?)\s?(?:%|×|x)?\s?(?:-|–|—|~|∼)\s?(\d+(?:\.\d+)?)\s?"
                    r"(%|×|x\b|-?fold|points?|pp)")
# "requiring 20-1000 steps": a range of counts, each end a number (not "Llama-2-7B", not "3-layer").
_COUNT_RANGE = re.compile(r"(?<![\w.\-])(\d+)\s?(?:-|–|—)\s?(\d+)(?=\s+[a-z])")


# "(1) … (2) … (3)", "(i) … (ii)", "(a) … (b)": the labels of a list, which number its items, not a quantity.
_LABEL = re.compile(r"(?<![\w)])\((\d{1,2}|[ivx]{1,4}|[a-h])\)")
_ROMAN = {r: i for i, r in enumerate("i ii iii iv v vi vii viii ix x xi xii".split(), 1)}


def _rank(label: str, kind: str) -> int:
    """Where a label stands in its list: "3" is 3 of a numbered list, "iii" 3 of a roman one, "c" 3 of a lettered
    one; 0 for a label of another kind."""
    if kind == "number":
        return int(label) if label.isdigit() else 0
    if kind == "roman":
        return _ROMAN.get(label, 0)
    return ord(label) - ord("a") + 1 if len(label) == 1 and label.isalpha() else 0


def _list_labels(text: str) -> tuple[list[tuple[int, int]], set[int]]:
    """The spans of the labels of each list in `text` (a run counted from 1, i or a) and how many items each has."""
    spans: list[tuple[int, int]] = []
    sizes: set[int] = set()
    labels = list(_LABEL.finditer(text))
    for kind in ("number", "roman", "letter"):
        ranked = [(m.span(), _rank(m.group(1), kind)) for m in labels]
        seen = {r for _, r in ranked}
        n = 0
        while n + 1 in seen:
            n += 1
        if n >= 2:
            spans += [span for span, r in ranked if 0 < r <= n]
            sizes.add(n)
    return spans, sizes


def numbers(text: str, labels: bool = True) -> list[tuple[str, float, str | None]]:
    """(as written, value, unit) of every number in `text`; 50K is 50000, "twelve" 12, "1000x" a factor, "40-60%"
    both 40% and 60%. `labels`: with the labels of a list ("(1) … (2) …"), which number items but count nothing."""
    out: list[tuple[str, float, str | None]] = []
    skipped = set() if labels else {a for a, _ in _list_labels(text)[0]}
    for m in _RANGE.finditer(text):
        unit = _UNIT.get(m.group(3).lower(), m.group(3).lower())
        out += [(f"{v}{m.group(3)}", float(v), unit) for v in (m.group(1), m.group(2))]
    for m in _COUNT_RANGE.finditer(text):
        out += [(v, float(v), None) for v in (m.group(1), m.group(2))]
    for m in _NUMBER.finditer(text):
        if m.start() - 1 in skipped:
            continue
        if m.group(3):
            out.append((m.group(3), float(NUMBER_WORDS[m.group(3).lower()]), None))
            continue
        value = float(m.group(1).replace(",", ""))
        unit = (m.group(2) or "").lower() or None
        if unit in _MULTIPLIER:
            value, unit = value * _MULTIPLIER[unit], None
        out.append((m.group(0).strip(), value, _UNIT.get(unit or "", unit)))
    return out


# "4-bit", "2-dimensional", "8-layer": a number written as the first half of a compound (not "Llama-2-7B"; not
# "3D", which "three 3D LUTs" does not count).
_JOINED = re.compile(r"(?<![\w.\-])(\d+(?:\.\d+)?)-(?=[A-Za-z]{2})")


def implied(text: str) -> set[tuple[float, None]]:
    """Counts `text` gives without a number standing alone: "a dual-track evaluation" (two), a list "(1) … (2) …
    (3)" (three), "4-bit weights" (four)."""
    return ({(2.0 if m.group(1) else 3.0, None) for m in _IMPLIED.finditer(text)}
            | {(float(n), None) for n in _list_labels(text)[1]}
            | {(float(m.group(1)), None) for m in _JOINED.finditer(text)})


# "most of the modules" against "a small subset of modules": a proportion, large or small, of the same thing.
_PROPORTION = re.compile(r"\b(?:(?P<large>(?:the\s+)?(?:vast\s+)?majority\s+of|most\s+of|"
                         r"(?:nearly|almost)\s+all(?:\s+of)?|the\s+bulk\s+of|most(?=\s+(?![a-z-]+ous\b)[a-z-]+s\b))|"
                         r"(?P<small>(?:a|only\s+a)\s+(?:very\s+)?"
                         r"(?:small|tiny)\s+(?:subset|fraction|minority|portion|number|part|share|remainder)\s+of|"
                         r"a\s+(?:small\s+)?(?:handful|minority)\s+of|(?:a\s+)?few|"
                         r"small\s+(?:subset|fraction|remainder)"
                         r"(?:\s+of)?))\s+((?:[\w'’-]+\s*){1,4})", re.I)
_PROPORTION_ZH = re.compile(r"(?:(?P<large>绝大多数|绝大部分|大多数|大部分|多数)|(?P<small>极少数|少数|一小部分|小部分|少量))的?"
                            f"([{HAN}]+)")
# "a single forward pass with zero oracle calls" against "a few forward passes": how many, said in words.
# Two or more, as a number ("two captions", "3 datasets") or a group ("a pair of vectors"), is "some".
_COUNT = re.compile(r"(?<![\w.,-])(zero|no|a single|single|only one|one|a few|few|a small number of|a handful of|"
                    r"several|multiple|many|a set of|a collection of|a series of|a sequence of|a pair of|pairs of|"
                    r"a group of|groups of|" + "|".join(NUMBER_WORDS) + r"|\d+)\s+((?:[a-z][\w-]*\s*){1,2})", re.I)
_COUNT_CLASS = {"zero": "none", "no": "none", "0": "none", "a single": "one", "single": "one", "only one": "one",
                "one": "one", "1": "one"}
# "one point at a time", "one step per round": a rate, not a count.
_RATE = re.compile(r"[a-z][\w-]*\s+(?:at a time|per|each|by one)\b", re.I)
# "multi-player games" where the passage says "two-player games": how many, said as the first half of a compound.
_PREFIX_CLASS = {"zero": "none", "single": "one", "one": "one", "1": "one", "mono": "one", "uni": "one",
                 "two": "two", "2": "two", "dual": "two", "double": "two", "bi": "two", "three": "three", "3": "three",
                 "tri": "three", "triple": "three", "four": "four", "4": "four", "quad": "four", "few": "few",
                 "multi": "many", "many": "many", "multiple": "many", "poly": "many"}
_COUNTING = re.compile(r"(?<![\w.-])(" + "|".join(_PREFIX_CLASS) + r")-([a-z]{3,})\b", re.I)
# "multimodal" is "multi-modal"
_COUNTING_JOINED = re.compile(r"(?<![\w-])(multi|uni|bi|tri|mono|poly)([a-z]{4,})\b", re.I)
# "the second adaptive decentralized algorithm" where the passage says "the first": which one, said in words.
_ORDINAL = re.compile(r"\bthe\s+(first|second|third|fourth|fifth|last)\s+((?:[a-z][\w-]*\s*){1,2})", re.I)


# "99.94% on CLEVR-Hans3", "在 CLEVR-Hans7 上达到 99.94%", "On CLEVR-Hans7 it reaches 87.77%", "2x faster than RNN-T":
# which number goes with which benchmark or baseline.
_BINDING_AFTER = re.compile(r"(\d+(?:\.\d+)?)\s?(?:%|x|×)?\s+(?:[a-z][A-Za-z-]*\s+){0,3}(?:on|in|for|than|over)\s+"
                            r"(?:the\s+)?([A-Za-z0-9][\w.-]*[A-Za-z0-9])")
# "on A and B …, attaining 16.87 and 20.05, respectively": the n-th number goes with the n-th name.
_NAME_LIST = re.compile(r"(?<![\w.-])([A-Z][\w.-]*[A-Za-z0-9](?:\s*,\s*[A-Z][\w.-]*[A-Za-z0-9])*,?\s+and\s+"
                        r"[A-Z][\w.-]*[A-Za-z0-9])")
_NUMBER_LIST = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?\s?%?(?:\s*,\s*\d+(?:\.\d+)?\s?%?)*,?\s+and\s+\d+(?:\.\d+)?)")
_BINDING_BEFORE = re.compile(r"(?:\b[Oo]n|在)\s*([A-Za-z][\w.-]*[A-Za-z0-9])\s*上?[^.。;；\d]{0,24}?(\d+(?:\.\d+)?)\s?%")
# "for A and B on the CSL-Daily dataset by 39% and 46%, respectively": the setting every listed number is given in.
_SETTING = re.compile(r"\b(?:on|in)\s+(?:the\s+)?([A-Za-z0-9][\w.-]*[A-Za-z0-9])")
# "improves GFSLT-VLP by 39%": the model or benchmark a change is given for, named between the verb and "by".
_CHANGED = re.compile(r"\b(?:improv|rais|boost|increas|lift|enhanc|reduc|lower|cut|speed|accelerat)\w*\s+"
                      r"(?:the\s+)?(?:[A-Za-z][\w-]*\s+){0,3}?([A-Za-z0-9][\w.-]*[A-Za-z0-9])\s+by\s+"
                      r"(\d+(?:\.\d+)?)\s?(?:%|x|×)")


def _bound_name(name: str) -> bool:
    """A benchmark, model or setting a number can be given for: a name, a capitalized word, a size such as 8B, a
    hyphenated setting such as low-resource."""
    return bool(names(name) or name[:1].isupper() or re.fullmatch(r"\d+(?:\.\d+)?[BMK]", name)
                or re.fullmatch(r"[a-z]+-[a-z]+", name))


def bindings(text: str) -> set[tuple[float, str]]:
    """(number, the benchmark or setting it is given for): "87.77% on CLEVR-Hans7", "on Visual Sudoku … 99.89%",
    "20% for 8B model", "on A and B …, 16.87 and 20.05, respectively" (and each listed number with the setting the
    clause names beside the list: "for A and B on the CSL-Daily dataset by 39% and 46%, respectively")."""
    near = {(float(v), n.lower()) for v, n in _BINDING_AFTER.findall(text) if _bound_name(n)}
    near |= {(float(v), n.lower()) for n, v in _BINDING_BEFORE.findall(text) if _bound_name(n)}
    out: set[tuple[float, str]] = set()
    for clause in clauses(text):
        if "respectively" not in clause.lower():
            continue
        lists = [(m.start(), m.end(), [n.strip() for n in re.split(r"\s*,\s*(?:and\s+)?|,?\s+and\s+", m.group(1))])
                 for m in _NAME_LIST.finditer(clause)]
        for m in _NUMBER_LIST.finditer(clause):
            values = [float(v) for v in re.findall(r"\d+(?:\.\d+)?", m.group(1))]
            # the list of as many names nearest the numbers, before or after them
            near_lists = sorted((max(m.start() - end, start - m.end()), ns) for start, end, ns in lists
                                if len(ns) == len(values))
            if near_lists:
                listed_names = near_lists[0][1]
                out |= {(v, n.lower()) for v, n in zip(values, listed_names)}
                settings = {n for n in _SETTING.findall(clause) if _bound_name(n) and n not in listed_names}
                out |= {(v, n.lower()) for v in values for n in settings}
    listed = {v for v, _ in out}  # a listed number goes with its place in the list, not with the name beside it
    return out | {(v, n) for v, n in near if v not in listed}


def changed(text: str) -> set[tuple[float, str]]:
    """(number, the model or benchmark it changes): "improves GFSLT-VLP by 39%" is (39, "gfslt-vlp"). Read only
    against what a passage gives that name: "improves BLEU by 39%" names a metric no passage binds a number to."""
    return {(float(v), n.lower()) for n, v in _CHANGED.findall(text) if _bound_name(n)}


# "4 phases (+3 subphases)": how many of what. A sentence's number goes with the word right after it; a passage's with
# any of the three after it ("38 downstream evaluation tasks" counts tasks).
# ("three 3D LUTs": the words counted may be written with a digit)
_COUNTED = re.compile(r"(?<![\w.,\-])(\d+|" + "|".join(NUMBER_WORDS)
                      + r")\s+((?:\d*[a-z][a-z-]*\s+){0,2}\d*[a-z][a-z-]*)", re.I)


def counted(text: str, reach: int) -> list[tuple[float, str]]:
    """(how many, the stem of a word counted) for each whole number followed by words, the first `reach` words, in
    the order written."""
    out: dict[tuple[float, str], None] = {}
    for m in _COUNTED.finditer(text):
        written = m.group(1).lower()
        value = float(NUMBER_WORDS[written]) if written in NUMBER_WORDS else float(written)
        out |= dict.fromkeys((value, w) for w in ordered_stems(" ".join(m.group(2).split()[:reach])))
    return list(out)


# "42% time savings and 30% memory savings": each figure with the word right after it, to see two of them swapped.
_TAGGED = re.compile(r"(?<![\w.,\-])(\d+(?:\.\d+)?)\s?(?:%|×|x)?\s+([a-z][a-z-]*)", re.I)


def tagged(text: str) -> set[tuple[float, str]]:
    return {(float(m.group(1)), after[0]) for m in _TAGGED.finditer(text) if (after := ordered_stems(m.group(2)))}


# "0.3% accuracy loss" against "improving by 0.3%": which way a number goes, from the words beside it.
_UP = frozenset(stem(w) for w in "improve improvement increase gain gains boost raise raises higher more faster up "
                                 "better speedup grows".split())
_DOWN = frozenset(stem(w) for w in "loss losses drop decrease reduce reduction lower less fewer degrade degradation "
                                   "decline cut cuts slower down worse saves saving".split())
_NEAR_NUMBER = re.compile(r"((?:[\w-]+\s+){0,3})(\d+(?:\.\d+)?)\s?(?:%|×|x|-?fold|points?|pp)((?:\s+[\w-]+){0,3})")


def directions(text: str) -> set[tuple[float, bool]]:
    """(number, up) for every number said to go up or down: "0.3% accuracy loss" is (0.3, False)."""
    out = set()
    for m in _NEAR_NUMBER.finditer(text):
        near = {stem(w) for w in re.findall(r"[a-z]+", (m.group(1) + " " + m.group(3)).lower())}
        up, down = bool(near & _UP), bool(near & _DOWN)
        if up != down:
            out.add((float(m.group(2)), up))
    return out


def proportions(text: str) -> set[tuple[bool, str]]:
    """(large, a stem of what is counted) of every proportion said in words: "most of the modules" is (True,
    "modul"), "a small subset of modules" (False, "modul"); in Chinese, what is counted is translated."""
    out = {(bool(m.group("large")), s) for m in _PROPORTION.finditer(text) for s in ordered_stems(m.group(3))[:2]}
    for m in _PROPORTION_ZH.finditer(text):  # the dictionaries load on the first Chinese proportion
        english = translate_chinese(m.group(3))
        out |= {(bool(m.group("large")), s) for s in ordered_stems(english[0] if english else "")[:1]}
    return out


def counts(text: str) -> set[tuple[str, str]]:
    """(none / one / some, each of the first two words counted): "a single forward pass" gives ("one", "forward") and
    ("one", "pass")."""
    out = set()
    for m in _COUNT.finditer(text):
        if _RATE.match(text, m.start(2)):
            continue  # "one point at a time" says how, not how many
        counted = ordered_stems(m.group(2))[:2]
        out |= {(_COUNT_CLASS.get(" ".join(m.group(1).lower().split()), "some"), s) for s in counted}
    return out


def compounds(text: str) -> set[tuple[str, str]]:
    """(how many, the stem of what) of every compound that counts: "two-player" is ("two", "player"), "multimodal"
    ("many", "modal"), "univariate" ("one", "variat"); not where a negation comes just before ("rather than
    multi-turn")."""
    found = [*_COUNTING.finditer(text), *_COUNTING_JOINED.finditer(text)]
    return {(_PREFIX_CLASS[m.group(1).lower()], stem(m.group(2).lower())) for m in found
            if m.group(2).lower() not in STOPWORDS
            and not after_negation(text, m.start())}


# "Rank 1", "Stage 2", "Llama 3": a whole number that names which one of a series, after a capitalized word (not a
# sentence's first, nor a function word: "In 2023").
_LABELLED = re.compile(r"(?<=[\w,;:(] )([A-Z][a-z]+)\s(\d{1,3})\b(?![\w.,]\d|\s?(?:%|×|x\b|-?fold|points?|pp\b|[KMB]\b)|-)")


def labelled(text: str) -> set[tuple[str, float]]:
    """(the word, the number) of each number that names one of a series: "holds Rank 1" is ("rank", 1)."""
    return {(m.group(1).lower(), float(m.group(2))) for m in _LABELLED.finditer(text)
            if m.group(1).lower() not in STOPWORDS}


def ordinals(text: str) -> set[tuple[str, str]]:
    """(first / second / … / last, the first word after it): "the first adaptive algorithm" is ("first", "adapt")."""
    return {(m.group(1).lower(), s) for m in _ORDINAL.finditer(text) for s in ordered_stems(m.group(2))[:1]}


# "Θ(K√T)" where the passage says "Θ(√(KT))", "(cd)^(L+1/2)" for "(cd)^(L-1/2)": an asymptotic bound is compared
# as written (LaTeX rendered; spaces, brackets, product signs and "^" aside), each of its terms one the passage's has.
_BOUND = re.compile(r"(?<![A-Za-z])(?:O|Θ|Ω|o|ω)\s*\(")
_MAYBE_BOUND = re.compile(r"[OÕΘΩoω]\u0303?\}*\s*\(|\\(?:Theta|Omega|omega)\b")
_PLAIN_SCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺−", "0123456789-+-")  # exponents as written inline, "^" dropped after


# "bounded L2 norm" where the passage says "bounded $L_{\infty}$ norm": which norm.
_NORM = re.compile(r"(?<![A-Za-z])(?:L|ℓ|\\ell)\s?_?\s?\{?\s?(\d|[₀-₉]|∞|\\infty|infty|inf)\s?\}?(?![A-Za-z0-9])")
_SUBSCRIPT_DIGITS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")


def norms(text: str) -> set[str]:
    """The norms `text` names: "L2", "ℓ_2", "$L_{\infty}$" give "2", "2", "inf"."""
    return {"inf" if m.group(1).lstrip("\\") in ("∞", "infty", "inf") else m.group(1).translate(_SUBSCRIPT_DIGITS)
            for m in _NORM.finditer(text)}


# "log² T-type regret" where the passage says "log T-type": the power of a logarithm, in a bound or not.
_LOG = re.compile(r"(?<![A-Za-z])(?:log|ln)(?:\s?\^\s?\(?(\d))?(?![A-Za-z-])")  # not "log-likelihood"


# "within a few seconds" where the passage says "in a few minutes": how long, by its unit, after a number or an amount
# ("3 hours", "a few minutes", "per second"; not "a second stage", "one second-order method", "in recent years").
_DURATION = re.compile(r"(?:\d+(?:\.\d+)?|\b(?:a few|few|several|a couple of|tens of|hundreds of|thousands of|per|"
                       + "|".join(NUMBER_WORDS) + r"))\s?-?(milli|micro|nano)?(second|minute|hour|day|week|month)s?\b(?!-)",
                       re.I)


def durations(text: str) -> set[str]:
    """The units of time `text` gives an amount in: "in a few minutes" gives "minute", "5 ms" nothing (a symbol)."""
    return {(m.group(1) or "").lower() + m.group(2).lower() for m in _DURATION.finditer(text)}


def log_powers(text: str) -> set[int]:
    """The powers of every logarithm `text` states: "log T" gives 1, "log^2 T" (or "log² T") 2."""
    return {int(m.group(1) or 1) for m in _LOG.finditer(text)}


def bounds(text: str) -> set[tuple[str, ...]]:
    """The bounds `text` states, each as its sorted terms: "O((cd)^(L-1/2)√T + d)" → ("cdL-1/2√T", "d")."""
    if not _MAYBE_BOUND.search(text):  # most text states none: no rendering
        return set()
    shown = unaccented(readable(text)).translate(_PLAIN_SCRIPTS).replace("sqrt", "√")
    shown = re.sub(r"\[\d{1,3}\]", " ", shown)  # "√[3]T" as a sentence reads once its citations are cut: "√ T"
    out = set()
    for m in _BOUND.finditer(shown):
        depth, end = 1, m.end()
        while end < len(shown) and depth:
            depth += {"(": 1, ")": -1}.get(shown[end], 0)
            end += 1
        terms = [re.sub(r"[\s(){}\[\]·⋅*^\\]", "", t) for t in _top_level_terms(shown[m.end():end - 1])]
        if depth == 0 and all(terms):
            out.add(tuple(sorted(terms)))
    return out


def _top_level_terms(inner: str) -> list[str]:
    """`inner` split at its "+" signs outside brackets."""
    terms, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        depth += {"(": 1, "{": 1, "[": 1, ")": -1, "}": -1, "]": -1}.get(ch, 0)
        if ch == "+" and depth == 0:
            terms.append(inner[start:i])
            start = i + 1
    return [*terms, inner[start:]]
