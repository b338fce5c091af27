"""Check the built site in headless Chromium: every page renders, every image loads, no
internal link is broken, no table is cut off at the window's 1,280 px; a screenshot of every
page is kept.

    python -m book.browser SITE_DIR [--shots DIR] [--chromium chromium]

Serves SITE_DIR on 127.0.0.1 (a thread of this process), starts Chromium headless
(`--no-sandbox`: the tests run as root) with the DevTools protocol on a local port, and
drives it over one websocket (websocket-client): for each HTML file of the site, navigate,
wait for the load event, read the DOM (the page's h1 and text, each <img>'s `complete` and
`naturalWidth`, each link, each table's width against the box it scrolls in), take a
screenshot. Every internal link's target (fragment stripped) must be served with status 200.
A table wider than its box (the theme scrolls it sideways, so a reader sees it cut off) or
than the window is a problem, except on the dated notes of docs/investigations/, kept
verbatim as history (`WIDE_TABLES_ALLOWED`), and a results page's data tables
(`SCROLLING_TABLE_HEADS`), which are listed as wide. Exit 1 with one line per problem, else 0.
"""

from __future__ import annotations

import argparse
import base64
import functools
import http.server
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urldefrag, urlparse

import websocket

LOAD_TIMEOUT_S = 30.0
WINDOW_PX = (1280, 900)
"""The window every page is checked in: a table must fit its width."""
WIDE_TABLES_ALLOWED = ("investigations/",)
"""Pages whose wide tables are not problems: history, kept as it was written."""
SCROLLING_TABLE_HEADS = ("metric", "scenario", "scenario/setting")
"""First header cells of a results page's data tables (a scenario's metrics by scheme, RISE's
tables by setting, the agreement points): as wide as the store's schemes and metrics make
them, scrolled sideways by design. Listed as wide, not problems; the claims tables and
scoreboards, which a reader must see whole, are checked."""
START_TIMEOUT_S = 30.0
# Runs in the page after its load event: what the check needs from the DOM, as JSON.
PROBE_JS = """JSON.stringify({
  h1: (document.querySelector('h1') || {}).textContent || '',
  text: (document.body && document.body.innerText || '').length,
  images: Array.from(document.images).map(i => ({src: i.currentSrc || i.src,
                                               ok: i.complete && i.naturalWidth > 0})),
  links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
  tables: Array.from(document.querySelectorAll('table')).map(t => {
    const box = t.closest('.md-typeset__scrollwrap') || t.parentElement;
    const r = t.getBoundingClientRect(), b = box.getBoundingClientRect();
    return {cut: r.right > b.right + 1 || r.right > document.documentElement.clientWidth + 1,
            width: Math.round(r.width), room: Math.round(b.right - r.left),
            head: ((t.querySelector('th, td') || {}).textContent || '').trim().slice(0, 40)};
  })
})"""


@dataclass
class Report:
    pages: int = 0
    images: int = 0
    links: int = 0
    tables: int = 0
    problems: list[str] = field(default_factory=list)
    wide: list[str] = field(default_factory=list)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # the browser closing a connection early (BrokenPipeError) is not a finding


def serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(_Quiet, directory=str(site))
    srv = _Server(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}/"


class Browser:
    """Headless Chromium driven over the DevTools protocol (one page target)."""

    def __init__(self, chromium: str) -> None:
        exe = shutil.which(chromium)
        if exe is None:
            raise SystemExit(f"error: {chromium}: not found (Debian package `chromium`)")
        self.profile = tempfile.mkdtemp(prefix="priolab-chromium-")
        argv = [exe, "--headless=new", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", "--no-first-run", "--hide-scrollbars",
                f"--window-size={WINDOW_PX[0]},{WINDOW_PX[1]}", "--remote-debugging-port=0",
                f"--user-data-dir={self.profile}", "about:blank"]  # fmt: skip
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + START_TIMEOUT_S
        while not (port_file.is_file() and port_file.read_text().strip()):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                self.close()
                raise SystemExit(f"error: chromium did not start: {err[-2000:]}")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            targets = json.load(r)
        page = next(t for t in targets if t.get("type") == "page")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=LOAD_TIMEOUT_S)
        self.next_id = 0
        self.call("Page.enable")
        self.call("Runtime.enable")

    def call(self, method: str, **params: object) -> dict:
        self.next_id += 1
        msg_id = self.next_id
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def open(self, url: str) -> dict:
        """Navigate, wait for the load event, return the page's probe."""
        self.next_id += 1
        nav_id = self.next_id
        self.ws.send(json.dumps({"id": nav_id, "method": "Page.navigate", "params": {"url": url}}))
        deadline = time.monotonic() + LOAD_TIMEOUT_S
        while time.monotonic() < deadline:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == nav_id and msg.get("result", {}).get("errorText"):
                raise RuntimeError(msg["result"]["errorText"])
            if msg.get("method") == "Page.loadEventFired":
                break
        else:
            raise RuntimeError(f"no load event within {LOAD_TIMEOUT_S:g} s")
        res = self.call("Runtime.evaluate", expression=PROBE_JS, returnByValue=True)
        return json.loads(res["result"]["value"])

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=False)
        path.write_bytes(base64.b64decode(data["data"]))

    def close(self) -> None:
        if getattr(self, "ws", None) is not None:
            self.ws.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def check(site: Path, shots: Path | None, chromium: str = "chromium") -> Report:
    if not (site / "index.html").is_file():
        raise SystemExit(f"error: {site}: no index.html (build the site first: make docs)")
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    srv, base = serve(site)
    rep, seen_links = Report(), set()
    browser = Browser(chromium)
    try:
        for rel in pages:
            url = base + rel
            try:
                probe = browser.open(url)
            except (RuntimeError, websocket.WebSocketException) as e:
                rep.problems.append(f"{rel}: did not load: {e}")
                continue
            rep.pages += 1
            if rel != "404.html" and (not probe["h1"].strip() or probe["text"] == 0):
                rep.problems.append(f"{rel}: rendered no heading or no text")
            for t in probe["tables"]:
                rep.tables += 1
                if t["cut"] and not rel.startswith(WIDE_TABLES_ALLOWED):
                    text = (
                        f"{rel}: a table is cut off at {WINDOW_PX[0]} px ({t['width']} px in "
                        f"{t['room']} px; its first cell: {t['head']!r})"
                    )
                    data = rel.startswith("results/") and t["head"] in SCROLLING_TABLE_HEADS
                    (rep.wide if data else rep.problems).append(text)
            for img in probe["images"]:
                rep.images += 1
                if not img["ok"]:
                    rep.problems.append(f"{rel}: image did not load: {img['src']}")
            for href in probe["links"]:
                target = urldefrag(href)[0]
                if urlparse(target).netloc != urlparse(base).netloc or target in seen_links:
                    continue
                seen_links.add(target)
                rep.links += 1
                if (code := status(target)) != 200:
                    rep.problems.append(f"{rel}: broken link ({code}): {href}")
            if shots is not None:
                shots.mkdir(parents=True, exist_ok=True)
                browser.screenshot(shots / (rel.replace("/", "__").removesuffix(".html") + ".png"))
    finally:
        browser.close()
        srv.shutdown()
    return rep


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m book.browser", description=__doc__)
    ap.add_argument("site", type=Path)
    ap.add_argument("--shots", type=Path, help="folder for one screenshot per page")
    ap.add_argument("--chromium", default="chromium")
    args = ap.parse_args(argv)
    rep = check(args.site, args.shots, args.chromium)
    for w in rep.wide:
        print(f"wide (scrolls): {w}")
    for p in rep.problems:
        print(p)
    print(
        f"{rep.pages} pages, {rep.images} images, {rep.links} internal links, {rep.tables} "
        "tables checked; "
        f"{len(rep.problems)} problem(s)"
    )
    return 1 if rep.problems else 0


if __name__ == "__main__":
    sys.exit(main())
