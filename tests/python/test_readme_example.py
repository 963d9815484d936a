"""The Python examples in README.md run as scripts, as a reader saves and runs them: each
```python block in a subprocess (readme_runner.py). A snippet that opens a viewer must keep it
up until it is closed (its last statement waits for that, as docs/python.md's example does),
and the viewer quick start shows its frame with the box."""
import json
import pathlib
import queue
import re
import subprocess
import sys
import threading

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
README = HERE.parents[1] / "README.md"
RUNNER = HERE / "readme_runner.py"
QUIET_LIMIT_S = 120  # a script that says nothing this long is stopped (it hangs)


def python_blocks():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) >= 2, "README.md lost a python example"
    return blocks


def run_as_script(block, tmp_path):
    """Runs `block` as a script; closes its viewers once it waits for them (a line "close" to
    the runner). Returns the runner's events, the exit status and stderr."""
    script = tmp_path / "readme_snippet.py"
    script.write_text(block)
    errors = tmp_path / "stderr.txt"
    with open(errors, "w") as err:
        proc = subprocess.Popen([sys.executable, str(RUNNER), str(script), str(tmp_path)], cwd=tmp_path,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True)
    lines = queue.Queue()

    def read():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    events = []
    try:
        while (line := lines.get(timeout=QUIET_LIMIT_S)) is not None:
            if not line.startswith("readme-runner "):
                continue  # the snippet's own output
            events.append(json.loads(line.removeprefix("readme-runner ")))
            if events[-1]["event"] == "waiting":
                proc.stdin.write("close\n")
                proc.stdin.flush()
        rc = proc.wait(timeout=QUIET_LIMIT_S)
    except (queue.Empty, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()
        pytest.fail(f"the snippet did not finish; events {events}; stderr:\n{errors.read_text()}")
    finally:
        proc.stdin.close()
    return events, rc, errors.read_text()


def check_ran(events, rc, stderr):
    assert rc == 0, f"the snippet exited {rc}:\n{stderr}"
    ends = [e for e in events if e["event"] == "end"]
    assert len(ends) == 1, f"the snippet did not run to its end: {events}\n{stderr}"
    end = ends[0]
    assert end["open"] == [], (
        f"the snippet ended with viewer(s) {end['open']} still open: run as a script, it closes them as it exits, "
        "so nobody sees the frame (end it with v.wait_closed(), as docs/python.md does)")
    waited = {e["viewer"] for e in events if e["event"] == "waiting"}
    assert waited == set(range(end["made"])), (
        f"viewers {sorted(set(range(end['made'])) - waited)} were closed without waiting for whoever looks at them "
        "(end the snippet with v.wait_closed())")


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_readme_python_block_runs_as_a_script(index, tmp_path):
    check_ran(*run_as_script(python_blocks()[index], tmp_path))


def test_viewer_quick_start_shows_its_frame_until_closed(tmp_path):
    block = python_blocks()[0]
    assert "handoff.Viewer(" in block, "the first python block is no longer the viewer quick start"
    events, rc, stderr = run_as_script(block, tmp_path)
    check_ran(events, rc, stderr)
    waiting = next(e for e in events if e["event"] == "waiting")
    assert waiting["submitted"] == 1
    img = np.load(tmp_path / "viewer0.npy")  # what it showed while waiting: its frame, with the box
    assert img.shape == (720, 1280, 4)
    assert (img[80, 180, :3] != img[300, 600, :3]).any(), "the box's top edge is drawn"
