"""LangGraph tools whose effects go through effectd.

The identity comes from what LangGraph persists: the workflow is the ``thread_id`` of the run's
config (the checkpointer's key: ``SqliteSaver``, ``PostgresSaver``, …), the step is the position of
the model's ``AIMessage`` in the thread's ``messages`` (+ the index of the call among its
``tool_calls`` when it makes several). A run resumed from its checkpoint re-runs the tool node on
the same persisted message, so the same call is the same effect: effectd answers it from its
ledger and the provider is not called again. Never the ``tool_call_id`` (minted per model
response) nor a run id.

    charge = effectd_tool(client, "payments.charge", name="charge_invoice",
                          description="Charge an invoice.", args_schema=ChargeArgs)
    graph = create_agent(model, [charge], checkpointer=SqliteSaver(conn))   # or your StateGraph + ToolNode

What the model reads is effectd's sentence: ``done: …`` (receipt), ``not_done: …`` and refusals as
a tool error (``status="error"``), and ``unknown: … do not start another …`` as a normal result,
never an error — an error invites a retry.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Type

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt import ToolRuntime
from pydantic import BaseModel

from . import tool_result_text
from .client import EffectdClient, Outcome, Refusal, Result
from .errors import EffectdError
from .identity import EffectIdentity, step_of

__all__ = ["effectd_tool", "identity_of_call", "tool_message"]


def identity_of_call(config: Mapping[str, Any], messages: Sequence[BaseMessage], tool_call_id: str) -> EffectIdentity:
    """The effect's identity for one tool call of a LangGraph run: ``thread_id`` and the position of
    the AIMessage that made the call in the thread (the tool-call id only finds the message)."""
    thread_id = (config.get("configurable") or {}).get("thread_id")
    if not thread_id:
        raise EffectdError(
            "invalid_command",
            "no thread_id in the run's config: an effect needs the id the checkpointer persists "
            "(graph.invoke(..., {\"configurable\": {\"thread_id\": ...}}) with a checkpointer), or a resumed run is another workflow",
        )
    for position, message in enumerate(messages):
        if isinstance(message, AIMessage):
            for index, call in enumerate(message.tool_calls):
                if call.get("id") == tool_call_id:
                    return step_of(str(thread_id), position, call=index if len(message.tool_calls) > 1 else None)
    raise EffectdError("invalid_command", f"tool call {tool_call_id!r} is in no AIMessage of the thread's messages: its position (the effect's step) is unknown")


def tool_message(result: Result, tool_call_id: str, name: str) -> ToolMessage:
    """effectd's answer as the ToolMessage the model reads. ``unknown`` is not an error."""
    error = isinstance(result, Refusal) or (isinstance(result, Outcome) and result.status == "not_done")
    artifact: Dict[str, Any] = dict(result.raw) if isinstance(result, Outcome) else {"status": "refused", "error": result.code, "recorded": result.recorded}
    return ToolMessage(content=tool_result_text(result), tool_call_id=tool_call_id, name=name, status="error" if error else "success", artifact=artifact)


def effectd_tool(
    client: EffectdClient,
    effect: str,
    *,
    name: str,
    description: str,
    args_schema: Type[BaseModel],
    to_args: Optional[Callable[..., Mapping[str, Any]]] = None,
    wait_seconds: Optional[float] = None,
    messages_key: str = "messages",
) -> BaseTool:
    """A tool for ``ToolNode`` / ``create_agent`` that submits effectd tool ``effect``. The model
    sees ``args_schema``; ``to_args(**model_args)`` maps them to the effect's arguments (default:
    as they are). Sync and async."""

    def submit(runtime: ToolRuntime, kwargs: Dict[str, Any]) -> ToolMessage:
        call_id = runtime.tool_call_id
        if not call_id:
            raise EffectdError("invalid_command", f"{name} was called outside a tool call of a graph (no tool call to place in the thread): run it in a ToolNode")
        identity = identity_of_call(runtime.config, runtime.state[messages_key], call_id)
        args = dict(to_args(**kwargs)) if to_args else kwargs
        return tool_message(client.submit(identity, effect, args, wait_seconds=wait_seconds), call_id, name)

    def run(runtime: ToolRuntime, **kwargs: Any) -> ToolMessage:
        return submit(runtime, kwargs)

    async def arun(runtime: ToolRuntime, **kwargs: Any) -> ToolMessage:
        return await asyncio.to_thread(submit, runtime, kwargs)

    return StructuredTool.from_function(func=run, coroutine=arun, name=name, description=description, args_schema=args_schema)
