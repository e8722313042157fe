#!/usr/bin/env bash
# Values at scale, end to end, as the files of this folder were made: MCTS-100 self-play data, a TD(lambda)
# value network (win and VP-margin heads) bootstrapped from the released az network, then that network inside
# az against mcts:iterations=1000 on the strength table's deals (2 players: A against B with seats rotated;
# more: one az seat against a field of mcts1000).
#
#   MAP=italia PLAYERS=2 OUT=/tmp/out bash results/az_values/run.sh
#   MAP=imperium PLAYERS=4 DATA_S=300 EVAL_S=200 bash results/az_values/run.sh
#
# Every step is bounded by a time limit (DATA_S, TRAIN_S, EVAL_S seconds) and keeps what it finished: the data
# set keeps its complete shards, the training its checkpoint (the same command again resumes it), the strength
# run its complete chunks. Other knobs: WORKERS, GAMES, STEPS,
# BATCH, HIDDEN, DEVICE (cuda, cpu or auto), SIMS (az's simulations), DEALS, WORK (scratch folder), GATES (the
# strength lines played with the new network, see below; EVAL_S bounds each), SEED (the self-play games' seed),
# EXTRA_DATA (more data directories, space-separated, trained on with this run's own).
# A next generation: SELFPLAY="az:net=STEM:simulations=100" BOOTSTRAP=STEM (self-play and TD targets by the last
# network instead of mcts:iterations=100 and the released az network).
# WHEELS=DIR installs the wheels in DIR into /tmp/site first (a machine without the package's dependencies).
set -u
PY=${PY:-python3}
MAP=${MAP:-italia}
PLAYERS=${PLAYERS:-2}
W=${WORKERS:-$(nproc)}
OUT=${OUT:-/tmp/out}
WORK=${WORK:-/tmp/work}
export PYTHONUNBUFFERED=1 CONCORDIA_CACHE_DIR=${CONCORDIA_CACHE_DIR:-/tmp/concordia-cache}
if [ -n "${WHEELS:-}" ] && ! $PY -c "import pettingzoo, openskill" 2>/dev/null; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$WHEELS"/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
fi
mkdir -p "$OUT" "$WORK"
STEM="$OUT/value_$MAP"
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/steps.log"; }
{ nproc; lscpu | grep -m1 "Model name"; $PY -c "import torch; print('torch', torch.__version__, torch.cuda.is_available())"; } \
  > "$OUT/machine.txt" 2>&1

log "data: $MAP, $PLAYERS players"
timeout -k 15 "${DATA_S:-240}" $PY -m concordia_env.training.value.data --map "$MAP" --players "$PLAYERS" \
  --games "${GAMES:-6000}" --agents "${SELFPLAY:-mcts:iterations=100}" --out "$WORK/data" --workers "$W" --shard-size 10 \
  --seed "${SEED:-0}" --no-progress 2>&1 | tail -5
log "shards: $(ls "$WORK/data" | grep -c '^shard_.*\.npz$')"

RESUME=$([ -f "$WORK/train/checkpoint.pt" ] && echo --resume)  # a training cut short goes on from its checkpoint
log "train${RESUME:+: resuming $WORK/train/checkpoint.pt}"
timeout -k 15 "${TRAIN_S:-130}" $PY -m concordia_env.training.value.train --data "$WORK/data" ${EXTRA_DATA:-} --out "$WORK/train" \
  --hidden "${HIDDEN:-256,128}" --targets td --lam 0.8 --bootstrap "${BOOTSTRAP:-concordia_env/agents/policies/az_$MAP}" \
  --steps "${STEPS:-8000}" --batch "${BATCH:-1024}" --eval-every 1000 --checkpoint-every 2000 \
  $RESUME --device "${DEVICE:-auto}" --torch-threads 8 --no-progress --export "$STEM" 2>&1 | tail -5
cp "$WORK/train/metrics.json" "$OUT/train_metrics.json" 2>/dev/null

# gate NAME SIMS OPPONENT: a strength line of az with the new network at SIMS simulations against OPPONENT (2
# players: head to head with seats rotated; more: one az seat against a field of OPPONENT), on the strength
# table's deals, its chunks in $WORK/NAME and packed into $OUT/NAME.tgz with its config
gate() {
  local name=$1 sims=$2 opponent=$3
  $PY - "$STEM" "$MAP" "$PLAYERS" "$sims" "${DEALS:-100}" "$opponent" > "$WORK/$name.json" <<'EOF'
import json, sys
stem, map_name, sims, opponent = sys.argv[1], sys.argv[2], sys.argv[4], sys.argv[6]
players, deals = int(sys.argv[3]), int(sys.argv[5])
two = players == 2
print(json.dumps({
    "format": "concordia-env/strength-config", "version": 1,
    "description": f"az with the value net {stem} at {sims} simulations against {opponent}",
    "agents": [{"name": "azv", "spec": f"az:net={stem}:simulations={sims}"},
               {"name": "opponent", "spec": opponent}],
    "settings": [{"id": f"{map_name}{players}", "map": map_name, "players": players, "deals": deals, "seed": 0,
                  "agents": ["azv", "opponent"] if two else ["azv"], "extra_pairs": [],
                  "field": None if two else "opponent"}],
    "targets": [], "max_turns": 2000, "intermediate_scoring": False}, indent=1))
EOF
  timeout -k 15 "${EVAL_S:-120}" $PY -m concordia_env.arena.strength --config "$WORK/$name.json" \
    --out "$WORK/$name" --workers "$W" --deals-chunk 1 --no-progress 2>&1 | tail -3
  $PY -m concordia_env.arena.strength --config "$WORK/$name.json" --out "$WORK/$name" --table-only 2>&1 | tail -3
  cp "$WORK/$name.json" "$WORK/$name/config.json"
  tar czf "$OUT/$name.tgz" -C "$WORK" "$name"
}

# GATES: the lines played with the new network, space-separated NAME@SIMS@OPPONENT (default: eval, 1,000
# simulations against mcts:iterations=1000; expert iteration gates first at equal simulations, as in
# GATES="gate200@200@mcts:iterations=200 eval@1000@mcts:iterations=1000")
if [ -f "$STEM.npz" ]; then
  for g in ${GATES:-eval@${SIMS:-1000}@mcts:iterations=1000}; do
    name=${g%%@*}; rest=${g#*@}
    log "gate $name: az at ${rest%%@*} simulations against ${rest#*@}"
    gate "$name" "${rest%%@*}" "${rest#*@}"
  done
fi
log "done"
