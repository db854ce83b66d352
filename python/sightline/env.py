"""`sightline.Env`: the element-index protocol over `sightline env`'s JSON lines.

    with sightline.Env("https://example.com/", screenshot=False) as env:
        print(env.state.page_content)
        state = env.step({"action": "click_element", "element_index": 1})

The child process writes the first State Object once the page is stable, then
exactly one State Object per Action Object it reads; after `finish_task` or
`fail_task` it writes a last one with `task` and exits 0. Leaving the `with`
block (or `close()`) closes stdin and waits for the child, which kills its
Chromium and removes its profile; a child that does not exit in time gets
SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import collections
import json
import queue
import subprocess
import sys
import threading
from typing import IO, Any, Deque, List, Mapping, Optional, Sequence, Union

from ._binary import find_binary
from .errors import ProcessError, TaskEnded, protocol_error
from .state import State

Action = Union[Mapping[str, Any], str]

_EOF = object()


def action_line(action: Action) -> str:
    """One Action Object as one JSON line (a dict is encoded; a string is sent as given)."""
    if isinstance(action, str):
        line = action.strip()
    else:
        line = json.dumps(dict(action), ensure_ascii=False, separators=(",", ":"))
    if "\n" in line or "\r" in line:
        raise ValueError("an action must be one line of JSON")
    return line


class Env:
    """A browser session speaking the element-index protocol (`sightline env URL`).

    `state` is the last State Object. `step(action)` sends one action and returns
    the next state. A state carrying an `error` raises the matching
    `sightline.ProtocolError` subclass (its `.code` is the protocol's code and
    `.state` the unchanged state) unless `raise_errors=False`, in which case it is
    returned with `state.error` set.
    """

    def __init__(
        self,
        url: str,
        *,
        screenshot: bool = True,
        viewport: Optional[str] = None,
        settle_ms: Optional[int] = None,
        chrome: Optional[str] = None,
        connect: Optional[str] = None,
        allow: Sequence[str] = (),
        block: Sequence[str] = (),
        block_private: bool = False,
        args: Sequence[str] = (),
        binary: Optional[str] = None,
        raise_errors: bool = True,
        timeout: float = 120.0,
        forward_stderr: bool = False,
    ):
        self.binary = find_binary(binary)
        self.raise_errors = raise_errors
        self.timeout = timeout
        self.ended = False
        cmd: List[str] = [self.binary, "env", url]
        if not screenshot:
            cmd.append("--no-screenshot")
        if viewport:
            cmd += ["--viewport", viewport]
        if settle_ms is not None:
            cmd += ["--settle-ms", str(settle_ms)]
        if chrome:
            cmd += ["--chrome", chrome]
        if connect:
            cmd += ["--connect", connect]
        for prefix in allow:
            cmd += ["--allow", prefix]
        for prefix in block:
            cmd += ["--block", prefix]
        if block_private:
            cmd.append("--block-private")
        cmd += list(args)
        self.command = cmd
        self._stderr: Deque[str] = collections.deque(maxlen=60)
        self._lines: "queue.Queue[Any]" = queue.Queue()
        self._proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        assert self._proc.stdout is not None and self._proc.stderr is not None
        threading.Thread(target=self._read_stdout, args=(self._proc.stdout,), daemon=True).start()
        threading.Thread(target=self._read_stderr, args=(self._proc.stderr, forward_stderr), daemon=True).start()
        try:
            self.state: State = self._next_state(first=True)
        except BaseException:
            self.close()
            raise

    # -- the protocol ---------------------------------------------------------------

    def step(self, action: Action, *, timeout: Optional[float] = None) -> State:
        """Send one Action Object; return the State Object that answers it."""
        if self.ended:
            raise TaskEnded("the task has ended (finish_task / fail_task); start a new Env")
        if self._proc.poll() is not None:
            raise ProcessError("sightline env has exited", self._proc.returncode, self.stderr_tail())
        line = action_line(action)
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(line + "\n")
            self._proc.stdin.flush()
        except BrokenPipeError:
            raise ProcessError("sightline env closed its input", self._proc.poll(), self.stderr_tail()) from None
        return self._next_state(timeout=timeout)

    def _next_state(self, first: bool = False, timeout: Optional[float] = None) -> State:
        try:
            item = self._lines.get(timeout=self.timeout if timeout is None else timeout)
        except queue.Empty:
            raise ProcessError(
                f"no State Object from sightline env within {self.timeout if timeout is None else timeout} s",
                None,
                self.stderr_tail(),
            ) from None
        if item is _EOF:
            code = self._proc.wait()
            what = "before its first State Object" if first else "without answering the action"
            raise ProcessError(f"sightline env exited {what}", code, self.stderr_tail())
        try:
            state = State.from_json(item)
        except ValueError as e:
            raise ProcessError(f"sightline env wrote a line that is not a State Object ({e}): {item[:200]!r}") from None
        self.state = state
        if state.task is not None:
            self.ended = True
        if state.error is not None and self.raise_errors:
            raise protocol_error(state.error.code, state.error.message, state.error.failed_action, state)
        return state

    # -- the process ----------------------------------------------------------------

    def _read_stdout(self, out: IO[str]) -> None:
        for line in out:
            if line.strip():
                self._lines.put(line)
        self._lines.put(_EOF)

    def _read_stderr(self, err: IO[str], forward: bool) -> None:
        for line in err:
            self._stderr.append(line)
            if forward:
                sys.stderr.write(line)

    def stderr_tail(self) -> str:
        """The last lines `sightline env` wrote on stderr (warnings, the reason it failed)."""
        return "".join(self._stderr)

    @property
    def returncode(self) -> Optional[int]:
        """The child's exit status once it has exited (0 EOF or task end, 3 browser gone, …)."""
        return self._proc.poll()

    def wait(self, timeout: float) -> Optional[int]:
        """Wait up to `timeout` seconds for the child to exit; its exit status, or None if it still runs."""
        try:
            return self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    @property
    def pid(self) -> int:
        return self._proc.pid

    def close(self, timeout: float = 10.0) -> Optional[int]:
        """End the session: close stdin (EOF ends the loop), wait, then SIGTERM / SIGKILL.

        The child kills its Chromium and removes its profile on each of these paths.
        Returns the exit status."""
        proc = self._proc
        if proc.poll() is None and proc.stdin is not None:
            try:
                proc.stdin.close()
            except OSError:
                pass
        for stop in (None, proc.terminate, proc.kill):
            if stop is not None and proc.poll() is None:
                stop()
            try:
                proc.wait(timeout=timeout)
                break
            except subprocess.TimeoutExpired:
                continue
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        self.ended = True
        return proc.poll()

    def __enter__(self) -> "Env":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        proc: "Optional[subprocess.Popen[str]]" = getattr(self, "_proc", None)
        if proc is not None and proc.poll() is None:
            try:
                self.close(timeout=5.0)
            except Exception:
                pass

    def __repr__(self) -> str:
        status = "running" if self._proc.poll() is None else f"exited {self._proc.returncode}"
        return f"<sightline.Env {self.state.url!r} pid={self._proc.pid} {status}>"
