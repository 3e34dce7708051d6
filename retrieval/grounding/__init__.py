"""Only checked text is shown as an LLM answer: the model's reply, cleaned and judged sentence by sentence.

Small models produce debris that looks like an answer: chat-template tokens and
role markers, the prompt echoed back (the passage list, "Question:" lines, the
rules), a literal "[n]", one sentence repeated to the length cap. Capable models
produce something subtler: a fluent sentence with one wrong number, "outperforms"
where the paper says "matches", a result credited to the wrong paper. Each
sentence of a reply is judged on its own (`Checker.judge`), so a stream can be
shown sentence by sentence with nothing shown ever withdrawn (retrieval/checks.py):

* **hard facts, exactly**: every number with its unit (%, ×, points, K/M/B), every
  name (acronyms, CamelCase, names with digits or inner capitals) must appear in
  the passages the sentence cites, or in the question, and an asymptotic bound
  ("Θ(√(KT))") the one the passage states, term by term; a comparison
  ("outperforms", "state-of-the-art", 超过) needs comparative wording there, and is
  refused where the passage puts the same thing on par ("matches full
  fine-tuning"); a number the passage ties to another benchmark ("99.94 % on
  CLEVR-Hans3") cannot be moved to a different one, nor two figures swapped; what
  the passage says is done "without" something the sentence may not claim it is
  done with; a claim's scope ("all", "the only", "fully", "a few", "slightly")
  needs a passage that speaks of that kind of scope; a condition the passage sets
  may not be lifted, nor one set that it lifts ("regardless of"); roles may not be
  swapped where the passage names them ("the next state" for "the current
  state", "into", "given", "followed by" and "caused by" run the passage's way);
* **filler**: a sentence that says nothing beyond the question is removed, unless
  it names the title of the paper it cites (the answer to "is there a paper on …");
* **meaning**: the sentence's content words, as the embedder reads them in
  context, are aligned greedily with the cited passages' tokens (BERTScore-style
  precision, from the same forward pass that gives a sentence vector), averaged
  with the share of its stemmed content words the passages contain (the
  question's words count when the passage has them, and are left out when it
  has not); the words saying who claims it ("The authors describe X as …") are
  not matched, a passage does not name its authors; the sentence is supported
  at `SUPPORT_THRESHOLD` or above;
* a sentence its citations do not support is given the one passage that does
  (re-cited), or removed; an uncited sentence is given the passage that supports
  it, or removed;
* an honest gap ("The passages do not say whether…", "段落没有说明…") is
  recognized by its form, checked for facts against every passage, and shown
  uncited behind `HEDGE_MARK`;
* a sentence in another script (Chinese) is checked by its anchors: the numbers,
  names and English terms it keeps (the prompt asks for them), exactly as above;
  one without any anchor cannot be checked (the English embedder does not read
  Chinese: benchmarks/llm_grounding.py measures it) and is removed with a note.

The thresholds are calibrated by benchmarks/llm_grounding.py on a labelled set of
capable-model answers and on recorded replies of small real models (docs/llm.md).

The package, by job: debris.py (template tokens, echoes), facts/ (hard facts), meaning.py (token
alignment), passage.py (a prompt passage, read once), policy.py (what is shown, and why).
"""

from __future__ import annotations

from retrieval.grounding.debris import CITE, PLACEHOLDER, echoes_prompt, normalized, strip_template
from retrieval.grounding.facts import Evidence, fact_problem, names, numbers, plain
from retrieval.grounding.meaning import Meaning, TokenEncoder, TokenVectors
from retrieval.grounding.passage import Passage
from retrieval.grounding.policy import (HEDGE_MARK, MIN_WORDS, SUPPORT_THRESHOLD, Checker, Decision, Grounding,
                                        is_hedge, join_sentences)

__all__ = ["CITE", "HEDGE_MARK", "MIN_WORDS", "PLACEHOLDER", "SUPPORT_THRESHOLD", "Checker", "Decision", "Evidence",
           "Grounding", "Meaning", "Passage", "TokenEncoder", "TokenVectors", "echoes_prompt", "fact_problem",
           "is_hedge", "join_sentences", "names", "normalized", "numbers", "plain", "strip_template"]
