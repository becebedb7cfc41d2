"""The off-policy half of DQN and DDPG, written once: a replay memory joining an acting
rule and a learner (:mod:`rlkit.agents.parts`).

An off-policy agent stores every transition in a :class:`~rlkit.replay.memory.ReplayMemory`
and, as the step count passes multiples of ``train_freq`` (from ``learning_starts``
on), hands blocks of ``gradient_steps`` minibatches sampled from it to its learner, then
gives its acting rule the learner's new policy. A subclass supplies:

- ``build(seed)``: its parts, handed over as a :class:`~rlkit.agents.parts.Parts`
  (learner, acting rule, and how the replay stores an action);
- optionally ``replay_class()`` and ``stored_action(action)`` / ``stored_actions(actions)``.

Everything else (the replay from the observation format, what the experience protocol
stores: clipped rewards, actions as stored; update timing, counters and their
persistence) is here; the protocol itself is :class:`~rlkit.agents.base.Agent`'s.

The compiled loop's twins of what it shares with the Python loop here, each tied to its
original by ``tests/unit/agents/test_off_policy_twins.py``: :func:`graph_clip_rewards` of
:func:`clip_rewards` (the rewards stored; bit for bit) and :func:`graph_importance_exponent`
of :func:`importance_exponent` (prioritized replay's beta; bit for bit eagerly, 1e-15
relative under XLA).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import tensorflow as tf

from rlkit.agents.base import Agent
from rlkit.agents.parts import Parts
from rlkit.core import seeding
from rlkit.core.schedules import blocks_due
from rlkit.core.spaces import observation_format
from rlkit.replay.memory import Batch, ReplayMemory
from rlkit.replay.prioritized import PrioritizedSampler


class OffPolicyAgent(Agent):
    """Base of agents that learn from a replay memory (DQN, DDPG).

    The config must have ``buffer_size``, ``batch_size``, ``learning_starts``,
    ``train_freq``, ``gradient_steps``, ``reward_clip``, ``gamma``, ``n_step`` and the
    prioritized replay's keys (:mod:`rlkit.config.replay_options`).

    Attributes:
        obs_format: how observations are stored and fed to the networks.
        encode: ``obs_format.encode``.
        replay: the :class:`~rlkit.replay.memory.ReplayMemory` (sampling stream ``"replay"``).
        prioritized: its :class:`~rlkit.replay.prioritized.PrioritizedSampler` with
            ``prioritized = true`` (None: uniform sampling).
        rng: the ``"explore"`` generator (exploration, random actions, TD3's smoothing).
        learner: the :class:`~rlkit.agents.parts.Learner` (networks, update, targets).
        acting: the :class:`~rlkit.agents.parts.Acting` rule (reads ``learner.policy()``).
    """

    #: the action as the replay stores it: (shape, dtype), as build() handed it over
    action_spec: tuple[tuple[int, ...], Any]
    #: whether image observations are accepted (an agent with a convolutional torso)
    accepts_images: ClassVar[bool] = False
    #: whether Dict and Tuple observations are accepted (with a network of the user's own)
    accepts_structured: ClassVar[bool] = False
    vector_envs: ClassVar[bool] = True

    def __init__(self, observation_space, action_space, config=None, seed: int = 0, **overrides):
        super().__init__(observation_space, action_space, config, seed, **overrides)
        cfg = self.config
        self.obs_format = observation_format(
            observation_space, self.name, self.accepts_images, self.accepts_structured
        )
        self.encode = self.obs_format.encode
        self._last_update_step = 0  # num_steps when update() last ran
        self._episodes_pending = 0  # episodes ended since the last block (episode unit)
        self._rollout_start = 0  # num_steps at the last block (episode unit)
        self.rng = seeding.generator(self.seed, "explore")
        self.learner, self.acting, self.action_spec = self.build(self.seed)
        self.prioritized = None  # the prioritized sampler, with prioritized replay
        if cfg.prioritized:
            self.prioritized = PrioritizedSampler(
                cfg.buffer_size, cfg.priority_exponent, cfg.importance_exponent,
                cfg.priority_epsilon,
            )  # fmt: skip
        self.replay = self.replay_class()(
            cfg.buffer_size,
            self.obs_format.shape,
            self.obs_format.dtype,
            *self.action_spec,
            seeding.stream_seed(self.seed, "replay"),
            n_step=cfg.n_step,
            gamma=cfg.gamma,
            sampler=self.prioritized,
        )
        self.refresh_policy()

    # -- what a subclass supplies ------------------------------------------------------------
    def build(self, seed: int) -> Parts:
        """The learner, the acting rule and the action's storage spec."""
        raise NotImplementedError

    def replay_class(self) -> type[ReplayMemory]:
        """The kind of replay memory the config asks for (DQN: a frame replay for stacks)."""
        return ReplayMemory

    def stored_action(self, action) -> Any:
        """One action as the environment took it -> as the replay stores it."""
        return action

    def stored_actions(self, actions) -> np.ndarray:
        """``[N, ...]`` actions as the environments took them -> as the replay stores them."""
        return np.asarray(actions)

    # -- the parts, joined -------------------------------------------------------------------
    def act(self, obs, explore: bool = True):
        """The acting rule's action for one observation, or ``N`` for a batch."""
        try:
            return self.acting.act(obs, explore, self.num_steps)
        except (ValueError, IndexError, KeyError, TypeError) as exc:
            raise self.unfit_observation(obs, exc) from None

    def learn(self, batch: Batch) -> dict[str, float]:
        """One block of ``K`` updates on ``batch`` (leading shape ``[K, B]``); its metrics.

        The learner's TD errors go back to the replay's sampler for the slots sampled
        (``batch.indices``) after the whole block: a fused block draws its ``K`` minibatches
        before any update, so the priorities of a block are refreshed when it ends (as
        Acme with Reverb accepts), never within it."""
        metrics, td_errors = self.learner.learn(batch, self.num_steps)
        if batch.indices is not None:
            self.replay.update_priorities(batch.indices, td_errors)
        return metrics

    def refresh_policy(self) -> None:
        """Give the acting rule the learner's newest policy."""
        self.acting.follow(self.learner.policy(), self.learner.exploring_policy())

    @property
    def num_updates(self) -> int:
        """Gradient updates run so far."""
        return self.learner.num_updates

    def replay_memory(self) -> ReplayMemory:
        return self.replay

    def checkpoint_variables(self) -> dict[str, list]:
        return self.learner.variables()

    def diagnostics(self) -> dict[str, float]:
        step = self.num_steps
        return {**self.acting.diagnostics(step), **self.learner.diagnostics(step)}

    # -- experience --------------------------------------------------------------------------
    def _clip(self, rewards):
        return clip_rewards(rewards, self.config.reward_clip)

    def experience_memory(self) -> ReplayMemory:
        return self.replay

    def stored_step(self, action, reward) -> tuple[Any, Any]:
        """The action as the replay stores it; the reward clipped to ``+-reward_clip``."""
        if self.config.reward_clip > 0:
            reward = float(self._clip(reward))
        self.learner.rewards_stored(reward)
        return self.stored_action(action), reward

    def stored_steps(self, actions, rewards) -> tuple[np.ndarray, np.ndarray]:
        rewards = self._clip(np.asarray(rewards, dtype=np.float32))
        self.learner.rewards_stored(rewards)
        return self.stored_actions(actions), rewards

    def observe_first(self, obs, streams=None) -> None:
        rows = self.obs_format.batch_rows(self.encode(obs))
        began = [0] if rows is None else list(range(rows) if streams is None else streams)
        cut = [s for s in began if self.replay.in_progress(s)]
        super().observe_first(obs, streams)
        if cut:  # episodes cut short (a new run on this agent): acting starts them afresh
            self.acting.episodes_ended(None if rows is None else np.array(cut))

    def record_episode_ends(self, indices: np.ndarray | None) -> None:
        self._episodes_pending += 1 if indices is None else len(indices)
        self.acting.episodes_ended(indices)

    # -- learning ----------------------------------------------------------------------------
    def update(self) -> dict[str, float] | None:
        """Run the blocks of updates due since the last call.

        With ``train_freq_unit = "step"`` a block of ``gradient_steps`` updates runs each
        time the step count passes a multiple of ``train_freq`` (from ``learning_starts``
        on, once a minibatch is stored); with one environment and ``update()`` after every
        step that is DQN3.0's ``step % train_freq == 0``. With ``"episode"`` the updates
        run each time ``train_freq`` more episodes ended (rl-zoo's ``[N, "episode"]``).
        ``gradient_steps = -1`` runs one update per environment step collected since the
        last block. Returns the metrics of the last block, or None when no update ran.
        """
        cfg = self.config
        before, now = self._last_update_step, self.num_steps
        self._last_update_step = now
        sizes = self._blocks_due(before, now)
        if sizes and self.prioritized is not None:
            self.prioritized.importance_exponent = self.importance_exponent(now)
        metrics = None
        for size in sizes:
            metrics = self.learn(self.replay.sample(cfg.batch_size, size))
        if sizes:
            self.refresh_policy()
        self.learner.after_blocks(before, now)
        return metrics

    def importance_exponent(self, step: int) -> float:
        """Prioritized replay's beta at ``step``: ``importance_exponent`` rising linearly to 1
        over ``importance_anneal_steps`` after ``learning_starts`` (Schaul et al.), or fixed."""
        return importance_exponent(step, self.config)

    def _blocks_due(self, before: int, now: int) -> list[int]:
        """The sizes (updates) of the blocks due between step counts ``before`` and ``now``."""
        cfg = self.config
        learnable = len(self.replay) >= cfg.batch_size
        start = max(cfg.learning_starts, cfg.batch_size)
        if cfg.train_freq_unit == "episode":
            if self._episodes_pending < cfg.train_freq:
                return []
            collected = now - self._rollout_start
            self._episodes_pending, self._rollout_start = 0, now
            if not learnable or now < start:
                return []
            # a fixed gradient_steps is one block of a constant shape, as with the step unit
            return _split_block(collected) if cfg.gradient_steps == -1 else [cfg.gradient_steps]
        if not learnable:
            return []
        size = cfg.train_freq if cfg.gradient_steps == -1 else cfg.gradient_steps
        return [size] * blocks_due(before, now, cfg.train_freq, start)

    # -- persistence -------------------------------------------------------------------------
    def state(self) -> dict[str, dict[str, Any]]:
        tree = super().state()
        tree["counters"]["num_updates"] = self.num_updates
        tree["rngs"]["explore"] = self.rng
        tree["memory"]["replay"] = self.replay
        tree["extra"]["last_update_step"] = self._last_update_step
        tree["extra"]["episodes_pending"] = self._episodes_pending
        tree["extra"]["rollout_start"] = self._rollout_start
        for part in (self.learner, self.acting):
            for key, values in part.state().items():
                tree[key].update(values)
        return tree

    def load_scalars(self, counters: dict[str, int], extra: dict[str, Any]) -> None:
        super().load_scalars(counters, extra)
        self.learner.num_updates = int(counters["num_updates"])
        self.learner.load_scalars(counters, extra)
        self.acting.load_scalars(counters, extra)
        self._last_update_step = int(extra.get("last_update_step", self.num_steps))
        self._episodes_pending = int(extra.get("episodes_pending", 0))
        self._rollout_start = int(extra.get("rollout_start", self.num_steps))

    def after_restore(self) -> None:
        self.learner.weights_changed()
        self.refresh_policy()
        if self._last_update_step == 0:  # a loaded model: nothing is owed before num_steps
            self._last_update_step = self._rollout_start = self.num_steps


def importance_exponent(step: int, config: Any) -> float:
    """Prioritized replay's beta at ``step`` for ``config`` (its ``importance_exponent``,
    ``importance_anneal_steps`` and ``learning_starts``): see
    :meth:`OffPolicyAgent.importance_exponent`."""
    cfg = config
    if cfg.importance_anneal_steps == 0:
        return cfg.importance_exponent
    progress = max(0, step - cfg.learning_starts) / cfg.importance_anneal_steps
    return cfg.importance_exponent + (1.0 - cfg.importance_exponent) * min(1.0, progress)


def graph_importance_exponent(step: tf.Tensor, config: Any) -> tf.Tensor:
    """:func:`importance_exponent` in the graph: float64 ``[]`` at the int64 ``[]`` step count
    ``step`` (the compiled loop's prioritized blocks)."""
    cfg = config
    beta = tf.constant(cfg.importance_exponent, tf.float64)
    if cfg.importance_anneal_steps == 0:
        return beta
    past = tf.cast(tf.maximum(step - cfg.learning_starts, 0), tf.float64)
    progress = tf.minimum(past / cfg.importance_anneal_steps, 1.0)
    return beta + (1.0 - beta) * progress


def clip_rewards(rewards: Any, clip: float) -> Any:
    """The rewards (a number or an array, float32 ``[N]`` from a vector step) clipped to
    ``[-clip, clip]`` (DQN3.0's ``min_reward``/``max_reward``); as they are with ``clip`` 0."""
    return np.clip(rewards, -clip, clip) if clip > 0 else rewards


def graph_clip_rewards(rewards: tf.Tensor, clip: float) -> tf.Tensor:
    """:func:`clip_rewards` in the graph: float32 ``[N]`` rewards of a vector step, clipped to
    ``[-clip, clip]`` (the compiled loop's replay write); as they are with ``clip`` 0."""
    return tf.clip_by_value(rewards, -clip, clip) if clip > 0 else rewards


#: the largest block of an episode's updates (gradient_steps = -1): blocks of varying
#: size would each trace (and XLA-compile) a new learner graph, so an episode's N updates
#: run as blocks of this size and single updates: two graphs at most
EPISODE_BLOCK = 64


def _split_block(updates: int) -> list[int]:
    """``updates`` as blocks of :data:`EPISODE_BLOCK` followed by single updates."""
    return [EPISODE_BLOCK] * (updates // EPISODE_BLOCK) + [1] * (updates % EPISODE_BLOCK)
