"""Drives a real PaperBot with synthetic gateway events, through discord.py's own machinery.

`Harness` hands INTERACTION_CREATE and MESSAGE_CREATE payloads (payloads.py) to
discord.py's ConnectionState, exactly as the websocket would, and routes every
REST call the bot makes to a fake Discord (rest.py) that records it and answers
as Discord would (message ids, callback resources, message history, threads, which
it announces with THREAD_CREATE). Nothing touches the network.

`restart(new_bot)` stops the bot and starts another against the same fake Discord:
every message, thread and button is still there, nothing of the old process is.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Callable, Iterable
from typing import Any

import discord
from discord.webhook.async_ import async_context

from bot.app.client import PaperBot
from bot.harness.payloads import (
    APP_ID,
    BOT_ROLE_ID,
    BOT_USER_ID,
    CHANNEL_ID,
    GUILD_ID,
    MEMBER_PERMS,
    Payloads,
    Upload,
)
from bot.harness.rest import (
    Call,
    Exchange,
    FakeDiscord,
    RecordingWebhookAdapter,
    current_exchange,
    find_button,
)


class Harness:
    """Runs a PaperBot against synthetic gateway events; records what it would send.

        async with Harness(bot) as h:
            ex = await h.slash("ask", question="how do people fine-tune by masking weights?")
            ex.calls[0].callback_type  # 5: deferred, thinking
    """

    def __init__(self, bot: PaperBot, *, admin_role_name: str = "paper-admins", rest: FakeDiscord | None = None) -> None:
        self.bot = bot
        self.rest = rest or FakeDiscord(Payloads(admin_role_name))
        self.payloads = self.rest.payloads
        self._adapter: RecordingWebhookAdapter | None = None
        self._old_factory: Any = None  # the loop's task factory before ours (asyncio types it privately)

    async def restart(self, bot: PaperBot) -> Harness:
        """Stop this bot and start `bot` against the same Discord: every message and thread is still there."""
        await self.stop()
        h = Harness(bot, rest=self.rest)
        await h.start()
        return h

    @property
    def calls(self) -> list[Call]:
        return self.rest.calls

    @property
    def messages(self) -> dict[int, dict]:
        return self.rest.messages

    @property
    def on_call(self) -> Callable[[Call], None] | None:
        return self.rest.on_call

    @on_call.setter
    def on_call(self, callback: Callable[[Call], None] | None) -> None:
        self.rest.on_call = callback

    user = staticmethod(Payloads.user)

    def bot_user(self) -> dict:
        return self.payloads.bot_user()

    # -- lifecycle ---------------------------------------------------------------------

    async def __aenter__(self) -> Harness:
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.stop()

    async def start(self) -> None:
        bot = self.bot
        loop = asyncio.get_running_loop()
        self._old_factory = loop.get_task_factory()
        loop.set_task_factory(self._task_factory)
        await bot._async_setup_hook()
        bot.http.request = self.rest.rest_request  # type: ignore[method-assign]  # Discord's REST, faked
        bot.http.get_from_cdn = self.rest.get_from_cdn  # type: ignore[method-assign]  # its CDN too
        self._adapter = RecordingWebhookAdapter(self.rest)
        state = bot._connection
        user = self.payloads.bot_user()
        state.user = discord.ClientUser(state=state, data=user)  # type: ignore[arg-type]  # the gateway's payload
        state.application_id = APP_ID
        await bot.setup_hook()
        guild = self.payloads.guild_payload()
        guild["threads"] = list(self.rest.threads.values())  # GUILD_CREATE lists the active threads
        state.parse_guild_create(guild)
        # THREAD_CREATE follows a thread's creation
        self.rest.on_thread = state.parse_thread_create  # type: ignore[assignment]  # it takes the raw payload

    async def stop(self) -> None:
        await self.bot.close()
        asyncio.get_running_loop().set_task_factory(self._old_factory)

    def _task_factory(self, loop, coro, context=None):
        task = asyncio.Task(coro, loop=loop, context=context)
        ex = current_exchange.get() if context is None else context.get(current_exchange)
        if ex is not None and "timeout_task_impl" not in getattr(coro, "__qualname__", ""):
            ex.tasks.add(task)
        return task

    # -- driving -----------------------------------------------------------------------

    def _command(self, name: str) -> discord.app_commands.Command:
        """A command by name; "group sub" for a subcommand (/saved list)."""
        group, _, sub = name.partition(" ")
        command = self.bot.tree.get_command(group)
        if command is not None and sub:
            command = command.get_command(sub) if isinstance(command, discord.app_commands.Group) else None
        if command is None:
            raise KeyError(f"no command /{name}")
        return command  # type: ignore[return-value]  # a slash command: its subcommands were resolved above

    def _data(self, name: str, options: list) -> dict:
        """The interaction data of /name: a subcommand's options nest inside it, as Discord sends them."""
        group, _, sub = name.partition(" ")
        if sub:
            options = [{"name": sub, "type": discord.AppCommandOptionType.subcommand.value, "options": options}]
        return {"id": str(self.payloads.next_id()), "name": group, "type": 1, "options": options}

    def forget(self, ex: Exchange, payload: dict | None = None) -> None:
        """Drop what the fake Discord keeps of a finished exchange (its messages, calls, interaction), so
        that a long run (a soak) measures the bot's memory, not the record of everything it sent."""
        for mid in ex.message_ids:
            self.rest.messages.pop(mid, None)
        done = {id(c) for c in ex.calls}
        self.rest.calls[:] = [c for c in self.rest.calls if id(c) not in done]
        if payload is not None:
            self.rest.forget_interaction(payload["token"])
            self.payloads.interactions.pop(payload["token"], None)

    def feed_interaction(self, payload: dict, name: str = "") -> Exchange:
        """Hand an INTERACTION_CREATE payload to the gateway parser, as the websocket would."""
        ex = Exchange(name=name or payload["data"].get("name", "interaction"), rest=self.rest)
        contextvars.copy_context().run(self._feed, ex, self.bot._connection.parse_interaction_create, payload)
        return ex

    def _feed(self, ex: Exchange, parse, payload: dict) -> None:
        # Tasks the parser starts inherit this context: the exchange they belong to, and the
        # recording adapter that interaction responses and webhooks go through.
        current_exchange.set(ex)
        async_context.set(self._adapter)  # type: ignore[arg-type]  # the recording adapter stands in for discord.py's
        parse(payload)

    def feed_message(self, payload: dict, name: str = "message") -> Exchange:
        """Hand a MESSAGE_CREATE payload to the gateway parser (Discord keeps the message for later fetches)."""
        self.rest.store(payload)
        ex = Exchange(name=name, rest=self.rest)
        contextvars.copy_context().run(self._feed, ex, self.bot._connection.parse_message_create, payload)
        return ex

    async def wait(self, ex: Exchange, timeout: float = 120.0) -> Exchange:
        """Wait until every task the event started (and their children) has finished."""
        deadline = time.monotonic() + timeout
        while True:
            pending = [t for t in ex.tasks if not t.done()]
            if not pending:
                for t in ex.tasks:
                    if not t.cancelled() and t.exception() is not None:
                        raise t.exception()  # type: ignore[misc]  # not None: checked on the line above
                return ex
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{ex.name}: still running after {timeout} s")
            await asyncio.wait(pending, timeout=left)

    def slash_payload(self, name: str, *, user: dict | None = None, dm: bool = False, roles: Iterable[int] = (),
                      permissions: int = MEMBER_PERMS, thread: int | None = None, locale: str = "en-US",
                      guild: int = GUILD_ID, **options: Any) -> dict:
        """INTERACTION_CREATE for /name; `thread`: run in that thread (one the fake Discord created).

        An option given as an `Upload` is sent as Discord sends an attachment: its id as the value, the
        attachment in `resolved`, its bytes on the CDN.
        """
        command = self._command(name)
        attachments = {}
        for key, value in list(options.items()):
            if isinstance(value, Upload):
                aid = str(self.payloads.next_id())
                url = f"https://cdn.discordapp.com/ephemeral-attachments/{CHANNEL_ID}/{aid}/{value.filename}"
                attachments[aid] = {"id": aid, "filename": value.filename, "size": len(value.data), "url": url,
                                    "proxy_url": url, "content_type": value.content_type, "ephemeral": True}
                self.rest.cdn[url] = value.data
                options[key] = aid
        data = self._data(name, self.payloads.options(command, options))
        resolved: dict = {"attachments": attachments} if attachments else {}
        kinds = {p.name: p.type for p in command.parameters}
        for key, value in options.items():  # a channel option: Discord resolves the channel it names
            if kinds.get(key) is discord.AppCommandOptionType.channel:
                channel = {k: v for k, v in self.payloads.guild_payload()["channels"][0].items()}
                resolved.setdefault("channels", {})[str(value)] = {**channel, "id": str(value),
                                                                   "permissions": str(MEMBER_PERMS)}
        if resolved:
            data["resolved"] = resolved
        if not dm:
            data["guild_id"] = str(guild)
        payload = self.payloads.interaction(2, data, user=user, dm=dm, roles=roles, permissions=permissions,
                                            locale=locale, guild=guild)
        if thread is not None:
            payload["channel_id"] = str(thread)
            payload["channel"] = {k: v for k, v in self.rest.threads[thread].items() if k != "newly_created"}
        return payload

    async def slash(self, name: str, **kwargs: Any) -> Exchange:
        """Invoke /name with options, as a user in the lab server (dm=True: in a DM)."""
        return await self.wait(self.feed_interaction(self.slash_payload(name, **kwargs)))

    async def autocomplete(self, name: str, option: str, value: str, *, user: dict | None = None,
                           dm: bool = False, guild: int = GUILD_ID, **others: Any) -> Exchange:
        command = self._command(name)
        data = self._data(name, self.payloads.options(command, {**others, option: value}, focused=option))
        payload = self.payloads.interaction(4, data, user=user, dm=dm, roles=(), permissions=MEMBER_PERMS,
                                            guild=guild)
        return await self.wait(self.feed_interaction(payload, name=f"autocomplete {name}"))

    async def click(self, message: dict, label: str, *, user: dict | None = None, dm: bool | None = None) -> Exchange:
        """Press the button labelled `label` on `message` (a recorded message payload)."""
        button = find_button(message, label)
        if button is None:
            raise LookupError(f"no button {label!r} on message {message.get('id')}")
        if dm is None:
            dm = "guild_id" not in message
        data = {"custom_id": button["custom_id"], "component_type": 2}
        payload = self.payloads.interaction(3, data, user=user, dm=dm, roles=(), permissions=MEMBER_PERMS, message=message)
        return await self.wait(self.feed_interaction(payload, name=f"click {label}"))

    async def background(self, coro, name: str = "background") -> Exchange:
        """Run work the bot starts on its own (a watch's digest) and record what it sends, as for an event."""
        ex = Exchange(name=name, rest=self.rest)
        token = current_exchange.set(ex)
        try:
            asyncio.ensure_future(coro)  # the task factory files it (and its children) under `ex`
        finally:
            current_exchange.reset(token)
        return await self.wait(ex)

    def attachment(self, message: dict, suffix: str) -> bytes | None:
        """The bytes of a file the bot attached to `message` (".ics", ".bib")."""
        return self.rest.attachment(message, suffix)

    async def dm(self, text: str, *, user: dict | None = None) -> Exchange:
        return await self.wait(self.feed_message(self.payloads.message_payload(text, user=user, dm=True), name="dm"))

    async def mention(self, text: str, *, user: dict | None = None) -> Exchange:
        """A channel message that @mentions the bot (the mention is prepended to `text`)."""
        payload = self.payloads.message_payload(f"<@{BOT_USER_ID}> {text}", user=user, dm=False, mention_bot=True)
        return await self.wait(self.feed_message(payload, name="mention"))

    async def role_mention(self, text: str, *, user: dict | None = None) -> Exchange:
        """A channel message that mentions the bot's managed role (`<@&id>`), as Discord's autocomplete often does."""
        payload = self.payloads.message_payload(f"<@&{BOT_ROLE_ID}> {text}", user=user, dm=False, mention_role=True)
        return await self.wait(self.feed_message(payload, name="role mention"))

    async def reply(self, message: dict, text: str, *, user: dict | None = None, ping: bool = True) -> Exchange:
        """A reply to `message` (a recorded payload) in its channel; `ping` as Discord's "@ on" reply toggle."""
        dm = "guild_id" not in message
        payload = self.payloads.message_payload(text, user=user, dm=dm, mention_bot=ping and not dm,
                                                channel_id=None if dm else int(message["channel_id"]),
                                                reply_to=message)
        return await self.wait(self.feed_message(payload, name="reply"))

    async def thread_message(self, thread_id: int, text: str, *, user: dict | None = None,
                             mention: bool = False) -> Exchange:
        """A message in a thread (`mention`: it @mentions the bot, as it must without the content intent)."""
        content = f"<@{BOT_USER_ID}> {text}" if mention else text
        payload = self.payloads.message_payload(content, user=user, dm=False, mention_bot=mention,
                                                channel_id=thread_id)
        return await self.wait(self.feed_message(payload, name="thread message"))

    async def message_command(self, name: str, target: dict, *, user: dict | None = None) -> Exchange:
        """Right-click `target` (a message payload) → Apps → `name`."""
        payload = self.payloads.message_command(name, target, user=user, dm="guild_id" not in target)
        return await self.wait(self.feed_interaction(payload, name=f"context menu {name}"))

    async def channel_message(self, text: str, *, user: dict | None = None) -> Exchange:
        """A channel message that does not mention the bot."""
        return await self.wait(self.feed_message(self.payloads.message_payload(text, user=user, dm=False), name="chatter"))
