"""EffectdClient against a live effectd (``effectd start``) on the payments simulator."""

from __future__ import annotations

import time
import uuid

import pytest

from effectd import EffectdClient, EffectdError, Outcome, Refusal, effect_identity, step_of, tool_result_text
from labs.stack import Effectd, Payments


def _invoice() -> str:
    return f"INV-PY-{uuid.uuid4().hex[:8]}"


def test_done_then_replayed_from_the_ledger_when_the_amount_is_respelled(client: EffectdClient, payments: Payments) -> None:
    invoice = _invoice()
    ident = step_of(f"thread-{invoice}", 1)
    first = client.submit(ident, "payments.charge", {"invoiceId": invoice, "amount": "49.00 USD"})
    assert isinstance(first, Outcome) and first.status == "done" and first.receipt and not first.replayed
    again = client.submit(ident, "payments.charge", {"invoiceId": invoice, "amount": 4900})
    assert isinstance(again, Outcome) and again.status == "done" and again.replayed and again.receipt == first.receipt
    assert len(payments.charges_for(invoice)) == 1
    assert client.status(first.effect_id).status == "done"


def test_other_arguments_for_a_recorded_step_are_refused_with_what_the_step_recorded(client: EffectdClient) -> None:
    invoice = _invoice()
    ident = step_of(f"thread-{invoice}", 3)
    done = client.submit(ident, "payments.charge", {"invoiceId": invoice, "amount": "49.00 USD"})
    refused = client.submit(ident, "payments.charge", {"invoiceId": invoice, "amount": "50.00 USD"})
    assert isinstance(refused, Refusal) and refused.status == "refused"
    assert refused.http_status == 422 and refused.code == "intent_conflict"
    assert refused.recorded is not None and refused.recorded["status"] == "done"
    assert isinstance(done, Outcome) and refused.effect_id == done.effect_id
    assert tool_result_text(refused).startswith("refused")


def test_bad_input_and_an_unknown_tool_are_refusals_never_not_done(client: EffectdClient) -> None:
    ident = step_of("thread-bad-input", 0)
    unknown_tool = client.submit(ident, "payments.teleport", {"invoiceId": "X"})
    assert isinstance(unknown_tool, Refusal) and unknown_tool.code == "unknown_tool" and unknown_tool.http_status == 400
    bad = client.submit(step_of("thread-bad-input", 1), "payments.charge", {"invoiceId": "X", "amount": "a lot"})
    assert isinstance(bad, Refusal) and bad.code == "invalid_command" and bad.fields


def test_a_lost_reply_is_unknown_with_effectds_words_then_done_with_one_charge(client: EffectdClient, payments: Payments) -> None:
    invoice = _invoice()
    ident = step_of(f"thread-{invoice}", 1)
    payments.faults([{"match": {"method": "POST", "pathPrefix": "/v1/charges", "nth": 1}, "action": {"type": "drop-after-mutation"}}])
    first = client.submit(ident, "payments.charge", {"invoiceId": invoice, "amount": "49.00 USD"}, wait_seconds=0)
    payments.faults([])
    assert isinstance(first, Outcome) and first.status == "unknown"
    assert first.reference and f"Do not start another payments.charge for invoice {invoice}." in first.message
    assert tool_result_text(first) == first.message
    deadline = time.time() + 30
    while True:
        again = client.submit(ident, "payments.charge", {"invoiceId": invoice, "amount": "49.00 USD"}, wait_seconds=0)
        assert isinstance(again, Outcome)
        if again.status == "done" or time.time() > deadline:
            break
        time.sleep(0.2)
    truth = payments.charges_for(invoice)
    assert again.status == "done" and len(truth) == 1 and again.receipt == truth[0]["id"] and again.effect_id == first.effect_id


def test_workflow_timeline_and_history_come_from_the_ledger(client: EffectdClient) -> None:
    invoice = _invoice()
    thread = f"thread-{invoice}"
    done = client.submit(step_of(thread, 2), "payments.charge", {"invoiceId": invoice, "amount": "12.00 USD"})
    assert isinstance(done, Outcome)
    timeline = client.workflow(thread)
    assert timeline["workflowId"] == thread and len(timeline["timeline"]) >= 3
    history = client.history(thread)
    assert [h.step for h in history] == ["call-2"]
    assert history[0].outcomes[0]["status"] == "done" and history[0].outcomes[0]["receipt"] == done.receipt
    decision = client.record_decision(thread, "call-9", "payments.charge", {"invoiceId": invoice, "amount": "1.00 USD"})
    assert decision["decision"]["tool"] == "payments.charge"


def test_a_wrong_token_and_a_missing_effect_raise_coded_errors(effectd: Effectd) -> None:
    with pytest.raises(EffectdError) as missing:
        EffectdClient(effectd.url, effectd.token).effect("eff_does_not_exist")
    assert missing.value.code == "not_found"
    refused = EffectdClient(effectd.url, "not-a-token").submit(step_of("thread-x", 0), "payments.charge", {"invoiceId": "X", "amount": 1})
    assert isinstance(refused, Refusal) and refused.code == "unauthorized"


def test_no_answer_from_effectd_is_unknown_not_a_failure() -> None:
    result = EffectdClient("http://127.0.0.1:9", "t", timeout=2).submit(step_of("thread-down", 4), "payments.charge", {"invoiceId": "X", "amount": 1})
    assert isinstance(result, Outcome) and result.status == "unknown"
    assert "submit step call-4 again" in result.message


@pytest.mark.parametrize(
    "workflow_id, step",
    [("thread-1", "call_abc123"), ("thread-1", "toolu_01A"), ("thread-1", str(uuid.uuid4())), ("4242", "call-1"), ("call_xyz", "call-1"), ("", "call-1")],
)
def test_identity_helpers_refuse_per_call_and_per_process_ids(workflow_id: str, step: str) -> None:
    with pytest.raises(EffectdError) as refused:
        effect_identity(workflow_id, step)
    assert refused.value.code == "invalid_command" and "docs/identity.md" in refused.value.message


def test_step_of_names_the_position() -> None:
    assert step_of("9b2c6c1e-2f7d-4c8a-9e0f-3a1b2c3d4e5f", 7).step == "call-7"
    assert step_of("thread-1", 7, call=1).step == "call-7.1"
    with pytest.raises(EffectdError):
        step_of("thread-1", -1)
