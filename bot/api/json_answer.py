"""`response_format` (json_object, json_schema): what the request asks, and the synthesizer's
answer made to fit it.

The members answer freely; the synthesizer is asked for one JSON object (core/engine/prompts.py,
`with_answer_format`). Its answer is read leniently (a code fence or a sentence around the object
are dropped) and then strictly: it must be an object, valid against the schema (`jsonschema`,
the reference implementation; the schema's own `$schema` picks the draft, 2020-12 by default).
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError, ValidationError, best_match
from referencing.exceptions import Unresolvable

from bot.api.openai_types import ApiError
from core.models import AnswerFormat

_FENCED = re.compile(r"```(?:json)?\s*\n(.*?)\n?```", re.DOTALL | re.IGNORECASE)


class AnswerMisfit(Exception):
    """The answer cannot be made to fit the requested format; the message says why."""


def requested_format(response_format: dict[str, Any] | None) -> AnswerFormat | None:
    """The AnswerFormat a request's `response_format` asks for (None: free text); a 400 naming
    the reason when it cannot be used."""
    if response_format is None:
        return None
    kind = response_format.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return AnswerFormat(kind="json_object")
    if kind != "json_schema":
        raise _bad(f"response_format.type must be text, json_object or json_schema, not {json.dumps(kind)[:40]}.")
    spec = response_format.get("json_schema")
    if not isinstance(spec, dict):
        raise _bad("response_format.json_schema must be an object with `name` and `schema`.")
    schema = spec.get("schema")
    if schema is not None and not isinstance(schema, dict):
        raise _bad("response_format.json_schema.schema must be a JSON Schema object.")
    if schema is not None:
        _check_schema(schema)
        if schema.get("type", "object") != "object":
            raise _bad('response_format.json_schema.schema must describe an object (`"type": "object"`).')
    name = spec.get("name")
    return AnswerFormat(kind="json_schema", name=name if isinstance(name, str) else None, json_schema=schema)


def fit(text: str, answer_format: AnswerFormat) -> str:
    """The answer as the JSON the request asked for, or AnswerMisfit with the first reason."""
    reason = "it holds no JSON object"
    for candidate in _candidates(text):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if not isinstance(value, dict):
            reason = f"it is a JSON {type(value).__name__}, not an object"
            continue
        problem = _schema_problem(value, answer_format.json_schema)
        if problem is None:
            return json.dumps(value, ensure_ascii=False)
        reason = problem
    raise AnswerMisfit(reason)


def _candidates(text: str) -> list[str]:
    """The text itself, each fenced block, and the span from the first `{` to the last `}`."""
    stripped = text.strip()
    found = [stripped, *(block.strip() for block in _FENCED.findall(stripped))]
    start, end = stripped.find("{"), stripped.rfind("}")
    if 0 <= start < end:
        found.append(stripped[start : end + 1])
    return list(dict.fromkeys(found))


def _schema_problem(value: dict[str, Any], schema: dict[str, Any] | None) -> str | None:
    if schema is None:
        return None
    validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)(schema)
    try:
        error = best_match(validator.iter_errors(value))
    except Unresolvable as exc:  # a $ref to somewhere we do not fetch
        return f"the schema's reference {exc} cannot be resolved"
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path) or "the object"
    return f"it does not fit the schema at {where}: {_short(error)}"


def _check_schema(schema: dict[str, Any]) -> None:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(part) for part in exc.absolute_path)
        at = f" (at {where})" if where else ""
        raise _bad(f"response_format.json_schema.schema is not a valid JSON Schema{at}: {_short(exc)}") from None


def _short(error: ValidationError | SchemaError) -> str:
    message = error.message
    return message if len(message) <= 200 else message[:199] + "…"


def _bad(message: str) -> ApiError:
    return ApiError(400, message, "invalid_request_error", "invalid_response_format", param="response_format")
