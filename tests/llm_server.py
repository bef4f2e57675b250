"""A scripted OpenAI-compatible server on loopback, for tests and benchmarks.

Real HTTP (aiohttp) on 127.0.0.1 with an ephemeral port. Each model id is scripted with a
`Behaviour`; unknown models get OpenAI's 404 `model_not_found`. Every request is recorded.

    async with ScriptedLLMServer({"m1": council_member("Paris."), "m2": Reply("Lyon")}) as srv:
        Settings(LLM_BASE_URL=srv.base_url, LLM_API_KEY="test-key", ...)
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.loopback_app import serve_on_loopback

_LABEL_FENCE = re.compile(r"<<<RESPONSE ([A-Z]) [0-9a-f]+>>>")
_ANSWER_FENCE = re.compile(r"<<<RESPONSE ([A-Z]) ([0-9a-f]+)>>>\n(.*?)\n<<<END RESPONSE \1 \2>>>", re.DOTALL)


@dataclass
class RecordedRequest:
    model: str
    messages: list[dict[str, str]]
    stream: bool
    headers: dict[str, str]
    body: dict[str, Any]
    at: float = field(default_factory=time.monotonic)  # when it arrived

    @property
    def system(self) -> str:
        return "\n".join(text_of(m["content"]) for m in self.messages if m["role"] == "system")

    @property
    def user(self) -> str:
        users = [text_of(m["content"]) for m in self.messages if m["role"] == "user"]
        return users[-1] if users else ""

    @property
    def images(self) -> list[str]:
        """The image URLs of every image content part this request carried."""
        return [
            part["image_url"]["url"]
            for m in self.messages
            if isinstance(m["content"], list)
            for part in m["content"]
            if part.get("type") == "image_url"
        ]

    @property
    def stage(self) -> int:
        if self.body.get("response_format"):  # only reviews ask for structured output
            return 2
        return stage_of(self.messages)


def text_of(content: Any) -> str:
    """A message's text: the string, or the text parts of OpenAI multi-part content."""
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


JUDGEMENT = 4  # auto mode's judgement of whether the first two answers agree (not a council stage)
REVISION = 5  # refine mode: a member revises its answer after reading the others'


def stage_of(messages: Sequence[dict[str, Any]]) -> int:
    """Which council stage a prompt belongs to, from the engine's prompt texts (JUDGEMENT: auto
    mode's agreement check)."""
    system = "\n".join(text_of(m["content"]) for m in messages if m["role"] == "system").lower()
    last_user = next((text_of(m["content"]) for m in reversed(messages) if m["role"] == "user"), "")
    if "VERDICT: DISAGREE" in last_user:
        return JUDGEMENT
    if "`KEEP:`" in last_user and "`REASON:`" in last_user:
        return REVISION
    if "chairman" in system:
        return 3
    if "FINAL RANKING:" in last_user:
        return 2
    return 1


def shown_answers(prompt: str) -> dict[str, str]:
    """Label -> answer text of each response fenced in a review prompt, in the order shown."""
    return {label: text for label, _, text in _ANSWER_FENCE.findall(prompt)}


def shown_labels(prompt: str) -> list[str]:
    """Labels in the order a reviewer was shown them."""
    return list(dict.fromkeys(_LABEL_FENCE.findall(prompt)))


# --------------------------------------------------------------------------- behaviours


class Behaviour:
    """Decides the reply to one request."""

    async def respond(
        self, request: web.Request, call: RecordedRequest, server: ScriptedLLMServer
    ) -> web.StreamResponse:
        raise NotImplementedError


@dataclass
class Reply(Behaviour):
    """Answers with `text` (a string or a function of the recorded request)."""

    text: str | Callable[[RecordedRequest], str]
    delay_s: float = 0.0
    token_delay_s: float = 0.0
    cost: float | None = None
    drop_after_tokens: int | None = None  # close the stream mid-way

    def text_for(self, call: RecordedRequest) -> str:
        return self.text(call) if callable(self.text) else self.text

    async def respond(self, request, call, server):
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        text = self.text_for(call)
        usage = {
            "prompt_tokens": sum(len(m["content"].split()) for m in call.messages),
            "completion_tokens": len(text.split()),
        }
        if self.cost is not None:
            usage["cost"] = self.cost
        if not call.stream:
            return web.json_response(
                {
                    "id": "chatcmpl-test",
                    "object": "chat.completion",
                    "model": call.model,
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                    ],
                    "usage": usage,
                }
            )
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        tokens = re.findall(r"\S+\s*|\s+", text) or [text]
        for index, token in enumerate(tokens):
            if self.drop_after_tokens is not None and index >= self.drop_after_tokens:
                request.transport.close() if request.transport else None
                return response
            chunk = {"choices": [{"index": 0, "delta": {"content": token}, "finish_reason": None}]}
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
            if self.token_delay_s:
                await asyncio.sleep(self.token_delay_s)
        final = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        await response.write(f"data: {json.dumps(final)}\n\n".encode())
        if (call.body.get("stream_options") or {}).get("include_usage"):
            await response.write(f"data: {json.dumps({'choices': [], 'usage': usage})}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response


@dataclass
class Fail(Behaviour):
    status: int = 500
    message: str = "internal error"
    code: str | None = None
    retry_after: str | None = None

    async def respond(self, request, call, server):
        headers = {"Retry-After": self.retry_after} if self.retry_after is not None else None
        body = {"error": {"message": self.message, "type": "server_error", "code": self.code or self.status}}
        return web.json_response(body, status=self.status, headers=headers)


@dataclass
class Hang(Behaviour):
    async def respond(self, request, call, server):
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")


@dataclass
class WaitFor(Behaviour):
    """Holds the reply until the server has received a request matching `condition` (e.g. the
    chairman's): orders events across models without relying on delays."""

    condition: Callable[[RecordedRequest], bool]
    then: Behaviour
    timeout_s: float = 30.0

    async def respond(self, request, call, server):
        deadline = time.monotonic() + self.timeout_s
        while not any(self.condition(r) for r in server.requests) and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.01)  # requests arrive from other handlers; polling keeps the server simple
        return await self.then.respond(request, call, server)


@dataclass
class InvalidJSON(Behaviour):
    async def respond(self, request, call, server):
        return web.Response(text="{not json", content_type="application/json")


@dataclass
class Sequence_(Behaviour):
    """Behaviours taken in turn per model; the last one repeats (e.g. 429, 429, then Reply)."""

    steps: list[Behaviour]
    _index: int = 0

    async def respond(self, request, call, server):
        step = self.steps[min(self._index, len(self.steps) - 1)]
        self._index += 1
        return await step.respond(request, call, server)


def flaky(times: int, first: Behaviour, then: Behaviour) -> Sequence_:
    return Sequence_([first] * times + [then])


@dataclass
class ByStage(Behaviour):
    """Different behaviour per council stage (1 answer, 2 review, 3 synthesis; `judge`: auto mode's
    agreement check, which agrees unless told otherwise; `revise`: refine mode's revision, which
    keeps the answer unless told otherwise)."""

    stage1: Behaviour
    stage2: Behaviour
    stage3: Behaviour
    judge: Behaviour = field(default_factory=lambda: Reply("Both reach the same conclusion.\nVERDICT: AGREE"))
    revise: Behaviour = field(default_factory=lambda: Reply("KEEP: the other answers change nothing in mine."))

    async def respond(self, request, call, server):
        stages = {1: self.stage1, 2: self.stage2, 3: self.stage3, JUDGEMENT: self.judge, REVISION: self.revise}
        behaviour = stages[call.stage]
        return await behaviour.respond(request, call, server)


@dataclass
class MemoryMeter:
    """What a GPU serving the scripted models would hold: the GB of the models answering at this
    moment, and the most it ever held at once (issue 33's memory-aware scheduling)."""

    in_use_gb: float = 0.0
    peak_gb: float = 0.0
    in_flight: int = 0
    peak_in_flight: int = 0


@dataclass
class Loads(Behaviour):
    """`inner`, with the model's `gb` loaded on `meter` while it answers."""

    inner: Behaviour
    gb: float
    meter: MemoryMeter

    async def respond(self, request, call, server):
        m = self.meter
        m.in_use_gb += self.gb
        m.in_flight += 1
        m.peak_gb, m.peak_in_flight = max(m.peak_gb, m.in_use_gb), max(m.peak_in_flight, m.in_flight)
        try:
            return await self.inner.respond(request, call, server)
        finally:
            m.in_use_gb -= self.gb
            m.in_flight -= 1


def in_shown_order(labels: list[str]) -> list[str]:
    """A reviewer with total position bias: ranks the answers in the order it was shown them."""
    return list(labels)


def in_reverse(labels: list[str]) -> list[str]:
    """Ranks the answers in the reverse of the order it was shown them."""
    return list(reversed(labels))


class Alternating:
    """A position-fair reviewer by construction: shown order on odd calls, reversed on even ones
    (with two answers shown, it ranks the one shown first first exactly half of the time)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, labels: list[str]) -> list[str]:
        self.calls += 1
        return in_shown_order(labels) if self.calls % 2 else in_reverse(labels)


@dataclass
class RefusesJSON(Behaviour):
    """An endpoint without structured output: 400 to any request with `response_format`."""

    inner: Behaviour

    async def respond(self, request, call, server):
        if call.body.get("response_format"):
            return await Fail(400, "response_format is not supported for this model", "invalid_request_error").respond(
                request, call, server
            )
        return await self.inner.respond(request, call, server)


@dataclass
class AnswersJSON(Behaviour):
    """A reviewer that honours `response_format`: a JSON ballot of the shown labels (alphabetical
    by default) when asked for one, else `inner`. `bare`: labels as letters, not "Response X"."""

    inner: Behaviour
    order: Callable[[list[str]], Sequence[str]] | None = None
    evaluation: str = "Response-by-response notes."
    bare: bool = False
    raw: str | None = None  # reply this instead (e.g. invalid JSON)
    score: Scorer | None = None  # also a `scores` entry per shown answer, from its text

    async def respond(self, request, call, server):
        if not call.body.get("response_format"):
            return await self.inner.respond(request, call, server)
        labels = shown_labels(call.user)
        ranked = list(self.order(labels)) if self.order else sorted(labels)
        ranking = ranked if self.bare else [f"Response {label}" for label in ranked]
        ballot: dict[str, Any] = {"evaluation": self.evaluation, "ranking": ranking}
        if self.score is not None:
            answers = shown_answers(call.user)
            ballot["scores"] = [{"response": f"Response {label}", **self.score(a)} for label, a in answers.items()]
        text = self.raw if self.raw is not None else json.dumps(ballot)
        return await Reply(text).respond(request, call, server)


def ranking_review(
    order: Callable[[list[str]], Sequence[str]] | None = None, preamble: str = "Response-by-response notes."
) -> Callable[[RecordedRequest], str]:
    """A review text ending in a FINAL RANKING of the shown labels (alphabetical by default)."""

    def text(call: RecordedRequest) -> str:
        labels = shown_labels(call.user)
        ranked = list(order(labels)) if order else sorted(labels)
        lines = "\n".join(f"{i}. Response {label}" for i, label in enumerate(ranked, 1))
        return f"{preamble}\n\nFINAL RANKING:\n{lines}"

    return text


Scorer = Callable[[str], dict[str, float]]  # an answer's text -> criterion -> score


def scoring_review(
    score: Scorer, order: Callable[[list[str]], Sequence[str]] | None = None
) -> Callable[[RecordedRequest], str]:
    """A review that scores each shown answer (`Response X: Accuracy=8, ...` from `score(answer
    text)`) before its FINAL RANKING (by mean score, best first, unless `order` is given)."""

    def text(call: RecordedRequest) -> str:
        answers = shown_answers(call.user)
        scored = {label: score(answer) for label, answer in answers.items()}
        lines = [
            f"Response {label}: " + ", ".join(f"{c.capitalize()}={v:g}" for c, v in values.items())
            for label, values in scored.items()
        ]
        mean = {label: sum(v.values()) / len(v) if v else 0 for label, v in scored.items()}
        ranked = list(order(list(answers))) if order else sorted(answers, key=lambda label: (-mean[label], label))
        ranking = "\n".join(f"{i}. Response {label}" for i, label in enumerate(ranked, 1))
        return "Notes on each response.\n\n" + "\n".join(lines) + f"\n\nFINAL RANKING:\n{ranking}"

    return text


def council_member(
    answer: str,
    ranking: Callable[[list[str]], Sequence[str]] | Callable[[RecordedRequest], str] | None = None,
    synthesis: str = "The council's final answer.",
    *,
    raw_review: Callable[[RecordedRequest], str] | None = None,
    json_ballots: bool = False,
    latency_s: float = 0.0,
    token_delay_s: float = 0.0,
    cost: float | None = None,
) -> ByStage:
    """A well-behaved member: answers, reviews with a ranking, and can chair. `json_ballots`: it
    answers a review asking for structured output with a JSON ballot in the same order."""
    review = raw_review or ranking_review(ranking)  # type: ignore[arg-type]
    text_review: Behaviour = Reply(review, delay_s=latency_s, cost=cost)
    return ByStage(
        Reply(answer, delay_s=latency_s, cost=cost),
        AnswersJSON(text_review, ranking) if json_ballots else text_review,  # type: ignore[arg-type]
        Reply(synthesis, delay_s=latency_s, token_delay_s=token_delay_s, cost=cost),
    )


# --------------------------------------------------------------------------- server


@dataclass
class ScriptedLLMServer:
    models: dict[str, Behaviour] = field(default_factory=dict)
    host: str = "127.0.0.1"
    requests: list[RecordedRequest] = field(default_factory=list)
    record: bool = True
    ssl_context: Any = None  # an ssl.SSLContext: serve HTTPS
    image_models: set[str] = field(default_factory=set)  # listed with "image" input, as OpenRouter does
    unlisted: set[str] = field(default_factory=set)  # served but left out of /v1/models, as many proxies do
    model_list_requests: int = 0  # GET /v1/models received
    # When set, only these bearer keys are accepted (else OpenAI's 401 invalid_api_key), on every route.
    api_keys: set[str] | None = None
    model_list_headers: list[dict[str, str]] = field(default_factory=list)  # headers of each GET /models
    models_public: bool = False  # /v1/models needs no key even with `api_keys` (OpenRouter's does not)
    key_checks: int = 0  # GET /v1/key received (OpenRouter's "current API key")

    def __post_init__(self) -> None:
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        scheme = "https" if self.ssl_context else "http"
        host = "localhost" if self.ssl_context else self.host  # the name the test certificate is for
        return f"{scheme}://{host}:{self.port}/v1"

    def script(self, model: str, behaviour: Behaviour) -> None:
        self.models[model] = behaviour

    def requests_for(self, model: str | None = None, stage: int | None = None) -> list[RecordedRequest]:
        return [r for r in self.requests if (model is None or r.model == model) and (stage is None or r.stage == stage)]

    async def wait_for_requests(self, predicate: Callable[[], Any], timeout: float = 30.0) -> Any:
        """Until `predicate()` (usually over the recorded requests) is truthy; AssertionError after `timeout`."""
        deadline = time.monotonic() + timeout
        while not (found := predicate()):
            assert time.monotonic() < deadline, f"not seen within {timeout} s"
            await asyncio.sleep(0.02)
        return found

    async def __aenter__(self) -> ScriptedLLMServer:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/v1/key", self._key)
        self._runner, self.port = await serve_on_loopback(app, self.host, backlog=1024, ssl_context=self.ssl_context)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def _refused(self, request: web.Request) -> web.Response | None:
        """OpenAI's answer to a missing or wrong key, when this server checks keys."""
        if self.api_keys is None:
            return None
        auth = request.headers.get("Authorization", "")
        if auth.startswith("Bearer ") and auth[7:] in self.api_keys:
            return None
        body = {
            "error": {
                "message": "Incorrect API key provided. You can find your API key in your account settings.",
                "type": "invalid_request_error",
                "code": "invalid_api_key",
            }
        }
        return web.json_response(body, status=401)

    async def _key(self, request: web.Request) -> web.Response:
        self.key_checks += 1
        if (refused := self._refused(request)) is not None:
            return refused
        return web.json_response({"data": {"label": "sk-or-v1-abc...xyz", "limit": None, "usage": 0.0}})

    async def _models(self, request: web.Request) -> web.Response:
        self.model_list_requests += 1
        self.model_list_headers.append(dict(request.headers))
        refused = self._refused(request)
        if refused is not None and not self.models_public:
            return refused
        data = [
            {
                "id": name,
                "object": "model",
                "created": int(time.time()),
                "owned_by": "test",
                "architecture": {"input_modalities": ["text", "image"] if name in self.image_models else ["text"]},
            }
            for name in self.models
            if name not in self.unlisted
        ]
        return web.json_response({"object": "list", "data": data})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        call = RecordedRequest(
            model=body.get("model", ""),
            messages=body.get("messages", []),
            stream=bool(body.get("stream")),
            headers=dict(request.headers),
            body=body,
        )
        if self.record:
            self.requests.append(call)
        refused = self._refused(request)
        if refused is not None:
            return refused
        behaviour = self.models.get(call.model)
        if behaviour is None:
            return web.json_response(
                {
                    "error": {
                        "message": f"The model `{call.model}` does not exist",
                        "type": "invalid_request_error",
                        "code": "model_not_found",
                    }
                },
                status=404,
            )
        return await behaviour.respond(request, call, self)
