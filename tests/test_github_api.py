"""The Action's REST client (zerolint/integrations/github_api.py) and redirects, over real HTTP on 127.0.0.1: a
redirect within the API's host is followed with the token; one to another host (here another port) is refused
before anything is sent there, so the token never leaves the API's origin."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from zerolint.integrations.github_api import APIError, GitHubAPI

TOKEN = "ghs_redirectTestToken0123456789"


def serve(routes: dict[str, tuple[int, dict]], seen: list[tuple[str, str | None]]):
    """A server answering `routes[path]` = (status, headers) with a JSON body; records (path, Authorization)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append((self.path, self.headers.get("Authorization")))
            status, headers = routes.get(self.path, (404, {}))
            data = json.dumps({"path": self.path}).encode()
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def hosts():
    api_seen: list = []
    other_seen: list = []
    other = serve({"/steal": (200, {})}, other_seen)
    other_url = f"http://127.0.0.1:{other.server_address[1]}"
    api = serve({"/moved": (301, {"Location": "/target"}), "/target": (200, {}),
                 "/away": (302, {"Location": other_url + "/steal"}),
                 "/away-by-name": (307, {"Location": f"http://localhost:{other.server_address[1]}/steal"})}, api_seen)
    yield f"http://127.0.0.1:{api.server_address[1]}", api_seen, other_url, other_seen
    api.shutdown()
    other.shutdown()


def test_a_redirect_within_the_api_is_followed(hosts):
    base, api_seen, _, other_seen = hosts
    assert GitHubAPI(base, TOKEN).request("GET", "/moved") == {"path": "/target"}
    assert api_seen == [("/moved", f"Bearer {TOKEN}"), ("/target", f"Bearer {TOKEN}")]
    assert other_seen == []


@pytest.mark.parametrize("path,code,where", [("/away", 302, "127.0.0.1"), ("/away-by-name", 307, "localhost")])
def test_a_redirect_to_another_host_is_refused_and_nothing_is_sent_there(hosts, path, code, where):
    base, api_seen, other_url, other_seen = hosts
    port = other_url.rsplit(":", 1)[1]
    with pytest.raises(APIError) as err:
        GitHubAPI(base, TOKEN).request("GET", path)
    assert str(err.value) == (f"GET {path}: HTTP {code}: refused a redirect ({code}) to http://{where}:{port}: "
                              "the token goes to the API's own host only")
    assert err.value.status == code
    assert api_seen == [(path, f"Bearer {TOKEN}")]
    assert other_seen == []  # not even a request without the token
