"""The council engine behind `core.council.run_council`, one concern per module.

control.py    CouncilControl: Stop / Synthesize-now from outside
runner.py     parallel calls: launching, the quorum + grace wait, one wake-up helper
state.py      what one council has gathered so far (answers, labels, reviews, ...)
answers.py    stage 1: every member answers
reviews.py    stage 2: anonymous peer reviews and their aggregate
synthesis.py  stage 3: the chairman's synthesis and its fallbacks
stream.py     one streamed synthesis: the pump task, and relaying its screened text as events
notices.py    user-visible texts: cut reasons, notices, the no-answer error
result.py     the CouncilResult: status and assembly
"""
