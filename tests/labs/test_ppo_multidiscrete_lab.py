"""labs/ppo_multidiscrete.py: rlkit's MultiDiscrete log-probability, entropy and their
gradients equal SB3's ``MultiCategoricalDistribution``'s to float64 rounding (needs a Python
with Stable-Baselines3: the lab's ``SB3_PYTHON``)."""

import importlib
from pathlib import Path

import pytest

pytestmark = [pytest.mark.labs]


@pytest.fixture(scope="module")
def lab():
    # skipped here, not at import: a run that leaves the lab tests out counts no skip
    module = importlib.import_module("labs.ppo_multidiscrete")
    if not Path(module.SB3_PYTHON).is_file():
        pytest.skip(f"no Python with Stable-Baselines3 at {module.SB3_PYTHON}")
    return module


def test_the_formulas_are_sb3s_to_float64_rounding(lab):
    result = lab.formulas(nvec=(3, 1, 5), rows=64, seed=1)
    assert result["largest |log_prob|"] > 5.0  # (logits far from uniform)
    for name in ("log_prob", "entropy", "grad_log_prob", "grad_entropy"):
        assert result[name] < 1e-12, name
