"""Sending formatted pages to Discord: the only place that turns Pages into API calls.

Every send passes `AllowedMentions.none()`, whatever the client default is.
"""

from __future__ import annotations

import asyncio
import io
import logging
import time
from typing import Any
from collections.abc import Sequence

import discord

from bot.app.embeds import Page, preview_pages, to_embed

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()
STREAM_INTERVAL = 1.0  # seconds between edits of a streaming answer


def _kwargs(page: Page) -> dict[str, Any]:
    return {"content": page.content or None, "embeds": [to_embed(c) for c in page.cards],
            "allowed_mentions": NO_MENTIONS}


async def respond(interaction: discord.Interaction, pages: Sequence[Page], *, ephemeral: bool = False,
                  view: discord.ui.View | None = None, files: Sequence[tuple[str, bytes]] = ()) -> None:
    """Answer an interaction: the first page as the response (or into the deferred one), the rest as
    follow-ups; the view and the `files` ((name, bytes): a .ics, a .bib) go with the last message."""
    for i, page in enumerate(pages):
        last = i == len(pages) - 1
        extra: dict = {"view": view} if last and view is not None else {}
        attached = [discord.File(io.BytesIO(data), filename=name) for name, data in files] if last else []
        deferred = interaction.response.type is discord.InteractionResponseType.deferred_channel_message
        if attached:
            extra["attachments" if i == 0 and deferred else "files"] = attached
        if i == 0 and not interaction.response.is_done():
            await interaction.response.send_message(**_kwargs(page), ephemeral=ephemeral, **extra)
        elif i == 0 and deferred:
            await interaction.edit_original_response(**_kwargs(page), **extra)
        else:
            await interaction.followup.send(**_kwargs(page), ephemeral=ephemeral, wait=True, **extra)


async def reply(message: discord.Message, pages: Sequence[Page], *, view: discord.ui.View | None = None,
                first: discord.Message | None = None) -> None:
    """Answer a message (a DM or a mention) in the same channel; `first` is a preview to replace."""
    for i, page in enumerate(pages):
        extra: dict[str, Any] = {"view": view} if i == len(pages) - 1 and view is not None else {}
        if i == 0 and first is not None:
            await first.edit(**_kwargs(page), **extra)
        elif i == 0:
            await message.reply(**_kwargs(page), mention_author=False, **extra)
        else:
            await message.channel.send(**_kwargs(page), **extra)


class StreamingPreview:
    """Shows a streaming answer as it is written, editing one message at most once per second.

    `on_text` takes the whole text so far: the preview shows exactly that, never a concatenation.
    From `answer_question` it is checked, redacted text that only grows (retrieval/checks.py),
    so nothing a preview shows is withdrawn by the final answer. It can be called or awaited.
    Edits run in the background and never delay the writer.
    """

    def __init__(self, question: str, interaction: discord.Interaction | None = None,
                 message: discord.Message | None = None, interval: float | None = None) -> None:
        self.question = question
        self.interaction = interaction
        self.message = message  # the message being answered (DM or mention)
        self.sent: discord.Message | None = None  # our preview reply, for messages
        self.interval = STREAM_INTERVAL if interval is None else interval  # read when made: tests shorten it
        self.text = ""
        self._last_edit = 0.0
        self._task: asyncio.Task | None = None
        self._sending = False  # a request is in flight: Discord will act on it even if we stop waiting
        self._closed = False

    def on_text(self, text: str):
        self.text = text
        if not self._closed and (self._task is None or self._task.done()):
            self._task = asyncio.get_running_loop().create_task(self._flush(), name="paperbot-stream-edit")
        done = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    async def _flush(self) -> None:
        wait = self._last_edit + self.interval - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        if self._closed:
            return
        self._last_edit = time.monotonic()
        page = preview_pages(self.question, self.text)[0]
        self._sending = True
        try:
            if self.interaction is not None:
                await self.interaction.edit_original_response(**_kwargs(page))
            elif self.message is not None and self.sent is None:
                self.sent = await self.message.reply(**_kwargs(page), mention_author=False)
            elif self.sent is not None:
                await self.sent.edit(**_kwargs(page))
        except discord.HTTPException:
            log.warning("could not update a streaming answer", exc_info=True)
        finally:
            self._sending = False

    async def close(self) -> None:
        """Stop editing, so the final answer lands last.

        An edit still waiting for its turn is cancelled; a request already sent is awaited, so
        a preview message Discord has created is known (`sent`) and replaced, never left behind.
        """
        self._closed = True
        task = self._task
        if task is None or task.done():
            return
        if not self._sending:
            task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            if not task.cancelled():
                raise
