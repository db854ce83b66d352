"""The Streamlit script of tests/apps/streamlit: report settings with a slider, a radio
group, a date input, a file uploader and a button. "Save settings" appends what the script
received to the JSON-lines file at SIGHTLINE_APPS_DB (the backend the tests read)."""
import datetime
import json
import os

import streamlit as st

st.title("Report settings")
interval = st.slider("Refresh interval (minutes)", min_value=5, max_value=60, value=15)
layout = st.radio("Layout", ["Compact", "Itemised", "Detailed"])
start = st.date_input("Start date", value=datetime.date(2025, 3, 10))
attachment = st.file_uploader("Attachment", type=["csv", "txt"])

if st.button("Save settings"):
    received = {
        "interval": interval,
        "layout": layout,
        "start": start.isoformat() if start else None,
        "attachment": None,
    }
    if attachment is not None:
        received["attachment"] = {"name": attachment.name, "text": attachment.getvalue().decode("utf-8", "replace")}
    with open(os.environ["SIGHTLINE_APPS_DB"], "a") as f:
        f.write(json.dumps(received) + "\n")
    st.success("Settings saved")
