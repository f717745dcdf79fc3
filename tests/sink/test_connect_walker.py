"""The payload walker generated per Connect schema (``mysql_cdc_base.connect._compile_walker``) writes what the
generic walk (``mysql_cdc_base.connect._walk``) writes: defaults for nulls, Java floats, at every depth."""

from __future__ import annotations

from math import inf

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from mysql_cdc_base.connect import ConnectSchema, Field, _walk, primitive, struct

INNER = struct(
    "Row",
    [
        Field("f32", primitive("float32", optional=True)),
        Field("f64", primitive("float64", optional=True, default=2.5)),
        Field("text", primitive("string", optional=True, default="zz")),
        Field("plain", primitive("int32", optional=True)),
    ],
    optional=True,
)
OUTER = struct(
    "Envelope",
    [
        Field("before", INNER),
        Field("after", INNER),
        Field("list", ConnectSchema("array", optional=True, items=primitive("float64"))),
        Field(
            "map",
            ConnectSchema(
                "map",
                optional=True,
                keys=primitive("string"),
                values=primitive("float32", optional=True, default=1.5),
            ),
        ),
        Field("snapshot", primitive("string", optional=True, default="false")),
        Field("op", primitive("string")),
    ],
)

floats = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True))
# float32 payloads come from float32 columns: values a float32 holds.
FLT_MAX = 3.4028234663852886e38
floats32 = st.one_of(
    st.none(),
    st.floats(width=32, allow_nan=True, allow_infinity=True).filter(
        lambda f: not abs(f) < inf or abs(f) <= FLT_MAX
    ),
)
rows = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {
            "f32": floats32,
            "f64": floats,
            "text": st.one_of(st.none(), st.text()),
            "plain": st.none() | st.integers(0, 9),
        }
    ),
)
envelopes = st.fixed_dictionaries(
    {
        "before": rows,
        "after": rows,
        "list": st.none() | st.lists(st.floats(allow_nan=False)),
        "map": st.none() | st.dictionaries(st.text(max_size=3), floats32),
        "snapshot": st.none() | st.just("true"),
        "op": st.just("u"),
    }
)


@settings(max_examples=300, deadline=None)
@given(envelopes)
def test_generated_walker_writes_what_the_generic_walk_writes(envelope: dict[str, object]) -> None:
    assert OUTER._walker is not None
    assert orjson.dumps(OUTER.payload_for_json(envelope)) == orjson.dumps(_walk(OUTER, envelope))


def test_schemas_without_defaults_or_floats_are_passed_through() -> None:
    plain = struct("Key", [Field("id", primitive("int32"))])
    value = {"id": 1}
    assert plain._walker is None and plain.payload_for_json(value) is value


def test_a_payload_nothing_changes_in_is_not_copied_and_one_with_a_null_default_is() -> None:
    row = struct(
        "Row", [Field("id", primitive("int32")), Field("seen", primitive("int64", default=0))], optional=True
    )
    source = struct("Source", [Field("snapshot", primitive("string", optional=True, default="false"))])
    envelope = struct("Envelope", [Field("after", row), Field("source", source)])
    complete = {"after": {"id": 1, "seen": 5}, "source": {"snapshot": "true"}}
    assert envelope.payload_for_json(complete) is complete
    with_nulls = {"after": {"id": 1, "seen": None}, "source": {"snapshot": None}}
    written = envelope.payload_for_json(with_nulls)
    assert written == {"after": {"id": 1, "seen": 0}, "source": {"snapshot": "false"}}
    assert with_nulls == {"after": {"id": 1, "seen": None}, "source": {"snapshot": None}}  # untouched
    assert written["after"] is not with_nulls["after"]
    # A member missing from a hand-built payload is written (with its default) as before.
    assert envelope.payload_for_json({"after": {"id": 1}, "source": {"snapshot": "x"}})["after"] == {
        "id": 1,
        "seen": 0,
    }
