"""User-facing strings every front end shows, in one place so they can be reviewed and tested.

English is the module's constants; `ZH` holds the Chinese of each (the lab has
Chinese speakers). `text(NAME, lang, **fields)` picks one; `lang` comes from
`paperbot.language.message_language` (the question's language, else the
Discord locale). Text only the Discord bot shows lives in bot/app/replies.py.
"""

from __future__ import annotations

import re

ABSTAIN = "The corpus does not answer this question: no paper is close enough."
ABSTAIN_CLOSEST = "Closest papers, for what they are worth:"
TOO_GENERAL = ("The question is too general to answer from the corpus: every word of it is in many papers. Ask what "
               "you want to know about it, for example: how do people fine-tune by masking weights?")
EMPTY_QUESTION = "Please ask a question, for example: how do people fine-tune by masking weights?"
EMPTY_STORE = "The store holds no papers yet: run `paperbot ingest` first."
INTERNAL_ERROR = "Something went wrong on our side; the details are in the log. Please try again."
ABSTRACT_PENDING = "abstract not yet available"
NO_PAPER_MATCHES = "No paper matches {filters}."
NEAREST_VALUES = "Nearest {field} values: {values}."
NO_VALUES = "No {field} in the corpus is close to that."
FILTERS_DISJOINT = "Each filter matches some papers, but no paper matches them all."

# Why an answer is not the language model's (short: they end up in a footer; details go to the log).
LLM_FAILED = "the language model did not answer"
LLM_PAUSED = "the language model is paused after repeated failures"
LLM_NO_CITATION = "the language model's answer cited none of the passages"
LLM_UNGROUNDED = "the passages do not support the language model's answer"
LLM_DEBRIS = "the language model only repeated the prompt"
# Notes on an answer.
REWRITE_UNUSABLE = "searched for the question as asked (no usable English query)"
UNSAID = "no paper here says {words}"  # an abstention's words no paper it may see uses: "“Mamba-3”, “bathymetry”"
LANGUAGE_IGNORED = "the language model answered in English"
LLM_CUT_SHORT = "the language model stopped before finishing; the checked sentences are shown"
# Sentences of the language model's answer that are not shown (the footer: "2 sentences removed: …").
REMOVED_ONE = "1 sentence removed: {reason}"
REMOVED_MANY = "{count} sentences removed: {reason}"
REMOVED_UNSUPPORTED = "not supported by their passages"
REMOVED_FACT = "a number, name or comparison their passages do not have"
REMOVED_UNCHECKABLE = "no name, term or number to check them by"
REMOVED_DEBRIS = "repeated the prompt or themselves"

# The answer's footer, joined with " · ".
FOOTER_MODE = "mode: {mode}"
MODE_EXTRACTIVE = "extractive"  # the answer's mode, as the footer names it
MODE_LLM = "llm"
FOOTER_MODEL = "model: {model}"
FOOTER_SECONDS = "{seconds:.1f} s"
FOOTER_MS = "{ms} ms"
FOOTER_TOKENS = "{tokens} tokens"
FOOTER_SEARCHED = "searched for: {query}"
FOOTER_FELL_BACK = "fell back: {reason}"
SOURCES = "Sources:"
# When and where a paper is presented: "Oral Session 2B · Tue 10:00 · Hall A" (the program's local time).
WEEKDAYS = "Mon Tue Wed Thu Fri Sat Sun"
SLOT_TIME = "{weekday} {time}"
POSTER_NUMBER = "#{number}"
# A plan of the week (`paperbot plan`, /plan).
PLAN_HEADING = "Plan for: {query}"
PLAN_COUNT = "{papers} papers in {slots} slots"
PLAN_DAY = "{weekday} {date}"
PLAN_NO_TIME = "Time not announced"  # the heading of the slots the program gives no time
PLAN_CLASH = "clashes with {sessions}"
PLAN_EMPTY = "None of the matching papers is in the program{day}."
PLAN_EMPTY_DAY = " on {day}"
PLAN_UNSCHEDULED = "Matching papers not in the program: {titles}"
PLAN_SAVED = "your saved papers"

ZH = {
    "ABSTAIN": "语料库无法回答这个问题：没有足够相关的论文。",
    "ABSTAIN_CLOSEST": "最接近的论文（仅供参考）：",
    "TOO_GENERAL": "这个问题太笼统，无法从语料库中回答：其中每个词都出现在许多论文里。请说明想了解什么，例如：如何通过掩码权重进行微调？",
    "EMPTY_QUESTION": "请提一个问题，例如：如何通过掩码权重进行微调？",
    "EMPTY_STORE": "论文库还是空的：请先运行 `paperbot ingest`。",
    "INTERNAL_ERROR": "我们这边出了点问题，详情已记录在日志中。请稍后再试。",
    "LLM_FAILED": "语言模型没有回答",
    "LLM_PAUSED": "语言模型多次失败，暂时停用",
    "LLM_NO_CITATION": "语言模型的回答没有引用任何段落",
    "LLM_UNGROUNDED": "段落不支持语言模型的回答",
    "LLM_DEBRIS": "语言模型只是重复了提示",
    "REWRITE_UNUSABLE": "按原问题检索（没有可用的英文检索词）",
    "UNSAID": "没有论文提到 {words}",
    "LANGUAGE_IGNORED": "语言模型用英文作答",
    "LLM_CUT_SHORT": "语言模型未写完；只显示已核对的句子",
    "REMOVED_ONE": "已删除 1 句：{reason}",
    "REMOVED_MANY": "已删除 {count} 句：{reason}",
    "REMOVED_UNSUPPORTED": "所引段落不支持",
    "REMOVED_FACT": "所引段落中没有其中的数字、名称或比较",
    "REMOVED_UNCHECKABLE": "没有可供核对的名称、术语或数字",
    "REMOVED_DEBRIS": "重复了提示或自身",
    "FOOTER_MODE": "模式：{mode}",
    "FOOTER_MODEL": "模型：{model}",
    "FOOTER_SECONDS": "{seconds:.1f} 秒",
    "FOOTER_MS": "{ms} 毫秒",
    "FOOTER_TOKENS": "{tokens} 个词元",
    "FOOTER_SEARCHED": "检索词：{query}",
    "FOOTER_FELL_BACK": "改用原文摘录：{reason}",
    "SOURCES": "来源：",
    "ABSTRACT_PENDING": "摘要尚未公开",
    "NO_PAPER_MATCHES": "没有论文符合 {filters}。",
    "NEAREST_VALUES": "最接近的 {field} 取值：{values}。",
    "NO_VALUES": "语料库中没有论文的 {field} 与此相近。",
    "FILTERS_DISJOINT": "每个筛选条件都有论文符合，但没有论文同时符合全部条件。",
    "MODE_EXTRACTIVE": "原文摘录",
    "MODE_LLM": "语言模型",
    "WEEKDAYS": "周一 周二 周三 周四 周五 周六 周日",
    "SLOT_TIME": "{weekday} {time}",
    "POSTER_NUMBER": "{number} 号海报",
    "PLAN_HEADING": "日程：{query}",
    "PLAN_COUNT": "{papers} 篇论文，{slots} 个时段",
    "PLAN_DAY": "{weekday} {date}",
    "PLAN_NO_TIME": "时间未公布",
    "PLAN_CLASH": "与 {sessions} 时间冲突",
    "PLAN_EMPTY": "匹配的论文{day}都不在日程中。",
    "PLAN_EMPTY_DAY": "在 {day}",
    "PLAN_UNSCHEDULED": "不在日程中的匹配论文：{titles}",
    "PLAN_SAVED": "你收藏的论文",
}

CATALOGUES = {"zh": ZH}


def text(name: str, lang: str = "en", **fields) -> str:
    """The message `name` in `lang` (English when there is no translation), with `fields` filled in."""
    translated = CATALOGUES.get(lang, {}).get(name)
    template = translated or singular_counts(globals()[name], fields)
    return template.format(**fields) if fields else template


# "{papers} papers", "{more} more slots", "{count} saved papers": an English noun after a count.
_COUNTED = re.compile(r"\{(\w+)\} ((?:saved |more |new )?)(paper|source|slot|chunk|file|record|sentence|result|"
                      r"question|watch(?=es))e?s\b")


def singular_counts(template: str, fields: dict) -> str:
    """An English `template` with the nouns its fields count 1 in the singular ("{papers} papers" → "{papers}
    paper" when papers is 1). Only the template changes: what the fields hold is shown as it is."""
    return _COUNTED.sub(lambda m: f"{{{m[1]}}} {m[2]}{m[3]}" if fields.get(m[1]) == 1 else m[0], template)


def count(n: int, noun: str, plural: str = "") -> str:
    """`n` and an English noun, singular for one: "1 paper", "3 papers" (`plural` for "watch" → "watches")."""
    return f"1 {noun}" if n == 1 else f"{n} {plural or noun + 's'}"
