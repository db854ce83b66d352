#!/usr/bin/env python3
"""Serve tests/apps/streamlit/report.py with Streamlit for tests/component_apps.rs.

`serve.py --prepare` makes the empty JSON-lines file at SIGHTLINE_APPS_DB (what the script
writes when "Save settings" is pressed) and exits. `serve.py --ready` starts `streamlit run`
on 127.0.0.1 with a free port, no usage statistics, no file watcher and no browser, waits
until its health check answers, prints `PORT <n>` and waits for it. Streamlit's own output
and its log go to stderr. The Streamlit process dies with this one (PR_SET_PDEATHSIG), which
the test kills by its PID.
"""
import ctypes
import os
import socket
import subprocess
import sys
import time
import urllib.request

DB = os.path.abspath(os.environ["SIGHTLINE_APPS_DB"])
if "--ready" not in sys.argv:
    open(DB, "w").close()
if "--prepare" in sys.argv:
    sys.exit(0)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent():
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL


here = os.path.dirname(os.path.abspath(__file__))
port = free_port()
env = dict(os.environ, HOME=os.path.dirname(DB), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
child = subprocess.Popen(
    [sys.executable, "-m", "streamlit", "run", os.path.join(here, "report.py"),
     "--server.address", "127.0.0.1", "--server.port", str(port), "--server.headless", "true",
     "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
     "--server.runOnSave", "false", "--global.developmentMode", "false",
     "--server.enableXsrfProtection", "true", "--logger.level", "info",
     "--client.toolbarMode", "minimal"],
    stdin=subprocess.DEVNULL, stdout=sys.stderr, stderr=sys.stderr, env=env, cwd=os.path.dirname(DB),
    preexec_fn=die_with_parent,
)
deadline = time.time() + 60
while True:
    if child.poll() is not None:
        sys.exit("streamlit exited with %s" % child.returncode)
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/_stcore/health" % port, timeout=2) as r:
            if r.status == 200:
                break
    except OSError:
        pass
    if time.time() > deadline:
        sys.exit("streamlit did not answer its health check in 60 s")
    time.sleep(0.2)
print("PORT %d" % port, flush=True)
sys.exit(child.wait())
