"""Training environments whose state travels with a checkpoint, exactly.

A checkpoint pickles the training environment so that the episode in progress goes on
after a resume. That keeps the state of most environments (classic control, MinAtar),
but not of those gymnasium pickles through ``EzPickle``, which keeps only the
constructor's arguments: unpickled, they are environments that were never reset.
:class:`ResumableEnv`, the outermost wrapper of such an environment, makes up for it:

- an ALE emulator (``ale_py.env.AtariEnv``): its full state, random generator included
  (sticky actions draw from it), is cloned when the checkpoint pickles the environment
  and restored into the fresh emulator when it is unpickled; the wrappers above it
  (no-op starts, max-pooling, frame stack, lives) pickle as they are;
- a MuJoCo environment (gymnasium's ``MujocoEnv``): its whole ``MjData`` is pickled with
  the checkpoint and copied into the fresh environment's when it is unpickled
  (:mod:`rlkit.envs.mujoco_envs`): the integration state alone would not do, since Ant's
  and Humanoid's rewards read body positions computed in the step before; the TimeLimit
  counter above it pickles as it is;
- anything else pickled through ``EzPickle`` (Box2D's LunarLander and BipedalWalker):
  the episode in progress is replayed on unpickling, from the base environment's random
  generator as it was before the episode's reset, with the episode's reset arguments
  and actions (gymnasium environments draw their randomness from ``np_random``; Box2D is
  deterministic on one machine). A Box2D world that has run an episode plays the next
  one differently in the last bits from a new world (BipedalWalker keeps one world for
  all its episodes), so each episode starts on a new base environment (rebuilt from its
  constructor's arguments, its generator carried over): the replay then starts where the
  original episode started. Recording costs one copy of each action per step, the
  rebuild one environment construction per episode, and the replay at resume at most
  one episode of steps.

The base environment's ``np_random`` travels too (rlkit's Atari no-op starts draw from it).
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.utils import EzPickle

from rlkit.envs.atari import ale_of
from rlkit.envs.mujoco_envs import is_mujoco_env, physics_state, restore_physics

PICKLE, ALE, MUJOCO, REPLAY = "pickle", "ale", "mujoco", "replay"


def _is_ale(env: gym.Env) -> bool:
    try:
        from ale_py.env import AtariEnv
    except ImportError:
        return False
    return isinstance(env.unwrapped, AtariEnv)


def layers(env: gym.Env) -> list[gym.Env]:
    """``env``'s wrappers, outermost first, then the base environment."""
    chain = [env]
    while isinstance(chain[-1], gym.Wrapper):
        chain.append(chain[-1].env)
    return chain


def how_state_is_kept(env: gym.Env) -> str:
    """``"ale"``, ``"mujoco"``, ``"replay"`` (another ``EzPickle`` environment) or
    ``"pickle"`` (the rest)."""
    if _is_ale(env):
        return ALE
    if is_mujoco_env(env):
        return MUJOCO
    if any(isinstance(layer, EzPickle) for layer in layers(env)):
        return REPLAY
    return PICKLE


def needs_wrapper(env: gym.Env) -> bool:
    """Does a pickle of ``env`` lose its state unless :class:`ResumableEnv` wraps it?"""
    return how_state_is_kept(env) != PICKLE


def _rng_state(env: gym.Env) -> Mapping[str, Any] | None:
    rng = env.unwrapped._np_random  # (not .np_random: reading that seeds a missing one)
    return None if rng is None else rng.bit_generator.state


def _set_rng_state(env: gym.Env, state: Mapping[str, Any] | None) -> None:
    if state is None:
        env.unwrapped._np_random = None
        return
    rng = np.random.Generator(getattr(np.random, state["bit_generator"])())
    rng.bit_generator.state = state
    env.unwrapped._np_random = rng


class ResumableEnv(gym.Wrapper):
    """A training environment that resumes exactly from a pickle (see the module's doc).

    Transparent while training: observations, rewards and spaces are the wrapped env's.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.kept_by = how_state_is_kept(env)
        self._reset_args: tuple | None = None  # (seed, options, rng state before the reset)
        self._actions: list[Any] = []
        self._used = False  # the base env has been reset (a Box2D world has run)

    def reset(self, *, seed=None, options=None):
        if self.kept_by == REPLAY:
            rng = _rng_state(self.env)
            if self._used:  # a new episode on a new world (see the module's doc)
                self.env = pickle.loads(pickle.dumps(self.env))
                _set_rng_state(self.env, rng)
            self._reset_args = (seed, options, rng)
            self._actions = []
            self._used = True
        return self.env.reset(seed=seed, options=options)

    def step(self, action):
        if self.kept_by == REPLAY:
            self._actions.append(np.array(action, copy=True))
        return self.env.step(action)

    def __getstate__(self) -> dict[str, Any]:
        state = {"env": self.env, "kept_by": self.kept_by, "rng": _rng_state(self.env)}
        if self.kept_by == ALE:
            state["ale"] = ale_of(self.env).cloneState(include_rng=True)
        elif self.kept_by == MUJOCO:
            state["mujoco"] = physics_state(self.env)
        elif self.kept_by == REPLAY:
            state["reset_args"], state["actions"] = self._reset_args, list(self._actions)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        gym.Wrapper.__init__(self, state["env"])
        self.kept_by = state["kept_by"]
        self._reset_args, self._actions, self._used = None, [], False
        if self.kept_by == ALE:
            ale_of(self.env).restoreState(state["ale"])
        elif self.kept_by == MUJOCO:
            restore_physics(self.env, state["mujoco"])
        elif self.kept_by == REPLAY and state["reset_args"] is not None:
            self._replay(state["reset_args"], state["actions"])
        _set_rng_state(self.env, state["rng"])

    def _replay(self, reset_args: tuple, actions: list[Any]) -> None:
        """Play the episode in progress again: the same reset, the same actions."""
        seed, options, rng = reset_args
        _set_rng_state(self.env, rng)
        self.reset(seed=seed, options=options)
        for action in actions:
            self.step(action)


def resumable(env: gym.Env) -> gym.Env:
    """``env`` wrapped in :class:`ResumableEnv` when a pickle would lose its state (for an
    evaluation env too: each evaluation then plays on a new Box2D world, whatever ran
    before it)."""
    return ResumableEnv(env) if needs_wrapper(env) else env
