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
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional

from effectd import EffectdClient

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
    ledger: str = ""


class AgentProcess:
    """One agent process. ``fork`` (the default): a child forked from the lab's interpreter, which
    imported the framework once — it shares nothing else (checkpoint, session, connections and
    model are made in the child), is SIGKILLed by its pid and a resume is a new child; ``exec``: a
    fresh interpreter (``python <lab> agent …``), the cold start, ~1.5 s (LangGraph) to ~3 s
    (Agents SDK) of imports more per start."""

    def __init__(self, entry: Callable[[List[str]], None], script: Path, argv: List[str], env: Dict[str, str], out: Path, spawn: str) -> None:
        self.out, self.err = out.with_suffix(".out"), out.with_suffix(".err")
        self.returncode: Optional[int] = None
        if spawn == "exec":
            with open(self.out, "w") as o, open(self.err, "w") as e:
                self.popen: Optional[subprocess.Popen] = subprocess.Popen([sys.executable, str(script), "agent", *argv], env=dict(os.environ, **env), stdout=o, stderr=e)
            self.pid = self.popen.pid
            return
        self.popen = None
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the agent process
            code = 1
            try:
                os.environ.update(env)
                fd_out, fd_err = os.open(self.out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), os.open(self.err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
                os.dup2(fd_out, 1)
                os.dup2(fd_err, 2)
                entry(argv)
                code = 0
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        self.pid = pid

    def poll(self) -> Optional[int]:
        if self.returncode is None:
            if self.popen is not None:
                self.returncode = self.popen.poll()
            else:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid != 0:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float) -> int:
        deadline = time.time() + timeout
        while self.poll() is None:
            if time.time() > deadline:
                self.kill()
                raise RuntimeError(f"the agent did not finish within {timeout} s: {self.stderr()[-2000:]}")
            time.sleep(0.02)
        assert self.returncode is not None
        return self.returncode

    def kill(self) -> None:
        if self.poll() is None:
            os.kill(self.pid, signal.SIGKILL)
            self.wait(10)

    def stdout(self) -> str:
        return self.out.read_text()

    def stderr(self) -> str:
        return self.err.read_text() if self.err.exists() else ""


def _wait(what: str, probe: Callable[[], bool], timeout: float, proc: Optional[AgentProcess] = None) -> None:
    deadline = time.time() + timeout
    while not probe():
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the agent exited ({proc.returncode}) before {what}: {proc.stderr()[-2000:]}")
        if time.time() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.02)


def run_variant(entry: Callable[[List[str]], None], script: Path, mode: str, kill_point: str, payments: Payments, effectd: Effectd, tag: str, spawn: str) -> RunResult:
    """One crash and one resume of the lab's agent (``mode``: direct | effectd)."""
    work = Path(tempfile.mkdtemp(prefix=f"effectd-lab-{tag}-"))
    invoice = f"INV-{tag}-{mode}-{kill_point}".upper()
    marker = work / "tool-ended"
    argv = [
        "--mode", mode, "--db", str(work / "agent.db"), "--thread", f"thread-{tag}-{mode}-{kill_point}",
        "--invoice", invoice, "--payments-url", payments.url, "--effectd-url", effectd.url,
    ]
    env = {"EFFECTD_TOKEN": effectd.token, "PYTHONUNBUFFERED": "1"}
    if kill_point == "before-commit":
        payments.faults([{"match": {"method": "POST", "pathPrefix": "/v1/charges", "nth": 1}, "action": {"type": "delay", "ms": HOLD_MS}}])
        before = len(payments.requests())
    else:
        payments.faults([])
    held_until = 0.0
    first = AgentProcess(entry, script, argv + (["--block-after-tool", str(marker)] if kill_point == "after-commit" else []), env, work / "first", spawn)
    try:
        if kill_point == "before-commit":
            _wait("the provider to hold the charge", lambda: any(r["path"].startswith("/v1/charges") and r["method"] == "POST" for r in payments.requests()[before:]), 60, first)
            held_until = time.time() + HOLD_MS / 1000
        else:
            _wait("the tool to end", marker.exists, 60, first)
        at_kill = len(payments.charges_for(invoice))
    finally:
        first.kill()  # SIGKILL
    payments.faults([])
    second = AgentProcess(entry, script, argv, env, work / "resumed", spawn)
    if second.wait(120) != 0:
        raise RuntimeError(f"the resumed agent failed ({second.returncode}): {second.stderr()[-2000:]}")
    final = json.loads(second.stdout().strip().splitlines()[-1])["final"]
    # The provider commits what it held (its client long gone) before the count.
    time.sleep(max(0.0, held_until + 1.0 - time.time()))
    _wait("the provider's requests to finish", lambda: all(r.get("status") is not None or r.get("clientDisconnected") for r in payments.requests()), 10)
    ledger = ""
    if mode == "effectd":  # where effectd's ledger has the effect now
        steps = EffectdClient(effectd.url, effectd.token).history(f"thread-{tag}-{mode}-{kill_point}")
        ledger = "; ".join(f"step {h.step}: {o['status']}" + (f" ({o['receipt']})" if o.get("receipt") else "") for h in steps for o in h.outcomes)
    return RunResult(mode=mode, kill_point=kill_point, charges=len(payments.charges_for(invoice)), charges_at_kill=at_kill, final=final, ledger=ledger)


def run_lab(entry: Callable[[List[str]], None], script: Path, payments: Payments, effectd: Effectd, tag: str, spawn: str) -> Dict[str, List[RunResult]]:
    results: Dict[str, List[RunResult]] = {"direct": [], "effectd": []}
    for kill_point in KILL_POINTS:
        for mode in ("direct", "effectd"):
            results[mode].append(run_variant(entry, script, mode, kill_point, payments, effectd, tag, spawn))
    return results


def report(name: str, results: Dict[str, List[RunResult]]) -> str:
    lines = []
    for r in results["direct"] + results["effectd"]:
        ledger = f"; effectd's ledger after: {r.ledger}" if r.ledger else ""
        lines.append(f"  {r.kill_point:13} {r.mode:7}: {r.charges} charge(s) at the provider ({r.charges_at_kill} when killed){ledger}; the resumed model's last word: {r.final[:400]}")
    per_point = ", ".join(
        f"{kp}: {d.charges} without, {e.charges} with" for kp, d, e in zip(KILL_POINTS, results["direct"], results["effectd"])
    )
    total_without = sum(r.charges for r in results["direct"])
    total_with = sum(r.charges for r in results["effectd"])
    lines.append(f"{name}: {total_without} charges without effectd, {total_with} with, over {len(KILL_POINTS)} crashes of one charge each ({per_point})")
    return "\n".join(lines)


def main(name: str, entry: Callable[[List[str]], None], script: Path, argv: List[str]) -> int:
    """The lab: ``--exec`` starts every agent process as a fresh interpreter (default: forked from this one)."""
    from .stack import start_effectd, start_payments

    spawn = "exec" if "--exec" in argv else "fork"

    payments = start_payments()
    effectd = start_effectd(payments.url)
    try:
        results = run_lab(entry, script, payments, effectd, tag=f"{int(time.time()) % 100000}", spawn=spawn)
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
