"""The command-line contract, exercised as a user would: real subprocesses, real model, real Chroma."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from paperbot import messages
from paperbot.settings import BUNDLED_CORPUS, default_cache_dir

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parent.parent
PAPER_KEYS = {"paper_id", "source", "position", "label", "title", "authors", "url", "area", "type", "track", "keywords",
              "slots", "title_zh", "bibtex"}
HIT_KEYS = PAPER_KEYS | {"snippet", "score"}
CITATION_KEYS = PAPER_KEYS | {"n", "quote"}


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cli")


# Runs `paperbot ARGS` in-process and reports on stderr whether torch was imported along the way.
TORCH_PROBE = """\
import runpy, sys
sys.argv = ["paperbot", *sys.argv[1:]]
try:
    runpy.run_module("bot.cli", run_name="__main__")
except SystemExit:
    pass
print("torch imported:", "torch" in sys.modules, file=sys.stderr)
"""


def run(home: Path, *args: str, stdin: str | bytes | None = None, code: str | None = None,
        **env: str) -> subprocess.CompletedProcess:
    """`paperbot ARGS` in a subprocess; stdin given as bytes is sent as it is (output is still text)."""
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("CHROMA_", "EMBEDDING_", "RETRIEVAL_", "DISCORD_", "LLM_", "OPENAI_", "PAPERBOT_"))}
    environ.update(CHROMA_PATH=str(home / "chroma"), PAPERBOT_CACHE_DIR=str(home / "cache"),
                   EMBEDDING_CACHE_DIR=str(default_cache_dir()), PAPERBOT_ENV_FILE=str(home / "none.env"),
                   HF_HUB_OFFLINE="1")
    environ.update(env)
    command = ["-c", code] if code is not None else ["-m", "bot.cli"]
    if isinstance(stdin, bytes):
        raw = subprocess.run([sys.executable, *command, *args], input=stdin, capture_output=True, env=environ,
                             cwd=home, timeout=600)
        return subprocess.CompletedProcess(raw.args, raw.returncode, raw.stdout.decode("utf-8", "replace"),
                                           raw.stderr.decode("utf-8", "replace"))
    return subprocess.run([sys.executable, *command, *args], input=stdin, capture_output=True, text=True,
                          env=environ, cwd=home, timeout=600)


@pytest.fixture(scope="module")
def first_search(home):
    """The first search on an empty store ingests the bundled corpus itself."""
    return run(home, "search", "how do people fine-tune by masking weights?", "--json")


def test_first_search_ingests_the_bundled_corpus(first_search):
    assert first_search.returncode == 0, first_search.stderr
    assert "57 added" in first_search.stderr
    assert "Traceback" not in first_search.stderr


def test_search_json_contract(first_search):
    out = json.loads(first_search.stdout)
    assert set(out) == {"query", "abstained", "hits"}
    assert out["query"] == "how do people fine-tune by masking weights?"
    assert out["abstained"] is False
    assert out["hits"] and all(set(h) == HIT_KEYS for h in out["hits"])
    assert len({h["paper_id"] for h in out["hits"]}) == len(out["hits"])
    scores = [h["score"] for h in out["hits"]]
    assert scores == sorted(scores, reverse=True)
    assert out["hits"][0]["label"] == "BMT"
    assert isinstance(out["hits"][0]["position"], int)


def test_a_stdin_query_with_nothing_to_search_is_skipped_and_named(home, first_search):
    proc = run(home, "search", "--json", "-k", "1", stdin="BMT\n?? !!\n87.43%\n")
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(line)["query"] for line in proc.stdout.splitlines()] == ["BMT", "87.43%"]
    assert proc.stderr.splitlines() == ["paperbot: warning: stdin:2: nothing to search in it (only punctuation, "
                                        "emoji, mentions or greetings); skipped"]


def test_search_reads_queries_from_stdin_as_json_lines(home, first_search):
    proc = run(home, "search", "--json", "-k", "2", stdin="BMT\n\n87.43%\n")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["query"] for o in lines] == ["BMT", "87.43%"]
    assert all(len(o["hits"]) == 2 for o in lines)
    assert lines[0]["hits"][0]["label"] == "BMT"
    assert lines[1]["hits"][0]["label"] == "IFDecorator"


def test_ask_json_contract(home, first_search):
    proc = run(home, "ask", "how do people fine-tune by masking weights?", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert {"question", "answer", "abstained", "mode", "citations"} <= set(out)
    assert out["mode"] == "extractive" and out["abstained"] is False
    assert out["citations"] and all(set(c) == CITATION_KEYS for c in out["citations"])
    assert [c["n"] for c in out["citations"]] == list(range(1, len(out["citations"]) + 1))
    for c in out["citations"]:
        assert f"[{c['n']}]" in out["answer"]
        src = (BUNDLED_CORPUS / c["source"]).read_text(encoding="utf-8")
        assert all(part in src for part in c["quote"].split(" … "))


def test_ask_prints_a_cited_answer_for_people(home, first_search):
    proc = run(home, "ask", "how do people fine-tune by masking weights?")
    assert proc.returncode == 0, proc.stderr
    assert "[1]" in proc.stdout and "Sources:" in proc.stdout and "BMT" in proc.stdout


def test_a_misspelt_question_is_answered_and_says_what_was_searched(home, first_search):
    proc = run(home, "ask", "how do discrimnators help flow maching models?")
    assert proc.returncode == 0, proc.stderr
    assert "DRL" in proc.stdout and "[1]" in proc.stdout
    assert "searched for: how do discriminators help flow matching models?" in proc.stdout


def test_an_abstention_names_the_words_no_paper_says(home, first_search):
    proc = run(home, "ask", "is there any paper on bathymetry from sonar?")
    assert proc.returncode == 0, proc.stderr
    assert messages.text("ABSTAIN") in proc.stdout
    assert "no paper here says “bathymetry”, “sonar”" in proc.stdout
    answered = run(home, "ask", "how do people fine-tune by masking weights?")
    assert "no paper here says" not in answered.stdout


def test_a_search_too_general_to_answer_says_so_above_the_papers(home, first_search):
    proc = run(home, "search", "model")
    assert proc.returncode == 0, proc.stderr
    assert messages.text("TOO_GENERAL") in proc.stdout and messages.text("ABSTAIN") not in proc.stdout
    assert "[1] " in proc.stdout, "the papers are still listed"


def test_ask_off_topic_says_the_corpus_does_not_answer(home, first_search):
    proc = run(home, "ask", "what is a good recipe for sourdough bread?", "--json")
    out = json.loads(proc.stdout)
    assert out["abstained"] is True and out["citations"] == []
    assert "does not answer" in out["answer"]


def test_reingest_of_unchanged_corpus_embeds_nothing(home, first_search):
    proc = run(home, "ingest")
    assert proc.returncode == 0, proc.stderr
    assert "0 added, 0 updated, 0 removed, 57 unchanged (0 chunks embedded" in proc.stdout


@pytest.mark.parametrize("args", [("--help",), ("ingest",), ("search", "masking weights", "--json"), ("doctor",)])
def test_serving_and_unchanged_ingest_never_import_torch(home, first_search, args):
    proc = run(home, *args, code=TORCH_PROBE)
    assert "torch imported: False" in proc.stderr, proc.stderr[-2000:]
    if args[0] == "search":
        assert json.loads(proc.stdout)["hits"]


@pytest.mark.parametrize(
    "args, env, code, needle",
    [
        (("ingest", "/no/such/file.txt"), {}, 1, "/no/such/file.txt: no such file or folder"),
        (("search", "x"), {"CHROMA_PORT": "abc"}, 2, "CHROMA_PORT: must be a whole number, got 'abc'"),
        (("search", "x"), {"EMBEDDING_BACKEND": "gpu"}, 2, "EMBEDDING_BACKEND: must be one of onnx, torch, onnx-int8"),
        (("search", "x", "-k", "0"), {}, 2, "-k must be between 1 and 100"),
        (("ask", "x", "-k", "100000"), {}, 2, "-k must be between 1 and 100, got 100000"),
        (("ask", ""), {}, 2, "Please ask a question"),
        (("ask", "hi @everyone"), {}, 2, "Please ask a question"),
        (("search", "  "), {}, 2, "the query is empty"),
        (("search", " ?? 🙂 "), {}, 2, "the query has nothing to search in it (only punctuation, emoji, mentions or "
                                       "greetings); give one"),
        (("ask", "x"), {"EMBEDDING_MODEL": "/no/model"}, 1, "cannot load embedding model"),
    ],
)
def test_expected_failures_are_one_clear_line(home, tmp_path, args, env, code, needle):
    proc = run(tmp_path, *args, **env)
    assert proc.returncode == code
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_text_that_is_not_utf8_is_one_clear_line(tmp_path):
    environ = {**os.environ, "CHROMA_PATH": str(tmp_path / "chroma"), "PAPERBOT_CACHE_DIR": str(tmp_path / "cache"),
               "PAPERBOT_ENV_FILE": "none"}
    piped = subprocess.run([sys.executable, "-m", "bot.cli", "related", "-"], input=b"graph \xff\xfe networks",
                           capture_output=True, env=environ, cwd=tmp_path, timeout=600)
    assert piped.returncode == 1
    assert piped.stderr.decode() == "paperbot: error: stdin: is not UTF-8 text (byte 0xff at offset 6)\n"
    argument = subprocess.run([sys.executable, "-m", "bot.cli", "ask", os.fsdecode(b"\xff\xfe masks")],
                              capture_output=True, env=environ, cwd=tmp_path, timeout=600)
    assert (argument.returncode, argument.stderr.decode()) == (2, "paperbot: error: the question given is not UTF-8 "
                                                                  "text\n")


# PYTHONIOENCODING=utf-8:strict: stdin as Python reads it in a UTF-8 locale (the C locale escapes bad bytes).
@pytest.mark.parametrize("io_errors", ["utf-8:strict", "utf-8:surrogateescape"])
def test_stdin_queries_that_are_not_utf8_are_named_by_line_in_any_locale(home, first_search, io_errors):
    proc = run(home, "search", "--json", stdin=b"BMT\nfor \xff\xfe molecules\n", PYTHONIOENCODING=io_errors)
    assert proc.returncode == 1
    assert [json.loads(line)["query"] for line in proc.stdout.splitlines()] == ["BMT"]
    assert proc.stderr.splitlines() == ["paperbot: error: stdin:2: is not UTF-8 text (byte 0xff)"]


@pytest.mark.parametrize("io_errors", ["utf-8:strict", "utf-8:surrogateescape"])
def test_chat_refuses_a_line_that_is_not_utf8_and_goes_on_in_any_locale(home, first_search, io_errors):
    proc = run(home, "chat", stdin=b"/related graph \xff\xfe networks\n/search BMT\n", PYTHONIOENCODING=io_errors)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("(that line is not UTF-8 text)\nSearch: BMT")
    assert "Something went wrong" not in proc.stdout and "Traceback" not in proc.stderr


@pytest.mark.parametrize("under", ["notes.txt", "notes.txt/db"])
def test_a_store_path_that_cannot_be_a_folder_is_a_configuration_error(tmp_path, under):
    (tmp_path / "notes.txt").write_text("", encoding="utf-8")
    for command in ("search", "ingest"):
        proc = run(tmp_path, command, *(["masks"] if command == "search" else []), CHROMA_PATH=str(tmp_path / under))
        assert proc.returncode == 2
        assert proc.stderr.splitlines() == [f"paperbot: configuration error: CHROMA_PATH: cannot create the store "
                                            f"folder {tmp_path / under} ({tmp_path}/notes.txt is a file, not a "
                                            "folder); set it to a folder paperbot may create and write"]


def test_empty_store_without_corpus_explains_what_to_do(tmp_path):
    proc = run(tmp_path, "search", "masks", PAPERBOT_CORPUS=str(tmp_path / "missing"))
    assert proc.returncode == 1
    assert "store is empty" in proc.stderr and "paperbot ingest" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_eval_reports_all_modes_on_a_beir_folder(tmp_path):
    """A small BEIR folder made from the bundled corpus and its labelled questions."""
    from ingest.parse import discover, parse_file

    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    papers = {(p.source, p.position): p for f in discover([BUNDLED_CORPUS]) for p in parse_file(f)}
    with open(beir / "corpus.jsonl", "w", encoding="utf-8") as f:
        for p in papers.values():
            f.write(json.dumps({"_id": p.paper_id, "title": "", "text": p.abstract}) + "\n")
    questions = [json.loads(x) for x in (REPO / "benchmarks/data/bundled_questions.jsonl").read_text().splitlines()]
    with open(beir / "queries.jsonl", "w") as q, open(beir / "qrels/test.tsv", "w") as r:
        r.write("query-id\tcorpus-id\tscore\n")
        for i, case in enumerate(questions):
            q.write(json.dumps({"_id": f"q{i}", "text": case["question"]}) + "\n")
            r.write(f"q{i}\t{papers[(case['source'], case['position'])].paper_id}\t1\n")
    proc = run(tmp_path, "eval", str(beir), "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert set(report) == {"ndcg@10", "recall@100", "docs_per_s", "queries"}
    assert report["queries"] == len(questions)
    for metric in ("ndcg@10", "recall@100"):
        assert set(report[metric]) == {"lexical", "dense", "hybrid"}
        assert all(0.0 <= v <= 1.0 for v in report[metric].values())
    assert report["ndcg@10"]["hybrid"] >= 0.8
    assert report["recall@100"]["hybrid"] == 1.0
    assert report["docs_per_s"] > 0


@pytest.mark.slow
def test_ingest_names_ignored_fields_once_and_strict_refuses_a_bad_record(tmp_path):
    lists = Path(__file__).parent / "data" / "lists"
    proc = run(tmp_path, "ingest", str(lists / "generated-ml4ps2025.json"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("generated-ml4ps2025.json: ignored: poster_image_url ×40, award ×3") == 1
    assert proc.stdout.startswith("ingest: 40 added")
    good = {"title": "T", "abstract": "We study masking weights for fine-tuning large models in detail."}
    mixed = tmp_path / "mixed.json"
    mixed.write_text(json.dumps([good, {"title": "U", "abstract": "tiny"}, dict(good, title="V")]), encoding="utf-8")
    strict = run(tmp_path, "ingest", "--strict", str(mixed))
    assert strict.returncode == 1 and "Traceback" not in strict.stderr
    assert strict.stderr.strip().splitlines() == [f"paperbot: error: {mixed}: record 2: abstract is too short (4 characters)"]
    lenient = run(tmp_path, "ingest", str(mixed))
    assert lenient.returncode == 0, lenient.stderr
    assert "; 1 bad record kept with its title only" in lenient.stdout
    assert "mixed.json: 1 kept with their title only (first: record 2: abstract is too short" in lenient.stderr


# Runs `paperbot ARGS` with the `papers` command replaced by one that fails as the first line of stdin says.
FAILING_COMMAND = """\
import logging
import sys
import bot.cli

def fail(args, settings):
    kind = sys.stdin.readline().strip()
    if kind == "warn":
        try:
            raise TimeoutError("slow store")
        except TimeoutError:
            logging.getLogger("paperbot.test").warning("the store was slow; carrying on", exc_info=True)
        return 0
    raise BrokenPipeError(32, "Broken pipe") if kind == "pipe" else RuntimeError("boom in the papers command")

bot.cli.COMMANDS["papers"] = fail
sys.exit(bot.cli.main(sys.argv[1:]))
"""


def test_an_unexpected_failure_is_one_line_and_its_traceback_goes_to_the_log(tmp_path):
    from paperbot import messages

    proc = run(tmp_path, "papers", code=FAILING_COMMAND, stdin="boom\n")
    logfile = tmp_path / "cache" / "paperbot.log"
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [f"paperbot: error: {messages.INTERNAL_ERROR} (traceback in {logfile})"]
    logged = logfile.read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in logged and "RuntimeError: boom in the papers command" in logged
    verbose = run(tmp_path, "-v", "papers", code=FAILING_COMMAND, stdin="boom\n")
    assert "Traceback (most recent call last)" in verbose.stderr
    assert "RuntimeError: boom in the papers command" in verbose.stderr
    assert verbose.stderr.splitlines()[-1].endswith(f"(traceback in {logfile})")


def test_an_unexpected_failure_without_a_log_file_says_how_to_see_the_traceback(tmp_path):
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    proc = run(tmp_path, "papers", code=FAILING_COMMAND, stdin="boom\n", PAPERBOT_LOG_DIR=str(tmp_path / "a-file/logs"))
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == ["paperbot: error: something went wrong on our side (RuntimeError); the "
                                        "traceback is shown when the command is run again with -v"]
    verbose = run(tmp_path, "-v", "papers", code=FAILING_COMMAND, stdin="boom\n",
                  PAPERBOT_LOG_DIR=str(tmp_path / "a-file/logs"))
    assert "RuntimeError: boom in the papers command" in verbose.stderr


def test_a_closed_stdout_ends_the_command_quietly(tmp_path):
    proc = run(tmp_path, "papers", code=FAILING_COMMAND, stdin="pipe\n")
    assert proc.returncode == 1
    assert proc.stderr == ""


def test_a_warning_with_a_traceback_is_one_line_on_stderr_and_whole_in_the_log(tmp_path):
    proc = run(tmp_path, "papers", code=FAILING_COMMAND, stdin="warn\n")
    assert proc.returncode == 0
    assert proc.stderr.splitlines() == ["paperbot: WARNING: the store was slow; carrying on"]
    logged = (tmp_path / "cache" / "paperbot.log").read_text(encoding="utf-8")
    assert "the store was slow; carrying on" in logged and "TimeoutError: slow store" in logged
