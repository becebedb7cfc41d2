"""An exported policy (a SavedModel or a TFLite flatbuffer written by ``rlkit export``) as an
object that acts like an agent: ``act(obs, explore=False)`` for one observation or a batch.

``rlkit evaluate EXPORT_DIR`` plays it with the same seeded protocol as a run's model
(:func:`rlkit.run.evaluation.episode_returns`), and the export's check compares it with
the agent it came from. The artefact itself needs only TensorFlow (docs/export.md shows
how to load it without rlkit); this wrapper adds the observation handling.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from rlkit.core.errors import UsageError
from rlkit.core.spaces import space_from_dict

#: what an export folder holds besides the artefact: the metadata, as JSON
METADATA_FILE = "rlkit_export.json"
#: the TFLite flatbuffer's name in an export folder
TFLITE_FILE = "policy.tflite"
SAVED_MODEL_FILE = "saved_model.pb"


def is_export(path: str | Path) -> bool:
    """Does ``path`` hold a policy written by ``rlkit export``?"""
    return (Path(path) / METADATA_FILE).is_file()


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The export's metadata; UsageError when it is missing or unreadable."""
    file = Path(path) / METADATA_FILE
    try:
        return json.loads(file.read_text())
    except FileNotFoundError:
        raise UsageError(f"{path} is not an rlkit export: {METADATA_FILE} is missing") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"corrupt export {path}: {METADATA_FILE}: {exc}") from None


class ExportedPolicy:
    """A loaded export: ``act(obs, explore=False)`` and the signatures by name.

    Attributes:
        metadata: the export's metadata (agent, spaces, inputs, training step...).
        format: ``"saved_model"`` or ``"tflite"``.
        observation_space, action_space: the spaces it was exported for.
        name: the agent's name (``"dqn"``...), as an agent's.
    """

    evaluation_epsilon = 0.0  # (greedy: what rlkit evaluate says it played)

    def __init__(self, path: str | Path) -> None:
        import tensorflow as tf

        path = Path(path)
        self.path = path
        self.metadata = read_metadata(path)
        self.format = self.metadata["format"]
        self.name = self.metadata["agent"]
        self.observation_space = space_from_dict(self.metadata["observation_space"])
        self.action_space = space_from_dict(self.metadata["action_space"])
        self.inputs = self.metadata["inputs"]
        try:
            if self.format == "tflite":
                with warnings.catch_warnings():  # (tf.lite.Interpreter's notice of LiteRT)
                    warnings.simplefilter("ignore")
                    interpreter = tf.lite.Interpreter(model_path=str(path / TFLITE_FILE))
                self._runners = {
                    name: interpreter.get_signature_runner(name)
                    for name in interpreter.get_signature_list()
                }
            else:
                self._loaded = tf.saved_model.load(str(path))
                self._runners = dict(self._loaded.signatures)
        except Exception as exc:  # a damaged artefact: one line
            raise UsageError(f"cannot load the export in {path}: {type(exc).__name__}: "
                             f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
                             ) from None  # fmt: skip

    @property
    def signatures(self) -> list[str]:
        return sorted(self._runners)

    def batch_inputs(self, obs) -> tuple[dict[str, np.ndarray], bool]:
        """``({input name: [B, ...] array}, single)`` from one observation or a batch in the
        environment's own terms (a dict or tuple for ``Dict`` / ``Tuple`` spaces)."""
        arrays, single = {}, False
        for name, info in self.inputs.items():
            key = info["key"]
            value = np.asarray(obs if key is None else obs[key], dtype=info["dtype"])
            single = value.ndim == len(info["shape"]) - 1
            arrays[name] = value[None] if single else value
        return arrays, single

    def run(self, signature: str, obs, **extra) -> dict[str, np.ndarray]:
        """The outputs of ``signature`` for a batch of observations (``[B, ...]`` each)."""
        arrays, _ = self.batch_inputs(obs)
        arrays.update({k: np.asarray(v, np.int64) for k, v in extra.items()})
        if self.format == "tflite":
            return dict(self._runners[signature](**arrays))
        out = self._runners[signature](**arrays)
        return {k: v.numpy() for k, v in out.items()}

    def act(self, obs, explore: bool = False):
        """The greedy action for one observation (an int, or an array of the action's shape)
        or ``[B, ...]`` for a batch. An export has no exploration: ``explore`` must be False."""
        if explore:
            raise ValueError("an exported policy acts greedily: use the 'sample' signature")
        arrays, single = self.batch_inputs(obs)
        if self.format == "tflite":
            action = self._runners["action"](**arrays)["action"]
        else:
            action = self._runners["action"](**arrays)["action"].numpy()
        if not single:
            return action
        return int(action[0]) if action.ndim == 1 else action[0]
