"""Watches: when the index gains or changes papers, each watcher gets one digest of the new matching ones.

The bot notices an ingest however it happened — its own /reindex (which calls `run_once` right after), or a
`paperbot ingest` in another process (the store's content version changes; `loop` checks it every `poll`
seconds). The papers added or changed since the last check come from the users file's record of every
paper's version (paperbot/userdata.py), so an ingest while the bot was down is noticed at the next start.

A paper matches a watch by the /ask relevance rule (a relevant hit of the watch's topic). Each digest holds at
most `per_digest` papers, best first; a watch gets at most one digest per `interval` seconds (papers found
in between wait for the next one), and never the same paper twice. Digests never ping anyone. A due digest is
claimed in the users database before it is sent, so that of several bot processes sharing one database (shards,
`PAPERBOT_USER_DB=postgresql://…`) one sends it; one that could not be sent is released and tried again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import discord

from bot.app import embeds
from bot.app.sending import NO_MENTIONS
from paperbot.errors import PaperbotError
from paperbot.language import message_language
from paperbot.records import Paper, Reach

if TYPE_CHECKING:
    from paperbot.userdata import Claim, Watch
    from retrieval.types import SearchResult

log = logging.getLogger(__name__)

PER_DIGEST = 10
INTERVAL = 600.0  # seconds between two digests of one watch
POLL = 30.0  # seconds between checks of the store's content version
DEPTH = 50  # papers searched per watch topic
DIGESTS_PER_RUN = 50  # the rest wait for the next run (Discord's own rate limits)


def paper_version(paper: Paper) -> str:
    return f"{paper.embed_hash}:{paper.meta_hash}"


class WatcherHost(Protocol):
    """What the watcher asks of the bot (bot/app/client.py PaperBot): each a core call behind a lane
    (bot/app/lanes.py), and Discord's users and channels."""

    async def search(self, query: str, k: int, filters: None = None, *, reach: Reach) -> SearchResult: ...
    async def store_version(self) -> str: ...
    async def store_papers(self) -> list[Paper]: ...
    async def changed_papers(self, papers: list[Paper], version: Callable[[Paper], str]) -> list[str] | None: ...
    async def all_watches(self) -> list[Watch]: ...
    async def queue_matches(self, watch_id: int, matches: dict[str, float]) -> int: ...
    async def claim_digests(self, interval: float, limit: int) -> list[Claim]: ...
    async def release_digest(self, claim: Claim) -> None: ...
    async def drop_pending(self, watch_id: int) -> None: ...
    async def mark_sent(self, watch_id: int, paper_ids: list[str]) -> None: ...
    def get_channel(self, id: int, /) -> object: ...
    async def fetch_channel(self, channel_id: int, /) -> object: ...
    def get_user(self, id: int, /) -> discord.User | None: ...
    async def fetch_user(self, user_id: int, /) -> discord.User: ...


class Watcher:
    def __init__(self, bot: WatcherHost, *, interval: float = INTERVAL, poll: float = POLL,
                 per_digest: int = PER_DIGEST) -> None:
        self.bot = bot
        self.interval = interval
        self.poll = poll
        self.per_digest = per_digest
        self._version: str | None = None
        self._lock = asyncio.Lock()
        self.sent: list[tuple[int, list[str]]] = []  # (watch id, paper ids) of each digest sent, for the log

    async def catch_up(self) -> int:
        """Queue the papers added or changed since the last check for the watches they match; returns how many."""
        bot = self.bot
        version = await bot.store_version()
        if version == self._version:
            return 0
        papers = await bot.store_papers()
        # In a thread: the first versions of a fresh paper list are hashed there (90 ms at 6,000 papers).
        changed = await bot.changed_papers(papers, paper_version)
        self._version = version
        if not changed:
            return 0  # nothing new, or the first check ever (every paper would look new)
        fresh = set(changed)
        queued = 0
        for watch in await bot.all_watches():
            # a watch made in a server sees that server's library too; one made in a DM, the program
            reach = Reach.server(watch.server) if watch.server else Reach.PROGRAM
            result = await bot.search(watch.topic, DEPTH, reach=reach)
            matches = {h.paper_id: h.score for h in result.hits if h.relevant and h.paper_id in fresh}
            if matches:
                queued += await bot.queue_matches(watch.id, matches)
        log.info("%d papers added or changed; %d matches queued for watches", len(fresh), queued)
        return queued

    async def run_once(self) -> int:
        """Catch up with the store, then send the digests that are due; returns how many were sent."""
        async with self._lock:
            await self.catch_up()
            return await self._send_due()

    async def _send_due(self) -> int:
        bot = self.bot
        # Claimed in the users database: of several bot processes (shards), one sends each digest.
        claims = await bot.claim_digests(self.interval, DIGESTS_PER_RUN)
        if not claims:
            return 0
        # The store as it is now (the bot's cached list may be seconds behind another process's ingest).
        by_id = {p.paper_id: p for p in await bot.store_papers()}
        sent = 0
        for claim in claims:
            watch = claim.watch
            found = [by_id[pid] for pid, _ in claim.pending if pid in by_id]
            papers = found[: self.per_digest]
            if not papers:  # every queued paper has left the store since
                await bot.drop_pending(watch.id)
                await bot.release_digest(claim)
                continue
            pages = embeds.digest_pages(watch.id, watch.topic, papers, len(found) - len(papers),
                                        message_language(watch.topic))
            if not await self._deliver(watch.user_id, watch.channel_id, pages):
                await bot.release_digest(claim)
                continue
            sent += 1
            self.sent.append((watch.id, [p.paper_id for p in papers]))
            await bot.mark_sent(watch.id, [p.paper_id for p in papers])
        return sent

    async def _deliver(self, user_id: str, channel_id: str, pages: list[embeds.Page]) -> bool:
        """Send a digest by DM (or to the watch's channel); False when Discord could not be reached."""
        bot = self.bot
        try:
            target: discord.abc.Messageable
            if channel_id:
                channel = bot.get_channel(int(channel_id)) or await bot.fetch_channel(int(channel_id))
                if not isinstance(channel, discord.abc.Messageable):
                    log.warning("watch digest: channel %s takes no messages; not sent", channel_id)
                    return True  # retrying would fail the same way
                target = channel
            else:
                target = bot.get_user(int(user_id)) or await bot.fetch_user(int(user_id))
            for page in pages:
                await target.send(content=page.content or None, embeds=[embeds.to_embed(c) for c in page.cards],
                                  allowed_mentions=NO_MENTIONS)
        except (discord.Forbidden, discord.NotFound):
            # DMs closed, channel gone or not allowed: retrying would fail the same way.
            log.warning("could not send a digest to %s %s", "channel" if channel_id else "user",
                        channel_id or user_id, exc_info=True)
            return True
        except (discord.HTTPException, OSError):
            log.warning("digest not sent; it will be tried again", exc_info=True)
            return False
        return True

    async def loop(self) -> None:
        """Every `poll` seconds: notice ingests by other processes, send due digests. Never raises."""
        while True:
            try:
                await self.run_once()
            except asyncio.CancelledError:
                raise
            except (PaperbotError, discord.HTTPException):
                log.warning("watch check failed; trying again in %.0f s", self.poll, exc_info=True)
            except Exception:
                log.exception("unexpected error in the watch check")
            await asyncio.sleep(self.poll)
