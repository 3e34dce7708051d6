"""One record → a typed draft of its paper (the fields, whichever format and names it gave them) → a Paper.

Which names each field goes by is the table in `ingest.fields`; this reads them into one shape.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from typing import Any

from ingest import fields as F
from ingest.labels import derive_label, find_links
from ingest.parse.place import Place
from paperbot.records import PAPER_FIELDS, Paper, Slot

MIN_ABSTRACT_CHARS = 20
OPENREVIEW = "https://openreview.net"
CONFERENCE_SITE = "https://neurips.cc"
_ABSTRACT_KEYS = F.names("abstract")
_ID_KEYS = F.names("id")
_TITLE_KEYS = F.names("title")
_AREA_KEYS = F.names("area")
_TYPE_KEYS = F.names("type")
_TRACK_KEYS = F.names("track")[1:]  # the first is the track as written; the rest are parsed for one
_TLDR_KEYS = F.names("tldr")
_URL_KEYS = F.names("url")
_PDF_KEYS = F.names("pdf_url")
_SITE_KEYS = F.names("site_url")
_START_KEYS, _END_KEYS = F.names("start"), F.names("end")
_ROOM_KEYS, _POSTER_KEYS = F.names("room"), F.names("poster")
_BARE_HOST = re.compile(r"^[\w-]+(\.[\w-]+)*\.[a-z]{2,}(/\S*)?$", re.IGNORECASE)
_ID_SAFE = re.compile(r"[^A-Za-z0-9._:-]+")
_PRESENTATION = re.compile(r"\b(oral|spotlight|poster)s?\b", re.IGNORECASE)
_TRACK_IN_PATH = re.compile(r"/([A-Za-z][A-Za-z_]*?)_Track\b")


@dataclass(frozen=True)
class Draft:
    """A record's fields in one shape, before they are checked and made a Paper (see `to_paper`)."""

    id: str = ""  # as the record writes it; `safe_id` makes the paper id of it
    title: str = ""
    abstract: str = ""
    authors: tuple[str, ...] = ()
    affiliations: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    area: str = ""
    subarea: str = ""
    presentation: str = ""  # "oral", "spotlight", "poster" or ""
    track: str = ""
    venue: str = ""
    tldr: str = ""
    url: str = ""
    pdf_url: str = ""
    site_url: str = ""
    links: tuple[str, ...] = ()
    bibtex: str = ""
    title_zh: str = ""
    slots: tuple[Slot, ...] = ()


# The fields a Draft hands to its Paper as they are (the others are made in `to_paper`).
_PAPER_NAMES = frozenset(f.name for f in PAPER_FIELDS) - {"paper_id", "source", "position", "label"}


def text_id(text: str) -> str:
    """Content-derived paper id: the same abstract always gets the same id."""
    norm = " ".join(unicodedata.normalize("NFC", text).split()).lower()
    return "p" + hashlib.sha256(norm.encode("utf-8")).hexdigest()[:15]


def draft_of(rec: dict, place: Place) -> Draft:
    """The canonical fields of one (normalized) record, whichever format it came from."""
    abstract = " ".join(_text(rec, _ABSTRACT_KEYS, place).split())
    author_key, author_value = _first(rec, F.names("authors"))
    authors, places = _names(author_value, place, author_key)
    if not places:
        aff_key, aff_value = _first(rec, F.names("affiliations"))
        if aff_value is not None:
            places = _affiliations(aff_value, authors, place, aff_key)
    keywords, _ = _names(_first(rec, F.names("keywords"))[1], place, "keywords")
    area = _text(rec, _AREA_KEYS, place)
    subarea = _text(rec, F.names("subarea"), place)
    if "->" in area:
        area, _, sub = (part.strip() for part in area.partition("->"))
        subarea = subarea or sub
    kind = ""
    for key in _TYPE_KEYS:
        kind = _presentation(_text(rec, (key,), place))
        if kind:
            break
    track = _text(rec, F.names("track")[:1], place)
    if track.islower() and " " not in track:  # paperlists' "main"
        track = track.capitalize()
    for key in _TRACK_KEYS:
        track = track or _track(_text(rec, (key,), place))
    if any(_text(rec, (k,), place).lower() == "workshop" for k in ("status", "decision")):
        track = "Workshop"  # accepted to the conference's workshop track (ICLR 2018)
    pdf = _text(rec, _PDF_KEYS, place)
    if pdf.startswith("/"):
        pdf = OPENREVIEW + pdf
    site = _text(rec, _SITE_KEYS, place)
    if site.startswith("/"):  # the conference site's program gives paths on its own site
        site = CONFERENCE_SITE + site
    url = _url(rec, place)
    if site.startswith(OPENREVIEW):  # an OpenReview forum given as the "site" is the paper's own page
        url, site = url or site, ""
    venue = _text(rec, ("venue",), place)
    if not venue:
        venue = " ".join(v for v in (_text(rec, F.names("conference"), place),
                                      _text(rec, F.names("year"), place)) if v)
    bibtex = F.lookup(rec, "bibtex") or F.lookup(rec, "_bibtex") or F.lookup(rec, "bib") or ""
    return Draft(
        id=_text(rec, _ID_KEYS, place),
        title=_text(rec, _TITLE_KEYS, place),
        abstract=abstract,
        authors=tuple(authors),
        affiliations=tuple(places),
        keywords=tuple(dict.fromkeys(keywords)),
        area=_humanize(area),
        subarea=_humanize(subarea),
        presentation=kind,
        track=track,
        venue=venue,
        tldr=_text(rec, _TLDR_KEYS, place),
        url=url or site,
        pdf_url=pdf,
        site_url=site,
        links=_links(rec, abstract),
        bibtex=bibtex.strip() if isinstance(bibtex, str) else "",
        title_zh=_text(rec, F.names("title_zh"), place),
        slots=_slot(rec, kind, place),
    )


def title_only(rec: dict) -> Draft:
    """What is kept of a failing record that has a title: its id and title."""
    id_, title = (_first(rec, keys)[1] for keys in (_ID_KEYS, _TITLE_KEYS))
    return Draft(id=" ".join(str(id_).split()) if isinstance(id_, (str, int)) else "",
                 title=" ".join(str(title).split()) if isinstance(title, (str, int)) else "")


def check_record(draft: Draft, place: Place) -> None:
    """A record is a paper when it has a title or an abstract long enough to be one."""
    if not draft.abstract and not draft.title:
        raise place.fail("abstract is missing; every record needs an 'abstract' field "
                         "(or at least a 'title' when the abstract is not yet published)")
    check_abstract(draft.abstract, place)


def to_paper(draft: Draft, source: str, position: int, place: Place) -> Paper:
    """The Paper of a checked draft: its id made safe (or derived from its text), its label its title or one
    derived from its abstract, its program slots in time order."""
    check_record(draft, place)
    shared = {f.name: getattr(draft, f.name) for f in fields(Draft) if f.name in _PAPER_NAMES}
    return Paper(**{**shared, "slots": tuple(sorted(draft.slots, key=Slot.order))},
                 paper_id=safe_id(draft.id) or text_id(draft.abstract or draft.title), source=source,
                 position=position, label=draft.title or derive_label(draft.abstract))


def _text(rec: dict, keys: tuple[str, ...], place: Place) -> str:
    """The first of `keys` the record gives, as one line of text ("" when none)."""
    for key in keys:
        value = F.lookup(rec, key)
        if value is None or value == "":
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        if not isinstance(value, str):
            raise place.fail(f"field {key!r} must be text, got {type(value).__name__}")
        return " ".join(value.split())
    return ""


def _first(rec: dict, keys: tuple[str, ...]) -> tuple[str, Any]:
    """The first of `keys` the record gives a value for, and that value."""
    for key in keys:
        value = F.lookup(rec, key)
        if value not in (None, "", []):
            return key, value
    return keys[0], None


def _names(value: Any, place: Place, key: str) -> tuple[list[str], list[str]]:
    """Authors (or keywords) from a string, a list of strings, or a list of {fullname, institution} objects."""
    if value is None or value == "":
        return [], []
    if isinstance(value, str):
        sep = ";" if ";" in value else ","
        parts = [p for chunk in value.split(sep) for p in (re.split(r"\s+and\s+", chunk) if key in F.names("authors")
                                                            else [chunk])]
        return [" ".join(p.split()) for p in parts if p.strip()], []
    if not isinstance(value, list):
        raise place.fail(f"field {key!r} must be text or a list, got {type(value).__name__}")
    names, places = [], []
    for item in value:
        if isinstance(item, dict):
            item = F.normalize(item)
            name = item.get("fullname") or item.get("name") or item.get("full_name") or " ".join(
                str(item[k]) for k in ("first_name", "given", "last_name", "family") if item.get(k))
            institution = item.get("institution") or item.get("affiliation") or ""
        else:
            name, institution = item, ""
        name = " ".join(str(name or "").split())
        if name:
            names.append(name)
            places.append(" ".join(str(institution).split()) if isinstance(institution, str) else "")
    return names, places if any(places) else []


def _affiliations(value: Any, authors: list[str], place: Place, key: str) -> list[str]:
    """One affiliation per author: a list, or text with ";" between them (paperlists' `aff`)."""
    if isinstance(value, str):
        places = [" ".join(p.split()) for p in value.split(";")]
    else:
        places, _ = _names(value, place, key)
    return places if len(places) == len(authors) and any(places) else []


def _links(rec: dict, abstract: str) -> tuple[str, ...]:
    """Code, project and preprint pages the record names, then the links found in the abstract."""
    named = []
    for key in F.names("links"):
        value = F.lookup(rec, key)
        for url in (value if isinstance(value, list) else [value]):
            url = url.strip() if isinstance(url, str) else ""
            if _BARE_HOST.match(url):  # "github.com/org/repo" as some lists write it
                url = "https://" + url
            if url.startswith(("http://", "https://")) and " " not in url:
                named.append(url)
    return tuple(dict.fromkeys(named + list(find_links(abstract))))


def _url(rec: dict, place: Place) -> str:
    """The paper's page: a URL, or an OpenReview forum id made into its forum's URL."""
    key, value = _first(rec, _URL_KEYS)
    url = _text(rec, (key,), place) if value is not None else ""
    if url and not url.startswith(("http://", "https://", "/")) and key in ("forum", "or_id"):
        return f"{OPENREVIEW}/forum?id={url}"
    if not url:
        or_id = _text(rec, ("or_id",), place)
        if or_id and _ID_SAFE.sub("", or_id) == or_id:
            return f"{OPENREVIEW}/forum?id={or_id}"
    return url


def _presentation(text: str) -> str:
    m = _PRESENTATION.search(text)
    return m.group(1).lower() if m else ""


def _track(text: str) -> str:
    m = _TRACK_IN_PATH.search(text)
    if m:
        return m.group(1).replace("_", " ")
    if re.search(r"/Conference\b", text):
        return "Main"
    m = re.search(r"([A-Z][\w ]*?)\s+Track\b", text)
    return m.group(1).strip() if m else ""


def _humanize(area: str) -> str:
    """OpenReview's "deep_learning_theory" as "Deep learning theory"; readable values stay as they are."""
    if "_" in area and " " not in area:
        area = area.replace("_", " ")
        return area[:1].upper() + area[1:]
    return area


def _slot(rec: dict, kind: str, place: Place) -> tuple[Slot, ...]:
    """The record's place in the program (session, times with their offset, room, poster), if it has one."""
    session = _text(rec, ("session",), place)
    start, end = (_time(rec, keys, place) for keys in (_START_KEYS, _END_KEYS))
    if not (session or start):
        return ()
    if start and end and _when(end) < _when(start):
        raise place.fail(f"ends ({end}) before it starts ({start})")
    room = _text(rec, _ROOM_KEYS, place)
    poster = _text(rec, _POSTER_KEYS, place)
    # The entry's own event type (a talk or its poster), else what its session says, else the paper's type;
    # "Spotlight Poster" is a poster.
    slot_kind = (_event_kind(_text(rec, ("eventtype", "event_type"), place)) or _event_kind(session)
                 or ("poster" if poster else kind))
    return (Slot(session=session, start=start, end=end, room=room, poster_position=poster, kind=slot_kind),)


def _event_kind(text: str) -> str:
    return "poster" if re.search(r"\bposters?\b", text, re.IGNORECASE) else _presentation(text)


def _when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _time(rec: dict, keys: tuple[str, ...], place: Place) -> str:
    """An ISO 8601 time with its UTC offset, as in the source; "" when absent."""
    value = _text(rec, keys, place)
    if not value:
        return ""
    key = next(k for k in keys if F.lookup(rec, k) not in (None, ""))
    try:
        parsed = _when(value)
    except ValueError:
        raise place.fail(f"field {key!r} is not an ISO 8601 time: {value[:40]!r}") from None
    if parsed.utcoffset() is None:
        raise place.fail(f"field {key!r} has no UTC offset: {value[:40]!r} "
                         "(write it as 2026-12-08T10:00:00-08:00)")
    try:
        parsed.astimezone(timezone.utc)  # what a calendar file writes
    except OverflowError:
        raise place.fail(f"field {key!r} is out of range: {value[:40]!r}") from None
    return value


def check_abstract(abstract: str, place: Place) -> None:
    """An abstract, when there is one, is long enough to be one."""
    if 0 < len(abstract) < MIN_ABSTRACT_CHARS:
        raise place.fail(f"abstract is too short ({len(abstract)} characters)")


def safe_id(raw: str) -> str:
    """An id as written, reduced to the characters a paper id may hold."""
    return _ID_SAFE.sub("-", raw).strip("-")[:120]
