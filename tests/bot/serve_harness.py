"""`paperbot run` with the mock-client harness in place of Discord: a real bot process that needs no network.

Runs bot.app.lifecycle.serve (the same start-up, heartbeat, signal handling and
shutdown as `paperbot run`) with settings from the environment. Prints `ready`
once the bot serves; with `--dm QUESTION` it then asks that question in a DM and
prints `asked`, and `answered` once the reply was sent. Exits with serve's status.

    python -m tests.bot.serve_harness [--dm QUESTION]        (from a checkout)
    docker run -i --network none IMAGE python - < tests/bot/serve_harness.py
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from bot.app.lifecycle import serve
from bot.cli import setup_logging
from bot.harness import Harness
from paperbot.settings import Settings


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--dm", default="", help="a question to ask in a DM once the bot serves")
    args = p.parse_args(argv)
    settings = Settings.from_env()
    setup_logging(settings)

    async def connect(bot) -> None:
        async with Harness(bot) as h:
            print("ready", flush=True)
            if args.dm:
                ex = h.feed_message(h.payloads.message_payload(args.dm, dm=True))
                print("asked", flush=True)
                await h.wait(ex)
                sends = [c for c in ex.calls if c.method == "POST" and "/messages" in c.path]
                print(f"answered {len(sends)}", flush=True)
            while not bot.is_closed():  # until serve() closes the bot (SIGTERM)
                await asyncio.sleep(0.05)

    return asyncio.run(serve(settings, connect, sync_commands=False))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
