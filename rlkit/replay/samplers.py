"""Which stored transitions a minibatch holds: samplers, apart from the storage.

A replay memory (:mod:`rlkit.replay.memory`) stores transitions and gathers the slots it
is given; a sampler chooses the slots (Dopamine keeps ``replay_buffer.py``,
``samplers.py`` and ``sum_tree.py`` apart the same way). Every sampler has the protocol
of :class:`Sampler`: the memory tells it which slots were written (new transitions), asks
it for slots and their importance weights, and the agent hands back what the learner
measured of them (``update_priorities``: a no-op for the uniform sampler).

:class:`UniformSampler` draws exactly as rlkit always has (``rng.integers(0, size,
shape)`` from the memory's generator), so seeded runs are unchanged.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Sampler(Protocol):
    """The protocol of a replay sampler (slots are ``[0, capacity)``, filled ones
    ``[0, size)``)."""

    def sample(
        self, rng: np.random.Generator, size: int, shape: tuple[int, ...]
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(indices, weights)``: int64 slots of shape ``shape`` in ``[0, size)`` and their
        float32 importance weights (ones for uniform sampling)."""
        ...

    def weights(self, slots: np.ndarray, size: int) -> np.ndarray:
        """The importance weights of ``slots`` as :meth:`sample` gives them (float32, the
        slots' shape; e.g. again after some of a draw were redrawn)."""
        ...

    def written(self, slots: np.ndarray) -> None:
        """New transitions were just written to ``slots`` (int ``[N]``)."""
        ...

    def update_priorities(self, slots: np.ndarray, td_errors) -> None:
        """What the learner measured of the transitions in ``slots`` (any shape; the TD
        errors in the same shape, a numpy array or a tensor)."""
        ...

    def state_dict(self) -> dict[str, np.ndarray]:
        """What a checkpoint keeps of the sampler (arrays)."""
        ...

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        """Restore what :meth:`state_dict` returned."""
        ...


class UniformSampler:
    """Uniform sampling with replacement (DQN3.0's): every filled slot equally likely,
    every weight 1. Holds no state; ``update_priorities`` ignores what it is given (a TD
    error tensor is never read back)."""

    def sample(
        self, rng: np.random.Generator, size: int, shape: tuple[int, ...]
    ) -> tuple[np.ndarray, np.ndarray]:
        return rng.integers(0, size, size=shape), np.ones(shape, np.float32)

    def weights(self, slots: np.ndarray, size: int) -> np.ndarray:
        return np.ones(np.shape(slots), np.float32)

    def written(self, slots: np.ndarray) -> None:
        pass

    def update_priorities(self, slots: np.ndarray, td_errors) -> None:
        pass

    def state_dict(self) -> dict[str, np.ndarray]:
        return {}

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        pass
