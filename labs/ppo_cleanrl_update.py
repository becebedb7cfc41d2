"""One PPO update in rlkit against CleanRL's ``ppo.py`` (CartPole-v1) and
``ppo_continuous_action.py`` (Pendulum-v1), on the same weights, rollout and minibatches
(issue 53).

CleanRL's side runs in PyTorch, in a child process under a Python that has torch (``--torch-
python``; by default this one if it imports torch, else ``/tmp/benchvenv/bin/python``): its
``Agent`` (separate tanh actor and critic MLPs, ``layer_init``'s orthogonal weights; Box
actions: ``actor_mean`` and a state-independent ``actor_logstd``), seeded as the script seeds
(``random``, ``np.random``, ``torch.manual_seed``), a rollout of ``--steps`` steps of
``--envs`` environments sampled from it, its GAE loop (``nextnonterminal``, ``lastgaelam``),
then one update: ``update_epochs`` epochs, each ``np.random.shuffle(b_inds)`` cut into
``num_minibatches`` minibatches, each the script's loss (advantages normalised with torch's
``std() + 1e-8``; ``pg_loss = max(-A ratio, -A clamp(ratio))``; ``v_loss = 0.5 max((V - R)^2,
(V_old + clamp(V - V_old, +-clip_coef) - R)^2)`` with ``clip_vloss``, else ``0.5 (V - R)^2``;
``loss = pg_loss - ent_coef entropy + vf_coef v_loss``), ``loss.backward()``,
``clip_grad_norm_(0.5)``, ``Adam(lr, eps=1e-5).step()`` - torch's own optimizer and clip. The
code is transcribed from CleanRL at commit :data:`CLEANRL_COMMIT` (its arithmetic line for
line; its arguments the scripts' ``Args`` defaults, the rollout shortened and the networks'
sizes a flag). What the lab leaves out: TensorBoard, the learning-rate anneal (its factor is
1 at the first iteration), ``target_kl`` (None by default), and ``ppo_continuous_action``'s
environment wrappers (observation and reward normalisation, clipping: rlkit has its own,
``norm_obs``/``norm_reward``; the update sees raw Pendulum numbers here, and ``ClipAction``
is applied to the action the environment sees only, as the wrapper does).

The rollout is CleanRL's loop with the same-step autoreset of the gymnasium CleanRL pins
(0.29: a finished environment is reset inside ``step``, the next step's observation is the
reset one). The default is 128 steps of 4 environments: no CartPole episode of a random
policy reaches 500 steps, and 128 < Pendulum's 200, so nothing is truncated. CleanRL treats a
truncation as a termination (``next_done = terminations | truncations``); rlkit bootstraps it
from the final observation's value (docs/ppo.md, "Time-limit truncation"). With truncations
in the rollout (``--steps 256`` on Pendulum) the GAE line shows the difference, and rlkit's
``bootstrap_truncated = false`` equal to CleanRL's.

rlkit's side: ``rlkit.agents.PPO.from_env`` with the same sizes, the torch weights copied in
(Keras kernels are torch's weights transposed), the same rollout as a ``RolloutBatch`` (its
``next_obs`` the real next observation, the final one at an episode's end), its
``minibatch_order`` replaced by CleanRL's permutations cut into minibatches, then
``learner.learn(batch, 0)``: it recomputes the rollout's values and log-probabilities in
TensorFlow, runs GAE, and its compiled block of minibatch steps. Its ``vf_coef`` is 0.25:
CleanRL's ``0.5 x MSE x vf_coef 0.5`` is rlkit's (SB3's) ``MSE x 0.25``.

Settings (``--settings``), each a fresh pair from the same weights, rollout and order:

- ``mse``: CleanRL ``clip_vloss=False``; rlkit ``clip_range_vf=0``; Adam's epsilon 1e-5 in
  both, as shipped;
- ``vclip``: CleanRL's default ``clip_vloss=True``; rlkit ``clip_range_vf=clip_coef``: CleanRL
  takes ``max(unclipped, clipped)``, rlkit (SB3's form) the clipped term only;
- ``mse-eps-0``, ``vclip-eps-0``: the same with Adam's epsilon 1e-30 in both (0 in effect;
  not 0, so that a zero gradient steps 0, not 0/0). They were how this lab found that
  Keras' Adam, which rlkit's PPO used first, adds its epsilon to ``sqrt(v_t)`` where torch
  adds it to ``sqrt(v_t / (1 - beta2^t))`` (Keras' 1e-5 is torch's ``1e-5 / sqrt(1 -
  0.999^t)``, 31.6x at the first minibatch step, 7.9x at the 16th; as shipped then rlkit's
  actor moved 0.61x CleanRL's on CartPole); rlkit's PPO now uses torch's placement
  (``rlkit.learn.optimizers.torch_adam``) and ``mse`` agrees as ``mse-eps-0`` does.

Printed per setting: per group of weights (actor, its log std, critic) the largest absolute
difference after the update, that over the group's largest change in CleanRL, and the
length (Euclidean norm) of rlkit's change of the group over CleanRL's; the
losses' means over the minibatch steps; with ``vclip``, the share of CleanRL's minibatch rows
whose value had left the clip range and where the unclipped term was the larger (there
CleanRL's value gradient is the unclipped error's, rlkit's is 0).

    python -m labs.ppo_cleanrl_update
    python -m labs.ppo_cleanrl_update --env-ids Pendulum-v1 --steps 256
    python -m labs.ppo_cleanrl_update --hidden 8 --settings mse mse-eps-0
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

#: the CleanRL commit the update is transcribed from (vwxyzjn/cleanrl, 2026-04-20)
CLEANRL_COMMIT = "fe8d8a03c41a7ef5b523e2e354bd01c363e786bb"
#: the Python with torch the child runs under when this one has none
TORCH_PYTHON = "/tmp/benchvenv/bin/python"
REPO = Path(__file__).resolve().parents[1]
#: Adam's beta2, torch's and Keras' default
BETA2 = 0.999
#: ``layer_init``'s default gain
SQRT2 = float(np.sqrt(2))

#: each script's ``Args`` defaults for the update (both: gamma 0.99, gae_lambda 0.95,
#: norm_adv, clip_coef 0.2, vf_coef 0.5, max_grad_norm 0.5, target_kl None)
SCRIPTS = {
    "CartPole-v1": {"script": "ppo.py", "learning_rate": 2.5e-4, "update_epochs": 4,
                    "num_minibatches": 4, "ent_coef": 0.01},
    "Pendulum-v1": {"script": "ppo_continuous_action.py", "learning_rate": 3e-4,
                    "update_epochs": 10, "num_minibatches": 32, "ent_coef": 0.0},
}  # fmt: skip
COMMON = {"gamma": 0.99, "gae_lambda": 0.95, "norm_adv": True, "clip_coef": 0.2,
          "vf_coef": 0.5, "max_grad_norm": 0.5}  # fmt: skip
SETTINGS = {
    "mse": {"clip_vloss": False, "adam_eps": 1e-5},
    "vclip": {"clip_vloss": True, "adam_eps": 1e-5},
    "mse-eps-0": {"clip_vloss": False, "adam_eps": 1e-30},
    "vclip-eps-0": {"clip_vloss": True, "adam_eps": 1e-30},
}


# -- CleanRL's side (the child, under torch) ---------------------------------------------------
def cleanrl_agent(env_id: str, hidden: list[int]):
    """CleanRL's ``Agent`` of the script for ``env_id``, its two hidden layers of 64 made
    ``hidden``: critic and actor as ``nn.Sequential`` of ``layer_init`` Linear and Tanh."""
    import gymnasium as gym
    import torch
    import torch.nn as nn
    from torch.distributions.categorical import Categorical
    from torch.distributions.normal import Normal

    env = gym.make(env_id)
    obs_dim = int(np.array(env.observation_space.shape).prod())
    discrete = isinstance(env.action_space, gym.spaces.Discrete)
    out_dim = int(env.action_space.n) if discrete else int(np.prod(env.action_space.shape))

    def layer_init(layer, std=SQRT2, bias_const=0.0):  # (CleanRL's default std=np.sqrt(2))
        torch.nn.init.orthogonal_(layer.weight, std)
        torch.nn.init.constant_(layer.bias, bias_const)
        return layer

    def mlp(out: int, head_std: float):
        layers, width = [], obs_dim
        for units in hidden:
            layers += [layer_init(nn.Linear(width, units)), nn.Tanh()]
            width = units
        return nn.Sequential(*layers, layer_init(nn.Linear(width, out), std=head_std))

    class Agent(nn.Module):
        def __init__(self):
            super().__init__()
            self.critic = mlp(1, 1.0)
            if discrete:
                self.actor = mlp(out_dim, 0.01)
            else:
                self.actor_mean = mlp(out_dim, 0.01)
                self.actor_logstd = nn.Parameter(torch.zeros(1, out_dim))

        def get_value(self, x):
            return self.critic(x)

        def get_action_and_value(self, x, action=None):
            if discrete:
                probs = Categorical(logits=self.actor(x))
                if action is None:
                    action = probs.sample()
                return action, probs.log_prob(action), probs.entropy(), self.critic(x)
            action_mean = self.actor_mean(x)
            action_logstd = self.actor_logstd.expand_as(action_mean)
            probs = Normal(action_mean, torch.exp(action_logstd))
            if action is None:
                action = probs.sample()
            return action, probs.log_prob(action).sum(1), probs.entropy().sum(1), self.critic(x)

    return Agent(), env, discrete


def cleanrl_rollout(agent, env_id: str, num_envs: int, num_steps: int, seed: int,
                    discrete: bool) -> dict[str, np.ndarray]:  # fmt: skip
    """CleanRL's collection loop (its storage ``obs, actions, logprobs, rewards, dones,
    values``, ``next_obs``/``next_done`` at the end) with gymnasium 0.29's same-step
    autoreset, plus what rlkit's rollout holds: each step's real next observation (the final
    one where an episode ended) and ``terminated``/``truncated`` apart."""
    import gymnasium as gym
    import torch

    envs = [gym.make(env_id) for _ in range(num_envs)]
    next_obs = np.stack([e.reset(seed=seed + i)[0] for i, e in enumerate(envs)])
    next_obs = torch.Tensor(next_obs)
    next_done = torch.zeros(num_envs)
    shape = envs[0].observation_space.shape
    act_shape = () if discrete else envs[0].action_space.shape
    obs = torch.zeros((num_steps, num_envs, *shape))
    actions = torch.zeros((num_steps, num_envs, *act_shape))
    logprobs, rewards, dones, values = (torch.zeros((num_steps, num_envs)) for _ in range(4))
    real_next = np.zeros((num_steps, num_envs, *shape), np.float32)
    terminated = np.zeros((num_steps, num_envs), bool)
    truncated = np.zeros((num_steps, num_envs), bool)
    for step in range(num_steps):
        obs[step] = next_obs
        dones[step] = next_done
        with torch.no_grad():
            action, logprob, _, value = agent.get_action_and_value(next_obs)
            values[step] = value.flatten()
        actions[step] = action
        logprobs[step] = logprob
        sent = action.cpu().numpy()
        stepped = []
        for i, e in enumerate(envs):
            a = sent[i] if discrete else np.clip(sent[i], e.action_space.low, e.action_space.high)
            o, r, term, trunc, _ = e.step(a)
            real_next[step, i], terminated[step, i], truncated[step, i] = o, term, trunc
            if term or trunc:
                o, _ = e.reset()
            stepped.append((o, r))
        next_obs = torch.Tensor(np.stack([o for o, _ in stepped]))
        rewards[step] = torch.tensor(np.array([r for _, r in stepped])).view(-1)
        next_done = torch.Tensor(np.logical_or(terminated[step], truncated[step]))
    return {"obs": obs, "actions": actions, "logprobs": logprobs, "rewards": rewards,
            "dones": dones, "values": values, "next_obs": next_obs, "next_done": next_done,
            "real_next_obs": real_next, "terminated": terminated,
            "truncated": truncated}  # fmt: skip


def cleanrl_gae(agent, rollout: dict, gamma: float, gae_lambda: float):
    """CleanRL's GAE loop, as written: ``(advantages, returns)`` torch ``[T, N]``."""
    import torch

    rewards, dones, values = rollout["rewards"], rollout["dones"], rollout["values"]
    next_done, num_steps = rollout["next_done"], rewards.shape[0]
    with torch.no_grad():
        next_value = agent.get_value(rollout["next_obs"]).reshape(1, -1)
        advantages = torch.zeros_like(rewards)
        lastgaelam = 0
        for t in reversed(range(num_steps)):
            if t == num_steps - 1:
                nextnonterminal = 1.0 - next_done
                nextvalues = next_value
            else:
                nextnonterminal = 1.0 - dones[t + 1]
                nextvalues = values[t + 1]
            delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
            advantages[t] = lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
        returns = advantages + values
    return advantages, returns


def cleanrl_update(agent, rollout: dict, advantages, returns, args: dict) -> dict:
    """CleanRL's "Optimizing the policy and value network" block, line for line, with a fresh
    ``Adam(lr, eps)``. Returns the minibatches' row order ``[E * nmb, mb]`` (as drawn by
    ``np.random.shuffle``), the means of the logged losses over the minibatch steps and, with
    ``clip_vloss``, the share of rows outside the value clip and where the unclipped term won."""
    import torch
    import torch.nn as nn
    import torch.optim as optim

    optimizer = optim.Adam(agent.parameters(), lr=args["learning_rate"], eps=args["adam_eps"])
    obs, actions = rollout["obs"], rollout["actions"]
    b_obs = obs.reshape((-1, *obs.shape[2:]))
    b_logprobs = rollout["logprobs"].reshape(-1)
    b_actions = actions.reshape((-1, *actions.shape[2:]))
    if args["discrete"]:
        b_actions = b_actions.long()
    b_advantages, b_returns = advantages.reshape(-1), returns.reshape(-1)
    b_values = rollout["values"].reshape(-1)
    batch_size = b_obs.shape[0]
    minibatch_size = batch_size // args["num_minibatches"]
    clip_coef = args["clip_coef"]

    b_inds = np.arange(batch_size)
    clipfracs, order, logged = [], [], []
    for _epoch in range(args["update_epochs"]):
        np.random.shuffle(b_inds)
        for start in range(0, batch_size, minibatch_size):
            end = start + minibatch_size
            mb_inds = b_inds[start:end]
            order.append(mb_inds.copy())

            _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                b_obs[mb_inds], b_actions[mb_inds]
            )
            logratio = newlogprob - b_logprobs[mb_inds]
            ratio = logratio.exp()

            with torch.no_grad():
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfracs += [((ratio - 1.0).abs() > clip_coef).float().mean().item()]

            mb_advantages = b_advantages[mb_inds]
            if args["norm_adv"]:
                mean, std = mb_advantages.mean(), mb_advantages.std()
                mb_advantages = (mb_advantages - mean) / (std + 1e-8)

            pg_loss1 = -mb_advantages * ratio
            pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)
            pg_loss = torch.max(pg_loss1, pg_loss2).mean()

            newvalue = newvalue.view(-1)
            outside = unclipped_wins = 0.0
            if args["clip_vloss"]:
                v_loss_unclipped = (newvalue - b_returns[mb_inds]) ** 2
                v_clipped = b_values[mb_inds] + torch.clamp(newvalue - b_values[mb_inds],
                                                            -clip_coef, clip_coef)  # fmt: skip
                v_loss_clipped = (v_clipped - b_returns[mb_inds]) ** 2
                v_loss_max = torch.max(v_loss_unclipped, v_loss_clipped)
                v_loss = 0.5 * v_loss_max.mean()
                with torch.no_grad():  # (the lab's: where CleanRL's gradient is not SB3's)
                    out = (newvalue - b_values[mb_inds]).abs() > clip_coef
                    outside = out.float().mean().item()
                    wins = out & (v_loss_unclipped > v_loss_clipped)
                    unclipped_wins = wins.float().mean().item()
            else:
                v_loss = 0.5 * ((newvalue - b_returns[mb_inds]) ** 2).mean()

            entropy_loss = entropy.mean()
            loss = pg_loss - args["ent_coef"] * entropy_loss + v_loss * args["vf_coef"]

            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), args["max_grad_norm"])
            if not logged:  # (the lab's: the first step's gradients against Adam's epsilon)
                first = {net: torch.cat([p.grad.abs().reshape(-1) for n, p in
                                         agent.named_parameters() if n.startswith(net)])
                         for net in ("actor", "critic")}  # fmt: skip
                first_median = {net: g.median().item() for net, g in first.items()}
            optimizer.step()
            logged.append([pg_loss.item(), v_loss.item(), entropy_loss.item(),
                           approx_kl.item(), clipfracs[-1], outside, unclipped_wins])  # fmt: skip
    names = ("policy_loss", "half_value_loss", "entropy", "approx_kl", "clip_fraction",
             "vclip_outside", "vclip_unclipped_wins")  # fmt: skip
    means = np.mean(np.array(logged), axis=0)
    return {"order": np.stack(order).astype(np.int32),
            "losses": dict(zip(names, means.tolist(), strict=True)),
            "first_median_grad": first_median}  # fmt: skip


def torch_weights(agent) -> dict[str, np.ndarray]:
    """The agent's parameters by their ``state_dict`` names, as float32 numpy arrays."""
    return {k: v.detach().cpu().numpy().astype(np.float32) for k, v in agent.state_dict().items()}


def child(request: dict, out: str) -> None:
    """CleanRL's side of :func:`compare`: the agent, the rollout, GAE, then one update per
    setting from the same weights and ``np.random`` state. Writes an ``.npz`` and a ``.json``
    beside it (the losses)."""
    import random

    import torch

    torch.set_num_threads(1)
    seed, env_id = request["seed"], request["env_id"]
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.backends.cudnn.deterministic = True
    agent, _, discrete = cleanrl_agent(env_id, request["hidden"])
    rollout = cleanrl_rollout(agent, env_id, request["envs"], request["steps"], seed, discrete)
    args = {**COMMON, **SCRIPTS[env_id], "discrete": discrete}
    advantages, returns = cleanrl_gae(agent, rollout, args["gamma"], args["gae_lambda"])
    start, state = torch_weights(agent), np.random.get_state()
    arrays = {f"start/{k}": v for k, v in start.items()}
    for key in ("obs", "actions", "logprobs", "rewards", "values", "real_next_obs",
                "terminated", "truncated"):  # fmt: skip
        value = rollout[key]
        arrays[f"rollout/{key}"] = value.numpy() if hasattr(value, "numpy") else value
    arrays["gae/advantages"], arrays["gae/returns"] = advantages.numpy(), returns.numpy()
    losses = {}
    for setting in request["settings"]:
        agent.load_state_dict({k: torch.as_tensor(v) for k, v in start.items()})
        np.random.set_state(state)
        done = cleanrl_update(agent, rollout, advantages, returns,
                              {**args, **SETTINGS[setting]})  # fmt: skip
        arrays[f"{setting}/order"] = done["order"]
        arrays.update({f"{setting}/w/{k}": v for k, v in torch_weights(agent).items()})
        losses[setting] = {**done["losses"], "first_median_grad": done["first_median_grad"]}
    np.savez(out, **arrays)
    Path(out).with_suffix(".json").write_text(json.dumps({"losses": losses,
                                                          "torch": torch.__version__}))  # fmt: skip


# -- the parent (rlkit's venv) -----------------------------------------------------------------
def torch_python(given: str | None = None) -> str | None:
    """The Python the child runs under: ``given``, else this one if it has torch, else
    :data:`TORCH_PYTHON` if it imports torch; None when there is none."""
    if given:
        return given
    if importlib.util.find_spec("torch") is not None:
        return sys.executable
    if Path(TORCH_PYTHON).is_file():
        done = subprocess.run([TORCH_PYTHON, "-c", "import torch, gymnasium"],
                              capture_output=True)  # fmt: skip
        if done.returncode == 0:
            return TORCH_PYTHON
    return None


def run_cleanrl(request: dict, python: str) -> tuple[dict[str, np.ndarray], dict]:
    """Run :func:`child` under ``python``; its arrays and its ``.json``."""
    with tempfile.TemporaryDirectory() as folder:
        out = str(Path(folder) / "cleanrl.npz")
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"}
        done = subprocess.run([python, "-m", "labs.ppo_cleanrl_update", "--child",
                               json.dumps(request), out], cwd=REPO, env=env,
                              capture_output=True, text=True)  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"CleanRL's child failed:\n{done.stderr[-4000:]}")
        with np.load(out) as data:
            arrays = {k: data[k] for k in data.files}
        info = json.loads(Path(out).with_suffix(".json").read_text())
    return arrays, info


def torch_groups(weights: dict[str, np.ndarray], prefix: str) -> dict[str, list[np.ndarray]]:
    """CleanRL's weights (``prefix + name``) in rlkit's layout: per network the Linear
    layers' ``[kernel (weight transposed), bias]`` in order; Box: ``actor_logstd`` ``[A]``."""
    names = [k[len(prefix) :] for k in weights if k.startswith(prefix)]

    def layers(net):
        indices = sorted({int(n.split(".")[1]) for n in names if n.startswith(net + ".")})
        return [a for i in indices for a in (weights[f"{prefix}{net}.{i}.weight"].T,
                                             weights[f"{prefix}{net}.{i}.bias"])]  # fmt: skip

    actor = "actor" if any(n.startswith("actor.") for n in names) else "actor_mean"
    out = {"actor": layers(actor), "critic": layers("critic")}
    if f"{prefix}actor_logstd" in weights:
        out["actor log std"] = [weights[f"{prefix}actor_logstd"].reshape(-1)]
    return out


def rlkit_groups(learner) -> dict[str, list[np.ndarray]]:
    """rlkit's weights in :func:`torch_groups`' layout."""
    out = {"actor": [np.asarray(w) for w in learner.policy_network.layer_weights()],
           "critic": [np.asarray(w) for w in learner.value_network.layer_weights()]}  # fmt: skip
    if learner.log_std is not None:
        out["actor log std"] = [np.asarray(learner.log_std)]
    return out


def load_into_rlkit(learner, groups: dict[str, list[np.ndarray]]) -> None:
    """Copy :func:`torch_groups` into rlkit's networks (and log std)."""
    for net, name in ((learner.policy_network, "actor"), (learner.value_network, "critic")):
        for variable, value in zip(net.layer_weights(), groups[name], strict=True):
            variable.assign(value)
    if learner.log_std is not None:
        learner.log_std.assign(groups["actor log std"][0])
    learner.refresh()


def compare(env_id: str = "CartPole-v1", settings: list[str] | None = None,
            hidden: list[int] | None = None, envs: int = 4, steps: int = 128, seed: int = 1,
            python: str | None = None) -> dict:  # fmt: skip
    """CleanRL's update and rlkit's on ``env_id``, for each of ``settings``.

    Returns ``{"rollout": {terminations, truncations, rows}, "gae": {name: max |diff|},
    "settings": {setting: {"groups": {group: (max |diff| after, that over CleanRL's largest
    change, rlkit's change's length over CleanRL's)}, "losses": {name: (rlkit, CleanRL)},
    "vclip": {...}, "first_median_grad": {...}}}, "torch": version}``."""
    import gymnasium as gym

    import rlkit
    from rlkit.learn.advantages import gae
    from rlkit.replay.rollout import RolloutBatch

    settings = list(SETTINGS) if settings is None else settings
    hidden = [64, 64] if hidden is None else hidden
    python = torch_python(python)
    if python is None:
        raise RuntimeError(f"no Python with torch: give --torch-python (or make {TORCH_PYTHON})")
    request = {"env_id": env_id, "hidden": hidden, "envs": envs, "steps": steps, "seed": seed,
               "settings": settings}  # fmt: skip
    arrays, info = run_cleanrl(request, python)
    args = {**COMMON, **SCRIPTS[env_id]}
    r = {k.split("/", 1)[1]: v for k, v in arrays.items() if k.startswith("rollout/")}
    discrete = r["actions"].ndim == 2
    batch = RolloutBatch(obs=r["obs"], rewards=r["rewards"].astype(np.float32),
                         actions=r["actions"].astype(np.int64) if discrete else r["actions"],
                         next_obs=r["real_next_obs"], terminated=r["terminated"],
                         truncated=r["truncated"])  # fmt: skip
    start = torch_groups(arrays, "start/")
    rows = envs * steps
    minibatch = rows // args["num_minibatches"]
    counts = {"terminations": int(r["terminated"].sum()),
              "truncations": int(r["truncated"].sum()), "rows": rows}  # fmt: skip
    result: dict = {"torch": info["torch"], "settings": {}, "rollout": counts}
    for setting in settings:
        spec = SETTINGS[setting]
        agent = rlkit.agents.PPO.from_env(
            gym.make(env_id), seed=seed, n_steps=steps, batch_size=minibatch,
            n_epochs=args["update_epochs"], learning_rate=args["learning_rate"],
            adam_epsilon=spec["adam_eps"], gamma=args["gamma"], gae_lambda=args["gae_lambda"],
            clip_range=args["clip_coef"],
            clip_range_vf=args["clip_coef"] if spec["clip_vloss"] else 0.0,
            normalize_advantage=args["norm_adv"], ent_coef=args["ent_coef"],
            vf_coef=0.5 * args["vf_coef"], max_grad_norm=args["max_grad_norm"], target_kl=0.0,
            hidden_sizes=tuple(hidden), value_hidden_sizes=tuple(hidden),
        )  # fmt: skip
        learner = agent.learner
        load_into_rlkit(learner, start)
        if "gae" not in result:  # the same weights in every setting: once
            values, log_probs, advantages, returns = learner.advantages(batch)
            _, next_values, _ = learner.evaluate(batch)
            as_done, _ = gae(batch.rewards, values, next_values,
                             batch.terminated | batch.truncated, batch.truncated,
                             args["gamma"], args["gae_lambda"])  # fmt: skip
            result["gae"] = {
                "values": float(np.abs(values - r["values"]).max()),
                "log_probs": float(np.abs(log_probs - r["logprobs"]).max()),
                "advantages": float(np.abs(advantages - arrays["gae/advantages"]).max()),
                "returns": float(np.abs(returns - arrays["gae/returns"]).max()),
                "advantages, truncation as termination":
                    float(np.abs(as_done - arrays["gae/advantages"]).max()),
                "largest advantage": float(np.abs(arrays["gae/advantages"]).max()),
            }  # fmt: skip
        order = arrays[f"{setting}/order"]
        learner.minibatch_order = lambda rng, size, order=order: order
        metrics, _ = learner.learn(batch, 0)
        theirs, mine = torch_groups(arrays, f"{setting}/w/"), rlkit_groups(learner)
        groups = {}
        for name, group in theirs.items():
            diff = max(np.abs(a - b).max() for a, b in zip(group, mine[name], strict=True))
            step = max(np.abs(a - b).max() for a, b in zip(group, start[name], strict=True))
            mine_len, theirs_len = (
                np.sqrt(sum(np.sum((a - b) ** 2) for a, b in zip(g, start[name], strict=True)))
                for g in (mine[name], group)
            )
            groups[name] = (
                float(diff),
                float(diff / step) if step > 0 else float("nan"),
                float(mine_len / theirs_len) if theirs_len > 0 else float("nan"),
            )
        logged = info["losses"][setting]
        losses = {"policy_loss": (metrics["policy_loss"], logged["policy_loss"]),
                  "half_value_loss": (0.5 * metrics["value_loss"], logged["half_value_loss"]),
                  "entropy": (metrics["entropy"], logged["entropy"]),
                  "approx_kl": (metrics["approx_kl"], logged["approx_kl"]),
                  "clip_fraction": (metrics["clip_fraction"], logged["clip_fraction"])}  # fmt: skip
        result["settings"][setting] = {
            "groups": groups, "losses": losses, "epochs": metrics["epochs"],
            "vclip": {k: logged[k] for k in ("vclip_outside", "vclip_unclipped_wins")},
            "first_median_grad": logged["first_median_grad"],
        }  # fmt: skip
    return result


def report(env_id: str, result: dict, hidden: list[int], envs: int, steps: int) -> None:
    """Print :func:`compare`'s result."""
    args = {**COMMON, **SCRIPTS[env_id]}
    rows = result["rollout"]["rows"]
    print(f"\n{env_id}: CleanRL {args['script']} @ {CLEANRL_COMMIT[:7]} (torch "
          f"{result['torch']}); hidden {hidden}; rollout {steps} steps x {envs} envs "
          f"({result['rollout']['terminations']} terminations, "
          f"{result['rollout']['truncations']} truncations); {args['update_epochs']} epochs x "
          f"{args['num_minibatches']} minibatches of {rows // args['num_minibatches']}; "
          f"lr {args['learning_rate']:g}, ent_coef {args['ent_coef']:g}")  # fmt: skip
    print("  rollout and GAE, max |rlkit - CleanRL|:")
    for name, value in result["gae"].items():
        print(f"    {name:<40} {value:.1e}")
    for setting, out in result["settings"].items():
        spec = SETTINGS[setting]
        print(f"\n  {setting}: CleanRL clip_vloss={spec['clip_vloss']}, rlkit clip_range_vf="
              f"{args['clip_coef'] if spec['clip_vloss'] else 0:g} (vf_coef 0.25); Adam eps "
              f"{spec['adam_eps']:g} both; rlkit ran {out['epochs']:g} epochs")  # fmt: skip
        print(f"    {'group':<16} {'max |diff|':>10} {'/ max step':>10} {'step length':>12}")
        for name, (diff, rel, length) in out["groups"].items():
            print(f"    {name:<16} {diff:10.1e} {rel:10.1e} {length:12.4f}")
        for name, (mine, theirs) in out["losses"].items():
            print(f"    {name:<16} rlkit {mine:+.7e}  CleanRL {theirs:+.7e}  "
                  f"diff {abs(mine - theirs):.1e}")  # fmt: skip
        g, keras_eps = out["first_median_grad"], spec["adam_eps"] / math.sqrt(1 - BETA2)
        print(f"    first step's median |gradient| after the clip: actor {g['actor']:.1e}, "
              f"critic {g['critic']:.1e} (Adam's epsilon there: {spec['adam_eps']:g} in both; "
              f"Keras' own Adam's would be {keras_eps:.1e} in torch's terms)")  # fmt: skip
        if spec["clip_vloss"]:
            v = out["vclip"]
            print(f"    value clip: rows outside +-{args['clip_coef']:g} of V_old "
                  f"{v['vclip_outside']:.1%}, of which the unclipped term won (CleanRL's "
                  f"gradient, rlkit's 0) {v['vclip_unclipped_wins']:.1%} of all rows")  # fmt: skip


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(json.loads(sys.argv[2]), sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env-ids", nargs="+", choices=list(SCRIPTS), default=list(SCRIPTS))
    parser.add_argument("--hidden", type=int, nargs="+", default=[64, 64],
                        help="hidden sizes of both networks (CleanRL's: 64 64)")  # fmt: skip
    parser.add_argument("--envs", type=int, default=4, help="environments in the rollout")
    parser.add_argument("--steps", type=int, default=128, help="steps per environment")
    parser.add_argument("--seed", type=int, default=1, help="CleanRL's seed (its default 1)")
    parser.add_argument("--settings", nargs="+", choices=list(SETTINGS), default=list(SETTINGS))
    parser.add_argument("--torch-python", help=f"a Python with torch (default: {TORCH_PYTHON})")
    args = parser.parse_args()
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    for env_id in args.env_ids:
        result = compare(env_id, args.settings, args.hidden, args.envs, args.steps, args.seed,
                         args.torch_python)  # fmt: skip
        report(env_id, result, args.hidden, args.envs, args.steps)


if __name__ == "__main__":
    main()
