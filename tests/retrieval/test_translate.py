"""Chinese questions searched in English without an LLM: the glossary, the dictionary, segmentation, the search."""

from __future__ import annotations

import asyncio

import pytest

from retrieval.followup import Turn
from retrieval.qa import answer_question, search_follow_up
from retrieval.translate import english_query, load_glossary, translate_chinese


def test_english_and_other_languages_are_left_as_they_are():
    for text in ["how do people fine-tune by masking weights?", "Comment affiner ?", "", "NV-CoT"]:
        assert english_query(text) == text


@pytest.mark.parametrize("question, words", [
    ("视频生成如何遵守多个物理规律", ["video generation", "laws of physics"]),  # glossary terms kept whole
    ("多智能体无奖励探索", ["multi-agent", "reward-free exploration"]),
    ("什么是 AsyncThink？", ["AsyncThink"]),  # a method name is kept as written
    ("推理模型（reasoning models）的安全对齐", ["reasoning model", "models", "safety alignment"]),  # both parts
    ("用 GRPO 训练的视觉定位方法", ["GRPO", "training", "visual grounding"]),
    ("判别器如何帮助流匹配模型？", ["discriminator", "help", "flow matching"]),  # the field's terms, not "mate or marry"
    ("图神经网络 过平滑 理论分析", ["graph neural network", "oversmoothing"]),
    ("有没有用扩散模型做图像去雨的工作", ["diffusion model", "image", "deraining"]),
    ("用平均梯度外积解释深度神经坍缩", ["outer product", "deep", "neural collapse"]),  # not "depth nerve collapse"
])
def test_a_chinese_question_becomes_english_terms(question, words):
    query = english_query(question)
    for w in words:
        assert w in query, (question, query)
    assert not any("\u4e00" <= c <= "\u9fff" for c in query)


def test_words_outside_the_glossary_come_from_cc_cedict():
    assert translate_chinese("猫") == ["cat"]  # a general word, in no ML glossary
    assert translate_chinese("什么") == []  # question words are dropped
    # framing is dropped too, not read as "raise", "cannot" or "euphemistic"
    assert english_query("哪篇论文提出了一种新的方法") == "new method"
    assert english_query("能不能提高效果？") == "improve"
    assert english_query("比传统方法好吗？") == "traditional method"
    # a long definition gives its head, not the first words of an apposition ("Beijing, capital of …")
    assert translate_chinese("北京") == ["Beijing"] and translate_chinese("秋毫无犯") == ["highly disciplined"]
    # a proper name described only with Chinese in it gives the name it opens with, not its characters' senses
    assert translate_chinese("成都") == ["Chengdu"] and translate_chinese("四川") == ["Sichuan"]
    # one that only points to another entry ("see 腾讯控股有限公司") gives that entry's English
    assert translate_chinese("腾讯") == ["Tencent Holdings Limited"]


def test_the_segmenter_knows_only_words_it_can_translate_and_translates_as_with_its_whole_list(monkeypatch):
    import jieba

    from retrieval import translate

    state = translate._load()
    words = {w for w, n in state["tokenizer"].FREQ.items() if n > 0}
    assert words <= set(state["cedict"]) | set(state["glossary"])
    assert "强化学习" in words and "视频" in words and len(words) < 200_000  # jieba's whole list: 349,046
    texts = ["我们提出一种用于视频生成的物理对齐方法", "通过掩码权重进行微调", "基于强化学习的交通信号控制",
             "多智能体无奖励探索", "大语言模型的推理能力与安全对齐"]
    ours = [translate_chinese(t) for t in texts]
    whole = jieba.Tokenizer()
    whole.initialize()
    for term in state["glossary"]:
        whole.add_word(term, freq=max(2000, 10 ** min(len(term), 6)))
    monkeypatch.setitem(state, "tokenizer", whole)
    assert ours == [translate_chinese(t) for t in texts]


def test_the_glossary_is_reviewed_data_with_a_clear_error_for_a_bad_line():
    glossary = load_glossary()
    assert glossary["强化学习"] == "reinforcement learning" and glossary["什么"] == ""
    assert all(zh.strip() == zh for zh in glossary)
    with pytest.raises(ValueError, match="line 2: expected 'Chinese<TAB>English'"):
        load_glossary("# comment\nreinforcement learning\t强化学习\n")


@pytest.mark.parametrize("question, label", [
    ("视频生成如何遵守多个物理规律", "HiPhy"),
    ("不依赖外部教师模型恢复推理模型安全性的方法", "ThinkSafe"),
    ("在数据库环境中训练智能体修复 SQL", "BIRD-RL"),
    ("判别器如何帮助流匹配模型？", "DRL"),
    ("怎么通过屏蔽权重来微调模型？", "BMT"),
])
def test_chinese_questions_find_their_paper_without_an_llm(library, question, label):
    answer = asyncio.run(answer_question(library, question))
    assert not answer.abstained and answer.citations[0].label == label
    assert answer.search_query == english_query(question) and answer.language == "zh"


def test_a_chinese_question_is_answered_as_the_library_searches_it(library):
    # the answer searches the question as asked, so the library reads it as a translation (its own bar, no question
    # check): translated first, it was searched as English and "大模型谄媚" abstained, though the search cites the paper
    question = "有没有关于大模型谄媚的论文？"
    found = library.search(question)
    answer = asyncio.run(answer_question(library, question))
    assert not found.abstained and not answer.abstained
    assert [c.paper_id for c in answer.citations] == [h.paper.paper_id for h in found.hits if h.relevant]
    assert "sycophancy" in answer.citations[0].quote and answer.search_query == english_query(question)
    # the same words typed in English are read the same by the question-level model, and held to the English bar
    english = library.search(english_query(question))
    assert english.answered == pytest.approx(found.answered) and not english.abstained
    assert english.answered >= library.settings.retrieval.min_answered


def test_a_chinese_follow_up_to_an_english_conversation(library):
    first = asyncio.run(answer_question(library, "What is ThinkSafe?"))
    history = [Turn("What is ThinkSafe?", tuple(c.paper_id for c in first.citations),
                    labels=tuple(c.label for c in first.citations))]
    answer = asyncio.run(answer_question(library, "它需要外部教师模型吗？", history=history))
    assert [c.label for c in answer.citations] == ["ThinkSafe"]
    assert "teacher" in answer.citations[0].quote and "external" in answer.search_query


def test_scope_widens_to_the_topics_papers_and_code_questions_quote_the_release(library):
    topic = "papers on reinforcement learning with verifiable rewards for reasoning"
    first = search_follow_up(library, topic)
    shown = tuple(h.paper_id for h in first.hits if h.relevant)[:3]
    history = [Turn(topic, shown)]
    which = search_follow_up(library, "Which of these is about instruction following?", history)
    assert which.hits[0].label == "IFDecorator" and which.hits[0].paper_id not in shown
    safety = search_follow_up(library, "Which papers are about LLM safety and refusing harmful requests?")
    assert len(safety.hits) > 1  # the papers shown, cited or not, are what "these" means next
    history = [Turn("Which papers are about LLM safety and refusing harmful requests?",
                    tuple(h.paper_id for h in safety.hits if h.relevant), shown=tuple(h.paper_id for h in safety.hits))]
    code = search_follow_up(library, "Which of these release code?", history)
    assert [h.label for h in code.hits if h.relevant] == ["ThinkSafe"]
    assert "Github" in code.hits[0].snippet


def test_the_library_searches_a_chinese_query_in_english_for_every_front_end(library):
    from retrieval.translate import english_query

    chinese = library.search("稀疏掩码微调", 3)
    english = library.search(english_query("稀疏掩码微调"), 3)
    assert chinese.query == english.query != "稀疏掩码微调"
    assert [h.paper_id for h in chinese.hits] == [h.paper_id for h in english.hits]
    assert chinese.hits[0].paper.label == "BMT"


def test_no_front_end_translates_queries_itself():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    translating = [str(p.relative_to(root)) for p in (root / "bot").rglob("*.py")
                   if "english_query" in p.read_text(encoding="utf-8")]
    assert not translating, f"the library translates Chinese queries; these front ends do it again: {translating}"
