"""SAC's presets picked by themselves for their env ids, value for value their sources:
rl-zoo's sac.yml BipedalWalker-v3 and MountainCarContinuous-v0 entries (gSDE), HalfCheetah's
v4 entry, and discrete SAC's MinAtar preset (CleanRL's sac_atari.py at MinAtar's scale)
(issue 52)."""

from __future__ import annotations

import pytest

from rlkit.run import experiment

#: env id -> (preset name, steps, the agent keys the source sets)
SOURCES: dict[str, tuple[str, int, dict[str, object]]] = {
    "BipedalWalker-v3": ("sac/BipedalWalker-v3", 500_000, {
        "learning_rate": 7.3e-4, "buffer_size": 300_000, "batch_size": 256, "ent_coef": "auto",
        "gamma": 0.98, "tau": 0.02, "train_freq": 64, "gradient_steps": 64,
        "learning_starts": 10_000, "use_sde": True, "sde_sample_freq": -1, "log_std_init": -3.0,
        "actor_hidden_sizes": (400, 300), "critic_hidden_sizes": (400, 300),
        "target_update_interval": 1, "use_sde_at_warmup": False}),
    "MountainCarContinuous-v0": ("sac/MountainCarContinuous-v0", 50_000, {
        "learning_rate": 3e-4, "buffer_size": 50_000, "batch_size": 512, "ent_coef": "0.1",
        "train_freq": 32, "gradient_steps": 32, "gamma": 0.9999, "tau": 0.01,
        "learning_starts": 0, "use_sde": True, "log_std_init": -3.67,
        "actor_hidden_sizes": (64, 64)}),
    "HalfCheetah-v5": ("sac/HalfCheetah-v5", 1_000_000, {
        "learning_starts": 10_000, "learning_rate": 3e-4, "batch_size": 256, "tau": 0.005,
        "actor_hidden_sizes": (256, 256), "use_sde": False}),
    "MinAtar/Breakout-v1": ("sac/minatar", 1_000_000, {
        "learning_rate": 3e-4, "adam_epsilon": 1e-4, "batch_size": 64, "buffer_size": 100_000,
        "learning_starts": 5_000, "train_freq": 4, "gradient_steps": 1, "tau": 1.0,
        "target_update_interval": 2_000, "target_entropy_scale": 0.89, "ent_coef": "auto",
        "temperature_loss": "alpha"}),
}  # fmt: skip


@pytest.mark.parametrize("env_id", list(SOURCES))
def test_the_source_is_picked_by_itself_value_for_value(env_id):
    name, steps, keys = SOURCES[env_id]
    plan = experiment.plan("sac", env_id)
    assert plan.preset is not None and plan.preset.name == name and plan.preset_picked
    assert plan.settings.steps == steps
    config = plan.agent_config
    assert {k: getattr(config, k) for k in keys} == keys


def test_the_minatar_preset_also_takes_the_tensorflow_twin():
    plan = experiment.plan("sac", "rlkit/MinAtar-Breakout-v0")
    assert plan.preset is not None and plan.preset.name == "sac/minatar"
