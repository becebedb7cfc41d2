"""What a new user met (issue 55), the items tests/integration/test_new_user_wave5.py left:
1, 2, 3, 5, 6, 8, 11 and 12, and the hooks and ``from_env(None)`` left from item 4. Each
test here failed before its fix. Helpers: tests/integration/test_new_user_promises.py.

The promise (docs/cli.md): bad input gets one line on stderr, exit 2, nothing written;
from Python, :class:`rlkit.core.errors.UsageError` with one clear line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rlkit.core.errors import UsageError
from tests.integration.test_new_user_promises import cli, refused

REPO = Path(__file__).resolve().parents[2]


def one_line(exc: pytest.ExceptionInfo) -> str:
    """The error's message, which must be one line."""
    text = str(exc.value)
    assert "\n" not in text, text
    return text


# -- 12: an agent that ships no presets ------------------------------------------------------------
def test_12_a_preset_of_an_agent_with_none_says_so_and_names_those_with_some(capsys):
    line = refused(capsys, "config", "mdqn", "--preset", "minatar")
    assert "mdqn ships no presets" in line
    assert "dqn" in line.split("mdqn ships no presets", 1)[1] and "(none)" not in line


def test_12_presets_of_an_agent_with_none_is_one_line(capsys):
    status, out, err = cli(capsys, "presets", "mdqn")
    assert status == 0, err
    assert out.strip().splitlines() == [out.strip()]
    assert out.startswith("mdqn ships no presets; agents with presets: ") and "dqn" in out
    assert "Traceback" not in err


def test_12_the_preset_table_of_no_rows_is_its_header():
    from rlkit.config.presets.results import COLUMNS, format_table

    assert format_table([], 200) == ["  ".join(COLUMNS)]


@pytest.mark.parametrize("agent", ["mdqn", "dqn"])
def test_12_config_preset_none_prints_the_generic_defaults(capsys, agent):
    status, plain, err = cli(capsys, "config", agent)
    assert status == 0, err
    status, out, err = cli(capsys, "config", agent, "--preset", "none")
    assert status == 0, err
    assert out == plain


# -- 5: a loss rlkit does not know: the list, and how to pass one's own ----------------------------
def test_5_an_unknown_loss_lists_the_names_and_says_how_to_pass_ones_own(capsys, tmp_path):
    line = refused(capsys, "train", "dqn", "--set", "loss=l1", "--out", tmp_path / "r")
    assert "must be one of dqn3, huber, mse;" in line
    assert "<python object>" not in line
    assert "DQN.from_env(env, loss=" in line and "docs/api.md" in line
    assert not (tmp_path / "r").exists()


def test_5_a_config_that_records_a_python_loss_still_loads():
    from rlkit.agents.dqn.config import DQNConfig
    from rlkit.config.options import make_config

    assert make_config(DQNConfig, {"loss": "<python object>"}).loss == "<python object>"


# -- 4 (left over): hooks that are not hooks at the Trainer's door, from_env(None) -----------------
@pytest.fixture(scope="module", name="small_agent")
def _small_agent():
    import rlkit

    return rlkit.agents.DQN.from_env("CartPole-v1", hidden_sizes=(8,), learning_starts=10,
                                     jit_compile=False)  # fmt: skip


@pytest.mark.parametrize(
    ("hooks", "message"),
    [
        (5, "hooks must be a list of rlkit.run.hooks.Hook objects, got an int"),
        ([object()], "hooks[0] is an object, not an rlkit.run.hooks.Hook"),
    ],
)
def test_4_train_and_the_trainer_refuse_hooks_that_are_not_hooks(small_agent, hooks, message):
    import gymnasium as gym

    import rlkit
    from rlkit.run.loop import Trainer

    env = gym.make("CartPole-v1")
    with pytest.raises(UsageError) as exc:
        rlkit.train(small_agent, env, steps=10, hooks=hooks)
    assert message in one_line(exc)
    with pytest.raises(UsageError) as exc:
        Trainer(small_agent, env, hooks=hooks)
    assert message in one_line(exc)
    trainer = Trainer(small_agent, env)
    with pytest.raises(UsageError) as exc:
        trainer.run(small_agent.num_steps + 5, hooks=hooks)
    assert message in one_line(exc)
    trainer.close()


def test_4_the_trainer_refuses_a_callback_that_is_no_function(small_agent):
    import gymnasium as gym

    from rlkit.run.loop import Trainer

    with pytest.raises(UsageError) as exc:
        Trainer(small_agent, gym.make("CartPole-v1"), callbacks=[5])
    assert "callbacks[0] is an int, not a function of (step, info, history)" in one_line(exc)


def test_4_check_hooks_lives_with_the_hooks():
    from rlkit.run import experiment
    from rlkit.run.hooks.base import Hook, check_hooks

    assert experiment.check_hooks is check_hooks
    mine = [Hook()]
    assert check_hooks(mine) == mine


@pytest.mark.parametrize("env", [None, 5, object()])
def test_4_from_env_refuses_what_is_no_environment(env):
    import rlkit

    with pytest.raises(UsageError) as exc:
        rlkit.agents.DQN.from_env(env)
    assert "env must be a gymnasium environment or its id" in one_line(exc)


# -- 11: an export and --render on a headless box; a damaged policy.tflite -------------------------
def _fake_export(folder: Path, data: bytes | None, **meta) -> Path:
    """An export folder whose metadata is CartPole's DQN's (``meta`` on top) and whose
    ``policy.tflite`` holds ``data`` (None: no file)."""
    import json

    folder.mkdir(parents=True)
    meta = {"agent": "dqn", "format": "tflite", "env_id": "CartPole-v1", **meta}
    (folder / "rlkit_export.json").write_text(json.dumps(meta))
    if data is not None:
        (folder / "policy.tflite").write_bytes(data)
    return folder


def test_11_render_on_a_headless_box_is_refused_for_an_export_too(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    export = _fake_export(tmp_path / "export", b"\x00" * 16)
    line = refused(capsys, "evaluate", export, "--render", message="--render needs a display")
    assert "--video" in line  # (the way to watch it on a headless machine: the run's agent)


@pytest.mark.parametrize(
    ("tflite", "meta", "message"),
    [
        (None, {}, "holds no policy.tflite"),
        (b"\x00" * 5, {}, "is not a TFLite model (no 'TFL3' identifier at bytes 4-8)"),
        (b"\x1c\x00\x00\x00PK\x03\x04" + b"\x00" * 40, {}, "no 'TFL3' identifier"),
        (b"\xff\xff\x00\x00TFL3" + b"\x00" * 40, {}, "cut short"),
        (b"\x1c\x00\x00\x00TFL3" + b"\x00" * 40, {"tflite": {"bytes": 4000}},
         "holds 48 bytes where the export wrote 4,000"),
        (b"\x1c\x00\x00\x00TFL3" + b"\x00" * 40, {"tflite": {"bytes": 48, "sha256": "0" * 64}},
         "changed since it was exported"),
    ],
)  # fmt: skip
def test_11_a_damaged_tflite_is_refused_in_one_line_before_tensorflow(tmp_path, tflite, meta,
                                                                       message):  # fmt: skip
    import subprocess
    import sys

    export = _fake_export(tmp_path / "export", tflite, **meta)
    script = (
        "import sys\n"
        "from rlkit.exporting.exported import check_tflite, read_metadata\n"
        f"path = {str(export)!r}\n"
        "try:\n"
        "    check_tflite(path, read_metadata(path))\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, exc)\n"
        "assert 'tensorflow' not in sys.modules, 'TensorFlow was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=REPO, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("UsageError ") and message in done.stdout, done.stdout
    assert len(done.stdout.strip().splitlines()) == 1


def test_11_a_tflite_that_crashes_its_trial_is_refused(tmp_path, monkeypatch):
    from rlkit.exporting import exported

    export = _fake_export(tmp_path / "export", b"\x1c\x00\x00\x00TFL3" + b"\x00" * 40)
    crash = "import os, signal, sys; sys.argv[1]; os.kill(os.getpid(), signal.SIGSEGV)"
    monkeypatch.setattr(exported, "TFLITE_TRIAL", crash)
    with pytest.raises(UsageError) as exc:
        exported.check_tflite(export, exported.read_metadata(export))
    assert "crashes the TFLite interpreter (SIGSEGV)" in one_line(exc)
    monkeypatch.setattr(exported, "TFLITE_TRIAL", "import sys; sys.exit(1)")  # (a Python error:
    exported.check_tflite(export, exported.read_metadata(export))  # the load itself says it)


@pytest.mark.slow
def test_11_evaluate_on_a_truncated_tflite_is_one_line_not_a_segfault(tmp_path):
    """The issue's case: an export of a real network, its policy.tflite cut in half (the
    interpreter read past the end of the file: exit 139)."""
    import subprocess
    import sys

    import gymnasium as gym

    import rlkit

    agent = rlkit.agents.DQN.from_env(gym.make("CartPole-v1"), hidden_sizes=(512, 512),
                                      jit_compile=False)  # fmt: skip
    agent.export(tmp_path / "export", format="tflite", env="CartPole-v1", check_observations=50)
    policy = tmp_path / "export" / "policy.tflite"
    whole = policy.read_bytes()
    for meta in ("recorded", "older export"):
        policy.write_bytes(whole[: len(whole) // 2])
        if meta == "older export":  # no size recorded: the trial in a child process finds it
            import json

            file = tmp_path / "export" / "rlkit_export.json"
            file.write_text(json.dumps({k: v for k, v in json.loads(file.read_text()).items()
                                        if k != "tflite"}))  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "rlkit.cli.main", "evaluate", str(tmp_path / "export"),
             "--episodes", "1"], capture_output=True, text=True, cwd=REPO, timeout=300,
        )  # fmt: skip
        assert done.returncode == 2, (meta, done.returncode, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("rlkit: error: "), done.stderr
        assert "policy.tflite" in lines[0] and "export the policy again" in lines[0], lines[0]


# -- 3: a Q-network that ends in a softmax, or takes int32 for a float observation ----------------
NETS = """
import keras


def _net(activation="linear", dtype="float32", n=None):
    def build(observation_space, action_space):
        inputs = keras.Input(observation_space.shape, dtype=dtype)
        hidden = keras.layers.Dense(16, activation="relu")(inputs)
        outputs = keras.layers.Dense(n or action_space.n, activation=activation)(hidden)
        return keras.Model(inputs, outputs)
    return build


softmax = _net("softmax")
sigmoid = _net("sigmoid")
as_int32 = _net(dtype="int32")
plain = _net()


def softmax_layer(observation_space, action_space):
    return keras.Sequential([keras.Input(observation_space.shape), keras.layers.Dense(16),
                             keras.layers.Dense(action_space.n), keras.layers.Softmax()])


class Subclassed(keras.Model):
    def __init__(self, n):
        super().__init__()
        self.dense = keras.layers.Dense(n)

    def call(self, x):
        return keras.ops.softmax(self.dense(x))


def subclassed(observation_space, action_space):
    return Subclassed(int(action_space.n))


def c51_softmax(observation_space, action_space):
    return _net("softmax", n=int(action_space.n) * 51)(observation_space, action_space)
"""


@pytest.fixture
def nets(tmp_path, monkeypatch):
    import sys

    (tmp_path / "wave5_nets.py").write_text(NETS)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "wave5_nets"
    sys.modules.pop("wave5_nets", None)


@pytest.mark.parametrize(
    ("agent", "builder"),
    [("dqn", "softmax"), ("dqn", "softmax_layer"), ("dqn", "subclassed"), ("c51", "c51_softmax")],
)
def test_3_a_q_network_that_outputs_probabilities_is_refused(capsys, tmp_path, nets, agent,
                                                             builder):  # fmt: skip
    line = refused(capsys, "train", agent, "--set", f"q_network={nets}:{builder}", "--steps", "50",
                   "--set", "jit_compile=false", "--out", tmp_path / "r")  # fmt: skip
    assert "q_network" in line and "probabilit" in line and "linear" in line, line
    assert not (tmp_path / "r").exists()


def test_3_a_q_network_taking_int32_for_a_float_observation_is_refused(capsys, tmp_path, nets):
    line = refused(capsys, "train", "dqn", "--set", f"q_network={nets}:as_int32", "--steps", "50",
                   "--out", tmp_path / "r")  # fmt: skip
    assert "q_network takes int32 input but the observation is float32" in line, line
    assert not (tmp_path / "r").exists()


def test_3_a_bounded_q_network_is_one_warning_and_a_plain_one_none(nets):
    import warnings

    import gymnasium as gym

    import rlkit
    from rlkit.core.errors import RlkitWarning

    env = gym.make("CartPole-v1")
    with pytest.warns(RlkitWarning, match="q_network ends in a sigmoid: its Q-values lie in"):
        rlkit.agents.DQN.from_env(env, q_network=f"{nets}:sigmoid", jit_compile=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RlkitWarning)
        rlkit.agents.DQN.from_env(env, q_network=f"{nets}:plain", jit_compile=False)


# -- 6: networks too large for this machine: bounded before TensorFlow loads ----------------------
def test_6_num_atoms_beyond_memory_is_one_line_before_tensorflow(tmp_path):
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from rlkit.cli.main import main\n"
        "status = main(['train', 'c51', '--set', 'num_atoms=1000000000', '--out', "
        f"{str(tmp_path / 'r')!r}])\n"
        "assert 'tensorflow' not in sys.modules, 'TensorFlow was imported'\n"
        "sys.exit(status)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=REPO, timeout=120)  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rlkit: error: num_atoms=1,000,000,000 makes "
                                                   "c51's networks need ~"), lines  # fmt: skip
    assert "of memory available here: lower num_atoms" in lines[0]
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("agent", "key", "value", "named"),
    [
        ("c51", "num_atoms", 100_000_000, "num_atoms=100,000,000"),
        ("dqn", "hidden_sizes", "100000,100000", "hidden_sizes=100000,100000"),
        ("iqn", "num_tau_samples", 10_000_000, "num_tau_samples=10,000,000"),
    ],
)
def test_6_the_bound_names_the_key_and_the_memory(monkeypatch, agent, key, value, named):
    from rlkit.config import memory
    from rlkit.run import experiment

    monkeypatch.setattr(memory, "available_memory", lambda: 64 * 10**9)
    with pytest.raises(UsageError) as exc:
        experiment.plan(agent, "CartPole-v1", overrides=[f"{key}={value}"])
    line = one_line(exc)
    assert line.startswith(f"{named} makes {agent}'s networks need ~") and "64 GB" in line, line


@pytest.mark.slow
def test_6_every_agent_default_and_preset_fits_in_a_small_machine(monkeypatch):
    from rlkit.agents.registry import AGENTS
    from rlkit.config import memory, presets
    from rlkit.run import experiment

    monkeypatch.setattr(memory, "available_memory", lambda: 2 * 10**9)
    for name in AGENTS:
        experiment.plan(name)
    for preset in presets.presets():
        if preset.env and not preset.env.startswith(("ALE/", "MinAtar/", "BipedalWalker")):
            experiment.plan(preset.agent, preset.env, preset=preset.name)


def test_6_an_agent_made_from_python_is_bounded_too(monkeypatch):
    import rlkit
    from rlkit.config import memory

    monkeypatch.setattr(memory, "available_memory", lambda: 8 * 10**9)
    with pytest.raises(UsageError) as exc:
        rlkit.agents.C51.from_env("CartPole-v1", num_atoms=100_000_000)
    assert "num_atoms=100,000,000" in one_line(exc) and "8.0 GB" in one_line(exc)


# -- 1 and 2: a user's environment that raises, misfits or gives NaN -------------------------------
BAD_ENV = """
import gymnasium as gym
import numpy as np


class Bad(gym.Env):
    '''A corridor of ``length`` steps that goes wrong (``mode``) from step ``fail_at`` on.'''

    observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, mode="step", fail_at=3, length=5):
        self.mode, self.fail_at, self.length = mode, fail_at, length
        self.t, self.resets = 0, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t, self.resets = 0, self.resets + 1
        if self.mode == "reset" and self.resets > 1:
            raise RuntimeError("the door is stuck")
        if self.mode == "reset_size":
            return np.zeros(3, np.float32), {}
        return np.array([0.0, 1.0], np.float32), {}

    def step(self, action):
        self.t += 1
        obs, reward = np.array([0.5, 1.0], np.float32), 1.0
        if self.t >= self.fail_at:
            if self.mode == "step":
                raise RuntimeError("the sensor fell off")
            if self.mode == "size":
                obs = np.zeros(5, np.float32)
            if self.mode == "nan_reward":
                reward = float("nan")
            if self.mode == "nan_obs":
                obs = np.array([np.nan, 1.0], np.float32)
            if self.mode == "zero_length":
                obs = np.array([self.t / 0, 1.0], np.float32)
        return obs, reward, self.t >= self.length, False, {}


gym.register("wave5bad/Bad-v0", entry_point=Bad)
"""
BAD = "wave5bad:wave5bad/Bad-v0"
SMALL = ["--set", "hidden_sizes=8", "--set", "learning_starts=50", "--set", "jit_compile=false",
         "--eval-every", "0", "--eval-episodes", "2", "--quiet"]  # fmt: skip


@pytest.fixture
def bad_env(tmp_path, monkeypatch):
    import sys

    import gymnasium as gym

    (tmp_path / "wave5bad.py").write_text(BAD_ENV)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    gym.registry.pop("wave5bad/Bad-v0", None)
    sys.modules.pop("wave5bad", None)


def _train_bad(capsys, out: Path, mode: str, *more: str) -> tuple[int, str, str]:
    return cli(capsys, "train", "dqn", "--env", BAD, "--env-kwargs", f'mode="{mode}"',
               "--steps", "300", "--out", out, *SMALL, *more)  # fmt: skip


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("step", "environment 'wave5bad/Bad-v0' raised in step(): RuntimeError: the sensor fell "
                 "off"),
        ("reset", "environment 'wave5bad/Bad-v0' raised in reset(): RuntimeError: the door is "
                  "stuck"),
        ("size", "environment 'wave5bad/Bad-v0' returned from step() an observation of shape (5,) "
                 "where its observation space is (2,)"),
        ("reset_size", "returned from reset() an observation of shape (3,) where its observation "
                       "space is (2,)"),
        ("zero_length", "raised in step(): ZeroDivisionError: division by zero"),
    ],
)  # fmt: skip
def test_1_an_environment_that_fails_is_one_line_exit_2_and_no_run_folder(capsys, bad_env, mode,
                                                                          message):  # fmt: skip
    out = bad_env / "runs"
    status, _, err = _train_bad(capsys, out, mode)
    assert status == 2, err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("rlkit: error: environment 'wave5bad/Bad-v0' ") and message in last, last
    assert "was removed (it had no checkpoint yet)" in last
    assert not out.exists() or not any(out.iterdir())


def test_1_a_vector_env_that_fails_names_it_too(capsys, bad_env):
    out = bad_env / "runs"
    status, _, err = _train_bad(capsys, out, "step", "--num-envs", "2")
    assert status == 2, err
    assert "environment 'wave5bad/Bad-v0' raised in step(): RuntimeError" in err
    assert not out.exists() or not any(out.iterdir())


def test_1_a_failure_after_a_checkpoint_keeps_it_and_names_the_folder(capsys, bad_env):
    out = bad_env / "runs"
    status, _, err = _train_bad(capsys, out, "step", "--env-kwargs", "fail_at=150", "--env-kwargs",
                                "length=1000", "--checkpoint-every", "100")  # fmt: skip
    assert status == 2, err
    (run,) = out.iterdir()
    last = err.strip().splitlines()[-1]
    assert f"its checkpoints are kept in {run}: fix the environment and rlkit resume {run}" in last
    assert (run / "checkpoints").is_dir()


def test_1_from_python_the_error_is_one_line_with_the_environments_own_cause(bad_env):
    import gymnasium as gym
    import wave5bad  # noqa: F401  (registers the env)

    import rlkit
    from rlkit.core.errors import EnvironmentFailed

    env = gym.make("wave5bad/Bad-v0", mode="step")
    agent = rlkit.agents.DQN.from_env(env, hidden_sizes=(8,), learning_starts=10,
                                      jit_compile=False)  # fmt: skip
    with pytest.raises(EnvironmentFailed) as exc:
        rlkit.train(agent, env, steps=50)
    assert "raised in step(): RuntimeError: the sensor fell off" in one_line(exc)
    assert isinstance(exc.value.__cause__, RuntimeError)
    with pytest.raises(EnvironmentFailed) as exc:
        rlkit.evaluate(agent, gym.make("wave5bad/Bad-v0", mode="size"), episodes=1)
    assert "an observation of shape (5,)" in one_line(exc)
    with pytest.raises(EnvironmentFailed) as exc:
        rlkit.evaluate(agent, gym.make("wave5bad/Bad-v0", mode="nan_reward"), episodes=1)
    assert "non-finite reward in evaluation episode 1" in one_line(exc)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("nan_reward", "environment 'wave5bad/Bad-v0' gave a reward of nan at step 3 from step()"),
        ("nan_obs", "environment 'wave5bad/Bad-v0' returned from step() at step 3 an observation "
                    "holding nan"),
    ],
)  # fmt: skip
def test_2_nan_from_the_environment_is_named_as_the_environments_not_a_learning_rate(
    capsys, bad_env, mode, message
):
    out = bad_env / "runs"
    status, _, err = _train_bad(capsys, out, mode)
    assert status == 2, err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"rlkit: error: {message}"), last
    assert "learning_rate" not in err


def test_2_the_check_names_the_step_and_the_sub_environment_and_forgets_what_it_checked():
    import numpy as np

    from rlkit.core.errors import EnvironmentFailed
    from rlkit.envs.make import make_vector_env
    from rlkit.run.streams import Streams

    streams = Streams(make_vector_env("CartPole-v1", 3))
    streams.reset(0)
    for _ in range(10):
        streams.step(np.zeros(3, np.int64))
    streams.check_finite(30)
    assert streams.pending_rewards == [] and streams.pending_obs == []
    for _ in range(5):
        streams.step(np.zeros(3, np.int64))
    streams.pending_rewards[2] = np.array([1.0, 1.0, np.inf])
    with pytest.raises(EnvironmentFailed) as exc:
        streams.check_finite(45)  # the 5 steps since: 33, 36, 39, 42, 45
    assert "gave a reward of inf at step 39 (sub-environment 2)" in one_line(exc)


def test_2_the_loop_checks_per_block_and_episode_not_per_step(monkeypatch):
    import gymnasium as gym

    import rlkit
    from rlkit.run.streams import Streams

    calls = []
    real = Streams.check_finite
    monkeypatch.setattr(Streams, "check_finite", lambda self, step: calls.append(step) or
                        real(self, step))  # fmt: skip
    env = gym.make("CartPole-v1")
    agent = rlkit.agents.DQN.from_env(env, hidden_sizes=(8,), learning_starts=10_000,
                                      jit_compile=False)  # fmt: skip
    history = rlkit.train(agent, env, steps=600)
    assert len(calls) <= len(history.episode_returns) + 600 // 256 < 600


# -- 8: Ctrl-C while the compiled loop compiles ---------------------------------------------------
def _interrupt_compile(out: Path, times: int) -> tuple[int, str, float]:
    """``rlkit train dqn --env rlkit/CartPole-v1`` sent ``times`` SIGINTs while its loop
    compiles (after the line printed just before the compile): (status, stderr, seconds
    from the last signal to the exit)."""
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen(
        [sys.executable, "-m", "rlkit.cli.main", "train", "dqn", "--env", "rlkit/CartPole-v1",
         "--steps", "100000", "--eval-every", "0", "--quiet", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    seen = []
    assert proc.stderr is not None
    for line in proc.stderr:
        seen.append(line)
        if line.startswith("replay:"):  # the compile starts now (it takes seconds)
            break
    time.sleep(0.5)
    for _ in range(times):
        proc.send_signal(signal.SIGINT)
        time.sleep(0.3)
    sent = time.time()
    _, err = proc.communicate(timeout=300)
    return proc.returncode, "".join(seen) + err, time.time() - sent


@pytest.mark.slow
def test_8_ctrl_c_while_compiling_checkpoints_step_0_and_resumes(tmp_path):
    import subprocess
    import sys

    status, err, _ = _interrupt_compile(tmp_path / "runs", 1)
    assert status == 130, err
    assert "Traceback" not in err and "\ninterrupted" not in err
    assert err.index("stopping: the loop finishes compiling first") < err.index("compiled the loop")
    (run,) = (tmp_path / "runs").iterdir()
    assert f"stopped at step 0; checkpoint saved. Continue with: rlkit resume {run}" in err
    assert (run / "checkpoints" / "step-0000000000").is_dir()
    done = subprocess.run(
        [sys.executable, "-m", "rlkit.cli.main", "resume", str(run), "--steps", "300", "--quiet"],
        capture_output=True, text=True, cwd=REPO, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "resuming dqn on rlkit/CartPole-v1 at step 0 of 300" in done.stderr


@pytest.mark.slow
def test_8_a_second_ctrl_c_while_compiling_quits_at_once_and_leaves_nothing(tmp_path):
    status, err, seconds = _interrupt_compile(tmp_path / "runs", 2)
    assert status == 130, err
    assert "Traceback" not in err and "compiled the loop" not in err
    last = err.strip().splitlines()[-1]
    said = "stopped while the loop compiled, before its first step: nothing to keep, the run "
    assert last.startswith(said + "folder ") and last.endswith(" was removed"), last
    assert not any((tmp_path / "runs").iterdir())
    assert seconds < 5  # (not after the compile)
