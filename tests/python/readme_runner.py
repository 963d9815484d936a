"""Runs one README snippet as a script, as `python snippet.py` does (__name__ is "__main__"), and
reports what became of the viewers it made, for test_readme_example.py.

    python readme_runner.py SNIPPET.py OUT_DIR

handoff.Viewer is replaced by a subclass that says (a "readme-runner {json}" line on stdout) when
a viewer is made and when the script waits in its wait_closed(), saving what the viewer shows
then as OUT_DIR/viewer<N>.npy. A line "close" on stdin closes every viewer, as a user closing
the window does. When the snippet ends the runner reports the viewers still open: a script that
ends with its viewer open closes it as it exits, and whoever ran it saw nothing."""
import json
import pathlib
import runpy
import sys
import threading

import numpy as np

import handoff

snippet, out_dir = sys.argv[1], pathlib.Path(sys.argv[2])
made = []


def report(event, **fields):
    print("readme-runner " + json.dumps({"event": event, **fields}), flush=True)


class WatchedViewer(handoff.Viewer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        made.append(self)
        report("made", viewer=len(made) - 1)

    def wait_closed(self, timeout=None):
        n = made.index(self)
        shown = self.snapshot()
        if shown is not None:
            np.save(out_dir / f"viewer{n}.npy", np.from_dlpack(shown))
        report("waiting", viewer=n, submitted=self.stats.submitted)
        return super().wait_closed(timeout)


closing = threading.Lock()  # held while viewers are closed on request (the script may end meanwhile)


def close_all():
    for viewer in list(made):
        viewer.close()


def close_on_request():
    for line in sys.stdin:
        if line.strip() == "close":
            with closing:
                close_all()


handoff.Viewer = WatchedViewer
threading.Thread(target=close_on_request, daemon=True).start()
scope = runpy.run_path(snippet, run_name="__main__")
report("end", made=len(made), open=[n for n, v in enumerate(made) if v.is_open()])
if not closing.acquire(timeout=60):
    sys.exit("readme-runner: closing the viewers on request did not finish in 60 s")
close_all()  # what the script's exit would do, before the interpreter tears down
del scope, made[:]
