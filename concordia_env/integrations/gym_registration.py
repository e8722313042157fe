"""gymnasium ids for the single-learner env (:class:`concordia_env.training.selfplay.SingleLearnerEnv`)
and its vector form (:class:`concordia_env.integrations.gym_vector.SingleLearnerVectorEnv`).

Importing ``concordia_env`` calls :func:`register_gymnasium_envs`, after which::

    import gymnasium
    import concordia_env  # noqa: F401  (registers the ids)

    env = gymnasium.make("concordia/Imperium-v0", num_players=4, illegal_action="random_legal")

=============================  ================================================
id                             what it makes
=============================  ================================================
``concordia/Concordia-v0``     ``SingleLearnerEnv(**kwargs)`` (``map_name`` defaults to ``"imperium"``)
``concordia/Imperium-v0``      ``SingleLearnerEnv(map_name="imperium", **kwargs)``
``concordia/Italia-v0``        ``SingleLearnerEnv(map_name="italia", **kwargs)``
=============================  ================================================

Keyword arguments of ``gymnasium.make`` go to the constructor. The entry points are strings,
so registering imports nothing: ``gymnasium.make`` imports
:mod:`concordia_env.training.selfplay` (numpy and gymnasium, never torch) on first use.
A per-map id refuses a ``map_name`` naming the other map (``ValueError``).

Every id also has a ``vector_entry_point``: ``gymnasium.make_vec(id, num_envs=N, **kwargs)``
builds ``SingleLearnerVectorEnv(num_envs=N, **kwargs)`` (the same keyword arguments; rows
stepped together, ``AutoresetMode.SAME_STEP``, ``info["action_mask"]``), which is what
``make_vec`` picks when ``vectorization_mode`` is left out (gymnasium prefers a
``vector_entry_point``); ``vectorization_mode="sync"`` or ``"async"`` still gives gymnasium's
own vector env of ``SingleLearnerEnv`` copies.
"""

from __future__ import annotations

from typing import Any

#: where gymnasium finds the env class (imported by ``gymnasium.make``, not here)
ENTRY_POINT = "concordia_env.integrations.gym_registration:make_single_learner"
#: where ``gymnasium.make_vec`` finds the vector env (imported on first use, not here)
VECTOR_ENTRY_POINT = "concordia_env.integrations.gym_registration:make_single_learner_vector"

#: registered id -> the map it fixes (None: ``map_name`` is an argument, default "imperium")
GYM_IDS: dict[str, str | None] = {
    "concordia/Concordia-v0": None,
    "concordia/Imperium-v0": "imperium",
    "concordia/Italia-v0": "italia",
}


def make_single_learner(fixed_map: str | None = None, **kwargs: Any) -> Any:
    """The entry point of every id: ``SingleLearnerEnv(**kwargs)`` on ``fixed_map`` if the id fixes one.

    ``ValueError`` when ``map_name`` is passed to a per-map id and names another map."""
    from concordia_env.training.selfplay import SingleLearnerEnv

    return SingleLearnerEnv(**_with_map(fixed_map, kwargs))


def make_single_learner_vector(num_envs: int = 1, fixed_map: str | None = None, **kwargs: Any) -> Any:
    """The vector entry point of every id: ``SingleLearnerVectorEnv(num_envs, **kwargs)`` on
    ``fixed_map`` if the id fixes one (same ``ValueError`` as :func:`make_single_learner`)."""
    from concordia_env.integrations.gym_vector import SingleLearnerVectorEnv

    return SingleLearnerVectorEnv(num_envs, **_with_map(fixed_map, kwargs))


def _with_map(fixed_map: str | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` with ``map_name`` set to the id's map; ``ValueError`` if it names another."""
    if fixed_map is not None:
        asked = kwargs.setdefault("map_name", fixed_map)
        if asked != fixed_map:
            raise ValueError(f"map_name={asked!r} contradicts this id, which plays {fixed_map!r}; use "
                             f"'concordia/Concordia-v0' with map_name={asked!r}, or leave map_name out")
    return kwargs


def register_gymnasium_envs() -> list[str]:
    """Register the ids of :data:`GYM_IDS` with gymnasium (once; registered ids are left alone);
    returns the ids."""
    import gymnasium

    for env_id, fixed_map in GYM_IDS.items():
        if env_id not in gymnasium.registry:
            kwargs = {} if fixed_map is None else {"fixed_map": fixed_map}
            gymnasium.register(env_id, entry_point=ENTRY_POINT, vector_entry_point=VECTOR_ENTRY_POINT,
                               kwargs=kwargs)
    return list(GYM_IDS)
