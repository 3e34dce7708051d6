"""/library: a server's own papers, added from chat (retrieval/server_library.py keeps and scopes them).

`/library add` takes an attached paper list in any format `paperbot ingest` reads and ingests it in the
background; one message, edited in place, says how far it is (papers read, chunks embedded, time left) and
ends with the summary (added, updated, records skipped, fields ignored). `/library list` names the uploads,
who added them and when; `/library remove` takes one out; `/library dms` opens the library to its members' DMs
(off by default). Adding, removing and `dms` need Manage Server or the library role (bot/app/access.py).
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from datetime import datetime, timezone

import discord
from discord import app_commands

from bot.app import embeds, markdown
from bot.app import replies as bot_messages
from bot.app.access import library_editors, lookup_limited
from bot.app.seam import bot_of
from bot.app.sending import NO_MENTIONS, respond
from ingest.pipeline import IngestSummary
from paperbot.errors import IngestRunningError, PaperbotError, StoreUnavailableError
from paperbot.language import message_language
from retrieval.server_library import NAME_CHARS, Upload, UploadError, shown_name

log = logging.getLogger(__name__)

SUMMARY_NOTES = 6  # notes of an ingest shown under its summary; the log has the rest
PROGRESS_EVERY = 3.0  # seconds between two edits of an upload's progress message (Discord's edit rate limits)
EDIT_FOR = 14 * 60.0  # an interaction's message can be edited for 15 minutes; later, the result is a new message


def summary_text(summary: IngestSummary) -> str:
    """An ingest's summary line and the first of its notes (a folder's in one line each), made inert."""
    notes = summary.notes()
    lines = [summary.line(), *(f"• {markdown.escape(n)}" for n in notes[:SUMMARY_NOTES])]
    if len(notes) > SUMMARY_NOTES:
        lines.append(f"• … {len(notes) - SUMMARY_NOTES} more (the log has them all)")
    return "\n".join(lines)


def _lang(interaction: discord.Interaction) -> str:
    return message_language(None, str(interaction.locale))


class UploadProgress:
    """An upload's progress as the ingest reports it (from its worker thread), and the line that shows it."""

    def __init__(self, name: str, lang: str) -> None:
        self.name, self.lang = name, lang
        self._lock = threading.Lock()
        self._done = self._total = 0
        self._first: tuple[float, int] | None = None  # when embedding started, and what was done then

    def __call__(self, done: int, total: int) -> None:
        with self._lock:
            if self._first is None:
                self._first = (time.monotonic(), done)
            self._done, self._total = done, total

    def line(self) -> str:
        with self._lock:
            done, total, first = self._done, self._total, self._first
        if not total:
            return bot_messages.text("LIBRARY_READING", self.lang, file=self.name)
        eta = ""
        if first is not None and done > first[1]:
            rate = (done - first[1]) / max(time.monotonic() - first[0], 1e-6)
            eta = bot_messages.text("LIBRARY_ETA", self.lang, seconds=math.ceil((total - done) / rate))
        return bot_messages.text("LIBRARY_EMBEDDING", self.lang, file=self.name, done=done, total=total, eta=eta)


library = app_commands.Group(name="library", description="This server's own papers: add, list, remove.",
                             allowed_contexts=app_commands.AppCommandContext(guild=True, dm_channel=False, private_channel=False),
                             allowed_installs=app_commands.AppInstallationType(guild=True, user=False))


@library.command(name="add", description="Add a paper list (JSON, JSONL, CSV or text) to this server's library.")
@app_commands.describe(file="A paper list in any format `paperbot ingest` reads")
@app_commands.check(library_editors)
async def library_add(interaction: discord.Interaction, file: discord.Attachment) -> None:
    bot = bot_of(interaction)
    lang = _lang(interaction)
    limit = bot.settings.discord.upload_max_mb * 2**20
    try:
        name = shown_name(file.filename)
    except UploadError as exc:
        await _private(interaction, bot_messages.text("LIBRARY_REFUSED", lang, file=_shown(file.filename),
                                                      problem=markdown.escape(exc.problem)))
        return
    if file.size > limit:  # refused before anything is downloaded
        await _private(interaction, bot_messages.text("LIBRARY_TOO_LARGE", lang, file=markdown.escape(name),
                                                      size=_mb(file.size), limit=_mb(limit)))
        return
    await interaction.response.send_message(bot_messages.text("LIBRARY_READING", lang, file=markdown.escape(name)),
                                            allowed_mentions=NO_MENTIONS)
    started = time.monotonic()
    progress = UploadProgress(markdown.escape(name), lang)
    try:
        data = await file.read()
        upload = Upload(library=str(interaction.guild_id), filename=file.filename, data=data)
        reporter = asyncio.ensure_future(_report(interaction, progress, started))
        try:
            summary = await bot.add_upload(upload, interaction.user.id, progress)
        finally:
            reporter.cancel()
            await asyncio.gather(reporter, return_exceptions=True)
        text = bot_messages.text("LIBRARY_ADDED", lang, file=markdown.escape(name), summary=summary_text(summary))
    except UploadError as exc:
        text = bot_messages.text("LIBRARY_REFUSED", lang, file=markdown.escape(name),
                                 problem=markdown.escape(_problem(exc)))
    except IngestRunningError:
        text = bot_messages.text("LIBRARY_BUSY", lang)
    except StoreUnavailableError:  # the store went away part-way: what was written is kept, the rest is not
        log.warning("library %s: %s stopped part-way: the store is unavailable", interaction.guild_id, name,
                    exc_info=True)
        text = bot_messages.text("LIBRARY_INTERRUPTED", lang, file=markdown.escape(name))
    except PaperbotError as exc:  # refused by the store before writing (a model mismatch, a locked store)
        log.warning("library %s: %s not added: %s", interaction.guild_id, name, exc)  # paths: the log only
        text = bot_messages.text("LIBRARY_STORE_FAILED", lang, file=markdown.escape(name))
    except discord.HTTPException:
        log.warning("library %s: %s could not be downloaded", interaction.guild_id, name, exc_info=True)
        text = bot_messages.text("LIBRARY_NOT_DOWNLOADED", lang, file=markdown.escape(name))
    await _finish(interaction, text, started)


@library.command(name="list", description="The papers this server has added, who added them and when.")
@app_commands.check(lookup_limited)
async def library_list(interaction: discord.Interaction) -> None:
    bot = bot_of(interaction)
    lang = _lang(interaction)
    records, counts = await bot.uploads(str(interaction.guild_id))
    lines = []
    for r in records:
        day = datetime.fromtimestamp(r.added_at, tz=timezone.utc).strftime("%Y-%m-%d")
        lines.append(bot_messages.text("LIBRARY_LINE", lang, file=markdown.escape(r.name), papers=counts.get(r.name, 0),
                                       user=f"<@{int(r.user_id)}>" if r.user_id.isdigit() else "?", day=day))
    recorded = {r.name for r in records}
    for name in sorted(set(counts) - recorded):  # stored by an upload that stopped part-way
        lines.append(bot_messages.text("LIBRARY_LINE", lang, file=markdown.escape(name), papers=counts[name],
                                       user="?", day="?"))
    if not lines:
        await respond(interaction, embeds.text_pages(bot_messages.text("LIBRARY_EMPTY", lang)), ephemeral=True)
        return
    heading = bot_messages.text("LIBRARY_HEADING", lang)
    await respond(interaction, embeds.text_pages(f"**{heading}**\n" + "\n".join(lines)), ephemeral=True)


@library.command(name="remove", description="Remove one upload and its papers from this server's library.")
@app_commands.describe(source="Start typing the name of an upload")
@app_commands.check(library_editors)
async def library_remove(interaction: discord.Interaction, source: app_commands.Range[str, 1, 100]) -> None:
    bot = bot_of(interaction)
    lang = _lang(interaction)
    guild = str(interaction.guild_id)
    records, counts = await bot.uploads(guild)
    if source not in counts and source not in {r.name for r in records}:
        await _private(interaction, bot_messages.text("LIBRARY_NOT_THERE", lang, file=_shown(source)))
        return
    await interaction.response.defer(thinking=True, ephemeral=True)
    try:
        removed = await bot.remove_upload(guild, source)
    except IngestRunningError:
        await respond(interaction, embeds.text_pages(bot_messages.text("LIBRARY_BUSY", lang)), ephemeral=True)
        return
    await respond(interaction, embeds.text_pages(bot_messages.text("LIBRARY_REMOVED", lang, file=_shown(source),
                                                                   papers=removed)), ephemeral=True)


@library.command(name="dms", description="Whether members' DMs with the bot search this server's library too.")
@app_commands.describe(allowed="Search this library from members' DMs (default: no)")
@app_commands.check(library_editors)
async def library_dms(interaction: discord.Interaction, allowed: bool) -> None:
    await bot_of(interaction).set_in_dms(str(interaction.guild_id), allowed)
    await _private(interaction, bot_messages.text("LIBRARY_IN_DMS_ON" if allowed else "LIBRARY_IN_DMS_OFF",
                                                  _lang(interaction)))


async def upload_autocomplete(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    if interaction.guild_id is None:
        return []
    records, counts = await bot_of(interaction).uploads(str(interaction.guild_id))
    names = list(dict.fromkeys([r.name for r in records] + sorted(counts)))
    typed = current.casefold()
    return [app_commands.Choice(name=n, value=n) for n in names if typed in n.casefold()][:25]


def wire_autocomplete() -> None:
    """Attach this module's autocomplete callbacks (bot/app/commands.py `register` calls it)."""
    library_remove.autocomplete("source")(upload_autocomplete)


def _shown(name: str) -> str:
    return markdown.escape(name[:NAME_CHARS])


def _mb(n: int) -> str:
    return f"{n / 2**20:.1f} MB"


def _problem(exc: UploadError) -> str:
    return f"line {exc.line}: {exc.problem}" if exc.line is not None else exc.problem


async def _private(interaction: discord.Interaction, text: str) -> None:
    await interaction.response.send_message(text, ephemeral=True, allowed_mentions=NO_MENTIONS)


async def _report(interaction: discord.Interaction, progress: UploadProgress, started: float) -> None:
    """Edit the progress line in place every PROGRESS_EVERY seconds while it changes (cancelled when done)."""
    shown = ""
    while time.monotonic() - started < EDIT_FOR:
        await asyncio.sleep(PROGRESS_EVERY)
        line = progress.line()
        if line != shown:
            shown = line
            await _edit(interaction, line)


async def _edit(interaction: discord.Interaction, text: str) -> None:
    try:
        await interaction.edit_original_response(content=text, allowed_mentions=NO_MENTIONS)
    except discord.HTTPException:  # a progress line that could not be shown: the next one may be
        log.debug("progress message not edited", exc_info=True)


async def _finish(interaction: discord.Interaction, text: str, started: float) -> None:
    """The result in the progress message, or (once that cannot be edited any more) in a new one."""
    if len(text) > markdown.CONTENT:
        text = text[:markdown.CONTENT - 1] + markdown.ELLIPSIS
    if time.monotonic() - started < EDIT_FOR:
        try:
            await interaction.edit_original_response(content=text, allowed_mentions=NO_MENTIONS)
            return
        except discord.HTTPException:
            log.info("upload result: the progress message could not be edited; sending a new one")
    channel = interaction.channel
    if isinstance(channel, discord.abc.Messageable):
        await channel.send(text, allowed_mentions=NO_MENTIONS)


COMMANDS = (library,)
