"""REINFORCE: the Monte-Carlo policy gradient, an acting rule and a learner joined by the agent.

- :class:`~rlkit.agents.reinforce.acting.Sampling` acts: it samples from the policy it follows
  (Gumbel-max for Discrete actions, a Gaussian for Box ones) or acts greedily.
- :class:`~rlkit.agents.reinforce.learner.ReinforceLearner` learns: the policy and the
  value baseline, their pipelines, the compiled update of the pseudo-loss
  ``-sum_t log pi(a_t|s_t) * G_t``, the numpy snapshot acting reads.
- :class:`Reinforce` joins them with its episode memory and its config.

Episodes are kept in the shared :class:`ReplayMemory`, used on-policy: one compiled update
(one trace for every episode length) runs when ``episodes_per_update`` episodes have
ended, then the memory is cleared and acting follows the learner's new snapshot. Acting
reads numpy copies refreshed after each update: no TensorFlow call per environment step.

Discrete actions use a softmax policy; bounded Box actions a diagonal Gaussian
(state-independent log std) in the action box scaled to ``[-1, 1]``, clipped to
the bounds before it reaches the environment.

The policy and the baseline are rlkit's :class:`~rlkit.networks.policy.PolicyMLP` or a
user's Keras models (``policy=`` / ``baseline=``, config keys ``policy`` and
``baseline_network``): the policy returns the logits, or the Gaussian's mean (the log std
stays the agent's own variable); the baseline one value per observation.

A ``Dict`` or ``Tuple`` observation takes a policy (and a baseline, when it is on) of one's
own, which receives the structure (each part in its own dtype); the episode memory is then
a :class:`~rlkit.replay.structured.StructuredReplay`, one array per part, and acting goes
through one compiled call. rlkit's MLP refuses such a space in one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces

from rlkit.agents.base import Agent
from rlkit.agents.reinforce import config as reinforce_config
from rlkit.agents.reinforce.acting import Sampling
from rlkit.agents.reinforce.config import ReinforceConfig, resolve_preset
from rlkit.agents.reinforce.learner import ReinforceLearner
from rlkit.core import seeding
from rlkit.core.spaces import observation_format
from rlkit.learn.losses import (  # noqa: F401 (the loss terms, importable here as before)
    gaussian_entropy,
    gaussian_log_loss,
    softmax_entropy,
    softmax_log_loss,
    value_loss,
)
from rlkit.networks.custom import GIVEN_IN_PYTHON
from rlkit.replay.memory import Batch, ReplayMemory
from rlkit.replay.structured import StructuredReplay

if TYPE_CHECKING:
    import tensorflow as tf

    from rlkit.learn.gradients import UpdatePipeline
    from rlkit.networks.policy import KerasPolicyNetwork, PolicyMLP


class Reinforce(Agent):
    """REINFORCE (Monte-Carlo policy gradient) for Discrete or bounded Box actions.

    Args:
        observation_space: ``Box`` (flattened) or ``Discrete`` (one-hot) observations; or a
            ``Dict`` or ``Tuple`` of ``Box`` and ``Discrete`` parts with a ``policy`` (and,
            with the baseline on, a ``baseline``) of one's own that takes that structure.
        action_space: ``Discrete(n)`` (softmax policy) or a bounded ``Box`` (Gaussian).
        config: a :class:`ReinforceConfig`; keyword arguments override its keys. Its
            ``preset`` is resolved against the observation space (``self.config`` holds
            the resolved config).
        seed: seeds weight initialisation and action sampling.
        policy: your own policy network (see :mod:`rlkit.networks.custom`): a Keras model,
            a builder ``(observation_space, action_space) -> keras.Model``, or the name of
            an importable builder ``"package.module:function"`` (kept in the config as
            ``policy``). It maps ``[B, obs_dim]`` to logits ``[B, n]`` (Discrete) or to the
            Gaussian's mean ``[B, act_dim]`` in the action box scaled to ``[-1, 1]`` (Box;
            the log std stays the agent's own variable).
        baseline: ``True`` / ``False`` (the config key: a learned value baseline or none),
            or your own value network as for ``policy`` (``[B, obs_dim] -> [B, 1]`` or
            ``[B]``; kept in the config as ``baseline_network``; turns the baseline on).
    """

    name = "reinforce"
    config_class = ReinforceConfig

    def __init__(
        self, observation_space, action_space, config=None, seed: int = 0, policy=None,
        baseline=None, **overrides,
    ) -> None:  # fmt: skip
        self._networks = {"policy": policy, "baseline": None}
        if policy is not None:
            overrides["policy"] = policy if isinstance(policy, str) else GIVEN_IN_PYTHON
        if isinstance(baseline, bool | np.bool_) or (
            isinstance(baseline, str) and ":" not in baseline
        ):
            overrides["baseline"] = baseline  # the config key (a string: --set's text)
        elif baseline is not None:  # a network of one's own
            self._networks["baseline"] = baseline
            named = baseline if isinstance(baseline, str) else GIVEN_IN_PYTHON
            overrides.update(baseline=True, baseline_network=named)
        super().__init__(observation_space, action_space, config, seed, **overrides)
        self.config = cfg = resolve_preset(self.config, observation_space)
        fmt = observation_format(observation_space, "reinforce", structured=True)
        self.obs_format, self.encode = fmt, fmt.encode
        self.discrete = isinstance(action_space, spaces.Discrete)
        action_shape: tuple[int, ...]
        action_dtype: type[np.generic]
        if self.discrete:
            self.num_actions = int(action_space.n)
            action_shape, action_dtype = (), np.int64
        else:
            self.action_dim = int(np.prod(action_space.shape))
            action_shape, action_dtype = (self.action_dim,), np.float32
        self.learner = ReinforceLearner(
            cfg, observation_space, action_space, self.obs_format, seed, self._networks
        )
        if fmt.parts:  # one array per part, each in its own dtype
            self.memory: ReplayMemory = StructuredReplay(
                cfg.buffer_size, fmt.shape, fmt.dtype, action_shape, action_dtype, seed
            )
        else:
            self.memory = ReplayMemory(
                cfg.buffer_size, (fmt.size,), np.float32, action_shape, action_dtype, seed
            )
        self.rng = seeding.generator(seed, "sample")  # action sampling
        self.acting = Sampling(action_space, self.obs_format, self.rng)
        self.num_episodes = 0  # finished episodes observed
        self.episodes_in_memory = 0  # finished episodes waiting for the next update
        self.acting.follow(self.learner.policy())

    check_spaces = staticmethod(reinforce_config.check_spaces)

    # -- the parts' public faces -------------------------------------------------------------
    @property
    def policy(self) -> PolicyMLP | KerasPolicyNetwork:
        """The policy network (:class:`~rlkit.networks.policy.PolicyMLP` or the user's
        :class:`~rlkit.networks.policy.KerasPolicyNetwork`): ``.model``, ``.variables``."""
        return self.learner.policy_network

    @property
    def value(self) -> PolicyMLP | KerasPolicyNetwork | None:
        """The value baseline's network (as :attr:`policy`); None without the baseline."""
        return self.learner.value_network

    @property
    def log_std(self) -> tf.Variable | None:
        """The Gaussian's log std, a ``tf.Variable`` ``[act_dim]``; None for Discrete."""
        return self.learner.log_std

    @property
    def policy_pipeline(self) -> UpdatePipeline:
        """The policy's :class:`~rlkit.learn.gradients.UpdatePipeline` (log std included)."""
        return self.learner.policy_pipeline

    @property
    def value_pipeline(self) -> UpdatePipeline | None:
        """The baseline's update pipeline; None without the baseline."""
        return self.learner.value_pipeline

    @property
    def num_updates(self) -> int:
        """Updates run so far."""
        return self.learner.num_updates

    @property
    def tracing_count(self) -> int:
        """How many times the update graph was traced (1 after any number of updates)."""
        return self.learner.tracing_count

    def python_networks(self) -> dict:
        """The policy given in Python (a baseline given in Python is given again to load)."""
        if self.config.policy == GIVEN_IN_PYTHON:
            return {"policy": self.learner.policy_network.model}
        return {}

    def returns(self, batch: Batch) -> tuple[np.ndarray, int]:
        """Returns-to-go ``[T]`` of ``batch`` and its number of segments (see
        :meth:`ReinforceLearner.returns`: open ends bootstrap from ``V`` with the baseline)."""
        return self.learner.returns(batch)

    # -- acting ------------------------------------------------------------------------------
    def action_probabilities(self, obs) -> np.ndarray:
        """``pi(.|s)`` from the numpy copy of the policy: ``[A]`` or ``[N, A]`` (Discrete only)."""
        if not self.discrete:
            raise TypeError("action_probabilities needs a Discrete action space")
        return self.acting.probabilities(obs)

    def act(self, obs, explore: bool = True) -> int | np.ndarray:
        """Sample ``a ~ pi(.|s)`` (``explore=True``) or take the most likely action.

        Discrete: the greedy action is ``argmax pi``; Box: the Gaussian mean. ``obs`` is one
        observation (an int or one action is returned) or a batch (``[N]`` / ``[N, D]``; a
        ``Dict`` or ``Tuple`` observation: its structure, ``[N, *part_shape]`` per part).
        """
        try:
            return self.acting.act(obs, explore, self.num_steps)
        except (ValueError, IndexError, KeyError, TypeError) as exc:
            raise self.unfit_observation(obs, exc) from None

    # -- learning ----------------------------------------------------------------------------
    def experience_memory(self) -> ReplayMemory:
        return self.memory

    def stored_step(self, action, reward) -> tuple[np.ndarray | int, float]:
        """The action as the memory keeps it: a Box action as the unclipped Gaussian sample
        in [-1, 1] units, for its exact log-probability."""
        return self.acting.stored_action(action), reward

    def observe_next(self, action, reward, next_obs, terminated, truncated) -> None:
        """Store one step; count the episode when it ended.

        Call :meth:`update` after every ``observe`` (as :func:`rlkit.train` does): it runs
        the update that empties the memory before it can overflow.
        """
        if len(self.memory) >= self.memory.capacity:
            raise RuntimeError(
                "the episode memory is full: call update() after each observe() "
                "(rlkit.train does), or raise buffer_size"
            )
        super().observe_next(action, reward, next_obs, terminated, truncated)

    def record_episode_ends(self, indices: np.ndarray | None) -> None:
        self.num_episodes += 1
        self.episodes_in_memory += 1

    def update(self) -> dict[str, float] | None:
        """Update when ``episodes_per_update`` episodes have ended (or the memory is full).

        Returns ``{"loss", "entropy"}`` (plus ``"value_loss"`` with the baseline), or None
        when no update was due. The memory is empty afterwards.
        """
        full = len(self.memory) >= self.memory.capacity
        if self.episodes_in_memory < self.config.episodes_per_update and not full:
            return None
        metrics, _ = self.learner.learn(self.memory.ordered(), self.num_steps)
        self.memory.clear()
        self.episodes_in_memory = 0
        self.acting.follow(self.learner.policy())
        return metrics

    def diagnostics(self) -> dict[str, float]:
        step = self.num_steps
        return {**self.acting.diagnostics(step), **self.learner.diagnostics(step)}

    # -- reporting ---------------------------------------------------------------------------
    def report(self, env) -> str | None:
        """For a constant observation (a bandit): each arm's probability next to its mean."""
        if not self.discrete or not reinforce_config.is_constant_observation(
            self.observation_space
        ):
            return None
        probs = self.action_probabilities(self.observation_space.low)
        means = getattr(getattr(env, "unwrapped", env), "arm_means", None)
        start = self.acting.action_start
        lines = ["arm      mean  probability"]
        for arm, p in enumerate(probs):
            mean = f"{means[arm]:8.3f}" if means is not None else "       ?"
            lines.append(f"{arm + start:>3}  {mean}  {p:11.3f}")
        top = int(np.argmax(probs))
        line = f"most likely arm: {top + start} ({probs[top]:.1%})"
        if means is not None:
            means = np.asarray(means, dtype=np.float64)
            best = np.flatnonzero(means == means.max()) + start
            arms = ", ".join(str(b) for b in best)
            line += f"; best arm{'s' if len(best) > 1 else ''}: {arms} (mean {means.max():.3f})"
        lines.append(line)
        return "\n".join(lines)

    # -- persistence -------------------------------------------------------------------------
    def checkpoint_variables(self) -> dict[str, list]:
        return self.learner.variables()

    def state(self) -> dict[str, dict[str, Any]]:
        tree = super().state()
        tree["counters"].update(
            num_updates=self.num_updates,
            num_episodes=self.num_episodes,
            episodes_in_memory=self.episodes_in_memory,
        )
        tree["rngs"]["explore"] = self.rng
        tree["memory"]["episodes"] = self.memory
        for key, values in self.learner.state().items():
            tree[key].update(values)
        return tree

    def load_scalars(self, counters: dict[str, int], extra: dict[str, Any]) -> None:
        super().load_scalars(counters, extra)
        self.learner.num_updates = int(counters["num_updates"])
        self.learner.load_scalars(counters, extra)
        self.num_episodes = int(counters["num_episodes"])
        self.episodes_in_memory = int(counters["episodes_in_memory"])

    def after_restore(self) -> None:
        """Acting follows the weights now in the variables (after a load, or weights
        assigned by hand)."""
        self.learner.refresh()
        self.acting.follow(self.learner.policy())
