"""The hook interface the training loop calls, what a hook sees of the loop
(:class:`LoopContext`), and an adapter for plain callbacks."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from rlkit.core.errors import UsageError

if TYPE_CHECKING:  # (annotations only: the loop imports the hooks, not the reverse)
    from rlkit.run.metrics import MetricsLogger
    from rlkit.run.state import TrainHistory
    from rlkit.run.trainer_base import TrainerBase


class LoopContext:
    """What a hook sees of the loop (the same object at every call): ``step`` (the agent's
    ``num_steps``; the compiled loop shows each episode at the step it ended), ``episodes``
    (episodes ended so far, over all sessions), ``agent``, ``env`` (the training env),
    ``history`` (:class:`~rlkit.run.state.TrainHistory`), ``logger``
    (:class:`~rlkit.run.metrics.MetricsLogger`: ``metrics.csv`` rows and TensorBoard
    scalars), ``seed``; ``stop_requested()`` and ``request_stop()``. What a hook needs
    beyond it (a folder, an env of its own) it is given when it is made."""

    __slots__ = ("_loop", "agent", "env", "history", "logger", "seed")

    def __init__(self, loop: TrainerBase) -> None:
        self._loop = loop
        self.agent = loop.agent
        self.env = loop.env
        self.history: TrainHistory = loop.history
        self.logger: MetricsLogger = loop.logger
        self.seed: int = loop.seed

    @property
    def step(self) -> int:
        return self._loop.step

    @property
    def episodes(self) -> int:
        return self._loop.state.episodes

    def stop_requested(self) -> bool:
        return self._loop.stop_requested()

    def request_stop(self) -> None:
        self._loop.request_stop()


class Hook:
    """Something the training loop calls as it runs; every method is optional.

    The loop calls, in this order within one step of the environment(s): ``on_update``
    when the agent ran updates, ``on_episode`` (and ``on_game``) for each episode that
    ended, then ``on_step`` once; ``on_start`` before the first step of each
    :meth:`~rlkit.run.loop.Trainer.run` and ``on_end`` after its last (also after a stop
    request). ``on_step`` returning False stops training.

    A hook with state of its own (a counter, a best score) returns it from :meth:`state`
    (JSON-serialisable) and takes it back in :meth:`load_state`: a checkpoint keeps it
    under the hook's :attr:`state_key`, so that a resumed run's hooks go on exactly as an
    uninterrupted run's (pass the same kinds of hooks to the resume).
    """

    @property
    def state_key(self) -> str:
        """The name a checkpoint keeps this hook's state under (default: its class's name;
        two hooks of one class that both keep state need keys of their own)."""
        return type(self).__qualname__

    def state(self) -> dict[str, Any]:
        """What a checkpoint keeps of this hook (JSON-serialisable; empty: nothing)."""
        return {}

    def load_state(self, state: dict[str, Any]) -> None:
        """Take back what :meth:`state` returned (on resume, before ``on_start``)."""

    def on_start(self, loop: LoopContext) -> None:
        """Before the first step of a :meth:`~rlkit.run.loop.Trainer.run` call."""

    def on_update(self, loop: LoopContext, metrics: dict[str, float]) -> None:
        """The agent's update ran and returned ``metrics`` (finite values)."""

    def on_episode(self, loop: LoopContext, episode_return: float, length: int) -> None:
        """An episode ended (``loop.episodes`` already counts it)."""

    def on_game(self, loop: LoopContext, game_return: float, length: int) -> None:
        """A whole game ended (Atari in training, where a lost life ends an episode)."""

    def on_step(self, loop: LoopContext, before: int, info: dict[str, Any]) -> bool | None:
        """The step count went from ``before`` to ``loop.step``; False stops training.

        ``info`` holds ``episode_return``/``episode_length`` when an episode ended,
        ``metrics`` when an update ran, ``eval`` after an evaluation; a hook may add to it
        for the hooks after it.
        """

    def on_end(self, loop: LoopContext) -> None:
        """After the last step of a :meth:`~rlkit.run.loop.Trainer.run` call."""


def hook_states(hooks: Iterable[Hook]) -> dict[str, dict[str, Any]]:
    """``{state_key: state}`` of the hooks that keep state; ValueError when two share a
    key."""
    states: dict[str, dict[str, Any]] = {}
    for hook in hooks:
        state = hook.state()
        if not state:
            continue
        if hook.state_key in states:
            raise ValueError(
                f"two hooks keep state under {hook.state_key!r}: give one a state_key of its own"
            )
        states[hook.state_key] = state
    return states


def load_hook_states(hooks: Iterable[Hook], states: dict[str, dict[str, Any]]) -> None:
    """Give each hook the state a checkpoint kept under its key (a hook it kept nothing
    for starts afresh)."""
    for hook in hooks:
        if hook.state_key in states:
            hook.load_state(states[hook.state_key])


#: ``callback(step, info, history)`` -> False to stop (the form ``rlkit.train`` takes)
Callback = Callable[[int, dict[str, Any], "TrainHistory"], "bool | None"]


class CallbackHook(Hook):
    """A plain ``callback(step, info, history)`` as a hook; ``info["logger"]`` is the
    loop's :class:`~rlkit.run.metrics.MetricsLogger` (``logger.scalars`` logs custom values)."""

    def __init__(self, callback: Callback) -> None:
        self.callback = callback

    def on_step(self, loop: LoopContext, before: int, info: dict[str, Any]) -> bool | None:
        info["logger"] = loop.logger
        return self.callback(loop.step, info, loop.history)


def check_hooks(hooks: Iterable[Hook]) -> list[Hook]:
    """``hooks`` as a list, each a :class:`Hook`; UsageError in one line for anything else
    (a number, a string, an object that is not a Hook, a plain function: that is a
    ``callback``), before anything is made."""
    wanted = "hooks must be a list of rlkit.run.hooks.Hook objects"
    if isinstance(hooks, str | bytes) or not isinstance(hooks, Iterable):
        raise UsageError(f"{wanted}, got {_a(hooks)}")
    hooks = list(hooks)
    for i, hook in enumerate(hooks):
        if isinstance(hook, Hook):
            continue
        if callable(hook) and not isinstance(hook, type):
            raise UsageError(
                f"hooks[{i}] is {_a(hook)}, not an rlkit.run.hooks.Hook: a function of (step, "
                "info, history) is a callback (rlkit.train(..., callback=f)), or make it a "
                "Hook's on_step"
            )
        raise UsageError(
            f"hooks[{i}] is {_a(hook)}, not an rlkit.run.hooks.Hook: subclass Hook and "
            "override the methods you need (on_start, on_step, on_episode, on_end, ...)"
        )
    return hooks


def check_callbacks(callbacks: Iterable[Callback]) -> list[Callback]:
    """``callbacks`` as a list, each a function of ``(step, info, history)``; UsageError in
    one line for anything else (a :class:`Hook` goes in ``hooks=``)."""
    wanted = "callbacks must be a list of functions of (step, info, history)"
    if isinstance(callbacks, str | bytes) or not isinstance(callbacks, Iterable):
        raise UsageError(f"{wanted}, got {_a(callbacks)}")
    callbacks = list(callbacks)
    for i, callback in enumerate(callbacks):
        if isinstance(callback, Hook):
            raise UsageError(f"callbacks[{i}] is a Hook: pass it in hooks=[...]")
        if not callable(callback) or isinstance(callback, type):
            raise UsageError(
                f"callbacks[{i}] is {_a(callback)}, not a function of (step, info, history)"
            )
    return callbacks


def _a(value: Any) -> str:
    """``"an int"``, ``"a str"``: what a value is, in a message."""
    name = "a function" if callable(value) and not isinstance(value, type) else type(value).__name__
    if name.startswith("a "):
        return name
    return f"an {name}" if name[0].lower() in "aeiou" else f"a {name}"
