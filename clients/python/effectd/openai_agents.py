"""OpenAI Agents SDK function tools whose effects go through effectd.

The identity comes from what the SDK persists: the workflow is the session's id (pass it as
``RunConfig(group_id=session.session_id)`` — the trace group of the conversation — or in your run
context as ``session_id`` / ``workflow_id``); the step is the position the model's
``function_call`` item takes in the session's items: the number of items the model was given for
this turn (``ToolContext.turn_input``: the session's items so far plus this run's new ones). The
SDK saves a turn's items only after its tools ran, so a process killed during the tool leaves the
session without the call; ``Runner.run(agent, [], session=session)`` resumes, the model decides
again at the same position, and the same step is the same effect: effectd answers it from its
ledger and the provider is not called again. Never the ``call_id`` (minted per model response)
nor a trace id the SDK generates per run.

    charge = effectd_function_tool(client, "payments.charge", name="charge_invoice",
                                   description="Charge an invoice.", args_schema=ChargeArgs)
    agent = Agent(name="billing", model=..., tools=[charge])
    await Runner.run(agent, "…", session=session, run_config=RunConfig(group_id=session.session_id))

What the model reads is effectd's sentence: ``done: …`` with the receipt, ``not_done: …``,
``refused: …``, and ``unknown: … do not start another …`` — a normal tool result, not the SDK's
tool-error text, so the model does not take it for a failure to retry.

Known limit: a model response with several function calls (parallel tool calls) gives them one
position; the second is refused by effectd (another intent for the same step, 422), never sent
twice. Give such an agent ``ModelSettings(parallel_tool_calls=False)``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Callable, Mapping, Optional, Type

from agents import FunctionTool, RunContextWrapper
from agents.strict_schema import ensure_strict_json_schema
from agents.tool_context import ToolContext
from pydantic import BaseModel

from . import tool_result_text
from .client import EffectdClient
from .errors import EffectdError
from .identity import EffectIdentity, step_of

__all__ = ["effectd_function_tool", "identity_of_call", "workflow_of"]


def workflow_of(ctx: RunContextWrapper[Any]) -> str:
    """The run's workflow id: ``session_id`` or ``workflow_id`` of the run context (an attribute
    or a key), else the trace ``group_id`` of the run config."""
    context = ctx.context
    for key in ("session_id", "workflow_id"):
        value = context.get(key) if isinstance(context, Mapping) else getattr(context, key, None)
        if isinstance(value, str) and value:
            return value
    run_config = getattr(ctx, "run_config", None)
    group_id = getattr(run_config, "group_id", None)
    if isinstance(group_id, str) and group_id:
        return group_id
    raise EffectdError(
        "invalid_command",
        "no workflow id for the effect: run with RunConfig(group_id=session.session_id) or a context holding session_id "
        "— the id the session store persists, so a resumed run is the same workflow",
    )


def identity_of_call(ctx: ToolContext[Any]) -> EffectIdentity:
    """The effect's identity for one function call: the session's id, and the position the call's
    item takes in the session (the items the model was given for this turn)."""
    return step_of(workflow_of(ctx), len(ctx.turn_input))


def effectd_function_tool(
    client: EffectdClient,
    effect: str,
    *,
    name: str,
    description: str,
    args_schema: Type[BaseModel],
    to_args: Optional[Callable[..., Mapping[str, Any]]] = None,
    wait_seconds: Optional[float] = None,
    identity: Callable[[ToolContext[Any]], EffectIdentity] = identity_of_call,
) -> FunctionTool:
    """A ``FunctionTool`` that submits effectd tool ``effect``. The model sees ``args_schema``;
    ``to_args(**model_args)`` maps them to the effect's arguments (default: as they are)."""

    async def invoke(ctx: ToolContext[Any], raw: str) -> str:
        model_args = args_schema.model_validate(json.loads(raw or "{}")).model_dump()
        args = dict(to_args(**model_args)) if to_args else model_args
        result = await asyncio.to_thread(client.submit, identity(ctx), effect, args, wait_seconds=wait_seconds)
        return tool_result_text(result)

    return FunctionTool(
        name=name, description=description, on_invoke_tool=invoke,
        params_json_schema=ensure_strict_json_schema(args_schema.model_json_schema()), strict_json_schema=True,
    )
