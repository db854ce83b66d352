"""`sightline.Client`: the HTTP API of `sightline serve`, with the standard library only.

    with sightline.Server() as server:                 # or Client("http://127.0.0.1:8931", token=...)
        client = server.client()
        with client.create_session(url="https://example.com/", screenshot=False) as s:
            print(s.state.page_content)
            s.act({"action": "click_element", "element_index": 1})
            snap = s.tool("get_browser_state", snapshot_format="semantic_v2")

Routes (README, "sightline serve"): POST /v1/sessions, POST /v1/sessions/{id}/act,
GET /v1/sessions/{id}/state, POST /v1/sessions/{id}/tools/{tool},
DELETE /v1/sessions/{id}, GET /v1/sessions, /healthz, /openapi.json.
A refusal (`{"error": {"code", "message", "detail"}}`) raises `sightline.ApiError`;
a State Object carrying an `error` raises the protocol's exception, as `Env.step` does.
"""

from __future__ import annotations

import collections
import json
import re
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request
from typing import IO, Any, Deque, Dict, List, Mapping, Optional, Sequence

from ._binary import find_binary
from .env import Action, action_line
from .errors import ApiError, ProcessError, protocol_error
from .state import State


class Client:
    """A client of one `sightline serve` (bearer `token` when it runs with --token-file)."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8931",
        *,
        token: Optional[str] = None,
        timeout: float = 120.0,
        raise_errors: bool = True,
    ):
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.raise_errors = raise_errors
        # Never through an HTTP proxy from the environment: the server is addressed directly.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def request(self, method: str, path: str, body: Any = None, *, raw: Optional[bytes] = None) -> Any:
        """One request; the decoded JSON answer (None for 204). Raises ApiError on a refusal."""
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(self.base_url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with self._opener.open(req, timeout=self.timeout) as resp:
                payload = resp.read()
        except urllib.error.HTTPError as e:
            payload = e.read()
            try:
                err = json.loads(payload)["error"]
                raise ApiError(e.code, err.get("code", ""), err.get("message", ""), err.get("detail")) from None
            except (ValueError, KeyError, TypeError):
                raise ApiError(e.code, "http_error", payload.decode(errors="replace").strip() or str(e)) from None
        if not payload:
            return None
        return json.loads(payload)

    # -- the server -------------------------------------------------------------------

    def health(self) -> Dict[str, Any]:
        """`/healthz`: `{"status": "ok", "sessions": N, …}`."""
        return dict(self.request("GET", "/healthz"))

    def openapi(self) -> Dict[str, Any]:
        """The server's OpenAPI 3.1 document."""
        return dict(self.request("GET", "/openapi.json"))

    def sessions(self) -> List[str]:
        """The caller's own session ids."""
        return list(self.request("GET", "/v1/sessions")["sessions"])

    def create_session(
        self, url: Optional[str] = None, *, viewport: Optional[str] = None, screenshot: Optional[bool] = None
    ) -> "Session":
        body: Dict[str, Any] = {}
        if url is not None:
            body["url"] = url
        if viewport is not None:
            body["viewport"] = viewport
        if screenshot is not None:
            body["screenshot"] = screenshot
        out = self.request("POST", "/v1/sessions", body)
        first = State.from_json(out["state"]) if out.get("state") else None
        return Session(self, out["session_id"], first)

    def session(self, session_id: str) -> "Session":
        """A handle on an existing session (no request is made)."""
        return Session(self, session_id, None)


class Session:
    """One session of `sightline serve`: a browser context with its tab."""

    def __init__(self, client: Client, session_id: str, state: Optional[State]):
        self.client = client
        self.id = session_id
        self.state = state  # the last State Object seen (None until one was asked for)

    @property
    def _path(self) -> str:
        return "/v1/sessions/" + urllib.parse.quote(self.id, safe="")

    def _checked(self, state: State) -> State:
        self.state = state
        if state.error is not None and self.client.raise_errors:
            raise protocol_error(state.error.code, state.error.message, state.error.failed_action, state)
        return state

    def get_state(self, *, screenshot: Optional[bool] = None) -> State:
        """The current State Object (`screenshot=` also sets it for the following actions)."""
        query = "" if screenshot is None else f"?screenshot={'true' if screenshot else 'false'}"
        return self._checked(State.from_json(self.client.request("GET", self._path + "/state" + query)))

    def act(self, action: Action) -> State:
        """One Action Object; the State Object that answers it (as `sightline env` answers)."""
        body = action_line(action).encode()
        return self._checked(State.from_json(self.client.request("POST", self._path + "/act", raw=body)))

    def tool(self, name: str, args: Optional[Mapping[str, Any]] = None, **kwargs: Any) -> Any:
        """Call one tool of the tool API on this session (`session`, `target_id`, `tab_id` are the session's)."""
        body = dict(args or {})
        body.update(kwargs)
        return self.client.request("POST", f"{self._path}/tools/{urllib.parse.quote(name, safe='')}", body)

    def close(self) -> None:
        """End the session (DELETE); a session already gone is not an error."""
        try:
            self.client.request("DELETE", self._path)
        except ApiError as e:
            if e.code not in ("session_not_found", "session_ended"):
                raise

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<sightline.Session {self.id} at {self.client.base_url}>"


class Server:
    """Runs `sightline serve --listen 127.0.0.1:0 [args]` and knows its address.

    `client()` gives a Client of it. `close()` (or leaving the `with` block) sends
    SIGTERM: the server ends every session, closes its browsers and exits 0.
    """

    _LISTENING = re.compile(r"listening on (http://\S+)")

    def __init__(
        self,
        args: Sequence[str] = (),
        *,
        listen: str = "127.0.0.1:0",
        binary: Optional[str] = None,
        timeout: float = 60.0,
    ):
        self.binary = find_binary(binary)
        self.command = [self.binary, "serve", "--listen", listen, *args]
        self._stderr: Deque[str] = collections.deque(maxlen=60)
        self._ready = threading.Event()
        self.url = ""
        self._proc = subprocess.Popen(
            self.command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        assert self._proc.stderr is not None
        threading.Thread(target=self._read_stderr, args=(self._proc.stderr,), daemon=True).start()
        if not self._ready.wait(timeout) or not self.url:
            self.close()
            raise ProcessError("sightline serve did not start listening", self._proc.poll(), "".join(self._stderr))

    def _read_stderr(self, err: IO[str]) -> None:
        for line in err:
            self._stderr.append(line)
            m = self._LISTENING.search(line)
            if m and not self.url:
                self.url = m.group(1)
                self._ready.set()
        self._ready.set()

    def client(self, token: Optional[str] = None, **kwargs: Any) -> Client:
        return Client(self.url, token=token, **kwargs)

    def stderr_tail(self) -> str:
        return "".join(self._stderr)

    def close(self, timeout: float = 20.0) -> Optional[int]:
        proc = self._proc
        for stop in (proc.terminate, proc.kill):
            if proc.poll() is None:
                stop()
            try:
                proc.wait(timeout=timeout)
                break
            except subprocess.TimeoutExpired:
                continue
        return proc.poll()

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
