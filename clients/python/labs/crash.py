"""The crash-lab harness: one agent process per run, SIGKILLed during its charging tool call,
restarted, resumed from the framework's own store; the provider's records count the charges.

Kill points:
- ``before-commit``: the provider has received the charge and holds it (a ``delay`` fault) — it
  has not committed — when the agent is killed; the provider then commits anyway.
- ``after-commit``: the provider committed and answered, the tool returned, and the framework had
  not yet persisted the result (the agent blocks in the framework's tool-end hook) when it is killed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional

from .stack import Effectd, Payments

KILL_POINTS = ("before-commit", "after-commit")
HOLD_MS = 4000


@dataclass
class RunResult:
    mode: str
    kill_point: str
    charges: int
    charges_at_kill: int
    final: str


def _wait(what: str, probe: Callable[[], bool], timeout: float, proc: Optional[subprocess.Popen] = None) -> None:
    deadline = time.time() + timeout
    while not probe():
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the agent exited ({proc.returncode}) before {what}: {proc.stderr.read() if proc.stderr else ''}")
        if time.time() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.02)


def run_variant(agent_script: Path, mode: str, kill_point: str, payments: Payments, effectd: Effectd, tag: str) -> RunResult:
    """One crash and one resume of the agent in ``agent_script`` (``mode``: direct | effectd)."""
    work = Path(tempfile.mkdtemp(prefix=f"effectd-lab-{tag}-"))
    invoice = f"INV-{tag}-{mode}-{kill_point}".upper()
    marker = work / "tool-ended"
    args = [
        sys.executable, str(agent_script), "agent", "--mode", mode, "--db", str(work / "agent.db"), "--thread", f"thread-{tag}-{mode}-{kill_point}",
        "--invoice", invoice, "--payments-url", payments.url, "--effectd-url", effectd.url,
    ]
    env = dict(os.environ, EFFECTD_TOKEN=effectd.token, PYTHONUNBUFFERED="1")
    if kill_point == "before-commit":
        payments.faults([{"match": {"method": "POST", "pathPrefix": "/v1/charges", "nth": 1}, "action": {"type": "delay", "ms": HOLD_MS}}])
        before = len(payments.requests())
    else:
        payments.faults([])
    first = subprocess.Popen(args + (["--block-after-tool", str(marker)] if kill_point == "after-commit" else []), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        if kill_point == "before-commit":
            _wait("the provider to hold the charge", lambda: any(r["path"].startswith("/v1/charges") and r["method"] == "POST" for r in payments.requests()[before:]), 60, first)
        else:
            _wait("the tool to end", marker.exists, 60, first)
        at_kill = len(payments.charges_for(invoice))
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    finally:
        if first.poll() is None:
            first.kill()
    payments.faults([])
    second = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    if second.returncode != 0:
        raise RuntimeError(f"the resumed agent failed ({second.returncode}): {second.stderr[-2000:]}")
    final = json.loads(second.stdout.strip().splitlines()[-1])["final"]
    # Held requests finish (the provider commits what it held) before the count.
    _wait("the provider's held requests to finish", lambda: all(r.get("status") is not None or r.get("clientDisconnected") for r in payments.requests()), HOLD_MS / 1000 + 10)
    return RunResult(mode=mode, kill_point=kill_point, charges=len(payments.charges_for(invoice)), charges_at_kill=at_kill, final=final)


def run_lab(name: str, agent_script: Path, payments: Payments, effectd: Effectd, tag: str) -> Dict[str, List[RunResult]]:
    results: Dict[str, List[RunResult]] = {"direct": [], "effectd": []}
    for kill_point in KILL_POINTS:
        for mode in ("direct", "effectd"):
            results[mode].append(run_variant(agent_script, mode, kill_point, payments, effectd, tag))
    return results


def report(name: str, results: Dict[str, List[RunResult]]) -> str:
    lines = []
    for r in results["direct"] + results["effectd"]:
        lines.append(f"  {r.kill_point:13} {r.mode:7}: {r.charges} charge(s) at the provider ({r.charges_at_kill} when killed); the model's last word: {r.final[:160]}")
    per_point = ", ".join(
        f"{kp}: {d.charges} without, {e.charges} with" for kp, d, e in zip(KILL_POINTS, results["direct"], results["effectd"])
    )
    total_without = sum(r.charges for r in results["direct"])
    total_with = sum(r.charges for r in results["effectd"])
    lines.append(f"{name}: {total_without} charges without effectd, {total_with} with, over {len(KILL_POINTS)} crashes of one charge each ({per_point})")
    return "\n".join(lines)


def main(name: str, agent_script: Path) -> int:
    from .stack import start_effectd, start_payments

    payments = start_payments()
    effectd = start_effectd(payments.url)
    try:
        results = run_lab(name, agent_script, payments, effectd, tag=f"{int(time.time()) % 100000}")
        print(report(name, results))
        # Each crash must have hit its window: nothing charged yet before the commit, one charge after.
        missed = [r for r in results["direct"] + results["effectd"] if r.charges_at_kill != (0 if r.kill_point == "before-commit" else 1)]
        for r in missed:
            print(f"  the {r.kill_point} crash ({r.mode}) missed its window: {r.charges_at_kill} charge(s) when killed")
        ok = not missed and all(r.charges == 1 for r in results["effectd"])
        return 0 if ok else 1
    finally:
        effectd.stop()
        payments.stop()
