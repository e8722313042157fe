"""The torch side of the released policies: the features extractor every trained model uses.

Observations are raw counts (coins and VP without a bound, flags in {0, 1}); an
MLP learns poorly from such inputs, and normalisation kept outside the model
(``VecNormalize``) would not travel with the model file. :class:`ObservationScaler`
puts the scaling inside the network, computed from the observation space's own
bounds (see :func:`concordia_env.agents.numpy_policy.observation_scaling`, which the numpy
copy of the actor shares), so a saved model plays raw observations of the PettingZoo env
directly. Importing this module imports torch.
"""

from __future__ import annotations

import gymnasium

from concordia_env._internal.extras import requires

with requires("train", "concordia_env.training.nets"):
    import torch
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from ..agents.numpy_policy import observation_scaling


class ObservationScaler(BaseFeaturesExtractor):
    """Bounded features divided by their bound, unbounded ones ``log1p``; no trainable weights."""

    def __init__(self, observation_space: gymnasium.spaces.Box) -> None:
        super().__init__(observation_space, features_dim=int(observation_space.shape[0]))
        scale, unbounded = observation_scaling(observation_space.high)
        self.register_buffer("scale", torch.as_tensor(scale))
        self.register_buffer("unbounded", torch.as_tensor(unbounded))

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        x = observations.float()
        scale, unbounded = self.get_buffer("scale"), self.get_buffer("unbounded")  # typed as tensors
        return torch.where(unbounded, torch.log1p(torch.clamp(x, min=0.0)), x * scale)
