"""REINFORCE's learner: the policy (and its log std), the value baseline, their update
pipelines and the one compiled update.

The update minimises the pseudo-loss ``-sum_t log pi(a_t|s_t) * G_t`` (discounted
returns-to-go ``G_t``; optionally minus a learned ``V(s_t)`` and normalised), whose
gradient is the REINFORCE estimate of ``-grad J``. It goes through the shared pipeline:
``compute_gradients`` (the tape) ``-> process`` (clipping) ``-> apply_gradients`` (a Keras
optimizer); the value baseline has its own pipeline. The update is a ``tf.function`` whose
input signature has a ``None`` time axis, so episodes of any length share one trace; it
returns the updated weights with its metrics, from which :meth:`ReinforceLearner.policy`'s
numpy snapshot is rebuilt without further TensorFlow calls.

A ``Dict`` or ``Tuple`` observation takes a policy (and a baseline, when it is on) of one's
own: the update's input signature is then the observation's structure (one spec ``[None,
*part_shape]`` per part, in the part's dtype: still one trace), and acting and bootstrapping
go through one compiled call of the user's models.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import tensorflow as tf
from gymnasium import spaces

from rlkit.agents.parts import Learner
from rlkit.agents.reinforce.config import ReinforceConfig
from rlkit.core import seeding
from rlkit.core.spaces import ObservationFormat
from rlkit.core.structure import assemble, take_rows
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
from rlkit.networks.custom import network_source
from rlkit.networks.policy import (
    KerasPolicyNetwork,
    PolicyMLP,
    make_baseline,
    make_policy,
    refuse_builtin,
)
from rlkit.replay.memory import Batch


@dataclass(frozen=True)
class PolicySnapshot:
    """What acting reads, as of the last update: numpy copies (or one compiled call).

    Attributes:
        forward: encoded observations ``[obs_dim]`` / ``[N, obs_dim]`` -> the logits
            ``[(N,) n]`` (Discrete) or the Gaussian's mean ``[(N,) act_dim]`` (Box); a ``Dict``
            or ``Tuple`` observation: its structure (``[(N,) *part_shape]`` per part) in.
        std: the Gaussian's std ``[act_dim]`` (``exp(log_std)``); None for Discrete.
        value: ``[N, obs_dim]`` (or the structure) -> ``V`` as ``[N, 1]`` or ``[N]``; None
            without a baseline.
    """

    forward: Callable[[Any], np.ndarray]
    std: np.ndarray | None
    value: Callable[[Any], np.ndarray] | None

    def __call__(self, x: Any) -> np.ndarray:
        return self.forward(x)


class ReinforceLearner(Learner):
    """The policy gradient's networks and compiled update (see the module docstring).

    Args:
        config: the resolved :class:`ReinforceConfig`.
        observation_space, action_space: the agent's spaces (the action space picks a
            softmax policy or a Gaussian one).
        obs_format: how observations are encoded (``obs_format.size`` inputs, or a
            ``Dict``'s or ``Tuple``'s parts).
        seed: seeds the weight initialisation.
        networks: the user's own ``{"policy": ..., "baseline": ...}`` given as Python
            objects (None where not given).

    Attributes:
        policy_network: :class:`PolicyMLP` or the user's :class:`KerasPolicyNetwork`,
            ``[B, obs_dim] -> [B, out_dim]`` (or the structure ``[B, *part_shape]`` in).
        value_network: the baseline ``[B, obs_dim] -> [B, 1]`` (or ``[B]``); None without it.
        log_std: the Gaussian's state-independent log std ``[act_dim]``; None for Discrete.
        policy_pipeline, value_pipeline: their update pipelines (``value_pipeline`` None
            without the baseline).
    """

    def __init__(
        self, config: ReinforceConfig, observation_space, action_space,
        obs_format: ObservationFormat, seed: int, networks: dict[str, Any],
    ) -> None:  # fmt: skip
        cfg = self.config = config
        self.observation_space, self.action_space = observation_space, action_space
        self.obs_format = obs_format
        self.discrete = isinstance(action_space, spaces.Discrete)
        if self.discrete:
            out_dim = int(action_space.n)
            action_spec = tf.TensorSpec([None], tf.int32)
        else:
            out_dim = int(np.prod(action_space.shape))
            action_spec = tf.TensorSpec([None, out_dim], tf.float32)
        self.policy_network, self.value_network = self._make_networks(out_dim, seed, networks)
        policy_variables = list(self.policy_network.variables)
        self.log_std = None
        if not self.discrete:
            self.log_std = tf.Variable(
                np.full(out_dim, cfg.log_std_init, np.float32), name="policy_log_std"
            )
            policy_variables.append(self.log_std)
        clip = transforms_from_config(cfg.max_grad_norm)
        self.policy_pipeline = UpdatePipeline(
            policy_variables, make_optimizer(cfg.optimizer, cfg.learning_rate), clip
        )
        self.value_pipeline = None
        if self.value_network is not None:
            self.value_pipeline = UpdatePipeline(
                self.value_network.variables,
                make_optimizer(cfg.optimizer, cfg.value_learning_rate),
                clip,
            )
        self.num_updates = 0
        # one trace for every episode length; the concrete function is called directly
        # (cheaper than re-binding the arguments to the signature on every update)
        self._update = tf.function(
            self._update_graph,
            input_signature=[
                self._obs_spec(),
                action_spec,
                tf.TensorSpec([None], tf.float32),
                tf.TensorSpec([], tf.float32),
            ],
        )
        self._update_concrete = self._update.get_concrete_function()
        self.refresh()

    def _obs_spec(self) -> tf.TensorSpec | dict | tuple:
        """The update's observations ``[T, obs_dim]`` float32, or a ``Dict``'s or ``Tuple``'s
        structure of ``[T, *part_shape]`` specs in the parts' dtypes (``T`` any length)."""
        fmt = self.obs_format
        if not fmt.parts:
            return tf.TensorSpec([None, fmt.size], tf.float32)
        specs = [tf.TensorSpec([None, *p.shape], tf.as_dtype(p.dtype)) for p in fmt.parts]
        return assemble(fmt.kind, fmt.parts, specs)

    def _make_networks(self, out_dim: int, seed: int, networks: dict[str, Any]) -> tuple:
        """The policy ``[B, obs_dim] -> [B, out_dim]`` and the value baseline ``[B, 1]`` (or
        ``[B]``; None without the baseline): rlkit's :class:`PolicyMLP` or the user's (only
        the user's for a ``Dict`` or ``Tuple`` observation: UsageError else)."""
        cfg = self.config
        if self.obs_format.parts:  # rlkit's MLP takes flat observations only
            mine = {"policy": cfg.policy, "baseline": cfg.baseline_network or not cfg.baseline}
            missing = [key for key, given in mine.items() if not given]
            if missing:
                refuse_builtin(self.obs_format, missing)
        obs_dim = 0 if self.obs_format.parts else self.obs_format.size
        spaces_ = self.observation_space, self.action_space
        policy_seed, value_seed = (seeding.network_seed(seed, n) for n in ("policy", "value"))
        policy: PolicyMLP | KerasPolicyNetwork
        if cfg.policy:
            source = network_source("policy", cfg.policy, networks["policy"])
            policy = make_policy(source, spaces_, self.obs_format, out_dim, self.discrete,
                                 policy_seed)  # fmt: skip
        else:
            policy = PolicyMLP(obs_dim, out_dim, cfg.hidden_sizes, policy_seed, "policy")
        if not cfg.baseline:
            return policy, None
        if cfg.baseline_network:
            source = network_source("baseline", cfg.baseline_network, networks["baseline"])
            return policy, make_baseline(source, spaces_, self.obs_format, value_seed)
        return policy, PolicyMLP(obs_dim, 1, cfg.value_hidden_sizes, value_seed, "value")

    # -- the snapshot acting reads -----------------------------------------------------------
    def _snapshot_tensors(self) -> list:
        """The weights the numpy copies need: policy layers, [log_std], [value layers]."""
        tensors = list(self.policy_network.layer_weights())
        if self.log_std is not None:
            tensors.append(self.log_std)
        if self.value_network is not None:
            tensors.extend(self.value_network.layer_weights())
        return tensors

    def refresh(self, arrays: Sequence[np.ndarray] | None = None) -> None:
        """Rebuild :meth:`policy`'s snapshot from ``arrays`` (those of
        :meth:`_snapshot_tensors`, as an update returns them), else from the variables
        (after weights were loaded or assigned)."""
        if arrays is None:
            arrays = [np.asarray(v.numpy()) for v in self._snapshot_tensors()]
        n = len(self.policy_network.layer_weights())
        forward = self.policy_network.to_numpy(arrays[:n])
        std = None
        if self.log_std is not None:
            std = np.exp(arrays[n])
            n += 1
        value = None
        if self.value_network is not None:
            value = self.value_network.to_numpy(arrays[n:])
        self._snapshot = PolicySnapshot(forward, std, value)

    def policy(self) -> PolicySnapshot:
        """The numpy snapshot of the policy (and of the baseline) as of the last update."""
        return self._snapshot

    # -- learning ----------------------------------------------------------------------------
    def returns(self, batch: Batch) -> tuple[np.ndarray, int]:
        """Returns-to-go ``[T]`` of a batch of whole or cut episodes, and how many segments.

        An episode that did not terminate (truncated, or cut because the memory filled)
        bootstraps from the numpy copy of ``V(s_T)`` with the baseline on, and is cut
        (bootstrap 0) without it.
        """
        ends = batch.terminated | batch.truncated
        open_end = ~batch.terminated & (ends | (np.arange(len(ends)) == len(ends) - 1))
        bootstrap = np.zeros(len(ends), np.float32)
        value = self._snapshot.value
        if value is not None and open_end.any():
            if self.obs_format.parts:  # those rows of each part
                next_obs = batch.next_obs
                assert isinstance(next_obs, (dict, tuple))  # (the structure: StructuredReplay)
                values = value(take_rows(next_obs, np.flatnonzero(open_end).tolist()))
            else:
                values = value(batch.next_obs[open_end])
            bootstrap[open_end] = values[:, 0] if values.ndim == 2 else values
        segments = int(ends.sum()) + int(not ends[-1])
        return returns_to_go(batch.rewards, self.config.gamma, ends, bootstrap), segments

    def learn(self, batch: Batch, step: int = 0) -> tuple[dict[str, float], None]:
        """One update on ``batch``: ``T`` transitions of whole or cut episodes, oldest first
        (``ReplayMemory.ordered()``). Returns ``{"loss", "entropy"}`` (plus ``"value_loss"``
        with the baseline) and no TD errors; :meth:`policy` is the updated snapshot
        afterwards."""
        returns, segments = self.returns(batch)
        if self.obs_format.parts:  # each part in its own dtype
            obs = tf.nest.map_structure(tf.convert_to_tensor, batch.obs)
        else:
            obs = tf.convert_to_tensor(batch.obs)
        loss, entropy, v_loss, *weights = self._update_concrete(
            obs,
            tf.convert_to_tensor(batch.actions, tf.int32 if self.discrete else tf.float32),
            tf.convert_to_tensor(returns),
            tf.constant(segments, tf.float32),
        )
        self.num_updates += 1
        self.refresh([w.numpy() for w in weights])
        metrics = {"loss": float(loss), "entropy": float(entropy)}
        if self.value_network is not None:
            metrics["value_loss"] = float(v_loss)
        return metrics, None

    def _policy_terms(self, obs, actions, weights):
        out = self.policy_network.model(obs, training=True)
        if self.discrete:
            return softmax_log_loss(out, actions, weights), softmax_entropy(out)
        per_example = gaussian_log_loss(out, self.log_std, actions, weights)
        return per_example, gaussian_entropy(self.log_std, tf.shape(out)[0])

    def _update_graph(self, obs, actions, returns, segments):
        """One update on ``T`` transitions: obs ``[T, obs_dim]`` (or a ``Dict``'s or
        ``Tuple``'s structure of ``[T, *part_shape]``), actions ``[T]`` or ``[T, D]``, returns
        ``[T]``; losses are summed over time and divided by ``segments`` (episodes).
        """
        cfg = self.config
        weights = returns
        v_loss = tf.constant(0.0)
        if self.value_network is not None:
            assert self.value_pipeline is not None  # (made with the value network)
            with tf.GradientTape() as tape:
                values = self.value_network.model(obs, training=True)
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

    # -- persistence -------------------------------------------------------------------------
    def variables(self) -> dict[str, list]:
        """``{"policy": [policy variables, log_std], "value": [...]}`` (``value`` with the
        baseline only)."""
        groups = {"policy": list(self.policy_pipeline.variables)}
        if self.value_network is not None:
            groups["value"] = list(self.value_network.variables)
        return groups

    def state(self) -> dict[str, dict[str, Any]]:
        """The optimizers (``policy``, and ``value`` with the baseline)."""
        optimizers = {"policy": self.policy_pipeline.optimizer}
        if self.value_pipeline is not None:
            optimizers["value"] = self.value_pipeline.optimizer
        return {"optimizer": optimizers}
