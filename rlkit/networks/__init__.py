"""Every network: MLP and CNN torsos (builders), the Q-network, actor and critic, the policy,
and their numpy copies for fast acting."""
