"""`council eval`: is the council worth its calls? Measured on inspect-ai.

The council is an inspect-ai model provider (`council/standard`, `council/quick`, `council/auto`,
`council/refine`, `council/self-moa[:<id>]`, `council/member:<id>`, `council/chairman`),
registered through the `inspect_ai` entry point group (`core/eval/registry.py`), so any inspect
task runs on it. `council eval` is the friendly
front: every configuration on the same samples, each sample stored as it is scored (resumable),
and a report with intervals and a paired test against the best single member.

Modules (inspect-ai is imported only by `provider`, `tasks` and `session`, the `eval` extra):
    configs    the configuration names and what each one asks
    dataset    the bundled offline set (seeded) and JSONL/CSV files
    scoring    answer extraction, normalisation and the four scorers' rules, majority vote
    stats      Wilson intervals, McNemar's exact test, percentiles
    answering  one configuration answering one question (the engine or one model), counted
    provider   the inspect-ai ModelAPI over `answering`
    registry   the entry point module: registers the provider with inspect-ai
    tasks      the inspect Task of a run: solvers (self-consistency), scorers that store each sample
    report     the per-configuration figures of a run
    independence  the members' error correlation, effective votes and most redundant seat
    doubt      accuracy by consensus band and the threshold under which the council was unsure
    baselines  self-consistency's and Self-MoA's model and k, settled once per run
    estimate   calls and cost before a run starts
    session    a run: resume or start, each configuration in turn, the report (`CouncilEvals`)

The values that cross into the CLI (requests, stored samples, the report) are core/models/eval.py.
"""
