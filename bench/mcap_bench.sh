#!/usr/bin/env bash
# Recording benchmarks without the viewer (issue 14, section 6): MCAP write
# throughput against dd to the same disk (uncompressed and zstd level 1,
# 1080p NV12), and the time to seek to a frame in a 10,000-frame recording
# against a 100-frame one. Prints a Markdown section for BENCHMARKS.md; every
# ratio is against a baseline measured in the same run.
#
#   bench/mcap_bench.sh                        (files in build/bench-mcap, the checkout's disk)
#   BENCH_DIR=/mnt/disk/tmp RUNS=7 bench/mcap_bench.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
RUNS="${RUNS:-5}"
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
# Each round: dd writes the same number of bytes in frame-sized blocks, flushed
# to disk like the recording, then the write benchmarks run once; ratios are
# taken within a round (a shared disk's speed drifts between rounds).
dd_rates=()
for r in $(seq "$RUNS"); do
  start=$(date +%s.%N)
  dd if=/dev/zero of="$work/dd.bin" bs=$frame count=$frames conv=fdatasync status=none
  end=$(date +%s.%N)
  dd_rates+=("$(awk -v b=$((frame * frames)) -v a="$start" -v c="$end" 'BEGIN { printf "%.1f", b / (c - a) / 1e6 }')")
  rm -f "$work/dd.bin"
  HANDOFF_BENCH_DIR="$work" "$exe" --benchmark_filter='Write' --benchmark_format=json \
    --benchmark_out="$work/bench_write_$r.json" --benchmark_out_format=json >/dev/null
done
HANDOFF_BENCH_DIR="$work" "$exe" --benchmark_filter='Seek|Open' --benchmark_repetitions="$RUNS" \
  --benchmark_format=json --benchmark_out="$work/bench_seek.json" --benchmark_out_format=json >/dev/null

python3 - "$work" "$RUNS" "${dd_rates[@]}" <<'PY'
import json, statistics, sys
work, runs_n = sys.argv[1], int(sys.argv[2])
dd = [float(x) for x in sys.argv[3:]]
rounds = [{b["run_name"]: b for b in json.load(open(f"{work}/bench_write_{r}.json"))["benchmarks"]}
          for r in range(1, runs_n + 1)]
data = json.load(open(f"{work}/bench_seek.json"))
seek = {}
for b in data["benchmarks"]:
    if b.get("run_type") == "iteration":
        seek.setdefault(b["run_name"], []).append(b["real_time"])
ctx = data["context"]
med = statistics.median
fmt = lambda xs: ", ".join(f"{x:.0f}" for x in xs)
fmtr = lambda xs: ", ".join(f"{x:.2f}" for x in xs)
print(f"## Recording: MCAP write throughput and seek time (bench/mcap_bench.sh, {ctx['date'][:10]})")
print()
print(f"Machine: {ctx['num_cpus']} cores, load average {ctx.get('load_avg', [0])[0]:.1f} at the end (shared with other "
      f"builds); files on the checkout's disk; {runs_n} rounds.")
print()
print("Write: 120 frames of 1080p NV12 (373 MB of frame data) through `RecordingWriter` (writer thread, 4 MiB chunks,")
print("CRCs on), closed with fdatasync. Baseline, in the same round: `dd if=/dev/zero bs=3110400 count=120")
print("conv=fdatasync` to the same directory; `write()` + fdatasync of the same bytes from the benchmark program is a")
print("second one. Scene = the synthetic scene (compresses well); noise = random bytes (zstd's worst case). MB/s counts")
print("frame data (what the camera produces), not file bytes; ratios are taken per round, then the median.")
print()
print("| writer | content | frame data MB/s: median (rounds) | ratio to dd: median (rounds) | file / frame data |")
print("|---|---|---|---|---|")
print(f"| dd (baseline) | zeros | {med(dd):.0f} ({fmt(dd)}) | 1.00 | 1.00 |")
rows = [("BM_PlainWrite/iterations:3/real_time", "write() + fdatasync", "pattern"),
        ("BM_RecordWrite/zstd:0/noise:0/iterations:3/real_time", "handoff, uncompressed", "scene"),
        ("BM_RecordWrite/zstd:1/noise:0/iterations:3/real_time", "handoff, zstd 1", "scene"),
        ("BM_RecordWrite/zstd:1/noise:1/iterations:3/real_time", "handoff, zstd 1", "noise")]
for key, label, content in rows:
    rates = [r[key]["frame_MBps"] for r in rounds]
    ratios = [x / d for x, d in zip(rates, dd)]
    size = rounds[0][key].get("file_vs_frames", 1.0)
    print(f"| {label} | {content} | {med(rates):.0f} ({fmt(rates)}) | {med(ratios):.2f} ({fmtr(ratios)}) | {size:.3f} |")
print()
print("Seek: `seek(k)` + `read_into` of a random frame, 160x120 NV12 frames one per chunk (zstd 1), as 1080p")
print("recordings are laid out (the file is in the page cache: this is the reader's own cost); open = reading the")
print("summary and each chunk's message index, which is what makes the seek flat.")
print()
s100, s10k = med(seek["BM_Seek/100"]), med(seek["BM_Seek/10000"])
print("| recording | seek + read (µs, wall, median) | ratio to 100 frames | open (ms, wall, median) |")
print("|---|---|---|---|")
print(f"| 100 frames | {s100:.1f} | 1.00 | {med(seek['BM_Open/frames:100/summary:1']):.2f} |")
print(f"| 10,000 frames | {s10k:.1f} | {s10k / s100:.2f} | {med(seek['BM_Open/frames:10000/summary:1']):.1f} |")
print(f"| 10,000 frames, no summary (scanned at open) | - | - | {med(seek['BM_Open/frames:10000/summary:0']):.0f} |")
PY
