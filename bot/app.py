"""The Discord bot: a thin adapter from interactions and messages to the core.

`PaperBot` owns the Library (and the LLM client when one is configured): it opens
them in `setup_hook` and closes them in `close`. Commands live in `bot.commands`,
formatting in `bot.format`, sending in `bot.replies`; everything slow runs in a
worker thread behind a semaphore, so the event loop only ever waits.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import sys
import time
from dataclasses import replace

import discord
from discord import app_commands

from bot import format as fmt
from bot.guard import RateLimiter, guild_allowed
from bot.replies import NO_MENTIONS, StreamingPreview, reply
from bot.views import AnswerView
from paperbot import messages
from paperbot.errors import EmptyCorpusError, PaperbotError, StoreUnavailableError
from paperbot.settings import Settings
from retrieval.types import Answer, PaperRecord

log = logging.getLogger(__name__)

_TOKEN_SHAPE = re.compile(r"^[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{20,}$")
EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


# -- expected refusals (raised by checks, turned into friendly text by the one handler) ------------


class RateLimited(app_commands.CheckFailure):
    def __init__(self, retry_after: float) -> None:
        self.retry_after = retry_after
        super().__init__(messages.RATE_LIMITED.format(seconds=max(1, math.ceil(retry_after))))


class NotAdmin(app_commands.CheckFailure):
    pass


class GuildNotAllowed(app_commands.CheckFailure):
    pass


class PaperTree(app_commands.CommandTree):
    """Refuses servers outside the allowlist, and routes every command error to the bot."""

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        bot: PaperBot = self.client  # type: ignore[assignment]
        if guild_allowed(interaction.guild_id, bot.settings.discord.guild_allowlist):
            return True
        if interaction.type is discord.InteractionType.application_command:
            raise GuildNotAllowed(messages.GUILD_NOT_ALLOWED)
        return False

    async def on_error(self, interaction: discord.Interaction, error: app_commands.AppCommandError) -> None:
        bot: PaperBot = self.client  # type: ignore[assignment]
        await bot.report_interaction_error(interaction, error)


class _NoVoiceWarnings(logging.Filter):
    """The bot never joins voice channels; discord.py's missing-voice-library warnings are noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "voice will NOT be supported" not in record.getMessage()


_NO_VOICE = _NoVoiceWarnings()


class PaperBot(discord.Client):
    def __init__(self, settings: Settings, *, library=None, llm=None, sync_commands: bool = False) -> None:
        logging.getLogger("discord.client").addFilter(_NO_VOICE)  # same object: added once
        # Default intents: guilds, guild messages, DMs. Mentions and DMs carry their text without the
        # privileged message-content intent.
        super().__init__(intents=discord.Intents.default(), allowed_mentions=NO_MENTIONS)
        self.settings = settings
        self.library = library
        self.llm = llm
        self._owns_library = library is None
        self._http_client = None
        self.sync_commands = sync_commands
        ds = settings.discord
        self.limiter = RateLimiter(ds.rate_limit, ds.rate_window)
        self.work = asyncio.Semaphore(ds.max_concurrency)
        self.reindexing = False
        self._papers: list[PaperRecord] | None = None
        self.tree = PaperTree(
            self,
            allowed_contexts=app_commands.AppCommandContext(guild=True, dm_channel=True, private_channel=True),
            allowed_installs=app_commands.AppInstallationType(guild=True, user=True),
        )
        from bot.commands import register

        register(self.tree)

    # -- lifecycle -----------------------------------------------------------------------

    async def setup_hook(self) -> None:
        if self.library is None:
            from retrieval.library import Library

            self.library = await asyncio.to_thread(Library, self.settings)
            summary = await asyncio.to_thread(self.library.ensure_ingested)
            if summary is not None:
                log.info("indexed the corpus: %s", summary.line())
            await asyncio.to_thread(self.library.search, "warm up")  # load the model before the first question
        await self.papers()  # autocomplete answers from memory from the first keystroke
        if self.llm is None and self.settings.llm.enabled:
            self.llm = self._open_llm()
        if self.sync_commands:
            await self._sync_commands()

    def _open_llm(self):
        import httpx

        cfg = self.settings.llm
        try:
            from retrieval.llm import LLMClient
        except ImportError:
            log.warning("LLM_BASE_URL is set but this build has no LLM client; answers stay extractive")
            return None
        self._http_client = httpx.AsyncClient(timeout=httpx.Timeout(cfg.read_timeout, connect=cfg.connect_timeout))
        return LLMClient(cfg, self._http_client)

    async def _sync_commands(self) -> None:
        guild_id = self.settings.discord.guild_id
        if guild_id:
            guild = discord.Object(id=guild_id)
            self.tree.copy_global_to(guild=guild)
            synced = await self.tree.sync(guild=guild)
            log.info("synced %d commands to server %s (available now)", len(synced), guild_id)
        else:
            synced = await self.tree.sync()
            log.info("synced %d global commands (Discord may take up to an hour to show them)", len(synced))

    async def close(self) -> None:
        await super().close()
        if self._http_client is not None:
            await self._http_client.aclose()
            self._http_client = None
        if self._owns_library and self.library is not None:
            await asyncio.to_thread(self.library.close)
            self.library = None

    async def on_ready(self) -> None:
        log.info("logged in as %s (%s) in %d servers", self.user, getattr(self.user, "id", "?"), len(self.guilds))

    async def on_guild_join(self, guild: discord.Guild) -> None:
        if not guild_allowed(guild.id, self.settings.discord.guild_allowlist):
            log.warning("leaving server %s (%s): not in DISCORD_GUILD_ALLOWLIST", guild.name, guild.id)
            await guild.leave()

    # -- the core, off the event loop ---------------------------------------------------------

    async def answer(self, question: str, preview: StreamingPreview | None = None) -> Answer:
        """A cited answer; at most DISCORD_MAX_CONCURRENCY run at once, the rest wait their turn."""
        from retrieval.qa import answer_question

        start = time.perf_counter()
        async with self.work:
            answer = await answer_question(self.library, question, llm=self.llm,
                                           on_text=preview.on_text if preview is not None else None)
        if answer.latency_ms is None:
            answer = replace(answer, latency_ms=(time.perf_counter() - start) * 1000)
        return answer

    async def search(self, query: str, k: int):
        async with self.work:
            return await asyncio.to_thread(self.library.search, query, k)

    async def papers(self) -> list[PaperRecord]:
        """Every paper, cached for autocomplete; refreshed after a reindex."""
        if self._papers is None:
            self._papers = await asyncio.to_thread(self.library.papers)
        return self._papers

    def forget_papers(self) -> None:
        self._papers = None

    async def find_paper(self, typed: str) -> PaperRecord | None:
        papers = await self.papers()
        needle = typed.strip().lower()
        for p in papers:
            if p.paper_id.lower() == needle:
                return p
        for p in papers:
            if p.label.lower() == needle:
                return p
        choices = fmt.paper_choices(papers, typed)
        if choices:
            return next(p for p in papers if p.paper_id == choices[0][1])
        return None

    # -- direct messages and mentions ----------------------------------------------------------

    def question_in(self, message: discord.Message) -> str | None:
        """The question a message asks the bot, or None when it is not addressed to the bot."""
        if message.author.bot or self.user is None:
            return None
        if message.guild is None:
            return message.content.strip()
        if not any(u.id == self.user.id for u in message.mentions):
            return None
        if not guild_allowed(message.guild.id, self.settings.discord.guild_allowlist):
            return None
        return re.sub(rf"<@!?{self.user.id}>", " ", message.content).strip()

    async def on_message(self, message: discord.Message) -> None:
        question = self.question_in(message)
        if question is None:
            return
        if not question:
            await reply(message, fmt.text_pages(messages.EMPTY_QUESTION))
            return
        retry = self.limiter.hit(message.author.id)
        if retry is not None:
            await reply(message, fmt.text_pages(str(RateLimited(retry))))
            return
        preview = StreamingPreview(question, message=message)
        try:
            async with message.channel.typing():
                answer = await self.answer(question, preview)
        finally:
            await preview.close()
        await reply(message, fmt.answer_pages(answer), view=AnswerView(answer, ephemeral=False), first=preview.sent)

    # -- the one error handler -------------------------------------------------------------------

    def describe_error(self, error: BaseException, where: str) -> str:
        """The user's short message for `error`; the log gets the details."""
        if isinstance(error, app_commands.CommandInvokeError):
            error = error.original
        if isinstance(error, (RateLimited, NotAdmin, GuildNotAllowed)):
            log.info("refused %s: %s", where, error)
            return str(error)
        if isinstance(error, app_commands.CheckFailure):
            log.info("check failed for %s: %s", where, error)
            return messages.INTERNAL_ERROR
        if isinstance(error, StoreUnavailableError):
            log.warning("store unavailable during %s", where, exc_info=error)
            return messages.STORE_UNAVAILABLE
        if isinstance(error, EmptyCorpusError):
            log.warning("empty store during %s", where, exc_info=error)
            return messages.EMPTY_STORE
        if isinstance(error, PaperbotError):
            log.error("failed %s", where, exc_info=error)
            return messages.INTERNAL_ERROR
        log.error("unexpected error in %s", where, exc_info=error)
        return messages.INTERNAL_ERROR

    async def report_interaction_error(self, interaction: discord.Interaction, error: BaseException) -> None:
        name = interaction.command.qualified_name if interaction.command else (interaction.data or {}).get(
            "custom_id", "?")
        text = self.describe_error(error, f"/{name} by user {interaction.user.id}")
        if interaction.type is discord.InteractionType.autocomplete:
            return
        page = fmt.text_pages(text)[0]
        try:
            if not interaction.response.is_done():
                await interaction.response.send_message(page.content, ephemeral=True, allowed_mentions=NO_MENTIONS)
            elif interaction.response.type is discord.InteractionResponseType.deferred_channel_message:
                await interaction.edit_original_response(content=page.content, embeds=[], view=None,
                                                          allowed_mentions=NO_MENTIONS)
            else:
                await interaction.followup.send(page.content, ephemeral=True, allowed_mentions=NO_MENTIONS)
        except discord.HTTPException:
            log.warning("could not tell the user about an error (the interaction may have expired)", exc_info=True)

    async def on_error(self, event_method: str, /, *args, **kwargs) -> None:
        error = sys.exc_info()[1]
        text = self.describe_error(error, f"event {event_method}")
        message = args[0] if args else None
        if event_method in {"on_message", "message"} and isinstance(message, discord.Message):
            try:
                await reply(message, fmt.text_pages(text))
            except discord.HTTPException:
                log.warning("could not tell the user about an error", exc_info=True)


# -- entry point ---------------------------------------------------------------------------------


def check_token(token: str) -> str | None:
    """None when `token` looks like a bot token, else the message explaining what to do."""
    if not token:
        return messages.TOKEN_MISSING
    if not _TOKEN_SHAPE.match(token):
        return messages.TOKEN_MALFORMED
    return None


def run_bot(settings: Settings) -> int:
    """`paperbot run`: start the bot and block until it stops; returns the exit code."""
    token = str(settings.discord.token)
    if token.lower().startswith("bot "):
        token = token[4:].strip()
    problem = check_token(token)
    if problem:
        print(problem, file=sys.stderr)
        return EXIT_USAGE

    async def main() -> int:
        bot = PaperBot(settings, sync_commands=True)
        async with bot:
            try:
                await bot.start(token)
            except discord.LoginFailure:
                print(messages.LOGIN_FAILED, file=sys.stderr)
                return EXIT_USAGE
        return EXIT_OK

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        return EXIT_OK
