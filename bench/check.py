#!/usr/bin/env python3
"""bench-check: rerun the benchmarks of docs/benchmarks.md, compare their ratios with bench/baseline.json.

usage: bench/check.py                      run, print the table, write bench/results/<date>-<commit>/check-<time>/,
                                            exit 1 on a regression beyond the noise in bench/baseline.json
       bench/check.py --update-baseline    the same, then write its ratios into bench/baseline.json
       bench/check.py --baseline-from-results
                                            rewrite bench/baseline.json from the result folders it names (no runs)
       bench/check.py --pool-baseline DIR...
                                            rewrite bench/baseline.json from several check folders (no runs):
                                            the ratio is the median of their medians and the noise their spread,
                                            which one sequence's three runs understate
       bench/check.py --ratios DIR         print the ratios of a check folder already written (no runs)

Run from the repository root (make bench-check does, after make bench). Environment:
  HERALD_BIN             the herald measured (default .build/release/herald)
  HERALD_BENCH_BASELINE  the C AMQP baseline (default bench/amqp-baseline)
  HERALD_BENCH_CA        the sink's CA (default .state/demo/ca.pem, from make demo)
  HERALD_BENCH_KEY       the provider key (default .state/demo/AuthKey_DEMOKEY123.p8)
  HERALD_BENCH_SCHEMAS   the migrations the herald applies (default schemas)
  HERALD_SERVICES_ENV    the dev services' URLs (default .state/services.env, from make services-up)
  HERALD_SINK_PORT       the nginx sink's port (default 58443); deploy/dev/sink.sh start is run if nothing
                         listens there, and stop at the end (only then)
  BENCH_CHECK_ROUNDS     Herald runs per benchmark (default 3; each has a baseline run before and after it)
  BENCH_CHECK_ONLY       a comma list of apns, amqp, broadcast, jobs (default all)
  BENCH_CHECK_APNS_COUNT, BENCH_CHECK_AMQP_COUNT, BENCH_CHECK_AMQP_QUEUES, BENCH_CHECK_BROADCAST_DEVICES,
  BENCH_CHECK_JOBS       the shapes (defaults: 300000, 100000, classic,quorum, 300000, 100000); a benchmark whose
                         shape differs from its baseline's is run and printed but not gated

Each benchmark alternates baseline and Herald, B H B H … B, and a Herald run's ratio is its rate over the mean of
the baseline runs just before and after it (docs/benchmarks.md#method). A benchmark fails when the median of its
ratios is below the baseline ratio minus its noise (the spread, max - min, of the runs baseline.json came from).
"""
import datetime
import json
import os
import re
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ratios import h2load as h2load_rate  # noqa: E402  (bench/ratios.py: h2load's req/s from its output)

BASELINE_FILE = os.environ.get("BENCH_CHECK_BASELINE", "bench/baseline.json")
TOKEN = "0123456789abcdef" * 4


class Var:
    """An argument recorded in commands.sh as an environment variable, run with its value."""

    def __init__(self, name, value, suffix=""):
        self.name, self.value, self.suffix = name, value, suffix

    def shell(self):
        return f'"${{{self.name}}}{self.suffix}"'

    def __str__(self):
        return f"{self.value}{self.suffix}"


# The benchmarks: name -> (sequence subdirectory, Herald's files and rate key, the baseline's files and rate key).
def definitions(queues=("classic", "quorum")):
    table = {}
    for shape in ("1x1000", "4x250"):
        table[f"apns-{shape}"] = dict(
            dir=f"apns/{shape}", herald="apns-{label}-batch-{i}.json", herald_key="sends_per_second",
            base="h2load-{i}.txt", base_key=None, baseline=f"h2load {shape}")
    for queue in queues:
        for phase in ("publish", "consume", "concurrent"):
            table[f"amqp-{queue}-{phase}"] = dict(
                dir="amqp", herald="amqp-{label}-" + queue + "-{i}.json", herald_key=f"{phase}_per_second",
                base="amqp-c-" + queue + "-{i}.json", base_key=f"{phase}_per_second",
                baseline=f"bench/amqp-baseline {phase}", cpu_key=f"{phase}_cpu_us_per_message",
                base_cpu_key=f"{phase}_cpu_us_per_message")
    table["broadcast"] = dict(
        dir="broadcast", herald="broadcast-{label}-{i}.json", herald_key="notifications_per_second",
        base="h2load-{i}.txt", base_key=None, baseline="h2load 1x1000")
    table["jobs"] = dict(
        dir="jobs", herald="jobs-{label}-{i}.json", herald_key="notifications_per_second",
        base="amqp-baseline-{i}.json", base_key="concurrent_per_second", baseline="bench/amqp-baseline concurrent",
        cpu_key="worker_cpu_us_per_notification", base_cpu_key="concurrent_cpu_us_per_message")
    table["broadcast"]["cpu_key"] = "worker_cpu_us_per_notification"
    return table


def read_rate(path, key):
    """The rate a run's file reports: h2load's req/s, or `key` of a --json output."""
    if not os.path.exists(path):
        return None
    if path.endswith(".txt"):
        return h2load_rate(path)
    text = open(path).read()
    try:
        value = json.loads(text).get(key)
    except ValueError:
        return None
    return float(value) if value else None


def read_cpu(path, key=None):
    """CPU µs per request or notification, where the file (or h2load's .time beside it) says: `key` of a --json
    output when given, else the first it has."""
    try:
        if path.endswith(".txt"):
            requests = re.search(r"requests: ([0-9]+) total", open(path).read())
            user, system = map(float, open(path + ".time").read().split()[-2:])
            return (user + system) * 1e6 / int(requests.group(1))
        data = json.load(open(path))
        if key is not None:
            return float(data[key]) if key in data else None
        count = data.get("count") or data.get("notifications")
        if "cpu_seconds" in data and count:
            return data["cpu_seconds"] * 1e6 / count
        for key in ("cpu_us_per_notification", "worker_cpu_us_per_notification"):
            if key in data:
                return float(data[key])
    except (OSError, ValueError, AttributeError, TypeError, IndexError):
        pass
    return None


def ratios(directory, definition, label):
    """Per Herald run: (round, ratio to the mean of the baseline runs before and after it, Herald's and the
    baseline's CPU µs per request where known). A round without a baseline after it uses the one before."""
    folder = os.path.join(directory, definition["dir"])
    if not os.path.isdir(folder):
        return []
    pattern = re.escape(definition["herald"]).replace(r"\{label\}", re.escape(label)).replace(r"\{i\}", r"(\d+)")
    rounds = sorted(int(m.group(1)) for m in (re.fullmatch(pattern, n) for n in os.listdir(folder)) if m)
    runs = []
    for i in rounds:
        herald_path = os.path.join(folder, definition["herald"].format(label=label, i=i))
        herald = read_rate(herald_path, definition["herald_key"])
        base_paths = [os.path.join(folder, definition["base"].format(i=j)) for j in (i, i + 1)]
        bases = [b for b in (read_rate(p, definition["base_key"]) for p in base_paths) if b]
        if not herald or not bases:
            continue
        base_cpu = [c for c in (read_cpu(p, definition.get("base_cpu_key")) for p in base_paths) if c is not None]
        runs.append(dict(round=i, ratio=round(herald / statistics.mean(bases), 4), herald=herald,
                         baseline=round(statistics.mean(bases), 1), herald_cpu_us=read_cpu(herald_path, definition.get("cpu_key")),
                         baseline_cpu_us=round(statistics.mean(base_cpu), 2) if base_cpu else None))
    return runs


def summary(runs):
    values = [r["ratio"] for r in runs]
    return dict(ratio=round(statistics.median(values), 3), noise=round(max(values) - min(values), 3),
                min=round(min(values), 3), max=round(max(values), 3), runs=len(values))


# ---------------------------------------------------------------------------------------------------------------
# Running.


class Runner:
    def __init__(self, out):
        self.out = out
        self.folders = set()
        self.commands = open(os.path.join(out, "commands.sh"), "w")
        self.commands.write(
            "#!/bin/bash\n# Written by bench/check.py (make bench-check), in the order run, from the repository root.\n"
            "# HERALD_BIN, HERALD_BENCH_BASELINE, HERALD_BENCH_CA, HERALD_BENCH_KEY, HERALD_BENCH_SCHEMAS as its\n"
            "# usage says; HERALD_AMQP_URL and HERALD_DATABASE_URL from .state/services.env; OUT is this directory;\n"
            "# BENCH_TMP holds the request bodies; DB is a database bench-check recreates before every pipeline run.\n"
            "set -eu\nset -a; . \"${HERALD_SERVICES_ENV:-.state/services.env}\"; set +a\n"
            ": \"${HERALD_BIN:=.build/release/herald}\" \"${HERALD_BENCH_BASELINE:=bench/amqp-baseline}\" "
            "\"${HERALD_BENCH_SCHEMAS:=schemas}\"\n"
            ": \"${HERALD_BENCH_CA:=.state/demo/ca.pem}\" \"${HERALD_BENCH_KEY:=.state/demo/AuthKey_DEMOKEY123.p8}\"\n")

    def run(self, argv, stdout, time_file=None, note=None):
        """Run argv (strings and Vars), its output to stdout (a path under out), and record it in commands.sh."""
        shell = " ".join(a.shell() if isinstance(a, Var) else shlex.quote(a) for a in argv)
        relative = os.path.relpath(stdout, self.out)
        if time_file:
            shell = f"/usr/bin/time -f '%U %S' -o \"$OUT/{relative}.time\" {shell}"
            argv = ["/usr/bin/time", "-f", "%U %S", "-o", time_file] + argv
        if note:
            self.commands.write(f"# {note}\n")
        folder = os.path.dirname(relative)
        if folder and folder not in self.folders:
            self.folders.add(folder)
            self.commands.write(f'mkdir -p "$OUT/{folder}"\n')
        self.commands.write(f"{shell} > \"$OUT/{relative}\" 2>/dev/null\n")
        self.commands.flush()
        with open(stdout, "w") as output:
            try:
                status = subprocess.run([str(a) for a in argv], stdout=output, stderr=subprocess.PIPE,
                                        timeout=1800).returncode
            except subprocess.TimeoutExpired:
                status = "timeout"
        if status != 0:
            print(f"bench-check: {shell} failed ({status}); output in {stdout}", file=sys.stderr)
        return status == 0


def services():
    path = os.environ.get("HERALD_SERVICES_ENV", ".state/services.env")
    values = {}
    try:
        for line in open(path):
            if "=" in line and not line.lstrip().startswith("#"):
                key, value = line.strip().split("=", 1)
                values[key] = value.strip("'\"")
    except OSError:
        pass
    for key in ("HERALD_AMQP_URL", "HERALD_DATABASE_URL"):
        if os.environ.get(key):
            values[key] = os.environ[key]
        if not values.get(key):
            sys.exit(f"bench-check: no {key}: run make services-up (it writes {path}) or set it")
    return values


def listening(port):
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def body(size, path):
    value = {"aps": {"alert": ""}}
    value["aps"]["alert"] = "x" * (size - len(json.dumps(value, separators=(",", ":"))))
    with open(path, "w") as f:
        f.write(json.dumps(value, separators=(",", ":")))


def herald_commit(binary):
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    match = re.search(r"commit ([0-9a-f]{7,})", version)
    return version, (match.group(1)[:7] if match else "unknown")


def load():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def execute(selected, rounds, shapes):
    herald = os.environ.get("HERALD_BIN", ".build/release/herald")
    c_baseline = os.environ.get("HERALD_BENCH_BASELINE", "bench/amqp-baseline")
    ca = os.environ.get("HERALD_BENCH_CA", ".state/demo/ca.pem")
    key = os.environ.get("HERALD_BENCH_KEY", ".state/demo/AuthKey_DEMOKEY123.p8")
    schemas = os.environ.get("HERALD_BENCH_SCHEMAS", "schemas")
    port = int(os.environ.get("HERALD_SINK_PORT", "58443"))
    for path, what in ((herald, "HERALD_BIN (make bench builds it)"), (ca, "HERALD_BENCH_CA (make demo)"),
                       (key, "HERALD_BENCH_KEY (make demo)")):
        if not os.path.exists(path):
            sys.exit(f"bench-check: {path} not found: {what}")
    if ({"amqp", "jobs"} & selected) and not os.access(c_baseline, os.X_OK):
        sys.exit(f"bench-check: {c_baseline} not found: HERALD_BENCH_BASELINE (make bench builds it)")
    env = services()
    os.environ.update({k: env[k] for k in ("HERALD_AMQP_URL", "HERALD_DATABASE_URL")})
    amqp_url = Var("HERALD_AMQP_URL", env["HERALD_AMQP_URL"])
    database = env["HERALD_DATABASE_URL"].split("?")[0]
    server = database.rsplit("/", 1)[0]
    version, commit = herald_commit(herald)
    head = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True).stdout.strip()
    if commit != head:
        print(f"bench-check: note: {herald} is commit {commit}, the checkout is {head}; results go under {commit}")
    existing = [d for d in sorted(os.listdir("bench/results")) if d.endswith("-" + commit)]
    folder = os.path.join("bench/results", existing[-1] if existing else f"{datetime.date.today():%Y-%m-%d}-{commit}")
    out = os.path.join(folder, "check-" + datetime.datetime.now(datetime.timezone.utc).strftime("%H%M%S"))
    os.makedirs(out)
    print(f"bench-check: {version}; {rounds} round(s); writing {out}")
    started_sink = False
    if ({"apns", "broadcast", "jobs"} & selected) and not listening(port):
        print(f"bench-check: nothing on 127.0.0.1:{port}; starting the sink (deploy/dev/sink.sh start)")
        subprocess.run(["deploy/dev/sink.sh", "start"], check=True)
        started_sink = True
    endpoint = f"https://127.0.0.1:{port}"
    scratch = tempfile.mkdtemp(prefix="bench-check-")
    body(250, os.path.join(scratch, "body-250.json"))
    body(217, os.path.join(scratch, "body-217.json"))
    runner = Runner(out)
    runner.commands.write(f"OUT=${{OUT:-$(dirname \"$0\")}}\nBENCH_TMP=${{BENCH_TMP:-$(mktemp -d)}}\n"
                          f"python3 -c {shlex.quote(BODY_SNIPPET)} \"$BENCH_TMP\"\n"
                          "DB=${HERALD_DATABASE_URL%/*}/herald_bench_check\n")
    notes = open(os.path.join(out, "commit"), "w")
    notes.write(f"herald: {version} ({os.path.basename(herald)}); checkout: {head}; label check = this herald\n"
                f"baselines: h2load (nghttp2), bench/amqp-baseline (cc -O2, librabbitmq)\n")
    herald_v = Var("HERALD_BIN", herald)
    tls = ["--endpoint", endpoint, "--ca-file", Var("HERALD_BENCH_CA", ca), "--key-file", Var("HERALD_BENCH_KEY", key)]
    db = Var("DB", server + "/herald_bench_check")

    def stamp(what):
        notes.write(f"{what} {datetime.datetime.now(datetime.timezone.utc):%H:%M:%S} load={load()}\n")
        notes.flush()

    def fresh():
        subprocess.run(["psql", "-q", server + "/postgres", "-c", "DROP DATABASE IF EXISTS herald_bench_check",
                        "-c", "CREATE DATABASE herald_bench_check"], check=True, capture_output=True)
        runner.commands.write('psql -q "${HERALD_DATABASE_URL%/*}/postgres" -c "DROP DATABASE IF EXISTS '
                              'herald_bench_check" -c "CREATE DATABASE herald_bench_check" >/dev/null\n')

    def h2load(connections, streams, count, size, path):
        return runner.run(["h2load", "-n", str(count), "-c", str(connections), "-m", str(streams), "-t", "1", "-d",
                           Var("BENCH_TMP", scratch, f"/body-{size}.json"), "-H", "apns-topic: x",
                           f"{endpoint}/3/device/{TOKEN}"], path, time_file=path + ".time")

    def alternate(name, baseline_run, herald_run):
        """B H B H … B: rounds Herald runs, each between two baseline runs."""
        for i in range(1, rounds + 1):
            stamp(f"{name} round {i}")
            baseline_run(i)
            herald_run(i)
        baseline_run(rounds + 1)

    try:
        if "apns" in selected:
            for shape in ("1x1000", "4x250"):
                c, s = shape.split("x")
                d = os.path.join(out, "apns", shape)
                os.makedirs(d)
                n = shapes["apns_count"]
                alternate(f"apns {shape}", lambda i: h2load(c, s, n, 250, f"{d}/h2load-{i}.txt"),
                          lambda i: runner.run([herald_v, "bench", "apns", "--api", "batch", "--connections", c,
                                                "--streams", s, "--count", str(n)] + tls + ["--json"],
                                               f"{d}/apns-check-batch-{i}.json"))
        if "amqp" in selected:
            d = os.path.join(out, "amqp")
            os.makedirs(d)
            n = str(shapes["amqp_count"])
            for q in shapes["amqp_queues"]:
                # Both consumers with prefetch 1000; the C one acks with multiple=true every 500 (its default).
                common = ["--amqp-url", amqp_url, "--count", n, "--size", "300", "--queue-type", q, "--prefetch",
                          "1000", "--json"]
                alternate(f"amqp {q}",
                          lambda i: runner.run([Var("HERALD_BENCH_BASELINE", c_baseline)] + common,
                                               f"{d}/amqp-c-{q}-{i}.json"),
                          lambda i: runner.run([herald_v, "bench", "amqp"] + common, f"{d}/amqp-check-{q}-{i}.json"))
        if "broadcast" in selected:
            d = os.path.join(out, "broadcast")
            os.makedirs(d)
            n = shapes["broadcast_devices"]

            def broadcast(i):
                fresh()
                return runner.run([herald_v, "bench", "pipeline", "--scenario", "broadcast", "--devices", str(n),
                                   "--database-url", db, "--schemas", Var("HERALD_BENCH_SCHEMAS", schemas)] + tls
                                  + ["--json"], f"{d}/broadcast-check-{i}.json")

            alternate("broadcast", lambda i: h2load(1, 1000, n, 217, f"{d}/h2load-{i}.txt"), broadcast)
        if "jobs" in selected:
            d = os.path.join(out, "jobs")
            os.makedirs(d)
            n = str(shapes["jobs"])

            def jobs(i):
                fresh()
                return runner.run([herald_v, "bench", "pipeline", "--scenario", "jobs", "--devices", n,
                                   "--confirm-window", "1000", "--amqp-url", amqp_url, "--database-url", db,
                                   "--schemas", Var("HERALD_BENCH_SCHEMAS", schemas)] + tls + ["--json"],
                                  f"{d}/jobs-check-{i}.json")

            alternate("jobs",
                      lambda i: runner.run([Var("HERALD_BENCH_BASELINE", c_baseline), "--amqp-url", amqp_url,
                                            "--count", n, "--size", "300", "--confirm-window", "1000", "--json"],
                                           f"{d}/amqp-baseline-{i}.json"),
                      jobs)
    finally:
        runner.commands.close()
        notes.close()
        if started_sink:
            subprocess.run(["deploy/dev/sink.sh", "stop"])
    return out


BODY_SNIPPET = (
    "import json,sys\n"
    "for n in (250, 217):\n"
    '    b = {"aps": {"alert": ""}}; b["aps"]["alert"] = "x" * (n - len(json.dumps(b, separators=(",", ":"))))\n'
    '    open(sys.argv[1] + f"/body-{n}.json", "w").write(json.dumps(b, separators=(",", ":")))')


# ---------------------------------------------------------------------------------------------------------------
# Comparing.


def shape_of(name, shapes):
    if name.startswith("apns-"):
        return {"count": shapes["apns_count"]}
    if name.startswith("amqp-"):
        return {"count": shapes["amqp_count"]}
    if name == "broadcast":
        return {"devices": shapes["broadcast_devices"]}
    return {"jobs": shapes["jobs"]}


def compare(out, selected, shapes, write=True):
    """Print the side-by-side table, write check.json into out (if write); return the regressions' messages."""
    baseline = json.load(open(BASELINE_FILE)) if os.path.exists(BASELINE_FILE) else {"benchmarks": {}}
    table = definitions(tuple(shapes["amqp_queues"]))
    rows, failures, result = [], [], {}
    for name, definition in table.items():
        if name.split("-")[0] not in selected:
            continue
        runs = ratios(out, definition, "check")
        known = baseline["benchmarks"].get(name)
        entry = dict(shape=shape_of(name, shapes), baseline=definition["baseline"])
        if runs:
            entry.update(summary(runs))
        entry["per_run"] = runs
        verdict = "no runs"
        if runs and known:
            floor = known["ratio"] - known["noise"]
            if known.get("shape") != entry["shape"]:
                verdict = "not gated (shape differs)"
            elif entry["ratio"] < floor:
                verdict = "REGRESSION"
                failures.append(f"{name}: ratio {entry['ratio']:.3f} (Herald ÷ {definition['baseline']}) is below "
                                f"the baseline ratio {known['ratio']:.3f} minus its noise {known['noise']:.3f} "
                                f"(floor {floor:.3f}; baseline measured at {known['commit']})")
            else:
                verdict = "ok"
        elif runs:
            verdict = "no baseline"
        entry["verdict"] = verdict
        result[name] = entry
        cpu = [(r["herald_cpu_us"], r["baseline_cpu_us"]) for r in runs if r["herald_cpu_us"] is not None]
        cpu_text = (f"{statistics.median(h for h, _ in cpu):.2f}/"
                    + (f"{statistics.median(b for _, b in cpu if b is not None):.2f}"
                       if any(b is not None for _, b in cpu) else "-")) if cpu else "-"
        rows.append((name, f"{known['ratio']:.3f}±{known['noise']:.3f}" if known else "-",
                     f"{entry['ratio']:.3f}" if runs else "-",
                     f"{entry['min']:.3f}–{entry['max']:.3f}" if runs else "-",
                     f"{statistics.median(r['herald'] for r in runs):,.0f}" if runs else "-",
                     f"{statistics.median(r['baseline'] for r in runs):,.0f}" if runs else "-",
                     cpu_text, verdict))
    header = ("benchmark", "baseline ratio±noise", "now", "range", "herald/s", "baseline/s", "cpu µs h/b",
              "verdict")
    widths = [max(len(str(row[k])) for row in rows + [header]) for k in range(len(header))]
    for row in [header] + rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip())
    if write:
        with open(os.path.join(out, "check.json"), "w") as f:
            json.dump(dict(benchmarks=result, failures=failures), f, indent=1, ensure_ascii=False)
            f.write("\n")
    return failures, result


def write_baseline(benchmarks, note):
    data = dict(
        about="Herald's rate over its baseline's, per benchmark (docs/benchmarks.md). ratio: the median of the runs' "
              "ratios, each Herald run over the mean of the baseline runs before and after it; noise: max - min of "
              "those ratios. make bench-check fails when its median falls below ratio - noise.",
        source=note, benchmarks=benchmarks)
    text = json.dumps(data, indent=1, ensure_ascii=False)
    # One line per list of numbers and per shape, so that a benchmark reads as a few lines.
    text = re.sub(r"\[\s*([0-9.,\s]*?)\s*\]", lambda m: "[" + ", ".join(m.group(1).split()).replace(",,", ",") + "]",
                  text)
    text = re.sub(r"\{\s*(\"[a-z_]+\": [0-9]+)\s*\}", r"{\1}", text)
    with open(BASELINE_FILE, "w") as f:
        f.write(text + "\n")
    print(f"bench-check: wrote {BASELINE_FILE}")


# Where today's baseline.json comes from when derived from kept results: benchmark -> (folder, label, commit).
RESULT_SOURCES = {
    "apns-1x1000": ("bench/results/2026-11-26-8d646b1", "h5", "8d646b1"),
    "apns-4x250": ("bench/results/2026-11-26-8d646b1", "h5", "8d646b1"),
    "broadcast": ("bench/results/2026-11-26-3de4a54", "h3", "3de4a54"),
    "jobs": ("bench/results/2026-11-26-3de4a54", "h3", "3de4a54"),
}
for _q in ("classic", "quorum"):
    for _p in ("publish", "consume", "concurrent"):
        RESULT_SOURCES[f"amqp-{_q}-{_p}"] = ("bench/results/2026-11-26-136e801", "m1", "136e801")
RESULT_SHAPES = dict(apns_count=300000, amqp_count=100000, amqp_queues=["classic", "quorum"],
                     broadcast_devices=300000, jobs=100000)


def baseline_from_results():
    table = definitions()
    benchmarks = {}
    for name, (folder, label, commit) in RESULT_SOURCES.items():
        runs = ratios(folder, table[name], label)
        files = os.path.join(folder, table[name]["dir"], table[name]["herald"].format(label=label, i="N"))
        benchmarks[name] = dict(summary(runs), commit=commit, baseline=table[name]["baseline"],
                                shape=shape_of(name, RESULT_SHAPES), measured=files,
                                per_run=[r["ratio"] for r in runs])
    write_baseline(benchmarks, "derived by bench/check.py --baseline-from-results from the result files named "
                               "in each benchmark's `measured` (label = the commit's build in that sequence)")


def pool_baseline(folders):
    """baseline.json from several check folders: per benchmark, the median of each sequence's median ratio, and as
    its noise the spread of those medians (what make bench-check gates is a sequence's median, and it moves between
    sequences more than one sequence's three runs show). A benchmark measured in one sequence only keeps its runs'
    spread."""
    table = definitions()
    benchmarks = {}
    for name, definition in table.items():
        sequences = [runs for runs in (ratios(folder, definition, "check") for folder in folders) if runs]
        if not sequences:
            continue
        medians = [statistics.median(r["ratio"] for r in runs) for runs in sequences]
        entry = summary([run for runs in sequences for run in runs])
        if len(medians) > 1:
            entry.update(ratio=round(statistics.median(medians), 3), noise=round(max(medians) - min(medians), 3))
        benchmarks[name] = dict(entry, sequences=len(medians), sequence_medians=[round(m, 4) for m in medians],
                                commit=",".join(sorted({os.path.basename(os.path.dirname(f.rstrip("/"))).rsplit(
                                    "-", 1)[-1] for f in folders})),
                                baseline=definition["baseline"], shape=shape_of(name, RESULT_SHAPES),
                                measured=",".join(folders),
                                per_run=[r["ratio"] for runs in sequences for r in runs])
    write_baseline(benchmarks, "bench/check.py --pool-baseline " + " ".join(folders))


def main():
    args = sys.argv[1:]
    if any(a in ("-h", "--help") for a in args):
        print(__doc__)
        return 0
    if args[:1] == ["--baseline-from-results"]:
        baseline_from_results()
        return 0
    if args[:1] == ["--pool-baseline"] and len(args) > 1:
        pool_baseline(args[1:])
        return 0
    rounds = int(os.environ.get("BENCH_CHECK_ROUNDS", "3"))
    selected = set(os.environ.get("BENCH_CHECK_ONLY", "apns,amqp,broadcast,jobs").split(","))
    unknown = selected - {"apns", "amqp", "broadcast", "jobs"}
    if unknown or rounds < 1:
        sys.exit(f"bench-check: BENCH_CHECK_ONLY takes apns,amqp,broadcast,jobs ({','.join(unknown)}?) and "
                 "BENCH_CHECK_ROUNDS at least 1")
    shapes = dict(apns_count=int(os.environ.get("BENCH_CHECK_APNS_COUNT", "300000")),
                  amqp_count=int(os.environ.get("BENCH_CHECK_AMQP_COUNT", "100000")),
                  amqp_queues=os.environ.get("BENCH_CHECK_AMQP_QUEUES", "classic,quorum").split(","),
                  broadcast_devices=int(os.environ.get("BENCH_CHECK_BROADCAST_DEVICES", "300000")),
                  jobs=int(os.environ.get("BENCH_CHECK_JOBS", "100000")))
    if args == ["--update-baseline"] and rounds < 3:
        sys.exit("bench-check: --update-baseline needs BENCH_CHECK_ROUNDS of at least 3 (the noise is their spread)")
    if args[:1] == ["--ratios"] and len(args) == 2:
        out = args[1]
    elif args in ([], ["--update-baseline"]):
        started = time.monotonic()
        out = execute(selected, rounds, shapes)
        print(f"bench-check: ran in {time.monotonic() - started:.0f} s")
    else:
        sys.exit(__doc__)
    failures, result = compare(out, selected, shapes, write=args[:1] != ["--ratios"])
    if args == ["--update-baseline"]:
        commit = os.path.basename(os.path.dirname(out)).rsplit("-", 1)[-1]
        benchmarks = json.load(open(BASELINE_FILE))["benchmarks"] if os.path.exists(BASELINE_FILE) else {}
        for name, entry in result.items():
            if entry["per_run"]:
                benchmarks[name] = dict(ratio=entry["ratio"], noise=entry["noise"], min=entry["min"],
                                        max=entry["max"], runs=entry["runs"], commit=commit,
                                        baseline=entry["baseline"], shape=entry["shape"], measured=out,
                                        per_run=[r["ratio"] for r in entry["per_run"]])
        write_baseline(benchmarks, f"bench/check.py --update-baseline ({out} and earlier entries)")
        return 0
    if any(not entry["per_run"] for entry in result.values()):
        failures.append("some benchmarks have no runs (see the errors above): " +
                        ", ".join(n for n, e in result.items() if not e["per_run"]))
    for failure in failures:
        print(f"bench-check: FAIL {failure}", file=sys.stderr)
    if not failures:
        print(f"bench-check: ok ({out}/check.json)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
