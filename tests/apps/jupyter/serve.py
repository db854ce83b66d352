#!/usr/bin/env python3
"""JupyterLab for tests/component_apps.rs: its terminals (xterm.js in the page, a shell on a
pseudo-terminal behind jupyter_server_terminals) in a directory of the test's own.

`serve.py --prepare` writes a README into a new file at SIGHTLINE_APPS_DB and exits.
`serve.py --ready` starts `jupyter lab` on 127.0.0.1 with a free port, no token, no browser,
its root and every Jupyter directory (config, data, runtime, settings, workspaces) inside the
directory of that file, terminals running `bash --norc --noprofile` there; no news, update
checks, extension manager or language-server search (nothing is fetched from the internet,
no `npm` is run). It waits until the
server answers, prints `PORT <n>` and waits for it. Jupyter's log goes to stderr; it dies
with this process (PR_SET_PDEATHSIG), which the test kills by its PID.
"""
import ctypes
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

DB = os.path.abspath(os.environ["SIGHTLINE_APPS_DB"])
if "--ready" not in sys.argv:
    with open(DB, "w") as f:
        f.write("Files a terminal of the test makes appear next to this one.\n")
if "--prepare" in sys.argv:
    sys.exit(0)

root = os.path.dirname(DB)
jupyter = os.path.join(root, ".jupyter")
for sub in ("config/labconfig", "data", "runtime", "settings", "workspaces"):
    os.makedirs(os.path.join(jupyter, sub), exist_ok=True)
# Plugins that would ask the internet for news or extensions are off.
with open(os.path.join(jupyter, "config/labconfig/page_config.json"), "w") as f:
    json.dump({"disabledExtensions": {
        "@jupyterlab/apputils-extension:announcements": True,
        "@jupyterlab/extensionmanager-extension": True,
    }}, f)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent():
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL


packages = os.path.abspath(os.environ["PYTHONPATH"].split(os.pathsep)[0])
port = free_port()
env = dict(
    os.environ,
    HOME=root,
    JUPYTER_CONFIG_DIR=os.path.join(jupyter, "config"),
    JUPYTER_DATA_DIR=os.path.join(jupyter, "data"),
    JUPYTER_RUNTIME_DIR=os.path.join(jupyter, "runtime"),
    JUPYTERLAB_SETTINGS_DIR=os.path.join(jupyter, "settings"),
    JUPYTERLAB_WORKSPACES_DIR=os.path.join(jupyter, "workspaces"),
    JUPYTER_PLATFORM_DIRS="1",
    # pip --target put the server extensions' config and the lab's assets under PYTHONPATH.
    JUPYTER_CONFIG_PATH=os.path.join(packages, "etc/jupyter"),
    JUPYTER_PATH=os.path.join(packages, "share/jupyter"),
    JUPYTERLAB_DIR=os.path.join(packages, "share/jupyter/lab"),
    PS1="$ ",
    TERM="xterm-256color",
)
child = subprocess.Popen(
    [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
     "--ServerApp.port=%d" % port, "--ServerApp.port_retries=0", "--IdentityProvider.token=",
     "--ServerApp.password=", "--ServerApp.root_dir=" + root,
     "--ServerApp.terminado_settings={'shell_command': ['/bin/bash', '--norc', '--noprofile']}",
     "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
     "--LabApp.extension_manager=readonly", "--LanguageServerManager.autodetect=False",
     "--ServerApp.allow_root=True", "--ServerApp.log_level=INFO"],
    stdin=subprocess.DEVNULL, stdout=sys.stderr, stderr=sys.stderr, env=env, cwd=root,
    preexec_fn=die_with_parent,
)
deadline = time.time() + 90
while True:
    if child.poll() is not None:
        sys.exit("jupyter lab exited with %s" % child.returncode)
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/api/status" % port, timeout=2) as r:
            if r.status == 200:
                break
    except OSError:
        pass
    if time.time() > deadline:
        sys.exit("jupyter lab did not answer in 90 s")
    time.sleep(0.2)
print("PORT %d" % port, flush=True)
sys.exit(child.wait())
