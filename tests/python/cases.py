"""Every shipped op with random inputs and an independent NumPy reference.

Each case: make(rng, dtype, n) -> (args, attrs) and ref(*args, **attrs) -> outputs,
computed in float64 NumPy and cast back, so the reference never shares the kernel's
arithmetic.
"""

import numpy as np
import scipy.sparse as sp


def _u(rng, dtype, *shape, lo=-3.0, hi=3.0):
    return rng.uniform(lo, hi, shape).astype(dtype)


def _one(value, dtype):
    return np.array([value], dtype=dtype)


def _csr(rng, dtype, rows, cols, density=0.1):
    dense = (rng.random((rows, cols)) < density) * rng.uniform(0.01, 0.5, (rows, cols))
    m = sp.csr_matrix(dense.astype(dtype))
    return m.data, m.indices.astype(np.int32), m.indptr.astype(np.int32), dense


def _lif_ref(V, I_ext, tau_inv, V_th, V_rest, dt):
    v = V + dt[0] * (-(V - V_rest[0]) * tau_inv[0] + I_ext)
    spikes = (v >= V_th[0]).astype(np.int32)
    return np.where(spikes, V_rest[0], v), spikes


def _lif_surrogate_ref(V, I_ext, tau_inv, V_th, V_rest, dt, slope=5.0):
    V_out, spikes = _lif_ref(V, I_ext, tau_inv, V_th, V_rest, dt)
    return V_out, spikes.astype(V.dtype)


def _lif_args(r, t, n):
    V, I_ext = _u(r, t, n, lo=-75, hi=-50), _u(r, t, n, lo=0, hi=5)
    tau_inv, V_th, V_rest, dt = _one(1 / 20, t), _one(-55, t), _one(-70, t), _one(0.1, t)
    # Away from the threshold: where v lands within rounding of V_th, float32 and the
    # float64 reference may disagree on the spike.
    v = V.astype(np.float64) + 0.1 * (-(V.astype(np.float64) + 70) / 20 + I_ext)
    V = np.where(np.abs(v + 55) < 1e-3, V - np.asarray(0.01, t), V).astype(t)
    return V, I_ext, tau_inv, V_th, V_rest, dt


def _stdp_args(r, t, n):
    # Weights near both clips, traces in [0, 1), spikes 0 or 1: every branch of the clip.
    w = r.uniform(-0.05, 1.05, (n, 9)).astype(t)
    spikes = lambda m: (r.random(m) < 0.3).astype(t)  # noqa: E731
    return (w, r.random(n).astype(t), spikes(n), r.random(9).astype(t), spikes(9))


def _rms_norm_ref(x, w, eps=1e-6):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def _layer_norm_ref(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + eps) * gamma + beta


def _softmax_ref(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _cross_entropy_ref(logits, labels):
    top = logits.max(axis=-1)
    lse = top + np.log(np.exp(logits - top[..., None]).sum(axis=-1))
    return lse - np.take_along_axis(logits, labels[..., None].astype(np.int64), axis=-1)[..., 0]


def _gelu_tanh_ref(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def _rope_tables(r, t, seq, half):
    angles = np.arange(seq)[:, None] * r.uniform(0.01, 1.0, half)[None, :]
    return np.cos(angles).astype(t), np.sin(angles).astype(t)


def _rope_ref(x, cosines, sines):
    a, b = np.split(x, 2, axis=-1)
    c, s = cosines[:, None, :], sines[:, None, :]
    return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)


def _embedding_bag_ref(table, indices):
    return table[indices].sum(axis=1)


def _scatter_ref(indices, grad, vocab):
    out = np.zeros((vocab, grad.shape[1]), grad.dtype)
    np.add.at(out, indices, grad[:, None, :])
    return out


CASES = {
    "add": (lambda r, t, n: ((_u(r, t, n), _u(r, t, n)), {}), lambda x, y: x + y),
    "parallel_add": (lambda r, t, n: ((_u(r, t, n), _u(r, t, n)), {}), lambda x, y: x + y),
    "relu": (lambda r, t, n: ((_u(r, t, n),), {}), lambda x: np.maximum(x, 0)),
    "sigmoid": (lambda r, t, n: ((_u(r, t, n),), {}), lambda x: 1 / (1 + np.exp(-x))),
    "leaky_relu": (
        lambda r, t, n: ((_u(r, t, n),), {"alpha": float(r.uniform(0.01, 0.5))}),
        lambda x, alpha=0.01: np.where(x > 0, x, alpha * x),
    ),
    "scale": (lambda r, t, n: ((_u(r, t, n), _one(r.uniform(-2, 2), t)), {}), lambda x, s: x * s[0]),
    "split": (lambda r, t, n: ((_u(r, t, n),), {}), lambda x: (np.maximum(x, 0), np.minimum(x, 0))),
    "hadamard": (lambda r, t, n: ((_u(r, t, n, 7), _u(r, t, n, 7)), {}), lambda a, b: a * b),
    "matvec": (lambda r, t, n: ((_u(r, t, n, 33), _u(r, t, 33)), {}), lambda a, x: a @ x),
    "sum": (lambda r, t, n: ((_u(r, t, n),), {}), lambda x: np.array([x.sum()])),
    "max": (lambda r, t, n: ((_u(r, t, n),), {}), lambda x: np.array([x.max()])),
    "running_stats": (
        lambda r, t, n: ((_u(r, t, n, lo=0, hi=10),), {}),
        lambda x: (np.array([x.mean()]), np.array([x.std()])),
    ),
    "exp_trace": (
        lambda r, t, n: ((_u(r, t, n, lo=0, hi=1), (r.random(n) < 0.1).astype(t), _one(1 / 20, t)), {}),
        lambda trace, spikes, tau_inv: trace * np.exp(-tau_inv[0]) + spikes,
    ),
    "exp_decay": (lambda r, t, n: ((_u(r, t, n), _one(r.uniform(0, 1), t)), {}), lambda x, d: x * np.exp(-d[0])),
    "lif": (lambda r, t, n: (_lif_args(r, t, n), {}), _lif_ref),
    "lif_surrogate": (
        lambda r, t, n: (_lif_args(r, t, n), {"slope": float(r.uniform(1, 10))}),
        _lif_surrogate_ref,
    ),
    "spike_reset": (
        lambda r, t, n: ((_u(r, t, n, lo=-75, hi=-50), _one(-55, t), _one(-70, t)), {}),
        lambda V, V_th, V_rest: ((V >= V_th[0]).astype(np.int32), np.where(V >= V_th[0], V_rest[0], V)),
    ),
    "block_sum": (
        lambda r, t, n: ((_u(r, t, n),), {}),
        lambda x: np.add.reduceat(x, np.arange(0, x.size, 256)) if x.size else np.zeros(0),
    ),
    "abs_two_pass": (lambda r, t, n: ((_u(r, t, n),), {}), np.abs),
    "stdp_update": (
        lambda r, t, n: (_stdp_args(r, t, n), {}),
        lambda w, xt, xs, yt, ys, a_plus=0.01, a_minus=0.012, w_min=0.0, w_max=1.0: np.clip(
            w + a_plus * np.outer(xt, ys) - a_minus * np.outer(xs, yt), w_min, w_max
        ),
    ),
    "csr_matvec": (
        lambda r, t, n: (lambda d, i, p, dense: ((d, i, p, _u(r, t, 40)), {}))(*_csr(r, t, n, 40)),
        lambda data, indices, indptr, x: sp.csr_matrix((data, indices, indptr), shape=(indptr.size - 1, x.size)) @ x,
    ),
    "csr_rmatvec": (
        lambda r, t, n: (lambda d, i, p, dense: ((d, i, p, _u(r, t, n)), {"n": 40}))(*_csr(r, t, n, 40)),
        lambda data, indices, indptr, y, n: sp.csr_matrix((data, indices, indptr), shape=(indptr.size - 1, n)).T @ y,
    ),
    "rms_norm": (
        lambda r, t, n: ((_u(r, t, n, 17), _u(r, t, 17, lo=0.5, hi=1.5)), {"eps": float(r.uniform(1e-6, 1e-2))}),
        _rms_norm_ref,
    ),
    "layer_norm": (
        lambda r, t, n: ((_u(r, t, n, 17), _u(r, t, 17, lo=0.5, hi=1.5), _u(r, t, 17, lo=-1, hi=1)), {}),
        _layer_norm_ref,
    ),
    "gelu_tanh": (lambda r, t, n: ((_u(r, t, n),), {}), _gelu_tanh_ref),
    "silu": (lambda r, t, n: ((_u(r, t, n),), {}), lambda x: x / (1 + np.exp(-x))),
    "softmax": (lambda r, t, n: ((_u(r, t, n, 19),), {}), _softmax_ref),
    "softmax_cross_entropy": (
        lambda r, t, n: ((_u(r, t, n, 19), r.integers(0, 19, n).astype(np.int32)), {}),
        _cross_entropy_ref,
    ),
    "rope": (
        lambda r, t, n: ((_u(r, t, 2, 2 + n // 48, 3, 8), *_rope_tables(r, t, 2 + n // 48, 4)), {}),
        _rope_ref,
    ),
    "embedding_bag": (
        lambda r, t, n: ((_u(r, t, 11, 8), r.integers(0, 11, (n, 5)).astype(np.int32)), {}),
        _embedding_bag_ref,
    ),
    "embedding_scatter_add": (
        # As many table rows as bags: few additions per row, so float16 sums stay exact enough.
        lambda r, t, n: ((r.integers(0, n + 1, (n, 5)).astype(np.int32), _u(r, t, n, 8)), {"vocab": n + 1}),
        _scatter_ref,
    ),
}


def reference(name, args, attrs, dtype):
    """The reference outputs as a tuple, computed in float64 and cast like the op's outputs."""
    up = [a.astype(np.float64) if _is_float(a.dtype) else a for a in args]
    out = CASES[name][1](*up, **attrs)
    out = out if isinstance(out, tuple) else (out,)
    return tuple(o if np.asarray(o).dtype.kind in "iub" else np.asarray(o).astype(dtype) for o in out)


def _is_float(dtype):
    """NumPy's float kinds, and bfloat16 (ml_dtypes, NumPy kind 'V')."""
    return np.dtype(dtype).kind == "f" or np.dtype(dtype).name == "bfloat16"
