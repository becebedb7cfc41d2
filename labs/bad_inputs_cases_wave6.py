"""The cases of :mod:`labs.bad_inputs_cases` for what came after wave 5's first landing:
SAC's ``sample`` export, gSDE in the compiled loop, PPO's ``plain_init`` and ``activation``,
invalid-action masks in an export, the PPO MuJoCo presets and discrete SAC's MinAtar preset.
Each is run and classified as the others (``usage`` / ``traceback`` / ``accepted``...)."""

from __future__ import annotations

from labs.bad_inputs_cases import Case, cli, py

PPO = ["train", "ppo", "--env", "CartPole-v1", "--steps", "64", "--quiet", "--eval-episodes",
       "2", "--set", "n_steps=8", "--set", "batch_size=4", "--set", "n_epochs=1"]  # fmt: skip
HEAD = "import gymnasium as gym, numpy as np, rlkit\n"


def wave6_cases() -> list[Case]:
    c: list[Case] = [
        cli("w6 ppo: activation sigmoid", *PPO, "--set", "activation=sigmoid"),
        cli("w6 ppo: activation relu runs", *PPO, "--set", "activation=relu", expect="ok"),
        cli("w6 ppo: plain_init he", *PPO, "--set", "ortho_init=false", "--set", "plain_init=he"),
        cli("w6 ppo: plain_init torch with ortho", *PPO, "--set", "plain_init=torch"),
        cli(
            "w6 ppo: plain_init torch runs",
            *PPO,
            "--set",
            "ortho_init=false",
            "--set",
            "plain_init=torch",
            expect="ok",
        ),  # fmt: skip
        cli(
            "w6 a2c: plain_init torch with ortho",
            "train",
            "a2c",
            "--env",
            "CartPole-v1",
            "--steps",
            "50",
            "--quiet",
            "--set",
            "plain_init=torch",
        ),  # fmt: skip
        cli(
            "w6 ppo: activation relu on MinAtar",
            "train",
            "ppo",
            "--env",
            "rlkit/MinAtar-Breakout-v0",
            "--steps",
            "64",
            "--quiet",
            "--set",
            "activation=relu",
        ),  # fmt: skip
        cli(
            "w6 ppo: plain_init torch on MinAtar",
            "train",
            "ppo",
            "--env",
            "MinAtar/Breakout-v1",
            "--steps",
            "64",
            "--quiet",
            "--set",
            "ortho_init=false",
            "--set",
            "plain_init=torch",
        ),  # fmt: skip
        cli(
            "w6 sac: compiled gSDE runs",
            "train",
            "sac",
            "--env",
            "rlkit/MountainCarContinuous-v0",
            "--steps",
            "300",
            "--quiet",
            "--eval-episodes",
            "1",
            "--set",
            "learning_starts=100",
            "--set",
            "batch_size=16",
            "--set",
            "buffer_size=1000",
            expect="ok",
        ),  # fmt: skip
        cli(
            "w6 ppo: compiled gSDE runs",
            "train",
            "ppo",
            "--env",
            "rlkit/Pendulum-v1",
            "--steps",
            "256",
            "--quiet",
            "--eval-episodes",
            "1",
            "--set",
            "n_steps=64",
            "--set",
            "use_sde=true",
            "--set",
            "batch_size=32",
            expect="ok",
        ),  # fmt: skip
        cli(
            "w6 ppo: compiled gSDE sample freq 0",
            "train",
            "ppo",
            "--env",
            "rlkit/Pendulum-v1",
            "--steps",
            "256",
            "--quiet",
            "--set",
            "use_sde=true",
            "--set",
            "sde_sample_freq=0",
        ),  # fmt: skip
        cli(
            "w6 sac: minatar preset, tau 0",
            "train",
            "sac",
            "--env",
            "MinAtar/Breakout-v1",
            "--steps",
            "64",
            "--quiet",
            "--set",
            "tau=0",
        ),  # fmt: skip
        cli(
            "w6 sac: minatar preset on a Box env",
            "train",
            "sac",
            "--env",
            "Pendulum-v1",
            "--preset",
            "minatar",
            "--steps",
            "64",
            "--quiet",
            expect="ok",
        ),  # fmt: skip
        cli(
            "w6 ppo: HalfCheetah preset, batch 5",
            "train",
            "ppo",
            "--env",
            "HalfCheetah-v5",
            "--steps",
            "64",
            "--quiet",
            "--set",
            "batch_size=5",
        ),  # fmt: skip
        cli(
            "w6 ppo: Humanoid preset, bad gamma",
            "train",
            "ppo",
            "--env",
            "Humanoid-v5",
            "--steps",
            "64",
            "--quiet",
            "--set",
            "gamma=1.5",
        ),  # fmt: skip
        py(
            "w6 api: SAC act_with_noise of the wrong width",
            HEAD + "a = rlkit.agents.SAC.from_env('Pendulum-v1')\n"
            "a.act_with_noise(np.zeros(3, np.float32), np.zeros(4, np.float32))",
        ),  # fmt: skip
        py(
            "w6 api: SAC act_with_noise under gSDE",
            HEAD + "a = rlkit.agents.SAC.from_env('Pendulum-v1', use_sde=True)\n"
            "a.act_with_noise(np.zeros(3, np.float32), np.zeros(1, np.float32))",
        ),  # fmt: skip
        py(
            "w6 api: discrete SAC act_with_noise ok",
            HEAD + "a = rlkit.agents.SAC.from_env('CartPole-v1')\n"
            "print(a.act_with_noise(np.zeros(4, np.float32), np.full(2, 0.5, np.float32)))",
            expect="ok",
        ),  # fmt: skip
        py(
            "w6 api: PPO act_with_noise with a bad mask",
            HEAD + "a = rlkit.agents.PPO.from_env('CartPole-v1', action_masks=True)\n"
            "a.act_with_noise(np.zeros(4, np.float32), np.full(2, 0.5, np.float32), "
            "np.zeros(2, bool))",
        ),  # fmt: skip
        py(
            "w6 api: PPO activation tanhh",
            HEAD + "rlkit.agents.PPO.from_env('CartPole-v1', activation='tanhh')",
        ),  # fmt: skip
        py(
            "w6 api: A2C plain_init torch ok",
            HEAD + "rlkit.agents.A2C.from_env('Pendulum-v1', ortho_init=False, plain_init='torch')",
            expect="ok",
        ),  # fmt: skip
    ]
    return c
