"""The slash commands: each turns an interaction into one call to the core and the result into pages."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

import discord
from discord import app_commands

from bot.app import embeds, library_commands, week
from bot.app.library_commands import summary_text
from bot.app.identity import asked_in

from bot.app import markdown

from bot.app import autocomplete
from bot.app import replies as bot_messages
from bot.app.access import admins_only, interaction_reach, lookup_limited, rate_limited
from bot.app.seam import bot_of
from bot.app.sending import NO_MENTIONS, StreamingPreview, respond
from bot.app.views import (
    SEARCH_DEPTH,
    list_view,
    new_key,
    paper_view,
    search_view,
    view_for_answer,
)
from paperbot import messages
from paperbot.language import message_language
from paperbot.records import PRESENTATION_TYPES
from paperbot.text import clean_question, search_text
from retrieval.filters import Filters, no_match_notice

QUESTION_MAX = 1000
FILTER_MAX = 100
LIST_PAGE = 10  # papers per page of /author and /area
SIMILAR_K = 8
# A lookup still running this long after the command (a DM's member checks while Discord is slow) is
# acknowledged first: Discord fails an interaction not answered within 3 s.
ACK_WITHIN = 2.0
RELATED_MAX_BYTES = 64 * 1024
TYPE_CHOICES = [app_commands.Choice(name=t, value=t) for t in PRESENTATION_TYPES]
FILTER_HELP = {
    "author": "Only papers with this author (accents and case ignored)",
    "area": "Only papers in this area or subarea",
    "kind": "Only orals, spotlights or posters",
    "track": "Only papers of this track",
    "keyword": "Only papers with this keyword",
}


def _locale(interaction: discord.Interaction) -> str:
    """The language of fixed text for an interaction with no question to go by: its client's locale."""
    return message_language(None, str(interaction.locale))


def _filters(author: str | None, area: str | None, kind: app_commands.Choice[str] | None, track: str | None,
             keyword: str | None) -> Filters | None:
    return Filters(author=author or "", area=area or "", type=kind.value if kind else "", track=track or "",
                   keyword=keyword or "") or None


FilterText = app_commands.Range[str, 1, FILTER_MAX]


@app_commands.command(name="ask", description="Ask a question; the answer quotes the abstracts it relies on.")
@app_commands.describe(question="Your question about the papers", private="Only you see the answer (default: no)",
                       llm="Let the language model summarize, when one is configured (default: yes)", **FILTER_HELP)
@app_commands.rename(kind="type")
@app_commands.choices(kind=TYPE_CHOICES)
@app_commands.check(rate_limited)
async def ask(interaction: discord.Interaction, question: app_commands.Range[str, 1, QUESTION_MAX],
              private: bool = False, llm: bool = True, author: FilterText | None = None,
              area: FilterText | None = None, kind: app_commands.Choice[str] | None = None,
              track: FilterText | None = None, keyword: FilterText | None = None) -> None:
    await _answer(interaction, question, private=private, use_llm=llm,
                  filters=_filters(author, area, kind, track, keyword))


async def _answer(interaction: discord.Interaction, question: str, *, private: bool, use_llm: bool = True,
                  in_conversation: bool = True, filters: Filters | None = None) -> None:
    bot = bot_of(interaction)
    await interaction.response.defer(thinking=True, ephemeral=private)
    question = clean_question(question)
    lang = message_language(question, str(interaction.locale))
    if not search_text(question):  # nothing but chat noise, or only checking the bot is there ("test")
        await respond(interaction, embeds.text_pages(messages.text("EMPTY_QUESTION", lang)), ephemeral=private)
        return
    channel = interaction.channel
    history = (await bot.conversations.in_thread(channel)
               if in_conversation and isinstance(channel, discord.Thread) else [])  # /ask in the bot's thread
    preview = StreamingPreview(question, interaction=interaction) if use_llm else None
    try:
        answer = await bot.answer(question, preview, history, filters, reach=await interaction_reach(interaction),
                                  use_llm=use_llm, language=lang)
    finally:
        if preview is not None:
            await preview.close()
    thread = not private and interaction.guild is not None and isinstance(
        interaction.channel, (discord.TextChannel, discord.ForumChannel))
    await respond(interaction, embeds.answer_pages(answer), ephemeral=private,
                  view=view_for_answer(bot, answer, ephemeral=private, thread=thread))


@app_commands.context_menu(name=bot_messages.CONTEXT_MENU)
@app_commands.check(rate_limited)
async def ask_about_message(interaction: discord.Interaction, message: discord.Message) -> None:
    """Right-click a message → Apps → Ask paperbot: its text as a question, answered privately (shareable)."""
    question = clean_question(message_text(message))[:QUESTION_MAX]
    if not question:
        await interaction.response.send_message(bot_messages.text("EMPTY_MESSAGE", _locale(interaction)),
                                                ephemeral=True, allowed_mentions=NO_MENTIONS)
        return
    await _answer(interaction, question, private=True, in_conversation=False)


def message_text(message: discord.Message) -> str:
    """What a message asks: its text, or for a message whose text is in its embeds (the bot's own answers and
    results, other bots' cards) what the bot's answer or result was asked for (bot/app/identity.py), else the
    embeds' text."""
    if message.content.strip():
        return message.content
    asked = asked_in(message)
    if asked:
        return asked
    parts = []
    for embed in message.embeds:
        parts += [embed.title or "", embed.description or ""]
    return markdown.unescape(" ".join(p for p in parts if p.strip()))


@app_commands.command(name="search", description="Find papers for a query (title, score, snippet, link).")
@app_commands.describe(query="What to look for", k="Papers per page (default 5)", **FILTER_HELP)
@app_commands.rename(kind="type")
@app_commands.choices(kind=TYPE_CHOICES)
@app_commands.check(rate_limited)
async def search(interaction: discord.Interaction, query: app_commands.Range[str, 1, QUESTION_MAX],
                 k: app_commands.Range[int, 1, 10] = 5, author: FilterText | None = None,
                 area: FilterText | None = None, kind: app_commands.Choice[str] | None = None,
                 track: FilterText | None = None, keyword: FilterText | None = None) -> None:
    bot = bot_of(interaction)
    await interaction.response.defer(thinking=True)
    query = clean_question(query)
    if not search_text(query):
        await respond(interaction, embeds.text_pages(messages.text("EMPTY_QUESTION", _locale(interaction))))
        return
    result = await bot.search(query, SEARCH_DEPTH, _filters(author, area, kind, track, keyword),
                              reach=await interaction_reach(interaction))
    key = new_key()
    bot.remember(key, result)
    lang = message_language(query, str(interaction.locale))
    await respond(interaction, [embeds.search_page(result, 0, k, lang)],
                  view=search_view(key, result, 0, k, interaction.user.id, lang))


T = TypeVar("T")


async def _in_time(interaction: discord.Interaction, work: Awaitable[T]) -> T:
    """`work`'s result; the interaction is deferred first when it takes longer than ACK_WITHIN."""
    task = asyncio.ensure_future(work)
    done, _ = await asyncio.wait({task}, timeout=ACK_WITHIN)
    if not done and not interaction.response.is_done():
        await interaction.response.defer(thinking=True)
    return await task


async def _not_found(interaction: discord.Interaction, query: str) -> None:
    note = bot_messages.text("PAPER_NOT_FOUND", _locale(interaction), query=f"“{markdown.escape(query)}”")
    await respond(interaction, embeds.text_pages(note), ephemeral=True)  # into the deferred response, if any


@app_commands.command(name="paper", description="The whole abstract of one paper.")
@app_commands.describe(paper="Start typing a label or id")
@app_commands.check(lookup_limited)
async def paper(interaction: discord.Interaction, paper: app_commands.Range[str, 1, 200]) -> None:
    async def lookup():
        return await bot_of(interaction).find_paper(paper, reach=await interaction_reach(interaction))

    record = await _in_time(interaction, lookup())
    if record is None:
        await _not_found(interaction, paper)
        return
    await respond(interaction, embeds.paper_pages(record, message_language(None, str(interaction.locale))),
                  view=paper_view(record.paper_id, message_language(None, str(interaction.locale))))


async def paper_autocomplete(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    found = await bot_of(interaction).paper_choices(current, reach=await interaction_reach(interaction))
    return [app_commands.Choice(name=name, value=value) for name, value in found]


def _values_autocomplete(field: str):
    """Autocomplete for a filter option from the corpus's own values (most common first)."""

    async def complete(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        found = await bot_of(interaction).value_choices(field, current, reach=await interaction_reach(interaction))
        return [app_commands.Choice(name=name, value=value) for name, value in autocomplete.value_choices(found)]

    return complete


async def _send_list(interaction: discord.Interaction, heading: str, filters: Filters) -> None:
    bot = bot_of(interaction)
    await interaction.response.defer(thinking=True)
    reach = await interaction_reach(interaction)
    papers = await bot.browse(filters, reach=reach)
    if not papers:
        notice = await asyncio.to_thread(no_match_notice, filters, await bot.papers(reach=reach))
        await respond(interaction, embeds.text_pages(markdown.escape(notice)))
        return
    key = new_key()
    bot.remember(key, (heading, papers))
    await respond(interaction, [embeds.paper_list_page(heading, papers, 0, LIST_PAGE, lang=_locale(interaction))],
                  view=list_view(key, len(papers), 0, LIST_PAGE, interaction.user.id,
                                 message_language(None, str(interaction.locale))))


@app_commands.command(name="author", description="The papers of one author.")
@app_commands.describe(author="Start typing a name (accents and case ignored)")
@app_commands.check(lookup_limited)
async def author(interaction: discord.Interaction, author: FilterText) -> None:
    heading = bot_messages.text("AUTHOR_HEADING", _locale(interaction), author=markdown.escape(author.strip()))
    await _send_list(interaction, heading, Filters(author=author))


@app_commands.command(name="area", description="The papers of one area, page by page.")
@app_commands.describe(area="Start typing an area or subarea")
@app_commands.check(lookup_limited)
async def area(interaction: discord.Interaction, area: FilterText) -> None:
    heading = bot_messages.text("AREA_HEADING", _locale(interaction), area=markdown.escape(area.strip()))
    await _send_list(interaction, heading, Filters(area=area))


@app_commands.command(name="similar", description="Papers like one paper, with the key terms they share.")
@app_commands.describe(paper="Start typing a title or id")
@app_commands.check(rate_limited)
async def similar(interaction: discord.Interaction, paper: app_commands.Range[str, 1, 200]) -> None:
    bot = bot_of(interaction)
    async def lookup():
        reach = await interaction_reach(interaction)
        return reach, await bot.find_paper(paper, reach=reach)

    reach, record = await _in_time(interaction, lookup())
    if record is None:
        await _not_found(interaction, paper)
        return
    if not interaction.response.is_done():
        await interaction.response.defer(thinking=True)
    found = await bot.similar(record.paper_id, SIMILAR_K, reach=reach) or []
    heading = bot_messages.text("SIMILAR_HEADING", _locale(interaction), title=embeds.title_of(record))
    await respond(interaction, embeds.similar_pages(record, found, heading, _locale(interaction)))


@app_commands.command(name="related", description="Papers closest to a text, e.g. your own project's abstract.")
@app_commands.describe(text="Paste an abstract", file="…or attach it as a .txt file")
@app_commands.check(rate_limited)
async def related(interaction: discord.Interaction, text: app_commands.Range[str, 1, 4000] | None = None,
                  file: discord.Attachment | None = None) -> None:
    bot = bot_of(interaction)
    body = (text or "").strip()
    if file is not None:
        kind = (file.content_type or "text/plain").split(";")[0].strip().lower()
        if file.size > RELATED_MAX_BYTES or not kind.startswith("text/"):  # refused before anything is read
            note = bot_messages.text("RELATED_BAD_FILE", _locale(interaction), kb=RELATED_MAX_BYTES // 1024)
            await interaction.response.send_message(note,
                                                    ephemeral=True, allowed_mentions=NO_MENTIONS)
            return
        await interaction.response.defer(thinking=True)
        try:
            body = (body + "\n" + (await file.read()).decode("utf-8-sig")).strip()
        except UnicodeDecodeError:
            note = bot_messages.text("RELATED_BAD_FILE", _locale(interaction), kb=RELATED_MAX_BYTES // 1024)
            await respond(interaction, embeds.text_pages(note), ephemeral=True)
            return
    elif body:
        await interaction.response.defer(thinking=True)
    if not body:
        if interaction.response.is_done():
            note = bot_messages.text("RELATED_EMPTY", _locale(interaction))
            await respond(interaction, embeds.text_pages(note), ephemeral=True)
        else:
            note = bot_messages.text("RELATED_EMPTY", _locale(interaction))
            await interaction.response.send_message(note, ephemeral=True,
                                                    allowed_mentions=NO_MENTIONS)
        return
    found = await bot.related(body, SIMILAR_K, reach=await interaction_reach(interaction))
    lang = message_language(body, str(interaction.locale))
    await respond(interaction, embeds.similar_pages(None, found, bot_messages.text("RELATED_HEADING", lang), lang))


@app_commands.command(name="about", description="What this bot knows and how to use it.")
async def about(interaction: discord.Interaction) -> None:
    bot = bot_of(interaction)
    await interaction.response.defer(thinking=True, ephemeral=True)  # the store may be slow: acknowledge first
    await respond(interaction, embeds.about_pages(await bot.about(reach=await interaction_reach(interaction)), _locale(interaction)), ephemeral=True)


@app_commands.command(name="reindex", description="Rebuild the paper index from the corpus (admins).")
@app_commands.allowed_contexts(guilds=True, dms=False, private_channels=False)
@app_commands.allowed_installs(guilds=True, users=False)
@app_commands.check(admins_only)
async def reindex(interaction: discord.Interaction) -> None:
    bot = bot_of(interaction)
    running = bot.reindex_running()
    if running == "elsewhere":
        note = bot_messages.text("REINDEX_RUNNING_ELSEWHERE", _locale(interaction))
        await interaction.response.send_message(note, ephemeral=True,
                                                allowed_mentions=NO_MENTIONS)
        return
    if running == "here":  # keep the promise: this admin hears the result of the rebuild that is running
        note = bot_messages.text("REINDEX_RUNNING", _locale(interaction))
        await interaction.response.send_message(note, ephemeral=True,
                                                allowed_mentions=NO_MENTIONS)
        summary = await bot.reindex()
        note = bot_messages.text("REINDEX_DONE", _locale(interaction), summary=summary_text(summary))
        await interaction.followup.send(note, ephemeral=True,
                                        allowed_mentions=NO_MENTIONS)
        return
    await interaction.response.defer(thinking=True, ephemeral=True)
    summary = await bot.reindex()
    note = bot_messages.text("REINDEX_DONE", _locale(interaction), summary=summary_text(summary))
    await respond(interaction, embeds.text_pages(note), ephemeral=True)


def _wire_autocomplete() -> None:
    """Autocomplete callbacks, attached when commands are registered (not as a side effect of importing)."""
    command: app_commands.Command[Any, ..., Any]
    for command in (ask, search):
        for name in ("author", "area", "track", "keyword"):
            command.autocomplete(name)(_values_autocomplete(name))
    author.autocomplete("author")(_values_autocomplete("author"))
    area.autocomplete("area")(_values_autocomplete("area"))
    paper.autocomplete("paper")(paper_autocomplete)
    similar.autocomplete("paper")(paper_autocomplete)
    week.wire_autocomplete()
    library_commands.wire_autocomplete()


def register(tree: app_commands.CommandTree) -> None:
    _wire_autocomplete()
    command: app_commands.Command[Any, ..., Any] | app_commands.Group | app_commands.ContextMenu
    for command in (ask, search, paper, author, area, similar, related, about, reindex, ask_about_message,
                    *week.COMMANDS, *library_commands.COMMANDS):
        tree.add_command(command)
