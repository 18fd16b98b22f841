"""OpenAI Agents SDK crash lab: an Agent with a scripted model (the SDK's own test double,
``agents.testing.ScriptedModel``, answering from what it is given) and an ``SQLiteSession``
charges one invoice; the harness SIGKILLs it during the tool call (before and after the provider
committed), restarts it, and it resumes from its session the way the SDK documents sessions:
``Runner.run(agent, [], session=SQLiteSession(id, db))`` — the session holds the conversation.
Run twice — the tool charging the provider directly, and through effectd — and scored from the
provider's records.

    python labs/openai_agents_lab.py            # the lab (starts a payments simulator and effectd)
    python labs/openai_agents_lab.py agent …    # one agent process (what the lab spawns)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any, List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")

from agents import Agent, ModelSettings, RunConfig, RunHooks, Runner, SQLiteSession, function_tool  # noqa: E402
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call  # noqa: E402
from pydantic import BaseModel, Field  # noqa: E402

from effectd import EffectdClient  # noqa: E402
from effectd.openai_agents import effectd_function_tool  # noqa: E402
from labs.charge_direct import charge_directly  # noqa: E402

TOOL = "charge_invoice"


class ChargeArgs(BaseModel):
    invoiceId: str = Field(description="the invoice to charge")
    amount: str = Field(description='the amount, e.g. "49.00 USD"')


def scripted_model(invoice: str) -> ScriptedModel:
    """Asked with no tool result in its input, it decides to charge the invoice (a new call_id
    every time, as a real model); with a result, it reports what the tool said."""

    def respond(call: ModelCall) -> Any:
        items = call.input if isinstance(call.input, list) else []
        outputs = [i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
        if not outputs:
            return [function_call(TOOL, {"invoiceId": invoice, "amount": "49.00 USD"}, call_id=f"call_{uuid.uuid4().hex[:16]}")]
        return [assistant_message(f"The charge tool answered: {outputs[-1].get('output')}")]

    return ScriptedModel([ModelStep(responder=respond) for _ in range(8)])


class BlockAfterTool(RunHooks[Any]):
    """The lab's crash window: the tool returned (the provider committed and answered), the SDK
    has not yet saved the turn to the session. Signals the harness through a file, then waits."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: str) -> None:
        Path(self.marker).write_text("tool ended\n")
        await asyncio.sleep(120)


async def agent_main(argv: List[str]) -> None:
    p = argparse.ArgumentParser()
    for flag in ("--mode", "--db", "--thread", "--invoice", "--payments-url", "--effectd-url"):
        p.add_argument(flag, required=True)
    p.add_argument("--block-after-tool")
    a = p.parse_args(argv)
    if a.mode == "effectd":
        client = EffectdClient(a.effectd_url, os.environ["EFFECTD_TOKEN"])
        tool = effectd_function_tool(client, "payments.charge", name=TOOL, description="Charge an invoice.", args_schema=ChargeArgs)
    else:

        @function_tool(name_override=TOOL)
        def tool(invoiceId: str, amount: str) -> str:
            """Charge an invoice."""
            return charge_directly(a.payments_url, invoiceId, amount)

    agent = Agent(name="billing", instructions="Charge what you are asked to.", model=scripted_model(a.invoice), tools=[tool],
                  model_settings=ModelSettings(parallel_tool_calls=False))
    session = SQLiteSession(a.thread, a.db)
    resumed = len(await session.get_items()) > 0
    hooks = BlockAfterTool(a.block_after_tool) if a.block_after_tool else None
    run_input: Any = [] if resumed else f"Charge invoice {a.invoice}: 49.00 USD."
    result = await Runner.run(agent, run_input, session=session, hooks=hooks, run_config=RunConfig(group_id=session.session_id, tracing_disabled=True))
    print(json.dumps({"final": str(result.final_output)}))


if __name__ == "__main__":
    if sys.argv[1:2] == ["agent"]:
        asyncio.run(agent_main(sys.argv[2:]))
    else:
        from labs.crash import main

        sys.exit(main("OpenAI Agents SDK", lambda argv: asyncio.run(agent_main(argv)), Path(__file__).resolve(), sys.argv[1:]))
