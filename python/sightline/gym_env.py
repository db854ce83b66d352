"""A Gymnasium environment over `sightline env` (needs `pip install gymnasium`).

    import gymnasium, sightline   # importing sightline registers the id
    env = gymnasium.make("sightline/Browser-v0", url="http://127.0.0.1:8000/", max_episode_steps=20)
    obs, info = env.reset()
    obs, reward, terminated, truncated, info = env.step('{"action": "click_element", "element_index": 1}')

(`gymnasium.make("sightline:sightline/Browser-v0", …)` imports the package itself.)

Observation: the State Object as a Dict of text spaces: `url`, `page_content`,
`element_index` (its JSON text, keys "1".."N"), `screenshot` (base64 PNG, "" with
`screenshot=False`), `state_hash`. `info["state"]` is the typed `sightline.State`.
Action: one Action Object of the protocol as JSON text (a dict is accepted too).
A refused action is no exception here: `info["error"]` holds its `{"code",
"message"}` and the observation is the unchanged state.
`terminated` is true after `finish_task` / `fail_task` (`info["task"]`);
`truncated` when the browser went away. The reward is `reward_fn(state, action)`
when given, else 0.0 (a bare browser knows no task; MiniWoB++-style tasks pass
a function that reads the page).
Each `reset()` starts a fresh `sightline env` (a new browser profile, about a second);
with `fresh_browser=False` a reset of a running session only navigates to the start
page (cookies and storage stay). `options={"url": …}` starts at another page.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, Optional, Tuple, Union

import gymnasium
from gymnasium import spaces

from .env import Env
from .errors import SightlineError
from .state import State

ENV_ID = "sightline/Browser-v0"

# Long enough for a full-page base64 screenshot.
TEXT_MAX_LENGTH = 1 << 26


class Unicode(spaces.Text):
    """A text space holding any Unicode string up to `max_length` characters."""

    def __init__(self, max_length: int = TEXT_MAX_LENGTH, seed: Optional[int] = None):
        super().__init__(max_length=max_length, min_length=0, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        """A short random string (at most 64 characters): a random action is only ever a refused one,
        and drawing megabytes of text for it helps no one."""
        length = int(self.np_random.integers(0, min(self.max_length, 64) + 1))
        return "".join(self.character_list[i] for i in self.np_random.integers(0, len(self.character_list), length))

    def __repr__(self) -> str:
        return f"Unicode({self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Unicode) and other.max_length == self.max_length


RewardFn = Callable[[State, Union[str, Dict[str, Any]]], float]


class BrowserEnv(gymnasium.Env):
    """`sightline env` as a Gymnasium environment (see the module's text)."""

    metadata: Dict[str, Any] = {"render_modes": ["ansi"]}

    def __init__(
        self,
        url: str = "about:blank",
        *,
        screenshot: bool = False,
        fresh_browser: bool = True,
        reward_fn: Optional[RewardFn] = None,
        render_mode: Optional[str] = None,
        **env_kwargs: Any,
    ):
        super().__init__()
        self.url = url
        self.screenshot = screenshot
        self.fresh_browser = fresh_browser
        self.reward_fn = reward_fn
        self.render_mode = render_mode
        self.env_kwargs = env_kwargs
        self.observation_space = spaces.Dict(
            {
                "url": Unicode(),
                "page_content": Unicode(),
                "element_index": Unicode(),
                "screenshot": Unicode(),
                "state_hash": Unicode(),
            }
        )
        # `sightline env` reads lines of up to 4 MiB (MAX_LINE_BYTES).
        self.action_space = Unicode(max_length=4 << 20)
        self._env: Optional[Env] = None

    @staticmethod
    def observation(state: State) -> Dict[str, str]:
        raw = state.to_dict()
        return {
            "url": state.url,
            "page_content": state.page_content,
            "element_index": json.dumps(raw.get("element_index") or {}, ensure_ascii=False, separators=(",", ":")),
            "screenshot": state.screenshot,
            "state_hash": state.state_hash,
        }

    @staticmethod
    def _info(state: State) -> Dict[str, Any]:
        info: Dict[str, Any] = {"state": state}
        if state.error is not None:
            info["error"] = {"code": state.error.code, "message": state.error.message}
        if state.task is not None:
            info["task"] = {"status": state.task.status, "message": state.task.message}
        return info

    def reset(
        self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None
    ) -> Tuple[Dict[str, str], Dict[str, Any]]:
        super().reset(seed=seed)
        url = (options or {}).get("url", self.url)
        env = self._env
        if not self.fresh_browser and env is not None and not env.ended and env.returncode is None:
            state = env.step({"action": "navigate", "url": url})
        else:
            self._close_env()
            self._env = Env(url, screenshot=self.screenshot, raise_errors=False, **self.env_kwargs)
            state = self._env.state
        return self.observation(state), self._info(state)

    def step(
        self, action: Union[str, Dict[str, Any]]
    ) -> Tuple[Dict[str, str], float, bool, bool, Dict[str, Any]]:
        if self._env is None:
            raise SightlineError("call reset() before step()")
        env = self._env
        try:
            state = env.step(action)
        except SightlineError as e:
            # The process is gone (the browser crashed, or a step after the task ended).
            state = env.state
            info = self._info(state)
            info["error"] = {"code": "INTERNAL_BROWSER_ERROR", "message": str(e)}
            return self.observation(state), 0.0, False, True, info
        reward = float(self.reward_fn(state, action)) if self.reward_fn is not None else 0.0
        terminated = state.task is not None
        # A browser that crashed or disconnected is reported once, then `sightline env` exits (3).
        gone = state.error is not None and state.error.code == "INTERNAL_BROWSER_ERROR" and env.wait(2.0) is not None
        truncated = not terminated and (gone or env.returncode is not None)
        return self.observation(state), reward, terminated, truncated, self._info(state)

    def render(self) -> Optional[str]:
        if self.render_mode == "ansi" and self._env is not None:
            return self._env.state.page_content
        return None

    def _close_env(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None

    def close(self) -> None:
        self._close_env()
        super().close()


def register_envs() -> None:
    """Register `sightline/Browser-v0` with Gymnasium (once)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="sightline.gym_env:BrowserEnv")
