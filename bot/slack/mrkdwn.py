"""Model and user text as Slack mrkdwn: `& < >` escaped the way Slack asks, Markdown turned into
Slack's dialect, and `neutralize_slack` applied last, so no text can ping `@channel` or a user."""

from __future__ import annotations

import re

from bot.render_text import clip, neutralize_slack

FALLBACK_TEXT_MAX = 300  # the notification text of a message with blocks


_QUOTE_MARK = re.compile(r"^\s*>(?= |$)")


def escape(text: str) -> str:
    """Slack's three control characters, escaped as its docs ask (a `>` opening a line stays a quote)."""
    out = []
    for line in text.replace("&", "&amp;").replace("<", "&lt;").split("\n"):
        mark = _QUOTE_MARK.match(line)
        keep = mark.end() if mark else 0
        out.append(line[:keep] + line[keep:].replace(">", "&gt;"))
    return "\n".join(out)


def escape_code(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def plain(text: str | None) -> str:
    """User or model text shown as is (no Markdown conversion), harmless in Slack."""
    return neutralize_slack(escape(text or ""))


_CODE_SPAN = re.compile(r"(`[^`\n]+`)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)[*+-]\s+(?=\S)")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^\s()<>|]+)\)")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
_ITALIC = re.compile(r"(?<![*\w])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![*\w])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_FENCE = re.compile(r"```[^\n`]*\n?[\s\S]*?(?:```|\Z)")
_BOLD_MARK = "\x00"


def _inline(segment: str) -> str:
    """Markdown emphasis and links in text outside code, already escaped."""
    segment = _LINK.sub(lambda m: f"<{m.group(2)}|{m.group(1)}>", segment)
    segment = _BOLD.sub(lambda m: _BOLD_MARK + (m.group(1) or m.group(2)) + _BOLD_MARK, segment)
    segment = _ITALIC.sub(r"_\1_", segment)
    segment = _STRIKE.sub(r"~\1~", segment)
    return segment.replace(_BOLD_MARK, "*")


def _prose(text: str) -> str:
    lines = []
    for line in escape(text).split("\n"):
        heading = _HEADING.match(line)
        if heading:
            title = heading.group(1).replace("**", "").replace("__", "")
            lines.append(f"*{title}*" if title else "")
            continue
        if _RULE.match(line):
            lines.append("──────────")
            continue
        bullet = _BULLET.match(line)
        if bullet:
            line = bullet.group(1) + "• " + line[bullet.end() :]
        parts = _CODE_SPAN.split(line)
        lines.append("".join(p if p.startswith("`") and p.endswith("`") and len(p) > 1 else _inline(p) for p in parts))
    return "\n".join(lines)


def mrkdwn(text: str | None) -> str:
    """Model Markdown as Slack mrkdwn: bold, italics, headings, bullets, links, code fences.

    Escapes `& < >`, drops code-fence language hints (Slack shows them as text), closes an
    unclosed fence (a streaming tail), and finally neutralises pings.
    """
    text = text or ""
    out: list[str] = []
    pos = 0
    for fence in _FENCE.finditer(text):
        out.append(_prose(text[pos : fence.start()]))
        block = fence.group(0)
        first_newline = block.find("\n")
        body = block[first_newline + 1 :] if first_newline != -1 else block[3:]
        if body.endswith("```"):
            body = body[:-3]
        body = body.rstrip("\n")
        out.append("```\n" + escape_code(body) + "\n```")
        pos = fence.end()
    out.append(_prose(text[pos:]))
    return neutralize_slack("".join(out))


def fallback(text: str) -> str:
    """The notification text of a message whose content is in its blocks."""
    return clip(" ".join(text.split()), FALLBACK_TEXT_MAX)


def slack_unescape(text: str) -> str:
    """Slack message/command text as the person typed it: entities decoded, links bare."""
    text = re.sub(r"<((?:https?|mailto):[^|>]+)(?:\|[^>]*)?>", r"\1", text or "")
    text = re.sub(r"<#[A-Z0-9]+\|([^>]+)>", r"#\1", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def strip_mention(text: str, bot_user_id: str | None) -> str:
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>", " ", text)
    return text.strip()
