"""``agent.export(DIR)``: the agent's greedy policy as a SavedModel (or a TFLite model) that
serves without rlkit, checked against the agent before it is called done.

The export folder appears whole or not at all: everything is written into a temporary
folder beside it, checked (:mod:`rlkit.exporting.check`), and renamed into place. The
folder holds the SavedModel (``saved_model.pb``, ``variables/``; the signatures of
:mod:`rlkit.exporting.signatures`) or ``policy.tflite``, and ``rlkit_export.json``: the
metadata, also served by the SavedModel's ``metadata`` signature.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlkit.core.errors import UsageError
from rlkit.core.files import make_temp_folder
from rlkit.exporting import check
from rlkit.exporting.destination import check_destination
from rlkit.exporting.exported import METADATA_FILE, TFLITE_FILE, ExportedPolicy, tflite_record

FORMATS = ("saved_model", "tflite")
#: observations the check draws from each source (the environment, the replay)
CHECK_OBSERVATIONS = 2000


class ExportCheckFailed(RuntimeError):
    """The exported policy did not act as the agent: nothing was written."""


@dataclass
class ExportResult:
    """What an export wrote and what its check found."""

    path: Path
    format: str
    size_bytes: int
    metadata: dict[str, Any]
    lines: list[str] = field(default_factory=list)


def check_request(out: str | os.PathLike, format: str, quantize: str | None) -> Path:
    """UsageError for an unknown format or quantisation or an ``out`` that is a file or a
    non-empty folder; else ``out`` as a Path."""
    from rlkit.exporting.tflite import QUANTIZATIONS

    if format not in FORMATS:
        raise UsageError(f"unknown export format {format!r}: use one of {', '.join(FORMATS)}")
    if quantize is not None and quantize not in QUANTIZATIONS:
        raise UsageError(f"unknown quantisation {quantize!r}: use one of "
                         f"{', '.join(QUANTIZATIONS)}")  # fmt: skip
    if quantize is not None and format != "tflite":
        raise UsageError("--quantize applies to --format tflite only")
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        what = "a file" if not out.is_dir() else "a folder that is not empty"
        raise UsageError(f"{out} is {what}: export into a new or empty folder")
    return out


def preprocessing(agent, env_id: str | None) -> dict[str, Any]:
    """What the policy expects of its observations, in words and settings."""
    fmt = agent.obs_format
    found: dict[str, Any] = {}
    if fmt.kind == "image":
        found["observation"] = f"{list(fmt.shape)} {fmt.dtype.name} image, channels last" + (
            "; the graph casts it to float32 and divides by 255" if fmt.scale != 1 else ""
        )
    if env_id and env_id.startswith("ALE/"):
        from rlkit.envs import atari

        found["wrappers"] = {
            "AtariPreprocessing": {"noop_max": atari.NOOP_MAX, "frame_skip": atari.FRAME_SKIP,
                                   "screen_size": atari.SCREEN, "grayscale_obs": True,
                                   "scale_obs": False, "terminal_on_life_loss": False},
            "FrameStackObservation": {"stack_size": atari.HISTORY, "padding_type": "zero"},
            "channels_last": True,
            "make": "ALE with frameskip=1, repeat_action_probability=0, minimal action set",
        }  # fmt: skip
        found["observation"] = (f"{atari.SCREEN}x{atari.SCREEN} grey frames, a stack of "
                                f"{atari.HISTORY}, uint8, [84, 84, 4]; scaled inside")  # fmt: skip
    return found


def strict_json(value: Any) -> Any:
    """``value`` with non-finite floats as the strings ``"inf"``, ``"-inf"``, ``"nan"``, so
    that any JSON parser reads the metadata (an unbounded ``Box``'s bounds are infinite;
    numpy reads those strings back as floats)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    return value


def metadata(agent, env_id: str | None, variant: str | None, format: str,
             quantize: str | None) -> dict[str, Any]:  # fmt: skip
    """The export's metadata: agent, variant, env, spaces, inputs, step, versions."""
    import tensorflow as tf

    import rlkit
    from rlkit.core.spaces import space_to_dict
    from rlkit.exporting.inputs import describe_inputs
    from rlkit.exporting.signatures import signature_names

    return strict_json(
        {
            "format": format,
            "quantize": quantize,
            "agent": agent.name,
            "variant": variant or agent.registry()[agent.name].variant_of(agent.config),
            "env_id": env_id,
            "observation_space": space_to_dict(agent.observation_space),
            "action_space": space_to_dict(agent.action_space),
            "inputs": describe_inputs(agent.observation_space),
            "signatures": signature_names(agent, format),
            "training_step": int(agent.num_steps),
            "rlkit_version": rlkit.__version__,
            "tensorflow_version": tf.__version__,
            "preprocessing": preprocessing(agent, env_id),
            **fractions(agent),
            **sample_noise(agent),
            **action_mask(agent),
        }
    )


def sample_noise(agent) -> dict[str, Any]:
    """PPO, A2C and SAC: ``{"sample_noise": {"input", "distribution", "shape", "rule"}}``,
    the noise input of the ``sample`` signature and the agent's rule for it
    (``agent.sample_noise_rule()``); nothing for other agents."""
    from rlkit.exporting.module import noise_input

    found = noise_input(agent)
    if found is None:
        return {}
    name, described = found
    return {"sample_noise": {"input": name, **described, "rule": agent.sample_noise_rule()}}


def action_mask(agent) -> dict[str, Any]:
    """PPO and A2C made with ``action_masks``: ``{"action_mask": {"input", "shape",
    "rule"}}``, the mask input of ``action`` and ``sample``; nothing for other agents."""
    from rlkit.exporting.module import mask_input

    found = mask_input(agent)
    if found is None:
        return {}
    name, width = found
    rule = ("bool, True where the action is valid (a MultiDiscrete's: each dimension's in its "
            "slice); the invalid actions' logits are -inf: never chosen, never drawn")  # fmt: skip
    return {"action_mask": {"input": name, "shape": [None, width], "rule": rule}}


def fractions(agent) -> dict[str, Any]:
    """IQN: ``{"fractions": [...], "fractions_rule": ...}``, the fixed fractions its export
    averages ``Z`` over; nothing for other agents."""
    fixed = getattr(agent, "export_fractions", None)
    if fixed is None:
        return {}
    rule = "the K midpoints (2k + 1) / 2K; training draws K fresh ones"
    return {"fractions": [float(t) for t in fixed()], "fractions_rule": rule}


def write_saved_model(agent, path: Path, meta: dict[str, Any], frozen: bool = False) -> list[str]:
    """The SavedModel of ``agent``'s policy into folder ``path`` (``frozen``: weights as
    constants, for TFLite's converter); returns its signatures."""
    import tensorflow as tf

    from rlkit.exporting.signatures import policy_module

    module = policy_module(agent, meta, frozen)
    tf.saved_model.save(module, str(path), signatures=module.serving)
    return sorted(module.serving)


def export(
    agent,
    out: str | os.PathLike,
    format: str = "saved_model",
    quantize: str | None = None,
    env: Any = None,
    env_id: str | None = None,
    observations: list[tuple[str, Any]] | None = None,
    variant: str | None = None,
    check_observations: int = CHECK_OBSERVATIONS,
    extra: dict[str, Any] | None = None,
    env_kwargs: dict[str, Any] | None = None,
) -> ExportResult:
    """Export ``agent``'s greedy policy into the new (or empty) folder ``out``, checked.

    ``env``: an environment (or an id) whose observations the check uses (else draws from
    the observation space; an environment object is reset with seed 0 and stepped);
    ``env_id``: the id recorded in the metadata (``env``'s by default); ``env_kwargs``: the
    arguments an ``env`` id is made with; ``observations``: more ``(source, batch)`` to
    check on (the run's replay); the agent's own replay memory
    is used too. ``extra``: more metadata (the run's evaluation protocol). Raises
    UsageError for bad input and :class:`ExportCheckFailed` when the export does not act
    as the agent; either way nothing is left at ``out``.
    """
    from rlkit.exporting.signatures import builder

    builder(agent)  # UsageError for an agent rlkit cannot export, before anything is made
    out = check_destination(check_request(out, format, quantize))  # (/proc, a file above)
    env, env_id = _environment(env, env_id, env_kwargs or {})
    _same_spaces(agent, env, env_id)
    meta = strict_json({**metadata(agent, env_id, variant, format, quantize), **(extra or {})})
    batches = _check_batches(agent, env, observations or [], check_observations)
    made = next((p for p in reversed(out.absolute().parents) if not p.exists()), None)
    out.parent.mkdir(parents=True, exist_ok=True)  # (removed again if the export fails)
    tmp = make_temp_folder(f".{out.name}.", out.parent)
    try:
        if format == "tflite":
            from rlkit.exporting.signatures import signature_names
            from rlkit.exporting.tflite import convert

            saved = tmp / ".saved_model"
            names = write_saved_model(agent, saved, meta, frozen=True)
            wanted = [n for n in names if n in signature_names(agent, "tflite")]
            flatbuffer = convert(saved, wanted, quantize)
            (tmp / TFLITE_FILE).write_bytes(flatbuffer)
            meta["tflite"] = tflite_record(flatbuffer)  # (checked before each load)
            shutil.rmtree(saved)
        else:
            write_saved_model(agent, tmp, meta)
        text = json.dumps(meta, indent=2, sort_keys=True, allow_nan=False)
        (tmp / METADATA_FILE).write_text(text)
        try:
            with _quiet(format):  # (TFLite's native "Created XNNPACK delegate" line)
                lines = run_check(agent, ExportedPolicy(tmp), batches, quantize is not None)
        except (RuntimeError, ValueError) as exc:  # a flatbuffer its interpreter cannot run
            if format != "tflite" or isinstance(exc, ExportCheckFailed):
                raise
            detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise UsageError(
                f"the TFLite model of this network does not run ({detail}); "
                "export a SavedModel instead (--format saved_model)"
            ) from None
        if out.exists():
            out.rmdir()  # (empty: check_request said so)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        raise
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return ExportResult(out, format, size, meta, lines)


def _quiet(format: str):
    """Native stderr silenced while a TFLite model first runs, unless TF's logs are wanted."""
    import contextlib

    from rlkit.core.quiet import silenced_stderr

    if format != "tflite" or os.environ.get("RLKIT_TF_LOGS") == "1":
        return contextlib.nullcontext()
    return silenced_stderr()


def _environment(env: Any, env_id: str | None, kwargs: dict) -> tuple[Any, str | None]:
    if isinstance(env, str):
        from rlkit.envs.make import make_env

        return make_env(env, training=False, **kwargs), env_id or env
    if env is not None and env_id is None and getattr(env, "spec", None) is not None:
        env_id = env.spec.id
    return env, env_id


def _same_spaces(agent, env, env_id: str | None) -> None:
    """UsageError when the check's environment is not the one the agent was trained on."""
    from rlkit.core.spaces import space_to_dict

    for kind in ("observation_space", "action_space") if env is not None else ():
        if space_to_dict(getattr(env, kind)) != space_to_dict(getattr(agent, kind)):
            raise UsageError(
                f"the agent was trained on another {kind.replace('_', ' ')} than "
                f"{env_id or 'the environment'}'s {getattr(env, kind)}; pass the environment "
                "it was trained on"
            )


def _check_batches(agent, env, given: list, count: int) -> list[tuple[str, Any]]:
    """``[(source, batch)]`` the check runs on."""
    batches = []
    if env is not None:
        batches.append((f"{count} from the environment", check.from_env(agent, env, count)))
    replay = check.from_replay(agent, count)
    if replay is not None:
        batches.append((f"{check.rows(replay)} from the agent's replay", replay))
    for source, batch in given:
        batch = check.take(batch, count)
        batches.append((f"{check.rows(batch)} from {source}", batch))
    if not batches:
        batches.append((f"{count} drawn from the observation space",
                        check.from_space(agent.observation_space, count)))  # fmt: skip
    return batches


def run_check(agent, exported: ExportedPolicy, batches: list, quantized: bool) -> list[str]:
    """Compare ``exported`` with ``agent`` on every batch; ExportCheckFailed when they
    differ beyond :mod:`~rlkit.exporting.check`'s rule. Returns the report's lines."""
    from gymnasium import spaces

    batch = check.concatenate([b for _, b in batches], agent.observation_space)
    result = check.compare(agent, exported, batch, quantized)
    result.sources = [source for source, _ in batches]
    line = check.describe(result, exported, isinstance(agent.action_space, spaces.Discrete))
    if not result.passed:
        raise ExportCheckFailed(f"the export does not act as the agent: {line}")
    if "sample" not in exported.signatures or not hasattr(agent, "act_with_noise"):
        return [line]
    sampled = check.compare_sample(agent, exported, batch, quantized)
    sample_line = check.describe_sample(sampled, exported)
    if not sampled.passed:
        raise ExportCheckFailed(f"the export's sample does not draw as the agent: {sample_line}")
    return [line, sample_line]
