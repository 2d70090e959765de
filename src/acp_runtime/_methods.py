"""Method bindings: how a typed protocol method plugs into the untyped runtime.

The runtime speaks JSON-RPC with plain method names and JSON values. Generated
code (``acp_generated``) describes each protocol method once, as a
:class:`RequestMethod` or :class:`NotificationMethod`, and links every params
model to its binding through the :class:`TypedRequest` / :class:`TypedNotification`
mixins. That link is what lets ``await cx.send_request(PromptRequest(...))`` be
typed as ``PromptResponse`` without casts.

This module knows nothing about any schema version; it only converts between
Python objects and JSON values with pydantic. Its codecs are built on first use, and a
binding names its params and result types by :class:`ModelRef`, imported on first use
too: registering a handler creates no model class, answering a method creates its own.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeAlias, TypeVar, cast

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError

if TYPE_CHECKING:
    from pydantic import TypeAdapter

JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None
"""Any value JSON can carry, as :func:`json.loads` returns it."""

Side = Literal["agent", "client", "protocol", "proxy", "both"]
"""Which side *handles* a method (the schema's ``x-side``)."""

P = TypeVar("P")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class EncodedJson:
    """JSON text encoded already: params or a result that pydantic-core wrote straight
    to JSON. The runtime splices it into the outgoing message as it is, instead of
    building a dict of the model and then encoding the dict (half the cost)."""

    __slots__ = ("text",)

    def __init__(self, text: bytes) -> None:
        self.text = text

    def value(self) -> JsonValue:
        """The JSON value it encodes (for a message that nests it, such as an envelope)."""
        return json.loads(self.text)  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"EncodedJson({self.text!r})"


Payload: TypeAlias = "JsonValue | EncodedJson"
"""Params or a result on its way to the wire: a JSON value, or JSON text already."""


class ModelRef:
    """A type a generated binding names without importing it: ``module``'s attribute
    ``name``, imported when a codec first needs it. Creating a model class costs pydantic
    a fraction of a millisecond and creates the classes its fields refer to, so a binding
    made at registration would cost an agent every model of every method it handles
    before its first answer."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    def resolve(self) -> Any:
        """The type itself (the generated ``models`` modules create a class on access)."""
        return getattr(importlib.import_module(self.module), self.name)

    def __repr__(self) -> str:
        return f"ModelRef({self.module!r}, {self.name!r})"


class _Codec(Generic[R]):
    """Validate and dump one Python type; built on first use, then cached.

    For a model class, its validator's and serializer's methods are kept here once the
    class is built: reading them from the class or an instance each time goes through
    pydantic's ``__getattr__`` hooks, about 850 instructions a read (callgrind).
    """

    __slots__ = ("_adapter", "_method", "_model", "_ref", "_to_json", "_type", "_validate")

    def __init__(self, tp: Any, method: str | None = None) -> None:
        self._method = method  # named in the record of each salvage
        self._adapter: TypeAdapter[R] | None = None
        self._validate: Callable[[Any], R] | None = None
        self._to_json: Callable[..., bytes] | None = None
        self._model: type[BaseModel] | None = None
        self._ref: ModelRef | None = None
        if isinstance(tp, ModelRef):
            self._ref = tp  # resolved by the first use
        else:
            self._set_type(tp)

    def _set_type(self, tp: Any) -> None:
        self._type = tp
        # Decided once: a model class validates through its own schema, no adapter needed.
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            self._model = tp

    def _resolve(self) -> None:
        ref = self._ref
        if ref is not None:
            self._set_type(ref.resolve())
            self._ref = None

    @property
    def type(self) -> Any:
        """The Python type this codec validates (a model class, or a union for an adapter)."""
        self._resolve()
        return self._type

    def _get(self) -> TypeAdapter[R]:
        adapter = self._adapter
        if adapter is None:
            # Here, not at the top: an agent whose methods all take models never needs one.
            from pydantic import TypeAdapter

            adapter = self._adapter = TypeAdapter(self.type)
        return adapter

    def _validator(self) -> Callable[[Any], R]:
        self._resolve()
        model = self._model
        if model is None:
            validate: Callable[[Any], R] = self._get().validate_python
        else:
            validate = model.model_validate  # type: ignore[assignment]
            if not model.__pydantic_complete__:
                return validate  # builds the class (its validator's own method after that)
        self._validate = validate
        return validate

    def load(self, raw: JsonValue) -> R:
        """Validate a JSON value, salvaging what the schema allows (``acp_runtime._lenient``);
        raises :class:`pydantic.ValidationError` for the rest."""
        validate = self._validate or self._validator()
        try:
            return validate(raw)
        except ValidationError as error:
            from ._salvage import validate_salvaging  # only once some input fails (cold start)

            model = self._model
            schema: Any = (
                self._get().core_schema if model is None else model.__pydantic_core_schema__
            )
            return validate_salvaging(validate, schema, raw, error, method=self._method)

    def dump(self, value: R) -> JsonValue:
        """Dump to a JSON value: wire (camelCase) names, unset fields left out."""
        if isinstance(value, BaseModel):
            return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return self._get().dump_python(value, mode="json", by_alias=True, exclude_unset=True)  # type: ignore[no-any-return]

    def encode(self, value: R) -> Payload:
        """What :meth:`dump` gives, as JSON text written by pydantic-core where it can.

        As in ``model_dump_json``, a non-finite float becomes ``null``. Text that is not
        valid Unicode (a lone surrogate) falls back to :meth:`dump`, which the runtime
        then sends ASCII-escaped.
        """
        try:
            if type(value) is self._model:  # the usual case: the type itself, no ABC check
                to_json = self._to_json
                if to_json is None:
                    serializer = cast(BaseModel, value).__pydantic_serializer__
                    to_json = self._to_json = serializer.to_json
                return EncodedJson(to_json(value, by_alias=True, exclude_unset=True))
            if self._ref is not None:  # the first value: the next ones take the path above
                self._resolve()
                return self.encode(value)
            if isinstance(value, BaseModel):
                serializer = value.__pydantic_serializer__
                return EncodedJson(serializer.to_json(value, by_alias=True, exclude_unset=True))
            return EncodedJson(self._get().dump_json(value, by_alias=True, exclude_unset=True))
        except PydanticSerializationError:
            return self.dump(value)


class RequestMethod(Generic[P, R]):
    """A JSON-RPC request method with its params type ``P`` and result type ``R``."""

    __slots__ = ("doc", "name", "params", "requires", "result", "side")

    def __init__(
        self,
        name: str,
        params_type: Any,
        result_type: Any,
        *,
        side: Side,
        doc: str = "",
        requires: str | None = None,
    ) -> None:
        self.name = name
        self.side: Side = side
        self.params: _Codec[P] = _Codec(params_type, name)
        self.result: _Codec[R] = _Codec(result_type, name)
        self.doc = doc
        self.requires = requires
        """The capability the handling side must have declared in ``initialize`` for the
        method to be sent (a dotted path: ``"fs.readTextFile"``), or None."""

    def __repr__(self) -> str:
        return f"RequestMethod({self.name!r}, side={self.side!r})"


class NotificationMethod(Generic[P]):
    """A JSON-RPC notification method with its params type ``P``."""

    __slots__ = ("doc", "name", "params", "side")

    def __init__(self, name: str, params_type: Any, *, side: Side, doc: str = "") -> None:
        self.name = name
        self.side: Side = side
        self.params: _Codec[P] = _Codec(params_type, name)
        self.doc = doc

    def __repr__(self) -> str:
        return f"NotificationMethod({self.name!r}, side={self.side!r})"


class TypedRequest(Generic[R_co]):
    """Mixin for a generated params model that is sent as a request answered by ``R_co``.

    Generated code declares ``class PromptRequest(BaseModel, TypedRequest["PromptResponse"])``
    and sets ``__acp_method__`` to the binding, so the runtime finds the method
    name and result codec from the params object alone.
    """

    __acp_method__: ClassVar[RequestMethod[Any, Any]]


class TypedNotification:
    """Mixin for a generated params model that is sent as a notification."""

    __acp_method__: ClassVar[NotificationMethod[Any]]


def request_method_of(params: TypedRequest[R]) -> RequestMethod[Any, R]:
    """The binding a typed request params object was generated for."""
    return _binding_of(params)  # type: ignore[return-value]


def notification_method_of(params: TypedNotification) -> NotificationMethod[Any]:
    """The binding a typed notification params object was generated for."""
    return _binding_of(params)  # type: ignore[return-value]


_BINDINGS: dict[type, object] = {}
"""``__acp_method__`` by class, read once: reading a model class's attribute goes through
pydantic's metaclass ``__getattr__`` hook (about 850 instructions), a dict costs a tenth."""


def _binding_of(params: object) -> object:
    cls = type(params)
    binding = _BINDINGS.get(cls)
    if binding is None:
        binding = _BINDINGS[cls] = cast(object, cls.__acp_method__)  # type: ignore[attr-defined]
    return binding
