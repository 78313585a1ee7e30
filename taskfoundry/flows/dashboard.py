"""The catalog on the dashboard: a flow that publishes the table of a folder's tasks.

build-many and refresh refresh the `catalog` artifact at the end of every run;
`taskfoundry tasks PATH --publish` runs this flow for any folder, a release included
(its artifact is `catalog-<release name>`).
"""

from __future__ import annotations

import json
from pathlib import Path

from prefect import flow

from taskfoundry.catalog import Catalog
from taskfoundry.flows import names
from taskfoundry.flows.artifacts import publish_catalog


def release_name(path: Path) -> str | None:
    """The release's name if `path` is a release folder."""
    release = path / "release.json"
    if not release.is_file():
        return None
    name = json.loads(release.read_text()).get("name")
    return str(name) if name else None


@flow(name="publish-catalog", flow_run_name=names.catalog_name, log_prints=False)
def publish_catalog_flow(path: Path) -> str:
    """Publish the catalog of `path` (an OUT folder, a tasks folder, a release, a dump); its key."""
    folder = path if path.is_dir() else path.parent
    return publish_catalog(Catalog.load(path), name=release_name(folder), where=str(path.resolve()))
