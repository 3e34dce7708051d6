"""Hostile and broken corpus files: refused in one line or cleaned, named in the summary, never a traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.parse import parse_file, read_file
from ingest.pipeline import load_papers
from paperbot.errors import InputError
from paperbot.text import strip_control
from retrieval.library import Library
from tests.conftest import make_settings
from tests.fakes import HashEmbedder

A1 = "We propose NV-CoT, a framework that reasons over images with continuous coordinates. It works well."
A2 = "Markov decision problems are most commonly solved via dynamic programming. We study another approach."

ESCAPES = {
    "NUL": "\x00",
    "clear screen": "\x1b[2J\x1b[H",
    "colour": "\x1b[31;1m",
    "set title": "\x1b]0;owned\x07",
    "hidden link": "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
    "bell and backspace": "\x07\x08\x08",
    "C1 CSI": "\x9b31m",
    "bidi override": "\u202egnp.exe\u202c",
    "delete": "\x7f",
}


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["deep.json", "deep.jsonl"])
def test_deep_nesting_is_one_line_not_a_recursion_error(tmp_path, name):
    deep = "[" * 10_000 + "]" * 10_000
    data = deep if name.endswith(".json") else json.dumps({"title": "T", "abstract": A1}) + "\n" + \
        '{"title": ' + deep + "}\n"
    path = write(tmp_path / name, data)
    with pytest.raises(InputError) as err:
        read_file(path)
    assert "nested more than 64 levels deep" in str(err.value) and "\n" not in str(err.value)


def test_a_number_of_ten_thousand_digits_is_one_line(tmp_path):
    path = write(tmp_path / "big.json", '[{"title": "T", "abstract": "' + A1 + '", "n": ' + "9" * 10_000 + "}]")
    with pytest.raises(InputError, match="invalid JSON"):
        read_file(path)


def test_moderate_nesting_inside_a_record_is_still_read(tmp_path):
    rec = {"title": "T", "abstract": A1, "extra": {"a": {"b": {"c": [1, [2, [3]]]}}}}
    [paper] = parse_file(write(tmp_path / "ok.json", [rec]))
    assert paper.abstract == A1


@pytest.mark.parametrize("kind", sorted(ESCAPES))
def test_control_characters_and_escape_sequences_are_removed_from_every_field(tmp_path, kind):
    bad = ESCAPES[kind]
    rec = {"id": "x1", "title": f"Masks{bad} work", "abstract": f"{A1[:30]}{bad}{A1[30:]}",
           "authors": [f"Ada{bad} Lovelace"], "keywords": [f"k{bad}"], "tldr": f"short{bad}", f"odd{bad}key": "v"}
    path = write(tmp_path / "hostile.json", [rec, {"title": "Clean", "abstract": A2}])
    loaded = load_papers([path])
    paper = loaded.papers[0]
    shown = " ".join([paper.title, paper.abstract, *paper.authors, *paper.keywords, paper.tldr,
                      *loaded.files[0].ignored, *loaded.files[0].notes()])
    assert not any(c in shown for c in "\x00\x1b\x07\x08\x7f\x9b\u202e\u202c"), repr(shown)
    assert "Masks" in paper.title and "Lovelace" in paper.authors[0]
    assert loaded.files[0].cleaned == 1
    assert any("control characters removed from 1 records" in n for n in loaded.files[0].notes())


def test_cleaning_keeps_ordinary_text_and_unicode():
    text = "Émilie Durand — 注意力 🧪 e^{i\\pi} (ZWJ 👩‍🔬) tab\tnewline"
    assert strip_control(text) == text
    assert strip_control("a\x1b[31mred\x1b[0m b \x9b31mx") == "ared b x"


def test_control_characters_in_plain_text_and_csv_files_are_removed(tmp_path):
    txt = write(tmp_path / "a.txt", f"Header\n\n{A1}\x1b]0;title\x07 More.\n")
    csv = write(tmp_path / "b.csv", f'title,abstract\n"T\x1b[2J",{A2}\n')
    papers = load_papers([txt, csv]).papers
    assert papers[0].abstract == A1 + " More." and papers[1].title == "T"


def test_repeated_id_with_a_different_abstract_keeps_the_first_and_names_both_records(tmp_path):
    recs = [{"id": "7", "title": "T", "abstract": A1}, {"id": "8", "abstract": A2},
            {"id": "7", "title": "T", "abstract": A2}]
    path = write(tmp_path / "r.json", recs)
    loaded = load_papers([path])
    assert [p.abstract for p in loaded.papers if p.paper_id == "7"] == [A1]
    [conflict] = loaded.files[0].conflicts
    assert "record 3 repeats the id '7' of" in conflict and "record 1" in conflict
    with pytest.raises(InputError, match="record 3 repeats the id '7'"):
        load_papers([path], strict=True)
    # The same abstract repeated (an oral listed twice) is merged without a word.
    write(path, [recs[0], {"id": "7", "type": "Oral", "abstract": A1 + "  "}])
    assert not load_papers([path]).files[0].conflicts


def test_repeated_id_across_files_with_a_different_abstract_is_reported(tmp_path):
    a = write(tmp_path / "a.json", [{"id": "7", "title": "T", "abstract": A1}])
    b = write(tmp_path / "b.json", [{"id": "7", "title": "T", "abstract": A2}])
    [dup] = load_papers([a, b]).duplicates
    assert dup == "b.json #1 repeats a.json #1 (same id '7', different abstract; the first is kept)"


def special_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    write(folder / "good.json", [{"title": "T", "abstract": A1}])
    (folder / "dangling.json").symlink_to(folder / "missing.json")
    (folder / "loop.json").symlink_to(folder / "loop2.json")
    (folder / "loop2.json").symlink_to(folder / "loop.json")
    os.mkfifo(folder / "pipe.jsonl")
    return folder


def test_links_loops_and_fifos_in_a_folder_are_named_and_the_rest_ingested(tmp_path):
    loaded = load_papers([special_folder(tmp_path)])
    assert [p.abstract for p in loaded.papers] == [A1] and loaded.sources == ["good.json"]
    reasons = {Path(u.split(": ", 1)[0]).name: u.split(": ", 1)[1] for u in loaded.unreadable}
    assert reasons == {"dangling.json": "a symbolic link to a missing file", "loop.json": "a symbolic link loop",
                       "loop2.json": "a symbolic link loop", "pipe.jsonl": "not a regular file (a FIFO (named pipe))"}
    with pytest.raises(InputError, match="dangling.json: a symbolic link to a missing file"):
        load_papers([special_folder(tmp_path / "s")], strict=True)


@pytest.mark.parametrize("name, reason", [("dangling.json", "a symbolic link to a missing file"),
                                          ("loop.json", "a symbolic link loop"),
                                          ("pipe.jsonl", "not a regular file (a FIFO (named pipe))")])
def test_a_special_file_named_on_the_command_line_is_one_line(tmp_path, name, reason):
    folder = special_folder(tmp_path)
    with pytest.raises(InputError) as err:
        load_papers([folder / name])
    assert str(err.value) == f"{folder / name}: {reason}"


def test_an_unreadable_file_is_named_and_its_stored_papers_kept(tmp_path, monkeypatch):
    folder = tmp_path / "c"
    write(folder / "a.json", [{"id": "a1", "title": "A", "abstract": A1}])
    write(folder / "b.json", [{"id": "b1", "title": "B", "abstract": A2}])
    with Library(make_settings(tmp_path), embedder=HashEmbedder()) as lib:
        assert lib.ingest([folder]).added == 2
        real = Path.read_bytes

        def denied(self):
            if self.name == "b.json":
                raise PermissionError(13, "Permission denied")
            return real(self)

        monkeypatch.setattr(Path, "read_bytes", denied)
        summary = lib.ingest([folder])
        assert summary.unreadable == [f"{folder / 'b.json'}: cannot be read (Permission denied)"]
        assert "1 file could not be read" in summary.line()
        assert f"not read: {folder / 'b.json'}: cannot be read (Permission denied)" in summary.notes()
        assert (summary.removed, summary.unchanged) == (0, 1)
        assert {p.paper_id for p in lib.papers()} == {"a1", "b1"}
        with pytest.raises(InputError, match="Permission denied"):
            lib.ingest([folder / "b.json"])


def test_most_records_failing_refuses_the_file_with_its_first_reasons(tmp_path):
    recs = [{"title": ["list"], "abstract": A1}] * 3 + [{"abstract": "short"}] * 2 + [{"title": "T", "abstract": A1}]
    with pytest.raises(InputError) as err:
        load_papers([write(tmp_path / "bad.json", recs)])
    message = str(err.value)
    assert message.startswith(f"{tmp_path / 'bad.json'}: 5 of 6 records failed, so the file is refused: "
                              "record 1: field 'title' must be text, got list; record 2: ")
    assert message.endswith("; and 2 more") and "\n" not in message


def test_a_bad_record_among_good_ones_is_skipped_and_counted_in_the_summary(tmp_path):
    recs = [{"title": "T1", "abstract": A1}, {"authors": 5, "abstract": A2}, {"title": "T3", "abstract": "tiny"},
            {"title": "T4", "abstract": A2}]
    with Library(make_settings(tmp_path), embedder=HashEmbedder()) as lib:
        summary = lib.ingest([write(tmp_path / "mixed.json", recs)])
    assert summary.added == 3
    assert "1 bad record skipped; 1 bad record kept with its title only" in summary.line()
    assert summary.notes() == [("mixed.json: 1 records skipped, 1 kept with their title only (first: record 2: "
                                "field 'authors' must be text or a list, got int)")]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30)
    | st.sampled_from(["Reject", "Oral", "Submitted to X", "Workshop", A1, "2026-12-08T10:00:00", "\x1b[2J", ""]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["id", "title", "abstract", "authors", "author", "keywords", "status", "venue", "links",
                         "openreview", "site", "content", "session", "starttime", "aff", "github", "bibtex",
                         "notes", "results", "x"]), children, max_size=6),
    max_leaves=25)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=_json, suffix=st.sampled_from([".json", ".jsonl", ".txt", ".csv"]))
def test_no_json_input_gives_anything_but_papers_or_one_clear_error(tmp_path, data, suffix):
    path = tmp_path / f"fuzz{suffix}"
    text = json.dumps(data)
    path.write_text(text if suffix != ".csv" else "title,abstract\n" + text, encoding="utf-8")
    try:
        loaded = load_papers([path])
    except InputError as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)
    else:
        assert all(p.title or p.abstract for p in loaded.papers)


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_JSON_VALUES, indent=st.sampled_from([None, 0, 2]), cut=st.integers(min_value=0, max_value=400),
       damage=st.sampled_from(["none", "cut", "drop a character", "trailing comma", "extra data"]))
def test_a_big_file_decoded_a_record_at_a_time_reads_as_json_loads_reads_it(value, indent, cut, damage):
    """Long JSON texts are decoded an element at a time (the bot's loop runs between two): the same values as
    the one-shot decoder, and for a broken text the same error at the same place."""
    from ingest.parse.decode import _DECODER, _decode_in_parts

    text = json.dumps(value, indent=indent)
    if damage == "cut":
        text = text[:cut % (len(text) + 1)]
    elif damage == "drop a character" and text:
        i = cut % len(text)
        text = text[:i] + text[i + 1:]
    elif damage == "trailing comma":
        text = text.replace("]", ",]", 1).replace("}", ",}", 1)
    elif damage == "extra data":
        text += " 1"

    def outcome(decode):
        try:
            return "value", json.dumps(decode(text), sort_keys=True)
        except json.JSONDecodeError as exc:
            return "error", exc.msg, exc.pos
        except ValueError as exc:  # NaN, Infinity: not JSON
            return "refused", str(exc)

    assert outcome(_decode_in_parts) == outcome(_DECODER.decode)


@pytest.mark.parametrize("name", ["deep.json", "bad.json", "ok.json"])
def test_files_decoded_in_parts_give_the_same_papers_and_errors(tmp_path, monkeypatch, name):
    from ingest.parse import decode

    texts = {"deep.json": "[" * 10_000 + "]" * 10_000,
             "bad.json": json.dumps({"notes": [{"title": "T", "abstract": A1}]}, indent=1)[:-3],
             "ok.json": json.dumps({"notes": [{"id": "a", "title": "T", "abstract": A1},
                                              {"id": "b", "title": "U", "abstract": A2}]})}
    path = write(tmp_path / name, texts[name])

    def read():
        try:
            return [(p.paper_id, p.title, p.abstract) for p in read_file(path).papers]
        except InputError as exc:
            return str(exc)

    whole = read()
    monkeypatch.setattr(decode, "DECODE_IN_PARTS_CHARS", 0)
    assert read() == whole
    assert ("nested more than 64" in whole) if name == "deep.json" else \
        ("invalid JSON" in whole) if name == "bad.json" else (len(whole) == 2)


@pytest.mark.parametrize("name, text, problem", [
    ("nan.json", '[{"title": NaN, "abstract": "' + A1 + '"}]', "nan.json: invalid JSON (NaN is not a JSON number)"),
    ("inf.json", '[{"title": "T", "year": 1e999, "abstract": "' + A1 + '"}]', "invalid JSON (1e999 is too large"),
    ("cut.jsonl", '{"id": "t1", "abstract": "oops\n', "cut.jsonl:1: invalid JSON (Invalid control character at "
                                                      "column 31)"),
    ("lines.txt", '{"id": "t1", "title": "Broken", "abstract": "oops\n{"id": "t2", "abstract": "' + A1 + '"}\n',
     "lines.txt:1: invalid JSON (Unterminated string starting at column 45)"),
    ("quote.csv", f'id,title,abstract\nq1,Fine,"{A1}"\nq2,"Unterminated,{A1}\nq3,Fine,{A2}\n',
     "quote.csv:3: a quote opened in this row is never closed"),
])
def test_malformed_text_is_refused_at_its_line_with_nothing_read(tmp_path, name, text, problem):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_papers([path])
    assert problem in str(err.value)


def test_a_csv_cell_longer_than_csv_s_default_limit_is_read(tmp_path):
    long = "We study long abstracts. " * 8000  # 200,000 characters
    path = tmp_path / "big.csv"
    path.write_text(f'id,title,abstract\nb1,Big,"{long}"\nb2,"A stray 5"" quote","{A1}"\n', encoding="utf-8")
    assert [len(p.abstract) for p in load_papers([path]).papers] == [len(long.strip()), len(A1)]
