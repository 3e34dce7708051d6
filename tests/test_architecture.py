"""The layout's rules, read from the source: no import cycles, and a core that knows nothing of Discord.

Imports are collected with `ast`, so nothing is imported to check them. Every import that can run counts,
including those inside functions; only imports under `if TYPE_CHECKING:` are skipped, since they never run.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("paperbot", "ingest", "retrieval", "bot")
CORE = ("paperbot", "ingest", "retrieval")
# The layers, lowest first (docs/architecture.md): a module imports its own layer and the ones below only.
# A module belongs to the layer of the longest prefix listed; bot's own modules that are not front ends
# (bot.display, bot.terminal, bot.runtime) are the shared pieces the Discord layer and the front ends use.
LAYERS = (
    ("kernel", ("paperbot",)),
    ("ingest", ("ingest",)),
    ("retrieval", ("retrieval",)),
    ("bot pieces", ("bot",)),  # bot.display, bot.terminal, bot.runtime, bot.health (the heartbeat)
    ("discord", ("bot.app",)),
    ("harness", ("bot.harness",)),
    ("front ends", ("bot.cli", "bot.chat", "bot.doctor")),
)
# Below the Discord layer nothing imports discord.
NO_DISCORD = ("kernel", "ingest", "retrieval", "bot pieces")


class Import(NamedTuple):
    module: str  # the project module that imports
    target: str  # the module it names (a submodule when `from pkg import mod` names one)
    where: str  # path:line


def module_names(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under the packages."""
    names = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _running_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node except the bodies of `if TYPE_CHECKING:` blocks (their `else:` runs, so it is kept)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend([node.test, *node.orelse])
        else:
            stack.extend(ast.iter_child_nodes(node))


def imported_names(path: Path, module: str, is_package: bool,
                   skip_type_checking: bool = True) -> Iterator[tuple[str, list[str], int]]:
    """(absolute module, names taken from it, line) for each import in the file; relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    nodes = _running_nodes(tree) if skip_type_checking else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                anchor = package[: len(package) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield base, [a.name for a in node.names], node.lineno


def project_imports(root: Path, packages: tuple[str, ...]) -> list[Import]:
    """Every import of a project module by a project module."""
    modules = module_names(root, packages)
    found = []
    for module, path in modules.items():
        where = path.relative_to(root).as_posix()
        for base, names, line in imported_names(path, module, path.name == "__init__.py"):
            targets = [f"{base}.{n}" for n in names if f"{base}.{n}" in modules]
            if len(targets) < len(names) or not names:  # names that are not submodules come from `base` itself
                targets.append(base)
            for target in targets:
                known = _known_prefix(target, modules)
                if known:
                    found.append(Import(module, known, f"{where}:{line}"))
    return found


def _known_prefix(name: str, modules: dict[str, Path]) -> str | None:
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in modules:
            return ".".join(parts[:n])
    return None


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module, or one module that imports itself (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                cycles.append(sorted(component))

    for v in sorted(set(graph) | {w for ws in graph.values() for w in ws}):
        if v not in index:
            visit(v)
    return sorted(cycles)


def describe_cycles(imports: list[Import]) -> tuple[list[list[str]], str]:
    graph: dict[str, set[str]] = {}
    for imp in imports:
        graph.setdefault(imp.module, set()).add(imp.target)
    cycles = find_cycles(graph)
    lines = []
    for cycle in cycles:
        lines.append("cycle: " + " <-> ".join(cycle))
        members = set(cycle)
        for imp in sorted(imports):
            if imp.module in members and imp.target in members:
                lines.append(f"    {imp.module} imports {imp.target}  ({imp.where})")
    return cycles, "\n".join(lines)


# -- the rules --------------------------------------------------------------------------------------------


def test_no_import_cycles_among_project_modules():
    cycles, report = describe_cycles(project_imports(REPO, PACKAGES))
    assert not cycles, "import cycles among the project's modules:\n" + report


def layer_of(module: str) -> int:
    """The index in LAYERS of the module's layer (the longest matching prefix wins)."""
    best, depth = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > depth:
                best, depth = i, len(prefix)
    return best


def test_every_module_has_a_layer_and_imports_only_its_own_or_lower_ones():
    imports = project_imports(REPO, PACKAGES)
    unplaced = sorted(m for m in module_names(REPO, PACKAGES) if layer_of(m) < 0)
    assert not unplaced, f"modules in no layer (add them to LAYERS and docs/architecture.md): {unplaced}"
    upward = [f"{imp.where}: {imp.module} ({LAYERS[layer_of(imp.module)][0]}) imports {imp.target} "
              f"({LAYERS[layer_of(imp.target)][0]})"
              for imp in imports if layer_of(imp.target) > layer_of(imp.module)]
    assert not upward, "imports of a higher layer:\n" + "\n".join(sorted(upward))


def test_nothing_below_the_discord_layer_imports_discord():
    offenders = []
    for module, path in module_names(REPO, PACKAGES).items():
        if LAYERS[layer_of(module)][0] not in NO_DISCORD:
            continue
        for base, _, line in imported_names(path, module, path.name == "__init__.py", skip_type_checking=False):
            if base == "discord" or base.startswith("discord."):
                offenders.append(f"{path.relative_to(REPO).as_posix()}:{line} imports {base}")
    assert not offenders, "only bot/app/ and what sits above it may import discord:\n" + "\n".join(offenders)


def test_no_private_name_is_imported_from_another_package():
    """`from retrieval.llm import _public_url` in bot/ reaches into another package's insides."""
    modules = module_names(REPO, PACKAGES)
    offenders = []
    for module, path in modules.items():
        for base, names, line in imported_names(path, module, path.name == "__init__.py", skip_type_checking=False):
            if not any(base == p or base.startswith(p + ".") for p in PACKAGES):
                continue
            if base.split(".")[0] == module.split(".")[0]:
                continue
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private or any(part.startswith("_") and not part.startswith("__") for part in base.split(".")):
                offenders.append(f"{path.relative_to(REPO).as_posix()}:{line} imports {private or base} from {base}")
    assert not offenders, "private names imported across packages:\n" + "\n".join(offenders)


# -- the checker itself -----------------------------------------------------------------------------------


def test_layers_are_read_by_their_longest_prefix():
    assert LAYERS[layer_of("bot.app.client")][0] == "discord"
    assert LAYERS[layer_of("bot.display")][0] == "bot pieces"
    assert LAYERS[layer_of("bot.cli")][0] == "front ends"
    assert LAYERS[layer_of("retrieval.qa")][0] == "retrieval"
    assert layer_of("elsewhere") == -1


def test_find_cycles_on_small_graphs():
    assert find_cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b"]]
    assert find_cycles({"a": {"b"}}) == []
    assert find_cycles({"a": {"a"}}) == [["a"]]
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def test_collector_counts_function_imports_and_skips_type_checking(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": """
            from typing import TYPE_CHECKING
            if TYPE_CHECKING:
                from pkg.b import B
            """,
        "pkg/b.py": """
            def f():
                from pkg import a
            """,
    })
    imports = project_imports(tmp_path, ("pkg",))
    assert {(i.module, i.target) for i in imports} == {("pkg.b", "pkg.a")}
    assert describe_cycles(imports)[0] == []

    _write(tmp_path, {"pkg/a.py": "from . import b\n"})
    cycles, report = describe_cycles(project_imports(tmp_path, ("pkg",)))
    assert cycles == [["pkg.a", "pkg.b"]]
    assert "pkg/a.py:1" in report and "pkg/b.py:3" in report


def test_every_type_ignore_names_its_code_and_reason():
    """`# type: ignore[code]  # why`: the type checker (mypy, in CI) is silenced only where the line says why."""
    bare = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if "type: ignore" in line and not re.search(r"# type: ignore\[[a-z-]+(?:, ?[a-z-]+)*\]\s+#\s*\S", line):
                    bare.append(f"{path.relative_to(REPO)}:{n}")
    assert not bare, f"a type: ignore without its code and a reason: {bare}"


def test_no_module_imports_another_modules_private_names():
    """A name with a leading underscore is its module's own: another module that needs it gets a public one."""
    private = []
    for module, path in module_names(REPO, PACKAGES).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in PACKAGES:
                private += [f"{module}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    assert not private, private


def test_a_file_name_finds_one_module():
    """Module names say their role: no two modules of the packages share a file name (the docs name them so)."""
    seen: dict[str, list[str]] = {}
    for module, path in module_names(REPO, PACKAGES).items():
        if path.name != "__init__.py":
            seen.setdefault(path.name, []).append(module)
    assert not {name: mods for name, mods in seen.items() if len(mods) > 1}


# Imports under `if TYPE_CHECKING:` that name a higher layer, and why: the seams name the types they pass.
TYPE_ONLY_UPWARD = {
    ("paperbot.protocols", "retrieval.filters"): "PaperLibrary.search takes Filters",
    ("paperbot.protocols", "retrieval.llm"): "the LLM seam returns a Completion",
    ("paperbot.protocols", "retrieval.types"): "PaperLibrary returns SearchResult",
}


def test_annotations_respect_the_layers_too_but_for_the_stated_seams():
    """Imports for annotations only (TYPE_CHECKING) keep the layers as well, except those TYPE_ONLY_UPWARD names."""
    modules = module_names(REPO, PACKAGES)
    upward = set()
    for module, path in modules.items():
        for base, names, _ in imported_names(path, module, path.name == "__init__.py", skip_type_checking=False):
            for target in [f"{base}.{n}" for n in names if f"{base}.{n}" in modules] or [base]:
                known = _known_prefix(target, modules)
                if known and layer_of(known) > layer_of(module):
                    upward.add((module, known))
    assert upward == set(TYPE_ONLY_UPWARD), sorted(upward ^ set(TYPE_ONLY_UPWARD))
