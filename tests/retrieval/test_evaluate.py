"""`paperbot eval`'s reading of a BEIR folder: a malformed file is one error naming the file and line."""

from __future__ import annotations

import pytest

from paperbot.errors import InputError
from retrieval.evaluate import load_beir


def beir(tmp_path, queries: bytes, qrels: bytes):
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d1", "text": "Masks over weights."}\n', encoding="utf-8")
    (tmp_path / "queries.jsonl").write_bytes(queries)
    (tmp_path / "qrels" / "test.tsv").write_bytes(qrels)
    return tmp_path


def test_a_well_formed_folder_is_read(tmp_path):
    queries, qrels = load_beir(beir(tmp_path, b'{"_id": "q1", "text": "masks"}\n',
                                    b"query-id\tcorpus-id\tscore\nq1\td1\t1\n"))
    assert queries == {"q1": "masks"} and qrels == {"q1": {"d1": 1}}


@pytest.mark.parametrize("queries, qrels, where, problem", [
    (b'{"_id": "q1", "text": 42}\n', b"q1\td1\t1\n", "queries.jsonl:1", "query 'q1': text must be a non-empty string"),
    (b'{"_id": "q1", "text": "masks"}\n', b"q1\td1\t1\nq\xe9\td1\t1\n", "test.tsv:2", "is not UTF-8 text (byte 0xe9)"),
    (b'\n{"_id": "q1", "text": "\xff"}\n', b"q1\td1\t1\n", "queries.jsonl:2", "is not UTF-8 text (byte 0xff)"),
])
def test_a_malformed_file_names_its_line(tmp_path, queries, qrels, where, problem):
    with pytest.raises(InputError) as err:
        load_beir(beir(tmp_path, queries, qrels))
    assert where in str(err.value) and problem in str(err.value)
