"""A small GitHub REST client on the standard library (urllib), for the Action's suggestions (github_review.py).

The token goes only into the Authorization header of requests to the API URL the runner names (GITHUB_API_URL);
paths are built here, never taken from a response, so a crafted answer cannot send the token elsewhere. Errors carry
the HTTP status and GitHub's own `message`, never the request's headers.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request

PER_PAGE = 100
MAX_PAGES = 30  # 3,000 items: GitHub's own cap for a pull request's files


class APIError(Exception):
    def __init__(self, method: str, path: str, status: int, message: str) -> None:
        super().__init__(f"{method} {path}: HTTP {status}: {message}")
        self.status = status


class GitHubAPI:
    def __init__(self, base_url: str, token: str, timeout: float = 30.0) -> None:
        scheme = urllib.parse.urlsplit(base_url).scheme
        if scheme not in ("https", "http"):
            raise ValueError(f"GITHUB_API_URL must be an http(s) URL, not {base_url!r}")
        self.base, self._token, self.timeout = base_url.rstrip("/"), token, timeout

    def __repr__(self) -> str:  # never the token
        return f"GitHubAPI({self.base!r})"

    def request(self, method: str, path: str, payload: dict | None = None) -> object:
        data = None if payload is None else json.dumps(payload).encode("utf-8")
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={
            "Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
            "Authorization": f"Bearer {self._token}", "User-Agent": "zerolint-action",
            **({"Content-Type": "application/json"} if data is not None else {})})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                body = resp.read()
        except urllib.error.HTTPError as e:
            raise APIError(method, path, e.code, _message(e.read())) from None
        except (urllib.error.URLError, OSError) as e:
            raise APIError(method, path, 0, str(getattr(e, "reason", e))) from None
        return json.loads(body) if body.strip() else None

    def get_all(self, path: str) -> list:
        """Every item of a paginated list (page by page until a short page)."""
        items: list = []
        sep = "&" if "?" in path else "?"
        for page in range(1, MAX_PAGES + 1):
            got = self.request("GET", f"{path}{sep}per_page={PER_PAGE}&page={page}")
            if not isinstance(got, list):
                raise APIError("GET", path, 200, "expected a list")
            items += got
            if len(got) < PER_PAGE:
                break
        return items

    def post(self, path: str, payload: dict) -> dict:
        return self.request("POST", path, payload) or {}

    def put(self, path: str, payload: dict) -> dict:
        return self.request("PUT", path, payload) or {}

    def delete(self, path: str) -> None:
        self.request("DELETE", path)


def _message(body: bytes) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return body[:200].decode("utf-8", "replace")
    return str(data.get("message", "")) if isinstance(data, dict) else ""
