"""The one error handler: users get a short message, the log gets the details."""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord import app_commands

from bot.app import replies as bot_messages
from bot.app.access import Refusal
from bot.app.embeds import text_pages
from bot.app.sending import reply, respond
from paperbot import messages
from paperbot.errors import EmptyCorpusError, PaperbotError, StoreRestartingError, StoreUnavailableError
from paperbot.language import message_language

log = logging.getLogger(__name__)

MISSING_PERMISSIONS = (50001, 50013)  # Missing Access, Missing Permissions


def describe_error(error: BaseException, where: str, lang: str = "en") -> str:
    """The user's short message for `error`, in `lang`; the log gets the details."""
    if isinstance(error, app_commands.CommandInvokeError):
        error = error.original
    if isinstance(error, Refusal):
        log.info("refused %s: %s", where, error)
        return error.message(lang)
    if isinstance(error, app_commands.CheckFailure):
        log.info("check failed for %s: %s", where, error)
        return messages.text("INTERNAL_ERROR", lang)
    if isinstance(error, StoreRestartingError):
        log.warning("store restarting during %s: %s", where, error)
        return bot_messages.text("STORE_RESTARTING", lang)
    if isinstance(error, StoreUnavailableError):
        log.warning("store unavailable during %s", where, exc_info=error)
        return bot_messages.text("STORE_UNAVAILABLE", lang)
    if isinstance(error, EmptyCorpusError):
        log.warning("empty store during %s", where, exc_info=error)
        return messages.text("EMPTY_STORE", lang)
    if isinstance(error, PaperbotError):
        log.error("failed %s", where, exc_info=error)
        return messages.text("INTERNAL_ERROR", lang)
    log.error("unexpected error in %s", where, exc_info=error)
    return messages.text("INTERNAL_ERROR", lang)


async def report_interaction_error(interaction: discord.Interaction, error: BaseException) -> None:
    """Tell the user (ephemerally) what went wrong with a command or a button."""
    data: dict[str, Any] = dict(interaction.data or {})
    name = interaction.command.qualified_name if interaction.command else str(data.get("custom_id", "?"))
    lang = message_language(_question(interaction), str(interaction.locale))
    text = describe_error(error, f"/{name} by user {interaction.user.id}", lang)
    if interaction.type is discord.InteractionType.autocomplete:
        return
    try:
        await respond(interaction, text_pages(text)[:1], ephemeral=True)
    except discord.HTTPException:
        log.warning("could not tell the user about an error (the interaction may have expired)", exc_info=True)


def missing_permissions(error: BaseException) -> bool:
    return isinstance(error, discord.Forbidden) and error.code in MISSING_PERMISSIONS


class PermissionWarnings:
    """One warning per channel where the bot may not post (later ones are debug noise); one per client."""

    LIMIT = 10_000  # channels remembered; then the memory starts afresh

    def __init__(self) -> None:
        self._warned: set[int] = set()

    def warn(self, channel_id: int, error: BaseException) -> None:
        if channel_id in self._warned:
            log.debug("still missing permissions in channel %s: %s", channel_id, error)
            return
        if len(self._warned) >= self.LIMIT:
            self._warned.clear()
        self._warned.add(channel_id)
        log.warning("missing permissions in channel %s (%s); not answering there. Grant the bot View Channel, "
                    "Send Messages, Embed Links and Read Message History (docs/discord.md)", channel_id, error)


async def report_message_error(message: discord.Message, error: BaseException, where: str,
                               warnings: PermissionWarnings) -> None:
    """Tell the author of a DM or mention what went wrong with their question.

    Where the bot lacks permissions, it posts nothing (it could not) and logs one warning per channel.
    """
    if missing_permissions(error):
        warnings.warn(message.channel.id, error)
        return
    text = describe_error(error, where, message_language(message.content))
    try:
        await reply(message, text_pages(text))
    except discord.HTTPException as exc:
        if missing_permissions(exc):
            warnings.warn(message.channel.id, exc)
        else:
            log.warning("could not tell the user about an error", exc_info=True)


def _question(interaction: discord.Interaction) -> str | None:
    """The text the user typed in a command's options (its language chooses the message's), if any."""
    data: dict[str, Any] = dict(interaction.data or {})
    options: list[dict[str, Any]] = list(data.get("options") or [])
    return " ".join(str(o.get("value", "")) for o in options if isinstance(o.get("value"), str)) or None
