"""Who may use the bot, and how often: rate limit, guild allowlist, admin check, token shape. No Discord I/O."""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable, Iterable

from bot.app import replies as messages


class RateLimiter:
    """At most `limit` requests per user in any `window` seconds (sliding window)."""

    def __init__(self, limit: int, window: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window
        self._clock = clock
        self._seen: dict[int, deque[float]] = {}

    def hit(self, user_id: int) -> float | None:
        """Record a request; None if allowed, else the seconds until the user may ask again."""
        now = self._clock()
        times = self._seen.setdefault(user_id, deque())
        while times and now - times[0] >= self.window:
            times.popleft()
        if len(times) >= self.limit:
            return max(0.0, self.window - (now - times[0]))
        times.append(now)
        if len(self._seen) > 10_000:  # forget idle users so memory stays bounded
            self._seen = {u: t for u, t in self._seen.items() if t and now - t[-1] < self.window}
        return None


def guild_allowed(guild_id: int | None, allowlist: frozenset[int]) -> bool:
    """Direct messages are always allowed; servers only when listed (an empty list allows all)."""
    return guild_id is None or not allowlist or guild_id in allowlist


def is_admin(*, manage_guild: bool, role_ids: Iterable[int], role_names: Iterable[str],
             admin_role: str | None) -> bool:
    """Manage Server permission, or the configured admin role (by name, case-insensitive, or id)."""
    if manage_guild:
        return True
    if not admin_role:
        return False
    wanted = admin_role.strip().lower()
    return any(str(r) == wanted for r in role_ids) or any(n.lower() == wanted for n in role_names)


_TOKEN_SHAPE = re.compile(r"^[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{20,}$")


def bot_token(raw: str) -> str:
    """The token as Discord wants it: without a pasted "Bot " prefix or surrounding space."""
    token = raw.strip()
    return token[4:].strip() if token.lower().startswith("bot ") else token


def token_problem(token: str) -> str | None:
    """None when `token` looks like a bot token, else the message explaining what to do."""
    if not token:
        return messages.text("TOKEN_MISSING")
    if not _TOKEN_SHAPE.match(token):
        return messages.text("TOKEN_MALFORMED")
    return None
