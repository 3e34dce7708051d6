"""`paperbot chat`: the bot's answers in a terminal.

Each line goes through the mock-client harness, so the terminal shows exactly
the messages the bot would post in Discord. A plain line is a direct message to the
bot, so the session is one conversation: follow-ups ("[2]", "compare 1 and 3",
"and for vision models?") are read against the earlier answers, as in a Discord DM.
"""

from __future__ import annotations

import asyncio
import io
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from bot.app import replies as bot_messages
from bot.app.client import PaperBot
from bot.harness import Call, Harness, find_button
from bot.runtime import open_services
from bot.terminal import render_message
from bot.display import without_llm_prefix
from paperbot.settings import Settings
from retrieval.library import Library

REPL_HELP = """\
Type a question (follow-ups such as "[2]" or "and for vision models?" continue the conversation), or:
/ask QUESTION (a fresh question), /search QUERY, /paper LABEL-OR-ID, /author NAME, /area AREA,
/similar LABEL-OR-ID, /related TEXT, /about, more (sources of the last answer),
next / prev (pages of the last list), share, quit. Start a question with !nollm (or /ask --no-llm)
to answer it without the language model.
The conference week: /plan TOPIC (or /plan saved), save (the last answer's or paper's papers),
/saved, /saved remove LABEL-OR-ID, /saved clear, /saved bibtex, /saved calendar, /watch TOPIC,
/watch list, /watch remove N, /forget. Files the bot attaches (.ics, .bib) are written to this folder."""
# "/word REST" with a subcommand: (command, option); REST is the option's value.
WEEK = {("/saved", "remove"): ("saved remove", "paper"), ("/watch", "remove"): ("watch remove", "watch")}
WEEK_BARE: dict[str, tuple[str, dict[str, Any]]] = {
    "/saved": ("saved list", {}), "/saved list": ("saved list", {}), "/saved clear": ("saved clear", {}),
    "/saved bibtex": ("saved export", {"format": "bib"}),
    "/saved calendar": ("saved export", {"format": "ics"}), "/watch list": ("watch list", {}),
    "/forget": ("forget", {}), "/plan saved": ("plan", {"saved": True})}
# "/word REST" → the slash command and its option; the result is a list that next / prev page through.
LISTS = {"/search": ("search", "query"), "/author": ("author", "author"), "/area": ("area", "area"),
         "/similar": ("similar", "paper"), "/related": ("related", "text")}

# Commands that take a value, and what it is: typed alone, they say so rather than being asked as a question.
NEEDS = {"/ask": "a question", "/search": "a query", "/paper": "a label or id", "/author": "a name",
         "/area": "an area", "/similar": "a label or id", "/related": "a text", "/plan": "a topic (or saved)",
         "/watch": "a topic (or list, or remove N)"}


WRITING = {bot_messages.text("WRITING", lang) for lang in ("en", "zh")}  # a preview's footer, in either language


class _StreamEcho:
    """Prints an LLM answer to the terminal as it is written, from the bot's own preview edits."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.shown = ""

    def __call__(self, call: Call) -> None:
        body = call.json if isinstance(call.json, dict) else {}
        embeds = body.get("embeds") or []
        if call.method not in {"PATCH", "POST"} or not embeds or (
                embeds[0].get("footer", {}).get("text") not in WRITING):
            return
        text = embeds[0].get("description") or ""
        if text.startswith(self.shown):
            self.stream.write(text[len(self.shown):])
        else:
            self.stream.write("\n" + text)
        self.shown = text
        self.stream.flush()

    def finish(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
        self.shown = ""


async def _repl(settings: Settings, lines, out, library: Library | None) -> int:
    # One person at a terminal: the per-user rate limit would only get in the way of scripts.
    relaxed = replace(settings, discord=replace(settings.discord, rate_limit=10_000, rate_window=1.0))
    interactive = lines is sys.stdin and sys.stdin.isatty()
    async with open_services(relaxed, library=library, ingest_if_empty=library is None) as services, \
            Harness(PaperBot(services)) as h:
        streamed = _StreamEcho(sys.stderr) if settings.llm.enabled else None
        h.on_call = streamed
        if interactive:
            print(REPL_HELP, file=out)
        last: dict[str, dict] = {}
        while True:
            if interactive:
                print("> ", end="", file=out, flush=True)
            line = await asyncio.to_thread(lines.readline)
            if not line:
                return 0
            line = line.strip()
            if not line:
                continue
            try:
                line.encode("utf-8")
            except UnicodeEncodeError:  # undecodable bytes on stdin arrive as lone surrogates
                print("(that line is not UTF-8 text)", file=out)
                continue
            word, _, rest = line.partition(" ")
            rest = rest.strip()
            if not rest and word.lower() in NEEDS:
                print(f"({word.lower()} needs {NEEDS[word.lower()]}; help lists the commands)", file=out)
                continue
            if line.lower() in {"quit", "exit", "/quit", "/exit"}:
                return 0
            if line.lower() in {"help", "/help"}:
                print(REPL_HELP, file=out)
                continue
            if word in LISTS and rest:
                command, option = LISTS[word]
                ex = await h.slash(command, **{option: rest})
                kind = "search"
            elif word == "/paper" and rest:
                ex = await h.slash("paper", paper=rest)
                kind = "paper"
            elif word == "/about":
                ex = await h.slash("about")
                kind = "about"
            elif line.lower() in WEEK_BARE:
                command, options = WEEK_BARE[line.lower()]
                ex = await h.slash(command, **options)
                kind = "week"
            elif (word, rest.partition(" ")[0]) in WEEK and rest.partition(" ")[2].strip():
                command, option = WEEK[(word, rest.partition(" ")[0])]
                value = rest.partition(" ")[2].strip().lstrip("#")
                if option == "watch" and not value.isdigit():
                    print("(give the watch's number, as /watch list shows it)", file=out)
                    continue
                ex = await h.slash(command, **{option: int(value) if option == "watch" else value})
                kind = "week"
            elif word == "/plan" and rest:
                ex = await h.slash("plan", topic=rest)
                kind = "week"
            elif word == "/watch" and rest:
                ex = await h.slash("watch add", topic=rest)
                kind = "week"
            elif line.lower() == "save":
                target = last.get("save")
                if target is None or find_button(target, "Save") is None:
                    print("(no [Save] button to press)", file=out)
                    continue
                ex = await h.click(target, "Save")
                kind = "click"
            elif line.lower() in {"more", "next", "prev", "share"}:
                label = {"more": "More sources", "next": "Next", "prev": "Previous", "share": "Share in channel"}[
                    line.lower()]
                target = last.get("search" if label in {"Next", "Previous"} else "answer")
                if target is None or find_button(target, label) is None:
                    print(f"(no [{label}] button to press)", file=out)
                    continue
                ex = await h.click(target, label)
                kind = "search" if label in {"Next", "Previous"} else "click"
            elif word == "/ask":  # a fresh question; "/ask --no-llm QUESTION" without the language model
                question, use_llm = without_llm_prefix(line)
                question = rest if use_llm else question
                if not question:
                    print(REPL_HELP, file=out)
                    continue
                ex = await h.slash("ask", question=question, **({} if use_llm else {"llm": False}))
                kind = "answer"
            else:
                ex = await h.dm(line)  # a DM: the session is one conversation ("!nollm …" works here too)
                kind = "answer"
            if streamed is not None:
                streamed.finish()
            for m in ex.messages:
                print(render_message(m), file=out)
                for name, data in _files(h, m):
                    print(f"(wrote {_write(name, data)})", file=out)
                print("-" * 40, file=out)
            if kind in {"answer", "search"} and ex.messages:
                last[kind] = ex.messages[-1]
            if kind in {"answer", "paper"} and ex.messages and find_button(ex.messages[-1], "Save") is not None:
                last["save"] = ex.messages[-1]
            out.flush()


def _files(h: Harness, message: dict) -> list[tuple[str, bytes]]:
    out = []
    for a in message.get("attachments") or []:
        data = h.rest.cdn.get(a["url"])
        if data is not None:
            out.append((Path(a["filename"]).name, data))
    return out


def _write(name: str, data: bytes) -> Path:
    """A file the bot attached, written to the current folder (never over an existing file)."""
    path = Path(name)
    n = 1
    while path.exists():
        path = Path(f"{Path(name).stem}-{n}{Path(name).suffix}")
        n += 1
    path.write_bytes(data)
    return path


def run_repl(settings: Settings, lines=None, out=None, library: Library | None = None) -> int:
    """`paperbot chat`: questions from stdin, answered exactly as the bot would; EOF or quit exits 0.

    `library` (optional) is an already open Library, which the caller closes; by default one is opened here.
    """
    if lines is None and isinstance(sys.stdin, io.TextIOWrapper):
        # Undecodable bytes arrive as lone surrogates, so that _repl refuses the line; a strict stdin (a UTF-8
        # locale) would end the session instead.
        sys.stdin.reconfigure(errors="surrogateescape")
    return asyncio.run(_repl(settings, lines or sys.stdin, out or sys.stdout, library))
