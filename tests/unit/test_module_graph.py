"""The production packages' imports form no circle, module by module or package by package.

The graph is read from the source (ast), not from what an import happens to
load: every ``import`` and ``from ... import`` counts, at the top of a module,
inside a function and under ``TYPE_CHECKING`` alike, so that an import moved
into a function to get round a circle shows as the circle it is.  An edge
goes to the module a statement names (``from jobs import keys`` names
``jobs.keys``; ``from jobs.keys import Keyspace`` names ``jobs.keys`` too); a
package's ``__init__``, which Python runs before any module of the package, is
an edge only when a statement names the package itself, or every module of a
package that re-exports its modules would sit in a circle with it.

The bench and the tests are not production: they may import anything.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = ("jobs", "documents", "observability", "workers", "gateway", "coordinator", "cli")
# The packages from the bottom floor up: each imports only packages on floors below its own.
FLOORS = (("jobs",), ("documents", "observability"), ("workers",), ("gateway",), ("coordinator", "cli"))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {_module_name(path): path for package in PRODUCTION for path in sorted((ROOT / package).rglob("*.py"))}


def imported(name: str, path: Path) -> set[str]:
    """The production modules ``name`` (at ``path``) names in any import statement, wherever it stands."""
    known = modules()
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in known}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    found.add(f"{base}.{alias.name}")
                elif base in known:
                    found.add(base)
    return found - {name}


@cache
def graph() -> dict[str, frozenset[str]]:
    return {name: frozenset(imported(name, path)) for name, path in modules().items()}


def circles(edges: dict[str, frozenset[str]]) -> Iterator[list[str]]:
    """One circle through each strongly connected set of more than one node (Tarjan), as a path back to its start."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(edges):
        if node not in index:
            visit(node)
    for component in components:
        yield _path_around(min(component), component, edges)


def _path_around(start: str, component: set[str], edges: dict[str, frozenset[str]]) -> list[str]:
    """A shortest path from ``start`` back to itself inside ``component`` (breadth first)."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(edges.get(node, ())):
                if target not in component:
                    continue
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if target not in came_from:
                    came_from[target] = node
                    following.append(target)
        frontier = following
    raise AssertionError(f"no way back to {start} in {sorted(component)}")


def package_graph() -> dict[str, frozenset[str]]:
    edges: dict[str, set[str]] = {package: set() for package in PRODUCTION}
    for name, targets in graph().items():
        edges[name.split(".")[0]] |= {t.split(".")[0] for t in targets} - {name.split(".")[0]}
    return {package: frozenset(targets) for package, targets in edges.items()}


def test_no_production_module_imports_itself_round_a_circle():
    found = [" -> ".join(circle) for circle in circles(graph())]
    assert found == [], "import circles:\n" + "\n".join(found)


def test_no_production_package_imports_itself_round_a_circle():
    found = [" -> ".join(circle) for circle in circles(package_graph())]
    assert found == [], "import circles between packages:\n" + "\n".join(found)


def test_no_import_runs_back_up_a_floor():
    floor_of = {package: level for level, packages in enumerate(FLOORS) for package in packages}
    upward = [
        f"{name} imports {target}"
        for name, targets in sorted(graph().items())
        for target in sorted(targets)
        if floor_of[target.split(".")[0]] > floor_of[name.split(".")[0]]
    ]
    assert upward == []


def test_the_contract_imports_nothing_of_the_store():
    # The names Python and Lua share sit under everything else in jobs/: the keys, the settings, the store.
    assert {t for t in graph()["jobs.contract"] if t.startswith("jobs.")} == set()
    assert {t for t in graph()["jobs.keys"] if t.startswith("jobs.")} <= {"jobs.contract", "jobs.pdf_outputs"}


# -- the graph's reading, on made-up graphs and on the source ------------------------------------------------


def test_a_circle_is_named_node_by_node_back_to_its_start():
    edges = {
        "a": frozenset({"b"}),
        "b": frozenset({"c"}),
        "c": frozenset({"a", "d"}),
        "d": frozenset(),
        "e": frozenset({"e"}),
    }
    assert list(circles(edges)) == [["a", "b", "c", "a"]]
    assert list(circles({"x": frozenset({"y"}), "y": frozenset()})) == []


def test_imports_inside_functions_and_for_type_checking_are_edges_too():
    assert "jobs.keys" in graph()["jobs.store"]
    # gateway/__init__.py imports its app's modules inside create_app, and the publisher's type for the checker only.
    assert {"gateway.api", "gateway.submission", "gateway.publishing"} <= graph()["gateway"]
