"""Every fixed text exists in English and Chinese, and the bot always picks it through the language lookup."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from bot.app import replies as bot_messages
from paperbot import messages

REPO = Path(__file__).resolve().parent.parent
MODULES = {"paperbot.messages": messages, "bot.app.replies": bot_messages}
# Not shown to a user who asked in a language: the operator's console at start-up, the bot's own name, and
# names Discord shows in the client's language by other means (the context menu: COMMANDS_ZH; button labels,
# which the chat REPL and the tests press by their label).
NOT_TRANSLATED = {"TOKEN_MISSING", "TOKEN_MALFORMED", "LOGIN_FAILED", "DISCORD_UNREACHABLE", "ABOUT_TITLE",
                  "CONTEXT_MENU"}
USED_DIRECTLY = NOT_TRANSLATED | {"SAVE_LABEL"}


def constants(module) -> dict[str, str]:
    return {n: v for n, v in vars(module).items() if n.isupper() and isinstance(v, str)}


def fields(template: str) -> set[str]:
    return set(re.findall(r"\{(\w+)", template))


@pytest.mark.parametrize("module", MODULES.values(), ids=MODULES.keys())
def test_every_user_facing_text_has_chinese_with_the_same_fields(module):
    missing = [n for n in constants(module) if n not in module.ZH and n not in NOT_TRANSLATED]
    assert not missing, f"{module.__name__}: no Chinese for {missing}"
    for name, zh in module.ZH.items():
        assert name in constants(module), f"{module.__name__}.ZH has {name}, which has no English"
        assert fields(zh) == fields(getattr(module, name)), name


def _uses(path: Path):
    """(line, how) for every use of a messages constant that bypasses text(NAME, lang)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    aliases: dict[str, object] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("paperbot", "bot.app"):
            for a in node.names:
                if f"{node.module}.{a.name}" in MODULES:
                    aliases[a.asname or a.name] = MODULES[f"{node.module}.{a.name}"]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            module = aliases[node.value.id]
            if node.attr in constants(module) and node.attr not in USED_DIRECTLY:
                yield node.lineno, f"{node.value.id}.{node.attr}"
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "text"
                and isinstance(node.func.value, ast.Name) and node.func.value.id in aliases and node.args
                and isinstance(node.args[0], ast.Constant)):
            name = node.args[0].value
            if name not in constants(aliases[node.func.value.id]):
                yield node.lineno, f"text({name!r}): no such message"


def test_the_bot_shows_fixed_text_only_through_the_language_lookup():
    bad = [f"{p.relative_to(REPO)}:{line}: {how}" for p in sorted((REPO / "bot").rglob("*.py"))
           if p.relative_to(REPO).as_posix() != "bot/app/replies.py" for line, how in _uses(p)]
    bad += [f"retrieval/answer.py:{line}: {how}" for line, how in _uses(REPO / "retrieval" / "answer.py")]
    assert not bad, "use text(NAME, lang):\n" + "\n".join(bad)


def test_the_scan_finds_a_bypass(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("from bot.app import replies as bot_messages\nfrom paperbot import messages\n"
                      "a = bot_messages.RESULT_GONE\nb = messages.text('ABSTAIN', 'zh')\n"
                      "c = messages.text('NO_SUCH', 'zh')\nd = bot_messages.CONTEXT_MENU\n", encoding="utf-8")
    assert list(_uses(sample)) == [(3, "bot_messages.RESULT_GONE"), (5, "text('NO_SUCH'): no such message")]


def test_mode_names_are_translated():
    from bot.display import answer_footer
    from retrieval.types import Answer

    zh = answer_footer(Answer(question="什么？", text="", abstained=True, citations=[], hits=[], language="zh"))
    assert zh.startswith("模式：原文摘录")
    en = answer_footer(Answer(question="what?", text="", abstained=True, citations=[], hits=[], mode="llm"))
    assert en.startswith("mode: llm")


def test_a_count_of_one_takes_the_singular_in_english_and_leaves_the_fields_alone():
    from bot.app import replies
    from paperbot import messages

    assert messages.text("PLAN_COUNT", papers=1, slots=1) == "1 paper in 1 slot"
    assert messages.text("PLAN_COUNT", papers=2, slots=1) == "2 papers in 1 slot"
    assert messages.text("PLAN_COUNT", "zh", papers=1, slots=1) == messages.ZH["PLAN_COUNT"].format(papers=1, slots=1)
    assert replies.text("FORGOTTEN", saved=1, watches=1).endswith("1 saved paper and 1 watch.")
    assert replies.text("PLAN_MORE", more=1).startswith("…and 1 more slot this day")
    # a file named "1 papers.jsonl" is shown as it is named
    assert replies.text("LIBRARY_REMOVED", file="1 papers.jsonl", papers=1) == (
        "Removed 1 papers.jsonl from this server's library (1 paper).")
