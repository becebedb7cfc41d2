"""What DQN3.0's update costs on a GPU: a PyTorch reference, for machines without TensorFlow.

The lent GPU machines of this project carry PyTorch but not TensorFlow, and TensorFlow
(~600 MB wheel, 1.9 GB installed, plus CUDA 12 libraries) cannot be carried to them. This
times the same work as rlkit's ``dqn3`` update on whatever torch device is there, to bound
what a GPU run of ``rlkit train dqn --preset dqn3`` could reach: Nature CNN on 84x84x4 uint8
divided by 255, batch 32, the target network's forward pass, the TD error clipped to ±1 and
summed over the minibatch as the gradient at Q(s,a), DQN3.0's centred RMSProp (lr 2.5e-4,
rho 0.95, epsilon 0.01 inside the root). Also times acting (one greedy forward pass on one
stacked observation, what each agent step pays) and the host-to-device copy of a sampled
batch. With TensorFlow importable it times rlkit's own update on the same machine too.

    python -m labs.gpu_update_reference --updates 2000
"""

from __future__ import annotations

import argparse
import time

import numpy as np

BATCH, HISTORY, SIDE, ACTIONS = 32, 4, 84, 4


def nature_cnn(torch):
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(HISTORY, 32, 8, stride=4), nn.ReLU(),
        nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
        nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 512), nn.ReLU(), nn.Linear(512, ACTIONS),
    )  # fmt: skip


def time_torch(updates: int, device_name: str) -> dict:
    import torch

    device = torch.device(device_name)
    online, target = nature_cnn(torch).to(device), nature_cnn(torch).to(device)
    target.load_state_dict(online.state_dict())
    params = list(online.parameters())
    mean_g = [torch.zeros_like(p) for p in params]
    mean_g2 = [torch.zeros_like(p) for p in params]
    rng = np.random.default_rng(0)
    host = {
        "s": rng.integers(0, 256, (BATCH, HISTORY, SIDE, SIDE), dtype=np.uint8),
        "s2": rng.integers(0, 256, (BATCH, HISTORY, SIDE, SIDE), dtype=np.uint8),
        "a": rng.integers(0, ACTIONS, BATCH),
        "r": rng.uniform(-1, 1, BATCH).astype(np.float32),
        "done": (rng.random(BATCH) < 0.01).astype(np.float32),
    }

    def to_device():
        return {k: torch.from_numpy(v).to(device, non_blocking=True) for k, v in host.items()}

    def update(b):
        q = online(b["s"].float() / 255.0)
        with torch.no_grad():
            q2 = target(b["s2"].float() / 255.0).max(dim=1).values
            y = b["r"] + 0.99 * (1.0 - b["done"]) * q2
            q_sa = q.gather(1, b["a"].long()[:, None])[:, 0]
            delta = (y - q_sa).clamp(-1.0, 1.0)
            grad_q = torch.zeros_like(q).scatter_(1, b["a"].long()[:, None], -delta[:, None])
        online.zero_grad(set_to_none=True)
        q.backward(grad_q)  # the injected delta, summed over the minibatch
        with torch.no_grad():
            grads = [p.grad for p in params]
            torch._foreach_mul_(mean_g, 0.95)
            torch._foreach_add_(mean_g, grads, alpha=0.05)
            torch._foreach_mul_(mean_g2, 0.95)
            torch._foreach_addcmul_(mean_g2, grads, grads, value=0.05)
            denom = torch._foreach_sub(mean_g2, torch._foreach_mul(mean_g, mean_g))
            torch._foreach_add_(denom, 0.01)
            torch._foreach_sqrt_(denom)
            torch._foreach_addcdiv_(params, grads, denom, value=-2.5e-4)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()

    batch = to_device()
    for _ in range(50):
        update(batch)
    sync()
    start = time.perf_counter()
    for _ in range(updates):
        update(batch)
    sync()
    update_s = (time.perf_counter() - start) / updates
    start = time.perf_counter()
    for _ in range(updates):
        update(to_device())
    sync()
    update_copy_s = (time.perf_counter() - start) / updates
    obs = torch.from_numpy(host["s"][:1]).to(device)
    with torch.no_grad():
        for _ in range(50):
            online(obs.float() / 255.0).argmax(dim=1).item()
        start = time.perf_counter()
        for _ in range(updates):
            online(obs.float() / 255.0).argmax(dim=1).item()  # .item() waits for the device
        act_s = (time.perf_counter() - start) / updates
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    return {
        "framework": f"torch {torch.__version__} on {name}",
        "updates_per_s": 1 / update_s,
        "updates_per_s_with_batch_copy": 1 / update_copy_s,
        "act_ms": act_s * 1e3,
    }


def time_rlkit(updates: int) -> dict:
    """rlkit's own dqn3 update and acting on this machine (needs TensorFlow)."""
    import gymnasium as gym
    import tensorflow as tf

    from rlkit.agents.dqn.agent import DQN
    from rlkit.run import experiment

    space = gym.spaces.Box(0, 255, (SIDE, SIDE, HISTORY), np.uint8)
    plan = experiment.plan("dqn", "ALE/Breakout-v5", preset="dqn3", seed=0)
    agent = DQN(space, gym.spaces.Discrete(ACTIONS), config=plan.agent_config, seed=0)
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 256, (BATCH * 4 + HISTORY, SIDE, SIDE), dtype=np.uint8)
    frames[: HISTORY - 1] = 0  # one episode, its first stack zero-padded

    def stack(t: int) -> np.ndarray:
        return np.moveaxis(frames[t : t + HISTORY], 0, -1)

    for t in range(BATCH * 4):
        action, reward = int(rng.integers(ACTIONS)), float(rng.uniform(-1, 1))
        agent.replay.add(stack(t), action, reward, stack(t + 1), False, False)
    batch = agent.replay.sample(BATCH, 1)
    for _ in range(20):
        agent.learn(batch)
    start = time.perf_counter()
    for _ in range(updates):
        agent.learn(batch)
    update_s = (time.perf_counter() - start) / updates
    start = time.perf_counter()
    for _ in range(updates):
        agent.learn(agent.replay.sample(BATCH, 1))
    update_sample_s = (time.perf_counter() - start) / updates
    obs = rng.integers(0, 256, (SIDE, SIDE, HISTORY), dtype=np.uint8)
    start = time.perf_counter()
    for _ in range(updates):
        agent.act(obs, explore=False)
    act_s = (time.perf_counter() - start) / updates
    devices = [d.device_type for d in tf.config.list_logical_devices()]
    return {
        "framework": f"rlkit on tensorflow {tf.__version__} ({', '.join(devices)})",
        "updates_per_s": 1 / update_s,
        "updates_per_s_with_replay_sampling": 1 / update_sample_s,
        "act_ms": act_s * 1e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=2000)
    parser.add_argument("--device", default=None, help="torch device; cuda where there is one")
    args = parser.parse_args()
    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    for key, value in time_torch(args.updates, device).items():
        print(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        print("tensorflow: not installed here, so rlkit's own update is not timed")
        return
    for key, value in time_rlkit(max(args.updates // 10, 50)).items():
        print(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")


if __name__ == "__main__":
    main()
