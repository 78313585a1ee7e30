"""Discovery against a loopback fake of each registry API: dates, reasons, cache, bounds, errors."""

from __future__ import annotations

import lzma
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from taskfoundry.discover.debindex import parse_sources
from taskfoundry.discover.models import Discovery, Row
from taskfoundry.discover.run import discover, table, write_catalog
from taskfoundry.discover.settings import DiscoverConfig
from taskfoundry.flows.catalog import load_catalog
from taskfoundry.sources.crates import fits

from discover_fakes import FakeRegistries, populate

SINCE = date(2026, 10, 27)


@pytest.fixture
def fake() -> Iterator[FakeRegistries]:
    registries = FakeRegistries()
    populate(registries)
    yield registries
    registries.close()


def _run(fake: FakeRegistries, tmp: Path, **bounds: object) -> Discovery:
    config = DiscoverConfig.model_validate({"seeds": {"pypi": ["ghost", "badjson"]}, **bounds})
    return discover(SINCE, config, fake.sources(tmp / "cache"), tmp / "cache")


def _rows(found: Discovery, registry: str) -> dict[str, Row]:
    (report,) = [r for r in found.registries if r.registry == registry]
    return {row.name: row for row in report.rows}


def test_each_registry_gives_its_candidates_with_reasons(fake: FakeRegistries, tmp_path: Path) -> None:
    found = _run(fake, tmp_path)
    pypi, crates, debian = (_rows(found, r) for r in ("pypi", "crates", "debian"))
    assert pypi["clitool"].source == "pypi:clitool==1.0" and pypi["clitool"].executable == "clitool"
    assert pypi["clitool"].verdicts["program"].reason == "console script `clitool`"
    assert pypi["purelib"].verdicts["program"].candidate is False
    assert pypi["purelib"].verdicts["function"].reason == "pure-Python wheel"
    assert pypi["purelib"].verdicts["feature"].candidate is None  # not checked, and says why
    assert crates["tool"].source == "crate:tool@1.0.0" and crates["tool"].verdicts["program"].reason == (
        "binary target `tool`"
    )
    assert crates["libthing"].verdicts["program"].reason.startswith("library only")
    assert crates["tool"].sections == ["utils"] == debian["cprog"].sections == pypi["clitool"].sections
    gone = debian["goneprog"].verdicts["program"]
    assert not gone.candidate and gone.reason == "the mirror does not serve goneprog_1.1-1.dsc"
    assert debian["cprog"].debian_bytes == 200 == crates["tool"].debian_bytes  # the Sources' file sizes
    assert debian["cprog"].source == "debian:cprog=1.2-1" and debian["cprog"].released is not None
    assert debian["cprog"].verdicts["program"].reason == "ships `cprog` (utils)"
    assert "libfoo" not in debian  # the program rule: libs and libdevel only
    assert (
        debian["guiprog"].verdicts["program"].reason
        == "a GUI program: ships `guiprog` (graphics), builds with libgtk-3-dev"
    )
    assert [r.source for r in found.candidates()] == [
        "pypi:clitool==1.0",
        "crate:tool@1.0.0",
        "debian:cprog=1.2-1",
    ]


def test_a_release_before_the_date_is_no_candidate(fake: FakeRegistries, tmp_path: Path) -> None:
    found = _run(fake, tmp_path)
    old = _rows(found, "debian")["oldprog"]
    assert old.released is not None and old.released.year == 2025
    assert all(v.reason == "released 2025-01-01, before 2026-10-27" for v in old.verdicts.values())
    nopub = _rows(found, "crates")["nopub"]
    assert nopub.released is None and nopub.verdicts["program"].reason.startswith("release date unknown")


def test_a_broken_answer_is_an_error_row(fake: FakeRegistries, tmp_path: Path) -> None:
    found = _run(fake, tmp_path)
    pypi, debian = _rows(found, "pypi"), _rows(found, "debian")
    assert "404" in (pypi["ghost"].error or "")
    assert "not JSON" in (pypi["badjson"].error or "")
    assert "404" in (debian["brokenprog"].error or "")
    assert not any(r.is_candidate(k) for r in (pypi["ghost"], debian["brokenprog"]) for k in r.verdicts)


def test_a_second_run_is_answered_from_the_cache(fake: FakeRegistries, tmp_path: Path) -> None:
    first = _run(fake, tmp_path)
    made = len(fake.hits)
    second = _run(fake, tmp_path)
    assert len(fake.hits) == made and made > 0
    assert all(r.requests == 0 and r.cached > 0 for r in second.registries) and second.index_requests == 0
    assert [r.source for r in second.candidates()] == [r.source for r in first.candidates()]
    expired = _run(fake, tmp_path, ttl_hours=0)  # an answer older than the TTL is asked again
    assert len(fake.hits) > made and expired.candidates() == second.candidates()


def test_the_request_budget_and_the_limit_bound_each_registry(fake: FakeRegistries, tmp_path: Path) -> None:
    found = _run(fake, tmp_path / "a", max_requests=1, registries=["crates"])
    (report,) = found.registries
    assert report.requests == 1 and report.stopped.startswith("request budget of 1 spent")
    found = _run(fake, tmp_path / "b", limit=1, registries=["crates", "debian"])
    # crates' first name is its candidate; Debian's first is a broken answer, its second the candidate
    assert [[r.name for r in reg.rows] for reg in found.registries] == [["tool"], ["brokenprog", "cprog"]]
    assert all(r.stopped == "limit of 1 candidates" for r in found.registries)


def test_a_server_that_ignores_ranges_still_gives_the_entry_points(
    fake: FakeRegistries, tmp_path: Path
) -> None:
    fake.honour_range = False
    assert _rows(_run(fake, tmp_path), "pypi")["clitool"].executable == "clitool"


def test_the_catalog_reads_back_as_refresh_reads_it(fake: FakeRegistries, tmp_path: Path) -> None:
    found = _run(fake, tmp_path)
    assert write_catalog(found, tmp_path / "catalog.yaml") == 3
    entries = load_catalog(tmp_path / "catalog.yaml")
    assert [e.source for e in entries] == [r.source for r in found.candidates()]
    assert entries[0].executable == "clitool" and entries[0].released_at is not None
    text = table(found)
    assert "pypi" in text and "crate:tool@1.0.0" in text and "binary target `tool`" in text


def test_an_unreachable_registry_is_one_error_row(tmp_path: Path) -> None:
    fake = FakeRegistries()
    fake.close()  # nothing answers on its port any more
    found = discover(SINCE, DiscoverConfig(timeout=2), fake.sources(tmp_path), tmp_path)
    assert [len(r.rows) for r in found.registries] == [1, 1, 1]
    assert all(r.rows[0].error and r.stopped.startswith("seed failed") for r in found.registries)


def test_uploads_the_baseline_suite_lacks_are_walked_first(fake: FakeRegistries, tmp_path: Path) -> None:
    sources = fake.files["/debian/dists/fake/main/source/Sources.xz"]
    text = lzma.decompress(sources).decode().replace("Version: 1.2-1", "Version: 1.1-1")  # cprog, older
    fake.files["/debian/dists/base/main/source/Sources.xz"] = lzma.compress(text.encode())
    found = _run(fake, tmp_path, limit=1, registries=["debian"], debian_baseline="base")
    assert [(r.name, r.seed.split(";")[1].strip()) for r in found.registries[0].rows] == [
        ("cprog", "a fresh upload")
    ]
    assert found.index_requests == 2  # the suite and its baseline


def test_a_rust_version_with_a_patch_part_fits_the_same_minor() -> None:
    assert fits("1.85.0", "1.85") and fits("1.85", "1.85.1") and fits(None, "1.85")
    assert not fits("1.85.1", "1.85") and not fits("1.88", "1.85")


@pytest.mark.parametrize(
    ("deps", "arch", "language"),
    [
        ("debhelper-compat (= 13), libz-dev", "any", "c"),
        ("debhelper-compat (= 13), cmake, libboost-dev", "any", "c++"),
        ("dh-golang, golang-go", "any", "go"),
        ("dh-cargo, cargo:native", "any", "rust"),
        ("debhelper-compat (= 13), erlang-dev, rebar3", "any", "erlang"),
        ("debhelper-compat (= 13)", "all", "script"),
        ("dh-python, pybuild-plugin-pyproject", "all", "python"),
    ],
)
def test_a_debian_source_s_language_is_guessed_from_its_toolchain(
    deps: str, arch: str, language: str
) -> None:
    text = f"Package: x\nVersion: 1-1\nArchitecture: {arch}\nBuild-Depends: {deps}\n"
    (pkg,) = parse_sources(text)
    assert pkg.language == language
