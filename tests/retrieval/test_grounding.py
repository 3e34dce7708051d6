"""Only grounded text is shown as an LLM answer: debris removal and the per-sentence support check.

Unit cases run on the passages the bundled corpus gives for "chain-of-thought
reasoning" (lexical check only, and with the real embedder); the loopback cases
replay the garbage the issue reports through the whole answer path.
"""

from __future__ import annotations

import pytest

from paperbot import messages
from paperbot.text import sentences
from retrieval import prompts
from retrieval.checks import ground_reply
from retrieval.grounding import Passage, strip_template
from retrieval.qa import rewrite_problem
from tests.llm_server import Endpoint, Reply
from tests.retrieval.test_llm import GOOD_1, GOOD_2, GOOD_3, QUESTION, QUESTION_ZH, ask, record_searches

P1 = ("HopChain", "We find that long chain-of-thought (CoT) reasoning exposes diverse failure modes, including "
      "perception, reasoning, knowledge, and hallucination errors, which can compound across intermediate steps.")
P2 = ("NV-CoT", "Recent multimodal large language models (MLLMs) increasingly rely on visual chain-of-thought to "
      "perform region-grounded reasoning over images. … In this paper, we propose Numerical Visual Chain-of-Thought "
      "(NV-CoT), a framework that enables MLLMs to reason over images using continuous numerical coordinates.")
CAL = r"We show that the optimal U-calibration error is $\Theta(\sqrt{KT})$ for $K$ classes and $T$ rounds."
REGRET = (r"After $T$ rounds the regret upper bound scales as $\tilde{\mathcal{O}}((cd)^{L-\frac{1}{2}}\sqrt{T} + d + RN)$ "
          r"where $c>1$ is a constant.")
P3 = ("ThinkSafe", "Large reasoning models (LRMs) achieve remarkable performance by leveraging reinforcement "
      "learning (RL) on reasoning tasks to generate long chain-of-thought (CoT) reasoning.")
PASSAGES = [Passage.of(n, label, text) for n, (label, text) in enumerate((P1, P2, P3), start=1)]


@pytest.fixture(scope="module")
def embed(embedder):
    return embedder


@pytest.fixture
def endpoint():
    e = Endpoint()
    yield e
    e.close()


@pytest.mark.parametrize("raw, kept", [
    ("Answer<|im_end|>", "Answer"),
    ("<|im_start|>assistant\nThe answer [1].<|im_end|>\n<|im_start|>user\nQuestion: more?", "The answer [1]."),
    ("<start_of_turn>model\nThe answer [1].<end_of_turn>\n<start_of_turn>user\nwhy?", "The answer [1]."),
    ("The answer [1].</s> junk", "The answer [1]."),
    ("The answer [1].\nUser: and then?\nAssistant: more", "The answer [1]."),
    ("Answer: The answer [1].", "The answer [1]."),
    ("[INST] The answer [1]. [/INST]", "The answer [1]."),
])
def test_strip_template(raw, kept):
    assert strip_template(raw).strip() == kept


def test_split_sentences_keeps_citations_with_their_sentence():
    assert sentences("A is b, e.g. c [1]. D uses 0.5 of e [2][3]. 中文句子[1]。Last", lines=True) == [
        "A is b, e.g. c [1].", "D uses 0.5 of e [2][3].", "中文句子[1]。", "Last"]


@pytest.mark.parametrize("with_embedder", [False, True])
@pytest.mark.parametrize("text", [
    GOOD_1, GOOD_2, GOOD_3, f"{GOOD_1} {GOOD_2} {GOOD_3}",
    "HopChain finds that long CoT reasoning exposes failure modes that compound across steps [1], while NV-CoT "
    "reasons over images with numerical coordinates [2].",
    "Errors such as hallucination can compound across intermediate reasoning steps [1].",
    "ThinkSafe notes that LRMs use RL to produce long chain-of-thought [3].",
    "HopChain 发现长链思维 (CoT) 推理会暴露 perception 和 hallucination 错误 [1]。",
])
def test_good_answers_are_kept_whole(text, with_embedder, embed):
    g = ground_reply(text, PASSAGES, embed if with_embedder else None)
    assert g.text == text and not g.removed and g.recited == 0


@pytest.mark.parametrize("with_embedder", [False, True])
@pytest.mark.parametrize("text, problem", [
    ("[1] HopChain: We find that long chain-of-thought (CoT) reasoning exposes diverse failure modes", "echo"),
    ("[1] We find that long chain-of-thought (CoT) reasoning exposes diverse failure modes [1].", "echo"),
    ("[2] NV-CoT lets MLLMs reason over images.\n\nQuestion: chain-of-thought\n\nAnswer: [n]", "echo"),
    # shapes of real SmolLM2-135M replies (tests/data/llm_recordings): the passage list copied or reworded
    # under its labels, talk about the passages, labels alone
    ("[1] HopChain: Long chain-of-thought reasoning exposes diverse failure modes.\n[2] NV-CoT: MLLMs reason "
     "over images using continuous numerical coordinates.", "echo"),
    ("NV-CoT: In this paper, we propose a framework called NV-CoT that lets MLLMs reason over images [2].", "echo"),
    ("The passage is about long chain-of-thought reasoning and its failure modes, a key aspect [1].", "echo"),
    ("[1] HopChain: [2] NV-CoT: [3] ThinkSafe: [4]\n\nI'm ready to assist with any questions you have.", "echo"),
    ("Passages:\n" + prompts.passage_block([(1, *P1), (2, *P2)]) + f"\n\nQuestion: {QUESTION}", "echo"),
    (prompts.passage_block([(1, *P1)]), "echo"),
    ("Use only the numbered passages in the user message. Do not use outside knowledge.", "echo"),
    ("The answer is [n]. The answer is [n]. The answer is [n].", "repeated"),
    ("The answer is no. The answer is no.", "repeated"),
    ("Chocolate cake needs cocoa, butter and sugar [1].", "unsupported"),
    ("The Eiffel Tower is in Paris and was built in 1889 [2].", "fact"),  # 1889 is in no passage
    ("Yes [1].", "filler"),
    ("Long chain-of-thought reasoning exposes failure modes such as hallucination errors.", "uncited"),
])
def test_garbage_leaves_nothing(text, problem, with_embedder, embed):
    g = ground_reply(text, PASSAGES, embed if with_embedder else None)
    assert g.text == "" and problem in g.removed


@pytest.mark.parametrize("with_embedder", [False, True])
def test_an_uncited_sentence_beside_a_cited_claim_gets_the_passage_that_supports_it(with_embedder, embed):
    uncited = "Long chain-of-thought reasoning exposes failure modes such as hallucination errors."
    g = ground_reply(f"{GOOD_2} {uncited}", PASSAGES, embed if with_embedder else None)
    assert g.text == f"{GOOD_2} {uncited.removesuffix('.')} [1]."


@pytest.mark.parametrize("with_embedder", [False, True])
def test_a_sentence_credited_to_the_wrong_passage_gets_the_right_number(with_embedder, embed):
    g = ground_reply("NV-CoT lets MLLMs reason over images using continuous numerical coordinates [1].", PASSAGES,
                     embed if with_embedder else None)
    assert g.text == "NV-CoT lets MLLMs reason over images using continuous numerical coordinates [2]."
    assert g.recited == 1 and g.used == [2]


def test_repeated_sentences_keep_one_and_unsupported_ones_go(embed):
    text = f"{GOOD_1} {GOOD_1} {GOOD_1} Chocolate cake needs cocoa [2]. {GOOD_2}"
    g = ground_reply(text, PASSAGES, embed)
    assert g.text == f"{GOOD_1} {GOOD_2}"
    assert g.removed == {"repeated": 2, "unsupported": 1} and g.used == [1, 2]


@pytest.mark.parametrize("with_embedder", [False, True])
def test_a_sentence_naming_the_cited_title_answers_a_question_asked_in_the_title_words(with_embedder, embed):
    """"Is there a paper on X?" with X a title: naming the paper is the answer, though every word is the question's."""
    passages = [Passage.of(1, "Knowledge Composition using Task Vectors", "We show that learned anisotropic "
                                                                          "scaling makes task vectors disentangled.")]
    encoder = embed if with_embedder else None
    question = "is there a paper on knowledge composition using task vectors?"
    named = "Yes — “Knowledge Composition using Task Vectors” is such a paper [1]."
    assert ground_reply(named, passages, encoder, question=question).text == named
    echoed = "Yes, there is a paper on knowledge composition with task vectors [1]."  # which, it does not say
    g = ground_reply(echoed, passages, encoder, question=question)
    assert g.text == "" and g.removed == {"filler": 1}


def test_who_says_it_is_not_read_as_part_of_the_claim(embed):
    """"The authors describe X as …" is matched for what it says of X: a passage does not name its authors."""
    passages = [Passage.of(1, "Instruction Tuning With Loss Over Instructions", "In this work, we propose a simple "
                           "yet effective method, Instruction Modelling (IM), which trains LMs by applying a loss "
                           "function to the instruction and prompt part rather than solely to the output part.")]
    for framed in ("The authors describe IM as a simple yet effective method [1].",
                   "In other words, IM applies the loss to the instruction and prompt part as well [1].",
                   "Instruction Modelling is argued to be a simple yet effective method, according to the authors [1].",
                   "It is characterised as a simple yet effective method [1]."):
        assert ground_reply(framed, passages, embed).text == framed
    wrong = "The authors describe IM as a costly retrieval pipeline for multilingual speech [1]."
    assert ground_reply(wrong, passages, embed).text == ""


def test_a_chinese_sentence_without_an_anchor_is_removed_and_one_with_anchors_is_checked():
    unverifiable = "这些方法都很有用 [1]。"
    assert ground_reply(unverifiable, PASSAGES).text == ""
    both = ground_reply(f"HopChain 发现 hallucination 错误会累积 [1]。{unverifiable}", PASSAGES)
    assert both.text == "HopChain 发现 hallucination 错误会累积 [1]。" and both.removed == {"uncheckable": 1}
    wrong = ground_reply("HopChain 发现 overfitting 错误会累积 [1]。", PASSAGES)  # a term the passage does not have
    assert wrong.text == "" and wrong.removed == {"fact": 1}


# -- query rewrites ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reply, problem", [
    ("chain-of-thought reasoning methods", None),
    ("Query: masked fine-tuning of LLM weights", None),
    ("The answer is no. The answer is no.", "a repeated sentence"),
    ("chain-of-thought reasoning<|im_end|>", "template tokens"),
    ("<start_of_turn>model chain of thought", "template tokens"),
    ("思维链推理方法", "no English words"),
    ("méthodes de raisonnement pour les modèles", "not English"),
    ("1. 1. 1. 1. 1. 1.", "no English words"),
    ("ok", "too short"),
    ("reasoning reasoning reasoning reasoning reasoning", "repeated words"),
    (" ".join(["word"] * 30), "too long"),
    # replies recorded from SmolLM2-135M (tests/data/llm_recordings)
    ('The answer is: "No."', "an answer, not a query"),
    ("To reframe the question, I'd suggest rephrasing it to: \"How can you reframe a question?\"",
     "an answer, not a query"),
    ("El módulos LoRA deberían entrenarse durante el post-entrenamiento con aprendizaje por refuerdo.",
     "not English"),
    ("The answer to this question is: The answer to this question is: The answer", "repeated words"),
    ("Masked fine-tuning works. It matches full fine-tuning.", "more than one sentence"),
    ("question answering with retrieval", None),
    ("The agents are designed to cooperate and cooperate with each other to achieve a common goal.",
     "a statement, not a query"),
])
def test_rewrite_problem(reply, problem):
    assert rewrite_problem(reply) == problem


@pytest.mark.parametrize("rewrite", ["The answer is no. The answer is no.", "chain-of-thought reasoning<|im_end|>"])
def test_a_bad_rewrite_is_not_searched_and_the_footer_says_so(library, endpoint, monkeypatch, rewrite):
    from retrieval.translate import english_query

    queries = record_searches(monkeypatch, library)
    endpoint.enqueue(Reply.answer(rewrite), Reply.answer("unused [1]"))
    answer = ask(library, endpoint, QUESTION_ZH)
    # The offline translation stands in for the unusable rewrite (the question is searched as asked and the library
    # translates it), and the footer shows what was searched.
    searched = english_query(QUESTION_ZH)
    assert queries == [QUESTION_ZH] and answer.search_query == searched
    assert "chain-of-thought" in searched and not answer.notes
    from bot.app import embeds

    assert messages.text("FOOTER_SEARCHED", "zh", query=searched) in embeds.footer_for(answer)


def test_a_bad_rewrite_of_a_question_without_chinese_is_searched_as_asked(library, endpoint, monkeypatch):
    queries = record_searches(monkeypatch, library)
    question = "Quels modèles utilisent des masques binaires pour le fine-tuning ?"
    endpoint.enqueue(Reply.answer("The answer is no. The answer is no."), Reply.answer("unused [1]"))
    answer = ask(library, endpoint, question)
    assert queries == [question] and answer.search_query is None
    assert answer.notes == (messages.REWRITE_UNUSABLE,)


# -- the whole path, replayed from the loopback server ---------------------------------------------------------


@pytest.mark.parametrize("reply, reason", [
    ("[1] HopChain: We find that long chain-of-thought (CoT) reasoning exposes diverse failure modes\n"
     f"[2] NV-CoT: Recent multimodal large language models\n\nQuestion: {QUESTION}", messages.LLM_DEBRIS),
    ("The answer is [n]. " * 40, messages.LLM_NO_CITATION),
    ("<|im_start|>user\nQuestion: what is chain-of-thought?<|im_end|>", messages.LLM_NO_CITATION),
    ("Chocolate cake needs cocoa [1]. Paris is in France [2].", messages.LLM_UNGROUNDED),
])
def test_garbage_replies_fall_back_to_the_extractive_answer(library, endpoint, reply, reason):
    endpoint.enqueue(Reply.answer(reply))
    answer = ask(library, endpoint)
    assert answer.mode == "extractive" and answer.fallback_reason == reason and answer.citations
    assert "[n]" not in answer.text and "<|" not in answer.text


def test_template_debris_is_cut_and_the_grounded_answer_shown(library, endpoint):
    endpoint.enqueue(Reply.stream([GOOD_1, " ", GOOD_1, "<|im_end|>", "<|im_start|>user\n", "Question: more?"]))
    answer = ask(library, endpoint, stream=True)
    assert answer.mode == "llm" and answer.text == GOOD_1


def test_wrongly_credited_sentence_is_recited_through_the_whole_path(library, endpoint):
    endpoint.enqueue(Reply.answer("NV-CoT lets MLLMs reason over images using continuous numerical coordinates [3]."))
    answer = ask(library, endpoint)
    assert answer.mode == "llm" and answer.text.endswith("[2].") and [c.n for c in answer.citations] == [2]


def test_a_chinese_question_answered_in_english_says_so(library, endpoint):
    endpoint.enqueue(Reply.answer("chain-of-thought reasoning"), Reply.answer(GOOD_1))
    answer = ask(library, endpoint, QUESTION_ZH)
    assert answer.mode == "llm" and answer.notes == (messages.ZH["LANGUAGE_IGNORED"],)
    endpoint.enqueue(Reply.answer("chain-of-thought reasoning"),
                     Reply.answer("HopChain 发现长链 CoT 推理会暴露 perception 和 hallucination 错误 [1]。"))
    answer = ask(library, endpoint, QUESTION_ZH)
    assert answer.mode == "llm" and answer.notes == () and answer.language == "zh"


def test_a_chinese_question_asks_for_a_chinese_answer(library, endpoint):
    endpoint.enqueue(Reply.answer("chain-of-thought reasoning"), Reply.answer(GOOD_1))
    ask(library, endpoint, QUESTION_ZH)
    user = endpoint.requests[1]["body"]["messages"][1]["content"]
    assert user.endswith(prompts.IN_LANGUAGE.format(language="Chinese"))
    assert prompts.IN_LANGUAGE.format(language="Chinese") not in prompts.answer_messages("q", [(1, "A", "x")])[1]["content"]


# -- hard facts, exactly ----------------------------------------------------------------------------------------

IFD = ("Extensive experiments show our Qwen2.5-32B-Instruct trained with IFDecorator using only 3,625 training examples "
       "achieves 87.43% on IFEval (outperforming GPT-4o) and improves FollowBench by 4.2%, while preserving general "
       "capabilities.")
BMT = ("BMT: We find that zeroing fewer than 0.05% of its weights, with no other modification, matches full-parameter "
       "fine-tuning (FPT) at scale. The trained mask is several 1000x smaller than the full-parameter checkpoint.")
AS2 = "On CLEVR-Hans, AS2 achieves 99.94% on CLEVR-Hans3 and 87.77% on CLEVR-Hans7."
SAFE = ("Guided by this analysis, we propose ThinkSafe, a self-generated alignment framework that restores safety "
        "without external teachers.")
GP = ("The known regret upper bounds for the widely used GP batched upper confidence bound and GP batched Thompson "
      "sampling (GP-BTS) suffer from a multiplicative factor.")
NVC = "The framework supports both supervised fine-tuning and reinforcement learning."
DEVYN = ("Our results suggest that learning the action parameterization itself can be a simple and effective route to "
         "scaling RL for high-dimensional robots.")
ZOO = ("ZOO estimates gradients via finite differences between two function evaluations, which must use the same "
       "data.")

HYBRID = ("In this paper, we propose Hybrid-LoRA, an efficient hybrid post-training framework that selectively applies "
          "full fine-tuning to a small subset of modules less suited to low-rank adaptation, while adapting the remaining "
          "components with LoRA. We introduce a novel Hybrid-LoRA Score to rank candidate modules according to their "
          "sensitivity to low-rank adaptation under a fixed parameter budget.")
AMORTIX = ("We present AMORTIX, an amortized Graph Transformer model that natively supports such constraints, optimizing "
           "molecular structures in a single forward pass with zero inference-time oracle calls.")
LATENT = ("Our key insight is that while compliance suppresses safety mechanisms, models often retain latent knowledge to "
          "identify harm.")
HIPHY = ("We propose HiPhy, a reinforcement learning framework that grounds video generation in physical laws through a "
         "dual-level objective: locally enforcing the temporal dynamics of individual physical principles, and globally "
         "ensuring the physical and semantic coherence of the entire scene.")
SUDOKU = r"On Visual Sudoku, AS2 achieves 99.89\% cell accuracy and 100\%constraint satisfaction."
BFM = ("In this work, we investigate whether the latent behavioral space induced by BFMs can serve as an effective "
       "search space for Quality-Diversity (QD) methods.")
SCENE = ("Our model reaches a mIoU of 41.2 and 37.5 on NuScenes and Waymo, respectively. Compared with prior work, it "
         "uses 35% less memory, with a 0.4% drop in accuracy, and improves recall from 62.1% to 70.3%.")
PROOF = ("Verifying a proof is far easier than discovering one, and the prover works far from the optimal step size. "
         "Larger batches cannot improve stability, and the method is a decoder-based explainer.")
HOP = ("In experiments, we train Qwen3.5-35B-A3B under two RLVR settings (with and without HopChain's multi-hop data) and "
       "compare them across 24 benchmarks.")
BACKBONE = ("We analyze a broad class of weighted random graphs with communities and prove that the community structure "
            "survives the deletion of all the edges outside the backbone. On average, a prescribed fraction of selected "
            "units meet the criterion.")
DEVICES = ("We validate TinyTTA on two edge devices. Translation is evaluated on en-de and en-ru. Backpropagation is "
           "recast as a decoupled quadratic program.")
PARTS = ("The sampler has three parts: (1) a cyclical step size schedule, (2) a cyclical balancing schedule and (3) an "
         "automatic tuning of the schedules' hyperparameters.")
STAGES = "Training has (i) a warm-up, (ii) a search and (iii) a distillation stage."
MAPPING = ("Our framework implements a flexible mapping from the algebraic specification of a domain to a positional "
           "encoding scheme. A self-distillation scheme transfers representation capability from global to local "
           "features. The minimum is either a positional attention mechanism (tokens attend by position) or a semantic "
           "attention mechanism, with a phase transition from the former to the latter as the sample size grows.")
SEEDS = "Utilizing only $50$ seed samples with augmented data, we fine-tune culture-specific LLMs for $9$ cultures."
NORM = r"We certify predictions against adversarial examples of bounded $L_{\infty}$ norm."
SIMULATION = "We introduce FACTORSIM that generates full simulations in code from language input."
SAMPLES = ("The algorithm returns a point in the expected core given a polynomial number of samples. We disentangle "
           "hands into optimization-based identity maps and learning-based latent features.")
BLEU = (r"SignCL improves the BLEU score of the Sign Language Transformer and GFSLT-VLP on the CSL-Daily dataset by "
        r"39\% and 46\%, respectively, without any increase of model parameters.")
NOMAD = ("We propose NoMAD-Attention, an efficient attention algorithm that replaces MAD operations with in-register "
         "lookups. We employ surrogate model-based optimization to discover the optimal configuration.")
CONTINUAL = ("We develop a replay-free continual learning method. We identify a significant limitation of batch "
             "normalization in neural ODEs. We prove that univariate-input interpolation problems have unique "
             "solutions.")
GAMES = (r"We propose an algorithm for two-player zero-sum Markov games with a single-agent multimodal variant, with a "
         r"$T^{\frac{1}{1+v}}$-type worst-case regret and a $\log T$-type gap-dependent regret.")
MATCH = ("The benchmark asks a model to predict the right image-caption match given two images and two captions. To "
         "follow an object, we track a group of points on it and aggregate their motion. Earlier encoders squeeze the "
         "demonstrations into a single vector. The function, with multiple change points, is queried sequentially. Ours "
         "is the first adaptive method with a linear rate.")
@pytest.mark.parametrize("passage, sentence, problem", [
    (IFD, "IFDecorator reaches 87.43% on IFEval with 3,625 examples [1].", None),
    (IFD, "IFDecorator reaches 78.43% on IFEval [1].", "the number 78.43%"),
    (IFD, "It improves FollowBench by 4.2 points [1].", "the number 4.2 points"),  # % is not points
    (IFD, "Qwen2.5-32B-Instruct outperforms GPT-4o on IFEval [1].", None),
    (IFD, "Qwen2.5-7B-Instruct reaches 87.43% on IFEval [1].", "Qwen2.5-7B-Instruct"),
    (BMT, "BMT matches full-parameter fine-tuning with fewer than 0.05% of the weights zeroed [1].", None),
    (BMT, "Zeroing fewer than 0.5% of the weights is enough [1].", "the number 0.5%"),
    (BMT, "It outperforms full-parameter fine-tuning [1].", "matches, not that it is better"),
    (BMT, "The mask is several 1000x smaller than the checkpoint [1].", None),
    (BMT, "The mask is several 100× smaller than the checkpoint [1].", "the number 100×"),
    (BMT, "It achieves state-of-the-art results [1].", "no state of the art"),
    (AS2, "AS2 reaches 99.94% on CLEVR-Hans3 and 87.77% on CLEVR-Hans7 [1].", None),
    (AS2, "AS2 reaches 99.94% on CLEVR-Hans7 [1].", "that number for clevr-hans3"),
    (AS2, "AS2 在 CLEVR-Hans7 上达到 99.94% [1]。", "that number for clevr-hans3"),
    (SAFE, "ThinkSafe restores safety by distilling from an external teacher [1].", "done without that"),
    (SAFE, "ThinkSafe restores safety without relying on external teachers [1].", None),
    (GP, "Known bounds for GP batched UCB carry a multiplicative factor [1].", None),  # UCB: the initials
    (NVC, "The framework supports reinforcement learning but not supervised fine-tuning [1].", "is not so"),
    (BMT, "BMT 只需置零不到 0.5% 的权重，就超过了全参数微调 (full-parameter fine-tuning) [1]。", "the number 0.5%"),
    (BMT, "BMT 置零不到 0.05% 的权重，就超过了全参数微调 (full-parameter fine-tuning) [1]。", "matches, not that"),
    (AS2, "AS2 reaches 99.94% cell accuracy on Visual Sudoku [1].", "that number for clevr-hans3"),
    (AS2, "AS2 reaches 99.94% accuracy on CLEVR-Hans3 [1].", None),
    (DEVYN, "Learning the action parameterization is the only effective route to scaling RL [1].", "'the only'"),
    (DEVYN, "Learning the action parameterization can be a simple and effective route to scaling RL [1].", None),
    (ZOO, "The estimate is reliable regardless of the data used in the two evaluations [1].", "'regardless'"),
    (HYBRID, "Hybrid-LoRA fully fine-tunes the modules best suited to low-rank adaptation [1].", "other way round"),
    (HYBRID, "Hybrid-LoRA fully fine-tunes a few modules less suited to low-rank adaptation [1].", None),
    (HYBRID, "Its score ranks modules under a parameter budget that grows with the modules chosen [1].", "is fixed"),
    (HYBRID, "Its score ranks modules under a fixed parameter budget [1].", None),
    (AMORTIX, "AMORTIX optimizes molecules over a few forward passes [1].", "counts one, not some"),
    (AMORTIX, "AMORTIX needs a small number of inference-time oracle calls [1].", "done without that"),
    (AMORTIX, "It optimizes molecular structures in a single forward pass and makes no oracle calls at inference time "
              "[1].", None),
    (LATENT, "Compliance erases the model's latent knowledge for identifying harm [1].", "the opposite"),
    (LATENT, "Models often keep their latent knowledge for identifying harm [1].", None),
    (HIPHY, "Its objective works on two levels, local and global [1].", None),  # "dual-level"
    (SUDOKU, "AS2 reaches 100% constraint satisfaction on Visual Sudoku [1].", None),  # "100\\%constraint"
    (HOP, "They train under two RLVR settings, with and without the multi-hop data [1].", None),
    (HYBRID, "Most of its modules are fully fine-tuned [1].", "says a small part, not most"),
    (HYBRID, "LoRA adapts only a few modules, and the majority of modules get full fine-tuning [1].", "a small part"),
    (HYBRID, "Only a small subset of modules is fully fine-tuned [1].", None),
    (HYBRID, "It fully fine-tunes the most sensitive modules [1].", None),  # "most" of a degree, not a share
    (HYBRID, "Hybrid-LoRA 对大多数模块做全量微调 [1]。", "a small part, not most"),
    (HYBRID, "Hybrid-LoRA 只对少数模块做全量微调 [1]。", None),
    (BFM, "QD methods search the raw parameter space instead of a latent behavioral space [1].", "is not so"),
    (BFM, "QD methods search the latent behavioral space rather than raw policy parameters [1].", None),
    (SCENE, "It reaches 37.5 mIoU on Waymo and 41.2 on NuScenes [1].", None),
    (SCENE, "It reaches 41.2 mIoU on Waymo [1].", "that number for nuscenes"),  # "respectively"
    (SCENE, "It uses 35% less memory at the cost of a 0.4% accuracy drop [1].", None),
    (SCENE, "Accuracy improves by 0.4% [1].", "goes down"),
    (SCENE, "Recall rises from 62.1% to 70.3% [1].", None),
    (SCENE, "Recall falls from 70.3% to 62.1% [1].", "other way round"),
    (PROOF, "Verifying a proof is much easier than discovering one [1].", None),
    (PROOF, "Discovering a proof is much easier than verifying one [1].", "compares them the other way round"),
    (PROOF, "The prover works close to the optimal step size [1].", "says far, not close"),
    (PROOF, "Larger batches improve stability [1].", "without that"),
    (PROOF, "Larger batches fail to improve stability [1].", None),
    (PROOF, "The explainer works without a decoder [1].", "is not so"),
    (PROOF, "The explainer is decoder-based [1].", None),
    (r"PiToMe saved from 40-60\% FLOPs of ViT-MAEH.", "PiToMe saves 40–60% of the FLOPs of ViT-MAE-H [1].", None),
    (r"PiToMe saved from 40-60\% FLOPs of ViT-MAEH.", "PiToMe saves 40% to 70% of the FLOPs [1].", "the number 70%"),
    ("Previous methods are unable to create imaginary animals.", "Earlier methods could not create imaginary animals [1].",
     None),
    ("The peak is set by the spectrum and by the eigenvectors.", "The peak is set by the spectrum, not by the eigenvectors "
     "[1].", "is not so"),
    ("ZERO augments each input and averages the predictions.", "ZERO averages predictions over augmented inputs [1].",
     None),  # a name in capitals, not a negation
    ("Scene Completion with Context and Geometry: " + SCENE, "It reaches 41.2 mIoU on NuScenes [1].", None),
    (DEVYN, "Learning the action parameterization is a simple route to scaling RL for all robots [1].", "'all'"),
    (DEVYN, "Learning the action parameterization always scales RL for high-dimensional robots [1].", "'always'"),
    (HOP, "They compare the two settings across all 24 benchmarks [1].", None),  # "all 24" counts, it does not widen
    (SAFE, "ThinkSafe restores safety without any external teachers [1].", None),  # emphasis after a negation
    (SAFE, "ThinkSafe reliably restores safety without external teachers [1].", "'reliably'"),
    (GP, "The regret of GP batched UCB is fully characterized [1].", "'fully'"),
    (SCENE, "It uses slightly less memory [1].", "'slightly'"),
    (SCENE, "It uses substantially less memory, 35% less [1].", None),  # the number says how much
    (HYBRID, "Only a small set of modules is fully fine-tuned [1].", None),  # "a small subset", "full fine-tuning"
    (HYBRID, "Hybrid-LoRA 对所有模块做全量微调 [1]。", "'所有'"),
    (LATENT, "Compliance dramatically suppresses safety mechanisms [1].", "'dramatically'"),
    ("After fine-tuning on data with both complete and skipped steps, the models not only keep their accuracy but also "
     "generalize.", "After fine-tuning solely on skipped steps, the models keep their accuracy [1].", "'solely'"),
    (HYBRID, "Hybrid-LoRA is the only framework to rank modules under a fixed budget [1].", "'the only'"),
    ("Our sampler needs as few as *5* steps and beats baselines requiring 20-1000 steps.",
     "It needs as few as 5 steps, where the baselines need from 20 to 1000 [1].", None),
    ("Our sampler needs as few as *5* steps and beats baselines requiring 20-1000 steps.",
     "It needs as few as 4 steps [1].", "the number 4"),
    ("We fine-tune Llama-2-7B.", "It fine-tunes 7 models [1].", "the number 7"),  # a name, not the range 2-7
    ("We give a Rényi DP accountant for fixed-size subsampling.", "它为固定大小子采样给出了 Renyi DP 会计方法 [1]。", None),
    ("We give a Renyi DP accountant for fixed-size subsampling.", "它为固定大小子采样给出了 Rényi DP 会计方法 [1]。", None),
    ("PRB is the first to combine contextual bandits with PageRank.", "It is the first method to combine the two [1].",
     None),  # "the two" points back at what was named
    ("PRB is the first to combine contextual bandits with PageRank.", "It combines two bandit algorithms with PageRank "
     "[1].", "the number two"),
    ("Energy Discrepancy eliminates the need for Markov chain Monte Carlo.", "So no Markov chain Monte Carlo is needed "
     "[1].", None),
    ("Energy Discrepancy relies on Markov chain Monte Carlo.", "So no Markov chain Monte Carlo is needed [1].",
     "is not so"),
    ("We introduce a camera-agnostic physical attack.", "The attack works regardless of the camera [1].", None),
    ("We introduce a physical attack on a phone camera.", "The attack works regardless of the camera [1].",
     "'regardless'"),
    ("We identify 4 phases (+3 subphases) in the phase-plane.", "It identifies 4 phases and 3 subphases [1].", None),
    ("We identify 4 phases (+3 subphases) in the phase-plane.", "It identifies 3 phases in the phase-plane [1].",
     "counts phase differently"),
    ("Our methods improve 38 downstream evaluation tasks and 5 retrieval tasks.", "They improve 38 tasks [1].", None),
    ("AS2 achieves 99.94% on CLEVR-Hans3 and an average accuracy of 80.1%.", "AS2 reaches 80.1% on CLEVR-Hans3 [1].",
     "gives clevr-hans3 another number"),
    ("It gives an absolute improvement of over 9% on SugarCrepe.", "It gives a relative improvement of over 9% on "
     "SugarCrepe [1].", "says absolute, not relative"),
    ("It gives an average improvement of 3.6% for high-resource languages and 2.3% for low-resource languages.",
     "It gives an average improvement of 3.6% for low-resource languages [1].", "that number for high-resource"),
    ("RC-PPO learns policies with comparable goal-reaching rates while achieving up to 57% lower costs compared to "
     "existing methods.",
     "RC-PPO learns policies with higher goal-reaching rates than existing methods [1].", "matches, not that it is"),
    ("CION achieves higher mAP than the previous state-of-the-art ISR.", "Its scores match those of ISR [1].",
     "better, not that it matches"),
    ("CION achieves higher mAP than the previous state-of-the-art ISR.", "The closest match is CION, which achieves "
     "higher mAP than ISR [1].", None),
    ("CION achieves higher mAP than ISR on Market1501 as well as MSMT17.", "CION beats ISR on Market1501 as well as "
     "MSMT17 [1].", None),  # "as well as" joins, it does not compare
    ("We prove online consistency for all measurable functions.", "It proves online consistency, but only for "
     "continuous functions [1].", "'only for'"),
    ("They have slower query times than graph-based algorithms. LoRANN is competitive with the leading graph-based "
     "algorithms.", "Clustering-based methods have slower query times than the leading graph-based algorithms [1].",
     None),  # a disadvantage stated, which the parity elsewhere does not contradict
    ("Our model is 2x faster than RNN-T and 16x faster than AED.", "It is 2x faster than RNN-T [1].", None),
    ("Our model is 2x faster than RNN-T and 16x faster than AED.", "It is 16x faster than RNN-T [1].",
     "that number for aed"),
    ("Similar model capabilities can result in static debate dynamics.", "Dissimilar model capabilities can lead to "
     "static debate dynamics [1].", "says similar, not dissimilar"),
    ("Non-convex objectives are analysed too.", "It also analyses convex objectives [1].",
     "says non-convex, not convex"),
    ("We infer neural signed distance functions from noisy point clouds.", "It infers signed distance functions, not "
     "unsigned distance functions [1].", None),  # naming both, it contrasts them
    ("It covers strongly convex and general convex objectives, and non-convex objectives.", "It covers general convex "
     "objectives [1].", None),
    ("FAM maps 3D points to adaptively-deformed UV coordinates.", "FAM maps 3D points to a fixed UV grid [1].",
     "says it adapts"),
    ("FAM maps 3D points to adaptively-deformed UV coordinates.", "FAM maps 3D points to adaptively deformed UV "
     "coordinates [1].", None),
    ("It needs 1/16 of the computations of MBR while achieving equal translation quality.", "它的翻译质量高于 MBR [1]。",
     "no such comparison"),
    ("It gives roughly 42% time savings and 30% memory savings.", "It saves about 30% memory and 42% time [1].", None),
    ("It gives roughly 42% time savings and 30% memory savings.", "It gives roughly 30% time savings and 42% memory "
     "savings [1].", "figures the other way round"),
    ("GTA augments trajectories to be both high-rewarding and dynamically plausible.", "It augments trajectories "
     "without requiring the augmented trajectories to be plausible [1].", "is not so"),
    ("TRIPLE performs prompt selection under an explicit budget constraint.", "TRIPLE selects prompts and does not "
     "require an explicit budget constraint [1].", "is not so"),
    ("TRIPLE performs prompt selection without requiring an explicit budget constraint.", "TRIPLE needs no explicit "
     "budget constraint [1].", None),
    ("FPS selects a policy without having access to any prior offline data collected over the participant.",
     "FPS assumes access to prior offline data collected over the participant [1].", "done without that"),
    ("It achieves state-of-the-art performance regardless of RCT data availability.", "It achieves state-of-the-art "
     "performance provided that RCT data is available [1].", "regardless of that"),
    ("The defence generalizes as long as the harm is drawn from the same distribution as the attack set.",
     "The defence generalizes even when the harm is drawn from a different distribution than the attack set [1].",
     "only under that condition"),
    ("The defence generalizes as long as the harm is drawn from the same distribution as the attack set.",
     "The defence generalizes provided that the harm comes from the attack set's distribution [1].", None),
    ("Yo'LLaVA embeds the subject into a set of latent tokens from a handful of images.",
     "It embeds the subject into a single latent token [1].",
     "counts some, not one"),
    ("We propose to predict label distribution from ternary labels.", "It derives ternary labels from predicted label "
     "distributions [1].", "other way round (from)"),
    ("We propose to predict label distribution from ternary labels.", "It recovers label distributions from ternary "
     "labels [1].", None),
    ("We propose to predict label distribution from ternary labels.", "It starts from ternary labels, from which "
     "label distributions are predicted [1].", None),
    ("The model generates the next state, given the current state.", "It generates the current state given the next "
     "state [1].", "other way round (given)"),
    ("It tells two similar captions apart given an image, and two similar images given a caption.",
     "It tells two similar images apart given a caption [1].", None),  # the passage says it both ways
    ("It jointly performs inter-frame feature alignment and intra-frame feature filtering.", "It performs intra-frame "
     "feature alignment and inter-frame feature filtering [1].", "says intra-frame, not inter-frame"),
    ("The self-attention operator refines image embeddings; the cross-attention operator seeks a low-rank "
     "approximation.", "The cross-attention operator refines image embeddings [1].", "says self-attention"),
    ("Current methods remain limited by single-turn attacks.", "Current methods are limited to single-turn rather "
     "than multi-turn attacks [1].", None),  # naming both, it contrasts them
    ("3DGS shows needle-like artifacts and inaccurate normals caused by the Gaussians converging into anisotropic "
     "shapes.", "The paper traces this convergence into anisotropic shapes back to inaccurate normals [1].",
     "other way round (cause)"),
    ("3DGS shows needle-like artifacts and inaccurate normals caused by the Gaussians converging into anisotropic "
     "shapes.", "Gaussians converging into anisotropic shapes lead to inaccurate normals [1].", None),
    ("It employs a deterministic downscaler followed by a temporally-conditioned diffusion model.", "It first runs "
     "a temporally-conditioned diffusion model and then passes the result to a deterministic downscaler [1].",
     "other way round (step)"),
    ("It employs a deterministic downscaler followed by a temporally-conditioned diffusion model.", "A deterministic "
     "downscaler runs first, then a temporally-conditioned diffusion model [1].", None),
    ("We develop an extension of these performant structures that converts them into a sparse Mixture-of-Experts "
     "layer.", "It converts sparse Mixture-of-Experts layers into these performant structures [1].",
     "other way round (into)"),
    ("Each client constructs a personalized model by combining a locally fine-tuned model with federated models.",
     "The server constructs a personalized model for each client [1].", "says client, not server"),
    ("We propose a structural condition beyond the realms of convexity.", "The condition stays within the realm of "
     "convexity [1].", "says beyond, not within"),
    ("Variational methods produce overconfident estimates of posterior uncertainty.", "Variational methods give "
     "underconfident posterior uncertainty estimates [1].", "says overconfident, not underconfident"),
    ("Variational methods produce overconfident estimates of posterior uncertainty.", "Variational methods tend to be "
     "overconfident about posterior uncertainty [1].", None),
    ("There exists a simple variant with optimal rate.", "A simple variant achieves a near-optimal rate [1].",
     "says optimal, not near-optimal"),
    ("There exists a simple variant with near-optimal rate.", "A simple variant achieves the optimal rate [1].",
     "says near-optimal, not optimal"),
    ("The algorithm attains the optimal rate up to logarithmic factors.", "It attains a near-optimal rate [1].", None),
    ("Each pathway is encouraged to tackle a separate task.", "Each pathway is guaranteed to handle a distinct "
     "task [1].", "'guaranteed'"),
    ("We prove that the estimator is unbiased.", "The estimator is provably unbiased [1].", None),
    ("We give a guarantee without assuming the target to be log-concave or satisfying any isoperimetric inequality.",
     "It still requires the target to satisfy an isoperimetric inequality [1].", "does not assume that"),
    ("Prior methods require the number of users to grow with the dimension; ours does not require the number of "
     "users to grow.", "Prior methods require the number of users to grow with the dimension [1].", None),
    ("Empirically, Fisher-Flow improves over prior diffusion and flow-matching models on these benchmarks.",
     "It falls short of earlier flow-matching models [1].", "does better than that"),
    ("Fisher-Flow improves over diffusion models but lags behind flow-matching models.",
     "It falls short of flow-matching models [1].", None),
    ("The time-averaged bias is equal to $\\alpha V + O(\\alpha^2)$.", "The bias equals αV + O(α³) [1].",
     "the number"),
    ("The time-averaged bias is equal to $\\alpha V + O(\\alpha^2)$.", "The bias equals αV + O(α²) [1].", None),
    ("FineStyle is a few-shot fine-tuning method for style personalization.", "FineStyle 是一种无需微调的少样本方法 [1]。",
     "is not so"),
    ("Fisher-Flow improves over prior diffusion and flow-matching models.", "Fisher-Flow 与此前的扩散模型大致相当 [1]。",
     "better, not that it matches"),
    ("Unlike existing models that rely on Convolutional Neural Network (CNN) backbones and spatially rigid prototypes, "
     "our model offers spatially deformed prototypes.", "Rather than spatially rigid prototypes, it uses spatially "
     "deformed prototypes [1].", None),  # what the passage sets its work apart from may be denied of it
    ("Existing models use spatially rigid prototypes; ours adds a deformation head.", "Rather than spatially rigid "
     "prototypes, it uses deformed ones [1].", "is not so"),
    ("MatrixNet learns group representations instead of using predefined group representations as input.",
     "This replaces the usual approach of feeding the network predefined group representations [1].", None),
    ("MatrixNet learns group representations instead of using predefined group representations as input.",
     "It feeds the network predefined group representations [1].", "done without that"),
    ("DxMI is a minimax problem that reaches equilibrium when both models converge.", "DxMI 是一个极小极大问题 [1]。",
     None),  # minimax, not "greatly"
    ("NAG attains an iteration complexity of $O(\\kappa\\log\\frac{1}{\\epsilon})$.", "NAG attains an iteration "
     "complexity of O(κ log(1/ε)) [1].", None),
    ("FoldFlow++ is a flow matching model for protein structure generation that outperforms RFDiffusion.",
     "FoldFlow++ outperforms RFDiffusion and other protein structure models [1].", None),  # a kind of model, not "matches"
    ("Our model is smaller than prior models while matching full fine-tuning on protein structure generation.",
     "It outperforms full fine-tuning on protein structure generation [1].", "matches, not that it is better"),
    (CAL, "The optimal U-calibration error is Θ(K√T) [1].", "another bound"),
    (CAL, "The optimal U-calibration error is Θ(√(KT)) [1].", None),
    (CAL, r"The optimal U-calibration error is $\Theta(\sqrt{KT})$ [1].", None),
    (REGRET, "Its regret is bounded by Õ((cd)^{L+1/2}√T + d + RN) [1].", "another bound"),  # the sign of ½
    (REGRET, "Its regret grows as Õ((cd)^{L−1/2}√T) [1].", None),  # a term of the bound, the others left out
    (REGRET, "Its regret grows as O(√T) [1].", "another bound"),
    (r"The rates are $O(1/T)$ and $O(1/\sqrt[3]{T})$.", r"The rates are $O(1/T)$ and $O(1/\sqrt[3]{T})$.", None),
    (r"a complexity of $n \simeq T = \Theta(d\cdot\mathrm{polylog} d)$", "n ≃ T = Θ(d·polylog d) [1].", None),
    (MATCH, "Given two images and a single caption, a model picks the image that fits [1].", "counts some, not one"),
    (MATCH, "Given two images and two captions, a model predicts which image fits which caption [1].", None),
    (MATCH, "It follows a single point on each object [1].", "counts some, not one"),
    (MATCH, "It tracks a group of points on each object and merges their motion [1].", None),
    (MATCH, "Earlier encoders squeeze the demonstrations into a pair of vectors [1].", "counts one, not some"),
    (MATCH, "Earlier encoders squeeze the demonstrations into one vector [1].", None),
    (MATCH, "The function is queried one point at a time [1].", None),  # how it is queried, not how many points
    (MATCH, "It is the second adaptive method with a linear rate [1].", "the first, not the second"),
    (MATCH, "It is the first adaptive method with a linear rate [1].", None),
    (DEVICES, "该论文在三种边缘设备上验证了 TinyTTA [1]。", "the number 三"),
    (DEVICES, "该论文在两种边缘设备上验证了 TinyTTA [1]。", None),
    (DEVICES, "实验涵盖 en-de 和 en-ru 两个语言对 [1]。", None),  # the two just named, not a count to check
    (DEVICES, "它将反向传播重新表述为一个解耦的二次规划问题 [1]。", None),  # 二次: quadratic, not a count
    (BACKBONE, "They prove that in every weighted graph with communities the structure survives pruning [1].",
     "a class or a part of them"),
    (BACKBONE, "They prove that for a broad class of weighted random graphs the structure survives pruning [1].", None),
    (BACKBONE, "The structure survives the deletion of all edges outside the backbone [1].", None),
    (BACKBONE, "Every selected unit meets the criterion [1].", "a class or a part of them"),
    # the labels of a list number its items: "(2)" is no count of two, a list of three counts three
    (PARTS, "该采样器由两个关键组件构成 [1]。", "the number 两"),
    (PARTS, "该采样器由三个关键组件构成 [1]。", None),
    (PARTS, "The sampler is built from two components [1].", "the number two"),
    (PARTS, "Component (2) is a cyclical balancing schedule [1].", None),  # the label itself, as the passage writes it
    (STAGES, "Training runs in three stages [1].", None),  # (i), (ii), (iii): three
    (STAGES, "Training runs in two stages [1].", "the number two"),
    # how many, as the first half of a compound; the power of a logarithm
    (GAMES, "It targets multi-player zero-sum Markov games [1].", "counts two, not many"),
    (GAMES, "It targets two-player zero-sum Markov games [1].", None),
    (GAMES, "Its variant is multi-modal [1].", None),  # "multimodal" in one word
    (GAMES, "Its variant is multi-agent [1].", "counts one, not many"),
    (GAMES, "It has a one-to-one correspondence with the stochastic regime [1].", None),  # no count of "to"
    (GAMES, "It attains log² T-type gap-dependent regret [1].", "power of the logarithm"),
    (GAMES, "It attains log T-type gap-dependent regret [1].", None),
    # which way "from … to …" runs, against "derives … from …" too, and "the former" / "the latter" read as named
    (MAPPING, "It derives the algebraic specification of a domain from a given positional encoding scheme [1].",
     "other way round"),
    (MAPPING, "It maps a domain's algebraic specification to a positional encoding scheme [1].", None),
    (MAPPING, "It transfers representation capability from local features to global ones [1].", "other way round"),
    (MAPPING, "It transfers representation capability from global features to local ones [1].", None),
    (MAPPING, "Attention moves from semantic to positional as the sample size grows [1].", "other way round"),
    (MAPPING, "Attention moves from positional to semantic as the sample size grows [1].", None),
    # a number in LaTeX is read as rendered
    (SEEDS, "It draws on only $500$ seed samples, with augmented data [1].", "the number 500"),
    (SEEDS, "It draws on only $50$ seed samples and covers $9$ cultures [1].", None),
    # which norm
    (NORM, "It certifies predictions against adversarial examples of bounded L2 norm [1].", "another norm"),
    (NORM, "It certifies predictions against adversarial examples of bounded ℓ2 norm [1].", "another norm"),
    (NORM, "It certifies predictions against adversarial examples of bounded L∞ norm [1].", None),
    (NORM, "It certifies predictions against adversarial examples of bounded $L_\\infty$ norm [1].", None),
    # input and output: "takes X and generates Y", "converts X into Y" make Y from X
    (SIMULATION, "FACTORSIM takes simulations written in code and generates natural-language descriptions [1].",
     "other way round"),
    (SIMULATION, "FACTORSIM takes language input and generates full simulations in code [1].", None),
    (SIMULATION, "FACTORSIM converts simulations in code into language [1].", "other way round"),
    (SIMULATION, "FACTORSIM converts language input into full simulations in code [1].", None),
    # the second half of a compound the other way ("-based" for "-free"), how much said the other way ("minor" for
    # "significant"), and a count written as one word ("multivariate" for "univariate")
    (CONTINUAL, "It is a replay-based continual learning method [1].", "replay-free, not replay-based"),
    (CONTINUAL, "It is a replay-free continual learning method [1].", None),
    (CONTINUAL, "It points to a minor limitation of batch normalization in neural ODEs [1].", "not minor"),
    (CONTINUAL, "It points to a significant limitation of batch normalization in neural ODEs [1].", None),
    (CONTINUAL, "It proves that multivariate-input interpolation problems have unique solutions [1].",
     "counts one, not many"),
    (CONTINUAL, "It proves that univariate-input interpolation problems have unique solutions [1].", None),
    # "a portion of" speaks of a part; "not necessarily optimal" denies "optimal"
    (NOMAD, "It replaces a portion of the MAD operations with in-register lookups [1].", "nothing of the kind: little"),
    (NOMAD, "It replaces MAD operations with in-register lookups [1].", None),
    (NOMAD, "It finds a reasonable but not necessarily optimal configuration [1].", "not say it is not so"),
    (NOMAD, "Surrogate model-based optimization discovers the optimal configuration [1].", None),
    ("We study partially observable environments.", "It handles partially observable environments [1].", None),
    # "fewer" where the passage says "more" of the same thing
    ("LLaMA requires more data samples than relearning all sub-tasks from scratch.",
     "LLaMA needs fewer data samples than relearning all sub-tasks from scratch [1].", "more, not fewer"),
    ("LLaMA requires more data samples than relearning all sub-tasks from scratch.",
     "LLaMA needs more data samples than relearning all sub-tasks from scratch [1].", None),
    # a number written against Chinese characters is read
    (BLEU, "SignCL使Sign Language Transformer和GFSLT-VLP的BLEU分数分别提升了29%和46%[1]。", "the number 29%"),
    (BLEU, "SignCL使Sign Language Transformer和GFSLT-VLP的BLEU分数分别提升了39%和46%[1]。", None),
    # a respectively-list's numbers go with its names and with the setting the clause names beside it
    (BLEU, "SignCL improves the Sign Language Transformer by 39% on CSL-Daily [1].", None),
    (BLEU, "在CSL-Daily上，SignCL分别提升了39%和46%[1]。", None),
    (BLEU, "On CSL-Daily, SignCL improves GFSLT-VLP by 39% [1].", "gives gfslt-vlp another number"),
    (BLEU, "SignCL improves GFSLT-VLP by 46% on CSL-Daily [1].", None),
    (BLEU, "SignCL improves BLEU by 39% on CSL-Daily [1].", None),  # a metric no number is bound to in the passage
    # how fast something grows, and a hyphenated modifier moved onto what the passage gives another of its kind
    (SAMPLES, "It returns a point in the expected core from a logarithmic number of samples [1].",
     "polynomial, not logarithmic"),
    (SAMPLES, "It returns a point in the expected core from a polynomial number of samples [1].", None),
    (SAMPLES, "Hands are split into learning-based identity maps and latent features [1].",
     "optimization-based ident"),
    (SAMPLES, "Hands are split into optimization-based identity maps and learning-based latent features [1].", None),
    (BACKBONE, "On average, a prescribed fraction of the selected units meet the criterion [1].", None),
    ("Maintaining graph information can preserve information of old models.",
     "Maintaining graph information cannot by itself preserve old-model information [1].", "not say it is not so"),
    ("Maintaining graph information alone cannot preserve old models; replay is needed.",
     "Maintaining graph information cannot on its own preserve old-model information [1].", None),
    # a number written as a compound's first half is one the passage gives; a count of things still counts them
    ("We propose a 4-bit quantization scheme for KV caches.", "It quantizes the KV cache to 4 bits [1].", None),
    ("We propose a 4-bit quantization scheme for KV caches.", "It quantizes the KV cache to 3 bits [1].", "number 3"),
    ("Sparse 4-view exocentric viewpoints are configured 360° around the scene.",
     "It uses four exocentric views placed 360° around the scene [1].", None),
    ("Sparse 4-view exocentric viewpoints are configured 360° around the scene.",
     "It uses four exocentric views placed 180° around the scene [1].", "number 180"),
    ("We present a variation of 2-dimensional SSMs with a new 2-dimensional parallel selective scan.",
     "It introduces a new two-dimensional parallel selective scan [1].", None),
    ("It generates multiple 3-dimensional lookup tables (3D LUTs) and a cascade using two 3D LUTs.",
     "It builds a cascade using three 3D LUTs [1].", "counts 3d differently"),
    ("Llama-2-7B is fine-tuned on the data.", "Llama-2-7B is fine-tuned with 2 epochs [1].", "number 2"),
    # "all" inside a name or as emphasis claims no scope; "at all levels" does
    ("We implement winner-take-all (WTA) competition in a spiking layer.",
     "It implements winner-take-all (WTA) competition in a spiking layer [1].", None),
    ("Our approach bypasses the need to determine the automorphism group.",
     "The approach avoids having to determine the automorphism group at all [1].", None),
    ("Filtering to English pairs disadvantages communities of lower socioeconomic status.",
     "Filtering to English pairs disadvantages communities at all socioeconomic levels [1].", "nothing of the kind"),
    # "exactly" claims what "approximately" does not; "exactly this" points at the question; 总能 is "always"
    ("We propose a framework to approximately identify the global optimal prompt for each query sample.",
     "It proposes a framework that exactly identifies the globally optimal prompt for each query sample [1].",
     "nothing of the kind: entirely"),
    ("We propose a framework to approximately identify the global optimal prompt for each query sample.",
     "Yes, this paper addresses exactly this question of prompt selection [1].", None),
    ("Neuc-MDS optimizes the choice of eigenvalues of the dissimilarity Gram matrix to reduce STRESS.",
     "该方法总能把 STRESS 降到全局最小值[1]。", "nothing of the kind: all"),
    ("Neuc-MDS optimizes the choice of eigenvalues of the dissimilarity Gram matrix to reduce STRESS.",
     "该方法通过选择特征值来降低 STRESS[1]。", None),
    # "not only … but also" restricts nothing, so it licenses no "modestly"; "only limited" is a small claim too
    ("Q2VMC significantly enhances the efficiency and accuracy of solving the Schrödinger equation. This study not "
     "only advances the field but also offers a scalable framework.",
     "Q2VMC modestly improves the efficiency of solving the Schrödinger equation [1].", "nothing of the kind: little"),
    ("After training with reward information, the preserved topology supports successful path integration.",
     "After training with reward information, the preserved topology offers only limited support for path "
     "integration [1].", "nothing of the kind: little"),
    ("Labelled data is limited in this setting, so we pretrain on unlabelled images.",
     "Because labelled data is limited, it pretrains on unlabelled images [1].", None),
    # "超过 95%" is "over 95%", not a comparison
    ("Using a simple metric, we can remove over 95% of hallucinations at generation time.",
     "作者用一个简单指标，在生成阶段即可移除超过 95% 的幻觉 [1]。", None),
    ("Using a simple metric, we can remove over 95% of hallucinations at generation time.",
     "该方法超过了以往的方法 [1]。", "no such comparison"),
    # a number naming one of a series, after its word: "Rank 2" where the passage says "Rank 1" ("two" is a count)
    ("At the time of this paper's acceptance, Hamba holds the top position, Rank 1, in two competition leaderboards.",
     "When the paper was accepted, Hamba held Rank 2 on two hand reconstruction leaderboards [1].", "Rank 1, not 2"),
    ("At the time of this paper's acceptance, Hamba holds the top position, Rank 1, in two competition leaderboards.",
     "Hamba held Rank 1 on two leaderboards when the paper was accepted [1].", None),
    ("We evaluate on Llama 2 and Llama 3 models.", "It is evaluated on Llama 3 [1].", None),
    # a unit of time after an amount is the passage's ("a few minutes"), not another; "the second stage" is no time
    ("We find high-quality solutions to real-world districting problems in a few minutes.",
     "It finds high-quality districting solutions within a few seconds [1].", "another unit of time"),
    ("We find high-quality solutions to real-world districting problems in a few minutes.",
     "It finds high-quality districting solutions in a few minutes, in a second stage after training [1].", None),
    ("Our training pipeline can enhance any 360 monocular depth estimator.",
     "The pipeline improves one particular 360 monocular depth estimator [1].", "nothing of the kind: little"),
    # a negation written as a contraction is one ("don’t", "can't")
    ("Since we are solving a causal problem, where labels don’t exist, we use a causal model to learn costs.",
     "In this causal problem labels do not exist, so a causal model learns the costs [1].", None),
    ("The method can't use labels, so it learns the costs with a causal model.",
     "The method cannot use labels [1].", None),
    # a claim to have come first needs a passage claiming priority; a place in a sequence is not one
    ("We propose MambaSCI, which leverages the Mamba and UNet architectures for efficient video SCI reconstruction.",
     "MambaSCI is the first method to bring Mamba into video SCI [1].", "nothing of the kind: first"),
    ("We propose MambaSCI, which leverages the Mamba and UNet architectures for efficient video SCI reconstruction.",
     "In the first step, MambaSCI applies Mamba and UNet to video SCI [1].", None),
    ("To the best of our knowledge, Uni-Med is the first effort to tackle multi-task interference at the connector.",
     "Uni-Med is presented as the first model to tackle multi-task interference at the connector [1].", None),
    ("We introduce deep submodular peripteral networks (DSPNs), a novel parametric family of submodular functions.",
     "DSPNs are the first parametric family of submodular functions ever proposed [1].", "nothing of the kind: first"),
    ("We introduce deep submodular peripteral networks (DSPNs), a novel parametric family of submodular functions.",
     "DSPNs are a new parametric family of submodular functions [1].", None),
    ("To the authors' knowledge, ours is the first such RDP analysis of fixed-size subsampling with replacement.",
     "It gives the first RDP analysis of fixed-size subsampling with replacement [1].", None),
    # zero as a value is no negation ("at zero temperature"); zero as a count still is
    ("Marginalize after setting the Softmax temperature to zero.",
     "It marginalizes the predictions at zero temperature [1].", None),
    ("Marginalize after setting the Softmax temperature to zero.", "It needs zero softmax temperature [1].",
     "does not say it is not so"),
    # "the most …" needs a passage that ranks something first; what is most common or recent is not a ranking
    ("Our findings highlight embedding space attacks as an important threat model in open-source LLMs.",
     "Embedding space attacks are the most important threat model facing open-source LLMs [1].",
     "nothing of the kind: most"),
    ("Our findings highlight embedding space attacks as an important threat model in open-source LLMs.",
     "Embedding space attacks are an important threat model for open-source LLMs [1].", None),
    ("Embedding space attacks are the strongest threat model we evaluate for open-source LLMs.",
     "Embedding space attacks are the most effective threat model they evaluate [1].", None),
    ("We evaluate on ImageNet, the benchmark most used for this task.",
     "It is evaluated on ImageNet, the most widely used benchmark for the task [1].", None),
    ("Adding TD3 gradients effectively improves the online finetuning performance of ODT.",
     "在 ODT 微调时加入 TD3 梯度只能带来轻微的性能改善 [1]。", "nothing of the kind: little"),
    ("Adding TD3 gradients slightly improves the online finetuning performance of ODT.",
     "在 ODT 微调时加入 TD3 梯度带来轻微的性能改善 [1]。", None),
    ("Stage 1 pretrains the encoder and Stage 2 fine-tunes it on 3 tasks.", "In Stage 3, the encoder is fine-tuned "
     "[1].", "not 3"),
    ("Stage 1 pretrains the encoder and Stage 2 fine-tunes it on 3 tasks.", "In Stage 2, the encoder is fine-tuned "
     "on 3 tasks [1].", None),
    ("We fine-tune Llama 2 7B in 2 stages.", "In Stage 2, Llama 2 is fine-tuned [1].", None),
])
def test_hard_facts_are_checked_exactly(passage, sentence, problem):
    from retrieval.grounding import Evidence, fact_problem

    found = fact_problem(sentence, Evidence.of(passage), latin_terms="。" in sentence)
    assert (found is None) if problem is None else (found is not None and problem in found), found


def test_a_hedge_may_name_what_the_passage_does_not_say():
    """"does not say whether it extends to multivariate inputs" is read as a hedge is (no denial, no count)."""
    from retrieval.grounding import Evidence, fact_problem

    hedge = "The passage does not say whether the result extends to multivariate inputs."
    assert fact_problem(hedge, Evidence.of(CONTINUAL), number_words=False, denials=False, scope=False) is None
    claim = "The result extends to multivariate inputs [1]."
    assert "counts one" in (fact_problem(claim, Evidence.of(CONTINUAL)) or "")


@pytest.mark.parametrize("sentence, hedge", [
    ("The passages do not say whether the two approaches have been combined.", True),
    ("None of the passages reports the cost in US dollars.", True),
    ("It is not stated which GPU cluster was used.", True),
    ("段落没有说明这种不一致对训练的影响有多大。", True),
    ("目前还不清楚该方法能否扩展到视频。", True),
    ("The passage describes a dataset of 50K prompts [1].", False),
    ("BMT does not modify the model otherwise [1].", False),
    ("The cited passage itself does not say which optimizer was used.", True),
    ("The abstract gives no figure for the memory saved.", True),
    ("该段落并未具体说明使用了哪种优化器。", True),
    ("引用段落本身没有量化节省了多少内存。", True),
    ("The passage gives a figure for the memory saved [1].", False),
    ("It does not explain how the mask is initialised.", True),
    ("It does not require labels [1].", False),
    ("The passage states these goals but does not explain how the construction achieves them.", True),
    ("The passage says ZAF is motivated by 'these insights' but does not spell them out.", True),
    ("The passage says the method does not need labels [1].", False),
    ("The excerpt only names the method, so it does not explain how the mask is learned.", True),
    ("The method is simple, so it does not need tuning [1].", False),
    ("摘录没有具体说明该方法如何初始化掩码。", True),
    ("摘录中没有列出具体使用了哪些基准。", True),
    ("No complexity figures are given in the passage.", True),
    ("No labels are used in training [1].", False),
    ("Details on convex aggregation are not given in the passage.", True),
    ("The method is described in the passage [1].", False),
    ("The excerpt is cut off before it describes the second module.", True),
    ("Nothing in this excerpt describes how the reward is learned.", True),
    ("None of the retrieved passages is about protein folding.", True),
    ("The excerpt leaves the sampling procedure itself unspecified.", True),
    ("The passage refers to 'such GNNs' without stating which class is meant.", True),
    ("Beyond the title's mention of hybrid gradients, the excerpt does not detail the training procedure.", True),
    ("So the excerpt cannot tell you how the method works.", True),
    ("The excerpt only says the method addresses certain issues; it does not describe those issues.", True),
    ("摘要片段没有具体说明这两项保证的内容。", True),
    ("该段落没有分别给出两个模型各自的成功率。", True),
    ("Beyond accuracy, the method does not need labels [1].", False),
    ("The passage refers to a new loss without a separate critic [1].", False),
    ("The method leaves the backbone itself unchanged [1].", False),
    ("Exactly how the computation is reduced is not spelled out in this excerpt.", True),
    ("Which layers are dropped, and how they are chosen, is not explained in this excerpt.", True),
    ("How the model uses mask guidance cannot be determined from this passage.", True),
    ("The excerpt only poses this question, so it does not reveal the authors' answer.", True),
    ("The method is not described in prior work [1].", False),
    ("How the masks are chosen is explained in the abstract [1].", False),
    ("The excerpt says nothing about spiking graph neural networks or graph classification.", True),
    ("The abstract is silent on which datasets were used.", True),
    ("The method says nothing about its inputs' order, so any order works [1].", False),
])
def test_hedges_are_recognized_by_their_form(sentence, hedge):
    from retrieval.grounding import is_hedge

    assert is_hedge(sentence) is hedge


def test_a_hedge_is_shown_uncited_and_marked_but_checked_for_names():
    from retrieval.grounding import HEDGE_MARK

    g = ground_reply(f"{GOOD_2} The passages do not say whether NV-CoT was tested on video [2].", PASSAGES)
    assert g.text == f"{GOOD_2} {HEDGE_MARK} The passages do not say whether NV-CoT was tested on video."
    wrong = ground_reply(f"{GOOD_2} The passages do not say whether NV-CoT beats LLaVA.", PASSAGES)
    assert wrong.text == GOOD_2 and wrong.removed == {"fact": 1}  # LLaVA is in no passage
    scope = ground_reply(f"{GOOD_2} The passages do not say whether NV-CoT works for all MLLMs.", PASSAGES)
    assert scope.text == f"{GOOD_2} {HEDGE_MARK} The passages do not say whether NV-CoT works for all MLLMs."
    turns = "The passages do not say whether NV-CoT uses short chain-of-thought reasoning."
    paired = ground_reply(f"{GOOD_2} {turns}", PASSAGES)  # nor "short" where a passage says "long chain-of-thought"
    assert paired.text == f"{GOOD_2} {HEDGE_MARK} {turns}"
    gap = "The passages do not say whether NV-CoT handles discontinuous numerical coordinates."
    prefixed = ground_reply(f"{GOOD_2} {gap}", PASSAGES)  # a hedge does not contradict "continuous numerical …"
    assert prefixed.text == f"{GOOD_2} {HEDGE_MARK} {gap}"


def test_a_reply_of_hedges_alone_shows_nothing():
    g = ground_reply("The passages do not say which method is best.", PASSAGES)
    assert g.text == ""


def test_every_sentence_of_an_abstract_passes_the_exact_checks_against_its_own_abstract():
    """What an abstract says in one sentence is not contradicted by what it says in another: "prior methods rely on
    external teachers" beside "ours works without external teachers", "not only faster but also …"."""
    from ingest.parse import discover, parse_file
    from paperbot.settings import BUNDLED_CORPUS
    from paperbot.text import readable
    from retrieval.grounding import Evidence, fact_problem

    papers = [p for f in discover([BUNDLED_CORPUS]) for p in parse_file(f) if p.abstract]
    assert len(papers) > 40
    refused = [(p.title, s, problem) for p in papers for s in sentences(p.abstract)
               if (problem := fact_problem(readable(s), Evidence.of(p.abstract)))]
    assert refused == []


@pytest.mark.parametrize("line, echoed", [
    ("[1] From Unstructured Data to In-Context Learning: Exploring What Tasks Can Be Learned", True),
    ("From Unstructured Data to In-Context Learning: Exploring What Tasks Can Be Learned", True),
    ('"From Unstructured Data to In-Context Learning: Exploring What Tasks Can Be Learned and When" finds that '
     "analogies arise from co-occurrence alone [1].", False),
    ("《From Unstructured Data to In-Context Learning: Exploring What Tasks Can Be Learned and When》发现类比能力来自共现 [1]。",
     False),
    ("From Unstructured Data to In-Context Learning: Exploring What Tasks Can Be Learned and When finds that analogies "
     "arise from co-occurrence alone [1].", False),  # the whole title, colon and all, as the sentence's subject
    # a title in markdown emphasis, as capable models set it
    ("*From Unstructured Data to In-Context Learning: Exploring What Tasks Can Be Learned and When* finds that "
     "analogies arise from co-occurrence alone [1].", False),
    ("**From Unstructured Data to In-Context Learning: Exploring What Tasks Can Be Learned and When** finds that "
     "analogies arise from co-occurrence alone [1].", False),
    ("- _From Unstructured Data to In-Context Learning_: analogies arise from co-occurrence alone [1].", False),
    ("[1] From Unstructured Data to In-Context Learning: Exploring What Tasks Can Be Learned and When: Word analogy "
     "completion can provably arise", True),
    ("From Unstructured Data to In-Context Learning: Exploring What Tasks Can Be Learned and When Word analogy "
     "completion can provably arise purely", True),
])
def test_a_title_quoted_or_as_a_subject_is_the_answer_citing_it_not_the_prompt_echoed(line, echoed):
    from retrieval.grounding import echoes_prompt

    label = "From Unstructured Data to In-Context Learning: Exploring What Tasks Can Be Learned and When"
    passages = [Passage.of(1, label, "Word analogy completion can provably arise purely from co-occurrence modeling.")]
    assert echoes_prompt(line, passages) is echoed
