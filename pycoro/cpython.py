"""CPython's C API as pycoro.embed uses it, through ctypes: a builtin function
whose C code is compiled PyCoro (`builtin_function`), and a type whose
`tp_iternext` is (`iterator_type`). frontend/python_entries.py writes that
code; everything here is the documented, stable part of the API
(PyCFunction_NewEx, PyType_FromSpec, PyMemberDef).

`AVAILABLE` says whether it can be used at all: CPython with the GIL, whose
objects start with a reference count and a type pointer (the layout the
native code reads). Elsewhere pycoro.embed keeps to its Python wrappers.
"""
from __future__ import annotations

import ctypes
import sys
import sysconfig

AVAILABLE = sys.implementation.name == "cpython" and not sysconfig.get_config_var("Py_GIL_DISABLED")

# Include/methodobject.h, typeslots.h, structmember.h, object.h
_METH_KEYWORDS, _METH_FASTCALL = 0x0002, 0x0080
_PY_TP_ITERNEXT, _PY_TP_MEMBERS = 63, 72
_T_PYSSIZET = 19
_PY_TPFLAGS_DEFAULT, _PY_TPFLAGS_BASETYPE, _PY_TPFLAGS_DISALLOW_INSTANTIATION = 1 << 18, 1 << 10, 1 << 7
HEADER_SIZE = 2 * ctypes.sizeof(ctypes.c_void_p)   # ob_refcnt, ob_type


class _MethodDef(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("meth", ctypes.c_void_p), ("flags", ctypes.c_int),
                ("doc", ctypes.c_char_p)]


class _MemberDef(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_int), ("offset", ctypes.c_ssize_t),
                ("flags", ctypes.c_int), ("doc", ctypes.c_char_p)]


class _TypeSlot(ctypes.Structure):
    _fields_ = [("slot", ctypes.c_int), ("pfunc", ctypes.c_void_p)]


class _TypeSpec(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("basicsize", ctypes.c_int), ("itemsize", ctypes.c_int),
                ("flags", ctypes.c_uint), ("slots", ctypes.POINTER(_TypeSlot))]


_api = ctypes.pythonapi
_new_function = _api.PyCFunction_NewEx
_new_function.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.py_object]
_new_function.restype = ctypes.py_object
_type_from_spec = _api.PyType_FromSpec
_type_from_spec.argtypes = [ctypes.c_void_p]
_type_from_spec.restype = ctypes.py_object
_generic_alloc = _api.PyType_GenericAlloc
_generic_alloc.argtypes = [ctypes.py_object, ctypes.c_ssize_t]
_generic_alloc.restype = ctypes.py_object


def builtin_function(name: str, address: int, self_object, keep: list):
    """A builtin function (METH_FASTCALL | METH_KEYWORDS) whose C function is at
    `address`, called with `self_object` first. Its method definition must
    outlive it: it is appended to `keep`, which the caller holds as long."""
    method = _MethodDef(name.encode(), address, _METH_FASTCALL | _METH_KEYWORDS, None)
    keep.append(method)
    return _new_function(ctypes.addressof(method), self_object, None)


def iterator_type(name: str, iternext: int, fields: list[str], extra: int = 0):
    """A type whose instances are the object header, then `fields`, each a
    machine word (a Py_ssize_t member, read and written from Python by its
    name), then `extra` bytes only the native code uses; its `tp_iternext`
    is the C function at `iternext`. Python classes may derive from it
    (adding a __dict__ after all that). Neither it nor they can be
    instantiated, as CPython's generator type cannot (an instance that was
    not set up would step a frame at address 0): `allocate` makes them."""
    members = (_MemberDef * (len(fields) + 1))(
        *(_MemberDef(f.encode(), _T_PYSSIZET, HEADER_SIZE + i * ctypes.sizeof(ctypes.c_void_p), 0, None)
          for i, f in enumerate(fields)))
    slots = (_TypeSlot * 3)(_TypeSlot(_PY_TP_ITERNEXT, iternext),
                            _TypeSlot(_PY_TP_MEMBERS, ctypes.addressof(members)), _TypeSlot(0, None))
    qualified = f"pycoro.{name}".encode()
    spec = _TypeSpec(qualified, HEADER_SIZE + len(fields) * ctypes.sizeof(ctypes.c_void_p) + extra, 0,
                     _PY_TPFLAGS_DEFAULT | _PY_TPFLAGS_BASETYPE | _PY_TPFLAGS_DISALLOW_INSTANTIATION, slots)
    made = _type_from_spec(ctypes.addressof(spec))
    # Before 3.12 the type keeps pointers into the spec (its name); it lives as long.
    made._spec_memory = (qualified, spec, slots, members)
    return made


def allocate(kind: type):
    """A new instance of `kind` (an `iterator_type` or a class derived from
    one), zeroed, neither its `__new__` nor its `__init__` called."""
    return _generic_alloc(kind, 0)
