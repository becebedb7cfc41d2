"""PPO's hyper-parameters, named as SB3 and rl-zoo name them (no TensorFlow import: the CLI
validates these cheaply)."""

from __future__ import annotations

from dataclasses import dataclass

from rlkit.config.options import (
    non_negative,
    one_of,
    option,
    positive,
    positive_sizes,
    unit_interval,
)
from rlkit.config.schedule_fractions import learning_rate_phrase


def _fraction_or_off(value: float) -> str | None:
    return None if value == -1.0 or 0.0 <= value <= 1.0 else "must be in [0, 1], or -1 (off)"


@dataclass(frozen=True)
class PPOConfig:
    """PPO (Schulman et al. 2017), clipped surrogate with GAE.

    Defaults are SB3's ``PPO`` (``ppo/ppo.py``: learning rate 3e-4, ``n_steps`` 2048 per
    environment, minibatches of 64, 10 epochs, gamma 0.99, GAE lambda 0.95, clip range
    0.2, no value clipping, no entropy bonus, ``vf_coef`` 0.5, ``max_grad_norm`` 0.5,
    advantages normalised per minibatch, separate 64x64 tanh policy and value networks with
    orthogonal initialisation, Adam's epsilon 1e-5). Schedules (``lin_`` in rl-zoo) are
    rlkit's: ``lr_end_fraction`` over ``lr_anneal_steps`` (or ``lr_anneal_fraction`` of the
    run), the clip range along the same line with ``clip_range_end_fraction``.
    """

    learning_rate: float = option(3e-4, "Adam's learning rate (one optimizer for both nets)",
                                  positive)  # fmt: skip
    lr_end_fraction: float = option(
        -1.0,
        "the learning rate falls linearly to this fraction of its start over lr_anneal_steps "
        "steps (0: to zero, rl-zoo's lin_); -1: constant",
        _fraction_or_off,
    )
    lr_anneal_steps: int = option(
        0, "steps over which the learning rate (and the clip range) fall", non_negative
    )
    lr_anneal_fraction: float = option(
        0.0,
        "lr_anneal_steps as a fraction of the run's steps, resolved when the run is planned "
        "(rl-zoo's lin_: 1.0; 0: lr_anneal_steps as given)",
        unit_interval,
    )
    clip_range_end_fraction: float = option(
        -1.0,
        "the clip range falls linearly to this fraction of clip_range along the learning "
        "rate's schedule (lr_anneal_steps; 0: rl-zoo's lin_ clip range); -1: constant",
        _fraction_or_off,
    )
    adam_epsilon: float = option(1e-5, "Adam's epsilon (SB3's and CleanRL's PPO: 1e-5)", positive)
    optimizer: str = option(
        "adam",
        "adam | rmsprop (PyTorch's RMSprop, epsilon outside the root: SB3's A2C's), one "
        "optimizer over both networks",
        one_of("adam", "rmsprop"),
    )
    rms_prop_alpha: float = option(0.99, "RMSprop's decay of the mean square (PyTorch's alpha)",
                                   unit_interval)  # fmt: skip
    rms_prop_eps: float = option(
        1e-5, "RMSprop's epsilon, added outside the square root (PyTorch's, SB3's A2C's 1e-5)",
        positive,
    )  # fmt: skip
    n_steps: int = option(2048, "steps per environment in each rollout (SB3's n_steps)", positive)
    batch_size: int = option(
        64,
        "minibatch size; n_steps x num_envs must be a multiple of it; 0: the whole rollout "
        "(one minibatch)",
        non_negative,
    )
    n_epochs: int = option(10, "passes over the rollout per update", positive)
    gamma: float = option(0.99, "discount factor", unit_interval)
    gae_lambda: float = option(0.95, "GAE's lambda (0: TD(0) advantages, 1: Monte Carlo)",
                               unit_interval)  # fmt: skip
    clip_range: float = option(0.2, "the surrogate's clip epsilon", positive)
    clip_range_vf: float = option(
        0.0,
        "clip the value prediction to within this of the rollout's value (SB3's value "
        "clipping); 0: off (SB3's None)",
        non_negative,
    )
    normalize_advantage: bool = option(True, "normalise advantages within each minibatch")
    ent_coef: float = option(0.0, "weight of the entropy bonus in the loss", non_negative)
    vf_coef: float = option(0.5, "weight of the value loss in the loss", non_negative)
    max_grad_norm: float = option(
        0.5, "clip the gradients of both networks by their global norm (0 disables)",
        non_negative,
    )  # fmt: skip
    target_kl: float = option(
        0.0,
        "stop the update's epochs at the first minibatch whose approximate KL exceeds "
        "1.5 x target_kl (SB3's; that minibatch is not applied); 0: off (SB3's None)",
        non_negative,
    )
    hidden_sizes: tuple[int, ...] = option(
        (64, 64), "hidden tanh layer sizes of the policy network (SB3's net_arch pi)",
        positive_sizes,
    )  # fmt: skip
    value_hidden_sizes: tuple[int, ...] = option(
        (64, 64), "hidden tanh layer sizes of the value network (SB3's net_arch vf)",
        positive_sizes,
    )  # fmt: skip
    log_std_init: float = option(
        0.0, "initial log std of the Gaussian policy (Box actions; state-independent)"
    )
    ortho_init: bool = option(
        True,
        "orthogonal initialisation (gains sqrt 2 hidden, 0.01 policy head, 1 value head; "
        "zero biases); false: Keras' Glorot uniform",
    )

    bootstrap_truncated: bool = option(
        True,
        "a time-limit truncation bootstraps from V(final observation); false: it is treated "
        "as a termination, as CleanRL's and PureJaxRL's PPO do (for comparison)",
    )
    norm_obs: bool = option(
        False,
        "normalise observations by running mean and std, clipped to +-clip_obs (SB3's "
        "VecNormalize; rl-zoo's normalize: true sets norm_obs and norm_reward)",
    )
    norm_reward: bool = option(
        False, "divide rewards by the running std of the discounted return (VecNormalize's)"
    )
    clip_obs: float = option(10.0, "bound of the normalised observations", positive)
    clip_reward: float = option(10.0, "bound of the scaled rewards", positive)

    def cross_check(self) -> str | None:
        if self.lr_end_fraction >= 0 and self.lr_anneal_steps <= 0 >= self.lr_anneal_fraction:
            return (
                "lr_end_fraction needs lr_anneal_steps > 0 (e.g. the run's steps) or "
                "lr_anneal_fraction > 0"
            )
        if (self.clip_range_end_fraction >= 0 and self.lr_anneal_steps <= 0
                >= self.lr_anneal_fraction):  # fmt: skip
            return (
                "clip_range_end_fraction needs lr_anneal_steps > 0 or lr_anneal_fraction > 0 "
                "(the clip range falls along the learning rate's schedule)"
            )
        return None

    def check_num_envs(self, num_envs: int) -> str | None:
        """What is wrong with a rollout of ``n_steps x num_envs`` steps cut into minibatches
        of ``batch_size`` (None: nothing)."""
        total = self.n_steps * num_envs
        if self.batch_size and total % self.batch_size:
            return (
                f"n_steps x num_envs ({self.n_steps} x {num_envs} = {total}) is not a multiple "
                f"of batch_size ({self.batch_size}): each epoch cuts the rollout into whole "
                "minibatches; change n_steps, --num-envs or batch_size"
            )
        return None

    def annealed(self, step: int) -> float:
        """How far along the schedule the run is at ``step``: 0 at the start, 1 at
        ``lr_anneal_steps`` and after (0 without a schedule)."""
        if self.lr_anneal_steps <= 0:
            return 0.0
        return min(1.0, step / self.lr_anneal_steps)

    def learning_rate_at(self, step: int) -> float:
        """The learning rate at environment step ``step``."""
        if self.lr_end_fraction < 0:
            return self.learning_rate
        return self.learning_rate * (1.0 - self.annealed(step) * (1.0 - self.lr_end_fraction))

    def clip_range_at(self, step: int) -> float:
        """The clip range at environment step ``step``."""
        if self.clip_range_end_fraction < 0:
            return self.clip_range
        end = self.clip_range_end_fraction
        return self.clip_range * (1.0 - self.annealed(step) * (1.0 - end))


def check_spaces(observation_space, action_space, env_id: str = "the environment") -> None:
    """PPO takes Discrete actions (a softmax policy) or a float Box (a diagonal Gaussian),
    with Box (vector) or Discrete observations."""
    import numpy as np
    from gymnasium import spaces

    from rlkit.core.errors import UsageError
    from rlkit.core.spaces import observation_format

    if isinstance(action_space, spaces.Box):
        if not np.issubdtype(action_space.dtype, np.floating):
            raise UsageError(f"ppo's Gaussian policy needs float Box actions, but {env_id} has "
                             f"{action_space}")  # fmt: skip
    elif not isinstance(action_space, spaces.Discrete):
        raise UsageError(
            f"ppo takes Discrete or Box actions, but {env_id} has {action_space} "
            "(MultiDiscrete and others are not built); reinforce or dqn may take it"
        )
    observation_format(observation_space, "ppo")


def describe_schedules(config: PPOConfig, steps: int = 0, episodes: int = 0) -> list[str]:
    """The learning rate's (and clip range's) schedule, as the run's first lines print it."""
    phrases = []
    if config.lr_anneal_steps > 0 and config.lr_end_fraction >= 0:
        phrases.append(learning_rate_phrase(f"x1 -> x{config.lr_end_fraction:g}", config,
                                            steps, episodes))  # fmt: skip
    if config.lr_anneal_steps > 0 and config.clip_range_end_fraction >= 0:
        end = config.clip_range * config.clip_range_end_fraction
        phrases.append(f"clip range {config.clip_range:g} -> {end:g} along it")
    return phrases
