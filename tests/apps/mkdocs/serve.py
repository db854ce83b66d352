#!/usr/bin/env python3
"""The MkDocs Material site of tests/apps.rs, built and served statically.

`serve.py --prepare` builds the site of mkdocs.yml (beside this file) with `mkdocs build`
into SIGHTLINE_APPS_DB (a directory) and exits; `serve.py --ready` serves that directory with
the standard library's static file server on 127.0.0.1, port 0, and prints `PORT <n>` once it
listens. The request log (one line per request) goes to stderr.
"""
import functools
import os
import sys
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

SITE = os.path.abspath(os.environ["SIGHTLINE_APPS_DB"])
HERE = os.path.dirname(os.path.abspath(__file__))

if "--prepare" in sys.argv:
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    build(load_config(os.path.join(HERE, "mkdocs.yml"), site_dir=SITE))
    sys.exit(0)


class Handler(SimpleHTTPRequestHandler):
    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format, *args):
        sys.stderr.write("%s\n" % (format % args))
        sys.stderr.flush()


server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=SITE))
server.daemon_threads = True
print("PORT %d" % server.server_address[1], flush=True)
server.serve_forever()
