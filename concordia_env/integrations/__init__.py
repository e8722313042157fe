"""Adapters that plug the environments into other RL libraries.

* :mod:`concordia_env.integrations.gym_registration`: the gymnasium ids of the single-learner
  env (``gymnasium.make("concordia/Concordia-v0", ...)``), registered when ``concordia_env`` is
  imported. It imports nothing but gymnasium, which PettingZoo imports anyway.
* :mod:`concordia_env.integrations.gym_vector`: :class:`~concordia_env.integrations.gym_vector.SingleLearnerVectorEnv`,
  the single-learner env as a ``gymnasium.vector.VectorEnv`` over the batched games (SAME_STEP
  autoreset, ``info["action_mask"]``): what ``gymnasium.make_vec`` builds for the ids.
* :mod:`concordia_env.integrations.sb3`: :class:`~concordia_env.integrations.sb3.LearnerVecEnv`,
  a stable-baselines3 ``VecEnv`` over the batched env for one learner against random
  opponents played in the compiled kernel (imports stable-baselines3; needs the ``train`` extra).
* :mod:`concordia_env.integrations.sb3_files`: the reader of stable-baselines3 / sb3-contrib
  model files (``.zip``) that the ``policy`` agent plays and the training scripts resume and
  export: spaces and algorithm read from the zip's JSON, torch imported only when a model loads.
* :mod:`concordia_env.integrations.rllib`: the AEC env as an RLlib multi-agent env with action
  masking (``observations`` key, illegal actions terminate), policy mappings and a masked PPO
  config (needs the ``rllib`` extra).
* :mod:`concordia_env.integrations.ray_backend`: ``concordia tournament --backend ray``, games as
  Ray tasks (needs the ``ray`` extra).
* :mod:`concordia_env.integrations.openspiel`: registers the pyspiel game ``python_concordia``
  (explicit chance for the setup and the deal, IS-MCTS resampling, a compiled-playout MCTS
  evaluator); needs the ``openspiel`` extra.

Importing this package imports none of them: each module is imported only when named. The table
of libraries, what works with each and how is in ``docs/integrations.md``.
"""
