"""The earlier turns of a conversation, read back from Discord itself (so a restart loses nothing).

A conversation is a reply chain to the bot's answers, a thread the bot started from one of
its answers, or a DM (its newest messages, within DM_WINDOW). Only the bot's own answers
become turns: their question is read from the title the bot set, the papers they numbered
(cited, or an abstention's closest) from the custom_id of their "More sources" button, and
those papers' labels from the fields. Messages by anyone else are never trusted for that,
so a user cannot forge a turn.
What a turn means for the next question is decided in retrieval/followup.py.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections import OrderedDict

import discord


from bot.app import markdown
from bot.app.identity import question_of
from bot.app.views import listing_from_message
from retrieval.followup import MAX_TURNS, Turn, bounded

log = logging.getLogger(__name__)

CHAIN_STEPS = MAX_TURNS * 2  # a question and an answer per turn
THREAD_MESSAGES = 50
DM_MESSAGES = 20
DM_WINDOW = dt.timedelta(hours=2)  # a DM question after a longer pause starts afresh
CACHE = 1024  # messages remembered (their turn and what they reply to)


def turn_of(message: discord.Message, bot_id: int) -> Turn | None:
    """The turn one of the bot's own answers records, or None for anything else."""
    if message.author.id != bot_id:
        return None
    listing = listing_from_message(message)
    question = question_of(message, clipped=True) or ""
    if not question and listing is None:
        return None
    ids, abstained = listing or ((), False)
    labels = _labels(message)
    labels = labels if len(labels) == len(ids) else ()
    return Turn(question=question, cited=() if abstained else ids, shown=ids if abstained else (), labels=labels)


_FIELD = re.compile(r"^\[(\d+)\] (.*?)(?: · score -?[\d.]+)?$")


def _labels(message: discord.Message) -> tuple[str, ...]:
    """The labels of the papers an answer numbered, [1] first, as its fields show them."""
    labels: list[str] = []
    for embed in message.embeds:
        for f in embed.fields:
            m = _FIELD.match(f.name or "")
            if m and int(m.group(1)) == len(labels) + 1:
                labels.append(markdown.unescape(m.group(2)).strip())
    return tuple(labels)


class Conversations:
    """Gathers the history of a message, with the messages it fetched cached (bounded, LRU)."""

    def __init__(self, client: discord.Client) -> None:
        self.client = client
        self._seen: OrderedDict[int, tuple[Turn | None, int | None, int | None]] = OrderedDict()

    @property
    def bot_id(self) -> int:
        return self.client.user.id if self.client.user else 0

    def _remember(self, message: discord.Message) -> tuple[Turn | None, int | None, int | None]:
        ref = message.reference
        entry = (turn_of(message, self.bot_id), ref.message_id if ref else None,
                 (ref.channel_id if ref else None))
        self._seen[message.id] = entry
        self._seen.move_to_end(message.id)
        while len(self._seen) > CACHE:
            self._seen.popitem(last=False)
        return entry

    async def _fetch(self, channel_id: int, message_id: int) -> tuple[Turn | None, int | None, int | None] | None:
        if message_id in self._seen:
            self._seen.move_to_end(message_id)
            return self._seen[message_id]
        try:
            message = await self.client.get_partial_messageable(channel_id).fetch_message(message_id)
        except (discord.NotFound, discord.Forbidden):
            return None
        return self._remember(message)

    def replies_to_bot(self, message: discord.Message) -> bool:
        ref = message.reference
        resolved = ref.resolved if ref else None
        return isinstance(resolved, discord.Message) and resolved.author.id == self.bot_id

    def in_bot_thread(self, message: discord.Message) -> bool:
        channel = message.channel
        return isinstance(channel, discord.Thread) and channel.owner_id == self.bot_id

    async def history(self, message: discord.Message) -> list[Turn]:
        """The turns before `message`, oldest first, bounded in turns and characters."""
        try:
            if message.reference is not None and message.reference.message_id is not None:
                turns = await self._chain(message)
            elif self.in_bot_thread(message):
                turns = await self._thread(message)
            elif message.guild is None:
                turns = await self._dm(message)
            else:
                turns = []
        except discord.HTTPException:
            log.warning("could not read the conversation of message %s; answering it alone", message.id,
                        exc_info=True)
            turns = []
        return bounded(turns)

    async def _chain(self, message: discord.Message) -> list[Turn]:
        turns: list[Turn] = []
        ref = message.reference
        resolved = ref.resolved if ref else None
        if isinstance(resolved, discord.Message):
            entry: tuple | None = self._remember(resolved)
        else:
            entry = await self._fetch(ref.channel_id, ref.message_id) if ref and ref.message_id else None
        steps = 0
        while entry is not None and steps < CHAIN_STEPS:
            turn, parent, parent_channel = entry
            if turn is not None:
                turns.append(turn)
            if parent is None:
                break
            entry = await self._fetch(parent_channel or message.channel.id, parent)
            steps += 1
        if not turns and self.in_bot_thread(message):
            return await self._thread(message)
        return turns[::-1]

    async def in_thread(self, thread: discord.Thread) -> list[Turn]:
        """The turns of a thread the bot started from an answer ([] for any other thread), for `/ask` there."""
        if thread.owner_id != self.bot_id:
            return []
        try:
            return bounded(await self._thread_turns(thread, None))
        except discord.HTTPException:
            log.warning("could not read thread %s; answering alone", thread.id, exc_info=True)
            return []

    async def _thread(self, message: discord.Message) -> list[Turn]:
        assert isinstance(message.channel, discord.Thread)
        return await self._thread_turns(message.channel, message)

    async def _thread_turns(self, thread: discord.Thread, before: discord.Message | None) -> list[Turn]:
        turns: list[Turn] = []
        starter = await self._fetch(thread.parent_id, thread.id)  # a thread started from a message has its id
        if starter is not None and starter[0] is not None:
            turns.append(starter[0])
        later = [m async for m in thread.history(limit=THREAD_MESSAGES, before=before)]
        for m in reversed(later):
            turn = self._remember(m)[0]
            if turn is not None:
                turns.append(turn)
        return turns

    async def _dm(self, message: discord.Message) -> list[Turn]:
        """The newest DM_MESSAGES before `message`, within DM_WINDOW, oldest first.

        `history(before=…)` pages newest first; `after=` would make Discord return the OLDEST messages of
        the window, so the window's start is applied here instead.
        """
        since = message.created_at - DM_WINDOW
        earlier = []
        async for m in message.channel.history(limit=DM_MESSAGES, before=message):
            if m.created_at < since:
                break
            earlier.append(m)
        earlier.sort(key=lambda m: m.id)
        return [t for m in earlier if (t := self._remember(m)[0]) is not None]
