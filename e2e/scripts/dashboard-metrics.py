#!/usr/bin/env python3
"""Check every query of the Grafana dashboards in DIR (grafana/*.json, as the grafana plugin
writes them) against a scrape of the manager's /metrics (OpenMetrics text, in METRICS): each
metric a query reads has samples there, and each label it groups by (`by (...)`, but the labels
Prometheus adds when it scrapes: job, namespace, pod, instance) is on them.

Usage: dashboard-metrics.py DIR METRICS    Prints one line per dashboard; exits 1 naming every
query that reads what the manager does not serve.
"""
import json
import pathlib
import re
import sys

SCRAPE_LABELS = {"job", "namespace", "pod", "instance"}
NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"


def samples(text):
    """metric name -> the label names of its samples (a set per sample)."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(rf"({NAME})(\{{([^}}]*)\}})?\s", line)
        if not m:
            continue
        labels = set(re.findall(rf"({NAME})=\"", m.group(3) or ""))
        out.setdefault(m.group(1), []).append(labels)
    return out


def queries(dashboard):
    """(where, query) of every panel target and templating variable."""
    def panels(ps):
        for p in ps:
            yield p
            yield from panels(p.get("panels", []))

    for p in panels(dashboard.get("panels", [])):
        for t in p.get("targets", []):
            yield f"panel {p.get('title')!r}", t["expr"]
    for v in dashboard.get("templating", {}).get("list", []):
        q = v.get("query")
        if isinstance(q, dict):
            q = q.get("query")
        if v.get("type") == "query" and q:
            yield f"variable {v.get('name')!r}", q


def main():
    folder, metrics = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    served = samples(metrics.read_text())
    files = sorted(folder.glob("*.json"))
    if not files:
        sys.exit(f"no dashboards in {folder}")
    problems = []
    for f in files:
        checked, before = 0, len(problems)
        for where, q in queries(json.loads(f.read_text())):
            names = re.findall(rf"({NAME})\s*\{{", q) + re.findall(rf"label_values\(\s*({NAME})", q)
            names = [n for n in names if n not in ("label_values",)]
            if not names:
                problems.append(f"{f.name}: {where}: no metric found in {q!r}")
                continue
            grouped = set()
            for by in re.findall(r"\bby\s*\(([^)]*)\)", q):
                grouped |= {l.strip() for l in by.split(",") if l.strip()}
            for n in names:
                checked += 1
                if n not in served:
                    problems.append(f"{f.name}: {where}: {n} is not served ({q})")
                    continue
                for label in sorted(grouped - SCRAPE_LABELS):
                    if not any(label in s for s in served[n]):
                        problems.append(f"{f.name}: {where}: {n} has no label {label!r} ({q})")
        missing = len(problems) - before
        print(f"{f.name}: {checked} metric reads, " + (f"{missing} not served" if missing else "each served by the manager"))
    if problems:
        print("\n".join(problems), file=sys.stderr)
        sys.exit(1)


main()
