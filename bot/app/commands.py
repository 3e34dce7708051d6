"""The slash commands: each turns an interaction into one call to the core and the result into pages."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import discord
from discord import app_commands

from bot.app import embeds
from bot.app import messages as bot_messages
from bot.app.checks import admins_only, rate_limited
from bot.app.sending import NO_MENTIONS, StreamingPreview, respond
from bot.app.views import AnswerView, SearchPager
from paperbot import messages
from paperbot.language import message_language

if TYPE_CHECKING:
    from bot.app.client import PaperBot

SEARCH_DEPTH = 25  # papers fetched once per /search; the buttons page through them
QUESTION_MAX = 1000


def _bot(interaction: discord.Interaction) -> PaperBot:
    return interaction.client  # type: ignore[return-value]


@app_commands.command(name="ask", description="Ask a question; the answer quotes the abstracts it relies on.")
@app_commands.describe(question="Your question about the papers", private="Only you see the answer (default: no)",
                       llm="Let the language model summarize, when one is configured (default: yes)")
@app_commands.check(rate_limited)
async def ask(interaction: discord.Interaction, question: app_commands.Range[str, 1, QUESTION_MAX],
              private: bool = False, llm: bool = True) -> None:
    bot = _bot(interaction)
    await interaction.response.defer(thinking=True, ephemeral=private)
    question = question.strip()
    lang = message_language(question, str(interaction.locale))
    if not question:
        await respond(interaction, embeds.text_pages(messages.text("EMPTY_QUESTION", lang)), ephemeral=private)
        return
    preview = StreamingPreview(question, interaction=interaction) if llm else None
    try:
        answer = await bot.answer(question, preview, use_llm=llm, language=lang)
    finally:
        if preview is not None:
            await preview.close()
    await respond(interaction, embeds.answer_pages(answer), ephemeral=private,
                  view=AnswerView(answer, ephemeral=private))


@app_commands.command(name="search", description="Find papers for a query (label, score, snippet).")
@app_commands.describe(query="What to look for", k="Papers per page (default 5)")
@app_commands.check(rate_limited)
async def search(interaction: discord.Interaction, query: app_commands.Range[str, 1, QUESTION_MAX],
                 k: app_commands.Range[int, 1, 10] = 5) -> None:
    bot = _bot(interaction)
    await interaction.response.defer(thinking=True)
    result = await bot.search(query.strip(), SEARCH_DEPTH)
    pager = SearchPager(result, per_page=k)
    await respond(interaction, [pager.current()], view=pager if pager.pages > 1 else None)


@app_commands.command(name="paper", description="The whole abstract of one paper.")
@app_commands.describe(paper="Start typing a label or id")
@app_commands.check(rate_limited)
async def paper(interaction: discord.Interaction, paper: app_commands.Range[str, 1, 200]) -> None:
    record = await _bot(interaction).find_paper(paper)
    if record is None:
        await interaction.response.send_message(bot_messages.PAPER_NOT_FOUND.format(query=f"“{embeds.escape(paper)}”"),
                                                ephemeral=True, allowed_mentions=NO_MENTIONS)
        return
    await respond(interaction, embeds.paper_pages(record))


@paper.autocomplete("paper")
async def paper_autocomplete(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    papers = await _bot(interaction).papers()
    return [app_commands.Choice(name=name, value=value) for name, value in embeds.paper_choices(papers, current)]


@app_commands.command(name="about", description="What this bot knows and how to use it.")
async def about(interaction: discord.Interaction) -> None:
    bot = _bot(interaction)
    await interaction.response.defer(thinking=True, ephemeral=True)  # the store may be slow: acknowledge first
    stats = await asyncio.to_thread(bot.library.stats)
    info = embeds.AboutInfo(papers=stats.papers, chunks=stats.chunks, sources=stats.sources, model=stats.model,
                         llm=bot.settings.llm.model if bot.llm is not None else None)
    await respond(interaction, embeds.about_pages(info), ephemeral=True)


@app_commands.command(name="reindex", description="Rebuild the paper index from the corpus (admins).")
@app_commands.allowed_contexts(guilds=True, dms=False, private_channels=False)
@app_commands.allowed_installs(guilds=True, users=False)
@app_commands.check(admins_only)
async def reindex(interaction: discord.Interaction) -> None:
    bot = _bot(interaction)
    if bot.reindexing or bot.library.ingest_running():
        await interaction.response.send_message(bot_messages.REINDEX_RUNNING, ephemeral=True,
                                                allowed_mentions=NO_MENTIONS)
        return
    bot.reindexing = True
    try:
        await interaction.response.defer(thinking=True, ephemeral=True)
        summary = await asyncio.to_thread(bot.library.ingest)
        bot.forget_papers()
    finally:
        bot.reindexing = False
    await respond(interaction, embeds.text_pages(bot_messages.REINDEX_DONE.format(summary=summary.line())), ephemeral=True)


def register(tree: app_commands.CommandTree) -> None:
    for command in (ask, search, paper, about, reindex):
        tree.add_command(command)
