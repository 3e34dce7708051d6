"""Buttons under answers and search results."""

from __future__ import annotations

from typing import Any

import discord

from bot.app import embeds, messages
from bot.app.errors import report_interaction_error
from bot.app.sending import NO_MENTIONS, respond
from paperbot.records import Paper
from retrieval.types import Answer, SearchResult

VIEW_TIMEOUT = 15 * 60.0  # interaction tokens (and so ephemeral messages) last 15 minutes


class _View(discord.ui.View):
    async def on_error(self, interaction: discord.Interaction, error: Exception, item: discord.ui.Item[Any]) -> None:
        await report_interaction_error(interaction, error)


class AnswerView(_View):
    """"More sources" under every answer; "Share in channel" under private ones."""

    def __init__(self, answer: Answer, *, ephemeral: bool) -> None:
        super().__init__(timeout=VIEW_TIMEOUT)
        self.answer = answer
        self.shared = False
        if not answer.hits:
            self.remove_item(self.more_sources)
        if not ephemeral:
            self.remove_item(self.share)

    @discord.ui.button(label="More sources", style=discord.ButtonStyle.secondary)
    async def more_sources(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        await respond(interaction, embeds.sources_pages(self.answer), ephemeral=True)

    @discord.ui.button(label="Share in channel", style=discord.ButtonStyle.primary)
    async def share(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        if self.shared:
            await interaction.response.send_message(messages.ALREADY_SHARED, ephemeral=True,
                                                    allowed_mentions=NO_MENTIONS)
            return
        self.shared = True
        pages = embeds.answer_pages(self.answer)
        by = embeds.escape(messages.SHARED_BY.format(user=interaction.user.display_name))
        pages[0] = embeds.Page(content=by, cards=pages[0].cards)
        await respond(interaction, pages, ephemeral=False, view=AnswerView(self.answer, ephemeral=False))


class SearchPager(_View):
    """Previous / Next through the papers of one search."""

    def __init__(self, result: SearchResult, per_page: int, page: int = 0) -> None:
        super().__init__(timeout=VIEW_TIMEOUT)
        self.result = result
        self.per_page = per_page
        self.page = page
        self._sync()

    @property
    def pages(self) -> int:
        return embeds.search_page_count(self.result, self.per_page)

    def _sync(self) -> None:
        self.previous.disabled = self.page <= 0
        self.next.disabled = self.page >= self.pages - 1

    def current(self) -> embeds.Page:
        return embeds.search_page(self.result, self.page, self.per_page)

    async def _show(self, interaction: discord.Interaction, page: int) -> None:
        self.page = min(max(page, 0), self.pages - 1)
        self._sync()
        current = self.current()
        await interaction.response.edit_message(embeds=[embeds.to_embed(c) for c in current.cards], view=self,
                                                allowed_mentions=NO_MENTIONS)

    @discord.ui.button(label="Previous", style=discord.ButtonStyle.secondary)
    async def previous(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        await self._show(interaction, self.page - 1)

    @discord.ui.button(label="Next", style=discord.ButtonStyle.secondary)
    async def next(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        await self._show(interaction, self.page + 1)


class PaperListPager(_View):
    """Previous / Next through a list of papers (an author's, an area's)."""

    def __init__(self, heading: str, papers: list[Paper], per_page: int, page: int = 0) -> None:
        super().__init__(timeout=VIEW_TIMEOUT)
        self.heading = heading
        self.papers = papers
        self.per_page = per_page
        self.page = page
        self._sync()

    @property
    def pages(self) -> int:
        return max(1, -(-len(self.papers) // self.per_page))

    def _sync(self) -> None:
        self.previous.disabled = self.page <= 0
        self.next.disabled = self.page >= self.pages - 1

    def current(self) -> embeds.Page:
        return embeds.paper_list_page(self.heading, self.papers, self.page, self.per_page)

    async def _show(self, interaction: discord.Interaction, page: int) -> None:
        self.page = min(max(page, 0), self.pages - 1)
        self._sync()
        await interaction.response.edit_message(embeds=[embeds.to_embed(c) for c in self.current().cards], view=self,
                                                allowed_mentions=NO_MENTIONS)

    @discord.ui.button(label="Previous", style=discord.ButtonStyle.secondary)
    async def previous(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        await self._show(interaction, self.page - 1)

    @discord.ui.button(label="Next", style=discord.ButtonStyle.secondary)
    async def next(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        await self._show(interaction, self.page + 1)
