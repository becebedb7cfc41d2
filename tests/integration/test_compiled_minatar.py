"""The compiled loop on MinAtar's games in TensorFlow (``rlkit/MinAtar-<Game>-v0``): which
loop a run takes, boards kept as booleans in the replay, the preset's DQN trained inside one
program, and exact resume at chunk boundaries."""

import numpy as np
import pytest
import tensorflow as tf

from rlkit.agents.dqn.config import DQNConfig
from rlkit.agents.dqn.distributional_config import RainbowConfig
from rlkit.cli.main import main
from rlkit.replay.in_graph import GraphReplay
from rlkit.run.compiled.choice import choose_loop

BREAKOUT = "rlkit/MinAtar-Breakout-v0"


def test_dqn_on_a_minatar_game_takes_the_compiled_loop_and_others_say_why_not():
    assert choose_loop(BREAKOUT, "dqn", DQNConfig(torso="minatar"))[0] is True
    compiled, note = choose_loop("MinAtar/Breakout-v0", "dqn", DQNConfig())  # minatar's id
    assert not compiled and "--env rlkit/MinAtar-Breakout-v0" in note
    compiled, note = choose_loop(BREAKOUT, "ddpg", object())
    runs = "runs dqn, sac, c51, qrdqn, rainbow, ppo, a2c on rlkit/MinAtar-Breakout-v0"
    assert not compiled and runs in note
    compiled, note = choose_loop(BREAKOUT, "iqn", object())
    assert not compiled and "iqn has no compiled loop" in note
    assert choose_loop(BREAKOUT, "rainbow", RainbowConfig(noisy=False))[0] is True
    assert choose_loop(BREAKOUT, "rainbow", RainbowConfig())[0] is True  # noisy by default
    compiled, note = choose_loop("MinAtar/Breakout-v0", "rainbow", RainbowConfig(noisy=False))
    assert not compiled and "--env rlkit/MinAtar-Breakout-v0" in note


def test_the_replay_keeps_boards_as_booleans():
    replay = GraphReplay(3, (2, 2, 3), obs_dtype=tf.bool)
    boards = np.zeros((2, 2, 2, 3), bool)
    boards[0, 1, 0, 2] = boards[1, 0, 1, 0] = True
    replay.add(boards, [4, 5], [1.0, 0.0], ~boards, [False, True])
    obs, actions, rewards, next_obs, terminated = replay.gather(tf.constant([1, 0]))
    assert obs.dtype == tf.bool and obs.shape == (2, 2, 2, 3)
    np.testing.assert_array_equal(obs.numpy(), boards[::-1])
    np.testing.assert_array_equal(next_obs.numpy(), ~boards[::-1])
    np.testing.assert_array_equal(terminated.numpy(), [1.0, 0.0])
    assert replay.nbytes == 3 * (12 + 4 + 4 + 12 + 4) + 2 * 4  # a byte a cell


@pytest.mark.slow
def test_the_cli_says_the_compiled_loop_runs_a_minatar_game(capsys, tmp_path):
    status = main(["train", "dqn", "--env", BREAKOUT, "--steps", "200", "--quiet",
                   "--eval-every", "0", "--out", str(tmp_path),
                   "--set", "learning_starts=50", "--set", "batch_size=8"])  # fmt: skip
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert status == 0
    assert "using preset dqn/MinAtar_Breakout-v0" in out and "loop: compiled" in out


SMALL = {"buffer_size": 300, "learning_starts": 64, "batch_size": 16, "target_update": 50,
         "eps_anneal_steps": 200}  # fmt: skip


def _plan(checkpoint_every, agent="dqn", overrides=SMALL):
    from rlkit.run import experiment

    return experiment.plan(agent, BREAKOUT, steps=500, seed=3, num_envs=2, eval_every=0,
                           checkpoint_every=checkpoint_every, overrides=overrides)  # fmt: skip


def _straight_and_resumed(tmp_path, agent="dqn", overrides=SMALL):
    """The same 500-step run whole (chunks of 40) and stopped at 200 then resumed; asserts
    they end equal (every program variable, the weights, metrics.csv) and returns both."""
    from rlkit.run import experiment
    from rlkit.run.compiled.trainer import CompiledTrainer

    straight = experiment.start(_plan(0, agent, overrides), tmp_path / "a", tensorboard=False)
    assert isinstance(straight, CompiledTrainer)
    straight.program.chunk = 40
    straight.run(500)
    straight.close()

    stopped = experiment.start(_plan(100, agent, overrides), tmp_path / "b", tensorboard=False)
    stopped.run(200)
    stopped.close()
    resumed, _ = experiment.resume(stopped.run_dir)
    assert isinstance(resumed, CompiledTrainer) and resumed.step == 200
    resumed.run(500)
    resumed.close()

    assert resumed.agent.learner.num_updates == straight.agent.learner.num_updates > 100
    for name, value in straight.program.state_dict().items():
        np.testing.assert_array_equal(resumed.program.state_dict()[name], value, err_msg=name)
    for a, b in zip(straight.agent.learner.q.model.get_weights(),
                    resumed.agent.learner.q.model.get_weights(), strict=True):  # fmt: skip
        np.testing.assert_array_equal(a, b)
    rows = (straight.run_dir / "metrics.csv").read_text().splitlines()
    assert rows == (resumed.run_dir / "metrics.csv").read_text().splitlines() and len(rows) > 5
    return straight, resumed


@pytest.mark.slow
def test_a_resumed_minatar_run_equals_an_uninterrupted_one(tmp_path):
    straight, _ = _straight_and_resumed(tmp_path)
    assert straight.program.replay.obs.dtype == tf.bool


RAINBOW_SMALL = {**SMALL, "n_step": 3, "prioritized": True, "importance_anneal_steps": 300}


@pytest.mark.slow
def test_rainbow_in_the_compiled_loop_keeps_its_priorities_and_resumes_exactly(tmp_path):
    straight, _ = _straight_and_resumed(tmp_path, "rainbow", RAINBOW_SMALL)
    program = straight.program
    assert program.replay.horizon == 3
    assert program.replay.streams == 2  # a stream's next transition: 2 slots on
    # every slot written has a priority, none past them; updates moved them off the maximum
    size = int(program.replay.size.numpy())
    tree = program.priorities.tree
    leaves = tree.get(tf.range(tree.leaves)).numpy()
    assert size == 300 and np.all(leaves[:size] > 0) and np.all(leaves[size:] == 0)
    assert float(tree.total.numpy()) == pytest.approx(leaves.sum(), rel=1e-12)
    assert len(np.unique(leaves[:size])) > 50  # TD errors written back, not one maximum
    assert int(program.priorities.nonfinite.numpy()) == 0
