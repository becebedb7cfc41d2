"""Agents by name, importable without TensorFlow: the one place an agent is registered.

An :class:`AgentSpec` says everything the rest of rlkit asks of an agent by its name:
where its class lives (imported only when real work starts), its config class and space
check (modules that import no TensorFlow), the CLI's defaults, the variants its config
switches on (``td3``), its default search space for ``rlkit tune``, how its annealed
schedules are described, how it is exported, which compiled program runs it (if any) and
the presets whole families of environments take by themselves. ``rlkit.agents``, the
run's plan, export, the compiled loop, presets, sweeps and tunes and the CLI read it from
here; nothing else lists agents (``tests/unit/agents/test_registry_walk.py`` checks it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rlkit.agents.ddpg import config as ddpg_config
from rlkit.agents.dqn import config as dqn_config
from rlkit.agents.dqn import distributional_config, iqn_config, mdqn_config
from rlkit.agents.ppo import config as ppo_config
from rlkit.agents.ppo import spaces as ppo_spaces
from rlkit.agents.reinforce import config as reinforce_config
from rlkit.agents.sac import config as sac_config
from rlkit.agents.spec import AgentSpec, Alias, load, no_schedules  # noqa: F401 (re-exported)
from rlkit.core.errors import UsageError

#: rl-zoo's discount choices (``hyperparams_opt.py``)
GAMMAS = "choice(0.9,0.95,0.98,0.99,0.995,0.999,0.9999)"


#: rl-zoo's samplers (``hyperparams_opt.py``: ``sample_dqn_params``, ``sample_ddpg_params``),
#: key by key in rlkit's names. Changes: learning rates stop at 1e-2 (the zoo's upper end,
#: 1, diverges with Adam; 16 trials are too few to spend on it); gradient_steps -1 is the
#: zoo's ``gradient_steps = train_freq``; DDPG's two learning rates and two networks are
#: the zoo's one learning rate and one net_arch (``ties``).
DQN_SPACE = {
    "gamma": GAMMAS,
    "learning_rate": "loguniform(1e-5,1e-2)",
    "batch_size": "choice(16,32,64,100,128,256,512)",
    "buffer_size": "choice(10000,50000,100000,1000000)",
    "eps_end": "uniform(0,0.2)",
    "eps_anneal_fraction": "uniform(0.01,0.5)",
    "target_update": "choice(1,1000,5000,10000,15000,20000)",
    "learning_starts": "choice(0,1000,5000,10000,20000)",
    "train_freq": "choice(1,4,8,16,128,256,1000)",
    "gradient_steps": "choice(-1)",
    "hidden_sizes": "choice([64],[64,64],[256,256])",
    "learning_rate_end": "choice(-1)",
}

#: the export builders (:mod:`rlkit.exporting.signatures`) and compiled programs
#: (:mod:`rlkit.run`) by path, imported only when an export or a compiled run starts
EXPORT_Q_VALUES = "rlkit.exporting.signatures:dqn_module"
VALUE_PROGRAM = "rlkit.run.compiled.dqn:DQNProgram"
#: the presets Atari's and MinAtar's games take by themselves (Dopamine's gin files)
DISTRIBUTIONAL_FAMILIES = {"MinAtar/": "minatar", "ALE/": "atari"}

#: the atoms C51's paper compared (Bellemare et al. 2017, Figure 3; 51 its choice)
C51_ATOMS = "choice(5,11,21,51)"

AGENTS: dict[str, AgentSpec] = {
    "dqn": AgentSpec(
        name="dqn",
        summary="DQN as DeepMind's DQN3.0 does it (discrete actions)",
        agent_path="rlkit.agents.dqn.agent:DQN",
        config_class=dqn_config.DQNConfig,
        check_spaces=dqn_config.check_spaces,
        default_env="CartPole-v1",
        default_steps=50_000,
        default_eval_every=2_500,
        search_space=DQN_SPACE,
        describe_schedules=dqn_config.describe_schedules,
        export_builder=EXPORT_Q_VALUES,
        compiled_program=VALUE_PROGRAM,
        compiled_on_minatar=True,
        preset_families={"ALE/": "dqn3", "MinAtar/": "minatar"},
        compiled_speedups={
            "MinAtar/": "1.5-2.8x the Python loop's steps/s on MinAtar's five games at the "
            "MinAtar presets (docs/performance.md)"
        },
    ),
    "ddpg": AgentSpec(
        name="ddpg",
        summary="DDPG with ExponentialMovingAverage target networks (continuous actions)",
        agent_path="rlkit.agents.ddpg.agent:DDPG",
        config_class=ddpg_config.DDPGConfig,
        check_spaces=ddpg_config.check_spaces,
        default_env="Pendulum-v1",
        default_steps=20_000,
        default_eval_every=5_000,
        variants=(("td3", "td3"),),
        search_space={
            "gamma": GAMMAS,
            "actor_learning_rate": "loguniform(1e-5,1e-2)",
            "batch_size": "choice(16,32,64,100,128,256,512,1024,2048)",
            "buffer_size": "choice(10000,100000,1000000)",
            "train_freq": "choice(1,4,8,16,32,64,128,256,512)",
            "gradient_steps": "choice(-1)",
            "noise": "choice(gaussian,ou)",
            "noise_scale": "uniform(0,1)",
            "tau": "choice(0.001,0.005,0.01,0.02,0.05,0.08)",
            "actor_hidden_sizes": "choice([64,64],[256,256],[400,300])",
        },
        ties={
            "critic_learning_rate": "actor_learning_rate",
            "critic_hidden_sizes": "actor_hidden_sizes",
        },
        describe_schedules=ddpg_config.describe_schedules,
        export_builder="rlkit.exporting.signatures:ddpg_module",
        compiled_program="rlkit.run.compiled.ddpg:DDPGProgram",
    ),
    "sac": AgentSpec(
        name="sac",
        summary="SAC: soft actor-critic, twin critics, a learned temperature (Box; discrete SAC)",
        agent_path="rlkit.agents.sac.agent:SAC",
        config_class=sac_config.SACConfig,
        check_spaces=sac_config.check_spaces,
        default_env="Pendulum-v1",
        default_steps=20_000,
        default_eval_every=5_000,
        # rl-zoo's sample_sac_params (hyperparams_opt.py): gradient_steps = train_freq, its
        # net_arch small/medium/big; learning rates stop at 1e-2 as DQN's and DDPG's do
        search_space={
            "gamma": GAMMAS,
            "learning_rate": "loguniform(1e-5,1e-2)",
            "batch_size": "choice(16,32,64,128,256,512,1024,2048)",
            "buffer_size": "choice(10000,100000,1000000)",
            "learning_starts": "choice(0,1000,10000,20000)",
            "train_freq": "choice(1,4,8,16,32,64,128,256,512)",
            "gradient_steps": "choice(-1)",
            "tau": "choice(0.001,0.005,0.01,0.02,0.05,0.08)",
            "actor_hidden_sizes": "choice([64,64],[256,256],[400,300])",
        },
        ties={"critic_hidden_sizes": "actor_hidden_sizes"},
        describe_schedules=sac_config.describe_schedules,
        export_builder="rlkit.exporting.signatures:sac_module",
        compiled_program="rlkit.run.compiled.sac:SACProgram",
        compiled_on_minatar=True,  # (discrete SAC)
        preset_families={"MinAtar/": "minatar"},  # (discrete SAC: CleanRL's sac_atari.py)
    ),
    "c51": AgentSpec(
        name="c51",
        summary="C51, DQN learning a categorical distribution of the return (discrete actions)",
        agent_path="rlkit.agents.dqn.distributional:C51",
        config_class=distributional_config.C51Config,
        check_spaces=distributional_config.check_spaces,
        default_env="CartPole-v1",
        default_steps=50_000,
        default_eval_every=2_500,
        search_space={**DQN_SPACE, "num_atoms": C51_ATOMS},
        describe_schedules=distributional_config.describe_schedules,
        export_builder=EXPORT_Q_VALUES,
        compiled_program=VALUE_PROGRAM,
        compiled_on_minatar=True,
        preset_families={"ALE/": "atari"},
    ),
    "qrdqn": AgentSpec(
        name="qrdqn",
        summary="QR-DQN, DQN learning quantiles of the return (discrete actions)",
        agent_path="rlkit.agents.dqn.distributional:QRDQN",
        config_class=distributional_config.QRDQNConfig,
        check_spaces=distributional_config.check_spaces,
        default_env="CartPole-v1",
        default_steps=50_000,
        default_eval_every=2_500,
        search_space={**DQN_SPACE, "num_quantiles": "int(5,200)"},  # rl-zoo's sample_qrdqn
        describe_schedules=distributional_config.describe_schedules,
        export_builder=EXPORT_Q_VALUES,
        compiled_program=VALUE_PROGRAM,
        compiled_on_minatar=True,
        preset_families=DISTRIBUTIONAL_FAMILIES,
    ),
    "rainbow": AgentSpec(
        name="rainbow",
        summary="Rainbow: C51 + prioritized replay + n-step + dueling + double + noisy nets",
        agent_path="rlkit.agents.dqn.distributional:Rainbow",
        config_class=distributional_config.RainbowConfig,
        check_spaces=distributional_config.check_spaces,
        default_env="CartPole-v1",
        default_steps=50_000,
        default_eval_every=2_500,
        search_space={
            **{k: v for k, v in DQN_SPACE.items() if not k.startswith("eps_")},
            "num_atoms": C51_ATOMS,
            "n_step": "choice(1,3,5)",  # Hessel et al. 2018: 3 and 5 both beat 1
        },
        describe_schedules=distributional_config.describe_schedules,
        export_builder=EXPORT_Q_VALUES,
        compiled_program=VALUE_PROGRAM,
        compiled_on_minatar=True,
        preset_families=DISTRIBUTIONAL_FAMILIES,
        compiled_speedups={
            "MinAtar/": "2.1-2.2x the Python loop's steps/s on Breakout and SpaceInvaders at "
            "the minatar preset (docs/dqn-family.md)"
        },
    ),
    "iqn": AgentSpec(
        name="iqn",
        summary="IQN, DQN learning the return's quantile function at sampled fractions",
        agent_path="rlkit.agents.dqn.iqn:IQN",
        config_class=iqn_config.IQNConfig,
        check_spaces=iqn_config.check_spaces,
        default_env="CartPole-v1",
        default_steps=50_000,
        default_eval_every=2_500,
        # Dopamine's and the paper's choices of N = N' (8 to 64) and K (32), as rl-zoo
        # samples QR-DQN's quantiles
        search_space={
            **DQN_SPACE,
            "num_tau_samples": "choice(8,16,32,64)",
            "num_tau_prime_samples": "choice(8,16,32,64)",
        },  # fmt: skip
        describe_schedules=iqn_config.describe_schedules,
        export_builder="rlkit.exporting.signatures:iqn_module",
        preset_families=DISTRIBUTIONAL_FAMILIES,
    ),
    "mdqn": AgentSpec(
        name="mdqn",
        summary="Munchausen DQN: DQN regressing on a soft target with a log-policy bonus",
        agent_path="rlkit.agents.dqn.mdqn:MDQN",
        config_class=mdqn_config.MDQNConfig,
        check_spaces=mdqn_config.check_spaces,
        default_env="CartPole-v1",
        default_steps=50_000,
        default_eval_every=2_500,
        # the paper's grid (Vieillard et al. 2020, Appendix: tau and alpha explored)
        search_space={
            **DQN_SPACE,
            "tau": "choice(0.01,0.03,0.1)",
            "alpha": "choice(0.5,0.9,0.99)",
        },  # fmt: skip
        describe_schedules=mdqn_config.describe_schedules,
        export_builder=EXPORT_Q_VALUES,
    ),
    "reinforce": AgentSpec(
        name="reinforce",
        summary="REINFORCE policy gradient, log-probability times return",
        agent_path="rlkit.agents.reinforce.agent:Reinforce",
        config_class=reinforce_config.ReinforceConfig,
        check_spaces=reinforce_config.check_spaces,
        default_env="CartPole-v1",
        default_steps=1_000_000,
        default_episodes=1_000,
        env_defaults={"rlkit/MultiArmedBandit-v0": {"episodes": 10_000}},
        vector_envs=False,
        search_space={
            "gamma": GAMMAS,
            "learning_rate": "loguniform(1e-5,1e-1)",
            "hidden_sizes": "choice([32],[64,64],[256,256])",
            "episodes_per_update": "choice(1,2,4,8)",
            "normalize_returns": "choice(true,false)",
            "entropy_coef": "choice(0,0.001,0.01)",
        },
        export_builder="rlkit.exporting.signatures:reinforce_module",
    ),
    "ppo": AgentSpec(
        name="ppo",
        summary="PPO: clipped surrogate, GAE; MLPs or a shared CNN (Discrete, MultiDiscrete, Box)",
        agent_path="rlkit.agents.ppo.agent:PPO",
        config_class=ppo_config.PPOConfig,
        check_spaces=ppo_spaces.check_spaces,
        default_env="CartPole-v1",
        default_steps=100_000,
        default_eval_every=10_000,
        # rl-zoo's sample_ppo_params (rl_zoo3/hyperparams_opt.py, commit 0a9df50) in rlkit's
        # names. Changes: gamma and gae_lambda, log-uniform in 1 - x there, are choices over
        # the same spans; n_steps from 256 and batch_size up to 256 (powers of two, so that
        # n_steps x num_envs is a multiple of batch_size); net_arch tiny/small/medium as the
        # policy's and the value's sizes (tied); activation_fn not searched (tanh only)
        search_space={
            "gamma": "choice(0.97,0.98,0.99,0.995,0.999,0.9999)",
            "gae_lambda": "choice(0.9,0.95,0.98,0.99,0.999)",
            "learning_rate": "loguniform(1e-5,2e-3)",
            "batch_size": "choice(32,64,128,256)",
            "n_steps": "choice(256,512,1024,2048)",
            "n_epochs": "choice(1,5,10,20)",
            "ent_coef": "loguniform(1e-8,0.1)",
            "clip_range": "choice(0.1,0.2,0.3,0.4)",
            "max_grad_norm": "uniform(0.3,2)",
            "hidden_sizes": "choice([64],[64,64],[256,256])",
        },
        ties={"value_hidden_sizes": "hidden_sizes"},
        describe_schedules=ppo_config.describe_schedules,
        export_builder="rlkit.exporting.signatures:ppo_module",
        compiled_program="rlkit.run.compiled.ppo:PPOProgram",
        compiled_on_minatar=True,  # (the shared MinAtar torso over bool boards)
        preset_families={"ALE/": "atari", "MinAtar/": "minatar"},
    ),
    "a2c": AgentSpec(
        name="a2c",
        summary="A2C: synchronous advantage actor-critic, SB3's (PPO's learner, one step)",
        agent_path="rlkit.agents.ppo.a2c:A2C",
        config_class=ppo_config.A2CConfig,
        check_spaces=ppo_spaces.check_a2c_spaces,
        default_env="CartPole-v1",
        default_steps=100_000,
        default_eval_every=10_000,
        # rl-zoo's sample_a2c_params (rl_zoo3/hyperparams_opt.py, commit 0a9df50) in rlkit's
        # names, changed as PPO's are: gamma and gae_lambda as choices over the spans of the
        # zoo's log-uniform 1 - x; net_arch small/medium as both networks' sizes (tied);
        # activation_fn not searched (tanh only)
        search_space={
            "gamma": "choice(0.97,0.98,0.99,0.995,0.999,0.9999)",
            "gae_lambda": "choice(0.9,0.95,0.98,0.99,0.999)",
            "learning_rate": "loguniform(1e-5,2e-3)",
            "n_steps": "choice(32,64,128,256,512,1024,2048)",
            "ent_coef": "loguniform(1e-8,0.1)",
            "max_grad_norm": "uniform(0.3,2)",
            "hidden_sizes": "choice([64,64],[256,256])",
        },
        ties={"value_hidden_sizes": "hidden_sizes"},
        describe_schedules=ppo_config.describe_schedules,
        export_builder="rlkit.exporting.signatures:ppo_module",
        compiled_program="rlkit.run.compiled.ppo:PPOProgram",
        compiled_on_minatar=True,  # (PPO's program)
    ),
}


ALIASES: dict[str, Alias] = {
    "td3": Alias(
        "ddpg",
        {"td3": True},
        "TD3 (Fujimoto et al. 2018): ddpg with td3 = true (continuous actions)",
    ),
}


def preset_families() -> dict[str, Mapping[str, str]]:
    """Agent -> its ``preset_families`` (what the presets' table shows as a family's envs)."""
    return {name: spec.preset_families for name, spec in AGENTS.items()}


def resolve(name: str) -> tuple[str, dict[str, Any]]:
    """``(agent, settings)`` for a name users type: an agent as it is, an alias as its
    agent and the keys it sets (``"td3"`` -> ``("ddpg", {"td3": True})``)."""
    alias = ALIASES.get(name)
    return (alias.agent, dict(alias.settings)) if alias else (name, {})


def agent_spec(name: str) -> AgentSpec:
    """The agent called ``name`` (an alias: its agent's); UsageError with a suggestion when
    there is none."""
    try:
        return AGENTS[resolve(name)[0]]
    except KeyError:
        import difflib

        names = [*AGENTS, *ALIASES]
        close = [n for n in names if n == name.lower()] or difflib.get_close_matches(
            name.lower(), names, n=1
        )
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UsageError(
            f"unknown agent {name!r}; {hint}choose one of {', '.join(names)}"
        ) from None
