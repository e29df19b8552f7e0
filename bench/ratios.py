#!/usr/bin/env python3
"""Ratios of one alternating sequence in bench/results/<dir>, computed from its files.

usage: bench/ratios.py DIR [BASE-LABEL]

Reads the files a sequence leaves (docs/benchmarks.md#results):
  h2load-<round>.txt (+ .time)         h2load's output (and `/usr/bin/time -f '%U %S'`)
  amqp-baseline-<round>.json            bench/amqp-baseline --json (its concurrent_per_second)
  amqp-c-<queue>-<round>.json           bench/amqp-baseline --json, per queue type
  apns-<label>-<api>-<round>.json       herald bench apns --json
  amqp-<label>-<queue>-<round>.json     herald bench amqp --json
  broadcast-<label>-<round>.json, jobs-<label>-<round>.json   herald bench pipeline --json
and prints, per round, each Herald run's rate as a ratio to the baseline of its round (h2load or C), or to
BASE-LABEL's run of the same round when given, then the median per label.
"""
import json, os, re, statistics, sys
from collections import defaultdict

def h2load(path):
    text = open(path).read()
    match = re.search(r"finished in [^,]*, ([0-9.]+) req/s", text)
    return float(match.group(1)) if match else None

def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    directory = sys.argv[1]
    base_label = sys.argv[2] if len(sys.argv) > 2 else None
    rounds = defaultdict(dict)   # round -> {series: rate}
    cpu = defaultdict(dict)      # round -> {series: µs per request}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        m = re.fullmatch(r"h2load-(\d+)\.txt", name)
        if m:
            rate = h2load(path)
            if rate:
                rounds[m.group(1)]["h2load"] = rate
                requests = re.search(r"requests: ([0-9]+) total", open(path).read())
                if os.path.exists(path + ".time") and requests:
                    user, system = map(float, open(path + ".time").read().split()[-2:])
                    cpu[m.group(1)]["h2load"] = (user + system) * 1e6 / int(requests.group(1))
            continue
        m = re.fullmatch(r"(.+)-(\d+)\.json", name)
        if not m:
            continue
        series, round_ = m.group(1), m.group(2)
        try:
            data = json.load(open(path))
        except (ValueError, OSError):
            continue
        if "sends_per_second" in data:
            rounds[round_][series] = data["sends_per_second"]
            cpu[round_][series] = data["cpu_seconds"] * 1e6 / data["count"]
        elif "notifications_per_second" in data:
            rounds[round_][series] = data["notifications_per_second"]
        elif "publish_per_second" in data:
            if series == "amqp-baseline":
                rounds[round_][series] = data["concurrent_per_second"]
            else:
                for phase in ("publish", "consume", "concurrent"):
                    rounds[round_][f"{series}:{phase}"] = data[f"{phase}_per_second"]
    ratios = defaultdict(list)
    for round_ in sorted(rounds, key=int):
        rates = rounds[round_]
        line = [f"round {round_}:"]
        for series in sorted(rates):
            base = None
            if base_label and base_label in series:
                continue
            if base_label:
                candidate = series.replace(series.split("-")[1], base_label, 1) if "-" in series else None
                base = rates.get(candidate)
            elif series.startswith(("apns-", "broadcast-")):
                base = rates.get("h2load")
            elif series.startswith("jobs-"):
                base = rates.get("amqp-baseline")
            elif series.startswith("amqp-") and not series.startswith(("amqp-c-", "amqp-baseline")):
                queue_phase = series.split("-", 2)[2]
                queue, phase = queue_phase.split(":")
                base = rates.get(f"amqp-c-{queue}:{phase}")
            if base:
                ratio = rates[series] / base
                ratios[series].append(ratio)
                extra = f" ({cpu[round_][series]:.2f} µs/req)" if series in cpu[round_] else ""
                line.append(f"{series} {ratio:.3f}{extra}")
        if "h2load" in cpu[round_]:
            line.append(f"[h2load {cpu[round_]['h2load']:.2f} µs/req]")
        print(" ".join(line))
    for series, values in sorted(ratios.items()):
        print(f"{series}: median {statistics.median(values):.3f}, "
              f"range {min(values):.3f}–{max(values):.3f}, {len(values)} runs")

if __name__ == "__main__":
    main()
