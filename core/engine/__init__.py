"""The council engine behind `core.engine.council.run_council`, one concern per module.

control.py    CouncilControl: Stop / Synthesize-now from outside
runner.py     parallel calls: launching them (seats run their chains), measured, cancelled together
batch.py      what the runner passes around: Outcome, StagePolicy (quorum, adaptive grace), Batch, SeatCall
waiting.py    the runner's waits: a stage's quorum + grace wait and its bookkeeping, late calls, wake-ups
state.py      what one council has gathered so far (answers, labels, reviews, ...)
answers.py    stage 1: every member answers
reviews.py    stage 2: anonymous peer reviews (k per answer with max_reviewers), their aggregate, late reviews
decision.py   stage 2's early end: whether the pending ballots can still change the first place
synthesis.py  stage 3: the chairman's synthesis, streamed turn by turn
succession.py stage 3's turns: the chairman's chain, a stand-in, the answer as written; the Synthesis and its note
chair_prompt.py stage 3's prompts (full, quick, brief for a small context) and the members best first
quick.py      quick mode: the chairman's comparison line, held back and kept as a ballot
auto.py       auto mode: whether the first two answers agree (equal short answers, or the chairman's
              verdict), and the escalation to the whole council when they do not
rounds.py     refine mode: revision rounds between stage 1 and the reviews, their early end
revision_prompt.py a revision's prompt (the others anonymised, fenced) and the reading of its KEEP/REASON reply
revision_moves.py  held or moved, toward whom, and convergence, measured with the Rust composition method
chair_notes.py what the chairman is told of the rounds (who moved, who held, the first answers) and of Self-MoA
stream.py     one streamed synthesis: the pump task, and relaying its screened text as events
notices.py    user-visible texts: cut reasons, notices, the no-answer error
result.py     the CouncilResult: status and assembly
"""
