"""A differential tester for pycoro (like Csmith): random, well-typed PyCoro
programs, each with its Python twin (the oracle), run and compared.

- types.py, model.py: the program model, rendered as PyCoro and as Python;
- oracle.py: the Python prelude (wrapping integers, panics, print);
- generate.py: the generator's core (scopes, budgets) driving the layers;
- layers/: one module per layer (arith, control, …), registered by name;
- runner.py: runs oracle and compiler configurations and compares them;
- reduce.py: shrinks a failing program on its model;
- cli.py: `python -m pycoro.difftest`.
"""
from .generate import generate
from .layers import LAYERS, Layer, register

__all__ = ["LAYERS", "Layer", "generate", "register"]
