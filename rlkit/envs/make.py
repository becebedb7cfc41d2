"""Making gymnasium environments with clear errors for unknown ids."""

from __future__ import annotations

import difflib
import os
import sys

from rlkit.core.errors import UsageError


def make_vector_env(env_id: str, num_envs: int, **kwargs):
    """``num_envs`` copies of ``env_id`` stepped together (gymnasium ``SyncVectorEnv``),
    for training.

    Sub-environments reset in the same step their episode ends (``SAME_STEP``); the
    last observation of an ended episode is in ``infos["final_obs"]``. rlkit's TensorFlow
    environments (``rlkit/CartPole-v1``, ...) step all copies in one compiled call instead
    (:class:`~rlkit.envs.tf.gym_adapter.TFVectorEnv`, the same interface).
    """
    import gymnasium as gym

    from rlkit.envs.resumable import ResumableEnv
    from rlkit.envs.tf import is_tf_env

    probe = make_env(env_id, **kwargs)  # the same clear errors as for one env
    resumable = isinstance(probe, ResumableEnv)
    probe.close()
    env_id = import_env_module(env_id)  # (imported by the probe: the id alone now)
    if is_tf_env(env_id):
        return gym.make_vec(env_id, num_envs, vectorization_mode="vector_entry_point")
    if env_id.startswith("ALE/"):  # rlkit's own wrappers: one thunk per sub-environment
        return gym.vector.SyncVectorEnv(
            [lambda: make_env(env_id, **kwargs) for _ in range(num_envs)],
            autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
        )
    return gym.make_vec(
        env_id,
        num_envs=num_envs,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP},
        wrappers=[ResumableEnv] if resumable else None,
        **kwargs,
    )


#: environment families that need one of rlkit's extras: id prefix -> extra
EXTRAS = {
    "ALE/": "atari",
    "MinAtar/": "atari",
    "LunarLander": "box2d",
    "BipedalWalker": "box2d",
    "CarRacing": "box2d",
}


def extra_for(env_id: str) -> str | None:
    """The rlkit extra that installs ``env_id``'s environment family, if any."""
    from rlkit.envs.mujoco_envs import is_mujoco_id

    if is_mujoco_id(env_id):
        return "mujoco"
    return next((extra for prefix, extra in EXTRAS.items() if env_id.startswith(prefix)), None)


def _needs_extra(env_id: str, detail: str = "") -> UsageError:
    extra = extra_for(env_id)
    hint = f"from a clone of rlkit: pip install '.[{extra}]'" if extra else detail
    return UsageError(f"environment {env_id!r} needs an extra package: {hint}")


def make_env(env_id: str, training: bool = True, **kwargs):
    """``gymnasium.make(env_id)``; an unknown id raises UsageError with close matches, an id
    whose package is missing names the rlkit extra that installs it.

    ``ALE/...`` ids get DQN3.0's Atari pipeline (:mod:`rlkit.envs.atari`); with ``training``
    False (evaluation) a lost life does not end the episode. ``MinAtar/...`` ids are
    registered on first use. gymnasium's MuJoCo ids are checked and made as
    :mod:`rlkit.envs.mujoco_envs` says (MuJoCo is imported only for them). An env whose
    state a pickle would lose (ALE, Box2D, MuJoCo) is wrapped in
    :class:`~rlkit.envs.resumable.ResumableEnv`: checkpoints keep it exactly, and each
    Box2D episode starts on a new world, so no evaluation depends on what the env played
    before.
    """
    from rlkit.envs.resumable import resumable

    return resumable(_make(env_id, training, **kwargs))


def import_env_module(env_id: str) -> str:
    """For gymnasium's ``module:Id`` form, import ``module`` (it registers its ids) and
    return ``Id``; UsageError in one line when the module does not import."""
    if ":" not in env_id:
        return env_id
    import importlib

    module, _, name = env_id.partition(":")
    try:
        importlib.import_module(module)
    except Exception as exc:  # the user's module: any error it raises while importing
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise UsageError(
            f"cannot import module {module!r} for --env {env_id}: {type(exc).__name__}"
            + (f": {detail}" if detail else "")
        ) from None
    return name


def has_display() -> bool:
    """Can a window open here? (Not on a Linux machine without X11 or Wayland: pygame and
    OpenGL windows would crash the process there rather than raise.)"""
    if not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def check_render_mode(kwargs: dict) -> None:
    """UsageError when ``render_mode="human"`` asks for a window on a machine without a
    display (gymnasium's renderers crash there)."""
    if kwargs.get("render_mode") == "human" and not has_display():
        raise UsageError(
            "render_mode 'human' needs a display; on a headless machine record a video "
            "instead (rlkit evaluate RUN_DIR --video out.mp4)"
        )


def _make(env_id: str, training: bool, **kwargs):
    import gymnasium as gym

    check_render_mode(kwargs)
    env_id = import_env_module(env_id)

    family = env_id.split("/")[0]
    if family in ("ALE", "MinAtar"):
        try:
            from rlkit.envs import atari

            atari.register(env_id)
        except ImportError:
            raise _needs_extra(env_id) from None
        if family == "ALE" and env_id in gym.registry:
            try:
                return atari.make_atari(env_id, training, **kwargs)
            except gym.error.DependencyNotInstalled as exc:
                raise _needs_extra(env_id, str(exc)) from None
    if env_id not in gym.registry:
        known = list(gym.registry)
        close = difflib.get_close_matches(env_id, known, n=3, cutoff=0.5)
        lowered = {k.lower(): k for k in known}
        if env_id.lower() in lowered:
            close = [lowered[env_id.lower()]]
        hint = (
            f"did you mean {' or '.join(close)}?" if close else "see gymnasium's registry for ids"
        )
        raise UsageError(f"unknown environment {env_id!r}; {hint}")
    from rlkit.envs import mujoco_envs

    mujoco = mujoco_envs.is_mujoco_id(env_id)  # (read from the registry: MuJoCo not imported)
    if mujoco:
        mujoco_envs.prepare(env_id, kwargs, headless=not has_display())
    try:
        if family == "MinAtar":  # MinAtar's colours, scaled up, for videos
            from rlkit.envs.minatar_frames import make_minatar

            return make_minatar(env_id, **kwargs)
        env = gym.make(env_id, **kwargs)
    except gym.error.DependencyNotInstalled as exc:
        raise _needs_extra(env_id, str(exc)) from None
    except ImportError as exc:  # a registered entry point whose module does not import
        raise UsageError(
            f"environment {env_id!r} cannot be made: its entry point does not import "
            f"({_one_line(exc)})"
        ) from None
    except (TypeError, ValueError) as exc:  # an argument the environment's constructor refuses
        if not kwargs:
            raise
        detail = str(exc).splitlines()[0] if isinstance(exc, TypeError) else _one_line(exc)
        raise UsageError(
            f"environment {env_id!r} refuses its env_kwargs {sorted(kwargs)}: {detail}"
        ) from None
    if mujoco:  # frames drawn in a child process (TensorFlow and Mesa's GL cannot share one)
        from rlkit.envs.mujoco_render import offscreen

        env = offscreen(env, env_id, kwargs)
    return env


def _one_line(exc: BaseException) -> str:
    """``TypeName: the first line of the message``."""
    text = str(exc).strip()
    return type(exc).__name__ + (f": {text.splitlines()[0]}" if text else "")
