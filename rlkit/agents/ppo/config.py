"""PPO's hyper-parameters, named as SB3 and rl-zoo name them (no TensorFlow import: the CLI
validates these cheaply)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from rlkit.config import gsde_options as gsde
from rlkit.config.options import (
    non_negative,
    one_of,
    option,
    positive,
    positive_sizes,
    unit_interval,
)
from rlkit.config.schedule_fractions import learning_rate_phrase

#: the torsos for image observations (rlkit.networks.builders.TORSOS and "auto"; this module
#: imports no TensorFlow)
BUILT_IN_TORSOS = ("auto", "nature", "minatar")


def _fraction_or_off(value: float) -> str | None:
    return None if value == -1.0 or 0.0 <= value <= 1.0 else "must be in [0, 1], or -1 (off)"


def torso_choice(value: str) -> str | None:
    """rlkit's torso kinds, ``package.module:function`` or a Python object's placeholder."""
    if value in BUILT_IN_TORSOS or ":" in value or value == "<python object>":
        return None
    return "must be auto, nature, minatar or a builder 'package.module:function'"


@dataclass(frozen=True)
class PPOConfig:
    """PPO (Schulman et al. 2017), clipped surrogate with GAE.

    Defaults are SB3's ``PPO`` (``ppo/ppo.py``: learning rate 3e-4, ``n_steps`` 2048 per
    environment, minibatches of 64, 10 epochs, gamma 0.99, GAE lambda 0.95, clip range
    0.2, no value clipping, no entropy bonus, ``vf_coef`` 0.5, ``max_grad_norm`` 0.5,
    advantages normalised per minibatch, separate 64x64 tanh policy and value networks with
    orthogonal initialisation (image observations: one shared convolutional torso, ``torso``),
    Adam's epsilon 1e-5). Schedules (``lin_`` in rl-zoo) are
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
    adam_epsilon: float = option(
        1e-5,
        "Adam's epsilon, added where PyTorch adds it (to the bias-corrected root: "
        "learn/optimizers.torch_adam); SB3's and CleanRL's PPO: 1e-5",
        positive,
    )
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
        (64, 64), "hidden layer sizes of the policy network (SB3's net_arch pi)",
        positive_sizes,
    )  # fmt: skip
    value_hidden_sizes: tuple[int, ...] = option(
        (64, 64), "hidden layer sizes of the value network (SB3's net_arch vf)",
        positive_sizes,
    )  # fmt: skip
    activation: str = option(
        "tanh",
        "the hidden layers' activation of rlkit's policy and value MLPs: tanh (SB3's "
        "MlpPolicy) | relu (rl-zoo's activation_fn=nn.ReLU)",
        one_of("tanh", "relu"),
    )
    log_std_init: float = option(
        0.0, "initial log std of the Gaussian policy (Box actions; state-independent); with "
        "use_sde that of the exploration matrix's entries (SB3's: 0 for both)"
    )  # fmt: skip
    use_sde: bool = gsde.use_sde_option()
    sde_sample_freq: int = gsde.sde_sample_freq_option()
    full_std: bool = gsde.full_std_option()
    use_expln: bool = gsde.use_expln_option()
    learn_features: bool = gsde.learn_features_option(False, "PPO's and A2C's set it false")
    ortho_init: bool = option(
        True,
        "orthogonal initialisation (gains sqrt 2 hidden, 0.01 policy head, 1 value head; "
        "zero biases); false: plain_init",
    )
    plain_init: str = option(
        "glorot",
        "the initialisation when ortho_init is false: glorot (Keras' Glorot-uniform kernels, "
        "zero biases) | torch (PyTorch's nn.Linear default, kernels and biases uniform "
        "within 1/sqrt(fan_in): what SB3's ortho_init=False gives)",
        one_of("glorot", "torch"),
    )
    torso: str = option(
        "auto",
        "image observations: one convolutional torso shared by the policy and value heads, "
        "nature (the Nature CNN 32 8x8/4, 64 4x4/2, 64 3x3/1, then 512: CleanRL's "
        "ppo_atari.py, SB3's CnnPolicy) | minatar (16 3x3/1, then 128: MinAtar's network) | "
        "auto (nature from 36 pixels a side, else minatar); vector observations keep the "
        "separate tanh networks of hidden_sizes and value_hidden_sizes; or your own torso "
        "under rlkit's two heads, vectors or images: an importable builder "
        "'package.module:function' returning a keras.Model [B, obs] -> [B, D]",
        torso_choice,
    )
    actor: str = option(
        "",
        "your own policy network: an importable builder 'package.module:function' taking "
        "(observation_space, action_space) and returning a keras.Model [B, obs] -> logits "
        "[B, n] (Discrete), [B, sum(nvec)] (MultiDiscrete: one slice per dimension) or the "
        "Gaussian's mean [B, action] in the action's units (Box) (empty: rlkit's tanh MLP "
        "from hidden_sizes)",
    )
    critic: str = option(
        "",
        "your own value network: an importable builder returning a keras.Model [B, obs] -> "
        "[B] or [B, 1] (empty: rlkit's tanh MLP from value_hidden_sizes)",
    )
    reward_clip: float = option(
        0.0,
        "clip each reward to [-reward_clip, reward_clip] before the rollout keeps it (SB3's "
        "AtariWrapper's ClipRewardEnv: 1; episode returns stay game scores); 0: off",
        non_negative,
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
    action_masks: bool = option(
        False,
        "invalid-action masks (sb3-contrib's MaskablePPO), Discrete and MultiDiscrete actions, "
        "the Python loop: read from the environment's action_masks() method, else "
        "info['action_mask'] (gymnasium's, e.g. Taxi-v4); invalid actions are never drawn, "
        "and the update's log-probability and entropy use the stored masks",
    )
    jit_compile: bool = option(
        False,
        "compile the update's two calls (the rollout's evaluation, the epochs of minibatch "
        "steps) with XLA: faster on small networks, the same formulas in another rounding "
        "(false: TensorFlow's graph executor, the runs measured so far)",
    )
    deterministic_eval: bool = option(
        True,
        "evaluate with the greedy action (argmax, the Gaussian's mean); false: with actions "
        "sampled from the policy (rl-zoo's for Atari: a greedy policy can get stuck, SB3 #1063)",
    )

    def cross_check(self) -> str | None:
        if self.use_sde and (self.actor or self.torso not in BUILT_IN_TORSOS):
            return gsde.OWN_NETWORK
        if self.ortho_init and self.plain_init != "glorot":
            return (f"plain_init {self.plain_init} is the initialisation without ortho_init, "
                    "and ortho_init is true: set ortho_init=false too, or leave plain_init "
                    "out")  # fmt: skip
        if (self.actor or self.critic) and self.torso not in BUILT_IN_TORSOS:
            return (
                "actor and critic are whole networks, torso one under rlkit's two heads: give "
                "a torso, or an actor and a critic, not both"
            )
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


def _ppo_option(key: str, default: Any = dataclasses.MISSING, help: str = "") -> Any:
    """PPOConfig's field ``key`` for another config: its check, its help unless ``help`` is
    given, its default unless ``default`` is."""
    field = PPOConfig.__dataclass_fields__[key]
    return option(field.default if default is dataclasses.MISSING else default,
                  help or field.metadata["help"], field.metadata["check"])  # fmt: skip


#: PPO's keys fixed by A2C (:meth:`A2CConfig.ppo`): one epoch over one minibatch holding the
#: whole rollout, so the probability ratio is 1 and the clipped surrogate's gradient is the
#: policy gradient; no value clipping, no KL stop, no clip-range schedule
A2C_FIXED = {"n_epochs": 1, "batch_size": 0, "clip_range_vf": 0.0, "target_kl": 0.0,
             "clip_range_end_fraction": -1.0}  # fmt: skip


@dataclass(frozen=True)
class A2CConfig:
    """A2C (Mnih et al. 2016, synchronous), SB3's ``A2C`` and its defaults.

    PPO's learner runs it (:meth:`ppo`): one gradient step on the whole rollout of
    ``n_steps x num_envs`` steps, where PPO's ratio ``exp(log pi - log pi_old)`` is 1 and the
    clipped surrogate's gradient is ``A grad log pi``. Defaults are SB3's (``a2c/a2c.py``):
    learning rate 7e-4, ``n_steps`` 5, gamma 0.99, ``gae_lambda`` 1 (the n-step return),
    no entropy bonus, ``vf_coef`` 0.5, ``max_grad_norm`` 0.5, RMSprop (alpha 0.99, epsilon
    1e-5 outside the root, as PyTorch's), advantages not normalised, separate 64x64 tanh
    policy and value networks with orthogonal initialisation.
    """

    learning_rate: float = _ppo_option(
        "learning_rate", 7e-4, "the optimizer's learning rate (one optimizer for both nets)"
    )
    lr_end_fraction: float = _ppo_option("lr_end_fraction")
    lr_anneal_steps: int = _ppo_option(
        "lr_anneal_steps", help="steps over which the learning rate falls"
    )
    lr_anneal_fraction: float = _ppo_option("lr_anneal_fraction")
    n_steps: int = _ppo_option(
        "n_steps", 5, "steps per environment in each rollout; one update on all of them"
    )
    gamma: float = _ppo_option("gamma")
    gae_lambda: float = _ppo_option(
        "gae_lambda", 1.0, "GAE's lambda (1: the n-step return's advantage, A2C's)"
    )
    ent_coef: float = _ppo_option("ent_coef")
    vf_coef: float = _ppo_option("vf_coef")
    max_grad_norm: float = _ppo_option("max_grad_norm")
    optimizer: str = _ppo_option(
        "optimizer", "rmsprop", "rmsprop (PyTorch's, SB3's use_rms_prop) | adam (use_rms_prop "
        "false)"
    )  # fmt: skip
    rms_prop_alpha: float = _ppo_option("rms_prop_alpha")
    rms_prop_eps: float = _ppo_option("rms_prop_eps")
    adam_epsilon: float = _ppo_option(
        "adam_epsilon", help="Adam's epsilon (with optimizer adam; SB3's policies: 1e-5)"
    )
    normalize_advantage: bool = _ppo_option(
        "normalize_advantage", False, "normalise the rollout's advantages (SB3's A2C: false)"
    )
    hidden_sizes: tuple[int, ...] = _ppo_option("hidden_sizes")
    value_hidden_sizes: tuple[int, ...] = _ppo_option("value_hidden_sizes")
    activation: str = _ppo_option("activation")
    log_std_init: float = _ppo_option("log_std_init")
    use_sde: bool = _ppo_option("use_sde")
    sde_sample_freq: int = _ppo_option("sde_sample_freq")
    full_std: bool = _ppo_option("full_std")
    use_expln: bool = _ppo_option("use_expln")
    learn_features: bool = _ppo_option("learn_features")
    ortho_init: bool = _ppo_option("ortho_init")
    plain_init: str = _ppo_option("plain_init")
    torso: str = _ppo_option("torso")
    actor: str = _ppo_option("actor")
    critic: str = _ppo_option("critic")
    reward_clip: float = _ppo_option("reward_clip")
    bootstrap_truncated: bool = _ppo_option("bootstrap_truncated")
    norm_obs: bool = _ppo_option("norm_obs")
    norm_reward: bool = _ppo_option("norm_reward")
    clip_obs: float = _ppo_option("clip_obs")
    clip_reward: float = _ppo_option("clip_reward")
    action_masks: bool = _ppo_option("action_masks")
    deterministic_eval: bool = _ppo_option("deterministic_eval")
    jit_compile: bool = _ppo_option("jit_compile")

    def cross_check(self) -> str | None:
        return self.ppo().cross_check()

    def ppo(self) -> PPOConfig:
        """The :class:`PPOConfig` PPO's learner runs A2C with: these keys and
        :data:`A2C_FIXED`."""
        return PPOConfig(**dataclasses.asdict(self), **A2C_FIXED)  # type: ignore[arg-type]


def describe_schedules(config: PPOConfig | A2CConfig, steps: int = 0, episodes: int = 0
                       ) -> list[str]:  # fmt: skip
    """The learning rate's (and PPO's clip range's) schedule, as the run's first lines print
    it."""
    if isinstance(config, A2CConfig):
        config = config.ppo()
    phrases = []
    if config.lr_anneal_steps > 0 and config.lr_end_fraction >= 0:
        phrases.append(learning_rate_phrase(f"x1 -> x{config.lr_end_fraction:g}", config,
                                            steps, episodes))  # fmt: skip
    if config.lr_anneal_steps > 0 and config.clip_range_end_fraction >= 0:
        end = config.clip_range * config.clip_range_end_fraction
        phrases.append(f"clip range {config.clip_range:g} -> {end:g} along it")
    return phrases
