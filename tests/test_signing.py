"""SSH signatures (issue 15 items 1 and 4): the person's key created on first use, signatures in
OpenSSH's SSHSIG format checked both ways with ``ssh-keygen -Y`` (OpenSSH's own client), an
encrypted key used through ssh-agent, and allowed-signers files as git and ssh-keygen read them."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from datetime import UTC, datetime

import pytest

from dsh_notebook import signing
from dsh_notebook.signing import AllowedSigners, SignatureInvalid, SigningError

SSH_KEYGEN = shutil.which("ssh-keygen")
needs_openssh = pytest.mark.skipif(SSH_KEYGEN is None, reason="OpenSSH's ssh-keygen is not installed (apt-get install openssh-client)")
PAYLOAD = b'{"cells":["a"],"files":{"records/1.jsonl":"ab"}}'


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("DSH_SIGNING_KEY", raising=False)
    return tmp_path / "home"


def test_the_key_is_created_on_first_use_private_and_stable(home):
    path = signing.ensure_key()
    assert path == home / "signing" / "id_ed25519"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    line = signing.public_key_line()
    assert line.startswith("ssh-ed25519 AAAA") and "@" in line.split()[2]
    assert signing.ensure_key() == path and signing.public_key_line() == line  # never replaced


def test_a_signature_verifies_and_names_its_signer(home):
    sig = signing.sign(PAYLOAD)
    assert sig.startswith("-----BEGIN SSH SIGNATURE-----\n") and sig.endswith("-----END SSH SIGNATURE-----\n")
    who = signing.verify(PAYLOAD, sig)
    line = signing.public_key_line()
    assert who.public_key == " ".join(line.split()[:2]) and who.fingerprint == signing.fingerprint_of(line)
    for changed in (PAYLOAD + b" ", PAYLOAD.replace(b"ab", b"ac"), b""):
        with pytest.raises(SignatureInvalid, match="does not match"):
            signing.verify(changed, sig)
    with pytest.raises(SignatureInvalid, match="namespace 'dsh-notebook', not 'git'"):
        signing.verify(PAYLOAD, sig, namespace="git")
    for broken in ("", "x", sig.replace("A", "B", 1)[:60] + sig[60:], sig[:-40] + "\n-----END SSH SIGNATURE-----\n"):
        with pytest.raises(SignatureInvalid):
            signing.verify(PAYLOAD, broken)


@needs_openssh
def test_ssh_keygen_verifies_our_signature(home, tmp_path):
    sig = signing.sign(PAYLOAD)
    (tmp_path / "sig").write_text(sig)
    (tmp_path / "allowed").write_text(f'ana@lab namespaces="dsh-notebook" {signing.public_key_line()}\n')
    done = subprocess.run([SSH_KEYGEN, "-Y", "verify", "-f", str(tmp_path / "allowed"), "-I", "ana@lab", "-n",
                           "dsh-notebook", "-s", str(tmp_path / "sig")], input=PAYLOAD, capture_output=True)
    assert done.returncode == 0 and b"Good" in done.stdout, done.stderr
    done = subprocess.run([SSH_KEYGEN, "-Y", "verify", "-f", str(tmp_path / "allowed"), "-I", "ana@lab", "-n",
                           "dsh-notebook", "-s", str(tmp_path / "sig")], input=PAYLOAD + b"x", capture_output=True)
    assert done.returncode != 0


@needs_openssh
def test_we_verify_a_signature_ssh_keygen_made(tmp_path):
    key = tmp_path / "id"
    subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", "bo@lab", "-f", str(key)], check=True)
    (tmp_path / "msg").write_bytes(PAYLOAD)
    subprocess.run([SSH_KEYGEN, "-Y", "sign", "-q", "-f", str(key), "-n", "dsh-notebook", str(tmp_path / "msg")],
                   check=True)
    who = signing.verify(PAYLOAD, (tmp_path / "msg.sig").read_text())
    assert who.public_key == " ".join(key.with_suffix(".pub").read_text().split()[:2])


@needs_openssh
def test_an_encrypted_key_signs_through_ssh_agent(tmp_path, monkeypatch):
    key = tmp_path / "id_enc"
    subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "a passphrase", "-C", "cy@lab", "-f", str(key)],
                   check=True)
    monkeypatch.setenv("DSH_NOTEBOOK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DSH_SIGNING_KEY", str(key))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    with pytest.raises(SigningError, match="ssh-add"):  # no agent: refused, never a prompt
        signing.sign(PAYLOAD)
    agent = subprocess.run(["ssh-agent", "-s"], capture_output=True, text=True, check=True).stdout
    env = dict(line.split(";")[0].split("=", 1) for line in agent.splitlines() if "=" in line.split(";")[0])
    try:
        monkeypatch.setenv("SSH_AUTH_SOCK", env["SSH_AUTH_SOCK"])
        askpass = tmp_path / "askpass"
        askpass.write_text("#!/bin/sh\necho 'a passphrase'\n")
        askpass.chmod(0o700)
        subprocess.run(["ssh-add", str(key)], check=True, capture_output=True, stdin=subprocess.DEVNULL,
                       env={**os.environ, "SSH_ASKPASS": str(askpass), "SSH_ASKPASS_REQUIRE": "force",
                            "DISPLAY": ":0"})
        sig = signing.sign(PAYLOAD)
        assert signing.verify(PAYLOAD, sig).public_key == " ".join(key.with_suffix(".pub").read_text().split()[:2])
    finally:
        subprocess.run(["kill", env["SSH_AGENT_PID"]], check=False)


def test_a_named_key_that_is_missing_or_open_to_others_is_refused(home, tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_SIGNING_KEY", str(tmp_path / "nope"))
    with pytest.raises(SigningError, match="does not exist"):
        signing.sign(PAYLOAD)
    assert not (tmp_path / "nope").exists()
    monkeypatch.delenv("DSH_SIGNING_KEY")
    path = signing.ensure_key()
    path.chmod(0o644)
    with pytest.raises(SigningError, match="chmod 600"):
        signing.sign(PAYLOAD)


def test_the_signing_key_setting(home):
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.toml").write_text('[signing]\nkey = 5\n')
    with pytest.raises(SigningError, match=r"\[signing\] key = 5"):
        signing.sign(PAYLOAD)
    (home / "settings.toml").write_text('[signing]\nkey = "~/no/such/key"\n')
    with pytest.raises(SigningError, match="no/such/key does not exist"):
        signing.sign(PAYLOAD)


def test_allowed_signers_principals_namespaces_and_validity(home):
    sig = signing.sign(PAYLOAD)
    who = signing.verify(PAYLOAD, sig)
    key = signing.public_key_line()
    listed = AllowedSigners.parse(f"# the lab\nana@lab,ana@uni {key}\n")
    assert listed.principal_for(who) == "ana@lab,ana@uni"
    assert AllowedSigners.parse(f'ana@lab namespaces="git,file" {key}\n').principal_for(who) is None
    assert AllowedSigners.parse(f'ana@lab namespaces="dsh-*" {key}\n').principal_for(who) == "ana@lab"
    window = AllowedSigners.parse(f'ana@lab valid-after="20260101Z",valid-before="20270101Z" {key}\n')
    assert window.principal_for(who, at=datetime(2026, 6, 1, tzinfo=UTC)) == "ana@lab"
    assert window.principal_for(who, at=datetime(2027, 6, 1, tzinfo=UTC)) is None
    other = subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-f", str(home / "o")], check=True) \
        if SSH_KEYGEN else None
    if other is not None:
        assert AllowedSigners.parse(f"bo@lab {(home / 'o.pub').read_text()}").principal_for(who) is None
    for bad, says in ((f"ana@lab cert-authority {key}", "cert-authority"), ("ana@lab", "expected"),
                      (f"ana@lab frob=1 {key}", "unknown option"), ("ana@lab ssh-ed25519 !!!", "does not decode"),
                      (f'ana@lab valid-after="2026" {key}', "is not a time")):
        with pytest.raises(ValueError, match=says):
            AllowedSigners.parse(bad + "\n", "signers")


def test_dsh_notebook_key_prints_the_public_key_line(home):
    import sys

    run = [sys.executable, "-m", "dsh_notebook.cli", "key"]
    first = subprocess.run(run, capture_output=True, text=True, env={**os.environ}, timeout=120)
    assert first.returncode == 0 and first.stdout.startswith("ssh-ed25519 AAAA")
    again = subprocess.run(run + ["-v"], capture_output=True, text=True, env={**os.environ}, timeout=120)
    assert again.stdout == first.stdout and "SHA256:" in again.stderr
    bad = subprocess.run(run, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "DSH_SIGNING_KEY": str(home / "missing")})
    assert bad.returncode == 2 and "does not exist" in bad.stderr and not bad.stdout
