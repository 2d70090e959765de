"""The base of every generated model, written once here instead of in each generated package.

Generated packages (``acp_generated.v1``, ``v2``, and their unstable supersets) define their
models on :class:`AcpModel` and guard the tags of open unions with :func:`unknown_tag`.
Keeping both in the runtime makes them one typed, tested piece of code, and lets a schema
bump regenerate models without touching how every model validates and dumps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import SchemaValidator, core_schema
from typing_extensions import Self

from ._lenient import Salvage, salvaged


def _integral_float_as_int(value: object) -> object:
    if type(value) is float and value.is_integer():
        return int(value)
    return value


JsonInt = Annotated[int, BeforeValidator(_integral_float_as_int)]
"""A JSON Schema ``integer``, as generated models type one: ``1.0`` counts (JSON Schema and
zod say so, and a Python peer's ``json.dumps(1.0)`` sends it) and is kept as ``1``; the
models are strict, so ``true``, ``"1"`` and ``1.5`` stay refused."""


if TYPE_CHECKING:
    from typing import TypeVar

    _T = TypeVar("_T")
    SerializeAsAny = Annotated[_T, ...]
    """Checkers read ``SerializeAsAny[X]`` as ``X``, as pydantic's own."""
else:

    class SerializeAsAny:
        """``pydantic.SerializeAsAny``: a union of models dumps each value through its own
        class (its fields and kept unknown fields), not the union's serializer.

        The same annotation, here because pydantic's lives in a module that costs an
        agent's start about 2 ms (``pydantic.functional_serializers`` and the dataclasses
        it defines) of which generated models need nothing else. A test holds its core
        schema equal to pydantic's."""

        __slots__ = ()

        def __class_getitem__(cls, item: Any) -> Any:
            return Annotated[item, cls()]

        def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
            schema = handler(source)
            target = schema
            while target["type"] == "definitions":
                target = target["schema"]
            target["serialization"] = core_schema.simple_ser_schema("any")
            return schema


class AcpModel(BaseModel):
    """Base of every generated model: wire names are camelCase aliases, unknown fields are kept.

    Constructing a model in code is stricter than parsing one from the wire: an unknown
    keyword is a typo to report (``TypeError``), not a field to relay, and a variant's
    constant tag (``type="text"``) is filled in, so ``TextContentBlock(text="hi")`` is enough.
    ``model_validate`` does neither: what a peer sends is kept and checked as it is.
    """

    model_config = ConfigDict(
        extra="allow",
        # As the JSON Schema and zod: no ``true`` -> ``1``, ``"1"`` -> ``1``, ``"yes"`` ->
        # ``True`` or ``"1.5"`` -> ``1.5``; a JSON object still validates as a model.
        strict=True,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        # Cold start: a model's validator is built on its first use, so an agent that
        # answers ``initialize`` builds a few of ~180 models, not all (tests/bench).
        defer_build=True,
        # No field name is checked against ``model_*`` methods at class creation: ours are
        # generated from the schema and tested, and the check costs each class at import.
        protected_namespaces=(),
    )

    @classmethod
    def model_validate_lenient(cls, obj: Any) -> Self:
        """``model_validate``, salvaging what the schema's ``x-deserialize-*`` rules allow
        (``acp_runtime._lenient``), as connections parse what a peer sends. Raises the
        strict ``ValidationError`` when some error is not covered by a rule."""
        return cls._salvage(cls.model_validate, obj)

    @classmethod
    def model_validate_json_lenient(cls, data: str | bytes | bytearray) -> Self:
        """``model_validate_json`` with the salvage of :meth:`model_validate_lenient`."""
        return cls._salvage(cls.model_validate_json, data)

    @classmethod
    def _salvage(cls, validate: Callable[[Any], Self], raw: Any) -> Self:
        try:
            return validate(raw)
        except ValidationError as error:
            from ._salvage import validate_salvaging  # only once some input fails (cold start)

            binding = cls.__dict__.get("__acp_method__")
            return validate_salvaging(
                cls.model_validate,
                cls.__pydantic_core_schema__,
                raw,
                error,
                method=getattr(binding, "name", None),
            )

    @property
    def salvaged(self) -> tuple[Salvage, ...]:
        """What parsing salvaged (``acp_runtime._lenient``): one ``(path, error_type, action)``
        per field set to its default or item dropped; empty for input valid as it came."""
        return salvaged(self)

    if not TYPE_CHECKING:  # checkers keep pydantic's signatures; these only add a fast path
        # Each class gets its own ``__init__`` (``_constructor``) on its first construction,
        # with its constant tags and validator bound in: no lookup per construction.

        # pydantic's wrappers forward all 6-15 keywords to pydantic-core, whose argument
        # parsing then costs more than validating a small model (measured, bench/).
        # Validation needs no wrapper at all: once a class is complete, its
        # ``model_validate(_json)`` is its validator's own method, which takes the same
        # keywords; no Python frame runs between the caller and pydantic-core.
        @classmethod
        def __pydantic_on_complete__(cls):
            _bind_validation(cls)
            type.__setattr__(cls, "__init__", _first_constructor(cls))

        # pydantic calls the hook above only when a class first completes: a forced
        # rebuild of a complete class must re-bind what the hook bound to the old validator.
        @classmethod
        def model_rebuild(
            cls,
            *,
            force=False,
            raise_errors=True,
            _parent_namespace_depth=2,
            _types_namespace=None,
        ):
            was_complete = cls.__pydantic_complete__
            rebuilt = super().model_rebuild(
                force=force,
                raise_errors=raise_errors,
                # one frame more between pydantic and the caller whose namespace it reads
                _parent_namespace_depth=_parent_namespace_depth + (_parent_namespace_depth > 0),
                _types_namespace=_types_namespace,
            )
            if was_complete:  # rebuilt, or back to placeholders if that failed
                cls.__pydantic_on_complete__()
            return rebuilt

        @classmethod
        def __pydantic_init_subclass__(cls, **kwargs):
            super().__pydantic_init_subclass__(**kwargs)
            type.__setattr__(cls, "__init__", _first_constructor(cls))
            _bind_validation(cls)  # never a base's validator

        # ``by_alias`` None and True are the same here: the config serializes by alias.
        def model_dump(self, *, mode="python", by_alias=None, exclude_unset=False, **options):
            if options or by_alias is False:
                return super().model_dump(
                    mode=mode, by_alias=by_alias, exclude_unset=exclude_unset, **options
                )
            return self.__pydantic_serializer__.to_python(
                self, mode=mode, exclude_unset=exclude_unset
            )

        def model_dump_json(self, *, by_alias=None, exclude_unset=False, **options):
            if options or by_alias is False:
                return super().model_dump_json(
                    by_alias=by_alias, exclude_unset=exclude_unset, **options
                )
            return self.__pydantic_serializer__.to_json(self, exclude_unset=exclude_unset).decode()


def _bind_validation(cls: type[AcpModel]) -> None:
    """Make ``model_validate(_json)`` the class's own validator methods once it is built.

    Until then (``defer_build``, or a rebuild that failed) the class holds pydantic's
    placeholders, whose methods would stay bound to no validator: it keeps pydantic's own
    classmethods, which build the class on first use (and so call this again through
    ``__pydantic_on_complete__``). Whatever builds a class first, and in whatever order,
    a built class validates with no Python frame in between.
    """
    python: object
    json: object
    if cls.__pydantic_complete__:
        validator = cls.__pydantic_validator__
        python, json = validator.validate_python, validator.validate_json
    else:
        python, json = vars(BaseModel)["model_validate"], vars(BaseModel)["model_validate_json"]
    type.__setattr__(cls, "model_validate", python)
    type.__setattr__(cls, "model_validate_json", json)


_Tags = tuple[tuple[str, str, object], ...]
"""A model's constant tags: field name, wire name (the alias, else the name), its value."""


def _constant_tags(cls: type[AcpModel]) -> _Tags:
    tags: list[tuple[str, str, object]] = []
    for name, field in cls.__pydantic_fields__.items():
        constant = _constant(field)
        if constant:
            alias = next(iter(_aliases(field)), name)
            tags.append((name, alias, constant[0]))
    return tuple(tags)


def _first_constructor(cls: type[AcpModel]) -> Callable[..., None]:
    """The ``__init__`` a class starts with (and gets back when it is rebuilt): on the
    first construction it makes the class's own constructor, installs it and runs it, so
    a class only parsed from the wire never pays for one."""

    def __init__(self: AcpModel, /, **data: Any) -> None:
        constructor = _constructor(_constant_tags(cls), _keyword_validator(cls))
        type.__setattr__(cls, "__init__", constructor)
        constructor(self, **data)

    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]  # see _constructor
    return __init__


def _keyword_validator(cls: type[AcpModel]) -> Callable[..., Any]:
    """``validate_python`` of a validator for ``cls`` that refuses unknown keywords.

    It is the class's own schema with every extra key failing validation
    (``unexpected_keyword_argument``), so pydantic-core checks keywords as it validates,
    at no cost; reading back what ``extra="allow"`` kept would cost a slow attribute read
    per construction. What extras mean is unchanged (``__pydantic_extra__`` is ``{}``, as
    after parsing), and nested fields validate as when parsing. The schema names a
    stand-in class: pydantic-core would reuse the class's own validator for its own class.
    """
    cls.__pydantic_core_schema__["type"]  # a deferred class is built by this first read
    schema: Any = cls.__pydantic_core_schema__
    nested: bool = schema["type"] == "definitions"
    definitions: list[Any] = list(schema["definitions"]) if nested else []
    model: Any = schema["schema"] if nested else schema
    if model["type"] == "definition-ref":
        model = next(d for d in definitions if d.get("ref") == model["schema_ref"])
    elif "ref" in model:
        definitions.append(model)  # what refers to the model from inside keeps its rules
    if model["type"] != "model" or model["schema"]["type"] != "model-fields":
        return _refusing_kept_extras(cls)  # a subclass with a model validator, say
    entry: Any = {key: value for key, value in model.items() if key != "ref"}
    entry["cls"] = _BuiltInCode
    entry["schema"] = {**model["schema"], "extras_keys_schema": _NO_KEY}
    if definitions:
        entry = {"type": "definitions", "schema": entry, "definitions": definitions}
    return SchemaValidator(entry, model.get("config")).validate_python


def _refusing_kept_extras(cls: type[AcpModel]) -> Callable[..., Any]:
    """For a schema :func:`_keyword_validator` does not rewrite: validate as the class
    does, then refuse what ``extra="allow"`` kept (slower, and never a generated model)."""
    validate = cls.__pydantic_validator__.validate_python

    def validate_refusing_extras(data: dict[str, Any], *, self_instance: AcpModel) -> None:
        validate(data, self_instance=self_instance)
        if self_instance.__pydantic_extra__:
            raise _unknown_keywords(cls, set(self_instance.__pydantic_extra__))

    return validate_refusing_extras


class _BuiltInCode:
    """Stand-in class of :func:`_keyword_validator`'s schemas (they always validate into
    an instance given as ``self_instance``)."""


_NO_KEY = {
    "type": "custom-error",
    "custom_error_type": "unexpected_keyword_argument",
    "schema": {"type": "literal", "expected": [object()]},  # equal to no key
}
"""A schema that no key passes."""


def _constructor(tags: _Tags, validate: Callable[..., Any]) -> Callable[..., None]:
    """A class's ``__init__``: fill in its constant tags, validate (``validate`` refuses
    unknown keywords), report a typo as one.

    This runs for every model built in code (three per streamed chunk), so it comes in one
    shape per tag count, each as few bytecodes as the checks allow, with the validator
    bound in (reading ``self.__pydantic_validator__`` goes through pydantic's
    ``__getattr__`` hook: about 400 instructions). Built so, a model costs about 330
    instructions less than with pydantic's own ``__init__`` (callgrind,
    ``bench/message_paths.py``). Failures take the slow path.
    """
    if not tags:

        def __init__(self: AcpModel, /, **data: Any) -> None:
            try:
                validate(data, self_instance=self)
            except ValidationError:
                _refuse_unknown_keywords(type(self), data)
                raise

    elif len(tags) == 1:
        ((name, alias, constant),) = tags

        def __init__(self: AcpModel, /, **data: Any) -> None:
            if name not in data and alias not in data:
                data[name] = constant
            try:
                validate(data, self_instance=self)
            except ValidationError:
                _refuse_unknown_keywords(type(self), data)
                raise

    else:

        def __init__(self: AcpModel, /, **data: Any) -> None:
            for name, alias, constant in tags:
                if name not in data and alias not in data:
                    data[name] = constant
            try:
                validate(data, self_instance=self)
            except ValidationError:
                _refuse_unknown_keywords(type(self), data)
                raise

    # pydantic validates nested models without calling ``__init__`` unless a class has a
    # custom one; this marks ours as the base's, so wire parsing keeps its fast path.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]
    return __init__


def _refuse_unknown_keywords(cls: type[AcpModel], data: dict[str, Any]) -> None:
    """After a failed validation, a typo first: it may be why a field is missing."""
    unknown = set(data) - _keywords(cls)
    if unknown:
        raise _unknown_keywords(cls, unknown) from None


if not TYPE_CHECKING:
    type.__setattr__(AcpModel, "__init__", _first_constructor(AcpModel))


def _aliases(field: FieldInfo) -> list[str]:
    return [a for a in (field.alias, field.validation_alias) if isinstance(a, str)]


def _constant(field: FieldInfo) -> tuple[object] | tuple[()]:
    """The value of a required one-value ``Literal`` field (a variant's tag), if it is one.

    Generated models give these fields their value as a default for type checkers only
    (``if TYPE_CHECKING``), so parsing still requires the tag and the constructor fills it.
    """
    if not field.is_required() or get_origin(field.annotation) is not Literal:
        return ()
    values = get_args(field.annotation)
    return (values[0],) if len(values) == 1 else ()


def _keywords(cls: type[AcpModel]) -> set[str]:
    """What the constructor accepts: field names and their wire aliases."""
    return {*cls.model_fields, *(a for f in cls.model_fields.values() for a in _aliases(f))}


def _unknown_keywords(cls: type[AcpModel], unknown: set[str]) -> TypeError:
    import difflib  # only for a typo: not every agent's start-up (cold start)

    keywords = sorted(_keywords(cls))
    fields = list(cls.model_fields)
    hints: list[str] = []
    for word in sorted(unknown):
        close = difflib.get_close_matches(word, fields, n=1) or difflib.get_close_matches(
            word, keywords, n=1
        )
        hints.append(f"{word!r} (did you mean {close[0]!r}?)" if close else repr(word))
    return TypeError(
        f"{cls.__name__}() got unexpected keyword argument(s) {', '.join(hints)}; "
        f"to keep fields this model does not declare, parse with {cls.__name__}.model_validate"
    )


def unknown_tag(known: frozenset[str]) -> Callable[[str], str]:
    """Validator for a catch-all variant's tag: a known tag must match its own variant.

    An open union (``ContentBlock``, ``SessionUpdate``, ...) ends in a variant that takes
    any tag, so a newer peer's kinds survive a relay. Without this guard, a known tag whose
    payload is malformed would silently parse as that catch-all instead of failing.
    """

    def check(value: str) -> str:
        if value in known:
            raise ValueError(f"known tag {value!r} did not match its variant's schema")
        return value

    return check
