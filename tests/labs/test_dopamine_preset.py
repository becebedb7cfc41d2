"""The dopamine preset: Dopamine's DQN update, optimizer start included.

labs/atari_dopamine.py --tf1-rmsprop measured it on Breakout by giving the dqn3 update
(summed over the batch) TF1's RMSProp start on that scale (mean square B^2, epsilon
1e-5 B^2). The preset says the same in product terms: Dopamine's batch-mean loss and
TensorFlow 1's centred RMSProp (mean square starting at 1, epsilon 1e-5). The two are one
update: these tests hold them together, and apart from Keras' start.
"""

import numpy as np
import pytest
from gymnasium import spaces

from rlkit.agents import DQN
from rlkit.config import presets
from rlkit.replay.memory import Batch

OBS = spaces.Box(0, 255, (84, 84, 4), np.uint8)
ACTIONS = spaces.Discrete(4)
SMALL = {"buffer_size": 100, "hidden_sizes": [32]}  # (the update is the same at 512)


def batches(n: int, size: int = 32) -> list[Batch]:
    rng = np.random.default_rng(0)
    return [
        Batch(
            obs=rng.integers(0, 256, (1, size, 84, 84, 4), np.uint8),
            actions=rng.integers(0, 4, (1, size)),
            rewards=rng.choice([0.0, 1.0], (1, size), p=[0.8, 0.2]).astype(np.float32),
            next_obs=rng.integers(0, 256, (1, size, 84, 84, 4), np.uint8),
            terminated=rng.random((1, size)) < 0.1,
            truncated=np.zeros((1, size), bool),
        )
        for _ in range(n)
    ]


def preset_agent(**changes) -> DQN:
    config = {**presets.lookup("dqn", "dopamine").agent_config, **SMALL, **changes}
    return DQN(OBS, ACTIONS, seed=5, **config)


def weights_after(agent: DQN, blocks: list[Batch]) -> list[np.ndarray]:
    for batch in blocks:
        agent.learn(batch)
    return [w.numpy() for w in agent.q.model.weights]


@pytest.mark.slow
@pytest.mark.labs
def test_the_preset_is_the_labs_tf1_start_on_the_summed_update():
    from labs.atari_dopamine import start_like_tf1_rmsprop

    blocks = batches(4)
    preset = weights_after(preset_agent(), blocks)
    lab = preset_agent(optimizer="rmsprop_centered", reduction="sum")
    start_like_tf1_rmsprop(lab)
    summed = weights_after(lab, blocks)
    initial = [w.numpy() for w in preset_agent().q.model.weights]
    for got, want, start in zip(preset, summed, initial, strict=True):
        step = np.abs(want - start).max()
        assert step > 0
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-3 * step)  # float rounding


@pytest.mark.slow
def test_the_dqn3_optimizer_on_the_same_update_steps_hundreds_of_times_further_at_first():
    """What rlkit ran under Dopamine's protocol before (docs/atari.md): DQN3.0's centred
    RMSProp, mean square from 0, on the summed update; Dopamine's first step is tiny."""
    blocks = batches(1)
    initial = [w.numpy() for w in preset_agent().q.model.weights]
    tf1 = weights_after(preset_agent(), blocks)
    keras = weights_after(preset_agent(optimizer="rmsprop_centered", reduction="sum"), blocks)
    tf1_step = max(np.abs(w - s).max() for w, s in zip(tf1, initial, strict=True))
    keras_step = max(np.abs(w - s).max() for w, s in zip(keras, initial, strict=True))
    assert keras_step > 30 * tf1_step


@pytest.mark.labs
@pytest.mark.parametrize("key", ["life_loss_terminal", "noop_max", "repeat_action_probability"])
def test_the_preset_plays_dopamines_environment(key):
    from labs.atari_dopamine import DOPAMINE_ENV

    assert presets.lookup("dqn", "dopamine").run["env_kwargs"][key] == DOPAMINE_ENV[key]
