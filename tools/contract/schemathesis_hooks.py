"""Schemathesis hooks for the API contract test (docs/testing.md, "The contract").

The API's documents state every rule a request must follow, but three of them tie one part of a request to another
or to the job schema's x-herald keywords, which no generic generator reads. These hooks apply them, and nothing
else, to the requests schemathesis draws:

- the `app` path parameter is the app of the test's API key (another app's is a 403, which says nothing about the
  contract), and a body's `app`, if any, is that app (the path names the app; a body naming another is refused);
- with an `Idempotency-Key` header, a body's `id` is the key (a body naming another id is refused);
- a job body that breaks only an x-herald rule (a payload over its size, U+0000, a Live Activity timestamp ahead of
  the clock) is not drawn as valid data: the job side of the test (job_contract.py) covers those rules.
"""

import json
import os
import sys

import schemathesis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from job_contract import SCHEMA_PATH, make_validator  # noqa: E402

APP = os.environ["HERALD_CONTRACT_APP"]
JOB_VALIDATOR = make_validator(json.load(open(SCHEMA_PATH)))


def is_notifications(context):
    return context.operation is not None and context.operation.path.endswith("/notifications")


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
    if not is_notifications(context) or not isinstance(case.body, dict):
        return
    if "app" in case.body:
        case.body["app"] = APP
    key = (case.headers or {}).get("Idempotency-Key")
    if key is not None and "id" in case.body:
        case.body["id"] = key
