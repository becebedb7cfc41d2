"""MinAtar's Seaquest in TensorFlow, equal step for step to ``minatar``'s
(``minatar/environments/seaquest.py``, version 1.0.15) as ``MinAtar/Seaquest-v0`` plays it.

A submarine (rows 0..8; row 0 is the surface) moves, turns and fires torpedoes (one every 5
steps) at fish and enemy subs that cross rows 1..8 (spawning every ``e_spawn_speed`` steps
on a random row and side, 1/3 of them subs, none on a row holding one going the other way);
enemy subs fire bullets every 11 steps. It rescues divers (spawning every 31 steps), at most
6. Oxygen (200) runs down under water; surfacing with divers refills it (with all 6: a bonus
of ``oxygen * 10 // 200`` and the divers are dropped), ramps the difficulty and uses up a diver
(minatar's rule: the count goes below zero after a bonus); surfacing without one, running
out of oxygen or meeting an enemy or a bullet ends the episode. +1 an enemy shot.

minatar keeps its torpedoes, bullets, fish, subs and divers in Python lists and walks them
in a fixed order (some in reverse), removing as it goes, so which torpedo a crowded cell
takes, or which diver is still counted, depends on that order. Here each list is a block
of slots holding its items in minatar's order (the live ones first, compacted after every
step) and the walks follow the same order (the torpedoes' and divers' unrolled over their
slots, the enemies' as pairwise ranks). The blocks hold 4 torpedoes, 40 bullets, 32 fish,
32 subs and 6 divers: more than a game can hold at once (at the end of the difficulty ramp
an enemy spawns every step and lives about 30 steps: about 30 at once, fish and subs
together; the step-for-step test checks the most it saw); an item beyond a block's room
would be dropped.
Observation channels: sub front, sub back, torpedo, trail, enemy bullet, fish, enemy sub,
oxygen gauge, diver gauge, diver.
"""

from __future__ import annotations

import tensorflow as tf

from rlkit.envs.tf.minatar_base import (
    DOWN,
    FIRE,
    GAME,
    LEFT,
    RIGHT,
    SIZE,
    UP,
    MinAtarEnv,
    cell,
    choose,
)

RAMP_INTERVAL = 100
MAX_OXYGEN = 200
INIT_SPAWN_SPEED = 20
DIVER_SPAWN_SPEED = 30
INIT_MOVE_INTERVAL = 5
SHOT_COOL_DOWN = 5
ENEMY_SHOT_INTERVAL = 10
DIVER_MOVE_INTERVAL = 5

#: the scalar columns (of ``physics[:, GAME:]``)
(SUB_X, SUB_Y, SUB_OR, OXYGEN, DIVER_COUNT, E_SPAWN_SPEED, E_SPAWN_TIMER, D_SPAWN_TIMER,
 MOVE_SPEED, RAMP_INDEX, SHOT_TIMER, SURFACE) = range(12)  # fmt: skip
#: the lists: (name, slots, fields); each is stored field by field, ``slots`` columns each
POOLS = (
    ("torpedoes", 4, ("alive", "x", "y", "right")),
    ("bullets", 40, ("alive", "x", "y", "right")),
    ("fish", 32, ("alive", "x", "y", "right", "timer")),
    ("subs", 32, ("alive", "x", "y", "right", "timer", "shot")),
    ("divers", 6, ("alive", "x", "y", "right", "timer")),
)
HEAD = 12
#: the first column of each list's block
OFFSETS: dict[str, int] = {}
_at = HEAD
for _name, _slots, _fields in POOLS:
    OFFSETS[_name] = _at
    _at += _slots * len(_fields)
GAME_DIM = _at

Pool = dict[str, tf.Tensor]  # field -> int32 [N, slots] ("alive" bool)


def _read(game: tf.Tensor) -> dict[str, Pool]:
    pools = {}
    for name, slots, fields in POOLS:
        at = OFFSETS[name]
        pool = {f: game[:, at + i * slots : at + (i + 1) * slots] for i, f in enumerate(fields)}
        pool["alive"] = pool["alive"] > 0
        pools[name] = pool
    return pools


def _write(pools: dict[str, Pool]) -> list[tf.Tensor]:
    """The lists compacted (live items first, in order; empty slots all 0) as columns."""
    out = []
    for name, slots, fields in POOLS:
        pool = pools[name]
        alive = pool["alive"]
        dest = tf.cumsum(tf.cast(alive, tf.int32), axis=1, exclusive=True)  # a live item's slot
        moves = alive[:, :, None] & (dest[:, :, None] == tf.range(slots)[None, None, :])
        for f in fields:
            value = tf.cast(pool[f], tf.int32)
            out.append(tf.reduce_sum(tf.where(moves, value[:, :, None], 0), axis=1))
    return out


def _append(pool: Pool, add: tf.Tensor, values: dict[str, tf.Tensor]) -> Pool:
    """``pool`` with an item ``values`` (int32 ``[N]`` each) after its last live one where ``add``
    (bool ``[N]``); dropped where the block is full."""
    slots = pool["alive"].shape[1]
    index = tf.range(slots)[None, :]
    end = tf.reduce_max(tf.where(pool["alive"], index, -1), axis=1) + 1
    put = add[:, None] & (index == end[:, None])
    out = {f: tf.where(put, values[f][:, None], v) for f, v in pool.items() if f != "alive"}
    out["alive"] = pool["alive"] | put
    return out


def _first(match: tf.Tensor) -> tf.Tensor:
    """bool ``[N, slots]``: only the first true of each row of ``match``."""
    first = tf.argmax(tf.cast(match, tf.int32), axis=1, output_type=tf.int32)  # (0: none)
    return match & (tf.range(match.shape[1])[None, :] == first[:, None])


def _step(x: tf.Tensor, right: tf.Tensor) -> tf.Tensor:
    return x + tf.where(right > 0, 1, -1)


class Seaquest(MinAtarEnv):
    """``N`` games of MinAtar's Seaquest; physics int32 ``[N, 4 + GAME_DIM]``."""

    gym_id = "MinAtar/Seaquest-v0"
    channels = 10
    game_dim = GAME_DIM
    physics_dim = GAME + game_dim
    obs_shape = (SIZE, SIZE, channels)
    obs_dim = SIZE * SIZE * channels
    num_draws = 5  # enemy: side, kind, row; diver: side, row
    num_reset_draws = 1

    def reset_game(self, draws: tf.Tensor) -> tf.Tensor:
        head = [5, 0, 0, MAX_OXYGEN, 0, INIT_SPAWN_SPEED, INIT_SPAWN_SPEED, DIVER_SPAWN_SPEED,
                INIT_MOVE_INTERVAL, 0, 0, 1]  # fmt: skip
        row = tf.constant(head + [0] * (GAME_DIM - HEAD), tf.int32)
        return tf.tile(row[None], [tf.shape(draws)[0], 1])

    def play(
        self, game: tf.Tensor, actions: tf.Tensor, draws: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        s = [game[:, k] for k in range(HEAD)]
        p = _read(game)
        torp, bullets, fish, subs, divers = (p[k] for k, _, _ in POOLS)
        n = tf.shape(game)[0]
        reward = tf.zeros([n], tf.int32)
        terminal = tf.zeros([n], tf.bool)
        # spawns: an enemy (unless its row holds one going the other way), a diver
        spawn = s[E_SPAWN_TIMER] == 0
        lr = tf.cast(draws[:, 0] < 0.5, tf.int32)
        is_sub = draws[:, 1] < 1 / 3
        y = 1 + choose(draws[:, 2], 8)
        side = tf.where(lr > 0, 0, 9)
        blocked = tf.zeros([n], tf.bool)
        for pool in (subs, fish):
            other = pool["alive"] & (pool["y"] == y[:, None]) & (pool["right"] != lr[:, None])
            blocked |= tf.reduce_any(other, axis=1)
        new = {"x": side, "y": y, "right": lr, "timer": s[MOVE_SPEED]}
        subs = _append(subs, spawn & ~blocked & is_sub,
                       {**new, "shot": tf.fill([n], ENEMY_SHOT_INTERVAL)})  # fmt: skip
        fish = _append(fish, spawn & ~blocked & ~is_sub, new)
        e_spawn_timer = tf.where(spawn, s[E_SPAWN_SPEED], s[E_SPAWN_TIMER])
        d_spawn = s[D_SPAWN_TIMER] == 0
        d_lr = tf.cast(draws[:, 3] < 0.5, tf.int32)
        diver = {"x": tf.where(d_lr > 0, 0, 9), "y": 1 + choose(draws[:, 4], 8), "right": d_lr,
                 "timer": tf.fill([n], DIVER_MOVE_INTERVAL)}  # fmt: skip
        divers = _append(divers, d_spawn, diver)
        d_spawn_timer = tf.where(d_spawn, DIVER_SPAWN_SPEED, s[D_SPAWN_TIMER])
        # the player
        sub_x, sub_y, sub_or, shot_timer = s[SUB_X], s[SUB_Y], s[SUB_OR], s[SHOT_TIMER]
        fire = (actions == FIRE) & (shot_timer == 0)
        torp = _append(torp, fire, {"x": sub_x, "y": sub_y, "right": sub_or})
        shot_timer = tf.where(fire, SHOT_COOL_DOWN, shot_timer)
        sub_or = tf.where(actions == LEFT, 0, tf.where(actions == RIGHT, 1, sub_or))
        sub_x = tf.where(actions == LEFT, tf.maximum(0, sub_x - 1), sub_x)
        sub_x = tf.where(actions == RIGHT, tf.minimum(9, sub_x + 1), sub_x)
        sub_y = tf.where(actions == UP, tf.maximum(0, sub_y - 1), sub_y)
        sub_y = tf.where(actions == DOWN, tf.minimum(8, sub_y + 1), sub_y)

        def at_sub(x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:  # x, y: [N] or [N, slots]
            here_x, here_y = (
                (sub_x, sub_y) if x.shape.rank == 1 else (sub_x[:, None], sub_y[:, None])
            )
            return tf.equal(x, here_x) & tf.equal(y, here_y)

        # torpedoes, last first: move, leave, or take the first fish (else sub) in their cell
        for j in reversed(range(torp["alive"].shape[1])):
            live = torp["alive"][:, j]
            x = tf.where(live, _step(torp["x"][:, j], torp["right"][:, j]), torp["x"][:, j])
            ty = torp["y"][:, j]
            gone = live & ((x < 0) | (x > 9))
            hit_fish = _first(
                fish["alive"] & (fish["x"] == x[:, None]) & (fish["y"] == ty[:, None])
            )
            hit_fish &= (live & ~gone)[:, None]
            on_fish = tf.reduce_any(hit_fish, axis=1)
            hit_sub = _first(subs["alive"] & (subs["x"] == x[:, None]) & (subs["y"] == ty[:, None]))
            hit_sub &= (live & ~gone & ~on_fish)[:, None]
            on_sub = tf.reduce_any(hit_sub, axis=1)
            fish["alive"] &= ~hit_fish
            subs["alive"] &= ~hit_sub
            reward += tf.cast(on_fish | on_sub, tf.int32)
            torp["x"] = _set(torp["x"], j, x)
            torp["alive"] = _set(torp["alive"], j, live & ~gone & ~on_fish & ~on_sub)
        # divers, last first: rescued (while fewer than 6) before or after their move
        count = s[DIVER_COUNT]
        for j in reversed(range(divers["alive"].shape[1])):
            live = divers["alive"][:, j]
            x, dy, timer = divers["x"][:, j], divers["y"][:, j], divers["timer"][:, j]
            taken = live & at_sub(x, dy) & (count < 6)
            moves = live & ~taken & (timer == 0)
            x = tf.where(moves, _step(x, divers["right"][:, j]), x)
            gone = moves & ((x < 0) | (x > 9))
            taken_after = moves & ~gone & at_sub(x, dy) & (count < 6)
            count += tf.cast(taken | taken_after, tf.int32)
            timer = tf.where(moves, DIVER_MOVE_INTERVAL, tf.where(live & ~taken, timer - 1, timer))
            divers["x"], divers["timer"] = _set(divers["x"], j, x), _set(divers["timer"], j, timer)
            divers["alive"] = _set(divers["alive"], j, live & ~taken & ~gone & ~taken_after)
        # enemy subs, last first: move, meet the player, take a torpedo, fire
        subs, torp, bullets, hit, dead = _enemies(subs, torp, s[MOVE_SPEED], at_sub, bullets)
        reward += hit
        terminal |= dead
        # enemy bullets: meet the player before or after their move
        live = bullets["alive"]
        terminal |= tf.reduce_any(live & at_sub(bullets["x"], bullets["y"]), axis=1)
        bullets["x"] = tf.where(live, _step(bullets["x"], bullets["right"]), bullets["x"])
        inside = (bullets["x"] >= 0) & (bullets["x"] <= 9)
        terminal |= tf.reduce_any(live & inside & at_sub(bullets["x"], bullets["y"]), axis=1)
        bullets["alive"] = live & inside
        fish, torp, _, hit, dead = _enemies(fish, torp, s[MOVE_SPEED], at_sub, None)
        reward += hit
        terminal |= dead
        # timers, oxygen, surfacing
        e_spawn_timer -= tf.cast(e_spawn_timer > 0, tf.int32)
        d_spawn_timer -= tf.cast(d_spawn_timer > 0, tf.int32)
        shot_timer -= tf.cast(shot_timer > 0, tf.int32)
        oxygen = s[OXYGEN]
        terminal |= oxygen <= 0
        under = sub_y > 0
        oxygen = tf.where(under, oxygen - 1, oxygen)
        surfacing = ~under & (s[SURFACE] == 0)
        terminal |= surfacing & (count == 0)
        surfaces = surfacing & (count != 0)
        full = surfaces & (count == 6)
        reward += tf.where(full, oxygen * 10 // MAX_OXYGEN, 0)
        count = tf.where(full, 0, count)
        oxygen = tf.where(surfaces, MAX_OXYGEN, oxygen)
        count -= tf.cast(surfaces, tf.int32)
        move_speed, spawn_speed, ramp = s[MOVE_SPEED], s[E_SPAWN_SPEED], s[RAMP_INDEX]
        ramps = surfaces & ((spawn_speed > 1) | (move_speed > 2))
        move_speed -= tf.cast(ramps & (move_speed > 2) & (ramp % 2 == 1), tf.int32)
        spawn_speed -= tf.cast(ramps & (spawn_speed > 1), tf.int32)
        ramp += tf.cast(ramps, tf.int32)
        surface = tf.where(under, 0, tf.where(surfaces, 1, s[SURFACE]))
        head = [sub_x, sub_y, sub_or, oxygen, count, spawn_speed, e_spawn_timer, d_spawn_timer,
                move_speed, ramp, shot_timer, surface]  # fmt: skip
        pools = {"torpedoes": torp, "bullets": bullets, "fish": fish, "subs": subs,
                 "divers": divers}  # fmt: skip
        game = tf.concat([tf.stack(head, axis=1), *_write(pools)], axis=1)
        return game, tf.cast(reward, tf.float64), terminal

    def observe(self, physics: tf.Tensor) -> tf.Tensor:
        game = physics[:, GAME:]
        p = _read(game)
        sub_x, sub_y = game[:, SUB_X], game[:, SUB_Y]
        back = tf.math.floormod(sub_x + tf.where(game[:, SUB_OR] > 0, -1, 1), SIZE)
        cols = tf.range(SIZE)[None, :]
        oxygen = cols < (tf.maximum(0, game[:, OXYGEN]) * 10 // MAX_OXYGEN)[:, None]
        divers = (cols >= 9 - game[:, DIVER_COUNT][:, None]) & (cols < 9)
        bottom = tf.one_hot(9, SIZE, on_value=True, off_value=False)[None, :, None]

        def cells(pool: Pool, behind: bool = False) -> tf.Tensor:  # [N, 10, 10]
            x = pool["x"] + tf.where(pool["right"] > 0, -1, 1) if behind else pool["x"]
            grid = cell(
                tf.reshape(pool["y"], [-1]), tf.reshape(x, [-1]), tf.reshape(pool["alive"], [-1])
            )
            return tf.reduce_any(tf.reshape(grid, [tf.shape(x)[0], -1, SIZE, SIZE]), axis=1)

        trail = cells(p["fish"], True) | cells(p["subs"], True) | cells(p["divers"], True)
        planes = [cell(sub_y, sub_x), cell(sub_y, back), cells(p["torpedoes"]), trail,
                  cells(p["bullets"]), cells(p["fish"]), cells(p["subs"]),
                  bottom & oxygen[:, None, :], bottom & divers[:, None, :],
                  cells(p["divers"])]  # fmt: skip
        return tf.stack(planes, axis=3)


def _set(values: tf.Tensor, j: int, column: tf.Tensor) -> tf.Tensor:
    """``values`` ``[N, slots]`` with column ``j`` replaced by ``column`` ``[N]``."""
    mask = tf.one_hot(j, values.shape[1], on_value=True, off_value=False)[None, :]
    return tf.where(mask, column[:, None], values)


def _append_many(pool: Pool, add: tf.Tensor, values: dict[str, tf.Tensor]) -> Pool:
    """``pool`` with one item per true entry of ``add`` (bool ``[N, M]``; ``values`` int32
    ``[N, M]`` each) after its last live one, in the order M-1 down to 0 (minatar's walk)."""
    slots = pool["alive"].shape[1]
    index = tf.range(slots)[None, :]
    end = tf.reduce_max(tf.where(pool["alive"], index, -1), axis=1) + 1
    rank = tf.cumsum(tf.cast(add, tf.int32), axis=1, exclusive=True, reverse=True)
    dest = tf.where(add, end[:, None] + rank, -1)  # [N, M]
    put = dest[:, :, None] == index[:, None, :]  # [N, M, slots]
    out = {}
    for f, v in pool.items():
        if f != "alive":
            new = tf.reduce_sum(tf.where(put, values[f][:, :, None], 0), axis=1)
            out[f] = tf.where(tf.reduce_any(put, axis=1), new, v)
    out["alive"] = pool["alive"] | tf.reduce_any(put, axis=1)
    return out


def _enemies(pool: Pool, torp: Pool, move_speed: tf.Tensor, at_sub, bullets: Pool | None):
    """minatar's walk over its subs (with ``bullets``: they fire) or fish, last first: one
    meeting the player ends the game (before or after a move); when its timer is up it
    moves (leaving at the edges) and takes the first torpedo left in its new cell (so in a
    cell the k-th enemy walked takes the k-th torpedo there). A sub fires on its own timer,
    even one just removed. ``(pool, torpedoes, bullets, reward int32 [N], terminal [N])``."""
    alive, x, y, right, timer = (pool[f] for f in ("alive", "x", "y", "right", "timer"))
    terminal = tf.reduce_any(alive & at_sub(x, y), axis=1)
    moves = alive & (timer == 0)
    x = tf.where(moves, _step(x, right), x)
    gone = moves & ((x < 0) | (x > 9))
    meets = moves & ~gone & at_sub(x, y)
    terminal |= tf.reduce_any(meets, axis=1)
    looks = moves & ~gone & ~meets  # these look for a torpedo in their cell
    slots = x.shape[1]
    same = (x[:, :, None] == x[:, None, :]) & (y[:, :, None] == y[:, None, :])  # [N, E, E]
    later = tf.range(slots)[None, None, :] > tf.range(slots)[None, :, None]  # walked first
    rank = tf.reduce_sum(tf.cast(same & later & looks[:, None, :], tf.int32), axis=2)
    there = torp["alive"][:, None, :] & (torp["x"][:, None, :] == x[:, :, None])
    there &= torp["y"][:, None, :] == y[:, :, None]  # [N, E, T]: torpedo t in e's cell
    order = tf.cumsum(tf.cast(there, tf.int32), axis=2, exclusive=True)
    takes = looks[:, :, None] & there & (order == rank[:, :, None])
    killed = tf.reduce_any(takes, axis=2)
    torp = {**torp, "alive": torp["alive"] & ~tf.reduce_any(takes, axis=1)}
    reward = tf.reduce_sum(tf.cast(killed, tf.int32), axis=1)
    timer = tf.where(moves, move_speed[:, None], tf.where(alive, timer - 1, timer))
    pool = {**pool, "x": x, "timer": timer, "alive": alive & ~gone & ~killed}
    if bullets is not None:
        shot = pool["shot"]
        fires = alive & (shot == 0)
        bullets = _append_many(bullets, fires, {"x": x, "y": y, "right": right})
        pool["shot"] = tf.where(fires, ENEMY_SHOT_INTERVAL, tf.where(alive, shot - 1, shot))
    return pool, torp, bullets, reward, terminal
