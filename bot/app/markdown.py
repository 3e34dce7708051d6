"""Discord's text: its length limits, markdown and mention escaping, and cutting text to fit.

Pure functions, used by the pages of bot/app/embeds.py, the titles of bot/app/identity.py and the autocomplete
choices of bot/app/choices.py. Every text that came from a user or an abstract goes through `escape`.
"""

from __future__ import annotations

import re

import discord

from paperbot.text import strip_control

# Discord's documented limits (characters).
CONTENT = 2000
TITLE = 256
DESCRIPTION = 4096
FIELD_NAME = 256
FIELD_VALUE = 1024
FIELDS = 25
FOOTER = 2048
TOTAL = 6000  # all embeds of one message together
EMBEDS = 10  # per message
CHOICES = 25  # autocomplete
CHOICE_NAME = 100
CHOICE_VALUE = 100

ELLIPSIS = "…"
# Discord reads `<…>` as a mention (<@id>, <@!id>, <@&id>, <#id>), a command (</name:id>), an emoji
# (<:name:id>, <a:name:id>), a timestamp (<t:0:R>) or a server page (<id:browse>): a zero-width space after
# the `<` of anything that starts like one keeps it text.
_MARKUP_LIKE = re.compile(r"<(?=[@#/:]|a:|t:|id:)", re.IGNORECASE)
# A `](` whose bracket is preceded by an even number of backslashes (none included) can close a masked
# link: escaping that bracket leaves no `[label](url)` anywhere in a text live ("[1]" stays as it is).
_LIVE_BRACKET = re.compile(r"(?<!\\)((?:\\\\)*)(\])(?=\s*\()")


_UNESCAPE = re.compile(r"\\([\\*_`~|>\[\]#:<@-])")


def escape(text: str) -> str:
    """Text from a user or an abstract, made inert: no markdown, no masked links, no mentions, commands,
    emoji or timestamps, no control or bidirectional characters.

    Mention-like syntax is broken up whatever the id looks like, so nothing reads as one; the bracket of
    every `](` is escaped, so no masked link survives (discord.py's escape_markdown leaves all but the
    first live).
    """
    text = discord.utils.escape_mentions(discord.utils.escape_markdown(strip_control(text)))
    text = _LIVE_BRACKET.sub(r"\1\\\2", text)
    return _MARKUP_LIKE.sub("<\u200b", text)


def defuse(text: str) -> str:
    """Mentions and mention-like markup broken up, markdown left as it is: text shown inside a code block
    that stays inert even when copied out of it."""
    return _MARKUP_LIKE.sub("<\u200b", discord.utils.escape_mentions(text))


def unescape(text: str) -> str:
    """What `escape` made of a text, read back (the bot reads its own titles to rebuild a result)."""
    return _UNESCAPE.sub(r"\1", text).replace("@\u200b", "@").replace("#\u200b", "#").replace("<\u200b", "<")


def _cut_at(text: str, limit: int) -> int:
    """Where to end the first piece of `text` (≤ limit): a line, a sentence, a word, or a hard cut."""
    if len(text) <= limit:
        return len(text)
    window = text[: limit + 1]
    for pattern in (r"\n", r"(?<=[.!?…])\s", r"\s"):
        ends = [m.start() for m in re.finditer(pattern, window) if m.start() > 0]
        # A piece shorter than a third of the limit wastes a message; prefer a finer boundary.
        good = [e for e in ends if e >= limit // 3]
        if good:
            return good[-1]
    cut = limit
    while cut > 1 and text[cut - 1] == "\\":  # never separate an escape from what it escapes
        cut -= 1
    return cut


# What Discord reads as markdown only at the start of a line: a heading, a quote, subtext, a list item.
_LINE_START_MARKUP = re.compile(r"(?:#{1,3}|>{1,3}|-#|[-*+])(?=\s)|\d+(?=\.\s)")


def split_text(text: str, limit: int) -> list[str]:
    """`text` in pieces of at most `limit` characters, cut at the most natural boundary. A piece that starts
    where a line did not ("… results. # of layers …") has its line-start markdown escaped: cut there, "#"
    would become a heading."""
    pieces: list[str] = []
    rest = text.strip()
    mid_line = False
    while rest:
        cut = _cut_at(rest, limit)
        piece = rest[:cut].rstrip()
        m = _LINE_START_MARKUP.match(piece) if mid_line else None
        if m and len(piece) == limit:  # room for the escape
            cut = _cut_at(rest, limit - 1)
            piece = rest[:cut].rstrip()
            m = _LINE_START_MARKUP.match(piece)
        if m:
            piece = (m[0] + "\\" if m[0][0].isdigit() else "\\" + m[0]) + piece[m.end():]
        if piece:
            pieces.append(piece)
        mid_line = cut < len(rest) and "\n" not in rest[cut - 1:cut + 1]
        rest = rest[cut:].lstrip()
    return pieces


def clip(text: str, limit: int) -> str:
    """`text` shortened to `limit` characters at a word boundary, marked with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    if space >= limit // 2:
        head = head[:space]
    head = head.rstrip("\\")
    return head + ELLIPSIS
