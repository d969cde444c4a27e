"""The one secret detector (issue 14 item 2): every kind of secret the issue lists is found and
masked, the project's own seal fields are never read, ordinary research text is left alone,
and a megabyte of hostile text is scanned in linear time. ``verify`` and the reviewer use it."""

from __future__ import annotations

import importlib
import json

import nbformat
import pytest

from dsh_notebook import secretscan
from dsh_notebook.artifact.seal import verify
from dsh_notebook.reviewer.review import mask_secrets
from dsh_notebook.secretscan import find, find_in_json, mask

HEX64 = "9f2c4e1a7b3d5f60" * 4
K = "Zx9kQ2mP7vR4tY8wL3nB6cF1hJ5gD0sA"  # a random-looking secret value
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5"
       "MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
AZURE = "AccountKey=" + "lJzRc1YdHaAA2KCNJJ1tkYwF/+mKK6Ygw0NGe170Xu592euJv2wYUtBlV8z+qnlcNQSnIYVTkLWntUO1F8j8rQ=="

#: (text, the secret in it that must not survive masking)
SECRETS = [
    # .env assignments
    (f"JWT_SECRET={HEX64}", HEX64),
    ("export DB_PASSWORD=Tr0ub4dor&3", "Tr0ub4dor"),
    ('SESSION_KEY="n8Vq2LzX0pWm4Rk7"', "n8Vq2LzX0pWm4Rk7"),
    ("GITHUB_TOKEN=ghs_" + "b7" * 18, "ghs_" + "b7" * 18),
    # JSON fields named like keys, tokens, secrets and passwords
    ('{"api_key": "Zx81kq0PmL2"}', "Zx81kq0PmL2"),
    ('{"client_secret": "q8~Zr.7Kd-Wp"}', "q8~Zr.7Kd-Wp"),
    ('{"access_token": "ya29.A0ARrdaM9xK2p"}', "ya29.A0ARrdaM9xK2p"),
    ('{"password": "correct horse battery staple"}', "correct horse battery staple"),
    # YAML and INI fields
    ("db:\n  host: localhost\n  password: s3cr3t-Value\n", "s3cr3t-Value"),
    ("- token: FwoGZXIvYXdzEDMaDNaLkp3Xy9", "FwoGZXIvYXdzEDMaDNaLkp3Xy9"),
    ("[smtp]\npasswd = mailpass99", "mailpass99"),
    # code and command lines
    ("SECRET_KEY = 'django-insecure-8v#k3!x'", "django-insecure-8v#k3!x"),
    ("mysql --password hunter2pass -u root", "hunter2pass"),
    ("https://api.example.org/data?access_token=ya29A0ARrdaM9xyz123&x=1", "ya29A0ARrdaM9xyz123"),
    # JWTs, Basic auth, URL credentials
    (f"token: {JWT}", JWT),
    (f"the cookie held {JWT} yesterday", JWT),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    ("curl -H 'Authorization: Bearer 8f7a6b5c4d3e2f1a'", "8f7a6b5c4d3e2f1a"),
    ("Bearer abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz"),
    ("postgres://admin:hunter2@db.example.org/app", "hunter2"),
    ("base_url = http://ana:pa/ss@10.0.0.5/v1", "pa/ss"),
    # PEM and OpenSSH private keys
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEA"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
     "b3BlbnNzaC1rZXktdjEAAAAA"),
    ("-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIGq\n-----END PRIVATE KEY-----", "MC4CAQAwBQYDK2VwBCIEIGq"),
    ("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg\n", "MHcCAQEEIBkg"),
    # cloud and service keys
    ("AKIAIOSFODNN7EXAMPLE is the key id", "AKIAIOSFODNN7EXAMPLE"),
    ('aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"', "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    (f"DefaultEndpointsProtocol=https;AccountName=x;{AZURE}", AZURE[11:]),
    ("key AIza" + "Bq3" * 11 + "xy", "AIza" + "Bq3" * 11 + "xy"),
    ("ghp_" + "A1b2" * 9, "ghp_" + "A1b2" * 9),
    ("github_pat_" + "11ABCDEFG0" * 6, "github_pat_" + "11ABCDEFG0" * 6),
    ("glpat-abcdefghijklmnopqrst", "glpat-abcdefghijklmnopqrst"),
    ("xoxb-1234567890-0987654321-AbCdEfGhIjKl", "xoxb-1234567890-0987654321-AbCdEfGhIjKl"),
    ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("SG." + "a1B2c3D4e5F6g7H8i9J0kL" + "." + "m" * 43, "SG." + "a1B2c3D4e5F6g7H8i9J0kL"),
    ("pypi-AgEIcHlwaS5vcmc" + "x1Y2" * 20, "pypi-AgEIcHlwaS5vcmc" + "x1Y2" * 20),
    ("npm_" + "aB3" * 12, "npm_" + "aB3" * 12),
    # model providers' keys
    ("sk-" + "0123456789abcdef" * 2, "sk-" + "0123456789abcdef" * 2),
    ("sk-proj-abcDEF1234567890abcdefGHIJ", "sk-proj-abcDEF1234567890abcdefGHIJ"),
    ("use sk-ant-api03-" + "Ab1" * 30 + " here", "sk-ant-api03-" + "Ab1" * 30),
    ("sk-or-v1-" + "c0ffee12" * 8, "sk-or-v1-" + "c0ffee12" * 8),
    ("sk-T3BlbkFJ" + "x" * 5, None),  # too short for anything: must not crash
    ("sk-abcdefghijklmnopqrstuvwx", "sk-abcdefghijklmnopqrstuvwx"),
    ("sk-" + "a" * 20 + "T3BlbkFJ" + "b" * 20, "T3BlbkFJ"),
    ("gsk_" + "q1W2e3R4" * 6, "gsk_" + "q1W2e3R4" * 6),
    ("hf_abcdefghijklmnopqrstuvwxyz", "hf_abcdefghijklmnopqrstuvwxyz"),
    # from an attack review: a call's keyword argument, glued names, odd values, commands, headers
    (f"conn = psycopg2.connect(host='db', user='me', password='{K}')", K),
    (f"client = Mistral(api_key='{K}')", K),
    (f"s3 = boto3.client('s3', aws_secret_access_key='{K}/abcd')", K),
    ("PGPASSWORD=hunter2024", "hunter2024"), (f"%env PGPASSWORD={K}", K), ("ROOTPASSWORD: hunter2024", "hunter2024"),
    ('newpassword="hunter2024"', "hunter2024"), (f"OPENAIKEY={K}", K), (f"HFTOKEN={K}", K),
    ('password = "84736291"', "84736291"), ('{"password": "84736291"}', "84736291"),
    ('password = "пароль2024Секрет"', "пароль2024Секрет"), ('''password = "it'sMe2024!"''', "it'sMe2024!"),
    ("DB_PASSWORD=my;pass;word1", "my;pass;word1"), ("DB_PASSWORD=s3cr3t#2024", "s3cr3t#2024"),
    ("password: correct horse battery staple", "correct horse"), ("--password=x<y>z1234", "x<y>z1234"),
    (f"curl -H 'x-api-key: {K}' https://api.example.org", K), (f"curl -u admin:{K} https://x", K),
    (f"docker login -u me -p {K} registry", K), (f"mysql -u root -p{K}", K), (f"sshpass -p '{K}' ssh x", K),
    (f"Cookie: a=1; session={K}", K), (f"https://{K}@github.com/me/repo.git", K),
    ("-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIabcdef\n-----END ENCRYPTED PRIVATE KEY-----", "MIIabcdef"),
    ("PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 1\nQUJDREVG\nPrivate-MAC: abcdef12", "QUJDREVG"),
    ("GOCSPX-" + K[:28], K[:28]), ("ya29." + K + K, K), (f"password = f'{K}'", K), (f'password = """{K}"""', K),
    (f"<password>{K}</password>", K), (f"os.environ.setdefault('OPENAI_API_KEY','{K}')", K),
    (f"%env OPENAI_API_KEY {K}", K), (f"パスワード: {K}", K), (f"Authorization: Bearer {K}%2F{K}", f"%2F{K}"),
]


@pytest.mark.parametrize(("text", "secret"), SECRETS, ids=[t[:28] for t, _ in SECRETS])
def test_every_listed_kind_of_secret_is_found_and_masked(text, secret):
    masked, n = mask(text)
    if secret is None:
        return
    assert n >= 1 and secret not in masked and "[secret]" in masked


def test_masking_keeps_the_names_and_the_rest_of_the_text():
    assert mask(f"JWT_SECRET={HEX64}\nDEBUG=true")[0] == "JWT_SECRET=[secret]\nDEBUG=true"
    assert mask('{"api_key": "Zx81kq0PmL2", "model": "deepseek-chat"}')[0] == \
        '{"api_key": "[secret]", "model": "deepseek-chat"}'
    assert mask("see postgres://admin:hunter2@db.example.org/app now")[0] == \
        "see postgres://[secret]@db.example.org/app now"
    text = "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nQUJD\n-----END RSA PRIVATE KEY-----\nb"
    assert mask(text)[0] == "a\n[secret]\nb"


def test_every_chosen_detect_secrets_plugin_is_exercised_by_an_example():
    """Each plugin fires on one of the examples, its hints let those lines reach it, and the scan
    finds the secret there."""
    for spec in secretscan.PLUGINS:
        module, cls = spec.rsplit(".", 1)
        if module in ("high_entropy_strings", "keyword"):
            continue  # entropy: only on values whose name says secret; keyword: by name, above
        plugin = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), cls)()
        fired = [text for text, _ in SECRETS if list(plugin.analyze_string(text))]
        assert fired, f"no example for {cls}"
        for text in fired:
            assert any(h in text.lower() for h in secretscan.PLUGIN_HINTS[cls]), (cls, text)
            assert find(text), (cls, text)


NOT_SECRETS = [
    'api_key_env = "DEEPSEEK_API_KEY"',
    "max_tokens = 4096",
    '"usage": {"prompt_tokens": 512, "completion_tokens": 77}',
    "The secret of the method is that the boundary layer is thin.",
    "compass: northwest",
    "secretary: Jane",
    "tokenizer: cl100k_base",
    'password: "${DB_PASSWORD}"',
    "password = getpass()",
    "password = os.environ['DB_PASSWORD']",
    "api_key: <your key here>",
    "password: ********",
    "api_key=[secret]",
    "Password: see below.",
    "key: value",
    "auth: true",
    "token: eos",
    "Passing the test, we note that the bearer of this letter is honest.",
    "from sklearn import svm  # scikit-learn sk-learn-model-version-name",
    "token budget: 4096 tokens",
    "http://localhost:8080/v1 and https://example.org/a@b and mailto:someone@example.org",
    "http://host:8080/p?email=a@b.com",
    '"sessionId":"06381696-0074-49f8-863e-6ad4fac507f9"',
    "given rho = 1.68e-8 ohm*m\nR = @rho*@L/@A\nshow R in mohm",
    "api_key='ollama'  # any string works for a local server",
    'os.environ["DEEPSEEK_API_KEY"] = "scripted-server-needs-no-key"',
    "{'PWD': '/home/alice/project', 'OLDPWD': '/home/alice'}",
    "PWD=/home/alice/work",
    "{'password_min_length': 12, 'password_policy': 'strong'}",
    'pass_fail = "pass"',
    "password_sha256 = '" + "ab12" * 16 + "'",
    "Authorization: 2024-05-01T12:00:00Z approved",
    f"sha256: {HEX64}",
    '"model_id": "IPY_MODEL_4f0a9d2c1b7e4e5d8a3c6b9f0e1d2c3b"',
]


@pytest.mark.parametrize("text", NOT_SECRETS, ids=[t[:28] for t in NOT_SECRETS])
def test_ordinary_text_is_not_taken_for_a_secret(text):
    assert find(text) == []


SEALS = {"sha256": HEX64, "hash": HEX64, "prev": HEX64, "head": "sha256:" + HEX64, "fulltext_sha256": HEX64,
         "signature": "-----BEGIN SSH SIGNATURE-----\nU1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTk=\n"
                      "-----END SSH SIGNATURE-----", "public_key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ ana@lab"}


def test_the_projects_own_seal_fields_are_never_read_exempt_by_field_not_by_file():
    # even a value that would be a secret anywhere else is not read under a seal's field name
    planted = "AKIAIOSFODNN7EXAMPLE"
    doc = {"type": "human-decision-recorded", **SEALS, "chain": {"hash": planted, "prev": planted},
           "records": {"r1": {"sha256": planted}}}
    assert list(find_in_json(doc)) == []
    # the same value in a field people write is found, with its path
    doc["note"] = f"the key is {planted}"
    found = list(find_in_json(doc))
    assert [(path, s.kind) for path, _, s in found] == [("$.note", "AWS Access Key")]


def test_a_field_named_like_a_secret_is_a_secret_whatever_its_shape():
    found = list(find_in_json({"settings": {"deepseek": {"api_key": "short one", "api_key_env": "DEEPSEEK_API_KEY"},
                                            "search": {"password": "correct horse"}}}))
    assert sorted(path for path, _, _ in found) == ["$.settings.deepseek.api_key", "$.settings.search.password"]


def test_verify_reads_the_notebook_field_by_field_and_names_where(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("Notes.\n\nJWT_SECRET=" + HEX64),
        nbformat.v4.new_code_cell("x = 1", outputs=[nbformat.v4.new_output(
            "stream", name="stdout", text='{"api_key": "Zx81kq0PmL2"}\n')]),
    ])
    nb.metadata["dsh"] = {"records": {"r1": {"sha256": HEX64}}}
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    side = tmp_path / "nb.dsh" / "sessions"
    side.mkdir(parents=True)
    (side / "s.jsonl").write_text(json.dumps({"role": "tool", "content": "db:\n  password: s3cr3t-Value\n",
                                              "hash": HEX64}) + "\n")
    bad = [f for f in verify(path) if f.check == 4 and f.ok is False]
    details = " | ".join(f"{f.subject}: {f.detail}" for f in bad)
    assert "$.cells[0].source" in details and "$.cells[1].outputs[0].text" in details
    assert "nb.dsh/sessions/s.jsonl: line 1, $.content" in details
    assert HEX64[:8] not in details and "Zx81kq0PmL2" not in details and "s3cr3t" not in details
    assert len(bad) == 3  # the record's sha256 and the log line's hash are seals, not secrets


def test_keys_and_json_inside_strings_are_read_and_a_path_never_shows_a_secret(tmp_path):
    key = "ghp_" + "Zx9kQ2mP7vR4tY8wL3nB6cF1hJ5gD0sAabcd"
    doc = {"usage_by_key": {"sk-proj-Zx9kQ2mP7vR4tY8wL3nB6cF1": {"calls": 3}}, "other": {key: {"password": "hunter2024"}},
           "tool": {"arguments": json.dumps({"cmd": 'export OPENAI_API_KEY="Zx9kQ2mP7vR4tY8wL3nB6cF1"'})}}
    found = list(find_in_json(doc))
    paths = [p for p, _, _ in found]
    assert "$.usage_by_key.{key}" in paths and "$.other.{key}" in paths and "$.tool.arguments(json).cmd" in paths
    assert "$.other.[secret].password" in paths and not any(key in p for p in paths)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("x")])
    nb.cells[0].metadata["other"] = {key: {"password": "hunter2024"}}
    nbformat.write(nb, tmp_path / "k.ipynb")
    details = " ".join(f.detail for f in verify(tmp_path / "k.ipynb") if f.check == 4)
    assert "ghp_Zx9k" not in details.replace("ghp_…", "") and key not in details and "hunter2024" not in details


def test_the_reviewers_masking_is_the_same_detector():
    text = f'.env:\nJWT_SECRET={HEX64}\nconfig.json: {{"api_key": "Zx81kq0PmL2"}}'
    masked, n = mask_secrets(text)
    assert n == 2 and HEX64 not in masked and "Zx81kq0PmL2" not in masked and masked == mask(text)[0]


@pytest.mark.parametrize("text", [
    "key " * 250_000, "password=" * 100_000, "api_key: 'a' " * 70_000, "k" + "ey" * 500_000, "eyJ" * 300_000,
    "a://b:c@" * 100_000, "sk-" + "a1" * 500_000, "token: abc\n" * 100_000,
    "-----BEGIN RSA PRIVATE KEY-----\n" * 30_000, "-----BEGIN RSA PRIVATE KEY----- " * 30_000,
    "Authorization: " * 70_000, "bearer " * 140_000, "xoxb-1-" * 140_000, "AccountKey=" * 90_000,
    "//x/:_authToken=" * 60_000, "ghp_" + "a" * 1_000_000, ("ghp_" + "A" * 36 + " ") * 25_000,
    '{"api_key": "' + "a" * 1_000_000 + '"}', "aws_secret='" * 90_000,
    " " * 160_000 + "key " * 40_000, repr(["pass"] * 120_000), "['username', 'password', 'email'], " * 30_000,
    "password=( " * 90_000, "".join(f"{i},pass,0.93\n" for i in range(100_000)), ("A" * 505 + " ghp_" + "B" * 36) * 1800,
    "Authorization: " * 70_000, "-----BEGIN RSA PRIVATE KEY----- " * 30_000, "%env " * 200_000,
    "<password>" * 100_000, "curl " + "-u a:b " * 100_000,
], ids=lambda t: repr(t[:14]))
def test_a_megabyte_of_hostile_text_is_scanned_in_linear_time(text):
    """Each took minutes (or ran out of memory) before the scan was bounded; a regression hangs
    here rather than passing slowly."""
    masked, _ = mask(text)
    assert len(masked) <= len(text) + 8 * len(find(text))
