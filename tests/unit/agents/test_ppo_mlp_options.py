"""PPO's and A2C's MLP options (issues 53, 54): the initialisation without ``ortho_init``,
``plain_init = glorot`` (Keras' Glorot uniform, zero biases: rlkit's until now, unchanged)
and ``torch`` (PyTorch's ``nn.Linear`` default, what SB3's ``ortho_init=False`` builds:
kernels and biases uniform within ``1/sqrt(fan_in)``); ``activation = relu`` (rl-zoo's
``activation_fn=nn.ReLU``) in the Keras networks and acting's numpy copies alike; the
combinations refused in one line."""

from __future__ import annotations

import keras
import numpy as np
import pytest
from gymnasium import spaces

import rlkit.agents
from rlkit.agents.ppo.config import A2CConfig, PPOConfig
from rlkit.agents.ppo.networks import TanhMLP
from rlkit.core.errors import UsageError


def layers_of(mlp: TanhMLP) -> list:
    return [*mlp.hidden, mlp.head]


def test_torch_init_draws_kernels_and_biases_within_one_over_root_fan_in():
    mlp = TanhMLP(3, 2, (64, 64), 0.01, seed=0, name="policy", ortho="torch")
    for layer, fan_in in zip(layers_of(mlp), (3, 64, 64), strict=True):
        limit = fan_in**-0.5  # 0.577, 0.125, 0.125
        for weights in (layer.kernel.numpy(), layer.bias.numpy()):
            assert np.abs(weights).max() <= limit
            assert np.abs(weights).max() > 0.8 * limit  # (spread over the interval)
        # a uniform on [-l, l] has variance l^2 / 3
        np.testing.assert_allclose(layer.kernel.numpy().var(), limit**2 / 3, rtol=0.3)
    kernel, bias = mlp.hidden[0].kernel.numpy(), mlp.hidden[0].bias.numpy()
    assert not np.allclose(kernel[0, : bias.size], bias)  # (kernel and bias drawn apart)


def test_glorot_init_is_keras_glorot_uniform_with_zero_biases_as_before():
    mlp = TanhMLP(3, 2, (8,), 0.01, seed=0, name="policy", ortho=False)
    base = mlp.hidden[0].kernel  # Keras' GlorotUniform of the layer's seed, drawn again
    seed = int(mlp.model.get_layer("policy_hidden0").kernel_initializer.seed)
    want = keras.initializers.GlorotUniform(seed=seed)((3, 8)).numpy()
    np.testing.assert_array_equal(base.numpy(), want)
    assert all(not layer.bias.numpy().any() for layer in layers_of(mlp))
    same = TanhMLP(3, 2, (8,), 0.01, seed=0, name="policy", ortho="glorot")
    for a, b in zip(mlp.model.get_weights(), same.model.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)


def test_orthogonal_is_still_the_default_and_unchanged_by_plain_init():
    env = (spaces.Box(-1.0, 1.0, (3,), np.float32), spaces.Box(-1.0, 1.0, (1,), np.float32))
    ortho = rlkit.agents.PPO(*env, seed=0, hidden_sizes=(8,), value_hidden_sizes=(8,))
    kernel = ortho.learner.policy_network.model.get_layer("policy_hidden0").kernel.numpy()
    np.testing.assert_allclose(kernel @ kernel.T, 2.0 * np.eye(3), atol=1e-5)  # gain sqrt 2
    torch = rlkit.agents.PPO(*env, seed=0, hidden_sizes=(8,), value_hidden_sizes=(8,),
                             ortho_init=False, plain_init="torch")  # fmt: skip
    value = torch.learner.value_network.model.get_layer("value_out")
    assert np.abs(value.bias.numpy()).max() > 0  # (PyTorch's biases are drawn)
    assert np.abs(value.kernel.numpy()).max() <= 8**-0.5


@pytest.mark.parametrize("config_class", [PPOConfig, A2CConfig])
def test_plain_init_with_ortho_init_is_refused_in_one_line(config_class):
    problem = config_class(plain_init="torch").cross_check()
    assert problem and problem.startswith("plain_init torch is the initialisation without "
                                          "ortho_init")  # fmt: skip
    assert config_class(plain_init="torch", ortho_init=False).cross_check() is None


def test_an_unknown_plain_init_and_torch_with_images_are_refused():
    from rlkit.config.options import validate

    with pytest.raises(UsageError, match="^bad value 'he' for plain_init: must be one of"):
        validate(PPOConfig(plain_init="he", ortho_init=False))
    images = spaces.Box(0, 255, (10, 10, 3), np.uint8)
    with pytest.raises(UsageError, match="^plain_init: it is built for the MLPs of vector "):
        rlkit.agents.PPO(images, spaces.Discrete(3), seed=0, ortho_init=False,
                         plain_init="torch")  # fmt: skip
    with pytest.raises(UsageError, match="^activation: it is built for the MLPs of vector "):
        rlkit.agents.PPO(images, spaces.Discrete(3), seed=0, activation="relu")


@pytest.mark.parametrize("use_sde", [False, True])
def test_relu_hidden_layers_in_the_network_and_in_actings_copy(use_sde):
    env = (spaces.Box(-1.0, 1.0, (3,), np.float32), spaces.Box(-1.0, 1.0, (2,), np.float32))
    agent = rlkit.agents.PPO(*env, seed=0, hidden_sizes=(16, 16), value_hidden_sizes=(16,),
                             activation="relu", use_sde=use_sde)  # fmt: skip
    model = agent.learner.policy_network.model
    assert all(layer.activation.__name__ == "relu"
               for layer in model.layers if layer.name.startswith("policy_hidden"))  # fmt: skip
    obs = np.random.default_rng(0).normal(size=(64, 3)).astype(np.float32)
    want = model(obs).numpy()
    forward = agent.acting.snapshot.forward(obs)
    mean = forward[1] if use_sde else forward  # (gSDE's copy gives (latent, mean))
    np.testing.assert_allclose(mean, want, rtol=1e-5, atol=1e-6)
    if use_sde:  # the latent is the last ReLU layer: never negative, some zeros
        latent = forward[0]
        assert latent.min() == 0.0 and (latent > 0).any()
    greedy = agent.act(obs, explore=False)
    np.testing.assert_allclose(greedy, np.clip(want, -1.0, 1.0), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
def test_jit_compile_runs_the_same_update_in_another_rounding(env_id):
    """``jit_compile``: the update's two calls compiled by XLA move the weights where the
    graph executor moves them, to float32 rounding, after one update on the same rollout
    (the same formulas); the executor stays the default."""
    import gymnasium as gym

    from tests.unit.agents.test_ppo import random_rollout

    settings = dict(seed=3, hidden_sizes=(8,), value_hidden_sizes=(8,), n_steps=8,
                    batch_size=4, n_epochs=2)  # fmt: skip
    plain = rlkit.agents.PPO.from_env(gym.make(env_id), **settings)
    xla = rlkit.agents.PPO.from_env(gym.make(env_id), jit_compile=True, **settings)
    assert plain.config.jit_compile is False
    before = [v.numpy().copy() for v in plain.learner.variables()["policy"]]
    batch = random_rollout(plain)
    for agent in (plain, xla):
        agent.learner.learn(batch, 0, np.random.default_rng(1))
    moved = [not np.allclose(v.numpy(), b) for v, b in
             zip(plain.learner.variables()["policy"], before, strict=True)]  # fmt: skip
    assert all(moved)  # (the update changed every policy variable: not a vacuous match)
    for group, variables in plain.learner.variables().items():
        for a, b in zip(variables, xla.learner.variables()[group], strict=True):
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-4, atol=1e-6, err_msg=group)
