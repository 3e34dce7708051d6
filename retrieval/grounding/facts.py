"""Hard facts, checked exactly: every number with its unit, every name, comparisons, words of scope, negations,
conditions, counts said in words, Chinese numerals or compounds ("two-player"; the labels of a list, "(1) (2)", count
nothing), places in a series, the power of a logarithm, "all" of what the passage speaks of in part, numbers tied
to a benchmark and the roles things play (which of two opposite roles, which way a relation runs) must be what the
cited passage says."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from paperbot.text import STOPWORDS as TEXT_STOPWORDS
from paperbot.text import GENERIC_WORDS, HAN, ZH_DIGITS, content_words, readable, stem
from retrieval.grounding.debris import CITE
from retrieval.translate import translate_chinese

# -- words ------------------------------------------------------------------------------------


STOPWORDS = TEXT_STOPWORDS | GENERIC_WORDS
STOP_STEMS = frozenset(stem(w) for w in STOPWORDS) | STOPWORDS


_SUPERSCRIPTS = str.maketrans({c: f"^{d}" for d, c in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")} | {"⁻": "-"})


def plain(text: str) -> str:
    """Passage text as people read it (LaTeX rendered: 4.2$\\times$ → 4.2×, 10\\% → 10%), with Greek letters also
    spelled out (β-DPO is also "beta-DPO") and accents dropped ("Rényi" is "Renyi"), to find numbers and names in."""
    text = unaccented(text).translate(_SUPERSCRIPTS)  # "α³" is "α^3", as written or as rendered from LaTeX
    shown = re.sub(r"%(?=[^\W\d_])", "% ", readable(text))  # "100\%constraint": 100 % of something
    shown = shown.translate(_SUPERSCRIPTS)
    spelled = re.sub(r"[$\\{}]", "", text)
    return shown if shown == spelled else f"{shown} {spelled}"


def unaccented(text: str) -> str:
    """`text` with the accents of Latin letters dropped ("Rényi" → "Renyi"); other scripts are left as they are."""
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


# -- hard facts -------------------------------------------------------------------------------

_NUMBER_WORDS = {w: i for i, w in enumerate("two three four five six seven eight nine ten eleven twelve thirteen "
                                            "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split(), 2)}
_NUMBER = re.compile(r"(?<![\w.\-])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?:\s?(%|×|x|-?fold|points?|pp|[KMB])"
                     r"|(?=[\s,;:.)\]/*，。、）]|$))(?![A-Za-z0-9])|(?<![\w-])(" + "|".join(_NUMBER_WORDS) + r")\b",
                     re.I)
# "三种边缘设备" (three kinds of edge device): a count in Chinese numerals before a measure word, two to ninety-nine;
# not "这两种" or "前两个" (these two, the first two), nor "A 和 B 两种" (A and B, the two of them), which count
# things already named.
_ZH_COUNTED = re.compile(r"(?<![这那前后上下其每第])([二两三四五六七八九]?十[二三四五六七八九]?|[两二三四五六七八九])"
                         r"(?=\s*(?:种|个|项|类|组|款|篇|位|层|步|条|点|大|方面|部分|阶段|模块|任务|数据集))")
_ZH_LISTED = re.compile(r"[和与及、][^，。；：,;:]{0,40}$")


def _zh_counts(text: str) -> list[tuple[str, float]]:
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
_IMPLIED = re.compile(r"\b(?:(dual|double|twofold|two-fold|both|pair|twin|bi)|(triple|threefold|three-fold|tri))(?=[\s-])",
                      re.I)
_MULTIPLIER = {"k": 1e3, "m": 1e6, "b": 1e9}
_UNIT = {"%": "%", "×": "x", "x": "x", "fold": "x", "-fold": "x", "point": "pt", "points": "pt", "pp": "pt"}


# "40-60%", "2.9× ~ 12.5×": a range whose unit is written once (or twice); both ends carry it.
_RANGE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?(?:%|×|x)?\s?(?:-|–|—|~|∼)\s?(\d+(?:\.\d+)?)\s?"
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
                          r"(?:more|less) [\w-]+ than|(?:higher|lower|faster|slower|larger|smaller|stronger)"
                          r"(?:\s+[\w-]+){0,2}\s+than)\b"
                          r"|超过|优于|胜过|超越|好于|更好|高于|强于|快于", re.I)
_SUPERLATIVE = re.compile(r"\b(?:state[- ]of[- ]the[- ]art|sota|best-performing)\b|最先进|最好|最佳|领先", re.I)
# Words that widen or narrow a claim's scope; a sentence may use one only where its passage says something of the same
# kind (any word of either pattern): "across all types of agents" where the passage says "among agents trained in a
# world model", "in only a minority of cases" where it says "in most cases". The question does not license them, and
# after a negation they are emphasis ("without any fine-tuning", "not all"), read with the negation.
_SCOPES = (
    ("all", re.compile(r"\b(?:all(?!\s+(?:of\s+)?(?:the\s+)?(?:two|three|four|five|six|seven|eight|nine|ten|"
                       r"\d+)\b)|every|any|always|never|regardless|irrespective|universally|invariably|"
                       r"whatever)\b|所有|一切|总是|始终|无论|从不|任何", re.I),
     re.compile(r"\b(?:all|every|each|any|always|never|arbitrar\w*|regardless|irrespective|universal\w*|whatever|"
                r"invariabl\w*|entire|whole|guarantee\w*|provabl\w*|agnostic)\b", re.I)),
    ("guarantee", re.compile(r"\b(?:guarantee[sd]?|provabl[ey]|certifiabl[ey])\b|保证|确保", re.I),
     re.compile(r"\b(?:guarantee\w*|provabl\w*|prov(?:e|es|ed|en|ing)|proofs?|theorems?|certif\w*|bound\w*|ensur\w*|"
                r"assur\w*)\b", re.I)),
    ("only", re.compile(r"\b(?:the only|solely|exclusively|merely|only (?:for|when|if|in|on|under|with))\b|唯一", re.I),
     re.compile(r"(?<!not )\b(?:only|sole|solely|exclusive\w*|merely|alone|unique\w*)\b", re.I)),
    ("entirely", re.compile(r"\b(?:fully|completely|entirely|perfectly|totally|wholly|indistinguishable|reliably|"
                            r"consistently)\b|完全|彻底", re.I),
     re.compile(r"\b(?:full\w*|complete\w*|entire\w*|perfect\w*|total\w*|whole\w*|exact\w*|indistinguishable|"
                r"reliabl\w*|consistent\w*|always)\b", re.I)),
    ("strength", re.compile(r"\b(?:excellent\w*|dramatic(?:al)?(?:ly)?|vastly|substantial(?:ly)?|"
                            r"significant(?:ly)?|greatly|drastic(?:al)?(?:ly)?|massive(?:ly)?|huge|remarkabl[ey]|"
                            r"tremendous(?:ly)?|far (?:better|more|less|fewer|faster|higher|lower))\b|显著|大幅|(?<!极小)极大",
                            re.I),
     re.compile(r"\b(?:significant\w*|substantial\w*|dramatic\w*|vast\w*|great\w*|drastic\w*|massive\w*|large\w*|"
                r"considerabl\w*|remarkabl\w*|excellent|strong\w*|notabl\w*|marked\w*|huge|superior|impressive|"
                r"orders? of magnitude)\b|\d(?:\.\d+)?\s?(?:x|×|-?fold|%)", re.I)),
    ("little", re.compile(r"\b(?:few|minority|handful|single|slightly|little|narrow|rarely|seldom|marginal(?:ly)?|"
                          r"modest(?:ly)?|small (?:set|number|subset|fraction|part|share))\b|少数|少量|极少|略微|稍微|稍有", re.I),
     re.compile(r"\b(?:few|minority|handful|single|one|slight\w*|little|narrow\w*|rare\w*|seldom|marginal\w*|modest\w*|"
                r"limit\w*|small\w*|minor|minimal\w*|tiny|subset|fraction|only)\b", re.I)),
)
_PASSAGE_COMPARATIVE = re.compile(
    r"\b(?:outperform\w*|surpass\w*|beat(?:s|ing)?|better than|(?:competitive|comparable|similar) or better|"
    r"better performance|superior|exceed\w*|"
    r"[a-z]+er(?:\s+[\w-]+){0,2}\s+than|[a-z]+er(?:\s+[\w-]+){0,3}\s+(?:compared|relative)\s+(?:to|with)|"
    r"fewer than|less than|gains? over|advantage over|improv\w* (?:up)?on|improv\w* over|state[- ]of[- ]the[- ]art|"
    r"sota|(?:more|less|fewer)(?:\s+[\w-]+){1,2}\s+than)\b", re.I)
_PASSAGE_SUPERLATIVE = re.compile(r"\b(?:state[- ]of[- ]the[- ]art|sota|best|new record)\b", re.I)
# not "matching" naming a kind of model or loss ("a flow matching model", "the score matching objective")
_PARITY = re.compile(r"\b(?:closely matches|matches|match|matching(?!\s+(?:models?|loss(?:es)?|objectives?|frameworks?|"
                     r"methods?|algorithms?|problems?|tasks?|networks?|based|polic(?:y|ies)|paradigms?)\b)|comparable|"
                     r"on par with|competitive with|similar to)\s+((?:[\w-]+[\s.,;:]*){0,4})", re.I)
_SENTENCE_PARITY = re.compile(r"\b(?<!-)(?:match\w*|comparable|on par|competitive|similar|close to|closely)\b|"
                              r"相当|接近|持平|媲美", re.I)  # not "flow-matching"
# A sentence saying one thing is as good as another ("matches the previous state of the art"; not "the closest match").
_CLAIMED_PARITY = re.compile(r"\b(?<!-)(?:match(?:es|ed|ing)?\s+(?:the|that|those|its|their|existing|prior|previous|state)|"
                             r"on par|comparable (?:to|with)|as (?:good|accurate|effective) as|competitive with|"
                             r"performs? similarly)\b|(?:大致|基本|大体)(?:相当|持平)|不相上下|持平", re.I)
# A comparison that says something is worse ("slower query times than"), which a parity elsewhere does not contradict.
_DISADVANTAGE = re.compile(r"\b(?:slower|worse|weaker|less accurate|underperform\w*)\b", re.I)
# A negation word (a name in capitals, such as the method ZERO, is not one).
_NEGATION = (r"\b(?!(?-i:[A-Z]{2,}\b))(?:(?<!with and )(?<!with or )without|no|zero|not(?!\s+(?:only|just|merely)\b)|"
             r"never|cannot|rather than|instead of)")
_NEGATED = re.compile(_NEGATION + r"\s+((?:[\w'’-]+[\s.,;:]*){1,3})", re.I)
# "without requiring the trajectories to be plausible", "does not require an explicit budget": what is denied is the
# thing after the verb of need or use.
_NEGATED_OBJECT = re.compile(_NEGATION + r"\s+(?:requir\w*|need\w*|using|uses?|rel(?:y|ies|ying) on|having access to|"
                             r"access to|the need for)\s+(?:any\s+|an?\s+|the\s+)?((?:[\w'’-]+[\s.,;:]*){1,3})", re.I)
# "provided that some RCT data is available" against "regardless of RCT data availability": a condition set or lifted.
_CONDITIONAL = re.compile(r"\b(?:provided that|only if|as long as|only when|if and only if|on condition that)\s+"
                          r"((?:[\w'’-]+\s*){1,6})", re.I)
_UNCONDITIONAL = re.compile(r"\b(?:regardless of|irrespective of|even (?:when|if)|whether or not)\s+"
                            r"((?:[\w'’-]+\s*){1,6})", re.I)
# What a sentence denies, read to the end of its clause: "rather than in a latent space" denies a latent space.
# "Unlike existing models that rely on CNN backbones": what a passage sets its own work apart from.
_UNLIKE = re.compile(r"\b(?:unlike|in contrast to|as opposed to)\s+((?:[\w'’()-]+[\s,]*){1,14})", re.I)
_DENIAL = re.compile(_NEGATION + r"\s+((?:[\w'’-]+\s*){1,5})", re.I)
# "previous methods are unable to create": what a passage says something cannot do (a sentence may deny it too).
_ALONE = re.compile(r"\s+(?:by\s+(?:itself|themselves)|on\s+(?:its|their)\s+own|in\s+(?:itself|themselves)|alone)\b", re.I)
_UNABLE = re.compile(r"\b(?:unable to|fail(?:s|ed)? to|incapable of)\s+((?:[\w'’-]+\s*){1,5})", re.I)
# "eliminating the need for Markov chain Monte Carlo": what a passage says is not needed (a sentence may deny it).
_NEEDLESS = re.compile(r"\b(?:(?:eliminat|remov|obviat|avoid|bypass|sidestep)\w*\s+the\s+need\s+(?:for|of)|obviat\w*|"
                       r"(?:no|without\s+the|without\s+any)\s+need\s+(?:for|of|to)|dispens\w*\s+with)\s+"
                       r"((?:[\w'’-]+\s*){1,5})", re.I)
_REPLACES = re.compile(r"\breplac(?:e|es|ed|ing)\b", re.I)
# "does not need fine-tuning" in Chinese: what is denied is the first word after the negation, translated.
_DENIED_ZH = re.compile(f"(?:无需|无须|不需要|不需|不依赖|不使用|不用|没有使用)([{HAN}]{{2,4}})")
# "still requires the target to satisfy an isoperimetric inequality" where the passage says "without assuming the
# target … or satisfying any isoperimetric inequality": what a sentence says is needed, what a passage says is not.
_NEED = r"requir(?:e|es|ing)|assum(?:e|es|ing)|need(?:s|ing)?|rel(?:y|ies|ying) on"  # verbs of need, as denied
_REQUIRED = re.compile(rf"\b(?:{_NEED}|required|assumed|needed|depend(?:s|ing)? on)\s+((?:[\w'’-]+\s*){{1,6}})", re.I)
_NOT_ASSUMED = re.compile(rf"\b(?:without|not|no|never)\s+(?:\w+\s+)?(?:{_NEED})\s+((?:[\w'’-]+[\s,]*){{1,12}})", re.I)
# "near-optimal" where the passage says "optimal", and "optimal" where it says "near-optimal".
_QUALIFIED = re.compile(r"(?<![\w-])(?:near|nearly|almost|approximately|quasi)[- ]([a-z]{5,})\b", re.I)
_UP_TO_FACTORS = re.compile(r"\bup to (?:a |an )?(?:log\w*|constant|poly\w*|lower-order)", re.I)
# "falls short of earlier flow-matching models" where the passage says it "improves over prior diffusion and
# flow-matching models": what a sentence puts ahead, against what the passage says it does better than.
_BEHIND = re.compile(r"\b(?:(?:fall(?:s|ing)?|fell) short of|lag(?:s|ging)? behind|trail(?:s|ing)?|inferior to|"
                     r"worse than|underperform\w*)\s+((?:[\w'’-]+\s*){1,4})", re.I)
_AHEAD = re.compile(r"\b(?:outperform\w*|surpass\w*|improv\w* (?:up)?on|improv\w* over|gains? over|beat(?:s|ing)?|"
                    r"better than|superior to|exceed\w*)\s+((?:[\w'’-]+\s*){1,5})", re.I)
_RIVALS = frozenset(stem(w) for w in "prior previous existing earlier recent current other state art method methods "
                                      "model models baseline baselines approach approaches work works".split())
_SENTENCE_NEGATION = re.compile(r"\b(?:without|no|zero|not|never|cannot|fail\w*|unable|lack\w*|rather than|instead of|"
                                r"avoid\w*|free)\b|无需|不|没有|无", re.I)


def _after_negation(text: str, start: int, reach: int = 16) -> bool:
    """Whether a negation comes just before `start` ("not all", "rather than multi-turn"): read with it, not alone."""
    return bool(_SENTENCE_NEGATION.search(text[max(0, start - reach):start]))


# "less suited" against "best suited": a degree word before the same word, in the other direction.
_DEGREE = re.compile(r"\b(more|most|better|best|highly|well|greatly|less|least|worse|worst|poorly|barely)\s+([a-z][a-z-]+)",
                     re.I)
_DEGREE_DOWN = frozenset({"less", "least", "worse", "worst", "poorly", "barely"})
# "in every weighted graph" where the passage proves it for "a broad class of weighted random graphs", "every selected
# unit" where it guarantees "a prescribed fraction of selected units": all of a thing the passage speaks of in part.
_NARROWED = re.compile(r"\b(?:a|an|one)\s+(?:(?:broad|wide|large|small|certain|specific|particular|prescribed|given|"
                       r"restricted|special|general|rich)\s+)?(?:class|family|fraction|subset|portion|part|kind|type)\s+"
                       r"of\s+((?:[\w'’-]+\s*){1,3})", re.I)
_UNIVERSAL = re.compile(r"\b(?:every|all|any)\s+(?:of\s+)?(?:the\s+)?((?:[\w'’-]+\s*){1,2})", re.I)
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
                    r"a group of|groups of|" + "|".join(_NUMBER_WORDS) + r"|\d+)\s+((?:[a-z][\w-]*\s*){1,2})", re.I)
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
# "erases a model's latent knowledge" against "models retain latent knowledge": opposite verbs on the same thing.
_KEEPS = re.compile(r"\b(?:retain|keep|preserv|maintain|restor)\w*\s+((?:[\w'’-]+\s*){1,3})", re.I)
_LOSES = re.compile(r"\b(?:eras|los[et]|remov|destroy|discard|forget|forgot|eliminat)\w*\s+((?:[\w'’-]+\s*){1,3})", re.I)
# "a fixed parameter budget" against "a budget that grows with …".
_FIXED = re.compile(r"\b(?:fixed|constant|static|unchanged)(?:,\s*[a-z-]+)?\s+((?:[a-z][\w-]*\s*){1,2})", re.I)
# "adaptively-deformed UV coordinates" against "a fixed UV grid": what a passage says adapts or is learned.
_ADAPTIVE = re.compile(r"\b(?:adaptive(?:ly)?(?:-[a-z]+)?|dynamic(?:ally)?(?:-[a-z]+)?|learn(?:ed|able)|trainable|"
                       r"(?:data|input)-dependent)\s+((?:[a-z][\w-]*\s*){1,2})", re.I)
_GROWING = re.compile(r"\b([a-z][a-z-]+)\s+(?:that|which)\s+(?:grows?|increases?|varies|vary|changes?|scales?)\b"
                      r"|\b(?:growing|increasing|varying|changing)\s+((?:[a-z][\w-]*\s*){1,2})", re.I)
# "99.94% on CLEVR-Hans3", "在 CLEVR-Hans7 上达到 99.94%", "On CLEVR-Hans7 it reaches 87.77%", "2x faster than RNN-T":
# which number goes with which benchmark or baseline.
_BINDING_AFTER = re.compile(r"(\d+(?:\.\d+)?)\s?(?:%|x|×)?\s+(?:[a-z][A-Za-z-]*\s+){0,3}(?:on|in|for|than|over)\s+"
                            r"(?:the\s+)?([A-Za-z0-9][\w.-]*[A-Za-z0-9])")
# "on A and B …, attaining 16.87 and 20.05, respectively": the n-th number goes with the n-th name.
_NAME_LIST = re.compile(r"(?<![\w.-])([A-Z][\w.-]*[A-Za-z0-9](?:\s*,\s*[A-Z][\w.-]*[A-Za-z0-9])*,?\s+and\s+"
                        r"[A-Z][\w.-]*[A-Za-z0-9])")
_NUMBER_LIST = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?\s?%?(?:\s*,\s*\d+(?:\.\d+)?\s?%?)*,?\s+and\s+\d+(?:\.\d+)?)")
_BINDING_BEFORE = re.compile(r"(?:\b[Oo]n|在)\s*([A-Za-z][\w.-]*[A-Za-z0-9])\s*上?[^.。;；\d]{0,24}?(\d+(?:\.\d+)?)\s?%")


@dataclass(frozen=True)
class Without:
    """Something a passage says is done without ("without external teachers"), with the words of the sentence that
    says so and of each sentence that says it plainly ("recent approaches rely on external teacher distillation")."""

    pair: frozenset[str]  # two stems: {"extern", "teacher"}
    negating: frozenset[str]
    plainly: tuple[frozenset[str], ...]

    def denies(self, stems: set[str]) -> bool:
        """A sentence with these stems, and no negation, claims it is done with it: it holds the pair and is
        nearer the sentence that says "without" than every sentence that says it plainly."""
        if not self.pair <= stems:
            return False
        near = _jaccard(stems, self.negating)
        return all(near > _jaccard(stems, other) for other in self.plainly)


def _jaccard(a: set[str] | frozenset[str], b: set[str] | frozenset[str]) -> float:
    return len(a & b) / max(1, len(a | b))


def _clauses(text: str) -> list[str]:
    """`text` cut after every full stop, semicolon, question or exclamation mark: what one statement says."""
    return re.split(r"(?<=[.;!?])\s+", text)


def _negated(text: str) -> tuple[Without, ...]:
    """What `text` says is done without, each with the sentence that says so and those that say it plainly."""
    sentences = [(s, frozenset(_ordered_stems(s))) for s in _clauses(text)]
    out = []
    for sentence, words in sentences:
        for m in [*_NEGATED.finditer(sentence), *_NEGATED_OBJECT.finditer(sentence)]:
            pair = frozenset(_ordered_stems(m.group(1))[:2])
            if len(pair) == 2:
                plainly = tuple(w for s, w in sentences if pair <= w and not _SENTENCE_NEGATION.search(s))
                out.append(Without(pair, words, plainly))
    return tuple(out)


def _bound_name(name: str) -> bool:
    """A benchmark, model or setting a number can be given for: a name, a capitalized word, a size such as 8B, a
    hyphenated setting such as low-resource."""
    return bool(names(name) or name[:1].isupper() or re.fullmatch(r"\d+(?:\.\d+)?[BMK]", name)
                or re.fullmatch(r"[a-z]+-[a-z]+", name))


def _bindings(text: str) -> set[tuple[float, str]]:
    """(number, the benchmark or setting it is given for): "87.77% on CLEVR-Hans7", "on Visual Sudoku … 99.89%",
    "20% for 8B model", "on A and B …, 16.87 and 20.05, respectively"."""
    near = {(float(v), n.lower()) for v, n in _BINDING_AFTER.findall(text) if _bound_name(n)}
    near |= {(float(v), n.lower()) for n, v in _BINDING_BEFORE.findall(text) if _bound_name(n)}
    out: set[tuple[float, str]] = set()
    for clause in _clauses(text):
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
                out |= {(v, n.lower()) for v, n in zip(values, near_lists[0][1])}
    listed = {v for v, _ in out}  # a listed number goes with its place in the list, not with the name beside it
    return out | {(v, n) for v, n in near if v not in listed}


# "4 phases (+3 subphases)": how many of what. A sentence's number goes with the word right after it; a passage's with
# any of the three after it ("38 downstream evaluation tasks" counts tasks).
_COUNTED = re.compile(r"(?<![\w.,\-])(\d+|" + "|".join(_NUMBER_WORDS) + r")\s+((?:[a-z][a-z-]*\s+){0,2}[a-z][a-z-]*)",
                      re.I)


def _counted(text: str, reach: int) -> list[tuple[float, str]]:
    """(how many, the stem of a word counted) for each whole number followed by words, the first `reach` words, in
    the order written."""
    out: dict[tuple[float, str], None] = {}
    for m in _COUNTED.finditer(text):
        written = m.group(1).lower()
        value = float(_NUMBER_WORDS[written]) if written in _NUMBER_WORDS else float(written)
        out |= dict.fromkeys((value, w) for w in _ordered_stems(" ".join(m.group(2).split()[:reach])))
    return list(out)


# "42% time savings and 30% memory savings": each figure with the word right after it, to see two of them swapped.
_TAGGED = re.compile(r"(?<![\w.,\-])(\d+(?:\.\d+)?)\s?(?:%|×|x)?\s+([a-z][a-z-]*)", re.I)


def _tagged(text: str) -> set[tuple[float, str]]:
    return {(float(m.group(1)), after[0]) for m in _TAGGED.finditer(text) if (after := _ordered_stems(m.group(2)))}


# "0.3% accuracy loss" against "improving by 0.3%": which way a number goes, from the words beside it.
_UP = frozenset(stem(w) for w in "improve improvement increase gain gains boost raise raises higher more faster up "
                                 "better speedup grows".split())
_DOWN = frozenset(stem(w) for w in "loss losses drop decrease reduce reduction lower less fewer degrade degradation "
                                   "decline cut cuts slower down worse saves saving".split())
_NEAR_NUMBER = re.compile(r"((?:[\w-]+\s+){0,3})(\d+(?:\.\d+)?)\s?(?:%|×|x|-?fold|points?|pp)((?:\s+[\w-]+){0,3})")
# "from 54.68% to 76.73%", "a transition from positional to semantic": which comes first.
_FROM_TO = re.compile(r"\bfrom\s+(?:the\s+|a\s+|an\s+)?([\w.-]+)%?\s+to\s+(?:the\s+|a\s+|an\s+)?([\w.-]+)", re.I)
# "checking a certificate is much simpler than finding one": what is compared with what, in which order.
_THAN = re.compile(r"((?:[\w'’-]+\s+){1,4}?)(?:is\s+|are\s+|was\s+|were\s+)?(?:much\s+|far\s+|significantly\s+|"
                   r"considerably\s+)?(?:more\s+|less\s+)?([a-z]+)\s+than\s+((?:[\w'’-]+\s*){1,3})", re.I)


# "close to the expected return" against "far from the expected return", "the next state" against "the current
# state": opposite words, or the two roles of a pair, before the same thing.
_OPPOSITES = (("close", "far"), ("near", "far"), ("high", "low"), ("higher", "lower"), ("large", "small"),
              ("larger", "smaller"), ("fast", "slow"), ("faster", "slower"), ("early", "late"), ("strong", "weak"),
              ("stronger", "weaker"), ("easy", "hard"), ("easier", "harder"), ("simple", "complex"),
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
              ("server", "client"), ("servers", "clients"))
# A word made with one of these prefixes is read against the same word made with the other, wherever the passage says it:
# "underconfident" where it says "overconfident", "intra-class" where it says "inter-class".
_SWAPPED_PREFIXES = (("under", "over"), ("intra", "inter"), ("up", "down"))
_BOTH_WAYS = (*_OPPOSITES, *(pair[::-1] for pair in _OPPOSITES))
_OPPOSITE = {a: frozenset(o for w, o in _BOTH_WAYS if w == a) for a, _ in _BOTH_WAYS}  # "far": {"close", "near"}
_PRECEDING = re.compile(r"(?<![\w'’-])([a-z][a-z-]*[a-z])\s+(?=((?:[\w'’-]+\s*){1,3}))", re.I)


def _opposites(word: str) -> frozenset[str]:
    """The opposites of `word`, or of a hyphenated word's first part: "inter-frame" for "intra-frame"."""
    word = word.lower()
    if word in _OPPOSITE:
        return _OPPOSITE[word]
    head, dash, tail = word.partition("-")
    return frozenset(o + dash + tail for o in _OPPOSITE.get(head, ())) if dash and tail else frozenset()


def _opposed(text: str) -> set[tuple[str, str]]:
    """(the word, what follows it) for every word that has an opposite, what follows read as its first stem and as
    its first two: "far from the expected return" gives ("far", "expect") and ("far", "expect return")."""
    out = set()
    for m in _PRECEDING.finditer(text):
        if _opposites(m.group(1)):
            after = _ordered_stems(m.group(2))[:2]
            out |= {(m.group(1).lower(), " ".join(after[:n])) for n in (1, 2) if len(after) >= n}
    return out


def _side_by_side(text: str) -> set[str]:
    """The words said within three words of one of their opposites: "local and global", "single-turn rather than
    multi-turn"."""
    words = re.findall(r"[a-z][a-z-]*[a-z]", text.lower())
    return {w for i, w in enumerate(words) for other in words[max(0, i - 3):i + 4] if other in _opposites(w)}

def _directions(text: str) -> set[tuple[float, bool]]:
    """(number, up) for every number said to go up or down: "0.3% accuracy loss" is (0.3, False)."""
    out = set()
    for m in _NEAR_NUMBER.finditer(text):
        near = {stem(w) for w in re.findall(r"[a-z]+", (m.group(1) + " " + m.group(3)).lower())}
        up, down = bool(near & _UP), bool(near & _DOWN)
        if up != down:
            out.add((float(m.group(2)), up))
    return out


# "either a positional … or a semantic attention mechanism …, and a phase transition from the former to the latter":
# the two a passage names before it refers back to them.
_ALTERNATIVES = re.compile(r"\b(?:either|both|between)\s+(?:(?:a|an|the)\s+)?([\w-]+)[^.;]*?\b(?:or|and)\s+"
                           r"(?:(?:a|an|the)\s+)?([\w-]+)", re.I)
_FORMER_LATTER = re.compile(r"\bthe\s+(former|latter)\b", re.I)


def _resolved(text: str) -> str:
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


def _orders(text: str) -> set[tuple[str, str]]:
    """(first, second) of every "from A to B": numbers as written, words as stems."""
    out = set()
    for m in _FROM_TO.finditer(text):
        a, b = (x if re.fullmatch(r"[\d.]+", x) else stem(x.lower()) for x in (m.group(1).rstrip("."),
                                                                           m.group(2).rstrip(".")))
        if a != b:
            out.add((a, b))
    return out


def _comparisons(text: str) -> list[tuple[frozenset[str], str, frozenset[str]]]:
    """(what is said to be more so, the comparative, what it is compared with), each side as its own stems."""
    out = []
    for m in _THAN.finditer(text):
        left, right = set(_ordered_stems(m.group(1))), set(_ordered_stems(m.group(3))[:2])
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


def _directed(text: str) -> list[tuple[str, frozenset[str], frozenset[str]]]:
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
        left, right = set(_ordered_stems(first)), set(_ordered_stems(second)[:4 if kind == "step" else 3])
        if left - right and right - left:
            a, b = frozenset(left - right), frozenset(right - left)
            out.append((kind.lstrip("-"), *((b, a) if kind.startswith("-") else (a, b))))
    return out


def _degrees(text: str) -> set[tuple[bool, str]]:
    """(down, the word's stem) of every "more X" / "less X": "less suited" is (True, "suit")."""
    return {(m.group(1).lower() in _DEGREE_DOWN, s) for m in _DEGREE.finditer(text) for s in _ordered_stems(m.group(2))[:1]}


def _proportions(text: str) -> set[tuple[bool, str]]:
    """(large, a stem of what is counted) of every proportion said in words: "most of the modules" is (True,
    "modul"), "a small subset of modules" (False, "modul"); in Chinese, what is counted is translated."""
    out = {(bool(m.group("large")), s) for m in _PROPORTION.finditer(text) for s in _ordered_stems(m.group(3))[:2]}
    for m in _PROPORTION_ZH.finditer(text):  # the dictionaries load on the first Chinese proportion
        english = translate_chinese(m.group(3))
        out |= {(bool(m.group("large")), s) for s in _ordered_stems(english[0] if english else "")[:1]}
    return out


def _counts(text: str) -> set[tuple[str, str]]:
    """(none / one / some, each of the first two words counted): "a single forward pass" gives ("one", "forward") and
    ("one", "pass")."""
    out = set()
    for m in _COUNT.finditer(text):
        if _RATE.match(text, m.start(2)):
            continue  # "one point at a time" says how, not how many
        counted = _ordered_stems(m.group(2))[:2]
        out |= {(_COUNT_CLASS.get(" ".join(m.group(1).lower().split()), "some"), s) for s in counted}
    return out


def _compounds(text: str, joined: bool = False) -> set[tuple[str, str]]:
    """(how many, the stem of what) of every compound that counts: "two-player" is ("two", "player"), not where a
    negation comes just before ("rather than multi-turn"); `joined`: also those written as one word ("multimodal" is
    ("many", "modal"))."""
    found = [*_COUNTING.finditer(text), *(_COUNTING_JOINED.finditer(text) if joined else ())]
    return {(_PREFIX_CLASS[m.group(1).lower()], stem(m.group(2).lower())) for m in found
            if m.group(2).lower() not in STOPWORDS
            and not _after_negation(text, m.start())}


def _universal(text: str) -> set[str]:
    """The first two words after "every", "all" or "any", stemmed, where no negation comes just before ("not all")."""
    return {w for m in _UNIVERSAL.finditer(text) if not _after_negation(text, m.start())
            for w in _ordered_stems(m.group(1))[:2]}


def _ordinals(text: str) -> set[tuple[str, str]]:
    """(first / second / … / last, the first word after it): "the first adaptive algorithm" is ("first", "adapt")."""
    return {(m.group(1).lower(), s) for m in _ORDINAL.finditer(text) for s in _ordered_stems(m.group(2))[:1]}


def _kept(text: str, verbs: re.Pattern[str]) -> set[str]:
    """What `text` says is kept (or lost): the words after the verb, stemmed."""
    return {s for m in verbs.finditer(text) for s in _ordered_stems(m.group(1))[:3] if s not in GENERIC_WORDS}


# "dissimilar" against "similar", "non-deforming" against "deforming": a word and its negating prefix before one thing.
_NEGATING_PREFIXES = ("dis", "un", "non-", "non", "in", "im", "ir")
_PREFIXED = re.compile(r"(?<![\w-])((?:dis|un|non-?|in|im|ir)([a-z]{4,}))\s+(?=((?:[\w'’-]+\s*){1,3}))", re.I)
_WORD_BEFORE = re.compile(r"(?<![\w-])([a-z]{4,})\s+(?=((?:[\w'’-]+\s*){1,3}))", re.I)
_FOLLOWED = re.compile(r"(?<![\w'’-])([\w'’-]+)\s+(?=((?:[\w'’-]+\s*){1,3}))")


def _followed(text: str) -> set[tuple[str, str]]:
    """(a word, the stem of the first content word after it) for every word of `text`: "similar model capabilities"
    gives ("similar", "model"). A hyphenated word is one word ("non-convex")."""
    return {(m.group(1).lower(), after[0]) for m in _FOLLOWED.finditer(text)
            if (after := _ordered_stems(m.group(2))[:1])}


def _conditions(text: str, pattern: re.Pattern[str]) -> set[str]:
    """The content stems of what `text` sets (or lifts) as a condition."""
    return {w for m in pattern.finditer(text) for w in _ordered_stems(m.group(1)) if w not in GENERIC_WORDS}


def _fixed(text: str) -> set[str]:
    return {s for m in _FIXED.finditer(text) for s in _ordered_stems(m.group(1))[:2]}


def _growing(text: str) -> set[str]:
    return {s for m in _GROWING.finditer(text) for s in _ordered_stems(m.group(1) or m.group(2))[:2]}


# "Θ(K√T)" where the passage says "Θ(√(KT))", "(cd)^(L+1/2)" for "(cd)^(L-1/2)": an asymptotic bound is compared
# as written (LaTeX rendered; spaces, brackets, product signs and "^" aside), each of its terms one the passage's has.
_BOUND = re.compile(r"(?<![A-Za-z])(?:O|Θ|Ω|o|ω)\s*\(")
_MAYBE_BOUND = re.compile(r"[OÕΘΩoω]\u0303?\}*\s*\(|\\(?:Theta|Omega|omega)\b")
_PLAIN_SCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺−", "0123456789-+-")  # exponents as written inline, "^" dropped after


# "bounded L2 norm" where the passage says "bounded $L_{\infty}$ norm": which norm.
_NORM = re.compile(r"(?<![A-Za-z])(?:L|ℓ|\\ell)\s?_?\s?\{?\s?(\d|[₀-₉]|∞|\\infty|infty|inf)\s?\}?(?![A-Za-z0-9])")
_SUBSCRIPT_DIGITS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")


def _norms(text: str) -> set[str]:
    """The norms `text` names: "L2", "ℓ_2", "$L_{\infty}$" give "2", "2", "inf"."""
    return {"inf" if m.group(1).lstrip("\\") in ("∞", "infty", "inf") else m.group(1).translate(_SUBSCRIPT_DIGITS)
            for m in _NORM.finditer(text)}


# "log² T-type regret" where the passage says "log T-type": the power of a logarithm, in a bound or not.
_LOG = re.compile(r"(?<![A-Za-z])(?:log|ln)(?:\s?\^\s?\(?(\d))?(?![A-Za-z-])")  # not "log-likelihood"


def _log_powers(text: str) -> set[int]:
    """The powers of every logarithm `text` states: "log T" gives 1, "log^2 T" (or "log² T") 2."""
    return {int(m.group(1) or 1) for m in _LOG.finditer(text)}


def _bounds(text: str) -> set[tuple[str, ...]]:
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


@dataclass(frozen=True)
class Evidence:
    """What a set of passages (or the question) can vouch for, read once per reply."""

    text: str  # lower case, LaTeX made plain
    cased: str  # the same, as written
    values: frozenset[tuple[float, str | None]]
    amounts: frozenset[tuple[float, str | None]]  # the same without the labels of a list: what it counts
    stems: frozenset[str]
    comparative: bool
    superlative: bool
    on_par: bool  # it says anything is on par ("comparable", "matches", "as good as")
    scopes: frozenset[str]  # the kinds of scope it speaks of (`_SCOPES`): "all", "only", "little", …
    parity: tuple[frozenset[str], ...]  # what the passage puts on par: "matches full fine-tuning"
    negated: tuple[Without, ...]  # what it says is done without: "without external teachers"
    denied: frozenset[str]  # every word it puts after a negation ("not", "no", "without", "never")
    bindings: frozenset[tuple[float, str]]
    counted: frozenset[tuple[float, str]] = frozenset()  # "4 phases (+3 subphases)": (4, "phase"), (3, "subphas")
    degrees: frozenset[tuple[bool, str]] = frozenset()  # "less suited": (True, "suit")
    counts: frozenset[tuple[str, str]] = frozenset()  # "zero oracle calls": ("none", "oracl")
    ordinals: frozenset[tuple[str, str]] = frozenset()  # "the first adaptive algorithm": ("first", "adapt")
    compounds: frozenset[tuple[str, str]] = frozenset()  # "two-player games": ("two", "player")
    narrowed: frozenset[str] = frozenset()  # what it speaks of in part: "a broad class of weighted graphs"
    universal: frozenset[str] = frozenset()  # what it speaks of as a whole: "all the edges"
    proportions: frozenset[tuple[bool, str]] = frozenset()  # "a small subset of modules": (False, "modul")
    directions: frozenset[tuple[float, bool]] = frozenset()  # "0.3% accuracy loss": (0.3, False)
    opposed: frozenset[tuple[str, str]] = frozenset()  # "far from the expected return": ("far", "expect")
    orders: frozenset[tuple[str, str]] = frozenset()  # "from positional to semantic": ("posit", "semant")
    comparisons: tuple[tuple[frozenset[str], str, frozenset[str]], ...] = ()  # "checking is simpler than finding"
    directed: tuple[tuple[str, frozenset[str], frozenset[str]], ...] = ()  # "predict distributions from labels"
    fixed: frozenset[str] = frozenset()  # what it says is fixed: "a fixed parameter budget"
    adaptive: frozenset[str] = frozenset()  # what it says adapts or is learned: "adaptively-deformed UV coordinates"
    followed: frozenset[tuple[str, str]] = frozenset()  # each word with what follows it: ("similar", "model")
    tagged: frozenset[tuple[float, str]] = frozenset()  # each figure with the word after it: (42.0, "time")
    keeps: frozenset[str] = frozenset()  # what it says is retained or preserved
    loses: frozenset[str] = frozenset()  # what it says is erased or lost
    conditional: frozenset[str] = frozenset()  # what it says something holds only under: "as long as … same …"
    unconditional: frozenset[str] = frozenset()  # what it says something holds regardless of: "RCT data availability"
    not_assumed: tuple[frozenset[str], ...] = ()  # what it says is not assumed: "without assuming … isoperimetric …"
    assumed: tuple[frozenset[str], ...] = ()  # what it says is assumed or required (by this work or another)
    qualified: frozenset[str] = frozenset()  # words it says with "near"/"almost": "near-optimal" gives "optimal"
    ahead: frozenset[str] = frozenset()  # what it says something does better than: "prior … flow-matching models"
    behind: bool = False  # it says something does worse than something
    bounds: frozenset[tuple[str, ...]] = frozenset()  # the asymptotic bounds it states, by their terms
    log_powers: frozenset[int] = frozenset()  # the powers of the logarithms it states: "log^2 T" gives 2
    norms: frozenset[str] = frozenset()  # the norms it names: "$L_{\infty}$" gives "inf"

    @classmethod
    def of(cls, text: str) -> Evidence:
        flat = " ".join(plain(text).split())
        low = flat.lower()
        implied = ({(2.0 if m.group(1) else 3.0, None) for m in _IMPLIED.finditer(flat)}
                   | {(float(n), None) for n in _list_labels(flat)[1]})  # "(1) … (2) … (3)" lists three things
        return cls(
            text=low, cased=flat,
            values=frozenset((v, u) for _, v, u in numbers(flat)) | implied,
            amounts=frozenset((v, u) for _, v, u in numbers(flat, labels=False)) | implied,
            stems=frozenset(content_words(flat, ignore=GENERIC_WORDS)),
            comparative=bool(_PASSAGE_COMPARATIVE.search(flat)),
            superlative=bool(_PASSAGE_SUPERLATIVE.search(flat)),
            on_par=bool(_SENTENCE_PARITY.search(low) or _CLAIMED_PARITY.search(low)),
            scopes=frozenset(kind for kind, scoped, licensed in _SCOPES if licensed.search(low) or scoped.search(low)),
            parity=tuple(s for s in (frozenset(list(_ordered_stems(m.group(1)))[:3]) for m in _PARITY.finditer(flat))
                         if len(s) >= 2),
            negated=_negated(flat),
            denied=frozenset(w for m in _NEGATED.finditer(flat) for w in _ordered_stems(m.group(1))[:3])
            | {w for m in _DENIAL.finditer(flat) for w in _ordered_stems(m.group(1))}
            | {w for m in _UNABLE.finditer(flat) for w in _ordered_stems(m.group(1))}
            | {w for m in _NEEDLESS.finditer(flat) for w in _ordered_stems(m.group(1))}
            | {w for m in _UNLIKE.finditer(flat) for w in _ordered_stems(m.group(1))}
            | {w for m in _NEGATED_OBJECT.finditer(flat) for w in _ordered_stems(m.group(1))[:3]},
            bindings=frozenset(_bindings(flat)), counted=frozenset(_counted(flat, 3)),
            degrees=frozenset(_degrees(flat)),
            counts=frozenset(_counts(flat)), ordinals=frozenset(_ordinals(flat)),
            compounds=frozenset(_compounds(flat, joined=True)),
            narrowed=frozenset(w for m in _NARROWED.finditer(flat) for w in _ordered_stems(m.group(1))),
            universal=frozenset(_universal(flat)),
            proportions=frozenset(_proportions(flat)),
            directions=frozenset(_directions(flat)), opposed=frozenset(_opposed(flat)),
            orders=frozenset(_orders(_resolved(flat))), comparisons=tuple(_comparisons(flat)),
            directed=tuple(_directed(_resolved(flat))),
            fixed=frozenset(_fixed(flat)), adaptive=frozenset(_kept(flat, _ADAPTIVE)),
            followed=frozenset(_followed(low)), tagged=frozenset(_tagged(flat)),
            keeps=frozenset(_kept(flat, _KEEPS)), loses=frozenset(_kept(flat, _LOSES)),
            conditional=frozenset(_conditions(flat, _CONDITIONAL)),
            unconditional=frozenset(_conditions(flat, _UNCONDITIONAL)),
            not_assumed=tuple(frozenset(_ordered_stems(m.group(1))) for m in _NOT_ASSUMED.finditer(flat)),
            assumed=tuple(frozenset(_ordered_stems(m.group(1))) for m in _REQUIRED.finditer(flat)
                          if not _after_negation(flat, m.start())),
            qualified=frozenset(m.group(1).lower() for m in _QUALIFIED.finditer(flat)),
            ahead=frozenset(w for m in _AHEAD.finditer(flat) for w in _ordered_stems(m.group(1))) - _RIVALS,
            behind=bool(_BEHIND.search(flat) or _DISADVANTAGE.search(flat)), bounds=frozenset(_bounds(text)),
            log_powers=frozenset(_log_powers(flat)), norms=frozenset(_norms(flat)))

    def has_value(self, value: float, unit: str | None, counted: bool = False) -> bool:
        """`value` is a number it states; `counted`: as a count, not as the label of a list item ("(2)")."""
        return any(abs(v - value) <= 1e-9 * max(1.0, abs(value)) and (unit is None or u is None or u == unit)
                   for v, u in (self.amounts if counted else self.values))

    def has_name(self, name: str) -> bool:
        """`name` is in the text: as written, singular or plural, inside a longer name ("LLMs" in "MLLMs",
        "GRPO" in "GRPO-style"), or as the initials of consecutive words ("UCB": "upper confidence bound")."""
        low = name.lower()
        forms = {low, low.rstrip("s"), low + "s", low.replace("-", " "), low.replace("-", "")}
        if any(re.search(r"(?<![a-z0-9])" + re.escape(f) + r"(?![a-z0-9])", self.text) for f in forms if f):
            return True
        if "-" in low and re.search(r"(?<![a-z0-9])" + re.escape(low.replace("-", "")) + r"(?![a-z0-9])",
                                    self.text.replace("-", "")):
            return True  # "ViT-MAE-H" for "ViT-MAEH"
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


# "the two" ending a clause points back at things already named; it counts nothing new.
_POINTING = re.compile(r"\b(?:the|these|those)\s+(" + "|".join(_NUMBER_WORDS) + r")\b(?=\s*(?:[.,;:!?)]|$))", re.I)
_MENTION = re.compile(r"<[@#][!&]?\d+>")  # Discord mention syntax: its digits are an id, not a number
# Mentions and removed links claim nothing (the front ends neutralize them); they are not checked as words.
NOT_A_CLAIM = re.compile(r"<[@#][!&]?\d+>|@everyone|@here|\(link removed\)", re.I)


def fact_problem(sentence: str, support: Evidence, asked: Evidence | None = None, *, latin_terms: bool = False,
                 number_words: bool = True, denials: bool = True, scope: bool = True) -> str | None:
    """Why `support` (the cited passages) cannot vouch for the hard facts of `sentence`; None when it can.

    `latin_terms`: also every English word kept in a sentence in another script (a technical term).
    `number_words`: "five benchmarks" counts as a number (not in a hedge's "the two approaches").
    `denials`, `scope`: read what it denies and how widely it claims (not in a hedge, which says what is not said).
    """
    bare = unaccented(" ".join(_MENTION.sub(" ", CITE.sub(" ", sentence)).split())).translate(_SUPERSCRIPTS)
    pointing = {m.group(1).lower() for m in _POINTING.finditer(bare)}  # "combine the two": what was just named
    rendered = plain(bare) if "$" in bare else bare  # "$50$" is 50, as rendered
    for written, value, unit in numbers(rendered):
        spelled = not written[0].isdigit()  # "two components" counts them; "(2)" may label one
        if spelled and (not number_words or written.lower() in pointing):
            continue
        if not support.has_value(value, unit, spelled) and not (asked and asked.has_value(value, unit, spelled)):
            return f"the number {written} is not in the passage"
    if number_words:
        for written, value in _zh_counts(bare):
            if not support.has_value(value, None, True) and not (asked and asked.has_value(value, None, True)):
                return f"the number {written} is not in the passage"
    for name in names(bare):
        if not support.has_name(name) and not (asked and asked.has_name(name)):
            return f"{name} is not in the passage"
    if support.log_powers and not _log_powers(bare) <= support.log_powers:
        return "the passage states another power of the logarithm"
    if support.norms and not _norms(rendered) <= support.norms:
        return "the passage names another norm"
    if support.bounds:
        for terms in _bounds(bare):
            if not any(set(terms) <= set(known) for known in support.bounds):
                return "the passage states another bound"
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
        if (not _SENTENCE_PARITY.search(bare) and not _DISADVANTAGE.search(bare)
                and any(p <= stems for p in support.parity)):
            return "the passage says it matches, not that it is better"
    elif (_CLAIMED_PARITY.search(bare) and support.comparative and not support.parity
          and not support.on_par):
        # "matches ISR" where the passage says "higher mAP than ISR"
        return "the passage says it is better, not that it matches"
    if _SUPERLATIVE.search(bare) and not support.superlative:
        return "the passage claims no state of the art"
    if scope:
        for scope_kind, scoped, _ in _SCOPES:  # "the only effective route", "for all low-rank variants"
            for m in scoped.finditer(bare):
                if _after_negation(bare, m.start(), 24):
                    continue
                if scope_kind not in support.scopes:
                    return f"the passage does not say {m.group(0).lower()!r} (nothing of the kind: {scope_kind})"
    if (not _SENTENCE_NEGATION.search(bare) and not _REPLACES.search(bare)  # "replaces the usual X" denies X too
            and any(n.denies(stems) for n in support.negated)):
        return "the passage says it is done without that"
    if denials:  # "supports RL but not supervised fine-tuning" where the passage supports both
        unqualified = _ALONE.sub("", bare)  # "cannot by itself preserve X" denies "preserve X"
        for m in [*_NEGATED.finditer(unqualified + " "), *_DENIAL.finditer(unqualified),
                  *_NEGATED_OBJECT.finditer(unqualified)]:
            denied = set(_ordered_stems(m.group(1))[:2])
            if len(denied) == 2 and denied <= support.stems and not denied & support.denied:
                return "the passage does not say it is not so"
        for m in _DENIAL.finditer(bare):  # "works without a decoder" where the passage says "decoder-based"
            if not re.match(r"(?:without|no|zero|rather than|instead of|(?:not|never)\s+(?:by|in|on|for|with|from|of|"
                            r"a|an|the|its|their)\b)", m.group(0), re.I):
                continue  # a thing said to be absent; "could not create" denies an action, perhaps another's
            denied = set(_ordered_stems(m.group(1)))
            if len(denied) == 1 and denied <= support.stems and not denied & support.denied:
                return "the passage does not say it is not so"
    for down, word in _degrees(bare):  # "best suited" where the passage says "less suited"
        if (not down, word) in support.degrees and (down, word) not in support.degrees:
            return "the passage says it the other way round"
    for kind, word in _counts(bare):  # "a few forward passes" where the passage says "a single forward pass"
        said = {k for k, w in support.counts if w == word}
        if said and kind not in said:
            return f"the passage counts {sorted(said)[0]}, not {kind}"
    for kind, word in _compounds(bare):  # "multi-player games" where the passage says "two-player games"
        said = {k for k, w in support.compounds if w == word}
        if said and kind not in said:
            return f"the passage counts {sorted(said)[0]}, not {kind}"
    if scope:
        whole = _universal(bare)  # "every weighted graph" where the passage says "a class of weighted graphs"
        if whole & support.narrowed and not whole & support.universal:
            return "the passage says it of a class or a part of them, not all"
    for place, word in _ordinals(bare):  # "the second … algorithm" where the passage says "the first"
        said = {p for p, w in support.ordinals if w == word}
        if said and place not in said:
            return f"the passage says the {sorted(said)[0]}, not the {place}"
    for large, word in _proportions(bare):  # "most of the modules" where the passage says "a small subset"
        if (not large, word) in support.proportions and (large, word) not in support.proportions:
            return f"the passage says {'a small part' if large else 'most'}, not {'most' if large else 'a small part'}"
    opposed = _opposed(bare) if denials else set()  # a hedge names what is not said
    near = _side_by_side(bare)  # "single-turn rather than multi-turn attacks" contrasts them
    for word, thing in sorted(opposed):  # "close to the expected return" where the passage says "far from" it
        instead = sorted(o for o in _opposites(word) if (o, thing) in support.opposed and (o, thing) not in opposed
                         and word not in near)
        if instead and (word, thing) not in support.opposed:
            return f"the passage says {instead[0]}, not {word}"
    for value, up in _directions(bare):  # "improving by 0.3%" where the passage says "0.3% accuracy loss"
        if (value, not up) in support.directions and (value, up) not in support.directions:
            return f"the passage says that number goes {'down' if up else 'up'}"
    for a, b in _orders(bare):  # "from 76.73% to 54.68%" where the passage says "from 54.68% to 76.73%"
        if (b, a) in support.orders and (a, b) not in support.orders:
            return "the passage says it the other way round"
    for left, word, right in _comparisons(bare):  # "finding is simpler than checking" where it is the other way
        if any(w == word and pl & right and pr & left and not (pl & left and pr & right)
               for pl, w, pr in support.comparisons):
            return "the passage compares them the other way round"
    if denials:  # "derives ternary labels from label distributions" where it predicts distributions from labels
        for word, left, right in _directed(bare):
            same = [(pl, pr) for w, pl, pr in support.directed if w == word]
            if (any(pl & right and pr & left and not (pl & left and pr & right) for pl, pr in same)
                    and not any(pl & left and pr & right for pl, pr in same)):  # a passage may say both
                return f"the passage says it the other way round ({word})"
    lost, kept = _kept(bare, _LOSES), _kept(bare, _KEEPS)  # "erases its knowledge" where the passage says "retains"
    if (lost & support.keeps) - support.loses or (kept & support.loses) - support.keeps:
        return "the passage says the opposite"
    if _growing(bare) & support.fixed:  # "a budget that grows" where the passage says "a fixed budget"
        return "the passage says it is fixed"
    set_, lifted = _conditions(bare, _CONDITIONAL), _conditions(bare, _UNCONDITIONAL)
    if set_ & support.unconditional and not set_ & support.conditional:  # "provided that" where it says "regardless"
        return "the passage says it holds regardless of that"
    if lifted & support.conditional and not lifted & support.unconditional:  # "even when" where it says "as long as"
        return "the passage says it holds only under that condition"
    if (_fixed(bare) & support.adaptive) - support.fixed:  # "a fixed UV grid" where it says "adaptively-deformed UV"
        return "the passage says it adapts"
    if denials and (problem := _prefix_problem(bare, support) or _role_problem(bare, support)):
        return problem  # "dissimilar" where the passage says "similar", "requires X" where it says "without X", …
    bound = _bindings(bare)
    for value, name in bound:
        others = {n for v, n in support.bindings if v == value}
        if others and name not in others:
            return f"the passage gives that number for {sorted(others)[0]}"
        given = {v for v, n in support.bindings if n == name}  # "2.8% on ImageNet" where it says 5.3% there
        if given and value not in given and not others:
            return f"the passage gives {name} another number"
    if _swapped(bare, support):  # "30% time and 42% memory savings" where the passage says 42% time, 30% memory
        return "the passage gives those figures the other way round"
    for value, word in _counted(bare, 1):  # "3 phases" where the passage says "4 phases (+3 subphases)"
        counts = {v for v, w in support.counted if w == word}
        if counts and value not in counts:
            return f"the passage counts {word} differently"
    return None


def _prefix_problem(bare: str, support: Evidence) -> str | None:
    """A word said against its negating prefix before the same thing: "dissimilar model capabilities" where the
    passage says "similar model capabilities", or the other way round. A sentence naming both contrasts them."""
    contrasted = _followed(bare.lower())
    for m in _PREFIXED.finditer(bare):
        negated, root, after = m.group(1).lower(), m.group(2).lower(), _ordered_stems(m.group(3))[:1]
        if after and (root, after[0]) in support.followed - contrasted and (negated, after[0]) not in support.followed:
            return f"the passage says {root}, not {negated}"
    for m in _WORD_BEFORE.finditer(bare):
        base, after = m.group(1).lower(), _ordered_stems(m.group(2))[:1]
        if after and (base, after[0]) not in support.followed:
            for prefix in _NEGATING_PREFIXES:
                if (prefix + base, after[0]) in support.followed - contrasted:
                    return f"the passage says {prefix + base}, not {base}"
    return None


def _swapped(bare: str, support: Evidence) -> bool:
    """Two figures of the sentence each given for what the passage gives the other for."""
    tagged = sorted(_tagged(bare))
    return any(first != second and first_word != second_word
               and {(first, second_word), (second, first_word)} <= support.tagged
               and (first, first_word) not in support.tagged
               for first, first_word in tagged for second, second_word in tagged)


def _role_problem(bare: str, support: Evidence) -> str | None:
    """Readings of what a sentence says a thing needs, how nearly it holds, what it trails and which of two prefixed
    words it is, against the passage: the first problem one finds."""
    low = bare.lower()
    return (_need_problem(bare, support) or _qualifier_problem(low, support) or _behind_problem(bare, support)
            or _swapped_prefix_problem(low, support) or _denied_zh_problem(bare, support))


def _need_problem(bare: str, support: Evidence) -> str | None:
    """"still requires an isoperimetric inequality" where the passage says "without assuming" it."""
    for m in _REQUIRED.finditer(bare):
        if (_after_negation(bare, m.start())
                or re.match(r"(?:no|not|neither|none)\b", m.group(1), re.I)):  # "needs no explicit budget"
            continue
        needed = set(_ordered_stems(m.group(1)))
        if (any(len(needed & said) >= 2 for said in support.not_assumed)
                and not any(len(needed & said) >= 2 for said in support.assumed)):  # "prior work requires X"
            return "the passage says it does not assume that"
    return None


def _qualifier_problem(low: str, support: Evidence) -> str | None:
    """"near-optimal" where the passage says "optimal" (not "up to log factors"), and the other way round."""
    for m in _QUALIFIED.finditer(low):
        word = m.group(1)
        if (word not in support.qualified and re.search(r"(?<![\w-])" + word + r"\b", support.text)
                and not _UP_TO_FACTORS.search(support.text)):
            return f"the passage says {word}, not {m.group(0)}"
    said = {m.group(1) for m in _QUALIFIED.finditer(low)}
    for word in support.qualified - said:
        if (re.search(r"(?<![\w-])" + word + r"\b", low)
                and not re.search(r"(?<![\w-])(?<!near )(?<!nearly )(?<!almost )" + word + r"\b", support.text)):
            return f"the passage says near-{word}, not {word}"
    return None


def _behind_problem(bare: str, support: Evidence) -> str | None:
    """"falls short of flow-matching models" where the passage says it improves over them."""
    if not support.behind:
        for m in _BEHIND.finditer(bare):
            if set(_ordered_stems(m.group(1))) - _RIVALS & support.ahead:
                return "the passage says it does better than that"
    return None


def _swapped_prefix_problem(low: str, support: Evidence) -> str | None:
    """"underconfident" where the passage says "overconfident" (and never "underconfident"); a sentence naming
    both contrasts them."""
    words = set(re.findall(r"[a-z][a-z-]*[a-z]", low))
    for word in words:
        for a, b in (*_SWAPPED_PREFIXES, *(pair[::-1] for pair in _SWAPPED_PREFIXES)):
            rest = word[len(a):].lstrip("-")
            if word.startswith(a) and len(rest) >= 4:
                other = [o for o in (b + rest, f"{b}-{rest}") if re.search(r"(?<![\w-])" + o + r"\b", support.text)]
                if (other and not set(other) & words
                        and not re.search(r"(?<![\w-])" + a + "-?" + rest + r"\b", support.text)):
                    return f"the passage says {other[0]}, not {word}"
    return None


def _denied_zh_problem(bare: str, support: Evidence) -> str | None:
    """"无需微调" (needs no fine-tuning) where the passage says "fine-tuning method" and never denies it."""
    for m in _DENIED_ZH.finditer(bare):
        english = translate_chinese(m.group(1))
        denied = set(_ordered_stems(english[0])) if english else set()
        if denied and denied <= support.stems and not denied & support.denied:
            return "the passage does not say it is not so"
    return None
