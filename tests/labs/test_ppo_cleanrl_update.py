"""labs/ppo_cleanrl_update.py: rlkit's PPO update equals CleanRL's ``ppo.py`` update (torch's
own Adam and ``clip_grad_norm_``) to float32 rounding without value clipping once Adam's
epsilon is out of both, and as shipped (Adam's epsilon 1e-5 in both, placed as torch places
it: rlkit.learn.optimizers.torch_adam) too (needs a Python with torch: this one, or
/tmp/benchvenv)."""

import importlib

import pytest

pytestmark = [pytest.mark.labs]


@pytest.fixture(scope="module")
def lab():
    # skipped here, not at import: a run that leaves the lab tests out counts no skip
    module = importlib.import_module("labs.ppo_cleanrl_update")
    if module.torch_python() is None:
        pytest.skip(f"no Python with torch (neither this one nor {module.TORCH_PYTHON})")
    return module


@pytest.fixture(scope="module")
def result(lab):
    return lab.compare("CartPole-v1", ["mse-eps-0", "mse"], hidden=[8], envs=2, steps=32)


def test_the_rollout_and_gae_are_cleanrls(result):
    assert result["rollout"]["truncations"] == 0 and result["rollout"]["terminations"] > 0
    gae = result["gae"]
    assert gae["values"] < 1e-6 and gae["log_probs"] < 1e-6  # the weights were copied right
    assert gae["advantages"] < 1e-5 * gae["largest advantage"]
    assert gae["returns"] < 1e-5 * gae["largest advantage"]


def test_unclipped_value_loss_update_equals_cleanrls_to_rounding(result):
    out = result["settings"]["mse-eps-0"]
    assert out["epochs"] == 4.0
    for group, (diff, relative, length) in out["groups"].items():
        assert diff < 1e-6 and relative < 1e-3, group  # steps are about 1e-3 each
        assert length == pytest.approx(1.0, abs=1e-4), group
    for name, (mine, theirs) in out["losses"].items():
        assert mine == pytest.approx(theirs, rel=1e-4, abs=1e-7), name


def test_as_shipped_with_epsilon_it_equals_cleanrls_too(result):
    # Keras' own Adam (epsilon on the uncorrected root: 31.6x torch's at the first step) made
    # rlkit's actor move 0.61x CleanRL's here; torch's placement makes the steps the same
    out = result["settings"]["mse"]
    for group, (diff, relative, length) in out["groups"].items():
        assert diff < 1e-6 and relative < 1e-3, group
        assert length == pytest.approx(1.0, abs=1e-4), group
