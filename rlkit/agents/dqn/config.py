"""DQN hyper-parameters (no TensorFlow import: the CLI validates these cheaply)."""

from __future__ import annotations

from dataclasses import dataclass

from rlkit.config.options import (
    gradient_steps_option,
    layer_sizes,
    non_negative,
    one_of,
    option,
    positive,
    train_freq_unit_option,
    unit_interval,
)
from rlkit.config.replay_options import (
    importance_anneal_steps_option,
    importance_exponent_option,
    n_step_option,
    prioritized_option,
    priority_epsilon_option,
    priority_exponent_option,
)
from rlkit.config.schedule_fractions import epsilon_phrase, learning_rate_phrase
from rlkit.learn.optimizers import OPTIMIZERS

#: rlkit's own torsos (a ``torso`` of one's own is a builder's name, or a Python object);
#: rlkit.networks.builders.TORSOS and "auto" (this module imports no TensorFlow)
BUILT_IN_TORSOS = ("auto", "nature", "minatar")


#: the losses a config names (a loss of one's own is given from Python, and the config
#: then records rlkit.networks.custom.GIVEN_IN_PYTHON; this module imports no TensorFlow)
LOSSES = ("dqn3", "huber", "mse")


def loss_choice(value: str) -> str | None:
    """A loss :data:`LOSSES` names, or the placeholder a config of a Python loss records
    (not listed: it names no loss a user could pick)."""
    if value in LOSSES or value == "<python object>":
        return None
    return (
        f"must be one of {', '.join(LOSSES)}; a loss of your own is given from Python: "
        "rlkit.agents.DQN.from_env(env, loss=my_loss) (docs/api.md, 'A loss of your own')"
    )


def torso_choice(value: str) -> str | None:
    """rlkit's torso kinds, ``package.module:function`` or a Python object's placeholder."""
    if value in BUILT_IN_TORSOS or ":" in value or value == "<python object>":
        return None
    return "must be auto, nature, minatar or a builder 'package.module:function'"


@dataclass(frozen=True)
class DQNConfig:
    """DQN as DeepMind's DQN3.0 does it, with today's options (Double, dueling, Huber/MSE).

    The defaults are rl-zoo's CartPole-v1 settings plus Double DQN, DQN3.0's
    learning-rate annealing (2.3e-3 -> 1e-4 by step 50,000) and Torch's ``nn.Linear``
    initialisation (DQN3.0's Lua networks and PyTorch's start from it); within 50,000
    steps the final model solves CartPole-v1 on 8 of 10 seeds and the best model kept by
    the CLI's evaluation every 2,500 steps on 10 of 10 (benchmarks/dqn_cartpole_seeds.py
    --seeds 0-9; with Glorot init: final 5/10, best 9/10).
    Step counts are environment steps unless the name says updates.
    """

    hidden_sizes: tuple[int, ...] = option(
        (256, 256),
        "hidden layer sizes of the Q network ([]: the torso straight into the head, as "
        "Revisiting Rainbow's MinAtar network)",
        layer_sizes,
    )
    dueling: bool = option(False, "dueling head: Q = V + A - mean(A)")
    noisy: bool = option(
        False,
        "noisy networks (Fortunato et al. 2018): every fully connected layer a factorised "
        "Gaussian NoisyDense, exploring by its noise (with eps_start = eps_end = 0)",
    )
    noisy_sigma0: float = option(
        0.5,
        "noisy layers' initial noise scale sigma0 (the paper's 0.5; Dopamine 0.1)",
        non_negative,
    )
    torso: str = option(
        "auto",
        "convolutions for image observations: nature (Nature DQN: 32 8x8/4, 64 4x4/2, 64 "
        "3x3/1) | minatar (16 3x3/1) | auto (nature from 36 pixels a side, else minatar); "
        "hidden_sizes follow them | your own torso: an importable builder "
        "'package.module:function' taking (observation_space, action_space) and returning a "
        "keras.Model that gives features [batch, D], under rlkit's hidden layers and head "
        "(dueling, noisy, atoms)",
        torso_choice,
    )
    conv_padding: str = option(
        "valid",
        "padding of the convolutions: valid (SB3; 84 pixels -> 20, 9, 7) | dqn3 (DQN3.0: one "
        "pixel of zeros around the first convolution's input only; 86 -> 20, 9, 7) | same "
        "(Dopamine's networks; 84 -> 21, 11, 11)",
        one_of("valid", "dqn3", "same"),
    )
    init: str = option(
        "torch",
        "weight initialisation: torch (Torch7/PyTorch nn.Linear, as DQN3.0 and SB3: kernels "
        "and biases U(+-1/sqrt(fan_in))) | glorot (Keras: Glorot-uniform kernels, zero biases)",
        one_of("glorot", "torch"),
    )
    learning_rate: float = option(2.3e-3, "optimizer learning rate", positive)
    learning_rate_end: float = option(
        1e-4, "learning rate reached after lr_anneal_steps (DQN3.0 lr_end; -1: constant)"
    )
    lr_anneal_steps: int = option(
        49_000,
        "steps after learning_starts over which the learning rate falls linearly (DQN3.0 lr_endt)",
        non_negative,
    )
    lr_anneal_fraction: float = option(
        0.0,
        "lr_anneal_steps as a fraction of the run's steps, resolved when the run is planned "
        "(rl-zoo's lin_ schedules; 0: lr_anneal_steps as given)",
        unit_interval,
    )
    optimizer: str = option(
        "adam",
        "adam | rmsprop_centered (DQN3.0) | rmsprop_centered_tf1 (Dopamine: TF1's, mean "
        "square from 1) | rmsprop_centered_torch (PyTorch's) | rmsprop | sgd",
        one_of(*OPTIMIZERS),
    )
    gamma: float = option(0.99, "discount factor", unit_interval)
    n_step: int = n_step_option()
    prioritized: bool = prioritized_option()
    priority_exponent: float = priority_exponent_option()
    importance_exponent: float = importance_exponent_option()
    importance_anneal_steps: int = importance_anneal_steps_option()
    priority_epsilon: float = priority_epsilon_option()
    batch_size: int = option(64, "transitions per minibatch", positive)
    buffer_size: int = option(100_000, "replay memory capacity (transitions)", positive)
    frame_stack: bool = option(
        False,
        "observations are stacks of frames along their last axis (Atari's 4): the replay "
        "stores each frame once and rebuilds the stacks (DQN3.0, Dopamine)",
    )
    learning_starts: int = option(
        1_000,
        "steps before learning and epsilon annealing start (DQN3.0 learn_start)",
        non_negative,
    )
    train_freq: int = option(
        256,
        "run a block of updates every this many steps (DQN3.0 update_freq), or episodes with "
        "train_freq_unit = episode",
        positive,
    )
    train_freq_unit: str = train_freq_unit_option()
    gradient_steps: int = gradient_steps_option(128)
    target_update: int = option(
        10,
        "copy the online network to the target each time the step count passes a multiple "
        "of this (DQN3.0 target_q), if it was updated since the last copy; updates come in "
        "blocks every train_freq steps, so with target_update <= train_freq that is one "
        "copy after every block",
        positive,
    )
    target_tau: float = option(
        0.0,
        "Polyak target update after every gradient step, target += tau (online - target); "
        "0: DQN3.0's hard copies",
        unit_interval,
    )
    double_dqn: bool = option(True, "Double DQN target: Q_target(s2, argmax_a Q(s2, a))")
    loss: str = option(
        "dqn3",
        "dqn3 (clipped delta injected at the Q output) | huber | mse (a loss of your own: "
        "DQN(..., loss=fn) from Python, shown as <python object>)",
        loss_choice,
    )
    reduction: str = option(
        "sum",
        "sum (DQN3.0) or mean of the per-example gradients over the minibatch",
        one_of("sum", "mean"),
    )
    clip_delta: float = option(
        1.0, "clip the TD error to +-clip_delta (0 disables; Huber's delta)", non_negative
    )
    rescale_r: bool = option(False, "divide rewards by r_max (DQN3.0 rescale_r)")
    r_max: float = option(1.0, "reward scale used when rescale_r is on", positive)
    r_max_running: bool = option(
        False,
        "r_max is the running maximum of the (clipped) rewards stored so far, starting at "
        "r_max (DQN3.0: r_max = max(r_max, reward) in perceive, from 1)",
    )
    reward_clip: float = option(
        0.0,
        "clip rewards to +-reward_clip before storing (0 disables; DQN3.0 uses 1)",
        non_negative,
    )
    eps_start: float = option(1.0, "initial exploration epsilon", unit_interval)
    eps_end: float = option(0.04, "final exploration epsilon", unit_interval)
    eps_anneal_steps: int = option(
        8_000, "steps after learning_starts over which epsilon falls linearly", non_negative
    )
    eps_anneal_fraction: float = option(
        0.0,
        "eps_anneal_steps as a fraction of the run's steps, resolved when the run is planned "
        "(rl-zoo's exploration_fraction; 0: eps_anneal_steps as given)",
        unit_interval,
    )
    eval_epsilon: float = option(
        0.0, "epsilon of greedy evaluations (DQN3.0: 0.05; 0: purely greedy)", unit_interval
    )
    exploration_from_start: bool = option(
        False,
        "anneal epsilon and the learning rate from step 0 (SB3, rl-zoo) instead of from "
        "learning_starts (DQN3.0)",
    )
    max_grad_norm: float = option(0.0, "clip gradients by global norm (0 disables)", non_negative)
    adam_epsilon: float = option(
        1e-7, "Adam's epsilon (Keras' default; PyTorch and SB3 use 1e-8)", positive
    )
    jit_compile: bool = option(
        True,
        "compile the fused update block with XLA (faster for MLPs; for convolutions on a CPU "
        "TensorFlow's own kernels are much faster: the minatar and dqn3 presets turn it off)",
    )
    q_network: str = option(
        "",
        "your own Q-network: an importable builder 'package.module:function' taking "
        "(observation_space, action_space) and returning a keras.Model with one Q-value per "
        "action (empty: rlkit's MLP or CNN from hidden_sizes, dueling, torso ...)",
    )

    def cross_check(self) -> str | None:
        """Settings that do not combine (None: none)."""
        if self.noisy and (self.eps_start > 0 or self.eps_end > 0):
            return (
                "noisy networks explore by their noise, not by epsilon: set eps_start=0 "
                "eps_end=0 (rlkit train rainbow does)"
            )
        if self.noisy and self.q_network:
            return (
                "noisy applies to rlkit's built-in head; give your own torso instead of a "
                "whole q_network (--set torso=module:function: rlkit's noisy head goes on "
                "it), or put NoisyDense layers (rlkit.networks.noisy) in your q_network"
            )
        if self.q_network and self.torso not in BUILT_IN_TORSOS:
            return (
                "q_network is a whole network, torso one under rlkit's head: give one of "
                "them, not both"
            )
        return None


def check_spaces(observation_space, action_space, env_id: str = "the environment") -> None:
    """DQN needs discrete actions and Box or Discrete observations, or a Dict or Tuple of
    them (with a q_network of one's own: the agent refuses its built-in networks for them)."""
    from rlkit.core.spaces import observation_format, require_discrete_actions

    require_discrete_actions(action_space, "dqn", env_id)
    observation_format(observation_space, "dqn", images=True, structured=True)


def anneal_start(config: DQNConfig) -> int:
    """The step the linear schedules (epsilon, the learning rate) start from:
    ``learning_starts`` (DQN3.0) or step 0 with ``exploration_from_start`` (SB3)."""
    return 0 if config.exploration_from_start else config.learning_starts


def describe_schedules(config: DQNConfig, steps: int = 0, episodes: int = 0) -> list[str]:
    """One phrase per annealed schedule (epsilon, unless noisy networks explore instead;
    the learning rate unless constant), as the run's first lines print them
    (:mod:`rlkit.config.schedule_fractions`)."""
    lines = [] if config.noisy else [epsilon_phrase(config, steps, episodes)]
    if config.lr_anneal_steps > 0 and config.learning_rate_end >= 0:
        rates = f"{config.learning_rate:g} -> {config.learning_rate_end:g}"
        lines.append(learning_rate_phrase(rates, config, steps, episodes))
    return lines
