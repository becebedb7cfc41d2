"""rlkit's TensorFlow environments as ordinary gymnasium environments (numpy in, numpy out).

- :class:`TFGymEnv`: one copy, a ``gymnasium.Env`` (``gym.make("rlkit/CartPole-v1")``): each
  ``step`` is one call of the compiled ``transition`` of one copy; no autoreset (call
  ``reset``), truncation at the id's time limit inside the env.
- :class:`TFVectorEnv`: ``N`` copies, a ``gymnasium.vector.VectorEnv``
  (``gym.make_vec("rlkit/CartPole-v1", 8, vectorization_mode="vector_entry_point")``): each
  ``step`` is one compiled call of the batched ``step``, with ``SAME_STEP`` autoreset (the
  ended copies' last observations in ``infos["final_obs"]``, mask ``infos["_final_obs"]``).

Both draw the stateless seeds of their TensorFlow functions from their own ``np_random``
(seeded by ``reset(seed=...)``), so a seeded run replays exactly and a pickle keeps an
episode in progress (the state is held in numpy). They support no rendering and no keyword
arguments: either raises :class:`~rlkit.core.errors.UsageError` in one line.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import gymnasium as gym
import numpy as np
import tensorflow as tf

from rlkit.core.errors import UsageError
from rlkit.envs.tf import make_tf_env
from rlkit.envs.tf.base import EnvState, TFEnv


def _refuse(env_id: str, kwargs: dict[str, Any]) -> None:
    gym_id = make_tf_env(env_id).gym_id  # gymnasium's id of the same dynamics
    if kwargs.get("render_mode") is not None:
        raise UsageError(
            f"{env_id} does not render (render_mode={kwargs['render_mode']!r}); "
            f"watch or record gymnasium's {gym_id} instead (the same "
            f"dynamics: rlkit evaluate RUN_DIR --env {gym_id} --video FILE)"
        )
    other = sorted(k for k in kwargs if k != "render_mode")
    if other:
        raise UsageError(
            f"{env_id} takes no environment arguments (got {', '.join(other)}); "
            f"gymnasium's {gym_id} takes its own"
        )


def _spaces(env: TFEnv) -> tuple[gym.spaces.Box, gym.spaces.Space]:
    if env.obs_shape is not None:  # MinAtar's boolean board, as minatar's gymnasium env has it
        board: Any = gym.spaces.Box(0.0, 1.0, env.obs_shape, dtype=np.bool_)
        return board, gym.spaces.Discrete(env.discrete_actions or 0)
    low, high = env.observation_bounds()
    obs_space = gym.spaces.Box(low, high, dtype=np.float32)
    if env.discrete_actions is not None:
        return obs_space, gym.spaces.Discrete(env.discrete_actions)
    return obs_space, gym.spaces.Box(env.action_low, env.action_high, (1,), np.float32)


def _action_shape(space: gym.spaces.Space) -> tuple[int, ...]:
    """The shape of one action (``()`` for Discrete); TypeError for a space without one."""
    if space.shape is None:
        raise TypeError(f"an action space without a shape: {space}")
    return space.shape


@cache
def _compiled(env_id: str) -> tuple[TFEnv, Any, Any, Any]:
    """``(env, reset, transition, step)`` of ``env_id``, compiled once per process."""
    env = make_tf_env(env_id)
    reset = tf.function(env.reset, jit_compile=True)
    transition = tf.function(env.transition, jit_compile=True)
    step = tf.function(env.step, jit_compile=True)
    return env, reset, transition, step


@cache
def _concrete(env_id: str, kind: str, num_envs: int) -> Any:
    """The concrete function of ``transition`` or ``step`` for ``num_envs`` copies: a call of
    it skips ``tf.function``'s argument matching (about half of a call's cost for one copy)."""
    env, _, transition, step = _compiled(env_id)
    state = EnvState(
        tf.TensorSpec([num_envs, env.physics_dim], env.physics_dtype),
        tf.TensorSpec([num_envs], tf.int32),
    )
    shape = [num_envs] if env.discrete_actions is not None else [num_envs, 1]
    actions = tf.TensorSpec(shape, env.action_dtype)
    if kind == "transition":
        return transition.get_concrete_function(state, actions)
    return step.get_concrete_function(state, actions, tf.TensorSpec([2], tf.int32))


def _seed_pair(rng: np.random.Generator) -> tf.Tensor:
    return tf.constant(rng.integers(0, 2**31 - 1, size=2), tf.int32)


class TFGymEnv(gym.Env):
    """One copy of the TensorFlow env ``env_id`` as a ``gymnasium.Env``.

    Observations float32 ``[obs_dim]`` (MinAtar's: bool ``[10, 10, C]``); actions an int
    (discrete) or float32 ``[1]``; rewards Python floats (gymnasium's values).
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, env_id: str, **kwargs: Any) -> None:
        _refuse(env_id, kwargs)
        self.env_id = env_id
        self.tf_env = make_tf_env(env_id)
        self.observation_space, self.action_space = _spaces(self.tf_env)
        self.max_episode_steps = self.tf_env.max_episode_steps
        self._physics: np.ndarray | None = None  # float64 [1, K]
        self._time = np.zeros(1, np.int32)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if options:
            raise UsageError(f"{self.env_id} takes no reset options (got {sorted(options)})")
        _, reset, _, _ = _compiled(self.env_id)
        state, obs = reset(_seed_pair(self.np_random), 1)
        self._physics, self._time = state.physics.numpy(), state.time.numpy()
        return obs.numpy()[0], {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._physics is None:
            raise gym.error.ResetNeeded("call reset before step")
        transition = _concrete(self.env_id, "transition", 1)
        dtype = self.tf_env.action_dtype.as_numpy_dtype
        actions = np.asarray(action, dtype).reshape((1, *_action_shape(self.action_space)))
        state = EnvState(tf.constant(self._physics), tf.constant(self._time))
        state, obs, reward, terminated, truncated = transition(state, tf.constant(actions))
        self._physics, self._time = state.physics.numpy(), state.time.numpy()
        return (
            obs.numpy()[0],
            float(reward.numpy()[0]),
            bool(terminated.numpy()[0]),
            bool(truncated.numpy()[0]),
            {},
        )

    @property
    def state(self) -> np.ndarray | None:
        """``[K]``: the physics state, in gymnasium's ``env.unwrapped.state`` units (float64;
        MinAtar's: int32, the layout of :mod:`rlkit.envs.tf.minatar_base`)."""
        return None if self._physics is None else self._physics[0].copy()


class TFVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` copies of the TensorFlow env ``env_id`` as a ``gymnasium.vector.VectorEnv``
    with ``SAME_STEP`` autoreset.

    Observations float32 ``[N, obs_dim]``; actions int ``[N]`` or float32 ``[N, 1]``; rewards
    float64 ``[N]``; ``infos["final_obs"]`` float32 ``[N, obs_dim]`` where any copy ended.
    """

    metadata: dict[str, Any] = {
        "render_modes": [],
        "autoreset_mode": gym.vector.AutoresetMode.SAME_STEP,
    }

    def __init__(self, num_envs: int, env_id: str, **kwargs: Any) -> None:
        mode = kwargs.pop("autoreset_mode", gym.vector.AutoresetMode.SAME_STEP)
        if gym.vector.AutoresetMode(mode) != gym.vector.AutoresetMode.SAME_STEP:
            raise UsageError(f"{env_id} as a vector env autoresets in the same step only")
        _refuse(env_id, kwargs)
        if int(num_envs) < 1:
            raise UsageError(f"num_envs must be at least 1, got {num_envs}")
        self.env_id = env_id
        self.num_envs = int(num_envs)
        tf_env = make_tf_env(env_id)
        self.single_observation_space, self.single_action_space = _spaces(tf_env)
        self.observation_space = gym.vector.utils.batch_space(
            self.single_observation_space, self.num_envs
        )
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self._physics: np.ndarray | None = None
        self._time = np.zeros(self.num_envs, np.int32)

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if options:
            raise UsageError(f"{self.env_id} takes no reset options (got {sorted(options)})")
        if isinstance(seed, list | tuple):  # one seed for all copies: the first
            seed = seed[0]
        if seed is not None or self._np_random is None:
            self._np_random, self._np_random_seed = gym.utils.seeding.np_random(seed)
        _, reset, _, _ = _compiled(self.env_id)
        state, obs = reset(_seed_pair(self.np_random), self.num_envs)
        self._physics, self._time = state.physics.numpy(), state.time.numpy()
        return obs.numpy(), {}

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if self._physics is None:
            raise gym.error.ResetNeeded("call reset before step")
        step = _concrete(self.env_id, "step", self.num_envs)
        space = self.single_action_space
        dtype = np.int32 if space.shape == () else np.float32
        actions = np.asarray(actions, dtype).reshape((self.num_envs, *_action_shape(space)))
        state = EnvState(tf.constant(self._physics), tf.constant(self._time))
        out = step(state, tf.constant(actions), _seed_pair(self.np_random))
        self._physics, self._time = out.state.physics.numpy(), out.state.time.numpy()
        terminated, truncated = out.terminated.numpy(), out.truncated.numpy()
        infos: dict[str, Any] = {}
        ended = terminated | truncated
        if ended.any():
            infos = {"final_obs": out.final_obs.numpy(), "_final_obs": ended}
        return out.obs.numpy(), out.reward.numpy(), terminated, truncated, infos
