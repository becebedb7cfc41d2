"""Every network: MLP and CNN torsos, the Q-network, actor and critic, the policy,
and their numpy copies for fast acting."""
