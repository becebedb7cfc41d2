"""The numpy mirror of MinAtar's convolutional Q networks: the convolution by hand, against
Keras' Conv2D, and whole networks (DQN, C51, QR-DQN, dueling, noisy) against their Keras
models, value for value and argmax for argmax on MinAtar-like boards."""

from __future__ import annotations

import gymnasium as gym
import keras
import numpy as np
import pytest

from rlkit.core.spaces import observation_format
from rlkit.networks.builders import NumpyMLP
from rlkit.networks.numpy_conv import (
    ONE_THREAD_MNK,
    NumpyConvNet,
    conv2d_relu,
    one_thread_matmul,
    same_padding,
)
from rlkit.networks.q_network import QNetwork

BOARD = observation_format(gym.spaces.Box(0, 1, (10, 10, 4), bool), images=True)


def boards(count: int, seed: int = 0, density: float = 0.1) -> np.ndarray:
    """Sparse boolean boards as MinAtar's (a few objects on a 10x10 grid, 4 channels)."""
    return np.random.default_rng(seed).random((count, 10, 10, 4)) < density


def test_convolution_by_hand():
    # a 3x3 image 1..9, one channel, a 3x3 kernel of ones: "same" sums each pixel's neighbours
    # (zero outside): corner 1 + 2 + 4 + 5 = 12, centre 45; bias -13 then ReLU
    x = np.arange(1, 10, dtype=np.float32).reshape(1, 3, 3, 1)
    ones = np.ones((3, 3, 1, 1), np.float32)
    same = conv2d_relu(x, ones, np.zeros(1, np.float32), padding="same")[0, :, :, 0]
    np.testing.assert_array_equal(same, [[12, 21, 16], [27, 45, 33], [24, 39, 28]])
    valid = conv2d_relu(x, ones, np.array([-13.0], np.float32), padding="valid")
    assert valid.shape == (1, 1, 1, 1) and valid[0, 0, 0, 0] == 32.0
    clipped = conv2d_relu(x, ones, np.array([-13.0], np.float32), padding="same")[0, :, :, 0]
    np.testing.assert_array_equal(clipped, [[0, 8, 3], [14, 32, 20], [11, 26, 15]])
    # TensorFlow's "same": total (ceil(n / s) - 1) s + k - n, the odd pixel after
    assert same_padding(10, 3, 1) == (1, 1)
    assert same_padding(9, 4, 2) == (1, 2) and same_padding(7, 3, 2) == (1, 1)


@pytest.mark.parametrize("padding", ["valid", "same"])
@pytest.mark.parametrize(("size", "kernel", "stride"), [(10, 3, 1), (9, 4, 2), (12, 3, 3)])
def test_convolution_matches_keras(padding, size, kernel, stride):
    rng = np.random.default_rng(size + stride)
    layer = keras.layers.Conv2D(5, kernel, strides=stride, padding=padding, activation="relu",
                                bias_initializer="random_normal")  # fmt: skip
    x = rng.normal(size=(3, size, size, 2)).astype(np.float32)
    want = layer(x).numpy()
    got = conv2d_relu(x, layer.kernel.numpy(), layer.bias.numpy(), stride, padding)
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_one_thread_matmul_is_the_product_in_column_blocks():
    rng = np.random.default_rng(1)
    w = rng.normal(size=(1600, 306)).astype(np.float32)
    x = rng.normal(size=(2, 1600)).astype(np.float32)
    assert ONE_THREAD_MNK < 2 * 1600 * 306  # (so this one is cut into blocks)
    got = one_thread_matmul(x, w)
    assert got.shape == (2, 306)
    np.testing.assert_allclose(got, x @ w, rtol=1e-5, atol=1e-4)
    small = rng.normal(size=(3, 4)).astype(np.float32)  # under the bound: x @ w itself
    np.testing.assert_array_equal(one_thread_matmul(small, w[:4]), small @ w[:4])
    many = rng.normal(size=(500, 1600)).astype(np.float32)  # blocks too narrow: whole
    np.testing.assert_array_equal(one_thread_matmul(many, w), many @ w)


CASES = {  # name -> (outputs per action, hidden sizes, padding, dueling, noisy)
    "dqn valid + 128 (MinAtar's DQN)": (1, [128], "valid", False, False),
    "c51 same (Rainbow's MinAtar preset)": (51, [], "same", False, False),
    "qrdqn same": (200, [], "same", False, False),
    "dueling c51": (51, [], "same", True, False),
    "noisy dqn (its mu)": (1, [32], "same", False, True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_mirror_computes_the_keras_model(name):
    per_action, hidden, padding, dueling, noisy = CASES[name]
    q = QNetwork(BOARD, 6 * per_action, hidden, dueling, seed=3, torso_kind="minatar",
                 conv_padding=padding, per_action=per_action, noisy=noisy)  # fmt: skip
    assert q.mirrored
    mirror = q.numpy_snapshot()
    assert isinstance(mirror, NumpyConvNet) and mirror.per_action == per_action
    obs = boards(400, seed=per_action)
    got, want = mirror(obs), q.model(obs).numpy()
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mirror(obs[7]), want[7], rtol=1e-5, atol=1e-5)  # one board


@pytest.mark.slow
def test_mirrored_acting_chooses_the_networks_actions_on_many_boards():
    """C51's greedy action (the expected value's argmax) from the mirror equals the Keras
    model's on 3,000 boards of three densities, for three initialisations."""
    from rlkit.agents.dqn.heads import CategoricalHead

    head = CategoricalHead(51, -10.0, 10.0)
    for seed in range(3):
        q = QNetwork(BOARD, 6 * 51, [], seed=seed, torso_kind="minatar", conv_padding="same",
                     per_action=51)  # fmt: skip
        obs = np.concatenate([boards(1000, seed, d) for d in (0.05, 0.15, 0.4)])
        mine = head.q_values(q.numpy_snapshot()(obs))
        theirs = head.q_values(q.model(obs).numpy())
        np.testing.assert_array_equal(mine.argmax(-1), theirs.argmax(-1))


def test_a_uint8_frame_is_divided_by_255_as_the_network_does():
    frames = observation_format(gym.spaces.Box(0, 255, (10, 10, 2), np.uint8), images=True)
    q = QNetwork(frames, 3, [8], seed=1, torso_kind="minatar", conv_padding="same")
    obs = np.random.default_rng(2).integers(0, 256, (5, 10, 10, 2), dtype=np.uint8)
    np.testing.assert_allclose(q.numpy_snapshot()(obs), q.model(obs).numpy(), rtol=1e-5,
                               atol=1e-6)  # fmt: skip


def test_the_nature_cnn_keeps_its_compiled_call_and_an_mlp_its_mlp_mirror():
    atari = observation_format(gym.spaces.Box(0, 255, (84, 84, 4), np.uint8), images=True)
    nature = QNetwork(atari, 6, [32], seed=0)
    assert not nature.mirrored and nature.mirror_weights() == []
    with pytest.raises(TypeError, match="no numpy mirror"):
        nature.numpy_snapshot()
    assert isinstance(QNetwork(4, 2, [8], seed=0).numpy_snapshot(), NumpyMLP)
