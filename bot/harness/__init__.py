"""The bot without Discord: real discord.py classes driven by synthetic gateway payloads.

    payloads.py   payload builders (users, the lab server, interactions, messages)
    rest.py       the fake REST API that records calls and answers as Discord would
    driver.py     Harness: feeds events to discord.py's ConnectionState and waits for what they cause

Used by the tests, the benchmarks and `paperbot chat`.
"""

from bot.harness.driver import Harness
from bot.harness.payloads import (
           ADMIN_ROLE_ID,
           APP_ID,
           BOT_ROLE_ID,
           BOT_USER_ID,
           CHANNEL_ID,
           GUILD_ID,
           MANAGE_GUILD,
           MEMBER_PERMS,
           Upload,
)
from bot.harness.rest import Call, Exchange, find_button

__all__ = ["ADMIN_ROLE_ID", "APP_ID", "BOT_ROLE_ID", "BOT_USER_ID", "CHANNEL_ID", "GUILD_ID", "MANAGE_GUILD", "MEMBER_PERMS", "Call",
           "Exchange", "Harness", "Upload", "find_button"]
