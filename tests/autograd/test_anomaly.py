"""Anomaly detection and the explained in-place error, against PyTorch where it has them."""
import inspect
import warnings

import numpy as np
import pytest

import ember


def _line(marker):
    """The line number of the source line of this file that contains ``marker``."""
    lines = inspect.getsource(inspect.getmodule(_line)).splitlines()
    return next(number for number, text in enumerate(lines, 1) if marker in text
                and "_line(" not in text)


def _nan_backward(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly():
            y = x.sqrt() / 0 * 0  # MARK-nan
            with pytest.raises(RuntimeError) as info:
                y.sum().backward()
    return str(info.value), [str(w.message) for w in caught]


def test_nan_in_backward_is_refused_with_the_forward_line(torch):
    message, warned = _nan_backward(ember)
    expected_message, expected_warned = _nan_backward(torch)
    assert message == expected_message == \
        "Function 'DivBackward0' returned nan values in its 0th output."
    assert warned[0] == expected_warned[0]  # "Anomaly Detection has been enabled. ..."
    where = f'  File "{__file__}", line {_line("MARK-nan")}, in _nan_backward'
    header = "Error detected in DivBackward0. Traceback of forward call that caused the error:\n"
    # The whole Python stack of the forward call, as PyTorch prints it; the op's line last.
    assert warned[1].startswith(header) and expected_warned[1].startswith(header)
    assert warned[1].endswith(f"{where}\n    y = x.sqrt() / 0 * 0  # MARK-nan")
    assert where in expected_warned[1]


def test_anomaly_flags_match_pytorch(torch):
    def flags(lib):
        out = [(lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())]
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            out.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        out.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        return out
    assert flags(ember) == flags(torch) == [(False, True), (True, False), (False, True)]


def test_nodes_keep_their_forward_traceback_in_anomaly_mode():
    x = ember.ones(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.autograd.detect_anomaly():
            y = x.exp()  # MARK-trace
    assert "y = x.exp()  # MARK-trace" in "".join(y.grad_fn.metadata["traceback_"])
    assert "traceback_" not in (x * 2).grad_fn.metadata


def test_forward_check_names_the_first_op_that_made_a_nan_or_inf():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.autograd.detect_anomaly(forward=True):
            y = x * 2
            with pytest.raises(RuntimeError) as info:
                ember.log(y) - 1  # MARK-fwd
            z = (x + 1).log()  # finite: no complaint
    assert str(info.value) == (
        "detect_anomaly(forward=True): 'log' produced inf values in the forward pass, the first "
        "op to do so since anomaly detection was enabled. It was called at:\n"
        f'  File "{__file__}", line {_line("MARK-fwd")}, in '
        "test_forward_check_names_the_first_op_that_made_a_nan_or_inf\n"
        "    ember.log(y) - 1  # MARK-fwd")
    np.testing.assert_allclose(z.detach().numpy(), np.log([1.0, 2.0]))


def _modified(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    c = b.exp()
    d = c * b
    c.add_(1)  # MARK-write
    with pytest.raises(RuntimeError) as info:
        d.sum().backward()
    return str(info.value)


def test_inplace_error_keeps_pytorchs_text_and_says_who_wrote_where(torch):
    message = _modified(ember)
    first, extra = message.split("\n\n")
    assert first == _modified(torch)
    assert extra == ("ember: the tensor was saved for backward by MulBackward0; it was last "
                     "modified in place by add_ at:\n"
                     f'  File "{__file__}", line {_line("MARK-write")}, in _modified\n'
                     "    c.add_(1)  # MARK-write")


def test_inplace_error_names_the_optimizer_step():
    model = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.Tanh(), ember.nn.Linear(2, 2))
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    loss = model(ember.ones(1, 2)).pow(2).sum()
    loss.backward(retain_graph=True)
    opt.step()  # MARK-step
    with pytest.raises(RuntimeError) as info:
        loss.backward()
    assert str(info.value).endswith(
        "it was last modified in place by add_ at:\n"
        f'  File "{__file__}", line {_line("MARK-step")}, in '
        "test_inplace_error_names_the_optimizer_step\n"
        "    opt.step()  # MARK-step")


def test_inplace_error_names_the_closures_own_write_not_the_step():
    # The step finds its caller's line once for all its updates; writes the closure makes run
    # before that and keep their own lines.
    w = ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([w], lr=0.1)
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    c = b * b

    def closure():
        b.mul_(2)  # MARK-closure
        w.grad = ember.ones(2)
        return c

    opt.step(closure)
    with pytest.raises(RuntimeError) as info:
        c.sum().backward()
    assert str(info.value).endswith(
        "it was last modified in place by mul_ at:\n"
        f'  File "{__file__}", line {_line("MARK-closure")}, in closure\n'
        "    b.mul_(2)  # MARK-closure")
