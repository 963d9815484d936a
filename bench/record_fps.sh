#!/usr/bin/env bash
# Does recording slow the viewer? handoff-view's frame rate playing the same
# 1080p NV12 clip with and without --record (zstd level 1, lz4, uncompressed),
# same run, runs interleaved (plain, zstd, lz4, none, plain, ...) so a load
# change on the machine hits every configuration alike. Prints a Markdown
# section for BENCHMARKS.md: the median of the runs, its ratio to the plain
# runs' median, and how many displayed frames the recording left out.
#
#   bench/record_fps.sh                      # 3 rounds, 240 frames each, headless
#   ROUNDS=5 FRAMES=600 MODES="headless window" bench/record_fps.sh
#
# Needs a built handoff-view (default preset; built here if missing), the
# project's .venv (numpy, to make the clip) and, for MODES=window, xvfb-run.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
ROUNDS="${ROUNDS:-3}"
FRAMES="${FRAMES:-240}"
MODES="${MODES:-headless}"
SIZE=1920x1080
source "$here/bench/view_setup.sh"

# 30 frames of a moving gradient with noise (what a camera gives a compressor),
# looped by the player.
clip="$work/clip.nv12"
"$here/.venv/bin/python" - "$clip" <<'PY'
import sys
import numpy as np
w, h, n = 1920, 1080, 30
rng = np.random.default_rng(1)
y, x = np.mgrid[0:h, 0:w]
cy, cx = np.mgrid[0:h // 2, 0:w // 2]
with open(sys.argv[1], "wb") as f:
    for i in range(n):
        luma = (16 + (x + 3 * i) % 200 + rng.integers(0, 8, (h, w))).clip(16, 235).astype("u1")
        uv = np.stack([(128 + (cx + i) % 64 - 32), (128 + (cy - i) % 64 - 32)], -1).astype("u1")
        f.write(luma.tobytes() + uv.tobytes())
PY

run() {  # mode, record compression ("" = no recording) -> "fps recorded left_out"
  local mode="$1" comp="$2" args=() out
  args=("$clip" --size "$SIZE" --format nv12 --no-vsync --loop --frames "$FRAMES" --window 1280x720)
  [ "$mode" = headless ] && args+=(--headless)
  [ -n "$comp" ] && args+=(--record "$work/rec.mcap" --record-compression "$comp")
  if [ "$mode" = window ]; then
    out=$(xvfb-run -a -s "-screen 0 1920x1080x24" "$exe" "${args[@]}" 2>&1 || true)
  else
    out=$("$exe" "${args[@]}" 2>&1 || true)
  fi
  local fps rec left
  fps=$(sed -n 's/^handoff-view: [0-9]* frames .* s: \([0-9.]*\) fps.*/\1/p' <<<"$out")
  rec=$(sed -n 's/^handoff-view: recorded \([0-9]*\) frames.*/\1/p' <<<"$out")
  left=$(sed -n 's/.*(\([0-9]*\) displayed frames left out.*/\1/p' <<<"$out")
  [ -n "$fps" ] || { echo "handoff-view failed: $out" >&2; exit 1; }
  echo "$fps ${rec:--} ${left:--}"
  rm -f "$work/rec.mcap"
}

median() { tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

configs=(plain zstd lz4 none)
echo "## Recording while viewing: handoff-view fps with and without --record (bench/record_fps.sh, $(date -u +%Y-%m-%d))"
echo
echo "Machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start, llvmpipe (Mesa), no GPU. Clip: ${SIZE} NV12,"
echo "30 frames looped to ${FRAMES} displayed, --no-vsync (as fast as possible), ${MODES}; ${ROUNDS} rounds, the"
echo "configurations interleaved within each round. fps = handoff-view's own figure (first frame to last)."
echo
echo "| mode | recording | fps (median of ${ROUNDS}) | runs | ratio to no recording | recorded / left out (last run) |"
echo "|---|---|---|---|---|---|"
for mode in $MODES; do
  declare -A all=() last=()
  for ((r = 0; r < ROUNDS; r++)); do
    for c in "${configs[@]}"; do
      read -r fps rec left < <(run "$mode" "$([ "$c" = plain ] || echo "$c")")
      all[$c]="${all[$c]:-} $fps"
      last[$c]="$rec / $left"
    done
  done
  base=$(median <<<"${all[plain]# }")
  for c in "${configs[@]}"; do
    m=$(median <<<"${all[$c]# }")
    label=$([ "$c" = plain ] && echo "none (baseline)" || echo "--record-compression $c")
    echo "| $mode | $label | $m | ${all[$c]# } | $(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.2f", a / b }') | $([ "$c" = plain ] && echo "-" || echo "${last[$c]}") |"
  done
  unset all last
done
