#!/usr/bin/env python3
"""A room-booking form built with NiceGUI (Vue 3 + Quasar components) for
tests/component_apps.rs.

The form: a text input (Guest name), a Quasar select (Room type; its focus target is a
transparent `<input role=combobox>`), NiceGUI's date input (a text field whose calendar
button opens a QDate in a menu), a checkbox, a switch and two buttons. "Book" writes the
booking to the JSON file at SIGHTLINE_APPS_DB (the backend the tests read) and shows a
Quasar notification (a fixed, full-viewport notification layer with pointer-events: none).

Below the form, the bookings so far, each with an icon button (a bin, with a tooltip) that asks in
a Quasar dialog whether to cancel it.

`serve.py --prepare` writes two seed bookings and exits; `serve.py --ready` serves the
form on 127.0.0.1 with a port the OS picks and prints `PORT <n>` once it listens. Requests are
logged on stderr. NiceGUI serves Vue, Quasar and its fonts itself: nothing is fetched from the
internet.
"""
import json
import os
import socket
import sys
import threading

DB = os.path.abspath(os.environ["SIGHTLINE_APPS_DB"])
lock = threading.Lock()

SEED = [
    {"guest": "Alan Turing", "room": "Single", "date": "2026-05-04", "breakfast": False, "offers": False},
    {"guest": "Ada Lovelace", "room": "Suite", "date": "2026-06-10", "breakfast": True, "offers": False},
]

if "--ready" not in sys.argv:
    with open(DB, "w") as f:
        json.dump(SEED, f)
if "--prepare" in sys.argv:
    sys.exit(0)

import uvicorn  # noqa: E402
from fastapi import FastAPI  # noqa: E402
from nicegui import ui  # noqa: E402

ROOMS = ["Single", "Double", "Suite"]


def load():
    with lock:
        with open(DB) as f:
            return json.load(f)


def change(edit):
    with lock:
        with open(DB) as f:
            all_bookings = json.load(f)
        edit(all_bookings)
        with open(DB + ".tmp", "w") as f:
            json.dump(all_bookings, f)
        os.replace(DB + ".tmp", DB)


def record(booking):
    change(lambda all_bookings: all_bookings.append(booking))


def cancel(booking):
    change(lambda all_bookings: all_bookings.remove(booking) if booking in all_bookings else None)


@ui.refreshable
def booking_list():
    for booking in load():
        with ui.row().classes("items-center"):
            ui.label(f"{booking['guest']}: {booking['room']} room on {booking['date']}")
            ui.button(icon="delete", on_click=lambda b=booking: ask_to_cancel(b)) \
                .props("flat round").tooltip("Cancel booking")


def ask_to_cancel(booking):
    with ui.dialog() as dialog, ui.card():
        ui.label(f"Cancel the booking of {booking['guest']} on {booking['date']}?")

        def yes():
            cancel(booking)
            dialog.close()
            booking_list.refresh()
            ui.notify(f"Cancelled the booking of {booking['guest']}")

        with ui.row():
            ui.button("Keep it", on_click=dialog.close).props("flat")
            ui.button("Cancel booking", on_click=yes).props("color=negative")
    dialog.open()


@ui.page("/")
def index():
    ui.label("Book a room").classes("text-h5")
    with ui.card().classes("w-96"):
        guest = ui.input("Guest name")
        room = ui.select(ROOMS, label="Room type").classes("w-full")
        day = ui.date_input("Check-in date")
        breakfast = ui.checkbox("Breakfast included")
        offers = ui.switch("Send me offers")

        def book():
            if not guest.value or not room.value or not day.value:
                ui.notify("Fill in the guest name, the room type and the date", type="warning")
                return
            record({
                "guest": guest.value,
                "room": room.value,
                "date": day.value,
                "breakfast": bool(breakfast.value),
                "offers": bool(offers.value),
            })
            ui.notify(f"Booked: {room.value} room for {guest.value} on {day.value}", type="positive")
            booking_list.refresh()

        def clear():
            guest.value = ""
            room.value = None
            day.value = ""
            breakfast.value = False
            offers.value = False

        with ui.row():
            ui.button("Book", on_click=book)
            ui.button("Clear", on_click=clear).props("flat")

    ui.label("Bookings").classes("text-h6")
    booking_list()


fastapi_app = FastAPI()
ui.run_with(fastapi_app, title="Room booking", storage_secret="sightline-test-only",
            show_welcome_message=False, reconnect_timeout=10.0)

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", 0))
sock.listen(128)
print("PORT %d" % sock.getsockname()[1], flush=True)
# Access log and everything else to stderr (stdout is closed by the test once it read PORT).
log_config = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(message)s"}},
    "handlers": {"err": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr", "formatter": "plain"}},
    "loggers": {
        "uvicorn": {"handlers": ["err"], "level": "INFO"},
        "uvicorn.access": {"handlers": ["err"], "level": "INFO", "propagate": False},
    },
}
sys.stdout = sys.stderr
uvicorn.Server(uvicorn.Config(fastapi_app, log_config=log_config, ws="websockets")).run(sockets=[sock])
