"""Gateway payloads shaped like Discord's: users, the lab server, interactions and messages.

Every id is a fresh snowflake; interaction payloads are remembered by token, so
the fake REST API (rest.py) can answer their callbacks as Discord would.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import discord

APP_ID = 111111111111111111
GUILD_ID = 222222222222222222
CHANNEL_ID = 333333333333333333
ADMIN_ROLE_ID = 444444444444444444
BOT_ROLE_ID = 444444444444444445  # the role Discord creates for the bot when it joins (managed, tagged)
BOT_USER_ID = APP_ID
MANAGE_GUILD = discord.Permissions(manage_guild=True).value
MEMBER_PERMS = discord.Permissions(send_messages=True, view_channel=True, read_message_history=True,
                                   embed_links=True).value


@dataclass(frozen=True)
class Upload:
    """A file a user attaches to a slash command's attachment option; the fake CDN serves its bytes."""

    filename: str
    data: bytes
    content_type: str = "text/plain; charset=utf-8"


def now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat()


class Payloads:
    """Builds payloads with fresh ids; remembers each interaction by its token."""

    def __init__(self, admin_role_name: str = "paper-admins") -> None:
        self.admin_role_name = admin_role_name
        self.interactions: dict[str, dict] = {}  # token -> payload
        self._ids = itertools.count(discord.utils.time_snowflake(dt.datetime.now(dt.timezone.utc)))

    def next_id(self) -> int:
        return next(self._ids)

    def bot_user(self) -> dict:
        return {"id": str(BOT_USER_ID), "username": "paperbot", "discriminator": "0", "global_name": "paperbot",
                "avatar": None, "bot": True, "verified": True, "mfa_enabled": False, "flags": 0}

    @staticmethod
    def user(user_id: int = 555555555555555555, name: str = "alice") -> dict:
        return {"id": str(user_id), "username": name, "discriminator": "0", "global_name": name.title(),
                "avatar": None, "public_flags": 0}

    @staticmethod
    def dm_channel_id(user: dict) -> int:
        return 600000000000000000 + int(user["id"]) % 10**15  # one DM channel per user

    def guild_payload(self) -> dict:
        everyone = {"id": str(GUILD_ID), "name": "@everyone", "permissions": str(MEMBER_PERMS), "position": 0,
                    "color": 0, "hoist": False, "managed": False, "mentionable": False, "flags": 0}
        admin = {"id": str(ADMIN_ROLE_ID), "name": self.admin_role_name, "permissions": str(MEMBER_PERMS),
                 "position": 1, "color": 0, "hoist": False, "managed": False, "mentionable": True, "flags": 0}
        bot_role = {"id": str(BOT_ROLE_ID), "name": "paperbot", "permissions": str(MEMBER_PERMS), "position": 2,
                    "color": 0, "hoist": False, "managed": True, "mentionable": False, "flags": 0,
                    "tags": {"bot_id": str(BOT_USER_ID)}}
        channel = {"id": str(CHANNEL_ID), "type": 0, "guild_id": str(GUILD_ID), "name": "papers", "position": 0,
                   "permission_overwrites": [], "nsfw": False, "parent_id": None, "topic": None,
                   "rate_limit_per_user": 0, "last_message_id": None, "flags": 0}
        return {"id": str(GUILD_ID), "name": "Lab", "icon": None, "owner_id": "1", "afk_timeout": 300,
                "verification_level": 0, "default_message_notifications": 0, "explicit_content_filter": 0,
                "roles": [everyone, admin, bot_role], "emojis": [], "stickers": [], "features": [], "mfa_level": 0,
                "system_channel_id": None, "system_channel_flags": 0, "rules_channel_id": None,
                "vanity_url_code": None, "description": None, "banner": None, "premium_tier": 0,
                "preferred_locale": "en-US", "public_updates_channel_id": None, "nsfw_level": 0,
                "premium_progress_bar_enabled": False, "member_count": 3, "large": False, "unavailable": False,
                "channels": [channel], "threads": [], "members": [], "voice_states": [], "presences": [],
                "stage_instances": [], "guild_scheduled_events": [], "joined_at": now_iso()}

    def member(self, user: dict, roles: Iterable[int], permissions: int | None = None) -> dict:
        m = {"user": user, "roles": [str(r) for r in roles], "joined_at": now_iso(), "deaf": False, "mute": False,
             "flags": 0, "nick": None, "avatar": None}
        if permissions is not None:
            m["permissions"] = str(permissions)
        return m

    def _place(self, payload: dict, user: dict, *, dm: bool, roles: Iterable[int], permissions: int,
               guild: int = GUILD_ID) -> None:
        if dm:
            cid = self.dm_channel_id(user)
            payload.update(channel_id=str(cid), user=user, context=1,
                           channel={"id": str(cid), "type": 1, "recipients": [user], "last_message_id": None,
                                    "flags": 0},
                           authorizing_integration_owners={"1": user["id"]})
        else:
            payload.update(channel_id=str(CHANNEL_ID), guild_id=str(guild), context=0,
                           guild_locale="en-US", member=self.member(user, roles, permissions),
                           channel={"id": str(CHANNEL_ID), "type": 0, "guild_id": str(guild), "name": "papers",
                                    "position": 0, "permission_overwrites": [], "nsfw": False, "parent_id": None,
                                    "flags": 0},
                           authorizing_integration_owners={"0": str(guild)})

    def interaction(self, itype: int, data: dict, *, user: dict | None, dm: bool, roles: Iterable[int],
                     permissions: int, message: dict | None = None, locale: str = "en-US",
                     guild: int = GUILD_ID) -> dict:
        """An INTERACTION_CREATE payload; `guild`: another server than the lab's (its id only: not in the cache)."""
        token = f"token-{self.next_id()}"
        payload: dict = {"id": str(self.next_id()), "application_id": str(APP_ID), "type": itype, "token": token,
                         "version": 1, "data": data, "locale": locale, "entitlements": [],
                         "app_permissions": str(MEMBER_PERMS), "attachment_size_limit": 8 * 1024 * 1024}
        self._place(payload, user or self.user(), dm=dm, roles=roles, permissions=permissions, guild=guild)
        if message is not None:
            payload["message"] = message
        self.interactions[token] = payload
        return payload

    def options(self, command: discord.app_commands.Command, options: dict, focused: str | None = None) -> list:
        types = {p.name: p.type.value for p in command.parameters}
        out = []
        for name, value in options.items():
            opt = {"name": name, "type": types.get(name, discord.AppCommandOptionType.string.value), "value": value}
            if name == focused:
                opt["focused"] = True
            out.append(opt)
        return out

    def message_payload(self, content: str, *, user: dict | None = None, dm: bool = True,
                        mention_bot: bool = False, mention_role: bool = False, channel_id: int | None = None,
                        reply_to: dict | None = None) -> dict:
        """MESSAGE_CREATE: in a DM, the lab channel or `channel_id` (a thread); `reply_to` makes it a reply
        (with the referenced message, as Discord sends it); a reply that pings lists its author in mentions."""
        user = user or self.user()
        payload: dict[str, Any] = {
            "id": str(self.next_id()), "author": user, "content": content, "timestamp": now_iso(),
            "edited_timestamp": None, "tts": False, "mention_everyone": False, "mentions": [],
            "mention_roles": [], "attachments": [], "embeds": [], "pinned": False, "type": 0, "flags": 0,
            "components": []}
        if dm:
            payload["channel_id"] = str(600000000000000000 + int(user["id"]) % 10**15)
        else:
            payload.update(channel_id=str(channel_id or CHANNEL_ID), guild_id=str(GUILD_ID),
                           member={k: v for k, v in self.member(user, ()).items() if k != "user"})
            if mention_bot:
                payload["mentions"] = [{**self.bot_user(), "member": {"roles": [], "joined_at": now_iso(),
                                                                      "deaf": False, "mute": False, "flags": 0}}]
            if mention_role:
                payload["mention_roles"] = [str(BOT_ROLE_ID)]
        if reply_to is not None:
            payload["type"] = 19
            payload["message_reference"] = {"type": 0, "message_id": reply_to["id"],
                                            "channel_id": reply_to["channel_id"],
                                            **({"guild_id": reply_to["guild_id"]} if "guild_id" in reply_to else {})}
            payload["referenced_message"] = reply_to
        return payload

    def message_command(self, name: str, target: dict, *, user: dict | None = None, dm: bool = False) -> dict:
        """A message context-menu command (type 2, data.type 3) on `target`, a message payload."""
        data = {"id": str(self.next_id()), "name": name, "type": 3, "target_id": target["id"],
                "resolved": {"messages": {target["id"]: target}}}
        if not dm:
            data["guild_id"] = str(GUILD_ID)
        return self.interaction(2, data, user=user, dm=dm, roles=(), permissions=MEMBER_PERMS)
