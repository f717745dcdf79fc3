"""The picture of docs/grafana/mysql-cdc.json's layout (docs/grafana/mysql-cdc-layout.svg): one box a
panel at its grid position (Grafana's grid: 24 columns, rows of 30 px), titled, with its queries'
legends. ``python -m tests.connector.dashboard_layout`` writes it; a test fails when it is stale."""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parents[2] / "docs" / "grafana"
DASHBOARD, PICTURE = DOCS / "mysql-cdc.json", DOCS / "mysql-cdc-layout.svg"
COLUMN, ROW, GAP = 40, 24, 4
_METRIC = re.compile(r"(?:debezium_metrics|mysql_cdc)_\w+")


def _box(panel: dict[str, Any]) -> str:
    g = panel["gridPos"]
    x, y, w, h = g["x"] * COLUMN + GAP, g["y"] * ROW + GAP, g["w"] * COLUMN - 2 * GAP, g["h"] * ROW - 2 * GAP
    lines = [f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="4" fill="#181b1f" stroke="#3d71d9"/>']
    lines.append(
        f'<text x="{x + 8}" y="{y + 20}" font-size="13" font-weight="bold" fill="#d8d9da">{escape(panel["title"])}</text>'
    )
    lines.append(
        f'<text x="{x + 8}" y="{y + 38}" font-size="11" fill="#8e8e8e">{escape(panel["type"])}</text>'
    )
    metrics = dict.fromkeys(m for t in panel["targets"] for m in _METRIC.findall(t["expr"]))
    for i, metric in enumerate(metrics):
        lines.append(
            f'<text x="{x + 8}" y="{y + 58 + 16 * i}" font-size="11" fill="#73bf69">{escape(metric)}</text>'
        )
    return "\n".join(lines)


def render() -> str:
    dashboard = json.loads(DASHBOARD.read_text())
    panels = dashboard["panels"]
    height = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in panels) * ROW
    width = 24 * COLUMN
    body = "\n".join(_box(p) for p in panels)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif">\n<rect width="{width}" height="{height}" fill="#111217"/>\n{body}\n</svg>\n'
    )


if __name__ == "__main__":
    PICTURE.write_text(render())
