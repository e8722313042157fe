#!/usr/bin/env bash
# Expert iteration with values at scale: generations of az self-play, each training a TD(lambda) network
# bootstrapped from the last kept one, gated before it is kept.
#
#   MAP=italia PLAYERS=2 GENERATIONS=2 ROOT=/tmp/gens bash results/az_values/generations.sh
#
# Generation g (1, 2, ...) runs run.sh in ROOT/gen_g with
#   SELFPLAY   az:net=LAST:simulations=SELF_SIMS:root_noise=0.25 (SELF_SIMS default 100),
#   BOOTSTRAP  LAST (TD targets from the last kept network's values),
#   GATES      gate200: az at 200 simulations against mcts:iterations=200 (equal simulations), then
#              eval: az at SIMS (default 1,000) against mcts:iterations=1000 (about equal time per decision),
# and keeps its network (it becomes LAST) when its eval line wins at least as large a share of the games as
# the last kept network's did (for the first generation, KEEP_ABOVE: set it to the starting network's own share
# on the same line, e.g. 0.72 for this folder's Italia network on 50 deals; the default 0 keeps the first
# generation whatever it does). LAST starts as FIRST (default the
# network of this folder for MAP). ROOT/generations.jsonl gets one line a generation: its gates and whether it
# was kept. Every knob of run.sh passes through (GAMES, DATA_S, STEPS, TRAIN_S, DEALS, EVAL_S, WORKERS...).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PY:-python3}
MAP=${MAP:-italia}
ROOT=${ROOT:-/tmp/generations}
LAST=${FIRST:-$HERE/value_$MAP}
BEST=${KEEP_ABOVE:-0}
mkdir -p "$ROOT"

# the win rate of az (agent azv) in the line of the strength summary $1, or "none" if it has no games
rate() {
  $PY - "$1" <<'EOF'
import json, sys
try:
    line = json.load(open(sys.argv[1]))["settings"][0]["lines"][0]
    print(line["per_agent"]["azv"]["win_rate"] if line["games"] else "none")
except (OSError, ValueError, KeyError, IndexError):
    print("none")
EOF
}

for g in $(seq 1 "${GENERATIONS:-2}"); do
  dir=$ROOT/gen_$g
  echo "[$(date +%T)] generation $g from $LAST"
  OUT=$dir WORK=$dir/work SELFPLAY="az:net=$LAST:simulations=${SELF_SIMS:-100}:root_noise=0.25" BOOTSTRAP=$LAST \
    GATES="gate200@200@mcts:iterations=200 eval@${SIMS:-1000}@mcts:iterations=1000" bash "$HERE/run.sh"
  gate=$(rate "$dir/work/gate200/summary.json")
  eval=$(rate "$dir/work/eval/summary.json")
  kept=false
  if [ "$eval" != none ] && $PY -c "import sys; sys.exit(not float('$eval') >= float('$BEST'))"; then
    kept=true LAST=$dir/value_$MAP BEST=$eval
  fi
  echo "{\"generation\": $g, \"net\": \"$dir/value_$MAP\", \"gate200\": \"$gate\", \"eval\": \"$eval\", \"kept\": $kept}" \
    | tee -a "$ROOT/generations.jsonl"
done
echo "last kept: $LAST"
