"""effectd's coded errors, as the service and the TypeScript SDK name them."""

from __future__ import annotations

from typing import Any, Mapping, Optional

__all__ = ["EffectdError"]


class EffectdError(Exception):
    """A request effectd did not carry out. ``code`` says what to do next: ``unavailable`` — send
    the same command again (a 5xx carrying ``recorded`` says the effect was recorded as started: it
    may exist, never assume it failed); ``invalid_command`` — fix the call; ``unauthorized``,
    ``forbidden``, ``not_found`` — trying again will not help."""

    def __init__(self, code: str, message: str, *, status: Optional[int] = None, details: Optional[Mapping[str, Any]] = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.details: Mapping[str, Any] = details or {}

    @property
    def retryable(self) -> bool:
        return self.code == "unavailable"
