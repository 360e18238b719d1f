"""A small GitHub REST client on the standard library (urllib), for the Action's suggestions (github_review.py).

The token goes only into the Authorization header of requests to the API URL the runner names (GITHUB_API_URL);
paths are built here, never taken from a response, so a crafted answer cannot send the token elsewhere: a redirect
is followed only within the API's own scheme, host and port (urllib's default handler copies the Authorization
header to wherever a response points). Errors carry the HTTP status and GitHub's own `message`, never the request's
headers.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import Any

PER_PAGE = 100
MAX_PAGES = 30  # 3,000 items: GitHub's own cap for a pull request's files


class APIError(Exception):
    def __init__(self, method: str, path: str, status: int, message: str) -> None:
        super().__init__(f"{method} {path}: HTTP {status}: {message}")
        self.status = status


class RedirectRefused(Exception):
    def __init__(self, code: int, target: str) -> None:
        super().__init__(f"refused a redirect ({code}) to {target}: the token goes to the API's own host only")
        self.code = code


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urllib.parse.urlsplit(url)
    port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), port


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    def __init__(self, origin: tuple[str, str, int | None]) -> None:
        self.origin = origin

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        target = _origin(urllib.parse.urljoin(req.full_url, newurl))
        if target != self.origin:
            raise RedirectRefused(code, f"{target[0]}://{target[1]}" + (f":{target[2]}" if target[2] else ""))
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class GitHubAPI:
    def __init__(self, base_url: str, token: str, timeout: float = 30.0) -> None:
        scheme = urllib.parse.urlsplit(base_url).scheme
        if scheme not in ("https", "http"):
            raise ValueError(f"GITHUB_API_URL must be an http(s) URL, not {base_url!r}")
        self.base, self._token, self.timeout = base_url.rstrip("/"), token, timeout
        self._opener = urllib.request.build_opener(_SameOriginRedirects(_origin(self.base)))

    def __repr__(self) -> str:  # never the token
        return f"GitHubAPI({self.base!r})"

    def request(self, method: str, path: str, payload: dict | None = None) -> Any:  # the parsed JSON body
        data = None if payload is None else json.dumps(payload).encode("utf-8")
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={
            "Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
            "Authorization": f"Bearer {self._token}", "User-Agent": "zerolint-action",
            **({"Content-Type": "application/json"} if data is not None else {})})
        try:
            with self._opener.open(req, timeout=self.timeout) as resp:
                body = resp.read()
        except RedirectRefused as e:
            raise APIError(method, path, e.code, str(e)) from None
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
