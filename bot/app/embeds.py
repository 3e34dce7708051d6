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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import discord

from bot import display as text
from bot.app import replies as bot_messages
from bot.app.identity import query_title, question_title
from bot.app.markdown import (
    CONTENT,
    DESCRIPTION,
    ELLIPSIS,
    EMBEDS,
    FIELD_NAME,
    FIELD_VALUE,
    FIELDS,
    FOOTER,
    TITLE,
    TOTAL,
    clip,
    defuse,
    escape,
    split_text,
)
from bot.display import plan_day, plan_slot_heading, search_notice, slot_line
from paperbot import bibtex, messages
from paperbot.language import message_language
from paperbot.records import Paper
from paperbot.text import readable, strip_control
from retrieval.plan import Plan
from retrieval.types import Answer, Hit, SearchResult, Similar

SNIPPET = 350  # search snippets are previews; /paper shows the whole abstract
ANSWER_CHARS = 1800  # an LLM answer's bound: room for the footer within one message's 2000 characters

COLOUR_ANSWER = 0x2B7A4B
COLOUR_ABSTAIN = 0x8A8F98
COLOUR_INFO = 0x3A6EA5


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


def _quote(text: str, lang: str = "en") -> str:
    if not text:
        return f"*{messages.text('ABSTRACT_PENDING', lang)}*"
    return f"\u201c{escape(readable(text))}\u201d"


def title_of(paper: Paper) -> str:
    """The paper's title as it reads (LaTeX rendered), or the derived label of an untitled abstract; escaped."""
    return escape(text.paper_title(paper))


link_of = text.paper_link


def detail_line(paper: Paper) -> str:
    """Where the paper comes from and what it is: file and position, type, track, area, link."""
    parts = [escape(v) for v in text.paper_details(paper)]
    url = link_of(paper)
    if url:
        parts.append(f"[{'OpenReview' if 'openreview.net' in url else 'paper'}]({url})")
    return " · ".join(parts)


def slot_lines(paper: Paper, lang: str = "en") -> str:
    """The paper's talks and posters, one line each ("Oral Session 2B · Tue 10:00 · Hall A"); "" without any."""
    return "\n".join(f"🗓 {escape(slot_line(s, lang))}" for s in paper.slots)


def _details(paper: Paper, lang: str) -> str:
    slots = slot_lines(paper, lang)
    return detail_line(paper) + (f"\n{slots}" if slots else "")


def _hit_field(rank: int, hit: Hit, snippet_limit: int | None = None, lang: str = "en") -> Field:
    snippet = hit.snippet if snippet_limit is None else clip(hit.snippet, snippet_limit)
    return Field(f"[{rank}] {title_of(hit.paper)} · score {hit.score:.2f}",
                 f"{_quote(snippet, lang)}\n{_details(hit.paper, lang)}")


def answer_pages(answer: Answer) -> list[Page]:
    """The answer text, then one field per cited paper with its verbatim sentence(s)."""
    title = question_title(answer.question)
    if answer.notice:
        description = escape(answer.notice)
        fields, colour = [], COLOUR_ABSTAIN
    elif answer.abstained:
        description = messages.text("ABSTAIN", answer.language)
        if answer.hits:
            description += "\n\n" + messages.text("ABSTAIN_CLOSEST", answer.language)
        fields = [_hit_field(n, h, SNIPPET, answer.language) for n, h in enumerate(answer.hits, start=1)]
        colour = COLOUR_ABSTAIN
    else:
        description = escape(readable(answer.text))
        lang = answer.language
        fields = [Field(f"[{c.n}] {title_of(c.paper)}", f"{_quote(c.quote, lang)}\n{_details(c.paper, lang)}")
                  for c in answer.citations]
        colour = COLOUR_ANSWER
    return paginate(build_cards(title=title, description=description, fields=fields, footer=footer_for(answer),
                                colour=colour))


def preview_pages(question: str, text: str) -> list[Page]:
    """What a streaming answer looks like while the model is still writing (one message)."""
    body = escape(text)
    if len(body) > DESCRIPTION - 2:
        body = ELLIPSIS + body[-(DESCRIPTION - 2):]
    card = Card(title=clip(question_title(question), TITLE), description=body or ELLIPSIS,
                footer=bot_messages.text("WRITING", message_language(question)), colour=COLOUR_INFO)
    return [Page(cards=(card,))]


def sources_pages(answer: Answer) -> list[Page]:
    """Every paper retrieval considered for the answer, with its best sentences."""
    lang = answer.language
    if not answer.hits:
        return text_pages(bot_messages.text("NO_MORE_SOURCES", lang))
    fields = [_hit_field(n, h, lang=lang) for n, h in enumerate(answer.hits, start=1)]
    return paginate(build_cards(title=clip(bot_messages.text("SOURCES_FOR", lang, question=escape(answer.question)),
                                           TITLE),
                                description=bot_messages.text("SOURCES_NOTE", lang), fields=fields,
                                colour=COLOUR_INFO))


# -- search, papers, about -------------------------------------------------------------------


def search_page(result: SearchResult, page: int, per_page: int, lang: str = "en") -> Page:
    """One screen of search results: label, score and a short snippet per paper."""
    total = len(result.hits)
    pages = max(1, -(-total // per_page))
    page = min(max(page, 0), pages - 1)
    shown = result.hits[page * per_page:(page + 1) * per_page]
    lines = []
    lines += [escape(line) for line in search_notice(result, lang)]
    if total:
        lines.append(bot_messages.text("PAPERS_RANGE", lang, first=page * per_page + 1,
                                       last=page * per_page + len(shown), total=total))
    elif not result.notice:
        lines.append(bot_messages.text("NO_RESULTS", lang))
    if result.filters:
        lines.append(bot_messages.text("FILTERED_BY", lang, filters=escape(result.filters.describe())))
    fields = [_hit_field(page * per_page + i, h, SNIPPET, lang) for i, h in enumerate(shown, start=1)]
    cards = build_cards(title=query_title(result.query), description="\n".join(lines), fields=fields,
                        footer=bot_messages.text("PAGE_FOOTER", lang, page=page + 1, pages=pages),
                        colour=COLOUR_INFO)
    return paginate(cards)[0]


def search_page_count(result: SearchResult, per_page: int) -> int:
    return max(1, -(-len(result.hits) // per_page))


def paper_pages(paper: Paper, lang: str = "en") -> list[Page]:
    """The whole abstract of one paper, with its metadata, when and where it is presented, links and source."""
    fields = []
    if paper.slots:
        fields.append(Field(bot_messages.text("SCHEDULE", lang), slot_lines(paper, lang)))
    if paper.authors:
        names = [f"{a} ({inst})" if inst else a
                 for a, inst in zip(paper.authors, paper.affiliations or ("",) * len(paper.authors))]
        fields.append(Field(bot_messages.text("FIELD_AUTHORS", lang), escape(clip(", ".join(names), FIELD_VALUE - 50))))
    kind = " · ".join(escape(v) for v in (paper.presentation, paper.track) if v)
    if kind:
        fields.append(Field(bot_messages.text("FIELD_TYPE", lang), kind))
    area = " → ".join(escape(v) for v in (paper.area, paper.subarea) if v)
    if area:
        fields.append(Field(bot_messages.text("FIELD_AREA", lang), area))
    if paper.keywords:
        keywords = escape(clip(", ".join(paper.keywords), FIELD_VALUE - 50))
        fields.append(Field(bot_messages.text("FIELD_KEYWORDS", lang), keywords))
    if paper.tldr:
        fields.append(Field("TL;DR", escape(clip(readable(paper.tldr), FIELD_VALUE - 50))))
    if paper.venue:
        fields.append(Field(bot_messages.text("FIELD_VENUE", lang), escape(paper.venue)))
    links = [u for u in map(text.safe_url, (paper.url, paper.pdf_url, paper.site_url, *paper.links)) if u]
    if links:
        fields.append(Field(bot_messages.text("FIELD_LINKS", lang), "\n".join(dict.fromkeys(links))))
    if paper.title_zh:
        fields.append(Field(bot_messages.text("TITLE_ZH", lang), escape(clip(paper.title_zh, FIELD_VALUE - 50))))
    fields.append(Field(bot_messages.text("BIBTEX", lang), bibtex_block(paper)))
    fields.append(Field(bot_messages.text("FIELD_DETAILS", lang), f"{escape(paper.where)} · `{paper.paper_id}`"))
    description = (escape(readable(paper.abstract)) if paper.abstract
                   else f"*{messages.text('ABSTRACT_PENDING', lang)}*")
    return paginate(build_cards(title=title_of(paper), description=description, fields=fields, url=link_of(paper),
                                colour=COLOUR_INFO))


def bibtex_block(paper: Paper) -> str:
    """The paper's BibTeX (the source's, or generated) as a code block that fits one field and cannot be
    closed early by the text inside it."""
    body = re.sub(r"`(?=`)", "`\u200b", strip_control(bibtex.entry(paper)))  # no two backticks in a row
    body = defuse(body)
    room = FIELD_VALUE - len("```bibtex\n\n```")
    if len(body) > room:
        body = body[: room - 1] + ELLIPSIS
    return f"```bibtex\n{body}\n```"


def paper_list_page(heading: str, papers: Sequence[Paper], page: int, per_page: int, note: str = "",
                    lang: str = "en") -> Page:
    """One screen of a list of papers (an author's, an area's): title, link, authors and type."""
    pages = max(1, -(-len(papers) // per_page))
    page = min(max(page, 0), pages - 1)
    shown = papers[page * per_page:(page + 1) * per_page]
    lines = [note] if note else []
    if papers:
        lines.append(bot_messages.text("PAPERS_RANGE", lang, first=page * per_page + 1,
                                       last=page * per_page + len(shown), total=len(papers)))
    for n, p in enumerate(shown, start=page * per_page + 1):
        url = link_of(p)
        title = f"[{title_of(p)}]({url})" if url else title_of(p)
        extra = " · ".join(escape(v) for v in (clip(p.authors_line, 120), p.presentation) if v)
        lines.append(f"**{n}.** {title}" + (f"\n{extra}" if extra else ""))
    cards = build_cards(title=clip(heading, TITLE), description="\n".join(lines),
                        footer=bot_messages.text("PAGE_FOOTER", lang, page=page + 1, pages=pages),
                        colour=COLOUR_INFO)
    return paginate(cards)[0]


def similar_pages(paper: Paper | None, similar: Sequence[Similar], heading: str, lang: str = "en") -> list[Page]:
    """The papers nearest to one paper (or a pasted abstract), best first, with the terms they share."""
    fields = []
    for n, s in enumerate(similar, start=1):
        shared = ", ".join(escape(t) for t in s.shared_terms) or "—"
        fields.append(Field(f"[{n}] {title_of(s.paper)} · score {s.score:.2f}",
                            f"{bot_messages.text('SHARED_TERMS', lang, terms=shared)}\n{detail_line(s.paper)}"))
    description = bot_messages.text("NO_RESULTS", lang) if not similar else ""
    return paginate(build_cards(title=clip(heading, TITLE), description=description, fields=fields,
                                url=link_of(paper) if paper is not None else "", colour=COLOUR_INFO))


# -- the conference week: plans and digests ---------------------------------------------------------


def plan_page_count(plan: Plan) -> int:
    return max(1, len(plan.days()))


def plan_page(plan: Plan, page: int, lang: str = "en") -> Page:
    """One day of a plan: each slot (time, session, place, clashes) with its papers, best first."""
    days = plan.days()
    pages = plan_page_count(plan)
    page = min(max(page, 0), pages - 1)
    lines: list[str] = text.plan_summary(plan, lang)
    shown = [s for s in plan.slots if days and s.day == days[page]]
    if shown:
        lines.append(f"**{escape(plan_day(shown[0], lang))}**")
    if plan.unscheduled and page == pages - 1:
        titles = "; ".join(title_of(p.paper) for p in plan.unscheduled)
        lines.append(messages.text("PLAN_UNSCHEDULED", lang, titles=clip(titles, 1000)))
    footer = bot_messages.text("PLAN_FOOTER", lang, page=page + 1, pages=pages)
    title = clip(messages.text("PLAN_HEADING", lang, query=escape(plan.query)), TITLE)
    # One message per day: with links while they fit, then without, then the day's last slots left to the
    # calendar file (which always has every slot).
    for links, kept in [(True, len(shown)), *((False, n) for n in range(len(shown), -1, -1))]:
        fields = [_plan_field(s, lang, links) for s in shown[:kept]]
        note = ([bot_messages.text("PLAN_MORE", lang, more=len(shown) - kept)] if kept < len(shown) else [])
        found = paginate(build_cards(title=title, description="\n".join(lines + note), fields=fields,
                                     colour=COLOUR_INFO, footer=footer))
        if len(found) == 1:
            break
    return found[0]


def _plan_field(s, lang: str, links: bool) -> Field:  # s: retrieval.plan.PlanSlot
    rows = []
    for p in s.papers:
        url = link_of(p.paper) if links else ""
        name = title_of(p.paper) if links else clip(title_of(p.paper), 90)
        number = f"#{escape(p.poster_position.lstrip('#'))} · " if p.poster_position else ""
        score = f" · score {p.score:.2f}" if p.score is not None else ""
        rows.append(f"{number}[{name}]({url}){score}" if url else f"{number}{name}{score}")
    return Field(escape(plan_slot_heading(s, lang)), "\n".join(rows))


def digest_pages(watch_id: int, topic: str, papers: Sequence[Paper], more: int, lang: str = "en") -> list[Page]:
    """A watch's digest: the new matching papers (title, link, authors, slots), best first."""
    lines = []
    for n, p in enumerate(papers, start=1):
        url = link_of(p)
        title = f"[{title_of(p)}]({url})" if url else title_of(p)
        extra = [escape(clip(p.authors_line, 120))] if p.authors else []
        slots = slot_lines(p, lang)
        lines.append("\n".join([f"**{n}.** {title}", *extra, *([slots] if slots else [])]))
    if more:
        # inside a code span, as typed: escapes would show there, and a backtick would end it
        command = defuse(" ".join(strip_control(topic).replace("`", "'").split()))
        lines.append(bot_messages.text("DIGEST_MORE", lang, more=more, topic=command))
    cards = build_cards(title=clip(bot_messages.text("DIGEST_TITLE", lang, topic=escape(topic)), TITLE),
                        description="\n\n".join(lines), colour=COLOUR_ANSWER,
                        footer=bot_messages.text("DIGEST_FOOTER", lang, id=watch_id))
    return paginate(cards)


@dataclass(frozen=True)
class AboutInfo:
    papers: int
    chunks: int
    sources: Sequence[str]
    model: str
    llm: str | None  # model name when an LLM is configured
    areas: Mapping[str, int] = field(default_factory=dict)  # papers per area
    types: Mapping[str, int] = field(default_factory=dict)  # papers per presentation type


def about_pages(info: AboutInfo, lang: str = "en") -> list[Page]:
    sources = ", ".join(escape(s) for s in info.sources) or "none yet"
    fields = [
        Field("Papers", f"{info.papers} ({info.chunks} passages)"),
        Field("Sources", sources),
    ]
    if info.types:
        fields.append(Field("Types", ", ".join(f"{escape(k)}: {v}" for k, v in info.types.items())))
    if info.areas:
        areas = [f"{escape(k)}: {v}" for k, v in info.areas.items()]
        fields.append(Field("Areas", clip("\n".join(areas), FIELD_VALUE * 3)))
    fields += [
        Field("Embedding model", escape(info.model)),
        Field("Language model", escape(info.llm) if info.llm else bot_messages.text("ABOUT_NO_LLM", lang)),
        Field("How to use", bot_messages.text("ABOUT_USAGE", lang)),
    ]
    return paginate(build_cards(title=bot_messages.ABOUT_TITLE, description=bot_messages.text("ABOUT_INTRO", lang),
                                fields=fields,
                                colour=COLOUR_INFO))


# -- adapters ------------------------------------------------------------------------------


def card_from(embed: discord.Embed) -> Card:
    """An embed the bot sent, as a Card again (to repost it)."""
    return Card(title=embed.title or "", description=embed.description or "",
                fields=tuple(Field(f.name or "\u200b", f.value or "\u200b") for f in embed.fields),
                footer=embed.footer.text or "", url=embed.url or "",
                colour=embed.colour.value if embed.colour is not None else None)


def to_embed(card: Card) -> discord.Embed:
    embed = discord.Embed(title=card.title or None, description=card.description or None, url=card.url or None,
                          colour=card.colour)
    for f in card.fields:
        embed.add_field(name=f.name, value=f.value, inline=False)
    if card.footer:
        embed.set_footer(text=card.footer)
    return embed
