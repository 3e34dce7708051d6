"""Slash command names and descriptions in the user's language, through discord.py's Translator.

Discord asks for every locale at sync; we answer for Chinese (zh-CN, zh-TW) from
bot/app/messages.COMMANDS_ZH and leave the rest to the English defaults.
"""

from __future__ import annotations

import discord
from discord import app_commands

from bot.app import replies as bot_messages

CATALOGUES = {discord.Locale.chinese: bot_messages.COMMANDS_ZH, discord.Locale.taiwan_chinese: bot_messages.COMMANDS_ZH}


class PaperTranslator(app_commands.Translator):
    async def translate(self, string: app_commands.locale_str, locale: discord.Locale,
                        context: app_commands.TranslationContext) -> str | None:
        return CATALOGUES.get(locale, {}).get(string.message)
