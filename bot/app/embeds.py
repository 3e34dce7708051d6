"""Answers, search results and papers as Discord embeds: pure functions, no I/O.

Everything is built as small `Card`s (one per embed) grouped into `Page`s (one
per message), so the same output can become `discord.Embed`s for the bot or
plain text for `paperbot chat`. Every text that came from a user or an abstract
is markdown- and mention-escaped, and every page respects Discord's limits:
long answers are split between lines, sentences or words (so a citation marker
like ``[2]`` and a quoted sentence are never cut in half across messages).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import discord

from bot import text
from bot.app import messages as bot_messages
from paperbot import messages
from paperbot.records import Paper
from retrieval.types import Answer, Hit, SearchResult

# Discord's documented limits (characters).
CONTENT = 2000
TITLE = 256
DESCRIPTION = 4096
FIELD_NAME = 256
FIELD_VALUE = 1024
FIELDS = 25
FOOTER = 2048
TOTAL = 6000  # all embeds of one message together
EMBEDS = 10  # per message
CHOICES = 25  # autocomplete
CHOICE_NAME = 100
CHOICE_VALUE = 100

SNIPPET = 350  # search snippets are previews; /paper shows the whole abstract
ANSWER_CHARS = 1800  # an LLM answer's bound: room for the footer within one message's 2000 characters

COLOUR_ANSWER = 0x2B7A4B
COLOUR_ABSTAIN = 0x8A8F98
COLOUR_INFO = 0x3A6EA5

_ELLIPSIS = "…"


@dataclass(frozen=True)
class Field:
    name: str
    value: str


@dataclass(frozen=True)
class Card:
    """One embed."""

    title: str = ""
    description: str = ""
    fields: tuple[Field, ...] = ()
    footer: str = ""
    url: str = ""
    colour: int | None = None

    def size(self) -> int:
        return (len(self.title) + len(self.description) + len(self.footer)
                + sum(len(f.name) + len(f.value) for f in self.fields))


@dataclass(frozen=True)
class Page:
    """One message: optional content plus up to ten embeds."""

    content: str = ""
    cards: tuple[Card, ...] = ()


# -- text primitives -------------------------------------------------------------------


_CHANNEL_MENTION = re.compile(r"<#(\d{15,21})>")


def escape(text: str) -> str:
    """Text from a user or an abstract, made inert: no markdown, no mentions (channel links included)."""
    text = discord.utils.escape_mentions(discord.utils.escape_markdown(text))
    return _CHANNEL_MENTION.sub("<#\u200b\\1>", text)


def _cut_at(text: str, limit: int) -> int:
    """Where to end the first piece of `text` (≤ limit): a line, a sentence, a word, or a hard cut."""
    if len(text) <= limit:
        return len(text)
    window = text[: limit + 1]
    for pattern in (r"\n", r"(?<=[.!?…])\s", r"\s"):
        ends = [m.start() for m in re.finditer(pattern, window) if m.start() > 0]
        # A piece shorter than a third of the limit wastes a message; prefer a finer boundary.
        good = [e for e in ends if e >= limit // 3]
        if good:
            return good[-1]
    cut = limit
    while cut > 1 and text[cut - 1] == "\\":  # never separate an escape from what it escapes
        cut -= 1
    return cut


def split_text(text: str, limit: int) -> list[str]:
    """`text` in pieces of at most `limit` characters, cut at the most natural boundary."""
    pieces: list[str] = []
    rest = text.strip()
    while rest:
        cut = _cut_at(rest, limit)
        piece = rest[:cut].rstrip()
        if piece:
            pieces.append(piece)
        rest = rest[cut:].lstrip()
    return pieces


def clip(text: str, limit: int) -> str:
    """`text` shortened to `limit` characters at a word boundary, marked with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    if space >= limit // 2:
        head = head[:space]
    head = head.rstrip("\\")
    return head + _ELLIPSIS


# -- packing into embeds and messages ------------------------------------------------------


def build_cards(*, title: str = "", description: str = "", fields: Sequence[Field] = (), footer: str = "",
                url: str = "", colour: int | None = None) -> list[Card]:
    """One logical embed spread over as many cards as the limits need.

    The description continues in following cards; a field whose value is too long
    continues in the next field ("… (cont.)"), so quotes are never truncated.
    """
    title = clip(title, TITLE) if title else ""
    footer = clip(footer, FOOTER) if footer else ""
    chunks = split_text(description, DESCRIPTION) or [""]
    expanded: list[Field] = []
    for f in fields:
        name = clip(f.name, FIELD_NAME) or "\u200b"
        parts = split_text(f.value, FIELD_VALUE) or ["\u200b"]
        for i, part in enumerate(parts):
            expanded.append(Field(name if i == 0 else clip(f"{f.name} (cont.)", FIELD_NAME), part))

    budget = TOTAL - len(footer)
    cards: list[Card] = []
    for i, chunk in enumerate(chunks):
        cards.append(Card(title=title if i == 0 else "", description=chunk, url=url if i == 0 else "",
                          colour=colour))
    for f in expanded:
        last = cards[-1]
        if len(last.fields) < FIELDS and last.size() + len(f.name) + len(f.value) <= budget:
            cards[-1] = Card(title=last.title, description=last.description, fields=last.fields + (f,),
                             url=last.url, colour=colour)
        else:
            cards.append(Card(fields=(f,), colour=colour))
    if footer:
        last = cards[-1]
        if last.size() + len(footer) <= TOTAL:
            cards[-1] = Card(title=last.title, description=last.description, fields=last.fields, footer=footer,
                             url=last.url, colour=colour)
        else:
            cards.append(Card(footer=footer, colour=colour))
    return cards


def paginate(cards: Iterable[Card]) -> list[Page]:
    """Cards grouped into messages of at most ten embeds and 6000 characters."""
    pages: list[Page] = []
    current: list[Card] = []
    size = 0
    for card in cards:
        if current and (len(current) == EMBEDS or size + card.size() > TOTAL):
            pages.append(Page(cards=tuple(current)))
            current, size = [], 0
        current.append(card)
        size += card.size()
    if current or not pages:
        pages.append(Page(cards=tuple(current)))
    return pages


def text_pages(text: str) -> list[Page]:
    """A plain message (no embed), split at 2000 characters."""
    return [Page(content=t) for t in split_text(text, CONTENT)] or [Page(content="\u200b")]


# -- answers -------------------------------------------------------------------------------


def footer_for(answer: Answer) -> str:
    return discord.utils.escape_mentions(text.answer_footer(answer))  # footers show no markdown, but stay inert


def _quote(text: str) -> str:
    return f"\u201c{escape(text)}\u201d"


def _hit_field(rank: int, hit: Hit, snippet_limit: int | None = None) -> Field:
    snippet = hit.snippet if snippet_limit is None else clip(hit.snippet, snippet_limit)
    return Field(f"[{rank}] {escape(hit.label)} — {escape(hit.where)} · score {hit.score:.2f}", _quote(snippet))


def answer_pages(answer: Answer) -> list[Page]:
    """The answer text, then one field per cited paper with its verbatim sentence(s)."""
    title = f"Q: {escape(answer.question)}"
    if answer.abstained:
        description = messages.text("ABSTAIN", answer.language)
        if answer.hits:
            description += "\n\n" + messages.text("ABSTAIN_CLOSEST", answer.language)
        fields = [_hit_field(n, h, SNIPPET) for n, h in enumerate(answer.hits, start=1)]
        colour = COLOUR_ABSTAIN
    else:
        description = escape(answer.text)
        fields = [Field(f"[{c.n}] {escape(c.label)} — {escape(c.where)}", _quote(c.quote))
                  for c in answer.citations]
        colour = COLOUR_ANSWER
    return paginate(build_cards(title=title, description=description, fields=fields, footer=footer_for(answer),
                                colour=colour))


def preview_pages(question: str, text: str) -> list[Page]:
    """What a streaming answer looks like while the model is still writing (one message)."""
    body = escape(text)
    if len(body) > DESCRIPTION - 2:
        body = _ELLIPSIS + body[-(DESCRIPTION - 2):]
    card = Card(title=clip(f"Q: {escape(question)}", TITLE), description=body or _ELLIPSIS,
                footer=bot_messages.WRITING, colour=COLOUR_INFO)
    return [Page(cards=(card,))]


def sources_pages(answer: Answer) -> list[Page]:
    """Every paper retrieval considered for the answer, with its best sentences."""
    if not answer.hits:
        return text_pages(bot_messages.NO_MORE_SOURCES)
    fields = [_hit_field(n, h) for n, h in enumerate(answer.hits, start=1)]
    return paginate(build_cards(title=clip(f"Sources for: {escape(answer.question)}", TITLE),
                                description=bot_messages.SOURCES_NOTE, fields=fields, colour=COLOUR_INFO))


# -- search, papers, about -------------------------------------------------------------------


def search_page(result: SearchResult, page: int, per_page: int) -> Page:
    """One screen of search results: label, score and a short snippet per paper."""
    total = len(result.hits)
    pages = max(1, -(-total // per_page))
    page = min(max(page, 0), pages - 1)
    shown = result.hits[page * per_page:(page + 1) * per_page]
    lines = []
    if result.abstained:
        lines += [messages.ABSTAIN, messages.ABSTAIN_CLOSEST]
    if total:
        lines.append(f"Papers {page * per_page + 1}–{page * per_page + len(shown)} of {total}")
    else:
        lines.append(bot_messages.NO_RESULTS)
    fields = [_hit_field(page * per_page + i, h, SNIPPET) for i, h in enumerate(shown, start=1)]
    cards = build_cards(title=f"Search: {escape(result.query)}", description="\n".join(lines), fields=fields,
                        footer=f"page {page + 1}/{pages}", colour=COLOUR_INFO)
    return paginate(cards)[0]


def search_page_count(result: SearchResult, per_page: int) -> int:
    return max(1, -(-len(result.hits) // per_page))


def paper_pages(paper: Paper) -> list[Page]:
    """The whole abstract of one paper, with where it comes from."""
    title = escape(paper.label + (f" — {paper.title}" if paper.title and paper.title != paper.label else ""))
    fields = [Field("Source", escape(paper.where)), Field("Id", f"`{paper.paper_id}`")]
    if paper.authors:
        fields.append(Field("Authors", escape(clip(paper.authors, FIELD_VALUE - 50))))
    if paper.venue:
        fields.append(Field("Venue", escape(paper.venue)))
    links = [u for u in (paper.url, *paper.links) if u]
    if links:
        fields.append(Field("Links", "\n".join(dict.fromkeys(links))))
    url = paper.url if paper.url.startswith(("http://", "https://")) and len(paper.url) <= 2000 else ""
    return paginate(build_cards(title=title, description=escape(paper.abstract), fields=fields, url=url,
                                colour=COLOUR_INFO))


@dataclass(frozen=True)
class AboutInfo:
    papers: int
    chunks: int
    sources: Sequence[str]
    model: str
    llm: str | None  # model name when an LLM is configured


def about_pages(info: AboutInfo) -> list[Page]:
    sources = ", ".join(escape(s) for s in info.sources) or "none yet"
    fields = [
        Field("Papers", f"{info.papers} ({info.chunks} passages)"),
        Field("Sources", sources),
        Field("Embedding model", escape(info.model)),
        Field("Language model", escape(info.llm) if info.llm else bot_messages.ABOUT_NO_LLM),
        Field("How to use", bot_messages.ABOUT_USAGE),
    ]
    return paginate(build_cards(title=bot_messages.ABOUT_TITLE, description=bot_messages.ABOUT_INTRO, fields=fields,
                                colour=COLOUR_INFO))


# -- autocomplete ---------------------------------------------------------------------------


def paper_choices(papers: Sequence[Paper], typed: str) -> list[tuple[str, str]]:
    """(name, value) pairs for `/paper` autocomplete: label/id/title matches, best first, at most 25."""
    needle = typed.strip().lower()
    scored: list[tuple[int, int, Paper]] = []
    for i, p in enumerate(papers):
        label, pid, title = p.label.lower(), p.paper_id.lower(), p.title.lower()
        if not needle:
            rank = 3
        elif needle in (label, pid):
            rank = 0
        elif label.startswith(needle) or pid.startswith(needle):
            rank = 1
        elif needle in label or needle in pid or needle in title:
            rank = 2
        else:
            continue
        scored.append((rank, i, p))
    scored.sort(key=lambda t: (t[0], t[1]))
    out = []
    for _, _, p in scored[:CHOICES]:
        name = clip(f"{p.label} — {p.title or p.where}", CHOICE_NAME)
        out.append((name, p.paper_id[:CHOICE_VALUE]))
    return out


# -- adapters ------------------------------------------------------------------------------


def to_embed(card: Card) -> discord.Embed:
    embed = discord.Embed(title=card.title or None, description=card.description or None, url=card.url or None,
                          colour=card.colour)
    for f in card.fields:
        embed.add_field(name=f.name, value=f.value, inline=False)
    if card.footer:
        embed.set_footer(text=card.footer)
    return embed
