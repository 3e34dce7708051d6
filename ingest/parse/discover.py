"""Which corpus files the paths given name: folders expanded, unreadable entries named, names kept unique, a file
given twice read once."""

from __future__ import annotations

import errno
import stat
from pathlib import Path

from paperbot.errors import InputError

SUPPORTED_SUFFIXES = (".txt", ".md", ".jsonl", ".json", ".csv")


def discover(paths: list[Path]) -> list[Path]:
    """Expand folders into their supported files (sorted); reject unknown files."""
    return discover_all(paths)[0]


def discover_all(paths: list[Path]) -> tuple[list[Path], list[str]]:
    """The corpus files in `paths`, and what a folder held that cannot be read (broken links, loops, FIFOs).

    A path given by name that is not a readable file is an error; inside a folder it is skipped and named.
    """
    files: list[Path] = []
    unreadable: list[str] = []
    for path in paths:
        if path.is_dir():
            found = []
            for p in sorted(path.iterdir()):
                if p.suffix.lower() not in SUPPORTED_SUFFIXES:
                    continue
                problem = not_a_file(p)
                if problem is None:
                    found.append(p)
                elif problem != "a folder":
                    unreadable.append(f"{p}: {problem}")
            if not found and not unreadable:
                raise InputError(str(path), f"no corpus files ({', '.join(SUPPORTED_SUFFIXES)}) in this folder")
            files.extend(found)
        elif path.is_file():
            if path.suffix.lower() not in SUPPORTED_SUFFIXES:
                raise InputError(str(path), f"unsupported file type {path.suffix or '(none)'!r}; "
                                 f"use one of {', '.join(SUPPORTED_SUFFIXES)}")
            files.append(path)
        else:
            problem = not_a_file(path)
            raise InputError(str(path), "no such file or folder" if problem in (None, "missing") else problem)
    names: dict[str, Path] = {}
    unique: list[Path] = []
    for f in files:
        if f.name in names:
            if names[f.name].resolve() == f.resolve():  # the same file given twice ("a.json /abs/a.json"): read once
                continue
            raise InputError(str(f), f"two corpus files share the name {f.name!r} ({names[f.name]}); "
                             "sources are identified by file name, rename one")
        names[f.name] = f
        unique.append(f)
    return unique, unreadable


def not_a_file(path: Path) -> str | None:
    """Why `path` is not a regular file that can be read, or None when it is one."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symbolic link loop"
        if path.is_symlink():
            try:
                path.resolve(strict=True)
            except RuntimeError:  # Python before 3.13 reports a loop this way
                return "a symbolic link loop"
            except OSError as inner:
                if inner.errno == errno.ELOOP:
                    return "a symbolic link loop"
            return "a symbolic link to a missing file"
        return "missing" if isinstance(exc, FileNotFoundError) else f"cannot be read ({exc.strerror or exc})"
    if stat.S_ISDIR(mode):
        return "a folder"
    if not stat.S_ISREG(mode):
        kind = "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
        return f"not a regular file ({kind})"
    return None
