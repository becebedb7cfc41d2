"""Keras optimizers by name, including DQN3.0's centred RMSProp."""

from __future__ import annotations

OPTIMIZERS = ("adam", "rmsprop_centered", "rmsprop", "sgd")


def make_optimizer(name: str, learning_rate: float, adam_epsilon: float = 1e-7):
    """A Keras optimizer.

    ``adam_epsilon`` is Adam's epsilon (Keras' default 1e-7; PyTorch's, hence SB3's, 1e-8).

    ``rmsprop_centered`` is DQN3.0's update: ``g = .95 g + .05 dw``,
    ``g2 = .95 g2 + .05 dw^2``, ``w -= lr * dw / sqrt(g2 - g^2 + 0.01)``, i.e. Keras
    ``RMSprop(rho=0.95, epsilon=0.01, centered=True)``.
    """
    import keras

    if name == "adam":
        return keras.optimizers.Adam(learning_rate, epsilon=adam_epsilon)
    if name == "rmsprop_centered":
        return keras.optimizers.RMSprop(learning_rate, rho=0.95, epsilon=0.01, centered=True)
    if name == "rmsprop":
        return keras.optimizers.RMSprop(learning_rate)
    if name == "sgd":
        return keras.optimizers.SGD(learning_rate)
    raise ValueError(f"unknown optimizer {name!r}; choose one of {', '.join(OPTIMIZERS)}")
