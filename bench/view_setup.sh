# Sourced by the handoff-view benchmark scripts (bench/viewer_fps.sh,
# bench/record_fps.sh) after they set `here` (the checkout) and cd there:
# a scratch folder `work` (BENCH_DIR, else a temporary one removed at exit), a
# private XDG_RUNTIME_DIR, and `exe`, handoff-view (HANDOFF_VIEW, else the
# default preset's, built here if missing).
work="${BENCH_DIR:-$(mktemp -d /tmp/handoff-view-bench.XXXXXX)}"
trap 'rm -rf "$work"' EXIT
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d /tmp/handoff-xdg.XXXXXX)}"
chmod 700 "$XDG_RUNTIME_DIR"
exe="${HANDOFF_VIEW:-$here/build/default/viewer/app/handoff-view}"
if [ ! -x "$exe" ]; then
  cmake --preset default >/dev/null
  cmake --build --preset default --target handoff-view >/dev/null
fi
