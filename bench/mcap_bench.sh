#!/usr/bin/env bash
# Recording benchmarks without the viewer (issue 14, section 6): MCAP write
# throughput against dd to the same disk (uncompressed and zstd level 1,
# 1080p NV12), and the time to seek to a frame in a 10,000-frame recording
# against a 100-frame one. Prints a Markdown section for BENCHMARKS.md; every
# ratio is against a baseline measured in the same run.
#
#   bench/mcap_bench.sh                        (files in build/bench-mcap, the checkout's disk)
#   BENCH_DIR=/mnt/disk/tmp RUNS=5 bench/mcap_bench.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
RUNS="${RUNS:-3}"
work="${BENCH_DIR:-$here/build/bench-mcap}"
mkdir -p "$work"
trap 'rm -f "$work"/bench_* "$work"/dd.bin' EXIT

exe="$here/build/default/bench/bench_mcap"
if [ ! -x "$exe" ]; then
  cmake --preset default >/dev/null
  cmake --build --preset default --target bench_mcap >/dev/null
fi

frame=$((1920 * 1080 * 3 / 2))
frames=120
# dd: the same number of bytes in frame-sized blocks, flushed to disk like the recording.
dd_rates=()
for _ in $(seq "$RUNS"); do
  start=$(date +%s.%N)
  dd if=/dev/zero of="$work/dd.bin" bs=$frame count=$frames conv=fdatasync status=none
  end=$(date +%s.%N)
  dd_rates+=("$(awk -v b=$((frame * frames)) -v a="$start" -v c="$end" 'BEGIN { printf "%.1f", b / (c - a) / 1e6 }')")
  rm -f "$work/dd.bin"
done

json="$work/bench_mcap.json"
HANDOFF_BENCH_DIR="$work" "$exe" --benchmark_repetitions="$RUNS" --benchmark_format=json --benchmark_out="$json" \
  --benchmark_out_format=json >/dev/null

python3 - "$json" "${dd_rates[@]}" <<'EOF'
import json, statistics, sys
data = json.load(open(sys.argv[1]))
dd = [float(x) for x in sys.argv[2:]]
dd_med = statistics.median(dd)
runs = {}
for b in data["benchmarks"]:
    if b.get("run_type") != "iteration":
        continue
    runs.setdefault(b["run_name"], []).append(b)
med = lambda name, key: statistics.median(r[key] for r in runs[name])
ctx = data["context"]
print(f"## Recording: MCAP write throughput and seek time (bench/mcap_bench.sh, {ctx['date'][:10]})")
print()
print(f"Machine: {ctx['num_cpus']} cores, load average at start {ctx.get('load_avg', ['?'])[0]:.2f}; "
      f"files on the checkout's disk; {len(dd)} runs of each, medians.")
print()
print("Write: 120 frames of 1080p NV12 (373 MB of frame data) through `RecordingWriter` (writer thread, 4 MiB chunks),")
print("closed with fdatasync; `dd if=/dev/zero bs=3110400 count=120 conv=fdatasync` to the same directory is the")
print("baseline; `write()` + fdatasync of the same bytes from the benchmark program is a second one. Scene = the")
print("synthetic scene (compresses well); noise = random bytes (does not compress: zstd's worst case).")
print()
print("| writer | content | frame data MB/s | ratio to dd | file size / frame data |")
print("|---|---|---|---|---|")
print(f"| dd (baseline) | zeros | {dd_med:.0f} (runs: {', '.join(f'{x:.0f}' for x in dd)}) | 1.00 | 1.00 |")
plain = med("BM_PlainWrite/iterations:3/real_time", "frame_MBps")
print(f"| write() + fdatasync | pattern | {plain:.0f} | {plain / dd_med:.2f} | 1.00 |")
for name, label, content in [("BM_RecordWrite/zstd:0/noise:0", "handoff, uncompressed", "scene"),
                             ("BM_RecordWrite/zstd:1/noise:0", "handoff, zstd 1", "scene"),
                             ("BM_RecordWrite/zstd:1/noise:1", "handoff, zstd 1", "noise")]:
    key = name + "/iterations:3/real_time"
    r = med(key, "frame_MBps")
    print(f"| {label} | {content} | {r:.0f} | {r / dd_med:.2f} | {med(key, 'file_vs_frames'):.3f} |")
print()
print("Seek: `seek(k)` + `read_into` of a random frame, 160x120 NV12 frames one per chunk (zstd 1), as 1080p")
print("recordings are laid out; open = reading the summary and each chunk's message index (what makes seeks flat).")
print()
s100 = med("BM_Seek/100", "real_time")
s10k = med("BM_Seek/10000", "real_time")
print("| recording | seek + read (µs, wall) | ratio to 100 frames | open (ms, wall) |")
print("|---|---|---|---|")
print(f"| 100 frames | {s100:.1f} | 1.00 | {med('BM_Open/frames:100/summary:1', 'real_time'):.2f} |")
print(f"| 10,000 frames | {s10k:.1f} | {s10k / s100:.2f} | {med('BM_Open/frames:10000/summary:1', 'real_time'):.1f} |")
print(f"| 10,000 frames, no summary (scanned at open) | - | - | {med('BM_Open/frames:10000/summary:0', 'real_time'):.0f} |")
EOF
