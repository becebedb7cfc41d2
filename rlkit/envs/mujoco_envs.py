"""gymnasium's MuJoCo environments (HalfCheetah, Hopper, Walker2d, Ant, Humanoid, ...).

- **Recognised without importing MuJoCo**: by the registry's entry points, which are
  strings (``gymnasium.envs.mujoco.half_cheetah_v5:HalfCheetahEnv``); ``mujoco`` is
  imported only when such an environment is made.
- **Versions**: v5 is current; v4 still runs on mujoco 4.0 (CleanRL's and rl-zoo's
  published tables ran on it) and is made with one notice in place of gymnasium's repeated
  "out of date" warning; v2 and v3 need ``mujoco-py``, which gymnasium 1.x dropped: refused
  in one line naming the v5 id.
- **Quiet**: MuJoCo 4.0's default warning handler prints a deprecation notice about
  gymnasium's own model files (HalfCheetah's ``settotalmass``) each time one is compiled
  and appends it to ``MUJOCO_LOG.TXT`` in the working directory; rlkit's handler drops
  those notices and prints any other MuJoCo warning (an unstable simulation) on stderr.
- **Off-screen rendering** (``rlkit evaluate --video``): on a Linux machine without a
  display, ``MUJOCO_GL`` defaults to ``egl`` (gymnasium would try GLFW first, which needs a
  window); the frames are drawn in a child process (:mod:`rlkit.envs.mujoco_render`: Mesa's
  software OpenGL and TensorFlow crash in one process); a backend that cannot start is one
  line saying what to set.
- **Exact resume**: :func:`physics_state` / :func:`restore_physics` carry the whole
  ``MjData`` (derived data included: Ant's and Humanoid's rewards read body positions
  computed in the previous step) through a checkpoint (:mod:`rlkit.envs.resumable`).
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

from rlkit.core.errors import RlkitWarning, UsageError

ENTRY_POINT = "gymnasium.envs.mujoco."
CURRENT = 5
GL = "MUJOCO_GL"
RENDER_MODES = ("rgb_array", "depth_array")
#: rlkit's warning handler set (or the user's found): checked once a process
_handler_installed = False
_noticed: set[str] = set()


def _spec(env_id: str):
    import gymnasium as gym

    try:
        return gym.spec(env_id)
    except gym.error.Error:
        return None


def _names() -> set[str]:
    """The names (``HalfCheetah``) of gymnasium's MuJoCo environments, from the registry."""
    import gymnasium as gym

    return {
        spec.name
        for spec in gym.registry.values()
        if isinstance(spec.entry_point, str) and spec.entry_point.startswith(ENTRY_POINT)
    }


def is_mujoco_id(env_id: str) -> bool:
    """Is ``env_id`` one of gymnasium's MuJoCo environments (any version, v2 and v3 too)?"""
    spec = _spec(env_id)
    return spec is not None and spec.namespace is None and spec.name in _names()


def current_id(env_id: str) -> str:
    """``Hopper-v3`` -> ``Hopper-v5``: the newest version gymnasium registers."""
    import gymnasium as gym

    spec = gym.spec(env_id)
    versions = [s.version for s in gym.registry.values()
                if s.name == spec.name and s.namespace is None and s.version is not None
                and isinstance(s.entry_point, str)]  # fmt: skip
    return f"{spec.name}-v{max(versions, default=CURRENT)}"


def check_version(env_id: str) -> None:
    """UsageError for a v2/v3 id (mujoco-py's); one notice for a v4 id (see the module)."""
    spec = _spec(env_id)
    version = spec.version if spec is not None else None
    if version is None or version >= CURRENT:
        return
    newest = current_id(env_id)
    if version <= 3:
        raise UsageError(
            f"{env_id} needs mujoco-py, which gymnasium 1.x no longer supports; use {newest}"
        )
    # gymnasium's "out of date" warning, once per make: one notice of rlkit's instead
    warnings.filterwarnings("ignore", message=rf".*The environment {spec.name}-v4 is out of date")
    if env_id not in _noticed:
        _noticed.add(env_id)
        warnings.warn(
            f"{env_id} is gymnasium's previous MuJoCo version (CleanRL's and rl-zoo's tables "
            f"ran on it); rlkit's MuJoCo presets and tests use v5 ({newest})",
            RlkitWarning,
            stacklevel=4,
        )


def _warn(message: str) -> None:
    """rlkit's MuJoCo warning handler (see the module's doc)."""
    if message.startswith("compiler attribute") and "deprecated" in message:
        return  # about gymnasium's model files: nothing the user can do
    print(f"MuJoCo warning: {message}", file=sys.stderr)


def prepare(env_id: str, kwargs: dict[str, Any], headless: bool) -> None:
    """Before ``gym.make`` of MuJoCo env ``env_id``: its version checked; off-screen
    rendering's default backend set (``headless``: no display); MuJoCo imported, a failure
    said in one line (the extra missing, or a ``MUJOCO_GL`` backend that cannot load); its
    warning handler set, unless the user set one."""
    check_version(env_id)
    if kwargs.get("render_mode") in RENDER_MODES and headless and not os.environ.get(GL):
        os.environ[GL] = "egl"
    import gymnasium as gym

    try:
        import gymnasium.envs.mujoco  # noqa: F401  (mujoco; its renderer: glfw, imageio)
    except (gym.error.DependencyNotInstalled, ModuleNotFoundError) as exc:
        raise UsageError(
            f"environment {env_id!r} needs an extra package: from a clone of rlkit: "
            f"pip install '.[mujoco]' ({_missing(exc)})"
        ) from None
    except Exception as exc:  # mujoco loads the MUJOCO_GL backend on import
        raise gl_error(env_id, exc, "load") from None
    quiet_warnings()


def quiet_warnings() -> None:
    """rlkit's MuJoCo warning handler, once a process, unless the user set their own."""
    global _handler_installed
    import mujoco

    if not _handler_installed and mujoco.get_mju_user_warning() is None:
        mujoco.set_mju_user_warning(_warn)
    _handler_installed = True


def _missing(exc: BaseException) -> str:
    """What is missing: ``mujoco is not installed``, or the module a MuJoCo env imports."""
    if isinstance(exc, ModuleNotFoundError) and exc.name and exc.name != "mujoco":
        return f"{exc.name} is not installed"
    return "mujoco is not installed"


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return type(exc).__name__ + (f": {text.splitlines()[0][:160]}" if text else "")


def gl_error(env_id: str, exc: BaseException, doing: str = "render") -> UsageError:
    """One line for an OpenGL backend that cannot start: what was tried, what to set."""
    backend = os.environ.get(GL) or "unset (glfw: a window)"
    return UsageError(
        f"MuJoCo cannot {doing} {env_id} with MUJOCO_GL={backend} here ({_one_line(exc)}); "
        "set MUJOCO_GL=egl (libEGL: apt install libegl1) or MUJOCO_GL=osmesa (apt install "
        "libosmesa6)" + (", or unset it to train without rendering" if doing == "load" else "")
    )


def is_mujoco_env(env) -> bool:
    """Is ``env``'s base environment a gymnasium MuJoCo one? (Imports nothing: no MuJoCo
    environment can exist before gymnasium's ``mujoco_env`` module is loaded.)"""
    module = sys.modules.get("gymnasium.envs.mujoco.mujoco_env")
    base = getattr(module, "MujocoEnv", None)
    return base is not None and isinstance(env.unwrapped, base)


def physics_state(env) -> Any:
    """The MuJoCo env's whole ``MjData`` (it pickles in mujoco 4.0: ~0.7 MB, ~1 ms)."""
    return env.unwrapped.data


def restore_physics(env, data: Any) -> None:
    """Copy a pickled ``MjData`` into ``env``'s own (which its renderer holds)."""
    import mujoco

    base = env.unwrapped
    mujoco.mj_copyData(base.data, base.model, data)
