#!/usr/bin/env python3
"""Start the test site the way tests/apps.rs needs it, in one process:

1. migrate a fresh SQLite database (SIGHTLINE_APPS_DB),
2. create the superuser `admin` / `sightline-pass` and a few seed questions,
3. serve the admin (static files included) with the standard library's WSGI
   server on 127.0.0.1, port 0, and print `PORT <n>` once it listens.

`serve.py --prepare` does 1 and 2 and exits; `serve.py --ready` skips them (the
database is a copy of a prepared one). The tests prepare once and copy.

Requests are handled on threads; logs go to stderr.
"""
import os
import sys
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pollsite.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.staticfiles.handlers import StaticFilesHandler  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.utils import timezone  # noqa: E402

from polls.models import Choice, Question  # noqa: E402

SEED = [
    ("What's up?", True, ["Not much", "The sky"]),
    ("Which editor do you use?", False, ["Vim", "Emacs"]),
    ("Favourite colour?", True, ["Blue", "Green"]),
]

if "--ready" not in sys.argv:
    call_command("migrate", verbosity=0, interactive=False)
    get_user_model().objects.create_superuser("admin", "admin@example.com", "sightline-pass")
    for text, published, choices in SEED:
        q = Question.objects.create(question_text=text, pub_date=timezone.now(), published=published)
        for c in choices:
            Choice.objects.create(question=q, choice_text=c)
if "--prepare" in sys.argv:
    sys.exit(0)


class ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):
        sys.stderr.write("%s\n" % (format % args))


server = make_server(
    "127.0.0.1", 0, StaticFilesHandler(get_wsgi_application()),
    server_class=ThreadingServer, handler_class=QuietHandler,
)
print("PORT %d" % server.server_address[1], flush=True)
server.serve_forever()
