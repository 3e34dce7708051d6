"""The `paperbot` command: argument parsing and dispatch. Services are built by bot/runtime.py.

    paperbot ingest [--strict] [--replace] [PATH ...] ingest files or folders (default: the bundled corpus)
    paperbot search [QUERY] --json      papers for a query (no QUERY: one query per stdin line)
    paperbot ask QUESTION [--json]      a cited answer (search and ask take --author --area --type --track --keyword)
    paperbot papers --author NAME       an author's papers (or --area, --type, --track, --keyword)
    paperbot similar PAPER_ID [--json]  the papers nearest to one paper, with the terms they share
    paperbot related FILE|- [--json]    the papers closest to a text (the abstract of your own project)
    paperbot plan TEXT|FILE [--ics F]   the matching papers' talks and posters in time order (a calendar file)
    paperbot eval DIR --json            retrieval quality on a BEIR-format folder
    paperbot chat                       the bot's answers in a terminal
    paperbot run                        the Discord bot
    paperbot doctor                     check a deployment
    paperbot health                     is the running bot alive? (its heartbeat; the Docker HEALTHCHECK)

Expected failures print one line to stderr and exit 1 (2 for a bad setting or command line); anything else
is reported in one line too, its traceback written to the log file (and to stderr with -v).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import logging.handlers
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from bot.runtime import open_library, open_services
from bot.terminal import (
    render_answer_text,
    render_papers_text,
    render_plan_text,
    render_search_text,
    render_similar_text,
)
from paperbot import messages
from paperbot.errors import ConfigError, InputError, PaperbotError
from paperbot.language import message_language
from paperbot.records import PRESENTATION_TYPES
from paperbot.settings import Settings, load_env_file, shard_plan, url_passwords
from paperbot.text import readable, search_text
from retrieval.filters import Filters, no_match_notice
from retrieval.qa import answer_question
from retrieval.types import paper_json

if TYPE_CHECKING:
    from ingest.pipeline import IngestSummary, Progress
    from retrieval.types import Answer

log = logging.getLogger("paperbot")

EXIT_ERROR = 1
EXIT_USAGE = 2


NOISE = "only punctuation, emoji, mentions or greetings"  # what search_text leaves nothing of


class UsageError(PaperbotError):
    """A command given arguments it cannot use (exit status 2, like argparse's own errors)."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="paperbot", description="Answers questions about a corpus of paper abstracts.")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress details to stderr")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("ingest", help="ingest abstract files (.txt, .jsonl, .json, .csv) or folders of them")
    s.add_argument("paths", nargs="*", type=Path, help="files or folders (default: the configured corpus)")
    s.add_argument("--strict", action="store_true",
                   help="refuse a file at its first bad record (default: skip the record and report it)")
    s.add_argument("--replace", action="store_true",
                   help="let a file replace the papers stored from another file of its name, or with its ids "
                        "(default: such a file is refused, such papers skipped)")

    s = sub.add_parser("search", help="find papers for a query")
    s.add_argument("query", nargs="?", help="the query; omit to read one query per line from stdin")
    s.add_argument("-k", type=int, default=None, help="number of papers (default: RETRIEVAL_TOP_K)")
    s.add_argument("--json", action="store_true", help="print JSON (JSON Lines for stdin queries)")
    _filter_options(s)

    s = sub.add_parser("ask", help="answer a question with cited sentences")
    s.add_argument("question")
    s.add_argument("-k", type=int, default=None, help="papers to consider")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.add_argument("--no-llm", action="store_true", help="extractive answer even when an LLM is configured")
    _filter_options(s)

    s = sub.add_parser("papers", help="list papers by author, area, type, track or keyword")
    _filter_options(s)
    s.add_argument("--json", action="store_true", help="print JSON")

    s = sub.add_parser("similar", help="the papers nearest to one paper, with the key terms they share")
    s.add_argument("paper_id", help="the paper's id (see search --json)")
    s.add_argument("-k", type=int, default=10, help="number of papers (default 10)")
    s.add_argument("--json", action="store_true", help="print JSON")

    s = sub.add_parser("related", help="the papers closest to a text, such as your own project's abstract")
    s.add_argument("file", help="a UTF-8 text file, or - for stdin")
    s.add_argument("-k", type=int, default=10, help="number of papers (default 10)")
    s.add_argument("--json", action="store_true", help="print JSON")

    s = sub.add_parser("plan", help="the matching papers' talks and posters in time order, clashes marked")
    s.add_argument("text", help="a topic, or a UTF-8 text file (your abstract; - for stdin)")
    s.add_argument("--day", default="", help="only this day (YYYY-MM-DD, the program's local date)")
    s.add_argument("-k", type=int, default=10, help="papers to plan for (default 10)")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.add_argument("--ics", type=Path, default=None, metavar="FILE", help="also write the plan as a calendar (.ics)")

    s = sub.add_parser("eval", help="measure retrieval quality on a BEIR-format folder")
    s.add_argument("dir", type=Path, help="folder with corpus.jsonl, queries.jsonl, qrels/test.tsv")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.add_argument("--limit", type=int, default=None, help="use only the first N queries")

    sub.add_parser("chat", help="ask questions in the terminal, answered as the bot would")
    s = sub.add_parser("run", help="start the Discord bot")
    s.add_argument("--shards", default=None, metavar="{auto,N}",
                   help="shard the bot (discord.py's AutoShardedClient): auto takes Discord's recommended count, N "
                        "splits the servers into N shards (default DISCORD_SHARDS; unset: no sharding)")
    s.add_argument("--shard-ids", default=None, metavar="0,1,…",
                   help="the shards this process runs, of --shards N (default DISCORD_SHARD_IDS; unset: all); "
                        "run one process per group, sharing CHROMA_HOST and PAPERBOT_USER_DB")
    sub.add_parser("doctor", help="check configuration, model, store, index, LLM and token")
    sub.add_parser("health", help="exit 0 if the running bot's heartbeat is fresh and it is connected, else 1")
    return p


def _filter_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("filters (applied before ranking; case and accents ignored)")
    g.add_argument("--author", default="", help="papers with this author (any author of the paper)")
    g.add_argument("--area", default="", help="papers in this area or subarea")
    g.add_argument("--type", default="", choices=["", *PRESENTATION_TYPES], metavar="{oral,spotlight,poster}",
                   help="presentation type")
    g.add_argument("--track", default="", help="track, e.g. Main or 'Datasets and Benchmarks'")
    g.add_argument("--keyword", default="", help="papers with this keyword")


def _filters(args) -> Filters | None:
    return Filters(author=args.author, area=args.area, type=args.type, track=args.track,
                   keyword=args.keyword) or None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    for name, value in vars(args).items():
        if isinstance(value, str) and not _is_text(value):
            print(f"paperbot: error: the {name} given is not UTF-8 text", file=sys.stderr)
            return EXIT_USAGE
    try:
        _, env_note = load_env_file()
        settings = replace(Settings.from_env(), env_note=env_note)
    except PaperbotError as exc:
        print(f"paperbot: configuration error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    logfile = setup_logging(settings, verbose=args.verbose, tracebacks=args.verbose or args.command == "run")
    if env_note:
        log.info("%s", env_note)
    try:
        return COMMANDS[args.command](args, settings)
    except UsageError as exc:
        print(f"paperbot: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ConfigError as exc:  # a setting found wrong only when used (a store folder that is not writable…)
        log.debug("command failed", exc_info=True)
        print(f"paperbot: configuration error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except PaperbotError as exc:
        log.debug("command failed", exc_info=True)
        print(f"paperbot: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("paperbot: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of stdout went away (`| head`): nothing left to tell anyone
        _quiet_stdout()
        return EXIT_ERROR
    except Exception as exc:
        # The one line below is what the user reads; the traceback goes to the log file (and stderr with -v).
        log.error("unexpected failure in `paperbot %s`", args.command, exc_info=True,
                  extra={FILE_ONLY: True})
        if logfile is not None:
            print(f"paperbot: error: {messages.text('INTERNAL_ERROR')} (traceback in {logfile})", file=sys.stderr)
        else:
            where = "above" if args.verbose else "shown when the command is run again with -v"
            print(f"paperbot: error: something went wrong on our side ({type(exc).__name__}); the traceback is "
                  f"{where}", file=sys.stderr)
        return EXIT_ERROR


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that flushing it at exit raises no second BrokenPipeError."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


FILE_ONLY = "paperbot_file_only"  # a log record's attribute: True keeps it off stderr


class _OneLine(logging.Formatter):
    """A record as one line: its traceback is left to the log file."""

    def format(self, record: logging.LogRecord) -> str:
        saved = record.exc_info, record.exc_text, record.stack_info
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        try:
            return super().format(record)
        finally:
            record.exc_info, record.exc_text, record.stack_info = saved


def setup_logging(settings: Settings, verbose: bool = False, tracebacks: bool = True) -> Path | None:
    """Handlers live here only: a log file at the configured level, stderr for warnings (everything from INFO
    with `verbose`). Without `tracebacks`, stderr shows each record in one line, and records marked FILE_ONLY
    not at all. Returns the log file, or None when it cannot be written (then stderr is the only log)."""
    from paperbot.logs import RedactSecrets

    root = logging.getLogger()
    root.setLevel(logging.DEBUG)
    for h in list(root.handlers):
        root.removeHandler(h)
    redact = RedactSecrets([settings.discord.token, settings.llm.api_key, settings.store.auth_token,
                            *url_passwords(settings.user_db_url)])
    logdir = settings.log_dir or settings.cache_dir
    logfile: Path | None = logdir / "paperbot.log"
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        logdir.mkdir(parents=True, exist_ok=True)
        fh = logging.handlers.RotatingFileHandler(logdir / "paperbot.log", maxBytes=5_000_000, backupCount=3,
                                                  encoding="utf-8")
        fh.setLevel(settings.log_level)
        fh.setFormatter(fmt)
        fh.addFilter(redact)
        root.addHandler(fh)
    except OSError:
        logfile = None
    err = logging.StreamHandler(sys.stderr)
    err.setLevel(logging.INFO if verbose else logging.WARNING)
    line = "paperbot: %(levelname)s: %(message)s"
    err.setFormatter(logging.Formatter(line) if tracebacks else _OneLine(line))
    if not tracebacks:
        err.addFilter(lambda record: not getattr(record, FILE_ONLY, False))
    err.addFilter(redact)
    root.addHandler(err)
    for noisy in ("httpx", "httpcore", "chromadb", "sentence_transformers", "urllib3", "bm25s", "discord.http",
                  "transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return logfile


# -- commands -----------------------------------------------------------------------


def _progress_bar(desc: str) -> Progress:
    """A (done, total) callback drawing a tqdm bar on stderr with docs/s and ETA."""
    from tqdm import tqdm

    bar: tqdm | None = None

    def update(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            if total == 0:
                return
            bar = tqdm(total=total, desc=desc, unit="paper", file=sys.stderr, dynamic_ncols=True)
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    return update


def _report_bundled_ingest(summary: IngestSummary | None, settings: Settings) -> None:
    if summary is not None:
        print(f"paperbot: ingested {', '.join(map(str, settings.corpus))}: {summary.line()}", file=sys.stderr)
        for note in summary.notes():
            print(f"paperbot: {note}", file=sys.stderr)


def cmd_ingest(args, settings: Settings) -> int:
    with open_library(settings) as lib:
        summary = lib.ingest(args.paths or None, progress=_progress_bar("embedding"), strict=args.strict,
                             replace=args.replace)
    for d in summary.duplicates:
        print(f"paperbot: warning: duplicate abstract skipped: {d}", file=sys.stderr)
    for note in summary.notes():
        print(f"paperbot: {note}", file=sys.stderr)
    if summary.clashes:
        print("paperbot: give those papers ids of their own, ingest them together with the new version of the "
              "file they are stored from, or ingest with --replace to let them replace the stored ones",
              file=sys.stderr)
    print(f"ingest: {summary.line()}")
    return 0


def cmd_search(args, settings: Settings) -> int:
    if args.k is not None:
        _check_k(args.k)
    if args.query is not None and not search_text(args.query).strip():
        problem = f"has nothing to search in it ({NOISE})" if args.query.strip() else "is empty"
        raise UsageError(f"the query {problem}; give one, or omit it to read one query per line from stdin")
    with open_library(settings) as lib:
        _report_bundled_ingest(lib.ensure_ingested(progress=_progress_bar("ingesting bundled corpus")), settings)
        # Bytes, each line decoded here: whatever the locale makes of stdin, a line that is not UTF-8 is named.
        queries = [args.query] if args.query is not None else (_stdin_line(raw, n) for n, raw in
                                                                 enumerate(sys.stdin.buffer, 1))
        filters = _filters(args)
        for n, query in enumerate(queries, 1):
            if query and not search_text(query).strip():
                print(f"paperbot: warning: stdin:{n}: nothing to search in it ({NOISE}); skipped", file=sys.stderr)
            elif query:
                result = lib.search(query, args.k, filters)  # Chinese is searched in English (the library)
                print(json.dumps(result.to_json(), ensure_ascii=False) if args.json else render_search_text(result))
                sys.stdout.flush()
    return 0


def cmd_ask(args, settings: Settings) -> int:
    if args.k is not None:
        _check_k(args.k)
    if not search_text(args.question).strip():
        raise UsageError(messages.text("EMPTY_QUESTION"))
    use_llm = settings.llm.enabled and not args.no_llm
    live = use_llm and not args.json and sys.stderr.isatty()
    answer = asyncio.run(_ask(settings, args.question, args.k, use_llm, live, _filters(args)))
    print(json.dumps(answer.to_json(), ensure_ascii=False) if args.json else render_answer_text(answer))
    return 0


async def _ask(settings: Settings, question: str, k: int | None, use_llm: bool, live: bool,
               filters: Filters | None = None) -> Answer:
    """One question; the services live exactly as long as the command."""
    shown = ""

    def show(text: str) -> None:  # checked sentences as they come, on stderr (they only grow); the answer on stdout
        nonlocal shown
        sys.stderr.write(text[len(shown):] if text.startswith(shown) else "\n" + text)
        sys.stderr.flush()
        shown = text

    progress = _progress_bar("ingesting bundled corpus")
    async with open_services(settings, use_llm=use_llm, one_shot=True) as services:
        _report_bundled_ingest(await asyncio.to_thread(services.library.ensure_ingested, progress), settings)
        answer = await answer_question(services.library, question, llm=services.llm, k=k,
                                       on_text=show if live else None, filters=filters,
                                       rerank_timeout=settings.llm.rerank_budget)
    if shown:
        sys.stderr.write("\n\n")
    return answer


def cmd_papers(args, settings: Settings) -> int:
    filters = Filters(author=args.author, area=args.area, type=args.type, track=args.track, keyword=args.keyword)
    with open_library(settings) as lib:
        _report_bundled_ingest(lib.ensure_ingested(progress=_progress_bar("ingesting bundled corpus")), settings)
        papers = lib.browse(filters)
        notice = no_match_notice(filters, lib.papers()) if filters and not papers else ""
    if args.json:
        out = {"filters": filters.to_json(), "papers": [paper_json(p) for p in papers]}
        if notice:
            out["notice"] = notice
        print(json.dumps(out, ensure_ascii=False))
    else:
        heading = messages.count(len(papers), "paper") + (f" matching {filters.describe()}" if filters else "")
        print(notice or render_papers_text(heading, papers))
    return 0


def _check_k(k: int) -> None:
    if not 1 <= k <= 100:
        raise UsageError(f"-k must be between 1 and 100, got {k}")


def cmd_similar(args, settings: Settings) -> int:
    _check_k(args.k)
    with open_library(settings) as lib:
        _report_bundled_ingest(lib.ensure_ingested(progress=_progress_bar("ingesting bundled corpus")), settings)
        paper = lib.paper(args.paper_id)
        similar = lib.similar(args.paper_id, args.k) if paper is not None else None
    if paper is None or similar is None:
        raise PaperbotError(f"no paper has the id {args.paper_id!r} (ids are in `paperbot search --json` "
                            "and `paperbot papers --json`)")
    if args.json:
        print(json.dumps({"paper": paper_json(paper), "papers": [s.to_json() for s in similar]}, ensure_ascii=False))
    else:
        print(render_similar_text(f"Papers like: {readable(paper.title or paper.label)}", similar))
    return 0


def cmd_related(args, settings: Settings) -> int:
    _check_k(args.k)
    text = _read_text(args.file)
    if not text.strip():
        raise InputError(args.file, "is empty; give the text of an abstract")
    with open_library(settings) as lib:
        _report_bundled_ingest(lib.ensure_ingested(progress=_progress_bar("ingesting bundled corpus")), settings)
        related = lib.related(text, args.k)
    if args.json:
        print(json.dumps({"chars": len(text.strip()), "papers": [s.to_json() for s in related]}, ensure_ascii=False))
    else:
        print(render_similar_text("Papers related to your text:", related))
    return 0


def _read_text(name: str) -> str:
    """The text of a file, or of stdin for "-", read as UTF-8 (an InputError saying where it is not)."""
    try:
        return (sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError("stdin" if name == "-" else name,
                         f"is not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start})") from None
    except OSError as exc:
        raise InputError(name, f"cannot be read ({exc.strerror or exc})") from None


def _stdin_line(raw: bytes, n: int) -> str:
    try:
        return raw.decode("utf-8-sig" if n == 1 else "utf-8").strip()
    except UnicodeDecodeError as exc:
        raise InputError("stdin", f"is not UTF-8 text (byte {raw[exc.start]:#04x})", n) from None


def _is_text(value: str) -> bool:
    """Whether a string read from the command line or stdin was UTF-8 (undecodable bytes arrive as lone
    surrogates, which nothing downstream can encode)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def cmd_plan(args, settings: Settings) -> int:
    from paperbot.ics import calendar
    from retrieval.plan import check_day, plan_events, plan_for, slots_out_of_range

    _check_k(args.k)
    try:
        day = check_day(args.day) if args.day else ""
    except ValueError as exc:
        raise PaperbotError(f"--day: {exc}") from None
    is_file = args.text == "-" or Path(args.text).is_file()
    text = _read_text(args.text) if is_file else args.text
    if not text.strip():
        raise InputError(args.text, "is empty; give a topic or the text of an abstract")
    with open_library(settings) as lib:
        _report_bundled_ingest(lib.ensure_ingested(progress=_progress_bar("ingesting bundled corpus")), settings)
        plan = plan_for(lib, text, args.k, day)
    if args.ics is not None:
        for s in slots_out_of_range(plan):
            print(f"paperbot: warning: {args.ics}: {s.session or s.room} left out: its time ({s.start}) is out of "
                  "the range a calendar can hold", file=sys.stderr)
        try:
            args.ics.write_text(calendar(plan_events(plan), name=f"paperbot: {plan.query[:60]}"),
                                encoding="utf-8", newline="")
        except OSError as exc:
            raise InputError(str(args.ics), f"cannot write the calendar ({exc.strerror or exc})") from None
    print(json.dumps(plan.to_json(), ensure_ascii=False) if args.json
          else render_plan_text(plan, message_language(text)))
    return 0


def cmd_eval(args, settings: Settings) -> int:
    from retrieval.evaluate import evaluate

    report = evaluate(args.dir, settings, limit=args.limit, progress=_progress_bar("embedding eval corpus"))
    if args.json:
        print(json.dumps(report))
    else:
        for metric in ("ndcg@10", "recall@100"):
            row = "  ".join(f"{k}={v:.4f}" for k, v in report[metric].items())
            print(f"{metric:<11} {row}")
        print(f"queries={report['queries']}  docs_per_s={report['docs_per_s']:.1f}")
    return 0


def cmd_chat(args, settings: Settings) -> int:
    from bot.chat import run_repl

    return run_repl(settings)


def cmd_run(args, settings: Settings) -> int:
    from bot.app.lifecycle import run_bot

    if args.shards is not None or args.shard_ids is not None:
        ds = settings.discord
        shards = args.shards if args.shards is not None else ("auto" if ds.sharded and ds.shard_count is None
                                                              else str(ds.shard_count or ""))
        ids = args.shard_ids if args.shard_ids is not None else ",".join(map(str, ds.shard_ids))
        sharded, count, shard_ids = shard_plan(shards, ids, ("--shards", "--shard-ids"))
        settings = replace(settings, discord=replace(ds, sharded=sharded, shard_count=count, shard_ids=shard_ids))
    return run_bot(settings)


def cmd_doctor(args, settings: Settings) -> int:
    from bot.doctor import run_doctor

    return run_doctor(settings)


def cmd_health(args, settings: Settings) -> int:
    from bot.health import check

    return check(settings.heartbeat_path)


COMMANDS = {
    "ingest": cmd_ingest,
    "search": cmd_search,
    "ask": cmd_ask,
    "papers": cmd_papers,
    "similar": cmd_similar,
    "related": cmd_related,
    "plan": cmd_plan,
    "eval": cmd_eval,
    "chat": cmd_chat,
    "run": cmd_run,
    "doctor": cmd_doctor,
    "health": cmd_health,
}

if __name__ == "__main__":
    sys.exit(main())
