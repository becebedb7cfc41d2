"""The loss seam of value learning: a loss is a function of per-example tensors.

A value learner (DQN's, and the distributional ones built on the same seam) runs the
network, then hands the loss what TRFL's ops take (``qlearning(q_tm1, a_tm1, r_t,
pcont_t, q_t)``) and gets back what they return: a per-example ``loss`` and the TD error
(the replay's priority). ``pcont`` is the per-example discount of the bootstrap,
``gamma ** k * (1 - terminated)`` for a return over ``k`` steps, so n-step returns and
episode ends need no special case. Nothing here reduces over the batch, weights examples
or touches an optimizer: the learner multiplies by the importance weights, reduces
(``sum`` or ``mean``) and differentiates.

A loss may instead give the gradient to inject at the network's output
(``output_gradient``, DQN3.0's clipped ``delta`` at ``Q(s, a)``): the learner then
back-propagates it from the output (``tape.gradient(q_values, variables,
output_gradients=...)``) and reports ``loss`` without differentiating it.

Any callable with the signature of :class:`ValueLoss` plugs in, e.g. from Python
``DQN.from_env(env, loss=my_loss)`` (docs/api.md has a worked example). The distributional
learners are such losses on a wider output (``N`` values per action): :class:`CategoricalLoss`
(C51), :class:`QuantileLoss` (QR-DQN).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import tensorflow as tf

from rlkit.learn import distributional, losses, munchausen


@dataclass(frozen=True)
class LossOutput:
    """What a value loss returns, every tensor per example (leading shape ``[B]``).

    loss: ``[B]``, the loss of each example (not weighted, not reduced).
    td_error: ``[B]``, the signed TD error; ``|td_error|`` is a prioritized replay's priority.
    value: ``[B]``, the online value of the taken action (reported as the metric ``q``).
    output_gradient: ``[B, A]`` or None; when given, the gradient to inject at the network
        output instead of differentiating ``loss`` (per example; the learner weights and
        reduces it as it does ``loss``).
    """

    loss: tf.Tensor
    td_error: tf.Tensor
    value: tf.Tensor
    output_gradient: tf.Tensor | None = None


class ValueLoss(Protocol):
    """``loss(q, actions, rewards, pcont, next_q_target, next_q_online) -> LossOutput``.

    Args:
        q: the online network's output for the observations, ``[B, A]`` (differentiable).
        actions: the actions taken, int32 ``[B]`` in ``[0, A)``.
        rewards: ``[B]``, the (n-step) return before the bootstrap, already rescaled.
        pcont: ``[B]``, the bootstrap's discount (``gamma ** k``; 0 where the episode
            terminated).
        next_q_target: the target network's output for the next observations, ``[B, A]``.
        next_q_online: the online network's output for the next observations, ``[B, A]``,
            or None when the learner does not use Double DQN.
    """

    def __call__(
        self,
        q: tf.Tensor,
        actions: tf.Tensor,
        rewards: tf.Tensor,
        pcont: tf.Tensor,
        next_q_target: tf.Tensor,
        next_q_online: tf.Tensor | None,
    ) -> LossOutput: ...


def q_learning(q, actions, rewards, pcont, next_q_target, next_q_online):
    """``(Q(s, a), delta)``: the taken action's value and the Q-learning TD error
    (Double DQN's bootstrap when ``next_q_online`` is given)."""
    q_taken = tf.gather(q, actions, axis=1, batch_dims=1)
    delta = losses.q_learning_delta(q_taken, rewards, next_q_target, pcont, next_q_online)
    return q_taken, delta


@dataclass(frozen=True)
class SquaredLoss:
    """``0.5 delta^2`` per example (``loss = "mse"``, or any loss with ``clip_delta = 0``)."""

    def __call__(self, q, actions, rewards, pcont, next_q_target, next_q_online) -> LossOutput:
        q_taken, delta = q_learning(q, actions, rewards, pcont, next_q_target, next_q_online)
        return LossOutput(losses.squared(delta), delta, q_taken)


@dataclass(frozen=True)
class HuberLoss:
    """Huber's loss of ``delta`` with threshold ``clip_delta`` (``loss = "huber"``): its
    gradient is DQN3.0's clipped delta."""

    clip_delta: float

    def __call__(self, q, actions, rewards, pcont, next_q_target, next_q_online) -> LossOutput:
        q_taken, delta = q_learning(q, actions, rewards, pcont, next_q_target, next_q_online)
        return LossOutput(losses.huber(delta, self.clip_delta), delta, q_taken)


@dataclass(frozen=True)
class DQN3Loss:
    """DQN3.0's update (``loss = "dqn3"``): ``delta`` clipped to ``+-clip_delta`` (0: not
    clipped) and injected at ``Q(s, a)``; the reported loss is the Huber (or squared) loss
    whose gradient that is."""

    clip_delta: float

    def __call__(self, q, actions, rewards, pcont, next_q_target, next_q_online) -> LossOutput:
        q_taken, delta = q_learning(q, actions, rewards, pcont, next_q_target, next_q_online)
        per_example = (
            losses.huber(delta, self.clip_delta) if self.clip_delta else losses.squared(delta)
        )
        gradient = losses.dqn3_output_gradient(delta, actions, q.shape[-1], self.clip_delta)
        return LossOutput(per_example, delta, q_taken, gradient)


def loss_from_config(name: str, clip_delta: float) -> ValueLoss:
    """The loss a config names: ``dqn3`` | ``huber`` | ``mse`` (``huber`` without a clip is
    the squared loss, as its limit)."""
    if name == "dqn3":
        return DQN3Loss(clip_delta)
    if name == "huber" and clip_delta:
        return HuberLoss(clip_delta)
    if name in ("huber", "mse"):
        return SquaredLoss()
    raise ValueError(f"unknown loss {name!r}: dqn3, huber or mse, or a ValueLoss of your own")


@dataclass(frozen=True)
class MunchausenLoss:
    """M-DQN (Vieillard et al. 2020) on the seam: the regression of ``Q(s, a)`` on
    :func:`~rlkit.learn.munchausen.munchausen_target` (Huber's with ``clip_delta``, or the
    squared error with ``clip_delta = 0``). It reads the target network's values at the
    state too (``q_target``, ``[B, A]``: ``reads_target_at_state``); ``next_q_online`` is
    unused (no argmax in its target)."""

    tau: float = 0.03
    alpha: float = 0.9
    clip_value_min: float = -1.0
    clip_delta: float = 1.0
    reads_target_at_state = True

    def __call__(self, q, actions, rewards, pcont, next_q_target, next_q_online,
                 q_target=None) -> LossOutput:  # fmt: skip
        if q_target is None:
            raise ValueError("MunchausenLoss needs q_target, the target net's values at s")
        target = munchausen.munchausen_target(
            q_target, actions, rewards, pcont, next_q_target, self.tau, self.alpha,
            self.clip_value_min,
        )  # fmt: skip
        q_taken = tf.gather(q, actions, axis=1, batch_dims=1)
        delta = target - q_taken
        per_example = (
            losses.huber(delta, self.clip_delta) if self.clip_delta else losses.squared(delta)
        )
        return LossOutput(per_example, delta, q_taken)


# -- distributional losses: the network gives N values per action, ``q`` is ``[B, A * N]`` ---
@dataclass(frozen=True)
class CategoricalLoss:
    """C51 (Bellemare et al. 2017) on the seam: ``q`` holds each action's logits over the
    ``atoms`` (``[B, A * N]``, action-major); the loss is the cross-entropy to the projected
    target distribution at the bootstrap action (the target net's greedy one, or the online
    net's with Double DQN), per example; ``td_error`` is that cross-entropy (the priority
    Dopamine's Rainbow uses); ``value`` the taken action's expected value."""

    atoms: tuple[float, ...]

    def __call__(self, q, actions, rewards, pcont, next_q_target, next_q_online) -> LossOutput:
        atoms, n = tf.constant(self.atoms, q.dtype), len(self.atoms)
        logits, target_logits = per_action(q, n), per_action(next_q_target, n)
        selector = target_logits if next_q_online is None else per_action(next_q_online, n)
        next_actions = distributional.categorical_greedy_actions(selector, atoms)
        out = distributional.categorical_q_learning(logits, actions, rewards, pcont,
                                                    target_logits, atoms, next_actions)  # fmt: skip
        means = tf.reduce_sum(tf.nn.softmax(logits, axis=-1) * atoms, axis=-1)
        return LossOutput(out.loss, out.td_error, tf.gather(means, actions, axis=1, batch_dims=1))


@dataclass(frozen=True)
class QuantileLoss:
    """QR-DQN (Dabney et al. 2018a) on the seam: ``q`` holds each action's ``num_quantiles``
    values at the midpoints ``(2i + 1) / 2N`` (``[B, A * N]``, action-major); the quantile
    Huber loss with threshold ``kappa`` against the bootstrap action's target quantiles;
    ``td_error`` is that loss; ``value`` the taken action's mean over quantiles."""

    num_quantiles: int
    kappa: float = 1.0

    def __call__(self, q, actions, rewards, pcont, next_q_target, next_q_online) -> LossOutput:
        n = self.num_quantiles
        quantiles, target = per_action(q, n), per_action(next_q_target, n)
        selector = target if next_q_online is None else per_action(next_q_online, n)
        next_actions = distributional.quantile_greedy_actions(selector)
        out = distributional.quantile_q_learning(quantiles, actions, rewards, pcont, target,
                                                 next_actions, self.kappa)  # fmt: skip
        means = tf.reduce_mean(quantiles, axis=-1)
        return LossOutput(out.loss, out.td_error, tf.gather(means, actions, axis=1, batch_dims=1))


def per_action(outputs: tf.Tensor, n: int) -> tf.Tensor:
    """``[B, A * n] -> [B, A, n]`` (action-major: action ``a``'s values are ``a*n .. a*n+n-1``)."""
    return tf.reshape(outputs, [tf.shape(outputs)[0], -1, n])
