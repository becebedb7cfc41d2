"""REINFORCE: the policy gradient as a log-loss under ``GradientTape``.

The update minimises the pseudo-loss ``-sum_t log pi(a_t|s_t) * G_t`` (discounted
returns-to-go ``G_t``; optionally minus a learned ``V(s_t)`` and normalised), whose
gradient is the REINFORCE estimate of ``-grad J``. It goes through the shared
pipeline: ``compute_gradients`` (the tape) ``-> process`` (clipping) ``->
apply_gradients`` (a Keras optimizer); the value baseline has its own pipeline.

Episodes are kept in the shared :class:`ReplayMemory`, used on-policy: one
compiled update (a ``tf.function`` whose input signature has a ``None`` time axis,
so episodes of any length share one trace) runs when ``episodes_per_update``
episodes have ended, then the memory is cleared. Acting reads a numpy copy of the
policy refreshed after each update: no TensorFlow call per environment step.

Discrete actions use a softmax policy; bounded Box actions a diagonal Gaussian
(state-independent log std) in the action box scaled to ``[-1, 1]``, clipped to
the bounds before it reaches the environment.

The policy and the baseline are rlkit's :class:`~rlkit.networks.policy.PolicyMLP` or a
user's Keras models (``policy=`` / ``baseline=``, config keys ``policy`` and
``baseline_network``): the policy returns the logits, or the Gaussian's mean (the log std
stays the agent's own variable); the baseline one value per observation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import tensorflow as tf
from gymnasium import spaces

from rlkit.agents import reinforce_config
from rlkit.agents.base import Agent
from rlkit.agents.reinforce_config import ReinforceConfig, resolve_preset
from rlkit.core import seeding
from rlkit.core.spaces import observation_format
from rlkit.learn.gradients import UpdatePipeline, transforms_from_config
from rlkit.learn.losses import (
    gaussian_entropy,
    gaussian_log_loss,
    normalize,
    softmax_entropy,
    softmax_log_loss,
    value_loss,
)
from rlkit.learn.optimizers import make_optimizer
from rlkit.learn.returns import returns_to_go
from rlkit.networks.custom import GIVEN_IN_PYTHON, network_source
from rlkit.networks.policy import PolicyMLP, make_baseline, make_policy
from rlkit.replay.memory import Batch, ReplayMemory


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


# -- the agent ----------------------------------------------------------------------------------
class Reinforce(Agent):
    """REINFORCE (Monte-Carlo policy gradient) for Discrete or bounded Box actions.

    Args:
        observation_space: ``Box`` (flattened) or ``Discrete`` (one-hot) observations.
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
        self.obs_format = observation_format(observation_space, "reinforce")
        self.encode, obs_dim = self.obs_format.encode, self.obs_format.size
        self.discrete = isinstance(action_space, spaces.Discrete)
        if self.discrete:
            self.num_actions = int(action_space.n)
            self._action_start = int(action_space.start)
            out_dim, action_shape, action_dtype = self.num_actions, (), np.int64
            action_spec = tf.TensorSpec([None], tf.int32)
        else:
            self.action_dim = int(np.prod(action_space.shape))
            low = action_space.low.astype(np.float64).reshape(-1)
            high = action_space.high.astype(np.float64).reshape(-1)
            self._low, self._high = low, high
            self._center, self._half_range = (high + low) / 2, (high - low) / 2
            out_dim, action_shape, action_dtype = self.action_dim, (self.action_dim,), np.float32
            action_spec = tf.TensorSpec([None, self.action_dim], tf.float32)
        self.policy, self.value = self._make_networks(out_dim, seed)
        policy_variables = list(self.policy.variables)
        self.log_std = None
        if not self.discrete:
            self.log_std = tf.Variable(
                np.full(self.action_dim, cfg.log_std_init, np.float32), name="policy_log_std"
            )
            policy_variables.append(self.log_std)
        clip = transforms_from_config(cfg.max_grad_norm)
        self.policy_pipeline = UpdatePipeline(
            policy_variables, make_optimizer(cfg.optimizer, cfg.learning_rate), clip
        )
        self.value_pipeline = None
        if self.value is not None:
            self.value_pipeline = UpdatePipeline(
                self.value.variables, make_optimizer(cfg.optimizer, cfg.value_learning_rate), clip
            )
        self.memory = ReplayMemory(
            cfg.buffer_size, (obs_dim,), np.float32, action_shape, action_dtype, seed
        )
        self.rng = seeding.generator(seed, "sample")  # action sampling
        self.num_updates = 0
        self.num_episodes = 0  # finished episodes observed
        self.episodes_in_memory = 0  # finished episodes waiting for the next update
        self._last_sample: tuple[np.ndarray, np.ndarray] | None = None  # Gaussian (env, raw)
        # one trace for every episode length; the concrete function is called directly
        # (cheaper than re-binding the arguments to the signature on every update)
        self._update = tf.function(
            self._update_graph,
            input_signature=[
                tf.TensorSpec([None, obs_dim], tf.float32),
                action_spec,
                tf.TensorSpec([None], tf.float32),
                tf.TensorSpec([], tf.float32),
            ],
        )
        self._update_concrete = self._update.get_concrete_function()
        self._refresh_numpy()

    check_spaces = staticmethod(reinforce_config.check_spaces)

    def _make_networks(self, out_dim: int, seed: int) -> tuple:
        """The policy ``[B, obs_dim] -> [B, out_dim]`` and the value baseline ``[B, 1]`` (or
        ``[B]``; None without the baseline): rlkit's :class:`PolicyMLP` or the user's."""
        cfg, obs_dim = self.config, self.obs_format.size
        spaces_ = self.observation_space, self.action_space
        policy_seed, value_seed = (seeding.network_seed(seed, n) for n in ("policy", "value"))
        if cfg.policy:
            source = network_source("policy", cfg.policy, self._networks["policy"])
            policy = make_policy(source, spaces_, self.obs_format, out_dim, self.discrete,
                                 policy_seed)  # fmt: skip
        else:
            policy = PolicyMLP(obs_dim, out_dim, cfg.hidden_sizes, policy_seed, "policy")
        if not cfg.baseline:
            return policy, None
        if cfg.baseline_network:
            source = network_source("baseline", cfg.baseline_network, self._networks["baseline"])
            return policy, make_baseline(source, spaces_, self.obs_format, value_seed)
        return policy, PolicyMLP(obs_dim, 1, cfg.value_hidden_sizes, value_seed, "value")

    # -- acting ------------------------------------------------------------------------------
    def _snapshot_tensors(self) -> list:
        """The weights the numpy copies need: policy layers, [log_std], [value layers]."""
        tensors = list(self.policy.layer_weights())
        if self.log_std is not None:
            tensors.append(self.log_std)
        if self.value is not None:
            tensors.extend(self.value.layer_weights())
        return tensors

    def _refresh_numpy(self, arrays: Sequence[np.ndarray] | None = None) -> None:
        """Rebuild the numpy acting copies, from ``arrays`` (see :meth:`_snapshot_tensors`)
        when an update just returned them, else by reading the variables."""
        if arrays is None:
            arrays = [np.asarray(v.numpy()) for v in self._snapshot_tensors()]
        n = len(self.policy.layer_weights())
        self._policy = self.policy.to_numpy(arrays[:n])
        self._std = None
        if self.log_std is not None:
            self._std = np.exp(arrays[n])
            n += 1
        self._value = self.value.to_numpy(arrays[n:]) if self.value is not None else None

    def action_probabilities(self, obs) -> np.ndarray:
        """``pi(.|s)`` from the numpy copy of the policy: ``[A]`` or ``[N, A]`` (Discrete only)."""
        if not self.discrete:
            raise TypeError("action_probabilities needs a Discrete action space")
        return _softmax(self._policy(self.encode(obs)))

    def act(self, obs, explore: bool = True) -> int | np.ndarray:
        """Sample ``a ~ pi(.|s)`` (``explore=True``) or take the most likely action.

        Discrete: the greedy action is ``argmax pi``; Box: the Gaussian mean. ``obs`` is one
        observation (an int or one action is returned) or a batch (``[N]`` / ``[N, D]``).
        """
        out = self._policy(self.encode(obs))
        if self.discrete:
            if explore:  # Gumbel-max: an exact sample from softmax(out)
                out = out + self.rng.gumbel(size=out.shape)
            action = np.argmax(out, axis=-1) + self._action_start
            return int(action) if out.ndim == 1 else action
        raw = out + self._std * self.rng.standard_normal(out.shape) if explore else out
        raw = raw.astype(np.float32)
        shape = (*out.shape[:-1], *self.action_space.shape)
        action = np.clip(self._center + self._half_range * raw, self._low, self._high)
        action = action.astype(self.action_space.dtype).reshape(shape)
        if out.ndim == 1:
            self._last_sample = (action, raw)
        return action

    # -- learning ----------------------------------------------------------------------------
    def experience_memory(self) -> ReplayMemory:
        return self.memory

    def stored_step(self, action, reward) -> tuple[np.ndarray | int, float]:
        """The action as the memory keeps it: a Box action as the unclipped Gaussian sample
        in [-1, 1] units, for its exact log-probability."""
        if self.discrete:
            return int(action) - self._action_start, reward
        if self._last_sample is not None and np.array_equal(action, self._last_sample[0]):
            return self._last_sample[1], reward
        action = np.asarray(action, np.float64).reshape(-1)
        return ((action - self._center) / self._half_range).astype(np.float32), reward

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
        cfg = self.config
        full = len(self.memory) >= self.memory.capacity
        if self.episodes_in_memory < cfg.episodes_per_update and not full:
            return None
        batch = self.memory.ordered()
        returns, segments = self.returns(batch)
        loss, entropy, v_loss, *weights = self._update_concrete(
            tf.convert_to_tensor(batch.obs),
            tf.convert_to_tensor(batch.actions, tf.int32 if self.discrete else tf.float32),
            tf.convert_to_tensor(returns),
            tf.constant(segments, tf.float32),
        )
        self.memory.clear()
        self.episodes_in_memory = 0
        self.num_updates += 1
        self._refresh_numpy([w.numpy() for w in weights])
        metrics = {"loss": float(loss), "entropy": float(entropy)}
        if self.value is not None:
            metrics["value_loss"] = float(v_loss)
        return metrics

    def returns(self, batch: Batch) -> tuple[np.ndarray, int]:
        """Returns-to-go ``[T]`` of a batch of whole or cut episodes, and how many segments.

        An episode that did not terminate (truncated, or cut because the memory filled)
        bootstraps from the numpy copy of ``V(s_T)`` with the baseline on, and is cut
        (bootstrap 0) without it.
        """
        ends = batch.terminated | batch.truncated
        open_end = ~batch.terminated & (ends | (np.arange(len(ends)) == len(ends) - 1))
        bootstrap = np.zeros(len(ends), np.float32)
        if self._value is not None and open_end.any():
            values = self._value(batch.next_obs[open_end])
            bootstrap[open_end] = values[:, 0] if values.ndim == 2 else values
        segments = int(ends.sum()) + int(not ends[-1])
        return returns_to_go(batch.rewards, self.config.gamma, ends, bootstrap), segments

    def _policy_terms(self, obs, actions, weights):
        out = self.policy.model(obs, training=True)
        if self.discrete:
            return softmax_log_loss(out, actions, weights), softmax_entropy(out)
        per_example = gaussian_log_loss(out, self.log_std, actions, weights)
        return per_example, gaussian_entropy(self.log_std, tf.shape(out)[0])

    def _update_graph(self, obs, actions, returns, segments):
        """One update on ``T`` transitions: obs ``[T, obs_dim]``, actions ``[T]`` or ``[T, D]``,
        returns ``[T]``; losses are summed over time and divided by ``segments`` (episodes).
        """
        cfg = self.config
        weights = returns
        v_loss = tf.constant(0.0)
        if self.value is not None:
            with tf.GradientTape() as tape:
                values = self.value.model(obs, training=True)
                values = values[:, 0] if values.shape.rank == 2 else values  # [T]
                v_loss = tf.reduce_sum(value_loss(values, returns)) / segments
            self.value_pipeline(tape, v_loss)
            weights = returns - values  # V before this update
        if cfg.normalize_returns:
            weights = normalize(weights)
        with tf.GradientTape() as tape:
            per_example, entropy = self._policy_terms(obs, actions, weights)
            loss = tf.reduce_sum(per_example)
            if cfg.entropy_coef:
                loss -= cfg.entropy_coef * tf.reduce_sum(entropy)
            loss /= segments
        self.policy_pipeline(tape, loss)
        # the updated weights come back with the metrics: no separate reads to refresh the copy
        weights = [tf.identity(w) for w in self._snapshot_tensors()]
        return [loss, tf.reduce_mean(entropy), v_loss, *weights]

    @property
    def tracing_count(self) -> int:
        """How many times the update graph was traced (1 after any number of updates)."""
        return self._update.experimental_get_tracing_count()

    # -- reporting ---------------------------------------------------------------------------
    def report(self, env) -> str | None:
        """For a constant observation (a bandit): each arm's probability next to its mean."""
        if not self.discrete or not reinforce_config.is_constant_observation(
            self.observation_space
        ):
            return None
        probs = self.action_probabilities(self.observation_space.low)
        means = getattr(getattr(env, "unwrapped", env), "arm_means", None)
        lines = ["arm      mean  probability"]
        for arm, p in enumerate(probs):
            mean = f"{means[arm]:8.3f}" if means is not None else "       ?"
            lines.append(f"{arm + self._action_start:>3}  {mean}  {p:11.3f}")
        top = int(np.argmax(probs))
        line = f"most likely arm: {top + self._action_start} ({probs[top]:.1%})"
        if means is not None:
            means = np.asarray(means, dtype=np.float64)
            best = np.flatnonzero(means == means.max()) + self._action_start
            arms = ", ".join(str(b) for b in best)
            line += f"; best arm{'s' if len(best) > 1 else ''}: {arms} (mean {means.max():.3f})"
        lines.append(line)
        return "\n".join(lines)

    # -- persistence -------------------------------------------------------------------------
    def checkpoint_variables(self) -> dict[str, list]:
        groups = {"policy": list(self.policy_pipeline.variables)}
        if self.value is not None:
            groups["value"] = list(self.value.variables)
        return groups

    def state(self) -> dict:
        tree = super().state()
        tree["counters"].update(
            num_updates=self.num_updates,
            num_episodes=self.num_episodes,
            episodes_in_memory=self.episodes_in_memory,
        )
        tree["rngs"]["explore"] = self.rng
        tree["optimizer"]["policy"] = self.policy_pipeline.optimizer
        if self.value_pipeline is not None:
            tree["optimizer"]["value"] = self.value_pipeline.optimizer
        tree["memory"]["episodes"] = self.memory
        return tree

    def load_scalars(self, counters: dict, extra: dict) -> None:
        super().load_scalars(counters, extra)
        self.num_updates = int(counters["num_updates"])
        self.num_episodes = int(counters["num_episodes"])
        self.episodes_in_memory = int(counters["episodes_in_memory"])

    def after_restore(self) -> None:
        self._refresh_numpy()
