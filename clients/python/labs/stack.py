"""A payments simulator and an ``effectd start`` on it, each its own OS process, for the client's
tests and the crash labs. The simulator's oracle (``/_oracle/state``) is the ground truth: the
charges that really exist at the provider."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

REPO = Path(os.environ.get("EFFECTD_REPO", Path(__file__).resolve().parents[3]))
NODE = os.environ.get("EFFECTD_NODE", "node")


def http_json(method: str, url: str, body: Any = None, timeout: float = 10.0) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"content-type": "application/json"} if data else {})
    with urllib.request.urlopen(req, timeout=timeout) as res:
        text = res.read().decode()
    return json.loads(text) if text else None


def _read_until(proc: subprocess.Popen, pattern: "re.Pattern[str]", what: str, timeout: float) -> "re.Match[str]":
    found: List["re.Match[str]"] = []
    lines: List[str] = []

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if not found:
                m = pattern.search(line)
                if m:
                    found.append(m)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.time() + timeout
    while not found:
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            raise RuntimeError(f"{what} did not start: {''.join(lines[-20:])}")
        time.sleep(0.05)
    return found[0]


@dataclass
class Payments:
    """The payments simulator (Stripe v1 idempotency semantics)."""

    url: str
    proc: subprocess.Popen

    def charges(self) -> List[Dict[str, Any]]:
        return list(http_json("GET", f"{self.url}/_oracle/state")["charges"])

    def charges_for(self, invoice_id: str) -> List[Dict[str, Any]]:
        return [c for c in self.charges() if c.get("metadata", {}).get("invoice_id") == invoice_id]

    def requests(self) -> List[Dict[str, Any]]:
        body = http_json("GET", f"{self.url}/_admin/requests")
        return list(body["requests"] if isinstance(body, dict) else body)

    def faults(self, rules: List[Dict[str, Any]]) -> None:
        http_json("POST", f"{self.url}/_admin/faults", {"rules": rules})

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@dataclass
class Effectd:
    url: str
    proc: subprocess.Popen
    data_dir: str
    token: str = field(repr=False)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def start_payments(search_lag_ms: int = 200) -> Payments:
    proc = subprocess.Popen(
        [NODE, str(REPO / "packages/simulators/dist/main.js"), "payments", "--port", "0", "--search-lag-ms", str(search_lag_ms)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO,
    )
    m = _read_until(proc, re.compile(r'"url":"(http://[^"]+)"'), "the payments simulator", 20)
    return Payments(url=m.group(1), proc=proc)


def start_effectd(payments_url: str, overrides: Optional[Dict[str, Any]] = None, data_dir: Optional[str] = None) -> Effectd:
    """``effectd start`` on an SQLite ledger in a temp dir, with payments.charge pointed at the simulator."""
    data_dir = data_dir or tempfile.mkdtemp(prefix="effectd-py-")
    builtin = json.loads((REPO / "config/builtin-tools.json").read_text())
    providers = {"payments": {**builtin["providers"]["payments"], "baseUrl": payments_url}}
    tools = [dict(t, **(overrides or {})) for t in builtin["tools"] if t["name"] == "payments.charge"]
    config = Path(data_dir) / "effectd.config.json"
    config.write_text(json.dumps({"builtinTools": False, "builtinSagas": False, "providers": providers, "tools": tools}))
    env = dict(os.environ, EFFECTD_LOG_FORMAT="json")
    proc = subprocess.Popen(
        [NODE, str(REPO / "bin/effectd.js"), "start", "--port", "0", "--data-dir", data_dir, "--config", str(config)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO, env=env,
    )
    m = _read_until(proc, re.compile(r"listening on (http://[^\s\"]+)"), "effectd", 30)
    creds = json.loads((Path(data_dir) / "credentials.json").read_text())["credentials"]
    token = next(c["token"] for c in creds if c["role"] == "agent")
    return Effectd(url=m.group(1), proc=proc, data_dir=data_dir, token=token)
