"""Proximal policy optimisation: MaskablePPO with stable-baselines3, on the GPU env, and on RLlib.

* ``python -m concordia_env.training.ppo`` (was ``training/train_ppo.py``): one MaskablePPO policy
  per map, described below; its modules: :mod:`.settings` (the arguments), :mod:`.envs` (the
  environments), :mod:`.checkpoints` (saving, reading and resuming), :mod:`.logs` (``progress.csv``
  and the evaluations that survive a resume), :mod:`.callbacks` (the opponent pool's checkpoints,
  the outcomes logged, the line per rollout), :mod:`.evaluation` (the periodic evaluation),
  :mod:`.loop` (the run) and :mod:`.command` (``main``);
* ``python -m concordia_env.training.ppo.cuda`` (was ``ppo_cuda.py``): PPO in plain torch on the GPU env;
* ``python -m concordia_env.training.ppo.rllib`` (was ``train_rllib.py``): multi-agent PPO on RLlib.

The old module paths (``concordia_env.training.train_ppo``, ``ppo_cuda``, ``train_rllib``) still
work for one release, with the same commands, options and messages.

MaskablePPO (stable-baselines3)
===============================
Train one MaskablePPO policy for a map that plays any seat of any player count the map allows.

Example (the command behind the released Imperium policy is in docs/training.md)::

    python -m concordia_env.training.ppo --map imperium --total-steps 200000 --out runs/imperium

How it trains
-------------
Every environment is an :class:`concordia_env.training.selfplay.SingleLearnerEnv`: the learner
takes one seat of a game (random seat and player count per episode unless
``--players`` / ``--seat`` fix them); the other seats are played inside
``step()`` by the opponent pool (``--opponents``: random, heuristic, and frozen
past checkpoints of the learner), so the learner always receives its own
end-of-game reward. ``--n-envs`` such environments are stepped as one
``DummyVecEnv`` (``--vec subproc``: one process each); sb3-contrib's
``MaskablePPO`` asks them for ``action_masks()`` and never samples an illegal
move.

What a run writes (``--out DIR``)
---------------------------------
* ``config.json``: every argument, and the versions the run used;
* ``checkpoints/step_<N>.zip`` every ``--checkpoint-every`` steps; each checkpoint
  also joins the opponent pool as a frozen ``"self"`` opponent;
* ``eval/``: ``MaskableEvalCallback`` results against the HeuristicAgent
  (``evaluations.npz``) and ``best_model.zip``;
* ``logs/``: TensorBoard events and ``progress.csv`` (learning curve: reward,
  win rates against each opponent kind in training, evaluation win rate);
* ``final.zip`` (full model, to resume) and ``policy.zip`` (the same policy with
  the optimizer state dropped: what ``--release`` copies and ``PolicyAgent`` loads).

``--release X.zip`` copies ``policy.zip`` to ``X.zip`` and writes its actor beside it
as plain numpy weights, ``X.npz`` + ``X.json`` (what the ``ppo`` agent plays without
torch; :mod:`concordia_env.training.export_policy` makes the same pair from any zip).

Progress
--------
With ``rich`` and ``tqdm`` installed (both in the ``train`` extra) a progress bar shows the steps;
without them, or with ``--no-progress``, one line per rollout on stdout says the step count, the
speed, the time left and the win rates of that rollout's games, so a long run is never silent.

A new run and its directory
---------------------------
Everything that can fail before training (the arguments, the optional packages, the
environments, the model) is checked before the run directory is written, so a run that cannot
start leaves nothing behind. A new run (without ``--resume``) refuses a directory that already
holds a run (its ``config.json`` or a checkpoint): one line naming it and what to do, status 2,
nothing changed; ``--resume DIR`` continues that run instead.

Resuming, and what survives what
--------------------------------
``--resume CHECKPOINT.zip`` continues a run: the model, its optimizer and step
count come from the file, the opponent pool is refilled from the run's newest
readable checkpoints (up to the resumed step), and ``progress.csv`` and
``evaluations.npz`` keep their rows up to that step and go on from there.
``--resume RUN_DIR`` resumes from the run's newest readable checkpoint
(``final.zip`` or ``checkpoints/step_*.zip``, by the step count each records);
``--out`` defaults to that directory. ``--total-steps`` is always the run's
*total*: a resumed run trains from the checkpoint's step count up to
``--total-steps`` (not that many more steps), so the command that started a run,
with ``--resume RUN_DIR`` added, finishes it; a checkpoint at or past the total
only gets its final files written.

Every file of a run (checkpoints, ``final.zip``, ``policy.zip``, the release,
``config.json``, ``wall_time.json``, ``progress.csv``, ``evaluations.npz``,
``best_model.zip``) is written to a temporary file in its own folder, fsynced
and renamed into place (:mod:`concordia_env._internal.files`), so a reader or a resume
sees the previous file or the complete new one:

* Ctrl-C saves ``checkpoints/step_<N>.zip`` of the moment and exits with
  status 130 and one line (the partial rollout is dropped);
* a kill loses the steps since the last checkpoint; a temporary file it leaves
  is removed by the next run in the directory;
* a failed write (full disk, file size limit) stops the run with one line and
  status 1; the files written before are intact;
* a checkpoint that is truncated or corrupt (every zip member is checked
  against its CRC) is skipped with a one-line warning when a run directory is
  resumed or the pool refilled; named explicitly in ``--resume`` it is an
  error: one line, status 2.
"""
