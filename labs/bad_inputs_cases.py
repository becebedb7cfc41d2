"""The cases of :mod:`labs.bad_inputs` (resume onwards in :mod:`labs.bad_inputs_cases_more`):
bad and odd inputs over every command and the Python API, each with what it expects
(``refuse``, ``ok`` or ``fails``)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

RLKIT = [sys.executable, "-m", "rlkit.cli.main"]
TINY = ["--quiet", "--eval-episodes", "2", "--set", "learning_starts=100", "--set",
        "hidden_sizes=16", "--set", "jit_compile=false", "--set", "train_freq=50",
        "--set", "gradient_steps=2"]  # fmt: skip
TRAIN = ["train", "dqn", "--steps", "200", *TINY]


@dataclass(frozen=True)
class Case:
    name: str
    argv: tuple[str, ...] = ()  # a command line (after `rlkit`)
    code: str = ""  # or Python code
    #: "refuse" (one line, exit 2, nothing written), "ok" (taken), or "fails": the user's own
    #: code raised (an env's step): its traceback, pointing at that code, is what helps
    expect: str = "refuse"
    files: tuple[tuple[str, str], ...] = ()  # (name, text) written into the folder first


def cli(name: str, *argv: str, expect: str = "refuse", files=()) -> Case:
    return Case(name, tuple(argv), expect=expect, files=tuple(files))


def py(name: str, code: str, expect: str = "refuse") -> Case:
    return Case(name, code=code, expect=expect)


LAB = (
    (
        "lab41/__init__.py",
        """
import gymnasium as gym
import numpy as np
class Line(gym.Env):
    action_space = gym.spaces.Discrete(2)
    observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
    def __init__(self, size=3):
        if size <= 0:
            raise ValueError(f"size must be positive, got {size}")
        self.size = size
    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.at = 0
        return np.zeros(1, np.float32), {}
    def step(self, action):
        self.at += 1
        return np.zeros(1, np.float32), 1.0, self.at >= self.size, False, {}
class Boxed(Line):
    observation_space = gym.spaces.Dict({"x": gym.spaces.Box(0.0, 1.0, (1,), np.float32)})
    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return {"x": np.zeros(1, np.float32)}, {}
    def step(self, action):
        _, r, d, t, i = super().step(action)
        return {"x": np.zeros(1, np.float32)}, r, d, t, i
class Broken(Line):
    def step(self, action):
        raise RuntimeError("the env is broken")
gym.register("lab41/Line-v0", entry_point=Line, max_episode_steps=20)
gym.register("lab41/Boxed-v0", entry_point=Boxed, max_episode_steps=20)
gym.register("lab41/Missing-v0", entry_point="lab41_gone:Env")
gym.register("lab41/Broken-v0", entry_point=Broken, max_episode_steps=20)
def bad_builder(observation_space, action_space):
    raise RuntimeError("the builder is broken")
def not_a_model(observation_space, action_space):
    return 42
def wrong_width(observation_space, action_space):
    import keras
    inputs = keras.Input(observation_space.shape)
    return keras.Model(inputs, keras.layers.Dense(7)(inputs))
""",
    ),
)
LAB_ENV = "lab41:lab41/Line-v0"


def cases() -> list[Case]:  # noqa: PLR0915 - one list, read top to bottom
    c: list[Case] = []
    # -- the command itself -----------------------------------------------------------------
    c += [
        cli("no command", expect="ok"),
        cli("--help", "--help", expect="ok"),
        cli("--version", "--version", expect="ok"),
        cli("unknown command", "trian"),
        cli("unknown option", "--frobnicate"),
        cli("help of train", "train", "--help", expect="ok"),
    ]
    # -- train: agents and envs ---------------------------------------------------------------
    c += [
        cli("train: unknown agent", "train", "dqm"),
        cli("train: agent in capitals (a suggestion)", "train", "DQN"),
        cli("train: no agent", "train"),
        cli("train: empty agent", "train", ""),
        cli("train: unknown env", *TRAIN, "--env", "CartPol-v1"),
        cli("train: empty env", *TRAIN, "--env", ""),
        cli("train: env of whitespace", *TRAIN, "--env", "   "),
        cli("train: env with spaces", *TRAIN, "--env", "Cart Pole"),
        cli("train: dqn on continuous actions", *TRAIN, "--env", "Pendulum-v1"),
        cli("train: ddpg on discrete actions", "train", "ddpg", "--env", "CartPole-v1"),
        cli("train: module that does not import", *TRAIN, "--env", "nowhere_mod:X-v0"),
        cli(
            "train: module:id with a missing id", *TRAIN, "--env", "lab41:lab41/Nope-v0", files=LAB
        ),
        cli("train: entry point missing", *TRAIN, "--env", "lab41:lab41/Missing-v0", files=LAB),
        cli(
            "train: user env refuses kwargs",
            *TRAIN,
            "--env",
            LAB_ENV,
            "--env-kwargs",
            "size=0",
            files=LAB,
        ),
        cli(
            "train: user env unknown kwarg",
            *TRAIN,
            "--env",
            LAB_ENV,
            "--env-kwargs",
            "sise=3",
            files=LAB,
        ),
        cli(
            "train: user env ok",
            *TRAIN,
            "--env",
            LAB_ENV,
            "--env-kwargs",
            "size=4",
            files=LAB,
            expect="ok",
        ),
        cli(
            "train: dict obs without q_network", *TRAIN, "--env", "lab41:lab41/Boxed-v0", files=LAB
        ),
        cli(
            "train: env that raises in step",
            *TRAIN,
            "--env",
            "lab41:lab41/Broken-v0",
            files=LAB,
            expect="fails",
        ),
        cli(
            "train: bandit arm_means=[]",
            "train",
            "reinforce",
            "--env",
            "rlkit/MultiArmedBandit-v0",
            "--env-kwargs",
            "arm_means=[]",
        ),
        cli(
            "train: bandit std=-1",
            "train",
            "reinforce",
            "--env",
            "rlkit/MultiArmedBandit-v0",
            "--env-kwargs",
            "std=-1",
        ),
        cli(
            "train: bandit std=nan",
            "train",
            "reinforce",
            "--env",
            "rlkit/MultiArmedBandit-v0",
            "--env-kwargs",
            "std=nan",
        ),
        cli("train: env-kwargs without =", *TRAIN, "--env-kwargs", "continuous"),
        cli("train: env-kwargs empty key", *TRAIN, "--env-kwargs", "=3"),
        cli("train: env-kwargs render human", *TRAIN, "--env-kwargs", 'render_mode="human"'),
        cli(
            "train: env-kwargs render rgb_array",
            *TRAIN,
            "--env-kwargs",
            'render_mode="rgb_array"',
            expect="ok",
        ),
        cli("train: env-kwargs unknown for CartPole", *TRAIN, "--env-kwargs", "gravity=3"),
        cli("train: ALE without the id", *TRAIN, "--env", "ALE/NotAGame-v5"),
        cli("train: reinforce with num-envs", "train", "reinforce", "--num-envs", "2"),
    ]
    # -- train: counts --------------------------------------------------------------------------
    for flag, values in {
        "--steps": ["0", "-5", "abc", "1e3", "2.5", "99999999999999999999", ""],
        "--seed": ["-1", "4294967296", "x"],
        "--num-envs": ["0", "-2", "100000"],
        "--episodes": ["-1", "x", "99999999999999999999"],
        "--eval-every": ["-1", "x"],
        "--eval-episodes": ["0", "-3", "100000000"],
        "--checkpoint-every": ["-1", "1.5"],
    }.items():
        c += [cli(f"train: {flag} {v!r}", *TRAIN, flag, v) for v in values]
    c += [
        cli("train: num-envs above steps", *TRAIN, "--num-envs", "500"),
        cli("train: num-envs 2", *TRAIN, "--num-envs", "2", expect="ok"),
        cli("train: eval-every 0", *TRAIN, "--eval-every", "0", expect="ok"),
        cli("train: checkpoint-every 0", *TRAIN, "--checkpoint-every", "0", expect="ok"),
        cli("train: eval-every above steps", *TRAIN, "--eval-every", "100000", expect="ok"),
        cli("train: episodes 1", *TRAIN, "--episodes", "1", expect="ok"),
    ]
    # -- train: --set -------------------------------------------------------------------------
    sets = {
        "unknown key": "learning_rat=0.1",
        "no =": "learning_rate",
        "empty key": "=3",
        "empty value": "learning_rate=",
        "negative lr": "learning_rate=-5",
        "lr nan": "learning_rate=nan",
        "lr inf": "learning_rate=inf",
        "gamma above 1": "gamma=1.5",
        "gamma text": "gamma=high",
        "batch float": "batch_size=32.5",
        "batch zero": "batch_size=0",
        "buffer below batch": "buffer_size=10",
        "buffer 1e11": "buffer_size=100000000000",
        "buffer 2e9": "buffer_size=2000000000",
        "hidden unclosed": "hidden_sizes=[64,64",
        "hidden unopened": "hidden_sizes=64,64]",
        "hidden nested": "hidden_sizes=[[64]]",
        "hidden zero": "hidden_sizes=0",
        "hidden text": "hidden_sizes=big",
        "bool text": "double_dqn=maybe",
        "loss unknown": "loss=l1",
        "optimizer unknown": "optimizer=sgdd",
        "q_network missing module": "q_network=nonexist:fn",
        "q_network no colon": "q_network=nonexist",
        "train_freq zero": "train_freq=0",
        "gradient_steps -2": "gradient_steps=-2",
        "eps_end above start": "eps_end=2",
        "target_update negative": "target_update=-1",
        "eps fraction above 1": "eps_anneal_fraction=1.5",
    }
    c += [cli(f"train --set: {what}", *TRAIN, "--set", pair) for what, pair in sets.items()]
    # no hidden layer: a linear Q-network (observation -> Q-values), which DQN trains
    c += [cli("train --set: hidden empty (linear Q)", *TRAIN, "--set", "hidden_sizes=[]",
              expect="ok")]  # fmt: skip
    c += [
        cli(
            "train --set: q_network builder raises",
            *TRAIN,
            "--env",
            LAB_ENV,
            "--set",
            "q_network=lab41:bad_builder",
            files=LAB,
        ),
        cli(
            "train --set: q_network not a model",
            *TRAIN,
            "--env",
            LAB_ENV,
            "--set",
            "q_network=lab41:not_a_model",
            files=LAB,
        ),
        cli(
            "train --set: q_network wrong width",
            *TRAIN,
            "--env",
            LAB_ENV,
            "--set",
            "q_network=lab41:wrong_width",
            files=LAB,
        ),
        cli("train --set: hidden 32,32", *TRAIN, "--set", "hidden_sizes=32,32", expect="ok"),
        cli("train --set: gamma 1", *TRAIN, "--set", "gamma=1", expect="ok"),
    ]
    # -- train: --config, --preset, --out ------------------------------------------------------
    c += [
        cli("train: config missing", *TRAIN, "--config", "nowhere.toml"),
        cli("train: config is a folder", *TRAIN, "--config", "run"),
        cli(
            "train: config not TOML", *TRAIN, "--config", "bad.toml", files=[("bad.toml", "[run\n")]
        ),
        cli(
            "train: config unknown table",
            *TRAIN,
            "--config",
            "t.toml",
            files=[("t.toml", "[runs]\nsteps = 3\n")],
        ),
        cli(
            "train: config unknown run key",
            *TRAIN,
            "--config",
            "t.toml",
            files=[("t.toml", "[run]\nstep = 3\n")],
        ),
        cli(
            "train: config env_kwargs a string",
            "train",
            "--config",
            "t.toml",
            files=[("t.toml", '[run]\nagent = "dqn"\nenv_kwargs = "length=3"\n')],
        ),
        cli(
            "train: config agent unknown",
            "train",
            "--config",
            "t.toml",
            files=[("t.toml", '[run]\nagent = "pp0"\n')],
        ),
        cli("train: config of another agent", "train", "ddpg", "--config", "run/config.toml"),
        cli("train: config binary", *TRAIN, "--config", "b.toml", files=[("b.toml", "\udcff")]),
        cli(
            "train: config yaml list",
            *TRAIN,
            "--config",
            "t.yaml",
            files=[("t.yaml", "- 1\n- 2\n")],
        ),
        cli(
            "train: config run is a list",
            *TRAIN,
            "--config",
            "t.toml",
            files=[("t.toml", "run = [1, 2]\n")],
        ),
        cli(
            "train: config steps a string",
            "train",
            "--config",
            "t.toml",
            files=[("t.toml", '[run]\nagent = "dqn"\nsteps = "many"\n')],
        ),
        cli(
            "train: a run's config.toml",
            "train",
            "--config",
            "run/config.toml",
            "--steps",
            "200",
            "--quiet",
            expect="ok",
        ),
        cli("train: preset unknown", *TRAIN, "--preset", "nope"),
        cli("train: preset of other agent", *TRAIN, "--preset", "ddpg/Pendulum-v1"),
        cli("train: preset empty", *TRAIN, "--preset", ""),
        cli("train: preset none", *TRAIN, "--preset", "none", expect="ok"),
        cli("train: out is a file", *TRAIN, "--out", "afile", files=[("afile", "x")]),
        cli("train: out empty", *TRAIN, "--out", ""),
        cli("train: out under a file", *TRAIN, "--out", "afile/runs", files=[("afile", "x")]),
        cli("train: out nested new", *TRAIN, "--out", "a/b/c", expect="ok"),
    ]
    from labs.bad_inputs_cases_more import more_cases
    from labs.bad_inputs_cases_wave5 import wave5_cases
    from labs.bad_inputs_cases_wave6 import wave6_cases

    return c + more_cases() + wave5_cases() + wave6_cases()
