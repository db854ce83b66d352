#!/usr/bin/env python3
"""A Wagtail CMS site for tests/component_apps.rs, in one process:

1. migrate a fresh SQLite database (SIGHTLINE_APPS_DB),
2. create the superuser `admin` / `sightline-pass` and, under Wagtail's default home page, a
   `BlogPage` "About us" whose rich-text body is edited in the admin's Draftail (Draft.js)
   editor,
3. serve the site and its admin (static files included) with the standard library's WSGI
   server on 127.0.0.1, port 0, and print `PORT <n>` once it listens.

`serve.py --prepare` does 1 and 2 and exits; `serve.py --ready` skips them (the database is a
copy of a prepared one). Requests are handled on threads; logs go to stderr.
"""
import os
import sys
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cmssite.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.staticfiles.handlers import StaticFilesHandler  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402

if "--ready" not in sys.argv:
    call_command("migrate", verbosity=0, interactive=False)
    get_user_model().objects.create_superuser("admin", "admin@example.com", "sightline-pass")
    from wagtail.models import Page

    from blog.models import BlogPage

    home = Page.objects.get(depth=2)
    home.add_child(instance=BlogPage(title="About us", slug="about-us",
                                     body="<p>We are a small bakery on Main Street.</p>"))
    home.get_children().get(slug="about-us").specific.save_revision().publish()
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
