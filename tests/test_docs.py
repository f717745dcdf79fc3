"""The documentation: the README is a landing page, the site builds strictly and has no broken link in
a real browser (headless Chromium, Debian's ``chromium`` from ``.ci/setup``), and the fidelity page
names every difference the golden tests allow."""

from __future__ import annotations

import functools
import http.server
import importlib
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlsplit

import pytest

from connector.config import REFUSED

ROOT = Path(__file__).resolve().parents[1]
GOLDEN_TESTS = sorted(path.stem for path in (ROOT / "tests" / "golden").glob("test_golden_*.py"))
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run")


def test_readme_is_a_landing_page_with_the_two_commands_and_live_links():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.encode()) <= 15 * 1024
    assert "bash .ci/setup && .venv/bin/mysql-cdc demo" in readme
    assert "bash .ci/setup && .venv/bin/python -m pytest" in readme
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    assert links
    missing = [link for link in links if "://" not in link and not (ROOT / link).exists()]
    assert not missing, missing


def test_the_fidelity_page_names_every_difference_the_golden_tests_allow():
    page = (ROOT / "docs" / "fidelity.md").read_text()
    names = []
    for module in map(importlib.import_module, (f"tests.golden.{name}" for name in GOLDEN_TESTS)):
        names += [known.name for known in getattr(module, "KNOWN", [])]
        names += [known.name for case in getattr(module, "KNOWN_BY_CASE", {}).values() for known in case]
    assert len(names) >= 10
    missing = [name for name in names if f"| {name} |" not in page]
    assert not missing, missing


def test_moving_from_debezium_names_every_refused_key():
    page = (ROOT / "docs" / "guides" / "from-debezium.md").read_text()
    missing = [key for key in REFUSED if f"`{key}" not in page]
    assert not missing, missing


class _Links(HTMLParser):
    """The link targets and element ids of a rendered page."""

    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(values["id"] or "")
        target = values.get("href") if tag in ("a", "link") else values.get("src") if tag == "img" else None
        if target:
            self.targets.append(target)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        pass


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    assert found, "headless Chromium is missing: bash .ci/setup installs Debian's chromium"
    return found


def rendered(url: str) -> _Links:
    done = subprocess.run(
        [chromium(), *CHROMIUM_FLAGS, "--dump-dom", url], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and "</html>" in done.stdout, done.stderr[-2000:]
    links = _Links()
    links.feed(done.stdout)
    return links


@pytest.mark.slow  # headless Chromium started for every page: an external program, like the rule's
def test_every_page_and_link_of_the_site_resolves_in_chromium(site: Path, served: str):
    pages: dict[str, _Links] = {}
    queue = [served]
    pending_anchors: list[tuple[str, str, str]] = []
    broken: list[str] = []
    while queue:
        url = queue.pop()
        if url in pages:
            continue
        pages[url] = rendered(url)
        for target in pages[url].targets:
            absolute, fragment = urldefrag(urljoin(url, target))
            if not absolute.startswith(served):
                continue  # outside the site (none is fetched)
            path = site / urlsplit(absolute).path.removeprefix("/")
            if not (path / "index.html" if absolute.endswith("/") else path).exists():
                broken.append(f"{url}: {target}")
            elif absolute.endswith("/"):
                queue.append(absolute)
                if fragment:
                    pending_anchors.append((url, absolute, fragment))
    broken += [
        f"{src}: #{frag} not in {dst}" for src, dst, frag in pending_anchors if frag not in pages[dst].ids
    ]
    assert not broken, broken
    # Every page of the navigation is reached from the home page (pages outside it may exist).
    assert len(pages) >= 14, sorted(pages)


def test_chromium_screenshots_the_site(served: str, tmp_path: Path):
    # The screenshot in the docs (docs/images/site.png) was taken with this command.
    shot = tmp_path / "site.png"
    done = subprocess.run(
        [chromium(), *CHROMIUM_FLAGS, "--window-size=1280,800", f"--screenshot={shot}", served],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    assert (ROOT / "docs" / "images" / "site.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
