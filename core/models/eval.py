"""The typed values of `council eval` that cross into the CLI: stored samples, runs, the report."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from core.models.strategy import Strategy


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class EvalSample(_Model):
    """One configuration's scored answer to one item, as stored the moment it was scored."""

    config: str
    item_id: str
    position: int  # the item's place in the dataset (pairs samples across configurations)
    answer: str
    correct: bool
    calls: int
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    latency_s: float = 0.0
    escalated: bool | None = None
    error: str | None = None
    # A council's consensus on this item: the rubric consensus (0-100) and Kendall's W (0-1) of
    # its ballots; None for one model alone, or when its reviews gave none.
    consensus: float | None = None
    agreement_w: float | None = None


class EvalPlan(_Model):
    """What a run settled once, so that a resumed run asks exactly what the first one did."""

    members: list[str]
    chairman: str
    scorer: str
    judge: str | None = None
    concurrency: int = 4
    self_consistency_model: str | None = None
    self_consistency_samples: int | None = None
    self_moa_model: str | None = None
    self_moa_samples: int | None = None  # k: its calls are k samples and one aggregation
    log_dir: str | None = None


TOKEN_SLACK = 1.10  # a configuration's tokens per question beyond standard's × this are flagged


class ConfigReport(_Model):
    """One configuration's figures; `tokens` and `cost_usd` are per question (means), like
    `mean_calls`; `p_value` is McNemar's exact test against the best single member."""

    name: str
    accuracy: float
    ci_low: float
    ci_high: float
    mean_calls: float
    tokens: float
    cost_usd: float | None
    latency_p50_s: float | None
    latency_p95_s: float | None
    p_value: float | None
    escalated: int | None
    # Equal compute is in calls and tokens: the share of tokens per question beyond standard's, when
    # over TOKEN_SLACK (0.56: "tokens +56% over standard"); None within it, for standard itself, or
    # without a standard row.
    tokens_over_standard: float | None = None
    # not in the JSON's documented shape: shown in the table
    samples: int = Field(0, exclude=True)
    correct: int = Field(0, exclude=True)
    errors: int = Field(0, exclude=True)
    versus: str | None = Field(None, exclude=True)  # the member p_value compares with
    wins: int = Field(0, exclude=True)  # items this one got right and `versus` wrong
    losses: int = Field(0, exclude=True)


class RedundantSeat(_Model):
    """The seat whose removal lowers n_eff least, and the majority vote of the members' stored
    answers with and without it on the same items (the run holds no council without it)."""

    seat: str
    n_eff_without: float
    vote_accuracy: float | None  # majority of every member's answer
    vote_accuracy_without: float | None  # majority of the other members' answers


class EffectiveVotes(_Model):
    """How many independent votes the members are worth (core/eval/independence.py)."""

    members: int
    items: int  # the items every member answered
    mean_correlation: float | None  # ρ̄: the mean pairwise phi of their correctness
    n_eff: float | None  # n / (1 + (n − 1) ρ̄)
    most_redundant: RedundantSeat | None = None


class ErrorCorrelation(_Model):
    """phi[i][j]: Pearson's phi of members[i]'s and members[j]'s correctness (None: one is constant)."""

    members: list[str]
    phi: list[list[float | None]]


class ConsensusBand(_Model):
    """The council's accuracy on the items whose consensus fell in [low, high) (100 included in the last)."""

    low: int
    high: int
    items: int
    accuracy: float | None  # the council's, on those items
    best_member_accuracy: float | None  # the best member's, on the same items


class ConsensusReport(_Model):
    """A council configuration's accuracy by consensus band (core/eval/doubt.py), for the rubric
    consensus and for Kendall's W (×100), and the threshold under which it was unsure: below it
    the council was less accurate than its best member (0: never)."""

    config: str
    measure: str  # what the threshold is measured on: "rubric" or "kendall_w"
    rubric: list[ConsensusBand] = Field(default_factory=list)
    kendall_w: list[ConsensusBand] = Field(default_factory=list)
    unsure_below: int = 0
    unsure_items: int = 0  # items under the threshold
    unsure_accuracy: float | None = None  # the council's accuracy on them
    versus: str | None = None  # the best member it was compared with


class EvalReport(_Model):
    run: str
    dataset: str
    configs: list[ConfigReport]
    effective_votes: EffectiveVotes | None = None
    error_correlation: ErrorCorrelation | None = None
    consensus: list[ConsensusReport] = Field(default_factory=list)
    scorer: str = Field("", exclude=True)
    items: int = Field(0, exclude=True)
    complete: bool = Field(True, exclude=True)
    self_consistency: str | None = Field(None, exclude=True)  # "model × k"
    self_moa: str | None = Field(None, exclude=True)  # "model × k"
    log_dir: str | None = Field(None, exclude=True)


class Recommendation(_Model):
    """`council eval --recommend`: the strategy `best` runs now for the configured line-up, and the
    rows of the modes it chose among (empty without an eval run of the line-up)."""

    strategy: Strategy
    configs: list[ConfigReport] = Field(default_factory=list)


class EvalRunSummary(_Model):
    id: str
    created_at: datetime
    dataset: str
    items: int
    configs: list[str]
    status: str
    samples: int  # stored so far
    expected: int  # items x configurations


class EvalRequest(_Model):
    """What `council eval` was asked: the same request continues an unfinished run."""

    configs: str | None = None  # comma-separated names (core/eval/configs.py); None: every one
    dataset: str | None = None  # a JSONL/CSV file; None: the bundled set
    seed: int | None = None  # the bundled set's seed and size; None: its defaults
    size: int | None = None
    limit: int | None = None
    scorer: str | None = None  # exact | numeric | choice | judge; None: from the targets
    judge: str | None = None
    concurrency: int = 4
    new: bool = False
    log_dir: str | None = None


class EvalStart(_Model):
    """A run about to start or continue: what is left and what it should cost."""

    run_id: str | None  # None: a new run
    dataset: str
    items: int
    configs: list[str]
    scorer: str
    stored: int  # samples already scored (resumed run)
    pending: int  # samples still to score
    calls: int  # estimated model calls of what is pending
    cost_usd: float  # estimated cost of what is pending (priced models only)
    unpriced: list[str] = Field(default_factory=list)  # models without MODEL_PRICES: cost unknown
    log_dir: str = ""


class EvalProgress(_Model):
    config: str
    done: int
    total: int
    elapsed_s: float

    @property
    def eta_s(self) -> float | None:
        return self.elapsed_s / self.done * (self.total - self.done) if self.done else None
