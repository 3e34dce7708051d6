"""Follow-up conversations and Chinese questions, scored against labels, printed as numbers per kind.

1. Conversations (benchmarks/data/conversations.jsonl): 2-4 turns each, English and Chinese,
   run as a Discord user would: each turn a DM through the mock-client harness (real discord.py
   classes, real store and model: exactly what `paperbot chat` does), or with `--via reply` as
   replies to the bot's previous answer in a server channel. Without an LLM. Each turn is
   labelled with what its answer must do:

     "cite": [ids]      every one of these papers is cited (and the answer does not abstain)
     "refs": [n, ...]   exactly the papers shown at [n] in the previous answer are cited
     "first": id        this paper is [1]
     "only": true       nothing outside "cite" is cited
     "not": [ids]       none of these is cited
     "abstain": true    the answer says the corpus does not answer

   A turn passes when all its labels hold; the table counts turns per kind (the first turn of
   every conversation is kind "first"), per language.

2. Chinese questions (benchmarks/data/zh_questions.jsonl) over the bundled corpus: hit@5 (the
   target paper among the top 5 papers retrieval ranks for the question, as the bot searches it
   without an LLM) and answered (the target cited, no abstention).

    .venv/bin/python -m benchmarks.conversation_bench [--via dm|reply] [--verbose] [--skip-zh]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import re
import tempfile
from dataclasses import replace
from pathlib import Path

from benchmarks.common import REPO, retrieval_env
from benchmarks.shapes import program, write_json
from bot.app.client import PaperBot
from bot.app.embeds import title_of
from bot.harness import Harness
from bot.runtime import open_library, open_services
from paperbot import messages
from paperbot.settings import BUNDLED_CORPUS, Settings

DATA = REPO / "benchmarks" / "data"
ABSTAIN_TEXTS = (messages.ABSTAIN, messages.ZH["ABSTAIN"])


def shown_papers(message: dict, titles: dict[str, str]) -> list[str]:
    """The paper ids an answer message shows, [1] first (cited papers, or an abstention's closest)."""
    ids = []
    for embed in message.get("embeds") or []:
        for f in embed.get("fields") or []:
            m = re.match(r"\[(\d+)\] (.*)", f.get("name", ""))
            if not m:
                continue
            name = re.sub(r" · score [\d.]+$", "", m.group(2))
            pid = titles.get(name) or next((i for t, i in titles.items() if name.startswith(t.rstrip("…"))), None)
            if pid and pid not in ids:
                ids.append(pid)
    return ids


def abstained(message: dict) -> bool:
    text = " ".join((e.get("description") or "") for e in message.get("embeds") or [])
    return any(t in text for t in ABSTAIN_TEXTS)


def searched_for(message: dict) -> str:
    footer = " ".join((e.get("footer") or {}).get("text", "") for e in message.get("embeds") or [])
    m = re.search(r"(?:searched for|检索词)[:：]\s*(.*?)(?: · |$)", footer)
    return m.group(1) if m else ""


def judge(turn: dict, shown: list[str], did_abstain: bool, previous: list[str]) -> list[str]:
    """What is wrong with an answer (empty: it passes)."""
    problems = []
    if turn.get("abstain"):
        if not did_abstain:
            problems.append(f"should abstain, cited {shown}")
        return problems
    if did_abstain:
        return [f"abstained (closest {shown[:3]})"]
    cited = shown
    want = list(turn.get("cite") or [])
    if "refs" in turn:
        refs = [previous[n - 1] for n in turn["refs"] if 0 < n <= len(previous)]
        if len(refs) < len(turn["refs"]):
            return [f"previous answer showed only {len(previous)} papers"]
        want += refs
        if set(cited) != set(refs):
            problems.append(f"refs {turn['refs']} = {refs}, cited {cited}")
    missing = [p for p in want if p not in cited]
    if missing and "refs" not in turn:
        problems.append(f"missing {missing}, cited {cited}")
    if turn.get("first") and (not cited or cited[0] != turn["first"]):
        problems.append(f"[1] should be {turn['first']}, cited {cited}")
    if turn.get("only") and any(p not in want for p in cited):
        problems.append(f"cited outside {want}: {cited}")
    bad = [p for p in turn.get("not") or [] if p in cited]
    if bad:
        problems.append(f"cited {bad}")
    return problems


async def run_conversations(settings: Settings, conversations: list[dict], via: str, verbose: bool) -> list[dict]:
    relaxed = replace(settings, discord=replace(settings.discord, rate_limit=10_000, rate_window=1.0))
    rows = []
    async with open_services(relaxed, ingest_if_empty=True) as services, Harness(PaperBot(services)) as h:
        titles = {title_of(p): p.paper_id for p in services.library.papers()}
        for i, conv in enumerate(conversations):
            user = Harness.user(800000000000000000 + i, f"user{i}")
            previous: list[str] = []
            last: dict | None = None
            for t, turn in enumerate(conv["turns"]):
                if via == "reply" and last is not None:
                    ex = await h.reply(last, turn["q"], user=user)
                elif via == "reply":
                    ex = await h.mention(turn["q"], user=user)
                else:
                    ex = await h.dm(turn["q"], user=user)
                message = ex.messages[-1]
                shown = shown_papers(message, titles)
                did_abstain = abstained(message)
                problems = judge(turn, shown, did_abstain, previous)
                kind = "first" if t == 0 else turn["kind"]
                rows.append({"conv": conv["id"], "turn": t + 1, "kind": kind, "lang": conv.get("lang", "en"),
                             "ok": not problems, "problems": problems, "q": turn["q"],
                             "searched": searched_for(message)})
                if verbose and problems:
                    print(f"  FAIL {conv['id']}#{t + 1} [{kind}] {turn['q']!r}: {'; '.join(problems)}"
                          f"{'  (searched for: ' + rows[-1]['searched'] + ')' if rows[-1]['searched'] else ''}")
                previous, last = shown, message
    return rows


def table(rows: list[dict]) -> None:
    by_kind: dict[str, list[bool]] = collections.defaultdict(list)
    by_lang: dict[tuple[str, str], list[bool]] = collections.defaultdict(list)
    for r in rows:
        by_kind[r["kind"]].append(r["ok"])
        by_lang[(r["kind"], r["lang"])].append(r["ok"])
    print(f"{'kind':<16}{'turns':>6}{'pass':>7}{'en':>12}{'zh':>12}")
    follow = [r["ok"] for r in rows if r["kind"] != "first"]
    for kind in sorted(by_kind, key=lambda k: (k != "first", k)):
        oks = by_kind[kind]
        cells = []
        for lang in ("en", "zh"):
            sub = by_lang.get((kind, lang), [])
            cells.append(f"{sum(sub)}/{len(sub)}" if sub else "-")
        print(f"{kind:<16}{len(oks):>6}{sum(oks) / len(oks):>7.0%}{cells[0]:>12}{cells[1]:>12}")
    print(f"{'follow-ups':<16}{len(follow):>6}{sum(follow) / max(1, len(follow)):>7.0%}")
    allr = [r["ok"] for r in rows]
    print(f"{'all turns':<16}{len(allr):>6}{sum(allr) / max(1, len(allr)):>7.0%}")


def zh_hits(settings: Settings, questions: list[dict], verbose: bool) -> None:
    """hit@5 and answered for Chinese questions, answered as the bot answers them without an LLM."""
    from retrieval.qa import answer_question

    try:  # the offline translation, where this version of paperbot has one
        from retrieval.translate import english_query
    except ImportError:
        def english_query(text: str) -> str:
            return text
    with open_library(settings) as lib:
        lib.ensure_ingested(None)
        hit5 = answered = 0
        for q in questions:
            answer = asyncio.run(answer_question(lib, q["question"]))
            top = [h.paper_id for h in answer.hits[:5]]
            cited = [c.paper_id for c in answer.citations][:3] if not answer.abstained else []
            hit5 += q["paper"] in top
            answered += q["paper"] in cited
            if verbose and q["paper"] not in cited:
                print(f"  {'top5' if q['paper'] in top else 'MISS'} {q['question']} -> {english_query(q['question'])!r}")
    n = len(questions)
    print(f"Chinese questions: {n}; hit@5 {hit5}/{n} = {hit5 / n:.0%}; answered (cited, no abstention) "
          f"{answered}/{n} = {answered / n:.0%}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--via", choices=("dm", "reply"), default="dm")
    ap.add_argument("--verbose", action="store_true", help="print every failing turn")
    ap.add_argument("--skip-zh", action="store_true")
    ap.add_argument("--skip-conversations", action="store_true")
    ap.add_argument("--only", default="", help="only conversations whose id starts with this")
    args = ap.parse_args()
    conversations = [json.loads(x) for x in (DATA / "conversations.jsonl").read_text(encoding="utf-8").splitlines()
                     if x.strip()]
    conversations = [c for c in conversations if c["id"].startswith(args.only)]
    with tempfile.TemporaryDirectory() as tmp:
        prog = write_json(Path(tmp) / "program" / "program.json", program()).parent
        stores = {
            "bundled": Settings.from_env({**retrieval_env(), "CHROMA_PATH": f"{tmp}/b/chroma",
                                          "PAPERBOT_CACHE_DIR": f"{tmp}/b/cache"}),
            "program": Settings.from_env({**retrieval_env(), "CHROMA_PATH": f"{tmp}/p/chroma",
                                          "PAPERBOT_CACHE_DIR": f"{tmp}/p/cache",
                                          "PAPERBOT_CORPUS": f"{BUNDLED_CORPUS}:{prog}"}),
        }
        if not args.skip_conversations:
            rows = []
            for corpus, settings in stores.items():
                group = [c for c in conversations if c.get("corpus", "bundled") == corpus]
                if group:
                    rows += asyncio.run(run_conversations(settings, group, args.via, args.verbose))
            print(f"Conversations: {len(conversations)} ({args.via}, no LLM)")
            table(rows)
        if not args.skip_zh:
            questions = [json.loads(x) for x in (DATA / "zh_questions.jsonl").read_text(encoding="utf-8").splitlines()
                         if x.strip()]
            zh_hits(stores["bundled"], questions, args.verbose)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
