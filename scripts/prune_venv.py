"""Print the installed distributions that paperbot does not need once some of its dependencies are left out.

The Docker image's run stage serves the model's ONNX export with ONNX Runtime and
needs neither torch nor sentence-transformers; they and whatever only they pull in
(transformers, scipy, scikit-learn, sympy, networkx...) are removed after the
export is made in the build stage:

    pip uninstall -y $(python scripts/prune_venv.py torch sentence-transformers onnx)

A distribution stays if anything still needed requires it; pip itself always stays.
"""

from __future__ import annotations

import importlib.metadata as md
import re
import sys

KEEP = {"pip"}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirements(dist: md.Distribution) -> list[str]:
    """The names `dist` requires unconditionally (extras and other platforms' markers ignored)."""
    from packaging.requirements import Requirement

    out = []
    for line in dist.requires or []:
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        out.append(canonical(req.name))
    return out


def unneeded(root: str, dropped: set[str]) -> list[str]:
    """Installed distributions outside the dependency closure of `root` once `dropped` are cut off."""
    installed = {canonical(d.metadata["Name"]): d for d in md.distributions()}
    needed, stack = set(), [canonical(root)]
    while stack:
        name = stack.pop()
        if name in needed or name in dropped or name not in installed:
            continue
        needed.add(name)
        stack.extend(requirements(installed[name]))
    return sorted(n for n in installed if n not in needed and n not in KEEP)


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: prune_venv.py DISTRIBUTION... (the dependencies to leave out of paperbot's)", file=sys.stderr)
        return 2
    print("\n".join(unneeded("paperbot", {canonical(a) for a in argv})))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
