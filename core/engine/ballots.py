"""How a reviewer gives its ballot: the text FINAL RANKING (parsed in Rust, rust/ranking/src/parse.rs,
the default) or a JSON object asked for with structured output (`COUNCIL_BALLOT_FORMAT=json|auto`).

A JSON ballot is `{"evaluation": str, "ranking": [label, ...]}`; a label is a bare letter or
"Response X", every one must be among the labels shown, none twice. With a rubric it also holds
`"scores": [{"response": label, "<criterion>": number, ...}, ...]`: entries whose label was not
shown, and numbers outside the rubric's scale, are dropped (as the text reader does,
rust/ranking/src/scores.rs); a malformed `scores` never voids the ranking. A model or provider that
refuses structured output (HTTP 400 on `response_format`) or answers something that is not such an
object is asked again with the text prompt, and is remembered for the rest of the process so that
its later reviews go straight to text. `auto` asks JSON of remote models only (the local GGUF
models constrain the text ranking with a grammar instead); `json` asks every model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from core.models import ChatMessage, Completion, Rubric
from core.providers.base import BadResponseError, CallOptions

BallotFormat = Literal["json", "text"]

_LABEL = re.compile(r"^(?:response\s+)?([A-Z])$", re.IGNORECASE)
_FENCED = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def response_format(rubric: Rubric | None = None) -> dict[str, Any]:
    """The OpenAI `response_format` of a JSON ballot (with the rubric's `scores` when there is one)."""
    properties: dict[str, Any] = {
        "evaluation": {"type": "string"},
        "ranking": {"type": "array", "items": {"type": "string"}},
    }
    if rubric is not None:
        entry = {c: {"type": "number"} for c in rubric.criteria}
        properties["scores"] = {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"response": {"type": "string"}, **entry},
                "required": ["response", *rubric.criteria],
                "additionalProperties": False,
            },
        }
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "council_ballot",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": properties,
                "required": list(properties),
                "additionalProperties": False,
            },
        },
    }


class TextOnlyModels:
    """Models that refused a JSON ballot, for the life of the process."""

    def __init__(self) -> None:
        self._models: set[str] = set()

    def add(self, model: str) -> None:
        self._models.add(model)

    def __contains__(self, model: object) -> bool:
        return model in self._models

    def clear(self) -> None:
        self._models.clear()


TEXT_ONLY = TextOnlyModels()


def asks_json(setting: str, model: str) -> bool:
    if setting == "text" or model in TEXT_ONLY:
        return False
    return setting == "json" or not model.startswith("local:")


@dataclass(frozen=True)
class JsonBallot:
    evaluation: str
    order: list[str]  # labels best first
    scores: dict[str, dict[str, float]] = field(default_factory=dict)  # label -> criterion -> score


def read_json_ballot(text: str, shown: Sequence[str], rubric: Rubric | None = None) -> JsonBallot | None:
    """The ballot of a JSON reply, or None when it is not a valid one (see the module doc)."""
    body = text.strip()
    fenced = _FENCED.match(body)
    try:
        data = json.loads(fenced.group(1) if fenced else body)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("evaluation"), str):
        return None
    ranking = data.get("ranking")
    if not isinstance(ranking, list):
        return None
    order: list[str] = []
    for item in ranking:
        match = _LABEL.match(item.strip()) if isinstance(item, str) else None
        label = match.group(1).upper() if match else None
        if label is None or label not in shown or label in order:
            return None
        order.append(label)
    scores = _json_scores(data.get("scores"), shown, rubric) if rubric is not None else {}
    return JsonBallot(data["evaluation"].strip(), order, scores)


def _json_scores(entries: object, shown: Sequence[str], rubric: Rubric) -> dict[str, dict[str, float]]:
    scores: dict[str, dict[str, float]] = {}
    for entry in entries if isinstance(entries, list) else []:
        response = entry.get("response") if isinstance(entry, dict) else None
        match = _LABEL.match(response.strip()) if isinstance(response, str) else None
        if match is None or match.group(1).upper() not in shown:
            continue
        values = {
            c: float(v)
            for c in rubric.criteria
            if isinstance(v := entry.get(c), (int, float))
            and not isinstance(v, bool)
            and rubric.low <= v <= rubric.high
        }
        if values:
            scores[match.group(1).upper()] = values
    return scores


@dataclass
class ReviewCall:
    """One reviewer's stage-2 call: JSON first when the setting asks for it, text otherwise or
    after a refusal. After it ran, `format` and `json_ballot` say what the reply holds."""

    model: str
    complete: Callable[[list[ChatMessage], CallOptions], Awaitable[Completion]]
    text_messages: list[ChatMessage]
    json_messages: list[ChatMessage] | None  # None: text only
    options: CallOptions
    shown: list[str]
    rubric: Rubric | None = None
    format: BallotFormat = "text"
    json_ballot: JsonBallot | None = None

    async def __call__(self) -> Completion:
        spent = None
        if self.json_messages is not None:
            try:
                structured = replace(self.options, response_format=response_format(self.rubric))
                reply = await self.complete(self.json_messages, structured)
            except BadResponseError as exc:
                if exc.status != 400:
                    raise
            else:
                self.json_ballot = read_json_ballot(reply.text, self.shown, self.rubric)
                if self.json_ballot is not None:
                    self.format = "json"
                    return reply
                spent = reply.usage
            TEXT_ONLY.add(self.model)
        reply = await self.complete(self.text_messages, self.options)
        return reply if spent is None else reply.model_copy(update={"usage": reply.usage + spent})
