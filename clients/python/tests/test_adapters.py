"""The LangGraph and OpenAI Agents SDK wrappers in-process, against a live effectd: the identity
they derive, and what the model reads for each answer (unknown is not an error)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import uuid
from pathlib import Path

from effectd import EffectdClient
from labs.stack import Payments

DROP_FIRST_CHARGE = [{"match": {"method": "POST", "pathPrefix": "/v1/charges", "nth": 1}, "action": {"type": "drop-after-mutation"}}]


def test_langgraph_tool_declares_thread_and_message_position_and_hands_unknown_as_a_normal_result(client: EffectdClient, payments: Payments, tmp_path: Path) -> None:
    from langchain_core.messages import HumanMessage, ToolMessage
    from langgraph.checkpoint.sqlite import SqliteSaver

    from labs import langgraph_lab

    invoice = f"INV-LG-{uuid.uuid4().hex[:8]}"
    thread = f"thread-{invoice}"
    payments.faults(DROP_FIRST_CHARGE)
    os.environ["EFFECTD_TOKEN"] = client._token  # the lab's graph takes its token from the environment
    graph = langgraph_lab.build("effectd", invoice, payments.url, client.url, SqliteSaver(sqlite3.connect(tmp_path / "cp.db", check_same_thread=False)), wait_seconds=0)
    state = graph.invoke({"messages": [HumanMessage("charge it")]}, {"configurable": {"thread_id": thread}})
    tool_messages = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert len(tool_messages) == 1
    answer = tool_messages[0]
    assert answer.status == "success"  # unknown is not a tool error
    assert answer.content.startswith("unknown:") and f"Do not start another payments.charge for invoice {invoice}" in answer.content
    assert answer.artifact["status"] == "unknown" and answer.artifact["reference"]
    # workflow = the thread id, step = the AIMessage's position in the thread (index 1, after the human message)
    assert [h.step for h in client.history(thread)] == ["call-1"]
    assert len(payments.charges_for(invoice)) == 1


def test_openai_agents_tool_declares_session_and_item_position_and_hands_unknown_as_a_normal_result(client: EffectdClient, payments: Payments, tmp_path: Path) -> None:
    from agents import Agent, RunConfig, Runner, SQLiteSession

    from effectd.openai_agents import effectd_function_tool
    from labs import openai_agents_lab

    invoice = f"INV-OA-{uuid.uuid4().hex[:8]}"
    session = SQLiteSession(f"session-{invoice}", str(tmp_path / "s.db"))
    tool = effectd_function_tool(client, "payments.charge", name=openai_agents_lab.TOOL, description="Charge an invoice.", args_schema=openai_agents_lab.ChargeArgs, wait_seconds=0)
    agent = Agent(name="billing", model=openai_agents_lab.scripted_model(invoice), tools=[tool])
    payments.faults(DROP_FIRST_CHARGE)
    result = asyncio.run(Runner.run(agent, "charge it", session=session, run_config=RunConfig(group_id=session.session_id, tracing_disabled=True)))
    output = str(result.final_output)
    assert "unknown:" in output and f"Do not start another payments.charge for invoice {invoice}" in output
    assert "An error occurred" not in output  # not the SDK's tool-error text
    # workflow = the session id, step = the function_call item's position in the session (after the user message)
    assert [h.step for h in client.history(session.session_id)] == ["call-1"]
    items = asyncio.run(session.get_items())
    assert [i.get("type") or i.get("role") for i in items][:2] == ["user", "function_call"]
