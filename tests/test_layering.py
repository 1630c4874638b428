"""The package layering (docs/architecture.md, "Packages and layering"), read from the code's own imports (every
`import`, including the ones inside functions and `TYPE_CHECKING` blocks, which would otherwise hide an edge)."""

from __future__ import annotations

import ast
import subprocess
import sys
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "agent_k"
LAYERS = (
    ("cli", "api", "worker"),
    ("dashboard",),
    ("mission",),
    ("ml", "platforms"),
    ("competition", "store", "events", "media", "sandbox"),
    ("config", "secrets", "llm", "tracing", "_blocking", "_failpoints", "_declarations"),
)
"""Top to bottom: a package may import the floors below it, and its own floor where no cycle results."""


def _unit(module: str) -> str | None:
    """The top-level package (or module) of `agent_k` that `module` belongs to."""
    parts = module.split(".")
    return parts[1] if parts[0] == "agent_k" and len(parts) > 1 else None


def _module_name(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    return ".".join(parts)


@cache
def package_edges() -> dict[tuple[str, str], list[str]]:
    """(importing unit, imported unit) -> the files that make the edge."""
    edges: dict[tuple[str, str], list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        module = _module_name(path)
        source = _unit(module)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for target in {_unit(name) for name in names} - {None, source}:
                assert source is not None and target is not None
                edges.setdefault((source, target), []).append(str(path.relative_to(PACKAGE.parent)))
    return edges


def _cycles(edges: dict[tuple[str, str], list[str]]) -> list[list[str]]:
    """Strongly connected components with more than one unit (Tarjan's algorithm)."""
    graph: dict[str, set[str]] = {}
    for source, target in edges:
        graph.setdefault(source, set()).add(target)
        graph.setdefault(target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(unit: str) -> None:
        index[unit] = low[unit] = len(index)
        stack.append(unit)
        for nxt in graph[unit]:
            if nxt not in index:
                visit(nxt)
                low[unit] = min(low[unit], low[nxt])
            elif nxt in stack:
                low[unit] = min(low[unit], index[nxt])
        if low[unit] == index[unit]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == unit:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for unit in sorted(graph):
        if unit not in index:
            visit(unit)
    return found


def test_no_cycle_between_packages() -> None:
    cycles = _cycles(package_edges())
    detail = {
        " <-> ".join(cycle): sorted(
            {f for (a, b), files in package_edges().items() if {a, b} <= set(cycle) for f in files}
        )
        for cycle in cycles
    }
    assert cycles == [], detail


def test_imports_point_down_the_layers() -> None:
    floor = {unit: depth for depth, units in enumerate(LAYERS) for unit in units}
    known = set(floor) | {"__init__"}
    units = {
        path.stem if path.suffix == ".py" else path.name for path in PACKAGE.iterdir() if path.name != "__pycache__"
    }
    assert units - {"py.typed"} <= known, f"place these in LAYERS: {sorted(units - known)}"
    upward = {f"{a} -> {b}": files for (a, b), files in package_edges().items() if floor[b] < floor[a]}
    assert upward == {}


def test_platforms_and_ml_do_not_import_each_other() -> None:
    edges = package_edges()
    assert ("platforms", "ml") not in edges and ("ml", "platforms") not in edges


def test_the_sandbox_stands_alone_on_the_settings() -> None:
    """The trust boundary is audited on its own: it imports nothing of ours but `config`, and what a warm worker
    preloads comes from its caller."""
    imported = {target for source, target in package_edges() if source == "sandbox"}
    assert imported == {"config"}


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycles({("a", "b"): [], ("b", "c"): [], ("c", "a"): [], ("c", "d"): []}) == [["a", "b", "c"]]


def test_the_event_models_load_no_database_library() -> None:
    """A page, a client or the API's schemas read events without SQLAlchemy (before: the package's face loaded
    the emitter, and with it the store)."""
    probe = "import sys, agent_k.events.models; print(sorted(m for m in sys.modules if m.startswith('sqlalchemy')))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
