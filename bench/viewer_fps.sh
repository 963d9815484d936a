#!/usr/bin/env bash
# handoff-view frame rate against GStreamer's GL elements and mpv, on the same
# clips, same machine, same run; plus handoff-view's resident memory over
# 10,000 frames. Prints a Markdown section for BENCHMARKS.md.
#
#   bench/viewer_fps.sh                 everything (minutes on llvmpipe)
#   FRAMES=60 SIZES="1920x1080" bench/viewer_fps.sh
#   CONVERTS="cpu gpu" bench/viewer_fps.sh    both colour paths (--convert) in one run
#
# Needs: a built handoff-view (default preset; built here if missing), Xvfb,
# and for the baselines gst-launch-1.0 (gstreamer1.0-gl, -plugins-base/-good,
# -tools, -x) and mpv; these are installed with apt-get when missing (they are
# only needed here, so scripts/setup does not carry them).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
FRAMES="${FRAMES:-60}"
SIZES="${SIZES:-1920x1080 3840x2160}"
FORMATS="${FORMATS:-nv12 p010}"
BOXES="${BOXES:-0 100 10000}"
MEM_FRAMES="${MEM_FRAMES:-10000}"
# handoff-view's colour paths (--convert): auto is cpu on llvmpipe; "cpu gpu" compares them in one run.
CONVERTS="${CONVERTS:-auto}"
label() { [ "$1" = auto ] && echo "" || echo ", $1 colour"; }
source "$here/bench/view_setup.sh"
need=()
command -v gst-launch-1.0 >/dev/null || need+=(gstreamer1.0-tools gstreamer1.0-gl gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-x)
command -v mpv >/dev/null || need+=(mpv)
command -v xvfb-run >/dev/null || need+=(xvfb xauth)
if ((${#need[@]})); then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

now() { date +%s.%N; }
fps() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.1f", n / (b - a) }'; }

# Everything with a display runs inside one Xvfb (llvmpipe for GL).
run_x() { xvfb-run -a -s "-screen 0 3840x2160x24" "$@"; }

gst_format() { [ "$1" = nv12 ] && echo NV12 || echo P010_10LE; }
gst_raw_format() { [ "$1" = nv12 ] && echo nv12 || echo p010-10le; }
mpv_format() { [ "$1" = nv12 ] && echo nv12 || echo p010; }

echo "## handoff-view frame rate (bench/viewer_fps.sh, $(date -u +%Y-%m-%d))"
echo
echo "Machine: $(nproc) cores, $(glxinfo -B 2>/dev/null | sed -n 's/.*OpenGL renderer string: //p' | head -1 || true)llvmpipe (Mesa), no GPU; Xvfb."
echo "Clips: raw ${FRAMES} frames of GStreamer's videotestsrc (smpte), played as fast as possible."
echo "handoff-view: --no-vsync; headless = EGL, each frame fitted to a 1280x720 view with its overlays (no panel, no display);"
echo "window = GLFW window under Xvfb, frame fitted to 1280x720, UI drawn. GStreamer: filesrc ! rawvideoparse ! glupload !"
echo "glcolorconvert ! glimagesink sync=false (its window is the video's size). mpv: --vo=gpu --gpu-api=opengl --gpu-sw=yes"
echo "--untimed, 1280x720 window. 'playing' = handoff-view's own count (first frame to last); 'wall' = frames / wall time of"
echo "the whole process, start-up included, the only figure available for the baselines."
echo
echo "| size | format | player | boxes | fps, playing | fps, wall (start-up included) |"
echo "|---|---|---|---|---|---|"
for size in $SIZES; do
  w=${size%x*}; h=${size#*x}
  for fmt in $FORMATS; do
    clip="$work/clip_${size}_${fmt}.yuv"
    gst-launch-1.0 -q videotestsrc num-buffers="$FRAMES" pattern=smpte ! \
      "video/x-raw,format=$(gst_format "$fmt"),width=$w,height=$h,framerate=30/1" ! filesink location="$clip" >/dev/null
    for convert in $CONVERTS; do
    for boxes in $BOXES; do
      t0=$(now)
      line=$("$exe" "$clip" --size "$size" --format "$fmt" --headless --no-vsync --no-loop --window 1280x720 \
               --frames "$FRAMES" --bench-boxes "$boxes" --convert "$convert" 2>&1 | grep -E '^handoff-view: [0-9]+ frames' || true)
      wall=$(fps "$FRAMES" "$t0" "$(now)")
      echo "| $size | $fmt | handoff-view headless$(label "$convert") | $boxes | $(sed -n 's/.*: \([0-9.]*\) fps.*/\1/p' <<<"$line") | $wall |"
      t0=$(now)
      line=$(run_x "$exe" "$clip" --size "$size" --format "$fmt" --no-vsync --no-loop --window 1280x720 \
               --frames "$FRAMES" --bench-boxes "$boxes" --convert "$convert" 2>&1 | grep -E '^handoff-view: [0-9]+ frames' || true)
      wall=$(fps "$FRAMES" "$t0" "$(now)")
      echo "| $size | $fmt | handoff-view window$(label "$convert") | $boxes | $(sed -n 's/.*: \([0-9.]*\) fps.*/\1/p' <<<"$line") | $wall |"
      if [ "$boxes" = 0 ]; then
        # Like for like with mpv, whose on-screen controller is hidden while it plays: the panel hidden.
        t0=$(now)
        line=$(run_x "$exe" "$clip" --size "$size" --format "$fmt" --no-vsync --no-loop --window 1280x720 --hide-ui \
                 --frames "$FRAMES" --bench-boxes 0 --convert "$convert" 2>&1 | grep -E '^handoff-view: [0-9]+ frames' || true)
        wall=$(fps "$FRAMES" "$t0" "$(now)")
        echo "| $size | $fmt | handoff-view window, panel hidden$(label "$convert") | 0 | $(sed -n 's/.*: \([0-9.]*\) fps.*/\1/p' <<<"$line") | $wall |"
      fi
    done
    done
    t0=$(now)
    if run_x gst-launch-1.0 -q filesrc location="$clip" ! \
        rawvideoparse width="$w" height="$h" format="$(gst_raw_format "$fmt")" framerate=30/1 ! \
        glupload ! glcolorconvert ! glimagesink sync=false >/dev/null 2>&1; then
      echo "| $size | $fmt | GStreamer GL | 0 | | $(fps "$FRAMES" "$t0" "$(now)") |"
    else
      echo "| $size | $fmt | GStreamer GL | 0 | | failed |"
    fi
    t0=$(now)
    if run_x mpv --no-config --really-quiet --vo=gpu --gpu-api=opengl --gpu-sw=yes --hwdec=no --untimed --no-audio \
        --demuxer=rawvideo --demuxer-rawvideo-w="$w" --demuxer-rawvideo-h="$h" \
        --demuxer-rawvideo-mp-format="$(mpv_format "$fmt")" --demuxer-rawvideo-fps=30 \
        --geometry=1280x720 "$clip" >/dev/null 2>&1; then
      echo "| $size | $fmt | mpv | 0 | | $(fps "$FRAMES" "$t0" "$(now)") |"
    else
      echo "| $size | $fmt | mpv | 0 | | failed |"
    fi
    rm -f "$clip"
  done
done
echo

# Resident memory over MEM_FRAMES frames of the scene (headless, 640x360, the
# scene's overlays drawn, frames read back as for --output but not written).
echo "### Steady-state memory"
echo
"$exe" --headless --no-vsync --size 640x360 --frames "$MEM_FRAMES" --quiet &
pid=$!
samples=()
while kill -0 "$pid" 2>/dev/null; do
  rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
  [ -n "$rss" ] && samples+=("$rss")
  sleep 1
done
wait "$pid" || true
n=${#samples[@]}
if ((n >= 4)); then
  early=${samples[$((n / 4))]}
  last=${samples[$((n - 1))]}
  max=$(printf '%s\n' "${samples[@]}" | sort -n | tail -1)
  echo "handoff-view --headless --size 640x360 --frames $MEM_FRAMES: VmRSS sampled every second ($n samples):"
  echo "at 25% of the run ${early} KiB, at the end ${last} KiB, max ${max} KiB (growth $((last - early)) KiB)."
else
  echo "too few RSS samples ($n): the run was shorter than 4 s"
fi
