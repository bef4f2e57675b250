"""Chat front ends' background tasks, recognised so that one model answers them, never a council.

Open WebUI asks the chat's model for a title, tags and follow-up suggestions after each first
answer (and for search queries, autocompletion, ...): each is one user message that starts with
`### Task:`, sent with `stream: false`. Without this, one question in Open WebUI ran four
councils. The shape is the test, not Open WebUI's X-OpenWebUI-* headers: those are only sent
when its ENABLE_FORWARD_USER_INFO_HEADERS is on."""

from __future__ import annotations

from bot.api.openai_types import ChatRequest

TASK_PREFIX = "### Task:"


def is_front_end_task(chat: ChatRequest) -> bool:
    if chat.stream:
        return False
    asked = [m for m in chat.messages if m.role not in ("system", "developer")]
    return len(asked) == 1 and asked[0].role == "user" and asked[0].text.lstrip().startswith(TASK_PREFIX)
