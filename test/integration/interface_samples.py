"""Deterministic sample values for any generated ROS 2 message, built from its type introspection.

Both sides of an interface test build the same sample from the same seed, so a receiver can
check that every field crossed the wire intact without knowing the message by heart.
"""
from __future__ import annotations

import importlib

from rosidl_parser.definition import (
    AbstractGenericString,
    AbstractNestedType,
    Array,
    BasicType,
    BoundedSequence,
    NamespacedType,
)

_INT_TYPES = {"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"}


def _message_class(t: NamespacedType) -> type:
    return getattr(importlib.import_module(".".join(t.namespaces)), t.name)


def _value(t, seed: int):
    if isinstance(t, BasicType):
        name = t.typename
        if name == "boolean":
            return seed % 2 == 1
        if name in ("float", "double", "float32", "float64", "long double"):
            return float(seed % 1000) + 0.5
        if name in _INT_TYPES:
            return seed % 100 + 1
        if name in ("octet", "char", "byte"):
            return bytes([seed % 256])
        raise TypeError(f"no sample for basic type {name}")
    if isinstance(t, AbstractGenericString):
        return f"s{seed}"
    if isinstance(t, NamespacedType):
        return sample(_message_class(t), seed + 1)
    if isinstance(t, AbstractNestedType):
        if isinstance(t, Array):
            size = t.size
        elif isinstance(t, BoundedSequence):
            size = min(2, t.maximum_size)
        else:
            size = 2
        return [_value(t.value_type, seed * 3 + i) for i in range(size)]
    raise TypeError(f"no sample for {t!r}")


def sample(cls: type, seed: int = 1):
    """An instance of ``cls`` with every field set to a value derived from ``seed``."""
    msg = cls()
    for i, (field, slot_type) in enumerate(zip(cls.get_fields_and_field_types(), cls.SLOT_TYPES)):
        setattr(msg, field, _value(slot_type, seed * 31 + i))
    return msg
