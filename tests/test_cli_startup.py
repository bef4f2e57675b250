"""What the terminal's commands import, and when: the start-up figures of bench/bench_cli_startup.py
depend on heavy modules staying out of the paths `history` and `ask` take (docs/dev/CONTRACTS.md,
"Start-up"). Python lists every import it makes on stderr with PYTHONPROFILEIMPORTTIME=1."""

import json

from tests.test_cli import council

# Loaded only by the processes and questions that use them.
NEVER_IN_THE_TERMINAL = {"aiohttp", "prometheus_client", "cryptography", "core.eval.session"}
ONLY_WITH_FILES_OR_SEARCH = {"core.reading.attachments", "core.reading.search", "pypdf", "lxml"}
AFTER_THE_FIRST_LINE = {"httpx", "core.engine.council"}  # the HTTP stack and the engine
# Each command imports its own module alone (bot/commands.py's table): not the chat platforms, their
# renderers, the browser app, the API or the eval harness of the others.
OTHER_COMMANDS = ("bot.web", "bot.slack", "bot.discord", "bot.api", "inspect_ai", "bot.cli_commands.servers")
# A listing opens no service (core/service/stored.py): neither the service nor what runs a council.
NOT_FOR_A_LISTING = (
    *OTHER_COMMANDS,
    "core.service.council",
    "core.admission",
    "core.engine",
    "core.providers",
    "core.durable",
    "core.reading",
)


def imports_and_lines(stderr: str) -> tuple[list[str], list[str]]:
    """The modules imported in order, and the other lines, each list tagged by position."""
    modules, events = [], []
    for line in stderr.splitlines():
        if line.startswith("import time:"):
            name = line.rsplit("|", 1)[1].strip()
            if name != "package":  # the header line
                modules.append(name)
                events.append(f"import {name}")
        elif line.strip():
            events.append(line)
    return modules, events


def under(modules: list[str], packages: tuple[str, ...]) -> list[str]:
    """The modules that are one of `packages` or inside one."""
    return sorted({m for m in modules if any(m == p or m.startswith(p + ".") for p in packages)})


async def test_history_imports_neither_the_engine_nor_the_network_stack(tmp_path, llm):
    await council(tmp_path, llm, "ask", "--json", "What is six times seven?")
    code, out, err = await council(tmp_path, llm, "history", extra_env={"PYTHONPROFILEIMPORTTIME": "1"})
    modules, _ = imports_and_lines(err)
    assert code == 0 and "What is six times seven?" in out
    assert "core.storage" in modules  # the listing is read
    loaded = set(modules) & (NEVER_IN_THE_TERMINAL | ONLY_WITH_FILES_OR_SEARCH | AFTER_THE_FIRST_LINE)
    assert not loaded, f"`council history` imported {sorted(loaded)}"
    assert under(modules, NOT_FOR_A_LISTING) == []


async def test_ask_shows_its_first_line_before_loading_the_engine_and_the_http_stack(tmp_path, llm):
    code, _, err = await council(tmp_path, llm, "ask", "A question?", extra_env={"PYTHONPROFILEIMPORTTIME": "1"})
    modules, events = imports_and_lines(err)
    assert code == 0
    first_line = next(i for i, event in enumerate(events) if event.startswith("Council "))
    before = {event.removeprefix("import ") for event in events[:first_line] if event.startswith("import ")}
    assert AFTER_THE_FIRST_LINE <= set(modules)  # they do load, later
    assert not before & AFTER_THE_FIRST_LINE, f"imported before the first line: {sorted(before & AFTER_THE_FIRST_LINE)}"
    loaded = set(modules) & (NEVER_IN_THE_TERMINAL | ONLY_WITH_FILES_OR_SEARCH)
    assert not loaded, f"`council ask` imported {sorted(loaded)}"
    # core.service.council is imported by name (the door's __getattr__), which importtime lists by
    # what it imports: the service's own collaborators.
    assert "core.admission.admit" in modules and under(modules, OTHER_COMMANDS) == []


async def test_ask_json_prints_its_whole_result_through_the_quick_exit(tmp_path, llm):
    """`entry` leaves with os._exit: the JSON must still be out in full, and the council stored."""
    code, out, _ = await council(tmp_path, llm, "ask", "--json", "What is six times seven?")
    result = json.loads(out)
    assert code == 0 and result["status"] == "ok" and result["stage3"]["response"]
    code, out, _ = await council(tmp_path, llm, "history")
    assert code == 0 and result["id"][:8] in out
