"""The cleanroom image as `build_cleanroom` loads it (one layer tar, no docker build).

What the Dockerfile used to do must still hold: the worker owns the workspace and /opt,
root owns the execute-only gold, runtime data sits root's at its installed path, the
workspace is one anonymous commit with a clean work tree, the image runs as the worker in
/workspace with HOME set. The tag names the inputs: the same inputs load nothing, another
gold is another image.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from taskfoundry.images.build import layers_key
from taskfoundry.images.layer import commit_layer_image, load_layer_image, tag_as_root
from taskfoundry.kinds.program.cleanroom.image import build_cleanroom, workspace_layer
from taskfoundry.kinds.program.cleanroom.runtime import runtime_tar
from taskfoundry.sandbox.docker import DockerSandbox
from taskfoundry.sandbox.tarutil import tar_files

pytestmark = pytest.mark.docker

REPO = "taskfoundry-test/cleanroom-image"
GOLD = b"\x7fELF not really, but bytes the worker must not read\n" * 4
DOCS = {"README.md": "# tool\n\nDoes things.\n", "docs/usage/tool.txt": "usage: tool [-x]\n"}
ASSETS = {"assets/tests/data/sample.bin": b"\x00\x01binary"}
RUNTIME = {"/usr/local/share/tool/font.flf": b"flf2a$ 1 1 1 0 1\n"}
DATA = runtime_tar(RUNTIME)
# one line per path: owner, group, octal mode, type
STAT = (
    "stat -c '%U %G %a %F %n' /opt /workspace /workspace/executable /workspace/README.md"
    " /workspace/docs/usage/tool.txt /workspace/assets/tests/data/sample.bin /workspace/.git"
    " /workspace/.gitignore /usr/local/share/tool/font.flf /usr/local/share/tool"
)


def test_layer_has_the_owners_modes_and_one_clean_commit(docker_client, base_image, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    def build() -> tuple[str, bool]:
        return build_cleanroom(
            docker_client, base_image, GOLD, DOCS, tmp_path, REPO, assets=ASSETS, runtime_data=DATA
        )

    tag, built = build()
    try:
        assert built
        config = docker_client.api.inspect_image(tag)["Config"]
        assert config["User"] == "worker" and config["WorkingDir"] == "/workspace"
        assert "HOME=/home/worker" in config["Env"]
        with DockerSandbox(tag, client=docker_client) as box:
            stat = box.exec(STAT, timeout=60, user="0:0")
            who = box.exec("id -un; echo $HOME", timeout=60)
            agent = box.exec("id -u; id -g; echo $HOME; cat /workspace/executable", timeout=60, user="agent")
            git = box.exec(
                "git status --porcelain && git rev-list --all --count"
                " && git log --format='%an <%ae> %cn <%ce> %s' && git ls-files",
                timeout=60,
                workdir="/workspace",
            )
            gold = box.exec("sha256sum /workspace/executable", timeout=60, user="0:0")
            unreadable = box.exec("cat /workspace/executable", timeout=60)
            font = box.exec("cat /usr/local/share/tool/font.flf", timeout=60)
        lines = stat.stdout.decode().splitlines()
        assert stat.ok, stat.text()
        assert lines == [
            "worker worker 755 directory /opt",
            "worker worker 755 directory /workspace",
            "root root 111 regular file /workspace/executable",
            "worker worker 644 regular file /workspace/README.md",
            "worker worker 644 regular file /workspace/docs/usage/tool.txt",
            "worker worker 644 regular file /workspace/assets/tests/data/sample.bin",
            "worker worker 755 directory /workspace/.git",
            "worker worker 644 regular file /workspace/.gitignore",
            "root root 644 regular file /usr/local/share/tool/font.flf",
            "root root 755 directory /usr/local/share/tool",
        ]
        assert who.stdout.decode().split() == ["worker", "/home/worker"]
        # ProgramBench's harnesses' `--user agent`: the worker's uid under another name
        assert agent.stdout.decode().split() == ["1000", "1000", "/home/worker"]
        assert not agent.ok and b"Permission denied" in agent.stderr
        assert git.ok, git.text()
        assert git.stdout.decode().splitlines() == [
            "1",
            "worker <worker@localhost> worker <worker@localhost> Initial commit",
            ".gitignore",
            "README.md",
            "assets/tests/data/sample.bin",
            "docs/usage/tool.txt",
        ]
        assert gold.stdout.decode().split()[0] == hashlib.sha256(GOLD).hexdigest()
        assert not unreadable.ok and font.stdout == RUNTIME["/usr/local/share/tool/font.flf"]
        assert build() == (tag, False)
        other, other_built = build_cleanroom(docker_client, base_image, GOLD + b"x", DOCS, tmp_path, REPO)
        assert other_built and other != tag
        docker_client.images.remove(other)
    finally:
        docker_client.images.remove(tag)


def test_commit_fallback_makes_the_same_workspace(docker_client, base_image, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The path taken when the engine refuses an archive without the base's layers."""
    layer = workspace_layer(tmp_path, {rel: text.encode() for rel, text in DOCS.items()}, GOLD, 0o111, None)
    tag = f"{REPO}:commit-fallback"
    config = {
        "User": "worker",
        "Env": ["HOME=/home/worker", "PATH=/usr/bin:/bin"],
        "WorkingDir": "/workspace",
    }
    commit_layer_image(docker_client, base_image, layer, tag, config=config)
    try:
        assert docker_client.api.inspect_image(tag)["Config"]["User"] == "worker"
        with DockerSandbox(tag, client=docker_client) as box:
            res = box.exec(
                "stat -c '%U %a' /workspace/executable /opt && git status --porcelain && id -un",
                timeout=60,
                workdir="/workspace",
            )
        assert res.ok and res.stdout.decode().split() == ["root", "111", "worker", "755", "worker"]
    finally:
        docker_client.images.remove(tag)


def test_root_alias_runs_as_root_and_git_trusts_it(docker_client, base_image, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The `task_cleanroom_v6` alias ProgramBench's evaluator runs: root by default, and git works
    in the worker's /workspace (root's git stops at "dubious ownership" there otherwise)."""
    tag, _ = build_cleanroom(docker_client, base_image, GOLD, DOCS, tmp_path, REPO)
    alias = f"{REPO}:root-alias"
    try:
        tag_as_root(docker_client, tag, alias)
        assert docker_client.api.inspect_image(alias)["Config"]["User"] == "root"
        git = "id -un && git status --porcelain && git rev-list --all --count"
        with DockerSandbox(alias, client=docker_client) as box:
            trusted = box.exec(git, timeout=60, user="root", workdir="/workspace")
            as_agent = box.exec("id -u", timeout=60, user="agent")
        with DockerSandbox(tag, client=docker_client) as box:
            untrusted = box.exec(git, timeout=60, user="root", workdir="/workspace")
        assert trusted.ok and trusted.stdout.decode().split() == ["root", "1"], trusted.text()
        assert as_agent.ok and as_agent.stdout.decode().split() == ["1000"], as_agent.text()
        assert not untrusted.ok and b"dubious ownership" in untrusted.stderr
    finally:
        docker_client.images.remove(alias)
        docker_client.images.remove(tag)


def test_the_layers_key_names_the_file_system_not_the_image(docker_client, base_image) -> None:  # type: ignore[no-untyped-def]
    """The leak scan's listing of a base is found again when the base is made again (a new id,
    the same layers), and not for an image whose files differ."""
    layer = tar_files({"etc/tf-layers-key": b"one\n"})
    repo = "taskfoundry-test/layers-key"
    one, _ = load_layer_image(docker_client, base_image, layer, f"{repo}:a", config={}, comment="a")
    other, _ = load_layer_image(
        docker_client, base_image, layer, f"{repo}:b", config={"Env": ["X=1"]}, comment="b"
    )
    changed = tar_files({"etc/tf-layers-key": b"two\n"})
    third, _ = load_layer_image(docker_client, base_image, changed, f"{repo}:c", config={}, comment="c")
    try:
        assert docker_client.images.get(one).id != docker_client.images.get(other).id
        assert layers_key(docker_client, one) == layers_key(docker_client, other)
        assert layers_key(docker_client, third) != layers_key(docker_client, one)
        assert layers_key(docker_client, base_image) not in {
            layers_key(docker_client, t) for t in (one, third)
        }
    finally:
        for tag in (one, other, third):
            docker_client.images.remove(tag, force=True)
