"""The training environment(s) as streams of experience, for the loop's one step path.

One environment is one stream; a gymnasium ``VectorEnv`` (``SAME_STEP`` autoreset) is
``N``. :meth:`Streams.step` steps every stream and resets those whose episode ended, so
that the loop can hand the agent its experience protocol: ``observe(actions, rewards,
next_obs, terminated, truncated)`` (an ended episode's ``next_obs`` is its last
observation) and then ``observe_first(first_obs, streams=ended)`` for the episodes that
began. The one environment's values stay unbatched (an observation, an action, a float
reward), as the agents act on them; a vector env's carry the leading axis ``N``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from rlkit.core import structure
from rlkit.core.errors import EnvironmentFailed, UsageError

#: steps of stored rewards and observations checked for NaN and inf at once (numpy, no
#: TensorFlow call: what the environment gave, before a loss could turn it into a
#: "diverged" that blames the learning rate); also checked before a non-finite loss or
#: episode return is reported
CHECK_EVERY = 256


@dataclass
class Step:
    """What one step of every stream gave.

    rewards, terminated, truncated: one environment's scalars, or ``[N]`` arrays.
    next_obs: each step's next observation (an ended episode's last one).
    ended: the streams whose episode ended (ascending).
    first_obs: the first observations of their new episodes: the one environment's
        observation, or a vector env's rows ``[len(ended), ...]`` in ``ended``'s order.
    infos: each ended stream's env info of its last step (e.g. Atari's ``game_return``).
    obs: what the agent acts on next.
    """

    rewards: Any
    next_obs: Any
    terminated: Any
    truncated: Any
    obs: Any
    ended: list[int] = field(default_factory=list)
    first_obs: Any = None
    infos: dict[int, dict[str, Any]] = field(default_factory=dict)


class Streams:
    """The training environment as ``count`` streams (see the module's docstring)."""

    def __init__(self, env) -> None:
        self.env = env
        self.vector = isinstance(env, gym.vector.VectorEnv)
        self.count = env.num_envs if self.vector else 1
        if self.vector:
            require_same_step_autoreset(env)
        self.name = env_name(env)
        space = env.observation_space
        #: a Box observation's shape, compared at each step (other spaces: the full check)
        self.box_shape = tuple(space.shape) if type(space) is gym.spaces.Box else None
        #: whether observations may hold floats to check (a uint8 frame is never NaN: it is
        #: not kept for the check)
        self.float_obs = self.box_shape is None or np.dtype(space.dtype).kind == "f"
        #: the rewards and next observations of the steps since the last finite check, and
        #: the first observations of the episodes begun since (after which of those steps)
        self.pending_rewards: list[Any] = []
        self.pending_obs: list[Any] = []
        self.pending_first: list[tuple[int, Any]] = []
        #: the info of what the agent acts on next (the last reset's or step's; a vector
        #: env's dict of arrays): where invalid-action masks are read (:meth:`action_masks`)
        self.info: dict[str, Any] | None = None

    def action_masks(self, width: int, nvec: tuple[int, ...] | None = None) -> np.ndarray:
        """The invalid-action masks of what the agent acts on next, bool ``[width]`` or
        ``[N, width]`` (:func:`rlkit.envs.action_masks.read_action_masks`)."""
        from rlkit.envs.action_masks import read_action_masks

        return read_action_masks(self.env, self.info, width, self.vector, self.name, nvec)

    def reset(self, seed: int):
        """Seed the action space, reset every stream; the first observation(s)."""
        self.env.action_space.seed(seed)
        obs, self.info = call_env(self.env, "reset", seed=seed)
        check_observation(self.env, obs, "reset()")
        check_finite_observations(self.name, [obs], "reset()", lambda k: None)
        return obs

    def _fits(self, obs: Any, call: str) -> None:
        """:func:`check_observation`, for a Box space one shape comparison (no copy)."""
        if self.box_shape is None or getattr(obs, "shape", None) != self.box_shape:
            check_observation(self.env, obs, call)

    def rows(self, obs, streams: list[int]):
        """The observations of ``streams`` out of what the agent acts on."""
        if not self.vector:
            return obs
        if isinstance(obs, np.ndarray):
            return obs[streams]
        return structure.take_rows(obs, streams)

    def rewards(self, step: Step) -> list[float]:
        """The step's rewards as one float per stream."""
        if not self.vector:
            return [float(step.rewards)]
        return [float(r) for r in step.rewards]

    def step(self, actions) -> Step:
        return self._vector_step(actions) if self.vector else self._one_step(actions)

    def _one_step(self, action) -> Step:
        next_obs, reward, terminated, truncated, info = call_env(self.env, "step", action)
        self._fits(next_obs, "step()")
        self.pending_rewards.append(reward)
        self.pending_obs.append(next_obs if self.float_obs else None)
        self.info = info
        if not (terminated or truncated):
            return Step(reward, next_obs, terminated, truncated, obs=next_obs)
        first, self.info = call_env(self.env, "reset")
        self._fits(first, "reset()")
        if self.float_obs:
            self.pending_first.append((len(self.pending_obs) - 1, first))
        return Step(reward, next_obs, terminated, truncated, obs=first, ended=[0],
                    first_obs=first, infos={0: info})  # fmt: skip

    def check_finite(self, step: int) -> None:
        """:class:`EnvironmentFailed` when a reward or an observation of the steps since the
        last check is NaN or infinite, naming the first and its step (``step``: the loop's
        step count now, after the last of them); then forgets them. One numpy pass over the
        block (:data:`CHECK_EVERY` steps), no TensorFlow call."""
        rewards, observations, firsts = self.pending_rewards, self.pending_obs, self.pending_first
        if not rewards:
            return
        self.pending_rewards, self.pending_obs, self.pending_first = [], [], []
        n = len(rewards)

        def step_of(k: int) -> int:
            return step - (n - 1 - k) * self.count

        try:
            values = np.asarray(rewards, dtype=np.float64).reshape(n, -1)
        except (TypeError, ValueError):  # something that is no number
            bad = next(k for k, r in enumerate(rewards) if not _is_number(r))
            raise EnvironmentFailed(
                f"environment {self.name!r} gave a reward of {rewards[bad]!r} at step "
                f"{step_of(bad)}, not a number: its step() must return a float reward"
            ) from None
        finite = np.isfinite(values)
        if not finite.all():
            k, i = (int(x) for x in np.argwhere(~finite)[0])
            where = f" (sub-environment {i})" if self.vector else ""
            raise EnvironmentFailed(
                f"environment {self.name!r} gave a reward of {values[k, i]} at step "
                f"{step_of(k)}{where} from step(): rlkit learns from finite rewards; fix the "
                "environment (or wrap it to replace the value)"
            )
        if not self.float_obs:
            return
        check_finite_observations(self.name, observations, "step()", step_of)
        after = [k for k, _ in firsts]
        check_finite_observations(self.name, [obs for _, obs in firsts], "reset()",
                                  lambda j: step_of(after[j]))  # fmt: skip

    def _vector_step(self, actions) -> Step:
        next_obs, rewards, terminated, truncated, infos = call_env(self.env, "step", actions)
        self.info = infos  # (SAME_STEP: a reset sub-environment's entries are its reset's)
        self._fits(next_obs, "step()")
        self.pending_rewards.append(rewards)
        self.pending_obs.append(next_obs if self.float_obs else None)
        ended = [int(i) for i in np.flatnonzero(np.logical_or(terminated, truncated))]
        if not ended:
            return Step(rewards, next_obs, terminated, truncated, obs=next_obs)
        # the env already reset those: their last observations are in infos["final_obs"]
        final = infos["final_obs"]
        last: np.ndarray | dict | tuple
        if isinstance(next_obs, np.ndarray):
            last = np.array(next_obs, copy=True)
            for i in ended:
                last[i] = final[i]
        else:  # a Dict or Tuple observation: a dict or tuple of [N, ...] arrays
            last = structure.with_rows(next_obs, {i: final[i] for i in ended})
        final_info = infos.get("final_info", {})
        return Step(rewards, last, terminated, truncated, obs=next_obs, ended=ended,
                    first_obs=self.rows(next_obs, ended),
                    infos={i: _sub_env_info(final_info, i) for i in ended})  # fmt: skip


def require_same_step_autoreset(env: gym.vector.VectorEnv) -> None:
    """UsageError unless ``env`` resets a sub-environment in the step its episode ends.

    gymnasium's default (``NEXT_STEP``) returns the last observation and resets on the
    *next* call, ignoring that call's action for the sub-environment: a step that is no
    transition, which the experience protocol has no room for. ``DISABLED`` never resets.
    """
    mode = env.metadata.get("autoreset_mode", gym.vector.AutoresetMode.NEXT_STEP)
    if mode != gym.vector.AutoresetMode.SAME_STEP:
        name = getattr(mode, "name", mode)
        raise UsageError(
            f"this VectorEnv autoresets in {name} mode; rlkit trains on vector envs that reset "
            "in the step an episode ends: rlkit.envs.make.make_vector_env(id, n), or "
            "gym.make_vec(id, n, vectorization_mode='sync', vector_kwargs={'autoreset_mode': "
            "gym.vector.AutoresetMode.SAME_STEP})"
        )


def _sub_env_info(infos: dict[str, Any], i: int) -> dict[str, Any]:
    """Sub-environment ``i``'s entries of a vector env's info dict (gymnasium stores each key
    as an array, with a ``_key`` mask of the sub-environments that set it)."""
    return {k: v[i] for k, v in infos.items()
            if not k.startswith("_") and infos.get(f"_{k}", np.zeros(i + 1, bool))[i]}  # fmt: skip


def env_name(env: Any) -> str:
    """An environment's id (a vector env's: its sub-environments'), or its class's name."""
    spec = getattr(env, "spec", None)
    if spec is None and isinstance(env, gym.vector.VectorEnv):
        spec = getattr(getattr(env, "envs", [None])[0], "spec", None)
    return spec.id if spec is not None else type(getattr(env, "unwrapped", env)).__name__


def call_env(env: Any, call: str, *args: Any, **kwargs: Any) -> Any:
    """``env.reset(...)`` or ``env.step(...)``; whatever the environment raises becomes
    :class:`EnvironmentFailed` in one line naming the environment, the call and the error
    (the error is its ``__cause__``, with the environment's own traceback). rlkit's own
    refusals (UsageError) and Ctrl-C pass as they are."""
    try:
        return getattr(env, call)(*args, **kwargs)
    except UsageError:
        raise
    except Exception as exc:  # the user's environment: anything it raises
        text = str(exc).strip()
        detail = f": {text.splitlines()[0]}" if text else ""
        raise EnvironmentFailed(
            f"environment {env_name(env)!r} raised in {call}(): {type(exc).__name__}{detail}"
        ) from exc


def check_observation(env: Any, obs: Any, call: str) -> None:
    """:class:`EnvironmentFailed` when ``obs`` is not of the shape (or the structure) of the
    environment's observation space: a ``Box(2,)`` environment that returns 5 numbers is
    named here, not in a reshape deep in acting. (A shape comparison: no copy.)"""
    problem = observation_misfit(obs, env.observation_space)
    if problem is not None:
        raise EnvironmentFailed(
            f"environment {env_name(env)!r} returned from {call} {problem}; its observations "
            "must fit its observation_space"
        )


#: spaces whose every observation has the space's own shape
FIXED_SHAPES = (
    gym.spaces.Box,
    gym.spaces.Discrete,
    gym.spaces.MultiBinary,
    gym.spaces.MultiDiscrete,
)


def observation_misfit(obs: Any, space: Any) -> str | None:
    """What is wrong with ``obs`` for ``space`` (None: it fits, or rlkit cannot tell)."""
    if isinstance(space, gym.spaces.Dict):
        if not isinstance(obs, dict) or set(obs) != set(space.spaces):
            got = sorted(obs) if isinstance(obs, dict) else type(obs).__name__
            return f"an observation with keys {got} where its space has {sorted(space.spaces)}"
        return next((m for k in space.spaces
                     if (m := observation_misfit(obs[k], space[k])) is not None), None)  # fmt: skip
    if isinstance(space, gym.spaces.Tuple):
        if not isinstance(obs, tuple | list) or len(obs) != len(space.spaces):
            return f"an observation that is not a tuple of {len(space.spaces)} parts"
        return next((m for o, s in zip(obs, space.spaces, strict=True)
                     if (m := observation_misfit(o, s)) is not None), None)  # fmt: skip
    expected = getattr(space, "shape", None)
    if expected is None or not isinstance(space, FIXED_SHAPES):
        return None
    shape = np.shape(obs)
    if shape != tuple(expected):
        return f"an observation of shape {shape} where its observation space is {tuple(expected)}"
    return None


def check_finite_observations(name: str, observations: list[Any], call: str, step_of) -> None:
    """:class:`EnvironmentFailed` naming the first observation (``step_of(k)``: its step,
    None: a reset's) with a NaN or an infinity among its float numbers."""
    for k, obs in _first_nonfinite(observations):
        step = step_of(k)
        when = "" if step is None else f" at step {step}"
        if step is not None and call == "reset()":
            when = f" after step {step}"
        raise EnvironmentFailed(
            f"environment {name!r} returned from {call}{when} an observation holding {obs}: "
            "rlkit learns from finite observations; fix the environment (or wrap it to "
            "replace the values)"
        )


def _first_nonfinite(observations: list[Any]):
    """``(index, the bad value)`` of the first observation with a non-finite float, if any
    (a batch of plain arrays in one numpy pass; a structure's float parts one by one)."""
    if not observations:
        return
    first = observations[0]
    if isinstance(first, np.ndarray) and first.dtype.kind != "f":
        return  # integers and booleans are always finite
    try:
        stacked = np.asarray(observations)
    except ValueError:  # (ragged: a structure)
        stacked = None
    if stacked is not None and stacked.dtype.kind == "f":
        finite = np.isfinite(stacked.reshape(len(observations), -1))
        if finite.all():
            return
        k = int(np.argmax(~finite.all(axis=1)))
        yield k, _bad_value(stacked[k])
        return
    if stacked is not None and stacked.dtype.kind != "O":
        return
    for k, obs in enumerate(observations):
        for leaf in _leaves(obs):
            array = np.asarray(leaf)
            if array.dtype.kind == "f" and not np.isfinite(array).all():
                yield k, _bad_value(array)
                return


def _leaves(obs: Any):
    if isinstance(obs, dict):
        for value in obs.values():
            yield from _leaves(value)
    elif isinstance(obs, tuple | list):
        for value in obs:
            yield from _leaves(value)
    else:
        yield obs


def _bad_value(array: Any) -> str:
    """``"nan"`` or ``"inf"``: the first non-finite number of ``array``."""
    flat = np.asarray(array, dtype=np.float64).ravel()
    return str(flat[~np.isfinite(flat)][0])


def _is_number(value: Any) -> bool:
    """Does ``value`` read as a number (or an array of them)?"""
    try:
        np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return True
