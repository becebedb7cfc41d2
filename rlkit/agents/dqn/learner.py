"""DQN's learner, faithful to DeepMind's DQN3.0 ``getQUpdate`` / ``qLearnMinibatch``.

The learner runs the loss it is given (:mod:`rlkit.learn.value_losses`), never a branch
on its name: DQN3.0's (the TD error ``delta`` clipped to ``+-clip_delta``, written at the
taken action and injected as the output gradient of the Q network,
``tape.gradient(q_values, variables, output_gradients=...)``, summed over the minibatch),
Huber's, the squared error, or one of the user's own. Each example is weighted by its
importance weight (ones for uniform replay) and bootstraps with its own discount
(``pcont``: n-step returns and episode ends are the replay's business).

Updates run in blocks of ``gradient_steps`` inside one compiled ``tf.function``
(optionally XLA); the target network is copied every ``target_update`` steps (or
follows the online one by Polyak averaging, ``target_tau``). What acting reads
(:meth:`DQNLearner.policy`) is a numpy copy of an MLP or of MinAtar's torso, or one compiled
call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import tensorflow as tf

from rlkit.agents.dqn.config import anneal_start
from rlkit.agents.dqn.heads import ScalarHead, ValueHead
from rlkit.agents.dqn.target_copy import target_copy_due
from rlkit.agents.parts import Learner
from rlkit.core.schedules import dqn3_linear
from rlkit.core.spaces import ObservationFormat
from rlkit.learn.compiled import (
    CompiledFunction,
    NestedCompiledFunction,
    block_range,
    fresh_tensor,
    pack,
    unpack,
)
from rlkit.learn.gradients import UpdatePipeline, transforms_from_config
from rlkit.learn.optimizers import make_optimizer
from rlkit.learn.targets import HardCopy, Polyak
from rlkit.learn.value_losses import ValueLoss
from rlkit.networks.custom import KerasQNetwork, custom_networks, refuse_builtin_network
from rlkit.networks.q_network import QNetwork
from rlkit.networks.user_torso import is_user_torso, user_torsos
from rlkit.replay.memory import Batch

if TYPE_CHECKING:
    from rlkit.agents.dqn.config import DQNConfig


class DQNLearner(Learner):
    """The Q-network, its target, the update pipeline and the compiled block of updates.

    Args:
        config: the agent's :class:`~rlkit.agents.dqn.config.DQNConfig`.
        obs_format: how observations reach the network (``[B, *shape]``, or a structure).
        observation_space: the space a network of one's own is built for.
        action_space: ``Discrete(A)``; the network outputs ``[B, A]`` Q-values.
        seed: the agent's seed (weight initialisation).
        q_network: a network of one's own given as a Python object (a Keras model or a
            builder); one named in ``config.q_network`` is found by itself.
        torso: the same for a torso of one's own under rlkit's head (``config.torso``).
        loss: a :class:`~rlkit.learn.value_losses.ValueLoss` of one's own (``config.loss``
            then says ``"<python object>"``); None: the one ``config.loss`` names.

    Attributes:
        q, q_target: the online and target networks (``.model``: the Keras model).
        pipeline: the online network's :class:`~rlkit.learn.gradients.UpdatePipeline`.
        loss: the :class:`~rlkit.learn.value_losses.ValueLoss` it runs.
        r_max: what rewards are divided by with ``rescale_r`` (DQN3.0's running maximum
            with ``r_max_running``).
        train_block: the compiled block of updates, taking :meth:`tensors` of a ``[K, B]``
            batch.
    """

    #: with hard target copies, the target's values for a whole block in one forward pass
    #: (False where each update draws its own inputs to the target, as IQN's fractions)
    shared_target_pass = True

    def __init__(
        self, config: DQNConfig, obs_format: ObservationFormat, observation_space, action_space,
        seed: int, q_network: Any = None, loss: ValueLoss | None = None,
        head: ValueHead | None = None, torso: Any = None,
    ) -> None:  # fmt: skip
        cfg = self.config = config
        self._torso = torso
        self.head = ScalarHead() if head is None else head
        self.loss = self.head.value_loss(cfg.loss, cfg.clip_delta, loss)
        self.obs_format = obs_format
        self.num_actions = int(action_space.n)
        self.num_outputs = self.num_actions * self.head.per_action
        self.num_updates = 0
        if obs_format.parts and not cfg.q_network:
            refuse_builtin_network(obs_format)
        self.q: QNetwork | KerasQNetwork
        self.q_target: QNetwork | KerasQNetwork
        self.q, self.q_target = self.build_networks(observation_space, action_space, seed,
                                                    q_network)  # fmt: skip
        self.pipeline = UpdatePipeline(
            self.q.variables,
            make_optimizer(cfg.optimizer, cfg.learning_rate, cfg.adam_epsilon),
            transforms_from_config(cfg.max_grad_norm),
        )
        self._target_stale = False
        self.r_max = float(cfg.r_max)  # the running maximum with r_max_running
        self.r_max_variable = tf.Variable(self.r_max, trainable=False, name="r_max")
        compiled = NestedCompiledFunction if obs_format.parts else CompiledFunction
        # float32 vector observations travel with the rest of a minibatch in one array
        self._one_array = (not obs_format.parts and len(obs_format.shape) == 1
                           and np.dtype(obs_format.dtype) == np.float32)  # fmt: skip
        self.train_block = compiled(self._train_block_graph, cfg.jit_compile)
        self.hard_copy = HardCopy(self.q.variables, self.q_target.variables)
        self.polyak = Polyak(self.q.variables, self.q_target.variables, cfg.target_tau)
        self._sync_target_graph = tf.function(self.hard_copy.update)
        self.hard_copy.update()
        self._mirror: list | None = None  # acting's numpy weights, as the last block returned them

    def build_networks(
        self, observation_space, action_space, seed: int, q_network: Any
    ) -> tuple[Any, Any]:
        """The online and target networks: the user's (``config.q_network``) or rlkit's."""
        cfg, obs_format = self.config, self.obs_format
        if cfg.q_network:
            spaces = observation_space, action_space
            return custom_networks(cfg.q_network, q_network, spaces, obs_format, seed,
                                   self.num_outputs)  # fmt: skip
        torsos: tuple[Any, Any] = (None, None)
        if is_user_torso(cfg.torso):
            spaces = observation_space, action_space
            torsos = user_torsos(cfg.torso, self._torso, spaces, obs_format, seed)
        online, target = (
            QNetwork(obs_format, self.num_outputs, cfg.hidden_sizes, cfg.dueling, seed,
                     name, cfg.init, cfg.torso, cfg.conv_padding, self.head.per_action,
                     cfg.noisy, cfg.noisy_sigma0, user)
            for name, user in zip(("q", "q_target"), torsos, strict=True)
        )  # fmt: skip
        return online, target

    # -- schedules and what acting reads -----------------------------------------------------
    def learning_rate(self, step: int) -> float:
        """Learning rate at environment step ``step`` (DQN3.0's lr_start -> lr_end
        annealing)."""
        cfg = self.config
        if cfg.learning_rate_end < 0:
            return cfg.learning_rate
        return dqn3_linear(
            step,
            cfg.learning_rate,
            cfg.learning_rate_end,
            cfg.lr_anneal_steps,
            anneal_start(cfg),
        )

    def policy(self) -> Callable[[Any], np.ndarray]:
        """``obs [*shape] -> Q [A]`` or ``[N, *shape] -> [N, A]`` of the online network: a
        numpy copy of an MLP (of the weights the last block returned: cheaper than reading
        the variables again; else taken now), or one compiled call reading the live weights."""
        if self._mirror:
            weights, self._mirror = self._mirror, None
            return self.head.acting(self.q.mirror([w.numpy() for w in weights]))
        return self.head.acting(self.q.policy())

    def weights_changed(self) -> None:
        self._mirror = None  # (the last block's weights are no longer the network's)

    def exploring_policy(self) -> Callable[[Any], np.ndarray] | None:
        """A noisy network's online values with fresh noise on every call (None without)."""
        if not self.config.noisy:
            return None
        assert isinstance(self.q, QNetwork)  # (noisy: rlkit's network; DQNConfig refuses a user's)
        return self.head.acting(self.q.exploring_policy())

    def diagnostics(self, step: int) -> dict[str, float]:
        return {"learning_rate": self.learning_rate(step)}

    def rewards_stored(self, rewards) -> None:
        """DQN3.0's ``r_max = max(r_max, reward)`` for each (clipped) reward stored."""
        if self.config.r_max_running:
            self.r_max = max(self.r_max, float(np.max(rewards)))

    def _r_max_in_graph(self):
        """What rewards are divided by: None without rescale_r; the configured constant; or
        the running maximum (a variable, so the compiled update reads its current value)."""
        cfg = self.config
        if not cfg.rescale_r:
            return None
        return self.r_max_variable if cfg.r_max_running else cfg.r_max

    # -- learning ----------------------------------------------------------------------------
    def learn(self, batch: Batch, step: int) -> tuple[dict[str, float], tf.Tensor]:
        """One block of ``gradient_steps`` updates on ``batch`` (``[K, B]``) at environment
        step ``step`` (the learning-rate schedule): ``{"loss",
        "q", "abs_delta"}`` averaged over the block, and each example's TD error ``[K, B]``
        (a tensor, read only by a sampler that wants it)."""
        if self.config.learning_rate_end >= 0:
            self.pipeline.optimizer.learning_rate.assign(self.learning_rate(step))
        if self.config.r_max_running:
            self.r_max_variable.assign(self.r_max)
        totals, td_errors, self._mirror = self.train_block(*self.tensors(batch))
        self.num_updates += int(batch.rewards.shape[0])
        self._target_stale = True
        loss, q, abs_delta = totals.numpy().tolist()  # one read of the three float32 means
        return {"loss": loss, "q": q, "abs_delta": abs_delta}, td_errors

    def after_blocks(self, before: int, now: int) -> None:
        """DQN3.0's hard target copy each time the step count passes a multiple of
        ``target_update`` (and the online network changed since the last copy)."""
        cfg = self.config
        due = target_copy_due(self._target_stale, before, now, cfg.target_update)
        if cfg.target_tau == 0 and due:
            self.sync_target()

    def sync_target(self) -> None:
        """Hard-copy the online weights into the target network."""
        self._sync_target_graph()
        self._target_stale = False

    def tensors(self, batch: Batch) -> tuple:
        """``batch`` as :attr:`train_block` takes it, in as few tensors as it can: the
        float32 ``[K, B, 4]`` of each example's action, reward, discount (``pcont``) and
        importance weight (:func:`~rlkit.learn.compiled.pack`), after the observations and
        next observations (float32 vectors: all in one ``[K, B, 2 * D + 4]``; else each an
        array, or a dict or tuple of them). :meth:`unpack` gives them back as ``(obs,
        actions, rewards, next_obs, pcont, weights)``."""
        fields = [batch.actions, batch.rewards, batch.discount_or(self.config.gamma),
                  batch.weights_or_ones()]  # fmt: skip
        lead = np.shape(batch.rewards)
        if self._one_array:
            return (pack([batch.obs, batch.next_obs, *fields], lead),)
        return (*(_tensors(o) for o in (batch.obs, batch.next_obs)), pack(fields, lead))

    def unpack(self, *inputs) -> tuple:
        """What :meth:`tensors` gave, as ``(obs, actions, rewards, next_obs, pcont, weights)``
        (inside the compiled block, or eagerly)."""
        if len(inputs) == 1:
            width = self.obs_format.shape[0]
            obs, next_obs, actions, *rest = unpack(inputs[0], [width, width, 0, 0, 0, 0])
        else:
            obs, next_obs = inputs[:2]
            actions, *rest = unpack(inputs[2], [0, 0, 0, 0])
        rewards, pcont, weights = rest
        return obs, tf.cast(actions, tf.int32), rewards, next_obs, pcont, weights

    def _train_block_graph(self, *inputs):
        """``K`` updates in one graph; inputs (:meth:`tensors`) have leading shape ``[K, B]``.
        Returns the block's mean loss, ``Q(s, a)`` and ``|delta|`` (``[3]``), the TD errors
        ``[K, B]`` and the weights of acting's numpy mirror after the block (empty without
        one: returning them is cheaper than reading the variables after the call)."""
        obs, actions, rewards, next_obs, pcont, weights = self.unpack(*inputs)
        num_updates_in_block = tf.shape(rewards)[0]
        totals = tf.zeros([3])
        td_errors = tf.TensorArray(tf.float32, size=num_updates_in_block)
        # With hard target copies the target network is fixed for the whole block, so its
        # values for all K minibatches come from one large (and efficient) forward pass.
        all_next_q_target = None
        if self.config.target_tau == 0 and self.shared_target_pass:
            if self.obs_format.parts:  # each part [K, B, ...] -> [K * B, ...]
                flat = tf.nest.map_structure(lambda t: tf.reshape(t, [-1, *t.shape[2:]]),
                                             next_obs)  # fmt: skip
            else:
                flat = tf.reshape(next_obs, [-1, *self.obs_format.shape])
            all_next_q_target = tf.reshape(
                self._target_values(flat), [num_updates_in_block, -1, self.num_outputs]
            )
        for k in block_range(rewards):
            step_metrics, td_error = self.update_step(
                tf.nest.map_structure(lambda t: t[k], obs),  # noqa: B023 (called right here)
                actions[k],
                rewards[k],
                tf.nest.map_structure(lambda t: t[k], next_obs),  # noqa: B023
                pcont[k],
                weights[k],
                None if all_next_q_target is None else all_next_q_target[k],
            )
            totals += tf.stack(step_metrics)
            td_errors = td_errors.write(k, td_error)
        totals /= tf.cast(num_updates_in_block, tf.float32)
        return totals, td_errors.stack(), [tf.identity(w) for w in self.q.mirror_weights()]

    def update_step(self, obs, actions, rewards, next_obs, pcont, weights, next_q_target=None):
        """One gradient update on one minibatch, for use inside a traced graph: the update
        block's body, and the compiled training loop's (``rlkit/run/compiled/dqn.py``).

        Tensors ``obs [B, ...]``, ``actions [B]`` int, ``rewards [B]``, ``next_obs [B, ...]``,
        ``pcont [B]`` (discount times not-terminal), ``weights [B]`` (importance weights;
        ones for uniform replay). Applies the processed gradients and, with ``target_tau``,
        the Polyak target step; returns the metrics (loss, mean Q, mean |delta|) and the TD
        errors ``[B]``. Hard target copies and the update cadence are the caller's.
        """
        grads, metrics, td_error = self._gradients(
            obs, actions, rewards, next_obs, pcont, weights, next_q_target
        )
        self.pipeline.apply(grads)
        if self.config.target_tau > 0:
            self.polyak.update()
        return metrics, td_error

    def _gradients(self, obs, actions, rewards, next_obs, pcont, weights, next_q_target=None):
        """Processed gradients for one minibatch ``[B]``, metrics (loss, mean Q, mean
        |delta|) and the TD errors ``[B]``.

        ``loss`` is the loss's per-example value weighted and reduced as configured; where
        the loss injects a gradient at the output (DQN3.0) it is reported, never
        differentiated. ``next_q_target`` (``[B, A]``) may be passed in when computed ahead.
        """
        cfg = self.config
        if next_q_target is None:
            next_q_target = self._target_values(next_obs)
        next_q_online = self._online_values(next_obs) if cfg.double_dqn else None
        r_max = self._r_max_in_graph()
        if r_max is not None:
            rewards = rewards / r_max
        reduce = tf.reduce_sum if cfg.reduction == "sum" else tf.reduce_mean
        at_state = self._target_at_state(obs)
        with tf.GradientTape() as tape:
            q_values = self.q.model(obs, training=True)
            out = self.loss(q_values, actions, rewards, pcont, next_q_target, next_q_online,
                            **at_state)  # fmt: skip
            loss = reduce(out.loss * weights)
        if out.output_gradient is None:
            grads = self.pipeline.gradients(tape, loss)
        else:
            output_gradient = out.output_gradient * weights[:, None]
            if cfg.reduction == "mean":
                output_gradient /= tf.cast(tf.shape(weights)[0], output_gradient.dtype)
            grads = self.pipeline.gradients(tape, q_values, output_gradients=output_gradient)
        metrics = (loss, tf.reduce_mean(out.value), tf.reduce_mean(tf.abs(out.td_error)))
        return grads, metrics, out.td_error

    def _target_values(self, obs):
        """The target network's outputs (a noisy one with noise of its own, as Rainbow)."""
        return (
            self.q_target.model(obs, training=True)
            if self.config.noisy
            else self.q_target.model(obs)
        )

    def _target_at_state(self, obs) -> dict:
        """``{"q_target": ...}``, the target network's outputs at the observations, for a
        loss that asks for them (``reads_target_at_state``: Munchausen's log-policy); else
        nothing."""
        if getattr(self.loss, "reads_target_at_state", False):
            return {"q_target": tf.stop_gradient(self._target_values(obs))}
        return {}

    def _online_values(self, obs):
        """The online network's outputs at next observations (Double DQN's choice)."""
        return self.q.model(obs, training=True) if self.config.noisy else self.q.model(obs)

    def td_errors(self, batch: Batch) -> np.ndarray:
        """The loss's TD errors for ``batch`` (``[B]``; DQN3.0's unclipped ``delta``),
        without updating anything."""
        cfg = self.config
        obs, actions, rewards, next_obs, pcont, _ = self.unpack(*self.tensors(batch))
        r_max = self._r_max_in_graph()
        if r_max is not None:
            rewards = rewards / r_max
        next_q_online = self.q.model(next_obs) if cfg.double_dqn else None
        out = self.loss(self.q.model(obs), actions, rewards, pcont, self.q_target.model(next_obs),
                        next_q_online, **self._target_at_state(obs))  # fmt: skip
        return out.td_error.numpy()

    def gradients(self, batch: Batch) -> list[tf.Tensor]:
        """The processed gradients one update would apply for ``batch`` (``[B]``), unapplied:
        one per online variable, in its shape."""
        grads, _, _ = self._gradients(*self.unpack(*self.tensors(batch)))
        return grads

    # -- persistence -------------------------------------------------------------------------
    def variables(self) -> dict[str, list]:
        groups = {"q": self.q.variables, "q_target": self.q_target.variables}
        if self.config.noisy:  # the noise generators: exact resume draws the same noise
            assert isinstance(self.q, QNetwork) and isinstance(self.q_target, QNetwork)
            groups["q_noise"] = self.q.noise_variables + self.q_target.noise_variables
        return groups

    def state(self) -> dict[str, dict[str, Any]]:
        return {"optimizer": {"q": self.pipeline.optimizer},
                "extra": {"target_stale": self._target_stale, "r_max": self.r_max}}  # fmt: skip

    def load_scalars(self, counters: dict[str, int], extra: dict[str, Any]) -> None:
        self._target_stale = bool(extra.get("target_stale", False))
        self.r_max = float(extra.get("r_max", self.config.r_max))


def _tensors(obs):
    """Observations as tensors: an array gathered for this block (never written again), or
    a dict or tuple of them."""
    if isinstance(obs, np.ndarray):
        return fresh_tensor(obs)
    return tf.nest.map_structure(tf.convert_to_tensor, obs)
