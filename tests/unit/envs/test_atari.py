"""DQN on pixels: DQN3.0's Atari pipeline checked frame by frame, the life-loss rule, the
dqn3 preset's running r_max against the Lua rule, MinAtar and Atari smoke runs."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("ale_py")
pytest.importorskip("minatar")
cv2 = pytest.importorskip("cv2")

import gymnasium as gym  # noqa: E402

import rlkit  # noqa: E402
from rlkit.cli.main import main  # noqa: E402
from rlkit.envs.atari import make_atari  # noqa: E402

pytestmark = [pytest.mark.atari]


def cli(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def test_a_step_is_four_frames_max_pooled_grey_resized_and_stacked():
    env = make_atari("ALE/Breakout-v5", training=False)
    obs, _ = env.reset(seed=3)
    assert obs.shape == (84, 84, 4) and obs.dtype == np.uint8
    assert not obs[..., :3].any() and obs[..., 3].any()  # zero-padded history at the start
    ale = env.unwrapped.ale
    for action in (1, 2, 3, 0):  # FIRE, RIGHT, LEFT, NOOP
        state = ale.cloneState()
        frames = []
        for _ in range(4):  # what the step must do: 4 raw frames of the same action
            ale.act(env.unwrapped._action_set[action])
            frames.append(ale.getScreenGrayscale())
        expected = cv2.resize(np.maximum(frames[-2], frames[-1]), (84, 84),
                              interpolation=cv2.INTER_AREA)  # fmt: skip
        ale.restoreState(state)
        next_obs, *_ = env.step(action)
        np.testing.assert_array_equal(next_obs[..., -1], expected)
        np.testing.assert_array_equal(next_obs[..., :-1], obs[..., 1:])
        obs = next_obs


@pytest.mark.slow
def test_reset_plays_1_to_30_noop_frames_and_never_fire():
    env = make_atari("ALE/Breakout-v5", training=True)
    frames = set()
    for seed in range(12):
        env.reset(seed=seed)
        frames.add(env.unwrapped.ale.getEpisodeFrameNumber())
    assert frames <= set(range(1, 31)) and len(frames) > 3
    assert env.unwrapped.get_action_meanings()[:2] == ["NOOP", "FIRE"]  # minimal set, 4


@pytest.mark.slow
def test_a_lost_life_ends_the_training_episode_without_resetting_the_game():
    train, evaluate = (make_atari("ALE/Breakout-v5", training=t) for t in (True, False))
    for env in (train, evaluate):
        env.reset(seed=0)
        env.action_space.seed(0)
    ale = train.unwrapped.ale
    lives = ale.lives()
    for _ in range(2000):
        obs, reward, terminated, truncated, info = train.step(train.action_space.sample())
        if terminated:
            break
    assert info["life_lost"] and ale.lives() == lives - 1  # terminal for learning ...
    frame = ale.getEpisodeFrameNumber()
    obs, _ = train.reset()
    assert ale.lives() == lives - 1 and ale.getEpisodeFrameNumber() > frame  # ... same game
    assert not obs[..., :3].any()  # a new training episode: zero-padded history
    # evaluation plays whole games: losing a life is not the end of its episode
    ale = evaluate.unwrapped.ale
    start = ale.lives()
    while ale.lives() == start:
        _, _, terminated, _, _ = evaluate.step(evaluate.action_space.sample())
        assert not terminated or ale.lives() == 0


@pytest.mark.slow
def test_the_step_that_ends_a_game_reports_the_whole_game():
    env = make_atari("ALE/Breakout-v5", training=True)
    env.reset(seed=1)
    env.action_space.seed(1)
    scores = []
    for _ in range(2):  # the second game counts from zero again
        total, steps, lives_lost = 0.0, 0, 0
        for _ in range(10_000):
            _, reward, terminated, truncated, info = env.step(env.action_space.sample())
            total, steps = total + reward, steps + 1
            if "game_return" in info:
                break
            if terminated:  # a lost life: the next reset goes on in the same game
                lives_lost += 1
                env.reset()
        else:
            pytest.fail("no step reported the end of the game")
        assert lives_lost == 4 and env.unwrapped.ale.lives() == 0  # Breakout: 5 lives
        assert (info["game_return"], info["game_length"]) == (total, steps)
        scores.append(total)
        env.reset()
    assert max(scores) > 0


@pytest.mark.slow
def test_an_env_checkpointed_before_game_figures_existed_resumes():
    """Unpickled as a checkpoint pickles it (the emulator's state travels through
    ResumableEnv), it plays on as the env it was, and counts its game from the resume on."""
    import pickle

    from rlkit.envs.atari import LifeLossTerminal
    from rlkit.envs.resumable import resumable

    def life_layer(env: gym.Env) -> LifeLossTerminal:
        while not isinstance(env, LifeLossTerminal):
            env = env.env
        return env

    env = resumable(make_atari("ALE/Breakout-v5", training=True))
    env.reset(seed=0)
    for action in (1, 2, 3):  # a game in progress
        env.step(action)
    del life_layer(env).game_return, life_layer(env).game_length  # as an older rlkit pickled it
    resumed = pickle.loads(pickle.dumps(env))
    layer = life_layer(resumed)
    assert "game_return" not in vars(layer) and "game_length" not in vars(layer)
    total, steps = 0.0, 0
    for action in (1, 2, 3, 0, 2, 3):  # the same game: the same screens and rewards
        want, got = env.step(action), resumed.step(action)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1:4] == want[1:4]
        total, steps = total + got[1], steps + 1
    assert (layer.game_return, layer.game_length) == (total, steps)
    resumed.action_space.seed(0)
    for _ in range(10_000):  # on to the end of the game: its figures count from the resume
        _, reward, terminated, _, info = resumed.step(resumed.action_space.sample())
        total, steps = total + reward, steps + 1
        if "game_return" in info:
            break
        if terminated:
            resumed.reset()
    else:
        pytest.fail("no step reported the end of the game")
    assert (info["game_return"], info["game_length"]) == (total, steps)


@pytest.mark.slow
@pytest.mark.parametrize("num_envs", [1, 2])
def test_training_on_atari_logs_each_whole_game(capsys, tmp_path, num_envs):
    import csv

    status, _, err = cli(capsys, "train", "dqn", "--env", "ALE/Breakout-v5", "--steps", "700",
                         "--num-envs", num_envs, "--eval-every", "0", "--eval-episodes", "1",
                         "--quiet", "--checkpoint-every", "0", "--out", tmp_path, "--set",
                         "buffer_size=2000", "--set", "learning_starts=1000")  # fmt: skip
    assert status == 0, err
    (run_dir,) = tmp_path.iterdir()
    rows = list(csv.DictReader(open(run_dir / "metrics.csv")))
    games = [r for r in rows if r["kind"] == "game"]
    assert len(games) >= 2
    assert cli(capsys, "plot", run_dir, "-o", tmp_path / "curve.png")[0] == 0  # game scores
    if num_envs > 1:  # the sub-environments' lives interleave: only the count is checked
        return
    lives_return, lives_length, lives = 0.0, 0, 0
    for row in rows:  # a game row follows its last life's episode row, and sums its lives
        if row["kind"] == "episode":
            lives_return += float(row["return"])
            lives_length += int(row["length"])
            lives += 1
        elif row["kind"] == "game":
            assert lives == 5 and float(row["return"]) == lives_return  # no-ops score 0 here
            assert int(row["length"]) == lives_length
            lives_return, lives_length, lives = 0.0, 0, 0


@pytest.mark.slow
def test_running_r_max_follows_the_lua_rule():
    space = gym.spaces.Box(-1, 1, (3,), np.float32)
    agent = rlkit.agents.DQN(space, gym.spaces.Discrete(2), rescale_r=True, r_max_running=True,
                             hidden_sizes=(8,), jit_compile=False, batch_size=4,
                             learning_starts=0, train_freq=4)  # fmt: skip
    seen = []
    for reward in (0.5, 3.0, 2.0, -9.0, 7.0):  # r_max = max(r_max, r) from r_max = 1
        agent.observe(np.zeros(3), 0, reward, np.zeros(3), False, False)
        seen.append(agent.learner.r_max)
        agent.update()  # a block at step 4 (train_freq 4)
    assert seen == [1.0, 3.0, 3.0, 3.0, 7.0]
    assert float(agent.learner.r_max_variable.numpy()) == 3.0  # the block read r_max of step 4
    clipped = rlkit.agents.DQN(space, gym.spaces.Discrete(2), rescale_r=True,
                               r_max_running=True, reward_clip=1.0, hidden_sizes=(8,))  # fmt: skip
    clipped.observe(np.zeros(3), 0, 5.0, np.zeros(3), False, False)
    # DQN3.0: clip, then max
    assert clipped.learner.r_max == 1.0 and clipped.replay.rewards[0] == 1.0


@pytest.mark.slow
def test_minatar_smoke_run_uses_its_preset(capsys, tmp_path):
    status, out, err = cli(capsys, "train", "dqn", "--env", "MinAtar/Breakout-v0", "--steps",
                           "600", "--eval-every", "300", "--eval-episodes", "2", "--quiet",
                           "--set", "learning_starts=200", "--out", tmp_path)  # fmt: skip
    assert status == 0, err
    assert "using preset dqn/MinAtar_Breakout-v0" in err  # the paper's step size for Breakout
    (run_dir,) = tmp_path.iterdir()
    assert json.loads((run_dir / "summary.json").read_text())["steps"] == 600
    agent = rlkit.load(run_dir / "model")
    assert agent.q.convs[0].kernel.shape == (3, 3, 4, 16) and agent.replay.obs.dtype == bool
    assert (
        agent.config.learning_rate == 2**-9 and agent.config.optimizer == "rmsprop_centered_torch"
    )


@pytest.mark.slow
def test_making_atari_and_minatar_envs_prints_nothing():
    """No ALE banner (printed by the C++ library for every env made) and no gymnasium
    advice to use MinAtar's v1 ids (v0, all 6 actions, is the paper's setting)."""
    import subprocess
    import sys

    code = ("from rlkit.envs.make import make_env\n"
            "for env_id in ('ALE/Pong-v5', 'MinAtar/Breakout-v0'):\n"
            "    make_env(env_id).reset(seed=0)\n")  # fmt: skip
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "Powered by Stella" not in result.stderr and "A.L.E" not in result.stderr
    assert "out of date" not in result.stderr


def test_minatar_ids_without_a_preset_of_their_own_use_the_minatar_preset():
    from rlkit.run import experiment

    plan = experiment.plan("dqn", "MinAtar/Breakout-v1")  # the minimal action set
    assert plan.preset.name == "dqn/minatar" and plan.agent_config.learning_rate == 2.5e-4
    for game, exponent in [("Asterix", -13), ("Freeway", -11), ("Seaquest", -13),
                           ("SpaceInvaders", -12)]:  # fmt: skip
        plan = experiment.plan("dqn", f"MinAtar/{game}-v0")
        assert plan.preset.name == f"dqn/MinAtar_{game}-v0"
        assert plan.agent_config.learning_rate == 2.0**exponent


@pytest.mark.slow
def test_a_run_with_a_large_replay_says_what_each_checkpoint_writes(capsys, tmp_path):
    status, _, err = cli(capsys, "train", "dqn", "--env", "ALE/Pong-v5", "--steps", "5",
                         "--eval-every", "0", "--eval-episodes", "1", "--quiet",
                         "--out", tmp_path)  # fmt: skip
    assert status == 0, err
    assert "replay: 1,000,000 transitions, 7.09 GB at capacity (FrameReplay)" in err
    assert (
        "a checkpoint every 250,000 steps writes what the replay took in since the last one "
        "(~1.77 GB; the first up to 7.09 GB); --checkpoint-every sets how often"
    ) in err


@pytest.mark.slow
def test_atari_smoke_run_with_the_dqn3_preset_and_frame_replay(capsys, tmp_path):
    small = ["--set", "buffer_size=2000", "--set", "learning_starts=150", "--set",
             "hidden_sizes=32", "--set", "target_update=100"]  # fmt: skip
    status, _, err = cli(capsys, "train", "dqn", "--env", "ALE/Pong-v5", "--steps", "300",
                         "--eval-every", "0", "--eval-episodes", "1", "--quiet",
                         "--checkpoint-every", "200", "--out", tmp_path, *small)  # fmt: skip
    assert status == 0, err
    assert "using preset dqn/dqn3" in err
    (run_dir,) = tmp_path.iterdir()
    status, _, err = cli(capsys, "resume", run_dir, "--steps", "400", "--quiet")
    assert status == 0, err
    from rlkit.run.checkpoint import latest_checkpoint, load_checkpoint
    from rlkit.run.folder import RunFolder

    agent, _, _ = load_checkpoint(latest_checkpoint(RunFolder(run_dir)))
    assert type(agent.replay).__name__ == "FrameReplay" and agent.replay.obs.shape[1:] == (84, 84)
    assert agent.replay.rewards.max() <= 1.0 and agent.replay.rewards.min() >= -1.0
    assert agent.config.rescale_r and agent.config.r_max_running
    assert agent.config.conv_padding == "dqn3"  # convnet.lua pads the first convolution
    assert agent.q.model.get_layer("q_pad").output.shape[1:3] == (86, 86)  # restored padded


class Recorder(gym.Wrapper):
    """Keeps every transition exactly as the environment handed it to the trainer."""

    def __init__(self, env):
        super().__init__(env)
        self.transitions: list[tuple] = []

    def reset(self, **kwargs):
        self.current, info = self.env.reset(**kwargs)
        return self.current, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.transitions.append((self.current, action, reward, obs, terminated, truncated))
        self.current = obs
        return obs, reward, terminated, truncated, info


@pytest.mark.slow
def test_training_stores_in_the_frame_replay_exactly_what_the_atari_env_gave():
    """End to end on Breakout (lives lost, zero-padded restarts, the replay wrapped twice):
    each transition the frame replay can sample is rebuilt into the very stacks, action,
    clipped reward and flags the environment produced."""
    from rlkit.agents import DQN

    env = Recorder(rlkit.make_env("ALE/Breakout-v5"))
    agent = DQN.from_env(env, seed=3, torso="nature", hidden_sizes=(16,), frame_stack=True,
                         buffer_size=600, learning_starts=10**6, reward_clip=1.0)  # fmt: skip
    rlkit.train(agent, env, 1500)
    log = env.transitions
    assert len(log) == 1500 and type(agent.replay).__name__ == "FrameReplay"
    first = len(log) - 600  # the transitions still held
    slots = np.arange(first, len(log)) % 600
    stacks, valid = agent.replay._history(slots)
    assert valid[3:].all() and (~valid).sum() <= 3  # only the oldest reach overwritten frames
    held = agent.replay._gather(slots, stacks)
    for k in np.flatnonzero(valid):
        obs, action, reward, next_obs, terminated, truncated = log[first + k]
        np.testing.assert_array_equal(held.obs[k], obs)
        np.testing.assert_array_equal(held.next_obs[k], next_obs)
        assert held.actions[k] == action and held.rewards[k] == np.clip(reward, -1, 1)
        assert held.terminated[k] == terminated and held.truncated[k] == truncated
    assert held.terminated[valid].sum() >= 5  # lives lost inside the window
    starts = ~np.any(held.obs[valid][..., :-1], axis=(1, 2, 3))
    assert starts.sum() >= 5  # stacks zero-padded after each loss
    assert held.rewards[valid].max() == 1.0  # bricks hit (Breakout scores 1, 4 or 7 points)


@pytest.mark.slow
def test_dopamines_protocol_trains_on_whole_games_without_noops_with_sticky_actions():
    env = make_atari("ALE/Breakout-v5", training=True, life_loss_terminal=False, noop_max=0,
                     repeat_action_probability=0.25)  # fmt: skip
    env.reset(seed=0)
    ale = env.unwrapped.ale
    assert ale.getEpisodeFrameNumber() == 0  # no no-op frames
    assert ale.getFloat("repeat_action_probability") == pytest.approx(0.25)
    env.action_space.seed(0)
    lives = ale.lives()
    while ale.lives() == lives:  # a lost life does not end the episode
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        assert not (terminated or truncated)
    # the DQN3.0 rule with no no-ops: a new training episode on the same screen
    dqn3 = make_atari("ALE/Breakout-v5", training=True, noop_max=0)
    dqn3.reset(seed=0)
    dqn3.action_space.seed(0)
    while not dqn3.step(dqn3.action_space.sample())[2]:
        pass
    frame = dqn3.unwrapped.ale.getEpisodeFrameNumber()
    obs, _ = dqn3.reset()
    assert dqn3.unwrapped.ale.getEpisodeFrameNumber() == frame and not obs[..., :3].any()
    with pytest.raises(ValueError, match="noop_max is a number of no-op frames"):
        make_atari("ALE/Breakout-v5", noop_max=-1)


def test_rlkit_tensorflow_ids_take_the_presets_of_the_id_they_equal():
    from rlkit.config.presets import gymnasium_twin
    from rlkit.run import experiment

    assert gymnasium_twin("rlkit/MinAtar-Seaquest-v0") == "MinAtar/Seaquest-v0"
    assert gymnasium_twin("rlkit/Pendulum-v1") == "Pendulum-v1"
    assert gymnasium_twin("ALE/Pong-v5") == "ALE/Pong-v5"
    plan = experiment.plan("dqn", "rlkit/MinAtar-Asterix-v0")
    assert plan.preset.name == "dqn/MinAtar_Asterix-v0"
    assert plan.agent_config.learning_rate == 2.0**-13
    assert experiment.plan("dqn", "rlkit/CartPole-v1").preset.name == "dqn/CartPole-v1"
    assert experiment.plan("rainbow", "rlkit/MinAtar-Breakout-v0").preset.name == (
        "rainbow/minatar"
    )
    assert experiment.plan("td3", "rlkit/Pendulum-v1").preset.name == "ddpg/Pendulum-v1-td3"
