"""An effect's identity as the harness declares it (docs/identity.md).

``workflow_id`` and ``step`` must be the same when a killed agent is resumed and redoes the same
call, or effectd sees a new effect where there is none. The stable ids in a framework are the
thread (session) id its checkpointer persists, and the position of the model's call in that
thread; the unstable ones are minted per call (a tool-call id), per process (a PID) or per start.
The same checks as the TypeScript SDK's ``effectIdentity`` / ``stepOf`` (src/sdk/identity.ts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Union

from .errors import EffectdError

__all__ = ["EffectIdentity", "effect_identity", "step_of"]


@dataclass(frozen=True)
class EffectIdentity:
    workflow_id: str
    step: str
    slot: Optional[str] = None


_PER_CALL = [
    (re.compile(r"^call_[A-Za-z0-9_-]+$"), "an OpenAI tool-call id (call_…), minted by the model for every call"),
    (re.compile(r"^toolu_[A-Za-z0-9_-]+$"), "an Anthropic tool-use id (toolu_…), minted by the model for every call"),
    (re.compile(r"^fc_[A-Za-z0-9_-]+$"), "an OpenAI Responses function-call item id (fc_…), minted for every call"),
    (re.compile(r"^chatcmpl-[A-Za-z0-9_-]+$"), "an OpenAI completion id (chatcmpl-…), minted for every model response"),
    (re.compile(r"^msg_[A-Za-z0-9_-]+$"), "a model message id (msg_…), minted for every model response"),
    (
        re.compile(r"^run-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?:-\d+)?$", re.I),
        "a LangChain message id (run-<uuid>), minted for every model call",
    ),
]
_UUID = re.compile(r"^(?:urn:uuid:)?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.I)
_PROCESS_LIKE = re.compile(r"^(?:(?:pid|process|proc)[-_:.]?)?\d+$", re.I)

_STABLE_WORKFLOW = (
    "the id your checkpointer persists for the conversation: LangGraph's thread_id, "
    "the OpenAI Agents SDK session or conversation id"
)
_STABLE_STEP = "the position of the model's call in the thread: step_of(thread_id, position) gives step \"call-<position>\""


def _refuse(field: str, value: object, why: str, instead: str) -> "EffectdError":
    return EffectdError(
        "invalid_command",
        f"{field} {value!r} {why}. Use {instead} (docs/identity.md).",
        details={"field": field, "value": value, "instead": instead},
    )


def _per_call(value: str) -> Optional[str]:
    for pattern, what in _PER_CALL:
        if pattern.match(value):
            return what
    return None


def _unstable_workflow(workflow_id: str) -> Optional[str]:
    if _PROCESS_LIKE.match(workflow_id):
        if re.match(r"^\d{10,}$", workflow_id):
            return "looks like a timestamp taken when the process started: a restarted process makes a new one, and every step after a crash is a new effect"
        return "looks like a process id (a PID): a restarted process has another, and every step after a crash is a new effect"
    what = _per_call(workflow_id)
    if what:
        return f"looks like {what}: one tool call is no workflow, and a retry would be a new one"
    return None


def _unstable_step(step: str) -> Optional[str]:
    what = _per_call(step)
    if what:
        return f"looks like {what}: a resumed run's retry of the same call would be a new effect, sent again"
    if _UUID.match(step):
        return "is a UUID: minted, not a place in the workflow, so a resumed run that mints it again declares a new effect"
    if re.match(r"^\d{10,}$", step):
        return "looks like a timestamp: a resumed run takes another, and the same call becomes a new effect"
    return None


def effect_identity(workflow_id: str, step: Union[str, int], slot: Union[str, int, None] = None) -> EffectIdentity:
    """Checks an identity you build yourself; raises ``EffectdError('invalid_command')`` for an id
    that looks per call or per process, naming the stable one to use instead. A check of shape:
    it cannot prove an id stable."""
    if not isinstance(workflow_id, str) or workflow_id.strip() == "":
        raise _refuse("workflow_id", workflow_id, "is empty", _STABLE_WORKFLOW)
    why = _unstable_workflow(workflow_id.strip())
    if why:
        raise _refuse("workflow_id", workflow_id, why, _STABLE_WORKFLOW)
    if isinstance(step, bool) or not isinstance(step, (str, int)):
        raise _refuse("step", step, "is no position (a whole number from 0) or name", _STABLE_STEP)
    if isinstance(step, int) and step < 0:
        raise _refuse("step", step, "is no position (a whole number from 0)", _STABLE_STEP)
    if isinstance(step, str) and step.strip() == "":
        raise _refuse("step", step, "is empty", _STABLE_STEP)
    step_text = str(step)
    why = _unstable_step(step_text.strip())
    if why:
        raise _refuse("step", step, why, _STABLE_STEP)
    slot_text: Optional[str] = None
    if slot is not None:
        slot_text = str(slot)
        if slot_text.strip() == "" or _per_call(slot_text) or _UUID.match(slot_text):
            raise _refuse("slot", slot, "is empty or minted per call", "the index or name of the item within the call (a recipient's index or address)")
    return EffectIdentity(workflow_id=workflow_id, step=step_text, slot=slot_text)


def step_of(thread_id: str, position: int, call: Optional[int] = None, slot: Union[str, int, None] = None) -> EffectIdentity:
    """The identity of a framework's tool call from the ids that survive a crash and a resume: the
    thread id the checkpointer persists is the workflow; the position of the model's call in the
    thread is the step (``call-<position>``, ``call-<position>.<call>`` for the n-th call of one
    message). Raises like ``effect_identity``."""
    if not isinstance(thread_id, str) or thread_id.strip() == "":
        raise _refuse("thread_id", thread_id, "is empty", _STABLE_WORKFLOW)
    why = _unstable_workflow(thread_id.strip())
    if why:
        raise _refuse("thread_id", thread_id, why, _STABLE_WORKFLOW)
    if isinstance(position, bool) or not isinstance(position, int) or position < 0:
        why = _unstable_step(position) if isinstance(position, str) else None
        raise _refuse("position", position, why or "is no position (a whole number from 0: the index of the model's message in the thread)", _STABLE_STEP)
    if call is not None and (isinstance(call, bool) or not isinstance(call, int) or call < 0):
        raise _refuse("call", call, "is no index (a whole number from 0: which of the message's tool calls this is)", "the index of the tool call within the model's message, never its tool-call id")
    step = f"call-{position}" if call is None else f"call-{position}.{call}"
    return effect_identity(thread_id, step, slot)
