"""A shared assertion for refused engine calls."""


def refused(r, code):
    """Assert ``r`` is a failure receipt ``{ok: False, code, error}`` with ``code`` and a
    non-empty message; return the message."""
    assert isinstance(r, dict) and r.get("ok") is False, r
    assert r["code"] == code, r
    assert isinstance(r["error"], str) and r["error"].strip()
    assert set(r) == {"ok", "code", "error"}, r
    return r["error"]
