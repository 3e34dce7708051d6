"""A raw record made ready to read, and entries of one paper made one: control characters and HTML entities
removed, an OpenReview note unwrapped, a withdrawn or rejected submission recognised, a repeat merged."""

from __future__ import annotations

import dataclasses
import html
import re
from typing import Any

from ingest import fields as F
from ingest.parse.decode import MAX_NESTING
from ingest.parse.draft import OPENREVIEW, Draft
from paperbot.text import strip_control

_URL_KEYS = F.names("url")
_ENTITY = re.compile(r"&(#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|amp|lt|gt|quot|apos|nbsp);")
_NOT_ACCEPTED = re.compile(r"\b(withdrawn?|desk[ _-]?rejected?|rejected)([ _]submission)?\b|^\s*(reject|withdraw)\b"
                           r"|^\s*submitted\s+to\b", re.IGNORECASE)
_RANK = {"": 0, "poster": 1, "spotlight": 2, "oral": 3}


def clean(rec: dict) -> tuple[dict, int]:
    """The record with control characters removed from every text in it (1 when something was removed), and
    HTML entities read as the characters they stand for."""
    changed = False

    def walk(value: Any, depth: int) -> Any:
        nonlocal changed
        if isinstance(value, str):
            cleaned = strip_control(value)
            changed = changed or cleaned != value
            # HTML entities some scrapers leave ("D&#x27;Amour"; a ";" inside would split an author list).
            return _ENTITY.sub(lambda m: html.unescape(m.group()), cleaned) if "&" in cleaned else cleaned
        if depth > MAX_NESTING:
            return value
        if isinstance(value, dict):
            return {walk(k, depth + 1) if isinstance(k, str) else k: walk(v, depth + 1) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, depth + 1) for v in value]
        return value

    out = walk(rec, 0)
    return out, int(changed)


def unwrap_note(rec: dict) -> dict:
    """An OpenReview note (v2: content.<field>.value; v1: content.<field>) as a flat record with a forum link."""
    content = rec.get("content")
    if not isinstance(content, dict):
        return rec
    flat = {k: (v["value"] if isinstance(v, dict) and "value" in v else v) for k, v in content.items()}
    note_id = rec.get("id") or rec.get("forum")
    forum = rec.get("forum") or note_id
    flat.setdefault("id", note_id)
    if isinstance(forum, str) and forum and not any(flat.get(k) for k in _URL_KEYS):
        flat["url"] = f"{OPENREVIEW}/forum?id={forum}"
    return flat


def not_accepted(rec: dict) -> str:
    """The decision of a withdrawn or rejected submission ("Reject", "Submitted to NeurIPS 2024"), else ""."""
    for key in F.names("decision"):
        value = rec.get(key)
        if isinstance(value, str) and _NOT_ACCEPTED.search(value):
            return " ".join(value.split())[:60]
    return ""


def merge(first: Draft, again: Draft) -> Draft:
    """A repeated entry fills what the first one lacked; the strongest presentation type wins."""
    filled = dataclasses.replace(first, **{f.name: getattr(first, f.name) or getattr(again, f.name)
                                          for f in dataclasses.fields(Draft)})
    return dataclasses.replace(
        filled, presentation=max(first.presentation, again.presentation, key=lambda t: _RANK.get(t, 0)),
        slots=tuple(dict.fromkeys(first.slots + again.slots)),  # a talk and its poster: both kept
        links=tuple(dict.fromkeys(first.links + again.links)))
