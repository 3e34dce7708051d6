"""How strongly and under what a claim is made: comparisons and states of the art, parity, words of scope ("all",
"the only", "fully", "a few"), negations and what is done without, conditions set or lifted, what is assumed or
required, "near"-qualified words, what something trails or beats, and "all" of what a passage says in part."""

from __future__ import annotations

import re
from dataclasses import dataclass

from paperbot.text import GENERIC_WORDS, HAN, stem
from retrieval.grounding.facts.words import SENTENCE_NEGATION, after_negation, clauses, ordered_stems


COMPARATIVE = re.compile(r"\b(?:outperform\w*|surpass\w*|beat(?:s|ing)?|better than|superior|exceed\w*|"
                         r"(?:more|less) [\w-]+ than|(?:higher|lower|faster|slower|larger|smaller|stronger)"
                         r"(?:\s+[\w-]+){0,2}\s+than)\b"
                         r"|超过(?!\s*\d)|优于|胜过|超越|好于|更好|高于|强于|快于", re.I)  # "超过 95%" is "over 95%"
SUPERLATIVE = re.compile(r"\b(?:state[- ]of[- ]the[- ]art|sota|best-performing)\b|最先进|最好|最佳|领先", re.I)
# Words that widen or narrow a claim's scope; a sentence may use one only where its passage says something of the same
# kind (any word of either pattern): "across all types of agents" where the passage says "among agents trained in a
# world model", "in only a minority of cases" where it says "in most cases". The question does not license them, and
# after a negation they are emphasis ("without any fine-tuning", "not all"), read with the negation.
SCOPES = (
    # not "winner-take-all", "all-atom" (a name's part) nor "… at all." (emphasis; "at all levels" is one)
    ("all", re.compile(r"\b(?:(?<!-)all(?!-)(?!(?<=\bat all)\s*(?:[.,;:!?)\[]|$))"
                       r"(?!\s+(?:of\s+)?(?:the\s+)?(?:two|three|four|five|six|seven|eight|nine|ten|\d+)\b)|"
                       r"every|any|always|never|regardless|irrespective|universally|invariably|whatever)\b"
                       r"|所有|一切|总是|总能|始终|永远|无论|从不|任何", re.I),
     re.compile(r"\b(?:all|every|each|any|always|never|arbitrar\w*|regardless|irrespective|universal\w*|whatever|"
                r"invariabl\w*|entire|whole|guarantee\w*|provabl\w*|agnostic)\b", re.I)),
    ("guarantee", re.compile(r"\b(?:guarantee[sd]?|provabl[ey]|certifiabl[ey])\b|保证|确保", re.I),
     re.compile(r"\b(?:guarantee\w*|provabl\w*|prov(?:e|es|ed|en|ing)|proofs?|theorems?|certif\w*|bound\w*|ensur\w*|"
                r"assur\w*)\b", re.I)),
    ("only", re.compile(r"\b(?:the only|solely|exclusively|merely|only (?:for|when|if|in|on|under|with))\b|唯一", re.I),
     re.compile(r"(?<!not )\b(?:only|sole|solely|exclusive\w*|merely|alone|unique\w*)\b", re.I)),
    # "exactly identifies" where the passage says "approximately identify"; not "addresses exactly this (question)"
    ("entirely", re.compile(r"\b(?:fully|completely|entirely|perfectly|totally|wholly|indistinguishable|reliably|"
                            r"consistently|exact(?:ly)?(?!\s+(?:this|that|these|those|such|what|how|which|where|"
                            r"when|why|the\s+(?:question|problem|setting|idea|topic|kind|case|task))))\b|完全|彻底",
                            re.I),
     re.compile(r"\b(?:full\w*|complete\w*|entire\w*|perfect\w*|total\w*|whole\w*|exact\w*|indistinguishable|"
                r"reliabl\w*|consistent\w*|always)\b", re.I)),
    ("strength", re.compile(r"\b(?:excellent\w*|dramatic(?:al)?(?:ly)?|vastly|substantial(?:ly)?|"
                            r"significant(?:ly)?|greatly|drastic(?:al)?(?:ly)?|massive(?:ly)?|huge|remarkabl[ey]|"
                            r"tremendous(?:ly)?|far (?:better|more|less|fewer|faster|higher|lower))\b|显著|大幅|(?<!极小)极大",
                            re.I),
     re.compile(r"\b(?:significant\w*|substantial\w*|dramatic\w*|vast\w*|great\w*|drastic\w*|massive\w*|large\w*|"
                r"considerabl\w*|remarkabl\w*|excellent|strong\w*|notabl\w*|marked\w*|huge|superior|impressive|"
                r"orders? of magnitude)\b|\d(?:\.\d+)?\s?(?:x|×|-?fold|%)", re.I)),
    ("little", re.compile(r"\b(?:few|minority|handful|single|slightly|little|limited|narrow|rarely|seldom|"
                          r"marginal(?:ly)?|modest(?:ly)?|small (?:set|number|subset|fraction|part|share)|"
                          r"a (?:small )?portion of|partially|partly|in part|one particular)\b|少数|少量|极少|略微|稍微|稍有|轻微|小幅",
                          re.I),
     re.compile(r"\b(?:few|minority|handful|single|one|slight\w*|little|narrow\w*|rare\w*|seldom|marginal\w*|modest\w*|"
                r"limit\w*|small\w*|minor|minimal\w*|tiny|subset|fraction|(?<!not )only)\b", re.I)),  # not "not only"
    # a claim to have come first ("the first method to bring Mamba into SCI"), where the passage claims no priority;
    # not a place in a sequence ("the first step", "first, it …": amounts.ordinals reads those)
    ("first", re.compile(r"\b(?:the first (?:\w+[\s-]+){0,2}?(?:to|method|approach|model|framework|work|effort|paper|"
                         r"study|attempt|algorithm|dataset|benchmark|system|technique|family|class|analysis|"
                         r"architecture|formulation|solver|tool|library)s?\b(?!\s+(?:stage|step|phase))|"
                         r"the first (?:[\w-]+\s+){1,6}?ever|first-ever|"
                         r"for the first time|pioneer(?:s|ed|ing)?)\b|首次|首个|率先|开创", re.I),
     re.compile(r"\b(?:first\w*|pioneer\w*|to (?:the best of )?our knowledge)\b", re.I)),
    # "the most important threat model" where the passage says "an important threat model"; not what is common or
    # recent ("the most widely used benchmark")
    ("most", re.compile(r"\bthe most (?!(?:of|common|commonly|widely|recent|recently|frequent|frequently|popular|"
                        r"used|similar|likely|relevant)\b)[a-z]+|最重要|最有效|最强", re.I),
     re.compile(r"\b(?:most|best|[a-z]{3,}est|top|leading|state[- ]of[- ]the[- ]art|sota|unprecedented|"
                r"first\w*|unique\w*|rank\w*|prioriti\w*)\b", re.I)),  # "the most sensitive" of modules ranked
)
PASSAGE_COMPARATIVE = re.compile(
    r"\b(?:outperform\w*|surpass\w*|beat(?:s|ing)?|better than|(?:competitive|comparable|similar) or better|"
    r"better performance|superior|exceed\w*|"
    r"[a-z]+er(?:\s+[\w-]+){0,2}\s+than|[a-z]+er(?:\s+[\w-]+){0,3}\s+(?:compared|relative)\s+(?:to|with)|"
    r"fewer than|less than|gains? over|advantage over|improv\w* (?:up)?on|improv\w* over|state[- ]of[- ]the[- ]art|"
    r"sota|(?:more|less|fewer)(?:\s+[\w-]+){1,2}\s+than)\b", re.I)
PASSAGE_SUPERLATIVE = re.compile(r"\b(?:state[- ]of[- ]the[- ]art|sota|best|new record)\b", re.I)
# not "matching" naming a kind of model or loss ("a flow matching model", "the score matching objective")
_PARITY = re.compile(r"\b(?:closely matches|matches|match|matching(?!\s+(?:models?|loss(?:es)?|objectives?|frameworks?|"
                     r"methods?|algorithms?|problems?|tasks?|networks?|based|polic(?:y|ies)|paradigms?)\b)|comparable|"
                     r"on par with|competitive with|similar to)\s+((?:[\w-]+[\s.,;:]*){0,4})", re.I)
SENTENCE_PARITY = re.compile(r"\b(?<!-)(?:match\w*|comparable|on par|competitive|similar|close to|closely)\b|"
                             r"相当|接近|持平|媲美", re.I)  # not "flow-matching"
# A sentence saying one thing is as good as another ("matches the previous state of the art"; not "the closest match").
CLAIMED_PARITY = re.compile(r"\b(?<!-)(?:match(?:es|ed|ing)?\s+"
                            r"(?:the|that|those|its|their|existing|prior|previous|state)|"
                            r"on par|comparable (?:to|with)|as (?:good|accurate|effective) as|competitive with|"
                            r"performs? similarly)\b|(?:大致|基本|大体)(?:相当|持平)|不相上下|持平", re.I)
# A comparison that says something is worse ("slower query times than"), which a parity elsewhere does not contradict.
DISADVANTAGE = re.compile(r"\b(?:slower|worse|weaker|less accurate|underperform\w*)\b", re.I)
# A negation word (a name in capitals, such as the method ZERO, is not one; nor is zero as a value: "at zero
# temperature", "set to zero", "zero-mean noise").
_NEGATION = (r"\b(?!(?-i:[A-Z]{2,}\b))(?:(?<!with and )(?<!with or )without|no|"
             r"(?<!at )(?<!to )(?<!near )zero(?!\s+(?:temperature|mean|variance|noise|loss|error|bias)\b)|"
             r"not(?!\s+(?:only|just|merely)\b)|"
             r"never|cannot|rather than|instead of)")
# "not necessarily optimal" denies "optimal": the adverb only softens the denial.
_SOFTLY = r"(?:(?:necessarily|always|fully|entirely|exactly)\s+)?"
NEGATED = re.compile(_NEGATION + r"\s+" + _SOFTLY + r"((?:[\w'’-]+[\s.,;:]*){1,3})", re.I)
# "without requiring the trajectories to be plausible", "does not require an explicit budget": what is denied is the
# thing after the verb of need or use.
NEGATED_OBJECT = re.compile(_NEGATION + r"\s+(?:requir\w*|need\w*|using|uses?|rel(?:y|ies|ying) on|having access to|"
                            r"access to|the need for)\s+(?:any\s+|an?\s+|the\s+)?((?:[\w'’-]+[\s.,;:]*){1,3})", re.I)
# "provided that some RCT data is available" against "regardless of RCT data availability": a condition set or lifted.
CONDITIONAL = re.compile(r"\b(?:provided that|only if|as long as|only when|if and only if|on condition that)\s+"
                         r"((?:[\w'’-]+\s*){1,6})", re.I)
UNCONDITIONAL = re.compile(r"\b(?:regardless of|irrespective of|even (?:when|if)|whether or not)\s+"
                           r"((?:[\w'’-]+\s*){1,6})", re.I)
# What a sentence denies, read to the end of its clause: "rather than in a latent space" denies a latent space.
# "Unlike existing models that rely on CNN backbones": what a passage sets its own work apart from.
_UNLIKE = re.compile(r"\b(?:unlike|in contrast to|as opposed to)\s+((?:[\w'’()-]+[\s,]*){1,14})", re.I)
DENIAL = re.compile(_NEGATION + r"\s+((?:[\w'’-]+\s*){1,5})", re.I)
# "previous methods are unable to create": what a passage says something cannot do (a sentence may deny it too).
ALONE = re.compile(r"\s+(?:by\s+(?:itself|themselves)|on\s+(?:its|their)\s+own|in\s+(?:itself|themselves)|alone)\b",
                   re.I)
_UNABLE = re.compile(r"\b(?:unable to|fail(?:s|ed)? to|incapable of)\s+((?:[\w'’-]+\s*){1,5})", re.I)
# "eliminating the need for Markov chain Monte Carlo": what a passage says is not needed (a sentence may deny it).
_NEEDLESS = re.compile(r"\b(?:(?:eliminat|remov|obviat|avoid|bypass|sidestep)\w*\s+the\s+need\s+(?:for|of)|obviat\w*|"
                       r"(?:no|without\s+the|without\s+any)\s+need\s+(?:for|of|to)|dispens\w*\s+with)\s+"
                       r"((?:[\w'’-]+\s*){1,5})", re.I)
REPLACES = re.compile(r"\breplac(?:e|es|ed|ing)\b", re.I)
# "does not need fine-tuning" in Chinese: what is denied is the first word after the negation, translated.
DENIED_ZH = re.compile(f"(?:无需|无须|不需要|不需|不依赖|不使用|不用|没有使用)([{HAN}]{{2,4}})")
# "still requires the target to satisfy an isoperimetric inequality" where the passage says "without assuming the
# target … or satisfying any isoperimetric inequality": what a sentence says is needed, what a passage says is not.
_NEED = r"requir(?:e|es|ing)|assum(?:e|es|ing)|need(?:s|ing)?|rel(?:y|ies|ying) on"  # verbs of need, as denied
REQUIRED = re.compile(rf"\b(?:{_NEED}|required|assumed|needed|depend(?:s|ing)? on)\s+((?:[\w'’-]+\s*){{1,6}})", re.I)
_NOT_ASSUMED = re.compile(rf"\b(?:without|not|no|never)\s+(?:\w+\s+)?(?:{_NEED})\s+((?:[\w'’-]+[\s,]*){{1,12}})", re.I)
# "near-optimal" where the passage says "optimal", and "optimal" where it says "near-optimal".
QUALIFIED = re.compile(r"(?<![\w-])(?:near|nearly|almost|approximately|quasi)[- ]([a-z]{5,})\b", re.I)
UP_TO_FACTORS = re.compile(r"\bup to (?:a |an )?(?:log\w*|constant|poly\w*|lower-order)", re.I)
# "falls short of earlier flow-matching models" where the passage says it "improves over prior diffusion and
# flow-matching models": what a sentence puts ahead, against what the passage says it does better than.
BEHIND = re.compile(r"\b(?:(?:fall(?:s|ing)?|fell) short of|lag(?:s|ging)? behind|trail(?:s|ing)?|inferior to|"
                    r"worse than|underperform\w*)\s+((?:[\w'’-]+\s*){1,4})", re.I)
_AHEAD = re.compile(r"\b(?:outperform\w*|surpass\w*|improv\w* (?:up)?on|improv\w* over|gains? over|beat(?:s|ing)?|"
                    r"better than|superior to|exceed\w*)\s+((?:[\w'’-]+\s*){1,5})", re.I)
RIVALS = frozenset(stem(w) for w in "prior previous existing earlier recent current other state art method methods "
                                      "model models baseline baselines approach approaches work works".split())


# "in every weighted graph" where the passage proves it for "a broad class of weighted random graphs", "every selected
# unit" where it guarantees "a prescribed fraction of selected units": all of a thing the passage speaks of in part.
_NARROWED = re.compile(r"\b(?:a|an|one)\s+(?:(?:broad|wide|large|small|certain|specific|particular|prescribed|given|"
                       r"restricted|special|general|rich)\s+)?"
                       r"(?:class|family|fraction|subset|portion|part|kind|type)\s+"
                       r"of\s+((?:[\w'’-]+\s*){1,3})", re.I)
_UNIVERSAL = re.compile(r"\b(?:every|all|any)\s+(?:of\s+)?(?:the\s+)?((?:[\w'’-]+\s*){1,2})", re.I)


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


def negated(text: str) -> tuple[Without, ...]:
    """What `text` says is done without, each with the sentence that says so and those that say it plainly."""
    sentences = [(s, frozenset(ordered_stems(s))) for s in clauses(text)]
    out = []
    for sentence, words in sentences:
        for m in [*NEGATED.finditer(sentence), *NEGATED_OBJECT.finditer(sentence)]:
            pair = frozenset(ordered_stems(m.group(1))[:2])
            if len(pair) == 2:
                plainly = tuple(w for s, w in sentences if pair <= w and not SENTENCE_NEGATION.search(s))
                out.append(Without(pair, words, plainly))
    return tuple(out)


def universal(text: str) -> set[str]:
    """The first two words after "every", "all" or "any", stemmed, where no negation comes just before ("not all")."""
    return {w for m in _UNIVERSAL.finditer(text) if not after_negation(text, m.start())
            for w in ordered_stems(m.group(1))[:2]}


def conditions(text: str, pattern: re.Pattern[str]) -> set[str]:
    """The content stems of what `text` sets (or lifts) as a condition."""
    return {w for m in pattern.finditer(text) for w in ordered_stems(m.group(1)) if w not in GENERIC_WORDS}


# -- what a passage says, read once (check.Evidence) --------------------------------------------------


def denied(text: str) -> frozenset[str]:
    """Every word `text` puts after a negation ("not", "no", "without", "never", "unlike", "unable to", "eliminating
    the need for"), stemmed."""
    out = {w for m in NEGATED.finditer(text) for w in ordered_stems(m.group(1))[:3]}
    out |= {w for m in NEGATED_OBJECT.finditer(text) for w in ordered_stems(m.group(1))[:3]}
    for pattern in (DENIAL, _UNABLE, _NEEDLESS, _UNLIKE):
        out |= {w for m in pattern.finditer(text) for w in ordered_stems(m.group(1))}
    return frozenset(out)


def scopes(low: str) -> frozenset[str]:
    """The kinds of scope (`SCOPES`) lower-cased `low` speaks of."""
    return frozenset(kind for kind, scoped, licensed in SCOPES if licensed.search(low) or scoped.search(low))


def parity(text: str) -> tuple[frozenset[str], ...]:
    """What `text` puts on par with something, each as its first three stems: "matches full fine-tuning"."""
    found = (frozenset(ordered_stems(m.group(1))[:3]) for m in _PARITY.finditer(text))
    return tuple(s for s in found if len(s) >= 2)


def on_par(low: str) -> bool:
    """Whether lower-cased `low` says anything is on par ("comparable", "matches", "as good as")."""
    return bool(SENTENCE_PARITY.search(low) or CLAIMED_PARITY.search(low))


def needs(text: str) -> tuple[tuple[frozenset[str], ...], tuple[frozenset[str], ...]]:
    """(what `text` says is not assumed, what it says is assumed or required), each as its stems."""
    not_assumed = tuple(frozenset(ordered_stems(m.group(1))) for m in _NOT_ASSUMED.finditer(text))
    assumed = tuple(frozenset(ordered_stems(m.group(1))) for m in REQUIRED.finditer(text)
                    if not after_negation(text, m.start()))
    return not_assumed, assumed


def narrowed(text: str) -> frozenset[str]:
    """What `text` speaks of in part: "a broad class of weighted graphs" gives the stems of "weighted graphs"."""
    return frozenset(w for m in _NARROWED.finditer(text) for w in ordered_stems(m.group(1)))


def qualified(text: str) -> frozenset[str]:
    """The words `text` says with "near", "almost" or "approximately": "near-optimal" gives "optimal"."""
    return frozenset(m.group(1).lower() for m in QUALIFIED.finditer(text))


def ahead(text: str) -> frozenset[str]:
    """What `text` says something does better than, rivals' generic words aside: "prior … flow-matching models"."""
    return frozenset(w for m in _AHEAD.finditer(text) for w in ordered_stems(m.group(1))) - RIVALS


def behind(text: str) -> bool:
    """Whether `text` says something does worse than something."""
    return bool(BEHIND.search(text) or DISADVANTAGE.search(text))
