"""Schemathesis hooks for Cairn: what a client does that no OpenAPI schema can say.

- Redirects are not followed: each answer is checked against its own operation (`GET /` answers
  302 to `/explore`, whose 200 is `GET /explore`'s).
- A fresh `Idempotency-Key` on every POST and PUT: a key names one request, and the same key with
  another request is a 422 by design; a schema cannot say "never used before".
- Query bodies (POST body, `q` of the GET forms): the document states that every `order_by` field
  is requested as one `not` over the catalog. Schemathesis 4.25 spells each `allOf` of
  alternatives out case by case, at most 32, and this rule has 2^33, so its generator refuses the
  whole body ("Schema Error"). The hook takes that one keyword out of the schema Schemathesis
  loads (no other), and map_case makes the positive cases keep it instead (items naming a field
  not requested, or one named before, are taken out); the service and the published keyword are
  checked against each other by test/api-document/openapi-property.test.ts. Likewise
  `date_range` runs forwards over at most 10 years (its description; JSON Schema cannot compare
  two items), as does a forecast's `history` given as dates: a drawn pair is put in order, and
  one further apart becomes its first date twice. A saved view's `query` is a query body and is
  treated as one; a positive view with `prometheus: true` and dimensions is made a plain view,
  since whether its answer fits the series cap (a 422 beyond it) depends on the data. Positive
  cases are repaired rather than filtered: most drawn `q` texts of the GET forms break a rule,
  and filtering them out trips Hypothesis' filter_too_much health check.
- `offset` of the dependents and dependencies listings is a signed cursor: only one the service
  issued (`next_offset`) is valid, so a drawn one is taken out of positive cases; the stateful
  phase follows the documented links, which carry real cursors.
- Filter groups: the document writes `any` groups out level by level, 3 deep. Schemathesis
  4.25's coverage phase crashes inside Python's AST compiler on the third level ("AST
  constructor recursion depth mismatch", whatever the recursion limit), so the schema it loads
  stops at 2 levels: the third level's elements are conditions only. The service's own property
  test (test/api-document/openapi-property.test.ts) draws all 3 levels.
- `X-Request-ID` is taken out of the operations Schemathesis loads: the service takes any value
  (a UUID v4 is echoed, anything else replaced), so no value violates it, yet Schemathesis 4.25's
  negative phases draw "format" violations of header parameters by its own notion of a header
  value and count their acceptance as a failure.
- A negative case whose only invalid part is its headers, on an operation each of whose header
  parameters takes any text (`If-None-Match`), is dropped: no header value can violate such an
  operation's document, yet Schemathesis 4.25 draws "format" violations of the headers by its own
  notion of a header value (the `Authorization` it then replaces with the run's token among
  them) and counts their acceptance as a failure. Operations with a constrained header
  (`If-Match`, `Idempotency-Key`) keep those cases.
- The two tokens the run tests with are never revoked (`DELETE /api/v1/tokens/{id}` with their
  ids, which the stateful phase finds in `GET /api/v1/tokens`): the rest of the run would be 401s.
Negative cases are otherwise left as drawn.
"""

import json
import os
import uuid
from datetime import date, datetime

import schemathesis
from schemathesis import GenerationMode

QUERY_PATHS = ("/api/v1/query", "/api/v1/query/export")
CURSOR_PATHS = ("/api/v1/tasks/{gid}/dependents", "/api/v1/tasks/{gid}/dependencies")
TEN_YEARS_DAYS = 3653


def _positive(case):
    meta = getattr(case, "meta", None)
    generation = getattr(meta, "generation", None)
    return getattr(generation, "mode", None) == GenerationMode.POSITIVE


def _instant(text):
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), datetime.min.time())
        return datetime.fromisoformat(text.replace("z", "Z").replace("t", "T").replace("Z", "+00:00"))
    except ValueError:
        return None


def _repaired_range(pair):
    """A drawn date_range made to run forwards over at most ten years, else as it was."""
    if not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(v, str) for v in pair):
        return pair
    start, end = (_instant(v) for v in pair)
    if start is None or end is None or (start.tzinfo is None) != (end.tzinfo is None):
        return pair
    first, second = (pair[0], pair[1]) if start <= end else (pair[1], pair[0])
    if abs((end - start).days) > TEN_YEARS_DAYS:
        return [first, first]
    return [first, second]


def _repaired_query(body):
    """A drawn query body made to keep the rules the loaded schema no longer states.

    order_by names each field once and only a requested one; date_range runs forwards over at
    most ten years. Repaired rather than filtered: a filter rejecting most draws trips
    Hypothesis' filter_too_much check on the GET forms, whose `q` is drawn as text.
    """
    if not isinstance(body, dict):
        return body
    body = dict(body)
    order_by = body.get("order_by")
    if isinstance(order_by, list):
        requested = set(body.get("metrics") or []) | set(body.get("dimensions") or [])
        seen, kept = set(), []
        for item in order_by:
            field = item.get("field") if isinstance(item, dict) else None
            if isinstance(field, str) and (field not in requested or field in seen):
                continue
            seen.add(field)
            kept.append(item)
        body["order_by"] = kept
    if "date_range" in body:
        body["date_range"] = _repaired_range(body["date_range"])
    return body


def _is_order_by_rule(schema):
    return isinstance(schema, dict) and "not" in schema and '"order_by"' in json.dumps(schema.get("not"))


def _drop_order_by_rule(node):
    if isinstance(node, dict):
        all_of = node.get("allOf")
        if isinstance(all_of, list) and any(_is_order_by_rule(s) for s in all_of):
            node["allOf"] = [s for s in all_of if not _is_order_by_rule(s)]
        for value in node.values():
            _drop_order_by_rule(value)
    elif isinstance(node, list):
        for value in node:
            _drop_order_by_rule(value)


GENERATED_GROUP_DEPTH = 2


def _group_items(node):
    """The element schema of `node`'s `any` array, if `node` is a filter element."""
    if not isinstance(node, dict):
        return None
    group = (node.get("properties") or {}).get("any")
    if isinstance(group, dict) and isinstance(group.get("items"), dict):
        return group["items"]
    return None


def _conditions_only(element):
    element.get("properties", {}).pop("any", None)
    for key in ("if", "then"):
        element.pop(key, None)
    element.pop("else", None)
    element["required"] = ["dimension", "op", "values"]
    rules = element.get("allOf")
    if isinstance(rules, list):
        element["allOf"] = [r for r in rules if "anyOf" not in r or '"any"' not in json.dumps(r)]


def _limit_group_depth(node, depth=0):
    items = _group_items(node)
    if items is not None:
        if depth + 1 >= GENERATED_GROUP_DEPTH:
            _conditions_only(items)
        else:
            _limit_group_depth(items, depth + 1)
        return
    if isinstance(node, dict):
        for value in node.values():
            _limit_group_depth(value, depth)
    elif isinstance(node, list):
        for value in node:
            _limit_group_depth(value, depth)


# Schemas that hold a query body: the two above, the batch's items and a saved view's query.
VIEW_PATHS = ("/api/v1/views", "/api/v1/views/{id}")
QUERY_SCHEMA_PATHS = QUERY_PATHS + ("/api/v1/query/batch",) + VIEW_PATHS + (
    "/api/v1/views/{id}/embeds",
)


def _drop_request_id(raw_schema):
    def is_request_id(parameter):
        ref = parameter.get("$ref", "") if isinstance(parameter, dict) else ""
        return ref.endswith("/RequestId") or (
            isinstance(parameter, dict) and parameter.get("name") == "X-Request-ID"
        )

    for item in (raw_schema.get("paths") or {}).values():
        if not isinstance(item, dict):
            continue
        for operation in [item, *item.values()]:
            if isinstance(operation, dict) and isinstance(operation.get("parameters"), list):
                operation["parameters"] = [p for p in operation["parameters"] if not is_request_id(p)]


@schemathesis.hook
def before_load_schema(ctx, raw_schema):
    _drop_request_id(raw_schema)
    for path in QUERY_SCHEMA_PATHS:
        _drop_order_by_rule(raw_schema.get("paths", {}).get(path, {}))
        _limit_group_depth(raw_schema.get("paths", {}).get(path, {}))


@schemathesis.hook
def before_call(ctx, case, kwargs):
    # The answer checked is the service's own (`GET /` is a 302), not the page it points to.
    kwargs["allow_redirects"] = False
    if case.method.upper() in ("POST", "PUT"):
        if case.headers is None:
            case.headers = {}
        case.headers["Idempotency-Key"] = str(uuid.uuid4())


KEEP_TOKENS = {t for t in os.environ.get("CAIRN_ST_KEEP_TOKENS", "").split(",") if t}


def _takes_any_text(parameter):
    schema = getattr(parameter, "definition", {}).get("schema") or {}
    return schema.get("type", "string") == "string" and set(schema) <= {"type", "description", "default"}


def _only_free_headers_negated(case):
    components = getattr(getattr(case, "meta", None), "components", None) or {}
    negated = [location for location, info in components.items() if info.mode.is_negative]
    if not negated or any(getattr(location, "value", location) != "header" for location in negated):
        return False
    return all(_takes_any_text(parameter) for parameter in case.operation.headers)


@schemathesis.hook
def filter_case(ctx, case):
    if case.method.upper() == "DELETE" and case.operation.path == "/api/v1/tokens/{id}":
        if (case.path_parameters or {}).get("id") in KEEP_TOKENS:
            return False
    if not _positive(case):
        return not _only_free_headers_negated(case)
    return True


@schemathesis.hook
def map_case(ctx, case):
    if not _positive(case):
        return case
    path, method = case.operation.path, case.method.upper()
    if path in QUERY_PATHS and method == "POST":
        case.body = _repaired_query(case.body)
    elif path in QUERY_PATHS and isinstance((case.query or {}).get("q"), str):
        try:
            q = json.loads(case.query["q"])
        except ValueError:
            return case
        if isinstance(q, dict):
            case.query = {**case.query, "q": json.dumps(_repaired_query(q))}
    elif path in VIEW_PATHS and method in ("POST", "PUT") and isinstance(case.body, dict):
        body = dict(case.body)
        # Whether a gauge view's answer fits the series cap depends on the data, not the body.
        if body.get("prometheus") is True and isinstance(body.get("query"), dict) and body["query"].get("dimensions"):
            body["prometheus"] = False
        if "query" in body:
            body["query"] = _repaired_query(body["query"])
        case.body = body
    elif path == "/api/v1/forecast" and isinstance(case.body, dict) and "history" in case.body:
        # A history given as dates runs forwards, as a query's date_range does.
        case.body = {**case.body, "history": _repaired_range(case.body["history"])}
    elif path in CURSOR_PATHS and "offset" in (case.query or {}):
        case.query = {k: v for k, v in case.query.items() if k != "offset"}
    return case
