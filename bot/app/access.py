"""Who may run a command: the checks, and the refusals they raise (shown to the user as they are)."""

from __future__ import annotations

import math

import discord
from discord import app_commands

from bot.app import replies as messages
from bot.app.markdown import escape
from bot.app.guard import guild_allowed, is_admin
from bot.app.seam import BotSeam, bot_of
from paperbot.records import Reach


class Refusal(app_commands.CheckFailure):
    """An expected refusal, written for the user: the message `name` with `fields`, shown in the user's language."""

    def __init__(self, name: str, **fields) -> None:
        self.name, self.fields = name, fields
        super().__init__(messages.text(name, "en", **fields))

    def message(self, lang: str = "en") -> str:
        return messages.text(self.name, lang, **self.fields)


class RateLimited(Refusal):
    def __init__(self, retry_after: float) -> None:
        self.retry_after = retry_after
        super().__init__("RATE_LIMITED", seconds=max(1, math.ceil(retry_after)))


class NotAdmin(Refusal):
    pass


class GuildNotAllowed(Refusal):
    pass


class ServersOnly(Refusal):
    pass


def rate_limited(interaction: discord.Interaction) -> bool:
    """Questions (/ask, /search, the context menu): the user's question budget."""
    retry = bot_of(interaction).limiter.hit(interaction.user.id)
    if retry is not None:
        raise RateLimited(retry)
    return True


def lookup_limited(interaction: discord.Interaction) -> bool:
    """Cheap lookups (/paper, buttons) have their own, larger bucket: they never use up questions."""
    retry = bot_of(interaction).lookups.hit(interaction.user.id)
    if retry is not None:
        raise RateLimited(retry)
    return True


def admins_only(interaction: discord.Interaction) -> bool:
    return _managers_only(interaction, bot_of(interaction).settings.discord.admin_role, "REINDEX_SERVERS_ONLY",
                          "NOT_ADMIN")


def _managers_only(interaction: discord.Interaction, role: str | None, servers_only: str, refused: str) -> bool:
    """In a server, members with Manage Server (or Administrator) or `role`; else the refusals named."""
    if interaction.guild_id is None:
        raise ServersOnly(servers_only)
    roles = getattr(interaction.user, "roles", [])
    if not is_admin(manage_guild=interaction.permissions.manage_guild or interaction.permissions.administrator,
                    role_ids=[r.id for r in roles], role_names=[r.name for r in roles], admin_role=role):
        raise NotAdmin(refused, role=escape(role)) if role else NotAdmin(f"{refused}_NO_ROLE")
    return True


def library_editors(interaction: discord.Interaction) -> bool:
    """/library add, remove and dms: members with Manage Server, or the library role (LIBRARY_ROLE; the admin
    role when unset)."""
    return _managers_only(interaction, bot_of(interaction).settings.discord.library_role, "LIBRARY_SERVERS_ONLY",
                          "LIBRARY_NOT_EDITOR")


def server_allowed(interaction: discord.Interaction) -> bool:
    """Every interaction: servers outside DISCORD_GUILD_ALLOWLIST are refused (commands) or ignored."""
    if guild_allowed(interaction.guild_id, bot_of(interaction).settings.discord.guild_allowlist):
        return True
    if interaction.type is discord.InteractionType.application_command:
        raise GuildNotAllowed("GUILD_NOT_ALLOWED")
    return False


async def reach_of(bot: BotSeam, guild_id: int | None, user: discord.abc.User) -> Reach:
    """Which server libraries a question sees: in a server, its own; in a DM, those of the servers the user is in
    that allow it (`/library dms`); the program always."""
    if guild_id is not None:
        return Reach.server(guild_id)
    return await bot.dm_reach(user.id)


async def interaction_reach(interaction: discord.Interaction) -> Reach:
    return await reach_of(bot_of(interaction), interaction.guild_id, interaction.user)
