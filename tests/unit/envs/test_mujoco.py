"""gymnasium's MuJoCo environments in rlkit: made quietly, recognised without importing
MuJoCo, old and bad ids refused in one line, frames drawn off-screen beside TensorFlow,
and the v5 presets picked by themselves (exact resume: tests/integration/test_exact_resume.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

pytest.importorskip("mujoco")

from rlkit.core.errors import RlkitWarning, UsageError  # noqa: E402
from rlkit.envs.make import make_env  # noqa: E402

pytestmark = [pytest.mark.mujoco]
V5 = ["HalfCheetah-v5", "Hopper-v5", "Walker2d-v5", "Ant-v5", "Humanoid-v5"]


def python(code: str, cwd=None, **env: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter (what it imports is then its own)."""
    import os

    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, cwd=cwd, env={**os.environ, **env}, timeout=300,
    )  # fmt: skip


@pytest.mark.slow
def test_no_mujoco_import_unless_a_mujoco_env_is_asked_for():
    done = python("""
        import sys
        import rlkit.envs.make as make, rlkit.envs.resumable, rlkit.cli.main
        make.make_env("CartPole-v1").close()
        print("mujoco" in sys.modules)
        make.make_env("Hopper-v5").close()
        print("mujoco" in sys.modules)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]


@pytest.mark.parametrize("env_id", V5)
def test_the_v5_envs_are_made_quietly_and_kept_by_their_physics(env_id, capfd, tmp_path,
                                                                monkeypatch):  # fmt: skip
    from rlkit.envs.resumable import MUJOCO

    monkeypatch.chdir(tmp_path)
    env = make_env(env_id)
    assert env.kept_by == MUJOCO
    env.reset(seed=0)
    env.step(env.action_space.sample())
    env.close()
    # MuJoCo's notice about HalfCheetah's model file, and its MUJOCO_LOG.TXT, are gone
    assert "settotalmass" not in capfd.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "old", ["HalfCheetah-v2", "Hopper-v3", "Humanoid-v3", "Walker2d-v3", "Ant-v2"]
)
def test_a_mujoco_py_id_is_refused_naming_the_v5_one(old):
    new = old.split("-")[0] + "-v5"
    with pytest.raises(UsageError, match=rf"^{old} needs mujoco-py.*; use {new}$"):
        make_env(old)


def test_a_v4_id_runs_with_one_notice_of_rlkits():
    from rlkit.envs import mujoco_envs

    mujoco_envs._noticed.discard("Walker2d-v4")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            make_env("Walker2d-v4").close()
    said = [str(w.message) for w in caught]
    ours = [m for m in said if "previous MuJoCo version" in m]
    assert len(ours) == 1 and "Walker2d-v5" in ours[0]
    assert [w.category for w in caught if "previous" in str(w.message)] == [RlkitWarning]
    assert not [m for m in said if "out of date" in m]  # gymnasium's, once per make


def test_the_extra_missing_is_one_line_naming_it_and_nothing_is_written(tmp_path):
    done = python(f"""
        import sys
        sys.modules["mujoco"] = None  # as if the mujoco extra were not installed
        from rlkit.cli.main import main
        sys.exit(main(["train", "td3", "--env", "HalfCheetah-v5", "--steps", "300",
                       "--out", {str(tmp_path / "runs")!r}]))
    """, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert "environment 'HalfCheetah-v5' needs an extra package" in lines[0]
    assert "pip install '.[mujoco]'" in lines[0] and "mujoco is not installed" in lines[0]
    assert list(tmp_path.iterdir()) == []


def test_a_gl_backend_that_cannot_load_is_one_line_saying_what_to_set():
    done = python("""
        from rlkit.envs.make import make_env
        from rlkit.core.errors import UsageError
        try:
            make_env("Hopper-v5")
        except UsageError as exc:
            print(exc)
    """, MUJOCO_GL="nonsense")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "MuJoCo cannot load Hopper-v5 with MUJOCO_GL=nonsense" in done.stdout
    assert "set MUJOCO_GL=egl" in done.stdout and len(done.stdout.strip().splitlines()) == 1


def test_a_discrete_agent_on_a_mujoco_env_is_one_line_and_writes_nothing(capsys, tmp_path):
    from rlkit.cli.main import main

    status = main(["train", "dqn", "--env", "HalfCheetah-v5", "--steps", "300",
                   "--out", str(tmp_path / "runs")])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert "dqn needs a discrete action space, but HalfCheetah-v5 has Box" in err
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("env", ["HalfCheetah", "Hopper", "Walker2d", "Ant", "Humanoid"])
def test_the_v5_presets_are_picked_by_themselves(env):
    from rlkit.run import experiment

    td3 = experiment.plan("td3", f"{env}-v5")
    assert td3.preset.name == f"ddpg/{env}-v5-td3" and td3.preset_picked
    assert td3.agent_config.td3 and td3.agent_config.learning_starts == 10_000
    assert list(td3.agent_config.actor_hidden_sizes) == [400, 300]
    ddpg = experiment.plan("ddpg", f"{env}-v5")
    assert ddpg.preset.name == f"ddpg/{env}-v5" and not ddpg.agent_config.td3
    sac = experiment.plan("sac", f"{env}-v5")
    assert sac.preset.name == f"sac/{env}-v5" and sac.agent_config.learning_starts == 10_000
    steps = 2_000_000 if env == "Humanoid" else 1_000_000
    assert td3.settings.steps == ddpg.settings.steps == sac.settings.steps == steps
    for plan in (td3, ddpg, sac):
        assert "v4 entry applied to v5" in plan.preset.source


GL_PROBE = """
    import gymnasium as gym
    try:
        env = gym.make("Hopper-v5", render_mode="rgb_array")
        env.reset(seed=0)
        env.render()
    except Exception as exc:
        print("NO-GL", type(exc).__name__, exc)
"""


def skip_without_gl() -> None:
    """Skip where no off-screen OpenGL works at all (asked in a process without TF)."""
    probe = python(GL_PROBE, MUJOCO_GL="egl")
    if probe.returncode != 0 or probe.stdout.startswith("NO-GL"):
        pytest.skip(f"no off-screen OpenGL on this machine: {probe.stdout.strip()}")


OFFSCREEN_EQUALS_IN_PROCESS = """
    import numpy as np, gymnasium as gym
    from rlkit.envs.make import make_env
    actions = np.random.default_rng(0).uniform(-1, 1, (12, 3))
    def frames(env):
        env.reset(seed=3)
        out = [env.render()]
        for a in actions:
            env.step(a)
            out.append(env.render())
        env.close()
        return np.stack(out)
    direct = frames(gym.make("Hopper-v5", render_mode="rgb_array"))
    child = frames(make_env("Hopper-v5", training=False, render_mode="rgb_array"))
    print(child.shape, np.array_equal(direct, child), len({f.tobytes() for f in child}))
"""


@pytest.mark.slow
def test_frames_drawn_in_the_child_process_are_the_in_process_ones():
    skip_without_gl()
    done = python(OFFSCREEN_EQUALS_IN_PROCESS, MUJOCO_GL="egl")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split(")")[1].split() == ["True", "13"], done.stdout
    assert "(13, 480, 480, 3)" in done.stdout


class Still:
    """A stand-in for a trained agent: no torque."""

    def act(self, obs, explore: bool = True):
        return np.zeros(3, np.float32)


@pytest.mark.slow
def test_a_video_is_recorded_beside_tensorflow():
    """Mesa's GL and TensorFlow crash in one process: the frames come from a child."""
    import tensorflow as tf  # noqa: F401  (loaded first, as in `rlkit evaluate --video`)

    from rlkit.run.video import record_frames

    skip_without_gl()
    frames, returns = record_frames(Still(), "Hopper-v5", episodes=1, seed=0,
                                    env_kwargs={"max_episode_steps": 20})  # fmt: skip
    assert len(frames) == 21 and len(returns) == 1
    assert frames[0].shape == (480, 480, 3) and frames[0].dtype == np.uint8
    assert frames[0].max() > 64 and not np.array_equal(frames[0], frames[-1])
