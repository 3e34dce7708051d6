"""One bot process of a sharded deployment, driven through the harness (tests/integration/test_shards.py).

Started as `python -m tests.integration.shard_worker` with the deployment's settings in its environment
(DISCORD_SHARDS, DISCORD_SHARD_IDS, CHROMA_HOST, PAPERBOT_USER_DB). It opens the services as `paperbot run`
does, builds the bot with bot.app.client.make_bot, and then reads one JSON command per stdin line, answering
each with one JSON line on stdout:

    {"slash": "saved list", "options": {}}      → {"text": …, "buttons": [...]}   the exchange's visible text
    {"click": "Save"}                           → the same, for a button on the last message shown
    {"watch": true}                             → {"text": …, "sent": n}          one check of the watches
    {"shards": true}                            → {"sharded": …, "count": …, "ids": [...]}
"""

from __future__ import annotations

import asyncio
import json
import sys

from bot.app.client import make_bot
from bot.harness import Harness
from bot.runtime import open_services
from paperbot.settings import Settings


def _buttons(messages: list[dict]) -> list[str]:
    return [c.get("label", "") for m in messages for row in m.get("components") or [] for c in row["components"]]


async def main() -> int:
    settings = Settings.from_env()
    loop = asyncio.get_running_loop()
    async with open_services(settings, use_llm=False) as services:
        bot = make_bot(services)
        async with Harness(bot) as h:
            print(json.dumps({"ready": True}), flush=True)
            last: dict | None = None
            while line := await loop.run_in_executor(None, sys.stdin.readline):
                command = json.loads(line)
                if "slash" in command:
                    ex = await h.slash(command["slash"], **command.get("options", {}))
                elif "click" in command:
                    assert last is not None, "nothing shown yet to click on"
                    ex = await h.click(last, command["click"])
                elif "watch" in command:
                    ex = await h.background(bot.watcher.run_once())
                    print(json.dumps({"text": ex.text(), "sent": len(ex.messages)}), flush=True)
                    continue
                else:
                    print(json.dumps({"sharded": settings.discord.sharded, "count": getattr(bot, "shard_count", None),
                                      "ids": getattr(bot, "shard_ids", None)}), flush=True)
                    continue
                if ex.messages:
                    last = ex.messages[-1]
                print(json.dumps({"text": ex.text(), "buttons": _buttons(ex.messages)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
