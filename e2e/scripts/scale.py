#!/usr/bin/env python3
"""The scale benchmark's client side (e2e/scripts/scale.sh): objects made fast, their statuses
waited for, and the API server's and a manager's metrics read and compared. Only the standard
library and PyYAML (for the kubeconfig).

Usage:
  scale.py create KUBECONFIG PATH PREFIX FROM TO [WORKERS]
      POST objects PREFIX-FROM .. PREFIX-(TO-1) to the collection PATH (e.g.
      /apis/ship.example.com/v1/namespaces/scale/frigates) over WORKERS (default 4) kept-alive
      connections; prints how many and how long.
  scale.py wait KUBECONFIG PATH CONDITION EXPECT TIMEOUT
      List and watch PATH until EXPECT objects, and every object there is, have the condition
      CONDITION with status True
      (through API server restarts: a broken watch is resumed, a 410 lists again); prints one
      JSON line: the wall-clock time the last one was seen ("done"), how many objects and how
      many with the condition, the requests it made (LIST pages, WATCHes) and how many of them
      were refused, by "VERB code" (an API server that is starting answers 429). Progress on
      stderr every SCALE_PROGRESS_SECONDS (default 10) seconds. Exits 1 when TIMEOUT seconds pass first (the JSON line still printed).
  scale.py apiserver KUBECONFIG
      The API server's /metrics, as JSON on stdout: apiserver_request_total by verb, group,
      resource, subresource and code, and API Priority and Fairness' dispatched and rejected
      requests by flow schema.
  scale.py requests BEFORE AFTER RESOURCES MINUTES [OWN...]
      Compare two `apiserver` snapshots (AFTER taken later, of the same API server process; an
      empty BEFORE stands for a restarted one): one JSON object with the requests on RESOURCES
      (comma-separated GROUP/RESOURCE, `*` for every resource of a group, an empty group for the
      core API: "ship.example.com/*,/events,events.k8s.io/events") by "VERB
      resource[/subresource]", less OWN ("VERB resource=N": the benchmark's own), their total and
      the mutating ones, each also per minute over MINUTES (all served: not the 429s), the 429s
      of every client, the watch events the API server sent on RESOURCES' groups (to every
      watcher: a WATCH is counted by apiserver_request_total only when it ends, and the first
      list of a client with WatchList is the initial events of a WATCH), and what
      the service-accounts flow schema (the manager's identity) dispatched and APF rejected.
  scale.py manager URL [CONTROLLER]
      A manager's /metrics (plain HTTP, or HTTPS with the bearer token in the file
      SCALE_METRICS_TOKEN_FILE, the server's certificate not checked): one JSON object with reconciles (all results) and the
      p50 and p99 of controller_runtime_reconcile_time_seconds (of CONTROLLER, else of every
      controller), interpolated in its buckets as Prometheus' histogram_quantile does (also
      in milliseconds, p50_ms and p99_ms, "n/a" without reconciles).
  scale.py get FILE KEY       a field of a JSON file (- for stdin; KEY a.b nested), nothing
                              when null: what the shell reads of the results (no jq needed)
  scale.py own FILE RESOURCE  the served requests of a `wait` result, as OWN arguments
  scale.py refused FILE CODE  how many requests of a `wait` result were answered CODE
  scale.py describe FILE      a `requests` result as "total (VERB resource n, ...)"
  scale.py final FILE CONDITION  of a list (kubectl get -o json): how many objects, how many
                              without CONDITION True, how many Terminating
"""
import base64
import http.client
import json
import os
import re
import ssl
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

import yaml

# ---------------------------------------------------------------- the API server


def connector(kubeconfig):
    """A function that opens a connection to the API server of KUBECONFIG (its current context:
    a client certificate or a bearer token), and the headers every request carries."""
    with open(kubeconfig) as f:
        config = yaml.safe_load(f)
    context_name = config["current-context"]
    context = next(c["context"] for c in config["contexts"] if c["name"] == context_name)
    cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == context["cluster"])
    user = next(u["user"] for u in config["users"] if u["name"] == context["user"])
    url = urllib.parse.urlparse(cluster["server"])
    tls = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
    headers = {"Accept": "application/json"}
    if "client-certificate-data" in user:
        # ssl wants files: written once, readable by us only, removed at exit.
        keep = tempfile.mkdtemp(prefix="scale-py.")
        cert, key = os.path.join(keep, "tls.crt"), os.path.join(keep, "tls.key")
        for path, field in ((cert, "client-certificate-data"), (key, "client-key-data")):
            with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as f:
                f.write(base64.b64decode(user[field]))
        tls.load_cert_chain(cert, key)
        os.unlink(cert)
        os.unlink(key)
        os.rmdir(keep)
    if "token" in user:
        headers["Authorization"] = "Bearer " + user["token"]

    def connect(timeout=30):
        return http.client.HTTPSConnection(url.hostname, url.port, context=tls, timeout=timeout)

    return connect, headers


def request(connect, headers, method, path, body=None):
    """One request on a new connection: (status, decoded JSON or text)."""
    conn = connect()
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        data = response.read()
    finally:
        conn.close()
    return response.status, data


# ---------------------------------------------------------------- create


def create(kubeconfig, path, prefix, first, last, workers=4):
    connect, headers = connector(kubeconfig)
    headers = dict(headers, **{"Content-Type": "application/json"})
    api_version = "/".join(path.split("/")[2:4])
    kind = os.environ.get("SCALE_KIND", "Frigate")
    names = iter(range(first, last))
    lock = threading.Lock()
    failures = []

    def work():
        conn = connect()
        while True:
            with lock:
                i = next(names, None)
            if i is None or failures:
                break
            body = json.dumps({"apiVersion": api_version, "kind": kind,
                               "metadata": {"name": f"{prefix}-{i:05d}"}, "spec": {}})
            for attempt in range(5):
                try:
                    conn.request("POST", path, body=body, headers=headers)
                    response = conn.getresponse()
                    data = response.read()
                except (OSError, http.client.HTTPException):
                    conn.close()
                    conn = connect()
                    time.sleep(0.5 * (attempt + 1))
                    continue
                if response.status in (201, 409):  # 409: made by an attempt whose answer was lost
                    break
                if response.status in (429, 500, 503, 504):
                    time.sleep(0.5 * (attempt + 1))
                    continue
                failures.append(f"{prefix}-{i:05d}: {response.status} {data[:300]!r}")
                break
            else:
                failures.append(f"{prefix}-{i:05d}: no answer after 5 attempts")
        conn.close()

    t0 = time.time()
    threads = [threading.Thread(target=work) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        sys.exit("create: " + "; ".join(failures[:5]))
    print(f"created {last - first} objects in {time.time() - t0:.1f} s")


# ---------------------------------------------------------------- wait


def has_condition(obj, condition):
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == condition and c.get("status") == "True":
            return True
    return False


def wait(kubeconfig, path, condition, expect, timeout):
    connect, headers = connector(kubeconfig)
    deadline = time.time() + timeout
    objects = {}  # name/namespace -> has the condition
    requests = {"LIST": 0, "WATCH": 0}
    refused = {}  # "VERB code" -> how many of the requests above were answered with that code

    def refuse(verb, status):
        refused[f"{verb} {status}"] = refused.get(f"{verb} {status}", 0) + 1
    state = {"done": None, "last_progress": 0.0}

    def key(obj):
        m = obj["metadata"]
        return f"{m.get('namespace', '')}/{m['name']}"

    def count():
        return sum(objects.values())

    def check():
        now = time.time()
        if state["done"] is None and count() >= expect and count() == len(objects):
            state["done"] = now
        if now - state["last_progress"] >= float(os.environ.get("SCALE_PROGRESS_SECONDS", "10")):
            state["last_progress"] = now
            print(f"{time.strftime('%H:%M:%S')} scale.py wait: {count()}/{expect} with {condition} "
                  f"({len(objects)} objects)", file=sys.stderr, flush=True)

    def relist():
        objects.clear()
        cont = ""
        while True:
            q = "limit=500" + (f"&continue={urllib.parse.quote(cont)}" if cont else "")
            requests["LIST"] += 1
            status, data = request(connect, headers, "GET", f"{path}?{q}")
            if status != 200:
                refuse("LIST", status)
                raise OSError(f"LIST {status}")
            page = json.loads(data)
            for obj in page["items"]:
                objects[key(obj)] = has_condition(obj, condition)
            cont = page["metadata"].get("continue", "")
            if not cont:
                return page["metadata"]["resourceVersion"]

    version = None
    while state["done"] is None and time.time() < deadline:
        try:
            if version is None:
                version = relist()
                check()
                continue
            requests["WATCH"] += 1
            seconds = max(1, min(290, int(deadline - time.time())))
            conn = connect(timeout=seconds + 30)
            q = f"watch=1&allowWatchBookmarks=true&resourceVersion={version}&timeoutSeconds={seconds}"
            conn.request("GET", f"{path}?{q}", headers=headers)
            response = conn.getresponse()
            if response.status != 200:
                refuse("WATCH", response.status)
                conn.close()
                raise OSError(f"WATCH {response.status}")
            while state["done"] is None:
                line = response.readline()
                if not line:
                    break
                event = json.loads(line)
                obj = event["object"]
                if event["type"] == "ERROR":
                    if obj.get("code") == 410:
                        version = None  # too old: list again
                    break
                version = obj["metadata"]["resourceVersion"]
                if event["type"] in ("ADDED", "MODIFIED"):
                    objects[key(obj)] = has_condition(obj, condition)
                elif event["type"] == "DELETED":
                    objects.pop(key(obj), None)
                check()
            conn.close()
        except (OSError, http.client.HTTPException, ValueError):
            # The API server is away (restarting) or said no: try again shortly.
            time.sleep(1)
        check()
    print(json.dumps({"done": state["done"], "objects": len(objects), "with_condition": count(),
                      "requests": requests, "refused": refused}))
    return 0 if state["done"] is not None else 1


# ---------------------------------------------------------------- metrics

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def samples(text):
    """(name, labels dict, value) of every sample of a Prometheus or OpenMetrics text."""
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if m:
            yield m.group(1), dict(LABEL.findall(m.group(2) or "")), float(m.group(3))


def apiserver(kubeconfig):
    connect, headers = connector(kubeconfig)
    status, data = request(connect, dict(headers, Accept="text/plain"), "GET", "/metrics")
    if status != 200:
        sys.exit(f"apiserver: /metrics answered {status}")
    out = {"requests": {}, "dispatched": {}, "rejected": {}, "watch_events": {}, "time": time.time()}
    for name, labels, value in samples(data.decode()):
        if name == "apiserver_request_total":
            k = "|".join(labels.get(x, "") for x in ("verb", "group", "resource", "subresource", "code"))
            out["requests"][k] = out["requests"].get(k, 0) + value
        elif name == "apiserver_watch_events_total":
            # Labelled by resource (Kubernetes 1.32 on; by kind before, then only a whole
            # group's `*` counts them).
            k = labels.get("group", "") + "|" + labels.get("resource", labels.get("kind", ""))
            out["watch_events"][k] = out["watch_events"].get(k, 0) + value
        elif name in ("apiserver_flowcontrol_dispatched_requests_total",
                      "apiserver_flowcontrol_rejected_requests_total"):
            which = "dispatched" if "dispatched" in name else "rejected"
            k = labels.get("flow_schema", "")
            out[which][k] = out[which].get(k, 0) + value
    json.dump(out, sys.stdout)


MUTATING = {"POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"}


def requests_between(before_path, after_path, resources, minutes, own):
    wanted = {tuple(r.split("/", 1)) for r in resources.split(",")}
    after = json.load(open(after_path))
    before = json.load(open(before_path)) if os.path.getsize(before_path) else {}
    by = {}
    too_many = 0
    for k, v in after["requests"].items():
        verb, g, resource, subresource, code = k.split("|")
        v -= before.get("requests", {}).get(k, 0)
        if v <= 0:
            continue
        if code == "429":
            # Refused, not served: counted apart from the requests below.
            too_many += v
            continue
        if (g, resource) not in wanted and (g, "*") not in wanted:
            continue
        name = f"{verb} {resource}" + (f"/{subresource}" if subresource else "")
        by[name] = by.get(name, 0) + v
    for spec in own:
        name, n = spec.rsplit("=", 1)
        by[name] = by.get(name, 0) - int(n)
    by = {k: int(v) for k, v in sorted(by.items()) if v > 0}
    total = sum(by.values())
    writes = sum(v for k, v in by.items() if k.split()[0] in MUTATING)

    def delta(which):
        a, b = after.get(which, {}), before.get(which, {})
        return int(a.get("service-accounts", 0) - b.get("service-accounts", 0))

    events = 0
    for k, v in after.get("watch_events", {}).items():
        g, r = k.split("|", 1)
        if (g, "*") in wanted or (g, r) in wanted:
            events += v - before.get("watch_events", {}).get(k, 0)
    per = (lambda n: round(n / minutes, 1)) if minutes > 0 else (lambda n: None)
    json.dump({"by": by, "total": total, "writes": writes, "total_per_minute": per(total),
               "writes_per_minute": per(writes), "too_many_requests": int(too_many),
               "manager_dispatched": delta("dispatched"), "manager_rejected": delta("rejected"),
               "watch_events": int(events)},
              sys.stdout)


def quantile(q, buckets):
    """histogram_quantile: buckets is [(upper bound, cumulative count)], sorted, ending at +Inf."""
    total = buckets[-1][1]
    if total == 0:
        return None
    rank = q * total
    lower, below = 0.0, 0.0
    for bound, cumulative in buckets:
        if cumulative >= rank:
            if bound == float("inf"):
                return lower  # as Prometheus: the last finite bound
            return lower + (bound - lower) * (rank - below) / max(cumulative - below, 1e-9)
        lower, below = bound, cumulative
    return lower


def manager(url, controller):
    request_ = urllib.request.Request(url)
    context = None
    if url.startswith("https:"):
        # A pod's metrics endpoint: its serving certificate is its own (not checked here), the
        # token of SCALE_METRICS_TOKEN_FILE one that may read metrics.
        context = ssl._create_unverified_context()
        with open(os.environ["SCALE_METRICS_TOKEN_FILE"]) as f:
            request_.add_header("Authorization", "Bearer " + f.read().strip())
    with urllib.request.urlopen(request_, timeout=10, context=context) as response:
        text = response.read().decode()
    reconciles = 0.0
    buckets = {}
    for name, labels, value in samples(text):
        if controller and labels.get("controller") != controller:
            continue
        if name in ("controller_runtime_reconcile_total", "controller_runtime_reconcile"):
            reconciles += value
        elif name == "controller_runtime_reconcile_time_seconds_bucket":
            le = float("inf") if labels["le"] in ("+Inf", "Inf") else float(labels["le"])
            buckets[le] = buckets.get(le, 0) + value
    ordered = sorted(buckets.items())
    out = {"reconciles": int(reconciles), "p50": None, "p99": None, "p50_ms": "n/a", "p99_ms": "n/a"}
    if ordered:
        out["p50"], out["p99"] = quantile(0.5, ordered), quantile(0.99, ordered)
        for q in ("p50", "p99"):
            if out[q] is not None:
                out[q + "_ms"] = round(out[q] * 1000, 1)
    json.dump(out, sys.stdout)


# ---------------------------------------------------------------- reading the results (no jq)


def load_json(path):
    return json.load(sys.stdin if path == "-" else open(path))


def get(path, key):
    """A field of a JSON object (KEY a.b for a nested one); nothing for null or a missing one."""
    value = load_json(path)
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if value is not None:
        print(value if not isinstance(value, (dict, list)) else json.dumps(value))


def own(path, resource):
    """The served LISTs and WATCHes of a `wait` result, as OWN arguments of `requests`."""
    result = load_json(path)
    for verb in ("LIST", "WATCH"):
        refused = sum(n for k, n in result.get("refused", {}).items() if k.startswith(verb + " "))
        print(f"{verb} {resource}={result['requests'][verb] - refused}")


def refused(path, code):
    """How many requests of a `wait` result were answered CODE."""
    print(sum(n for k, n in load_json(path).get("refused", {}).items() if k.endswith(" " + code)))


def describe(path):
    """A `requests` result as "total (VERB resource n, ...)"."""
    result = load_json(path)
    print(f"{result['total']} (" + ", ".join(f"{k} {v}" for k, v in result["by"].items()) + ")")


def final(path, condition):
    """Of a list of objects: how many, how many without CONDITION True, how many Terminating."""
    items = load_json(path)["items"]
    without = sum(1 for o in items if not has_condition(o, condition))
    terminating = sum(1 for o in items if o["metadata"].get("deletionTimestamp"))
    print(len(items), without, terminating)


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    command, args = argv[1], argv[2:]
    if command == "create" and len(args) in (5, 6):
        create(args[0], args[1], args[2], int(args[3]), int(args[4]), int(args[5]) if len(args) == 6 else 4)
    elif command == "wait" and len(args) == 5:
        return wait(args[0], args[1], args[2], int(args[3]), float(args[4]))
    elif command == "apiserver" and len(args) == 1:
        apiserver(args[0])
    elif command == "requests" and len(args) >= 4:
        requests_between(args[0], args[1], args[2], float(args[3]), args[4:])
    elif command == "manager" and len(args) in (1, 2):
        manager(args[0], args[1] if len(args) == 2 else None)
    elif command == "get" and len(args) == 2:
        get(args[0], args[1])
    elif command == "own" and len(args) == 2:
        own(args[0], args[1])
    elif command == "refused" and len(args) == 2:
        refused(args[0], args[1])
    elif command == "describe" and len(args) == 1:
        describe(args[0])
    elif command == "final" and len(args) == 2:
        final(args[0], args[1])
    else:
        sys.exit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
