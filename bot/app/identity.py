"""What one of the bot's own messages says about itself, written and read in this module only.

After a restart nothing of the bot's memory is left, but Discord keeps its messages, so a message carries what
a click, a follow-up or the context menu needs from it: an answer's question and a search's query in its
card's title (`question_title`, `query_title`, read back by `question_of`, `query_of`), the papers it
numbered in its More sources button's custom_id (bot/app/views.py `listing_from_message`). A title
clipped to Discord's 256 characters has lost part of its text: the readers say None unless told that a
clipped text will do (a follow-up's context).
"""

from __future__ import annotations

from collections.abc import Iterable

import discord

from bot.app.markdown import ELLIPSIS, TITLE, escape, unescape

QUESTION = "Q: "
QUERY = "Search: "


def question_title(question: str) -> str:
    """An answer's title (escaped; embeds.py clips it to TITLE)."""
    return QUESTION + escape(question)


def query_title(query: str) -> str:
    """A search result's title."""
    return QUERY + escape(query)


def question_of(message: discord.Message, *, clipped: bool = False) -> str | None:
    """The question one of the bot's answers (or answer previews) is about; None for any other message,
    or for a clipped title unless `clipped` (then what is left, without the ellipsis)."""
    return _title_text(message.embeds, QUESTION, clipped)


def query_of(message: discord.Message) -> str | None:
    """The query one of the bot's search results was for; None for any other message or a clipped title."""
    return _title_text(message.embeds, QUERY, False)


def asked_in(message: discord.Message) -> str | None:
    """What the bot's answer or search result was asked for, whichever it is (None for any other message)."""
    return question_of(message) or query_of(message)


def _title_text(cards: Iterable[discord.Embed], prefix: str, clipped: bool) -> str | None:
    for embed in cards:
        title = embed.title or ""
        if title.startswith(prefix):
            if title.endswith(ELLIPSIS) and len(title) > TITLE // 2:  # clip() cut it: part of the text is lost
                return unescape(title[len(prefix):]).rstrip(ELLIPSIS).strip() if clipped else None
            return unescape(title[len(prefix):])
    return None
