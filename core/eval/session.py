"""`service.evals`: a `council eval` run from start (or where it stopped) to its report.

A run is identified by its fingerprint: the dataset's items, the configurations, the scorer (and
judge) and the configured seats and chairman. Asking the same again continues the newest
unfinished run with that fingerprint: each configuration is asked only the items it has no
stored sample for. Configurations run one after the other in `configs.chosen` order, each as one
inspect-ai eval (its log in the run's log directory, for `inspect view`), `--concurrency`
samples in flight.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from core.admission import measured
from core.errors import ConfigurationError, CouncilError
from core.eval import baselines, configs, dataset, estimate, report, scoring
from core.eval.answering import Answerer
from core.eval.configs import ConfigSpec
from core.models import CouncilMode, seats
from core.models.eval import (
    EvalPlan,
    EvalProgress,
    EvalReport,
    EvalRequest,
    EvalRunSummary,
    EvalSample,
    EvalStart,
    Recommendation,
)
from core.paths import APP_NAME
from core.providers.router import ProviderRouter
from core.settings import Settings
from core.shared.redact import Redactor
from core.storage import Storage

if TYPE_CHECKING:
    from inspect_ai.model import Model

    from core.admission.admit import Admission

Progress = Callable[[EvalProgress], None]


class EvalFailed(CouncilError):
    """A configuration could not be evaluated (inspect-ai reported an error for it)."""


@dataclass
class _Prepared:
    data: dataset.Dataset
    specs: list[ConfigSpec]
    plan: EvalPlan
    fingerprint: str
    run_id: str | None
    done: dict[str, set[str]] = field(default_factory=dict)

    def pending(self, spec: ConfigSpec) -> list[tuple[int, dataset.EvalItem]]:
        stored = self.done.get(spec.name, set())
        return [(position, item) for position, item in enumerate(self.data.items) if item.id not in stored]


class CouncilEvals:
    def __init__(
        self, settings: Settings, storage: Storage, router: ProviderRouter, admission: Admission, redact: Redactor
    ) -> None:
        self.settings = settings
        self.storage = storage

        async def operator_config(mode: str):  # type: ignore[no-untyped-def]
            return await admission.operator_config(cast(CouncilMode, mode))

        self.answerer = Answerer(settings, router, operator_config, redact)

    async def history(self, limit: int = 20) -> list[EvalRunSummary]:
        return await self.storage.evals.history(limit)

    async def recommend(self) -> Recommendation:
        """What `best` would run now for the configured line-up (core/admission/measured.py)."""
        standard = await self.answerer.config_for("standard")
        lineup = await measured.lineup_eval(self.storage, standard.members, standard.chairman)
        strategy = measured.choose(lineup)
        rows = [r for r in lineup.report.configs if measured.runnable(r.name)] if lineup.report and strategy.run else []
        return Recommendation(strategy=strategy, configs=rows)

    async def prepare(self, request: EvalRequest) -> EvalStart:
        """What running `request` would do now: the run it continues (or a new one), the samples
        left, and their estimated calls and cost. Bad input: ConfigurationError, one line."""
        prepared = await self._prepare(request)
        pending = {spec: len(prepared.pending(spec)) for spec in prepared.specs}
        guess = estimate.estimate(
            self.settings,
            pending,
            prepared.plan.members,
            prepared.plan.chairman,
            self_consistency_samples=prepared.plan.self_consistency_samples,
            self_moa_samples=prepared.plan.self_moa_samples,
            judge=prepared.plan.judge,
        )
        return EvalStart(
            run_id=prepared.run_id,
            dataset=prepared.data.name,
            items=len(prepared.data.items),
            configs=[spec.name for spec in prepared.specs],
            scorer=prepared.plan.scorer,
            stored=sum(len(ids) for ids in prepared.done.values()),
            pending=sum(pending.values()),
            calls=guess.calls,
            cost_usd=guess.cost_usd,
            unpriced=guess.unpriced,
            log_dir=prepared.plan.log_dir or "",
        )

    async def run(self, request: EvalRequest, progress: Progress | None = None) -> EvalReport:
        """Run (or continue) the evaluation and return its report; every sample is stored as it
        is scored, so an interruption loses only the samples in flight."""
        prepared = await self._prepare(request)
        evals = self.storage.evals
        if prepared.run_id is None:
            prepared.run_id = await evals.create(
                prepared.fingerprint,
                prepared.data.name,
                len(prepared.data.items),
                [s.name for s in prepared.specs],
                prepared.plan,
            )
        run_id = prepared.run_id
        for spec in prepared.specs:
            await self._run_config(prepared, run_id, spec, progress)
        result = await self.report(run_id, prepared)
        if result.complete:
            await evals.finish(run_id, result.model_dump_json())
        return result

    async def report(self, run_id: str, prepared: _Prepared) -> EvalReport:
        samples = await self.storage.evals.samples(run_id)
        plan = prepared.plan
        sc = (
            f"{plan.self_consistency_model} × {plan.self_consistency_samples}"
            if plan.self_consistency_samples
            else None
        )
        moa = f"{plan.self_moa_model} × {plan.self_moa_samples}" if plan.self_moa_samples else None
        items = {item.id: item for item in prepared.data.items}
        scorer = cast(scoring.ScorerName, plan.scorer)

        def vote_key(sample: EvalSample) -> str | None:
            item = items.get(sample.item_id)
            return scoring.vote_key(sample.answer, scorer, item) if item is not None else None

        return report.build(
            run_id,
            prepared.data.name,
            [s.name for s in prepared.specs],
            samples,
            len(prepared.data.items),
            vote_key=vote_key,
            scorer=plan.scorer,
            self_consistency=sc,
            self_moa=moa,
            log_dir=plan.log_dir,
        )

    # ------------------------------------------------------------------ one configuration

    async def _run_config(self, prepared: _Prepared, run_id: str, spec: ConfigSpec, progress: Progress | None) -> None:
        pending = prepared.pending(spec)
        if not pending:
            return
        from inspect_ai import eval_async

        from core.eval.tasks import build_task

        _quiet_inspect()

        plan = prepared.plan
        model_name, samples, settled = await self._model_of(prepared, run_id, spec)
        concurrency = plan.concurrency
        model = _model(model_name, self.answerer, concurrency, settled)
        judge = _model(f"member:{plan.judge}", self.answerer, concurrency) if plan.judge else None
        started, done = time.monotonic(), 0

        async def sink(sample: EvalSample) -> None:
            nonlocal done
            await self.storage.evals.record(run_id, sample)
            prepared.done.setdefault(spec.name, set()).add(sample.item_id)
            done += 1
            if progress is not None:
                progress(
                    EvalProgress(config=spec.name, done=done, total=len(pending), elapsed_s=time.monotonic() - started)
                )

        if progress is not None:
            progress(EvalProgress(config=spec.name, done=0, total=len(pending), elapsed_s=0.0))
        task = build_task(spec.name, pending, cast(scoring.ScorerName, plan.scorer), sink, judge=judge, samples=samples)
        logs = await eval_async(
            task,
            model=model,
            log_dir=plan.log_dir,
            max_samples=concurrency,
            max_tasks=1,
            score_display=False,
        )
        for log in logs:
            if log.status != "success":
                cause = log.error.message if log.error else log.status
                raise EvalFailed(f"{spec.name}: the evaluation stopped ({_one_line(cause)}); run again to continue")

    async def _model_of(
        self, prepared: _Prepared, run_id: str, spec: ConfigSpec
    ) -> tuple[str, int | None, dict[str, object]]:
        """(the inspect model a configuration asks, self-consistency's k, what the run settled for
        it): a baseline's model and k are settled first."""
        plan = prepared.plan
        if spec.kind == "self-consistency":
            await self._settle(prepared, run_id, "self-consistency")
            return f"member:{plan.self_consistency_model}", plan.self_consistency_samples, {}
        if spec.kind == "self-moa":
            await self._settle(prepared, run_id, "self-moa")
            return spec.name, None, {"model": plan.self_moa_model, "samples": plan.self_moa_samples}
        return spec.name, None, {}

    async def _settle(self, prepared: _Prepared, run_id: str, kind: baselines.Baseline) -> None:
        """Self-consistency's or Self-MoA's model and k (core/eval/baselines.py), once per run."""
        if baselines.settled(prepared.plan, kind):
            return
        baselines.settle(prepared.plan, prepared.specs, await self.storage.evals.samples(run_id), kind)
        await self.storage.evals.save_plan(run_id, prepared.plan)

    # ------------------------------------------------------------------ preparing

    async def _prepare(self, request: EvalRequest) -> _Prepared:
        data = _dataset(request)
        standard = await self.answerer.config_for("standard")
        specs = configs.chosen(request.configs, standard.members)
        scorer = _scorer(request, data)
        judge = (request.judge or seats.primary(standard.chairman)) if scorer == "judge" else None
        if request.judge and scorer != "judge":
            raise ConfigurationError("--judge grades with --scorer judge only")
        if request.concurrency < 1:
            raise ConfigurationError("--concurrency must be at least 1")
        await baselines.require_known(self.answerer.router, specs)
        fingerprint = _fingerprint(data, specs, scorer, judge, standard.members, standard.chairman)
        evals = self.storage.evals
        if request.new:
            await evals.abandon(fingerprint)
        found = None if request.new else await evals.unfinished(fingerprint)
        if found is not None:
            run_id, plan = found
            plan.concurrency = request.concurrency  # the pace may change between sittings
            done: dict[str, set[str]] = {}
            for sample in await evals.samples(run_id):
                done.setdefault(sample.config, set()).add(sample.item_id)
            return _Prepared(data, specs, plan, fingerprint, run_id, done)
        plan = EvalPlan(
            members=standard.members,
            chairman=standard.chairman,
            scorer=scorer,
            judge=judge,
            concurrency=request.concurrency,
            log_dir=request.log_dir or str(default_log_dir()),
        )
        return _Prepared(data, specs, plan, fingerprint, None)


def default_log_dir() -> Path:
    """inspect-ai's logs of `council eval` runs: beside the default database, in the user data directory."""
    from platformdirs import user_data_path

    return user_data_path(APP_NAME, appauthor=False) / "eval-logs"


def _model(name: str, answerer: Answerer, concurrency: int, settled: dict[str, object] | None = None) -> Model:
    """The inspect-ai model of a configuration, answering through this run's `answerer`; `settled`:
    what the run chose for it (Self-MoA's model and k)."""
    from inspect_ai.model import GenerateConfig, get_model

    import core.eval.registry  # noqa: F401 - registers `council` without relying on the installed entry point

    # Not memoized: the model carries this service's answerer, which inspect cannot key on.
    return get_model(
        f"council/{name}",
        config=GenerateConfig(max_connections=concurrency),
        memoize=False,
        answerer=answerer,
        connections=concurrency,
        settled=settled or {},
    )


def _quiet_inspect() -> None:
    """Progress is ours (one line per configuration, with its ETA): inspect's display would print
    its own panels between them. `eval()` takes `display="none"`; `eval_async` (we run inside the
    service's event loop) has no such argument and sets "plain" unless a display type is set."""
    from inspect_ai.util._display import init_display_type

    init_display_type("none")


def _dataset(request: EvalRequest) -> dataset.Dataset:
    if request.limit is not None and request.limit < 1:
        raise ConfigurationError("--limit must be at least 1")
    if request.dataset:
        data = dataset.from_file(request.dataset)
    else:
        size = request.size or dataset.BUNDLED_SIZE
        if size < 1:
            raise ConfigurationError("--size must be at least 1")
        data = dataset.bundled(request.seed if request.seed is not None else dataset.BUNDLED_SEED, size)
    return data.first(request.limit)


def _scorer(request: EvalRequest, data: dataset.Dataset) -> str:
    if request.scorer is None:
        return scoring.default_scorer(data.items)
    if request.scorer not in scoring.SCORERS:
        raise ConfigurationError(f"--scorer must be one of {', '.join(scoring.SCORERS)} (got {request.scorer!r})")
    if request.scorer == "choice" and not all(item.choices for item in data.items):
        raise ConfigurationError("--scorer choice needs choices on every item of the dataset")
    return request.scorer


def _fingerprint(
    data: dataset.Dataset,
    specs: Sequence[ConfigSpec],
    scorer: str,
    judge: str | None,
    members: Sequence[str],
    chairman: str,
) -> str:
    payload = {
        "dataset": data.fingerprint(),
        "configs": [s.name for s in specs],
        "scorer": scorer,
        "judge": judge,
        "members": list(members),
        "chairman": chairman,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _one_line(text: str) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return lines[-1][:300] if lines else "unknown error"
