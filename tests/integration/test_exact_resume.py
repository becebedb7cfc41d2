"""Exact resume on every environment family rlkit ships presets for: a run stopped in the
middle of an episode and resumed writes the metrics.csv of the uninterrupted run.

Classic control pickles whole; MinAtar too; Box2D's worlds cannot be pickled, so the
episode in progress is replayed from its seeded reset; an ALE emulator's state (random
generator included) is cloned and restored; a MuJoCo env's whole MjData travels (Ant's and
Humanoid's rewards read derived data: body positions from the step before)
(rlkit.envs.resumable)."""

from __future__ import annotations

import json
import pickle

import gymnasium as gym
import numpy as np
import pytest

import rlkit
from rlkit.cli.main import main
from rlkit.envs.make import make_env, make_vector_env
from rlkit.envs.resumable import ResumableEnv
from rlkit.run.folder import RunFolder

QUIET = ["--eval-episodes", "1", "--quiet"]
FAMILIES = {
    "box2d-discrete": ["dqn", "--env", "LunarLander-v3", "--set", "hidden_sizes=16",
                       "--set", "learning_starts=100", "--set", "train_freq=50",
                       "--set", "gradient_steps=4", "--set", "jit_compile=false",
                       # schedules in steps: the 250-step run extended is the 500-step one
                       "--set", "eps_anneal_fraction=0", "--set", "lr_anneal_fraction=0"],
    "box2d-continuous": ["ddpg", "--env", "BipedalWalker-v3", "--set", "actor_hidden_sizes=16",
                         "--set", "critic_hidden_sizes=16", "--set", "learning_starts=100",
                         "--set", "batch_size=32"],
    "sac-classic": ["sac", "--env", "Pendulum-v1", "--set", "actor_hidden_sizes=16",
                    "--set", "critic_hidden_sizes=16", "--set", "learning_starts=100",
                    "--set", "batch_size=32", "--set", "jit_compile=false"],
    "ale": ["dqn", "--env", "ALE/Breakout-v5", "--set", "buffer_size=1000",
            "--set", "learning_starts=150", "--set", "hidden_sizes=32",
            "--set", "target_update=100"],
    "minatar": ["dqn", "--env", "MinAtar/Breakout-v0", "--set", "learning_starts=100",
                "--set", "buffer_size=1000"],
}  # fmt: skip
#: MuJoCo (the mujoco extra): each env with one of its continuous agents, on its preset
#: made small (the presets' 400x300 networks, 1M buffers and an update per step would only
#: slow the test) and 100-step episodes (1,000 would make the evaluations most of the time;
#: step 250 is then mid-episode, the TimeLimit counter at 50)
SMALL = ["--set", "actor_hidden_sizes=16", "--set", "critic_hidden_sizes=16",
         "--set", "learning_starts=100", "--set", "batch_size=32", "--set", "buffer_size=1000",
         "--set", "train_freq=50", "--set", "gradient_steps=50", "--set", "jit_compile=false",
         "--env-kwargs", "max_episode_steps=100"]  # fmt: skip
MUJOCO = {
    "mujoco-halfcheetah": ["td3", "--env", "HalfCheetah-v5", *SMALL],
    "mujoco-hopper": ["sac", "--env", "Hopper-v5", *SMALL],
    "mujoco-walker2d": ["ddpg", "--env", "Walker2d-v5", *SMALL],
    "mujoco-ant": ["td3", "--env", "Ant-v5", *SMALL],
    "mujoco-humanoid": ["sac", "--env", "Humanoid-v5", *SMALL],
}  # fmt: skip
FAMILIES.update(MUJOCO)
MUJOCO_IDS = ["HalfCheetah-v5", "Hopper-v5", "Walker2d-v5", "Ant-v5", "Humanoid-v5"]


def train(tmp_path, name: str, argv: list[str]):
    out = tmp_path / name
    assert main(["train", *argv, "--out", str(out), *QUIET]) == 0
    (run_dir,) = out.iterdir()
    return RunFolder(run_dir)


@pytest.mark.slow
@pytest.mark.parametrize(
    "family",
    [
        pytest.param(f, marks=pytest.mark.atari) if f in ("ale", "minatar")
        else pytest.param(f, marks=pytest.mark.mujoco) if f in MUJOCO
        else f
        for f in sorted(FAMILIES)
    ],
)  # fmt: skip
def test_a_run_stopped_mid_episode_resumes_to_the_uninterrupted_metrics(tmp_path, family):
    argv = [*FAMILIES[family], "--eval-every", "250", "--checkpoint-every", "250"]
    whole = train(tmp_path, "whole", [*argv, "--steps", "500"])
    stopped = train(tmp_path, "stopped", [*argv, "--steps", "250"])
    state = json.loads((stopped.checkpoint_dirs()[-1] / "state.json").read_text())
    assert state["loop"]["state"]["episode_length"][0] > 0  # the checkpoint is mid-episode
    assert main(["resume", str(stopped.path), "--steps", "500", "--quiet"]) == 0
    assert stopped.metrics_path.read_text() == whole.metrics_path.read_text()


@pytest.mark.slow
@pytest.mark.parametrize(
    "env_id",
    ["LunarLander-v3", "BipedalWalker-v3", pytest.param("ALE/Pong-v5", marks=pytest.mark.atari),
     *(pytest.param(env_id, marks=pytest.mark.mujoco) for env_id in MUJOCO_IDS)],
)  # fmt: skip
def test_a_pickled_training_env_goes_on_as_the_original(env_id):
    env = make_env(env_id)
    assert isinstance(env, ResumableEnv)
    env.action_space.seed(1)
    env.reset(seed=4)
    for _ in range(120):
        *_, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    copy = pickle.loads(pickle.dumps(env))
    for _ in range(200):
        action = env.action_space.sample()
        ours, theirs = env.step(action), copy.step(action)
        np.testing.assert_array_equal(ours[0], theirs[0])
        assert ours[1:4] == theirs[1:4]
        if ours[2] or ours[3]:
            np.testing.assert_array_equal(env.reset()[0], copy.reset()[0])


def test_vector_box2d_envs_are_resumable_per_sub_environment():
    env = make_vector_env("LunarLander-v3", 2)
    assert all(isinstance(sub, ResumableEnv) for sub in env.envs)
    assert not isinstance(make_env("CartPole-v1"), ResumableEnv)  # pickles whole


def test_an_env_rlkit_cannot_resume_exactly_is_named_in_one_line(capsys, tmp_path):
    from rlkit.run.checkpoint import resume_notice

    raw = gym.make("LunarLander-v3")  # not made by rlkit: no ResumableEnv
    assert "LunarLander-v3 resumes at an episode boundary" in resume_notice(raw)
    assert resume_notice(make_env("LunarLander-v3")) is None
    assert resume_notice(make_env("CartPole-v1")) is None


class Unpicklable(gym.Env):
    """An env of a user's whose state cannot be pickled (it holds a generator object)."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self):
        self.stream = (i for i in range(10**9))
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += next(self.stream) * 0 + 1
        return np.full(2, 0.1, np.float32), 1.0, self.t >= 20, False, {}


def test_a_run_on_such_an_env_says_so_at_its_start_and_at_resume(capsys, tmp_path):
    from rlkit.core.errors import RlkitWarning
    from rlkit.run.loop import Trainer

    gym.register("RlkitTest/Unpicklable-v0", entry_point=Unpicklable)
    try:
        with pytest.warns(RlkitWarning, match="Unpicklable-v0 resumes at an episode boundary"):
            env = gym.make("RlkitTest/Unpicklable-v0")
            agent = rlkit.agents.DQN.from_env(env, hidden_sizes=(8,), learning_starts=50,
                                              jit_compile=False)  # fmt: skip
            Trainer(agent, env, run_dir=tmp_path / "run", tensorboard=False).run(60)
        status = main(["resume", str(tmp_path / "run"), "--steps", "80", "--quiet"])
        err = capsys.readouterr().err
        assert status == 0, err
        assert "rlkit: RlkitTest/Unpicklable-v0 resumes at an episode boundary" in err
    finally:
        del gym.registry["RlkitTest/Unpicklable-v0"]
