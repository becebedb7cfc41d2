"""Every seed rlkit derives from a run's seed, in one place, each under a name.

A run has one seed ``s``. Each consumer of randomness gets its own stream so that,
e.g., exploring more does not change which minibatches are sampled. The numbers are
those rlkit has always used (pinned by tests/integration/test_pinned.py); change one and every
seeded result changes.

- numpy generators: ``np.random.default_rng([s, k])`` with ``k`` from :data:`STREAMS`
  (``default_rng(s)`` alone is what gymnasium seeds the environment with, so no
  stream of ours uses it, except REINFORCE's episode store which never samples);
- network initialisers: ``s * 1000 + offset`` per network (:func:`network_seed`), and
  within a network one seed per layer (see :func:`rlkit.networks.builders.dense`);
- environment resets: training ``s``; the i-th evaluation during training
  ``s + 1_000_000 + 1000 i``; the final evaluation ``s + 2_000_000``; a training env
  that could not be restored from a checkpoint restarts at ``s + step``.
"""

from __future__ import annotations

import numpy as np

#: numpy generator streams: name -> the second word of ``default_rng([seed, word])``.
#: "explore": epsilon-greedy and random actions, TD3's target smoothing; "noise": DDPG's
#: exploration noise; "sample": REINFORCE's action sampling (the same word as "noise":
#: no agent has both); "replay": minibatch sampling; "evaluate": DQN's eval_epsilon.
STREAMS = {"explore": 1, "noise": 2, "sample": 2, "replay": 3, "evaluate": 4}

#: network -> offset of its initialiser seeds within ``seed * 1000 + [0, 1000)``
NETWORKS = {"q": 0, "actor": 0, "policy": 0, "critic": 400, "value": 500}
#: twin critics (TD3) start this far apart
CRITIC_STRIDE = 150

#: IQN's sampled fractions: use -> offset of its ``keras.random.SeedGenerator`` seed within
#: ``seed * 1000 + [0, 1000)`` ("learn": the loss's tau, tau' and K draws; "act": exploring;
#: "evaluate": greedy evaluation, so that evaluating never changes what training draws)
FRACTIONS = {"learn": 701, "act": 702, "evaluate": 703}

EVAL_OFFSET = 1_000_000
EVAL_STRIDE = 1_000
FINAL_EVAL_OFFSET = 2_000_000


def generator(seed: int, stream: str) -> np.random.Generator:
    """The numpy generator of ``stream`` (a key of :data:`STREAMS`) for run seed ``seed``."""
    return np.random.default_rng([int(seed), STREAMS[stream]])


def stream_seed(seed: int, stream: str) -> list[int]:
    """What :func:`generator` seeds ``default_rng`` with (for components that build their own)."""
    return [int(seed), STREAMS[stream]]


def network_seed(seed: int, network: str, index: int = 0) -> int:
    """First initialiser seed of ``network`` (``index``: which of twin critics)."""
    stride = CRITIC_STRIDE * index if network == "critic" else 0
    return int(seed) * 1000 + NETWORKS[network] + stride


def fraction_seed(seed: int, use: str) -> int:
    """Seed of IQN's fraction generator for ``use`` (a key of :data:`FRACTIONS`)."""
    return int(seed) * 1000 + FRACTIONS[use]


def eval_seed(seed: int, evaluation: int) -> int:
    """Reset seed of the ``evaluation``-th (0-based) greedy evaluation during training."""
    return int(seed) + EVAL_OFFSET + EVAL_STRIDE * int(evaluation)


def final_eval_seed(seed: int) -> int:
    """Reset seed of the evaluation of the final (and best) model at the end of a run."""
    return int(seed) + FINAL_EVAL_OFFSET


def restart_seed(seed: int, step: int) -> int:
    """Reset seed of a training env rebuilt on resume (its pickled state was not kept)."""
    return int(seed) + int(step)
