"""Refusals the service raises to adapters. Each carries a message fit to show the user."""

from __future__ import annotations


class CouncilError(Exception):
    """Base of service-level refusals; `user_message` is shown verbatim to the user."""

    def __init__(self, user_message: str):
        super().__init__(user_message)
        self.user_message = user_message


class InputRejected(CouncilError):
    """Empty, oversized or otherwise unusable question or argument."""


class RateLimited(CouncilError):
    def __init__(self, user_message: str, retry_after_s: float):
        super().__init__(user_message)
        self.retry_after_s = retry_after_s


class BudgetExceeded(CouncilError):
    """The channel's daily budget is spent; it resets in `retry_after_s`."""

    def __init__(self, user_message: str, retry_after_s: float | None = None):
        super().__init__(user_message)
        self.retry_after_s = retry_after_s


class Overloaded(CouncilError):
    """Too many councils queued already."""


class PermissionDenied(CouncilError):
    """An admin operation by someone who is not an admin."""


class NotFound(CouncilError):
    """No council (or other object) with that id, or not visible from here."""


class UnknownModels(InputRejected):
    def __init__(self, user_message: str, models: list[str]):
        super().__init__(user_message)
        self.models = models


class ConfigurationError(CouncilError):
    """A setting is missing or unusable; the message names the setting and what to do."""


class Unreachable(CouncilError):
    """A service the bot depends on (a platform API, the database) could not be reached at run time."""


class ModelFailed(CouncilError):
    """A single model call the service made outside a council failed (a front end's task, a member
    answering alone); `kind` is its ErrorKind's value (auth, timeout, ...) and the message its cause,
    safe to show."""

    def __init__(self, user_message: str, kind: str):
        super().__init__(user_message)
        self.kind = kind
