"""PPO's and A2C's rl-zoo presets beyond CartPole: picked by themselves for their env ids,
value for value the zoo's entries; and PPO's bad input refused in one line from the CLI,
exit 2, with nothing written (issue 53)."""

from __future__ import annotations

import pytest

from rlkit.cli.main import main
from rlkit.run import experiment

# rl-zoo hyperparams/ppo.yml and a2c.yml (commit 22e3ff2) as rlkit's keys: [run]'s steps and
# num_envs, then each agent key the entry sets or SB3's default it relies on. `lin_X`:
# learning_rate X, lr_end_fraction 0 over the whole run (lr_anneal_fraction 1);
# normalize: norm_obs and norm_reward; use_sde and sde_sample_freq as the entries set them.
LIN: dict[str, object] = {"lr_end_fraction": 0.0, "lr_anneal_fraction": 1.0}
NORM: dict[str, object] = {"norm_obs": True, "norm_reward": True}
SB3_PPO: dict[str, object] = {
    "learning_rate": 3e-4,
    "batch_size": 64,
    "clip_range": 0.2,
    "vf_coef": 0.5,
    "max_grad_norm": 0.5,
    "normalize_advantage": True,
    "lr_end_fraction": -1.0,
    "norm_obs": False,
    "norm_reward": False,
    "log_std_init": 0.0,
    "ortho_init": True,
}
SB3_A2C: dict[str, object] = {
    "learning_rate": 7e-4,
    "n_steps": 5,
    "gamma": 0.99,
    "gae_lambda": 1.0,
    "vf_coef": 0.5,
    "max_grad_norm": 0.5,
    "optimizer": "rmsprop",
    "normalize_advantage": False,
    "lr_end_fraction": -1.0,
    "norm_obs": False,
    "norm_reward": False,
    "log_std_init": 0.0,
    "ortho_init": True,
}
A2C_SDE: dict[str, object] = {
    **NORM,
    "ent_coef": 0.0,
    "max_grad_norm": 0.5,
    "n_steps": 8,
    "gae_lambda": 0.9,
    "vf_coef": 0.4,
    "optimizer": "rmsprop",
    "normalize_advantage": False,
    **LIN,
    "log_std_init": -2.0,
    "ortho_init": False,
}
#: rl-zoo's MuJoCo policy_kwargs: log_std_init -2, ortho_init False (PyTorch's init),
#: activation_fn nn.ReLU, net_arch dict(pi=[256, 256], vf=[256, 256])
RELU_256: dict[str, object] = {
    "log_std_init": -2.0,
    "ortho_init": False,
    "plain_init": "torch",
    "activation": "relu",
    "hidden_sizes": (256, 256),
    "value_hidden_sizes": (256, 256),
}
ZOO: dict[tuple[str, str], tuple[int, int, dict[str, object]]] = {
    ("ppo", "Acrobot-v1"): (
        1_000_000,
        16,
        {**NORM, "n_steps": 256, "gae_lambda": 0.94, "gamma": 0.99, "n_epochs": 4, "ent_coef": 0.0},
    ),
    ("ppo", "LunarLander-v3"): (
        1_000_000,
        16,
        {
            "n_steps": 1024,
            "batch_size": 64,
            "gae_lambda": 0.98,
            "gamma": 0.999,
            "n_epochs": 4,
            "ent_coef": 0.01,
        },
    ),
    ("ppo", "LunarLanderContinuous-v3"): (
        1_000_000,
        16,
        {
            "n_steps": 1024,
            "batch_size": 64,
            "gae_lambda": 0.98,
            "gamma": 0.999,
            "n_epochs": 4,
            "ent_coef": 0.01,
        },
    ),
    ("ppo", "MountainCar-v0"): (
        1_000_000,
        16,
        {**NORM, "n_steps": 16, "gae_lambda": 0.98, "gamma": 0.99, "n_epochs": 4, "ent_coef": 0.0},
    ),
    ("ppo", "Pendulum-v1"): (
        100_000,
        4,
        {
            "n_steps": 1024,
            "gae_lambda": 0.95,
            "gamma": 0.9,
            "n_epochs": 10,
            "ent_coef": 0.0,
            "learning_rate": 1e-3,
            "clip_range": 0.2,
        },
    ),
    # batch_size 256 over a rollout of 8: SB3 yields one minibatch of the 8 (rlkit's 0)
    ("ppo", "MountainCarContinuous-v0"): (
        20_000,
        1,
        {
            **NORM,
            "batch_size": 0,
            "n_steps": 8,
            "gamma": 0.9999,
            "learning_rate": 7.77e-5,
            "ent_coef": 0.00429,
            "clip_range": 0.1,
            "n_epochs": 10,
            "gae_lambda": 0.9,
            "max_grad_norm": 5.0,
            "vf_coef": 0.19,
            "log_std_init": -3.29,
            "ortho_init": False,
        },
    ),
    ("ppo", "BipedalWalker-v3"): (
        5_000_000,
        32,
        {
            **NORM,
            "n_steps": 2048,
            "batch_size": 64,
            "gae_lambda": 0.95,
            "gamma": 0.999,
            "n_epochs": 10,
            "ent_coef": 0.0,
            "learning_rate": 3e-4,
            "clip_range": 0.18,
        },
    ),
    ("a2c", "Acrobot-v1"): (500_000, 16, {**NORM, "ent_coef": 0.0}),
    ("a2c", "LunarLander-v3"): (
        200_000,
        8,
        {"gamma": 0.995, "n_steps": 5, "learning_rate": 0.00083, **LIN, "ent_coef": 1e-5},
    ),
    ("a2c", "MountainCar-v0"): (1_000_000, 16, {**NORM, "ent_coef": 0.0}),
    ("a2c", "Pendulum-v1"): (1_000_000, 8, {**A2C_SDE, "gamma": 0.9, "learning_rate": 7e-4}),
    ("a2c", "LunarLanderContinuous-v3"): (
        5_000_000,
        4,
        {**A2C_SDE, "gamma": 0.99, "learning_rate": 7e-4},
    ),
    ("a2c", "MountainCarContinuous-v0"): (
        100_000,
        4,
        {**NORM, "n_steps": 100, "ent_coef": 0.0, "log_std_init": 0.0, "ortho_init": False},
    ),
    ("a2c", "BipedalWalker-v3"): (
        5_000_000,
        16,
        {**A2C_SDE, "gamma": 0.99, "learning_rate": 0.00096},
    ),
    # MuJoCo (hyperparams/ppo.yml's v4 entries at 208b6fd, applied to v5): n_envs 1
    ("ppo", "HalfCheetah-v5"): (1_000_000, 1, {
        **NORM, "batch_size": 64, "n_steps": 512, "gamma": 0.98, "learning_rate": 2.0633e-05,
        "ent_coef": 0.000401762, "clip_range": 0.1, "n_epochs": 20, "gae_lambda": 0.92,
        "max_grad_norm": 0.8, "vf_coef": 0.58096, **RELU_256}),
    ("ppo", "Hopper-v5"): (1_000_000, 1, {
        **NORM, "batch_size": 32, "n_steps": 512, "gamma": 0.999, "learning_rate": 9.80828e-05,
        "ent_coef": 0.00229519, "clip_range": 0.2, "n_epochs": 5, "gae_lambda": 0.99,
        "max_grad_norm": 0.7, "vf_coef": 0.835671, **RELU_256}),
    ("ppo", "Walker2d-v5"): (1_000_000, 1, {
        **NORM, "batch_size": 32, "n_steps": 512, "gamma": 0.99, "learning_rate": 5.05041e-05,
        "ent_coef": 0.000585045, "clip_range": 0.1, "n_epochs": 20, "gae_lambda": 0.95,
        "max_grad_norm": 1.0, "vf_coef": 0.871923, "activation": "tanh",
        "hidden_sizes": (64, 64)}),
    ("ppo", "Humanoid-v5"): (10_000_000, 1, {
        **NORM, "batch_size": 256, "n_steps": 512, "gamma": 0.95, "learning_rate": 3.56987e-05,
        "ent_coef": 0.00238306, "clip_range": 0.3, "n_epochs": 5, "gae_lambda": 0.9,
        "max_grad_norm": 2.0, "vf_coef": 0.431892, **RELU_256}),
    ("ppo", "Ant-v5"): (1_000_000, 1, {**NORM, "n_steps": 2048, "n_epochs": 10,
                                       "gamma": 0.99, "gae_lambda": 0.95}),
}  # fmt: skip

#: the entries with use_sde: True, and their sde_sample_freq (-1: unset)
WITH_SDE = {("ppo", "Pendulum-v1"): 4, ("ppo", "MountainCarContinuous-v0"): -1,
            ("a2c", "Pendulum-v1"): -1, ("a2c", "LunarLanderContinuous-v3"): -1,
            ("a2c", "MountainCarContinuous-v0"): 16, ("a2c", "BipedalWalker-v3"): -1}  # fmt: skip


@pytest.mark.parametrize("agent, env", list(ZOO), ids=lambda x: x)
def test_the_zoo_entry_is_picked_by_itself_value_for_value(agent, env):
    plan = experiment.plan(agent, env)
    assert plan.preset is not None and plan.preset.name == f"{agent}/{env}"
    assert plan.preset_picked
    steps, num_envs, keys = ZOO[agent, env]
    assert (plan.settings.steps, plan.settings.num_envs) == (steps, num_envs)
    expected = {**(SB3_PPO if agent == "ppo" else SB3_A2C), **keys}
    config = plan.agent_config
    assert {k: getattr(config, k) for k in expected} == expected
    # gSDE carried over where the zoo's entry sets it, nothing about it left out
    assert "\n# left out: use_sde" not in plan.preset.text
    assert config.use_sde == ((agent, env) in WITH_SDE)
    assert config.sde_sample_freq == WITH_SDE.get((agent, env), -1)


def cli(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize(
    "agent, args, message",
    [
        (
            "ppo",
            [
                "--preset",
                "none",
                "--num-envs",
                "3",
                "--set",
                "n_steps=10",
                "--set",
                "batch_size=64",
            ],
            "is not a multiple of batch_size",
        ),  # fmt: skip
        ("ppo", ["--set", "gae_lambda=1.5"], "gae_lambda: must be in [0, 1]"),
        ("ppo", ["--set", "gae_lambda=-0.1"], "gae_lambda: must be in [0, 1]"),
        ("ppo", ["--set", "gamma=1.01"], "gamma: must be in [0, 1]"),
        ("ppo", ["--set", "gamma=-1"], "gamma: must be in [0, 1]"),
        ("ppo", ["--set", "clip_range=0"], "clip_range: must be > 0"),
        ("ppo", ["--set", "clip_range=-0.2"], "clip_range: must be > 0"),
        ("ppo", ["--set", "n_epochs=0"], "n_epochs: must be > 0"),
        ("a2c", ["--set", "gae_lambda=2"], "gae_lambda: must be in [0, 1]"),
        ("a2c", ["--set", "gamma=-0.5"], "gamma: must be in [0, 1]"),
        # the rollout for the compiled loop's planner too
        (
            "ppo",
            ["--env", "rlkit/CartPole-v1", "--num-envs", "3", "--set", "batch_size=100"],
            "(32 x 3 = 96) is not a multiple of batch_size (100)",
        ),
        pytest.param(
            "ppo",
            ["--env", "rlkit/Acrobot-v1", "--loop", "compiled"],
            "the compiled loop does not take observation normalisation",
            marks=pytest.mark.slow,
        ),  # the Acrobot preset's norm_obs; ~20 s
    ],
)
def test_bad_input_is_one_line_exit_2_nothing_written(capsys, tmp_path, agent, args, message):
    out = tmp_path / "runs"
    status, stdout, err = cli(capsys, "train", agent, *args, "--steps", "256", "--out", out,
                              "--quiet")  # fmt: skip
    assert status == 2 and stdout == ""
    assert len(err.strip().splitlines()) == 1 and message in err, err
    assert not out.exists() or not any(out.iterdir())
