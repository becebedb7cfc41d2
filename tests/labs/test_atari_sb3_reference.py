"""labs/atari_sb3_reference.py: the reference run's schedule is Dopamine's (its epsilon by
hand)."""

import importlib

import pytest

pytestmark = [pytest.mark.labs]


@pytest.fixture(scope="module")
def reference():
    return importlib.import_module("labs.atari_sb3_reference")  # it imports labs.atari_dopamine


def test_epsilon_is_dopamines_linearly_decaying_epsilon(reference):
    """linearly_decaying_epsilon(250k, step, 20k, 0.01), by hand."""
    epsilon = reference.dopamine_epsilon
    assert epsilon(0) == epsilon(20_000) == 1.0
    assert epsilon(145_000) == pytest.approx(0.01 + 0.99 * 0.5)
    assert epsilon(270_000) == pytest.approx(0.01) and epsilon(10**6) == pytest.approx(0.01)
