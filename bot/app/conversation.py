"""The earlier turns of a conversation, read back from Discord itself (so a restart loses nothing).

A conversation is a reply chain to the bot's answers, a thread the bot started from one of
its answers, or a DM. Only the bot's own answers become turns: their question is read from
the title the bot set and the papers they cited from the custom_id of their "More sources"
button. Messages by anyone else are never trusted for that, so a user cannot forge a turn.
What a turn means for the next question is decided in retrieval/followup.py.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import OrderedDict

import discord

from bot.app import embeds
from bot.app.views import ids_from_message
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
    ids = ids_from_message(message)
    question = ""
    for embed in message.embeds:
        title = embed.title or ""
        if title.startswith("Q: "):
            question = embeds.unescape(title[3:]).rstrip("…").strip()
            break
    if not question and ids is None:
        return None
    return Turn(question=question, cited=ids or ())


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
        since = message.created_at - DM_WINDOW
        earlier = [m async for m in message.channel.history(limit=DM_MESSAGES, before=message, after=since)]
        earlier.sort(key=lambda m: m.id)
        return [t for m in earlier if (t := self._remember(m)[0]) is not None]
