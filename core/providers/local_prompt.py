"""Local models' prompts: the preset's persona first, a prompt cut to fit LOCAL_N_CTX (the
oldest turns go first, then the middle of the longest message, marked as cut), and the grammar
that makes a review end with a readable ranking."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence

from core.models import ChatMessage
from core.providers.base import BadResponseError
from core.providers.llama_runtime import LoadedModel
from core.providers.local_models import LocalModel
from core.shared.fences import RANKING_HEADER

_MESSAGE_OVERHEAD = 8  # template tokens around one message (role markers, separators)
_MIN_OUTPUT_TOKENS = 256  # output room kept before the prompt itself is cut
_MIN_KEEP_TOKENS = 64  # a message is never cut below this
_CUT_MARK = "\n\n[... part of this text was cut: too long for the local model's context window ...]\n\n"


def chat_messages(resolved: LocalModel, messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
    """The preset's persona goes first in the system text."""
    system_parts = [resolved.preset.persona] if resolved.preset.persona else []
    system_parts += [m.content for m in messages if m.role == "system"]
    turns = [{"role": m.role, "content": m.content} for m in messages if m.role != "system"]
    system = "\n\n".join(part.strip() for part in system_parts if part.strip())
    if not turns:
        turns = [{"role": "user", "content": system or "Hello."}]
        system = ""
    if not system:
        return turns
    return [{"role": "system", "content": system}, *turns]


def fit_context(
    llm: LoadedModel, chat: list[dict[str, str]], max_tokens: int, n_ctx: int, name: str
) -> tuple[list[dict[str, str]], int]:
    """Make prompt + output fit n_ctx: shrink the output budget to a floor, then the prompt."""
    sizes = [len(_tokens(llm, m["content"])) + _MESSAGE_OVERHEAD for m in chat]
    total = sum(sizes) + _MESSAGE_OVERHEAD  # BOS + generation prompt
    if total + max_tokens <= n_ctx:
        return chat, max_tokens
    floor = min(max_tokens, _MIN_OUTPUT_TOKENS)
    if total + floor <= n_ctx:
        return chat, n_ctx - total
    max_tokens = floor
    budget = n_ctx - max_tokens
    chat = list(chat)
    total = _drop_oldest_turns(chat, sizes, total, budget)
    total = _cut_longest(llm, chat, sizes, total, budget)
    if total > budget:
        raise BadResponseError(
            f"the prompt is too long for local:{name} (about {total} tokens, context window "
            f"{n_ctx} with {max_tokens} kept for the answer); raise LOCAL_N_CTX or shorten the question"
        )
    return chat, max_tokens


def _drop_oldest_turns(chat: list[dict[str, str]], sizes: list[int], total: int, budget: int) -> int:
    """Drop the oldest conversation turns (keep system text and the last message), in place,
    until the prompt fits; its new size."""
    while total > budget:
        droppable = [i for i, m in enumerate(chat[:-1]) if m["role"] != "system"]
        if not droppable:
            break
        i = droppable[0]
        total -= sizes[i]
        del chat[i], sizes[i]
    return total


def _cut_longest(llm: LoadedModel, chat: list[dict[str, str]], sizes: list[int], total: int, budget: int) -> int:
    """Cut the middle of the longest message, keeping its start and end, in place; the prompt's
    new size. Re-tokenising the cut text can cost a few tokens more than counted, so retry with
    a growing margin."""
    originals: dict[int, list[int]] = {}  # message index -> its tokens before any cut
    kept: dict[int, int] = {}  # message index -> tokens of the original kept so far
    mark = len(_tokens(llm, _CUT_MARK))
    slack = 8
    for _attempt in range(8):
        if total <= budget:
            break
        i = max(range(len(chat)), key=lambda k: sizes[k])
        toks = originals.setdefault(i, _tokens(llm, chat[i]["content"]))
        keep = kept.get(i, len(toks)) - (total - budget) - (0 if i in kept else mark) - slack
        if keep < _MIN_KEEP_TOKENS:
            break
        kept[i] = keep
        head, tail = toks[: keep // 2], toks[len(toks) - (keep - keep // 2) :]
        content = _detok(llm, head) + _CUT_MARK + _detok(llm, tail)
        chat[i] = {"role": chat[i]["role"], "content": content}
        new_size = len(_tokens(llm, content)) + _MESSAGE_OVERHEAD
        total += new_size - sizes[i]
        sizes[i] = new_size
        slack *= 2
    return total


def _tokens(llm: LoadedModel, text: str) -> list[int]:
    return llm.tokenize(text)


def _detok(llm: LoadedModel, toks: list[int]) -> str:
    return llm.detokenize(toks)


# A review's evaluation before its ranking, in characters: long enough to say something, short
# enough that the ranking fits in LOCAL_MAX_TOKENS.
_REVIEW_NOTE_CHARS = (20, 600)
_PERMUTATIONS_UP_TO = 5  # labels; beyond, each place is any label (the parser drops repeats)


@functools.lru_cache(maxsize=64)
def ranking_grammar(labels: tuple[str, ...]) -> str:
    """GBNF for a review: a short evaluation, then FINAL RANKING with every label once.

    Tiny models rarely end with a readable ranking on their own; the grammar fixes the format
    and leaves the judgement (which label goes where) to the model."""
    low, high = _REVIEW_NOTE_CHARS
    quoted = [f'"{label}"' for label in labels]
    if len(labels) <= _PERMUTATIONS_UP_TO:
        orders = itertools.permutations(quoted)
        items = " | ".join(
            " ".join(f'"{n}. Response " {label} "\\n"' for n, label in enumerate(order, 1)) for order in orders
        )
    else:
        any_label = "(" + " | ".join(quoted) + ")"
        items = " ".join(f'"{n}. Response " {any_label} "\\n"' for n in range(1, len(labels) + 1))
    return (
        f'root ::= note "\\n\\n{RANKING_HEADER}\\n" ranking\nnote ::= [^\\n<>]{{{low},{high}}}\nranking ::= {items}\n'
    )
