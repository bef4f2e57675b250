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
