"""Where a record is, for the messages that name it: its file, and its line or its record number."""

from __future__ import annotations

from dataclasses import dataclass

from paperbot.errors import InputError


@dataclass(frozen=True)
class Place:
    """A record's place in its file: the line that holds it, else its number (JSON arrays have no lines)."""

    where: str  # the file, as given
    line: int | None
    n: int | None

    def ref(self) -> str:
        """The record for a message naming two of them: the file (the line goes with the error), or "file record n"."""
        return self.where if self.line is not None or self.n is None else f"{self.where} record {self.n}"

    def fail(self, problem: str) -> InputError:
        """The error for a record that cannot be read, naming its line or, without one, its number."""
        prefix = f"record {self.n}: " if self.n is not None and self.line is None else ""
        return InputError(self.where, prefix + problem, line=self.line)
