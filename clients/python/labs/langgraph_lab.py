"""LangGraph crash lab: a graph agent (StateGraph + ToolNode, SqliteSaver checkpointer, a scripted
chat model) charges one invoice; the harness SIGKILLs it during the tool call (before and after
the provider committed), restarts it, and it resumes from its checkpoint the way LangGraph
documents: ``graph.invoke(None, config)`` with the same ``thread_id``. Run twice — the tool
charging the provider directly, and through effectd — and scored from the provider's records.

    python labs/langgraph_lab.py            # the lab (starts a payments simulator and effectd)
    python labs/langgraph_lab.py agent …    # one agent process (what the lab spawns)
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time
import uuid
from pathlib import Path
from typing import Any, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.callbacks import BaseCallbackHandler  # noqa: E402
from langchain_core.language_models.chat_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langchain_core.tools import StructuredTool  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.graph import START, MessagesState, StateGraph  # noqa: E402
from langgraph.prebuilt import ToolNode, tools_condition  # noqa: E402
from pydantic import BaseModel, Field  # noqa: E402

from effectd import EffectdClient  # noqa: E402
from effectd.langgraph import effectd_tool  # noqa: E402
from labs.charge_direct import charge_directly  # noqa: E402

TOOL = "charge_invoice"


class ChargeArgs(BaseModel):
    invoiceId: str = Field(description="the invoice to charge")
    amount: str = Field(description='the amount, e.g. "49.00 USD"')


class ScriptedChatModel(BaseChatModel):
    """A scripted model: asked with no tool result yet, it decides to charge the invoice (a new
    tool-call id every time, as a real model); with a tool result, it reports what the tool said."""

    invoice: str
    amount: str = "49.00 USD"

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedChatModel":
        return self

    def _generate(self, messages: List[BaseMessage], stop: Optional[List[str]] = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if not results:
            call = {"name": TOOL, "args": {"invoiceId": self.invoice, "amount": self.amount}, "id": f"call_{uuid.uuid4().hex[:16]}"}
            message = AIMessage(content="", tool_calls=[call])
        else:
            message = AIMessage(content=f"The charge tool answered ({results[-1].status}): {results[-1].content}")
        return ChatResult(generations=[ChatGeneration(message=message)])


class BlockAfterTool(BaseCallbackHandler):
    """The lab's crash window: the tool returned (the provider committed and answered), LangGraph
    has not yet persisted the result. Signals the harness through a file, then waits to be killed."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def on_tool_end(self, output: Any, **kwargs: Any) -> None:
        Path(self.marker).write_text("tool ended\n")
        time.sleep(120)


def build(mode: str, invoice: str, payments_url: str, effectd_url: str, checkpointer: SqliteSaver, wait_seconds: Optional[float] = None) -> Any:
    if mode == "effectd":
        client = EffectdClient(effectd_url, os.environ["EFFECTD_TOKEN"])
        tool = effectd_tool(client, "payments.charge", name=TOOL, description="Charge an invoice.", args_schema=ChargeArgs, wait_seconds=wait_seconds)
    else:
        tool = StructuredTool.from_function(
            func=lambda invoiceId, amount: charge_directly(payments_url, invoiceId, amount), name=TOOL, description="Charge an invoice.", args_schema=ChargeArgs,
        )
    model = ScriptedChatModel(invoice=invoice).bind_tools([tool])

    def agent(state: MessagesState) -> dict:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([tool]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=checkpointer)


def agent_main(argv: List[str]) -> None:
    p = argparse.ArgumentParser()
    for flag in ("--mode", "--db", "--thread", "--invoice", "--payments-url", "--effectd-url"):
        p.add_argument(flag, required=True)
    p.add_argument("--block-after-tool")
    a = p.parse_args(argv)
    checkpointer = SqliteSaver(sqlite3.connect(a.db, check_same_thread=False))
    graph = build(a.mode, a.invoice, a.payments_url, a.effectd_url, checkpointer)
    config: dict = {"configurable": {"thread_id": a.thread}}
    if a.block_after_tool:
        config["callbacks"] = [BlockAfterTool(a.block_after_tool)]
    if graph.get_state(config).next:
        state = graph.invoke(None, config)  # resume from the last checkpoint (LangGraph's documented way)
    else:
        state = graph.invoke({"messages": [HumanMessage(f"Charge invoice {a.invoice}: 49.00 USD.")]}, config)
    print(json.dumps({"final": state["messages"][-1].content}))


if __name__ == "__main__":
    if sys.argv[1:2] == ["agent"]:
        agent_main(sys.argv[2:])
    else:
        from labs.crash import main

        sys.exit(main("LangGraph", agent_main, Path(__file__).resolve(), sys.argv[1:]))
