"""PPO (Schulman et al. 2017): an acting rule and a learner joined by the agent, over a
rollout store.

- :class:`~rlkit.agents.ppo.acting.PPOActing` acts in numpy from the learner's snapshot.
- :class:`~rlkit.agents.ppo.learner.PPOLearner` learns: the separate tanh policy and value
  networks (vector observations) or one convolutional torso under both heads (images), one
  update pipeline, the compiled evaluation and update block.
- :class:`PPO` joins them with its :class:`~rlkit.replay.rollout.Rollout` (``n_steps`` of
  each stream, ``[T, N]``): when every stream has its ``n_steps``, one update runs, the
  rollout is cleared and acting follows the new snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np
import tensorflow as tf
from gymnasium import spaces

from rlkit.agents.base import Agent
from rlkit.agents.off_policy import clip_rewards
from rlkit.agents.ppo import spaces as ppo_spaces
from rlkit.agents.ppo.acting import PPOActing
from rlkit.agents.ppo.config import PPOConfig
from rlkit.agents.ppo.learner import PPOLearner
from rlkit.agents.ppo.normalization import ObservationNormalizer, RewardScaler
from rlkit.core import seeding
from rlkit.core.errors import UsageError
from rlkit.core.spaces import IMAGE, observation_format
from rlkit.learn.gsde import ExplorationMatrices
from rlkit.networks.custom import GIVEN_IN_PYTHON
from rlkit.replay.rollout import Rollout

__all__ = ["PPO"]


class PPO(Agent):
    """PPO with the clipped surrogate and GAE, for Discrete, MultiDiscrete or Box actions.

    Args:
        observation_space: ``Box`` vectors (flattened), ``Box`` images ``[H, W, C]`` (kept in
            their own dtype: uint8 frames, MinAtar's bool boards; the shared convolutional
            torso) or ``Discrete`` (one-hot) observations.
        action_space: ``Discrete(n)`` (softmax policy), ``MultiDiscrete(nvec)`` (one
            softmax per dimension) or a float ``Box`` (diagonal Gaussian, state-independent
            log std, actions clipped to the bounds only when sent).
        config: a :class:`PPOConfig`; keyword arguments override its keys.
        seed: seeds the weights, the action draws (``sample``) and the minibatches
            (``replay``).
        actor, critic, torso: networks of one's own (:mod:`rlkit.agents.ppo.user_networks`):
            a Keras model, a builder ``(observation_space, action_space) -> keras.Model``, or
            the name of an importable builder ``"package.module:function"`` (kept in the
            config under the same key). ``actor``: ``[B, obs] -> [B, outputs]`` (logits, or
            the Gaussian's mean); ``critic``: ``[B, obs] -> [B]`` or ``[B, 1]``; ``torso``:
            ``[B, obs] -> [B, D]`` under rlkit's two heads (or the name of rlkit's torso,
            ``"auto"``, ``"nature"``, ``"minatar"``).

    Attributes:
        learner: the :class:`PPOLearner`.
        acting: the :class:`PPOActing` rule.
        rollout: the :class:`Rollout` (``N`` streams, fixed by the first ``observe_first``),
            observations stored in their own shape and dtype.
    """

    name = "ppo"
    config_class: ClassVar[type] = PPOConfig  # (A2C's: A2CConfig)
    vector_envs = True
    check_spaces = staticmethod(ppo_spaces.check_spaces)

    def __init__(self, observation_space, action_space, config=None, seed: int = 0,
                 actor=None, critic=None, torso=None, **overrides) -> None:  # fmt: skip
        self._networks = {"actor": actor, "critic": critic, "torso": torso}
        for key, given in self._networks.items():
            if given is not None:
                overrides[key] = given if isinstance(given, str) else GIVEN_IN_PYTHON
        super().__init__(observation_space, action_space, config, seed, **overrides)
        cfg = self.learner_config()
        fmt = observation_format(observation_space, self.name, images=True)
        if fmt.kind == IMAGE and cfg.norm_obs:
            raise UsageError(
                f"{self.name}'s norm_obs normalises vector observations; the image observations "
                f"{fmt.shape} {fmt.dtype} go to the convolutional torso as they are (uint8 frames "
                "divided by 255 inside it): drop norm_obs"
            )
        if cfg.action_masks and isinstance(action_space, spaces.Box):
            raise UsageError(
                f"{self.name}'s action_masks mask the logits of Discrete or MultiDiscrete "
                f"actions; {action_space} has none: drop action_masks"
            )
        self.obs_format, self.encode = fmt, fmt.encode
        self.discrete = isinstance(action_space, spaces.Discrete)
        self.learner = PPOLearner(cfg, fmt, action_space, seed, observation_space,
                                  self._networks)  # fmt: skip
        action_shape = self.learner.head.action_shape
        action_dtype: Any = np.float32 if isinstance(action_space, spaces.Box) else np.int64
        #: the masks' width (the policy's outputs) with action_masks, else 0
        self.action_mask_width = self.learner.head.out_dim if cfg.action_masks else 0
        self.rollout = Rollout(cfg.n_steps, fmt.shape, fmt.dtype, action_shape, action_dtype,
                               self.action_mask_width)  # fmt: skip
        self._acted_masks: np.ndarray | None = None  # (the last exploring act's masks)
        #: act(obs, explore=False) is greedy; False: sampled, from eval_rng (rl-zoo's Atari)
        self.deterministic_eval = bool(cfg.deterministic_eval)
        self.eval_rng = seeding.generator(seed, "evaluate")
        self.reward_clip = cfg.reward_clip
        self.rng = seeding.generator(seed, "sample")
        self.minibatch_rng = seeding.generator(seed, "replay")  # (minibatch draws)
        self.obs_norm = ObservationNormalizer(fmt.size, cfg.clip_obs) if cfg.norm_obs else None
        self.reward_scaler = (RewardScaler(cfg.gamma, cfg.clip_reward) if cfg.norm_reward
                              else None)  # fmt: skip
        sde = None
        if self.learner.sde is not None and self.learner.log_std is not None:  # (L: its rows)
            sde = ExplorationMatrices(int(self.learner.log_std.shape[0]),
                                      self.learner.head.out_dim, cfg.sde_sample_freq)  # fmt: skip
        self.acting = PPOActing(action_space, self._acting_input, self.rng, sde)
        self.acting.follow(self.learner.policy())

    def learner_config(self) -> PPOConfig:
        """The :class:`PPOConfig` the learner, the rollout and the normalisers are built with:
        the agent's own (A2C's is its config's :meth:`~rlkit.agents.ppo.config.A2CConfig.ppo`)."""
        return self.config

    def python_networks(self) -> dict:
        """The networks of one's own given as Python objects (saved in Keras' format)."""
        networks = self.learner.networks
        models = {"actor": getattr(networks.policy_network, "model", None),
                  "critic": getattr(networks.value_network, "model", None),
                  "torso": getattr(networks, "torso", None)}  # fmt: skip
        return {k: m for k, m in models.items() if getattr(self.config, k) == GIVEN_IN_PYTHON}

    # -- the parts' public faces -------------------------------------------------------------
    @property
    def policy(self):
        """The policy network (``.model``: a :class:`~rlkit.agents.ppo.networks.TanhMLP`, or
        the shared torso's policy head)."""
        return self.learner.policy_network

    @property
    def value(self):
        """The value network (``.model``: a :class:`~rlkit.agents.ppo.networks.TanhMLP`, or
        the shared torso's value head)."""
        return self.learner.value_network

    @property
    def log_std(self) -> tf.Variable | None:
        """The Gaussian's log std ``[A]`` (Box actions); None for Discrete."""
        return self.learner.log_std

    @property
    def pipeline(self):
        """The :class:`~rlkit.learn.gradients.UpdatePipeline` over both networks."""
        return self.learner.pipeline

    @property
    def num_updates(self) -> int:
        """Updates run so far (one per full rollout)."""
        return self.learner.num_updates

    # -- acting ------------------------------------------------------------------------------
    def act(self, obs, explore: bool = True, action_masks=None) -> int | np.ndarray:
        """Sample ``a ~ pi(.|s)`` (``explore=True``) or act as evaluation does
        (``explore=False``): greedily (``argmax`` of the logits, each dimension's for
        MultiDiscrete, or the Gaussian's mean clipped to the bounds), or, with
        ``deterministic_eval`` False, sampled from the ``evaluate`` generator. One
        observation (one action) or a batch ``[N, ...]`` (``N`` actions).

        ``action_masks`` (an agent made with ``action_masks``): the valid actions, bool
        ``[(N,) width]`` (:attr:`action_mask_width`); an exploring act's masks are kept with
        the step in the rollout. None: every action valid."""
        if action_masks is not None and not self.action_mask_width:
            raise UsageError(f"this {self.name} agent was made without action_masks: make it "
                             "with action_masks=True to act with masks")  # fmt: skip
        stochastic = not explore and not self.deterministic_eval
        rng = self.eval_rng if stochastic else None
        try:
            action = self.acting.act(obs, explore or stochastic, self.num_steps, action_masks,
                                     rng)  # fmt: skip
        except (ValueError, IndexError, KeyError, TypeError) as exc:
            raise self.unfit_observation(obs, exc) from None
        if explore and self.action_mask_width:
            self._acted_masks = None if action_masks is None else np.asarray(action_masks, bool)
        return action

    def greedy_actions(self, obs, action_masks=None) -> int | np.ndarray:
        """The greedy action(s), whatever ``deterministic_eval`` says (the export's check);
        ``action_masks`` as :meth:`act` takes them."""
        return self.acting.act(obs, False, self.num_steps, action_masks)

    def sample_noise_spec(self) -> tuple[str, int] | None:
        """``(distribution, width)`` of the noise :meth:`act_with_noise` takes per
        observation: ``"uniform"`` in (0, 1), one per logit (Discrete: ``n``; MultiDiscrete:
        ``sum(nvec)``), or ``"normal"`` (standard), one per action dimension (Box). None
        with gSDE (``use_sde``): its draws come from matrices held across steps, so its
        export has the greedy ``action`` and no ``sample``."""
        if self.acting.gsde is not None:
            return None
        return self.acting.noise_spec(self.learner.head.out_dim)

    def sample_noise_rule(self) -> str:
        """How the export's ``sample`` turns :meth:`sample_noise_spec`'s noise into an action
        (the metadata's words)."""
        spec = self.sample_noise_spec()
        if spec is not None and spec[0] == "normal":
            return "clip(mean + std * noise), noise standard normal, one per action dimension"
        return ("argmax(logits + gumbel), gumbel = -log(-log u) of the uniforms u in (0, 1), "
                "one per logit (each action dimension's slice for MultiDiscrete)")  # fmt: skip

    def act_with_noise(self, obs, noise, action_masks=None) -> int | np.ndarray:
        """A sample of the policy drawn from the given ``noise`` (``[(N,) width]``, see
        :meth:`sample_noise_spec`), touching none of the agent's generators: what the
        export's ``sample`` signature returns for the same observation and noise
        (:meth:`~rlkit.agents.ppo.acting.PPOActing.act_with_noise`)."""
        if self.acting.gsde is not None:
            raise UsageError(
                "act_with_noise: a gSDE policy (use_sde) draws from exploration matrices "
                "held across steps, not from per-step noise; use act()"
            )
        try:
            return self.acting.act_with_noise(obs, noise, action_masks)
        except (ValueError, IndexError, KeyError, TypeError) as exc:
            raise self.unfit_observation(obs, exc) from None

    def noise_logits(self, obs, action_masks=None) -> np.ndarray:
        """Discrete and MultiDiscrete: the logits ``[N, outputs]`` that
        :meth:`act_with_noise` perturbs, the masked ones ``-inf`` (the export check's tie
        rule reads them)."""
        out = self.acting.snapshot.forward(self.acting.encode(obs))
        return out if action_masks is None else np.where(action_masks, out, -np.inf)

    def _acting_input(self, obs) -> np.ndarray:
        """Encoded observations as the policy takes them (normalised with ``norm_obs``)."""
        x = np.asarray(self.encode(obs))  # (vector observations: one array)
        return x if self.obs_norm is None else self.obs_norm(x)

    # -- learning ----------------------------------------------------------------------------
    def experience_memory(self) -> Rollout:  # type: ignore[override]
        return self.rollout

    def observe_first(self, obs, streams: Iterable[int] | None = None) -> None:
        """Episodes begin at ``obs`` (see :meth:`Agent.observe_first`); the first call fixes
        the number of streams ``N``, checked against ``batch_size``."""
        first = self.rollout.num_streams == 0
        super().observe_first(obs, streams)
        if first:
            problem = self.learner.config.check_num_envs(self.rollout.num_streams)
            if problem:
                raise UsageError(problem)
        self._observe_rows(obs)

    def observe_next(self, action, reward, next_obs, terminated, truncated) -> None:
        """One step of each stream (:meth:`Agent.observe_next`); with ``reward_clip`` the
        reward is stored clipped, then with ``norm_reward`` scaled (SB3's order: the Atari
        wrapper's clip, then VecNormalize), with ``norm_obs`` the next observations feed the
        running statistics."""
        reward = clip_rewards(reward, self.reward_clip)
        if self.reward_scaler is not None:
            single = np.ndim(reward) == 0
            ended = np.logical_or(terminated, truncated)
            scaled = self.reward_scaler(np.atleast_1d(reward), np.atleast_1d(ended))
            reward = scaled[0] if single else scaled
        if self.action_mask_width:  # the masks the step's action was drawn under
            masks = self._acted_masks
            if masks is None:  # (acted without masks: every action was valid)
                masks = np.ones((np.size(reward), self.action_mask_width), bool)
            self.rollout.put_masks(masks)
            self._acted_masks = None
        super().observe_next(action, reward, next_obs, terminated, truncated)
        self._observe_rows(next_obs)

    def _observe_rows(self, obs) -> None:
        if self.obs_norm is not None:
            rows = np.asarray(self.encode(obs))  # (vector observations: one array)
            self.obs_norm.observe(rows.reshape(-1, self.obs_format.size))

    def stored_step(self, action, reward) -> tuple[Any, Any]:
        return self.acting.stored_actions(action), reward

    def stored_steps(self, actions, rewards) -> tuple[np.ndarray, np.ndarray]:
        return self.acting.stored_actions(actions), np.asarray(rewards, np.float32)

    def update(self) -> dict[str, float] | None:
        """One PPO update when every stream has its ``n_steps`` steps (else None): its
        metrics (:meth:`PPOLearner.learn`). The rollout is empty afterwards."""
        if not self.rollout.full:
            return None
        batch = self.rollout.batch()
        if self.obs_norm is not None:  # (the statistics acting used for this rollout)
            batch = batch._replace(obs=self.obs_norm(batch.obs),
                                   next_obs=self.obs_norm(batch.next_obs))  # fmt: skip
        metrics, _ = self.learner.learn(batch, self.num_steps, self.minibatch_rng,
                                        self.rollout.action_masks)  # fmt: skip
        self.rollout.clear()
        if self.acting.gsde is not None:  # (a rollout starts: new matrices, SB3's reset_noise)
            self.acting.gsde.restart()
        if self.obs_norm is not None:
            self.obs_norm.freeze()
        self.acting.follow(self.learner.policy())
        return metrics

    # -- persistence -------------------------------------------------------------------------
    def checkpoint_variables(self) -> dict[str, list]:
        groups = self.learner.variables()
        if self.obs_norm is not None:  # (the statistics in use: a saved model acts alike)
            groups["obs_norm"] = self.obs_norm.variables()
        return groups

    def state(self) -> dict[str, dict[str, Any]]:
        tree = super().state()
        tree["counters"]["num_updates"] = self.num_updates
        tree["rngs"].update(explore=self.rng, minibatch=self.minibatch_rng)
        if not self.deterministic_eval:  # (greedy evaluation draws nothing)
            tree["rngs"]["evaluate"] = self.eval_rng
        tree["memory"]["rollout"] = self.rollout
        if self.obs_norm is not None:
            tree["memory"]["obs_rms"] = self.obs_norm
        if self.reward_scaler is not None:
            tree["memory"]["reward_scaler"] = self.reward_scaler
        if self.acting.gsde is not None:
            tree["memory"]["gsde"] = self.acting.gsde
        tree["optimizer"].update(self.learner.state()["optimizer"])
        return tree

    def load_scalars(self, counters: dict[str, int], extra: dict[str, Any]) -> None:
        super().load_scalars(counters, extra)
        self.learner.num_updates = int(counters["num_updates"])

    def refresh_policy(self) -> None:
        """Acting follows the weights now in the variables (after the compiled loop's chunk
        updated them)."""
        self.learner.refresh()
        self.acting.follow(self.learner.policy())

    def after_restore(self) -> None:
        """Acting follows the weights now in the variables."""
        if self.obs_norm is not None:
            self.obs_norm.refresh()
        self.refresh_policy()
