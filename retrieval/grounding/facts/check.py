"""What passages can vouch for (`Evidence`, read once per reply) and why they cannot vouch for a sentence's hard
facts (`fact_problem`), from the readers of the package's other modules."""

from __future__ import annotations

import re
from dataclasses import dataclass

from paperbot.text import GENERIC_WORDS, content_words
from retrieval.grounding.debris import CITE
from retrieval.grounding.facts import amounts, claims, relations
from retrieval.grounding.facts.words import (SENTENCE_NEGATION, SUPERSCRIPTS, TOKEN, after_negation, names, uncontracted,
                                             ordered_stems, plain, unaccented)
from retrieval.translate import translate_chinese


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
    scopes: frozenset[str]  # the kinds of scope it speaks of (`claims.SCOPES`): "all", "only", "little", …
    parity: tuple[frozenset[str], ...]  # what the passage puts on par: "matches full fine-tuning"
    negated: tuple[claims.Without, ...]  # what it says is done without: "without external teachers"
    denied: frozenset[str]  # every word it puts after a negation ("not", "no", "without", "never")
    bindings: frozenset[tuple[float, str]]
    counted: frozenset[tuple[float, str]] = frozenset()  # "4 phases (+3 subphases)": (4, "phase"), (3, "subphas")
    degrees: frozenset[tuple[bool, str]] = frozenset()  # "less suited": (True, "suit")
    counts: frozenset[tuple[str, str]] = frozenset()  # "zero oracle calls": ("none", "oracl")
    ordinals: frozenset[tuple[str, str]] = frozenset()  # "the first adaptive algorithm": ("first", "adapt")
    labelled: frozenset[tuple[str, float]] = frozenset()  # "holds Rank 1": ("rank", 1.0)
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
    durations: frozenset[str] = frozenset()  # the units of time it gives an amount in: "in a few minutes" gives "minute"
    norms: frozenset[str] = frozenset()  # the norms it names: "$L_{\infty}$" gives "inf"

    @classmethod
    def of(cls, text: str) -> Evidence:
        flat = " ".join(plain(text).split())
        low = flat.lower()
        implied = amounts.implied(flat)
        not_assumed, assumed = claims.needs(flat)
        return cls(
            text=low, cased=flat,
            values=frozenset((v, u) for _, v, u in amounts.numbers(flat)) | implied,
            amounts=frozenset((v, u) for _, v, u in amounts.numbers(flat, labels=False)) | implied,
            stems=frozenset(content_words(flat, ignore=GENERIC_WORDS)),
            comparative=bool(claims.PASSAGE_COMPARATIVE.search(flat)),
            superlative=bool(claims.PASSAGE_SUPERLATIVE.search(flat)),
            on_par=claims.on_par(low), scopes=claims.scopes(low), parity=claims.parity(flat),
            negated=claims.negated(flat), denied=claims.denied(flat),
            bindings=frozenset(amounts.bindings(flat)), counted=frozenset(amounts.counted(flat, 3)),
            degrees=frozenset(relations.degrees(flat)),
            counts=frozenset(amounts.counts(flat)), ordinals=frozenset(amounts.ordinals(flat)),
            labelled=frozenset(amounts.labelled(flat)),
            compounds=frozenset(amounts.compounds(flat)),
            narrowed=claims.narrowed(flat), universal=frozenset(claims.universal(flat)),
            proportions=frozenset(amounts.proportions(flat)),
            directions=frozenset(amounts.directions(flat)), opposed=frozenset(relations.opposed(flat)),
            orders=frozenset(relations.orders(relations.resolved(flat))),
            comparisons=tuple(relations.comparisons(flat)),
            directed=tuple(relations.directed(relations.resolved(flat))),
            fixed=frozenset(relations.fixed(flat)), adaptive=frozenset(relations.kept(flat, relations.ADAPTIVE)),
            followed=frozenset(relations.followed(low)), tagged=frozenset(amounts.tagged(flat)),
            keeps=frozenset(relations.kept(flat, relations.KEEPS)),
            loses=frozenset(relations.kept(flat, relations.LOSES)),
            conditional=frozenset(claims.conditions(flat, claims.CONDITIONAL)),
            unconditional=frozenset(claims.conditions(flat, claims.UNCONDITIONAL)),
            not_assumed=not_assumed, assumed=assumed, qualified=claims.qualified(flat),
            ahead=claims.ahead(flat), behind=claims.behind(flat), bounds=frozenset(amounts.bounds(text)),
            log_powers=frozenset(amounts.log_powers(flat)), norms=frozenset(amounts.norms(flat)),
            durations=frozenset(amounts.durations(flat)))

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


# "the two" ending a clause points back at things already named; it counts nothing new.
_POINTING = re.compile(r"\b(?:the|these|those)\s+(" + "|".join(amounts.NUMBER_WORDS)
                       + r")\b(?=\s*(?:[.,;:!?)]|$))", re.I)
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
    bare = uncontracted(unaccented(" ".join(_MENTION.sub(" ", CITE.sub(" ", sentence)).split()))).translate(SUPERSCRIPTS)
    pointing = {m.group(1).lower() for m in _POINTING.finditer(bare)}  # "combine the two": what was just named
    rendered = plain(bare) if "$" in bare else bare  # "$50$" is 50, as rendered
    for written, value, unit in amounts.numbers(rendered):
        spelled = not written[0].isdigit()  # "two components" counts them; "(2)" may label one
        if spelled and (not number_words or written.lower() in pointing):
            continue
        if not support.has_value(value, unit, spelled) and not (asked and asked.has_value(value, unit, spelled)):
            return f"the number {written} is not in the passage"
    if number_words:
        for written, value in amounts.zh_counts(bare):
            if not support.has_value(value, None, True) and not (asked and asked.has_value(value, None, True)):
                return f"the number {written} is not in the passage"
    for name in names(bare):
        if not support.has_name(name) and not (asked and asked.has_name(name)):
            return f"{name} is not in the passage"
    if support.durations and not amounts.durations(bare) <= support.durations:  # "seconds" where it says "minutes"
        return "the passage gives another unit of time"
    if support.log_powers and not amounts.log_powers(bare) <= support.log_powers:
        return "the passage states another power of the logarithm"
    if support.norms and not amounts.norms(rendered) <= support.norms:
        return "the passage names another norm"
    if support.bounds:
        for terms in amounts.bounds(bare):
            if not any(set(terms) <= set(known) for known in support.bounds):
                return "the passage states another bound"
    if latin_terms:
        rest = " ".join(t for t in TOKEN.findall(bare) if not names(t) and not re.search(r"\d", t))
        words = content_words(" ".join(re.findall(r"[A-Za-z][A-Za-z-]+", rest)), ignore=GENERIC_WORDS, latin_only=True)
        missing = words - support.stems - (asked.stems if asked else frozenset())
        if missing:
            return f"the term {sorted(missing)[0]!r} is not in the passage"
    stems = set(ordered_stems(bare)) | content_words(bare, ignore=GENERIC_WORDS, latin_only=True)
    if claims.COMPARATIVE.search(bare):
        if not support.comparative:
            return "the passage makes no such comparison"
        if (not claims.SENTENCE_PARITY.search(bare) and not claims.DISADVANTAGE.search(bare)
                and any(p <= stems for p in support.parity)):
            return "the passage says it matches, not that it is better"
    elif (claims.CLAIMED_PARITY.search(bare) and support.comparative and not support.parity
          and not support.on_par):
        # "matches ISR" where the passage says "higher mAP than ISR"
        return "the passage says it is better, not that it matches"
    if claims.SUPERLATIVE.search(bare) and not support.superlative:
        return "the passage claims no state of the art"
    if scope:
        for scope_kind, scoped, _ in claims.SCOPES:  # "the only effective route", "for all low-rank variants"
            for m in scoped.finditer(bare):
                if after_negation(bare, m.start(), 24):
                    continue
                if scope_kind not in support.scopes:
                    return f"the passage does not say {m.group(0).lower()!r} (nothing of the kind: {scope_kind})"
    if (not SENTENCE_NEGATION.search(bare) and not claims.REPLACES.search(bare)  # "replaces the usual X" denies X too
            and any(n.denies(stems) for n in support.negated)):
        return "the passage says it is done without that"
    if denials:  # "supports RL but not supervised fine-tuning" where the passage supports both
        unqualified = claims.ALONE.sub("", bare)  # "cannot by itself preserve X" denies "preserve X"
        for m in [*claims.NEGATED.finditer(unqualified + " "), *claims.DENIAL.finditer(unqualified),
                  *claims.NEGATED_OBJECT.finditer(unqualified)]:
            denied = set(ordered_stems(m.group(1))[:2])
            if len(denied) == 2 and denied <= support.stems and not denied & support.denied:
                return "the passage does not say it is not so"
        for m in claims.DENIAL.finditer(bare):  # "works without a decoder" where the passage says "decoder-based"
            if not re.match(r"(?:without|no|zero|rather than|instead of|(?:not|never)\s+(?:by|in|on|for|with|from|of|"
                            r"a|an|the|its|their)\b)", m.group(0), re.I):
                continue  # a thing said to be absent; "could not create" denies an action, perhaps another's
            denied = set(ordered_stems(m.group(1)))
            if len(denied) == 1 and denied <= support.stems and not denied & support.denied:
                return "the passage does not say it is not so"
    for down, word in relations.degrees(bare):  # "best suited" where the passage says "less suited"
        if (not down, word) in support.degrees and (down, word) not in support.degrees:
            return "the passage says it the other way round"
    for kind, word in amounts.counts(bare):  # "a few forward passes" where the passage says "a single forward pass"
        said = {k for k, w in support.counts if w == word}
        if said and kind not in said:
            return f"the passage counts {sorted(said)[0]}, not {kind}"
    # "multi-player games" where the passage says "two-player games" (a hedge may name what the passage does not)
    for kind, word in amounts.compounds(bare) if denials else ():
        said = {k for k, w in support.compounds if w == word}
        if said and kind not in said:
            return f"the passage counts {sorted(said)[0]}, not {kind}"
    if scope:
        whole = claims.universal(bare)  # "every weighted graph" where the passage says "a class of weighted graphs"
        if whole & support.narrowed and not whole & support.universal:
            return "the passage says it of a class or a part of them, not all"
    for word, value in amounts.labelled(bare):  # "held Rank 2" where the passage says "Rank 1"
        numbered = {v for w, v in support.labelled if w == word}
        if numbered and value not in numbered and not (asked and (word, value) in asked.labelled):
            return f"the passage says {word.capitalize()} {sorted(numbered)[0]:g}, not {value:g}"
    for place, word in amounts.ordinals(bare):  # "the second … algorithm" where the passage says "the first"
        said = {p for p, w in support.ordinals if w == word}
        if said and place not in said:
            return f"the passage says the {sorted(said)[0]}, not the {place}"
    for large, word in amounts.proportions(bare):  # "most of the modules" where the passage says "a small subset"
        if (not large, word) in support.proportions and (large, word) not in support.proportions:
            return f"the passage says {'a small part' if large else 'most'}, not {'most' if large else 'a small part'}"
    opposed = relations.opposed(bare) if denials else set()  # a hedge names what is not said
    near = relations.side_by_side(bare)  # "single-turn rather than multi-turn attacks" contrasts them
    for word, thing in sorted(opposed):  # "close to the expected return" where the passage says "far from" it
        instead = sorted(o for o in relations.opposites(word)
                         if (o, thing) in support.opposed and (o, thing) not in opposed and word not in near)
        if instead and (word, thing) not in support.opposed:
            return f"the passage says {instead[0]}, not {word}"
    for value, up in amounts.directions(bare):  # "improving by 0.3%" where the passage says "0.3% accuracy loss"
        if (value, not up) in support.directions and (value, up) not in support.directions:
            return f"the passage says that number goes {'down' if up else 'up'}"
    for a, b in relations.orders(bare):  # "from 76.73% to 54.68%" where the passage says "from 54.68% to 76.73%"
        if (b, a) in support.orders and (a, b) not in support.orders:
            return "the passage says it the other way round"
    for left, word, right in relations.comparisons(bare):  # "finding is simpler than checking", the other way
        if any(w == word and pl & right and pr & left and not (pl & left and pr & right)
               for pl, w, pr in support.comparisons):
            return "the passage compares them the other way round"
    if denials:  # "derives ternary labels from label distributions" where it predicts distributions from labels
        for word, left, right in relations.directed(bare):
            same = [(pl, pr) for w, pl, pr in support.directed if w == word]
            if (any(pl & right and pr & left and not (pl & left and pr & right) for pl, pr in same)
                    and not any(pl & left and pr & right for pl, pr in same)):  # a passage may say both
                return f"the passage says it the other way round ({word})"
    # "erases its knowledge" where the passage says "retains"
    lost, kept = relations.kept(bare, relations.LOSES), relations.kept(bare, relations.KEEPS)
    if (lost & support.keeps) - support.loses or (kept & support.loses) - support.keeps:
        return "the passage says the opposite"
    if relations.growing(bare) & support.fixed:  # "a budget that grows" where the passage says "a fixed budget"
        return "the passage says it is fixed"
    set_, lifted = claims.conditions(bare, claims.CONDITIONAL), claims.conditions(bare, claims.UNCONDITIONAL)
    if set_ & support.unconditional and not set_ & support.conditional:  # "provided that" where it says "regardless"
        return "the passage says it holds regardless of that"
    if lifted & support.conditional and not lifted & support.unconditional:  # "even when" where it says "as long as"
        return "the passage says it holds only under that condition"
    if (relations.fixed(bare) & support.adaptive) - support.fixed:  # "a fixed UV grid" for "adaptively-deformed UV"
        return "the passage says it adapts"
    if denials and (problem := _prefix_problem(bare, support) or _role_problem(bare, support)):
        return problem  # "dissimilar" where the passage says "similar", "requires X" where it says "without X", …
    bound = amounts.bindings(bare)
    for value, name in bound:
        others = {n for v, n in support.bindings if v == value}
        if others and name not in others:
            return f"the passage gives that number for {sorted(others)[0]}"
        given = _given(support, name)  # "2.8% on ImageNet" where it says 5.3% there
        if given and value not in given and not others:
            return f"the passage gives {name} another number"
    for value, name in sorted(amounts.changed(bare) - bound):  # "improves GFSLT-VLP by 39%" where it gives it 46%
        given = _given(support, name)
        if given and value not in given:
            return f"the passage gives {name} another number"
    if _swapped(bare, support):  # "30% time and 42% memory savings" where the passage says 42% time, 30% memory
        return "the passage gives those figures the other way round"
    for value, word in amounts.counted(bare, 1):  # "3 phases" where the passage says "4 phases (+3 subphases)"
        counts = {v for v, w in support.counted if w == word}
        if counts and value not in counts:
            return f"the passage counts {word} differently"
    return None


def _prefix_problem(bare: str, support: Evidence) -> str | None:
    """A word said against its negating prefix before the same thing: "dissimilar model capabilities" where the
    passage says "similar model capabilities", or the other way round. A sentence naming both contrasts them."""
    contrasted = relations.followed(bare.lower())
    for m in relations.PREFIXED.finditer(bare):
        negated, root, after = m.group(1).lower(), m.group(2).lower(), ordered_stems(m.group(3))[:1]
        if after and (root, after[0]) in support.followed - contrasted and (negated, after[0]) not in support.followed:
            return f"the passage says {root}, not {negated}"
    for m in relations.WORD_BEFORE.finditer(bare):
        base, after = m.group(1).lower(), ordered_stems(m.group(2))[:1]
        if after and (base, after[0]) not in support.followed:
            for prefix in relations.NEGATING_PREFIXES:
                if (prefix + base, after[0]) in support.followed - contrasted:
                    return f"the passage says {prefix + base}, not {base}"
    return None


def _swapped(bare: str, support: Evidence) -> bool:
    """Two figures of the sentence each given for what the passage gives the other for."""
    tagged = sorted(amounts.tagged(bare))
    return any(first != second and first_word != second_word
               and {(first, second_word), (second, first_word)} <= support.tagged
               and (first, first_word) not in support.tagged
               for first, first_word in tagged for second, second_word in tagged)


def _role_problem(bare: str, support: Evidence) -> str | None:
    """Readings of what a sentence says a thing needs, how nearly it holds, what it trails and which of two prefixed
    (or suffixed) words it is, against the passage: the first problem one finds."""
    low = bare.lower()
    return (_need_problem(bare, support) or _qualifier_problem(low, support) or _behind_problem(bare, support)
            or _swapped_prefix_problem(low, support) or _swapped_suffix_problem(low, support)
            or _swapped_modifier_problem(low, support) or _denied_zh_problem(bare, support))


def _need_problem(bare: str, support: Evidence) -> str | None:
    """"still requires an isoperimetric inequality" where the passage says "without assuming" it."""
    for m in claims.REQUIRED.finditer(bare):
        if (after_negation(bare, m.start())
                or re.match(r"(?:no|not|neither|none)\b", m.group(1), re.I)):  # "needs no explicit budget"
            continue
        needed = set(ordered_stems(m.group(1)))
        if (any(len(needed & said) >= 2 for said in support.not_assumed)
                and not any(len(needed & said) >= 2 for said in support.assumed)):  # "prior work requires X"
            return "the passage says it does not assume that"
    return None


def _qualifier_problem(low: str, support: Evidence) -> str | None:
    """"near-optimal" where the passage says "optimal" (not "up to log factors"), and the other way round."""
    for m in claims.QUALIFIED.finditer(low):
        word = m.group(1)
        if (word not in support.qualified and re.search(r"(?<![\w-])" + word + r"\b", support.text)
                and not claims.UP_TO_FACTORS.search(support.text)):
            return f"the passage says {word}, not {m.group(0)}"
    said = {m.group(1) for m in claims.QUALIFIED.finditer(low)}
    for word in support.qualified - said:
        if (re.search(r"(?<![\w-])" + word + r"\b", low)
                and not re.search(r"(?<![\w-])(?<!near )(?<!nearly )(?<!almost )" + word + r"\b", support.text)):
            return f"the passage says near-{word}, not {word}"
    return None


def _behind_problem(bare: str, support: Evidence) -> str | None:
    """"falls short of flow-matching models" where the passage says it improves over them."""
    if not support.behind:
        for m in claims.BEHIND.finditer(bare):
            if set(ordered_stems(m.group(1))) - claims.RIVALS & support.ahead:
                return "the passage says it does better than that"
    return None


def _swapped_prefix_problem(low: str, support: Evidence) -> str | None:
    """"underconfident" where the passage says "overconfident" (and never "underconfident"); a sentence naming
    both contrasts them."""
    words = set(re.findall(r"[a-z][a-z-]*[a-z]", low))
    for word in words:
        for a, b in (*relations.SWAPPED_PREFIXES, *(pair[::-1] for pair in relations.SWAPPED_PREFIXES)):
            rest = word[len(a):].lstrip("-")
            if word.startswith(a) and len(rest) >= 4:
                other = [o for o in (b + rest, f"{b}-{rest}") if re.search(r"(?<![\w-])" + o + r"\b", support.text)]
                if (other and not set(other) & words
                        and not re.search(r"(?<![\w-])" + a + "-?" + rest + r"\b", support.text)):
                    return f"the passage says {other[0]}, not {word}"
    return None


def _given(support: Evidence, name: str) -> set[float]:
    """The numbers the passage gives for `name` (a benchmark, model or setting)."""
    return {v for v, n in support.bindings if n == name}


def _swapped_suffix_problem(low: str, support: Evidence) -> str | None:
    """"replay-based" where the passage says "replay-free" (and never "replay-based"); a sentence naming both
    contrasts them."""
    words = set(re.findall(r"[a-z][a-z-]*[a-z]", low))
    for word in sorted(words):
        head, dash, tail = word.rpartition("-")
        if not dash or len(head) < 3:
            continue
        for a, b in (*relations.SWAPPED_SUFFIXES, *(pair[::-1] for pair in relations.SWAPPED_SUFFIXES)):
            other = f"{head}-{b}"
            if (tail == a and other not in words and re.search(r"(?<![\w-])" + re.escape(other) + r"\b", support.text)
                    and not re.search(r"(?<![\w-])" + re.escape(word) + r"\b", support.text)):
                return f"the passage says {other}, not {word}"
    return None


def _swapped_modifier_problem(low: str, support: Evidence) -> str | None:
    """"learning-based identity maps" where the passage says "optimization-based identity maps and learning-based
    latent features": a hyphenated modifier moved onto what the passage gives another of its kind."""
    said = relations.followed(low)
    for word, thing in sorted(said):
        head, dash, kind = word.rpartition("-")
        if not dash or not head or (word, thing) in support.followed:
            continue
        others = sorted(w for w, t in support.followed if t == thing and w != word and w.endswith(dash + kind)
                        and (w, thing) not in said)
        if others and any(w == word for w, _ in support.followed):
            return f"the passage says {others[0]} {thing}, not {word}"
    return None


def _denied_zh_problem(bare: str, support: Evidence) -> str | None:
    """"无需微调" (needs no fine-tuning) where the passage says "fine-tuning method" and never denies it."""
    for m in claims.DENIED_ZH.finditer(bare):
        english = translate_chinese(m.group(1))
        denied = set(ordered_stems(english[0])) if english else set()
        if denied and denied <= support.stems and not denied & support.denied:
            return "the passage does not say it is not so"
    return None
