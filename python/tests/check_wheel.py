"""Drives the installed wheel: the `sightline` package and binary of the venv running this.

Usage: VENV/bin/python check_wheel.py FIXTURE_BASE_URL
(FIXTURE_BASE_URL serves tests/fixtures, e.g. http://127.0.0.1:PORT.)
Prints one JSON object with what it saw; tests/dist.rs asserts on it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time


def main(base: str) -> None:
    import sightline

    out: dict = {"module": sightline.__file__, "version": sightline.__version__, "binary": sightline.find_binary()}
    out["binary_version"] = subprocess.run(
        [out["binary"], "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()

    # sightline.Env: the element-index protocol over `sightline env`.
    started = time.monotonic()
    with sightline.Env(f"{base}/signin.html", screenshot=False) as env:
        first = env.state
        out["env_first_url"] = first.url
        out["env_first_content"] = first.page_content
        email = first.find(role="textbox", name="Email Address")
        typed = env.step({"action": "input_text", "element_index": email.index, "text": "ada@example.com"})
        out["env_typed_value"] = typed.element_index[email.index].attributes.value
        try:
            env.step({"action": "click_element", "element_index": 99})
            out["env_bad_index"] = None
        except sightline.InvalidElementIndex as e:
            out["env_bad_index"] = {
                "code": e.code,
                "type": type(e).__name__,
                "is_protocol_error": isinstance(e, sightline.ProtocolError),
                "state_unchanged": e.state is not None and e.state.state_hash == typed.state_hash,
            }
        try:
            env.step("not json")
            out["env_not_json"] = None
        except sightline.ActionValidationFailed as e:
            out["env_not_json"] = e.code
        button = env.state.find(role="button", name="Sign In")
        signed = env.step({"action": "click_element", "element_index": button.index})
        out["env_after_click_url"] = signed.url
        out["env_after_click_content"] = signed.page_content
        done = env.step({"action": "finish_task", "message": "signed in"})
        out["env_task"] = {"status": done.task.status, "message": done.task.message} if done.task else None
        try:
            env.step({"action": "finish_task", "message": "again"})
            out["env_after_end"] = None
        except sightline.TaskEnded:
            out["env_after_end"] = "TaskEnded"
    out["env_exit"] = env.returncode
    # A session left by an exception is closed too: the child is gone after the with block.
    try:
        with sightline.Env(f"{base}/signin.html", screenshot=False) as env2:
            raise KeyError("leave the block by an exception")
    except KeyError:
        pass
    out["env_closed_on_exception"] = env2.returncode is not None
    out["env_seconds"] = round(time.monotonic() - started, 2)

    # sightline.Client over `sightline serve` (started by sightline.Server).
    with sightline.Server() as server:
        client = server.client()
        out["serve_health"] = client.health()["status"]
        with client.create_session(f"{base}/signin.html", screenshot=False) as s:
            out["serve_first_url"] = s.state.url if s.state else None
            acted = s.act({"action": "input_text", "element_index": 1, "text": "grace@example.com"})
            out["serve_typed_value"] = acted.element_index[1].attributes.value
            try:
                s.act({"action": "click_element", "element_index": 99})
                out["serve_bad_index"] = None
            except sightline.InvalidElementIndex as e:
                out["serve_bad_index"] = e.code
            snap = s.tool("get_browser_state", snapshot_format="semantic_v2")
            out["serve_outline_has_email"] = 'textbox "Email Address"' in snap["outline"]
            out["serve_sessions"] = client.sessions() == [s.id]
        try:
            s.get_state()
            out["serve_after_delete"] = None
        except sightline.ApiError as e:
            out["serve_after_delete"] = {"status": e.status, "code": e.code, "detail": e.detail}
    out["serve_exit"] = server.close()

    # The Gymnasium environment, made by its registered id.
    import gymnasium

    genv = gymnasium.make("sightline/Browser-v0", url=f"{base}/signin.html", max_episode_steps=10)
    try:
        obs, info = genv.reset(seed=0)
        out["gym_obs_keys"] = sorted(obs)
        out["gym_obs_in_space"] = bool(genv.observation_space.contains(obs))
        out["gym_reset_content"] = obs["page_content"]
        out["gym_info_state"] = type(info["state"]).__name__
        obs, reward, terminated, truncated, info = genv.step(
            json.dumps({"action": "input_text", "element_index": 1, "text": "gym@example.com"})
        )
        out["gym_step"] = {
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
            "value": json.loads(obs["element_index"])["1"]["attributes"]["value"],
        }
        obs, reward, terminated, truncated, info = genv.step('{"action": "click_element", "element_index": 99}')
        out["gym_error"] = info.get("error", {}).get("code")
        obs, reward, terminated, truncated, info = genv.step({"action": "finish_task", "message": "ok"})
        out["gym_finish"] = {"terminated": terminated, "truncated": truncated, "task": info.get("task")}
    finally:
        genv.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
