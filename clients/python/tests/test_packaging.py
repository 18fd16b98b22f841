"""The package installs with pip from the repository, typed (py.typed), with nothing but the standard library."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_pip_installs_the_package_from_the_repository(tmp_path: Path) -> None:
    target = tmp_path / "site"
    out = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", "--no-build-isolation", "--target", str(target), str(ROOT)],
        capture_output=True, text=True, timeout=240,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    installed = {p.name for p in (target / "effectd").iterdir()}
    assert {"__init__.py", "client.py", "identity.py", "langgraph.py", "openai_agents.py", "py.typed"} <= installed
    assert any(p.name.startswith("effectd_client-0.1.0") for p in target.iterdir())
    # The client itself needs no third-party package.
    probe = subprocess.run([sys.executable, "-S", "-c", "import sys; sys.path.insert(0, sys.argv[1]); import effectd; print(effectd.EffectdClient)", str(target)], capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0 and "EffectdClient" in probe.stdout, probe.stderr
