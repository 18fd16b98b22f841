"""effectd over HTTP (docs/http-api.md): submit effects, read an effect and a workflow's timeline
and history. Standard library only (urllib). It never mints keys: workflow id and step come from
the harness (effectd.identity)."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Dict, List, Literal, Mapping, Optional, Union

from .errors import EffectdError
from .identity import EffectIdentity, effect_identity

__all__ = ["EffectdClient", "Outcome", "Refusal", "Result", "HistoryStep", "FieldError"]

Status = Literal["done", "not_done", "unknown"]


@dataclass(frozen=True)
class Outcome:
    """effectd's three-state answer for one effect: ``done`` (with the receipt), ``not_done``
    (proven not to have happened; a new step may try again), ``unknown`` (being checked: do not
    start another; ask again with the same step). ``message`` is effectd's sentence for the model."""

    status: Status
    effect_id: str
    state: str
    tool: str
    target: str
    message: str
    replayed: bool = False
    receipt: Optional[str] = None
    reason: Optional[str] = None
    reference: Optional[str] = None
    checking: Optional[str] = None
    expect_answer_by: Optional[str] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @staticmethod
    def of(body: Mapping[str, Any]) -> "Outcome":
        return Outcome(
            status=body["status"], effect_id=str(body.get("effectId", "")), state=str(body.get("state", "")),
            tool=str(body.get("tool", "")), target=str(body.get("target", "")), message=str(body.get("message", "")),
            replayed=bool(body.get("replayed", False)), receipt=body.get("receipt"), reason=body.get("reason"),
            reference=body.get("reference"), checking=body.get("checking"), expect_answer_by=body.get("expectAnswerBy"), raw=dict(body),
        )


@dataclass(frozen=True)
class FieldError:
    path: str
    message: str


@dataclass(frozen=True)
class Refusal:
    """effectd did not accept the command (HTTP 4xx): nothing was done for it. Not an outcome of
    the effect and never ``not_done``: for ``intent_conflict`` (422), ``recorded`` says where the
    step's recorded effect stands (its ``status`` is done / not_done / unknown)."""

    http_status: int
    code: str
    message: str
    fields: List[FieldError] = field(default_factory=list)
    effect_id: Optional[str] = None
    recorded: Optional[Mapping[str, Any]] = None
    status: Literal["refused"] = "refused"


Result = Union[Outcome, Refusal]


@dataclass(frozen=True)
class HistoryStep:
    """One step of GET /v1/workflows/:id/history: its journaled decision and its effects' outcomes."""

    step: str
    decision: Optional[Mapping[str, Any]]
    outcomes: List[Mapping[str, Any]]


def _code_of_status(status: int) -> str:
    if status == 401:
        return "unauthorized"
    if status == 403:
        return "forbidden"
    if status == 404:
        return "not_found"
    if status >= 500 or status in (408, 429):
        return "unavailable"
    return "invalid_command" if status >= 400 else "internal"


class EffectdClient:
    """An agent's (never an operator's) credential and effectd's base URL, e.g.
    ``EffectdClient("http://127.0.0.1:8080", token)``. ``timeout`` is per request, in seconds; a
    request that times out is answered ``unknown``, never thrown away."""

    def __init__(self, url: str, token: str, *, timeout: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self._token = token
        self.timeout = timeout

    def submit(
        self,
        identity: EffectIdentity,
        tool: str,
        args: Mapping[str, Any],
        *,
        repeat_reason: Optional[str] = None,
        principal: Optional[str] = None,
        wait_seconds: Optional[float] = None,
    ) -> Result:
        """Submits one effect (POST /v1/effects). A lost or timed-out answer is ``unknown`` (the
        effect may exist): submit the same identity again. A 4xx is a ``Refusal``. effectd unable
        to answer now (5xx) raises ``EffectdError('unavailable')``: send the same effect again.
        ``wait_seconds`` asks for an inline-settle budget (``Prefer: wait=N``)."""
        identity = effect_identity(identity.workflow_id, identity.step, identity.slot)
        body: Dict[str, Any] = {"workflowId": identity.workflow_id, "step": identity.step, "tool": tool, "args": dict(args)}
        if identity.slot is not None:
            body["slot"] = identity.slot
        if repeat_reason is not None:
            body["repeat"] = {"reason": repeat_reason}
        if principal is not None:
            body["principal"] = principal
        headers = {} if wait_seconds is None else {"prefer": f"wait={wait_seconds:g}"}
        try:
            status, answer = self._request("POST", "/v1/effects", body, headers)
        except (TimeoutError, socket.timeout, ConnectionError, urllib.error.URLError) as error:
            return Outcome(
                status="unknown", effect_id="", state="unknown", tool=tool, target="",
                message=f"unknown: no answer from effectd ({error}); submit step {identity.step} again — it is the same effect and will not run twice.",
            )
        if status in (200, 409) and isinstance(answer, dict) and isinstance(answer.get("status"), str):
            return Outcome.of(answer)
        if 400 <= status < 500 and status not in (408, 429):
            b = answer if isinstance(answer, dict) else {}
            return Refusal(
                http_status=status, code=str(b.get("error", _code_of_status(status))), message=str(b.get("message", f"HTTP {status}")),
                fields=[FieldError(str(f.get("path")), str(f.get("message"))) for f in b.get("fields", []) if isinstance(f, dict)],
                effect_id=b.get("effectId") if isinstance(b.get("effectId"), str) else None,
                recorded=b.get("recorded") if isinstance(b.get("recorded"), dict) else None,
            )
        raise self._error(status, answer, f"effectd could not answer the effect (HTTP {status})")

    def effect(self, effect_id: str) -> Mapping[str, Any]:
        """GET /v1/effects/:id — the effect, its state and outcome, and every event about it."""
        return self._ok("GET", f"/v1/effects/{_segment(effect_id)}")

    def status(self, effect_id: str) -> Outcome:
        """The effect's three-state outcome now (``done`` / ``not_done`` / ``unknown``)."""
        return Outcome.of(self.effect(effect_id))

    def workflow(self, workflow_id: str) -> Mapping[str, Any]:
        """GET /v1/workflows/:id — the workflow's timeline: every intent, attempt, check and outcome."""
        return self._ok("GET", f"/v1/workflows/{_segment(workflow_id)}")

    def history(self, workflow_id: str) -> List[HistoryStep]:
        """GET /v1/workflows/:id/history — what to hand the model: each step's decision and its
        effects' three-state outcomes, from the ledger (not from the model's memory)."""
        body = self._ok("GET", f"/v1/workflows/{_segment(workflow_id)}/history")
        return [HistoryStep(step=str(s["step"]), decision=s.get("decision"), outcomes=list(s.get("outcomes", []))) for s in body.get("steps", [])]

    def record_decision(self, workflow_id: str, step: str, tool: str, args: Mapping[str, Any], decided_by: Optional[str] = None) -> Mapping[str, Any]:
        """Journals the model's decision for a step before acting; when the step was decided
        already, the recorded decision comes back (``replayed``)."""
        body: Dict[str, Any] = {"step": step, "tool": tool, "args": dict(args)}
        if decided_by is not None:
            body["decidedBy"] = decided_by
        return self._ok("POST", f"/v1/workflows/{_segment(workflow_id)}/decisions", body)

    def _ok(self, method: str, path: str, body: Any = None) -> Dict[str, Any]:
        status, answer = self._request(method, path, body)
        if status >= 300:
            raise self._error(status, answer, f"effectd: {method} {path} → HTTP {status}")
        return answer if isinstance(answer, dict) else {}

    @staticmethod
    def _error(status: int, answer: Any, prefix: str) -> EffectdError:
        b = answer if isinstance(answer, dict) else {}
        code = str(b["error"]) if isinstance(b.get("error"), str) else _code_of_status(status)
        details: Dict[str, Any] = {}
        if "recorded" in b:  # a 5xx after the effect was recorded: it may exist; never take it for not_done
            details = {"effectId": b.get("effectId"), "recorded": b.get("recorded")}
        return EffectdError(code, f"{prefix}: {b.get('message', answer)}", status=status, details=details)

    def _request(self, method: str, path: str, body: Any = None, headers: Optional[Mapping[str, str]] = None) -> "tuple[int, Any]":
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("authorization", f"Bearer {self._token}")
        request.add_header("accept", "application/json")
        if data is not None:
            request.add_header("content-type", "application/json")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                status, text = response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read().decode()
        try:
            return status, json.loads(text) if text else None
        except ValueError:
            return status, text


def _segment(value: str) -> str:
    return urllib.parse.quote(value, safe="")
