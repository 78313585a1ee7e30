"""A Dockerfile's one `RUN` step made without `docker build`: the command runs in a container of
the image, the container lists what it changed, and that change is loaded as one layer.

Why: on this engine's storage driver (fuse-overlayfs, a naive diff) the commit that ends a
`RUN` diffs the whole file system (7.8 s for the bare base on an idle machine), for every
repository build, toolchain and kind environment (issue 57). Here the container itself finds
its change: every path whose status changed after a marker (ctime, which unpacking a package
cannot set back as it sets mtime), and every path that was there before and is gone (a
whiteout). Its working files sit on a volume, another file system, so no walk sees them.
"""

from __future__ import annotations

import logging
import shutil
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
from docker.errors import APIError, DockerException
from docker.models.containers import Container
from docker.types import Mount

from taskfoundry.errors import ImageError
from taskfoundry.images.build import context_tag, image_exists
from taskfoundry.images.layer import load_layer_image
from taskfoundry.sandbox.tarutil import extract_one

log = logging.getLogger(__name__)
WORK = "/.tf-layer"  # a volume: another file system, which -xdev walks do not enter
# files the engine mounts into every container (a commit leaves them out too)
_ENGINE_FILES = ("/etc/hosts", "/etc/hostname", "/etc/resolv.conf")
_PRUNE = " -o ".join(f"-path {p}" for p in (WORK, *_ENGINE_FILES))
_WALK = f"find / -xdev \\( {_PRUNE} \\) -prune -o"
# the marker's ctime sits a tick before the command: a change in the same tick would not be newer
_BEFORE = f"{_WALK} -printf '%P\\0' > {WORK}/before && touch {WORK}/marker && sleep 0.1"
_CAPTURE = (
    f"cd {WORK} && {_WALK} -printf '%P\\0' > after"
    f" && {{ {_WALK} -cnewer marker -printf '%P\\0' | grep -zv '^$' > changed || true; }}"
    " && tar -C / --no-recursion --null --format=posix --xattrs --xattrs-include='*'"
    " --numeric-owner -cf layer.tar -T changed 2> tar.err; rc=$?"
    # GNU tar's 1: a file changed as it was read (a socket skipped); 2 is fatal
    " ; test $rc -le 1 || { cat tar.err >&2; exit $rc; }"
)


def run_image(client: docker.DockerClient, image: str, run: str, tag: str, logfile: Path) -> None:
    """`tag`: `image` with what `run` (a shell command, as a Dockerfile's RUN) changed, as one
    layer over it. Its output goes to `logfile`; a failed command raises ImageError naming it."""
    logfile.parent.mkdir(parents=True, exist_ok=True)
    with logfile.open("wb") as out, _container(client, image) as box:
        out.write(f"Step 1/1 : RUN {run}\n".encode())
        _exec(box, _BEFORE, out, "list the file system")
        code = _exec_code(box, ["sh", "-c", run], out, user="")  # the image's own user, as RUN
        if code != 0:
            out.write(f"The command '/bin/sh -c {run}' returned a non-zero code: {code}\n".encode())
            out.flush()
            raise ImageError(f"docker build failed: the RUN step returned a non-zero code: {code}", logfile)
        _exec(box, _CAPTURE, out, "capture its change")
        layer = _whiteouts(_read(box, "before"), _read(box, "after")) + _read(box, "layer.tar")
        out.write(f"Successfully built {tag} ({len(layer)} bytes of layer)\n".encode())
    load_layer_image(client, image, layer, tag, config={}, comment=f"RUN {run}")


class _container:
    """A started container of `image` (its user and the engine's default network, as `docker
    build` gives a RUN step), removed with its volume at the end."""

    def __init__(self, client: docker.DockerClient, image: str) -> None:
        self.client, self.image = client, image
        self.box: Container | None = None

    def __enter__(self) -> Container:
        try:
            self.box = self.client.containers.run(
                self.image,
                ["sleep", "infinity"],
                detach=True,
                mounts=[Mount(WORK, None, type="volume")],
                labels={"taskfoundry": "image-build"},
            )
        except (APIError, DockerException) as exc:
            raise ImageError(f"cannot start a container of {self.image} to build on: {exc}") from exc
        return self.box

    def __exit__(self, *exc: object) -> None:
        if self.box is not None:
            try:
                self.box.remove(force=True, v=True)
            except APIError as err:
                log.warning("could not remove build container %s: %s", self.box.id, err)


def _exec_code(box: Container, argv: list[str], out: Any, user: str = "0:0") -> int:
    """Run `argv` as `user` ("": the image's) in the image's working directory and environment,
    its output to `out`."""
    api = box.client.api
    try:
        exec_id = api.exec_create(box.id, argv, user=user)["Id"]
        for chunk in api.exec_start(exec_id, stream=True):
            out.write(chunk)
        code = api.exec_inspect(exec_id).get("ExitCode")
    except (APIError, DockerException) as exc:
        raise ImageError(f"docker exec in the build container failed: {exc}") from exc
    return -1 if code is None else int(code)


def _exec(box: Container, script: str, out: Any, what: str) -> None:
    code = _exec_code(box, ["sh", "-c", script], out)
    if code != 0:
        raise ImageError(f"the build container could not {what} (exit {code})")


def _read(box: Container, name: str) -> bytes:
    try:
        chunks, _ = box.get_archive(f"{WORK}/{name}")
        return extract_one(chunks)
    except (APIError, DockerException, FileNotFoundError) as exc:
        raise ImageError(f"cannot read {name} of the build container: {exc}") from exc


def _whiteouts(before: bytes, after: bytes) -> bytes:
    """Tar headers (no end marker: the layer's own tar follows) deleting each path that was there
    before and is gone, those under a gone directory left to its whiteout."""
    gone = set(_paths(before)) - set(_paths(after))
    tops = sorted(p for p in gone if not any(parent in gone for parent in _parents(p)))
    return b"".join(_whiteout_header(p) for p in tops)


def _paths(listing: bytes) -> Iterator[str]:
    return (p for p in listing.decode("utf-8", "surrogateescape").split("\0") if p)


def _parents(path: str) -> Iterator[str]:
    parts = path.split("/")
    return ("/".join(parts[:i]) for i in range(1, len(parts)))


def _whiteout_header(path: str) -> bytes:
    parent, _, name = path.rpartition("/")
    info = tarfile.TarInfo(f"{parent}/.wh.{name}" if parent else f".wh.{name}")
    return info.tobuf(format=tarfile.PAX_FORMAT, encoding="utf-8", errors="surrogateescape")


def on_inputs(inputs: str, run: str) -> str:
    """The Dockerfile over an image (an inputs image, a base): one RUN, which `run_step_image`
    makes as one loaded layer. It names the image: its folder's hash is the tag."""
    return f"FROM {inputs}\nRUN {run}\n"


def build_on_inputs(
    client: docker.DockerClient, inputs: str, run: str, folder: Path, repository: str, logfile: Path
) -> tuple[str, bool]:
    """(`repository:<hash>`, built): `run` over the inputs image, its Dockerfile alone in `folder`
    (emptied first: the inputs image is the whole context, and the Dockerfile names the image)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "Dockerfile").write_text(on_inputs(inputs, run))
    return run_step_image(client, inputs, run, folder, repository, logfile)


def run_step_image(
    client: docker.DockerClient, image: str, run: str, folder: Path, repository: str, logfile: Path
) -> tuple[str, bool]:
    """(`repository:<hash of folder>`, built): the one-RUN Dockerfile in `folder` made by
    `run_image` (a container and a loaded layer, not a commit); an existing tag is
    kept, as `build_image` keeps it."""
    tag = context_tag(folder, repository)
    if image_exists(client, tag):
        return tag, False
    run_image(client, image, run, tag, logfile)
    return tag, True
