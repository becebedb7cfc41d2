"""PPO and A2C with MultiDiscrete actions (the Python loop): acting (sampled and greedy,
``start`` counted), the rollout's int actions ``[D]``, an update's shapes and finite loss,
exact resume mid-rollout, save/load, the export (each dimension's argmax), the refusals
(MultiBinary, Dict; the compiled loop), and learning a small MultiDiscrete task (slow)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

import rlkit.agents
from rlkit.core.errors import UsageError

T, N = 8, 2  # the rollout: 8 steps of 2 streams, minibatches of 4


class Match(gym.Env):
    """Each step shows one target per dimension (one-hot, one block per dimension); the
    reward is the share of dimensions the action matched. 8 steps an episode (a time limit):
    random play returns 8 x mean(1 / nvec), a perfect policy 8."""

    def __init__(self, nvec=(3, 4), start=(0, 0)):
        self.nvec, self.start = np.array(nvec), np.array(start)
        self.action_space = spaces.MultiDiscrete(self.nvec, start=self.start)
        self.observation_space = spaces.Box(0.0, 1.0, (int(self.nvec.sum()),), np.float32)
        self._offsets = np.concatenate([[0], np.cumsum(self.nvec)[:-1]])

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        self._draw()
        return self._obs(), {}

    def _draw(self):
        self.target = np.array([self.np_random.integers(n) for n in self.nvec])

    def _obs(self):
        obs = np.zeros(int(self.nvec.sum()), np.float32)
        obs[self._offsets + self.target] = 1.0
        return obs

    def step(self, action):
        reward = float(np.mean(np.asarray(action) - self.start == self.target))
        self.t += 1
        self._draw()
        return self._obs(), reward, False, self.t >= 8, {}


SETTINGS = {"nvec": (3, 4), "start": (1, -2)}
gym.register("rlkit-tests/Match-v0", entry_point=Match, kwargs=SETTINGS)


def vector_env(n: int = 4):
    return gym.vector.SyncVectorEnv(
        [lambda: Match(**SETTINGS) for _ in range(n)],
        autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
    )


def tiny_agent(cls=None, **overrides):
    settings = dict(hidden_sizes=(8,), value_hidden_sizes=(8,), n_steps=T, batch_size=4,
                    n_epochs=2, learning_rate=1e-2, ent_coef=0.01)  # fmt: skip
    if cls is rlkit.agents.A2C:
        settings = dict(hidden_sizes=(8,), value_hidden_sizes=(8,), n_steps=T)
    env = Match(**SETTINGS)
    return (cls or rlkit.agents.PPO).from_env(env, seed=3, **{**settings, **overrides})


@pytest.mark.slow
def test_acting_samples_each_dimension_and_acts_greedily_per_dimension():
    agent = tiny_agent()
    obs = np.random.default_rng(0).normal(size=(256, 7)).astype(np.float32)
    logits = agent.learner.policy().forward(obs)
    assert logits.shape == (256, 7)  # 3 + 4
    greedy = agent.act(obs, explore=False)
    want = np.stack([logits[:, :3].argmax(-1) + 1, logits[:, 3:].argmax(-1) - 2], axis=-1)
    np.testing.assert_array_equal(greedy, want)
    drawn = agent.act(obs)
    assert drawn.shape == (256, 2) and drawn.dtype == np.int64
    assert set(np.unique(drawn[:, 0])) == {1, 2, 3}  # near-uniform at the start
    assert set(np.unique(drawn[:, 1])) == {-2, -1, 0, 1}
    one = agent.act(obs[0])
    assert one.shape == (2,) and agent.action_space.contains(one)


@pytest.mark.slow
def test_the_rollout_keeps_int_actions_counted_from_zero_and_an_update_runs():
    agent = tiny_agent()
    rng = np.random.default_rng(1)
    obs = rng.normal(size=(N, 7)).astype(np.float32)
    agent.observe_first(obs)
    for _ in range(T):
        action = agent.act(obs)
        agent.observe_next(action, rng.normal(size=N), obs, np.zeros(N, bool), np.zeros(N, bool))
        if len(agent.rollout) < N * T:
            stored = agent.rollout.actions[len(agent.rollout) // N - 1]
            np.testing.assert_array_equal(stored, action - [1, -2])
            assert stored.dtype == np.int64 and stored.shape == (N, 2)
    metrics = agent.update()
    assert metrics is not None and agent.num_updates == 1
    assert all(np.isfinite(v) for v in metrics.values())
    assert metrics["entropy"] == pytest.approx(np.log(3) + np.log(4), rel=0.02)
    assert agent.learner.tracing_count == 1


@pytest.mark.slow
@pytest.mark.parametrize("cls", ["PPO", "A2C"])
def test_a_few_updates_on_a_vector_env(cls):
    agent_class = getattr(rlkit.agents, cls)
    env = vector_env(4)
    agent = agent_class.from_env(env, seed=0, n_steps=8, **({"batch_size": 16} if cls == "PPO"
                                                            else {}))  # fmt: skip
    history = rlkit.train(agent, env, steps=160)
    assert agent.num_updates == 5 and history.updates
    assert [step for step, _ in history.updates] == [32, 64, 96, 128, 160]
    for _, metrics in history.updates:
        assert np.isfinite(metrics["loss"]) and np.isfinite(metrics["value_loss"])
    mean, _ = rlkit.evaluate(agent, "rlkit-tests/Match-v0", episodes=2)
    assert 0.0 <= mean <= 8.0


def drive(agent, steps: int, seed: int) -> list[np.ndarray]:
    """``steps`` steps of ``N`` streams on made-up observations (episodes end now and then),
    the protocol's calls in the Python loop's order; returns the actions taken."""
    rng = np.random.default_rng(seed)
    taken = []
    for _ in range(steps):
        obs = agent.rollout.current.copy()
        action = agent.act(obs)
        taken.append(np.copy(action))
        nxt = rng.normal(size=(N, 7)).astype(np.float32)
        ended = rng.random(N) < 0.2
        agent.observe_next(action, rng.normal(size=N), nxt, ended & (rng.random(N) < 0.5),
                           ended)  # fmt: skip
        if ended.any():
            restart = rng.normal(size=(int(ended.sum()), 7)).astype(np.float32)
            agent.observe_first(restart, streams=np.flatnonzero(ended))
        agent.update()
    return taken


@pytest.mark.slow
@pytest.mark.parametrize("cls", ["PPO", "A2C"])
def test_exact_resume_mid_rollout(tmp_path, cls):
    """A checkpoint half-way through a rollout, loaded into a fresh agent (saved and loaded
    with its MultiDiscrete space): both then act and update alike."""
    from rlkit.run.checkpoint import flatten_state, unflatten_state

    agent_class = getattr(rlkit.agents, cls)
    agent = tiny_agent(agent_class)
    agent.observe_first(np.zeros((N, 7), np.float32))
    drive(agent, T + T // 2, seed=1)
    assert agent.num_updates == 1 and len(agent.rollout) == N * (T // 2)
    arrays, scalars = flatten_state(agent.state())
    arrays = {k: v.copy() for k, v in arrays.items()}
    agent.save(tmp_path / "model")
    resumed = agent_class.load(tmp_path / "model")
    assert resumed.action_space == agent.action_space
    resumed.load_state(unflatten_state(arrays, scalars))
    ours, theirs = drive(agent, T, seed=2), drive(resumed, T, seed=2)
    assert agent.num_updates == resumed.num_updates == 2
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)
    for group, variables in agent.checkpoint_variables().items():
        for mine, other in zip(variables, resumed.checkpoint_variables()[group], strict=True):
            np.testing.assert_array_equal(mine.numpy(), other.numpy(), err_msg=group)


@pytest.mark.parametrize(
    ("space", "message"),
    [
        (spaces.MultiBinary(3), r"MultiBinary\(n\) is MultiDiscrete\(\[2\] \* n\)"),
        (spaces.Dict({"a": spaces.Discrete(2)}), "Dict actions .*gymnasium ActionWrapper"),
        (spaces.Box(0, 3, (2,), np.int64), "needs float Box actions"),
    ],
)
def test_action_spaces_still_not_built_are_refused_in_one_line(space, message):
    for cls in (rlkit.agents.PPO, rlkit.agents.A2C):
        with pytest.raises(UsageError, match=message) as caught:
            cls(spaces.Box(-1, 1, (3,)), space)
        assert "\n" not in str(caught.value) and cls.name in str(caught.value)


@pytest.mark.slow
def test_no_tensorflow_env_has_multidiscrete_actions_and_the_compiled_program_refuses_them():
    """The compiled loop runs only on rlkit's TensorFlow environments, none of which has
    MultiDiscrete actions; its PPO program refuses them in one line all the same."""
    from rlkit.agents.spec import load
    from rlkit.envs.tf import ALL_IDS, register_envs

    program = load(rlkit.agents.AGENTS["ppo"].compiled_program)  # (PPOProgram, where it is)
    register_envs()
    for env_id in ALL_IDS:
        space = gym.make(env_id).action_space
        assert isinstance(space, spaces.Discrete | spaces.Box), (env_id, space)
    with pytest.raises(UsageError, match="no MultiDiscrete actions .*--loop python") as caught:
        program(tiny_agent(), None, 2, 0, 8)
    assert "\n" not in str(caught.value)


@pytest.mark.slow
def test_the_export_acts_per_dimension_as_the_agent(tmp_path):
    agent = tiny_agent()
    # weights away from the near-uniform start, so that the argmaxes are not near ties
    rng = np.random.default_rng(0)
    for v in agent.learner.variables()["policy"]:
        v.assign(rng.normal(size=v.shape).astype(np.float32))
    agent.refresh_policy()
    result = agent.export(tmp_path / "export", env="rlkit-tests/Match-v0")
    assert "bit for bit on 2000 of 2000" in result.lines[0]
    from rlkit.exporting.exported import ExportedPolicy

    exported = ExportedPolicy(tmp_path / "export")
    obs = rng.normal(size=(32, 7)).astype(np.float32)
    np.testing.assert_array_equal(exported.act(obs), agent.act(obs, explore=False))


@pytest.mark.slow
@pytest.mark.parametrize("cls", ["PPO", "A2C"])
def test_learns_a_multidiscrete_task(cls):
    """Match with nvec (3, 4): random play returns 8 x (1/3 + 1/4) / 2 = 2.33; after 8,000
    steps the greedy policy returns at least 7 of 8."""
    env = vector_env(8)
    settings = {"n_steps": 16, "batch_size": 64, "n_epochs": 4, "learning_rate": 3e-3}
    if cls == "A2C":
        settings = {"n_steps": 8, "learning_rate": 3e-3}
    agent = getattr(rlkit.agents, cls).from_env(env, seed=0, **settings)
    rlkit.train(agent, env, steps=8_000)
    mean, _ = rlkit.evaluate(agent, "rlkit-tests/Match-v0", episodes=10, seed=100)
    assert mean >= 7.0, mean
