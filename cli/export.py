"""``rlkit export``: a run's policy as a SavedModel or a TFLite model, checked against it."""

from __future__ import annotations

import click

from rlkit.core.errors import UsageError

from .options import non_empty, non_empty_path

FORMATS = ("saved_model", "tflite")
QUANTIZATIONS = ("float16", "dynamic")
#: the exit status when the exported policy does not act as the agent (nothing written)
CHECK_FAILED = 1


@click.command()
@click.argument("path", metavar="RUN_DIR", type=click.Path(), callback=non_empty_path)
@click.option("--out", type=click.Path(), required=True, metavar="DIR", callback=non_empty_path,
              help="the export folder to create (new, or empty)")  # fmt: skip
@click.option("--model", default="best", show_default=True, metavar="best|final",
              help="the run's best evaluated model (its final one if it kept none) or its "
              "final one")  # fmt: skip
@click.option("--format", "format_", default="saved_model", show_default=True,
              metavar="saved_model|tflite", help="a TensorFlow SavedModel, or a TFLite "
              "flatbuffer with TFLite's built-in ops only")  # fmt: skip
@click.option("--quantize", metavar="float16|dynamic", callback=non_empty,
              help="TFLite only: float16 weights, or dynamic-range (int8 weights)")  # fmt: skip
@click.option("--env", "env_id", metavar="ID", callback=non_empty,
              help="the environment the check plays [default: the run's]")  # fmt: skip
def export(path, out, model, format_, quantize, env_id) -> int:
    """Export the greedy policy of RUN_DIR to a SavedModel (or TFLite) in DIR, checked.

    The export serves without rlkit: signature 'action' takes a batch of observations and
    gives the greedy action in the environment's own terms, with the values behind it
    ('q_values', 'value', 'logits'/'distribution', REINFORCE's 'sample') and 'metadata'.
    Before it reports success, the export is checked against the agent on observations
    of the environment and of the run's replay. RUN_DIR may also be a saved agent's
    folder (then give --env to check on it). See docs/export.md.
    """
    if format_ not in FORMATS:
        raise UsageError(f"unknown --format {format_!r}: use saved_model or tflite")
    if quantize is not None and quantize not in QUANTIZATIONS:
        raise UsageError(f"unknown --quantize {quantize!r}: use float16 or dynamic")
    if quantize is not None and format_ != "tflite":
        raise UsageError("--quantize applies to --format tflite only")
    if model not in ("best", "final"):
        raise UsageError(f"unknown --model {model!r}: use best or final")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"--out {out} exists and is not an empty folder: give a new one")
    if not path.exists():
        raise UsageError(f"no run folder or saved agent at {path}")
    from rlkit.exporting.destination import check_destination

    check_destination(out)  # (a place no folder can be made: before TensorFlow loads)
    from rlkit.core.quiet import import_tensorflow_quietly

    import_tensorflow_quietly()
    from rlkit.exporting.writer import ExportCheckFailed
    from rlkit.run.export_run import export as export_policy

    try:
        result = export_policy(path, out, model, format_, quantize, env_id)
    except ExportCheckFailed as exc:
        click.echo(f"rlkit: error: {exc}; nothing was written", err=True)
        return CHECK_FAILED
    for line in result.lines:
        click.echo(line, err=True)
    size = result.size_bytes
    shown = f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.1f} kB"
    which = result.metadata.get("model", "")
    source = f" (the model of {which})" if which.startswith("checkpoint") else ""
    click.echo(f"exported {result.metadata['variant']} ({result.format}, {shown}) to {out}{source}")
    return 0
