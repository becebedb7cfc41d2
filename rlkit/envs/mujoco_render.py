"""Off-screen frames of a MuJoCo environment, drawn in a child process.

Mesa's software OpenGL (llvmpipe, what ``MUJOCO_GL=egl`` or ``osmesa`` gives on a machine
without a GPU driver) and TensorFlow cannot share a process: both carry LLVM, and whichever
loads second crashes the process (a segmentation fault, checked here with TensorFlow 2.21 and
Mesa's EGL). So an environment made to render (``render_mode="rgb_array"``, for
``rlkit evaluate --video``) is wrapped in :class:`OffscreenRender`: the physics run in the
training process as usual, and each ``render()`` sends the environment's whole ``MjData``
to a child process (``python -m rlkit.envs.mujoco_render``, which imports neither
TensorFlow nor rlkit's agents) holding a twin of the environment that copies it in and draws
the frame. The twin's renderer sees exactly the data the original's would, so the frames
are the ones in-process rendering draws.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from typing import Any

import gymnasium as gym

from rlkit.core.errors import UsageError
from rlkit.envs.mujoco_envs import RENDER_MODES, gl_error, quiet_warnings

START_TIMEOUT_S = 120


class OffscreenRender(gym.Wrapper):
    """``render()`` drawn by a child process (see the module's doc); everything else is the
    wrapped environment's own."""

    def __init__(self, env: gym.Env, env_id: str, kwargs: dict[str, Any]) -> None:
        super().__init__(env)
        self.env_id, self.make_kwargs = env_id, dict(kwargs)
        self._child: subprocess.Popen | None = None

    def render(self):
        if self._child is None:
            self._start()
        child = self._child
        assert child is not None and child.stdin is not None and child.stdout is not None
        try:
            base: Any = self.env.unwrapped  # (a MujocoEnv)
            pickle.dump(base.data, child.stdin)
            child.stdin.flush()
            kind, payload = pickle.load(child.stdout)
        except (BrokenPipeError, EOFError, pickle.UnpicklingError):
            code = child.wait()
            self._child = None
            raise UsageError(
                f"the process drawing {self.env_id}'s frames ended (exit status {code}); "
                "MUJOCO_GL=egl or osmesa with a working libEGL/libOSMesa is needed"
            ) from None
        if kind == "error":
            self._stop()
            raise gl_error(self.env_id, RuntimeError(payload))
        return payload

    def _start(self) -> None:
        self._child = subprocess.Popen(
            [sys.executable, "-m", "rlkit.envs.mujoco_render"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=os.environ.copy(),
        )
        assert self._child.stdin is not None
        pickle.dump((self.env_id, self.make_kwargs), self._child.stdin)
        self._child.stdin.flush()

    def _stop(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                stream.close()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()

    def close(self) -> None:
        self._stop()
        super().close()

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_child": None}  # (a pickle carries no process)


def offscreen(env: gym.Env, env_id: str, kwargs: dict[str, Any]) -> gym.Env:
    """``env`` in :class:`OffscreenRender` when it was made to render frames."""
    return (
        OffscreenRender(env, env_id, kwargs) if kwargs.get("render_mode") in RENDER_MODES else env
    )


def serve(inp, out) -> None:
    """The child's loop: an environment made as asked, then for each ``MjData`` received,
    the frame it draws (or the error, in one line)."""
    import mujoco

    env_id, kwargs = pickle.load(inp)
    quiet_warnings()
    env: Any = gym.make(env_id, **kwargs).unwrapped
    while True:
        try:
            data = pickle.load(inp)
        except EOFError:
            break
        try:
            mujoco.mj_copyData(env.data, env.model, data)
            reply: tuple[str, Any] = ("frame", env.render())
        except Exception as exc:  # the GL backend: FatalError, RuntimeError, ImportError...
            text = str(exc).strip()
            reply = ("error", type(exc).__name__ + (f": {text.splitlines()[0]}" if text else ""))
        pickle.dump(reply, out)
        out.flush()
    env.close()


def _main() -> None:
    # the frames travel on the real stdout; anything a library prints goes to stderr
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    serve(sys.stdin.buffer, out)


if __name__ == "__main__":
    _main()
