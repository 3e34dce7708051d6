"""Which language a text is written in, by its script (and, for Latin script, a few function words).

Good enough to choose the language of fixed messages, to decide whether a
question needs an English search query, and to check that an answer is in the
language of its question. Languages the messages exist in: `MESSAGE_LANGUAGES`.
"""

from __future__ import annotations

import re

from paperbot.text import CJK_CHAR, HAN, HANGUL, KANA

MESSAGE_LANGUAGES = ("en", "zh")

_EN_WORDS = frozenset(
    "the a an of to in for on and or with how what which who why when where do does did is are was were can "
    "could should would will be been by from about that this these those than into paper papers model models "
    "method methods learning use used using any some there their it its as at".split())
_OTHER_WORDS = frozenset(
    # French, German, Spanish, Italian, Portuguese, Dutch function words that English does not use
    "le la les des du une est sont quels quelles quel quelle comment pourquoi avec pour dans sur qui "
    "der die das den dem ein eine einen ist sind wie welche welcher warum mit für und auf nicht "
    "el los las del es son cómo como qué cuál cuáles por para con una sobre "
    "il lo gli della delle sono che perché quali cosa "
    "os uma são quais porque sobre "
    "het een zijn hoe welke waarom met voor".split())

_SCRIPTS = (  # (language, character ranges); checked in order
    ("ja", KANA),  # kana before Han: Japanese uses both
    ("ko", HANGUL + "\u1100-\u11ff"),  # syllables and jamo
    ("zh", HAN),
    ("ru", "\u0400-\u04ff"),
    ("ar", "\u0600-\u06ff"),
    ("hi", "\u0900-\u097f"),
    ("el", "\u0370-\u03ff"),
    ("he", "\u0590-\u05ff"),
    ("th", "\u0e00-\u0e7f"),
)


def guess_language(text: str) -> str:
    """'en', 'zh', 'ja', 'ko', …, 'latin' (a Latin-script language other than English), or 'en' for no letters."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return "en"
    latin = sum(1 for c in letters if c < "\u0250")
    # A Chinese, Japanese or Korean character carries about a word: weigh it like one (≈ 4 Latin letters),
    # so "HopChain 发现 CoT 推理会暴露 hallucination 错误" is Chinese with English terms, not English.
    cjk = len(CJK_CHAR.findall(text))
    if latin / (len(letters) + 3 * cjk) < 0.7:
        rest = "".join(c for c in letters if c >= "\u0250")
        counts = {lang: len(re.findall(f"[{ranges}]", rest)) for lang, ranges in _SCRIPTS}
        lang = max(counts, key=lambda k: counts[k])
        if lang == "zh" and counts["ja"]:
            lang = "ja"
        return lang if counts[lang] else "other"
    words = re.findall(r"[^\W\d_]+", text.lower())
    english = sum(w in _EN_WORDS for w in words)
    other = sum(w in _OTHER_WORDS for w in words)
    return "latin" if other > english else "en"


def looks_english(text: str) -> bool:
    """A cheap guess, good enough to decide whether to rewrite the question into English first."""
    return guess_language(text) == "en"


def message_language(text: str | None = None, locale: str | None = None) -> str:
    """The language of fixed messages: the question's when it is one we have, else the locale's, else English.

    An English question gets English messages whatever the locale; a question with no letters (or none at
    all) follows the locale (Discord's `interaction.locale`, e.g. "zh-CN", "zh-TW").
    """
    if text and any(c.isalpha() for c in text):
        lang = guess_language(text)
        return lang if lang in MESSAGE_LANGUAGES else "en"
    if locale and str(locale).lower().startswith("zh"):
        return "zh"
    return "en"
