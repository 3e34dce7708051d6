"""A fake Discord REST API: records every request the bot makes and answers it as Discord would.

`Call` is one request; `Exchange` is everything one synthetic event caused. The
webhook adapter routes interaction responses and follow-ups here too.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import discord
from discord.webhook.async_ import AsyncWebhookAdapter

from bot.harness.payloads import APP_ID, CHANNEL_ID, GUILD_ID, Payloads, now_iso
from bot.terminal import render_message

# The exchange the running task belongs to (set by the driver for every fed event).
current_exchange: contextvars.ContextVar[Exchange | None] = contextvars.ContextVar("paperbot_exchange", default=None)


@dataclass
class Call:
    """One REST request the bot made: route, JSON body, and when."""

    method: str
    path: str  # the route template, e.g. /interactions/{webhook_id}/{webhook_token}/callback
    url: str
    json: dict | list | None
    at: float
    params: dict | None = None
    files: list[tuple[str, bytes]] = field(default_factory=list)  # uploaded (filename, bytes)

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
    rest: FakeDiscord | None = None

    @property
    def sends(self) -> list[Call]:
        """Calls that carry a message (not defers, typing or autocomplete answers)."""
        return [c for c in self.calls if c.message is not None]

    @property
    def messages(self) -> list[dict]:
        """Final state of every message this exchange created or edited, in order."""
        assert self.rest is not None
        return [self.rest.messages[m] for m in self.message_ids if m in self.rest.messages]

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


class RecordingWebhookAdapter(AsyncWebhookAdapter):
    def __init__(self, rest: FakeDiscord) -> None:
        super().__init__()
        self.rest = rest

    async def request(self, route, session, *, payload=None, multipart=None, files=None, params=None,
                      **_: Any) -> Any:
        return await self.rest.handle(route, _body(payload, multipart), params, _files(multipart))


def _files(parts) -> list[tuple[str, bytes]]:
    """The files a multipart request uploads, as (filename, bytes)."""
    out = []
    for part in parts or []:
        if str(part.get("name", "")).startswith("files["):
            value = part["value"]
            if hasattr(value, "read"):
                value.seek(0)
                value = value.read()
            out.append((part.get("filename") or "file", bytes(value)))
    return out


def _body(payload, multipart) -> Any:
    if payload is not None:
        return payload
    for part in multipart or []:
        if part.get("name") == "payload_json":
            return json.loads(part["value"])
    return None


class _Response:
    """What discord.py's HTTP errors read from a response."""

    def __init__(self, status: int, reason: str) -> None:
        self.status = status
        self.reason = reason


def _response(status: int, reason: str) -> Any:
    """A stand-in for the aiohttp response discord.py's HTTP errors read (its status and reason)."""
    return _Response(status, reason)


def forbidden() -> discord.Forbidden:
    return discord.Forbidden(_response(403, "Forbidden"), {"code": 50013, "message": "Missing Permissions"})


def not_found(what: str = "Unknown Message", code: int = 10008) -> discord.NotFound:
    return discord.NotFound(_response(404, "Not Found"), {"code": code, "message": what})


class FakeDiscord:
    """The REST side of Discord: messages by id (the bot's and the users'), threads, interaction originals,
    every call in order.

    `latency` delays every answer (the request has reached Discord: its effect stays even if the bot
    stops waiting); `forbidden` lists channels where the bot lacks permissions (403, code 50013).
    """

    def __init__(self, payloads: Payloads) -> None:
        self.payloads = payloads
        self.calls: list[Call] = []
        self.messages: dict[int, dict] = {}
        self.threads: dict[int, dict] = {}  # thread id -> channel payload
        self.forbidden: set[int] = set()
        self.latency: Callable[[Call], float] | None = None
        self._originals: dict[str, int] = {}  # interaction token -> original response message id
        self.on_call: Callable[[Call], None] | None = None  # sees every recorded request as it is made
        self.on_thread: Callable[[dict], None] | None = None  # the gateway's THREAD_CREATE, fed by the driver
        self.cdn: dict[str, bytes] = {}  # attachment url -> its bytes
        self.cdn_reads: list[str] = []

    def store(self, message: dict) -> None:
        """A message someone else posted (fed through the gateway): Discord keeps it for later fetches."""
        self.messages[int(message["id"])] = message

    def forget_interaction(self, token: str) -> None:
        self._originals.pop(token, None)

    async def get_from_cdn(self, url: str) -> bytes:
        """An attachment download (discord.py fetches these outside the REST API)."""
        self.cdn_reads.append(url)
        await asyncio.sleep(0)
        if url not in self.cdn:
            raise not_found("Not Found", 0)
        return self.cdn[url]

    async def rest_request(self, route: discord.http.Route, *, files=None, form=None, **kwargs: Any) -> Any:
        body = kwargs.get("json")
        if body is None and form:
            body = _body(None, form)
        return await self.handle(route, body, kwargs.get("params"), _files(form))

    async def handle(self, route, body, params, files: list[tuple[str, bytes]] | None = None) -> Any:
        call = Call(method=route.method, path=route.path, url=route.url, json=body, at=time.perf_counter(),
                    params=params, files=files or [])
        self.calls.append(call)
        if self.on_call is not None:
            self.on_call(call)
        ex = current_exchange.get()
        if ex is not None:
            ex.calls.append(call)
        channel_id = getattr(route, "channel_id", None)
        if channel_id is not None and int(channel_id) in self.forbidden:
            await asyncio.sleep(0)
            raise forbidden()
        result = self._respond(route, body or {}, ex, params)
        if call.files and isinstance(result, dict):
            message = result.get("resource", {}).get("message") if "resource" in result else result
            if isinstance(message, dict) and "channel_id" in message:
                self._attach(message, call.files)
        await asyncio.sleep(self.latency(call) if self.latency is not None else 0)  # a real request yields
        return result

    def _new_message(self, channel_id: int, body: dict, ex: Exchange | None, *, flags: int = 0,
                     guild: bool = False, mid: int | None = None) -> dict:
        mid = mid or self.payloads.next_id()
        msg = {"id": str(mid), "channel_id": str(channel_id), "author": self.payloads.bot_user(),
               "content": body.get("content") or "", "timestamp": now_iso(), "edited_timestamp": None,
               "tts": False, "mention_everyone": False, "mentions": [], "mention_roles": [], "attachments": [],
               "embeds": body.get("embeds") or [], "pinned": False, "type": 0,
               "flags": (body.get("flags") or 0) | flags, "components": body.get("components") or []}
        ref = body.get("message_reference")
        if ref:
            msg["type"] = 19  # a reply
            msg["message_reference"] = {"message_id": str(ref["message_id"]), "channel_id": str(channel_id),
                                        **({"guild_id": str(GUILD_ID)} if guild else {})}
            msg["referenced_message"] = self.messages.get(int(ref["message_id"]))
        if guild:
            msg["guild_id"] = str(GUILD_ID)
        self.messages[mid] = msg
        if ex is not None:
            ex.message_ids.append(mid)
        return msg

    def _attach(self, message: dict, files: list[tuple[str, bytes]]) -> None:
        """Uploaded files become the message's attachments, their bytes downloadable from the CDN."""
        stored = self.messages.get(int(message["id"]), message)
        for name, data in files:
            aid = str(self.payloads.next_id())
            url = f"https://cdn.discordapp.com/attachments/{stored['channel_id']}/{aid}/{name}"
            self.cdn[url] = data
            stored.setdefault("attachments", []).append({"id": aid, "filename": name, "size": len(data), "url": url,
                                                         "proxy_url": url})
        message["attachments"] = stored.get("attachments", [])

    def attachment(self, message: dict, suffix: str) -> bytes | None:
        """The bytes of the message's first attached file whose name ends with `suffix`."""
        for a in self.messages.get(int(message["id"]), message).get("attachments") or []:
            if a["filename"].endswith(suffix):
                return self.cdn.get(a["url"])
        return None

    def _edit(self, mid: int, body: dict, ex: Exchange | None) -> dict:
        msg = self.messages.get(mid)
        if msg is None:
            msg = self._new_message(CHANNEL_ID, {}, None, mid=mid)
        if ex is not None and mid not in ex.message_ids:
            ex.message_ids.append(mid)
        for key in ("content", "embeds", "components"):
            if key in body:
                msg[key] = body[key] if body[key] is not None else ([] if key != "content" else "")
        msg["edited_timestamp"] = now_iso()
        return msg

    def _history(self, channel_id: int, params: dict) -> list[dict]:
        """GET /channels/{id}/messages: newest first, `before` / `after` a message id, at most `limit`."""
        found = sorted((m for m in self.messages.values() if int(m["channel_id"]) == channel_id),
                       key=lambda m: int(m["id"]))
        limit = int(params.get("limit") or 50)
        if params.get("after"):
            found = [m for m in found if int(m["id"]) > int(params["after"])][:limit]
        if params.get("before"):
            found = [m for m in found if int(m["id"]) < int(params["before"])][-limit:]
        return found[-limit:][::-1]

    def _new_thread(self, channel_id: int, message_id: int, body: dict) -> dict:
        """A thread started from a message: its id is the message's; the gateway then sends THREAD_CREATE."""
        starter = self.messages.get(message_id)
        if starter is None:
            raise not_found()
        if message_id in self.threads:
            raise discord.HTTPException(_response(400, "Bad Request"),
                                        {"code": 160004, "message": "A thread has already been created for this "
                                                                    "message"})
        thread = {"id": str(message_id), "type": 11, "guild_id": str(GUILD_ID), "parent_id": str(channel_id),
                  "owner_id": self.payloads.bot_user()["id"], "name": body.get("name") or "thread",
                  "last_message_id": None, "rate_limit_per_user": 0, "message_count": 0, "member_count": 1,
                  "flags": 0, "newly_created": True,
                  "thread_metadata": {"archived": False, "auto_archive_duration": body.get("auto_archive_duration")
                                      or 1440, "archive_timestamp": now_iso(), "locked": False}}
        self.threads[message_id] = thread
        if self.on_thread is not None:
            self.on_thread(thread)
        return thread

    def _respond(self, route, body: dict, ex: Exchange | None, params: dict | None = None) -> Any:
        path = route.path
        token = getattr(route, "webhook_token", None) or ""
        inter = self.payloads.interactions.get(token)
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
                self._originals[token] = int(msg["id"])
                response["resource"] = {"type": rtype, "message": msg}
            elif rtype == 6 and inter is not None and "message" in inter:
                self._originals[token] = int(inter["message"]["id"])  # @original: the component's message
            return response
        if path == "/channels/{channel_id}/messages/{message_id}/threads" and route.method == "POST":
            return self._new_thread(int(route.channel_id), int(route.url.rstrip("/").split("/")[-2]), body)
        if path.endswith(("/messages/@original", "/messages/{message_id}")):
            if "@original" in path:
                mid = self._originals.get(token or "")
            else:
                mid = int(route.url.rsplit("/", 1)[-1].split("?")[0])
            if route.method == "DELETE":
                self.messages.pop(mid or 0, None)
                return None
            if mid is None:
                raise RuntimeError("edit of an original response that was never sent")
            if route.method == "GET" and mid not in self.messages:
                raise not_found()
            return self._edit(mid, body, ex) if route.method == "PATCH" else self.messages[mid]
        if path == "/webhooks/{webhook_id}/{webhook_token}" and route.method == "POST":
            channel = int(inter["channel_id"]) if inter else CHANNEL_ID
            return self._new_message(channel, body, ex, guild=bool(inter and "guild_id" in inter))
        if path == "/channels/{channel_id}/messages" and route.method == "POST":
            channel = int(route.channel_id)
            return self._new_message(channel, body, ex, guild=channel == CHANNEL_ID or channel in self.threads)
        if path == "/channels/{channel_id}/messages" and route.method == "GET":
            return self._history(int(route.channel_id), params or {})
        if path == "/users/@me/channels" and route.method == "POST":  # opening a DM with a user
            user = self.payloads.user(int(body["recipient_id"]))
            return {"id": str(self.payloads.dm_channel_id(user)), "type": 1, "recipients": [user],
                    "last_message_id": None, "flags": 0}
        if path == "/users/{user_id}" and route.method == "GET":
            return self.payloads.user(int(route.url.rsplit("/", 1)[-1]))
        if path == "/guilds/{guild_id}/members/{member_id}" and route.method == "GET":  # every user is in the lab's
            guild_id, user_id = (int(x) for x in route.url.rstrip("/").split("/")[-3::2])
            if guild_id != GUILD_ID:
                raise not_found("Unknown Member", 10007)
            return self.payloads.member(self.payloads.user(user_id), ())
        if path.endswith("/commands") and route.method == "PUT":
            return [{"description": "", **c, "id": str(self.payloads.next_id()), "application_id": str(APP_ID),
                     "version": "1"} for c in body]
        return None


def find_button(message: dict, label: str) -> dict | None:
    """The button labelled `label`, in English or in the translation the bot shows Chinese readers."""
    from bot.app import replies as messages

    names = {label} | {messages.ZH[k] for k, v in vars(messages).items()
                       if k.endswith("_LABEL") and v == label and k in messages.ZH}
    for row in message.get("components") or []:
        for c in row.get("components") or []:
            if c.get("type") == 2 and c.get("label") in names:
                return c
    return None
