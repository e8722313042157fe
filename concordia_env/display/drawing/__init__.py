"""The picture of a state, drawn with Pillow (see :mod:`concordia_env.display.picture` for the API).

Modules, bottom up: :mod:`.style` (colours, layout), :mod:`.geometry` (the maps north up),
:mod:`.canvas` (fonts, cached text and sprites), :mod:`.labels` (where names go),
:mod:`.board` (the map's static layer and the pieces), :mod:`.panels` (title, players,
display), :mod:`.frame` (the cached static layer plus one state).
"""
