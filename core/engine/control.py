"""CouncilControl: steer a running council from outside (a Stop or Synthesize-now button)."""

from __future__ import annotations

from collections.abc import Callable


class CouncilControl:
    """A handle to steer a running council from outside (a Stop or Synthesize-now button).

    Call its methods from the event loop running the council.
    """

    def __init__(self) -> None:
        self._stopped = False
        self._synthesize = False
        self._listeners: set[Callable[[], None]] = set()

    @property
    def stopped(self) -> bool:
        return self._stopped

    @property
    def synthesize_requested(self) -> bool:
        return self._synthesize

    @property
    def interrupted(self) -> bool:
        """Stopped, or asked to synthesize now: stop waiting for the current stage."""
        return self._stopped or self._synthesize

    def stop(self) -> None:
        """Cancel everything; the council ends CANCELLED with whatever has arrived."""
        self._stopped = True
        self._wake()

    def synthesize_now(self) -> None:
        """Stop waiting in stage 1 or 2 and go to the synthesis with what has arrived."""
        self._synthesize = True
        self._wake()

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener` at every stop()/synthesize_now(); returns the unsubscribe function."""
        self._listeners.add(listener)
        return lambda: self._listeners.discard(listener)

    def _wake(self) -> None:
        for listener in list(self._listeners):
            listener()
