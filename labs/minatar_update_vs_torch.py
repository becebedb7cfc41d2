"""rlkit's MinAtar DQN update against the same update written in PyTorch, as MinAtar's DQN
(Young & Tian 2019, examples/dqn.py) computes it.

Both start from the same weights (rlkit's, copied into a PyTorch module of the paper's
shape: Conv2d 16 3x3 -> Linear 1024 -> 128 -> actions) and take the same minibatches:
the loss is ``smooth_l1_loss(r + 0.99 max_a Q_target(s', a) [s' not terminal], Q(s, a))``
averaged over the batch, the optimizer ``torch.optim.RMSprop(lr, alpha=0.95,
centered=True, eps=0.01)``. After each update the two networks' Q-values on fresh
states are compared. Needs the ``bench`` extra (torch).

    python -m labs.minatar_update_vs_torch --updates 200
"""

from __future__ import annotations

import argparse


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=200)
    parser.add_argument("--game", default="Breakout")
    args = parser.parse_args()

    import numpy as np
    import torch
    import torch.nn.functional as F

    from rlkit.agents import DQN
    from rlkit.envs.make import make_env
    from rlkit.replay.memory import Batch
    from rlkit.run import experiment

    env_id = f"MinAtar/{args.game}-v0"
    env = make_env(env_id)
    plan = experiment.plan("dqn", env_id, seed=0)
    cfg = plan.agent_config
    agent = DQN.from_env(env, config=plan.agent_config, seed=0)
    channels, actions = env.observation_space.shape[-1], int(env.action_space.n)

    class PaperQNetwork(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = torch.nn.Conv2d(channels, 16, kernel_size=3, stride=1)
            self.hidden = torch.nn.Linear(8 * 8 * 16, 128)
            self.out = torch.nn.Linear(128, actions)

        def forward(self, x):  # x: [B, C, 10, 10]
            x = F.relu(self.conv(x))
            return self.out(F.relu(self.hidden(x.reshape(x.size(0), -1))))

    def copy_weights(net: PaperQNetwork, variables) -> None:
        kernel, bias, w1, b1, w2, b2 = (v.numpy() for v in variables)
        net.conv.weight.data = torch.tensor(kernel.transpose(3, 2, 0, 1))  # HWIO -> OIHW
        net.conv.bias.data = torch.tensor(bias)
        # TensorFlow flattens [8, 8, 16] (channels last), PyTorch [16, 8, 8]
        w1 = w1.reshape(8, 8, 16, 128).transpose(2, 0, 1, 3).reshape(1024, 128)
        net.hidden.weight.data, net.hidden.bias.data = torch.tensor(w1.T.copy()), torch.tensor(b1)
        net.out.weight.data, net.out.bias.data = torch.tensor(w2.T.copy()), torch.tensor(b2)

    online, target = PaperQNetwork(), PaperQNetwork()
    copy_weights(online, agent.q.variables)
    copy_weights(target, agent.q_target.variables)
    optimizer = torch.optim.RMSprop(
        online.parameters(), lr=cfg.learning_rate, alpha=0.95, centered=True, eps=0.01
    )

    def nchw(states: np.ndarray) -> torch.Tensor:
        return torch.tensor(states, dtype=torch.float32).permute(0, 3, 1, 2)

    rng = np.random.default_rng(1)
    worst = 0.0
    for update in range(1, args.updates + 1):
        obs = rng.random((32, 10, 10, channels)) < 0.1
        next_obs = rng.random((32, 10, 10, channels)) < 0.1
        taken = rng.integers(0, actions, 32)
        rewards = rng.choice([0.0, 1.0], 32, p=[0.8, 0.2]).astype(np.float32)
        terminated = rng.random(32) < 0.1
        no = np.zeros((1, 32), bool)
        agent.learn(Batch(obs[None], taken[None], rewards[None], next_obs[None],
                          terminated[None], no))  # fmt: skip

        q = online(nchw(obs)).gather(1, torch.tensor(taken)[:, None])
        bootstrap = target(nchw(next_obs)).detach().max(1)[0][:, None]
        alive = torch.tensor(~terminated, dtype=torch.float32)[:, None]
        loss = F.smooth_l1_loss(q, torch.tensor(rewards)[:, None] + cfg.gamma * bootstrap * alive)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        states = rng.random((64, 10, 10, channels)) < 0.1
        ours = agent.q.model(states.astype(np.float32)).numpy()
        theirs = online(nchw(states)).detach().numpy()
        worst = max(worst, float(np.abs(ours - theirs).max()))
        if update in (1, 10, 100, args.updates):
            gap, scale = np.abs(ours - theirs).max(), np.abs(theirs).max()
            print(f"after {update:4d} updates: largest |Q_rlkit - Q_torch| = {gap:.2e} "
                  f"(|Q| up to {scale:.3f})")  # fmt: skip
    print(f"{env_id}, learning rate {cfg.learning_rate}: worst difference {worst:.2e} "
          f"over {args.updates} updates")  # fmt: skip


if __name__ == "__main__":
    main()
