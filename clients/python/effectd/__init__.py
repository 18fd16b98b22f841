"""effectd client: submit effects to effectd over HTTP with an identity that survives a crash and
a resume, and wrap LangGraph / OpenAI Agents SDK tools (effectd.langgraph, effectd.openai_agents)."""

from .client import EffectdClient, FieldError, HistoryStep, Outcome, Refusal, Result
from .errors import EffectdError
from .identity import EffectIdentity, effect_identity, step_of

__all__ = [
    "EffectdClient", "EffectdError", "EffectIdentity", "FieldError", "HistoryStep", "Outcome", "Refusal", "Result",
    "effect_identity", "step_of", "tool_result_text",
]


def tool_result_text(result: Result) -> str:
    """What a tool hands the model: effectd's own sentence, led by the state. ``unknown`` is not an
    error — it says the effect is being checked and not to start another."""
    if isinstance(result, Refusal):
        return result.message if result.message.startswith("refused") else f"refused: {result.message}"
    return result.message
