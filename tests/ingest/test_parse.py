from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest.labels import derive_label, find_links
from ingest.parse import discover, parse_file, read_file, text_id
from paperbot.errors import InputError
from paperbot.settings import BUNDLED_CORPUS

A1 = "We propose NV-CoT, a framework that reasons over images with continuous coordinates. It works well."
A2 = "Markov decision problems are most commonly solved via dynamic programming. We study another approach."
A3 = "Large reasoning models are unsafe. Guided by this, we propose ThinkSafe, which restores safety."


def write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return p


@pytest.mark.parametrize(
    "name, content, expected_abstracts",
    [
        ("en.txt", f"NeurIPS 2026 Papers\n\n{A1}\n\n{A2}\n", [A1, A2]),
        ("zh.txt", f"NeurIPS 2026 论文列表\n\n{A1}\n\n{A2}\n\n{A3}\n", [A1, A2, A3]),
        ("one.txt", f"Header\n\n{A1}\n", [A1]),
        ("crlf.txt", f"Header\r\n\r\n{A1}\r\n\r\n{A2}\r\n", [A1, A2]),
        ("bom.txt", f"\ufeffHeader\n\n{A1}\n", [A1]),
        ("many_blank.txt", f"\n\nHeader\n\n\n\n{A1}\n   \n\n{A2}\n\n\n", [A1, A2]),
        # No header line: a first line plainly an abstract (two sentences, 100 characters or more) is kept as one.
        ("noheader.txt", f"{A2}\n\n{A1}\n", [A2, A1]),
        ("noheader_wrapped.txt", f"We propose a method for reading\nfiles without a header. It is long enough to count as one abstract too.\n\n{A1}\n",
         ["We propose a method for reading files without a header. It is long enough to count as one abstract too.", A1]),
        ("long_header.txt", f"Accepted papers, NeurIPS 2026. Collected by the lab from the site on 3 May.\n\n{A1}\n", [A1]),
        ("header_then_abstract.txt", f"NeurIPS 2026 Papers\n{A1}\n\n{A2}\n", [A1, A2]),
        ("brackets.txt", f"[Draft] {{Lab}} reading list\n\n{A1}\n", [A1]),
        ("wrapped.txt", "Header\n\nWe propose a method\nthat spans two lines of the file.\n", ["We propose a method that spans two lines of the file."]),
        ("rows.jsonl", json.dumps({"id": "x1", "title": "T", "abstract": A1}) + "\n\n" + json.dumps({"abstract": A2}) + "\n", [A1, A2]),
        ("rows.csv", f'id,title,abstract,authors,url\nx1,"A title","{A1}","Ada, Bob",https://example.org/1\n', [A1]),
    ],
)
def test_formats_parse_to_their_abstracts(tmp_path, name, content, expected_abstracts):
    papers = parse_file(write(tmp_path, name, content))
    assert [p.abstract for p in papers] == expected_abstracts
    assert [p.position for p in papers] == list(range(1, len(expected_abstracts) + 1))
    assert all(p.source == name for p in papers)


@pytest.mark.parametrize(
    "name, content, message, line",
    [
        ("empty.txt", "", "file is empty", None),
        ("blank.txt", "\n\n   \n", "file is empty", None),
        ("header_only.txt", "NeurIPS 2026 Papers\n", "contains no abstracts", None),
        ("latin1.txt", "Header\n\nCaf\xe9 au lait is a drink people enjoy every day.\n".encode("latin-1"), "not valid UTF-8", 3),
        ("binary.txt", b"\x00\x01\x02PK\x03\x04" * 50, "binary", None),
        ("utf16.txt", f"Header\n\n{A1}\n".encode("utf-16"),
         "is UTF-16 (little-endian) text, not UTF-8; re-save the file as UTF-8", None),
        ("utf16be.json", json.dumps([{"abstract": A1}]).encode("utf-16-be"), "is UTF-16 (big-endian) text", None),
        ("utf16le.csv", f"title,abstract\nT,{A1}\n".encode("utf-16-le"), "is UTF-16 (little-endian) text", None),
        ("utf32.jsonl", json.dumps({"abstract": A1}).encode("utf-32"), "is UTF-32 (little-endian) text", None),
        ("bad.jsonl", json.dumps({"abstract": A1}) + "\n{not json\n", "invalid JSON", 2),
        ("list.jsonl", "[1, 2]\n", "expected a JSON object", 1),
        # JSON saved as .txt, broken: malformed JSON, not an abstract of raw JSON.
        ("pretty.txt", '[\n  {"title": "T",\n   "abstract": "' + A1 + '"\n', "invalid JSON", 4),
        ("object.txt", '{\n "notes": [\n  {"title": "T", "abstract": "' + A1 + '"},\n ]\n}\n', "invalid JSON", 4),
        ("noabs.jsonl", json.dumps({"authors": ["Ada"]}) + "\n", "abstract is missing", 1),
        ("short.jsonl", json.dumps({"abstract": "too short"}) + "\n", "too short", 1),
        ("typed.jsonl", json.dumps({"abstract": A1, "title": ["a", "list"]}) + "\n", "'title' must be text", 1),
        ("nocol.csv", "id,venue\n1,x\n", "no 'abstract' or 'title' column", 1),
        ("noheader.csv", f"11088\tA title\tAda; Bob\t{A1}\n", "no header row naming its columns", 1),
        ("extra.csv", f'id,abstract\n1,"{A1}",surplus\n', "more fields than the header", 2),
        ("paper.pdf", "%PDF-1.4", "unsupported file type", None),
    ],
)
def test_bad_input_names_file_line_and_problem(tmp_path, name, content, message, line):
    path = write(tmp_path, name, content)
    with pytest.raises(InputError) as err:
        discover([path]) and parse_file(path)
    assert message in str(err.value)
    assert name in str(err.value)
    assert err.value.line == line


@pytest.mark.parametrize("content, line", [
    (f'id,abstract\n1,"{A1}"\n2,short\n', 3),
    # A quoted cell spanning lines: the next rows are named by the line they start on.
    (f'id,abstract\n1,"{A1}\nstill the first abstract"\n2,short\n', 4),
    (f'id,abstract\n\n1,"{A1}\n\nstill the first"\n\n2,"short\n"\n', 7),
    (f'id,abstract\n1,"{A1}\nstill the first"\n2,"short,\ncontinued"\n', 4),
])
def test_csv_rows_are_named_by_the_line_they_start_on(tmp_path, content, line):
    path = write(tmp_path, "rows.csv", content + f"3,{A2}\n")
    [skipped] = read_file(path).skipped
    assert skipped.startswith(f"{path}:{line}: abstract is too short")
    with pytest.raises(InputError) as err:
        read_file(path, strict=True)
    assert err.value.line == line


@pytest.mark.parametrize("content, line, said", [
    (f'id,title,abstract\nq2,"Unterminated,{A1}\nq3,Fine,{A2}\n', 2,
     "a quote opened in this row is never closed, so the line after it would be part of one cell"),
    (f'id,title,abstract\nq1,T,"{A1}"\n\nq2,T2,"{A2}\n\nq3,T3,{A3}\nq4,T4,{A1[:40]}\n', 4,
     "a quote opened in this row is never closed, so the rest of the file (2 lines) would be one cell"),
    # The quote opens on the second line of a row whose first cell spans two lines.
    (f'title,abstract\n"Two\nlines","{A1}\nq3,{A2}\n', 3, "a quote opened in this row (on line 3) is never closed"),
    (f'title,abstract\nT,"{A1}', 2, "a quote opened in this row is never closed; close it or remove it"),
])
def test_a_csv_quote_never_closed_is_reported_where_it_opened(tmp_path, content, line, said):
    path = write(tmp_path, "quote.csv", content)
    for strict in (False, True):
        with pytest.raises(InputError) as err:
            read_file(path, strict=strict)
        assert err.value.line == line and said in str(err.value)


def test_a_csv_quote_closed_by_another_rows_quote_skips_the_rows_it_joined_and_names_their_lines(tmp_path):
    rows = [f'q{i},T{i},"{A1} Case {i}."' for i in range(1, 6)]
    rows[1] = f'q2,"T2,{A2}'  # its quote is closed by the first quote of q3's row
    path = write(tmp_path, "joined.csv", "id,title,abstract\n" + "\n".join(rows) + "\n")
    parsed = read_file(path)
    assert [p.title for p in parsed.papers] == ["T1", "T4", "T5"]
    assert parsed.skipped == [f"{path}:3: lines 3–4 were read as one row, joined by a quoted cell that ends in the "
                              "middle of a cell (',' expected after '\"'): a quote is probably missing; check the "
                              "quotes on line 3"]


def test_a_lenient_csv_quote_in_the_middle_of_a_cell_is_still_read(tmp_path):
    path = write(tmp_path, "inch.csv", f'title,abstract\nA 5" screen,"{A1}"\nB,"Quoted"x {A2}\n')
    assert [p.title for p in read_file(path).papers] == ['A 5" screen', "B"]


def test_missing_path_is_reported(tmp_path):
    with pytest.raises(InputError, match="no such file or folder"):
        discover([tmp_path / "nope.txt"])


def test_same_file_name_in_two_folders_is_refused(tmp_path):
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        write(tmp_path / d, "same.txt", f"H\n\n{A1}\n")
    with pytest.raises(InputError, match="share the name"):
        discover([tmp_path / "a", tmp_path / "b"])


def test_the_same_file_given_twice_is_read_once(tmp_path, monkeypatch):
    from ingest.pipeline import load_papers

    folder = tmp_path / "c"
    folder.mkdir()
    good = write(folder, "good.jsonl", json.dumps({"id": "g1", "title": "G", "abstract": A1}) + "\n")
    (tmp_path / "link").symlink_to(folder)
    monkeypatch.chdir(folder)
    for given in ([good, good], [Path("good.jsonl"), good], [folder, good], [tmp_path / "link" / "good.jsonl", good]):
        assert [f.resolve() for f in discover(given)] == [good.resolve()]
        loaded = load_papers(given)
        assert [p.paper_id for p in loaded.papers] == ["g1"] and not loaded.duplicates and loaded.sources == ["good.jsonl"]


@pytest.mark.parametrize("name, content, positions", [
    ("extracells.csv", f'id,title,abstract\nx1,T1,"{A1}",extra\nx2,T2,"{A2}"\nx3,T3,"{A3}"\n', [2, 3]),
    ("short.txt", f"Header\n\nToo short.\n\n{A1}\n\n{A2}\n", [2, 3]),
    ("decided.jsonl", "\n".join(json.dumps(r) for r in [
        {"id": "a", "abstract": A1}, {"id": "r", "status": "Reject", "abstract": A2}, {"id": "b", "abstract": A3}]),
     [1, 3]),
    ("repeats.json", json.dumps([{"id": "a", "type": "Oral", "abstract": A1}, {"id": "a", "type": "Poster"},
                                 {"id": "b", "type": "Poster", "abstract": A2}, {"title": ["bad"]},
                                 {"id": "c", "type": "Poster", "abstract": A3}]), [1, 3, 5]),
    ("abstracts.json", json.dumps({"1": A1, "2": "", "3": A2, "4": A3}), [1, 3, 4]),
])
def test_positions_are_places_in_the_file_whatever_was_skipped(tmp_path, name, content, positions):
    assert [p.position for p in parse_file(write(tmp_path, name, content))] == positions


def test_ids_are_content_derived_and_survive_reordering(tmp_path):
    first = parse_file(write(tmp_path, "a.txt", f"H\n\n{A1}\n\n{A2}\n"))
    second = parse_file(write(tmp_path, "b.txt", f"Other header\n\n{A2}\n\n{A1}\n"))
    assert {p.paper_id for p in first} == {p.paper_id for p in second}
    assert first[0].paper_id == second[1].paper_id == text_id(A1)
    assert first[0].paper_id != first[1].paper_id
    # Whitespace and case do not change identity; content does.
    assert text_id(A1.upper().replace(" ", "  ")) == text_id(A1)
    assert text_id(A1 + " More.") != text_id(A1)


def test_records_keep_their_own_ids_titles_authors_and_links(tmp_path):
    rec = {"_id": "paper/42", "title": "Masks", "text": A1 + " Code: https://github.com/x/y.", "authors": ["Ada", "Bob"],
           "url": "https://openreview.net/x", "venue": "NeurIPS 2026"}
    [p] = parse_file(write(tmp_path, "r.jsonl", json.dumps(rec) + "\n"))
    assert p.paper_id == "paper-42"
    assert p.label == "Masks"
    assert p.authors == ("Ada", "Bob")
    assert p.venue == "NeurIPS 2026"
    assert p.links == ("https://github.com/x/y",)


def test_bundled_corpus_parses_with_labels_and_links():
    files = discover([BUNDLED_CORPUS])
    papers = [p for f in files for p in parse_file(f)]
    assert len(files) == 3
    assert len(papers) == 57
    assert len({p.paper_id for p in papers}) == 57
    labels = {(p.source[:3], p.position): p.label for p in papers}
    assert labels[("000", 1)] == "NV-CoT"
    assert labels[("000", 2)] == "ThinkSafe"
    assert labels[("000", 6)] == "BMT"
    assert labels[("003", 1)] == "Psy-CoT"
    assert all(0 < len(label) <= 61 for label in labels.values())
    thinksafe = next(p for p in papers if p.label == "ThinkSafe")
    assert any("huggingface.co" in link for link in thinksafe.links)


@pytest.mark.parametrize(
    "abstract, label",
    [
        ("Existing methods fail. In this paper, we propose Numerical Visual Chain-of-Thought (NV-CoT), a framework.", "NV-CoT"),
        ("Safety degrades. We propose ThinkSafe, a self-generated alignment framework.", "ThinkSafe"),
        ("Neuro-symbolic systems are hard. We introduce AS2 (Attention-Based Soft Answer Sets), a method.", "AS2"),
        ("Robots explore badly. We introduce Devyn (Developing synergies), a lightweight framework.", "Devyn"),
        ("LLMs use RL. We propose a simple method for calibration of LLMs.", "Simple method for calibration of LLMs"),
        # the first contribution sentence, not a later aside or the conclusion's suggestions
        ("RL helps reasoning. We study what RL post-training teaches models about skill composition and how "
         "structure matters. We find things. To study the implication, we present a preliminary study on formal "
         "theorem proving.", "What RL post-training teaches models about skill composition"),
        ("This position paper argues that supervised fine-tuning followed by RL (SFT-then-RL) cannot be fixed. Based on "
         "our analysis, we propose three promising research directions: (1) joint optimization.", "SFT-then-RL"),
        ("We study multiple change point localization under bandit feedback. We propose an adaptive algorithm "
         "that first detects intervals.", "Multiple change point localization under bandit feedback"),
        # a title-case name after "we propose", not an acronym of the technique it builds on
        ("Rewards are misspecified under potential-based reward shaping (PBRS). We propose Shaping-Aware "
         "Reward-Robust RL, which builds uncertainty sets over PBRS classes.", "Shaping-Aware Reward-Robust RL"),
        # math and a dangling clause are not part of the label; neither is a name of the setting studied
        ("We study regret in a Gaussian process (GP) model with $r^*(x)$ and noise.",
         "Regret in a Gaussian process (GP) model"),
        ("This paper explains this shrinkage issue of RLVR by analyzing its learning dynamics.",
         "Shrinkage issue of RLVR"),
    ],
)
def test_labels_name_the_method_or_summarize(abstract, label):
    assert derive_label(abstract) == label


def test_links_are_trimmed_and_unique():
    text = "See https://github.com/a/b. Also (https://huggingface.co/m) and https://github.com/a/b."
    assert find_links(text) == ("https://github.com/a/b", "https://huggingface.co/m")
