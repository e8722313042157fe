"""Showing a game to a person: everything the package draws or prints, apart from the rules.

* :mod:`.render`: plain text in 80 columns (``str(state)``, status blocks, score tables, a game as
  one line per turn);
* :mod:`.menu`: the legal actions of a decision as a grouped, numbered terminal menu
  (``concordia play``, and the move list of ``concordia serve``);
* :mod:`.picture`: the board picture (``render_mode="rgb_array"``), drawn with Pillow by the
  modules of :mod:`.drawing`;
* :mod:`.viewer`: the replay viewer, a game record as one self-contained HTML page; its drawing
  (``draw.js``, ``draw.css``) is shared with the play page of :mod:`concordia_env.server`.

Importing this package imports none of them (nor Pillow or matplotlib).
"""
