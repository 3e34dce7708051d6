"""Hard facts, checked exactly: every number with its unit, every name, comparisons, words of scope, negations,
conditions, counts said in words, Chinese numerals or compounds ("two-player"; the labels of a list, "(1) (2)", count
nothing), places in a series, the power of a logarithm, "all" of what the passage speaks of in part, numbers tied
to a benchmark and the roles things play (which of two opposite roles, which way a relation runs) must be what the
cited passage says.

The package, by job: words.py (text made plain, names, stems, negation nearby), amounts.py (how much and how many),
claims.py (how strongly and under what: comparison, scope, negation, conditions), relations.py (which way round:
opposites, order, direction), check.py (`Evidence`, what passages vouch for, and `fact_problem`, read against it).
"""

from __future__ import annotations

from retrieval.grounding.facts.amounts import numbers
from retrieval.grounding.facts.check import NOT_A_CLAIM, Evidence, fact_problem
from retrieval.grounding.facts.words import STOP_STEMS, STOPWORDS, names, plain

__all__ = ["NOT_A_CLAIM", "STOPWORDS", "STOP_STEMS", "Evidence", "fact_problem", "names", "numbers", "plain"]
