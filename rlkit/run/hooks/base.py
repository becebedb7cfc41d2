"""The hook interface the training loop calls, and an adapter for plain callbacks."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (annotations only: the loop imports the hooks, not the reverse)
    from rlkit.run.loop import Trainer
    from rlkit.run.state import TrainHistory


class Hook:
    """Something the training loop calls as it runs; every method is optional.

    The loop calls, in this order within one step of the environment(s): ``on_update``
    when the agent ran updates, ``on_episode`` (and ``on_game``) for each episode that
    ended, then ``on_step`` once; ``on_start`` before the first step of each
    :meth:`~rlkit.run.loop.Trainer.run` and ``on_end`` after its last (also after a stop
    request). ``on_step`` returning False stops training.
    """

    def on_start(self, loop: Trainer) -> None:
        """Before the first step of a :meth:`~rlkit.run.loop.Trainer.run` call."""

    def on_update(self, loop: Trainer, metrics: dict[str, float]) -> None:
        """The agent's update ran and returned ``metrics`` (finite values)."""

    def on_episode(self, loop: Trainer, episode_return: float, length: int) -> None:
        """An episode ended (``loop.state.episodes`` already counts it)."""

    def on_game(self, loop: Trainer, game_return: float, length: int) -> None:
        """A whole game ended (Atari in training, where a lost life ends an episode)."""

    def on_step(self, loop: Trainer, before: int, info: dict[str, Any]) -> bool | None:
        """The step count went from ``before`` to ``loop.step``; False stops training.

        ``info`` holds ``episode_return``/``episode_length`` when an episode ended,
        ``metrics`` when an update ran, ``eval`` after an evaluation; a hook may add to it
        for the hooks after it.
        """

    def on_end(self, loop: Trainer) -> None:
        """After the last step of a :meth:`~rlkit.run.loop.Trainer.run` call."""


#: ``callback(step, info, history)`` -> False to stop (the form ``rlkit.train`` takes)
Callback = Callable[[int, dict[str, Any], "TrainHistory"], "bool | None"]


class CallbackHook(Hook):
    """A plain ``callback(step, info, history)`` as a hook; ``info["logger"]`` is the
    loop's :class:`~rlkit.run.metrics.MetricsLogger` (``logger.scalars`` logs custom values)."""

    def __init__(self, callback: Callback) -> None:
        self.callback = callback

    def on_step(self, loop: Trainer, before: int, info: dict[str, Any]) -> bool | None:
        info["logger"] = loop.logger
        return self.callback(loop.step, info, loop.history)
