"""The Discord client: a thin adapter from interactions and messages to the core.

`PaperBot` receives its services (library, LLM client) from bot/runtime.py and
never builds or closes them. Commands live in commands.py, checks in checks.py,
embeds in embeds.py, sending in sending.py, error reporting in errors.py.
Every call into the core runs in a worker thread behind one of the bot's two
lanes (bot/app/lanes.py: work, lookups, ingest), so the event loop only ever waits.

Embedding the bot in another program, or in a test:

    async with open_services(settings) as services:
        bot = PaperBot(services)
        await bot.start(token)       # or drive it with bot/harness
"""

from __future__ import annotations

import asyncio
import logging
import re
import sys
import time
from collections.abc import Callable
from collections import Counter, OrderedDict
from dataclasses import replace
from typing import TYPE_CHECKING

import discord
from discord import app_commands

from bot.app import embeds

from bot.app import autocomplete
from bot.app import replies as bot_messages
from bot.app.access import RateLimited, reach_of, server_allowed
from bot.app.commands import register
from bot.app.conversation import Conversations
from bot.app.failures import PermissionWarnings, report_interaction_error, report_message_error
from bot.app.guard import RateLimiter, guild_allowed
from bot.app.sending import NO_MENTIONS, StreamingPreview, reply
from bot.app.command_names import PaperTranslator
from bot.app.views import ITEMS, view_for_answer
from bot.app.lanes import INGEST, LOOKUP, WORK, core, lanes
from bot.app.watcher import Watcher
from bot.app.week import ITEMS as WEEK_ITEMS
from bot.runtime import Services
from bot.display import without_llm_prefix
from paperbot import messages
from paperbot.language import message_language
from paperbot.records import Paper, Reach
from paperbot.text import clean_question, search_text
from paperbot.userdata import Claim, UploadRecord, UserData, Watch
from retrieval.filters import Choices, Filters, facets
from retrieval.followup import Turn
from retrieval.plan import Plan, plan_for
from retrieval.qa import answer_question, search_follow_up
from retrieval.server_library import Upload, shown_name
from retrieval.types import Answer, SearchResult, Similar

if TYPE_CHECKING:
    from ingest.pipeline import IngestSummary, Progress

log = logging.getLogger(__name__)

PAPERS_RECHECK = 5.0  # seconds between checks that the cached paper list is still the store's
PAPERS_RELOAD_WAIT = 0.1  # seconds a lookup waits for a reload of the paper list before using the current one
LOOKUP_FACTOR = 6  # cheap lookups (/paper, buttons) allowed per question in the same window
MEMBERSHIP_KEPT = 600.0  # seconds a DM user's membership of a server (asked of Discord) is trusted
REACH_LISTS_KEPT = 64  # servers with a library of their own whose paper lists (and autocomplete) are kept
RESULTS_KEPT = 512  # answers and searches remembered for their buttons (older ones are rebuilt or refused)


class PaperTree(app_commands.CommandTree):
    """Refuses servers outside the allowlist, and routes every command error to the one handler."""

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        if self.client.stopping:  # type: ignore[attr-defined]  # only PaperBot makes a PaperTree
            await refuse_while_stopping(interaction)
            return False
        return server_allowed(interaction)

    async def on_error(self, interaction: discord.Interaction, error: app_commands.AppCommandError) -> None:
        await report_interaction_error(interaction, error)


class _NoVoiceWarnings(logging.Filter):
    """The bot never joins voice channels; discord.py's missing-voice-library warnings are noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "voice will NOT be supported" not in record.getMessage()


_NO_VOICE = _NoVoiceWarnings()


class PaperBot(discord.Client):
    def __init__(self, services: Services, *, sync_commands: bool = False, watch: bool = False) -> None:
        logging.getLogger("discord.client").addFilter(_NO_VOICE)  # same object: added once
        # Default intents: guilds, guild messages, DMs. Mentions and DMs carry their text without the
        # privileged message-content intent.
        ds = services.settings.discord
        shards: dict = {}
        if isinstance(self, discord.AutoShardedClient):  # ShardedPaperBot: the shards the settings name
            shards = {"shard_count": ds.shard_count, "shard_ids": list(ds.shard_ids) or None}
        super().__init__(intents=discord.Intents.default(), allowed_mentions=NO_MENTIONS, **shards)
        self.services = services
        self.settings = services.settings
        self.library = services.library
        self.llm = services.llm
        self.sync_commands = sync_commands
        ds = self.settings.discord
        self.limiter = RateLimiter(ds.rate_limit, ds.rate_window)  # questions
        self.lookups = RateLimiter(ds.rate_limit * LOOKUP_FACTOR, ds.rate_window)  # /paper, buttons
        self.lanes = lanes(ds.max_concurrency)  # every core call waits for a slot of one (bot/app/lanes.py)
        self.stopping = False  # set on SIGTERM: answers in flight finish, new questions are refused
        self.permission_warnings = PermissionWarnings()
        self._reindex: asyncio.Future | None = None  # the running /reindex's summary, for those who wait
        self.conversations = Conversations(self)
        self._user_data: UserData | None = None  # saved papers and watches: opened in setup_hook
        self.watcher = Watcher(self)
        self.watch = watch  # check for new papers every watcher.poll seconds (`paperbot run`)
        self._watch_task: asyncio.Task | None = None
        self._background: set[asyncio.Task] = set()
        self._results: OrderedDict[str, Answer | SearchResult] = OrderedDict()
        self._shared: OrderedDict[int, None] = OrderedDict()
        self._papers: list[Paper] | None = None
        self._papers_version = ""
        self._papers_checked = 0.0
        self._papers_reload: asyncio.Task | None = None
        # Made from the paper list (facets, autocomplete indexes): name -> ((papers, value) made, (papers, task) making)
        self._derived: dict[str, tuple[tuple[list[Paper], object] | None, tuple[list[Paper], asyncio.Future] | None]] = {}
        self._reach_lists: dict[str, tuple[list[Paper], list[Paper]]] = {}
        self._members: dict[tuple[int, int], tuple[bool, float]] = {}  # (server, user) -> (member?, when asked)
        self.tree = PaperTree(
            self,
            allowed_contexts=app_commands.AppCommandContext(guild=True, dm_channel=True, private_channel=True),
            allowed_installs=app_commands.AppInstallationType(guild=True, user=True),
        )
        register(self.tree)

    # -- lifecycle -----------------------------------------------------------------------

    async def setup_hook(self) -> None:
        self.add_dynamic_items(*ITEMS, *WEEK_ITEMS)  # every button works after a restart, whatever message it is on
        await self.tree.set_translator(PaperTranslator())  # command names and descriptions in Chinese too
        await self.papers()  # autocomplete answers from memory from the first keystroke
        if self._user_data is None:
            self._user_data = await asyncio.to_thread(UserData, self.settings.user_db_target)
        await self.watcher.catch_up()  # papers an ingest added while the bot was down are queued for watches
        if self.watch:
            self._watch_task = asyncio.get_running_loop().create_task(self.watcher.loop(), name="paperbot-watches")
        if self.sync_commands and (not self.settings.discord.shard_ids or 0 in self.settings.discord.shard_ids):
            await self._sync_commands()  # once per deployment: by the process that runs shard 0

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
        if self._watch_task is not None:
            self._watch_task.cancel()
            self._watch_task = None
        await super().close()
        if self._user_data is not None:
            await asyncio.to_thread(self._user_data.close)

    def in_background(self, coro) -> asyncio.Task:
        """Run `coro` without waiting for it (kept referenced until it ends; errors are logged)."""
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background_done)
        return task

    def _background_done(self, task: asyncio.Task) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed", exc_info=task.exception())

    async def on_ready(self) -> None:
        shards = ""
        if isinstance(self, discord.AutoShardedClient):
            shards = f", shards {sorted(self.shards)} of {self.shard_count}"
        log.info("logged in as %s (%s) in %d servers%s", self.user, getattr(self.user, "id", "?"), len(self.guilds),
                 shards)

    async def on_guild_join(self, guild: discord.Guild) -> None:
        if not guild_allowed(guild.id, self.settings.discord.guild_allowlist):
            log.warning("leaving server %s (%s): not in DISCORD_GUILD_ALLOWLIST", guild.name, guild.id)
            await guild.leave()

    # -- the core, off the event loop ---------------------------------------------------------

    async def answer(self, question: str, preview: StreamingPreview | None = None,
                     history: list[Turn] | None = None, filters: Filters | None = None, *, reach: Reach,
                     use_llm: bool = True, language: str | None = None) -> Answer:
        """A cited answer; at most DISCORD_MAX_CONCURRENCY run at once, the rest wait their turn.

        `use_llm=False` answers extractively this once; `language` is that of the fixed text.
        """
        start = time.perf_counter()
        answer = await self._answer(question, preview, history, filters, reach, use_llm, language)
        if answer.latency_ms is None:
            answer = replace(answer, latency_ms=(time.perf_counter() - start) * 1000)
        return answer

    @core(WORK)
    async def _answer(self, question: str, preview: StreamingPreview | None, history: list[Turn] | None,
                      filters: Filters | None, reach: Reach, use_llm: bool, language: str | None) -> Answer:
        return await answer_question(self.library.seen_from(reach), question, llm=self.llm if use_llm else None,
                                     max_chars=embeds.ANSWER_CHARS, language=language,
                                     on_text=preview.on_text if preview is not None else None,
                                     history=history or (), filters=filters,
                                     rerank_timeout=self.settings.llm.rerank_budget)

    # -- admin work ---------------------------------------------------------------------------

    def reindex_running(self) -> str | None:
        """"here" while this bot's /reindex runs, "elsewhere" while another ingest holds the library, else None."""
        if self._reindex is not None:
            return "here"
        return "elsewhere" if self.library.ingest_running() else None

    async def reindex(self) -> IngestSummary:
        """Bring the index in line with the corpus, one rebuild at a time: a second caller waits for the
        running one and gets its summary. Watches hear of the new papers right after (in the background)."""
        if self._reindex is not None:
            return await asyncio.shield(self._reindex)
        done = self._reindex = asyncio.get_running_loop().create_future()
        try:
            summary = await self._ingest()
            log.info("reindex: %s", summary.line())
            for note in summary.notes():
                log.info("reindex: %s", note)
            self.forget_papers()
            self.in_background(self.watcher.run_once())  # digests of the new papers, without delaying the answer
            done.set_result(summary)
            return summary
        except Exception as exc:
            done.set_exception(exc)
            done.exception()  # those waiting see it; nobody waiting is fine too
            raise
        finally:
            if not done.done():
                done.cancel()
            self._reindex = None

    @core(INGEST)
    async def _ingest(self) -> IngestSummary:
        return await asyncio.to_thread(self.library.ingest)

    # -- server libraries (bot/app/library_commands.py) -----------------------------------------------------

    @core(INGEST)
    async def add_upload(self, upload: Upload, user_id: int, progress: Progress) -> IngestSummary:
        """Store a server's upload (one ingest at a time), then record who added it; watches hear of it."""
        ds = self.settings.discord
        summary = await asyncio.to_thread(self.library.add_upload, upload, max_bytes=ds.upload_max_mb * 2**20,
                                          max_papers=ds.upload_max_papers, progress=progress)
        name, papers = shown_name(upload.filename), summary.added + summary.updated + summary.unchanged
        await asyncio.to_thread(self.user_data.record_upload, upload.library, name, user_id, papers)
        log.info("library %s: %s uploaded by %s: %s", upload.library, name, user_id, summary.line())
        self.forget_papers()
        self.in_background(self.watcher.run_once())
        return summary

    @core(LOOKUP)
    async def uploads(self, library: str) -> tuple[list[UploadRecord], Counter[str]]:
        """A server's uploads as recorded (who, when) and the papers each holds in the store now."""
        records = await asyncio.to_thread(self.user_data.uploads, library)
        return records, await asyncio.to_thread(self.library.uploads, library)

    @core(INGEST)
    async def remove_upload(self, library: str, name: str) -> int:
        removed = await asyncio.to_thread(self.library.remove_upload, library, name)
        await asyncio.to_thread(self.user_data.forget_upload, library, name)
        log.info("library %s: %s removed (%d papers)", library, name, removed)
        self.forget_papers()
        return removed

    @core(LOOKUP)
    async def set_in_dms(self, library: str, allowed: bool) -> None:
        await asyncio.to_thread(self.user_data.set_in_dms, library, allowed)

    @core(LOOKUP)
    async def dm_reach(self, user_id: int) -> Reach:
        """What a DM sees: the program, and the libraries of the servers of the bot's that this user is a member
        of and whose admins opened theirs to DMs (`/library dms`; off by default)."""
        opened = await asyncio.to_thread(self.user_data.in_dms)
        servers = [g for g in self.guilds if str(g.id) in opened]
        return Reach.server(*[g.id for g in servers if await self._is_member(g, user_id)])

    async def _is_member(self, guild: discord.Guild, user_id: int) -> bool:
        """Whether the user is in `guild`: from the cache, else asked of Discord once per MEMBERSHIP_KEPT seconds
        (the bot has no members intent, so its cache holds few members)."""
        if guild.get_member(user_id) is not None:
            return True
        now = time.monotonic()
        known = self._members.get((guild.id, user_id))
        if known is not None and now - known[1] < MEMBERSHIP_KEPT:
            return known[0]
        try:
            await guild.fetch_member(user_id)
            member = True
        except discord.NotFound:
            member = False
        except discord.HTTPException:  # not known now: not a member for this question, asked again next time
            log.info("could not check whether user %s is in server %s", user_id, guild.id, exc_info=True)
            return False
        self._members[(guild.id, user_id)] = (member, now)
        while len(self._members) > RESULTS_KEPT * 8:
            self._members.pop(next(iter(self._members)))
        return member

    @core(WORK)
    async def about(self, *, reach: Reach) -> embeds.AboutInfo:
        """What /about shows: the corpus's size, sources, model and areas (the store may be slow: off the loop)."""
        stats = await asyncio.to_thread(self.library.stats, reach)
        return embeds.AboutInfo(papers=stats.papers, chunks=stats.chunks, sources=stats.sources, model=stats.model,
                                llm=self.settings.llm.model if self.llm is not None else None,
                                areas=stats.areas, types=stats.types)

    # -- questions ---------------------------------------------------------------------------

    @core(WORK)
    async def search(self, query: str, k: int, filters: Filters | None = None, *, reach: Reach) -> SearchResult:
        """/search: a Chinese query is searched in English (by the library); `result.query` says so."""
        return await asyncio.to_thread(self.library.search, query, k, filters, reach=reach)

    @core(WORK)
    async def similar(self, paper_id: str, k: int, *, reach: Reach) -> list[Similar] | None:
        return await asyncio.to_thread(self.library.similar, paper_id, k, reach)

    @core(WORK)
    async def related(self, text: str, k: int, *, reach: Reach) -> list[Similar]:
        return await asyncio.to_thread(self.library.related, text, k, reach)

    @core(WORK)
    async def browse(self, filters: Filters, *, reach: Reach) -> list[Paper]:
        """The papers passing `filters` (an author's, an area's), through the store's filter index."""
        return await asyncio.to_thread(self.library.browse, filters, reach)

    async def facets(self, reach: Reach) -> dict[str, Counter[str]]:
        """The corpus's authors, areas, types, tracks and keywords with paper counts (for autocomplete)."""
        return (await self._facet_cache(reach))[1]

    @core(LOOKUP)
    async def value_choices(self, field: str, typed: str, *, reach: Reach) -> list[str]:
        """Autocomplete for one filter field; computed off the event loop (a conference has thousands of authors)."""
        chooser = (await self._facet_cache(reach))[2][field]
        return await asyncio.to_thread(chooser, typed)

    async def _facet_cache(self, reach: Reach) -> tuple[list[Paper], dict[str, Counter[str]], dict[str, Choices]]:
        def build(papers: list[Paper]) -> tuple[list[Paper], dict[str, Counter[str]], dict[str, Choices]]:
            counts = facets(papers)
            return papers, counts, {name: Choices(c) for name, c in counts.items()}

        return await self._of_papers("facets", build, reach)

    @core(LOOKUP)
    async def paper_choices(self, typed: str, *, reach: Reach) -> list[tuple[str, str]]:
        """Paper autocomplete, (name, value) pairs; matched off the event loop over a per-list index."""
        chooser = await self._of_papers("paper_choices", autocomplete.PaperChoices, reach)
        return await asyncio.to_thread(chooser, typed)

    @core(LOOKUP)
    async def _of_papers(self, name: str, build, reach: Reach):
        """What `build(papers)` makes of the paper list `reach` sees, made in a thread once per list.

        While a new list's is being made, the previous one serves (after waiting at most
        PAPERS_RELOAD_WAIT), as for the paper list itself.
        """
        everything = await self.papers()
        papers = self._reached(everything, reach)
        if papers is not everything:  # a server with a library of its own: its own lists
            name = f"{name}:{reach.key()}"
        done, making = self._derived.get(name, (None, None))
        if done is not None and done[0] is papers:
            return done[1]
        if making is None or making[0] is not papers:
            making = (papers, asyncio.ensure_future(asyncio.to_thread(build, papers)))
            self._derived[name] = (done, making)
        if done is not None:
            await asyncio.wait([making[1]], timeout=PAPERS_RELOAD_WAIT)
            if not making[1].done():
                return done[1]
        value = await making[1]
        self._derived[name] = ((papers, value), None)
        while len(self._derived) > 2 * REACH_LISTS_KEPT:  # the oldest servers' lists go first
            self._derived.pop(next(k for k in self._derived if ":" in k))
        return value

    @core(WORK)
    async def plan(self, text: str, k: int, day: str = "", *, reach: Reach) -> Plan:
        """The plan of the papers a topic (or a pasted abstract) finds."""
        return await asyncio.to_thread(plan_for, self.library.seen_from(reach), text, k, day)

    @property
    def user_data(self) -> UserData:
        """The users file (saved papers, watches), opened by setup_hook."""
        if self._user_data is None:
            raise RuntimeError("the users file is opened in setup_hook, before the bot handles anything")
        return self._user_data

    # -- the users file: saved papers and watches ------------------------------------------------

    @core(LOOKUP)
    async def save_papers(self, user_id: int, paper_ids: tuple[str, ...]) -> tuple[int, int]:
        """Save papers for a user: (newly saved, papers in the list now)."""
        new = await asyncio.to_thread(self.user_data.save, user_id, paper_ids)
        return new, len(await asyncio.to_thread(self.user_data.saved, user_id))

    @core(LOOKUP)
    async def saved_papers(self, user_id: int) -> list[Paper]:
        """A user's saved papers that the store still holds, in the order they were saved."""
        ids = await asyncio.to_thread(self.user_data.saved, user_id)
        by_id = {p.paper_id: p for p in await self.papers()}
        return [by_id[i] for i in ids if i in by_id]

    @core(LOOKUP)
    async def unsave_paper(self, user_id: int, paper_id: str) -> bool:
        return await asyncio.to_thread(self.user_data.unsave, user_id, paper_id)

    @core(LOOKUP)
    async def clear_saved(self, user_id: int) -> int:
        return await asyncio.to_thread(self.user_data.clear_saved, user_id)

    @core(LOOKUP)
    async def forget_user(self, user_id: int) -> tuple[int, int]:
        return await asyncio.to_thread(self.user_data.forget_user, user_id)

    @core(LOOKUP)
    async def add_watch(self, user_id: int, topic: str, channel_id: int | str = "", library: str = "") -> Watch:
        return await asyncio.to_thread(self.user_data.add_watch, user_id, topic, channel_id, library)

    @core(LOOKUP)
    async def watches(self, user_id: int) -> list[Watch]:
        return await asyncio.to_thread(self.user_data.watches, user_id)

    @core(LOOKUP)
    async def remove_watch(self, user_id: int, watch_id: int) -> bool:
        return await asyncio.to_thread(self.user_data.remove_watch, user_id, watch_id)

    @core(WORK)
    async def search_follow_up(self, question: str, history: list[Turn], *, reach: Reach) -> SearchResult:
        """The search behind an answer to `question` in its conversation (to rebuild its sources)."""
        return await asyncio.to_thread(search_follow_up, self.library.seen_from(reach), question, history)

    @core(LOOKUP)
    async def papers(self, *, reach: Reach = Reach.ALL) -> list[Paper]:
        """Every paper `reach` sees, cached for autocomplete; reloaded when any process has changed the store.

        Once there is a list, a reload runs in the background; the caller waits for it at most
        PAPERS_RELOAD_WAIT and is served the current list otherwise: rebuilding the view after a
        change takes seconds at conference scale, and /paper and autocomplete must answer
        within Discord's 3 s.
        """
        now = time.monotonic()
        if self._papers is None:
            version = await asyncio.to_thread(self.library.content_version)
            self._papers = await asyncio.to_thread(self.library.papers)
            self._papers_version, self._papers_checked = version, now
        elif now - self._papers_checked >= PAPERS_RECHECK and self._papers_reload is None:
            self._papers_checked = now
            self._papers_reload = asyncio.create_task(self._reload_papers())
        reload = self._papers_reload
        if reload is not None:
            await asyncio.wait([reload], timeout=PAPERS_RELOAD_WAIT)
        return self._reached(self._papers, reach)

    async def _reload_papers(self) -> None:  # no lane: the lookups that wait for it hold theirs
        try:
            version = await asyncio.to_thread(self.library.content_version)
            if version != self._papers_version:
                papers = await asyncio.to_thread(self.library.papers)
                self._papers, self._papers_version = papers, version
        except Exception:  # the store is down: the list in memory stays, the next check tries again
            log.warning("could not reload the paper list", exc_info=True)
        finally:
            self._papers_reload = None

    # -- what the watcher asks of the store and the users file (bot/app/watcher.py WatcherHost) --------------

    @core(LOOKUP)
    async def store_version(self) -> str:
        """The store's content version now (another process may have ingested)."""
        return await asyncio.to_thread(self.library.content_version)

    @core(LOOKUP)
    async def store_papers(self) -> list[Paper]:
        """Every paper as the store holds it now (the cached list of `papers` may be seconds behind)."""
        return await asyncio.to_thread(self.library.papers)

    @core(LOOKUP)
    async def changed_papers(self, papers: list[Paper], version: Callable[[Paper], str]) -> list[str] | None:
        """The papers added or changed since the last call (paperbot/userdata.py); `version` runs in the thread."""
        return await asyncio.to_thread(lambda: self.user_data.changed_papers({p.paper_id: version(p) for p in papers}))

    @core(LOOKUP)
    async def all_watches(self) -> list[Watch]:
        return await asyncio.to_thread(self.user_data.watches)

    @core(LOOKUP)
    async def queue_matches(self, watch_id: int, matches: dict[str, float]) -> int:
        return await asyncio.to_thread(self.user_data.queue, watch_id, matches)

    @core(LOOKUP)
    async def claim_digests(self, interval: float, limit: int) -> list[Claim]:
        return await asyncio.to_thread(self.user_data.claim_due, interval, limit)

    @core(LOOKUP)
    async def release_digest(self, claim: Claim) -> None:
        await asyncio.to_thread(self.user_data.release, claim)

    @core(LOOKUP)
    async def drop_pending(self, watch_id: int) -> None:
        await asyncio.to_thread(self.user_data.drop_pending, watch_id)

    @core(LOOKUP)
    async def mark_sent(self, watch_id: int, paper_ids: list[str]) -> None:
        await asyncio.to_thread(self.user_data.mark_sent, watch_id, paper_ids)

    def remember(self, key: str, result: Answer | SearchResult) -> None:
        """Keep a result for its buttons (the newest RESULTS_KEPT)."""
        self._results[key] = result
        self._results.move_to_end(key)
        while len(self._results) > RESULTS_KEPT:
            self._results.popitem(last=False)

    def recall(self, key: str) -> Answer | SearchResult | None:
        return self._results.get(key)

    def mark_shared(self, message_id: int) -> bool:
        """True the first time an answer message is shared; False if it already was."""
        if message_id in self._shared:
            return False
        self._shared[message_id] = None
        while len(self._shared) > RESULTS_KEPT:
            self._shared.popitem(last=False)
        return True

    def forget_papers(self) -> None:
        """The store changed (a /reindex): the next call reloads the list (in the background, see `papers`)."""
        self._papers_checked = float("-inf")

    def _reached(self, papers: list[Paper], reach: Reach) -> list[Paper]:
        """`papers` as `reach` sees them: the same list when it sees them all (no server library outside it)."""
        if reach.everything:
            return papers
        key = reach.key()
        kept = self._reach_lists.get(key)
        if kept is not None and kept[0] is papers:
            return kept[1]
        seen = papers if all(reach.sees(p) for p in papers) else [p for p in papers if reach.sees(p)]
        self._reach_lists[key] = (papers, seen)
        while len(self._reach_lists) > REACH_LISTS_KEPT:
            self._reach_lists.pop(next(iter(self._reach_lists)))
        return seen

    @core(LOOKUP)
    async def find_paper(self, typed: str, *, reach: Reach) -> Paper | None:
        """The paper with this id or label, else the best autocomplete match (looked up off the event loop)."""
        papers = self._reached(await self.papers(), reach)
        needle = typed.strip().lower()

        def exact() -> Paper | None:
            return next((p for p in papers if p.paper_id.lower() == needle), None) or \
                next((p for p in papers if p.label.lower() == needle), None)

        found = await asyncio.to_thread(exact)
        if found is not None:
            return found
        choices = await self.paper_choices(typed, reach=reach)
        if choices:
            return next((p for p in papers if p.paper_id == choices[0][1]), None)
        return None

    # -- direct messages and mentions ----------------------------------------------------------

    def addressed(self, message: discord.Message) -> str | None:
        """How a message reaches the bot: "dm", "mention", "conversation" (a reply to an answer, or a message
        in a thread the bot started), or None when it is not addressed to the bot."""
        if message.author.bot or self.user is None:
            return None
        if message.type not in (discord.MessageType.default, discord.MessageType.reply):
            return None  # thread created, pins, joins…
        if message.guild is None:
            return "dm"
        if not guild_allowed(message.guild.id, self.settings.discord.guild_allowlist):
            return None
        role = message.guild.self_role  # Discord's autocomplete often inserts the bot's managed role
        if any(u.id == self.user.id for u in message.mentions) or (
                role is not None and role.id in message.raw_role_mentions):
            return "mention"
        if self.conversations.replies_to_bot(message) or self.conversations.in_bot_thread(message):
            return "conversation"
        return None

    def question_in(self, message: discord.Message) -> str | None:
        """The question a message asks the bot, or None when it is not addressed to the bot."""
        how = self.addressed(message)
        if how is None:
            return None
        text = message.content
        if message.guild is not None and self.user is not None:
            text = re.sub(rf"<@!?{self.user.id}>", " ", text)
            role = message.guild.self_role
            if role is not None:
                text = text.replace(f"<@&{role.id}>", " ")
        return clean_question(text)

    async def on_message(self, message: discord.Message) -> None:
        question = self.question_in(message)
        if question is None:
            return
        lang = message_language(message.content)
        if self.stopping:
            await reply(message, embeds.text_pages(bot_messages.text("RESTARTING", lang)))
            return
        question, use_llm = without_llm_prefix(question)
        if not search_text(question):
            # Without the message-content intent a plain thread message arrives empty: not a question to us; nor
            # is "thanks!" in the bot's thread. Mentioned or in a DM, only noise or "test" gets the hint.
            if self.addressed(message) != "conversation":
                await reply(message, embeds.text_pages(messages.text("EMPTY_QUESTION",
                                                                     message_language(message.content))))
            return
        retry = self.limiter.hit(message.author.id)
        if retry is not None:
            await reply(message, embeds.text_pages(RateLimited(retry).message(lang)))
            return
        preview = StreamingPreview(question, message=message)
        try:
            async with message.channel.typing():
                history = await self.conversations.history(message)
                reach = await reach_of(self, message.guild.id if message.guild else None, message.author)
                answer = await self.answer(question, preview, history, reach=reach, use_llm=use_llm)
        finally:
            await preview.close()
        thread = message.guild is not None and not isinstance(message.channel, discord.Thread)
        await reply(message, embeds.answer_pages(answer),
                    view=view_for_answer(self, answer, ephemeral=False, thread=thread), first=preview.sent)

    async def on_error(self, event_method: str, /, *args, **kwargs) -> None:
        error = sys.exc_info()[1]
        message = args[0] if args else None
        if event_method in {"on_message", "message"} and isinstance(message, discord.Message) and error is not None:
            await report_message_error(message, error, f"event {event_method}", self.permission_warnings)
        else:
            log.error("unexpected error in event %s", event_method, exc_info=error)


class ShardedPaperBot(PaperBot, discord.AutoShardedClient):
    """PaperBot over discord.py's AutoShardedClient: the shards DISCORD_SHARDS / DISCORD_SHARD_IDS (or `paperbot run
    --shards N --shard-ids …`) name, in this process. Several such processes share one Chroma server and one users
    database; a server's interactions and messages always reach the process that runs its shard, DMs shard 0's."""


def make_bot(services: Services, *, sync_commands: bool = False, watch: bool = False) -> PaperBot:
    """The bot the settings ask for: sharded or not."""
    cls = ShardedPaperBot if services.settings.discord.sharded else PaperBot
    return cls(services, sync_commands=sync_commands, watch=watch)


async def refuse_while_stopping(interaction: discord.Interaction) -> None:
    """Tell the user the bot is restarting (autocomplete just gets no choices)."""
    if interaction.type == discord.InteractionType.autocomplete or interaction.response.is_done():
        return
    try:
        lang = message_language(None, str(interaction.locale))
        await interaction.response.send_message(bot_messages.text("RESTARTING", lang), ephemeral=True,
                                                allowed_mentions=NO_MENTIONS)
    except discord.HTTPException:
        log.debug("could not tell a user the bot is restarting", exc_info=True)
