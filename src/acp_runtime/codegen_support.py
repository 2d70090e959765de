"""What the generated packages (``acp_generated.vN``) import from the runtime, in one place.

Generated code may import only public modules: the root, the public submodules, and this
one. The internals it needs (the model base, the lenient-parsing markers, the URI check,
the keyword helpers of builders and facades, the typed method bindings and the handler
class check) are re-exported here, so the runtime's own modules stay private and can move.
Not meant for hand-written code: authors use the root and the public submodules.

It stays in the runtime's first layer (values), so importing a generated model does not
import the connection.
"""

from __future__ import annotations

from ._handler_class import refuse_unknown_methods
from ._kwargs import given, listed
from ._lazy import lazy_bindings, lazy_exports
from ._lazy_union import LazyUnion, LeftToRight, Tagged
from ._lenient import DefaultOnError, DefaultOnNull, NotNull, SkipInvalidItems
from ._methods import (
    JsonValue,
    ModelRef,
    NotificationMethod,
    RequestMethod,
    TypedNotification,
    TypedRequest,
)
from ._model import AcpModel, JsonInt, SerializeAsAny, unknown_tag
from ._uri_format import UriFormat

__all__ = [
    "AcpModel",
    "DefaultOnError",
    "DefaultOnNull",
    "JsonInt",
    "JsonValue",
    "LazyUnion",
    "LeftToRight",
    "ModelRef",
    "NotNull",
    "NotificationMethod",
    "RequestMethod",
    "SerializeAsAny",
    "SkipInvalidItems",
    "Tagged",
    "TypedNotification",
    "TypedRequest",
    "UriFormat",
    "given",
    "lazy_bindings",
    "lazy_exports",
    "listed",
    "refuse_unknown_methods",
    "unknown_tag",
]
