"""Bad input through ``%%reckon``: random cells never produce a Python traceback from our
code, only a rendered refusal (``ReckonRefused``) or a usage message (``UsageError``), and
every record file written stays strict JSON."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


WORDS = ["given", "show", "note", "note!", "delete", "end", "x", "y", "R", "=", "@x", "@y", "$pi", "$sqrt(",
         ")", "(", "*", "/", "^", "+", "-", "in", "digits", "m", "kg", "ohm", "degC", "rpm", "Hz", "mg/12 h",
         "py:nope", "py:x", "[1, 2]", "[", "]", "3+4j", "nan", "inf", "1e999", "2.5", "0", "# c", "Nm", "dBm",
         "µm", "°", "\t", ",", "'", '"', "\\", "{", "}", "%", "$", "@", "j", "sr", "percent", "1/0"]

line = st.lists(st.sampled_from(WORDS) | st.text(max_size=6), min_size=0, max_size=8).map(" ".join)
cell = st.lists(line, min_size=0, max_size=6).map("\n".join)
magic_line = st.lists(st.sampled_from(["--continue", "--quiet", "--digits", "3", "--export", "v", "Title", "--x"]),
                      max_size=4).map(" ".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(magic_line, cell)
def test_random_cells_only_refuse_cleanly(sh, mline, body):
    r, _ = sh.run(f"%%reckon {mline}\n{body}")
    err = r.error_in_exec
    assert err is None or type(err).__name__ in {"ReckonRefused", "UsageError"}, repr(err)
    if type(err).__name__ == "ReckonRefused":
        assert err._render_traceback_()  # rendered without a Python traceback
    for path in sh.sidecar.rglob("*.jsonl"):
        for raw in path.read_text(encoding="utf-8").split("\n")[:-1]:  # JSON Lines end at \n only
            json.loads(raw, parse_constant=lambda c: (_ for _ in ()).throw(AssertionError(f"{c} in {path}")))
