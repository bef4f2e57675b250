"""Writes the settings reference (docs/settings.md) and `.env.example` from the Settings model.

Both files are generated from core.settings (every field's alias, type, default and `description=`),
so the reference, the example and the code cannot drift apart:

    python scripts/settings_reference.py           # rewrite both files
    python scripts/settings_reference.py --check   # exit 1, naming each file that is out of date

`make check` (and so CI) runs the check; tests/test_settings_reference.py does too.

Why a script of ours rather than settings-doc (PyPI): settings-doc 4.3 names nested fields by
`env_nested_delimiter` (SLACK__BOT_TOKEN), where our groups keep flat names through aliases, and it
has no place for which process reads a setting. The walk below is generic: any field whose type is
a pydantic model is a group and is walked in turn, so regrouping the model needs no change here,
only a line in GROUPS for a new group (a test fails until it has one).
"""

from __future__ import annotations

import argparse
import enum
import sys
import textwrap
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "settings.md"
EXAMPLE = ROOT / ".env.example"

# The processes, by the `council` command that starts them.
COUNCILS = "ask, eval, api, mcp, slack, discord, serve, worker"
CHAT = "slack, discord, serve, worker"
EVERY = "every command"


@dataclass(frozen=True)
class Group:
    title: str
    intro: str
    read_by: str


# One entry per group of the Settings model: its heading, a line on what it is for, and which
# processes (`council` commands) read its settings. READ_BY below refines single settings.
GROUPS: dict[str, Group] = {
    "providers": Group(
        "Providers",
        "Where model calls go. A bare model id goes to LLM_BASE_URL when it is set, else to OpenRouter; "
        "`openrouter:ID` and `local:NAME` name their provider.",
        COUNCILS + "; doctor checks the keys",
    ),
    "local": Group(
        "Local (offline) models",
        "The bundled tiny models (local:smollm2, local:gemma3-270m, local:smollm2-creative) or "
        "local:/path/to/any.gguf, run by llama.cpp (the `local` extra) in one runtime process per model "
        "file. Used when no key is set.",
        COUNCILS + " (when a member is local:)",
    ),
    "council": Group(
        "The council",
        "Who sits, how long they get, how reviews are given and weighed. A seat with fallbacks is "
        "`primary|fallback|...`: the next model answers when one fails.",
        COUNCILS,
    ),
    "limits": Group(
        "Limits",
        "What one question, one user and one channel may take; admins override the limits and the budget "
        "per channel (`/council-admin limits`). The operator at the terminal (`council ask`) has no hourly "
        "limit.",
        "api, mcp, " + CHAT,
    ),
    "storage": Group(
        "Storage",
        "Where councils are kept. Unset: council.db in the user data directory (~/.local/share/llm-council/ "
        "on Linux), whatever folder you run from; sqlite:///relative/path or sqlite:////absolute/path; or "
        "PostgreSQL, postgresql://user:password@host:5432/db (the `postgres` extra).",
        EVERY,
    ),
    "durable": Group(
        "Durable councils and workers",
        "Leases of the processes that run councils, and the PostgreSQL job queue's heartbeats.",
        COUNCILS,
    ),
    "slack": Group("Slack", "The Slack app: one workspace's bot token, or OAuth distribution.", "slack, serve, worker"),
    "tenants": Group(
        "Many workspaces (tenants)",
        "One deployment serving many Slack workspaces and Discord servers, each with its own key and budget. "
        "Make a COUNCIL_SECRET_KEY with:\n"
        '$ python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"',
        CHAT + ", api; usage, budget, purge, rotate-secret, doctor",
    ),
    "discord": Group("Discord", "The Discord bot and its gateway shards.", "discord, serve, worker"),
    "attachments": Group(
        "Attachments",
        "Files shared with a question: PDF (text layer), DOCX, text, Markdown, CSV, JSON, source code, and "
        "PNG/JPEG/WebP/GIF images. Unreadable files are named with the reason; the rest are read.",
        COUNCILS,
    ),
    "search": Group("Web search", "Searching the web once before a council (off unless asked for).", COUNCILS),
    "telemetry": Group("Logs, metrics, traces", "What the processes tell their operator.", EVERY),
    "serving": Group(
        "Serving: start and stop",
        "What every serving command checks at start and does on SIGTERM (docs/operating-faults.md).",
        "slack, discord, serve, worker, api, web",
    ),
    "api": Group(
        "OpenAI-compatible API and MCP",
        "`council api` (and `council serve` when COUNCIL_API_KEYS is set).",
        "api, serve",
    ),
    "web": Group(
        "The browser app",
        "`council web`, or beside `council api` with COUNCIL_WEB=on (docs/web.md).",
        "web, api",
    ),
}

# Settings read by other processes than the rest of their group.
READ_BY: dict[str, str] = {
    "COUNCIL_HTTP_HOST": CHAT,
    "COUNCIL_MAX_QUESTION_CHARS": COUNCILS,
    "COUNCIL_MAX_CONCURRENT": COUNCILS,
    "COUNCIL_MAX_QUEUED": COUNCILS,
    "COUNCIL_DAILY_BUDGET_USD": COUNCILS,
    "COUNCIL_ADMIN_USERS": CHAT,
    "COUNCIL_RETENTION_DAYS": "slack, discord, serve, worker, api (pruned at start-up); prune",
    "COUNCIL_METRICS_PORT": "worker, slack (Socket Mode), discord",
    "COUNCIL_WORKER_CONCURRENCY": "worker, and slack, discord, serve without --no-worker",
    "COUNCIL_QUEUE_HEARTBEAT_S": "worker, and slack, discord, serve without --no-worker",
    "COUNCIL_QUEUE_STALLED_S": "worker, and slack, discord, serve without --no-worker",
    "COUNCIL_TRACE_CONTENT": COUNCILS,
}

# Variables read by the libraries, not by the model: the reference names them after the model's own.
OTHER_VARIABLES = [
    "## Read by the libraries",
    "",
    "| Variable | What it does |",
    "|---|---|",
    "| `OTEL_*` | OpenTelemetry's standard variables (the `otel` extra): `OTEL_EXPORTER_OTLP_ENDPOINT` turns "
    "tracing on; see [Operating it](operating.md#traces) |",
    "| `PROMETHEUS_MULTIPROC_DIR` | prometheus-client's directory for several processes on one host, which "
    "then serve one sum; see [Operating it](operating.md#metrics) |",
    "",
]

# A setting of the model that belongs to no group (the model before it was grouped).
UNGROUPED = Group("Settings", "", "—")


@dataclass(frozen=True)
class Setting:
    group: str
    name: str
    type: str
    default: str
    description: str
    secret: bool


def settings_model() -> type[BaseModel]:
    sys.path.insert(0, str(ROOT))
    from core.settings import Settings

    return Settings


def walk(model: type[BaseModel], group: str = "") -> Iterator[Setting]:
    """Every leaf field of `model`, depth first; a field whose type is a model is a group."""
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from walk(annotation, group or name)
            continue
        yield Setting(
            group=group,
            name=_env_name(name, field),
            type=type_label(annotation),
            default=default_label(field),
            description=" ".join((field.description or "").split()),
            secret=_is_secret(annotation),
        )


def _env_name(name: str, field: FieldInfo) -> str:
    alias = field.validation_alias if isinstance(field.validation_alias, str) else field.alias
    return alias or name.upper()


def _is_secret(annotation: Any) -> bool:
    return annotation is SecretStr or any(_is_secret(arg) for arg in typing.get_args(annotation))


def type_label(annotation: Any) -> str:
    """A reader's name for a field's type: `integer`, `one of: a, b`, `list (comma-separated)`..."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return type_label(args[0])
    if origin in (typing.Union, types.UnionType):
        labels = [type_label(arg) for arg in args if arg is not type(None)]
        return " or ".join(dict.fromkeys(labels))
    if origin is typing.Literal:
        return "one of: " + ", ".join(str(arg) for arg in args)
    if origin is list:
        return "list (comma-separated)"
    if origin is dict:
        return "JSON object"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "one of: " + ", ".join(str(member.value) for member in annotation)
    names = {str: "text", int: "integer", float: "number", bool: "true or false", SecretStr: "secret"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def default_label(field: FieldInfo) -> str:
    """The default as it would be written in `.env`; empty when there is none or it is computed."""
    value = field.default
    if value is PydanticUndefined or value is None or field.default_factory is not None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, enum.Enum):
        return str(value.value)
    return str(value)


def sections(settings: list[Setting]) -> Iterator[tuple[Group, list[Setting]]]:
    """Each group of the model, in the model's order, with its settings."""
    grouped: dict[str, list[Setting]] = {}
    for setting in settings:
        grouped.setdefault(setting.group, []).append(setting)
    for name, members in grouped.items():
        yield GROUPS.get(name, UNGROUPED), members


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


REFERENCE_HEAD = """# Settings reference

<!-- Generated by scripts/settings_reference.py from core/settings: do not edit by hand. -->

Every setting is read from the environment and from a `.env` file in the working directory
(`.env.example` at the root of the repository lists them all, generated from the same model). An
empty value means *not set*: the default applies. Secrets have no default and never appear in logs,
errors, the database or pages. **Read by** names the `council` commands whose processes read it.
"""

EXAMPLE_HEAD = """# LLM Council — every setting, with its default. Copy to .env and fill in what you need.
# Secrets (keys, tokens) have no default and are never logged or stored. An empty value means
# not set: the default applies. Generated by scripts/settings_reference.py (docs/settings.md
# describes each setting and which process reads it): edit core/settings, not this file."""


def _row(setting: Setting, group: Group) -> str:
    default = f"`{setting.default}`" if setting.default else "—"
    kind = "secret" if setting.secret else _cell(setting.type)
    read_by = READ_BY.get(setting.name, group.read_by)
    return f"| `{setting.name}` | {kind} | {_cell(default)} | {_cell(setting.description)} | {read_by} |"


def _markdown(text: str) -> str:
    """An intro for the page: a `$ command` line becomes code."""
    return "\n".join(f"`{line[2:]}`" if line.startswith("$ ") else line for line in text.splitlines())


def render_reference(settings: list[Setting]) -> str:
    lines = [REFERENCE_HEAD]
    for group, members in sections(settings):
        lines += [f"## {group.title}", ""] + ([_markdown(group.intro), ""] if group.intro else [])
        lines += ["| Setting | Type | Default | What it does | Read by |", "|---|---|---|---|---|"]
        lines += [_row(setting, group) for setting in members] + [""]
    return "\n".join(lines + OTHER_VARIABLES)


def render_example(settings: list[Setting]) -> str:
    lines = [EXAMPLE_HEAD]
    for group, members in sections(settings):
        lines += ["", f"# {'-' * 16} {group.title}", *_comment(group.intro)]
        for setting in members:
            value = "" if setting.secret else setting.default
            lines += [*_comment(setting.description), f"{setting.name}={value}"]
    return "\n".join(lines) + "\n"


def _comment(text: str) -> list[str]:
    """`text` as comment lines of at most 100 characters; a line starting with `$ ` (a command) is kept whole."""
    lines = []
    for paragraph in text.splitlines():
        lines += [paragraph] if paragraph.startswith("$ ") else textwrap.wrap(paragraph, 98)
    return ["# " + line for line in lines]


def outputs() -> dict[Path, str]:
    settings = list(walk(settings_model()))
    return {REFERENCE: render_reference(settings), EXAMPLE: render_example(settings)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="exit 1 when a generated file is out of date")
    args = parser.parse_args(argv)
    stale = [path for path, text in outputs().items() if not path.exists() or path.read_text() != text]
    if args.check:
        for path in stale:
            print(
                f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} is out of date: "
                "run python scripts/settings_reference.py",
                file=sys.stderr,
            )
        return 1 if stale else 0
    for path, text in outputs().items():
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
