"""The shared text toolkit: one splitter, one stemmer, one stopword list, one cleaner for every layer."""

from __future__ import annotations

import pytest

from paperbot.text import (about_names, asked_names, asks_how, clean_question, content_words, defines, names, readable, says_name,
                           sentences, split_sentences, states_method, states_result, stem, strip_control)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("We find X [1]. Then Y [2][3]. Done.", ["We find X [1].", "Then Y [2][3].", "Done."]),
        ("我们提出方法。它很好！最后", ["我们提出方法。", "它很好！", "最后"]),
        ("It works [1]. 该方法很好[2]。", ["It works [1].", "该方法很好[2]。"]),
        ("We use e.g. masks. Fine.", ["We use e.g. masks.", "Fine."]),
        ("Accuracy is 87.43% on X. It rises.", ["Accuracy is 87.43% on X.", "It rises."]),
        ("lower case after. the end", ["lower case after. the end"]),
    ],
)
def test_sentences_keep_citations_and_know_cjk_punctuation(text, expected):
    assert sentences(text) == expected
    assert all(text[s.start:s.end] == t for s, t in zip(split_sentences(text), expected))


def test_lines_end_sentences_when_asked():
    reply = "- BMT masks weights [1]\n- ThinkSafe restores safety [2]"
    assert sentences(reply) == [reply.replace("\n", "\n")]
    assert sentences(reply, lines=True) == ["- BMT masks weights [1]", "- ThinkSafe restores safety [2]"]


def test_stems_meet_across_word_forms_and_stopwords_never_count():
    assert stem("answers") == stem("answer")
    assert stem("generations") == stem("generation")
    assert content_words("The answers of these models [1]") == {stem("answers"), stem("models")}
    assert content_words("paper on masks", ignore=frozenset({"paper"})) == {stem("masks")}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("clear\x1b[2Jscreen", "clearscreen"),
        ("title\x1b]0;pwned\x07 set", "title set"),
        ("link \x1b]8;;https://evil.example\x1b\\here\x1b]8;;\x1b\\", "link here"),
        ("nul\x00 and bell\x07", "nul and bell"),
        ("bidi \u202eevil\u202c", "bidi evil"),
        ("tab\tand\nnewline kept", "tab\tand\nnewline kept"),
    ],
)
def test_control_characters_and_terminal_escapes_are_removed(text, expected):
    assert strip_control(text) == expected


def test_a_question_is_cleaned_of_invisible_and_control_text():
    assert clean_question("  what\u200b is \x1b[31mBMT\x1b[0m?  ") == "what is BMT?"
    assert clean_question("\u200b\u2060") == ""


@pytest.mark.parametrize(
    "source, shown",
    [
        (r"reduces training time by up to 4.2$\times$", "reduces training time by up to 4.2×"),
        (r"$\beta$-DPO", "β-DPO"),
        (r"$O(n^2)$ memory", "O(n²) memory"),
        ("plain text stays", "plain text stays"),
        (r"under a 10\% budget; recovers $96.1\%$ of gains", "under a 10% budget; recovers 96.1% of gains"),
        (r"$\sim$3x faster, a $2.45{\times}$ gain", "∼3x faster, a 2.45× gain"),
        (r"FID ($9.38 \to 2.62$ on SiT), $\ell_2$ error", "FID (9.38 → 2.62 on SiT), ℓ₂ error"),
        (r"$\tilde{O}(S^6 H / \epsilon^2)$ agents", "Õ(S⁶ H / ε²) agents"),
        (r"$\tilde{\Theta}(\sqrt{k})$ and $\widetilde\Pi_k$", "Θ̃(√k) and Π̃ₖ"),
        (r"$\frac{1}{2}$ and $\tfrac12$ and $\sqrt{\texttt{KL}}$", "1/2 and 1/2 and √KL"),
        (r"$O(\kappa\log\frac{1}{\epsilon})$, $\log n$, $\max(a, b)$", "O(κ log 1/ε), log n, max(a, b)"),
        (r"$x\sim\mathcal N(0,1)$, $\langle a, b\rangle$", "x∼N(0,1), ⟨a, b⟩"),
        (r"$\Theta(d\cdot\mathrm{polylog} d)$, $z\sim\mathrm{Unif}$", "Θ(d· polylog d), z∼ Unif"),
        (r"``blind'' entropy; state--action; hypernymy---the relation", "“blind” entropy; state–action; hypernymy—the relation"),
        (r"code at \url{https://github.com/x/y}.", "code at https://github.com/x/y."),
        (r"we introduce {Monotonic Policy Update (MIPU)}, \textit{simple}", "we introduce Monotonic Policy Update (MIPU), simple"),
        (r"the \countdown{} task", "the countdown task"),
        ("prices of $5 and $6; run with --no-llm", "prices of $5 and $6; run with --no-llm"),
        ("a dict {a: 1} stays", "a dict {a: 1} stays"),
    ],
)
def test_latex_is_shown_as_people_read_it(source, shown):
    assert readable(source) == shown


def test_no_module_but_the_toolkit_spells_out_a_cjk_range():
    """Han, kana and Hangul ranges live in paperbot/text.py (HAN, CJK, …): one definition of "Chinese text"."""
    import re
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    spelled = re.compile(r"\\u(?:3040|30ff|3400|4dbf|4e00|9fff|f900|ac00|d7af)|[\u4e00\u9fff\u3400]-")
    found = [f"{path.relative_to(repo)}:{n}"
             for package in ("paperbot", "ingest", "retrieval", "bot")
             for path in sorted((repo / package).rglob("*.py")) if path != repo / "paperbot" / "text.py"
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1) if spelled.search(line)]
    assert not found, f"a CJK range outside paperbot/text.py: {found}"


@pytest.mark.parametrize("question, expected", [
    ("a Mamba-based backbone for 3D point cloud segmentation", ["Mamba", "3D"]),
    ("is there a differentially private version of DBSCAN clustering?", ["DBSCAN"]),
    ("defending vision-language models such as LLaVA", ["LLaVA"]),
    ("Which paper plays Go on a 19x19 board?", ["Go", "19x19"]),
    ("How do people fine-tune by masking weights?", []),  # the first word's capital names nothing
    ("what is the 最佳 model", []),
])
def test_names_are_acronyms_inner_capitals_digits_and_capitals_after_the_first_word(question, expected):
    assert names(question) == expected


@pytest.mark.parametrize("name, text, said", [
    ("LLMs", "we study large language models", True),  # an acronym by its words' initials, plural aside
    ("LLM", "an LLM-based agent", True),
    ("Mamba", "a Mamba-based backbone", True),
    ("Go", "the game of go and chess", True),
    ("DBSCAN", "we privatise k-means clustering", False),
    ("Go", "a good policy", False),  # a word that starts with the name is another word
    ("SFT", "supervised fine-tuning", True),
    ("RL", "real life", True),  # initials can meet by chance: a name the paper does not say reads as said
])
def test_a_name_is_said_as_a_word_in_any_case_or_by_its_initials(name, text, said):
    assert says_name(name, text) is said


@pytest.mark.parametrize("question, how", [
    ("How do discriminators help flow matching models?", True),
    ("how can I train a depth model with few labels", True),
    ("ways to detect jailbreak prompts", True),
    ("methods for pruning protein folding models", True),
    ("How much faster is the new sampler?", False),  # asks for a number
    ("how many GPUs did they use", False),
    ("Which paper proposes Bregman Safety Optimization?", False),
])
def test_a_question_asking_how_is_told_from_one_asking_how_much(question, how):
    assert asks_how(question) is how


@pytest.mark.parametrize("sentence, method, result", [
    ("We propose DRL, which trains a discriminator and uses its logit as the reward.", True, False),
    ("Our method relaxes the discrete search into a continuous one.", True, False),
    ("It reaches the optimum by interpolating the sparse gradients.", True, False),
    ("Experiments on three benchmarks show that DRL outperforms PPO.", False, True),
    ("Empirically, the approach performs well in non-stationary settings.", False, True),
    ("DRL trains a discriminator to separate data from samples.", True, False),  # the method's name as subject
    ("Flow matching models have emerged as a strong family of generative models.", False, False),
])
def test_a_sentence_stating_a_method_is_told_from_one_reporting_results(sentence, method, result):
    assert states_method(sentence) is method
    assert states_result(sentence) is result


@pytest.mark.parametrize("question, asked", [
    ("What is BMT?", ["BMT"]),
    ("what's AsyncThink", ["AsyncThink"]),
    ("how does AsyncThink work?", ["AsyncThink"]),
    ("DeePEn?", ["DeePEn"]),  # the name alone
    ("explain NV-CoT", ["NV", "CoT"]),
    ("Which paper uses RLVR for instruction following?", []),  # names a technique, asks for a paper
    ("how do people fine-tune by masking weights?", []),  # asks how, names nothing
    ("What accuracy does IFDecorator reach on IFEval?", []),  # asks for a number
])
def test_a_question_asking_what_a_name_is_is_told_apart(question, asked):
    assert asked_names(question) == asked


@pytest.mark.parametrize("sentence, name, defined", [
    ("We call the method Bit-Mask Tuning (BMT): a learnable binary keep/zero mask over the gate projection.", "BMT",
     True),
    ("We propose a training-free ensemble framework \\textsc{DeePEn}, fusing the distributions of several LLMs.",
     "DeePEn", True),
    ("AsyncThink, a new reasoning paradigm, lets a model organise its own thinking into concurrent threads.",
     "AsyncThink", True),
    ("DRL is a reward learned by a discriminator.", "DRL", True),
    ("BMT reaches FPT accuracy at our largest backbones.", "BMT", False),  # uses the name, says what it achieves
    ("We compare against BMT and LoRA on three benchmarks.", "BMT", False),
    ("Bit-Mask Tuning (BMTX) masks weights.", "BMT", False),  # another name that starts the same
])
def test_a_sentence_introducing_a_name_is_told_from_one_using_it(sentence, name, defined):
    assert defines(sentence, name) is defined


@pytest.mark.parametrize("question, about", [
    ("What is BMT?", True),
    ("compare DRL and BMT", True),  # nothing but the names and a reference word
    ("BMT vs DRL?", True),
    ("DRL for robot locomotion", False),  # asks about locomotion: "DRL" may be deep reinforcement learning
    ("Which paper uses RLVR for instruction following?", False),
    ("how do people fine-tune by masking weights?", False),  # names nothing
])
def test_a_question_about_the_things_it_names_is_told_from_one_using_a_name(question, about):
    assert about_names(question) is about


def test_points_elsewhere_and_asks_for_code():
    from paperbot.text import asks_for_code, points_elsewhere

    assert points_elsewhere("Our code is available at: [https://github.com/x/IntraMix](https://github.com/x/IntraMix).")
    assert points_elsewhere("Code will be released.") and points_elsewhere("Source code has been made publicly available.")
    assert points_elsewhere("Project page: www.example.org/gaussians")
    # a result or a release that is itself the answer is not a pointer
    assert not points_elsewhere("setting record FIDs of 1.01 for 64x64, using publicly available networks.")
    assert not points_elsewhere("We release a dataset of 10,000 annotated molecules.")
    for asked in ("is the code of DRL public?", "where's the github repo for BMT", "link to the BMT paper?", "BMT code?",
                  "has BMT released their code yet", "is BMT open source?", "where can I find the ThinkSafe implementation",
                  "code for the paper on masking weights?", "BMT code", "HEALNet repo link",
                  "Is BMT open source? I'd like to try it"):
        assert asks_for_code(asked), asked
    # code as a topic, a link as a topic, a way to get something: no request for a paper's code
    for topic in ("how do people encode links in graphs?", "what is BMT?", "retrieval-augmented repository-level code "
                  "completion", "neural decoders for quantum error correction on surface codes", "LLMs that write code?",
                  "making open-source LLMs robust against jailbreaks", "code for quantum error correction",
                  "how do you get an LLM to debug its code?", "neural code clone detection in source code?",
                  "are there open-source LLMs? for my lab"):
        assert not asks_for_code(topic), topic


def test_a_request_for_named_code_is_about_the_names():
    from paperbot.text import about_names

    assert about_names("is the IntraMix code public?") and about_names("where can I find GuardT2I's code?")
    assert about_names("github for CoSW?") and about_names("Is HydraViT open source? I'd like to try it")
    assert not about_names("is there code for DRL in robot locomotion?")  # locomotion is asked about


def test_a_paper_called_by_its_topic():
    from paperbot.text import topic_called

    assert topic_called("what datasets does the sycophancy paper use?") == {stem("sycophancy")}
    assert topic_called("is there a repo for that knowledge graph completion paper?") == {
        stem("knowledge"), stem("graph"), stem("completion")}
    # a place among earlier answers, the paper alone, a paper by what it is about, a verb: no title's words
    for other in ("What does the third paper propose?", "does the same paper test Llama?", "tell me about this paper",
                  "the paper on sycophancy", "how does the discriminator work?", "the best paper award winners"):
        assert not topic_called(other), other
