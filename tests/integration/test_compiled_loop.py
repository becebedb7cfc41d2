"""The compiled loop: its replay in variables, which loop a run takes, bad input in one line,
and exact resume at chunk boundaries (its in-graph schedules: tests/unit/core/
test_schedule_twins.py)."""

import importlib.util
import json
import os

import numpy as np
import pytest
import tensorflow as tf

from rlkit.agents.ddpg.config import DDPGConfig
from rlkit.agents.dqn.config import DQNConfig
from rlkit.cli.main import main
from rlkit.replay.in_graph import GraphReplay
from rlkit.run.compiled.choice import choose_loop


def test_replay_ring_wraps_and_keeps_whole_transitions():
    replay = GraphReplay(3, obs_dim=2)
    obs = np.array([[1, 1], [2, 2]], np.float32)
    replay.add(obs, [0, 1], [1.0, 2.0], obs + 10, [False, True])
    assert (int(replay.position), int(replay.size)) == (2, 2)
    replay.add(obs + 2, [1, 0], [3.0, 4.0], obs + 12, [True, False])  # slots 2, then 0
    assert (int(replay.position), int(replay.size)) == (1, 3)
    np.testing.assert_array_equal(replay.obs.numpy(), [[4, 4], [2, 2], [3, 3]])
    np.testing.assert_array_equal(replay.next_obs.numpy(), [[14, 14], [12, 12], [13, 13]])
    np.testing.assert_array_equal(replay.rewards.numpy(), [4, 2, 3])
    np.testing.assert_array_equal(replay.actions.numpy(), [0, 1, 1])
    np.testing.assert_array_equal(replay.terminated.numpy(), [0, 1, 1])
    obs_b, actions, rewards, next_obs, _ = replay.gather(tf.constant([2, 0]))
    np.testing.assert_array_equal(obs_b.numpy(), [[3, 3], [4, 4]])
    np.testing.assert_array_equal(next_obs.numpy() - obs_b.numpy(), [[10, 10], [10, 10]])
    np.testing.assert_array_equal(rewards.numpy(), [3, 4])


def test_replay_samples_only_filled_slots_and_a_seed_repeats_its_draw():
    replay = GraphReplay(100, obs_dim=1)
    replay.add(np.zeros((5, 1), np.float32), [0] * 5, [0.0] * 5, np.zeros((5, 1), np.float32),
               [False] * 5)  # fmt: skip
    seed = tf.constant([3, 4])
    first = replay.indices(1000, seed).numpy()
    assert first.min() == 0 and first.max() == 4
    np.testing.assert_array_equal(first, replay.indices(1000, seed).numpy())


def test_replay_state_round_trips_and_refuses_another_shape():
    replay = GraphReplay(4, obs_dim=2)
    replay.add(np.ones((3, 2), np.float32), [1, 1, 0], [1.0, 2.0, 3.0],
               np.ones((3, 2), np.float32), [False, False, True])  # fmt: skip
    other = GraphReplay(4, obs_dim=2)
    other.load_state_dict(replay.state_dict())
    for name, value in replay.state_dict().items():
        np.testing.assert_array_equal(other.state_dict()[name], value)
    assert other.nbytes == 4 * (2 + 1 + 1 + 2 + 1) * 4 + 2 * 4  # float32/int32 slots, 2 ints
    with pytest.raises(ValueError, match="shape"):
        GraphReplay(5, obs_dim=2).load_state_dict(replay.state_dict())


def test_autograph_only_for_code_of_ones_own_in_the_config():
    from rlkit.run.compiled.program import needs_autograph

    assert not needs_autograph(DQNConfig(hidden_sizes=(120, 84), loss="mse"))
    assert not needs_autograph(DDPGConfig(td3=True))
    assert needs_autograph(DQNConfig(loss=lambda *args, **kwargs: None))  # may branch in Python


def test_which_loop_a_run_takes():
    cfg = DQNConfig()
    assert choose_loop("rlkit/CartPole-v1", "dqn", cfg)[0] is True
    assert choose_loop("rlkit/CartPole-v1", "dqn", cfg, "python") == (
        False,
        "loop: python (asked for)",
    )
    # gymnasium's CartPole: the Python loop, and no tip: at the defaults the compiled loop was
    # measured slower in wall time (issue 55); MinAtar's games: the tip with the measured ratio
    assert choose_loop("CartPole-v1", "dqn", cfg) == (False, None)
    compiled, note = choose_loop("MinAtar/Breakout-v0", "dqn", cfg)
    assert not compiled and note.startswith("tip: --env rlkit/MinAtar-Breakout-v0 is this env")
    assert "1.5-2.8x the Python loop's steps/s" in note
    assert choose_loop("MinAtar/Breakout-v0", "c51", object()) == (False, None)  # not measured
    assert choose_loop("CartPole-v1", "dqn", cfg, "python") == (False, None)  # asked for
    assert choose_loop("LunarLander-v3", "dqn", cfg) == (False, None)  # no twin
    assert choose_loop("CartPole-v1", "dqn", DQNConfig(frame_stack=True)) == (False, None)  # no fit
    family = DQNConfig(prioritized=True, n_step=3)  # the family's replay: compiled too
    assert choose_loop("rlkit/CartPole-v1", "dqn", family)[0] is True
    assert choose_loop("rlkit/CartPole-v1", "c51", object())[0] is True
    assert choose_loop("rlkit/CartPole-v1", "dqn", DQNConfig(noisy=True))[0] is True
    compiled, note = choose_loop("rlkit/CartPole-v1", "dqn", DQNConfig(frame_stack=True))
    assert not compiled and "frame stacks" in note
    td3_family = DDPGConfig(td3=True, prioritized=True, n_step=3)
    assert choose_loop("rlkit/Pendulum-v1", "ddpg", td3_family)[0] is True
    assert choose_loop("rlkit/Pendulum-v1", "ddpg", DDPGConfig())[0] is True
    compiled, note = choose_loop("rlkit/Pendulum-v1", "ddpg", DDPGConfig(noise="ou"))
    assert not compiled and "Gaussian" in note
    compiled, note = choose_loop("rlkit/CartPole-v1", "reinforce", object())
    assert not compiled and "reinforce has no compiled loop" in note


@pytest.mark.parametrize(
    "agent, options, word",
    [
        ("dqn", ["--set", "rescale_r=true", "--set", "r_max_running=true"], "r_max"),
        ("ddpg", ["--env", "rlkit/Pendulum-v1", "--set", "noise=ou"], "Gaussian"),
        ("reinforce", [], "reinforce"),
        ("dqn", ["--env", "CartPole-v1"], "not one of rlkit's TensorFlow environments"),
    ],
)
def test_a_forced_compiled_loop_it_cannot_run_is_one_line(capsys, tmp_path, agent, options, word):
    env = [] if "--env" in options else ["--env", "rlkit/CartPole-v1"]
    status = main(["train", agent, *env, *options, "--loop", "compiled", "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1
    assert word in err and "--loop python" in err
    assert not any(tmp_path.iterdir())  # nothing made


SMALL = {
    "hidden_sizes": [16], "batch_size": 16, "buffer_size": 200, "learning_starts": 64,
    "train_freq": 4, "gradient_steps": 2, "target_update": 40, "learning_rate": 1e-3,
    "learning_rate_end": 1e-4, "lr_anneal_steps": 400, "eps_anneal_steps": 300,
}  # fmt: skip


def _plan(steps, checkpoint_every):
    from rlkit.run import experiment

    return experiment.plan("dqn", "rlkit/CartPole-v1", steps=steps, seed=5, num_envs=4,
                           eval_every=0, checkpoint_every=checkpoint_every, preset="none",
                           overrides=SMALL)  # fmt: skip


def _weights(agent):
    return [v.numpy() for vs in agent.checkpoint_variables().values() for v in vs]


@pytest.mark.slow
def test_a_resumed_run_equals_an_uninterrupted_one(tmp_path):
    from rlkit.run import experiment
    from rlkit.run.compiled.trainer import CompiledTrainer

    straight = experiment.start(_plan(600, 0), tmp_path / "a", tensorboard=False)
    assert isinstance(straight, CompiledTrainer)
    straight.program.chunk = 50  # other chunk boundaries than the stopped run's
    history = straight.run(600)
    straight.close()

    stopped = experiment.start(_plan(600, 120), tmp_path / "b", tensorboard=False)
    stopped.run(300)  # checkpoints at 120, 240 and the end (300)
    stopped.close()
    resumed, _ = experiment.resume(stopped.run_dir)
    assert isinstance(resumed, CompiledTrainer) and resumed.step == 300
    resumed_history = resumed.run(600)
    resumed.close()

    assert history.steps == resumed_history.steps == 600
    assert resumed.agent.learner.num_updates == straight.agent.learner.num_updates > 0
    for a, b in zip(_weights(straight.agent), _weights(resumed.agent), strict=True):
        np.testing.assert_array_equal(a, b)
    for name, value in straight.program.state_dict().items():
        np.testing.assert_array_equal(resumed.program.state_dict()[name], value, err_msg=name)
    optimizer = [v.numpy() for v in straight.agent.learner.pipeline.optimizer.variables]
    for a, b in zip(optimizer, [v.numpy() for v in resumed.agent.learner.pipeline.optimizer
                                .variables], strict=True):  # fmt: skip
        np.testing.assert_array_equal(a, b)
    rows_a = (straight.run_dir / "metrics.csv").read_text().splitlines()
    rows_b = (resumed.run_dir / "metrics.csv").read_text().splitlines()
    assert rows_a == rows_b and len(rows_a) > 10  # every episode at its own step
    state = json.loads((resumed.run_dir / "checkpoints" / "step-0000000600" / "state.json")
                       .read_text())  # fmt: skip
    assert state["loop"]["state"]["episodes"] == len(rows_a) - 1


@pytest.mark.slow
def test_ddpg_trains_in_the_compiled_loop_and_resumes_exactly(tmp_path):
    from rlkit.run import experiment
    from rlkit.run.compiled.ddpg import DDPGProgram

    keys = {"actor_hidden_sizes": [16], "critic_hidden_sizes": [16], "batch_size": 16,
            "buffer_size": 300, "learning_starts": 100, "train_freq": 2, "gradient_steps": 2,
            "td3": True, "policy_delay": 2}  # fmt: skip

    def plan(checkpoint_every):
        return experiment.plan("ddpg", "rlkit/Pendulum-v1", steps=400, seed=1, num_envs=2,
                               eval_every=0, checkpoint_every=checkpoint_every, preset="none",
                               overrides=keys)  # fmt: skip

    straight = experiment.start(plan(0), tmp_path / "a", tensorboard=False)
    assert isinstance(straight.program, DDPGProgram)
    straight.run(400)
    straight.close()
    stopped = experiment.start(plan(0), tmp_path / "b", tensorboard=False)
    stopped.run(200)
    stopped.close()
    resumed, _ = experiment.resume(stopped.run_dir)
    resumed.run(400)
    resumed.close()
    learner = straight.agent.learner
    # blocks of 2 at the multiples of train_freq = 2 from learning_starts = 100 to 400: 151
    assert learner.num_updates == resumed.agent.learner.num_updates == 302
    assert learner.num_actor_updates == resumed.agent.learner.num_actor_updates == 151
    for a, b in zip(_weights(straight.agent), _weights(resumed.agent), strict=True):
        np.testing.assert_array_equal(a, b)
    rows = (straight.run_dir / "metrics.csv").read_text().splitlines()
    assert rows == (resumed.run_dir / "metrics.csv").read_text().splitlines()
    assert len(rows) == 1 + 2  # each copy's one 200-step episode (Pendulum never terminates)


#: a child that compiles a small program of one seed, keeping its XLA code in a folder
CACHE_CHILD = """
import json, sys
from rlkit.envs.tf import make_tf_env
from rlkit.run import experiment
from rlkit.run.compiled import choice as compiled_choice
from rlkit.run.plan import make_envs
agent_name, env_id, seed, folder, overrides = sys.argv[1:]
compiled_choice.use_xla_cache(folder, env_id)
from rlkit.run.compiled.ddpg import DDPGProgram
from rlkit.run.compiled.dqn import DQNProgram
plan = experiment.plan(agent_name, env_id, steps=100, seed=int(seed), eval_every=0,
                       checkpoint_every=0, preset="none", overrides=json.loads(overrides))
env = make_envs(plan.settings, plan.spec)
agent = plan.spec.load_class().from_env(env, seed=int(seed), config=plan.agent_config)
program = (DDPGProgram if agent_name == "ddpg" else DQNProgram)(
    agent, make_tf_env(env_id), 2, int(seed), 8)
program.run_chunk(8)
print(json.dumps([float(w.numpy().sum()) for w in agent.learner.q.model.weights]
                 if agent_name == "dqn" else []))
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("agent", "env_id", "overrides"),
    [("dqn", "rlkit/CartPole-v1", dict(SMALL, learning_starts=8)),
     ("ddpg", "rlkit/Pendulum-v1", {"td3": True, "batch_size": 8, "buffer_size": 64,
                                    "actor_hidden_sizes": [8], "critic_hidden_sizes": [8]})],
)  # fmt: skip
def test_every_seed_of_a_configuration_compiles_to_the_same_xla_code(
    tmp_path, agent, env_id, overrides
):
    """What lets a sweep's seeds share one compilation (use_xla_cache): nothing of the seed
    is a constant of the program (its seed is a variable, its constants are made in place),
    so a second seed finds the first one's code; and loading it changes nothing."""
    import subprocess
    import sys

    def child(seed, folder):
        argv = [sys.executable, "-c", CACHE_CHILD, agent, env_id, str(seed), str(folder),
                json.dumps(overrides)]  # fmt: skip
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
        env.pop("TF_XLA_FLAGS", None)
        done = subprocess.run(argv, capture_output=True, text=True, env=env, check=True)
        return json.loads(done.stdout.strip().splitlines()[-1])

    shared = tmp_path / "shared"
    first = child(0, shared)
    second = child(1, shared)
    assert len(list(shared.rglob("*.pb"))) == 1  # seed 1 compiled nothing of its own
    assert child(1, tmp_path / "alone") == second  # compiled afresh: the same weights
    if agent == "dqn":
        assert first != second


def test_a_sweeps_trials_keep_their_xla_code_in_one_folder(tmp_path, monkeypatch):
    from rlkit.run.compiled.choice import CACHE_FLAG, use_xla_cache

    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_min_cluster_size=4")
    assert use_xla_cache(tmp_path, "CartPole-v1") is None  # gymnasium's: nothing
    folder = use_xla_cache(tmp_path, "rlkit/CartPole-v1")
    assert folder == tmp_path / f"tensorflow-{tf.__version__}" and folder.is_dir()
    flags = os.environ["TF_XLA_FLAGS"]  # then the CPU's prefix (tests/unit/run/test_xla_cache)
    assert flags.startswith(f"--tf_xla_min_cluster_size=4 {CACHE_FLAG}={folder} ")
    assert use_xla_cache(tmp_path / "other", "rlkit/CartPole-v1") is None  # one named wins
    assert str(folder) in os.environ["TF_XLA_FLAGS"]


# `long` (run when asked: -m long): 2-4 min of one worker, a Ray sweep of the compiled loop
# plus a run in a process of its own. The default suite keeps its parts: the cache folder a
# sweep names (test_a_sweeps_trials_keep_their_xla_code_in_one_folder, above, and
# test_xla_cache_entries.py), one compile per configuration
# (test_every_seed_of_a_configuration_compiles_to_the_same_xla_code) and a sweep trial equal
# to rlkit train (tests/integration/test_sweep.py).
@pytest.mark.long
@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs the ray extra")
def test_a_sweeps_seeds_share_one_compile_and_each_equals_rlkit_train(capsys, tmp_path):
    import subprocess
    import sys

    common = ["--env", "rlkit/CartPole-v1", "--steps", "600", "--preset", "none",
              "--eval-every", "0", "--set", "hidden_sizes=16", "--set", "learning_starts=100",
              "--set", "buffer_size=300"]  # fmt: skip
    sweep = ["sweep", "dqn", *common, "--seeds", "0,1", "--max-concurrent", "1"]
    assert main([*sweep, "--out", str(tmp_path / "s")]) == 0, capsys.readouterr().err
    compiled = list((tmp_path / "s" / "xla-cache").rglob("*.pb"))
    # seed 1 alone, in a process of its own, with a cache of its own: as many programs (the
    # names differ: a trial runs TensorFlow on the CPUs Ray gave it), the same run
    train = [sys.executable, "-m", "rlkit.cli.main", "train", "dqn", *common, "--seed", "1",
             "--quiet", "--out", str(tmp_path / "t")]  # fmt: skip
    own = tmp_path / "own-cache"
    env = dict(os.environ, TF_XLA_FLAGS=f"--tf_xla_persistent_cache_directory={own}")
    subprocess.run(train, env=env, check=True, capture_output=True)
    assert compiled and len(compiled) == len(list(own.rglob("*.pb")))  # none for seed 1
    (run_dir,) = (tmp_path / "t").iterdir()
    trial = tmp_path / "s" / "runs" / "default" / "seed-1" / "metrics.csv"
    assert trial.read_text() == (run_dir / "metrics.csv").read_text()  # loaded code, same run


def test_a_chunk_lasts_about_a_second_at_the_speed_of_the_last_one(tmp_path):
    from rlkit.run import experiment
    from rlkit.run.compiled.trainer import CHUNK_SECONDS, FIRST_CHUNK

    trainer = experiment.start(_plan(100_000, 0), tmp_path, tensorboard=False)
    try:
        assert trainer._chunk_length(100_000) == FIRST_CHUNK  # no speed known yet
        trainer._vector_steps_per_second = 300.0  # MinAtar-like: ~1 ms a step
        assert trainer._chunk_length(100_000) == int(300 * CHUNK_SECONDS)
        trainer._vector_steps_per_second = 1e7  # fast: the chunk's own size caps it
        assert trainer._chunk_length(100_000) == trainer.program.chunk
        assert trainer._chunk_length(8) == 2  # the step limit (4 copies) comes first
    finally:
        trainer.close()
