"""`council usage --tenant`, `council budget`, `council purge` and `council rotate-secret`, as subprocesses."""

from __future__ import annotations

from cryptography.fernet import Fernet

from core.models import Actor, Origin, Platform
from core.service import CouncilService
from tests.conftest import make_settings
from tests.test_cli import council

T2 = Origin(platform=Platform.SLACK, workspace_id="T2", channel_id="C2", user_id="U1")
T1 = Origin(platform=Platform.SLACK, workspace_id="T1", channel_id="C1", user_id="U1")


async def test_usage_budget_purge_and_rotation(tmp_path, llm):
    first = Fernet.generate_key().decode()
    env = {"COUNCIL_SECRET_KEY": first}
    settings = make_settings(llm, tmp_path, DATABASE_URL=f"sqlite:///{tmp_path}/cli.db", COUNCIL_SECRET_KEY=first)
    async with await CouncilService.open(settings) as service:
        await service.ask("What is six times seven?", T2)
        await service.ask("And eight times five?", T1)
        await service.tenants.keys.save(
            Actor(user_id="U-admin", is_platform_admin=True), T2, "test-key-for-t2-abcd", base_url=llm.base_url
        )

    code, out, err = await council(tmp_path, llm, "usage", "--tenant", "T2", extra_env=env)
    assert code == 0, err
    assert "slack:T2" in out and "daily budget none" in out and "total: 1 council," in out

    code, out, _ = await council(tmp_path, llm, "budget", "--tenant", "slack:T2", "0", extra_env=env)
    assert code == 0 and "daily budget $0.00" in out
    code, out, _ = await council(tmp_path, llm, "budget", "--tenant", "T2", "lots", extra_env=env)
    assert code == 2 and "Cannot read the budget" in out + _

    code, out, err = await council(tmp_path, llm, "purge", "--workspace", "T2", extra_env=env)
    assert code == 2 and "--yes" in err  # no terminal to confirm on: nothing deleted
    code, out, err = await council(tmp_path, llm, "rotate-secret", extra_env={"COUNCIL_SECRET_KEY": first})
    assert code == 0 and "re-encrypted 1 stored secret" in out, err

    code, out, err = await council(tmp_path, llm, "purge", "--workspace", "T2", "--yes", extra_env=env)
    assert code == 0, err
    assert "purged slack:T2: 1 council(s)" in out and "1 key(s)" in out

    async with await CouncilService.open(settings) as service:
        left = await service.queries.history(scope="all", limit=10)
        assert [c.question for c in left] == ["And eight times five?"]
        audit = await service.storage.channels.audit_log("slack:T2")
        assert [e.action for e in audit][:1] == ["purge"] and audit[0].actor_id == "cli"
