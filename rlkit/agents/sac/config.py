"""SAC's hyper-parameters, named as SB3 and rl-zoo name them (no TensorFlow import: the CLI
validates these cheaply)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rlkit.config.gsde_options import (
    OWN_NETWORK,
    full_std_option,
    learn_features_option,
    sde_sample_freq_option,
    use_expln_option,
    use_sde_option,
)
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

HIDDEN_INITS = ("glorot", "torch")
#: how log std is kept in its bounds (rlkit.learn.max_entropy.bound_log_std)
LOG_STD_BOUNDINGS = ("clip", "tanh")
#: the temperature loss's forms (rlkit.learn.max_entropy.temperature_loss)
TEMPERATURE_LOSSES = ("alpha", "log_alpha")


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_ent_coef(text: str) -> tuple[bool, float]:
    """``(learned, initial alpha)`` of an ``ent_coef`` setting: ``auto`` (learned from 1.0,
    SB3's), ``auto_0.1`` (learned from 0.1) or a fixed number (``0.2``); ValueError else."""
    learned = text == "auto" or text.startswith("auto_")
    value = 1.0 if text == "auto" else _number(text.removeprefix("auto_"))
    if value is None or value <= 0:
        raise ValueError(text)
    return learned, value


def _ent_coef(text: str) -> str | None:
    try:
        parse_ent_coef(text)
    except ValueError:
        return "must be auto, auto_<initial alpha > 0> (auto_0.1) or a fixed alpha > 0 (0.2)"
    return None


def _target_entropy(text: str) -> str | None:
    if text == "auto" or _number(text) is not None:
        return None
    return "must be auto (-|A|, the action's dimension) or a finite number"


def _open_unit_interval(value: float) -> str | None:
    return None if 0.0 < value <= 1.0 else "must be in (0, 1]"


def _fraction_or_off(value: float) -> str | None:
    return None if value == -1.0 or 0.0 <= value <= 1.0 else "must be in [0, 1], or -1 (off)"


def _finite(value: float) -> str | None:
    return None if math.isfinite(value) else "must be a finite number"


@dataclass(frozen=True)
class SACConfig:
    """Soft Actor-Critic (Haarnoja et al. 2018) with twin critics and a learned temperature.

    Defaults are SB3's ``SAC`` (``sac/sac.py``: learning rate 3e-4 for the actor, critics and
    temperature, buffer 1M, batch 256, tau 0.005, gamma 0.99, an update every step from
    step 100, ``ent_coef = auto``, target entropy -|A|, 256x256 networks with PyTorch's
    initialisation). Step counts are environment steps unless the name says updates.
    """

    actor_hidden_sizes: tuple[int, ...] = option(
        (256, 256), "hidden layer sizes of the policy (SB3's net_arch)", positive_sizes
    )
    critic_hidden_sizes: tuple[int, ...] = option(
        (256, 256), "hidden layer sizes of each critic Q(s, a) on concat(s, a)", positive_sizes
    )
    init: str = option(
        "torch",
        "layers' initialisation: torch (PyTorch's nn.Linear, SB3's) | glorot (Keras')",
        one_of(*HIDDEN_INITS),
    )
    learning_rate: float = option(
        3e-4, "Adam's learning rate for the actor, the critics and the temperature", positive
    )
    lr_end_fraction: float = option(
        -1.0,
        "the learning rates fall linearly to this fraction of their start over lr_anneal_steps "
        "steps after learning_starts (0: to zero; rl-zoo's lin_); -1: constant",
        _fraction_or_off,
    )
    lr_anneal_steps: int = option(
        0, "steps after learning_starts over which the rates fall (lr_end_fraction)", non_negative
    )
    lr_anneal_fraction: float = option(
        0.0,
        "lr_anneal_steps as a fraction of the run's steps, resolved when the run is planned "
        "(rl-zoo's lin_ schedules; 0: lr_anneal_steps as given)",
        unit_interval,
    )
    adam_epsilon: float = option(
        1e-8,
        "Adam's epsilon (SB3's 1e-8; Keras adds it before the bias correction, PyTorch after: "
        "31.6x PyTorch's at the first update, equal by ~5,000: docs/sac.md)",
        positive,
    )
    gamma: float = option(0.99, "discount factor", unit_interval)
    tau: float = option(
        0.005,
        "target critics are ExponentialMovingAverage(decay=1-tau) shadows (Polyak tau)",
        _open_unit_interval,
    )
    target_update_interval: int = option(
        1,
        "move the target critics every this many gradient updates, counted over the run (SB3 "
        "counts within each train() call, its #2158)",
        positive,
    )
    ent_coef: str = option(
        "auto",
        "the temperature alpha: auto (learned, from 1.0) | auto_<init> (learned, from init) | "
        "a fixed number",
        _ent_coef,
    )
    target_entropy: str = option(
        "auto",
        "the entropy the learned alpha aims at: auto (-|A| for Box actions, "
        "target_entropy_scale x log|A| for Discrete ones) or a number",
        _target_entropy,
    )
    target_entropy_scale: float = option(
        0.89,
        "discrete actions: target entropy auto = this x log|A| (CleanRL's sac_atari 0.89; the "
        "paper's 0.98 leaves a two-action policy almost uniform: docs/sac.md)",
        _open_unit_interval,
    )
    temperature_loss: str = option(
        "alpha",
        "the temperature's loss: alpha (-alpha (log pi + H), 1812.05905 eq. 18) | log_alpha "
        "(-log alpha (log pi + H), SB3's); docs/sac.md compares their gradients",
        one_of(*TEMPERATURE_LOSSES),
    )
    log_std_min: float = option(-20.0, "the policy's smallest log std (SB3's -20)", _finite)
    log_std_max: float = option(2.0, "the policy's largest log std (SB3's 2)", _finite)
    log_std_bounding: str = option(
        "clip",
        "how log std is kept in [log_std_min, log_std_max]: clip (SB3's) | tanh (CleanRL's, "
        "with -5 and 2)",
        one_of(*LOG_STD_BOUNDINGS),
    )
    use_sde: bool = use_sde_option()
    sde_sample_freq: int = sde_sample_freq_option()
    use_sde_at_warmup: bool = option(
        False, "gSDE: explore with it before learning_starts too, instead of uniform actions "
        "(SB3's use_sde_at_warmup)"
    )  # fmt: skip
    log_std_init: float = option(
        -3.0, "gSDE: the initial log std of the exploration matrix's entries (SB3's SAC: -3)",
        _finite,
    )  # fmt: skip
    full_std: bool = full_std_option()
    use_expln: bool = use_expln_option()
    learn_features: bool = learn_features_option(True, "SAC's actor sets it true")
    clip_mean: float = option(
        2.0, "gSDE: the mean of u clipped to [-clip_mean, clip_mean] (SB3's SAC: 2; 0: not)",
        non_negative,
    )  # fmt: skip
    n_step: int = n_step_option()
    prioritized: bool = prioritized_option()
    priority_exponent: float = priority_exponent_option()
    importance_exponent: float = importance_exponent_option()
    importance_anneal_steps: int = importance_anneal_steps_option()
    priority_epsilon: float = priority_epsilon_option()
    batch_size: int = option(256, "transitions per minibatch", positive)
    buffer_size: int = option(1_000_000, "replay memory capacity (transitions)", positive)
    learning_starts: int = option(
        100, "steps of uniform random actions before learning starts", non_negative
    )
    train_freq: int = option(
        1,
        "run a block of updates every this many steps, or episodes with train_freq_unit = episode",
        positive,
    )
    train_freq_unit: str = train_freq_unit_option()
    gradient_steps: int = gradient_steps_option(1)
    reward_clip: float = option(
        0.0, "clip rewards to +-reward_clip before storing (0 disables)", non_negative
    )
    jit_compile: bool = option(True, "compile the fused update block with XLA")

    actor: str = option(
        "",
        "your own policy network: an importable builder 'package.module:function' taking "
        "(observation_space, action_space) and returning a keras.Model [B, obs] -> [B, 2 A], "
        "the mean and the raw log std of u side by side (empty: rlkit's MLP; Box actions only)",
    )
    critic: str = option(
        "",
        "your own critic: an importable builder returning a keras.Model of two inputs "
        "[observation, action in the action's units] -> [B] or [B, 1] (two are built: twin "
        "critics; empty: rlkit's MLP; Box actions only)",
    )

    def cross_check(self) -> str | None:
        if self.use_sde and self.actor:
            return OWN_NETWORK
        if self.log_std_min >= self.log_std_max:
            return (f"log_std_min ({self.log_std_min:g}) must be below log_std_max "
                    f"({self.log_std_max:g})")  # fmt: skip
        if self.lr_end_fraction >= 0 and self.lr_anneal_steps <= 0 >= self.lr_anneal_fraction:
            return (
                "lr_end_fraction needs lr_anneal_steps > 0 (e.g. the run's steps less "
                "learning_starts) or lr_anneal_fraction > 0"
            )
        return None

    def temperature(self) -> tuple[bool, float]:
        """``(learned, initial alpha)`` (:func:`parse_ent_coef`)."""
        return parse_ent_coef(self.ent_coef)

    def entropy_target(self, action_dim: int, discrete: bool = False) -> float:
        """The target entropy: for ``auto``, ``-action_dim`` (1812.05905 Section 5) or, with
        ``discrete`` (``action_dim`` actions), ``target_entropy_scale * log(action_dim)``
        (Christodoulou 2019); else the number given."""
        if self.target_entropy != "auto":
            return float(self.target_entropy)
        if discrete:
            return self.target_entropy_scale * math.log(action_dim)
        return -float(action_dim)


def check_spaces(observation_space, action_space, env_id: str = "the environment") -> None:
    """SAC takes a bounded Box action space (low < high) with Box or Discrete observations,
    or a Discrete one (discrete SAC) with vectors, one-hot or image observations."""
    import numpy as np
    from gymnasium import spaces

    from rlkit.core.errors import UsageError
    from rlkit.core.spaces import observation_format, require_box_actions

    if isinstance(action_space, spaces.Discrete):
        observation_format(observation_space, "sac", images=True)
        return
    if not isinstance(action_space, spaces.Box):
        raise UsageError(
            f"sac takes Box (continuous) or Discrete actions, but {env_id} has {action_space}; "
            f"reinforce takes others"
        )
    require_box_actions(action_space, "sac", env_id)
    if not np.all(action_space.high > action_space.low):
        raise UsageError(
            f"sac needs action bounds with low < high, but {env_id} has {action_space}"
        )
    if observation_format(observation_space, "sac", images=True).kind == "image":
        raise UsageError(
            f"sac's Gaussian policy takes vector observations, not {env_id}'s images "
            f"{observation_space} (discrete SAC takes images)"
        )


def describe_schedules(config: SACConfig, steps: int = 0, episodes: int = 0) -> list[str]:
    """The learning rates' schedule, when there is one, as the run's first lines print it."""
    if config.lr_anneal_steps > 0 and config.lr_end_fraction >= 0:
        return [learning_rate_phrase(f"x1 -> x{config.lr_end_fraction:g}", config, steps, episodes)]
    return []
