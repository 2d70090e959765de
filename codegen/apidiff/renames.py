"""Which removed defs were renamed, and to what.

Shape equality alone gives false positives (many capability markers are all
``{_meta}``), so two kinds of evidence are used:

1. method identity: the params or result def of the same (method, kind, handler)
   changed name (``CancelNotification`` -> ``CancelSessionNotification``);
2. reference sites: every field that referenced the removed def now references
   one and the same new def (``ClientCapabilities.auth``: ``AuthCapabilities`` ->
   ``ClientAuthCapabilities``).
"""

from __future__ import annotations

from collections.abc import Iterator

from .keywords import JsonObject, arr, obj, ref_name
from .methods import MethodTable


def renamed_defs(
    old: MethodTable, new: MethodTable, old_defs: JsonObject, new_defs: JsonObject
) -> dict[str, str]:
    """Old def name -> new def name, for defs gone from the old schema under a new name."""
    removed = {n for n in old_defs if n not in new_defs}
    added = {n for n in new_defs if n not in old_defs}
    renames: dict[str, str] = {}
    for key, before in old.entries.items():
        after = new.entries.get(key)
        if after is None:
            continue
        for old_name, new_name in ((before.params, after.params), (before.result, after.result)):
            if old_name in removed and new_name in added and new_name not in renames.values():
                renames[old_name] = new_name
    old_sites = _sites_by_target(old_defs, old.envelope_defs)
    new_refs = _targets_by_site(new_defs, new.envelope_defs)
    for name in sorted(removed - set(renames)):
        sites = old_sites.get(name)
        if not sites:
            continue
        candidates = added - set(renames.values())
        for site in sites:
            candidates &= new_refs.get(site, set())
        if len(candidates) == 1:
            renames[name] = candidates.pop()
    return renames


def _ref_sites(defs: JsonObject, skip: frozenset[str]) -> Iterator[tuple[str, str]]:
    """(site, referenced def) for every ``$ref``; a site is the def plus its field path."""
    for name, node in defs.items():
        if name not in skip:
            yield from _walk(node, name)


def _walk(value: object, site: str) -> Iterator[tuple[str, str]]:
    node = obj(value)
    if node is None:
        return
    ref = node.get("$ref")
    if isinstance(ref, str):
        yield site, ref_name(ref)
    for field, sub in (obj(node.get("properties")) or {}).items():
        yield from _walk(sub, f"{site}.{field}")
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for sub in arr(node.get(key)) or ():
            yield from _walk(sub, site)
    for key, suffix in (("items", "[]"), ("additionalProperties", "{}")):
        yield from _walk(node.get(key), site + suffix)


def _sites_by_target(defs: JsonObject, skip: frozenset[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for site, target in _ref_sites(defs, skip):
        out.setdefault(target, set()).add(site)
    return out


def _targets_by_site(defs: JsonObject, skip: frozenset[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for site, target in _ref_sites(defs, skip):
        out.setdefault(site, set()).add(target)
    return out
