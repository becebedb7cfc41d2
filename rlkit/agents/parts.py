"""The two parts every rlkit agent is joined from: an acting rule and a learner.

- :class:`Acting` chooses actions from the policy it reads: epsilon-greedy (DQN),
  exploration noise (DDPG, TD3), sampling (REINFORCE). It owns what acting draws from
  and nothing of learning; the agent hands it the learner's newest policy after updates.
- :class:`Learner` owns the networks, the compiled update over the update pipelines
  (:mod:`rlkit.learn.gradients`) and the targets: ``learn(batch)`` runs one block of
  updates and returns its metrics and the TD errors (the feedback path to the replay's
  sampler), ``policy()`` is the snapshot acting reads.

The agent (:class:`~rlkit.agents.DQN`, :class:`~rlkit.agents.DDPG`,
:class:`~rlkit.agents.Reinforce`) joins the two with its memory and its config:
``observe`` writes the memory, ``update()`` samples it for the learner when updates are
due and gives acting the new policy (Acme's actor/learner split, without its builder).
The agent passes its step count to both (``act(obs, explore, step)``, ``learn(batch,
step)``, ``diagnostics(step)``): schedules and warm-ups read it there, with no call back
into the agent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from rlkit.replay.memory import Batch


class Acting:
    """An acting rule: ``act(obs, explore, step)`` from the policy last given to
    :meth:`follow`.

    ``obs`` is one observation (one action back) or a batch ``[N, ...]`` (``N`` actions).
    With ``explore`` False it acts as evaluation does (greedy, or an evaluation epsilon).
    ``step`` is the agent's environment step count (exploration schedules, warm-up).
    """

    def act(self, obs, explore: bool = True, step: int = 0) -> Any:
        raise NotImplementedError

    def follow(
        self,
        policy: Callable[[Any], np.ndarray],
        exploring: Callable[[Any], np.ndarray] | None = None,
    ) -> None:
        """Read ``policy`` from now on (the learner's snapshot after its updates), and
        ``exploring`` while exploring where the learner gives one (a noisy network's fresh
        noise on every call), else ``policy``."""
        self.policy = policy
        self.exploring = policy if exploring is None else exploring

    def episodes_ended(self, indices: np.ndarray | None) -> None:
        """Streams ``indices`` (None: the one environment) ended an episode (e.g. DDPG's
        noise restarts)."""

    def diagnostics(self, step: int) -> dict[str, float]:
        """Scalars worth logging at step ``step`` (e.g. ``{"epsilon": 0.1}``)."""
        return {}

    def state(self) -> dict[str, dict[str, Any]]:
        """Acting's part of a checkpoint (e.g. DDPG's noise generator and OU state), in the
        tree of :meth:`rlkit.agents.base.Agent.state`."""
        return {}

    def load_scalars(self, counters: dict[str, int], extra: dict[str, Any]) -> None:
        """Take back the counters and extra values :meth:`state` gave."""


class Learner:
    """A learner: networks, the compiled update and the targets.

    Attributes:
        num_updates: gradient updates run so far (a checkpoint keeps it).
    """

    num_updates: int = 0

    def learn(self, batch: Batch, step: int) -> tuple[dict[str, float], Any]:
        """One block of updates on ``batch`` (leading shape ``[K, B]``: ``K`` updates of
        ``B`` transitions) at environment step ``step`` (schedules): the block's metrics,
        and each example's TD error ``[K, B]`` (a tensor, for the replay's sampler; None
        for a learner without one)."""
        raise NotImplementedError

    def policy(self) -> Callable[[Any], np.ndarray]:
        """What acting reads: encoded observation(s) -> network output (Q-values, the
        action, logits), e.g. a numpy copy of an MLP or one compiled call."""
        raise NotImplementedError

    def after_blocks(self, before: int, now: int) -> None:
        """After every ``update()``'s blocks, with the step counts it spans (e.g. DQN's
        target copies every ``target_update_freq`` steps)."""

    def exploring_policy(self) -> Callable[[Any], np.ndarray] | None:
        """What acting reads while exploring, where it differs from :meth:`policy` (None:
        the same)."""
        return None

    def weights_changed(self) -> None:
        """The variables were written from outside the update (a load, a checkpoint):
        :meth:`policy` must read them again."""

    def rewards_stored(self, rewards) -> None:
        """The rewards just stored (clipped), one or ``[N]`` (e.g. DQN3.0's running r_max)."""

    def variables(self) -> dict[str, list]:
        """``{group: [variables]}``: every network's weights, targets and EMA shadows
        included (the agent's ``checkpoint_variables``)."""
        raise NotImplementedError

    def state(self) -> dict[str, dict[str, Any]]:
        """The learner's part of a checkpoint besides the weights, in the tree of
        :meth:`rlkit.agents.base.Agent.state` (``optimizer``, ``rngs``, ``counters``,
        ``extra``); ``num_updates`` is written by the agent."""
        return {}

    def load_scalars(self, counters: dict[str, int], extra: dict[str, Any]) -> None:
        """Take back the counters and extra values :meth:`state` gave."""

    def diagnostics(self, step: int) -> dict[str, float]:
        """Scalars worth logging at step ``step`` (e.g. ``{"learning_rate": 1e-4}``)."""
        return {}


class Parts(NamedTuple):
    """What an off-policy agent's ``build`` hands over (Acme's builder, as a value).

    learner: the :class:`Learner`; acting: the :class:`Acting` rule;
    action_spec: ``(shape, dtype)``, how the replay stores one action.
    """

    learner: Learner
    acting: Acting
    action_spec: tuple[tuple[int, ...], Any]
