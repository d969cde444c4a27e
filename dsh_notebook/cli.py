"""``dsh-notebook``: the command line (spec: README.md "Public surface").

* ``run NOTEBOOK``: execute a notebook headless with nbclient in the current environment
  (``DSH_NOTEBOOK_PATH`` set to it, so records land in ``<stem>.dsh/``), save its outputs,
  print a table of the records it produced, exit 1 if a cell failed that is not tagged
  ``raises-exception``. ``run PATH...`` and ``verify PATH...`` with several notebooks, folders,
  ``--workers N`` or ``--scheduler ADDRESS`` work on a corpus (issue 23, :mod:`dsh_notebook.corpus`):
  this module only parses the arguments and prints.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .version import __version__

if TYPE_CHECKING:
    from .reckoner.records import Record

MIME_RECORD = "application/vnd.dsh.record+json"
MIME_SESSION = "application/vnd.dsh.session+json"


def _records_in(nb: Any) -> list[str]:
    """Record ids named by the notebook's outputs, in order (duplicates dropped)."""
    seen: list[str] = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            meta = out.get("metadata", {}).get("dsh") or {}
            if MIME_RECORD in out.get("data", {}):
                ids = [meta.get("record_id")]
            elif MIME_SESSION in out.get("data", {}):  # records a model wrote during a %%chat turn
                ids = meta.get("records") or []
            else:
                continue
            for rid in ids:
                if isinstance(rid, str) and rid and rid not in seen:
                    seen.append(rid)
    return seen


def _result_text(rec: Record) -> str:
    from .reckon.render import value_text
    from .reckoner.shown_units import from_json
    from .reckoner.values import parse_tagged

    stop = rec.stopping_refusal
    if stop is not None:  # a calculation that stopped at a refusal has no result to show
        return f"none: refused ({(stop.get('content') or {}).get('code')})"
    steps = rec.steps
    if not steps:
        return rec.closing_text or ""
    c = steps[-1]["content"]
    try:
        v = parse_tagged(c["result"])
        # in the unit the notebook shows it in (issue 18): the last `show` of it in a unit, else its own
        unit = next((r["content"]["unit"] for r in reversed(rec.rows) if r.get("tool") == "get" and r.get("ok")
                     and isinstance(r.get("content"), dict) and r["content"].get("name") == c["target"]
                     and "unit" in r["content"]), c.get("unit"))
        return f"{c['target']} = {value_text(v, 5, from_json(unit, v.sig.dim))}"
    except Exception:  # noqa: BLE001 - a result the table cannot format shows as stored, never stops the run
        return f"{c.get('target')} = {c.get('result')}"


def _corpus_wanted(args: argparse.Namespace, command: str) -> bool:
    """A corpus command (issue 23): several paths, a folder, --workers or --scheduler (and for
    ``run``, --json); one notebook file alone works as before."""
    paths = args.notebook
    return (len(paths) > 1 or any(Path(p).is_dir() for p in paths) or args.workers is not None
            or args.scheduler is not None or (command == "run" and args.json))


def cmd_corpus(args: argparse.Namespace, command: str) -> int:
    """``run``/``verify`` of many notebooks, here or on dask.distributed (dsh_notebook.corpus)."""
    from .corpus.cluster import CorpusError, run_corpus, save_runs
    from .corpus.discover import NoSuchPath, find_notebooks
    from .corpus.report import as_json, failures_text, passed, results_table, summary

    prog = f"dsh-notebook {command}"
    try:
        notebooks = find_notebooks(args.notebook)
    except NoSuchPath as exc:
        print(f"{prog}: {exc}; nothing was run", file=sys.stderr)
        return 2
    if not notebooks:
        print(f"{prog}: no notebooks (*.ipynb) in {', '.join(args.notebook)}", file=sys.stderr)
        return 2
    allowed = None
    if command == "verify" and args.allowed_signers:
        from .signing import AllowedSigners

        try:
            allowed = AllowedSigners.read(args.allowed_signers)
        except (OSError, ValueError) as exc:
            print(f"{prog}: {exc}", file=sys.stderr)
            return 2
    where = (f"{args.workers} local worker(s)" if args.workers is not None else
             f"the scheduler at {args.scheduler}" if args.scheduler is not None else "in this process")
    start = time.perf_counter()
    try:
        results = run_corpus(command, notebooks, workers=args.workers, scheduler=args.scheduler,
                             connect_timeout=args.connect_timeout, kernel=getattr(args, "kernel", "python3"),
                             timeout=getattr(args, "timeout", 600), save=bool(getattr(args, "save", False)),
                             allowed_signers=allowed,
                             progress=sys.stderr.isatty() and not args.json,
                             say=lambda text: print(text, file=sys.stderr))
    except CorpusError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    elapsed = time.perf_counter() - start
    key_there = _key_exists()
    saved = save_runs(results) if command == "run" and args.save else []
    unsigned = []
    signed = None
    for r in results:
        if r.get("saved"):
            now = _signed_with(Path(r["saved"]), key_there, _signature_of(json.loads(r["started"])))
            signed = signed or now
            if now is None and r.get("save_problems"):
                unsigned.append(r)
    if signed:
        saved.append(f"the saved notebooks are {signed}")
    if args.json:
        print(json.dumps(as_json(results, command, elapsed, where), ensure_ascii=False, indent=2))
    else:
        print(results_table(results))
        print()
        print(summary(results, command, elapsed, where))
        for line in saved:
            print(line)
        failures = failures_text(results)
        if failures:
            print(f"\n{prog}: these notebooks failed:\n{failures}", file=sys.stderr)
    for r in unsigned:
        print(f"{prog}: {Path(r['saved']).name}: the outputs are saved but not signed (above: why); "
              "dsh-notebook verify names what changed", file=sys.stderr)
    return 0 if all(passed(r) for r in results) and not unsigned else 1


def cmd_run(args: argparse.Namespace) -> int:
    if _corpus_wanted(args, "run"):
        return cmd_corpus(args, "run")
    if args.save is None:
        args.save = True
    args.no_save = not args.save
    args.notebook = args.notebook[0]
    import nbformat

    path = Path(args.notebook).resolve()
    if not path.exists():
        print(f"dsh-notebook run: no such notebook: {args.notebook}", file=sys.stderr)
        return 2
    if not path.is_file():  # a folder, a fifo, /dev/zero: never read without bound
        print(f"dsh-notebook run: {args.notebook} is not a regular file; give a notebook (.ipynb) file",
              file=sys.stderr)
        return 2
    try:
        nb = nbformat.read(str(path), as_version=4)
    except Exception as exc:  # noqa: BLE001 - nbformat's JSON, schema and decoding errors: one line, exit 2
        print(f"dsh-notebook run: {args.notebook} is not a readable notebook ({exc})", file=sys.stderr)
        return 2
    started = copy.deepcopy(nb)  # what the person's file held: save_run checks it is still that
    for cell in nb.cells:  # only this run's outputs may name records
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec(args.kernel)
    except NoSuchKernel:
        print(f"dsh-notebook run: no kernel named {args.kernel!r} (see `jupyter kernelspec list`); "
              "nothing was run or saved", file=sys.stderr)
        return 2
    from .artifact.paths import sidecar_for
    from .artifact.sealset import holds_no_files
    from .corpus.execute import private_copy

    start = time.time()
    # DSH_NOTEBOOK_PATH and the working directory go to the kernel only, never this process (issue 23);
    # --no-save gives the kernel a private copy of the sidecar to write into, so a signed notebook still verifies
    with contextlib.ExitStack() as stack:
        sidecar = sidecar_for(path)
        fresh = not args.no_save and holds_no_files(sidecar)  # a copy without its folder: sealed afresh after the run
        if args.no_save:
            try:
                sidecar = stack.enter_context(private_copy(path))
            except OSError as exc:
                print(f"dsh-notebook run: cannot copy {sidecar.name} to run {path.name} without saving ({exc}); "
                      "nothing was run", file=sys.stderr)
                return 2
        return _run_and_report(args, path, nb, started, sidecar, start, fresh)


def _run_and_report(args: argparse.Namespace, path: Path, nb: Any, started: Any, sidecar: Path,
                    start: float, fresh: bool) -> int:
    """``run`` of one notebook: execute it (its records written into *sidecar*: the notebook's, or
    a private copy for --no-save), save its outputs unless --no-save (*fresh*: the sidecar held no
    file before the run, so the save seals afresh), print its records."""
    from .artifact.records import table
    from .corpus.execute import execute_notebook, open_record_title
    from .reckoner import find_record, read_record

    failed = execute_notebook(path, nb, kernel=args.kernel, timeout=args.timeout,
                              sidecar=sidecar if args.no_save else None)
    executed = any(c.get("execution_count") for c in nb.cells if c.cell_type == "code")
    if not executed and failed is not None:
        print(f"dsh-notebook run: the kernel did not run the notebook ({type(failed).__name__}: {failed}); "
              "nothing was saved", file=sys.stderr)
        return 2
    saved_beside = None
    signed = None
    if not args.no_save:
        from .artifact.notebookfile import NotebookBusy, save_run

        key_there = _key_exists()
        problems: list[str] = []
        try:  # under the notebook's lock: re-read, outputs in by cell id, written atomically, synced and signed
            written = save_run(path, started, nb, problems, fresh_sidecar=fresh)
        except (NotebookBusy, OSError) as exc:
            print(f"dsh-notebook run: the outputs were not saved: {exc}; the notebook is as it was",
                  file=sys.stderr)
            return 1
        if written != path:
            saved_beside = written
            print(f"dsh-notebook run: {path.name} was edited while it ran (cells added, removed or changed), so it "
                  f"was left as it is; the run's outputs are saved beside it in {written.name}", file=sys.stderr)
        for p in problems:
            print(f"dsh-notebook run: {p}", file=sys.stderr)
        signed = _signed_with(written, key_there, _signature_of(started))
    rows: list[tuple[str, int | str, int | str, str, str]] = []
    for rid in _records_in(nb):
        try:
            rec = read_record(find_record(sidecar, rid))
        except (FileNotFoundError, ValueError):
            rows.append(("(record file missing)", "", "", "", rid))
            continue
        status = "" if rec.closed else "  (still open)"
        rows.append((rec.title + status, len(rec.steps), len(rec.refused), _result_text(rec), rec.id))
    saved = f", outputs saved in {saved_beside.name}" if saved_beside else ", outputs saved"
    if args.no_save:
        saved = ", nothing saved (its records were written to a temporary copy of its sidecar, now removed)"
    print(f"{path.name}: executed in {time.time() - start:.1f} s{saved}")
    if signed:
        print(signed)
    if rows:
        print(f"records in {sidecar if not args.no_save else 'the temporary copy'}:")
        print(table(rows, ("title", "steps", "refused", "result", "id")))
    else:
        print("no records were produced")
    title = open_record_title(sidecar)
    if title is not None:
        print(f"note: the record {title!r} was left open (a cell ended with --continue, or the kernel stopped); "
              + ("the next kernel sets it aside: close or discard it with %reckon recover" if not args.no_save
                 else "it was in the temporary copy, so nothing is left open beside the notebook"))
    if signed is None and not args.no_save and problems:
        print(f"dsh-notebook run: the outputs are saved but not signed (above: why); dsh-notebook verify {path.name} "
              "names what changed", file=sys.stderr)
        if failed is None:
            return 1
    if failed is not None:
        msg = re.sub(r"\x1b\[[0-9;]*m", "", str(failed)).strip().splitlines()
        print("\ndsh-notebook run: a cell failed (not tagged raises-exception):\n  " + "\n  ".join(msg[-12:]),
              file=sys.stderr)
        return 1
    return 0


def _key_exists() -> bool | None:
    """Whether the person's signing key exists (None when its setting is unusable)."""
    from .signing import SigningError, key_path

    try:
        return key_path().exists()
    except SigningError:
        return None


def _signature_of(nb: Any) -> str | None:
    """The signature of the seal notebook node (or dict) *nb* holds, or None."""
    try:
        seal = nb["metadata"]["dsh"]["seal"]
        return seal["signature"] if isinstance(seal["signature"], str) else None
    except (KeyError, TypeError):
        return None


def _signed_with(notebook: Path, key_there: bool | None, before: str | None = None) -> str | None:
    """``signed with SHA256:… (you@host)`` for a notebook file whose seal was just made (its
    signature is not *before*, the one it held before the run), and where the key was made when
    *key_there* was False and it exists now; None when no new seal was written."""
    from .signing import key_path

    try:
        seal = json.loads(notebook.read_text(encoding="utf-8"))["metadata"]["dsh"]["seal"]
        stated = seal["signer"]
        fingerprint, line = str(stated["fingerprint"]), str(stated.get("public_key", ""))
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None
    if seal.get("signature") == before:
        return None
    comment = line.split(None, 2)[2] if len(line.split(None, 2)) > 2 else ""
    said = f"signed with {fingerprint}" + (f" ({comment})" if comment else "")
    if key_there is False and _key_exists():
        said += f", a key made now at {key_path()} (keep it: verify names it as the sealer)"
    return said


def _notebook_arg(name: str) -> Path | None:
    path = Path(name)
    if path.is_dir():
        print(f"dsh-notebook: {name} is a folder, not a notebook file", file=sys.stderr)
        return None
    if not path.is_file():
        print(f"dsh-notebook: no such notebook: {name}", file=sys.stderr)
        return None
    return path.resolve()


def cmd_verify(args: argparse.Namespace) -> int:
    if _corpus_wanted(args, "verify"):
        return cmd_corpus(args, "verify")
    args.notebook = args.notebook[0]
    from .artifact.seal import findings_table, verify

    path = _notebook_arg(args.notebook)
    if path is None:
        return 2
    allowed = None
    if args.allowed_signers:
        from .signing import AllowedSigners

        try:
            allowed = AllowedSigners.read(args.allowed_signers)
        except (OSError, ValueError) as exc:
            print(f"dsh-notebook verify: {exc}", file=sys.stderr)
            return 2
    from .artifact.seal import UnreadableNotebook

    try:
        findings = verify(path, allowed_signers=allowed)
    except (UnreadableNotebook, UnicodeDecodeError, ValueError) as exc:  # not JSON, not a notebook
        print(f"dsh-notebook verify: {args.notebook} is not a readable notebook ({exc})", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"dsh-notebook verify: cannot read {exc.filename or args.notebook}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2
    failed = [f for f in findings if f.ok is False]
    if args.json:
        print(json.dumps({"notebook": str(path), "ok": not failed,
                          "findings": [f.as_dict() for f in findings]}, ensure_ascii=False, indent=2))
    else:
        print(findings_table(findings))
        print(f"\n{path.name}: {'verified' if not failed else f'{len(failed)} problem(s) found'}")
    return 1 if failed else 0


def cmd_sync(args: argparse.Namespace) -> int:
    from .artifact.seal import sync

    path = _notebook_arg(args.notebook)
    if path is None:
        return 2
    from .artifact.seal import SealRefused

    problems: list[str] = []
    try:
        index = sync(path, problems, accept_changes=args.accept_changes)
    except SealRefused as exc:
        print(f"dsh-notebook sync: {args.notebook}: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - the command's boundary: any fault is one line and exit 2
        print(f"dsh-notebook sync: {args.notebook}: {exc}", file=sys.stderr)
        return 2
    signed = " and signed with your key" if isinstance(index.get("seal"), dict) else ""
    print(f"{path.name}: metadata.dsh written{signed} ({len(index['records'])} record(s), "
          f"{len(index['sessions'])} chat session(s), {len(index['ledgers'])} ledger(s))")
    for p in problems:
        print(f"dsh-notebook sync: {p}", file=sys.stderr)
    return 1 if problems else 0


def cmd_seal_payload(args: argparse.Namespace) -> int:
    from .artifact.seal import UnreadableNotebook, read_notebook
    from .artifact.sealset import payload

    path = _notebook_arg(args.notebook)
    if path is None:
        return 2
    try:
        nb = read_notebook(path)
    except UnreadableNotebook as exc:
        print(f"dsh-notebook seal-payload: {exc}", file=sys.stderr)
        return 2
    meta = nb.metadata.get("dsh")
    seal = meta.get("seal") if isinstance(meta, dict) else None
    if not isinstance(seal, dict) or not isinstance(seal.get("signature"), str):
        print(f"dsh-notebook seal-payload: {path.name} has no signed seal (dsh-notebook sync signs one)",
              file=sys.stderr)
        return 1
    if args.signature:
        Path(args.signature).write_text(seal["signature"], encoding="ascii")
    sys.stdout.buffer.write(payload(seal))
    sys.stdout.flush()
    return 0


def cmd_key(args: argparse.Namespace) -> int:
    from .signing import SigningError, key_path, public_key_line

    try:
        line = public_key_line()
    except SigningError as exc:
        print(f"dsh-notebook key: {exc}", file=sys.stderr)
        return 2
    print(line)
    if args.verbose:
        from .signing import fingerprint_of

        print(f"# {fingerprint_of(line)} · private key {key_path()}", file=sys.stderr)
    return 0


def _home_for(target: str | None) -> Path:
    from .artifact.paths import sidecar_for

    p = Path(target or ".")
    return sidecar_for(p) if p.suffix == ".ipynb" else p


def _current_for(target: str | None, home: Path) -> list[str] | None:
    """The records the notebook of *target* (a notebook, or its ``<stem>.dsh`` folder) names,
    or None when there is no readable notebook (then nothing is called superseded)."""
    from .artifact.records import current_records_of

    if target and target.endswith(".ipynb"):
        return current_records_of(target)
    return current_records_of(home.parent / f"{home.name[:-4]}.ipynb") if home.name.endswith(".dsh") else None


def cmd_prune(args: argparse.Namespace) -> int:
    from .artifact.records import table
    from .artifact.seal import MetadataError, PruneRefused, SealRefused, UnreadableNotebook, prune
    from .signing import SigningError

    problems: list[str] = []
    try:
        removed = prune(args.notebook, problems, dry_run=args.dry_run)
    except FileNotFoundError as exc:
        print(f"dsh-notebook prune: no such notebook: {exc.filename or args.notebook}", file=sys.stderr)
        return 2
    except (UnreadableNotebook, MetadataError) as exc:
        print(f"dsh-notebook prune: {exc}", file=sys.stderr)
        return 2
    except (PruneRefused, SealRefused, SigningError) as exc:
        print(f"dsh-notebook prune: {exc}", file=sys.stderr)
        return 1
    name = Path(args.notebook).name
    if not removed:
        print(f"{name}: no superseded records; nothing removed")
        return 0
    rows = [(r["id"], r["title"] or "(unreadable)", r["status"]) for r in removed]
    verb = "would remove" if args.dry_run else "removed"
    print(f"{name}: {verb} {len(removed)} superseded record(s), named by no output of the notebook:\n"
          + table(rows, ("id", "title", "status")))
    if not args.dry_run:
        print(f"{name}: synced and signed again with your key")
    for p in problems:
        print(f"  note: {p}", file=sys.stderr)
    return 0


def cmd_records(args: argparse.Namespace) -> int:
    from .artifact.records import record_text, records_table
    from .reckoner import find_record, read_record
    from .reckoner.records import UnreadableRecord

    home = _home_for(args.where)
    if args.where and not home.is_dir():
        print(f"dsh-notebook records: no records folder {home}", file=sys.stderr)
        return 2
    if args.action == "list":
        text = records_table(home, _current_for(args.where, home))
        print(f"records in {home}:\n{text}" if text else f"no records in {home}")
        return 0
    try:
        rec = read_record(find_record(home, args.id))
    except (FileNotFoundError, UnreadableRecord) as exc:
        print(f"dsh-notebook records show: {exc}", file=sys.stderr)
        return 2
    print(record_text(rec))
    return 0


def cmd_article(args: argparse.Namespace) -> int:
    from .artifact.articles import write_article
    from .artifact.paths import sidecar_for
    from .reckoner import find_record
    from .reckoner.articles import ArticleError

    nb = Path(args.notebook)
    sidecar = sidecar_for(nb)
    if not nb.is_file() and not sidecar.is_dir():
        print(f"dsh-notebook article: no such notebook: {args.notebook}", file=sys.stderr)
        return 2
    writer = None
    if args.writer == "model":
        from .llm.writer import ModelArticleWriter

        writer = ModelArticleWriter()
    try:
        path = find_record(sidecar, args.record_id)
        out = Path(args.out) if args.out else sidecar / "articles"
        result = write_article(path, out, args.format, args.language, args.compile, args.name, writer=writer)
    except (FileNotFoundError, ArticleError, ValueError) as exc:
        print(f"dsh-notebook article: {exc}", file=sys.stderr)
        return 2
    if result.fallback_reason:
        print(f"dsh-notebook article: the offline writer wrote the article instead: {result.fallback_reason}",
              file=sys.stderr)
    by = f"{result.writer} writer"
    if result.writer == "model" and writer is not None and writer.model_id:
        by += f", {writer.model_id}"
    print(f"wrote {result.path}" + (f" and {result.pdf}" if result.pdf else "") + f" ({result.language}, {by})")
    unsealed = _not_as_sealed(nb, sidecar, out)
    if unsealed:
        more = f" and {len(unsealed) - 2} more" if len(unsealed) > 2 else ""
        print(f"dsh-notebook article: note: {nb.name} is signed, and its seal does not cover "
              f"{', '.join(unsealed[:2])}{more} as it is now, so `dsh-notebook verify` reports "
              f"{'them' if len(unsealed) > 1 else 'it'} until you vouch for what was written with "
              f"`dsh-notebook sync {args.notebook}` (or write articles outside the sidecar with --out)", file=sys.stderr)
    return 0


def _not_as_sealed(notebook: Path, sidecar: Path, under: Path) -> list[str]:
    """The sidecar files under *under* (as the seal names them) that the notebook's seal does not
    hold as they are now (new or changed); none when the notebook holds no seal or *under* is not
    in the sidecar."""
    from .artifact.sealset import file_digest, sealed_files

    try:
        meta = json.loads(notebook.read_text(encoding="utf-8")).get("metadata", {})
    except (OSError, ValueError, AttributeError, RecursionError):
        return []
    dsh = meta.get("dsh") if isinstance(meta, dict) else None
    seal = dsh.get("seal") if isinstance(dsh, dict) else None
    if not isinstance(seal, dict) or not under.resolve().is_relative_to(sidecar.resolve()):
        return []
    held = seal["files"] if isinstance(seal.get("files"), dict) else {}
    return [rel for p in sealed_files(sidecar) if p.resolve().is_relative_to(under.resolve())
            and held.get(rel := p.relative_to(sidecar).as_posix()) != file_digest(p)]


def cmd_serve_fake_llm(args: argparse.Namespace) -> int:
    from .llm.testing import ScriptedServer

    def fail(message: str) -> int:
        print(f"dsh-notebook serve-fake-llm: {message}", file=sys.stderr)
        return 2

    if not 0 <= args.port <= 65535:
        return fail(f"--port {args.port} is not a port number (0 to 65535; 0 picks a free one)")
    try:
        script = json.loads(Path(args.script).read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        return fail(f"cannot read the script {args.script}: it is not UTF-8 text ({exc.reason} at byte {exc.start})")
    except (OSError, json.JSONDecodeError) as exc:
        return fail(f"cannot read the script {args.script}: {exc}")
    if not isinstance(script, list):
        return fail("the script is a JSON list of {\"expect\", \"reply\"} turns")
    try:
        srv = ScriptedServer(script, port=args.port)
    except ValueError as exc:  # the script's shape, checked turn by turn
        return fail(f"{args.script}: {exc}")
    except (OSError, OverflowError) as exc:  # the port is taken, or not ours to take
        return fail(f"cannot listen on 127.0.0.1:{args.port}: {getattr(exc, 'strerror', None) or exc}")
    print(f"scripted chat server (replies are scripted, not a model) on {srv.base_url}; "
          f"point DEEPSEEK_BASE_URL there and set DEEPSEEK_API_KEY to any value, or point OLLAMA_BASE_URL there "
          f"and use --model ollama/ANY-NAME with no key, or ANTHROPIC_BASE_URL with --model anthropic/... "
          f"The script's turns are answered in order. Ctrl-C stops it.", flush=True)
    try:
        srv.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.httpd.server_close()
    return 0


def cmd_academic(args: argparse.Namespace) -> int:
    from .academic import state

    if args.action in ("on", "off"):
        try:
            st = state.set_enabled(args.action == "on")
        except (OSError, ValueError) as exc:
            print(f"dsh-notebook academic {args.action}: cannot write {state.state_path()}: {exc}", file=sys.stderr)
            return 1
    elif args.action == "status":
        st = state.status()
    else:  # export
        from .academic import prompt

        text = prompt.skill_markdown(args.lang)
        out = Path(args.out) if args.out else Path("SKILL.md")
        if out.is_dir() or args.out.endswith(("/", os.sep)) or (args.out and out.suffix.lower() != ".md"):
            out.mkdir(parents=True, exist_ok=True) if not out.is_dir() else None
            out = out / "SKILL.md"
        try:
            from .storage import atomic_write_text

            atomic_write_text(out, text)
        except OSError as exc:
            print(f"dsh-notebook academic export: cannot write {out}: {exc}", file=sys.stderr)
            return 2
        print(f"wrote {out} (academic mode as a skill, {args.lang}, {len(text)} characters)")
        return 0
    if getattr(args, "json", False):
        print(json.dumps(st, ensure_ascii=False, indent=2))
    else:
        print(state.status_text(st))
    return 0


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _cut_title(text: str, limit: int = 50) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _minute(stamp: str | None) -> str:
    """``2026-08-16T17:36:49.409Z`` -> ``2026-08-16 17:36`` (the sources write UTC)."""
    return stamp[:16].replace("T", " ") if stamp else ""


def cmd_review(args: argparse.Namespace) -> int:
    """``review list`` (the conversations a source holds) and ``review transcript TARGET``
    (the numbered utterances exactly as the reviewer sends them, before the tail window)."""
    from .reviewer import sources

    def fail(message: str) -> int:
        print(f"dsh-notebook review {args.action}: {message}", file=sys.stderr)
        return 2

    if args.action == "list":
        try:
            folder = sources.root_of(args.source, args.root)
            found = sources.list_source(args.source, args.root)
        except (ValueError, OSError) as exc:
            return fail(_one_line(exc))
        except Exception as exc:  # noqa: BLE001 - a reader's fault: still one line, no traceback
            return fail(f"cannot list {args.source} conversations under {args.root or 'the default root'} "
                        f"({type(exc).__name__}: {_one_line(exc)})")
        if args.json:
            print(json.dumps([c.as_dict() for c in found], ensure_ascii=False, indent=2))
        elif not found:
            print(f"no {args.source} conversations found under {folder}")
        else:
            from .artifact.records import table

            rows = [(c.id, _cut_title(c.title), _minute(c.started), _minute(c.updated), c.user_messages,
                     c.ai_messages, f"{c.source}:{c.path}") for c in found]
            print(f"{len(found)} {args.source} conversation(s) under {folder}:")
            print(table(rows, ("id", "title", "started (UTC)", "updated (UTC)", "user", "AI", "target")))
        return 0
    try:
        utterances = sources.read_target(args.target)
    except (ValueError, OSError) as exc:
        return fail(_one_line(exc))
    if args.json:
        print(json.dumps([u.as_dict() for u in utterances], ensure_ascii=False, indent=2))
    elif utterances:
        print(sources.transcript_text(utterances))
    else:
        print(f"dsh-notebook review transcript: {args.target} holds no utterance yet", file=sys.stderr)
    return 0


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number of seconds")
    return n


def ledger_subparsers(sub: argparse._SubParsersAction[argparse.ArgumentParser],
                      ) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    """The ``dsh-notebook ledger ACTION`` group (created once, then reused): each ledger command
    adds its parser here, e.g. ``ledger_subparsers(sub).add_parser("check-source", ...)``."""
    group = sub.choices.get("ledger")
    if group is None:
        group = sub.add_parser("ledger", help="the research evidence ledger: show, verify, decide, export, "
                                              "check a source")
        group.set_defaults(func=None)
    for action in group._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return group.add_subparsers(dest="ledger_action", metavar="ACTION", required=True)


def _ledger_file(args: argparse.Namespace, verb: str) -> Path | None:
    from .artifact.ledgers import resolve_ledger
    from .artifact.paths import NAME, NAME_RULE

    if not NAME.fullmatch(args.name or ""):
        shown = args.name if len(args.name or "") <= 60 else args.name[:60] + "…"
        print(f"dsh-notebook ledger {verb}: --name {shown!r} is not a ledger name: {NAME_RULE} "
              "(the file <stem>.dsh/ledger/NAME.jsonl); nothing was read or written", file=sys.stderr)
        return None
    path = resolve_ledger(args.notebook, args.name)
    if not path.is_file():
        print(f"dsh-notebook ledger {verb}: no ledger {args.name!r} for {args.notebook} (looked for {path})",
              file=sys.stderr)
        return None
    return path


def cmd_ledger_show(args: argparse.Namespace) -> int:
    from .artifact import ledgers as LG

    path = _ledger_file(args, "show")
    if path is None:
        return 2
    state, _events = LG.read_state(path)
    s = LG.summary(state)
    print(json.dumps(s, ensure_ascii=False, indent=2) if args.json else LG.summary_text(s)[1])
    return 0


def cmd_ledger_verify(args: argparse.Namespace) -> int:
    from .artifact import ledgers as LG

    path = _ledger_file(args, "verify")
    if path is None:
        return 2
    try:  # against the head `sync` sealed in the notebook, when it holds one
        result = LG.verify_sealed(path)
    except (OSError, ValueError) as exc:  # LedgerPathError: not a ledger file
        print(f"dsh-notebook ledger verify: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        print(LG.verify_bundle(path, result)[0]["text/plain"])
    return 0 if result["ok"] else 1


def _confirmation_line(prompt: str) -> str | None:
    """One confirmation line: asked on the terminal, or read from stdin when it is not a TTY
    (``None`` when stdin gives nothing)."""
    if sys.stdin is None:
        return None
    if sys.stdin.isatty():
        try:
            return input(prompt)
        except EOFError:
            return None
    print(prompt, file=sys.stderr, end="", flush=True)
    line = sys.stdin.readline()
    print(file=sys.stderr)
    return line or None


def cmd_ledger_decide(args: argparse.Namespace) -> int:
    """Record the person's decision after a typed confirmation (the decision id, or ``yes``)."""
    from .artifact import ledgers as LG

    path = _ledger_file(args, "decide")
    if path is None:
        return 2
    state, _events = LG.read_state(path)
    dec = state.decisions.get(args.decision)
    if dec is None:
        print(f"dsh-notebook ledger decide: LEDGER_REFERENCE: decision {args.decision!r} is not in the ledger",
              file=sys.stderr)
        return 1
    if not LG.awaiting_person(state, args.decision):
        print(f"dsh-notebook ledger decide: LEDGER_STATE: decision {args.decision!r} does not await the person "
              f"(status {LG.decision_status(state, args.decision)}); nothing was recorded", file=sys.stderr)
        return 1
    name = LG.person_name()
    print(f"decision {args.decision} (revision {dec.revision}): {dec.current['statement']}", file=sys.stderr)
    prompt = (f"Record {args.verdict!r} for decision {args.decision} revision {dec.revision} as {name}"
              + (f" with the note {args.note!r}" if args.note else "")
              + f"? Type the decision id ({args.decision}) or yes to confirm: ")
    line = _confirmation_line(prompt)
    if line is None or line.strip() not in (args.decision, "yes"):
        why = ("no confirmation was given (stdin is not a terminal and gave no confirmation line)" if line is None
               else f"the confirmation {line.strip()!r} is neither {args.decision!r} nor 'yes'")
        print(f"dsh-notebook ledger decide: refused: {why}; nothing was recorded", file=sys.stderr)
        return 1
    receipt = LG.record_decision(path, args.decision, args.verdict, args.note or "", by=name, channel="terminal",
                                 revision=dec.revision)
    if not receipt["ok"]:
        print(f"dsh-notebook ledger decide: {receipt['code']}: {receipt['error']}", file=sys.stderr)
        return 1
    print(f"recorded: decision {args.decision} {args.verdict} by {name} (seq {receipt['seq']}, {path.name})")
    return 0


def cmd_ledger_export(args: argparse.Namespace) -> int:
    from .artifact import ledgers as LG

    path = _ledger_file(args, "export")
    if path is None:
        return 2
    try:  # the export is written either way; a damaged ledger is named and exits 1
        checked = LG.verify_sealed(path)
    except (OSError, ValueError) as exc:  # LedgerPathError: not a ledger file
        print(f"dsh-notebook ledger export: {exc}", file=sys.stderr)
        return 2
    state, _events = LG.read_state(path)
    formats = (args.format,) if args.format else ("md", "bibtex")
    try:
        written = LG.export(path, state, formats)
    except OSError as exc:
        print(f"dsh-notebook ledger export: {exc}", file=sys.stderr)
        return 2
    for w in written:
        print(f"wrote {w}")
    if not checked["ok"]:
        first = checked["problems"][0]
        print(f"dsh-notebook ledger export: warning: the ledger {path.name} does not verify "
              f"({len(checked['problems'])} problem(s); line {first['line']}: {first['problem']}); the export "
              f"reflects a damaged ledger: run dsh-notebook ledger verify", file=sys.stderr)
        return 1
    return 0


def _add_ledger_view_commands(ls: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``ledger show|verify|decide|export NOTEBOOK [--name NAME]``, from the table ``%ledger`` shares."""
    from .artifact.ledger_args import add_ledger_commands

    add_ledger_commands(ls, {"show": cmd_ledger_show, "verify": cmd_ledger_verify, "decide": cmd_ledger_decide,
                             "export": cmd_ledger_export},
                        notebook_help="the notebook (x.ipynb), its sidecar folder (x.dsh) or a ledger .jsonl")


def cmd_ledger_check_source(args: argparse.Namespace) -> int:
    """``ledger check-source IDENTIFIER``: the bibliographic verifier alone (research.md). Exit 0
    with the verdict (any verdict, inconclusive included), 2 for a malformed identifier or an empty
    claimed value (``--title ""``, ``--authors ";;"``)."""
    import logging

    from .research_pipeline.bibliographic import (
        IdentifierError,
        check_source,
        checks_table,
        split_authors,
    )

    empty = [f"--{k}" for k, v in (("title", args.title), ("year", args.year)) if v is not None and not v.strip()]
    if args.authors is not None and not split_authors(args.authors):
        empty.append("--authors")
    if empty:
        print(f"dsh-notebook ledger check-source: {' and '.join(empty)} {'is' if len(empty) == 1 else 'are'} empty: "
              "give the claimed value (authors separated by ';') or leave the option out", file=sys.stderr)
        return 2

    log = logging.getLogger("dsh_notebook.research_pipeline.bibliographic")
    handler = logging.StreamHandler(sys.stderr)  # logs to stderr only: stdout is the verdict
    handler.setFormatter(logging.Formatter("dsh-notebook ledger check-source: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO if args.verbose else logging.WARNING)
    log.propagate = False
    claimed = {k: v for k, v in (("title", args.title), ("authors", args.authors), ("year", args.year))
               if v is not None} or None
    cache = None
    if not args.no_cache:
        if args.cache_dir:
            cache = Path(args.cache_dir)
        elif args.notebook or os.environ.get("DSH_NOTEBOOK_PATH"):
            from .artifact.paths import sidecar_for

            cache = sidecar_for(Path(args.notebook or os.environ["DSH_NOTEBOOK_PATH"])) / "bibliographic-cache"
    try:
        result = check_source(args.identifier, claimed, cache_dir=cache)
    except IdentifierError as exc:
        print(f"dsh-notebook ledger check-source: {_one_line(exc)}", file=sys.stderr)
        return 2
    finally:
        log.removeHandler(handler)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return 0
    meta = result["metadata"]
    print(f"{result['kind']} {result['identifier']}: {result['verdict']}")
    if meta.get("title") is not None:
        who = ", ".join(meta.get("authors") or [])
        print(f"  {meta['title']}" + (f" ({meta['year']})" if meta.get("year") else "")
              + (f"\n  {_cut_title(who, 100)}" if who else ""))
    print(checks_table(result))
    if result.get("needs_judgment"):
        print("note: the metadata needs judgment (a close but not certain match)")
    return 0


def _add_ledger_check_source(ls: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``ledger check-source IDENTIFIER [--json] [--title T --authors A --year Y]``."""
    x = ls.add_parser("check-source", help="resolve a DOI, arXiv id or PMID (ISBN and URL: inconclusive) and "
                                           "check it: verified, mismatch, inconclusive, retracted, withdrawn, "
                                           "corrected, expression_of_concern")
    x.add_argument("identifier", help="DOI (10.x/y, doi:…, https://doi.org/…), arXiv id (1605.08386v2, "
                                      "astro-ph/0601001), PMID, ISBN or URL")
    x.add_argument("--json", action="store_true", help="one JSON object: verdict, checks, metadata, resolver")
    x.add_argument("--title", help="the claimed title (compared fuzzily)")
    x.add_argument("--authors", help="the claimed authors, separated by ';' (family names compared)")
    x.add_argument("--year", help="the claimed year")
    x.add_argument("--notebook", help="cache the responses in this notebook's sidecar, <stem>.dsh/bibliographic-cache/ "
                                        "(default: DSH_NOTEBOOK_PATH's, when set)")
    x.add_argument("--cache-dir", help="cache the responses in this folder instead (reused for a day)")
    x.add_argument("--no-cache", action="store_true", help="neither read nor write a cache")
    x.add_argument("--verbose", "-v", action="store_true", help="log each request on stderr")
    x.set_defaults(func=cmd_ledger_check_source)


def _workers(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number of workers")
    most = 4 * (os.cpu_count() or 1)  # one kernel process each: more than this only slows the machine
    if n > most:
        raise argparse.ArgumentTypeError(f"{n} local workers is more than this machine can run ({most}: 4 per core); "
                                         "for more, start a cluster and use --scheduler")
    return n


def _add_corpus_options(p: argparse.ArgumentParser) -> None:
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=_workers, metavar="N",
                       help="run on a local dask cluster of N worker processes (one notebook per task; needs "
                            "dsh-notebook[corpus])")
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="run on an existing dask cluster, e.g. tcp://10.0.0.5:8786 (dask-jobqueue, dask-gateway, "
                            "Kubernetes): workers need this dsh-notebook version and the notebooks' filesystem")
    p.add_argument("--connect-timeout", type=_positive, default=10, metavar="SECONDS",
                   help="seconds to reach the scheduler and find a worker (default 10)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dsh-notebook", description="Auditable, reproducible notebooks: reckoner records and more.")
    p.add_argument("--version", action="version", version=f"dsh-notebook {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    r = sub.add_parser("run", help="execute notebooks headless, save their outputs, print their records")
    r.add_argument("notebook", nargs="+", metavar="PATH",
                   help="a .ipynb file, or several, or folders (searched recursively: a corpus)")
    r.add_argument("--timeout", type=_positive, default=600, help="seconds per cell (default 600)")
    r.add_argument("--kernel", default="python3", help="kernel name (default python3: this environment)")
    saving = r.add_mutually_exclusive_group()
    saving.add_argument("--no-save", dest="save", action="store_false", default=None,
                        help="do not write the outputs back into the notebook: the kernel runs a temporary copy of "
                             "it and its sidecar, so nothing beside it changes either")
    saving.add_argument("--save", dest="save", action="store_true",
                        help="write the outputs back, indexed and signed with your key (the default for one notebook; "
                             "a corpus run saves only with --save)")
    r.add_argument("--json", action="store_true", help="the corpus results as JSON")
    _add_corpus_options(r)
    r.set_defaults(func=cmd_run)
    v = sub.add_parser("verify", help="prove notebooks' records are intact, reproduce, and hold no secrets")
    v.add_argument("notebook", nargs="+", metavar="PATH",
                   help="a .ipynb file, or several, or folders (searched recursively: a corpus)")
    v.add_argument("--json", action="store_true", help="findings as JSON")
    _add_corpus_options(v)
    v.add_argument("--allowed-signers", metavar="FILE",
                   help="an allowed-signers file (as git and ssh-keygen read it): the seal must be signed by a key "
                        "it lists for namespace dsh-notebook")
    v.set_defaults(func=cmd_verify)
    sp = sub.add_parser("seal-payload", help="write the exact bytes a notebook's seal signs (to check it with "
                                             "ssh-keygen -Y verify)")
    sp.add_argument("notebook")
    sp.add_argument("--signature", metavar="FILE", help="also write the seal's SSH signature to FILE")
    sp.set_defaults(func=cmd_seal_payload)
    y = sub.add_parser("sync", help="write the artifact index (metadata.dsh) into the notebook")
    y.add_argument("notebook")
    y.add_argument("--accept-changes", action="store_true",
                   help="renew the signed seal even though sealed files were rewritten or deleted since (only after "
                        "you checked what verify reports)")
    y.set_defaults(func=cmd_sync)
    k = sub.add_parser("key", help="print your public signing key (ssh-ed25519 AAAA... comment), creating it if needed")
    k.add_argument("--verbose", "-v", action="store_true", help="also print its fingerprint and file (on stderr)")
    k.set_defaults(func=cmd_key)
    pr = sub.add_parser("prune", help="delete the records no output of a notebook names (superseded by re-runs), "
                                      "then sign it again")
    pr.add_argument("notebook", help="the .ipynb file")
    pr.add_argument("--dry-run", action="store_true", help="only list what would be removed")
    pr.set_defaults(func=cmd_prune)
    rc = sub.add_parser("records", help="list or show records of a notebook or a folder")
    rsub = rc.add_subparsers(dest="action", required=True)
    rl = rsub.add_parser("list", help="every record: id, title, status, steps, refused")
    rl.add_argument("where", nargs="?", help="a notebook (its .dsh folder) or a folder (default: .)")
    rl.set_defaults(func=cmd_records)
    rs = rsub.add_parser("show", help="one record's rows")
    rs.add_argument("id")
    where = rs.add_mutually_exclusive_group()
    where.add_argument("--notebook", dest="where")
    where.add_argument("--folder", dest="where")
    rs.set_defaults(func=cmd_records)
    a = sub.add_parser("article", help="write a closed record up as a Markdown or LaTeX article")
    a.add_argument("record_id")
    a.add_argument("--notebook", required=True, help="the notebook whose .dsh folder holds the record")
    a.add_argument("--format", choices=("md", "latex"), default="md")
    a.add_argument("--compile", action="store_true", help="build a PDF with latexmk -xelatex (LaTeX only)")
    a.add_argument("--language", choices=("auto", "zh-CN", "en"), default="auto")
    a.add_argument("--out", help="folder (default: the notebook's .dsh/articles/)")
    a.add_argument("--name", help="file name without extension (default: reckoner-<record id>)")
    a.add_argument("--writer", choices=("offline", "model"), default="offline",
                   help="offline (templates, the default) or model (DSH_MODEL or the settings' default model; its "
                        "article is checked and the offline one is written instead, with the reason, if it fails)")
    a.set_defaults(func=cmd_article)
    ac = sub.add_parser("academic", help="academic mode: on, off, status, or export the discipline as a skill")
    acs = ac.add_subparsers(dest="action", metavar="on|off|status|export", required=True)
    for name, text in (("on", "switch academic mode on (every model call from the next request on)"),
                       ("off", "switch academic mode off"), ("status", ("show the state, the last shaped request "
                                                                       "and the gate count"))):
        x = acs.add_parser(name, help=text)
        x.add_argument("--json", action="store_true", help="the status object as JSON")
        x.set_defaults(func=cmd_academic)
    ex = acs.add_parser("export", help="write the identity and discipline text as a SKILL.md file")
    ex.add_argument("--format", choices=("skill",), default="skill", help="skill: a SKILL.md (front matter + text)")
    ex.add_argument("--lang", choices=("zh", "en"), default="zh", help="language of the text (default zh)")
    ex.add_argument("--out", help="file or folder to write (default ./SKILL.md)")
    ex.set_defaults(func=cmd_academic)
    f = sub.add_parser("serve-fake-llm", help="a scripted OpenAI-compatible chat server on 127.0.0.1 (tests, demos)")
    f.add_argument("--script", required=True, help="JSON list of {expect, reply} turns")
    f.add_argument("--port", type=int, default=0, help="port (default: any free one)")
    f.set_defaults(func=cmd_serve_fake_llm)
    from .reviewer.sources import SOURCES

    rv = sub.add_parser("review", help="the reviewer's sources: list conversations, print a transcript")
    rvs = rv.add_subparsers(dest="action", metavar="list|transcript", required=True)
    rvl = rvs.add_parser("list", help="the conversations a source holds: id, title, times, user and AI messages")
    rvl.add_argument("--source", default="dsh", metavar="|".join(SOURCES),
                     help="which logs to list (default dsh: DeepSeek Harness sessions)")
    rvl.add_argument("--root", help="the folder to read (default: the source's own); for notebook, required: "
                                    "a notebook (x.ipynb) or its sidecar folder (x.dsh)")
    rvl.add_argument("--json", action="store_true", help="a JSON array of the conversations")
    rvl.set_defaults(func=cmd_review)
    rvt = rvs.add_parser("transcript", help="the numbered utterances exactly as the reviewer sends them "
                                            "(before the tail window)")
    rvt.add_argument("target", help="codex:PATH, dsh:PATH, claude:PATH, chat:PATH (a .chat document) or "
                                    "notebook:PATH (a %%%%chat session file)")
    rvt.add_argument("--json", action="store_true", help="only a JSON array of {marker, speaker, turn, text}")
    rvt.set_defaults(func=cmd_review)
    _add_ledger_view_commands(ledger_subparsers(sub))
    _add_ledger_check_source(ledger_subparsers(sub))
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)  # --help and usage errors end here, before any feature is imported
    from .academic import register_llm_hooks

    register_llm_hooks()  # as the entry point does; also from a source tree without package metadata
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except BrokenPipeError:  # the reader went away (`dsh-notebook run nb | head`): nothing left to say
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keep the interpreter from flushing into the pipe
        except OSError:
            pass
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
