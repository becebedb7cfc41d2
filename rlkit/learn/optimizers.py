"""Keras optimizers by name, including DQN3.0's centred RMSProp, and PyTorch's RMSprop and
Adam (epsilon where PyTorch adds it) for the agents that follow SB3 and CleanRL."""

from __future__ import annotations

OPTIMIZERS = (
    "adam", "rmsprop_centered", "rmsprop_centered_tf1", "rmsprop_centered_torch", "rmsprop", "sgd"
)  # fmt: skip


def make_optimizer(name: str, learning_rate: float, adam_epsilon: float = 1e-7):
    """A Keras optimizer.

    ``adam_epsilon`` is Adam's epsilon (Keras' default 1e-7; PyTorch's, hence SB3's, 1e-8).

    ``rmsprop_centered`` is DQN3.0's update: ``g = .95 g + .05 dw``,
    ``g2 = .95 g2 + .05 dw^2``, ``w -= lr * dw / sqrt(g2 - g^2 + 0.01)``, i.e. Keras
    ``RMSprop(rho=0.95, epsilon=0.01, centered=True)``. ``rmsprop_centered_torch`` is
    PyTorch's ``RMSprop(alpha=0.95, eps=0.01, centered=True)`` (the MinAtar paper's), whose
    epsilon is added *outside* the square root: ``w -= lr * dw / (sqrt(g2 - g^2) + 0.01)``;
    for small gradients its steps are up to 10x larger than DQN3.0's.

    ``rmsprop_centered_tf1`` is Dopamine's DQN optimizer, TensorFlow 1's
    ``RMSPropOptimizer(decay=0.95, momentum=0, epsilon=1e-5, centered=True)``: the same
    rule as Keras' centred RMSprop with epsilon 1e-5 inside the root, but its mean square
    starts at **1**, not 0 (Keras, PyTorch and DQN3.0 start at 0). With Dopamine's small
    batch-mean gradients (mean squares of 1e-8 to 1e-6) that 1 keeps the first few hundred
    updates tiny (docs/atari.md). It is meant for a batch-mean loss (``reduction="mean"``):
    on a summed one the 1 is B^2 times smaller relative to the gradient.
    """
    import keras

    if name == "adam":
        return keras.optimizers.Adam(learning_rate, epsilon=adam_epsilon)
    if name == "rmsprop_centered":
        return keras.optimizers.RMSprop(learning_rate, rho=0.95, epsilon=0.01, centered=True)
    if name == "rmsprop_centered_tf1":
        return tf1_centered_rmsprop(learning_rate)
    if name == "rmsprop_centered_torch":
        return torch_centered_rmsprop(learning_rate)
    if name == "rmsprop":
        return keras.optimizers.RMSprop(learning_rate)
    if name == "sgd":
        return keras.optimizers.SGD(learning_rate)
    raise ValueError(f"unknown optimizer {name!r}; choose one of {', '.join(OPTIMIZERS)}")


def torch_centered_rmsprop(learning_rate: float, rho: float = 0.95, epsilon: float = 0.01):
    """PyTorch's centred RMSprop as a Keras optimizer (see :func:`make_optimizer`)."""
    return torch_rmsprop(learning_rate, rho, epsilon, centered=True)


def torch_rmsprop(learning_rate: float, rho: float = 0.99, epsilon: float = 1e-5,
                  centered: bool = False):  # fmt: skip
    """PyTorch's ``RMSprop(alpha=rho, eps=epsilon, centered=centered)`` (no momentum, no weight
    decay) as a Keras optimizer. Per variable, with the gradient ``g`` and ``v``, ``m``
    starting at 0:

    ``v = rho v + (1 - rho) g^2``; centred also ``m = rho m + (1 - rho) g``, ``v' = v - m^2``;
    ``w -= lr g / (sqrt(v or v') + epsilon)``: epsilon *outside* the root.

    Keras' own ``RMSprop`` adds its epsilon *inside* the root, ``lr g / sqrt(v + epsilon)``:
    no choice of Keras' epsilon matches PyTorch's for every ``v`` (SB3's A2C: alpha 0.99,
    eps 1e-5: at ``v = 1e-8`` Keras' step is 28.8 times smaller than PyTorch's).
    Defaults: SB3's A2C (``use_rms_prop=True, rms_prop_eps=1e-5``)."""
    import keras
    from keras import ops

    class TorchRMSprop(keras.optimizers.Optimizer):
        def __init__(self, learning_rate, rho, epsilon, centered, name):
            super().__init__(learning_rate=learning_rate, name=name)
            self.rho, self.epsilon, self.centered = rho, epsilon, centered

        def build(self, variables):
            if self.built:
                return
            super().build(variables)
            self.square_avg = [self.add_variable_from_reference(v, "square_avg")
                               for v in variables]  # fmt: skip
            self.grad_avg = ([self.add_variable_from_reference(v, "grad_avg") for v in variables]
                             if self.centered else [])  # fmt: skip

        def update_step(self, gradient, variable, learning_rate):
            lr = ops.cast(learning_rate, variable.dtype)
            gradient = ops.cast(gradient, variable.dtype)
            i = self._get_variable_index(variable)
            square_avg = self.square_avg[i]
            self.assign(square_avg, self.rho * square_avg + (1 - self.rho) * ops.square(gradient))
            if self.centered:
                grad_avg = self.grad_avg[i]
                self.assign(grad_avg, self.rho * grad_avg + (1 - self.rho) * gradient)
                variance = ops.maximum(square_avg - ops.square(grad_avg), 0.0)
            else:
                variance = square_avg
            self.assign_sub(variable, lr * gradient / (ops.sqrt(variance) + self.epsilon))

        def get_config(self):
            return {**super().get_config(), "rho": self.rho, "epsilon": self.epsilon,
                    "centered": self.centered}  # fmt: skip

    name = "torch_centered_rmsprop" if centered else "torch_rmsprop"
    return TorchRMSprop(learning_rate, rho, epsilon, centered, name)


def torch_adam(learning_rate: float, beta_1: float = 0.9, beta_2: float = 0.999,
               epsilon: float = 1e-8):  # fmt: skip
    """PyTorch's ``Adam(betas=(beta_1, beta_2), eps=epsilon)`` (no weight decay, no amsgrad)
    as a Keras optimizer. Per variable, with the gradient ``g``, ``m`` and ``v`` starting at 0
    and ``t`` the update's number (1, 2, ...)::

        m = m + (1 - beta_1) (g - m);  v = beta_2 v + (1 - beta_2) g^2
        w -= lr / (1 - beta_1^t) * m / (sqrt(v) / sqrt(1 - beta_2^t) + epsilon)

    epsilon added to the *bias-corrected* root. Keras' ``Adam`` adds it to the uncorrected
    ``sqrt(v)``: its epsilon ``e`` acts as PyTorch's ``e / sqrt(1 - beta_2^t)``, 31.6 times
    larger at the first update (beta_2 0.999) and still 7.9 times at the 16th. Where the
    gradients sit near epsilon (PPO's actor after the global-norm clip: median 6e-7 on
    CartPole, labs/ppo_cleanrl_update.py) Keras' steps are then ~0.6 times SB3's and
    CleanRL's."""
    import keras
    from keras import ops

    class TorchAdam(keras.optimizers.Optimizer):
        def __init__(self, learning_rate, beta_1, beta_2, epsilon, name):
            super().__init__(learning_rate=learning_rate, name=name)
            self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

        def build(self, variables):
            if self.built:
                return
            super().build(variables)
            self.exp_avg = [self.add_variable_from_reference(v, "exp_avg") for v in variables]
            self.exp_avg_sq = [self.add_variable_from_reference(v, "exp_avg_sq")
                               for v in variables]  # fmt: skip

        def update_step(self, gradient, variable, learning_rate):
            lr = ops.cast(learning_rate, variable.dtype)
            gradient = ops.cast(gradient, variable.dtype)
            step = ops.cast(self.iterations + 1, variable.dtype)
            bias_1 = 1 - ops.power(ops.cast(self.beta_1, variable.dtype), step)
            bias_2 = 1 - ops.power(ops.cast(self.beta_2, variable.dtype), step)
            i = self._get_variable_index(variable)
            m, v = self.exp_avg[i], self.exp_avg_sq[i]
            self.assign(m, m + (1 - self.beta_1) * (gradient - m))
            self.assign(v, self.beta_2 * v + (1 - self.beta_2) * ops.square(gradient))
            denominator = ops.sqrt(v) / ops.sqrt(bias_2) + self.epsilon
            self.assign_sub(variable, (lr / bias_1) * m / denominator)

        def get_config(self):
            return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2,
                    "epsilon": self.epsilon}  # fmt: skip

    return TorchAdam(learning_rate, beta_1, beta_2, epsilon, "torch_adam")


def tf1_centered_rmsprop(learning_rate: float, rho: float = 0.95, epsilon: float = 1e-5):
    """TensorFlow 1's centred ``RMSPropOptimizer`` (no momentum) as a Keras optimizer: Keras'
    centred RMSprop whose mean square starts at 1 (see :func:`make_optimizer`)."""
    import keras

    class TF1CenteredRMSprop(keras.optimizers.RMSprop):
        def build(self, variables):
            if self.built:
                return
            super().build(variables)
            for velocity in self._velocities:  # tf.compat.v1: ms = ones, mg = zeros
                velocity.assign(keras.ops.ones_like(velocity))

    return TF1CenteredRMSprop(
        learning_rate, rho=rho, epsilon=epsilon, centered=True, name="tf1_centered_rmsprop"
    )
