"""The bot without Discord: a mock-client harness, and `paperbot chat` built on it.

`Harness` drives the real discord.py machinery (ConnectionState, CommandTree,
Interaction, views) with gateway payloads shaped like Discord's, and records every
REST call the bot makes instead of sending it, answering each as Discord would
(message ids, callback resources). Nothing touches the network.

`run_repl` is `paperbot chat`: each line goes through the same harness, so the
terminal shows exactly the messages the bot would post.
"""

from __future__ import annotations

import asyncio
import contextvars
import datetime as dt
import itertools
import json
import sys
import textwrap
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import discord
from discord.webhook.async_ import AsyncWebhookAdapter, async_context

from bot import format as fmt
from bot.app import PaperBot
from paperbot import messages
from paperbot.settings import Settings

APP_ID = 111111111111111111
GUILD_ID = 222222222222222222
CHANNEL_ID = 333333333333333333
ADMIN_ROLE_ID = 444444444444444444
BOT_USER_ID = APP_ID
MANAGE_GUILD = discord.Permissions(manage_guild=True).value
MEMBER_PERMS = discord.Permissions(send_messages=True, view_channel=True, read_message_history=True,
                                   embed_links=True).value

_exchange: contextvars.ContextVar[Exchange | None] = contextvars.ContextVar("paperbot_exchange", default=None)


@dataclass
class Call:
    """One REST request the bot made: route, JSON body, and when."""

    method: str
    path: str  # the route template, e.g. /interactions/{webhook_id}/{webhook_token}/callback
    url: str
    json: dict | list | None
    at: float
    params: dict | None = None

    @property
    def is_callback(self) -> bool:
        return self.path.endswith("/callback")

    @property
    def callback_type(self) -> int | None:
        return self.json.get("type") if self.is_callback and isinstance(self.json, dict) else None

    @property
    def message(self) -> dict | None:
        """The message body this call sends or edits (content, embeds, components, flags…), if any."""
        if not isinstance(self.json, dict):
            return None
        if self.is_callback:
            data = self.json.get("data")
            return data if self.callback_type in (4, 7) and isinstance(data, dict) else None
        if any(k in self.json for k in ("content", "embeds", "components")):
            return self.json
        return None


@dataclass
class Exchange:
    """Everything one synthetic event caused: the calls, the messages created, timing."""

    name: str
    started: float = field(default_factory=time.perf_counter)
    calls: list[Call] = field(default_factory=list)
    message_ids: list[int] = field(default_factory=list)  # created or edited
    tasks: set[asyncio.Task] = field(default_factory=set)
    harness: Harness | None = None

    @property
    def sends(self) -> list[Call]:
        """Calls that carry a message (not defers, typing or autocomplete answers)."""
        return [c for c in self.calls if c.message is not None]

    @property
    def messages(self) -> list[dict]:
        """Final state of every message this exchange created or edited, in order."""
        assert self.harness is not None
        return [self.harness.messages[m] for m in self.message_ids if m in self.harness.messages]

    @property
    def embeds(self) -> list[dict]:
        return [e for m in self.messages for e in m.get("embeds") or []]

    def text(self) -> str:
        """All visible text of the final messages (content, titles, descriptions, fields, footers)."""
        return "\n".join(render_message(m, width=10_000) for m in self.messages)

    def first_latency(self) -> float | None:
        """Seconds from the event to the first call that carries a message."""
        sends = self.sends
        return sends[0].at - self.started if sends else None

    def last_latency(self) -> float | None:
        sends = self.sends
        return sends[-1].at - self.started if sends else None


class _RecordingWebhookAdapter(AsyncWebhookAdapter):
    def __init__(self, harness: Harness) -> None:
        super().__init__()
        self.harness = harness

    async def request(self, route, session, *, payload=None, multipart=None, files=None, params=None,
                      **_: Any) -> Any:
        return await self.harness._handle(route, _body(payload, multipart), params)


def _body(payload, multipart) -> Any:
    if payload is not None:
        return payload
    for part in multipart or []:
        if part.get("name") == "payload_json":
            return json.loads(part["value"])
    return None


def _now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat()


class Harness:
    """Runs a PaperBot against synthetic gateway events; records what it would send.

        async with Harness(bot) as h:
            ex = await h.slash("ask", question="how do people fine-tune by masking weights?")
            ex.calls[0].callback_type  # 5: deferred, thinking
    """

    def __init__(self, bot: PaperBot, *, admin_role_name: str = "paper-admins") -> None:
        self.bot = bot
        self.admin_role_name = admin_role_name
        self.calls: list[Call] = []
        self.messages: dict[int, dict] = {}
        self._ids = itertools.count(discord.utils.time_snowflake(dt.datetime.now(dt.timezone.utc)))
        self._originals: dict[str, int] = {}  # interaction token -> original response message id
        self._interactions: dict[str, dict] = {}  # token -> payload
        self._adapter: _RecordingWebhookAdapter | None = None
        self._old_factory = None
        self.on_call: Callable[[Call], None] | None = None  # sees every recorded request as it is made

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
        bot.http.request = self._rest_request  # type: ignore[method-assign]
        self._adapter = _RecordingWebhookAdapter(self)
        state = bot._connection
        state.user = discord.ClientUser(state=state, data=self.bot_user())
        state.application_id = APP_ID
        await bot.setup_hook()
        state.parse_guild_create(self.guild_payload())

    async def stop(self) -> None:
        await self.bot.close()
        asyncio.get_running_loop().set_task_factory(self._old_factory)

    def _task_factory(self, loop, coro, context=None):
        task = asyncio.Task(coro, loop=loop, context=context)
        ex = _exchange.get() if context is None else context.get(_exchange)
        if ex is not None and "timeout_task_impl" not in getattr(coro, "__qualname__", ""):
            ex.tasks.add(task)
        return task

    # -- payloads ----------------------------------------------------------------------

    def next_id(self) -> int:
        return next(self._ids)

    def bot_user(self) -> dict:
        return {"id": str(BOT_USER_ID), "username": "paperbot", "discriminator": "0", "global_name": "paperbot",
                "avatar": None, "bot": True, "verified": True, "mfa_enabled": False, "flags": 0}

    @staticmethod
    def user(user_id: int = 555555555555555555, name: str = "alice") -> dict:
        return {"id": str(user_id), "username": name, "discriminator": "0", "global_name": name.title(),
                "avatar": None, "public_flags": 0}

    def guild_payload(self) -> dict:
        everyone = {"id": str(GUILD_ID), "name": "@everyone", "permissions": str(MEMBER_PERMS), "position": 0,
                    "color": 0, "hoist": False, "managed": False, "mentionable": False, "flags": 0}
        admin = {"id": str(ADMIN_ROLE_ID), "name": self.admin_role_name, "permissions": str(MEMBER_PERMS),
                 "position": 1, "color": 0, "hoist": False, "managed": False, "mentionable": True, "flags": 0}
        channel = {"id": str(CHANNEL_ID), "type": 0, "guild_id": str(GUILD_ID), "name": "papers", "position": 0,
                   "permission_overwrites": [], "nsfw": False, "parent_id": None, "topic": None,
                   "rate_limit_per_user": 0, "last_message_id": None, "flags": 0}
        return {"id": str(GUILD_ID), "name": "Lab", "icon": None, "owner_id": "1", "afk_timeout": 300,
                "verification_level": 0, "default_message_notifications": 0, "explicit_content_filter": 0,
                "roles": [everyone, admin], "emojis": [], "stickers": [], "features": [], "mfa_level": 0,
                "system_channel_id": None, "system_channel_flags": 0, "rules_channel_id": None,
                "vanity_url_code": None, "description": None, "banner": None, "premium_tier": 0,
                "preferred_locale": "en-US", "public_updates_channel_id": None, "nsfw_level": 0,
                "premium_progress_bar_enabled": False, "member_count": 3, "large": False, "unavailable": False,
                "channels": [channel], "threads": [], "members": [], "voice_states": [], "presences": [],
                "stage_instances": [], "guild_scheduled_events": [], "joined_at": _now_iso()}

    def _member(self, user: dict, roles: Iterable[int], permissions: int | None = None) -> dict:
        m = {"user": user, "roles": [str(r) for r in roles], "joined_at": _now_iso(), "deaf": False, "mute": False,
             "flags": 0, "nick": None, "avatar": None}
        if permissions is not None:
            m["permissions"] = str(permissions)
        return m

    def _where(self, payload: dict, user: dict, *, dm: bool, roles: Iterable[int], permissions: int) -> None:
        if dm:
            cid = 600000000000000000 + int(user["id"]) % 10**15  # one DM channel per user
            payload.update(channel_id=str(cid), user=user, context=1,
                           channel={"id": str(cid), "type": 1, "recipients": [user], "last_message_id": None,
                                    "flags": 0},
                           authorizing_integration_owners={"1": user["id"]})
        else:
            payload.update(channel_id=str(CHANNEL_ID), guild_id=str(GUILD_ID), context=0,
                           guild_locale="en-US", member=self._member(user, roles, permissions),
                           channel={"id": str(CHANNEL_ID), "type": 0, "guild_id": str(GUILD_ID), "name": "papers",
                                    "position": 0, "permission_overwrites": [], "nsfw": False, "parent_id": None,
                                    "flags": 0},
                           authorizing_integration_owners={"0": str(GUILD_ID)})

    def _interaction(self, itype: int, data: dict, *, user: dict | None, dm: bool, roles: Iterable[int],
                     permissions: int, message: dict | None = None) -> dict:
        token = f"token-{self.next_id()}"
        payload: dict = {"id": str(self.next_id()), "application_id": str(APP_ID), "type": itype, "token": token,
                         "version": 1, "data": data, "locale": "en-US", "entitlements": [],
                         "app_permissions": str(MEMBER_PERMS), "attachment_size_limit": 8 * 1024 * 1024}
        self._where(payload, user or self.user(), dm=dm, roles=roles, permissions=permissions)
        if message is not None:
            payload["message"] = message
        self._interactions[token] = payload
        return payload

    def _options(self, command: discord.app_commands.Command, options: dict, focused: str | None = None) -> list:
        types = {p.name: p.type.value for p in command.parameters}
        out = []
        for name, value in options.items():
            opt = {"name": name, "type": types.get(name, discord.AppCommandOptionType.string.value), "value": value}
            if name == focused:
                opt["focused"] = True
            out.append(opt)
        return out

    # -- driving -----------------------------------------------------------------------

    def _command(self, name: str) -> discord.app_commands.Command:
        command = self.bot.tree.get_command(name)
        if command is None:
            raise KeyError(f"no command /{name}")
        return command  # type: ignore[return-value]

    def feed_interaction(self, payload: dict, name: str = "") -> Exchange:
        """Hand an INTERACTION_CREATE payload to the gateway parser, as the websocket would."""
        ex = Exchange(name=name or payload["data"].get("name", "interaction"), harness=self)
        contextvars.copy_context().run(self._feed, ex, self.bot._connection.parse_interaction_create, payload)
        return ex

    def _feed(self, ex: Exchange, parse, payload: dict) -> None:
        # Tasks the parser starts inherit this context: the exchange they belong to, and the
        # recording adapter that interaction responses and webhooks go through.
        _exchange.set(ex)
        async_context.set(self._adapter)
        parse(payload)

    def feed_message(self, payload: dict, name: str = "message") -> Exchange:
        """Hand a MESSAGE_CREATE payload to the gateway parser."""
        ex = Exchange(name=name, harness=self)
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
                        raise t.exception()  # type: ignore[misc]
                return ex
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{ex.name}: still running after {timeout} s")
            await asyncio.wait(pending, timeout=left)

    def slash_payload(self, name: str, *, user: dict | None = None, dm: bool = False, roles: Iterable[int] = (),
                      permissions: int = MEMBER_PERMS, **options: Any) -> dict:
        command = self._command(name)
        data = {"id": str(self.next_id()), "name": name, "type": 1, "options": self._options(command, options)}
        if not dm:
            data["guild_id"] = str(GUILD_ID)
        return self._interaction(2, data, user=user, dm=dm, roles=roles, permissions=permissions)

    async def slash(self, name: str, **kwargs: Any) -> Exchange:
        """Invoke /name with options, as a user in the lab server (dm=True: in a DM)."""
        return await self.wait(self.feed_interaction(self.slash_payload(name, **kwargs)))

    async def autocomplete(self, name: str, option: str, value: str, *, user: dict | None = None,
                           dm: bool = False, **others: Any) -> Exchange:
        command = self._command(name)
        data = {"id": str(self.next_id()), "name": name, "type": 1,
                "options": self._options(command, {**others, option: value}, focused=option)}
        payload = self._interaction(4, data, user=user, dm=dm, roles=(), permissions=MEMBER_PERMS)
        return await self.wait(self.feed_interaction(payload, name=f"autocomplete {name}"))

    async def click(self, message: dict, label: str, *, user: dict | None = None, dm: bool | None = None) -> Exchange:
        """Press the button labelled `label` on `message` (a recorded message payload)."""
        button = find_button(message, label)
        if button is None:
            raise LookupError(f"no button {label!r} on message {message.get('id')}")
        if dm is None:
            dm = "guild_id" not in message
        data = {"custom_id": button["custom_id"], "component_type": 2}
        payload = self._interaction(3, data, user=user, dm=dm, roles=(), permissions=MEMBER_PERMS, message=message)
        return await self.wait(self.feed_interaction(payload, name=f"click {label}"))

    def message_payload(self, content: str, *, user: dict | None = None, dm: bool = True,
                        mention_bot: bool = False) -> dict:
        user = user or self.user()
        payload = {"id": str(self.next_id()), "author": user, "content": content, "timestamp": _now_iso(),
                   "edited_timestamp": None, "tts": False, "mention_everyone": False, "mentions": [],
                   "mention_roles": [], "attachments": [], "embeds": [], "pinned": False, "type": 0, "flags": 0,
                   "components": []}
        if dm:
            payload["channel_id"] = str(600000000000000000 + int(user["id"]) % 10**15)
        else:
            payload.update(channel_id=str(CHANNEL_ID), guild_id=str(GUILD_ID),
                           member={k: v for k, v in self._member(user, ()).items() if k != "user"})
            if mention_bot:
                payload["mentions"] = [{**self.bot_user(), "member": {"roles": [], "joined_at": _now_iso(),
                                                                      "deaf": False, "mute": False, "flags": 0}}]
        return payload

    async def dm(self, text: str, *, user: dict | None = None) -> Exchange:
        return await self.wait(self.feed_message(self.message_payload(text, user=user, dm=True), name="dm"))

    async def mention(self, text: str, *, user: dict | None = None) -> Exchange:
        """A channel message that @mentions the bot (the mention is prepended to `text`)."""
        payload = self.message_payload(f"<@{BOT_USER_ID}> {text}", user=user, dm=False, mention_bot=True)
        return await self.wait(self.feed_message(payload, name="mention"))

    async def channel_message(self, text: str, *, user: dict | None = None) -> Exchange:
        """A channel message that does not mention the bot."""
        return await self.wait(self.feed_message(self.message_payload(text, user=user, dm=False), name="chatter"))

    # -- the fake Discord API ------------------------------------------------------------

    async def _rest_request(self, route: discord.http.Route, *, files=None, form=None, **kwargs: Any) -> Any:
        body = kwargs.get("json")
        if body is None and form:
            body = _body(None, form)
        return await self._handle(route, body, kwargs.get("params"))

    async def _handle(self, route, body, params) -> Any:
        call = Call(method=route.method, path=route.path, url=route.url, json=body, at=time.perf_counter(),
                    params=params)
        self.calls.append(call)
        if self.on_call is not None:
            self.on_call(call)
        ex = _exchange.get()
        if ex is not None:
            ex.calls.append(call)
        await asyncio.sleep(0)  # a real request yields to the loop
        return self._respond(route, body or {}, ex)

    def _new_message(self, channel_id: int, body: dict, ex: Exchange | None, *, flags: int = 0,
                     guild: bool = False, mid: int | None = None) -> dict:
        mid = mid or self.next_id()
        msg = {"id": str(mid), "channel_id": str(channel_id), "author": self.bot_user(),
               "content": body.get("content") or "", "timestamp": _now_iso(), "edited_timestamp": None,
               "tts": False, "mention_everyone": False, "mentions": [], "mention_roles": [], "attachments": [],
               "embeds": body.get("embeds") or [], "pinned": False, "type": 0,
               "flags": (body.get("flags") or 0) | flags, "components": body.get("components") or []}
        if guild:
            msg["guild_id"] = str(GUILD_ID)
        self.messages[mid] = msg
        if ex is not None:
            ex.message_ids.append(mid)
        return msg

    def _edit(self, mid: int, body: dict, ex: Exchange | None) -> dict:
        msg = self.messages.get(mid)
        if msg is None:
            msg = self._new_message(CHANNEL_ID, {}, None, mid=mid)
        if ex is not None and mid not in ex.message_ids:
            ex.message_ids.append(mid)
        for key in ("content", "embeds", "components"):
            if key in body:
                msg[key] = body[key] if body[key] is not None else ([] if key != "content" else "")
        msg["edited_timestamp"] = _now_iso()
        return msg

    def _respond(self, route, body: dict, ex: Exchange | None) -> Any:
        path = route.path
        token = getattr(route, "webhook_token", None)
        inter = self._interactions.get(token or "")
        if path.endswith("/callback"):
            rtype = body.get("type")
            data = body.get("data") or {}
            flags = data.get("flags") or 0
            response = {"interaction": {"id": str(route.webhook_id), "type": inter["type"] if inter else 2,
                                        "response_message_loading": rtype == 5,
                                        "response_message_ephemeral": bool(flags & 64)}}
            if rtype in (4, 5) and inter is not None:
                msg = self._new_message(int(inter["channel_id"]), data, ex, guild="guild_id" in inter)
                self._originals[token] = int(msg["id"])
                response["interaction"]["response_message_id"] = msg["id"]
                response["resource"] = {"type": rtype, "message": msg}
            elif rtype == 7 and inter is not None and "message" in inter:
                msg = self._edit(int(inter["message"]["id"]), data, ex)
                response["resource"] = {"type": rtype, "message": msg}
            return response
        if "/messages/@original" in path or "/messages/{message_id}" in path:
            if "@original" in path:
                mid = self._originals.get(token or "")
            else:
                mid = int(route.url.rsplit("/", 1)[-1].split("?")[0])
            if route.method == "DELETE":
                self.messages.pop(mid or 0, None)
                return None
            if mid is None:
                raise RuntimeError("edit of an original response that was never sent")
            return self._edit(mid, body, ex) if route.method == "PATCH" else self.messages[mid]
        if path == "/webhooks/{webhook_id}/{webhook_token}" and route.method == "POST":
            channel = int(inter["channel_id"]) if inter else CHANNEL_ID
            return self._new_message(channel, body, ex, guild=bool(inter and "guild_id" in inter))
        if path == "/channels/{channel_id}/messages" and route.method == "POST":
            return self._new_message(int(route.channel_id), body, ex,
                                     guild=int(route.channel_id) == CHANNEL_ID)
        if path.endswith("/commands") and route.method == "PUT":
            return [{**c, "id": str(self.next_id()), "application_id": str(APP_ID), "version": "1"} for c in body]
        return None


def find_button(message: dict, label: str) -> dict | None:
    for row in message.get("components") or []:
        for c in row.get("components") or []:
            if c.get("type") == 2 and c.get("label") == label:
                return c
    return None


def buttons(message: dict) -> list[str]:
    return [c.get("label", "") for row in message.get("components") or [] for c in row.get("components") or []
            if c.get("type") == 2]


# -- terminal rendering ------------------------------------------------------------------------


def render_message(message: dict, width: int = 100) -> str:
    """A recorded message as plain text: what a person sees in Discord, minus the styling."""

    def wrap(text: str, indent: str = "") -> list[str]:
        out = []
        for line in fmt.unescape(text).split("\n"):
            out += textwrap.wrap(line, width=width, initial_indent=indent, subsequent_indent=indent) or [""]
        return out

    lines: list[str] = []
    if message.get("content"):
        lines += wrap(message["content"])
    for embed in message.get("embeds") or []:
        if embed.get("title"):
            lines += wrap(embed["title"])
            lines.append("")
        if embed.get("description"):
            lines += wrap(embed["description"])
        for f in embed.get("fields") or []:
            lines.append("")
            lines += wrap(f["name"])
            lines += wrap(f["value"], indent="    ")
        if embed.get("footer"):
            lines += ["", fmt.unescape(embed["footer"]["text"])]
    labels = buttons(message)
    if labels:
        lines += ["", "  ".join(f"[{b}]" for b in labels)]
    return "\n".join(lines)


# -- paperbot chat ---------------------------------------------------------------------------

REPL_HELP = """\
Type a question, or: /search QUERY, /paper LABEL-OR-ID, /about, more (sources of the last answer),
next / prev (pages of the last search), share, quit."""


class _StreamEcho:
    """Prints an LLM answer to the terminal as it is written, from the bot's own preview edits."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.shown = ""

    def __call__(self, call: Call) -> None:
        body = call.json if isinstance(call.json, dict) else {}
        embeds = body.get("embeds") or []
        if call.method != "PATCH" or not embeds or embeds[0].get("footer", {}).get("text") != messages.WRITING:
            return
        text = embeds[0].get("description") or ""
        if text.startswith(self.shown):
            self.stream.write(text[len(self.shown):])
        else:
            self.stream.write("\n" + text)
        self.shown = text
        self.stream.flush()

    def finish(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
        self.shown = ""


async def _repl(settings: Settings, lines, out, library=None) -> int:
    # One person at a terminal: the per-user rate limit would only get in the way of scripts.
    relaxed = replace(settings, discord=replace(settings.discord, rate_limit=10_000, rate_window=1.0))
    bot = PaperBot(relaxed, library=library)
    interactive = lines is sys.stdin and sys.stdin.isatty()
    async with Harness(bot) as h:
        streamed = _StreamEcho(sys.stderr) if settings.llm.enabled else None
        h.on_call = streamed
        if interactive:
            print(REPL_HELP, file=out)
        last: dict[str, dict] = {}
        while True:
            if interactive:
                print("> ", end="", file=out, flush=True)
            line = await asyncio.to_thread(lines.readline)
            if not line:
                return 0
            line = line.strip()
            if not line:
                continue
            word, _, rest = line.partition(" ")
            rest = rest.strip()
            if line.lower() in {"quit", "exit", "/quit", "/exit"}:
                return 0
            if line.lower() in {"help", "/help"}:
                print(REPL_HELP, file=out)
                continue
            if word == "/search" and rest:
                ex = await h.slash("search", query=rest)
                kind = "search"
            elif word == "/paper" and rest:
                ex = await h.slash("paper", paper=rest)
                kind = "paper"
            elif word == "/about":
                ex = await h.slash("about")
                kind = "about"
            elif line.lower() in {"more", "next", "prev", "share"}:
                label = {"more": "More sources", "next": "Next", "prev": "Previous", "share": "Share in channel"}[
                    line.lower()]
                target = last.get("search" if label in {"Next", "Previous"} else "answer")
                if target is None or find_button(target, label) is None:
                    print(f"(no [{label}] button to press)", file=out)
                    continue
                ex = await h.click(target, label)
                kind = "search" if label in {"Next", "Previous"} else "click"
            else:
                question = rest if word == "/ask" else line
                ex = await h.slash("ask", question=question)
                kind = "answer"
            if streamed is not None:
                streamed.finish()
            for m in ex.messages:
                print(render_message(m), file=out)
                print("-" * 40, file=out)
            if kind in {"answer", "search"} and ex.messages:
                last[kind] = ex.messages[-1]
            out.flush()


def run_repl(settings: Settings, lines=None, out=None, library=None) -> int:
    """`paperbot chat`: questions from stdin, answered exactly as the bot would; EOF or quit exits 0.

    `library` (optional) is an already open Library; by default the bot opens its own.
    """
    return asyncio.run(_repl(settings, lines or sys.stdin, out or sys.stdout, library))
