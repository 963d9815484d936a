#!/usr/bin/env bash
# handoffsink against glimagesink (bench_gst) on one Xvfb screen large enough
# for a 4K window; prints the Markdown table for BENCHMARKS.md.
#   bench/gst_bench.sh                      1080p and 4K, 300 frames, 3 rounds
#   FRAMES=120 ROUNDS=5 SIZES=1920x1080 bench/gst_bench.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
build="${BUILD:-build/default}"
[ -x "$build/bench/bench_gst" ] || cmake --build "$build" --target bench_gst
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d /tmp/handoff-xdg.XXXXXX)}"
chmod 700 "$XDG_RUNTIME_DIR"
echo "## handoffsink vs glimagesink (bench/gst_bench.sh, $(date -u '+%Y-%m-%d %H:%M') UTC)"
echo
echo "Machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; llvmpipe (Mesa) under Xvfb; GStreamer $(gst-launch-1.0 --gst-version | sed 's/.* //')."
echo
xvfb-run -a -s "-screen 0 3840x2160x24" "$build/bench/bench_gst" --frames "${FRAMES:-300}" --rounds "${ROUNDS:-3}" \
  --sizes "$(echo "${SIZES:-1920x1080 3840x2160}" | tr ' ' ',')"
