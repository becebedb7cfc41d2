"""Hooks on the training loop: what happens around each step besides acting and learning.

The loop (:class:`rlkit.run.loop.Trainer`) calls each hook in order with a
:class:`LoopContext`; the built-in ones log metrics, evaluate (keeping the best model) and
checkpoint (for the run: :class:`rlkit.run.run.Run`). A user's own hook is the same kind
of object: subclass :class:`Hook` and pass it in ``hooks=``; one with state of its own
saves it through ``state()``/``load_state()``.
"""

from rlkit.run.hooks.base import CallbackHook, Hook, LoopContext

__all__ = ["CallbackHook", "Hook", "LoopContext"]
