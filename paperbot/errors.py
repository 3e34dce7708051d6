"""Every error paperbot raises on purpose, in one hierarchy.

    PaperbotError              expected failure; its message is safe to show a user
    ├── ConfigError            a setting is missing or invalid (names the variable)
    ├── InputError             a corpus file or record is malformed (names file and line)
    ├── StoreError             the vector store cannot be used
    │   ├── ModelMismatchError the store was built with another embedding model
    │   ├── StoreLockedError   another process holds the embedded store
    │   ├── CollectionMissingError  the store has no such collection (opened without creating it)
    │   └── StoreUnavailableError  the Chroma server cannot be reached (retry helps)
    │       └── StoreRestartingError  the store's child process died and is being started again
    ├── ModelError             the embedding model cannot be loaded
    ├── EmptyCorpusError       nothing to search and nothing to ingest
    ├── UserDataError          the users' file (saved papers, watches) cannot be used, or a user's limit is hit
    └── LLMError               the LLM endpoint failed (callers fall back)

Anything else escaping to a front end is a bug: the front end logs the traceback
and shows a generic message.
"""

from __future__ import annotations


class PaperbotError(Exception):
    """An expected failure whose message is written for the user."""

    retryable: bool = False


class ConfigError(PaperbotError):
    def __init__(self, variable: str, problem: str) -> None:
        self.variable = variable
        super().__init__(f"{variable}: {problem}")


class InputError(PaperbotError):
    def __init__(self, source: str, problem: str, line: int | None = None) -> None:
        self.source = source
        self.line = line
        self.problem = problem
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {problem}")


class IngestRunningError(PaperbotError):
    """Another ingest (a /reindex, an upload) holds this process's library; try again when it has finished."""


class StoreError(PaperbotError):
    pass


class ModelMismatchError(StoreError):
    pass


class StoreLockedError(StoreError):
    pass


class StoreUnavailableError(StoreError):
    retryable = True


class CollectionMissingError(StoreError):
    """The store holds no collection of that name (opened without creating it: `doctor`)."""


class StoreRestartingError(StoreUnavailableError):
    """The child process serving the store died and is being started again (ingest/store.py)."""


class ModelError(PaperbotError):
    pass


class EmptyCorpusError(PaperbotError):
    pass


class UserDataError(PaperbotError):
    pass


class LLMError(PaperbotError):
    """The message (for the log) names the endpoint; `detail` is what an operator may see in a footer or JSON:
    no URL, no text from the server (which may echo a key). `paused`: refused by the circuit breaker."""

    retryable = True

    def __init__(self, message: str, *, detail: str = "", paused: bool = False) -> None:
        super().__init__(message)
        self.detail = detail
        self.paused = paused
