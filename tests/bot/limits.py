"""Checks every recorded Discord payload against the API's limits and the no-ping rule.

The limits are Discord's documented ones, written here and not taken from the
bot's own constants, so a wrong constant in the bot fails these checks.
(discord.com/developers/docs: Message resource, Embed limits; Application
commands, autocomplete.)
"""

from __future__ import annotations

import re
from types import SimpleNamespace

from bot.harness import Call

DISCORD = SimpleNamespace(
    CONTENT=2000,  # message content
    EMBEDS=10,  # embeds per message
    TITLE=256, DESCRIPTION=4096, FIELDS=25, FIELD_NAME=256, FIELD_VALUE=1024, FOOTER=2048,
    TOTAL=6000,  # all embed text of one message together
    CHOICES=25, CHOICE_NAME=100, CHOICE_VALUE=100,  # autocomplete answers
)

# A mention that would ping if Discord parsed it: @everyone/@here or <@id>, <@!id>, <@&id> intact.
LIVE_MENTION = re.compile(r"@(everyone|here)\b|<@[!&]?\d+>")


def embed_problems(embed: dict) -> list[str]:
    problems = []
    title = embed.get("title") or ""
    desc = embed.get("description") or ""
    footer = (embed.get("footer") or {}).get("text") or ""
    fields = embed.get("fields") or []
    if len(title) > DISCORD.TITLE:
        problems.append(f"title {len(title)}")
    if len(desc) > DISCORD.DESCRIPTION:
        problems.append(f"description {len(desc)}")
    if len(footer) > DISCORD.FOOTER:
        problems.append(f"footer {len(footer)}")
    if len(fields) > DISCORD.FIELDS:
        problems.append(f"{len(fields)} fields")
    for f in fields:
        if not f["name"] or len(f["name"]) > DISCORD.FIELD_NAME:
            problems.append(f"field name {len(f['name'])}")
        if not f["value"] or len(f["value"]) > DISCORD.FIELD_VALUE:
            problems.append(f"field value {len(f['value'])}")
    return problems


def message_problems(body: dict) -> list[str]:
    problems = []
    content = body.get("content") or ""
    embeds = body.get("embeds") or []
    if len(content) > DISCORD.CONTENT:
        problems.append(f"content {len(content)}")
    if len(embeds) > DISCORD.EMBEDS:
        problems.append(f"{len(embeds)} embeds")
    total = 0
    for e in embeds:
        problems += embed_problems(e)
        total += (len(e.get("title") or "") + len(e.get("description") or "")
                  + len((e.get("footer") or {}).get("text") or "")
                  + sum(len(f["name"]) + len(f["value"]) for f in e.get("fields") or []))
    if total > DISCORD.TOTAL:
        problems.append(f"embeds total {total}")
    if not content and not embeds and ("content" in body or "embeds" in body):  # (an edit may change only buttons)
        problems.append("empty message")
    mentions = body.get("allowed_mentions")
    if (not isinstance(mentions, dict) or mentions.get("parse") != [] or mentions.get("users")
            or mentions.get("roles") or mentions.get("replied_user", False) is not False):
        problems.append(f"allowed_mentions {mentions!r}")
    return problems


def call_problems(call: Call) -> list[str]:
    if call.callback_type == 8:
        choices = call.json["data"]["choices"]
        bad = [c for c in choices if not 1 <= len(c["name"]) <= DISCORD.CHOICE_NAME or len(c["value"]) > DISCORD.CHOICE_VALUE]
        return ([f"{len(choices)} choices"] if len(choices) > DISCORD.CHOICES else []) + [f"choice {c}" for c in bad]
    body = call.message
    return message_problems(body) if body is not None else []


def assert_calls_ok(calls: list[Call]) -> None:
    problems = {f"{c.method} {c.path}": p for c in calls if (p := call_problems(c))}
    assert not problems, problems


def visible_text(body: dict) -> str:
    parts = [body.get("content") or ""]
    for e in body.get("embeds") or []:
        parts += [e.get("title") or "", e.get("description") or "", (e.get("footer") or {}).get("text") or ""]
        parts += [f["name"] + "\n" + f["value"] for f in e.get("fields") or []]
    return "\n".join(parts)
