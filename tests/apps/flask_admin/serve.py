#!/usr/bin/env python3
"""A tiny Flask-Admin site for tests/apps.rs: two SQLAlchemy models (`User`, `Post`) in a
SQLite file (SIGHTLINE_APPS_DB), each with Flask-Admin's stock ModelView at /admin/.

`serve.py --prepare` creates the tables and seed rows and exits; `serve.py --ready` serves an
already prepared database (a copy) on 127.0.0.1, port 0, and prints `PORT <n>` once it
listens. Requests are handled on threads; the request log goes to stderr.
"""
import os
import sys
from datetime import date

from flask import Flask, redirect
from flask_admin import Admin
from flask_admin.contrib.sqla import ModelView
from flask_sqlalchemy import SQLAlchemy
from werkzeug.serving import make_server

app = Flask(__name__)
app.config["SQLALCHEMY_DATABASE_URI"] = "sqlite:///" + os.path.abspath(os.environ["SIGHTLINE_APPS_DB"])
app.config["SECRET_KEY"] = "sightline-test-only"
db = SQLAlchemy(app)


class User(db.Model):
    id = db.Column(db.Integer, primary_key=True)
    name = db.Column(db.String(80), nullable=False)
    email = db.Column(db.String(120), nullable=False, unique=True)
    is_admin = db.Column(db.Boolean, nullable=False, default=False)

    def __str__(self):
        return self.name


class Post(db.Model):
    id = db.Column(db.Integer, primary_key=True)
    title = db.Column(db.String(200), nullable=False)
    body = db.Column(db.Text, nullable=False, default="")
    published = db.Column(db.Date)
    user_id = db.Column(db.Integer, db.ForeignKey("user.id"), nullable=False)
    user = db.relationship(User, backref=db.backref("posts", cascade="all, delete-orphan"))

    def __str__(self):
        return self.title


class UserView(ModelView):
    column_list = ["name", "email", "is_admin"]
    column_searchable_list = ["name", "email"]
    column_filters = ["is_admin"]
    form_columns = ["name", "email", "is_admin"]


class PostView(ModelView):
    column_list = ["title", "user", "published"]
    form_columns = ["title", "body", "published", "user"]


admin = Admin(app, name="Blog admin")
admin.add_view(UserView(User, db))
admin.add_view(PostView(Post, db))


@app.route("/")
def index():
    return redirect("/admin/")


SEED_USERS = [("Ada Lovelace", "ada@example.com", True), ("Alan Turing", "alan@example.com", False),
              ("Grace Hopper", "grace@example.com", False)]
SEED_POSTS = [("Notes on the Engine", "Ada Lovelace"), ("On Computable Numbers", "Alan Turing"),
              ("The first bug", "Grace Hopper")]

if "--ready" not in sys.argv:
    with app.app_context():
        db.create_all()
        users = {}
        for name, email, is_admin in SEED_USERS:
            users[name] = User(name=name, email=email, is_admin=is_admin)
            db.session.add(users[name])
        for title, author in SEED_POSTS:
            db.session.add(Post(title=title, body="", published=date(2024, 1, 1), user=users[author]))
        db.session.commit()
if "--prepare" in sys.argv:
    sys.exit(0)

server = make_server("127.0.0.1", 0, app, threaded=True)
print("PORT %d" % server.server_port, flush=True)
server.serve_forever()
