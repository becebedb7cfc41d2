"""The XLA cache a sweep's trials share, against TensorFlow's own entries: what rlkit relies
on (an entry is written whole or not at all) and what it guards against (a damaged entry
would fail every run of its configuration). docs/sweeps.md, "Trials writing the cache at once"."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tensorflow as tf

from rlkit.run.compiled.xla_cache import damage, host_cpu

#: TensorFlow's writer and reader of the cache (a header: the template's code is in it)
PERSISTOR = Path(
    tf.sysconfig.get_include(), "tensorflow/compiler/jit/device_executable_persistor.h"
)


@pytest.mark.skipif(not PERSISTOR.exists(), reason="TensorFlow installed without its headers")
def test_tensorflow_writes_an_entry_to_a_temporary_file_and_renames_it_into_place():
    """Why trials may write one cache at once (labs/xla_cache_race.py shows it): each writer
    writes a file of its own (host, thread, process and time in its name) and renames it onto
    the entry, so a reader finds no entry or a whole one. A TensorFlow that wrote in place
    would fail here."""
    text = PERSISTOR.read_text()
    save = text[text.index("::SaveSerializedEntry(") :]
    save = save[: save.index("\n}\n")]
    assert 'CreateUniqueFileName(&temp_path, ".tmp")' in save
    write = save.index("WriteBinaryProto(env, temp_path, entry)")
    assert write < save.index("RenameFile(temp_path, GetFilePath(entry.key()))")


#: a child that compiles a small program of seed 0 with rlkit's cache in a folder
CHILD = """
import json, sys
from rlkit.run.compiled.xla_cache import use_xla_cache
use_xla_cache(sys.argv[1], "rlkit/CartPole-v1")
from rlkit.envs.tf import make_tf_env
from rlkit.run import experiment
from rlkit.run.compiled.dqn import DQNProgram
from rlkit.run.plan import make_envs
plan = experiment.plan("dqn", "rlkit/CartPole-v1", steps=100, seed=0, eval_every=0,
                       checkpoint_every=0, preset="none",
                       overrides={"hidden_sizes": [8], "batch_size": 8, "buffer_size": 64,
                                  "learning_starts": 8})
env = make_envs(plan.settings, plan.spec)
agent = plan.spec.load_class().from_env(env, seed=0, config=plan.agent_config)
program = DQNProgram(agent, make_tf_env("rlkit/CartPole-v1"), 2, 0, 8)
program.run_chunk(8)
print(json.dumps([w.numpy().tolist() for w in agent.learner.q.model.weights]))
"""


@pytest.mark.slow
def test_a_run_on_a_damaged_entry_compiles_again_and_runs_the_same(tmp_path):
    """An entry cut short (a machine stopped before the file reached the disk): TensorFlow
    alone fails the run at its first call ("Read less bytes than requested"); through
    use_xla_cache the entry is deleted, the program compiled and written again, the run the
    same as the first one's."""

    def child():
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
        env.pop("TF_XLA_FLAGS", None)
        argv = [sys.executable, "-c", CHILD, str(tmp_path)]
        done = subprocess.run(argv, capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr

    first, _ = child()
    (entry,) = tmp_path.rglob("*.pb")
    data = entry.read_bytes()
    assert damage(data, entry.name) is None  # TensorFlow's own entry passes: framing, name
    assert entry.name.startswith(f"rlkit_cpu_{host_cpu()}__")  # named after this CPU
    entry.write_bytes(data[: len(data) // 2])
    again, stderr = child()
    assert "deleted a damaged XLA cache entry" in stderr
    assert again == first
    (rewritten,) = tmp_path.rglob("*.pb")
    assert damage(rewritten.read_bytes(), rewritten.name) is None
