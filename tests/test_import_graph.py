"""The design's import rules, read from the source (every import, also inside functions and
TYPE_CHECKING blocks): `bot/` reaches `core/` only through its door, `core/` never imports `bot/` or a
chat platform's library, no module imports itself back through others, and inside `core/` imports
only go down its floors (FLOORS), never between two packages both ways."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOOR = (
    "core.service",  # the package's __init__ alone (test_bot_uses_the_service_door_not_its_rooms)
    "core.models",
    "core.settings",
    "core.errors",
    "core.paths",
    "core.modes",
)
PLATFORM_LIBRARIES = ("bot", "slack_bolt", "slack_sdk", "discord")

# The floors of core, bottom first: a module imports from its own floor or the floors below, never
# from one above. On one floor, a package may use another in one direction only (no two packages
# import each other: test_no_two_core_packages_import_each_other). What two floors both need
# moves down to the lower one. Every module of core stands on exactly one floor.
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "shared types and small utilities",
        (
            "core",  # the package itself (its __init__, a docstring)
            "core._ranking",
            "core.database_url",
            "core.errors",
            "core.models",
            "core.modes",  # the modes' names and descriptions (imports nothing: the CLI's help)
            "core.paths",
            "core.ranking",
            "core.settings",
            "core.shared",  # redaction, prompt fences, internal markers
        ),
    ),
    ("providers, storage and telemetry", ("core.providers", "core.storage", "core.telemetry")),
    (
        "the council's parts",
        (
            "core.admission",
            "core.channels",
            "core.durable",
            "core.engine",
            "core.ownership",
            "core.reading",
            "core.records",
            "core.tenants",
        ),
    ),
    (
        "the service",
        (
            "core.browse",
            "core.direct",
            "core.doctor",
            "core.eval",
            "core.front_end_tasks",
            "core.service",
        ),
    ),
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every module `path` imports; `from pkg import mod` counts as pkg.mod alone when mod is a module."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = {f"{node.module}.{a.name}" for a in node.names} & _MODULES
            found |= modules or {node.module}
    return found


def _is_module(dotted: str) -> bool:
    base = ROOT.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


_MODULES = {_module_name(p) for package in ("core", "bot") for p in (ROOT / package).rglob("*.py")}


def _sources(package: str) -> dict[str, Path]:
    return {_module_name(p): p for p in sorted((ROOT / package).rglob("*.py"))}


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_bot_reaches_core_only_through_its_door():
    outside = {
        f"{name} imports {imported}"
        for name, path in _sources("bot").items()
        for imported in _imports(path)
        if _within(imported, ("core",)) and not _within(imported, DOOR)
    }
    assert _sources("bot"), "no bot modules found"
    assert sorted(outside) == []


def test_bot_uses_the_service_door_not_its_rooms():
    """The service's door (core/service/__init__.py) is what adapters may name; what is behind it
    (core.service.council, .process, .stored) may move without touching bot/."""
    behind = {
        f"{name} imports {imported}"
        for name, path in _sources("bot").items()
        for imported in _imports(path)
        if _within(imported, ("core.service",)) and imported != "core.service"
    }
    assert sorted(behind) == []


def test_core_knows_no_adapter_nor_platform_library():
    leaks = {
        f"{name} imports {imported}"
        for name, path in _sources("core").items()
        for imported in _imports(path)
        if _within(imported, PLATFORM_LIBRARIES)
    }
    assert _sources("core"), "no core modules found"
    assert sorted(leaks) == []


def test_no_import_cycles_between_modules():
    graph: dict[str, set[str]] = {}
    for package in ("core", "bot"):
        for name, path in _sources(package).items():
            graph[name] = {m for m in _imports(path) if m != name and _within(m, ("core", "bot")) and _is_module(m)}
    cycles = _cycles(graph)
    assert cycles == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_core_root_keeps_at_most_fifteen_modules():
    root_modules = [p.name for p in (ROOT / "core").glob("*.py") if p.name != "__init__.py"]
    assert 0 < len(root_modules) <= 15, root_modules


def _floor_unit(module: str) -> tuple[int, str] | None:
    """The floor `module` stands on and the package (or root module) that places it there."""
    placed = [
        (floor, unit)
        for floor, (_, units) in enumerate(FLOORS)
        for unit in units
        if module == unit or (unit != "core" and module.startswith(unit + "."))  # "core": its __init__ alone
    ]
    return placed[0] if placed else None


def _core_imports() -> list[tuple[str, str]]:
    return [
        (name, imported)
        for name, path in _sources("core").items()
        for imported in _imports(path)
        if _within(imported, ("core",))
    ]


def test_every_core_module_stands_on_a_floor():
    assert sorted(name for name in _sources("core") if _floor_unit(name) is None) == []


def test_core_imports_only_go_down_its_floors():
    upward = []
    for name, imported in _core_imports():
        here, there = _floor_unit(name), _floor_unit(imported)
        if here and there and there[0] > here[0]:
            upward.append(f"{name} ({FLOORS[here[0]][0]}) imports {imported} ({FLOORS[there[0]][0]})")
    assert sorted(upward) == []


def test_no_two_core_packages_import_each_other():
    uses: dict[str, set[str]] = {}
    for name, imported in _core_imports():
        here, there = _floor_unit(name), _floor_unit(imported)
        if here and there and here[1] != there[1] and "core" not in (here[1], there[1]):
            uses.setdefault(here[1], set()).add(there[1])
    assert _cycles(uses) == []


def _service_attributes_used(path: Path) -> set[str]:
    """The names adapters reach on a service: `service.X` and `self.service.X` (any `*.service.X`)."""
    used: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute):
            holder = node.value
            named = holder.id if isinstance(holder, ast.Name) else getattr(holder, "attr", None)
            if named == "service":
                used.add(node.attr)
    return used


def test_adapters_use_only_what_the_service_lists():
    """CouncilService's docstring lists the attributes adapters may use; its own methods are the rest."""
    tree = ast.parse((ROOT / "core" / "service" / "council.py").read_text())
    service = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "CouncilService")
    listed = set(re.findall(r"^\s+service\.(\w+)\s", ast.get_docstring(service) or "", re.MULTILINE))
    methods = {
        n.name
        for n in service.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and not n.name.startswith("_")
    }
    assert {"admission", "runs", "channels", "queries"} <= listed
    unlisted = {
        f"{name} uses service.{attribute}"
        for name, path in _sources("bot").items()
        for attribute in _service_attributes_used(path) - listed - methods
    }
    assert sorted(unlisted) == []


def test_the_service_door_names_what_is_behind_it():
    """The door's lazy names are the service module's `__all__`, and each of its names resolves."""
    import core.service
    import core.service.council

    light = {"Redactor", "collect_metrics", "configure_logging", "configure_telemetry", "open_queries"}
    assert set(core.service.__all__) - light == set(core.service.council.__all__)
    assert all(getattr(core.service, name) is not None for name in core.service.__all__)
