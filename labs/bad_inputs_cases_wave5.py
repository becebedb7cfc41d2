"""The cases of :mod:`labs.bad_inputs_cases` for what wave 5 added: PPO, A2C, SAC (and
discrete SAC), the compiled loop's new agents, MuJoCo's ids and their presets. Each is run
and classified as the others (``usage`` / ``traceback`` / ``accepted``...)."""

from __future__ import annotations

from labs.bad_inputs_cases import LAB, Case, cli, py

#: a small PPO run (a rollout of 8 x 1 steps, minibatches of 4)
PPO = ["train", "ppo", "--env", "CartPole-v1", "--steps", "64", "--quiet", "--eval-episodes",
       "2", "--set", "n_steps=8", "--set", "batch_size=4", "--set", "n_epochs=1"]  # fmt: skip
A2C = ["train", "a2c", "--env", "CartPole-v1", "--steps", "50", "--quiet", "--eval-episodes", "2"]
SAC = ["train", "sac", "--env", "Pendulum-v1", "--steps", "200", "--quiet", "--eval-episodes",
       "1", "--set", "learning_starts=100", "--set", "batch_size=16"]  # fmt: skip


def wave5_cases() -> list[Case]:  # noqa: PLR0915 - one list, read top to bottom
    c: list[Case] = []
    # -- PPO -----------------------------------------------------------------------------------
    c += [
        cli("ppo: runs", *PPO, expect="ok"),
        cli("ppo: n_steps x envs not a multiple of batch_size", *PPO, "--set", "batch_size=5"),
        cli(
            "ppo: num-envs breaks the minibatches",
            *PPO,
            "--num-envs",
            "3",
            "--set",
            "batch_size=16",
        ),  # fmt: skip
        cli("ppo: gae_lambda 1.5", *PPO, "--set", "gae_lambda=1.5"),
        cli("ppo: gamma -0.1", *PPO, "--set", "gamma=-0.1"),
        cli("ppo: clip_range 0", *PPO, "--set", "clip_range=0"),
        cli("ppo: clip_range -0.2", *PPO, "--set", "clip_range=-0.2"),
        cli("ppo: n_epochs 0", *PPO, "--set", "n_epochs=0"),
        cli("ppo: n_steps 0", *PPO, "--set", "n_steps=0"),
        cli("ppo: batch_size -1", *PPO, "--set", "batch_size=-1"),
        cli("ppo: ent_coef -1", *PPO, "--set", "ent_coef=-1"),
        cli("ppo: target_kl text", *PPO, "--set", "target_kl=high"),
        cli(
            "ppo: lr_end_fraction without length",
            *PPO,
            "--preset",
            "none",
            "--set",
            "lr_end_fraction=0",
        ),
        cli(
            "ppo: clip end without length",
            *PPO,
            "--preset",
            "none",
            "--set",
            "clip_range_end_fraction=0",
        ),
        cli("ppo: optimizer sgd", *PPO, "--set", "optimizer=sgd"),
        cli("ppo: hidden_sizes empty list", *PPO, "--set", "hidden_sizes=[]"),
        cli("ppo: hidden_sizes 0", *PPO, "--set", "hidden_sizes=[0]"),
        cli(
            "ppo: Dict observations",
            "train",
            "ppo",
            "--env",
            "lab41:lab41/Boxed-v0",
            "--steps",
            "64",
            "--quiet",
            files=LAB,  # (refused: "wrap the environment to flatten its observations")
        ),  # fmt: skip
        cli(
            "ppo: norm_obs in the compiled loop",
            "train",
            "ppo",
            "--env",
            "rlkit/CartPole-v1",
            "--loop",
            "compiled",
            "--set",
            "norm_obs=true",
            "--steps",
            "64",
        ),  # fmt: skip
        cli(
            "ppo: norm_obs runs (Python loop)",
            *PPO,
            "--set",
            "norm_obs=true",
            "--set",
            "norm_reward=true",
            expect="ok",
        ),  # fmt: skip
        cli(
            "ppo: Box actions run",
            "train",
            "ppo",
            "--env",
            "Pendulum-v1",
            "--steps",
            "64",
            "--quiet",
            "--eval-episodes",
            "1",
            "--set",
            "n_steps=16",
            "--set",
            "batch_size=8",
            expect="ok",
        ),  # fmt: skip
        cli(
            "ppo: compiled loop runs",
            "train",
            "ppo",
            "--env",
            "rlkit/CartPole-v1",
            "--steps",
            "256",
            "--quiet",
            "--eval-episodes",
            "2",
            "--set",
            "n_steps=32",
            "--set",
            "batch_size=16",
            expect="ok",
        ),  # fmt: skip
        cli("ppo: unknown key", *PPO, "--set", "epsilon=0.1"),
        cli("ppo: dqn's key", *PPO, "--set", "target_update=100"),
        cli("ppo: use_sde", *PPO, "--set", "use_sde=true"),
        cli(
            "ppo: steps below one rollout",
            "train",
            "ppo",
            "--env",
            "CartPole-v1",
            "--steps",
            "3",
            "--quiet",
            "--set",
            "n_steps=8",
            "--set",
            "batch_size=4",
            expect="refuse",  # (the preset's 8 envs exceed 3 steps: refused since issue 40)
        ),  # fmt: skip
    ]
    # -- A2C -----------------------------------------------------------------------------------
    c += [
        cli("a2c: runs", *A2C, expect="ok"),
        cli("a2c: ppo's clip_range", *A2C, "--set", "clip_range=0.1"),
        cli("a2c: ppo's n_epochs", *A2C, "--set", "n_epochs=4"),
        cli("a2c: rms_prop_eps 0", *A2C, "--set", "rms_prop_eps=0"),
        cli("a2c: rms_prop_alpha 1.5", *A2C, "--set", "rms_prop_alpha=1.5"),
        cli("a2c: optimizer nope", *A2C, "--set", "optimizer=nope"),
        cli("a2c: n_steps 0", *A2C, "--set", "n_steps=0"),
        cli("a2c: preset of ppo", *A2C, "--preset", "ppo/CartPole-v1"),
        cli("a2c: config", "config", "a2c", expect="ok"),
    ]
    # -- SAC -----------------------------------------------------------------------------------
    c += [
        cli("sac: runs", *SAC, expect="ok"),
        cli("sac: ent_coef auto_x", *SAC, "--set", "ent_coef=auto_x"),
        cli("sac: ent_coef -1", *SAC, "--set", "ent_coef=-1"),
        cli("sac: ent_coef word", *SAC, "--set", "ent_coef=lots"),
        cli("sac: ent_coef auto_0", *SAC, "--set", "ent_coef=auto_0"),
        cli("sac: tau 0", *SAC, "--set", "tau=0"),
        cli("sac: tau 2", *SAC, "--set", "tau=2"),
        cli("sac: gradient_steps 0", *SAC, "--set", "gradient_steps=0"),
        cli("sac: train_freq 0", *SAC, "--set", "train_freq=0"),
        cli("sac: target_update_interval 0", *SAC, "--set", "target_update_interval=0"),
        cli("sac: use_sde", *SAC, "--set", "use_sde=true", expect="ok"),  # (gSDE built since)
        cli("sac: temperature_loss nope", *SAC, "--set", "temperature_loss=nope"),
        cli("sac: target_entropy text", *SAC, "--set", "target_entropy=auto_high"),
        cli(
            "sac: log_std bounds crossed", *SAC, "--set", "log_std_min=3", "--set", "log_std_max=2"
        ),  # fmt: skip
        cli("sac: batch above buffer", *SAC, "--set", "buffer_size=8", "--set", "batch_size=16"),
        cli(
            "sac: discrete CartPole runs",
            "train",
            "sac",
            "--env",
            "CartPole-v1",
            "--steps",
            "200",
            "--quiet",
            "--eval-episodes",
            "1",
            "--set",
            "learning_starts=100",
            "--set",
            "batch_size=16",
            expect="ok",
        ),  # fmt: skip
        cli(
            "sac: discrete target_entropy_scale 2",
            "train",
            "sac",
            "--env",
            "CartPole-v1",
            "--steps",
            "200",
            "--set",
            "target_entropy_scale=2",
        ),  # fmt: skip
        cli(
            "sac: compiled on Pendulum runs",
            "train",
            "sac",
            "--env",
            "rlkit/Pendulum-v1",
            "--steps",
            "300",
            "--quiet",
            "--eval-episodes",
            "1",
            "--set",
            "learning_starts=100",
            "--set",
            "batch_size=16",
            expect="ok",
        ),  # fmt: skip
        cli(
            "sac: Dict observations",
            "train",
            "sac",
            "--env",
            "lab41:lab41/Boxed-v0",
            "--steps",
            "64",
            "--quiet",
            files=LAB,
        ),  # fmt: skip
    ]
    # -- MuJoCo and the compiled loop ----------------------------------------------------------
    c += [
        cli(
            "mujoco: v4 id runs",
            "train",
            "td3",
            "--env",
            "HalfCheetah-v4",
            "--steps",
            "100",
            "--quiet",
            "--eval-episodes",
            "1",
            expect="ok",
        ),
        cli(
            "mujoco: unknown version", "train", "td3", "--env", "HalfCheetah-v9", "--steps", "100"
        ),  # fmt: skip
        cli("mujoco: dqn on it", "train", "dqn", "--env", "Hopper-v5", "--steps", "100"),
        cli(
            "mujoco: env kwarg unknown",
            "train",
            "sac",
            "--env",
            "Hopper-v5",
            "--env-kwargs",
            "wobble=1",
            "--steps",
            "100",
        ),  # fmt: skip
        cli(
            "mujoco: video on a v5 run's folder missing",
            "evaluate",
            "nowhere",
            "--env",
            "Hopper-v5",
            "--video",
            "x.mp4",
        ),  # fmt: skip
        cli(
            "compiled: forced for reinforce",
            "train",
            "reinforce",
            "--env",
            "rlkit/CartPole-v1",
            "--loop",
            "compiled",
        ),  # fmt: skip
        cli(
            "compiled: forced on a gym id",
            "train",
            "ppo",
            "--env",
            "CartPole-v1",
            "--loop",
            "compiled",
        ),  # fmt: skip
        cli(
            "compiled: loop word", "train", "ppo", "--env", "rlkit/CartPole-v1", "--loop", "fast"
        ),  # fmt: skip
        cli(
            "compiled: ppo on a MinAtar board (its torso) runs",
            "train",
            "ppo",
            "--env",
            "rlkit/MinAtar-Breakout-v0",
            "--loop",
            "compiled",
            "--steps",
            "2048",
            "--quiet",
            "--eval-episodes",
            "1",
            expect="ok",
        ),
        cli(
            "compiled: ppo with norm_obs on a MinAtar board",
            "train",
            "ppo",
            "--env",
            "MinAtar/Breakout-v0",
            "--set",
            "norm_obs=true",
            "--steps",
            "64",
        ),
    ]
    # -- the Python API ------------------------------------------------------------------------
    head = "import gymnasium as gym, numpy as np, rlkit\n"
    c += [
        py("api: PPO unknown key", head + "rlkit.agents.PPO.from_env('CartPole-v1', lr=1)"),
        py("api: PPO n_steps 0", head + "rlkit.agents.PPO.from_env('CartPole-v1', n_steps=0)"),
        py(
            "api: PPO on a Dict env",
            head + "rlkit.agents.PPO.from_env(gym.make("
            "'CartPole-v1').observation_space, gym.spaces.MultiBinary(3))",
        ),  # fmt: skip
        py(
            "api: A2C clip_range", head + "rlkit.agents.A2C.from_env('CartPole-v1', clip_range=0.1)"
        ),  # fmt: skip
        py(
            "api: SAC ent_coef bad",
            head + "rlkit.agents.SAC.from_env('Pendulum-v1', ent_coef='auto_x')",
        ),  # fmt: skip
        py(
            "api: PPO act on wrong shape",
            head + "agent = rlkit.agents.PPO.from_env('CartPole-v1')\nagent.act(np.zeros(7))",
        ),  # fmt: skip
        py(
            "api: SAC act on wrong shape",
            head + "agent = rlkit.agents.SAC.from_env('Pendulum-v1')\nagent.act(np.zeros(7))",
        ),  # fmt: skip
        py(
            "api: PPO train ok",
            head + "env = gym.make('CartPole-v1')\nagent = "
            "rlkit.agents.PPO.from_env(env, n_steps=8, batch_size=4, n_epochs=1)\n"
            "rlkit.train(agent, env, steps=32)",
            expect="ok",
        ),  # fmt: skip
    ]
    return c
