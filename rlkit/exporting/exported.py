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
#: a TFLite flatbuffer's file identifier, at bytes 4-8 (tensorflow/lite/schema/schema.fbs)
TFLITE_IDENTIFIER = b"TFL3"
#: what a child process runs to try a ``policy.tflite`` whose export recorded no size (an
#: older rlkit's): load it and run each signature once on zeros. A damaged flatbuffer can
#: make the interpreter read past its end and crash the process (SIGSEGV), not raise.
TFLITE_TRIAL = """
import sys, warnings
import numpy as np
warnings.simplefilter("ignore")
import tensorflow as tf
interpreter = tf.lite.Interpreter(model_path=sys.argv[1])
for name in interpreter.get_signature_list():
    runner = interpreter.get_signature_runner(name)
    runner(**{k: np.zeros([max(int(d), 1) for d in v["shape_signature"]], v["dtype"])
              for k, v in runner.get_input_details().items()})
"""
#: what a refusal of a damaged ``policy.tflite`` tells the user to do
EXPORT_AGAIN = "export the policy again (rlkit export RUN_DIR --format tflite)"


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


def tflite_record(data: bytes) -> dict[str, Any]:
    """What an export's metadata records of its ``policy.tflite`` (``data``): its size and
    SHA-256, which :func:`check_tflite` compares before an interpreter reads the file."""
    import hashlib

    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def check_tflite(path: str | Path, metadata: dict[str, Any]) -> None:
    """UsageError in one line unless the export in ``path`` holds a whole ``policy.tflite``:
    there, a flatbuffer (``TFL3`` at bytes 4-8, its root table inside the file) of the size
    and SHA-256 the export recorded (:func:`tflite_record`). An export that recorded none
    (an older rlkit's) is tried in a child process (:data:`TFLITE_TRIAL`): a file that
    crashes the interpreter (a cut-short one can: exit 139) is refused, not loaded here.
    Imports no TensorFlow."""
    file = Path(path) / TFLITE_FILE
    try:
        size = file.stat().st_size
        with open(file, "rb") as f:
            head = f.read(8)
    except FileNotFoundError:
        raise UsageError(f"{path} holds no {TFLITE_FILE}: {EXPORT_AGAIN}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {file}: {exc.strerror}") from None
    if len(head) < 8 or head[4:8] != TFLITE_IDENTIFIER:
        raise UsageError(
            f"{file} is not a TFLite model (no 'TFL3' identifier at bytes 4-8): {EXPORT_AGAIN}"
        )
    if int.from_bytes(head[:4], "little") >= size:  # the root table's offset
        raise UsageError(f"{file} is cut short (its root table lies past its end): {EXPORT_AGAIN}")
    recorded = metadata.get("tflite") or {}
    if "bytes" in recorded:
        if size != recorded["bytes"]:
            raise UsageError(
                f"{file} holds {size:,} bytes where the export wrote {recorded['bytes']:,}: "
                f"it was cut short or changed; {EXPORT_AGAIN}"
            )
        if tflite_record(file.read_bytes())["sha256"] != recorded.get("sha256", ""):
            raise UsageError(
                f"{file} changed since it was exported (its SHA-256 differs): {EXPORT_AGAIN}"
            )
        return
    problem = tflite_bounds(file.read_bytes())
    if problem is not None:
        raise UsageError(f"{file} is cut short or damaged ({problem}): {EXPORT_AGAIN}")
    crash = _trial_crash(file)
    if crash is not None:
        raise UsageError(
            f"{file} crashes the TFLite interpreter ({crash}): the file is damaged; {EXPORT_AGAIN}"
        )


def tflite_bounds(data: bytes) -> str | None:
    """What in a TFLite flatbuffer ``data`` lies past its end (None: nothing), read without
    TensorFlow: the root ``Model`` table and its vtable, its ``buffers`` vector and each
    ``Buffer``'s ``data`` vector (the weights) or its ``offset``/``size`` (models over 2 GB
    keep weights after the flatbuffer). A file cut short loses its buffers first: the
    interpreter then reads past the end, and whether it crashes depends on what the process
    has mapped there (a trial in a child process can miss it)."""
    size = len(data)

    def u32(at: int) -> int:
        if not 0 <= at <= size - 4:
            raise IndexError(at)
        return int.from_bytes(data[at : at + 4], "little")

    def field(table: int, index: int) -> int | None:
        """The position of a table's field ``index``, None when absent."""
        vtable = table - int.from_bytes(data[table : table + 4], "little", signed=True)
        if not 0 <= vtable <= size - 4:
            raise IndexError(vtable)
        vtable_size = int.from_bytes(data[vtable : vtable + 2], "little")
        slot = vtable + 4 + 2 * index
        if 4 + 2 * index >= vtable_size:
            return None
        if slot + 2 > size:
            raise IndexError(slot)
        offset = int.from_bytes(data[slot : slot + 2], "little")
        return table + offset if offset else None

    try:
        model = u32(0)
        u32(model)
        # Model's vectors: operator_codes, subgraphs, description (a string), buffers,
        # metadata_buffer, metadata, signature_defs (4-byte elements, the string's 1-byte)
        for index in range(1, 8):
            at = field(model, index)
            if at is not None:
                start = at + u32(at)
                width = 1 if index == 3 else 4
                if start + 4 + width * u32(start) > size:
                    return f"the model's table {index} ends past the file's {size:,} bytes"
        buffers_at = field(model, 4)  # Model.buffers
        if buffers_at is None:
            return None
        vector = buffers_at + u32(buffers_at)
        for i in range(u32(vector)):
            element = vector + 4 + 4 * i
            buffer = element + u32(element)
            u32(buffer)
            data_at = field(buffer, 0)  # Buffer.data: [ubyte]
            if data_at is not None:
                start = data_at + u32(data_at)
                if start + 4 + u32(start) > size:
                    return f"buffer {i}'s {u32(start):,} bytes end past the file's {size:,}"
            offset_at, size_at = field(buffer, 1), field(buffer, 2)  # Buffer.offset, .size
            if offset_at is not None and size_at is not None and offset_at + 8 <= size:
                offset = int.from_bytes(data[offset_at : offset_at + 8], "little")
                length = int.from_bytes(data[size_at : size_at + 8], "little")
                if offset > 1 and offset + length > size:
                    return f"buffer {i} lies at bytes {offset:,}-{offset + length:,} of {size:,}"
    except IndexError as exc:
        return f"a table or vector at byte {exc.args[0]:,} lies past the file's {size:,}"
    return None


def _trial_crash(file: Path) -> str | None:
    """The signal a child process running :data:`TFLITE_TRIAL` on ``file`` died of (None when
    it did not crash: a Python error is left to the load here to say)."""
    import os
    import signal
    import subprocess
    import sys

    quiet = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    try:
        done = subprocess.run([sys.executable, "-c", TFLITE_TRIAL, str(file)],
                              capture_output=True, env=quiet, timeout=600)  # fmt: skip
    except subprocess.TimeoutExpired:
        return None
    if done.returncode >= 0:
        return None
    try:
        return signal.Signals(-done.returncode).name
    except ValueError:
        return f"signal {-done.returncode}"


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
        path = Path(path)
        self.path = path
        self.metadata = read_metadata(path)
        self.format = self.metadata["format"]
        if self.format == "tflite":  # before an interpreter reads it: a damaged one crashes
            check_tflite(path, self.metadata)
        import tensorflow as tf

        self.name = self.metadata["agent"]
        self.observation_space = space_from_dict(self.metadata["observation_space"])
        self.action_space = space_from_dict(self.metadata["action_space"])
        self.inputs = self.metadata["inputs"]
        mask = self.metadata.get("action_mask")
        #: the width of the ``action_mask`` input (0: the export takes no masks), as an
        #: agent's: evaluation reads the environment's masks for it
        self.action_mask_width = int(mask["shape"][-1]) if mask else 0
        self._mask_input = mask["input"] if mask else ""
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
        arrays.update({k: _input_array(v) for k, v in extra.items()})
        if self.format == "tflite":
            return dict(self._runners[signature](**arrays))
        out = self._runners[signature](**arrays)
        return {k: v.numpy() for k, v in out.items()}

    def act(self, obs, explore: bool = False, action_masks=None):
        """The greedy action for one observation (an int, or an array of the action's shape)
        or ``[B, ...]`` for a batch. An export has no exploration: ``explore`` must be False.
        ``action_masks``: bool ``[(B,) width]``, an export that takes them
        (:attr:`action_mask_width`; all valid when not given)."""
        if explore:
            raise ValueError("an exported policy acts greedily: use the 'sample' signature")
        arrays, single = self.batch_inputs(obs)
        if self.action_mask_width:
            rows = len(next(iter(arrays.values())))
            masks = (np.ones((rows, self.action_mask_width), bool) if action_masks is None
                     else np.asarray(action_masks, bool).reshape(rows, -1))  # fmt: skip
            arrays[self._mask_input] = masks
        elif action_masks is not None:
            raise UsageError("this export takes no action masks (its agent was made without "
                             "action_masks)")  # fmt: skip
        if self.format == "tflite":
            action = self._runners["action"](**arrays)["action"]
        else:
            action = self._runners["action"](**arrays)["action"].numpy()
        if not single:
            return action
        return int(action[0]) if action.ndim == 1 else action[0]


def _input_array(value) -> np.ndarray:
    """An extra input as a signature takes it: bool kept (masks), floats float32 (PPO's and
    SAC's noise), integers int64 (REINFORCE's seed)."""
    array = np.asarray(value)
    if array.dtype.kind == "b":
        return array
    return array.astype(np.float32 if array.dtype.kind == "f" else np.int64)
