"""The update pipeline every agent uses: compute_gradients -> process -> apply_gradients.

``process`` is a chain of small gradient transforms (optax's ``chain`` is the
model): each maps a list of gradients to a list of gradients of the same
structure, runs inside ``tf.function``, and keeps any state in ``tf.Variable``.
``None`` gradients (variables the target does not depend on) pass through.

``scale_gradient`` is different: a tensor op, not a transform. It leaves the
forward value unchanged and multiplies the gradient flowing *through that
tensor* by ``scale`` (MuZero). Clipping bounds the size of the final gradient of
each variable; scaling multiplies one path's contribution before the paths are
summed. Neither can stand in for the other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import tensorflow as tf

Gradients = list  # list[tf.Tensor | None], one per variable
GradientTransform = Callable[[Gradients], Gradients]


def scale_gradient(tensor: tf.Tensor, scale: float | tf.Tensor) -> tf.Tensor:
    """Identity forward; the gradient flowing back through ``tensor`` is multiplied by ``scale``.

    ``tensor * scale + stop_gradient(tensor) * (1 - scale)`` (MuZero pseudocode,
    the same as Sonnet's ``scale_gradient``).
    """
    return tensor * scale + tf.stop_gradient(tensor) * (1 - scale)


def _map(fn: Callable[[tf.Tensor], tf.Tensor], grads: Gradients) -> Gradients:
    return [None if g is None else fn(g) for g in grads]


def clip_by_global_norm(max_norm: float) -> GradientTransform:
    """Rescale all gradients together so their joint L2 norm is at most ``max_norm``.

    ``g_i * max_norm / max(global_norm, max_norm)``, ``global_norm = sqrt(sum_i ||g_i||^2)``.
    """

    def transform(grads: Gradients) -> Gradients:
        present = [g for g in grads if g is not None]
        clipped, _ = tf.clip_by_global_norm(present, max_norm)
        it = iter(clipped)
        return [None if g is None else next(it) for g in grads]

    return transform


def clip_by_norm(max_norm: float) -> GradientTransform:
    """Rescale each gradient tensor on its own to L2 norm at most ``max_norm``."""
    return lambda grads: _map(lambda g: tf.clip_by_norm(g, max_norm), grads)


def clip_by_value(limit: float, upper: float | None = None) -> GradientTransform:
    """Clip every element to ``[-limit, limit]`` (or ``[limit, upper]`` when both are given)."""
    low, high = (-abs(limit), abs(limit)) if upper is None else (limit, upper)
    return lambda grads: _map(lambda g: tf.clip_by_value(g, low, high), grads)


def scale(factor: float) -> GradientTransform:
    """Multiply every gradient by ``factor``."""
    return lambda grads: _map(lambda g: g * factor, grads)


def chain(*transforms: GradientTransform) -> GradientTransform:
    """Compose transforms, applied left to right: ``chain(f, g)(grads) == g(f(grads))``."""

    def transform(grads: Gradients) -> Gradients:
        for t in transforms:
            grads = list(t(grads))
        return grads

    return transform


def identity(grads: Gradients) -> Gradients:
    """The transform that changes nothing."""
    return list(grads)


def compute_gradients(
    tape: tf.GradientTape,
    target: tf.Tensor,
    variables: Sequence[tf.Variable],
    output_gradients: tf.Tensor | None = None,
) -> Gradients:
    """Gradients of ``target`` w.r.t. ``variables``.

    With a scalar loss as ``target`` this is the usual backward pass. With
    ``output_gradients`` (same shape as ``target``) the backward pass *starts at
    the target tensor* with that gradient, e.g. DQN3.0's clipped TD error
    injected at the Q-network output.
    """
    return tape.gradient(target, list(variables), output_gradients=output_gradients)


def apply_gradients(optimizer, grads: Gradients, variables: Sequence[tf.Variable]) -> None:
    """Apply processed gradients with a Keras optimizer (``None`` entries are skipped)."""
    pairs = [(g, v) for g, v in zip(grads, variables, strict=True) if g is not None]
    optimizer.apply_gradients(pairs)


class UpdatePipeline:
    """``compute_gradients -> process -> apply_gradients`` for one set of variables.

    Args:
        variables: the variables this pipeline trains (e.g. ``model.trainable_variables``).
        optimizer: a Keras optimizer; it is built for ``variables`` at once so that
            calling the pipeline inside ``tf.function`` creates no variables.
        process: a gradient transform (see :func:`chain`); identity by default.
    """

    def __init__(self, variables, optimizer, process: GradientTransform = identity) -> None:
        self.variables = list(variables)
        self.optimizer = optimizer
        self._process = process
        self._used = False
        optimizer.build(self.variables)

    @property
    def process(self) -> GradientTransform:
        """The gradient transform. An agent's pipeline may be given another one after the
        agent is built and before its first update (e.g. ``agent.pipeline.process =
        chain(clip_by_value(1.0), scale(0.5))``); later it is compiled into the agent's
        update and a change would be silently ignored, so it is refused."""
        return self._process

    @process.setter
    def process(self, transform: GradientTransform) -> None:
        if self._used:
            raise RuntimeError(
                "this pipeline has already computed gradients (its process is compiled into "
                "the update): set process before the first update, e.g. right after building "
                "the agent"
            )
        if not callable(transform):
            raise TypeError(f"process must be a callable on a list of gradients, got {transform!r}")
        self._process = transform

    def gradients(self, tape, target, output_gradients=None) -> Gradients:
        """Compute and process the gradients without applying them."""
        self._used = True
        grads = compute_gradients(tape, target, self.variables, output_gradients)
        return self._process(grads)

    def apply(self, grads: Gradients) -> None:
        """Apply already processed gradients (one per variable, ``None`` skipped)."""
        apply_gradients(self.optimizer, grads, self.variables)

    def __call__(self, tape, target, output_gradients=None) -> Gradients:
        """Compute, process and apply; returns the processed gradients."""
        grads = self.gradients(tape, target, output_gradients)
        self.apply(grads)
        return grads


def transforms_from_config(
    max_grad_norm: float = 0.0, grad_clip_value: float = 0.0, grad_scale: float = 1.0
) -> GradientTransform:
    """The chain most agents expose as config keys (0 disables a clip)."""
    steps: list[GradientTransform] = []
    if grad_scale != 1.0:
        steps.append(scale(grad_scale))
    if grad_clip_value > 0:
        steps.append(clip_by_value(grad_clip_value))
    if max_grad_norm > 0:
        steps.append(clip_by_global_norm(max_grad_norm))
    return chain(*steps) if steps else identity
