"""`functools.cache`, `functools.lru_cache` and `collections.namedtuple` for the hook path,
without importing `functools` and `collections`.

The two modules (with `operator`, `keyword`, `reprlib`, `types`: what they import) cost ~11 M
instructions, 0.3x a bare interpreter's start, on every tool call of the agent, for a few
decorators and record types. The modules the hooks import use these instead. In a process
that has imported the real module already (every command: typer imports both; the tests),
they are the real ones, so nothing changes there. Otherwise (a hook) the results are the same;
what differs: a bounded cache (`lru_cache(maxsize=N)`) is emptied when full rather than
dropping its least recent entry (the functions are pure: only what is recomputed changes),
and the named tuples have `_fields`, `_field_defaults`, `_make`, `_replace` and `_asdict`,
not `_source` or `typename` renaming.
"""

from __future__ import annotations

import sys
from _operator import itemgetter

_MISSING = object()
_KWARGS = object()  # separates positional from keyword arguments in a key


def cache(function):
    """functools.cache: every result kept."""
    real = sys.modules.get("functools")
    return real.cache(function) if real is not None else _memoized(function, None)


def lru_cache(maxsize: int = 128):
    """functools.lru_cache(maxsize=N), as a decorator factory: at most `maxsize` results."""
    real = sys.modules.get("functools")
    return real.lru_cache(maxsize=maxsize) if real is not None else lambda function: _memoized(function, maxsize)


def _memoized(function, maxsize: int | None):
    values: dict = {}
    counts = [0, 0]  # hits, misses

    def memoized(*args, **kwargs):
        key = args if not kwargs else args + (_KWARGS, *kwargs.items())
        value = values.get(key, _MISSING)
        if value is _MISSING:
            counts[1] += 1
            value = function(*args, **kwargs)
            if maxsize is not None and len(values) >= maxsize:
                values.clear()
            values[key] = value
        else:
            counts[0] += 1
        return value

    def cache_info():
        return _CacheInfo(counts[0], counts[1], maxsize, len(values))

    def cache_clear():
        values.clear()
        counts[:] = [0, 0]

    memoized.cache_info = cache_info
    memoized.cache_clear = cache_clear
    memoized.__wrapped__ = function
    for name in ("__module__", "__name__", "__qualname__", "__doc__"):  # those it has (functools.wraps)
        if hasattr(function, name):
            setattr(memoized, name, getattr(function, name))
    return memoized


def namedtuple(typename: str, field_names, *, defaults=(), module: str | None = None) -> type:
    """collections.namedtuple(typename, field_names, defaults=..., module=...)."""
    real = sys.modules.get("collections")
    if real is not None:
        return real.namedtuple(typename, field_names, defaults=defaults or None, module=module)
    return _namedtuple(typename, field_names, defaults, module)


def _namedtuple(typename: str, field_names, defaults: tuple, module: str | None) -> type:
    fields = tuple(field_names.replace(",", " ").split() if isinstance(field_names, str) else field_names)
    count = len(fields)
    field_defaults = dict(zip(fields[count - len(defaults):], defaults, strict=True)) if defaults else {}

    def __new__(cls, *args, **kwargs):
        if len(args) > count:
            raise TypeError(f"{typename}() takes {count} positional arguments but {len(args)} were given")
        values = list(args)
        for field in fields[len(args):]:
            if field in kwargs:
                values.append(kwargs.pop(field))
            elif field in field_defaults:
                values.append(field_defaults[field])
            else:
                raise TypeError(f"{typename}() missing required argument: {field!r}")
        if kwargs:
            raise TypeError(f"{typename}() got an unexpected keyword argument {next(iter(kwargs))!r}")
        return tuple.__new__(cls, values)

    def _make(cls, iterable):
        result = tuple.__new__(cls, iterable)
        if len(result) != count:
            raise TypeError(f"Expected {count} arguments, got {len(result)}")
        return result

    def _replace(self, **kwargs):
        result = self._make([kwargs.pop(field, value) for field, value in zip(fields, self, strict=True)])
        if kwargs:
            raise ValueError(f"Got unexpected field names: {list(kwargs)!r}")
        return result

    def __repr__(self):
        return f"{self.__class__.__name__}(" + ", ".join(f"{f}={v!r}" for f, v in zip(fields, self, strict=True)) + ")"

    def _asdict(self):
        return dict(zip(fields, self, strict=True))

    def __getnewargs__(self):
        return tuple(self)

    namespace = {"__slots__": (), "_fields": fields, "_field_defaults": field_defaults, "__match_args__": fields,
                 "__new__": __new__, "_make": classmethod(_make), "_replace": _replace, "__repr__": __repr__,
                 "_asdict": _asdict, "__getnewargs__": __getnewargs__, "__module__": module or __name__,
                 "__doc__": f"{typename}({', '.join(fields)})"}
    for index, field in enumerate(fields):
        namespace[field] = property(itemgetter(index), doc=f"Alias for field number {index}")
    return type(typename, (tuple,), namespace)


_CacheInfo = _namedtuple("CacheInfo", ("hits", "misses", "maxsize", "currsize"), (), __name__)  # functools' fields
