"""The classic three-stage llm-council algorithm as one small script: the yardstick that
bench/bench_cli_startup.py compares the whole `council ask` process with.

It does what the original web app's backend does per question and nothing else: every member
answers in parallel, every member ranks the anonymised answers in parallel (a "FINAL RANKING:"
list, parsed with a regular expression, averaged), the chairman writes the final answer, and
the result is printed as JSON. No storage, no limits, no streaming, no retries.

    python bench/classic_council.py --base-url http://127.0.0.1:PORT/v1 \
        --members alpha,beta,gamma,delta --chairman alpha "Why is the sky blue?"
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import string

import httpx


async def ask(client: httpx.AsyncClient, model: str, messages: list[dict[str, str]]) -> str:
    response = await client.post("/chat/completions", json={"model": model, "messages": messages})
    response.raise_for_status()
    return response.json()["choices"][0]["message"]["content"]


async def stage1(client: httpx.AsyncClient, members: list[str], question: str) -> dict[str, str]:
    replies = await asyncio.gather(*(ask(client, m, [{"role": "user", "content": question}]) for m in members))
    return dict(zip(members, replies))


def ranking_prompt(question: str, labelled: dict[str, str]) -> str:
    answers = "\n\n".join(f"Response {label}:\n{text}" for label, text in labelled.items())
    return (
        f"Question: {question}\n\n{answers}\n\nEvaluate each response, then end with\n"
        "FINAL RANKING:\n1. Response X\n2. Response Y\n..."
    )


def parse_ranking(text: str) -> list[str]:
    tail = text.split("FINAL RANKING:")[-1]
    return re.findall(r"Response ([A-Z])", tail)


async def stage2(
    client: httpx.AsyncClient, members: list[str], question: str, answers: dict[str, str]
) -> tuple[dict[str, str], dict[str, float]]:
    label_of = dict(zip(answers, string.ascii_uppercase))
    prompt = ranking_prompt(question, {label_of[m]: text for m, text in answers.items()})
    reviews = await asyncio.gather(*(ask(client, m, [{"role": "user", "content": prompt}]) for m in members))
    positions: dict[str, list[int]] = {m: [] for m in answers}
    model_of = {label: m for m, label in label_of.items()}
    for review in reviews:
        for place, label in enumerate(parse_ranking(review), 1):
            if label in model_of:
                positions[model_of[label]].append(place)
    average = {m: sum(p) / len(p) for m, p in positions.items() if p}
    return dict(zip(members, reviews)), average


async def stage3(client: httpx.AsyncClient, chairman: str, question: str, answers: dict[str, str]) -> str:
    material = "\n\n".join(f"Model: {m}\n{text}" for m, text in answers.items())
    messages = [
        {"role": "system", "content": "You are the chairman of an LLM council."},
        {"role": "user", "content": f"Question: {question}\n\n{material}\n\nWrite the council's final answer."},
    ]
    return await ask(client, chairman, messages)


async def main() -> None:
    parser = argparse.ArgumentParser(description="The classic llm-council algorithm, once.")
    parser.add_argument("question")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--members", required=True)
    parser.add_argument("--chairman", required=True)
    args = parser.parse_args()
    members = args.members.split(",")
    async with httpx.AsyncClient(base_url=args.base_url, timeout=120) as client:
        answers = await stage1(client, members, args.question)
        reviews, average = await stage2(client, members, args.question, answers)
        final = await stage3(client, args.chairman, args.question, answers)
    print(json.dumps({"stage1": answers, "stage2": reviews, "aggregate": average, "stage3": final}))


if __name__ == "__main__":
    asyncio.run(main())
