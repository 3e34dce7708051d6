"""RFC 5545 calendars (.ics): the events of a plan or of a saved list, for any calendar application.

Times are written in UTC (`…Z`), so no time-zone definitions are needed; text is escaped (backslash,
semicolon, comma, newline); lines end in CRLF and are folded at 75 octets without splitting a UTF-8
character. A stable UID per event makes a re-import update the events instead of adding them again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone

PRODID = "-//paperbot//conference plan//EN"
LINE_OCTETS = 75


@dataclass(frozen=True)
class Event:
    uid: str
    start: datetime  # aware
    end: datetime
    summary: str
    location: str = ""
    url: str = ""
    description: str = ""


def escape_text(value: str) -> str:
    """A TEXT value (RFC 5545 3.3.11): backslash, semicolon, comma and newline escaped; other controls dropped."""
    value = value.replace("\r\n", "\n").replace("\r", "\n")
    value = "".join(c for c in value if c == "\n" or c >= " " and c != "\x7f")
    return value.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")


def fold(line: str) -> str:
    """One content line folded at 75 octets (continuations start with a space), CRLF-terminated."""
    out: list[str] = []
    current: list[str] = []
    size, limit = 0, LINE_OCTETS
    for char in line:
        octets = len(char.encode("utf-8"))
        if size + octets > limit:
            out.append("".join(current))
            current, size, limit = [" "], 1, LINE_OCTETS
        current.append(char)
        size += octets
    out.append("".join(current))
    return "\r\n".join(out) + "\r\n"


def utc(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def calendar(events: Iterable[Event], *, name: str = "paperbot", now: datetime | None = None) -> str:
    """The calendar text; `now` is every event's DTSTAMP (when the file was made)."""
    stamp = utc(now or datetime.now(timezone.utc))
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", f"PRODID:{PRODID}", "CALSCALE:GREGORIAN", "METHOD:PUBLISH",
             f"X-WR-CALNAME:{escape_text(name)}"]
    for e in events:
        lines += ["BEGIN:VEVENT", f"UID:{escape_text(e.uid)}", f"DTSTAMP:{stamp}", f"DTSTART:{utc(e.start)}",
                  f"DTEND:{utc(e.end)}", f"SUMMARY:{escape_text(e.summary)}"]
        if e.location:
            lines.append(f"LOCATION:{escape_text(e.location)}")
        if e.url and "\n" not in e.url and " " not in e.url:
            lines.append(f"URL:{e.url}")
        if e.description:
            lines.append(f"DESCRIPTION:{escape_text(e.description)}")
        lines.append("END:VEVENT")
    lines.append("END:VCALENDAR")
    return "".join(fold(line) for line in lines)
