"""``nn.Module``: the base class of every layer, holding parameters, buffers and submodules."""
from __future__ import annotations

from collections import OrderedDict, namedtuple
from typing import TYPE_CHECKING, Any, TypeVar

from .. import _dtypes, _recording
from .._creation import empty
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..utils.hooks import RemovableHandle
from .parameter import Parameter, UninitializedTensorMixin

if TYPE_CHECKING:
    import builtins
    from collections.abc import Callable, Iterator, Mapping

    from .. import _device, _dtypes

_M = TypeVar("_M", bound="Module")  # a method that returns its module returns its own class

__all__ = ["Module"]


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s_, num_spaces):
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    return first + "\n" + "\n".join((num_spaces * " ") + line for line in s)


def _type_name(value):
    if isinstance(value, Tensor):
        return value.type()
    return type(value).__module__.replace("ember", "torch") + "." + type(value).__qualname__ \
        if type(value).__module__ != "builtins" else type(value).__name__


class Module:
    """Base class for all neural network modules."""

    training: bool
    _version = 1

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument "
                            f"but {len(args) + 1} were given" if args else
                            f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        sa = object.__setattr__
        sa(self, "training", True)
        sa(self, "_parameters", OrderedDict())
        sa(self, "_buffers", OrderedDict())
        sa(self, "_non_persistent_buffers_set", set())
        sa(self, "_modules", OrderedDict())
        # PyTorch's layout (code reads it: the pruning tutorial walks _forward_pre_hooks):
        # {handle id: hook}, and the ids of hooks registered with_kwargs=True apart
        sa(self, "_forward_hooks", OrderedDict())
        sa(self, "_forward_hooks_with_kwargs", OrderedDict())
        sa(self, "_forward_pre_hooks", OrderedDict())
        sa(self, "_forward_pre_hooks_with_kwargs", OrderedDict())

    def forward(self, *input):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ------------------------------------------------------------------ registration
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_type_name(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_type_name(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method.")
        else:
            self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_type_name(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        if _recording.state.recorder is not None and getattr(self, name, _recording) is not value:
            _recording.unsupported(f"a module's attribute ({name!r}) is set (not recorded)")

        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules,
                        self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif getattr(value, "_is_buffer", False) and isinstance(value, Tensor):  # nn.Buffer
            if params is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            remove_from(self.__dict__, self._parameters, self._modules)
            self.register_buffer(name, value, persistent=getattr(value, "persistent", True))
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers,
                            self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_type_name(value)}' as child module "
                                    f"'{name}' (torch.nn.Module or None expected)")
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_type_name(value)}' as buffer "
                                        f"'{name}' (torch.Tensor or None expected)")
                    buffers[name] = value
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        keys = list(object.__dir__(self)) + list(self._parameters) + list(self._modules) \
            + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    # ------------------------------------------------------------------ iteration
    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo: set[int] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            submodule_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, submodule_prefix, remove_duplicate)

    # ------------------------------------------------------------------ modes
    def train(self: _M, mode: bool = True) -> _M:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self: _M) -> _M:
        return self.train(False)

    def requires_grad_(self: _M, requires_grad: bool = True) -> _M:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    # ------------------------------------------------------------------ conversions
    def _apply(self, fn):
        for module in self.children():
            module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            if isinstance(param, UninitializedTensorMixin):  # converted as an empty stand-in
                param._data = fn(empty(0, dtype=param.dtype, device=param.device))._data
                continue
            with no_grad():
                new = fn(param)
            param.data = new
            if param.grad is not None:
                with no_grad():
                    g = fn(param.grad)
                param.grad.data = g
        for key, buf in self._buffers.items():
            if isinstance(buf, UninitializedTensorMixin):
                buf._data = fn(empty(0, dtype=buf.dtype, device=buf.device))._data
            elif buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self: _M, fn: Callable[[Module], None]) -> _M:
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self: _M, *args: Any, **kwargs: Any) -> _M:
        device = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        memory_format = kwargs.pop("memory_format", None)
        for a in args:
            if isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, _dtypes.dtype):
                dtype = a
            elif isinstance(a, bool):
                pass
            else:
                device = a
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, "
                            f"but got desired dtype={dtype}")

        def convert(t):
            kw = {}
            if device is not None:
                kw["device"] = device
            if dtype is not None and (t.is_floating_point() or t.is_complex()):
                kw["dtype"] = dtype
            if memory_format is not None and t.dim() in (4, 5):  # PyTorch's rule: 4-d, 5-d
                kw["memory_format"] = memory_format
            return t.to(**kw) if kw else t

        return self._apply(convert)

    def float(self: _M) -> _M:
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self: _M) -> _M:
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self: _M) -> _M:
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self: _M) -> _M:
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def type(self: _M, dst_type: _dtypes.dtype | builtins.type) -> _M:
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self: _M) -> _M:
        return self._apply(lambda t: t.cpu())

    def cuda(self: _M, device: int | _device.device | str | None = None) -> _M:
        return self._apply(lambda t: t.cuda(device) if device is not None else t.cuda())

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """``torch.compile`` this module in place. ember's ``torch.compile`` runs eagerly
        (see ``ember._compile``): the arguments are checked and the module runs as before."""
        from .._compile import compile as _compile  # lazy: ember._compile imports this module
        _compile(self.__call__, *args, **kwargs)

    def share_memory(self: _M) -> _M:
        """Move parameters and buffers to shared memory (``Tensor.share_memory_``)."""
        return self._apply(lambda t: t.share_memory_())

    # ------------------------------------------------------------------ state dict
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()

    def state_dict(self, *args: Any, destination: dict[str, Any] | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Any]:
        if args:
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = {"version": self._version}
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        from collections.abc import Mapping
        if not isinstance(state_dict, Mapping):
            raise TypeError("Expected state_dict to be dict-like, got "
                            f"{type(state_dict)}.")
        missing, unexpected, error_msgs, copies = [], [], [], []
        expected = set()
        for mprefix, module in self.named_modules(remove_duplicate=False):
            prefix = mprefix + "." if mprefix else ""
            local = [(n, p) for n, p in module._parameters.items() if p is not None]
            local += [(n, b) for n, b in module._buffers.items()
                      if b is not None and n not in module._non_persistent_buffers_set]
            for name, target in local:
                key = prefix + name
                expected.add(key)
                if key not in state_dict:
                    missing.append(key)
                    continue
                value = state_dict[key]
                if not isinstance(value, Tensor):
                    error_msgs.append(
                        f'While copying the parameter named "{key}", expected torch.Tensor or '
                        f"Tensor-like object from checkpoint but received {type(value)}")
                    continue
                if isinstance(target, UninitializedTensorMixin):  # a lazy module's placeholder
                    target.materialize(value.shape)
                if tuple(value.shape) != tuple(target.shape):
                    error_msgs.append(
                        f"size mismatch for {key}: copying a param with shape {value.shape} "
                        "from checkpoint, the shape in current model is "
                        f"{target.shape}.")
                    continue
                copies.append((module, name, target, value))
        for key in state_dict:
            if key not in expected:
                unexpected.append(key)
        if strict:
            if unexpected:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        with no_grad():
            for module, name, target, value in copies:
                if assign:
                    if name in module._parameters:
                        new = value if isinstance(value, Parameter) else \
                            Parameter(value, requires_grad=target.requires_grad)
                        module._parameters[name] = new
                    else:
                        module._buffers[name] = value
                else:
                    target.copy_(value)
        return _IncompatibleKeys(missing, unexpected)

    # ------------------------------------------------------------------ hooks and calls
    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        handle = RemovableHandle(self._forward_pre_hooks,
                                 extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        handle = RemovableHandle(self._forward_hooks,
                                 extra_dict=self._forward_hooks_with_kwargs)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not (self._forward_pre_hooks or self._forward_hooks):  # the common case, fast
            return self.forward(*args, **kwargs)
        with_kwargs = self._forward_pre_hooks_with_kwargs
        for key, hook in list(self._forward_pre_hooks.items()):
            if key in with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        result = self.forward(*args, **kwargs)
        with_kwargs = self._forward_hooks_with_kwargs
        for key, hook in list(self._forward_hooks.items()):
            if key in with_kwargs:
                out = hook(self, args, kwargs, result)
            else:
                out = hook(self, args, result)
            if out is not None:
                result = out
        return result

    # ------------------------------------------------------------------ printing
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        extra_lines = []
        extra = self.extra_repr()
        if extra:
            extra_lines = extra.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
