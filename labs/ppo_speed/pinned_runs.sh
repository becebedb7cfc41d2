#!/bin/bash
# The three pinned compiled runs whose metrics (times left out) and final weights must stay
# bit-identical across the speed changes: bash labs/ppo_speed/pinned_runs.sh CODE_DIR OUT_DIR
# (CODE_DIR: the checkout to import; prints one hash per run).
set -e
code=$1; out=$2
mkdir -p "$out"
export PYTHONPATH=$code TF_CPP_MIN_LOG_LEVEL=2
for spec in "ppo rlkit/CartPole-v1" "a2c rlkit/CartPole-v1" "ppo rlkit/Pendulum-v1"; do
  set -- $spec
  dir=$out/$1-$(basename $2)
  rm -rf "$dir"; mkdir -p "$dir"
  nice rlkit train $1 --env $2 --seed 0 --steps 20000 --loop compiled --quiet --out "$dir" > "$dir/log.txt" 2>&1
  python "$code/labs/ppo_speed/hash_run.py" "$dir"/*/ | sed "s|^|$1 $2 |"
done
