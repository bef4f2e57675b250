"""What people see in a Discord thread: the ranking field is a list of entries (not one list item
holding them all), durations keep their tenths, and a quick council says it was quick and offers
no stage button that opens an empty stage."""

from __future__ import annotations

import re

from tests import test_discord_adapter
from tests.llm_server import ByStage, Reply
from tests.test_discord_adapter import answer_messages, council_option, wait_finished

env = test_discord_adapter.env  # the fixture


async def test_the_ranking_is_a_list_of_entries_and_the_duration_keeps_its_tenths(env, llm):
    fake = env.fake
    await fake.push_command("council", council_option("What is six times seven?"))
    await wait_finished(fake)
    [answer] = answer_messages(fake)
    embed = answer["embeds"][-1]
    [ranking] = [f["value"] for f in embed["fields"] if f["name"] == "Aggregate ranking"]
    entries = [line for line in ranking.splitlines() if re.match(r"\d+\. ", line)]
    assert len(entries) == 3 and " · 2. " not in ranking, ranking  # a line each, so Discord draws 3 items
    footer = embed["footer"]["text"]
    assert re.search(r" · \d+\.\d s", footer) and " 0s" not in footer, footer


async def test_a_quick_council_says_so_and_offers_only_stages_it_had(env, llm):
    fake = env.fake
    llm.script("alpha", ByStage(Reply("alpha says 42."), Reply("x"), Reply("It is 42.")))  # no verdict line
    await fake.push_command("council", council_option("quick: What is six times seven?"))
    await wait_finished(fake)
    [answer] = answer_messages(fake)
    shown = str(answer["embeds"])
    assert re.search(r"\bquick\b", shown, re.IGNORECASE), shown
    labels = [c.get("label") for row in answer.get("components", []) for c in row["components"]]
    council_id = answer["embeds"][-1]["footer"]["text"].split()[1]
    stored = await env.service.queries.get_result(council_id)
    assert stored.reviews == []  # the chairman wrote no verdict line: nothing was reviewed
    assert "Answers" in labels and "Reviews" not in labels and "Ranking" not in labels, labels
