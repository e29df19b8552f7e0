"""Property-based test: schemas/job.schema.json states exactly what Herald's job validator accepts, both ways.

Documents are drawn from the schema (hypothesis-jsonschema), mutated (a field renamed to a typo, given a wrong type,
a control character, U+0000, a number out of range, an unknown key, a required field dropped) and drawn as arbitrary
JSON. Each is judged by the schema (jsonschema, draft 2020-12, with the schema's x-herald keywords and ECMA 262
pattern semantics) and by Herald (`herald jobs validate`, the worker's and the API's validation): a document the
schema accepts must be accepted, one it rejects must be refused with a reason. Hypothesis shrinks a disagreement to
a small document and prints it.

Usage: python job_contract.py HERALD_BINARY [--examples N]
"""

import argparse
import copy
import json
import os
import re
import subprocess
import sys
import time

import jsonschema
from hypothesis import HealthCheck, given, note, settings, strategies as st
from hypothesis_jsonschema import from_schema

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA_PATH = os.path.join(ROOT, "schemas", "job.schema.json")


# --- The schema as a validator: standard keywords, ECMA `$`, and the x-herald keywords. ---------------------------

def ecma_pattern(validator, pattern, instance, schema):
    """`pattern` as ECMA 262 reads it: `$` is the end of the string (Python's also matches before a final newline)."""
    if not isinstance(instance, str):
        return
    python = pattern[:-1] + r"\Z" if pattern.endswith("$") and not pattern.endswith("\\$") else pattern
    if not re.search(python, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def max_utf8_bytes(validator, limit, instance, schema):
    if isinstance(instance, str) and len(instance.encode("utf-8", "surrogatepass")) > limit:
        yield jsonschema.ValidationError(f"more than {limit} bytes of UTF-8")


def holds_nul(value):
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, list):
        return any(holds_nul(v) for v in value)
    if isinstance(value, dict):
        return any("\x00" in k or holds_nul(v) for k, v in value.items())
    return False


def no_nul(validator, enabled, instance, schema):
    if enabled and holds_nul(instance):
        yield jsonschema.ValidationError("a string or key holds U+0000")


def encoded_size(value):
    """Bytes of `value` as Herald encodes a payload: compact, keys sorted, only `"`, `\\` and C0 escaped."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True).encode("utf-8"))


def normalize_tag(tag):
    return tag.lower().replace("_", "-")


def max_payload_bytes(validator, limits, instance, schema):
    if not isinstance(instance, dict):
        return
    notification = instance.get("notification")
    target = instance.get("target")
    if not isinstance(notification, dict) or not isinstance(notification.get("aps"), dict):
        return
    push_type = notification.get("push_type") or "alert"
    limit = limits["default"]
    if push_type == "voip":
        limit = limits["voip"]
    if push_type == "liveactivity" and isinstance(target, dict) and "channel" in target:
        limit = limits["channel"]
    custom = notification.get("custom") if isinstance(notification.get("custom"), dict) else {}
    aps = notification["aps"]
    variants = [None]
    localizations = notification.get("localizations")
    if isinstance(localizations, dict):
        chosen = {}
        for tag in sorted(localizations):
            chosen[normalize_tag(tag)] = localizations[tag]
        variants += sorted(chosen.items())
    badge = 2147483647 if notification.get("badge_increment") is not None else None
    for variant in variants:
        body = dict(custom)
        payload_aps = dict(aps)
        if variant is not None:
            payload_aps["alert"] = variant[1]
        if badge is not None:
            payload_aps["badge"] = badge
        body["aps"] = payload_aps
        try:
            size = encoded_size(body)
        except ValueError:
            return
        if size > limit:
            yield jsonschema.ValidationError(f"payload of {size} bytes, over {limit}")
            return


def max_seconds_ahead(validator, seconds, instance, schema):
    if isinstance(instance, (int, float)) and not isinstance(instance, bool) and instance > time.time() + seconds:
        yield jsonschema.ValidationError(f"more than {seconds} s ahead of now")


RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)\Z")


def is_date_time(text):
    """RFC 3339 section 5.6 as JSON Schema's date-time means it: four-digit years (0000 too), a real day of the month,
    a leap second (60), `T`/`t` and `Z`/`z`. (rfc3339-validator refuses 0000 and 60, and takes a final newline.)"""
    if not isinstance(text, str):
        return True
    match = RFC3339.match(text)
    if not match:
        return False
    year, month, day = int(match.group(1)), int(match.group(2)), int(match.group(3))
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    return 1 <= month <= 12 and 1 <= day <= days[month - 1]


FORMATS = jsonschema.FormatChecker([])
FORMATS.checks("date-time")(is_date_time)


def make_validator(schema):
    base = jsonschema.Draft202012Validator
    cls = jsonschema.validators.extend(
        base,
        {
            "pattern": ecma_pattern,
            "x-herald-max-utf8-bytes": max_utf8_bytes,
            "x-herald-no-nul": no_nul,
            "x-herald-max-payload-bytes": max_payload_bytes,
            "x-herald-max-seconds-ahead": max_seconds_ahead,
        },
    )
    return cls(schema, format_checker=FORMATS)


# --- Herald's verdicts: one `herald jobs validate` process, a line in and a verdict out. -----------------------------

class Herald:
    def __init__(self, binary):
        self.process = subprocess.Popen(
            [binary, "jobs", "validate"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def verdict(self, document):
        line = json.dumps(document, ensure_ascii=True, allow_nan=False)
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError("herald jobs validate ended (crashed?) on: " + line[:500])
        parts = answer.rstrip("\n").split("\t")
        return parts[0], parts[1:]

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


# --- Documents: drawn from the schema, mutated, and arbitrary. -----------------------------------------------------
#
# hypothesis-jsonschema draws from the whole schema too slowly (its if/then and not-pattern rules are met by
# filtering), so jobs are built from the schema's parts: the small leaf schemas are drawn with from_schema, the
# structure (which push type, which target, which optional fields, null or absent) is chosen here. Whatever is drawn,
# the verdict that counts is the schema's own (the validator above), never this builder's intent.

def leaf(schema, pointer):
    """The sub-schema at a JSON pointer, with the document's $defs, for from_schema."""
    node = schema
    for step in pointer.strip("/").split("/"):
        node = node[int(step)] if isinstance(node, list) else node[step]
    return {**node, "$defs": schema["$defs"]}


def edges(leaf_schema):
    """The edges of a leaf's bounds, read from the schema (so a bound moved in the schema moves the edges drawn):
    each bound and the value just past it, for numbers and for string lengths (in a character of two UTF-8 bytes, so
    that characters and bytes are told apart)."""
    values = []
    low, high = leaf_schema.get("minimum"), leaf_schema.get("maximum")
    for bound, step in ((low, -1), (high, 1)):
        if bound is not None:
            values += [bound, bound + step]
    longest = leaf_schema.get("maxLength")
    if longest is not None:
        values += ["é" * longest, "é" * (longest + 1)]
    return st.sampled_from(values) if values else st.nothing()


def with_edges(leaf_schema, strategy=None):
    """Mostly `strategy` (the leaf drawn from the schema by default), an edge one time in five."""
    base = strategy if strategy is not None else from_schema(leaf_schema)
    edge = edges(leaf_schema)
    return st.integers(0, 4).flatmap(lambda n: edge if n == 0 else base)


def optional(strategy):
    """Absent (None here, dropped later), null, or a value."""
    return st.one_of(st.just(ABSENT), st.just(None), strategy)


ABSENT = object()


def drop_absent(mapping):
    return {k: v for k, v in mapping.items() if v is not ABSENT}


def visible_text(max_size, min_size=1):
    return st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=min_size, max_size=max_size)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(-1e6, 1e6, allow_nan=False) | visible_text(12, 0),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(visible_text(8), inner, max_size=3),
    max_leaves=6,
)


def job_strategy(schema):
    props = schema["properties"]
    notification_props = props["notification"]["properties"]
    tag = from_schema(leaf(schema, "/$defs/tag"))
    hex_token = st.from_regex(r"[0-9a-f]{64}", fullmatch=True)
    tokens = st.lists(st.one_of(hex_token, visible_text(10)), min_size=1, max_size=3)
    locales = optional(st.lists(tag, min_size=1, max_size=3))
    device_targets = st.one_of(
        st.builds(lambda t: {"tokens": t}, tokens),
        st.builds(lambda u: {"users": u}, st.lists(
            with_edges(leaf(schema, "/properties/target/oneOf/1/properties/users/items"), visible_text(20)),
            min_size=1, max_size=3)),
        st.builds(lambda t, l: drop_absent({"topic": t, "locales": l}),
                  with_edges(leaf(schema, "/properties/target/oneOf/2/properties/topic"), visible_text(20)), locales),
        st.builds(lambda l: drop_absent({"all": True, "locales": l}), locales),
    )
    channel = from_schema(leaf(schema, "/properties/target/oneOf/5/properties/channel"))
    live_targets = st.one_of(
        st.builds(lambda a: {"activity": a}, visible_text(20)),
        st.builds(lambda c: {"channel": c}, channel),
        st.builds(lambda t: {"activity_tokens": t}, tokens),
    )
    extra_aps = st.dictionaries(st.sampled_from(["category", "thread-id", "mutable-content", "x"]), json_values,
                                max_size=2)
    alert_value = st.one_of(visible_text(30, 0), st.dictionaries(st.sampled_from(["title", "body"]), visible_text(20),
                                                                  max_size=2))
    shows = st.dictionaries(st.sampled_from(["alert", "sound", "badge"]), st.none(), min_size=1, max_size=3)

    @st.composite
    def alert_aps(draw):
        aps = draw(extra_aps)
        for key in draw(shows):
            aps[key] = draw(alert_value if key == "alert" else visible_text(10) if key == "sound"
                            else with_edges(leaf(schema, "/properties/notification/properties/aps/properties/badge"),
                                            st.integers(0, 2147483647)))
        return aps

    common = {
        "expiration": optional(with_edges(leaf(schema, "/properties/notification/properties/expiration"))),
        "collapse_id": optional(st.one_of(visible_text(20, 0), st.sampled_from(["x" * 64, "é" * 32, "é" * 33]))),
        "custom": optional(st.dictionaries(visible_text(8).filter(lambda k: k != "aps"), json_values, max_size=2)),
        "fcm": st.one_of(st.just(ABSENT), st.just(ABSENT), st.just(None), from_schema(leaf(schema, "/$defs/fcm"))),
        "webpush": optional(from_schema(leaf(schema, "/properties/notification/properties/webpush/anyOf/1"))),
    }

    @st.composite
    def job(draw):
        kind = draw(st.sampled_from(["alert", "alert", "background", "liveactivity", "other"]))
        notification = {key: draw(value) for key, value in common.items()}
        send_at = optional(from_schema({"type": "string", "format": "date-time"}))
        if kind == "alert":
            notification.update(
                push_type=draw(st.sampled_from([ABSENT, None, "alert"])), aps=draw(alert_aps()),
                priority=draw(optional(st.sampled_from([1, 5, 10]))),
                localizations=draw(optional(st.dictionaries(tag, alert_value, max_size=3))),
                badge_increment=draw(optional(with_edges(
                    leaf(schema, "/properties/notification/properties/badge_increment"),
                    st.integers(-2147483648, 2147483647)))))
            target = draw(device_targets)
        elif kind == "background":
            aps = draw(extra_aps)
            aps["content-available"] = 1
            notification.update(push_type="background", aps=aps, priority=draw(optional(st.sampled_from([1, 5]))))
            target = draw(device_targets)
        elif kind == "liveactivity":
            event = draw(st.sampled_from(["start", "update", "end"]))
            aps = {"event": event, "timestamp": draw(st.integers(1, 1_700_000_000))}
            if event != "end" or draw(st.booleans()):
                aps["content-state"] = draw(st.dictionaries(visible_text(8), json_values, max_size=2))
            if event == "start":
                aps["attributes-type"] = draw(visible_text(30))
                aps["attributes"] = {}
                target = draw(st.one_of(device_targets, st.builds(lambda t: {"activity_tokens": t}, tokens)))
            else:
                target = draw(live_targets)
                if "activity_tokens" not in target:
                    send_at = st.just(ABSENT)
            notification.update(push_type="liveactivity", aps=aps)
        else:
            push_types = [t for t in notification_props["push_type"]["enum"]
                          if t not in (None, "alert", "background", "liveactivity")]
            notification.update(push_type=draw(st.sampled_from(push_types)), aps=draw(extra_aps))
            target = draw(device_targets)
        return drop_absent({
            "id": draw(optional(with_edges(leaf(schema, "/properties/id"), visible_text(40)))),
            "app": draw(with_edges(leaf(schema, "/properties/app"), visible_text(30))),
            "target": target,
            "notification": drop_absent(notification),
            "send_at": draw(send_at),
            "throttle_per_second": draw(optional(with_edges(
                leaf(schema, "/properties/throttle_per_second"), st.integers(1, 2147483647)))),
        })

    return job()


TYPOS = {"send_at": "sendAt", "collapse_id": "colapse_id", "push_type": "pushType", "priority": "priorty",
         "throttle_per_second": "throttlePerSecond", "badge_increment": "badgeIncrement", "locales": "locale",
         "topic": "topics", "expiration": "expiry", "localizations": "localisations"}

odd_values = st.sampled_from([
    None, True, 0, -1, 1.5, 10**20, 253402300800, 9e15, "", "\x00", "a\x00b", "a\nb", "a\x85b", "en_US", "1en",
    "300000-01-01T00:00:00Z", "2026-02-30T00:00:00Z", "2024-02-29T23:59:60.5+01:00", "2026-01-01T00:00:00Z\n",
    "0000-01-01t00:00:00z", "x" * 300, "é" * 100, "dHN0LXNyY2gtY2hubA==", [], {}, {"x": 1}, ["a"],
])


def paths(value, prefix=()):
    """Every (path, value) inside a document."""
    yield prefix, value
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from paths(inner, prefix + (key,))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from paths(inner, prefix + (index,))


def replace(document, path, new):
    if not path:
        return new
    copy_ = copy.deepcopy(document)
    holder = copy_
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = new
    return copy_


@st.composite
def mutated(draw, valid):
    document = draw(valid)
    places = list(paths(document))
    kind = draw(st.sampled_from(["value", "typo", "unknown", "drop", "string"]))
    path, value = draw(st.sampled_from(places))
    if kind == "value":
        return replace(document, path, draw(odd_values))
    holder_path = path if isinstance(value, dict) else path[:-1]
    holder = document
    for step in holder_path:
        holder = holder[step]
    if not isinstance(holder, dict):
        return replace(document, path, draw(odd_values))
    holder = copy.deepcopy(holder)
    if kind == "typo" and holder:
        key = draw(st.sampled_from(sorted(holder)))
        holder[TYPOS.get(key, key + "s")] = holder.pop(key)
    elif kind == "unknown":
        holder[draw(st.sampled_from(["sendAt", "colapse_id", "extra", "Target", "aps"]))] = draw(odd_values)
    elif kind == "drop" and holder:
        holder.pop(draw(st.sampled_from(sorted(holder))))
    elif kind == "string":
        strings = [(p, v) for p, v in places if isinstance(v, str)]
        if strings:
            p, v = draw(st.sampled_from(strings))
            return replace(document, p, v + draw(st.sampled_from(["\x00", "\x01", "\x7f", "\x9f", "\n", "é" * 130])))
    return replace(document, holder_path, holder)


arbitrary_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["app", "target", "notification", "aps", "all", "tokens", "id", "x"]) | st.text(max_size=5),
        inner, max_size=4),
    max_leaves=12,
)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("herald")
    parser.add_argument("--examples", type=int, default=int(os.environ.get("CONTRACT_EXAMPLES", "300")))
    parser.add_argument("--seed", type=int, default=None)
    arguments = parser.parse_args()

    schema = json.load(open(SCHEMA_PATH))
    validator = make_validator(schema)
    herald = Herald(arguments.herald)
    counts = {"accepted": 0, "refused": 0}

    jobs = job_strategy(schema)
    documents = st.one_of(jobs, jobs, mutated(jobs), arbitrary_json)

    @settings(max_examples=arguments.examples, deadline=None, derandomize=arguments.seed is None,
              suppress_health_check=list(HealthCheck), database=None)
    @given(documents)
    def agrees(document):
        errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
        verdict, reason = herald.verdict(document)
        note(f"document: {json.dumps(document, ensure_ascii=True)[:2000]}")
        note(f"schema: {'valid' if not errors else errors[0].message[:300]}; herald: {verdict} {reason}")
        counts[verdict] = counts.get(verdict, 0) + 1
        if not errors:
            assert verdict == "accepted", f"valid by the schema, refused by Herald: {reason}"
        else:
            assert verdict == "refused", "invalid by the schema, accepted by Herald"
            assert len(reason) == 2 and reason[1].strip(), "refused without a reason"

    start = time.monotonic()
    try:
        agrees()
    finally:
        herald.close()
    print(f"job contract: {sum(counts.values())} documents in {time.monotonic() - start:.0f} s, "
          f"{counts['accepted']} accepted and {counts['refused']} refused, each as the schema says")


if __name__ == "__main__":
    sys.exit(main())
