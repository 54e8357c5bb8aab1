"""The archive's guarantees (docs/guarantees.md) under crashes, concurrency, damage, a full disk
and hostile input paths.

The crash harness forks a child that runs ``archive index`` (the real CLI, with a small
``--commit-every`` so a run holds many commits) and SIGKILLs it at a random moment; seeds are
fixed and printed with every failure. ``ARCHIVE_CRASH_TRIALS=500`` runs a longer campaign,
``ARCHIVE_CRASH_SEED`` moves the seeds.
"""

from __future__ import annotations

import errno
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from archive import store
from archive.store.check import REPAIR_HINT, check_index
from archive.cli import main
from archive.indexer import Indexer
from archive.search import Archive

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")

TRIALS = int(os.environ.get("ARCHIVE_CRASH_TRIALS", "30"))
BASE_SEED = int(os.environ.get("ARCHIVE_CRASH_SEED", "6000"))
CORPUS_FILES = 120
COMMIT_EVERY = 8

WORDS = ("harbour council election volcano orchestra harvest grain market shares bank "
         "minister river storm festival league striker museum rail strike port tariff "
         "vaccine hospital budget senate court verdict drought flood satellite launch").split()


def make_corpus(folder: Path, count: int, seed: int = 6) -> Path:
    """``count`` one-article text files in a few subfolders, the same for the same seed."""
    rnd = random.Random(seed)
    for i in range(count):
        sub = folder / f"desk{i % 5}"
        sub.mkdir(parents=True, exist_ok=True)
        title = " ".join(rnd.choice(WORDS) for _ in range(5)).capitalize()
        body = " ".join(rnd.choice(WORDS) for _ in range(50))
        (sub / f"story{i:04d}.txt").write_text(
            f"{title}\n\n{body} number {i}.\n\nThe {rnd.choice(WORDS)} report ends here.\n",
            encoding="utf-8")
    return folder


def pairs(folder: Path) -> Counter[tuple[str, str]]:
    """(id, content_hash) of every live article, counted: a count of 2 is a duplicate."""
    ix = store.open_index(folder)
    with ix.searcher() as searcher:
        return Counter((d["id"], d.get("content_hash", "")) for d in
                       searcher.reader().all_stored_fields())


def run_cli(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


def fork(body: Callable[[], object]) -> int:
    """Run ``body`` in a forked child (quiet, exit status 0 on success); returns its pid."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 70
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            body()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            code = 70
        finally:
            os._exit(code)
    return pid


def index_in_child(corpus: Path, folder: Path, commit_every: int = COMMIT_EVERY,
                   patch: Callable[[], None] | None = None) -> int:
    def body() -> None:
        if patch:
            patch()
        main(["index", str(corpus), "--index", str(folder), "--no-progress",
              "--commit-every", str(commit_every)], standalone_mode=False)
    return fork(body)


def wait(pid: int) -> int:
    return os.waitpid(pid, 0)[1]


def assert_consistent(folder: Path, reference: Counter, context: str) -> int:
    """After a crash: the index opens, answers, checks clean, and holds only whole commits
    of reference articles, none twice. Returns its article count."""
    if not store.exists(folder):
        return 0
    report = check_index(folder)
    assert report.ok, f"{context}: archive check: {report.problems}"
    found = pairs(folder)
    assert not [p for p, n in found.items() if n > 1], f"{context}: duplicates in index"
    assert set(found) <= set(reference), f"{context}: articles not in the reference run"
    with Archive(folder) as archive:
        assert archive.search("").total == sum(found.values()), context
        archive.search("harbour OR court")
    return sum(found.values())


def assert_converges(corpus: Path, folder: Path, reference: Counter, context: str) -> None:
    Indexer(folder, commit_every=COMMIT_EVERY).run([corpus])
    found = pairs(folder)
    missing = set(reference) - set(found)
    twice = [p for p, n in found.items() if n > 1]
    assert not missing and not twice and set(found) == set(reference), (
        f"{context}: after a re-run {len(missing)} missing, {len(twice)} duplicated, "
        f"{len(set(found) - set(reference))} unexpected")
    report = check_index(folder)
    assert report.ok and not report.notes, f"{context}: {report.problems} {report.notes}"


# --- fixtures ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_corpus(tmp_path_factory.mktemp("crash") / "news", CORPUS_FILES)


@pytest.fixture(scope="module")
def reference(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Counter:
    """The (id, content_hash) pairs of a clean run; each exactly once."""
    folder = tmp_path_factory.mktemp("reference") / "index"
    Indexer(folder, commit_every=COMMIT_EVERY).run([corpus])
    ref = pairs(folder)
    assert len(ref) == CORPUS_FILES and set(ref.values()) == {1}
    return ref


@pytest.fixture(scope="module")
def clean_seconds(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> float:
    """How long an uninterrupted forked `archive index` of the corpus takes here."""
    folder = tmp_path_factory.mktemp("timing") / "index"
    started = time.perf_counter()
    assert wait(index_in_child(corpus, folder)) == 0
    return time.perf_counter() - started


# --- guarantee 1: crashes ---------------------------------------------------------------------

def test_sigkill_at_random_points_converges(corpus: Path, reference: Counter,
                                            clean_seconds: float, tmp_path: Path) -> None:
    """>= 30 trials: SIGKILL `archive index` once or twice at random moments, check the index
    after each kill, then re-run and compare with the clean run's (id, content_hash) set."""
    seeds = [BASE_SEED + n for n in range(TRIALS)]
    killed = completed = 0
    counts: list[int] = []
    for seed in seeds:
        rng = random.Random(seed)
        folder = tmp_path / f"index-{seed}"
        context = f"crash trial seed={seed} (rerun: ARCHIVE_CRASH_SEED={seed} " \
                  "ARCHIVE_CRASH_TRIALS=1)"
        for _kill in range(rng.choice((1, 1, 2))):
            pid = index_in_child(corpus, folder, commit_every=rng.choice((3, COMMIT_EVERY, 20)))
            time.sleep(rng.uniform(0.0, clean_seconds * 0.9))
            os.kill(pid, signal.SIGKILL)
            status = wait(pid)
            if os.WIFSIGNALED(status):
                killed += 1
            else:
                completed += 1
                assert os.WEXITSTATUS(status) == 0, f"{context}: the run failed"
            counts.append(assert_consistent(folder, reference, context))
        assert_converges(corpus, folder, reference, context)
        shutil.rmtree(folder)
    print(f"\ncrash harness: {len(seeds)} trials, seeds {seeds[0]}..{seeds[-1]}, {killed} "
          f"kills landed mid-run ({completed} runs finished first), articles committed at "
          f"the kills: {sorted(counts)}; every trial converged")
    assert killed >= len(seeds) // 2, "too few kills landed mid-run: the timing is off"


def _exit_on_call(owner: object, name: str, nth: int, before: bool = True,
                  partial: Callable[..., None] | None = None) -> Callable[[], None]:
    """A patch for the child: its ``nth`` call of owner.name kills the process (os._exit,
    as abrupt as SIGKILL: no cleanup, no flush) before or after doing the real work."""
    def patch() -> None:
        real = getattr(owner, name)
        calls = [0]

        def dying(*args, **kwargs):  # noqa: ANN002, ANN003
            calls[0] += 1
            if calls[0] == nth:
                if partial:
                    partial(*args, **kwargs)
                if before:
                    os._exit(137)
                real(*args, **kwargs)
                os._exit(137)
            return real(*args, **kwargs)
        if isinstance(owner, type) and isinstance(owner.__dict__.get(name), staticmethod):
            setattr(owner, name, staticmethod(dying))
        else:
            setattr(owner, name, dying)
    return patch


def _half_compound(dbfile, store_, names, **options):  # noqa: ANN001, ANN003
    """Write half of a compound segment, as a kill in the middle of the copy would."""
    dbfile.write(b"\0" * 4096)
    dbfile.flush()


def _crash_points() -> dict[str, Callable[[], None]]:
    import whoosh.index
    from whoosh.filedb.compound import CompoundStorage
    return {
        # the window the manifest design leaves: committed, manifest not yet written
        "after commit, before manifest": _exit_on_call(store, "write_manifest", 3),
        "while writing the manifest": _exit_on_call(os, "replace", 3),
        "before the new TOC is renamed": _exit_on_call(store.DurableStorage, "rename_file", 3),
        "after the TOC rename, before old files go":
            _exit_on_call(whoosh.index, "clean_files", 3),
        "half-way through a compound segment":
            _exit_on_call(CompoundStorage, "assemble", 3, partial=_half_compound),
    }


@pytest.mark.parametrize("point", list(_crash_points()))
def test_crash_at_each_commit_step_converges(point: str, corpus: Path, reference: Counter,
                                             tmp_path: Path) -> None:
    """A kill at each step of a commit, deterministically (random kills rarely land in the
    few-millisecond windows between steps)."""
    folder = tmp_path / "index"
    status = wait(index_in_child(corpus, folder, patch=_crash_points()[point]))
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 137, f"{point}: no crash"
    committed = assert_consistent(folder, reference, point)
    assert 0 < committed < len(reference), f"{point}: expected a partial index"
    assert_converges(corpus, folder, reference, point)


@pytest.mark.parametrize("point", ["before the index is created",
                                   "after the index is created, before any commit",
                                   "after the first commit, before the manifest"])
def test_crash_during_the_first_run_on_a_new_folder_converges(point: str, corpus: Path,
                                                              reference: Counter,
                                                              tmp_path: Path) -> None:
    """A kill in the first-ever run leaves a folder holding only the lock file, an empty
    index, or a first commit without a manifest: each opens (or is reported missing), checks
    clean, and the next run builds the clean run's articles."""
    patch = {"before the index is created": _exit_on_call(store, "create_index", 1),
             "after the index is created, before any commit":
                 _exit_on_call(store, "create_index", 1, before=False),
             "after the first commit, before the manifest":
                 _exit_on_call(store, "write_manifest", 1)}[point]
    folder = tmp_path / "new" / "index"
    status = wait(index_in_child(corpus, folder, patch=patch))
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 137, f"{point}: no crash"
    committed = assert_consistent(folder, reference, point)
    assert committed == (COMMIT_EVERY if "first commit" in point else 0), point
    code, output = run_cli("search", "harbour", "--index", folder)
    assert code in (0, 1) and "Traceback" not in output, output
    assert_converges(corpus, folder, reference, point)


def test_changed_files_committed_before_a_crash_are_not_duplicated(corpus: Path, reference: Counter,
                                                            tmp_path: Path) -> None:
    """A run killed right after a commit of files whose manifest entry is older: the
    re-read replaces the committed version instead of adding a second copy."""
    folder = tmp_path / "index"
    Indexer(folder, commit_every=COMMIT_EVERY).run([corpus])
    changed = sorted(corpus.rglob("*.txt"))[:3]
    saved = {p: p.read_bytes() for p in changed}
    try:
        for path in changed:
            path.write_text(path.read_text() + "\nA late correction.\n", encoding="utf-8")
        status = wait(index_in_child(corpus, folder,
                                     patch=_exit_on_call(store, "write_manifest", 1)))
        assert os.WEXITSTATUS(status) == 137
        Indexer(folder).run([corpus])
        found = pairs(folder)
        assert len(found) == len(reference) and set(found.values()) == {1}
    finally:
        for path, data in saved.items():
            path.write_bytes(data)


# --- guarantee 1: disk full ---------------------------------------------------------------------

def _enospc_after(budget: int) -> Callable[[], None]:
    """Make every Whoosh file write fail with ENOSPC once ``budget`` bytes were written."""
    from whoosh.filedb.structfile import StructFile
    real = StructFile.write
    written = [0]

    def write(self, data):  # noqa: ANN001
        written[0] += len(data)
        if written[0] > budget:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, data)
    StructFile.write = write  # type: ignore[method-assign]
    return lambda: setattr(StructFile, "write", real)


@pytest.mark.parametrize("budget", [1_000, 30_000, 100_000, 200_000])
def test_disk_full_fails_cleanly_and_keeps_the_index(budget: int, corpus: Path,
                                                     reference: Counter,
                                                     tmp_path: Path) -> None:
    folder = tmp_path / "index"
    half = tmp_path / "half"
    make_corpus(half / "news", CORPUS_FILES // 2)  # the first half of the same articles
    Indexer(folder, commit_every=COMMIT_EVERY).run([half / "news"])
    before = pairs(folder)
    restore = _enospc_after(budget)
    try:
        result = CliRunner().invoke(main, ["index", str(corpus), "--index", str(folder),
                                           "--no-progress", "--commit-every", "50"])
    finally:
        restore()
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        f"traceback: {result.exception!r}"
    message = result.output.strip().splitlines()
    assert len(message) == 1 and "No space left on device" in message[0], result.output
    assert "last completed commit" in message[0]
    assert_consistent(folder, reference, f"ENOSPC after {budget} bytes")
    assert set(before) - set(pairs(folder)) <= set(before)  # nothing foreign appeared
    assert_converges(corpus, folder, reference, f"ENOSPC after {budget} bytes")


def test_real_full_tmpfs(corpus: Path, reference: Counter, tmp_path: Path) -> None:
    """The same on a real 1.5 MB tmpfs, where the machine allows mounting one."""
    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1500k", "tmpfs", str(mount)],
            capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root); the injected ENOSPC test covers it")
    try:
        folder = mount / "index"
        big = make_corpus(tmp_path / "big" / "news", 1200, seed=11)
        code, output = run_cli("index", big, "--index", folder, "--no-progress",
                               "--commit-every", "100")
        assert code == 1 and "No space left on device" in output, output
        assert len(output.strip().splitlines()) == 1, output
        report = check_index(folder)
        assert report.ok, report.problems
        with Archive(folder) as archive:
            assert archive.search("").total > 0
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


# --- guarantee 2: concurrency -------------------------------------------------------------------

def test_readers_see_only_whole_commits_while_a_writer_commits(corpus: Path,
                                                               tmp_path: Path) -> None:
    folder = tmp_path / "index"
    Indexer(folder).run([make_corpus(tmp_path / "seed" / "news", 3)])  # so readers can open
    every = 20
    seen: list[int] = []
    errors: list[str] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            try:
                with Archive(folder) as archive:
                    page = archive.search("", page_size=1)
                    archive.search("harbour OR court", page_size=3)
                    seen.append(page.total)
            except BaseException:  # noqa: BLE001 - recorded, then asserted
                errors.append(traceback.format_exc())
                return

    # fork the writer first: forking while reader threads hold locks can hang the child
    writer = index_in_child(corpus, folder, commit_every=every)  # adds 1 article a file
    threads = [threading.Thread(target=reader) for _ in range(3)]
    for thread in threads:
        thread.start()
    try:
        status = wait(writer)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert status == 0
    assert not errors, f"a reader failed: {errors[0]}"
    final = pairs(folder)
    # committed totals: the 3 seed articles plus a whole number of batches, or the end state
    files = len(list(corpus.rglob("*.txt")))
    allowed = {3 + every * k for k in range(files // every + 1)}
    allowed.add(sum(final.values()))
    odd = sorted(set(seen) - allowed)
    assert not odd, f"readers saw half-written totals {odd}; allowed {sorted(allowed)}"
    assert len(set(seen)) >= 3, f"readers saw too few commits: {sorted(set(seen))}"


def test_second_writer_waits_then_fails_with_a_clear_message(news_dir: Path,
                                                            tmp_path: Path) -> None:
    folder = tmp_path / "index"
    Indexer(folder).run([news_dir])
    holder = store.open_writer(store.open_index(folder), folder)  # a writer mid-run
    try:
        started = time.perf_counter()
        code, output = run_cli("index", news_dir, "--index", folder, "--lock-timeout", "0.6",
                               "--no-progress")
        waited = time.perf_counter() - started
    finally:
        holder.cancel()
    assert code == 1, output
    assert "locked" in output and "waited 0.6s" in output, output
    assert len(output.strip().splitlines()) == 1 and "Traceback" not in output
    assert 0.5 <= waited < 5
    code, output = run_cli("index", news_dir, "--index", folder, "--lock-timeout", "0.6",
                           "--no-progress")
    assert code == 0, output


def test_second_writer_proceeds_when_the_first_finishes_in_time(news_dir: Path,
                                                               tmp_path: Path) -> None:
    folder = tmp_path / "index"
    Indexer(folder).run([news_dir])
    holder = store.open_writer(store.open_index(folder), folder)
    threading.Timer(0.4, holder.cancel).start()
    code, output = run_cli("index", news_dir, "--index", folder, "--lock-timeout", "5",
                           "--no-progress")
    assert code == 0, output


def test_lock_of_a_sigkilled_writer_is_released(news_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "index"
    Indexer(folder).run([news_dir])
    ready_r, ready_w = os.pipe()

    def hold_lock_forever() -> None:
        writer = store.open_writer(store.open_index(folder), folder)
        writer.add_document(id="half-written", title="never committed")
        os.write(ready_w, b"x")
        time.sleep(60)

    pid = fork(hold_lock_forever)
    assert os.read(ready_r, 1) == b"x"
    assert "writing the index now" in " ".join(check_index(folder).notes)
    os.kill(pid, signal.SIGKILL)
    wait(pid)
    report = check_index(folder)
    assert report.ok and not any("lock" in n for n in report.notes), report.notes
    started = time.perf_counter()
    code, output = run_cli("index", news_dir, "--index", folder, "--lock-timeout", "2",
                           "--no-progress")
    assert code == 0, output
    assert time.perf_counter() - started < 2
    assert "half-written" not in {i for i, _ in pairs(folder)}


#: ``python -c`` body of one CLI run that waits for the file argv[1] to appear, so runs start
#: together with their imports done. With argv[2] == "1", creating an index takes 0.3 s
#: longer: a window two runs racing to create one index both fall into.
_RUN_AT_SIGNAL = """
import os, sys, time
from archive import store
from archive.cli import main
start, widen, args = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
if widen:
    create = store.create_index
    def slow_create(folder):
        time.sleep(0.3)
        return create(folder)
    store.create_index = slow_create
while not os.path.exists(start):
    time.sleep(0.002)
main(args, prog_name="archive")
"""


@pytest.mark.parametrize("widen", [True, False], ids=["widened", "as-is"])
def test_two_runs_on_a_new_index_at_once_hold_each_article_once(widen: bool,
                                                                tmp_path: Path) -> None:
    """Two `archive index` processes started together on a folder that does not exist yet:
    one builds the index, the other waits for its lock and finds every file unchanged."""
    files = 30
    corpus = make_corpus(tmp_path / "news", files)
    for trial in range(3):
        folder = tmp_path / f"trial{trial}" / "index"
        start = tmp_path / f"start{trial}"
        command = [sys.executable, "-c", _RUN_AT_SIGNAL, str(start), "1" if widen else "0",
                   "index", str(corpus), "--index", str(folder), "--no-progress", "--json",
                   "--lock-timeout", "60"]
        runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, cwd=tmp_path) for _ in range(2)]
        time.sleep(0.2)  # both waiting for the start file (they import meanwhile)
        start.touch()
        results = [run.communicate(timeout=120) for run in runs]
        context = f"trial {trial}: {[r.returncode for r in runs]} {results}"
        assert [run.returncode for run in runs] == [0, 0], context
        import json
        reports = sorted((r["added"], r["unchanged"]) for r in
                         (json.loads(out) for out, _err in results))
        assert reports == [(0, files), (files, 0)], context
        found = pairs(folder)
        assert len(found) == files and set(found.values()) == {1}, context
        report = check_index(folder)
        assert report.ok and not report.notes, f"{context}: {report.problems} {report.notes}"
        again = Indexer(folder).run([corpus])
        assert (again.added, again.unchanged, again.repaired) == (0, files, 0), context


def test_an_index_holding_articles_twice_is_repaired_by_the_next_run(tmp_path: Path) -> None:
    """The damage two runs creating one index at once used to leave (every article twice,
    `archive check` DAMAGED, the next run "all unchanged"): the next run deletes the extra
    copies and re-reads their files, so a stale copy it kept is replaced too."""
    corpus = make_corpus(tmp_path / "news", 12)
    Indexer(tmp_path / "clean").run([corpus])
    reference = _all_stored(tmp_path / "clean")
    folder = tmp_path / "index"
    Indexer(folder).run([corpus])
    ix = store.open_index(folder)
    with ix.searcher() as searcher:
        first, second, third = list(searcher.reader().all_stored_fields())[:3]
    raw = ix.writer()  # Whoosh's own writer, adding what an unlocked second run added
    raw.add_document(**store.to_document(store.from_stored(first)))  # an exact copy
    for stored in (second, third):  # copies unlike their files: the newest copy, kept
        stale = replace(store.from_stored(stored), title="A stale second copy")
        raw.add_document(**store.to_document(stale))
    raw.commit()
    damaged = check_index(folder)
    assert not damaged.ok and "3 article ids held more than once" in damaged.problems[0]

    code, output = run_cli("index", corpus, "--index", folder, "--no-progress")
    assert code == 0, output
    assert "3 articles were held more than once (damage); removed 3 extra copies" in output
    assert "12 unchanged" not in output  # the two stale copies were replaced
    assert sorted(_all_stored(folder), key=lambda d: d["id"]) == \
        sorted(reference, key=lambda d: d["id"])
    report = check_index(folder)
    assert report.ok and not report.notes, (report.problems, report.notes)
    code, output = run_cli("index", corpus, "--index", folder, "--no-progress")
    assert code == 0 and "warning" not in output and "12 unchanged" in output, output


# --- guarantee 3: damage ------------------------------------------------------------------------

@pytest.mark.parametrize("damage", ["truncate", "delete", "garble"])
def test_check_names_damage_and_rebuild_restores(damage: str, corpus: Path,
                                                 reference: Counter, tmp_path: Path) -> None:
    folder = tmp_path / "index"
    Indexer(folder).run([corpus])
    code, output = run_cli("check", "--index", folder)
    assert code == 0 and "OK: no damage found" in output, output
    segment = max(folder.glob("archive_*.seg"), key=lambda p: p.stat().st_size)
    if damage == "truncate":
        with open(segment, "r+b") as stream:
            stream.truncate(segment.stat().st_size // 2)
    elif damage == "delete":
        segment.unlink()
    else:
        data = bytearray(segment.read_bytes())
        for i in range(len(data) // 3, len(data) * 2 // 3, 101):
            data[i] ^= 0x5A
        segment.write_bytes(bytes(data))
    code, output = run_cli("check", "--index", folder)
    assert code == 1, output
    if damage != "garble":
        assert segment.name in output, output
    assert "DAMAGED" in output and REPAIR_HINT in output, output
    # readers fail with one line, not a traceback; a garbled middle may spare the postings
    # this search reads (where it falls moves with the pickled fields' order, which follows
    # the hash seed), so there the search may also succeed
    code, output = run_cli("search", "harbour", "--index", folder)
    assert "Traceback" not in output
    assert code in (1, 2) or (damage == "garble" and code == 0), output
    code, output = run_cli("index", corpus, "--rebuild", "--index", folder, "--no-progress")
    assert code == 0, output
    code, output = run_cli("check", "--index", folder, "--json")
    assert code == 0, output
    assert pairs(folder) == reference


def test_check_reports_a_lagging_manifest_as_a_note(corpus: Path, tmp_path: Path) -> None:
    folder = tmp_path / "index"
    Indexer(folder).run([corpus])
    (folder / store.MANIFEST).unlink()
    code, output = run_cli("check", "--index", folder)
    assert code == 0 and "not yet in the manifest" in output, output


def test_falls_back_to_the_last_whole_generation(corpus: Path, reference: Counter,
                                                 tmp_path: Path) -> None:
    """A power cut can leave a newest TOC whose segment data never reached the disk: readers
    use the generation before it, and the next run removes the broken TOC."""
    folder = tmp_path / "index"
    Indexer(folder).run([corpus])
    gen = store.toc_generations(folder)[0]
    toc = folder / f"_{store.INDEX_NAME}_{gen}.toc"
    shutil.copy(toc, folder / f"_{store.INDEX_NAME}_{gen + 1}.toc")
    (folder / f"_{store.INDEX_NAME}_{gen + 1}.toc").write_bytes(toc.read_bytes()[:40])
    with Archive(folder) as archive:
        assert archive.search("").total == len(reference)
    assert not check_index(folder).ok  # the newest generation is named as damaged
    Indexer(folder).run([corpus])
    assert store.toc_generations(folder) == [gen + 1]
    assert check_index(folder).ok and pairs(folder) == reference


# --- guarantee 4: hostile input paths --------------------------------------------------------

def _index(folder: Path, *paths: Path):  # noqa: ANN202
    return Indexer(folder).run(list(paths))


def test_dotdot_in_input_path_cannot_escape(news_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    winding = tmp_path / "elsewhere" / ".." / "news" / ".." / "news"
    report = _index(tmp_path / "index", winding)
    assert report.added == 5 and not report.skipped
    stored = {store.from_stored(d).path for d in _all_stored(tmp_path / "index")}
    assert stored and all(p.startswith("news/") and ".." not in p for p in stored), stored
    plain = _index(tmp_path / "index2", news_dir)
    assert {i for i, _ in pairs(tmp_path / "index")} == {i for i, _ in pairs(tmp_path / "index2")}
    assert plain.added == 5


def _all_stored(folder: Path) -> list[dict]:
    with store.open_index(folder).searcher() as searcher:
        return list(searcher.reader().all_stored_fields())


def test_symlink_loops_are_reported_and_the_run_continues(news_dir: Path,
                                                          tmp_path: Path) -> None:
    (news_dir / "loop").symlink_to(news_dir, target_is_directory=True)   # folder loop
    (news_dir / "self.txt").symlink_to(news_dir / "self.txt")            # ELOOP
    (news_dir / "a.txt").symlink_to(news_dir / "b.txt")
    (news_dir / "b.txt").symlink_to(news_dir / "a.txt")
    (news_dir / "gone.txt").symlink_to(tmp_path / "missing.txt")         # dangling
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("Outside\n\nNot in the input folder.\n")
    (news_dir / "out").symlink_to(outside, target_is_directory=True)     # folder links: skipped
    code, output = run_cli("index", news_dir, "--index", tmp_path / "index", "--no-progress",
                           "--json")
    assert code == 0, output
    import json
    report = json.loads(output)
    assert report["added"] == 5
    reported = {Path(s["path"]).name for s in report["skipped"]}
    assert {"self.txt", "a.txt", "b.txt", "gone.txt"} <= reported, reported
    assert not [d for d in _all_stored(tmp_path / "index") if "secret" in d.get("path", "")]


def test_unreadable_folder_is_reported_and_the_run_continues(news_dir: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    locked = news_dir / "locked"
    locked.mkdir()
    (locked / "hidden-story.txt").write_text("Locked away\n\nYou cannot read this.\n")
    if os.geteuid() != 0:
        locked.chmod(0)
    else:  # root reads through chmod 000: simulate the kernel's refusal instead
        real = os.scandir

        def scandir(path=".", *args):  # noqa: ANN001, ANN002
            if Path(os.fsdecode(path)) == locked:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
            return real(path, *args)
        monkeypatch.setattr(os, "scandir", scandir)
    try:
        report = _index(tmp_path / "index", news_dir)
    finally:
        locked.chmod(0o755)
    assert report.added == 5
    problems = [e for e in report.skipped if "locked" in e.path]
    assert problems and "cannot read folder" in problems[0].reason, report.skipped


def test_fuzzed_file_names(tmp_path: Path) -> None:
    """Names with spaces, quotes, newlines, control characters, non-UTF-8 bytes, Unicode
    oddities, leading dashes and dots: every file is indexed or reported, none crashes."""
    rnd = random.Random(66)
    folder = tmp_path / "news"
    folder.mkdir()
    alphabet = ("abc XYZ-_.'\"`$!&;|*?[](){}<>~#%^=+,@\t\n\r\x01\x1b\u00e9\u0301\u200b"
                "\u202e\u4e2d\U0001f4f0\ufeff\\:")
    names: set[bytes] = {b"-rf.txt", b"--help", b"..txt", b"...", b" .txt", b"\xff\xfe.txt",
                         b"caf\xe9.txt", "e\u0301.txt".encode(), b"a" * 250 + b".txt"}
    while len(names) < 60:
        name = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 30)))
        raw = name.encode("utf-8", "surrogatepass") + rnd.choice([b"", b".txt", b".md", b".json"])
        if raw not in (b".", b"..") and len(raw) < 255:
            names.add(raw)
    for n, raw in enumerate(sorted(names)):
        path = os.path.join(os.fsencode(folder), raw)
        with open(path, "wb") as stream:
            stream.write(f"Story number {n}\n\nA fuzzed name held story {n}.\n".encode())
    code, output = run_cli("index", folder, "--index", tmp_path / "index", "--no-progress",
                           "--json")
    assert code == 0, output
    import json
    report = json.loads(output)
    visible = [r for r in names if not r.startswith(b".")]
    accounted = report["added"] + len(report["skipped"]) + report["passed_over"]
    assert accounted >= len(visible), (report, len(visible))
    assert check_index(tmp_path / "index").ok
    code, output = run_cli("index", folder, "--index", tmp_path / "index", "--no-progress",
                           "--json")
    assert code == 0 and json.loads(output)["added"] == 0, output  # stable, incremental
