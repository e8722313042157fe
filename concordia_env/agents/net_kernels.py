"""A value network's win head compiled, one observation at a time over its non-zero inputs.

Why: a search values one new leaf per simulation. Through numpy (:meth:`ValueNet.values`) each
call crosses into Python and multiplies the whole observation (2,378 inputs) by the first
layer, though only about 140 of them are non-zero in a game position; that first layer was
most of a simulation's cost. Here the first layer's weights are stored input-major, so each
non-zero input adds one contiguous row of weights, and the whole forward pass is a kernel a
compiled search calls directly (:mod:`concordia_env.agents.az_search`).

What it computes is :meth:`ValueNet.values` for one row: the observation scaled as
``scale_observation`` scales it (``log1p`` for unbounded counts), every trunk layer and its
activation, then the softmax of the win logits over the seats present. Sums run in float64
over float32 weights, so values agree with numpy's float32 BLAS to about 1e-6, not bit for bit
(BLAS's own summation order differs between machines too).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from concordia_env import encoding
from concordia_env._internal.jit import kernel

from .value_net import ROWS, ValueNet

#: activation ids of the compiled pass, by the names :class:`ValueNet` uses
ACTIVATION_IDS = {"Tanh": 0, "ReLU": 1, "ELU": 2, "LeakyReLU": 3}
#: where the seat-present flags of an observation start
PRESENT_AT = int(encoding.OBSERVATION_LAYOUT["seat_present"].start)


@dataclass(frozen=True)
class CompiledNet:
    """A :class:`ValueNet`'s trunk and win head laid out for :func:`win_shares` (see :meth:`of`).

    ``first``: the first layer's weights ``(inputs, width)``; ``weights``/``biases``: every other
    trunk layer's weights ``(in, out)`` (input-major, as ``first``) and biases, flat and in order; ``widths``: every trunk
    layer's width; ``scratch``: two rows for the hidden activations."""

    scale: np.ndarray
    unbounded: np.ndarray
    first: np.ndarray
    first_bias: np.ndarray
    weights: np.ndarray
    biases: np.ndarray
    widths: np.ndarray
    activation: int
    win_weight: np.ndarray
    win_bias: np.ndarray
    scratch: np.ndarray

    @classmethod
    def of(cls, net: ValueNet) -> CompiledNet:
        if not net.trunk:  # a linear model: the win head reads the scaled observation itself
            raise ValueError("the compiled network needs at least one trunk layer")
        if net.features is not None:
            raise ValueError(f"the compiled network reads the observation alone, not {net.features!r} features")
        (w1, b1), rest = net.trunk[0], net.trunk[1:]
        f32 = np.float32
        widths = np.array([w.shape[0] for w, _ in net.trunk], np.int64)
        win_w, win_b = net.heads["win"]
        return cls(scale=net.scale, unbounded=net.unbounded.astype(np.uint8),
                   first=np.ascontiguousarray(w1.T, f32), first_bias=b1,
                   weights=np.concatenate([w.T.ravel() for w, _ in rest] or [np.zeros(0, f32)]).astype(f32),
                   biases=np.concatenate([b for _, b in rest] or [np.zeros(0, f32)]).astype(f32),
                   widths=widths, activation=ACTIVATION_IDS[net.activation],
                   win_weight=win_w, win_bias=win_b, scratch=np.zeros((2, int(widths.max()))))

    @property
    def arrays(self) -> tuple[Any, ...]:
        """The arguments :func:`win_shares` takes after the observation, in order."""
        return (self.scale, self.unbounded, self.first, self.first_bias, self.weights, self.biases, self.widths,
                self.activation, self.win_weight, self.win_bias, self.scratch)

    def values(self, observation: np.ndarray) -> np.ndarray:
        """The win shares of one observation row (``ROWS`` float64; 0 for absent seats)."""
        out = np.zeros(ROWS)
        win_shares(np.ascontiguousarray(observation, np.float32), self.scale, self.unbounded, self.first,
                   self.first_bias, self.weights, self.biases, self.widths, self.activation, self.win_weight,
                   self.win_bias, self.scratch, out)
        return out


@kernel(inline="always")
def _activate(x, activation):
    if activation == 0:
        return math.tanh(x)
    if activation == 1:
        return max(x, 0.0)
    if activation == 2:
        return x if x > 0.0 else math.expm1(x)
    return x if x > 0.0 else 0.01 * x


@kernel(inline="always")
def _dense(h, w, bias, activation, out):
    """``out = activation(h @ w + bias)`` with ``w`` input-major ``(in, out)``: the loop over
    outputs vectorises, and each output's float64 sum still runs over the inputs in order."""
    out[:] = 0.0
    for i in range(h.shape[0]):
        v = h[i]
        w_i = w[i]
        for j in range(out.shape[0]):
            out[j] += w_i[j] * v
    for j in range(out.shape[0]):
        out[j] = _activate(np.float32(out[j] + bias[j]), activation)


@kernel()
def win_shares(x, scale, unbounded, first, first_bias, weights, biases, widths, activation, win_weight, win_bias,
               scratch, out):
    """The win shares of observation ``x`` into ``out`` (see the module doc)."""
    h, g = scratch[0], scratch[1]
    width = widths[0]
    acc = h[:width]
    acc[:] = 0.0
    for i in range(x.shape[0]):
        v = x[i]
        if v == 0.0:
            continue
        if unbounded[i]:
            v = np.float32(math.log1p(max(v, 0.0)))
        else:
            v = v * scale[i]
        w_i = first[i]
        for j in range(width):
            acc[j] += v * w_i[j]
    for j in range(width):
        h[j] = _activate(np.float32(h[j] + first_bias[j]), activation)
    at_w, at_b = 0, 0
    for layer in range(1, widths.shape[0]):
        out_width = widths[layer]
        _dense(h[:width], weights[at_w:at_w + width * out_width].reshape((width, out_width)),
               biases[at_b:at_b + out_width], activation, g[:out_width])
        at_w += out_width * width
        at_b += out_width
        width = out_width
        h[:width] = g[:width]
    top = -np.inf
    for k in range(out.shape[0]):
        out[k] = 0.0
        if x[PRESENT_AT + k] > 0:
            z = 0.0
            for i in range(width):
                z += win_weight[k, i] * h[i]
            out[k] = z + win_bias[k]
            top = max(top, out[k])
    total = 0.0
    for k in range(out.shape[0]):
        if x[PRESENT_AT + k] > 0:
            out[k] = math.exp(out[k] - top)
            total += out[k]
    for k in range(out.shape[0]):
        out[k] /= total
