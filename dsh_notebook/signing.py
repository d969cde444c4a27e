"""SSH signatures for seals (spec: storage.md "Verification"; issue 15 items 1 and 4).

A person's key is an OpenSSH key: by default an Ed25519 key created on first use at
``$DSH_NOTEBOOK_HOME/signing/id_ed25519`` (mode 0600, no passphrase, with its ``.pub``), or
one they already use, named by ``DSH_SIGNING_KEY`` or ``[signing] key`` in ``settings.toml``.

Signatures follow OpenSSH's PROTOCOL.sshsig (the format of ``ssh-keygen -Y sign``, namespace
:data:`NAMESPACE`, hash sha512), so anyone can check one without this package::

    ssh-keygen -Y verify -f allowed_signers -I PRINCIPAL -n dsh-notebook -s SIG < PAYLOAD

- :func:`sign` signs with ``cryptography`` when the key file is an unencrypted Ed25519 key; an
  encrypted key, a key held by ssh-agent, or a FIDO key (``sk-ssh-ed25519``) is signed through
  ``ssh-keygen -Y sign`` (which asks the agent; it never prompts: no terminal is given to it).
- :func:`verify` checks a signature in pure Python for ``ssh-ed25519`` and
  ``sk-ssh-ed25519@openssh.com`` keys and returns the :class:`Signer` (fingerprint, comment).
- :class:`AllowedSigners` reads the allowed-signers file git and ``ssh-keygen`` use
  (principals, ``namespaces=``, ``valid-after=``, ``valid-before=``; ``cert-authority`` lines
  are refused by name, since certificates are not supported).

Imports nothing of the package but :mod:`.errors`, :mod:`.storage` and :mod:`.settings`.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import DshError
from .storage import home

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

__all__ = ["NAMESPACE", "AllowedSigners", "SignatureInvalid", "Signer", "SigningError", "ensure_key", "fingerprint_of",
           "key_path", "public_key_line", "sign", "verify"]

#: The SSHSIG namespace of every signature this package makes (``-n dsh-notebook``).
NAMESPACE = "dsh-notebook"
#: The environment variable naming the person's private key file (over ``[signing] key``).
KEY_ENV = "DSH_SIGNING_KEY"
_MAGIC = b"SSHSIG"
_ARMOR = ("-----BEGIN SSH SIGNATURE-----", "-----END SSH SIGNATURE-----")
_ED25519, _SK_ED25519 = "ssh-ed25519", "sk-ssh-ed25519@openssh.com"


class SigningError(DshError):
    """No signature could be made: no key, an unusable key file, ``ssh-keygen`` missing or
    refusing (the message names which and what to do)."""

    code = "SIGNING"


class SignatureInvalid(DshError, ValueError):
    """A signature that does not check: malformed, another namespace, an unsupported key type,
    or not made over these bytes by this key (the message says which)."""

    code = "SIGNATURE_INVALID"


@dataclass(frozen=True)
class Signer:
    """Who signed: ``public_key`` is the key's ``type base64`` (no comment), ``fingerprint``
    ``SHA256:...`` as ``ssh-keygen -l`` prints it, ``comment`` the comment of the ``.pub`` line
    when the signer's own key is at hand (else ``""``)."""

    key_type: str
    public_key: str
    fingerprint: str
    comment: str = ""

    def as_dict(self) -> dict:
        return {"key_type": self.key_type, "public_key": self.public_key, "fingerprint": self.fingerprint,
                "comment": self.comment}


# ------------------------------------------------------------------------------- wire format


def _string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.at + n > len(self.data):
            raise SignatureInvalid("the signature is truncated")
        out = self.data[self.at:self.at + n]
        self.at += n
        return out

    def uint32(self) -> int:
        return int(struct.unpack(">I", self.take(4))[0])

    def string(self) -> bytes:
        return self.take(self.uint32())

    def done(self) -> bool:
        return self.at == len(self.data)


def _fingerprint(blob: bytes) -> str:
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def _signed_data(payload: bytes, namespace: str, hash_alg: str) -> bytes:
    digest = hashlib.new(hash_alg, payload).digest()
    return _MAGIC + _string(namespace.encode()) + _string(b"") + _string(hash_alg.encode()) + _string(digest)


def _armor(blob: bytes) -> str:
    text = base64.b64encode(blob).decode()
    return "\n".join([_ARMOR[0], *(text[i:i + 70] for i in range(0, len(text), 70)), _ARMOR[1]]) + "\n"


def _unarmor(armored: str) -> bytes:
    if not isinstance(armored, str) or len(armored) > 65536:
        raise SignatureInvalid("the signature is not an armored SSH signature")
    lines = [ln.strip() for ln in armored.strip().splitlines()]
    if len(lines) < 3 or lines[0] != _ARMOR[0] or lines[-1] != _ARMOR[1]:
        raise SignatureInvalid("the signature is not an armored SSH signature (-----BEGIN SSH SIGNATURE-----)")
    try:
        return base64.b64decode("".join(lines[1:-1]), validate=True)
    except ValueError:
        raise SignatureInvalid("the signature's base64 does not decode") from None


def _key_blob(line: str) -> tuple[str, bytes, str]:
    """``(type, wire blob, comment)`` of a public key line ``type base64 [comment]``."""
    parts = line.strip().split(None, 2)
    if len(parts) < 2:
        raise SignatureInvalid(f"not a public key line: {line[:60]!r}")
    try:
        blob = base64.b64decode(parts[1], validate=True)
    except ValueError:
        raise SignatureInvalid(f"the public key's base64 does not decode: {line[:60]!r}") from None
    if _Reader(blob).string().decode("ascii", "replace") != parts[0]:
        raise SignatureInvalid(f"the public key's type does not match its data: {line[:60]!r}")
    return parts[0], blob, parts[2] if len(parts) > 2 else ""


# ------------------------------------------------------------------------------- keys


def key_path() -> Path:
    """The person's private key file: ``DSH_SIGNING_KEY``, else ``[signing] key`` in
    ``settings.toml``, else ``$DSH_NOTEBOOK_HOME/signing/id_ed25519`` (``~`` expanded).
    Raises :class:`SigningError` when ``[signing] key`` is not a usable value."""
    named = os.environ.get(KEY_ENV)
    if not named:
        from .settings import load_settings

        table = load_settings().signing
        if table.problems:
            raise SigningError("; ".join(table.problems))
        named = table.key
    return Path(os.path.expanduser(named)) if named else home() / "signing" / "id_ed25519"


def ensure_key() -> Path:
    """The private key file, created when it is the default one and does not exist yet: an
    Ed25519 key in OpenSSH format, mode 0600, no passphrase, its ``.pub`` beside it with the
    comment ``user@host``. A named key that does not exist is a :class:`SigningError` (it is
    never created in someone else's place)."""
    path = key_path()
    if path.exists() or _agent_only(path):
        return path
    if path != home() / "signing" / "id_ed25519":
        raise SigningError(f"the signing key {path} does not exist (named by {KEY_ENV} or [signing] key); create it "
                           "with ssh-keygen -t ed25519, or unset the name to use the key dsh-notebook creates")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    comment = f"{_user()}@{socket.gethostname()}"
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(private)
    path.with_suffix(".pub").write_text(f"{public.decode()} {comment}\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def _user() -> str:
    try:
        import getpass

        return re.sub(r"\s+", "-", getpass.getuser()) or "someone"
    except (KeyError, OSError):
        return "someone"


def _agent_only(path: Path) -> bool:
    """A ``.pub`` file named as the key, for a key that lives in ssh-agent (or a FIDO token)."""
    return path.suffix == ".pub" and path.is_file()


def public_key_line(path: Path | None = None) -> str:
    """The public key line ``type base64 comment`` of the person's key (created if it is the
    default one and missing): the ``.pub`` beside it, else derived from the private key."""
    path = ensure_key() if path is None else path
    pub = path if path.suffix == ".pub" else path.with_name(path.name + ".pub")
    if pub.is_file():
        line = pub.read_text(encoding="utf-8").strip().splitlines()[0] if pub.stat().st_size else ""
        if line:
            _key_blob(line)
            return line
    key = _load_private(path)
    if key is None:
        raise SigningError(f"no public key beside {path} ({pub.name} is missing) and the private key is encrypted: "
                           f"write it with ssh-keygen -y -f {path} > {pub}")
    from cryptography.hazmat.primitives import serialization

    return key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()


def _load_private(path: Path) -> Ed25519PrivateKey | None:
    """The key, or None when ssh-keygen must sign (encrypted, a FIDO key, another type)."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SigningError(f"cannot read the signing key {path}: {exc.strerror or exc}") from None
    if path.stat().st_mode & 0o077 and os.name == "posix":
        raise SigningError(f"the signing key {path} is readable by others (mode {oct(path.stat().st_mode & 0o777)}): "
                           f"chmod 600 {path}")
    try:
        key = serialization.load_ssh_private_key(data, password=None)
    except TypeError:  # encrypted: ssh-keygen asks the agent
        return None
    except (ValueError, UnsupportedAlgorithm):
        if b"sk-ssh-ed25519" in data or b"OPENSSH PRIVATE KEY" in data:
            return None  # a FIDO key, or a type cryptography does not read: ssh-keygen signs
        raise SigningError(f"{path} is not an OpenSSH private key") from None
    return key if isinstance(key, Ed25519PrivateKey) else None


# ------------------------------------------------------------------------------- sign


def sign(payload: bytes, *, key: Path | None = None, namespace: str = NAMESPACE) -> str:
    """The armored SSH signature (``-----BEGIN SSH SIGNATURE-----``) of *payload* by the
    person's key (or *key*). Raises :class:`SigningError` naming the problem."""
    path = ensure_key() if key is None else key
    private = None if _agent_only(path) else _load_private(path)
    if private is None:
        return _sign_with_ssh_keygen(payload, path, namespace)
    from cryptography.hazmat.primitives import serialization

    line = private.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    blob = base64.b64decode(line.split()[1])
    signature = private.sign(_signed_data(payload, namespace, "sha512"))
    wrapped = _string(_ED25519.encode()) + _string(signature)
    return _armor(_MAGIC + struct.pack(">I", 1) + _string(blob) + _string(namespace.encode()) + _string(b"")
                  + _string(b"sha512") + _string(wrapped))


def _sign_with_ssh_keygen(payload: bytes, path: Path, namespace: str) -> str:
    exe = shutil.which("ssh-keygen")
    if exe is None:
        raise SigningError(f"the signing key {path} is encrypted, held by ssh-agent or a FIDO key, and ssh-keygen is "
                           "not installed to sign with it (install OpenSSH's client)")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "payload"
        data.write_bytes(payload)
        try:
            done = subprocess.run([exe, "-Y", "sign", "-q", "-f", str(path), "-n", namespace, str(data)],
                                  check=False, stdin=subprocess.DEVNULL, capture_output=True, timeout=120,
                                  start_new_session=True)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SigningError(f"ssh-keygen -Y sign did not finish: {exc}") from None
        sig = data.with_name("payload.sig")
        if done.returncode != 0 or not sig.is_file():
            why = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
            raise SigningError(f"ssh-keygen -Y sign refused with {path}: {why[0][:300]} (an encrypted key must be "
                               "added to ssh-agent first: ssh-add)")
        return sig.read_text(encoding="ascii")


# ------------------------------------------------------------------------------- verify


def verify(payload: bytes, armored: str, *, namespace: str = NAMESPACE) -> Signer:
    """The :class:`Signer` of a valid signature of *payload*; :class:`SignatureInvalid` naming
    why otherwise (malformed, another namespace, unsupported key type, bad signature)."""
    r = _Reader(_unarmor(armored))
    if r.take(6) != _MAGIC:
        raise SignatureInvalid("the signature does not start with SSHSIG")
    if r.uint32() != 1:
        raise SignatureInvalid("the signature's version is not 1")
    blob, ns, _reserved, hash_alg, wrapped = r.string(), r.string(), r.string(), r.string(), r.string()
    if not r.done():
        raise SignatureInvalid("the signature has bytes after its end")
    if ns.decode("utf-8", "replace") != namespace:
        raise SignatureInvalid(f"the signature is for namespace {ns.decode('utf-8', 'replace')[:40]!r}, not "
                               f"{namespace!r}")
    alg = hash_alg.decode("ascii", "replace")
    if alg not in ("sha512", "sha256"):
        raise SignatureInvalid(f"the signature's hash {alg[:20]!r} is not sha512 or sha256")
    k = _Reader(blob)
    key_type = k.string().decode("ascii", "replace")
    s = _Reader(wrapped)
    sig_type, sig = s.string().decode("ascii", "replace"), s.string()
    signed = _signed_data(payload, namespace, alg)
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    if key_type == _ED25519 and sig_type == _ED25519:
        raw = k.string()
        message = signed
    elif key_type == _SK_ED25519 and sig_type == _SK_ED25519:
        raw, application = k.string(), k.string()
        flags, counter = s.take(1), s.take(4)
        message = hashlib.sha256(application).digest() + flags + counter + hashlib.sha256(signed).digest()
    else:
        raise SignatureInvalid(f"the key type {key_type[:40]!r} is not supported (ssh-ed25519 and "
                               "sk-ssh-ed25519@openssh.com are)")
    if len(raw) != 32 or len(sig) != 64:
        raise SignatureInvalid("the signature's key or value has the wrong length")
    try:
        Ed25519PublicKey.from_public_bytes(raw).verify(sig, message)
    except InvalidSignature:
        raise SignatureInvalid("the signature does not match these bytes (they changed after signing, or it was "
                               "made by another key)") from None
    return Signer(key_type, f"{key_type} {base64.b64encode(blob).decode()}", _fingerprint(blob))


def fingerprint_of(public_key: str) -> str:
    """``SHA256:...`` of a public key line."""
    return _fingerprint(_key_blob(public_key)[1])


# ------------------------------------------------------------------------------- allowed signers


@dataclass(frozen=True)
class AllowedSigner:
    principals: tuple[str, ...]
    public_key: str  # "type base64"
    namespaces: tuple[str, ...] | None
    valid_after: datetime | None
    valid_before: datetime | None
    line: int


class AllowedSigners:
    """An allowed-signers file (``ssh-keygen(1)`` "ALLOWED SIGNERS"): one key per line,
    ``principals [options] keytype base64 [comment]``. Raises :class:`ValueError` naming the
    line for a line it cannot read (a ``cert-authority`` line among them)."""

    def __init__(self, entries: list[AllowedSigner], source: str = "") -> None:
        self.entries, self.source = entries, source

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> AllowedSigners:
        p = Path(path)
        if not p.is_file():
            raise ValueError(f"{p}: no such allowed-signers file")
        return cls.parse(p.read_text(encoding="utf-8"), str(p))

    @classmethod
    def parse(cls, text: str, source: str = "allowed signers") -> AllowedSigners:
        entries = []
        for n, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            entries.append(_parse_line(line, n, source))
        return cls(entries, source)

    def principal_for(self, signer: Signer, *, namespace: str = NAMESPACE, at: datetime | None = None) -> str | None:
        """The principals (comma-joined) listed for *signer*'s key, allowed for *namespace* at
        time *at* (now when None); ``None`` when no line allows it."""
        when = at or datetime.now(UTC)
        for e in self.entries:
            if e.public_key != signer.public_key:
                continue
            if e.namespaces is not None and not any(_glob(p, namespace) for p in e.namespaces):
                continue
            if (e.valid_after and when < e.valid_after) or (e.valid_before and when >= e.valid_before):
                continue
            return ",".join(e.principals)
        return None


def _tokens(line: str) -> Iterator[str]:
    """Whitespace-separated tokens, a double-quoted part kept whole (``namespaces="a,b"``)."""
    for m in re.finditer(r'(?:[^\s"]+|"[^"]*")+', line):
        yield m.group(0)


def _parse_line(line: str, n: int, source: str) -> AllowedSigner:
    toks = list(_tokens(line))
    where = f"{source} line {n}"
    if len(toks) < 3:
        raise ValueError(f"{where}: expected 'principals [options] keytype base64', got {line[:80]!r}")
    principals = tuple(p.strip('"') for p in toks[0].split(","))
    rest = toks[1:]
    namespaces = after = before = None
    if not rest[0].startswith(("ssh-", "sk-", "ecdsa-")):
        options = rest[0]
        if not re.fullmatch(r'(?:[A-Za-z-]+(?:="[^"]*"|=[^,"]*)?)(?:,[A-Za-z-]+(?:="[^"]*"|=[^,"]*)?)*', options):
            raise ValueError(f"{where}: cannot read the options {options[:80]!r}")
        for m in re.finditer(r'([A-Za-z-]+)(?:="([^"]*)"|=([^,"]*))?', options):
            name, value = m.group(1).lower(), m.group(2) if m.group(2) is not None else (m.group(3) or "")
            if name == "cert-authority":
                raise ValueError(f"{where}: cert-authority lines (SSH certificates) are not supported")
            if name == "namespaces":
                namespaces = tuple(v.strip() for v in value.split(",") if v.strip())
            elif name in ("valid-after", "valid-before"):
                stamp = _time(value, where)
                after, before = (stamp, before) if name == "valid-after" else (after, stamp)
            else:
                raise ValueError(f"{where}: unknown option {name!r}")
        rest = rest[1:]
    if len(rest) < 2:
        raise ValueError(f"{where}: the key is missing")
    key_type, blob, _ = _key_blob(f"{rest[0]} {rest[1]}")
    return AllowedSigner(principals, f"{key_type} {base64.b64encode(blob).decode()}", namespaces, after, before, n)


def _time(value: str, where: str) -> datetime:
    """``YYYYMMDD[HHMM[SS]][Z]`` as ssh-keygen reads it (local time unless ``Z``)."""
    m = re.fullmatch(r"(\d{8})(\d{4}(\d{2})?)?(Z?)", value)
    if not m:
        raise ValueError(f"{where}: {value!r} is not a time (YYYYMMDD[HHMM[SS]][Z])")
    text = value.rstrip("Z").ljust(14, "0")
    stamp = datetime.strptime(text, "%Y%m%d%H%M%S")  # noqa: DTZ007 - zoned just below, as ssh-keygen does
    return stamp.replace(tzinfo=UTC) if m.group(4) else stamp.astimezone(UTC)


def _glob(pattern: str, name: str) -> bool:
    import fnmatch

    return fnmatch.fnmatchcase(name, pattern)
