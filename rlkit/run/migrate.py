"""Run checkpoints of older rlkit versions, upgraded in one place.

A checkpoint's ``state.json`` (:mod:`rlkit.run.checkpoint`) holds the agent's counters and
generators and the loop's own state (``loop``: ``state``, ``history``). :func:`migrate`
turns the dict of any format rlkit wrote into the current one, as
:func:`rlkit.replay.saved.migrate` does for the replay's arrays; nothing else reads an
older layout. It is pure: the dict it is given is not changed.

Formats (``state["format"]``; absent before format 2):

1. One environment's loop kept ``episode_return`` and ``episode_length`` as plain numbers
   (one stream); the training time (``seconds``) and an evaluation cut short
   (``eval_pending``) were not recorded.
2. Every stream's return and length in lists; ``seconds`` (None: not recorded, a run
   resumed from a format-1 checkpoint reports its later sessions' time only) and
   ``eval_pending``; the ``format`` key itself.
3. The hooks keep their own state (``loop.hooks``: ``{state_key: state}``): the
   evaluation hook's counters (``evaluations``, ``best_eval``, ``best_step``,
   ``eval_pending`` as ``pending``) leave the loop state for ``hooks.EvaluationHook``,
   and ``metrics_rows`` for the run's own ``loop.run``.

A checkpoint's pickled environment (``env.pkl``) names its class by module: classes that
moved keep loading under their old names through :func:`load_pickle` (:data:`MOVED`).
"""

from __future__ import annotations

import copy
import io
import pickle
from typing import Any

#: (module, class) an older rlkit pickled -> where it lives now (issue 51's rooms)
MOVED = {
    ("rlkit.run.compiled_choice", "ProgramState"): ("rlkit.run.compiled.choice", "ProgramState"),
}


class _MovedClasses(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        return super().find_class(*MOVED.get((module, name), (module, name)))


def load_pickle(data: bytes) -> Any:
    """``pickle.loads(data)``, with the classes of :data:`MOVED` found at their new place."""
    return _MovedClasses(io.BytesIO(data)).load()


#: the format :func:`migrate` returns and new checkpoints are written in
RUN_FORMAT = 3


def migrate(state: dict[str, Any]) -> dict[str, Any]:
    """The ``state.json`` dict of a run checkpoint of any format, as format
    :data:`RUN_FORMAT` (a new dict). KeyError/TypeError/ValueError when it is no
    checkpoint state (the caller says which file is corrupt)."""
    if not isinstance(state, dict):
        raise TypeError(f"a checkpoint state is a JSON object, not {type(state).__name__}")
    state = copy.deepcopy(state)
    version = int(state.get("format", 1))
    if version > RUN_FORMAT:
        raise ValueError(f"format {version} is newer than this rlkit reads ({RUN_FORMAT})")
    loop = state["loop"]["state"]
    if version < 2:
        if not isinstance(loop["episode_return"], list):  # one stream, plain numbers
            loop["episode_return"] = [float(loop["episode_return"])]
            loop["episode_length"] = [int(loop["episode_length"])]
        loop.setdefault("seconds", None)  # not recorded
        loop.setdefault("eval_pending", False)
        loop.setdefault("obs", None)
    if version < 3:
        evaluation = {
            "evaluations": loop.pop("evaluations"),
            "best_eval": loop.pop("best_eval"),
            "best_step": loop.pop("best_step"),
            "pending": loop.pop("eval_pending"),
        }
        state["loop"]["hooks"] = {"EvaluationHook": evaluation}
        state["loop"]["run"] = {"metrics_rows": loop.pop("metrics_rows")}
    state["format"] = RUN_FORMAT
    return state
