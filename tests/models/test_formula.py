"""The restricted formula language: one definition, evaluated with numpy and in a JavaScript engine."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analyses import units
from analyses.models.formula import (
    SETTLE_DIGITS,
    Formula,
    FormulaError,
    Input,
    InputError,
    LogGrid,
    System,
    names_read,
    readable,
)


def _inputs(**ranges: tuple[float, float, float]) -> list[Input]:
    return [Input(n, n.replace("_", " "), "-", d, lo, hi) for n, (d, lo, hi) in ranges.items()]


# Every construct of the grammar at least once, on ranges that keep every result finite.
EVERY = System(
    "every",
    _inputs(a=(2.0, 0.1, 10.0), b=(3.0, 0.5, 8.0), c=(0.7, -3.0, 3.0), x=(3e10, 1e9, 1e12), y=(64.0, 8.0, 4096.0)),
    [
        Formula("sum", "a + b - c"),
        Formula("prod", "a * b / (c * c + 1)"),
        Formula("power", "a ** -b + (1 + c * c) ** 0.5"),
        Formula("neg", "-a * +b"),
        Formula("mins", "min(a, b, c) + max(a, c) - min(b, 2.5)"),
        Formula("cond", "a if b > a and not c < 0 else b - a"),
        Formula("chain", "1 if 0 < c <= 1 or a == b else where(a != 2, 3, 4)"),
        Formula("funcs", "log(a) + exp(c) + sqrt(b) + abs(c)"),
        Formula("steps", "ceil(a * 10 / 3) + floor(b * 3)"),
        Formula("uses_formula", "sum * 2 + half"),
        Formula("half", "HALF * a", result=False),
        Formula("grid", "interp_loglog(G, x, y)"),
        Formula("is_big", "grid > 1e14"),
    ],
    constants={"HALF": 0.5},
    grids={
        "G": LogGrid((1e9, 1e10, 1e11, 1e12), (8.0, 64.0, 4096.0), [[1e14, 9e13, 5e13]] * 2 + [[3e14, 2e14, 1e14]] * 2)
    },
)


def _random_cases(system: System, n: int, seed: int) -> list[dict[str, float]]:
    rng = np.random.default_rng(seed)
    return [
        {
            i.name: float(rng.uniform(i.min, i.max)) if not i.integer else float(rng.integers(i.min, i.max + 1))
            for i in system.inputs
        }
        for _ in range(n)
    ]


# --------------------------------------------------------------------------------------------
# Python evaluation
# --------------------------------------------------------------------------------------------


def test_python_evaluation_matches_closed_forms():
    r = EVERY.evaluate({"a": 2.0, "b": 3.0, "c": 0.5})
    assert r["sum"] == 4.5
    assert r["prod"] == pytest.approx(6.0 / 1.25, rel=1e-15)
    assert r["power"] == pytest.approx(2.0**-3 + 1.25**0.5, rel=1e-15)
    assert r["neg"] == -6.0
    assert r["mins"] == pytest.approx(0.5 + 2.0 - 2.5)
    assert r["cond"] == 2.0  # b > a and c >= 0
    assert r["chain"] == 1.0  # 0 < c <= 1
    assert r["funcs"] == pytest.approx(math.log(2) + math.exp(0.5) + math.sqrt(3) + 0.5, rel=1e-15)
    assert r["steps"] == math.ceil(20 / 3) + 9
    assert r["uses_formula"] == 4.5 * 2 + 1.0
    assert "half" not in r and "half" in EVERY.evaluate({}, intermediates=True)
    assert EVERY.evaluate({"a": 2.0, "b": 2.0, "c": 2.0})["chain"] == 1.0  # a == b
    assert EVERY.evaluate({"a": 3.0, "b": 2.5, "c": 2.0})["chain"] == 3.0  # where(a != 2, 3, 4)
    assert EVERY.evaluate({"a": 2.0, "b": 2.5, "c": 2.0})["chain"] == 4.0
    assert EVERY.evaluate({"a": 2.0, "b": 3.0, "c": -1.0})["cond"] == 1.0  # not c < 0 fails


def test_python_evaluation_is_vectorised_and_broadcast():
    a = np.array([1.0, 2.0, 4.0])
    r = EVERY.evaluate({"a": a, "b": 3.0})
    np.testing.assert_array_equal(r["sum"], a + 3.0 - 0.7)
    assert r["is_big"].dtype == bool and r["grid"].shape == ()  # inputs of the grid stay scalars


def test_ceil_and_floor_settle_their_argument_first():
    """0.1 * 3 is 0.30000000000000004: ceil(x * 10) would be 4 without settling (3 after)."""
    s = System(
        "steps", _inputs(a=(0.1, 0.0, 1.0)), [Formula("up", "ceil(a * 3 * 10)"), Formula("down", "floor(a * 3 * 10)")]
    )
    r = s.evaluate({"a": 0.1})
    assert (r["up"], r["down"]) == (3.0, 3.0)
    assert SETTLE_DIGITS == units.SETTLE_DIGITS


def test_log_grid_reproduces_a_power_law_and_clamps_at_its_edges():
    x, y = np.array([1e9, 1e10, 1e11, 1e13]), np.array([8.0, 64.0, 1024.0])
    law = lambda x, y: 3e13 * (x / 1e9) ** -0.1 * (y / 8) ** -0.05  # noqa: E731
    grid = LogGrid(tuple(x), tuple(y), law(x[:, None], y[None, :]))
    px, py = np.array([3.3e9, 2e10, 7.7e12, 1e9]), np.array([9.0, 500.0, 1000.0, 8.0])
    np.testing.assert_allclose(grid(px, py), law(px, py), rtol=1e-13)
    np.testing.assert_allclose(grid(1e14, 4.0), law(1e13, 8.0), rtol=1e-13)  # clamped to the corner


@pytest.mark.parametrize(
    ("x", "y", "z", "says"),
    [
        ((1.0,), (1.0, 2.0), [[1.0, 1.0]], "x must hold 2 or more"),
        ((2.0, 1.0), (1.0, 2.0), [[1.0, 1.0]] * 2, "strictly increasing"),
        ((1.0, 2.0), (0.0, 2.0), [[1.0, 1.0]] * 2, "y must hold"),
        ((1.0, 2.0), (1.0, 2.0), [[1.0, -1.0]] * 2, "positive finite"),
        ((1.0, 2.0), (1.0, 2.0), [[1.0, 1.0, 1.0]] * 2, "2 x 2"),
    ],
)
def test_bad_grids_are_refused(x, y, z, says):
    with pytest.raises(FormulaError, match=says):
        LogGrid(x, y, z)


# --------------------------------------------------------------------------------------------
# Unsupported constructs and inconsistent systems
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "says"),
    [
        ("a % b", "the operator '%' is not allowed"),
        ("a // b", "the operator '//' is not allowed"),
        ("a.real", r"attribute access \(a.b\)"),
        ("np.exp(a)", "the function 'np.exp' is not allowed"),
        ("a[0]", r"indexing \(a\[i\]\)"),
        ("lambda: a", "lambda"),
        ("[a, b]", "a list"),
        ("(a, b)", "a tuple"),
        ("f'{a}'", "an f-string"),
        ("(z := a)", "assignment expression"),
        ("foo(a)", "the function 'foo' is not allowed"),
        ("math.log(a)", "the function 'math.log' is not allowed"),
        ("min(a)", r"min\(\) takes at least 2 arguments, got 1"),
        ("log(a, b)", r"log\(\) takes 1 arguments, got 2"),
        ("max(a, b, key=a)", "keyword arguments"),
        ("'text'", "the constant 'text' is not allowed"),
        ("True", "the constant True is not allowed"),
        ("a is b", "the comparison 'is' is not allowed"),
        ("a in b", "the comparison 'in' is not allowed"),
        ("~a", "the operator '~' is not allowed"),
        ("(a < b) + 1", "an operand must be a number, got a condition"),
        ("a if b else 1", "the condition of 'a if cond else b' must be a condition, got a number"),
        ("where(a, b, 1)", r"the first argument of where\(\) must be a condition"),
        ("a and b", "an operand of 'and'/'or' must be a condition"),
        ("not a", "the operand of 'not' must be a condition"),
        ("1 if a > b else a < b", "a branch of 'a if cond else b' must be a number"),
        ("interp_loglog(a, a, b)", r"first argument of interp_loglog\(\) must be a grid"),
        ("G + 1", "the grid 'G' can only be the first argument"),
        ("c + 1", "unknown name 'c'"),
        ("a +", "not a Python expression"),
    ],
)
def test_unsupported_syntax_names_the_formula_and_the_construct(expr, says):
    grid = LogGrid((1.0, 2.0), (1.0, 2.0), [[1.0, 1.0], [1.0, 1.0]])
    with pytest.raises(FormulaError, match=says) as err:
        System(
            "bad",
            _inputs(a=(1.0, 0.0, 2.0), b=(1.0, 0.0, 2.0)),
            [Formula("broken", expr), Formula("fine", "a + b")],
            grids={"G": grid},
        )
    assert str(err.value).startswith("formula 'broken': ")
    assert "allowed:" in str(err.value) or "not a Python expression" in str(err.value)


def test_inconsistent_systems_are_refused():
    ab = _inputs(a=(1.0, 0.0, 2.0), b=(1.0, 0.0, 2.0))
    with pytest.raises(FormulaError, match="formulas read each other in a cycle: p -> q -> p"):
        System("cycle", ab, [Formula("p", "q + a"), Formula("q", "p * b")])
    with pytest.raises(FormulaError, match=r"input 'b'|inputs? \['b'\] read by no formula"):
        System("unused", ab, [Formula("p", "a")])
    with pytest.raises(FormulaError, match="both a input and a formula"):
        System("twice", ab, [Formula("a", "b")])
    with pytest.raises(FormulaError, match="cannot name a formula"):
        System("shadow", ab, [Formula("min", "a + b")])
    with pytest.raises(FormulaError, match="reserved"):
        System("reserved", ab, [Formula("errors", "a + b")])
    with pytest.raises(FormulaError, match="no leading '__'"):
        System("proto", ab, [Formula("__proto__", "a + b")])
    with pytest.raises(FormulaError, match="default 5.0 is not allowed: expected a number from 0 to 2"):
        Input("a", "a", "-", 5.0, 0.0, 2.0)
    assert names_read("f", "max(a, b) if c > 0 else interp_loglog(G, x, y)") == {"a", "b", "c", "G", "x", "y"}


def test_python_inputs_outside_their_range_raise_a_clear_error():
    s = System(
        "ranges",
        [
            Input("n_gpus", "GPUs", "GPUs", 8, 1, 131072, integer=True),
            Input("u", "utilisation", "fraction", 0.7, 0.05, 1.0),
        ],
        [Formula("x", "n_gpus * u")],
    )
    with pytest.raises(InputError) as err:
        s.evaluate({"u": 1.2, "n_gpus": 2.5, "nope": 1})
    messages = [e["message"] for e in err.value.errors]
    assert messages == [
        "unknown input 'nope'",
        "GPUs must be a whole number from 1 to 131,072 GPUs; got 2.5",
        "utilisation must be a number from 0.05 to 1; got 1.2",
    ]
    with pytest.raises(InputError, match=r"utilisation must be a number from 0.05 to 1; got 0.01"):
        s.evaluate({"u": np.array([0.5, 0.01])})
    with pytest.raises(InputError, match="got not a number"):
        s.evaluate({"u": float("nan")})
    with pytest.raises(InputError, match=r"unknown input 'nope' \(inputs: n_gpus, u\)"):
        s.evaluate({"nope": 1})
    np.testing.assert_array_equal(s.evaluate({"u": np.array([0.5, 1.0])})["x"], [4.0, 8.0])


# --------------------------------------------------------------------------------------------
# The same formulas in JavaScript
# --------------------------------------------------------------------------------------------


def _relative(a: float, b: float) -> float:
    if a == b:  # equal infinities included
        return 0.0
    return abs(a - b) / max(abs(a), abs(b))


def test_javascript_equals_python_on_random_inputs(run_js):
    cases = _random_cases(EVERY, 200, seed=1)
    out = run_js(EVERY.to_js(), cases)
    worst = 0.0
    exact = {"sum", "prod", "neg", "mins", "cond", "chain", "steps", "uses_formula", "is_big"}
    for case, js in zip(cases, out, strict=True):
        assert js["ok"], js
        py = EVERY.evaluate(case)
        assert set(js["values"]) == set(EVERY.results)
        for name in EVERY.results:
            if name in exact:  # + - * / min max and branches: the same bits
                assert js["values"][name] == py[name].item(), (name, case)
            else:
                worst = max(worst, _relative(js["values"][name], float(py[name])))
    assert worst < 1e-13, worst


def test_javascript_refuses_bad_inputs_with_an_error_object_never_nan(run_js):
    s = System(
        "ranges",
        [
            Input("n_gpus", "GPUs", "GPUs", 8, 1, 131072, integer=True),
            Input("u", "utilisation", "fraction", 0.7, 0.05, 1.0),
            Input("flops", "achieved", "FLOP/s", 1.5e14, 1e13, 2e15, scale=1e12, display_unit="TFLOP/s"),
            Input("basis", "cost basis", "-", 1.0, 0.0, 1.0, choices=(("rented", 0.0), ("owned", 1.0))),
            Input("x", "x", "-", 1.0, -1.0, 1.0),
        ],
        [Formula("y", "n_gpus * u * flops * basis"), Formula("root", "sqrt(x)")],
    )
    good = s.defaults()
    cases = [
        good,
        good | {"u": 1.2},
        good | {"n_gpus": 2.5, "flops": 5e15},
        good | {"basis": 0.5},
        good | {"u": float("nan")},
        {k: v for k, v in good.items() if k != "u"},
        good | {"extra": 1.0},
        good | {"x": -0.5},
    ]
    out = run_js(s.to_js(), cases)
    assert out[0] == {"ok": True, "values": {"y": 8 * 0.7 * 1.5e14, "root": 1.0}}
    messages = [[e["message"] for e in o.get("errors", [])] for o in out[1:]]
    assert messages == [
        ["utilisation must be a number from 0.05 to 1; got 1.2"],
        [
            "GPUs must be a whole number from 1 to 131,072 GPUs; got 2.5",
            "achieved must be a number from 10 to 2,000 TFLOP/s; got 5000",
        ],
        ["cost basis must be one of rented, owned; got 0.5"],
        ["utilisation must be a number from 0.05 to 1; got not a number"],
        ["utilisation must be a number from 0.05 to 1; got not a number"],
        ["unknown input 'extra'"],
        ["result 'root' is not a number"],
    ]
    assert all(not o["ok"] for o in out[1:])
    assert out[2]["errors"][1] == {
        "input": "flops",
        "value": "5000",
        "allowed": "a number from 10 to 2,000 TFLOP/s",
        "message": "achieved must be a number from 10 to 2,000 TFLOP/s; got 5000",
    }
    # Python says the same of the same inputs.
    with pytest.raises(InputError) as err:
        s.evaluate(cases[2])
    assert [e["message"] for e in err.value.errors] == messages[1]


def test_generated_javascript_is_safe_inside_a_script_element():
    s = System("x", [Input("a", "a </script><b>", "-", 1.0, 0.0, 2.0)], [Formula("p", "a", label="</script>")])
    js = s.to_js()
    assert "</script" not in js.lower() and "<\\/script>" in js


@pytest.mark.parametrize(
    ("x", "shown"),
    [
        (0.05, "0.05"),
        (131072, "131,072"),
        (1e13, "10,000,000,000,000"),
        (123456.7, "123,456.7"),
        (0.00025, "0.00025"),
        (1e15, "1×10¹⁵"),
        (2.5e-5, "2.5×10⁻⁵"),
        (-3.0, "-3"),
        (0.0, "0"),
    ],
)
def test_bounds_read_as_people_read_them_never_in_e_notation(x, shown):
    assert readable(x) == shown
