"""A SavedModel's serving signatures as a TFLite flatbuffer with TFLite's built-in ops only.

rlkit's own networks (MLP, Nature CNN, MinAtar's, dueling heads) convert; a network of
one's own with an op TFLite has no built-in kernel for is refused in one line naming the
op (``SELECT_TF_OPS`` would pull the TensorFlow runtime into the app, which is what TFLite
users avoid). ``quantize``: ``"float16"`` (weights stored as float16) or ``"dynamic"``
(dynamic-range: int8 weights, float activations).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from rlkit.core.errors import UsageError

QUANTIZATIONS = ("float16", "dynamic")


def convert(saved_model: Path, signatures: list[str], quantize: str | None = None) -> bytes:
    """The flatbuffer of ``signatures`` of the SavedModel in ``saved_model``; UsageError
    (one line, the op named) when TFLite's built-in ops cannot express them."""
    import tensorflow as tf

    if quantize is not None and quantize not in QUANTIZATIONS:
        known = ", ".join(QUANTIZATIONS)
        raise UsageError(f"unknown quantisation {quantize!r}: use one of {known}")
    converter = tf.lite.TFLiteConverter.from_saved_model(str(saved_model), signatures)
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    if quantize is not None:
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
    if quantize == "float16":
        converter.target_spec.supported_types = [tf.float16]
    import contextlib

    from rlkit.core.quiet import silenced_stderr

    wanted = os.environ.get("RLKIT_TF_LOGS") == "1"  # (rlkit itself sets TF_CPP_MIN_LOG_LEVEL)
    quiet = contextlib.nullcontext() if wanted else silenced_stderr()
    try:
        with quiet:  # (the converter's MLIR diagnostics: the error below says what matters)
            return converter.convert()
    except Exception as exc:  # the converter's errors: ConverterError and others
        raise UsageError(unconvertible(str(exc))) from None


def unconvertible(message: str) -> str:
    """One line for a conversion error: the op(s) TFLite's built-ins lack, from the
    converter's message (``'tf.Erfinv' op is neither a custom op nor a flex op``)."""
    ops = sorted(set(re.findall(r"'tf\.(\w+)' op is neither a custom op nor a flex op", message)))
    if not ops:
        ops = sorted(set(re.findall(r"\btf\.(\w+)\b", message)))[:3]
    what = (
        (f"op {ops[0]} has" if len(ops) == 1 else f"ops {', '.join(ops)} have")
        if ops
        else ("an op has")
    )
    first = next((line.strip() for line in message.splitlines() if line.strip()), "")
    detail = "" if ops else f" ({first[:160]})"
    return (
        f"TFLite's built-in ops cannot express this network: {what} no built-in kernel"
        f"{detail}; export a SavedModel instead (--format saved_model), which serves it as it is"
    )
