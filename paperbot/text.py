"""One toolkit for text, shared by ingest, retrieval and every front end.

    split_sentences(text)   verbatim sentence spans (abstracts and replies alike; 。！？ end sentences too)
    sentences(text)         the sentences' texts
    words(text)             lower-cased word tokens (letters and digits; a run of CJK characters is one token)
    word_spans(text)        the same words as typed, with their character spans
    stem(word)              the Snowball English stem (PyStemmer), what BM25 and every word comparison use
    STOPWORDS               English function words, dropped wherever content is compared
    GENERIC_WORDS, REFERENCE_WORDS  words a claim, or a follow-up's topic, does not count (content_words' ignore)
    BM25_STOPWORDS          the shorter list the keyword index drops (Lucene's, as bm25s uses)
    content_words(text)     the stems of the words that carry meaning
    readable(text)          LaTeX as people read it (`$\\beta$-DPO` → `β-DPO`), for display only
    strip_control(text)     no control characters, terminal escape sequences or bidirectional controls
    clean_question(text)    a question as typed, without invisible format characters and extra space
    HAN, KANA, HANGUL, CJK  character ranges (for regex classes); HAN_CHAR, CJK_CHAR, WIDE_END compiled
    search_text(text)       what of a question is searched: no mentions, emoji, links, code fences or greetings
    claims_for_paper(text)  whether a sentence speaks for its paper ("we", "our", "this paper"): its contribution
    asks_quantity(text)     whether a question asks for a number ("how much faster …?", "what accuracy …?")
    states_number(text)     whether a sentence states a number (a result, a count, a percentage)
    asks_how(text)          whether a question asks for a way of doing something ("how do people …?")
    states_method(text)     whether a sentence states what the paper does ("we propose …", "by training …")
    states_result(text)     whether a sentence reports an outcome ("experiments show …", "outperforms …")
    names(text)             the words of a question that name something (DBSCAN, LLaVA, Mamba, 19x19)
    says_name(name, text)   whether a text says a name (case and plural aside; an acronym by its initials too)

A threshold calibrated on one splitter or stemmer means nothing under another: nothing else in
paperbot splits sentences, stems words or keeps a stopword list of its own.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

# -- scripts ------------------------------------------------------------------------------------

HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs: unified, extension A, compatibility
ZH_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}  # Chinese numerals
KANA = "\u3040-\u30ff"  # hiragana and katakana
HANGUL = "\uac00-\ud7af"  # Hangul syllables
CJK = KANA + HAN + HANGUL
HAN_CHAR = re.compile(f"[{HAN}]")
CJK_CHAR = re.compile(f"[{CJK}]")
# Text ending in a CJK character or full-width punctuation: the next sentence follows it with no space.
WIDE_END = re.compile("[\u3000-\u9fff\uff00-\uffef]$")


# -- sentences ----------------------------------------------------------------------------------

# A sentence ends at . ! or ? followed by citation markers, closing quotes or brackets, space, and an upper-case
# letter, digit, quote, bracket, TeX/markdown opener or a CJK character; 。！？ end one whatever follows.
_BOUNDARY = re.compile(
    r"(?<=[.!?])(?:\s*\[\d{1,3}\])*[\"')\]”’]*\s+(?=[A-Z0-9\"'(\[\\$*_`“‘" + KANA + HAN + "])"
    r"|(?<=[。！？])(?:\s*\[\d{1,3}\])*[”’」』）)]*\s*(?=\S)")
_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|et al|etc|vs|cf|Fig|Eq|Sec|resp|approx|No|Dr|Mr|Ms))\.$")
MIN_SENTENCE_CHARS = 3


@dataclass(frozen=True)
class Span:
    """text[start:end] of the text it was found in."""

    start: int
    end: int


def split_sentences(text: str, *, lines: bool = False) -> list[Span]:
    """Spans of the sentences of `text`; text[span.start:span.end] is verbatim and stripped.

    Citation markers after a sentence's full stop ("… fine-tuning. [1] Then …") stay with it.
    With `lines`, a line break ends a sentence too (a model's reply writes lists one item a line).
    """
    if lines:
        out: list[Span] = []
        offset = 0
        for line in text.split("\n"):
            out += [Span(s.start + offset, s.end + offset) for s in split_sentences(line)]
            offset += len(line) + 1
        return out
    spans: list[Span] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        before = text[start:m.start()]
        if _ABBREV.search(before) or len(before.strip()) < MIN_SENTENCE_CHARS:
            continue
        spans.append(_strip(text, start, m.end()))
        start = m.end()
    if text[start:].strip():
        spans.append(_strip(text, start, len(text)))
    return [s for s in spans if s.end > s.start]


def sentences(text: str, *, lines: bool = False) -> list[str]:
    """The sentences of `text` as strings (see `split_sentences`)."""
    return [text[s.start:s.end] for s in split_sentences(text, lines=lines)]


def _strip(text: str, start: int, end: int) -> Span:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Span(start, end)


# -- words, stems, stopwords ----------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+")
_CITATION = re.compile(r"\[\d{1,3}\]")

# English function words: never what a sentence or a question is about.
STOPWORDS = frozenset(
    "a an the of to in for on and or with by from as at is are was were be been being it its this that these those "
    "we our us they their them which who whom what when where why how than then there here such also into onto over "
    "under about between among can could should would will may might must do does did done has have had having not "
    "no nor but if so both each all any some more most other only own same very just via while i you your he she "
    "his her my me".split())
# What the keyword index drops: Lucene's short English list (bm25s's), on which its calibration was measured.
BM25_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these they "
    "this to was will with".split())


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


def stem(word: str) -> str:
    """The Snowball English stem of a lower-case word ("generations" → "generat", "answers" → "answer")."""
    return _stemmer().stemWord(word)


def stem_function():
    """The stemmer's bound method, for loops that stem many words (the keyword index)."""
    return _stemmer().stemWord


def words(text: str) -> list[str]:
    """Lower-cased words: runs of letters and digits (no punctuation, no underscores)."""
    return _WORD.findall(text.lower())


_TYPED = re.compile(r"[^\W_][\w.+-]*[^\W_]|[^\W_]")


def typed_words(text: str) -> list[str]:
    """The words of `text` as typed, compounds and versions whole: "Mamba-3", "NV-CoT", "v1.5"."""
    return _TYPED.findall(text)


def word_spans(text: str) -> list[tuple[int, int, str]]:
    """The words of `text` as typed (case kept), each with its start and end: what `words` lower-cases."""
    return [(m.start(), m.end(), m.group(0)) for m in _WORD.finditer(text)]


# Words any sentence about papers may use: in a claim about a passage they support nothing by themselves.
GENERIC_WORDS = frozenset(
    "using use used based paper papers passage passages approach method methods propose proposes proposed introduce "
    "introduces show shows work study studies new one first second yes".split())
# Words that point at earlier answers or frame a request ("compare the first two"): never a follow-up's topic.
REFERENCE_WORDS = frozenset(
    "paper papers one ones tell more show explain please compare comparison versus vs difference differences differ "
    "work works "
    "result results source sources number first second third fourth fifth last use uses used using describe "
    "summarize summarise method methods approach study studies much many big need needs yes".split())


def content_words(text: str, *, ignore: frozenset[str] = frozenset(), latin_only: bool = False,
                  topics_only: bool = False) -> set[str]:
    """The stems of the words of `text` that carry meaning: no stopwords, no citation markers, no single letters.

    `ignore` holds further (unstemmed) words a caller treats as framing (GENERIC_WORDS, REFERENCE_WORDS);
    `latin_only` keeps the Latin-script ones (the names, terms and numbers a sentence in another language shares
    with an English passage); `topics_only` drops numbers and Chinese (what a follow-up's topic is made of).
    """
    out = set()
    for w in words(_CITATION.sub(" ", text)):
        if (len(w) > 1 or w.isdigit()) and w not in STOPWORDS and w not in ignore:
            out.add(stem(w))
    if latin_only:
        out = {w for w in out if w.isascii()}
    if topics_only:
        out = {w for w in out if not w.isdigit() and not HAN_CHAR.search(w)}
    return out


# A sentence that speaks for its paper states what the paper does or finds, rather than its setting.
_FIRST_PERSON = frozenset("we our ours us".split())
_THIS_WORK = re.compile(r"\b(?:this|the present|our) (?:paper|work|study|article|approach|method|framework|model)\b",
                        re.I)


def claims_for_paper(text: str) -> bool:
    """Whether a sentence speaks for its paper: "we …", "our method …", "this paper shows …"."""
    return bool(_FIRST_PERSON.intersection(words(text))) or bool(_THIS_WORK.search(text))


_HOW_MUCH = "much|many|large|big|small|fast|long|well|often|far"  # "how much …?" asks for a number, not a way
_QUANTITY = re.compile(
    rf"\bhow (?:{_HOW_MUCH})\b|\bby how\b|\b(?:what|which) (?:\w+ )?(?:accuracy|"
    r"score|speed-?up|percentage|rate|error|improvement|gain|size|number|fid|performance)\b|\d", re.I)
_NUMBER = re.compile(r"\d")


def asks_quantity(text: str) -> bool:
    """Whether a question asks for a number: "how much faster …?", "what accuracy …?", or names one itself."""
    return bool(_QUANTITY.search(text))


def states_number(text: str) -> bool:
    """Whether a sentence states a number (a result, a count, a percentage)."""
    return bool(_NUMBER.search(text))


_HOW = re.compile(rf"\bhow\b(?!\s+(?:{_HOW_MUCH})\b)|\bways? to\b|"
                  r"\b(?:approach|method|technique)(?:es|s)? (?:to|for)\b", re.I)
_METHOD_VERBS = ("propose introduce present develop design use leverage employ formulate reformulate train learn model "
                 "build construct cast relax combine replace decompose map align optimize optimise exploit apply adopt "
                 "incorporate integrate treat encode represent group call term dub").split()
_METHOD_VERB = "|".join(v[:-1] + "e?[sd]?" if v.endswith("e") else v + "(?:s|es|ed)?" for v in _METHOD_VERBS)
# who does it: we, this paper, our method, or a name the paper gives its method ("DRL trains …", "LLM4EA uses …")
_METHOD = re.compile(
    r"(?:\b(?i:we|this paper|this work|our (?:method|approach|framework|model|algorithm))|\b[A-Za-z]*[A-Z][A-Za-z0-9-]*"
    r"[A-Z0-9][A-Za-z0-9-]*)\s+(?:\w+\s+){0,2}?(?i:" + _METHOD_VERB + r")\b"
    r"|(?i:\b(?:proposed|our) (?:method|approach|framework|model|algorithm|technique)\b|\bby \w+ing\b)")
_RESULT = re.compile(r"\b(?:experiments?|empirical(?:ly)?|results? (?:show|demonstrate)|outperform\w*|"
                     r"state-of-the-art|achiev\w+|extensive|evaluat\w+|benchmarks?|demonstrat\w+)\b", re.I)


def asks_how(text: str) -> bool:
    """Whether a question asks for a way of doing something: "how do people …?", "ways to …", "methods for …"
    (not "how much …?", which asks for a number)."""
    return bool(_HOW.search(text))


def states_method(text: str) -> bool:
    """Whether a sentence states what its paper does: "we propose …", "our method …", "by training …"."""
    return bool(_METHOD.search(text))


def states_result(text: str) -> bool:
    """Whether a sentence reports an outcome: "experiments show …", "outperforms …", "achieves …"."""
    return bool(_RESULT.search(text))


# Where a paper's code or page is, not what it finds: a link, or "code is available / will be released".
_POINTER = re.compile(r"https?://|\bwww\.|github\.com|\.github\.io\b|4open\.science|huggingface\.co/", re.I)
_CODE_AVAILABLE = re.compile(r"\b(?:code|codes|source code|implementation|project page)\b[^.;]{0,60}?"
                             r"\b(?:is|are|will be|has been|have been)\s+(?:made\s+)?(?:publicly\s+|freely\s+|openly\s+)?"
                             r"(?:available|released|open-sourced|accessible)\b", re.I)
# A request for a paper's code, not code as a topic ("code generation", "a code repository", "surface codes"):
# "where can I find …", "is … code public / out?", "has … released their code", "code/repo/github for …",
# "their/official implementation", "… open source?", "project page", "X code?" (read with or without the mark:
# retrieval searches the question without it).
_CODE = r"(?:code|codebase|implementation|repo|repository|github)"
_ASKS_CODE = re.compile(
    r"\bwhere (?:can|do|could|would|should) (?:i|we|you|one) (?:find|get|download|access|grab)\b"
    r"|\bwhere(?:'s| is| are)\b[^?]{0,40}\b" + _CODE + r"\b"
    r"|\b" + _CODE + r"s? (?:is |are )?(?:publicly |freely )?(?:available|public|released|out)\b"
    r"|\breleased? (?:the |their |its |any )?(?:source )?" + _CODE + r"\b"
    r"|\b(?:code|repo|repository|github|implementation|project page|link|url)s? (?:for|of|to) "
    r"(?:the|this|that|their|its|(?-i:[A-Z]))"
    r"|\b(?:their|official|the authors'?) (?:source )?" + _CODE + r"\b|\bsource code (?:of|for)\b"
    r"|\b(?:is|are) (?:the |their |its )?" + _CODE + r"s?\b[^?]{0,40}\b(?:available|public|released|out)\b"
    r"|\bdownload\b[^?]{0,30}\b" + _CODE + r"\b|\bopen[- ]sourced?\W*(?:$|\?)|\bproject page\b|\bgithub\b(?! repositor)"
    r"|^\W*[\w.+-]+(?:'s)?(?: (?:code|repo|repository|github|implementation|link|page))+\W*$", re.I)


def points_elsewhere(text: str) -> bool:
    """Whether a sentence says where the paper's code or page is ("Our code is available at https://…",
    "Code will be released.") rather than what the paper does or finds."""
    return bool(_POINTER.search(text) or _CODE_AVAILABLE.search(text))


def asks_for_code(text: str) -> bool:
    """Whether a question asks for a paper's code, repository or link ("is the code of DRL public?")."""
    return bool(_ASKS_CODE.search(text))


# The words of a request for code around the names it asks about ("is the IntraMix code public?", "where can I find
# GuardT2I's implementation?"): a question of these and names asks about the named papers.
_CODE_WORDS = frozenset(
    "code codes github repo repos repository repositories implementation implementations link links url website page "
    "project download public publicly available released release open source sourced open-source open-sourced where "
    "find get out yet s "
    "d ll like love want try use run play around".split())  # "s": "GuardT2I's code"; "I'd like to try it"


_ASKS_WHAT = re.compile(r"\bwhat(?:'s|’s| is| are| does| do| exactly)\b|\bexplain\b|\btell me about\b|"
                        r"\bidea (?:behind|of)\b|\bhow (?:does|do|is|are)\b|\bdefin(?:e|ition)\b|\bmean(?:s|ing)?\b",
                        re.I)
_INTRODUCING = ("propose proposes introduce introduces present presents develop develops design designs call calls "
                "called term termed dub dubbed name named coin coined release releases build builds construct "
                "constructs curate curates").split()


def asked_names(text: str) -> list[str]:
    """The names a question asks to have explained ("What is BMT?", "how does AsyncThink work?", "DeePEn?"): its
    names (`names`) when it asks what something is or how it works; [] otherwise."""
    found = names(text)
    alone = not set(words(text)) - {n.lower() for n in found}  # the name alone: "DeePEn?"
    return found if found and (alone or _ASKS_WHAT.search(text)) else []


def about_names(text: str) -> bool:
    """Whether a question asks about the things it names themselves: what they are ("What is BMT?", `asked_names`),
    or nothing but them ("compare DRL and BMT", "BMT vs DRL", "DiffAug?"), or their code ("is the IntraMix code
    public?"); not "DRL for robot locomotion", which asks about locomotion."""
    if asked_names(text):
        return True
    found = {n.lower() for n in names(text)}
    code = _CODE_WORDS if asks_for_code(text) else frozenset()
    return bool(found) and all(w in found or w in STOPWORDS or w in REFERENCE_WORDS or w in code for w in words(text))


# How a lab speaks of a paper it has read: "the sycophancy paper", "that flow matching article". Not "the first
# paper" or "the same paper" (earlier answers), nor "the paper" alone; not "work" or "study", verbs as often ("how
# does the discriminator work?").
_PAPER_NOUNS = frozenset("paper article preprint".split())
_NOT_TOPIC = frozenset("same other another first second third fourth fifth last previous next above below following "
                       "cited new recent latest best whole entire earlier latter former main related original".split())


def topic_called(text: str) -> frozenset[str]:
    """The stems of the words a question calls one paper by ("what datasets does the sycophancy paper use?" →
    {"sycoph"}): up to four words between "the", "that" or "this" and "paper", "article" or "preprint";
    empty when it calls none so, or calls one by its place among earlier answers ("the first paper")."""
    found = words(text)
    for i, w in enumerate(found):
        if w not in _PAPER_NOUNS:
            continue
        start = i
        while start > 0 and i - start < 4 and found[start - 1] not in STOPWORDS:
            start -= 1
        between = found[start:i]
        if between and start > 0 and found[start - 1] in ("the", "that", "this") and not _NOT_TOPIC & set(between):
            return frozenset(stem(b) for b in between)
    return frozenset()


def defines(text: str, name: str) -> bool:
    """Whether a sentence introduces `name` and says what it is: "We call the method Bit-Mask Tuning (BMT): …",
    "we propose DRL, which …", "AsyncThink, a …", "BMT is a …"; not one that only uses it ("BMT reaches …")."""
    n = r"(?<![A-Za-z0-9])" + re.escape(name) + r"(?![A-Za-z0-9])"
    return bool(re.search(
        r"\([^()]{0,40}?" + n + r"[^()]{0,40}\)"  # "Bit-Mask Tuning (BMT)"
        r"|\b(?i:" + "|".join(_INTRODUCING) + r")\b[^.;]{0,80}?" + n  # "we propose a framework, DRL"
        + r"|" + n + r"[}*_]*\s*(?:,|:|\u2014|--)\s*(?:a|an|the|which|that|i\.e\.)\b"  # "AsyncThink, a …"
        + r"|" + n + r"[}*_]*\s+(?:is|are|consists|stands)\b", text))  # "BMT is a …"


def names(text: str) -> list[str]:
    """The words of a question that name something: two capitals or more (DBSCAN, LLaVA, DeepMind), letters
    and digits together (19x19, GPT4), a capital after the first word (Mamba, Go). A paraphrase changes a
    question's common words, rarely its names."""
    out = []
    for i, (_, _, w) in enumerate(word_spans(text)):
        if w.lower() in STOPWORDS or len(w) < 2 or not w.isascii():
            continue
        capitals = sum(c.isupper() for c in w)
        mixed = any(c.isdigit() for c in w) and any(c.isalpha() for c in w)
        if capitals >= 2 or mixed or (i > 0 and w[0].isupper()):
            out.append(w)
    return out


def says_name(name: str, text: str) -> bool:
    """Whether `text` says `name` as a word, case and a plural aside ("LLMs" says "LLM", "Mamba-based" "Mamba");
    an acronym also by the initials of consecutive words ("large language models" says "LLM")."""
    bare = name[:-1] if len(name) > 2 and name.endswith("s") and name[:-1].isupper() else name
    low = bare.lower()
    if re.search(r"(?<![^\W_])" + re.escape(low) + r"(?:s|es)?(?![^\W_])", text.lower()):
        return True
    letters = low if bare.isupper() and bare.isalpha() and len(bare) <= 6 else ""
    if not letters:
        return False
    return _spelled(letters, words(text))


def _spelled(letters: str, text_words: list[str]) -> bool:
    """Whether consecutive words of the text (stopwords between them allowed) start with `letters` in order."""
    content = [w for w in text_words if w not in STOPWORDS]
    n = len(letters)
    return any("".join(w[0] for w in content[i:i + n]) == letters for i in range(len(content) - n + 1))


# -- control characters ---------------------------------------------------------------------------------

# Terminal escape sequences (CSI, OSC with its BEL/ST terminator, two-character escapes, the 8-bit CSI), then
# any C0/C1 control but tab and newline, DEL, and the bidirectional controls that reorder what follows them.
_ESCAPE_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]"
                              r"|\x9b[0-?]*[ -/]*[@-~]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def strip_control(text: str) -> str:
    """`text` without control characters, terminal escape sequences or bidirectional controls (\\n and \\t kept)."""
    return _CONTROL.sub("", _ESCAPE_SEQUENCE.sub("", text))


def clean_question(text: str) -> str:
    """A question as typed, without invisible format characters (zero-width, bidi controls, BOM), control
    characters and extra space. A question made only of such characters is empty."""
    text = strip_control(text)
    return " ".join("".join(c for c in text if unicodedata.category(c) != "Cf").split())


# Chat noise around a question: Discord mentions (@everyone, users, roles, channels), custom and Unicode emoji,
# links, code fences and inline-code ticks, greetings and thanks; none of it is what the question is about.
_MENTION = re.compile(r"<(?:@[!&]?|#)\d{1,20}>|(?<![\w@])@(?:everyone|here)\b|<a?:\w{1,32}:\d{1,20}>"
                      r"|<t:\d{1,20}(?::[tTdDfFR])?>|</[\w -]{1,32}:\d{1,20}>")
_URL = re.compile(r"\b(?:https?://|www\.)\S+", re.I)
_FENCE = re.compile(r"`{1,3}")
_GREETING = re.compile(
    r"^(?:(?:hi|hello|hey|hiya|yo|greetings|good (?:morning|afternoon|evening)|dear|please|pls|plz)\b(?: there| all| everyone|"
    r" folks| team| bot| paperbot)?[\s,!.:;-]*)+", re.I)
_THANKS = re.compile(r"[\s,!.;-]*\b(?:(?:many |thanks? (?:you )?)?(?:thanks|thank you|thx|ty|cheers)(?: (?:so|very) much|"
                     r" in advance| a lot)?|please|pls|plz)\W*$", re.I)
_TRAILING = re.compile(r"[\s?!.,;:~…。？！，、]+$")
# A whole message that only checks the bot is there ("test", "ping", "are you there?"): no question in it.
_PROBE = re.compile(r"(?:test(?:ing)?(?:[\s,.!]*(?:test(?:ing)?|\d{1,3}))*|ping|"
                    r"(?:are )?(?:you|u|anyone|anybody)(?: still)? (?:there|around|alive|awake|online)|"
                    r"(?:is )?(?:this|it|the bot)(?: thing)? (?:working|on|alive|online)|测试|在吗|在不在)"
                    r"[\s?!.,;:~…。？！，、]*", re.I)


def search_text(text: str, *, mark: bool = True) -> str:
    """What of a question is searched: `clean_question`, without Discord mentions and emoji, links, code
    fences, greetings, thanks and trailing punctuation but one question mark ("hey @everyone, how does DRL
    work?? thx" → "how does DRL work?"; with `mark` false, no question mark either: what retrieval embeds).
    The question shown to the user stays as asked; text made only of noise is empty, and so is a message that
    only checks the bot is there ("test", "ping", "are you there?", "在吗")."""
    text = _MENTION.sub("\0", clean_question(text))
    text = _URL.sub("\0", text)
    text = _FENCE.sub("\0", text)
    text = "".join("\0" if unicodedata.category(c) in ("So", "Sk", "Cs", "Co") or c == "\ufe0f" else c for c in text)
    text = _NOISE_AT_END.sub("", text)  # "what is X <:emoji:1>?" → "what is X?"
    text = " ".join(text.replace("\0", " ").split())
    for _ in range(2):  # "hi there, thanks!" has both
        text = _GREETING.sub("", text).strip()
        text = _THANKS.sub("", text).strip()
    if _PROBE.fullmatch(text):
        return ""
    end = _TRAILING.search(text)
    if end is None:
        return text.strip(" ,;:-")
    tail = end.group(0)
    marks = [i for i, c in enumerate(tail) if c in "?？"]
    body = text[:end.start()].strip(" ,;:-")
    return body + (tail[:marks[0] + 1] if marks and mark else "") if body else ""


_NOISE_AT_END = re.compile(r"[\s\0]*\0[\s\0]*(?=[?？!.,;:…。！，]*\s*$)")


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
_SYMBOLS.update({
    "langle": "⟨", "rangle": "⟩", "lvert": "|", "rvert": "|", "vert": "|", "mid": "|", "|": "‖", "Vert": "‖",
    "lVert": "‖", "rVert": "‖", "left": "", "right": "", "big": "", "Big": "", "bigl": "", "bigr": "",
    "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉", "ll": "≪", "gg": "≫", "leqslant": "≤",
    "geqslant": "≥", "prime": "′", "dagger": "†", "emptyset": "∅", "setminus": "∖", "land": "∧", "lor": "∨",
    "neg": "¬", "wedge": "∧", "vee": "∨", "times": "×", "div": "÷", "downarrow": "↓", "uparrow": "↑",
    "Leftarrow": "⇐", "Leftrightarrow": "⇔", "iff": "⇔", "implies": "⇒", "gets": "←", "perp": "⊥",
    "odot": "⊙", "oplus": "⊕", "otimes": "⊗", "bullet": "•", "sup": "sup", "inf": "inf", "lim": "lim",
    "det": "det", "tr": "tr", "Pr": "Pr", "cos": "cos", "sin": "sin", "tanh": "tanh", "argmax": "argmax",
    "argmin": "argmin", "displaystyle": "", "textstyle": "", "limits": "", "colon": ":", "lesssim": "≲",
    "gtrsim": "≳", "asymp": "≍", "coloneqq": "≔", "triangleq": "≜", "cdotp": "·", "$": "$",
})
_BLACKBOARD = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ", "E": "𝔼", "P": "ℙ"}
_SUPER = str.maketrans("0123456789+-=()nTi*⊤′", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿᵀⁱ*ᵀ′")
_SUB = str.maketrans("0123456789+-=()aeiojkntx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑᵢₒⱼₖₙₜₓ")
_MATH = re.compile(r"(?<![\\A-Za-z_])\$\$?(?!\s)(.+?)(?<![\s\\])\$\$?(?!\d)", re.S)
# A lone symbol in math mode reads the same wherever it stands: "4.2$\times$", "$\sim$3x", "2.45${\times}$".
_LONE_SYMBOL = re.compile(r"\$\s*\{?\\([A-Za-z]+)\}?\s*\$")
# Math whose body opens or closes with a space but holds a command: "$ r^*(x)=\sigma(x) $".
_SPACED_MATH = re.compile(r"(?<![\\\w$])\$\s+([^$\n]*?\\[A-Za-z][^$\n]*?)\s*\$(?!\$)")
_FONT = re.compile(r"\\(?:text|textbf|textit|textrm|texttt|textsc|textsf|emph|mathrm|mathbf|mathit|mathsf|mathtt|"
                   r"operatorname\*?|boldsymbol|bm|mathcal|mathscr|mathfrak|underline|mbox|hbox)\s*\{([^{}]*)\}")
_BARE_FONT = re.compile(r"\\(?:mathcal|mathscr|mathfrak|mathbf|mathrm|mathit|mathsf|boldsymbol|bm)\s+([A-Za-z])")
_BB = re.compile(r"\\mathbb\s*\{\s*([A-Za-z])\s*\}|\\mathbb\s+([A-Za-z])")
_ACCENT = re.compile(r"\\(tilde|widetilde|hat|widehat|bar|overline|vec|dot|ddot)\s*(?:\{([^{}]*)\}|([A-Za-z])|"
                     r"(\\[A-Za-z]+))")
_ACCENTS = {"tilde": "\u0303", "widetilde": "\u0303", "hat": "\u0302", "widehat": "\u0302", "bar": "\u0304",
            "overline": "\u0305", "vec": "\u20d7", "dot": "\u0307", "ddot": "\u0308"}
_FRAC = re.compile(r"\\[dt]?frac\s*(?:\{([^{}]*)\}|(\w))\s*(?:\{([^{}]*)\}|(\w))")
_SQRT = re.compile(r"\\sqrt\s*\{([^{}]*)\}")
_COMMAND = re.compile(r"\\([A-Za-z]+|[%&_#{},;!| $])")
_SCRIPT = re.compile(r"([\^_])(\{[^{}]*\}|[A-Za-z0-9+\-=*⊤′])")
_LINK_COMMAND = re.compile(r"\\(?:url|href)\s*\{([^{}]*)\}(?:\{([^{}]*)\})?")
_EMPTY_MACRO = re.compile(r"\\([A-Za-z]+)\{\}")
_GROUP = re.compile(r"(?<![\\\w])\{([^{}$\\\n]{1,200})\}")  # "{Monotonic Inference Policy Update (MIPU)}"
_TEX_QUOTES = re.compile(r"``([^`'\n]{1,300}?)''")
_EM_DASH = re.compile(r"(?<=\w)---(?=\w)|\s---\s")
_EN_DASH = re.compile(r"(?<=\w)--(?=\w)")


def _scripted(m: re.Match) -> str:
    body = m.group(2).strip("{}")
    table = _SUPER if m.group(1) == "^" else _SUB
    converted = body.translate(table)
    if all(c != o or not c.isalnum() for c, o in zip(converted, body)) or len(body) == 1 and converted != body:
        return converted
    return ("^" if m.group(1) == "^" else "_") + (body if len(body) == 1 else f"({body})")


def _grouped(text: str) -> str:
    """`text` as one operand: bare when it is one symbol or word, else in parentheses."""
    text = text.strip()
    return text if re.fullmatch(r"[\w.]+|\\[A-Za-z]+", text) else f"({text})"


_OPERATORS = frozenset("log ln exp max min sup inf det dim sin cos tan arg lim".split())


def _command(m: re.Match[str]) -> str:
    """A command as its symbol; an operator name keeps apart from the letters and digits beside it:
    "\\kappa\\log\\frac{1}{ε}" is "κ log 1/ε"."""
    name = m.group(1)
    shown = _SYMBOLS.get(name, name)
    if name in _OPERATORS:
        before, after = m.string[max(0, m.start() - 1):m.start()], m.string[m.end():m.end() + 1]
        shown = (" " if before.isalnum() else "") + shown + (" " if after.isalnum() else "")
    return shown


def _accented(m: re.Match[str]) -> str:
    """An accent over a letter or a command: "\\tilde{O}" is "Õ", "\\tilde{\\Theta}" "Θ̃" (not "Thetã")."""
    inner = (m.group(2) or m.group(3) or m.group(4)).strip()
    if re.fullmatch(r"\\[A-Za-z]+", inner):
        inner = _SYMBOLS.get(inner[1:], inner)
    return "{" + unicodedata.normalize("NFC", inner + _ACCENTS[m.group(1)]) + "}"


def _math(body: str) -> str:
    body = _BB.sub(lambda m: _BLACKBOARD.get(m.group(1) or m.group(2), m.group(1) or m.group(2)), body)
    for _ in range(3):  # nested fonts: \mathbf{\text{x}}; "\cdot\mathrm{polylog}" keeps its command apart
        body = _FONT.sub(lambda m: (" " if re.search(r"\\[A-Za-z]+$", m.string[:m.start()]) else "") + m.group(1),
                         body)
    body = _BARE_FONT.sub(r"{\1}", body)  # braces keep "\sim\mathcal N" from reading as one command
    body = _ACCENT.sub(_accented, body)
    for _ in range(2):  # a fraction inside a root, a root inside a fraction
        body = _FRAC.sub(lambda m: f"{_grouped(m.group(1) or m.group(2))}/{_grouped(m.group(3) or m.group(4))}", body)
        body = _SQRT.sub(lambda m: "√" + _grouped(m.group(1)), body)
    body = _COMMAND.sub(_command, body)
    body = _SCRIPT.sub(_scripted, body)
    body = re.sub(r"([⟨(\[⌊⌈]) +", r"\1", body)  # "\langle a" reads "⟨a"
    return body.replace("{", "").replace("}", "").replace("~", " ")


def readable(text: str) -> str:
    """LaTeX as people read it: `$\\beta$-DPO` → `β-DPO`, `$O(n^2)$` → `O(n²)`, `4.2$\\times$` → `4.2×`,
    `$\\tilde{O}(n)$` → `Õ(n)`, ``` ``blind'' ``` → `“blind”`, `state--action` → `state–action`.

    For display only (Discord, the terminal, labels); stored text and JSON keep the source.
    """
    if "\\" not in text and "$" not in text and "``" not in text and "--" not in text:
        return text
    latex = "\\" in text
    text = _LONE_SYMBOL.sub(lambda m: _SYMBOLS.get(m.group(1), m.group(0)), text)
    text = _SPACED_MATH.sub(lambda m: "$" + m.group(1).strip() + "$", text)
    text = _MATH.sub(lambda m: _math(m.group(1)), text)
    text = _LINK_COMMAND.sub(lambda m: m.group(2) or m.group(1), text)
    for _ in range(2):
        text = _FONT.sub(r"\1", text)
    if latex:  # LaTeX source: its grouping braces are not text
        text = _GROUP.sub(r"\1", _EMPTY_MACRO.sub(r"\1", text))
    text = _TEX_QUOTES.sub("\u201c\\1\u201d", text)
    text = _EM_DASH.sub(lambda m: "—" if m.group(0) == "---" else " — ", text)
    text = _EN_DASH.sub("–", text)
    return re.sub(r"\\([%&_#$])", r"\1", text)
