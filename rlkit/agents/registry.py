"""Agents by name, importable without TensorFlow (for the CLI)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from rlkit.core.errors import UsageError


@dataclass(frozen=True)
class AgentSpec:
    """Where an agent and its config live, and the CLI defaults for it."""

    name: str
    summary: str
    agent_path: str  # "module:Class"
    config_path: str  # "module:Class", a module that does not import TensorFlow
    default_env: str
    default_steps: int
    default_eval_every: int = 0  # CLI default of --eval-every (0: evaluate only at the end)
    vector_envs: bool = True  # can train on several environments at once (--num-envs)
    default_episodes: int = 0  # CLI default of --episodes (0: no limit)
    # per environment id: CLI defaults of "steps" / "episodes" that differ from the above
    env_defaults: dict[str, dict[str, int]] = field(default_factory=dict)

    def _resolve(self, path: str):
        module, _, attr = path.partition(":")
        return getattr(importlib.import_module(module), attr)

    def load_class(self):
        """The agent class (imports TensorFlow)."""
        return self._resolve(self.agent_path)

    @property
    def config_class(self) -> type:
        """The agent's config dataclass (as ``Agent.config_class``; no TensorFlow)."""
        return self._resolve(self.config_path)

    def check_spaces(self, observation_space, action_space, env_id: str) -> None:
        """The agent's own space check, without importing TensorFlow."""
        module = importlib.import_module(self.config_path.partition(":")[0])
        module.check_spaces(observation_space, action_space, env_id)


AGENTS: dict[str, AgentSpec] = {
    "dqn": AgentSpec(
        name="dqn",
        summary="DQN as DeepMind's DQN3.0 does it (discrete actions)",
        agent_path="rlkit.agents.dqn:DQN",
        config_path="rlkit.agents.dqn_config:DQNConfig",
        default_env="CartPole-v1",
        default_steps=50_000,
        default_eval_every=2_500,
    ),
    "ddpg": AgentSpec(
        name="ddpg",
        summary="DDPG with ExponentialMovingAverage target networks (continuous actions)",
        agent_path="rlkit.agents.ddpg:DDPG",
        config_path="rlkit.agents.ddpg_config:DDPGConfig",
        default_env="Pendulum-v1",
        default_steps=20_000,
        default_eval_every=5_000,
    ),
    "reinforce": AgentSpec(
        name="reinforce",
        summary="REINFORCE policy gradient, log-probability times return",
        agent_path="rlkit.agents.reinforce:Reinforce",
        config_path="rlkit.agents.reinforce_config:ReinforceConfig",
        default_env="CartPole-v1",
        default_steps=1_000_000,
        default_episodes=1_000,
        env_defaults={"rlkit/MultiArmedBandit-v0": {"episodes": 10_000}},
        vector_envs=False,
    ),
}


def agent_spec(name: str) -> AgentSpec:
    """The agent called ``name``; UsageError with a suggestion when there is none."""
    try:
        return AGENTS[name]
    except KeyError:
        import difflib

        close = [n for n in AGENTS if n == name.lower()] or difflib.get_close_matches(
            name.lower(), AGENTS, n=1
        )
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UsageError(
            f"unknown agent {name!r}; {hint}choose one of {', '.join(AGENTS)}"
        ) from None
