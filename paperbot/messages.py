"""User-facing strings every front end shows, in one place so they can be reviewed and tested.

Text only the Discord bot shows lives in bot/app/messages.py.
"""

ABSTAIN = "The corpus does not answer this question: no paper is close enough."
ABSTAIN_CLOSEST = "Closest papers, for what they are worth:"
EMPTY_QUESTION = "Please ask a question, for example: how do people fine-tune by masking weights?"
EMPTY_STORE = "The store holds no papers yet: run `paperbot ingest` first."
INTERNAL_ERROR = "Something went wrong on our side; the details are in the log. Please try again."
ABSTRACT_PENDING = "abstract not yet available"
NO_PAPER_MATCHES = "No paper matches {filters}."
NEAREST_VALUES = "Nearest {field} values: {values}."
NO_VALUES = "No paper in the corpus has a {field} like that."
FILTERS_DISJOINT = "Each filter matches some papers, but no paper matches them all."
