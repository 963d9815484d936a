#!/usr/bin/env bash
# Runs each argument as a gst-launch-1.0 command line (with -e), all at the
# same time, each started once the one before it is PLAYING; lets them run
# two seconds together, stops them with SIGINT (they end with EOS), and writes
# each one's exit status and output to DIR/rc<i>, DIR/out<i>.
#   run_pipelines.sh DIR 'gst-launch-1.0 ...' ...
set -u
dir="$1"; shift
export XDG_RUNTIME_DIR="$dir"
pids=()
i=0
for line in "$@"; do
  cmd="${line/gst-launch-1.0/gst-launch-1.0 -e}"
  bash -c "exec $cmd" > "$dir/out$i" 2>&1 &
  pids+=("$!")
  # Started means PLAYING: the first start may scan GStreamer's plugins for a while.
  for _ in $(seq 1200); do
    grep -q "Setting pipeline to PLAYING" "$dir/out$i" && break
    kill -0 "${pids[$i]}" 2>/dev/null || break
    sleep 0.1
  done
  i=$((i + 1))
done
sleep 2
for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null; done
i=0
for p in "${pids[@]}"; do
  wait "$p"
  echo $? > "$dir/rc$i"
  i=$((i + 1))
done
