"""Value networks learned from self-play outcomes, for searching with a learned value.

1. **data** (:mod:`.data`, ``python -m concordia_env.training.value.data``; was ``value_data.py``):
   self-play games played by a mix of agents, every recorded position with its final outcome, in
   resumable shards;
2. **training** (:mod:`.train`, ``python -m concordia_env.training.value.train``; was
   ``value_train.py``): a torch network (:mod:`.model`) on those positions, its win head against the
   outcome or bootstrapped targets (:mod:`.targets`), checkpointed (:mod:`.checkpoint`) and exported
   to numpy (:class:`concordia_env.agents.value_net.ValueNet`, no torch needed to use it).

The old module paths (``concordia_env.training.value_data``, ``value_train``) still work for one
release, with the same commands, options and messages.
"""
