from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from effectd import EffectdClient  # noqa: E402
from labs.stack import Effectd, Payments, start_effectd, start_payments  # noqa: E402


@pytest.fixture(scope="session")
def payments() -> Iterator[Payments]:
    sim = start_payments()
    yield sim
    sim.stop()


@pytest.fixture(scope="session")
def effectd(payments: Payments) -> Iterator[Effectd]:
    server = start_effectd(payments.url)
    yield server
    server.stop()


@pytest.fixture()
def client(effectd: Effectd) -> EffectdClient:
    return EffectdClient(effectd.url, effectd.token)


@pytest.fixture(autouse=True)
def _clear_faults(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "payments" in request.fixturenames:
        request.getfixturevalue("payments").faults([])
