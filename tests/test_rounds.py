"""Refine mode's revision rounds, seats with a lens and Self-MoA, in the engine over loopback HTTP against
the scripted server: who is asked what, who moved toward whom, what reviewers and the chairman read."""

from __future__ import annotations

import re

import pytest

from core.admission.deliberation import self_moa_seat, with_deliberation_mode
from core.durable.journal import StepJournal
from core.engine.chair_notes import SELF_MOA_NOTE
from core.engine.council import CouncilControl, run_council
from core.engine.revision_prompt import read_reply
from core.errors import ConfigurationError
from core.models import (
    CouncilCheckpoint,
    CouncilRequest,
    Lens,
    MemberAnswer,
    Origin,
    Platform,
    Revision,
    RevisionFinished,
    RoundStarted,
)
from core.models.deliberation import PRESETS, lens_of
from core.models.seats_file import parse_seats, read_seats_file
from core.models.voice import ENDED_CONVERGED, ENDED_NO_MOVE, ENDED_SYNTHESIZE, round_line, self_moa_line
from core.records.export import to_document, to_markdown
from core.settings import Settings, load_settings
from core.shared.redact import Redactor
from core.storage import Storage
from tests import test_council
from tests.factories import make_result, run_council_to_end
from tests.llm_server import REVISION, Fail, Hang, Reply, council_member
from tests.test_council import CHAIR, M1, M2, M3, config, script

server, router = test_council.server, test_council.router  # the fixtures

BEST = (
    "The capital of Australia is Canberra. It was chosen as a compromise between Sydney and Melbourne in 1908. "
    "Parliament House sits on Capital Hill in Canberra."
)
WRONG = "The capital of Australia is Sydney. Sydney is the largest city and the financial centre of the country."
OTHER = "Australia's capital is Canberra, a planned city. Its design came from Walter Burley Griffin in 1912."
REVISED = (
    "The capital of Australia is Canberra. It was chosen as a compromise between Sydney and Melbourne in 1908. "
    "Sydney is the largest city and the financial centre of the country."
)
REASON = "the first answer shows Canberra was chosen as the capital in 1908"
SYNTHESIS = "Canberra is the capital of Australia, chosen in 1908 as a compromise between Sydney and Melbourne."
ANSWERS = {M1: BEST, M2: WRONG, M3: OTHER}


def scripts(revise: dict | None = None, **overrides):
    """Three members; M2 revises toward M1 unless `revise` says otherwise, the others keep their answers."""
    scripted = {m: council_member(text, lambda labels: sorted(labels)) for m, text in ANSWERS.items()}
    scripted[CHAIR] = council_member("chair answer", synthesis=SYNTHESIS)
    for model, text in (revise if revise is not None else {M2: f"REASON: {REASON}\n{REVISED}"}).items():
        scripted[model].revise = text if not isinstance(text, str) else Reply(text)
    scripted.update(overrides)
    return scripted


def refine(**overrides):
    return config(**({"members": [M1, M2, M3], "mode": "refine", "rounds": 2} | overrides))


async def run(router, council_config, control=None, on_event=None):
    request = CouncilRequest(question="What is the capital of Australia?", config=council_config)
    return await run_council_to_end(router, request, control, on_event)


async def test_a_member_that_revises_toward_the_best_answer_and_ones_that_hold(server, router):
    script(server, scripts())
    events, result = await run(router, refine())
    # 3 answers, 2 rounds of 3 revisions (round 2: nobody moved, so no third), 3 reviews, 1 synthesis
    assert len(server.requests_for(stage=REVISION)) == 6 and len(server.requests) == 3 + 6 + 3 + 1
    assert [e.number for e in events if isinstance(e, RoundStarted)] == [1, 2]
    first, second = result.rounds
    assert [(r.model, r.moved, r.toward) for r in first.revisions] == [
        (M1, False, []),
        (M2, True, [M1]),
        (M3, False, []),
    ]
    assert first.revisions[0].kept and first.revisions[1].reason == REASON and first.ended is None
    assert not any(r.moved for r in second.revisions) and second.ended == ENDED_NO_MOVE
    assert round_line(first) == f"Round 1: {M2} moved toward {M1}; {M1} and {M3} held"
    # The first answers stay in the result; the reviews and the chairman read the latest.
    by_model = {a.model: a for a in result.answers}
    assert by_model[M2].text == WRONG and result.final_text(by_model[M2]) == REVISED
    review = server.requests_for(M1, stage=2)[0].user
    assert REVISED in review and "The capital of Australia is Sydney." not in review
    chair = server.requests_for(CHAIR, stage=3)[0].user
    assert "Round 1: Response B changed its answer toward Response A." in chair
    assert "Round 1: Response A held its answer." in chair and "Response B's first answer" in chair and WRONG in chair
    assert "without giving a reason" not in chair
    metadata = to_document(result)["metadata"]
    assert metadata["rounds"][0] == [
        {"member": M1, "moved": False, "toward": []},
        {"member": M2, "moved": True, "toward": [M1]},
        {"member": M3, "moved": False, "toward": []},
    ]
    assert len(metadata["rounds"]) == 2 and metadata["rounds_ended"] == ENDED_NO_MOVE
    markdown = to_markdown(result)
    assert "## Revision rounds" in markdown and f"Round 1: {M2} moved toward {M1}" in markdown


async def test_a_revision_prompt_shows_the_others_anonymised_beside_its_own_answer(server, router):
    script(server, scripts())
    await run(router, refine(rounds=1))
    prompts = server.requests_for(M2, stage=REVISION)
    [prompt] = prompts
    assert [m["role"] for m in prompt.messages][-2:] == ["assistant", "user"]
    assert prompt.messages[-2]["content"] == WRONG  # its own answer, as its turn
    fenced = re.findall(r"<<<RESPONSE ([A-Z]) ([0-9a-f]+)>>>\n(.*?)\n<<<END RESPONSE", prompt.user, re.DOTALL)
    assert sorted(text for _, _, text in fenced) == sorted([BEST, OTHER]) and [x[0] for x in fenced] == ["A", "B"]
    everything = " ".join(str(m["content"]) for m in prompt.messages)
    assert not any(model in everything for model in (M1, M2, M3, CHAIR))
    nonce = fenced[0][1]  # the members saw this nonce: the reviews' fences use another one
    assert all(nonce not in r.user for r in server.requests_for(stage=2) + server.requests_for(stage=3))


async def test_a_member_that_moves_without_a_reason_is_named_to_the_chairman(server, router):
    script(server, scripts(revise={M2: REVISED}))
    _, result = await run(router, refine(rounds=1))
    [revision] = [r for r in result.rounds[0].revisions if r.model == M2]
    assert revision.moved and revision.unexplained
    chair = server.requests_for(CHAIR, stage=3)[0].user
    assert "Response B dropped its earlier position without giving a reason" in chair
    assert "(without saying why)" in round_line(result.rounds[0])


async def test_rounds_stop_when_the_answers_converge(server, router):
    script(server, scripts(revise={M2: f"REASON: {REASON}\n{BEST}", M3: f"REASON: {REASON}\n{BEST}"}))
    _, result = await run(router, refine(rounds=3))
    [only] = result.rounds
    assert only.ended == ENDED_CONVERGED and only.converged == pytest.approx(1.0)
    assert len(server.requests_for(stage=REVISION)) == 3


async def test_synthesize_now_during_a_round_uses_the_latest_answers(server, router):
    script(server, scripts(revise={M2: f"REASON: {REASON}\n{REVISED}", M3: Hang()}))
    control = CouncilControl()
    seen: list[Revision] = []

    def on_event(event, control):
        if isinstance(event, RevisionFinished):
            seen.append(event.revision)
            if len(seen) == 2:
                control.synthesize_now()

    _, result = await run(router, refine(), control, on_event)
    [revision_round] = result.rounds
    assert revision_round.ended == ENDED_SYNTHESIZE
    assert not server.requests_for(stage=2)  # no reviews after "synthesize now"
    assert REVISED in server.requests_for(CHAIR, stage=3)[0].user and result.synthesis.text == SYNTHESIS


async def test_a_resumed_council_replays_the_revisions_it_had(server, router):
    script(server, scripts())
    answers = [MemberAnswer(model=m, seat=m, text=t, latency_s=0.1) for m, t in ANSWERS.items()]
    revisions = [
        Revision(round=1, seat=M1, model=M1, text=BEST, kept=True),
        Revision(round=1, seat=M2, model=M2, text=REVISED, moved=True, toward=[M1], reason=REASON),
    ]
    checkpoint = CouncilCheckpoint(answers=answers, revisions=revisions)
    request = CouncilRequest(question="What is the capital of Australia?", config=refine(rounds=1))
    events = [e async for e in run_council(request, router, None, checkpoint)]
    result = events[-1].result
    assert not server.requests_for(stage=1)  # the answers were stored
    assert [r.model for r in server.requests_for(stage=REVISION)] == [M3]  # only the revision still missing
    assert [r.model for r in result.rounds[0].revisions] == [M1, M2, M3]
    assert REVISED in server.requests_for(M1, stage=2)[0].user


async def test_a_lens_reaches_only_its_own_members_prompts(server, router):
    persona = "Argue the strongest case against the obvious answer."
    script(server, scripts())
    lenses = {M1: Lens(persona=persona, temperature=1.3, max_tokens=77)}
    _, result = await run(router, refine(rounds=1, lenses=lenses))
    own = server.requests_for(M1, stage=1) + server.requests_for(M1, stage=REVISION)
    assert len(own) == 2 and all(persona in r.system for r in own)
    assert all(r.body["temperature"] == 1.3 and r.body["max_tokens"] == 77 for r in own)
    others = [r for r in server.requests if r not in own]
    assert others and not any(persona in " ".join(str(m["content"]) for m in r.messages) for r in others)
    assert "lens: “Argue the strongest case against" in to_markdown(result)
    assert to_document(result)["stage1"][0]["lens"]["temperature"] == 1.3


async def test_self_moa_samples_one_member_and_the_chairman_aggregates(server, router):
    script(server, scripts())
    _, result = await run(router, config(members=[M1], mode="self-moa", samples=6, sample_temperature=0.7))
    samples = server.requests_for(M1, stage=1)
    assert len(samples) == 6 and all(r.body["temperature"] == 0.7 for r in samples)
    assert {r.model for r in server.requests} == {M1, CHAIR} and not server.requests_for(stage=2)
    [chair] = server.requests_for(CHAIR, stage=3)
    assert chair.user.count(BEST) == 6 and SELF_MOA_NOTE in chair.user
    assert [a.model for a in result.answers] == [M1] * 6 and result.reviews == []
    assert self_moa_line(result.request.config) == f"6 samples of {M1}, aggregated by {CHAIR}"
    assert to_document(result)["metadata"]["self_moa"] == f"6 samples of {M1}, aggregated by {CHAIR}"


def test_self_moa_asks_the_standard_councils_calls_less_one():
    settings = Settings(_env_file=None)
    chosen = with_deliberation_mode(config(members=[M1, M2, M3], mode="self-moa"), settings, M2)
    assert (chosen.members, chosen.samples, chosen.sample_temperature) == ([M2], 6, 0.7)  # 3 + 3 + 1, less one
    sized = Settings(_env_file=None, COUNCIL_SELF_MOA_SAMPLES="4", COUNCIL_SELF_MOA_TEMPERATURE="1.1")
    assert with_deliberation_mode(config(mode="self-moa"), sized, M1).samples == 4
    assert with_deliberation_mode(config(mode="refine"), settings, None).rounds == 1
    assert with_deliberation_mode(config(mode="refine"), Settings(_env_file=None, COUNCIL_ROUNDS="3"), None).rounds == 3


def test_replies_are_read_tolerantly():
    assert read_reply("**KEEP:** mine is right.").kept
    assert read_reply("keep: it stands").reason == "it stands"
    reply = read_reply("REASON: B had the date.\n\nThe answer.")
    assert (reply.kept, reply.reason, reply.text) == (False, "B had the date.", "The answer.")
    assert read_reply("Just a new answer.").reason is None


# --------------------------------------------------------------------------- bad input, one line each


def test_a_lens_is_a_preset_or_a_bounded_persona():
    assert lens_of("Skeptic").persona == PRESETS["skeptic"]
    with pytest.raises(ValueError, match=r"^Unknown lens preset `skeptc`: choose one of skeptic, "):
        lens_of("skeptc")
    with pytest.raises(ValueError, match=r"^A persona has at most 400 characters \(this one has 600\)\.$"):
        lens_of("x" * 300 + " " + "y" * 299)


def test_a_seats_file_that_does_not_parse_names_the_line_and_the_reason(tmp_path):
    path = tmp_path / "seats.toml"
    path.write_text('[[seat]]\nmodel = "a"\n\n[[seat]]\nmodel = "b"\npersona = \n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"seats.toml line 6: Invalid value") as caught:
        read_seats_file(path)
    assert "\n" not in str(caught.value)
    with pytest.raises(ValueError, match=r"^f line 4: Unknown lens preset `skeptc`"):
        parse_seats('[[seat]]\nmodel = "a"\n\n[[seat]]\nmodel = "b"\npersona = "skeptc"\n', "f")
    with pytest.raises(ValueError, match=r"^f line 1: unknown key `persnoa`"):
        parse_seats('[[seat]]\nmodel = "a"\npersnoa = "x y"\n', "f")
    with pytest.raises(ValueError, match=r"^f line 1: `temperature` must be a number from 0 to 2$"):
        parse_seats('[[seat]]\nmodel = "a"\ntemperature = 7\n', "f")


def test_the_seats_file_gives_the_members_and_their_lenses(tmp_path):
    path = tmp_path / "seats.toml"
    path.write_text(
        '[[seat]]\nmodel = "a|a2"\npersona = "on-call"\nmax_tokens = 500\n\n[[seat]]\nmodel = "b"\n'
        'persona = "reason only from the data given"\ntemperature = 0.2\n',
        encoding="utf-8",
    )
    settings = Settings(_env_file=None, COUNCIL_SEATS_FILE=str(path))
    assert settings.default_members == ["a|a2", "b"] and settings.default_chairman == "a|a2"
    [a, b] = settings.council.seats
    assert (a.lens.preset, a.lens.max_tokens, b.lens.persona, b.lens.temperature) == (
        "on-call",
        500,
        "reason only from the data given",
        0.2,
    )


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("COUNCIL_ROUNDS", "9", "COUNCIL_ROUNDS: Input should be less than or equal to 5"),
        ("COUNCIL_ROUNDS", "0", "COUNCIL_ROUNDS: Input should be greater than or equal to 1"),
        ("COUNCIL_SEATS_FILE", "{bad}", "COUNCIL_SEATS_FILE: "),
    ],
)
def test_bad_settings_are_one_line(tmp_path, monkeypatch, variable, value, said):
    if value == "{bad}":
        bad = tmp_path / "seats.toml"
        bad.write_text("[[seat]\n", encoding="utf-8")
        value = str(bad)
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigurationError) as caught:
        load_settings(_env_file=None)
    message = str(caught.value)
    assert said in message and "\n" not in message
    if variable == "COUNCIL_SEATS_FILE":
        assert "line 1" in message


async def test_a_resumed_self_moa_council_asks_only_the_samples_it_lacks(server, router, tmp_path):
    script(server, scripts())
    storage = await Storage.open(f"sqlite:///{tmp_path}/steps.db")
    request = CouncilRequest(question="Q?", config=config(members=[M1], mode="self-moa", samples=5))
    await storage.councils.save_started(request)
    for n in (1, 2, 3):  # the journal kept three samples, each under its own seat
        await storage.jobs.save_answer(request.council_id, MemberAnswer(model=M1, seat=f"{M1}#{n}", text=BEST))
    checkpoint = await storage.jobs.checkpoint(request.council_id)
    await storage.close()
    assert len(checkpoint.answers) == 3
    events = [e async for e in run_council(request, router, None, checkpoint)]
    assert len(server.requests_for(M1, stage=1)) == 2 and len(events[-1].result.answers) == 5


async def test_self_moa_samples_the_channels_leader_once_it_has_enough_ballots(tmp_path):
    storage = await Storage.open(f"sqlite:///{tmp_path}/board.db")
    settings = Settings(_env_file=None)
    here = Origin(platform=Platform.SLACK, workspace_id="T1", channel_id="C1")
    members = ["m-a", "m-b|m-x", "m-c"]
    try:
        for n in range(3):  # m-b first on every ballot that ranks it: 2 ballots a council
            await storage.councils.save([make_result(council_id=f"c{n:015d}", order=("m-b", "m-a", "m-c"))])
        assert await self_moa_seat(settings, storage, here, members) == "m-a"  # 6 ballots: not enough
        for n in range(3, 5):
            await storage.councils.save([make_result(council_id=f"c{n:015d}", order=("m-b", "m-a", "m-c"))])
        assert await self_moa_seat(settings, storage, here, members) == "m-b|m-x"  # 10 ballots: its seat
        elsewhere = here.model_copy(update={"channel_id": "C2"})
        assert await self_moa_seat(settings, storage, elsewhere, members) == "m-a"
        chosen = Settings(_env_file=None, COUNCIL_SELF_MOA_MODEL="m-c")
        assert await self_moa_seat(chosen, storage, here, members) == "m-c"
    finally:
        await storage.close()


async def test_rounds_keep_the_quorum_grace_and_fallback_seats(server, router):
    # M3's revision hangs: once the quorum has revised, it gets the grace and keeps its answer.
    # The second seat's primary fails: its fallback M2 answered, and it is M2 that revises.
    script(server, scripts(revise={M2: f"REASON: {REASON}\n{REVISED}", M3: Hang()}, broken=Fail(401, "bad key")))
    seats = [M1, f"broken|{M2}", M3]
    _, result = await run(router, refine(members=seats, rounds=1, grace_s=0.3, grace_min_s=0.1, grace_factor=0.0))
    [revision_round] = result.rounds
    by_model = {r.model: r for r in revision_round.revisions}
    assert by_model[M2].moved and by_model[M2].seat == f"broken|{M2}"
    assert by_model[M3].error is not None and by_model[M3].text == OTHER and not by_model[M3].moved
    assert len(server.requests_for("broken", stage=1)) == 1 and not server.requests_for("broken", stage=REVISION)
    assert result.synthesis is not None and REVISED in server.requests_for(CHAIR, stage=3)[0].user


async def test_each_revision_is_a_step_of_a_durable_councils_journal(server, router, tmp_path):
    """A durable council's journal keeps each revision as it arrives; the checkpoint a worker resumes
    from holds them (round and seat), so a resumed round asks only the members still missing."""
    script(server, scripts())
    storage = await Storage.open(f"sqlite:///{tmp_path}/journal.db")
    try:
        request = CouncilRequest(question="What is the capital of Australia?", config=refine(rounds=1))
        await storage.councils.save_started(request)
        journal = StepJournal(storage.jobs, Redactor([]), request.council_id)
        async for event in run_council(request, router):
            await journal.record(event)
            if isinstance(event, RevisionFinished) and event.revision.model == M2:
                break  # the process stops after M2's revision arrived
        checkpoint = await storage.jobs.checkpoint(request.council_id)
    finally:
        await storage.close()
    assert len(checkpoint.answers) == 3 and M2 in [r.model for r in checkpoint.revisions]
    kept = {r.seat for r in checkpoint.revisions}
    server.requests.clear()
    events = [e async for e in run_council(request, router, None, checkpoint)]
    assert not server.requests_for(stage=1)
    assert sorted(r.model for r in server.requests_for(stage=REVISION)) == sorted({M1, M2, M3} - kept)
    assert [r.model for r in events[-1].result.rounds[0].revisions] == [M1, M2, M3]
