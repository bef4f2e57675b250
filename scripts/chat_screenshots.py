# ruff: noqa: E501  (the client imitations are CSS and HTML, kept one rule a line)
"""Screenshots of council results as Slack and Discord show them, for docs/slack.md and docs/discord.md.

    .venv/bin/python scripts/chat_screenshots.py [--out docs/images]

Three councils (normal, degraded: a member failed, stand-in: the chairman failed) run for real
through the engine against scripted models (tests/llm_server.py's ScriptedLLMServer,
tests/factories.py's `run_council_to_end`). Each is turned into the payloads the bot posts by its
own code: Slack's chat.postMessage blocks (bot/slack/render.py); the streamed message's chunks,
from the council's events replayed through the stream's bookkeeping (bot/slack/stream.py's
StreamedContent), and chat.stopStream's blocks; Discord's embeds and buttons. The payloads are
drawn as HTML that imitates the clients (an emoji font helps: Debian's fonts-noto-color-emoji),
and Debian's headless Chromium (selenium and /usr/bin/chromedriver) takes the screenshots.
Nothing is fetched from anywhere.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from markdown_it import MarkdownIt  # noqa: E402

# --------------------------------------------------------------------------- Slack


def mrkdwn_html(text: str) -> str:
    """Slack mrkdwn as Slack draws it: ```code```, `code`, *bold*, _italic_, ~strike~, <url|text>, > quotes."""
    out: list[str] = []
    for i, part in enumerate(re.split(r"```\n?(.*?)\n?```", text, flags=re.S)):
        if i % 2:
            out.append(f'<pre class="code">{part}</pre>')  # already escaped by the renderer (&lt; &gt; &amp;)
            continue
        lines = []
        for line in part.split("\n"):
            quoted = line.startswith("&gt; ") or line == "&gt;"
            line = line[5:] if line.startswith("&gt; ") else "" if line == "&gt;" else line
            line = re.sub(r"`([^`]+)`", r"<code>\1</code>", line)
            line = re.sub(r"<(https?://[^|>]+)\|([^>]+)>", r'<a href="#">\2</a>', line)
            line = re.sub(r"<(https?://[^>]+)>", r'<a href="#">\1</a>', line)
            line = re.sub(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])", r"<b>\1</b>", line)
            line = re.sub(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])", r"<i>\1</i>", line)
            line = re.sub(r"~(?=\S)([^~\n]+?)(?<=\S)~", r"<s>\1</s>", line)
            line = re.sub(r":([a-z_]+):", lambda m: EMOJI.get(m.group(1), m.group(0)), line)
            lines.append(f'<span class="quote">{line}</span>' if quoted else line)
        out.append("<br>".join(lines))
    return "".join(out)


EMOJI = {
    "warning": "⚠️",
    "white_check_mark": "✅",
    "x": "❌",
    "information_source": "ℹ️",
    "page_facing_up": "📄",
    "mag": "🔎",
    "paperclip": "📎",
    "hourglass_flowing_sand": "⏳",
    "octagonal_sign": "🛑",
    "zap": "⚡",
}


def slack_blocks_html(blocks: list[dict[str, Any]]) -> str:
    parts = []
    for block in blocks:
        kind = block.get("type")
        if kind == "section":
            parts.append(f'<div class="section">{mrkdwn_html(block["text"]["text"])}</div>')
        elif kind == "context":
            texts = " ".join(mrkdwn_html(e.get("text", "")) for e in block.get("elements", []))
            parts.append(f'<div class="context">{texts}</div>')
        elif kind == "actions":
            buttons = "".join(
                f'<span class="button {e.get("style", "")}">{html.escape(e["text"]["text"])}</span>'
                for e in block.get("elements", [])
            )
            parts.append(f'<div class="actions">{buttons}</div>')
    return "".join(parts)


def slack_markdown_html(text: str) -> str:
    """A streamed message's text: standard Markdown, which Slack renders (tables too)."""
    return MarkdownIt("commonmark").enable("table").render(text)


def _task_note(task: dict[str, Any]) -> str:
    note = task.get("output") or task.get("details")
    return f' <span class="dim">— {html.escape(note)}</span>' if note else ""


def slack_task_html(tasks: list[dict[str, Any]], title: str | None) -> str:
    marks = {"complete": "✅", "error": "⛔", "in_progress": "⏳", "pending": "◻️"}
    rows = "".join(
        f'<li><span class="mark">{marks.get(t["status"], "")}</span> {html.escape(t["title"])}{_task_note(t)}</li>'
        for t in tasks
    )
    heading = f'<div class="plan-title">{html.escape(title)}</div>' if title else ""
    return f'<details class="plan" open><summary>{heading}</summary><ul>{rows}</ul></details>'


SLACK_CSS = """
body { margin: 0; background: #fff; font: 15px/1.46 -apple-system, "Segoe UI", "Helvetica Neue", Arial, sans-serif; color: #1d1c1d; }
.channel { width: 820px; padding: 12px 0 16px; }
.head { padding: 8px 20px; border-bottom: 1px solid #ddd; font-weight: 700; font-size: 16px; }
.msg { display: flex; padding: 8px 20px; }
.avatar { width: 36px; height: 36px; border-radius: 6px; background: #4a154b; color: #fff; font-weight: 700; display: flex; align-items: center; justify-content: center; margin-right: 8px; flex: none; }
.body { flex: 1; min-width: 0; }
.name { font-weight: 900; } .app { font-size: 10px; background: #ddd; border-radius: 3px; padding: 1px 3px; margin-left: 4px; color: #555; }
.time { color: #616061; font-size: 12px; margin-left: 6px; }
.section { margin: 4px 0; white-space: normal; overflow-wrap: anywhere; }
.context { color: #616061; font-size: 12.5px; margin: 4px 0; }
.actions { margin: 8px 0 4px; }
.button { display: inline-block; border: 1px solid #bbb; border-radius: 4px; padding: 3px 12px; margin-right: 8px; font-weight: 700; font-size: 13px; }
.button.danger { color: #e01e5a; } .button.primary { background: #007a5a; color: #fff; border-color: #007a5a; }
pre.code { background: #f8f8f8; border: 1px solid #ddd; border-radius: 4px; padding: 8px; font: 12px/1.5 Menlo, Consolas, monospace; white-space: pre-wrap; margin: 4px 0; }
code { background: #f6f6f6; border: 1px solid #e5e5e5; border-radius: 3px; color: #e01e5a; font: 12px Menlo, Consolas, monospace; padding: 0 2px; }
.quote { display: block; border-left: 4px solid #ddd; padding-left: 10px; }
a { color: #1264a3; text-decoration: none; }
.plan { border: 1px solid #ddd; border-radius: 8px; padding: 6px 12px; margin: 6px 0; font-size: 13.5px; }
.plan summary { list-style: none; font-weight: 700; } .plan ul { list-style: none; margin: 4px 0; padding: 0; }
.dim { color: #616061; } .stream p { margin: 4px 0; } .stream table { border-collapse: collapse; } .stream td, .stream th { border: 1px solid #ddd; padding: 2px 6px; }
.thread { color: #616061; font-size: 13px; padding: 0 20px 4px 64px; }
"""


def slack_page(title: str, question: str, messages: list[str]) -> str:
    asked = (
        '<div class="msg"><div class="avatar" style="background:#e8912d">A</div><div class="body">'
        '<span class="name">ada</span><span class="time">10:41</span>'
        f'<div class="section"><b>@LLM Council</b> {html.escape(question)}</div></div></div>'
        '<div class="thread">Thread</div>'
    )
    posts = "".join(
        '<div class="msg"><div class="avatar">LC</div><div class="body"><span class="name">LLM Council</span>'
        f'<span class="app">APP</span><span class="time">10:41</span>{message}</div></div>'
        for message in messages
    )
    return (
        f"<!doctype html><meta charset=utf-8><title>{html.escape(title)}</title><style>{SLACK_CSS}</style>"
        f'<div class="channel"><div class="head"># general</div>{asked}{posts}</div>'
    )


# --------------------------------------------------------------------------- Discord


def discord_markdown_html(text: str) -> str:
    return MarkdownIt("commonmark", {"html": False}).enable("table").render(text)


def discord_embed_html(embed: dict[str, Any]) -> str:
    color = f"#{embed.get('color', 0x5865F2):06x}"
    title = embed.get("title")
    parts = [f'<div class="e-title">{html.escape(title)}</div>' if title else ""]
    if embed.get("description"):
        parts.append(f'<div class="e-desc">{discord_markdown_html(embed["description"])}</div>')
    for field in embed.get("fields", []):
        parts.append(
            f'<div class="e-field"><div class="e-fname">{html.escape(field["name"])}</div>'
            f'<div class="e-fvalue">{discord_markdown_html(field["value"])}</div></div>'
        )
    if embed.get("footer"):
        parts.append(f'<div class="e-footer">{html.escape(embed["footer"]["text"])}</div>')
    return f'<div class="embed" style="border-left-color:{color}">{"".join(parts)}</div>'


def discord_components_html(components: list[dict[str, Any]]) -> str:
    rows = []
    for row in components:
        buttons = "".join(
            f'<span class="d-button">{html.escape(c.get("emoji", {}).get("name", "") + " " if c.get("emoji") else "")}'
            f"{html.escape(c.get('label') or '')}</span>"
            for c in row.get("components", [])
        )
        rows.append(f'<div class="d-row">{buttons}</div>')
    return "".join(rows)


DISCORD_CSS = """
body { margin: 0; background: #313338; color: #dbdee1; font: 16px/1.375 "gg sans", "Noto Sans", "Helvetica Neue", Arial, sans-serif; }
.channel { width: 820px; padding: 12px 0 16px; }
.head { padding: 8px 16px; border-bottom: 1px solid #1f2023; font-weight: 600; color: #f2f3f5; }
.msg { display: flex; padding: 8px 16px; }
.avatar { width: 40px; height: 40px; border-radius: 50%; background: #5865f2; color: #fff; display: flex; align-items: center; justify-content: center; margin-right: 16px; flex: none; font-weight: 700; }
.body { flex: 1; min-width: 0; } .name { color: #f2f3f5; font-weight: 500; } .bot { background: #5865f2; color: #fff; font-size: 10px; border-radius: 3px; padding: 1px 4px; margin-left: 4px; }
.time { color: #949ba4; font-size: 12px; margin-left: 6px; }
.embed { background: #2b2d31; border-left: 4px solid; border-radius: 4px; padding: 8px 16px 12px 12px; margin: 6px 0; max-width: 520px; font-size: 14px; }
.e-title { color: #f2f3f5; font-weight: 600; margin: 4px 0 6px; } .e-desc p, .e-fvalue p { margin: 2px 0 6px; }
.e-field { margin-top: 8px; } .e-fname { font-weight: 600; color: #f2f3f5; font-size: 14px; } .e-footer { color: #949ba4; font-size: 12px; margin-top: 8px; }
.embed pre { background: #1e1f22; border: 1px solid #1e1f22; border-radius: 4px; padding: 7px; font: 13px/1.4 Consolas, Menlo, monospace; white-space: pre-wrap; }
.embed code { background: #1e1f22; padding: 0 3px; border-radius: 3px; font: 13px Consolas, Menlo, monospace; }
.embed ul, .embed ol { margin: 2px 0 6px; padding-left: 22px; } .embed a { color: #00a8fc; }
.d-row { margin: 6px 0; } .d-button { display: inline-block; background: #4e5058; color: #fff; border-radius: 3px; padding: 3px 14px; margin-right: 8px; font-size: 14px; }
"""


def discord_page(title: str, question: str, messages: list[dict[str, Any]]) -> str:
    posts = "".join(
        '<div class="msg"><div class="avatar">LC</div><div class="body"><span class="name">LLM Council</span>'
        '<span class="bot">APP</span><span class="time">Today at 10:41</span>'
        + "".join(discord_embed_html(e) for e in m.get("embeds", []))
        + discord_components_html(m.get("components", []))
        + "</div></div>"
        for m in messages
    )
    head = f'<div class="head"># {html.escape(question[:60])}…</div>'
    return f"<!doctype html><meta charset=utf-8><title>{html.escape(title)}</title><style>{DISCORD_CSS}</style><div class=channel>{head}{posts}</div>"


# --------------------------------------------------------------------------- the councils and the shots


def shoot(pages: dict[str, str], out: Path) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars"):
        options.add_argument(flag)
    options.add_argument("--host-resolver-rules=MAP * ~NOTFOUND")  # the pages load nothing
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        with tempfile.TemporaryDirectory() as folder:
            for name, page in pages.items():
                path = Path(folder) / f"{name}.html"
                path.write_text(page, encoding="utf-8")
                small = {"width": 820, "height": 200, "deviceScaleFactor": 1, "mobile": False}
                driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", small)  # measured from short
                driver.get(path.as_uri())
                height = int(driver.execute_script("return document.documentElement.scrollHeight"))
                metrics = {"width": 820, "height": min(height, 4000), "deviceScaleFactor": 1, "mobile": False}
                driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
                driver.save_screenshot(str(out / f"{name}.png"))
                print(f"{out / name}.png ({height} px)")
    finally:
        driver.quit()


LINK = "https://council.example.com/c/5e1f0a2b3c4d5e6f"
QUESTION = "Should our five-person team run PostgreSQL or SQLite for the new internal tool?"
ANSWER = (
    "**SQLite**, until you need more than one machine writing at once.\n\n"
    "- One file, no server to run or back up separately; WAL mode lets readers and one writer work together.\n"
    "- Move to PostgreSQL when the tool runs on several hosts, or writes contend (`database is locked`).\n\n"
    "Keep the SQL portable (no SQLite-only types) so that the move is a dump and a restore."
)


async def councils() -> dict[str, Any]:
    """A normal, a degraded (a member fails) and a stand-in (the chairman fails) council, run by
    the engine against scripted models."""
    from core.models import CouncilConfig, CouncilRequest, Origin, Platform
    from tests.factories import run_council_to_end, scripted_router
    from tests.llm_server import ByStage, Fail, ScriptedLLMServer, council_member

    members = ["openai/gpt-5.1", "anthropic/claude-sonnet-4.5", "google/gemini-3-pro"]
    chairman = members[2]

    def answer_of(name: str) -> str:
        return f"{name.split('/')[-1]} recommends SQLite for now: one file, WAL mode, and a move later."

    results = {}
    async with ScriptedLLMServer() as server:
        for kind in ("normal", "degraded", "stand-in"):
            for name in members:
                server.script(name, council_member(answer_of(name), synthesis=ANSWER))
            if kind == "degraded":
                server.script(members[1], Fail(status=503, message="the provider is overloaded"))
            if kind == "stand-in":
                good = council_member(answer_of(chairman), synthesis=ANSWER)
                server.script(chairman, ByStage(good.stage1, good.stage2, Fail(status=500, message="internal error")))
            request = CouncilRequest(
                question=QUESTION,
                config=CouncilConfig(members=members, chairman=chairman),
                origin=Origin(
                    platform=Platform.SLACK, workspace_id="T1", channel_id="C1", user_id="U1", user_name="ada"
                ),
            )
            router = scripted_router(server, LLM_MAX_RETRIES="0")
            try:
                results[kind] = await run_council_to_end(router, request)
            finally:
                await router.aclose()
    return results


def slack_messages(council: Any, streamed: bool) -> list[str]:
    """The Slack payloads of one council: without streaming, the chat.postMessage blocks; streamed,
    the chunks the stream sends (its events replayed through the stream's own bookkeeping) and
    chat.stopStream's blocks, drawn as one message."""
    from bot.progress import CouncilProgress
    from bot.slack import render, stream_render
    from bot.slack.stream import StreamedContent

    events, result = council
    if not streamed:
        return [slack_blocks_html(m["blocks"]) for m in render.result_messages(result, link=LINK)]
    shown, progress = StreamedContent(), CouncilProgress(result.council_id)
    sent: list[dict[str, Any]] = [{"type": "plan_update", "title": stream_render.stream_title(None)}]
    for event in events:
        progress.apply(event)
        chunks, commit = shown.pending(progress, final=False)
        commit()
        sent += chunks
    text = result.synthesis.text if result.synthesis is not None else None
    chunks, commit, attached = shown.closing(progress, result, text)
    commit()
    sent += chunks
    tasks: dict[str, dict[str, Any]] = {}
    for chunk in sent:
        if chunk["type"] == "task_update":
            tasks[chunk["id"]] = chunk
    title = [c["title"] for c in sent if c["type"] == "plan_update"][-1]
    streamed_text = "".join(c["text"] for c in sent if c["type"] == "markdown_text")
    blocks = stream_render.stream_final_blocks(result, attached=attached, said_first=shown.opened, link=LINK)
    return [
        slack_task_html(list(tasks.values()), title)
        + f'<div class="stream">{slack_markdown_html(streamed_text)}</div>'
        + slack_blocks_html(blocks)
    ]


def discord_messages(council: Any) -> list[dict[str, Any]]:
    from bot.discord import render

    _, result = council
    out = []
    for message in render.result_messages(result, link=LINK):
        embeds = [e.to_dict() for e in message.get("embeds", [])]
        view = message.get("view")
        components = view.to_components() if view is not None else []
        out.append({"embeds": embeds, "components": components})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    args = parser.parse_args()
    results = asyncio.run(councils())
    pages = {}
    for kind, council in results.items():
        question = council[1].request.question
        pages[f"slack-{kind}"] = slack_page(kind, question, slack_messages(council, streamed=True))
        pages[f"slack-{kind}-no-stream"] = slack_page(kind, question, slack_messages(council, streamed=False))
        pages[f"discord-{kind}"] = discord_page(kind, question, discord_messages(council))
    args.out.mkdir(parents=True, exist_ok=True)
    shoot(pages, args.out)


if __name__ == "__main__":
    main()
