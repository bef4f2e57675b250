"""The inspect-ai task of one configuration in a `council eval` run.

Its dataset is the run's items not yet scored for that configuration; its solver is inspect's
`generate()` (self-consistency: k samples of one model in parallel, majority vote); its scorer
applies the run's rule (core/eval/scoring.py; `judge`: inspect's `model_graded_qa`) and hands
each sample to the run's sink the moment it is scored, which stores it: a killed run keeps
every answer scored before the kill, whatever inspect's log had flushed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig, Model, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, model_graded_qa, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from core.eval import scoring
from core.eval.dataset import EvalItem
from core.eval.scoring import ScorerName
from core.models.eval import EvalSample

SELF_CONSISTENCY_TEMPERATURE = 0.7  # samples of one model must differ for a vote to mean anything
Sink = Callable[[EvalSample], Awaitable[None]]


def build_task(
    name: str,
    items: Sequence[tuple[int, EvalItem]],
    scorer_name: ScorerName,
    sink: Sink,
    *,
    judge: Model | None = None,
    samples: int | None = None,
) -> Task:
    """`items`: (position in the dataset, item) still to score; `samples`: self-consistency's k."""
    dataset = MemoryDataset(
        [
            Sample(
                id=item.id,
                input=scoring.prompt(item, scorer_name),
                target=item.target,
                metadata={"position": position, "kind": item.kind, "choices": list(item.choices)},
            )
            for position, item in items
        ],
        name=name,
    )
    chosen: Solver = self_consistency(samples, scorer_name) if samples else generate()
    return Task(dataset=dataset, solver=chosen, scorer=stored_score(name, scorer_name, sink, judge), name=name)


@solver
def self_consistency(samples: int, scorer_name: str) -> Solver:
    """`samples` answers of the task's model at once; the answer most of them share wins (ties:
    the earliest sample). Its calls, tokens and cost are those of every sample."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        config = GenerateConfig(temperature=SELF_CONSISTENCY_TEMPERATURE)
        start = time.perf_counter()
        outputs: list[ModelOutput] = list(
            await asyncio.gather(*(model.generate(state.messages, config=config) for _ in range(samples)))
        )
        item = _item(state)
        winner = outputs[scoring.majority([o.completion for o in outputs], scorer_name, item)]  # type: ignore[arg-type]
        usage = sum((o.usage for o in outputs if o.usage is not None), ModelUsage())
        costs = [o.usage.total_cost for o in outputs if o.usage is not None and o.usage.total_cost is not None]
        usage.total_cost = sum(costs) if costs else None
        errors = [str((o.metadata or {}).get("error")) for o in outputs if (o.metadata or {}).get("error")]
        metadata = {
            "calls": sum(int((o.metadata or {}).get("calls", 1)) for o in outputs),
            "cost_usd": usage.total_cost,
            "latency_s": time.perf_counter() - start,
            "escalated": None,
            "error": errors[0] if len(errors) == len(outputs) else None,
        }
        state.output = winner.model_copy(update={"usage": usage, "metadata": metadata})
        state.messages.append(state.output.message)
        return state

    return solve


@scorer(metrics=[accuracy(), stderr()])
def stored_score(config: str, scorer_name: str, sink: Sink, judge: Model | None = None) -> Scorer:
    """The run's rule, then the sample stored through `sink` before the score is returned."""
    graded = model_graded_qa(model=judge) if scorer_name == "judge" else None

    async def score(state: TaskState, target: Target) -> Score:
        text = state.output.completion if state.output else ""
        item = _item(state)
        if graded is not None:
            verdict = await graded(state, target)
            correct = verdict is not None and verdict.value == CORRECT
        else:
            correct = _correct(scorer_name, text, item)
        await sink(_sample(config, state, text, correct))
        return Score(value=CORRECT if correct else INCORRECT, answer=scoring.final_answer(text), metadata=None)

    return score


def _correct(scorer_name: str, text: str, item: EvalItem) -> bool:
    if scorer_name == "numeric":
        return scoring.numeric_correct(text, item.target)
    if scorer_name == "choice":
        return scoring.choice_correct(text, item)
    return scoring.exact_correct(text, item.target)


def _item(state: TaskState) -> EvalItem:
    target = state.target.text
    return EvalItem(
        id=str(state.sample_id), input="", target=target, choices=tuple(state.metadata.get("choices") or ())
    )


def _sample(config: str, state: TaskState, text: str, correct: bool) -> EvalSample:
    output = state.output
    meta = (output.metadata if output else None) or {}
    usage = output.usage if output else None
    return EvalSample(
        config=config,
        item_id=str(state.sample_id),
        position=int(state.metadata["position"]),
        answer=text,
        correct=correct,
        calls=int(meta.get("calls", 1)),
        prompt_tokens=usage.input_tokens if usage else 0,
        completion_tokens=usage.output_tokens if usage else 0,
        cost_usd=meta.get("cost_usd"),
        latency_s=float(meta.get("latency_s") or (output.time if output and output.time else 0.0)),
        escalated=meta.get("escalated"),
        error=meta.get("error"),
        consensus=meta.get("consensus"),
        agreement_w=meta.get("agreement_w"),
    )
