"""SAC (discrete SAC for Discrete actions: :mod:`rlkit.agents.sac.discrete`).

An acting rule (:class:`~rlkit.agents.sac.acting.SACActing`: samples of the squashed
Gaussian policy) and a learner (:class:`~rlkit.agents.sac.learner.SACLearner`: twin critics
with EMA target shadows, the policy, the learned temperature) joined by the off-policy agent
with its replay memory (:class:`~rlkit.agents.off_policy.OffPolicyAgent`: prioritized replay
and n-step returns included)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from rlkit.agents.off_policy import OffPolicyAgent
from rlkit.agents.parts import Parts
from rlkit.agents.sac import config as sac_config
from rlkit.agents.sac.acting import SACActing
from rlkit.agents.sac.config import SACConfig
from rlkit.agents.sac.discrete import CategoricalActing, DiscreteSACLearner
from rlkit.agents.sac.learner import SACLearner
from rlkit.core.errors import UsageError
from rlkit.networks.actor_critic import ActionBounds
from rlkit.networks.custom import GIVEN_IN_PYTHON

__all__ = ["SAC"]


class SAC(OffPolicyAgent):
    """Soft Actor-Critic for bounded Box action spaces, and discrete SAC (Christodoulou
    2019) for Discrete ones.

    Args:
        observation_space: ``Box`` (flattened) or ``Discrete`` (one-hot) observations;
            images too with Discrete actions (the Nature CNN; MinAtar's torso).
        action_space: a ``Box`` with finite bounds (any shape; flattened inside), or a
            ``Discrete``.
        config: a :class:`~rlkit.agents.sac.config.SACConfig`; keyword arguments override
            its keys (``ent_coef="auto_0.1"``, ``learning_rate=1e-3``...).
        seed: seeds the weights, replay sampling, warm-up actions and the policy's draws.

    Attributes:
        learner: the :class:`SACLearner` (``actor``, ``critics``, ``log_alpha``, pipelines).
        acting: the :class:`SACActing` rule.
        bounds: the flattened action's box.
        replay: the replay memory; actions stored float32 ``[A]`` in the environment's units.
    """

    learner: SACLearner | DiscreteSACLearner
    acting: SACActing | CategoricalActing

    name = "sac"
    config_class = SACConfig
    accepts_images = True  # (Discrete actions only: check_spaces)
    check_spaces = staticmethod(sac_config.check_spaces)

    def __init__(
        self, observation_space, action_space, config=None, seed: int = 0, actor=None,
        critic=None, **overrides,
    ) -> None:  # fmt: skip
        """``actor`` / ``critic``: networks of your own for Box actions, as DDPG takes them
        (a Keras model, a builder ``(observation_space, action_space) -> keras.Model``, or an
        importable builder's name, kept in the config): the policy maps ``[B, obs]`` to
        ``[B, 2 A]`` (the mean and raw log std of ``u``), each critic ``[observation,
        action]`` to ``[B]`` or ``[B, 1]``; the target critics are EMA shadows of theirs."""
        self._networks = {"actor": actor, "critic": critic}
        for key, given in self._networks.items():
            if given is not None:
                overrides[key] = given if isinstance(given, str) else GIVEN_IN_PYTHON
        super().__init__(observation_space, action_space, config, seed, **overrides)

    def python_networks(self) -> dict:
        if self.discrete:
            return {}
        models = {"actor": self.learner.actor.model, "critic": self.learner.critics[0].model}
        return {k: m for k, m in models.items() if getattr(self.config, k) == GIVEN_IN_PYTHON}

    @property
    def discrete(self) -> bool:
        """Discrete SAC (a Discrete action space)."""
        return not hasattr(self.action_space, "low")

    def build(self, seed: int) -> Parts:
        """The learner and the acting rule, both drawing from the ``"explore"`` generator."""
        if self.discrete:
            if self.config.use_sde:
                raise UsageError(
                    f"use_sde: gSDE perturbs a Gaussian's mean and {self.action_space} is "
                    "Discrete (discrete SAC samples its softmax); leave use_sde out"
                )
            if self.config.actor or self.config.critic:
                raise UsageError(
                    "discrete SAC's networks are rlkit's (an MLP, or the Nature CNN / MinAtar "
                    "torso for images): leave actor and critic out for Discrete actions"
                )
            n = int(self.action_space.n)
            return Parts(
                DiscreteSACLearner(self.config, self.obs_format, n, seed),
                CategoricalActing(self.obs_format, n, self.config.learning_starts, self.rng),
                ((), np.int64),
            )
        self.action_shape = tuple(self.action_space.shape)
        self.bounds = ActionBounds(self.action_space.low, self.action_space.high)
        spaces = (self.observation_space, self.action_space)
        learner = SACLearner(self.config, self.obs_format, self.bounds, seed, self.rng, spaces,
                             self._networks)  # fmt: skip
        acting = SACActing(self.obs_format, self.bounds, self.action_shape,
                           self.action_space.dtype, self.config, self.rng,
                           getattr(learner.actor, "latent_dim", 0))  # fmt: skip
        return Parts(learner, acting, ((self.bounds.dim,), np.float32))

    def stored_action(self, action) -> np.ndarray:
        if self.discrete:
            return np.asarray(action, np.int64)
        return np.asarray(action, np.float32).reshape(-1)

    def stored_actions(self, actions) -> np.ndarray:
        if self.discrete:
            return np.asarray(actions, np.int64)
        return np.asarray(actions, np.float32).reshape(len(actions), -1)

    # -- a draw from given noise (the export's ``sample``) -----------------------------------
    def sample_noise_spec(self) -> tuple[str, int] | None:
        """``(distribution, width)`` of the noise :meth:`act_with_noise` takes per
        observation: ``"normal"`` (standard), one per action dimension (Box), or
        ``"uniform"`` in (0, 1), one per action (discrete SAC). None with gSDE
        (``use_sde``): its draws come from matrices held across steps, so its export has the
        greedy ``action`` and no ``sample``."""
        if not self.discrete and self.acting.gsde is not None:  # type: ignore[union-attr]
            return None
        return self.acting.noise_spec()

    def sample_noise_rule(self) -> str:
        """How the export's ``sample`` turns :meth:`sample_noise_spec`'s noise into an action
        (the metadata's words)."""
        if self.discrete:
            return ("argmax(logits + gumbel), gumbel = -log(-log u) of the uniforms u in "
                    "(0, 1), one per action")  # fmt: skip
        return ("clip(low + (tanh(mean + exp(log_std) * noise) + 1) * (high - low) / 2), "
                "noise standard normal, one per action dimension")  # fmt: skip

    def act_with_noise(self, obs, noise) -> int | np.ndarray:
        """A sample of the policy drawn from the given ``noise`` (``[(N,) width]``, see
        :meth:`sample_noise_spec`), touching none of the agent's generators: what the
        export's ``sample`` signature returns for the same observation and noise. Box:
        ``clip(from_unit(tanh(mean + exp(log_std) noise)))``; discrete:
        ``argmax(logits + gumbel(noise))``."""
        if self.sample_noise_spec() is None:
            raise UsageError(
                "act_with_noise: a gSDE policy (use_sde) draws from exploration matrices "
                "held across steps, not from per-step noise; use act()"
            )
        try:
            return self.acting.act_with_noise(obs, noise)
        except (ValueError, IndexError, KeyError, TypeError) as exc:
            raise self.unfit_observation(obs, exc) from None

    def noise_logits(self, obs) -> np.ndarray:
        """Discrete SAC: the logits ``[N, |A|]`` that :meth:`act_with_noise` perturbs (the
        export check's tie rule reads them)."""
        return np.asarray(self.acting.logits(obs))  # type: ignore[union-attr]

    # -- the parts' public faces -------------------------------------------------------------
    @property
    def alpha(self) -> float:
        """The temperature now (learned with ``ent_coef = auto``)."""
        return self.learner.alpha

    @property
    def actor(self):
        """The policy network (:class:`~rlkit.agents.sac.networks.GaussianActor`)."""
        return self.learner.actor

    @property
    def critics(self) -> list:
        """The twin critics."""
        return self.learner.critics

    def critic_target_variables(self, k: int = 0) -> list[tf.Variable]:
        """The target of critic ``k``: EMA shadows of its variables, in the same order."""
        return self.learner.critic_target_variables(k)
