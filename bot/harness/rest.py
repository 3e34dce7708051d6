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
        return await self.rest.handle(route, _body(payload, multipart), params)


def _body(payload, multipart) -> Any:
    if payload is not None:
        return payload
    for part in multipart or []:
        if part.get("name") == "payload_json":
            return json.loads(part["value"])
    return None


class FakeDiscord:
    """The REST side of Discord: messages by id, interaction originals, every call in order."""

    def __init__(self, payloads: Payloads) -> None:
        self.payloads = payloads
        self.calls: list[Call] = []
        self.messages: dict[int, dict] = {}
        self._originals: dict[str, int] = {}  # interaction token -> original response message id
        self.on_call: Callable[[Call], None] | None = None  # sees every recorded request as it is made

    async def rest_request(self, route: discord.http.Route, *, files=None, form=None, **kwargs: Any) -> Any:
        body = kwargs.get("json")
        if body is None and form:
            body = _body(None, form)
        return await self.handle(route, body, kwargs.get("params"))

    async def handle(self, route, body, params) -> Any:
        call = Call(method=route.method, path=route.path, url=route.url, json=body, at=time.perf_counter(),
                    params=params)
        self.calls.append(call)
        if self.on_call is not None:
            self.on_call(call)
        ex = current_exchange.get()
        if ex is not None:
            ex.calls.append(call)
        await asyncio.sleep(0)  # a real request yields to the loop
        return self._respond(route, body or {}, ex)

    def _new_message(self, channel_id: int, body: dict, ex: Exchange | None, *, flags: int = 0,
                     guild: bool = False, mid: int | None = None) -> dict:
        mid = mid or self.payloads.next_id()
        msg = {"id": str(mid), "channel_id": str(channel_id), "author": self.payloads.bot_user(),
               "content": body.get("content") or "", "timestamp": now_iso(), "edited_timestamp": None,
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
        msg["edited_timestamp"] = now_iso()
        return msg

    def _respond(self, route, body: dict, ex: Exchange | None) -> Any:
        path = route.path
        token = getattr(route, "webhook_token", None)
        inter = self.payloads.interactions.get(token or "")
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
            return [{**c, "id": str(self.payloads.next_id()), "application_id": str(APP_ID), "version": "1"} for c in body]
        return None


def find_button(message: dict, label: str) -> dict | None:
    for row in message.get("components") or []:
        for c in row.get("components") or []:
            if c.get("type") == 2 and c.get("label") == label:
                return c
    return None
