#!/usr/bin/env python3
"""A Datasette instance for tests/apps.rs over one SQLite file (SIGHTLINE_APPS_DB), whose
database is named `library`:

- `books` (title, author, genre, year), faceted by genre and author;
- `notes` (title, body), filled by the writable canned query `add_note`.

`serve.py --prepare` creates and seeds the database and exits; `serve.py --ready` serves an
already prepared one (a copy) with uvicorn on 127.0.0.1, port 0, and prints `PORT <n>` once
it listens. uvicorn's access log (one line per request, with its query string) goes to stderr.
"""
import os
import socket
import sqlite3
import sys

DB = os.path.abspath(os.environ["SIGHTLINE_APPS_DB"])

BOOKS = [
    ("The Left Hand of Darkness", "Ursula K. Le Guin", "Science fiction", 1969),
    ("A Wizard of Earthsea", "Ursula K. Le Guin", "Fantasy", 1968),
    ("The Dispossessed", "Ursula K. Le Guin", "Science fiction", 1974),
    ("Dune", "Frank Herbert", "Science fiction", 1965),
    ("The Hobbit", "J. R. R. Tolkien", "Fantasy", 1937),
    ("Middlemarch", "George Eliot", "Literary fiction", 1871),
    ("Kindred", "Octavia E. Butler", "Science fiction", 1979),
    ("Piranesi", "Susanna Clarke", "Fantasy", 2020),
]

if "--ready" not in sys.argv:
    c = sqlite3.connect(DB)
    c.executescript(
        """
        CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT NOT NULL, author TEXT NOT NULL,
                            genre TEXT NOT NULL, year INTEGER NOT NULL);
        CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL);
        """
    )
    c.executemany("INSERT INTO books (title, author, genre, year) VALUES (?, ?, ?, ?)", BOOKS)
    c.commit()
    c.close()
if "--prepare" in sys.argv:
    sys.exit(0)

import uvicorn  # noqa: E402
from uvicorn.config import LOGGING_CONFIG  # noqa: E402
from datasette.app import Datasette  # noqa: E402

METADATA = {
    "title": "Sightline library",
    "databases": {
        "library": {
            "tables": {"books": {"facets": ["genre", "author"]}},
            "queries": {
                "add_note": {
                    "title": "Add a note",
                    "sql": "INSERT INTO notes (title, body) VALUES (:title, :body)",
                    "write": True,
                    "on_success_message": "Note saved",
                }
            },
        }
    },
}

ds = Datasette(files=[DB], metadata=METADATA, settings={"num_sql_threads": 2})
# The database is named after its file; give it a stable name.
ds.databases["library"] = ds.databases.pop(os.path.splitext(os.path.basename(DB))[0])
ds.databases["library"].name = "library"

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", 0))
# Listening before the port is announced: a connection made before uvicorn has
# started waits in the backlog instead of being refused.
sock.listen(128)
print("PORT %d" % sock.getsockname()[1], flush=True)
# Every log line to stderr (the test reads stdout for the port only).
LOGGING_CONFIG["handlers"]["access"]["stream"] = "ext://sys.stderr"
config = uvicorn.Config(ds.app(), log_level="info", access_log=True, lifespan="on", log_config=LOGGING_CONFIG)
uvicorn.Server(config).run(sockets=[sock])
