"""torch.export.graph_signature: what each input and output of an ExportedProgram's graph is (a lifted
parameter, buffer or constant tensor, or a user input; a user output or a mutated buffer)."""
from __future__ import annotations

import dataclasses
import enum
from typing import Any

__all__ = ["InputKind", "OutputKind", "TensorArgument", "SymIntArgument", "ConstantArgument", "InputSpec",
           "OutputSpec", "ExportGraphSignature", "ExportBackwardSignature"]


InputKind = enum.Enum("InputKind", "USER_INPUT PARAMETER BUFFER CONSTANT_TENSOR CUSTOM_OBJ TOKEN", module=__name__)
OutputKind = enum.Enum("OutputKind", "USER_OUTPUT LOSS_OUTPUT BUFFER_MUTATION PARAMETER_MUTATION GRADIENT_TO_PARAMETER "
                       "GRADIENT_TO_USER_INPUT USER_INPUT_MUTATION TOKEN", module=__name__)


@dataclasses.dataclass
class TensorArgument:
    name: str


@dataclasses.dataclass
class SymIntArgument:
    name: str


@dataclasses.dataclass
class ConstantArgument:
    name: str
    value: Any


@dataclasses.dataclass
class InputSpec:
    """One placeholder of the graph: its kind, its argument (the placeholder's name) and, for a lifted
    parameter/buffer/constant, the state-dict or constant name it reads (target)."""
    kind: InputKind
    arg: Any
    target: str | None
    persistent: bool | None = None

    def __str__(self) -> str:
        s = f"{self.arg.name}: {self.kind.name}"
        if self.target is not None:
            s += f" target={self.target!r}"
        if self.persistent is not None:
            s += f" persistent={self.persistent}"
        return s


@dataclasses.dataclass
class OutputSpec:
    kind: OutputKind
    arg: Any
    target: str | None

    def __str__(self) -> str:
        s = f"{getattr(self.arg, 'name', '')}: {self.kind.name}"
        return s + (f" target={self.target!r}" if self.target is not None else "")


@dataclasses.dataclass
class ExportBackwardSignature:
    gradients_to_parameters: dict
    gradients_to_user_inputs: dict
    loss_output: str


@dataclasses.dataclass
class ExportGraphSignature:
    """The input_specs (one per placeholder, in order: parameters, buffers, constants, user inputs) and
    output_specs (one per output) of an exported graph, with torch's views of them."""
    input_specs: list
    output_specs: list

    def _names(self, kind, specs=None) -> tuple:
        return tuple(s.arg.name for s in (self.input_specs if specs is None else specs) if s.kind == kind)

    @property
    def parameters(self) -> tuple:
        return tuple(s.target for s in self.input_specs if s.kind == InputKind.PARAMETER)

    @property
    def buffers(self) -> tuple:
        return tuple(s.target for s in self.input_specs if s.kind == InputKind.BUFFER)

    @property
    def non_persistent_buffers(self) -> tuple:
        return tuple(s.target for s in self.input_specs if s.kind == InputKind.BUFFER and not s.persistent)

    @property
    def lifted_tensor_constants(self) -> tuple:
        return tuple(s.target for s in self.input_specs if s.kind == InputKind.CONSTANT_TENSOR)

    @property
    def lifted_custom_objs(self) -> tuple:
        return ()

    @property
    def user_inputs(self) -> tuple:
        return tuple(s.arg.name if hasattr(s.arg, "name") else s.arg for s in self.input_specs
                     if s.kind == InputKind.USER_INPUT)

    @property
    def user_outputs(self) -> tuple:
        return tuple(getattr(s.arg, "value", None) if isinstance(s.arg, ConstantArgument) else s.arg.name
                     for s in self.output_specs if s.kind == OutputKind.USER_OUTPUT)

    def _lifted(self, kind) -> dict:
        return {s.arg.name: s.target for s in self.input_specs if s.kind == kind}

    @property
    def inputs_to_parameters(self) -> dict:
        return self._lifted(InputKind.PARAMETER)

    @property
    def inputs_to_buffers(self) -> dict:
        return self._lifted(InputKind.BUFFER)

    @property
    def inputs_to_lifted_tensor_constants(self) -> dict:
        return self._lifted(InputKind.CONSTANT_TENSOR)

    @property
    def buffers_to_mutate(self) -> dict:
        return {s.arg.name: s.target for s in self.output_specs if s.kind == OutputKind.BUFFER_MUTATION}

    @property
    def user_inputs_to_mutate(self) -> dict:
        return {}

    @property
    def backward_signature(self):
        return None

    @property
    def assertion_dep_token(self):
        return None

    @property
    def input_tokens(self) -> tuple:
        return ()

    @property
    def output_tokens(self) -> tuple:
        return ()

    def __str__(self) -> str:
        ins = "\n".join(str(s) for s in self.input_specs)
        outs = "\n".join(str(s) for s in self.output_specs)
        return f"\n# inputs\n{ins}\n\n# outputs\n{outs}\n"
