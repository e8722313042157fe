"""Values learned by TD at turn boundaries, for the ``turn`` agent.

The loop (``python -m concordia_env.training.turn_td``), round by round:

1. **self-play** (:mod:`.loop`): every seat plays ``turn:net=NET:w=W:explore=EPS``, the
   previous round's network (the first round: the ``--init`` network) scoring whole turns,
   blended with the heuristic's value at weight ``W``; ``W`` falls linearly from
   ``--w-start`` to 0 over the rounds, so the hand-made value is phased out gradually. The
   games are a tournament (:func:`concordia_env.arena.tournament.run_tournament`): its worker
   pool, its Ctrl-C handling, its resumable records;
2. **positions** (:mod:`.data`): the records are replayed and every turn's end is taken as
   the player whose turn it was saw it (before the display refill, as candidates are seen);
   targets are TD(lambda) over each game's sequence of turn ends, bootstrapped from the
   network that played, and the final VP margins;
3. **training** (:mod:`.model`): the torch twin of :class:`~concordia_env.agents.value_net.ValueNet`
   (a win head and a VP-margin head), warm-started from the previous round's network, on the
   positions of the last ``--window`` rounds; saved as a numpy network pair;
4. **gate**: seat-rotated games on fixed deals of the new network against each
   ``--gate`` opponent, played with ``W`` of the next round and with ``w=0`` (the network
   alone); the win rates with Wilson intervals go into ``curves.json``.

Every step writes its output atomically and a run continues where it stopped (same command
with ``--resume``).
"""
