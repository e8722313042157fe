#!/usr/bin/env bash
# Expert iteration with values at scale: generations of az self-play, each training a TD(lambda) network
# bootstrapped from the last kept one, gated before it is kept.
#
#   MAP=italia PLAYERS=2 GENERATIONS=3 KEEP_ABOVE=0.72 ROOT=/tmp/gens bash results/az_values/generations.sh
#
# Generation g (1, 2, ...) runs run.sh in ROOT/gen_g with
#   SELFPLAY   az:net=LAST:simulations=SELF_SIMS:root_noise=0.25 (SELF_SIMS default 100), games seeded g - 1,
#   data       its own games and those of the WINDOW - 1 generations before it (default WINDOW=2),
#   BOOTSTRAP  LAST (TD targets from the last kept network's values),
#   GATES      gate200: az at 200 simulations against mcts:iterations=200 (equal simulations), then
#              eval: az at SIMS (default 1,000) against mcts:iterations=1000 (about equal time per decision),
# and keeps its network (it becomes LAST) when its eval line wins at least as large a share of the games as
# the last kept network's did; the starting network's share is KEEP_ABOVE (set it to its own share on the same
# line, e.g. 0.72 for this folder's Italia network on 50 deals; the default 0 keeps the first generation
# whatever it does). LAST starts as FIRST (default the network of this folder for MAP).
# ROOT/generations.jsonl gets one line a generation: its gates, the data it trained on, its wall time and
# whether it was kept. The same command again resumes: generations already in the file are not played again
# (which were kept is worked out again from their eval shares and KEEP_ABOVE), GENERATIONS is the total, and a
# generation cut short continues where it stopped (its complete shards and chunks are kept).
# Every knob of run.sh passes through (GAMES, DATA_S, STEPS, TRAIN_S, DEALS, EVAL_S, WORKERS...).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PY:-python3}
MAP=${MAP:-italia}
ROOT=${ROOT:-/tmp/generations}
W=${WORKERS:-$(nproc)}
mkdir -p "$ROOT"

# the win rate of az (agent azv) in the line of the strength summary $1, or "none" if it has no games
rate() {
  $PY - "$1" <<'PYEOF'
import json, sys
try:
    line = json.load(open(sys.argv[1]))["settings"][0]["lines"][0]
    print(line["per_agent"]["azv"]["win_rate"] if line["games"] else "none")
except (OSError, ValueError, KeyError, IndexError):
    print("none")
PYEOF
}

# "DONE LAST BEST" from the generations already in ROOT/generations.jsonl: how many, the network kept last and
# its eval share (every line's keep decision worked out again from the eval shares, starting from KEEP_ABOVE)
read -r done LAST BEST < <($PY - "$ROOT/generations.jsonl" "${FIRST:-$HERE/value_$MAP}" "${KEEP_ABOVE:-0}" <<'PYEOF'
import json, sys
path, last, best = sys.argv[1], sys.argv[2], float(sys.argv[3])
done = 0
try:
    lines = open(path).read().splitlines()
except FileNotFoundError:
    lines = []
for text in lines:
    if not text.strip():
        continue
    record = json.loads(text)
    done = record["generation"]
    if record["eval"] != "none" and float(record["eval"]) >= best:
        last, best = record["net"], float(record["eval"])
print(done, last, best)
PYEOF
) || { echo "error: $ROOT/generations.jsonl cannot be read" >&2; exit 2; }

for g in $(seq $((done + 1)) "${GENERATIONS:-2}"); do
  dir=$ROOT/gen_$g
  extra=""
  for p in $(seq $((g - ${WINDOW:-2} + 1)) $((g - 1))); do
    [ "$p" -ge 1 ] && [ -d "$ROOT/gen_$p/work/data" ] && extra="$extra $ROOT/gen_$p/work/data"
  done
  echo "[$(date +%T)] generation $g from $LAST"
  start=$(date +%s)
  OUT=$dir WORK=$dir/work SELFPLAY="az:net=$LAST:simulations=${SELF_SIMS:-100}:root_noise=0.25" BOOTSTRAP=$LAST \
    SEED=$((g - 1)) EXTRA_DATA="$extra" WORKERS=$W \
    GATES="gate200@200@mcts:iterations=200 eval@${SIMS:-1000}@mcts:iterations=1000" bash "$HERE/run.sh"
  wall=$(( $(date +%s) - start ))
  if [ ! -f "$dir/value_$MAP.npz" ]; then  # the training did not finish (TRAIN_S): no line, so that it resumes
    echo "error: generation $g trained no network ($dir/steps.log); the same command again resumes it" >&2
    exit 1
  fi
  gate=$(rate "$dir/work/gate200/summary.json")
  eval=$(rate "$dir/work/eval/summary.json")
  kept=false
  if [ "$eval" != none ] && $PY -c "import sys; sys.exit(not float('$eval') >= float('$BEST'))"; then
    kept=true LAST=$dir/value_$MAP BEST=$eval
  fi
  $PY - "$g" "$dir/value_$MAP" "$gate" "$eval" "$kept" "$wall" "$W" "$dir/work/data" $extra <<'PYEOF' \
    | tee -a "$ROOT/generations.jsonl"
import json, sys
g, net, gate, ev, kept, wall, workers, *data = sys.argv[1:]
print(json.dumps({"generation": int(g), "net": net, "gate200": gate, "eval": ev, "kept": kept == "true",
                  "data": data, "wall_s": int(wall), "workers": int(workers)}))
PYEOF
done
echo "last kept: $LAST"
