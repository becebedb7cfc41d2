"""rlkit's environments written in TensorFlow (rlkit/envs/tf) against gymnasium's own.

The step-for-step tests play 10,000 random-action transitions in gymnasium (its own
``gym.make`` env, time limit included), record the exact state each one starts from (the
base env's ``state`` and the ``TimeLimit``'s step count), then replay all of them at once
as 10,000 copies of one compiled TensorFlow ``transition``. One transition in ten first
moves gymnasium's env to a state drawn from a wide box (walls, goals, clipping, wrapping
and terminations are reached that random play rarely reaches) and one in fifty to the last
step before its time limit (truncation). Continuous actions go beyond the action bounds one
time in ten (gymnasium clips them). float64 values agree within 1e-12 (relative; most of
them exactly: XLA fuses some multiply-adds into FMAs, a last-bit difference), float32
observations within one float32 rounding, terminations and truncations exactly.
"""

from __future__ import annotations

import json
import math
import pickle
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from rlkit.core.errors import UsageError
from rlkit.envs.tf import ALL_IDS, ENV_IDS, make_tf_env
from rlkit.envs.tf.base import EnvState

N_TRANSITIONS = 10_000


def _wide_state(gym_id: str, rng: np.random.Generator) -> np.ndarray:
    """A state anywhere in the region an episode can reach (and beyond its walls)."""
    if gym_id == "CartPole-v1":
        return rng.uniform([-2.5, -3, -0.25, -3.5], [2.5, 3, 0.25, 3.5])
    if gym_id == "Acrobot-v1":
        return rng.uniform([-math.pi, -math.pi, -4 * math.pi, -9 * math.pi],
                           [math.pi, math.pi, 4 * math.pi, 9 * math.pi])  # fmt: skip
    if gym_id in ("MountainCar-v0", "MountainCarContinuous-v0"):
        return rng.uniform([-1.2, -0.07], [0.6, 0.07])
    if gym_id == "Pendulum-v1":
        return rng.uniform([-12.0, -8.0], [12.0, 8.0])
    raise AssertionError(gym_id)


def _time_limit(env: gym.Env) -> gym.wrappers.TimeLimit:
    while not isinstance(env, gym.wrappers.TimeLimit):
        env = env.env
    return env


def gym_trace(gym_id: str, n: int, seed: int = 0) -> dict[str, np.ndarray]:
    """``n`` transitions of gymnasium's ``gym_id``: the state and step count each starts
    from, the action, and what gymnasium returned."""
    env = gym.make(gym_id, disable_env_checker=True)
    limit, base = _time_limit(env), env.unwrapped
    rng = np.random.default_rng(seed)
    env.action_space.seed(seed)
    env.reset(seed=seed)
    rec: dict[str, list] = {k: [] for k in
                            ("physics", "time", "action", "obs", "reward", "terminated",
                             "truncated", "after")}  # fmt: skip
    for _ in range(n):
        if rng.random() < 0.1:  # a wide state; MCC keeps float32 states after a first step
            state = _wide_state(gym_id, rng)
            if gym_id == "MountainCarContinuous-v0":
                state = state.astype(np.float32)
                limit._elapsed_steps = max(limit._elapsed_steps, 1)
            base.state = state
        if rng.random() < 0.02 and limit._elapsed_steps > 0:  # (MCC: a float32 state)
            limit._elapsed_steps = limit._max_episode_steps - 1
        action = env.action_space.sample()
        if isinstance(env.action_space, gym.spaces.Box) and rng.random() < 0.1:
            action = (action * 3).astype(np.float32)  # beyond the bounds: gymnasium clips
        rec["physics"].append(np.array(base.state, dtype=np.float64))
        rec["time"].append(limit._elapsed_steps)
        rec["action"].append(action)
        obs, reward, terminated, truncated, _ = env.step(action)
        rec["obs"].append(obs)
        rec["reward"].append(float(reward))
        rec["terminated"].append(terminated)
        rec["truncated"].append(truncated)
        rec["after"].append(np.array(base.state, dtype=np.float64))
        if terminated or truncated:
            env.reset()
    return {k: np.array(v) for k, v in rec.items()}


@pytest.mark.slow
@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_step_for_step_equal_to_gymnasium(env_id):
    env = make_tf_env(env_id)
    trace = gym_trace(env.gym_id, N_TRANSITIONS)
    transition = tf.function(env.transition, jit_compile=True)
    state = EnvState(tf.constant(trace["physics"]), tf.constant(trace["time"], tf.int32))
    after, obs, reward, terminated, truncated = transition(
        state, tf.constant(trace["action"], env.action_dtype)
    )
    np.testing.assert_array_equal(terminated.numpy(), trace["terminated"])
    np.testing.assert_array_equal(truncated.numpy(), trace["truncated"])
    # XLA fuses a multiply and an add into one FMA where it can: a last bit, rarely more
    np.testing.assert_allclose(after.physics.numpy(), trace["after"], rtol=1e-12, atol=1e-12)
    if env_id == "rlkit/Pendulum-v1":
        # gymnasium's torque cost 0.001 * u ** 2 is float32 and numpy's float32 ``u ** 2`` is
        # libm's powf, which is not always correctly rounded (ours is u * u): one float32
        # rounding of that term apart, in about 0.1% of transitions
        u = np.clip(trace["action"][:, 0], -2, 2)
        slack = np.spacing(np.float32(0.001) * u * u).astype(np.float64)
        assert np.all(np.abs(reward.numpy() - trace["reward"]) <= 1e-12 * 20 + slack)
        assert np.mean(np.isclose(reward.numpy(), trace["reward"], rtol=1e-12, atol=0)) > 0.99
    else:
        np.testing.assert_allclose(reward.numpy(), trace["reward"], rtol=1e-12, atol=1e-12)
    # a float32 observation: the same, or one rounding apart where float64 differs by ~1e-16
    ours, theirs = obs.numpy(), trace["obs"]
    assert ours.dtype == theirs.dtype == np.float32
    assert np.all(np.abs(ours - theirs) <= np.spacing(np.abs(theirs)))
    # the test reaches what it claims to reach
    assert trace["terminated"].sum() >= 20 or env_id == "rlkit/Pendulum-v1"
    assert trace["truncated"].sum() >= 20


# --- resets ----------------------------------------------------------------------------------

#: gymnasium's reset box of each env's state (low, high per entry); velocity 0 where fixed
RESET_BOUNDS = {
    "rlkit/CartPole-v1": ([-0.05] * 4, [0.05] * 4),
    "rlkit/Acrobot-v1": ([-0.1] * 4, [0.1] * 4),
    "rlkit/MountainCar-v0": ([-0.6, 0.0], [-0.4, 0.0]),
    "rlkit/MountainCarContinuous-v0": ([-0.6, 0.0], [-0.4, 0.0]),
    "rlkit/Pendulum-v1": ([-math.pi, -1.0], [math.pi, 1.0]),
}


def gym_resets(gym_id: str, n: int) -> np.ndarray:
    env = gym.make(gym_id, disable_env_checker=True)
    states = []
    for seed in range(n):
        env.reset(seed=seed)
        states.append(np.array(env.unwrapped.state, dtype=np.float64))
    return np.array(states)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_resets_drawn_as_gymnasium_draws_them(env_id):
    env = make_tf_env(env_id)
    state, obs = tf.function(env.reset, jit_compile=True)(tf.constant([3, 4]), 20_000)
    ours = state.physics.numpy()
    low, high = (np.array(b) for b in RESET_BOUNDS[env_id])
    assert ours.dtype == np.float64 and ours.shape == (20_000, env.physics_dim)
    assert np.all(state.time.numpy() == 0)
    assert np.all((ours >= low) & (ours <= high))
    width = high - low
    # the whole box is used: minima and maxima within 0.1% of its edges
    assert np.all(ours.min(axis=0) <= low + 1e-3 * width)
    assert np.all(ours.max(axis=0) >= high - 1e-3 * width)
    np.testing.assert_array_equal(obs.numpy(), env.observe(state.physics).numpy())
    theirs = gym_resets(env.gym_id, 2_000)
    assert np.all((theirs >= low) & (theirs <= high))
    for k in np.flatnonzero(width > 0):  # each drawn entry: the same distribution (two-sample KS)
        both = np.sort(np.concatenate([ours[:, k], theirs[:, k]]))
        cdf_ours = np.searchsorted(np.sort(ours[:, k]), both, side="right") / len(ours)
        cdf_theirs = np.searchsorted(np.sort(theirs[:, k]), both, side="right") / len(theirs)
        assert np.max(np.abs(cdf_ours - cdf_theirs)) < 0.05  # KS critical value ~0.036 at 1e-3
    if env_id == "rlkit/Acrobot-v1":  # stored as float32, as gymnasium stores it
        np.testing.assert_array_equal(ours, ours.astype(np.float32))


# --- the batched step: autoreset, seeds, compiled loops ---------------------------------------


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_step_autoresets_ended_copies_from_its_seed(env_id):
    env = make_tf_env(env_id)
    n = 64
    state, _ = env.reset(tf.constant([0, 1]), n)
    # half the copies one step before the time limit: they truncate and restart
    time = np.where(np.arange(n) % 2 == 0, env.max_episode_steps - 1, 5).astype(np.int32)
    state = EnvState(state.physics, tf.constant(time))
    actions = tf.zeros([n], tf.int32) if env.discrete_actions else tf.zeros([n, 1])
    seed = tf.constant([7, 8])
    out = env.step(state, actions, seed)
    after, final_obs, reward, terminated, truncated = env.transition(state, actions)
    fresh, fresh_obs = env.reset(seed, n)
    done = (terminated | truncated).numpy()
    assert done[::2].all() and truncated.numpy()[::2].all() and not truncated.numpy()[1::2].any()
    np.testing.assert_array_equal(out.final_obs.numpy(), final_obs.numpy())
    np.testing.assert_array_equal(out.reward.numpy(), reward.numpy())
    np.testing.assert_array_equal(
        out.obs.numpy(), np.where(done[:, None], fresh_obs.numpy(), final_obs.numpy())
    )
    np.testing.assert_array_equal(
        out.state.physics.numpy(),
        np.where(done[:, None], fresh.physics.numpy(), after.physics.numpy()),
    )
    np.testing.assert_array_equal(out.state.time.numpy(), np.where(done, 0, time + 1))


def compiled_rollout(env, num_envs: int, steps: int):
    """A function of a seed: ``steps`` random-action steps of ``num_envs`` copies in one
    compiled ``tf.while_loop``, returning (total reward, episodes ended, last observation)."""

    @tf.function(jit_compile=True)
    def run(seed):
        keys = tf.random.experimental.stateless_split(seed, 2)
        state, obs = env.reset(keys[0], num_envs)

        def body(i, key, state, obs, total, ended):
            key, act_key, step_key = tf.unstack(tf.random.experimental.stateless_split(key, 3))
            if env.discrete_actions:
                actions = tf.random.stateless_uniform(
                    [num_envs], act_key, 0, env.discrete_actions, tf.int32
                )
            else:
                actions = tf.random.stateless_uniform(
                    [num_envs, 1], act_key, env.action_low, env.action_high
                )
            out = env.step(state, actions, step_key)
            done = tf.cast(out.terminated | out.truncated, tf.int32)
            return (i + 1, key, out.state, out.obs, total + tf.reduce_sum(out.reward),
                    ended + tf.reduce_sum(done))  # fmt: skip

        loop = (0, keys[1], state, obs, tf.constant(0.0, tf.float64), 0)
        _, _, _, obs, total, ended = tf.while_loop(lambda i, *_: i < steps, body, loop)
        return total, ended, obs

    return lambda seed: [x.numpy() for x in run(tf.constant([seed, 0]))]


# an XLA compile per environment (2-20 s each): with the slow tests
@pytest.mark.slow
@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_compiled_while_loop_is_reproducible_from_its_seed(env_id):
    env = make_tf_env(env_id)
    rollout = compiled_rollout(env, 16, env.max_episode_steps + 50)
    first, again, other = rollout(1), rollout(1), rollout(2)
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[2], other[2])
    assert first[1] >= 16  # every copy ended at least one episode
    assert np.isfinite(first[0]) and first[2].dtype == np.float32


# --- the gymnasium adapters ----------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_gym_make_plays_gymnasiums_episodes(env_id):
    """``gym.make(rlkit id)`` started from gymnasium's state plays gymnasium's episode."""
    ours, theirs = gym.make(env_id), gym.make(env_id.removeprefix("rlkit/"))
    assert ours.observation_space == theirs.observation_space
    assert ours.action_space == theirs.action_space
    theirs.action_space.seed(0)
    ended = 0
    for episode in range(3):
        obs, _ = ours.reset(seed=episode)
        assert ours.observation_space.contains(obs)
        theirs.reset(seed=episode)
        ours.unwrapped._physics = np.array(theirs.unwrapped.state, np.float64)[None]  # its start
        for _ in range(ours.unwrapped.max_episode_steps):
            action = theirs.action_space.sample()
            got, want = ours.step(action), theirs.step(action)
            np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-7)
            assert got[0].dtype == np.float32 and isinstance(got[1], float)
            assert got[1] == pytest.approx(want[1], rel=1e-9, abs=1e-9)
            assert got[2:4] == want[2:4]
            if got[2] or got[3]:
                ended += 1
                break
    assert ended == 3  # each of them ended by termination or by the time limit


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:.*symmetric and normalized")  # Pendulum's [-2, 2] torque
@pytest.mark.filterwarnings("ignore:.*infinity")  # CartPole's velocity bounds, as gymnasium's
@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_gym_env_passes_gymnasiums_checker(env_id):
    from gymnasium.utils.env_checker import check_env

    check_env(gym.make(env_id).unwrapped, skip_render_check=True)


@pytest.mark.slow
def test_gym_env_pickles_mid_episode():
    env = gym.make("rlkit/Acrobot-v1")
    env.reset(seed=3)
    for _ in range(10):
        env.step(1)
    copy = pickle.loads(pickle.dumps(env))
    for action in (0, 2, 1, 2, 0):
        a, b = env.step(action), copy.step(action)
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1:4] == b[1:4]
    a, b = env.reset(), copy.reset()  # the random generator travelled too
    np.testing.assert_array_equal(a[0], b[0])


@pytest.mark.slow
def test_vector_env_steps_n_copies_with_same_step_autoreset():
    env = gym.make_vec("rlkit/CartPole-v1", 6, vectorization_mode="vector_entry_point")
    assert env.metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
    obs, _ = env.reset(seed=5)
    again = gym.make_vec("rlkit/CartPole-v1", 6, vectorization_mode="vector_entry_point")
    np.testing.assert_array_equal(obs, again.reset(seed=5)[0])
    assert obs.shape == (6, 4) and env.observation_space.contains(obs)
    one = make_tf_env("rlkit/CartPole-v1")
    ended = 0
    for t in range(200):
        actions = np.array([t % 2] * 3 + [1] * 3)
        before = np.array(env._physics), np.array(env._time)
        next_obs, rewards, terminated, truncated, infos = env.step(actions)
        _, last, reward, term, trunc = one.transition(
            EnvState(tf.constant(before[0]), tf.constant(before[1])), actions
        )
        np.testing.assert_array_equal(rewards, reward.numpy())
        np.testing.assert_array_equal(terminated, term.numpy())
        done = terminated | truncated
        if done.any():
            ended += int(done.sum())
            np.testing.assert_array_equal(infos["_final_obs"], done)
            np.testing.assert_array_equal(infos["final_obs"][done], last.numpy()[done])
            assert np.all(env._time[done] == 0)
        else:
            assert infos == {}
        np.testing.assert_array_equal(next_obs[~done], last.numpy()[~done])
    assert ended >= 6
    copy = pickle.loads(pickle.dumps(env))
    np.testing.assert_array_equal(env.step([0] * 6)[0], copy.step([0] * 6)[0])


def test_rlkits_vector_envs_of_a_tensorflow_env_step_in_one_call():
    from rlkit.envs.make import make_vector_env
    from rlkit.envs.tf.gym_adapter import TFVectorEnv

    env = make_vector_env("rlkit/Acrobot-v1", 3)
    assert isinstance(env, TFVectorEnv) and env.num_envs == 3 and env.spec.id == "rlkit/Acrobot-v1"
    assert isinstance(make_vector_env("Acrobot-v1", 3), gym.vector.SyncVectorEnv)
    with pytest.raises(UsageError, match="takes no environment arguments"):
        make_vector_env("rlkit/Acrobot-v1", 3, book_or_nips="nips")


@pytest.mark.filterwarnings("ignore:.*render_mode")  # gymnasium warns before the env refuses
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"render_mode": "rgb_array"}, "does not render"),
        # (without a display, the display check refuses first, in one line too)
        ({"render_mode": "human"}, "does not render|needs a display"),
        ({"sutton_barto_reward": True}, "takes no environment arguments"),
    ],
)
def test_unsupported_options_are_one_line_usage_errors(kwargs, message):
    from rlkit.envs.make import make_env

    with pytest.raises(UsageError, match=message) as caught:
        make_env("rlkit/CartPole-v1", **kwargs)
    assert "\n" not in str(caught.value)
    with pytest.raises(UsageError, match="no reset options"):
        gym.make("rlkit/CartPole-v1").reset(options={"low": -0.1})
    with pytest.raises(UsageError, match="not an rlkit TensorFlow environment"):
        make_tf_env("CartPole-v1")


def test_registration_imports_no_tensorflow():
    code = (
        "import sys, rlkit, gymnasium as gym\n"
        "ids = [i for i in gym.registry if i.startswith('rlkit/') and 'Bandit' not in i]\n"
        "assert sorted(ids) == sorted(" + repr(sorted(ALL_IDS)) + "), ids\n"
        "sys.exit('tensorflow' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


@pytest.mark.slow
def test_cli_trains_dqn_on_the_tensorflow_cartpole(tmp_path):
    from rlkit.cli.main import main

    status = main(["train", "dqn", "--env", "rlkit/CartPole-v1", "--steps", "3000", "--quiet",
                   "--out", str(tmp_path)])  # fmt: skip
    assert status == 0
    status = main(["train", "dqn", "--env", "rlkit/CartPole-v1", "--steps", "10",
                   "--env-kwargs", "sutton_barto_reward=true", "--out", str(tmp_path)])  # fmt: skip
    assert status == 2


@pytest.mark.slow
@pytest.mark.parametrize("num_envs", ["1", "2"])
def test_a_run_on_a_tensorflow_env_resumes_to_the_uninterrupted_metrics(tmp_path, num_envs):
    """A checkpoint pickles the training env (one TFGymEnv, or each of a SyncVectorEnv's):
    a run stopped mid-episode and resumed writes the uninterrupted run's metrics.csv."""
    from rlkit.cli.main import main
    from rlkit.run.folder import RunFolder

    argv = ["dqn", "--env", "rlkit/CartPole-v1", "--num-envs", num_envs,
            "--set", "hidden_sizes=16", "--set", "learning_starts=100", "--set", "train_freq=50",
            "--set", "gradient_steps=4", "--set", "jit_compile=false",
            "--set", "eps_anneal_fraction=0", "--set", "lr_anneal_fraction=0",
            "--eval-every", "250", "--checkpoint-every", "250", "--eval-episodes", "1",
            "--quiet"]  # fmt: skip

    def train(name: str, steps: int) -> RunFolder:
        out = tmp_path / name
        assert main(["train", *argv, "--steps", str(steps), "--out", str(out)]) == 0
        (run_dir,) = out.iterdir()
        return RunFolder(run_dir)

    whole, stopped = train("whole", 500), train("stopped", 250)
    state = json.loads((stopped.checkpoint_dirs()[-1] / "state.json").read_text())
    assert state["loop"]["state"]["episode_length"][0] > 0  # the checkpoint is mid-episode
    assert main(["resume", str(stopped.path), "--steps", "500", "--quiet"]) == 0
    assert stopped.metrics_path.read_text() == whole.metrics_path.read_text()
    assert whole.metrics_path.read_text().count("\n") > 10  # episodes were written
