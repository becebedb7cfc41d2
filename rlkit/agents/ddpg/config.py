"""DDPG (and TD3) hyper-parameters (no TensorFlow import: the CLI validates these cheaply)."""

from __future__ import annotations

from dataclasses import dataclass, fields

from rlkit.config.options import (
    gradient_steps_option,
    non_negative,
    one_of,
    option,
    positive,
    positive_sizes,
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
from rlkit.config.schedule_fractions import learning_rate_phrase
from rlkit.learn.optimizers import OPTIMIZERS

NOISES = ("gaussian", "ou")
#: settings only TD3 reads (rlkit.agents.ddpg.td3.LearnerTerms)
TD3_KEYS = ("policy_delay", "target_noise", "target_noise_clip")
HIDDEN_INITS = ("glorot", "torch")


def _open_unit_interval(value: float) -> str | None:
    return None if 0.0 < value <= 1.0 else "must be in (0, 1]"


def _fraction_or_off(value: float) -> str | None:
    return None if value == -1.0 or 0.0 <= value <= 1.0 else "must be in [0, 1], or -1 (off)"


@dataclass(frozen=True)
class DDPGConfig:
    """DDPG (Lillicrap et al. 2016) with ExponentialMovingAverage target networks.

    ``td3=True`` turns on TD3's three changes (Fujimoto et al. 2018): twin critics
    with the smaller target, target policy smoothing and delayed actor/target updates.

    The defaults reach a greedy return >= -200 on Pendulum-v1 within 20,000 steps
    (see benchmarks/ddpg_pendulum_seeds.py). Step counts are environment steps
    unless the name says updates. Noise scales are fractions of the half-range
    ``(high - low) / 2`` of the action bounds.
    """

    actor_hidden_sizes: tuple[int, ...] = option(
        (64, 64), "hidden layer sizes of the actor mu(s)", positive_sizes
    )
    critic_hidden_sizes: tuple[int, ...] = option(
        (64, 64), "hidden layer sizes of the critic Q(s, a) (input: concat(s, a))", positive_sizes
    )
    init: str = option(
        "glorot",
        "hidden layers' initialisation: glorot (Keras': Glorot-uniform kernels, zero biases) | "
        "torch (PyTorch's nn.Linear, SB3's: kernel and bias U(+-1/sqrt(fan_in)))",
        one_of(*HIDDEN_INITS),
    )
    output_init_scale: float = option(
        3e-3,
        "the actor's and critics' output layers start U(+-this) (the DDPG paper's 3e-3); "
        "0: initialised like the hidden layers (init)",
        non_negative,
    )
    actor_learning_rate: float = option(1e-3, "actor optimizer learning rate", positive)
    critic_learning_rate: float = option(1e-3, "critic optimizer learning rate", positive)
    lr_end_fraction: float = option(
        -1.0,
        "both learning rates fall linearly to this fraction of their start over "
        "lr_anneal_steps steps after learning_starts (0: to zero); -1: constant, as rl-zoo",
        _fraction_or_off,
    )
    lr_anneal_steps: int = option(
        0,
        "steps after learning_starts over which the learning rates fall (lr_end_fraction)",
        non_negative,
    )
    lr_anneal_fraction: float = option(
        0.0,
        "lr_anneal_steps as a fraction of the run's steps, resolved when the run is planned "
        "(rl-zoo's lin_ schedules; 0: lr_anneal_steps as given)",
        unit_interval,
    )
    actor_optimizer: str = option(
        "adam", "actor optimizer: " + " | ".join(OPTIMIZERS), one_of(*OPTIMIZERS)
    )
    critic_optimizer: str = option(
        "adam", "critic optimizer: " + " | ".join(OPTIMIZERS), one_of(*OPTIMIZERS)
    )
    adam_epsilon: float = option(
        1e-7, "Adam's epsilon (Keras' default; PyTorch and SB3 use 1e-8)", positive
    )
    actor_max_grad_norm: float = option(
        0.0, "clip the actor gradients by global norm (0 disables)", non_negative
    )
    critic_max_grad_norm: float = option(
        0.0, "clip the critic gradients by global norm (0 disables)", non_negative
    )
    gamma: float = option(0.98, "discount factor", unit_interval)
    n_step: int = n_step_option()
    prioritized: bool = prioritized_option()
    priority_exponent: float = priority_exponent_option()
    importance_exponent: float = importance_exponent_option()
    importance_anneal_steps: int = importance_anneal_steps_option()
    priority_epsilon: float = priority_epsilon_option()
    tau: float = option(
        0.005,
        "target networks are ExponentialMovingAverage(decay=1-tau) of the online ones",
        _open_unit_interval,
    )
    batch_size: int = option(256, "transitions per minibatch", positive)
    buffer_size: int = option(200_000, "replay memory capacity (transitions)", positive)
    learning_starts: int = option(
        1_000, "steps of uniform random actions before learning starts", non_negative
    )
    train_freq: int = option(
        64,
        "run a block of updates every this many steps, or episodes with train_freq_unit = episode",
        positive,
    )
    train_freq_unit: str = train_freq_unit_option()
    gradient_steps: int = gradient_steps_option(64)
    noise: str = option(
        "gaussian",
        "exploration noise: gaussian (independent) | ou (Ornstein-Uhlenbeck, reset each episode)",
        one_of(*NOISES),
    )
    noise_scale: float = option(
        0.1, "exploration noise std, as a fraction of the action half-range", non_negative
    )
    ou_theta: float = option(0.15, "Ornstein-Uhlenbeck mean reversion rate", non_negative)
    ou_dt: float = option(1e-2, "Ornstein-Uhlenbeck time step", positive)
    td3: bool = option(
        False, "TD3: twin critics (min target), target policy smoothing, delayed actor updates"
    )
    policy_delay: int = option(
        2, "TD3: update the actor and the targets every this many critic updates", positive
    )
    target_noise: float = option(
        0.2, "TD3: target policy smoothing std, fraction of the action half-range", non_negative
    )
    target_noise_clip: float = option(
        0.5, "TD3: clip the smoothing noise to +- this fraction of the half-range", non_negative
    )
    reward_clip: float = option(
        0.0, "clip rewards to +-reward_clip before storing (0 disables)", non_negative
    )
    jit_compile: bool = option(True, "compile the fused update block with XLA")

    actor: str = option(
        "",
        "your own actor: an importable builder 'package.module:function' taking "
        "(observation_space, action_space) and returning a keras.Model [B, obs] -> [B, "
        "action] in the action's units (empty: rlkit's MLP from actor_hidden_sizes)",
    )
    critic: str = option(
        "",
        "your own critic: an importable builder returning a keras.Model of two inputs "
        "[observation, action] -> [B] or [B, 1] (empty: rlkit's MLP from critic_hidden_sizes)",
    )

    def unused_settings(self) -> str | None:
        """What this config sets that its agent never reads: TD3's keys without ``td3``
        (a new run refuses it: rlkit.run.plan; an agent built or loaded in Python warns)."""
        if not self.td3:
            defaults = {f.name: f.default for f in fields(self) if f.name in TD3_KEYS}
            changed = [k for k in TD3_KEYS if getattr(self, k) != defaults[k]]
            if changed:
                return (f"{changed[0]} is TD3's (DDPG updates its actor every step, without "
                        "target smoothing): add td3=true, or leave it out")  # fmt: skip
        return None

    def cross_check(self) -> str | None:
        if self.lr_end_fraction >= 0 and self.lr_anneal_steps <= 0:
            return (
                "lr_end_fraction needs lr_anneal_steps > 0 (e.g. the run's steps less "
                "learning_starts)"
            )
        return None


def check_spaces(observation_space, action_space, env_id: str = "the environment") -> None:
    """DDPG needs a bounded Box action space (low < high) and Box or Discrete observations, or
    a Dict or Tuple of them (with an actor and a critic of one's own: the agent refuses its
    built-in networks for them)."""
    import numpy as np

    from rlkit.core.errors import UsageError
    from rlkit.core.spaces import observation_format, require_box_actions

    require_box_actions(action_space, "ddpg", env_id)
    if not np.all(action_space.high > action_space.low):
        raise UsageError(
            f"ddpg needs action bounds with low < high, but {env_id} has {action_space}"
        )
    observation_format(observation_space, "ddpg", structured=True)


def describe_schedules(config: DDPGConfig, steps: int = 0, episodes: int = 0) -> list[str]:
    """The learning rates' schedule, when there is one, as the run's first lines print it."""
    if config.lr_anneal_steps > 0 and config.lr_end_fraction >= 0:
        return [learning_rate_phrase(f"x1 -> x{config.lr_end_fraction:g}", config, steps, episodes)]
    return []
