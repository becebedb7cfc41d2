"""The rest of :mod:`labs.bad_inputs_cases`: resume, evaluate, plot, config, presets,
sweep, tune and the Python API."""

from __future__ import annotations

from labs.bad_inputs_cases import LAB, Case, cli, py


def more_cases() -> list[Case]:  # noqa: PLR0915 - one list, read top to bottom
    c: list[Case] = []
    # -- resume -------------------------------------------------------------------------------
    c += [
        cli("resume: no folder", "resume", "nowhere"),
        cli("resume: empty arg", "resume", ""),
        cli("resume: not a run", "resume", "."),
        cli("resume: finished run", "resume", "run"),
        cli("resume: steps below", "resume", "run", "--steps", "100"),
        cli("resume: steps 0", "resume", "run", "--steps", "0"),
        cli("resume: steps -1", "resume", "run", "--steps", "-1"),
        cli("resume: steps huge", "resume", "run", "--steps", "99999999999999999999"),
        cli("resume: episodes -1", "resume", "run", "--episodes", "-1"),
        cli("resume: a file", "resume", "run/config.toml"),
        cli("resume: model folder", "resume", "run/model"),
        cli("resume: more steps", "resume", "run", "--steps", "300", "--quiet", expect="ok"),
        cli("resume: config edited lr", "resume", "run2", "--steps", "300"),
        cli("resume: config edited env", "resume", "run3", "--steps", "300"),
        cli("resume: config unparsable", "resume", "run4", "--steps", "300"),
        cli("resume: checkpoints removed", "resume", "run5", "--steps", "300"),
    ]
    # -- evaluate -----------------------------------------------------------------------------
    c += [
        cli("evaluate: no folder", "evaluate", "nowhere"),
        cli("evaluate: empty", "evaluate", ""),
        cli("evaluate: not a run", "evaluate", "."),
        cli("evaluate: episodes 0", "evaluate", "run", "--episodes", "0"),
        cli("evaluate: episodes huge", "evaluate", "run", "--episodes", "100000000"),
        cli("evaluate: seed -1", "evaluate", "run", "--seed", "-1"),
        cli("evaluate: best without best", "evaluate", "run5", "--best"),
        cli("evaluate: other env", "evaluate", "run", "--env", "Acrobot-v1"),
        cli("evaluate: unknown env", "evaluate", "run", "--env", "Nope-v0"),
        cli("evaluate: model folder without env", "evaluate", "run/model"),
        cli(
            "evaluate: model folder with env",
            "evaluate",
            "run/model",
            "--env",
            "CartPole-v1",
            "--episodes",
            "1",
            expect="ok",
        ),
        cli("evaluate: video .txt", "evaluate", "run", "--video", "out.txt"),
        cli("evaluate: video no suffix", "evaluate", "run", "--video", "out"),
        cli("evaluate: video missing folder", "evaluate", "run", "--video", "no/such/out.mp4"),
        cli("evaluate: video empty", "evaluate", "run", "--video", ""),
        cli("evaluate: video is a folder", "evaluate", "run", "--video", "run"),
        cli("evaluate: render headless", "evaluate", "run", "--render"),
        cli("evaluate: env-kwargs bad", "evaluate", "run", "--env-kwargs", "nokey"),
        cli("evaluate: env-kwargs unknown", "evaluate", "run", "--env-kwargs", "gravity=1"),
        cli("evaluate: run", "evaluate", "run", expect="ok"),
        cli("evaluate: best", "evaluate", "run", "--best", expect="ok"),
        cli("evaluate: corrupt weights", "evaluate", "run6"),
    ]
    # -- plot, config, presets ----------------------------------------------------------------
    c += [
        cli("plot: no folder", "plot", "nowhere"),
        cli("plot: no args", "plot"),
        cli("plot: smooth 0", "plot", "run", "--smooth", "0"),
        cli("plot: smooth -3", "plot", "run", "--smooth", "-3"),
        cli("plot: output empty", "plot", "run", "-o", ""),
        cli("plot: output in missing folder", "plot", "run", "-o", "no/such/c.png"),
        cli("plot: a folder without runs", "plot", "empty", files=[("empty/.keep", "")]),
        cli("plot: a file", "plot", "run/config.toml"),
        cli("plot: run", "plot", "run", "-o", "c.png", expect="ok"),
        cli("config: unknown agent", "config", "pp0"),
        cli("config: no agent", "config"),
        cli("config: unknown preset", "config", "dqn", "--preset", "nope"),
        cli("config: dqn", "config", "dqn", expect="ok"),
        cli("presets: unknown agent", "presets", "pp0"),
        cli("presets: all", "presets", expect="ok"),
    ]
    # -- sweep and tune (all refused before Ray) -------------------------------------------------
    sweep = ["sweep", "dqn", "--steps", "200"]
    tune = ["tune", "dqn", "--steps", "200"]
    c += [
        cli("sweep: seeds huge range", *sweep, "--seeds", "0-100000000"),
        cli("sweep: seeds backwards", *sweep, "--seeds", "5-1"),
        cli("sweep: seeds text", *sweep, "--seeds", "a-b"),
        cli("sweep: seeds twice", *sweep, "--seeds", "0,0"),
        cli("sweep: seeds negative", *sweep, "--seeds", "-3"),
        cli("sweep: grid unclosed", *sweep, "--grid", "hidden_sizes=[64,64],[256"),
        cli("sweep: grid no values", *sweep, "--grid", "learning_rate="),
        cli("sweep: grid unknown key", *sweep, "--grid", "learning_rat=1,2"),
        cli("sweep: grid bad value", *sweep, "--grid", "learning_rate=-1,2"),
        cli("sweep: grid value twice", *sweep, "--grid", "gamma=0.9,0.9"),
        cli("sweep: grid key twice", *sweep, "--grid", "gamma=0.9", "--grid", "gamma=0.8"),
        cli("sweep: cpus above machine", *sweep, "--cpus-per-trial", "100000"),
        cli("sweep: cpus 0", *sweep, "--cpus-per-trial", "0"),
        cli("sweep: max-concurrent 0", *sweep, "--max-concurrent", "0"),
        cli("sweep: unknown env", *sweep, "--env", "Nope-v0"),
        cli("sweep: dict env without network", *sweep, "--env", "lab41:lab41/Boxed-v0", files=LAB),
        cli("sweep: resume of no sweep", "sweep", "--resume", "run"),
        cli("sweep: no agent", "sweep"),
        cli("sweep: config of another agent", "sweep", "ddpg", "--config", "run/config.toml"),
        cli("sweep: bad address", *sweep, "--address", "127.0.0.1:1"),
        cli("tune: trials 0", *tune, "--trials", "0"),
        cli("tune: trials huge", *tune, "--trials", "100000000"),
        cli("tune: seeds huge", *tune, "--seeds", "100000000"),
        cli("tune: top 0", *tune, "--top", "0"),
        cli("tune: space unknown key", *tune, "--space", "learning_rat=uniform(0,1)"),
        cli("tune: space bad form", *tune, "--space", "learning_rate=gauss(0,1)"),
        cli("tune: space log of 0", *tune, "--space", "learning_rate=loguniform(0,1)"),
        cli("tune: cpus above machine", *tune, "--cpus-per-trial", "100000"),
        cli("tune: dict env without network", *tune, "--env", "lab41:lab41/Boxed-v0", files=LAB),
        cli("tune: resume of no tune", "tune", "--resume", "run"),
        cli("tune: rung-score unknown", *tune, "--rung-score", "best"),
        cli("tune: eval-every 0", *tune, "--eval-every", "0"),
    ]
    # -- Python API ---------------------------------------------------------------------------
    head = "import gymnasium as gym, numpy as np, rlkit\n"
    agent = (head + "env = gym.make('CartPole-v1')\n"
             "agent = rlkit.agents.DQN.from_env(env, seed=0, learning_starts=50, "
             "hidden_sizes=(16,), jit_compile=False)\n")  # fmt: skip
    c += [
        py("api: train steps 0", agent + "rlkit.train(agent, env, steps=0)"),
        py("api: train steps 1.5", agent + "rlkit.train(agent, env, steps=1.5)"),
        py("api: train steps '100'", agent + "rlkit.train(agent, env, steps='100')"),
        py("api: train steps -1", agent + "rlkit.train(agent, env, steps=-1)"),
        py("api: train other env", agent + "rlkit.train(agent, gym.make('Acrobot-v1'), steps=5)"),
        py("api: evaluate other env", agent + "rlkit.evaluate(agent, gym.make('Acrobot-v1'))"),
        py("api: evaluate episodes 0", agent + "rlkit.evaluate(agent, env, episodes=0)"),
        py("api: train env id", agent + "rlkit.train(agent, 'CartPole-v1', steps=60)", expect="ok"),
        py("api: from_env id", head + "rlkit.agents.DQN.from_env('CartPole-v1')", expect="ok"),
        py("api: from_env unknown id", head + "rlkit.agents.DQN.from_env('CartPol-v1')"),
        py("api: from_env seed -1", head + "rlkit.agents.DQN.from_env('CartPole-v1', seed=-1)"),
        py("api: from_env seed 1.5", head + "rlkit.agents.DQN.from_env('CartPole-v1', seed=1.5)"),
        py("api: ddpg td3 'yes'", head + "rlkit.agents.DDPG.from_env('Pendulum-v1', td3='yes')"),
        py("api: ddpg td3 0", head + "rlkit.agents.DDPG.from_env('Pendulum-v1', td3=0)"),
        py("api: dqn on Pendulum", head + "rlkit.agents.DQN.from_env('Pendulum-v1')"),
        py("api: unknown key", head + "rlkit.agents.DQN.from_env('CartPole-v1', lr=1)"),
        py(
            "api: config of other class",
            head + "from rlkit.agents.ddpg.config import "
            "DDPGConfig\nrlkit.agents.DQN.from_env('CartPole-v1', config=DDPGConfig())",
        ),
        py("api: config a list", head + "rlkit.agents.DQN.from_env('CartPole-v1', config=[1])"),
        py("api: load nowhere", head + "rlkit.load('nowhere')"),
        py("api: load a run folder", head + "rlkit.load('run')"),
        py("api: load model", head + "rlkit.load('run/model')", expect="ok"),
        py("api: act on wrong shape", agent + "agent.act(np.zeros(7))"),
        py("api: plan unknown agent", head + "rlkit.experiment.plan('pp0')"),
        py("api: plan steps -1", head + "rlkit.experiment.plan('dqn', steps=-1)"),
        py("api: plan overrides bad", head + "rlkit.experiment.plan('dqn', overrides=['x'])"),
        py("api: plan env_kwargs str", head + "rlkit.experiment.plan('dqn', env_kwargs='a=1')"),
        py("api: make_env unknown", head + "rlkit.make_env('Nope-v0')"),
        py("api: make_env bad kwarg", head + "rlkit.make_env('CartPole-v1', gravity=3)"),
        py("api: ReplayMemory capacity 0", head + "rlkit.ReplayMemory(0, (4,))"),
    ]
    return c
