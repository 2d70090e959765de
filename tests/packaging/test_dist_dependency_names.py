"""No distribution built here depends on a name this repository neither builds nor declares.

``acp-generated-v1`` once required ``acp-runtime``, a name another project holds on the
package index, so installing it alone fetched that project's code.
"""

from __future__ import annotations

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from distributions.catalog import load_catalog
from distributions.dependency_names import RETIRED_NAMES, KnownNames, known_names, problems
from distributions.resolve import resolve_all
from distributions.versions import root_project


@pytest.fixture(scope="module")
def names() -> KnownNames:
    return known_names(load_catalog(), root_project())


def test_no_name_of_ours_is_a_former_one(names: KnownNames) -> None:
    assert names.own.isdisjoint(RETIRED_NAMES)
    assert names.third_party.isdisjoint(RETIRED_NAMES)


def test_every_requirement_of_every_built_distribution_is_ours_or_declared(
    names: KnownNames,
) -> None:
    for r in resolve_all(load_catalog()):
        requirements = [*r.dependencies, *(x for group in r.extras.values() for x in group)]
        assert problems(names, requirements) == [], r.dist.name


def test_generated_packages_require_the_runtime_built_here(names: KnownNames) -> None:
    dists = load_catalog()
    runtime = canonicalize_name(next(d.name for d in dists if not d.is_generated))
    for r in resolve_all(dists):
        if r.dist.is_generated:
            assert canonicalize_name(Requirement(r.dependencies[0]).name) == runtime
            assert runtime in names.own


def test_the_root_project_refers_to_itself_by_its_own_name(names: KnownNames) -> None:
    project = root_project()
    requirements = list(project["dependencies"])
    for group in project["optional-dependencies"].values():
        requirements.extend(group)
    assert problems(names, requirements) == []
    own_references = {
        canonicalize_name(Requirement(r).name)
        for r in requirements
        if canonicalize_name(Requirement(r).name) in names.own
    }
    assert own_references == {canonicalize_name(project["name"])}


@pytest.mark.parametrize(
    ("requirement", "reason"),
    [
        ("acp-runtime>=0.3.0,<0.4", "another project holds"),
        ("ACP_SDK[mcp]", "another project holds"),
        ("acp-generated-v1==2.4.0", "retired name"),
        ("left-pad>=1", "does not build"),
    ],
)
def test_a_name_taken_or_unknown_is_refused(
    names: KnownNames, requirement: str, reason: str
) -> None:
    (problem,) = problems(names, [requirement])
    assert reason in problem
