"""Commands, views and checks see the bot through one narrow seam (bot/app/seam.py), and PaperBot provides it."""

from __future__ import annotations

import inspect
import re

from bot.app.client import PaperBot
from bot.app.seam import USERS, BotSeam
from tests.test_architecture import REPO


def _members() -> set[str]:
    names = set(getattr(BotSeam, "__annotations__", {}))
    names |= {n for n, v in vars(BotSeam).items() if callable(v) and not n.startswith("_")}
    return names


def test_the_seam_covers_everything_commands_views_and_checks_use():
    used: dict[str, set[str]] = {}
    for name in USERS:
        text = (REPO / name).read_text(encoding="utf-8")
        found = set(re.findall(r"\bbot_of\(interaction\)\.([A-Za-z_]\w*)", text))
        found |= set(re.findall(r"(?<![\w.])bot\.([A-Za-z_]\w*)", text))
        used[name] = found - {"app"}  # `bot.app` is the package in import lines
    outside = {name: sorted(u - _members()) for name, u in used.items() if u - _members()}
    assert not outside, f"used beyond bot/app/seam.py's BotSeam: {outside}"


def test_paperbot_provides_the_seam():
    init = inspect.getsource(PaperBot.__init__)
    missing = [n for n in sorted(_members()) if not hasattr(PaperBot, n) and f"self.{n} =" not in init]
    assert not missing, f"PaperBot lacks {missing}"
    methods = [n for n, v in vars(BotSeam).items() if callable(v) and not n.startswith("_")]
    for name in methods:
        assert inspect.iscoroutinefunction(getattr(BotSeam, name)) == inspect.iscoroutinefunction(
            getattr(PaperBot, name)), name
