"""escape(): document and user text shown inertly, whatever markdown it is built from (property-based)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.app.autocomplete import value_choices
from bot.app.markdown import escape, unescape

# Pieces Discord markdown is made of, and text around them.
TOKENS = ["[", "]", "(", ")", "<", ">", "\\", "https://evil.example/x", "https://openreview.net", "@", "#", "/",
          ":", "a:", "t:", "id:", "0", "123456789012345678", ":R", "everyone", "here", "ask", "e", "*", "_", "`",
          "~", "|", "-", " ", "\n", "word", "\u202e", "\u2066", "\u200f", "\x1b[31m", "\x00"]
markdown = st.lists(st.sampled_from(TOKENS), max_size=40).map("".join)

_ESCAPED = re.compile(r"\\.", re.DOTALL)  # what Discord shows literally
_MASKED_LINK = re.compile(r"\[[^\]]*\]\(")
_MARKUP = re.compile(r"<(@[!&]?\d|#\d|/[\w -]+:\d|a?:\w+:\d|t:-?\d|id:\w)", re.IGNORECASE)
_PING = re.compile(r"@(everyone|here)\b")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def live(text: str) -> list[str]:
    """The constructs Discord would render in `text` (links, mentions, commands, emoji, timestamps, pings)."""
    shown = _ESCAPED.sub("x", text)
    return [m.group() for pattern in (_MASKED_LINK, _MARKUP, _PING) for m in pattern.finditer(shown)]


@pytest.mark.parametrize("text", [
    "[a](https://good.example) and [b](https://evil.example)",
    "see [openreview.net](https://evil.example) [x](<https://evil.example>) [[y]](https://evil.example)",
    "</ask:123456789012345678> </paper search:1> <t:0:R> <t:1700000000> <:emoji:1> <a:x:1> <id:browse>",
    "<@123> <@!123> <@&123> <#123> @everyone @here",
    "a\\[b](https://evil.example) \\\\[c](https://evil.example)",
])
def test_known_hostile_markup_is_shown_as_text(text):
    out = escape(text)
    assert live(out) == [], out
    if "\\" not in text:  # the bot reads its own titles back (backslashes in the source are not round-tripped)
        assert unescape(out) == text


@settings(max_examples=400, deadline=None)
@given(markdown)
def test_no_generated_markdown_stays_live_after_escape(text):
    out = escape(text)
    assert live(out) == [], (text, out)
    assert not _CONTROLS.search(out)


def test_autocomplete_choice_names_have_no_bidirectional_or_control_characters():
    [(name, value)] = value_choices(["\u202eevil\u202c Name\x1b[2J"])
    assert name == "evil Name" and value == "\u202eevil\u202c Name\x1b[2J"
