"""Schemathesis hooks for the API contract test (docs/testing.md, "The contract").

The API's documents state every rule a request must follow, but three of them tie one part of a request to another
or to the job schema's x-herald keywords, which no generic generator reads. These hooks apply them, and nothing
else, to the requests schemathesis draws:

- the `app` path parameter is the app of the test's API key (another app's is a 403, which says nothing about the
  contract), and a body's `app`, if any, is that app (the path names the app; a body naming another is refused);
- with an `Idempotency-Key` header, a body's `id` is the key (a body naming another id is refused);
- a job body that breaks only an x-herald rule (a payload over its size, U+0000, a Live Activity timestamp ahead of
  the clock) is not drawn as valid data: the job side of the test (job_contract.py) covers those rules;
- a web device's registration sends its subscription's endpoint as its token, if it sends one, and keys of the
  form the document states are real keys (a P-256 point, which no pattern states, and its secret).
"""

import json
import os
import re
import sys

import schemathesis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from job_contract import SCHEMA_PATH, make_validator  # noqa: E402

APP = os.environ["HERALD_CONTRACT_APP"]
JOB_VALIDATOR = make_validator(json.load(open(SCHEMA_PATH)))


def is_notifications(context):
    return context.operation is not None and context.operation.path.endswith("/notifications")


def is_device_registration(context):
    return (
        context.operation is not None
        and context.operation.method.upper() == "POST"
        and context.operation.path.endswith("/devices")
    )


# RFC 8291's example subscription keys (appendix A): a point on P-256 and a 16-byte secret.
WEB_P256DH = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
WEB_AUTH = "BTBZMqHH6r4Tts7J_aSIgg"
P256DH_FORM = re.compile(r"^B[A-P][A-Za-z0-9_-]{85}=*$")
AUTH_FORM = re.compile(r"^[A-Za-z0-9_-]{22}=*$")


def tie_web_registration(body):
    subscription = body.get("subscription")
    if not isinstance(subscription, dict):
        return
    keys = subscription.get("keys")
    if isinstance(keys, dict):
        if isinstance(keys.get("p256dh"), str) and P256DH_FORM.match(keys["p256dh"]):
            keys["p256dh"] = WEB_P256DH
        if isinstance(keys.get("auth"), str) and AUTH_FORM.match(keys["auth"]):
            keys["auth"] = WEB_AUTH
    endpoint = subscription.get("endpoint")
    if body.get("platform") == "web" and isinstance(body.get("token"), str) and isinstance(endpoint, str):
        body["token"] = endpoint


@schemathesis.hook
def map_path_parameters(context, path_parameters):
    if path_parameters and "app" in path_parameters:
        path_parameters["app"] = APP
    return path_parameters


@schemathesis.hook
def filter_body(context, body):
    if not is_notifications(context) or not isinstance(body, dict):
        return True
    document = dict(body)
    document["app"] = APP
    errors = list(JOB_VALIDATOR.iter_errors(document))
    only_x_herald = errors and all(str(error.validator).startswith("x-herald") for error in errors)
    return not only_x_herald


@schemathesis.hook
def before_call(context, case, kwargs=None):
    if is_device_registration(context) and isinstance(case.body, dict):
        tie_web_registration(case.body)
        return
    if not is_notifications(context) or not isinstance(case.body, dict):
        return
    if "app" in case.body:
        case.body["app"] = APP
    key = (case.headers or {}).get("Idempotency-Key")
    if key is not None and "id" in case.body:
        case.body["id"] = key
