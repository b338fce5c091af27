import json

import numpy as np
import pytest

from traces.errors import TraceError
from traces.generate import (
    DEFAULT_CELLULAR,
    MarkovModel,
    constant,
    fit,
    generate_markov,
    load_model,
    save_model,
    steps,
)
from traces.throughput_ops import fraction_below, mean_mbps, to_opportunities


def test_constant():
    c = constant(5.0, 10.0)
    assert mean_mbps(c) == 5.0 and c.duration_s == 10.0


def test_steps_rfc8867_style():
    s = steps("0:1,30:0.5,60:1", 90.0)
    assert s.rate_at(29.9) == 1.0 and s.rate_at(30.0) == 0.5 and s.rate_at(60.0) == 1.0
    assert mean_mbps(s) == pytest.approx(2.5 / 3)
    assert fraction_below(s, 0.75) == pytest.approx(1 / 3)
    o = to_opportunities(s)
    assert mean_mbps(o) == pytest.approx(2.5 / 3, rel=1e-3)


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("5:1,10:2", "must start at 0"),
        ("0:1,x:2", "item 2"),
        ("0:1,20", "item 2"),
        ("0:1,20:nan", "finite"),
        ("0:1,20:-1", "rate >= 0"),
        ("0:1,20:2,10:3", "strictly increase"),
        ("0:1,100:2", "must exceed"),
    ],
)
def test_steps_bad_spec(spec, problem):
    with pytest.raises(TraceError, match=problem):
        steps(spec, 90.0)


def test_markov_is_seeded_and_has_the_model_mean():
    a = generate_markov(DEFAULT_CELLULAR, 100.0, seed=5)
    b = generate_markov(DEFAULT_CELLULAR, 100.0, seed=5)
    c = generate_markov(DEFAULT_CELLULAR, 100.0, seed=6)
    np.testing.assert_array_equal(a.rate_mbps, b.rate_mbps)
    assert not np.array_equal(a.rate_mbps, c.rate_mbps)
    long = generate_markov(DEFAULT_CELLULAR, 20000.0, seed=1)
    assert mean_mbps(long) == pytest.approx(DEFAULT_CELLULAR.mean_mbps(), rel=0.05)
    assert DEFAULT_CELLULAR.mean_mbps() == pytest.approx(5.03, abs=0.05)  # Verizon-LTE-short.down


def test_fit_recovers_a_known_model():
    truth = MarkovModel(
        step_s=1.0,
        levels_mbps=[0.0, 2.0, 20.0],
        transition=[[0.5, 0.5, 0.0], [0.05, 0.85, 0.1], [0.0, 0.2, 0.8]],
        sigma=0.1,
    )
    x = generate_markov(truth, 20000.0, seed=2)
    m = fit(x, n_states=3)
    np.testing.assert_allclose(m.levels_mbps, truth.levels_mbps, rtol=0.05, atol=0.01)
    np.testing.assert_allclose(m.transition, truth.transition, atol=0.03)
    assert m.sigma == pytest.approx(0.1, abs=0.03)


def test_model_json_round_trip_and_errors(tmp_path):
    p = tmp_path / "m.json"
    save_model(DEFAULT_CELLULAR, p)
    assert load_model(p) == DEFAULT_CELLULAR
    bad = dict(DEFAULT_CELLULAR.model_dump(), transition=[[1.0]])
    p.write_text(json.dumps(bad))
    with pytest.raises(TraceError, match="4x4"):
        load_model(p)
    p.write_text("{not json")
    with pytest.raises(TraceError, match="line 1: not JSON"):
        load_model(p)
