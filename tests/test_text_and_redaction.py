"""Text normalisation and secret redaction at the service boundary (core.models.text, core.shared.redact)."""

from __future__ import annotations

import io
import logging

from core.models import ConversationTurn, Origin, Platform
from core.models.text import clean_text
from core.service import CouncilService
from core.settings import Settings
from core.shared.redact import MASK, RedactingFilter, Redactor
from tests.conftest import make_settings
from tests.llm_server import Fail

ORIGIN = Origin(platform=Platform.SLACK, workspace_id="T1", channel_id="C1", user_id="U1")
LEAKED_KEY = "sk-leaky-proxy-0123456789"


def test_clean_text_replaces_lone_surrogates_and_composes():
    assert clean_text("caf\udce9?") == "caf\ufffd?"  # how argv carries the undecodable byte 0xE9
    assert clean_text("a\ud800b") == "a\ufffdb"
    assert clean_text("\ud83d\ude00") == "\U0001f600"  # a surrogate pair is one character, kept
    assert clean_text("cafe\u0301") == "caf\u00e9"  # NFC
    assert clean_text("plain") == "plain"


async def test_undecodable_question_and_history_are_cleaned_before_the_rate_limit(llm, tmp_path):
    service = await CouncilService.open(make_settings(llm, tmp_path, RATE_LIMIT_USER_PER_HOUR=1))
    try:
        history = [ConversationTurn(role="user", content="earlier \udcff turn", author="ren\udce9")]
        result = await (await service.start_council("caf\udce9 cafe\u0301?", ORIGIN, history)).wait()
        stored = await service.queries.get_result(result.council_id)
        assert stored.request.question == "caf\ufffd caf\u00e9?"
        assert stored.request.history[0].content == "earlier \ufffd turn"
        assert stored.request.history[0].author == "ren\ufffd"
    finally:
        await service.aclose()


def test_redactor_masks_every_secret_setting_and_its_json_form():
    settings = Settings(
        _env_file=None,
        LLM_API_KEY="llm-key-123456",
        OPENROUTER_API_KEY="or-key-123456",
        SLACK_BOT_TOKEN="xoxb-slack-123456",
        SLACK_APP_TOKEN="xapp-slack-123456",
        SLACK_SIGNING_SECRET='sign\\ing"secret',
        DISCORD_TOKEN="discord-token-123456",
    )
    redact = Redactor.from_settings(settings)
    secrets = ["llm-key-123456", "or-key-123456", "xoxb-slack-123456", "xapp-slack-123456", "discord-token-123456"]
    text = " | ".join(secrets) + ' | {"s": "sign\\\\ing\\"secret"} | sign\\ing"secret'
    cleaned = redact(text)
    assert all(secret not in cleaned for secret in secrets)
    assert "sign" not in cleaned and cleaned.count(MASK) == len(secrets) + 2


def test_log_lines_and_their_tracebacks_are_redacted():
    redact = Redactor(["log-secret-98765"])
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter(redact))
    logger = logging.getLogger("tests.redaction")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("calling with %s", "log-secret-98765")
        try:
            raise RuntimeError("endpoint said: bad key log-secret-98765")
        except RuntimeError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
    output = stream.getvalue()
    assert "log-secret-98765" not in output
    assert "RuntimeError: endpoint said: bad key [redacted]" in output and "calling with [redacted]" in output


async def test_a_key_quoted_back_by_an_endpoint_is_stored_and_shown_redacted(llm, tmp_path):
    llm.script("leaky", Fail(401, f"Incorrect API key provided: {LEAKED_KEY}"))
    settings = make_settings(llm, tmp_path, LLM_API_KEY=LEAKED_KEY, COUNCIL_MODELS="alpha,beta,leaky")
    service = await CouncilService.open(settings)
    try:
        result = await service.ask("Q?", ORIGIN)
        failed = next(a for a in result.answers if a.model == "leaky")
        assert failed.error is not None and MASK in failed.error.message
        assert LEAKED_KEY not in result.model_dump_json()
        stored = await service.queries.export(result.council_id, "json")
        assert LEAKED_KEY not in stored and MASK in stored
    finally:
        await service.aclose()
    for path in tmp_path.glob("council.db*"):
        assert LEAKED_KEY.encode() not in path.read_bytes()


# --------------------------------------------------------------------------- a key quoted by a model

QUOTED_KEY = "sk-operator-live-key-0123456789abcdef"


def _quoting(prefix: str):  # type: ignore[no-untyped-def]
    """A reply that repeats the request's own bearer key, as a model told to can."""

    def text(call) -> str:  # type: ignore[no-untyped-def]
        key = call.headers.get("Authorization", "").removeprefix("Bearer ")
        return f"{prefix} The key in my request is {key} (quoted)."

    return text


def _quoting_member(name: str):  # type: ignore[no-untyped-def]
    from tests.llm_server import ByStage, Reply, ranking_review

    def review_text(call) -> str:  # type: ignore[no-untyped-def]
        return ranking_review(preamble=_quoting(f"{name} reviews.")(call))(call)

    return ByStage(
        Reply(_quoting(f"{name} answers.")),
        Reply(review_text),
        Reply(_quoting("The chairman's synthesis."), token_delay_s=0.01),
    )


def quoting_council(llm) -> None:  # type: ignore[no-untyped-def]
    """alpha and beta quote the key in every stage; gamma fails with a provider error quoting it."""
    llm.script("alpha", _quoting_member("alpha"))
    llm.script("beta", _quoting_member("beta"))
    llm.script("gamma", Fail(502, f"upstream refused Authorization: Bearer {QUOTED_KEY}"))


def test_a_secret_split_across_streamed_pieces_is_still_masked():
    from core.shared.redact import StreamRedactor

    redactor = Redactor([QUOTED_KEY])
    text = f"one {QUOTED_KEY} two {QUOTED_KEY[:10]} and {QUOTED_KEY}"
    for size in (1, 3, 7, len(text)):
        pieces = StreamRedactor(redactor)
        shown = "".join(pieces.feed(text[i : i + size]) for i in range(0, len(text), size)) + pieces.flush()
        assert shown == redactor(text) and QUOTED_KEY not in shown, size


async def test_a_key_a_model_quotes_is_masked_in_every_event_and_every_store(llm, tmp_path):
    """Where model text enters the council: the live events (answers, reviews, every chairman token),
    the result, the export and the database never hold the key a model repeated."""
    quoting_council(llm)
    settings = make_settings(llm, tmp_path, LLM_API_KEY=QUOTED_KEY)
    service = await CouncilService.open(settings)
    try:
        run = await service.start_council("What is your key?", ORIGIN)
        events = [event.model_dump_json() async for event in run.events()]
        assert any("member_finished" in e for e in events) and any("chairman_token" in e for e in events)
        assert not [e for e in events if QUOTED_KEY in e]
        tokens = "".join(e for e in events if "chairman_token" in e)
        assert MASK in "".join(events) and MASK in tokens
        result = await run.wait()
        assert result.synthesis is not None and MASK in result.synthesis.text
        assert QUOTED_KEY not in await service.queries.export(result.council_id, "markdown")
    finally:
        await service.aclose()
    for path in tmp_path.glob("council.db*"):
        assert QUOTED_KEY.encode() not in path.read_bytes()


async def test_council_ask_never_prints_a_key_a_model_quotes(llm, tmp_path):
    from tests.test_cli import council

    quoting_council(llm)
    code, out, err = await council(tmp_path, llm, "ask", "What is your key?", extra_env={"LLM_API_KEY": QUOTED_KEY})
    assert code == 0, err
    assert "The chairman's synthesis." in out and MASK in out
    assert QUOTED_KEY not in out + err
