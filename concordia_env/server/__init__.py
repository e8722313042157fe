"""``concordia serve``: play Concordia in the browser against the package's agents.

A standard-library HTTP server (:mod:`~concordia_env.server.app`, loopback by default) serves one
page that draws the game with the replay viewer's code (``display/viewer/draw.js``,
``display/viewer/draw.css``) and a small JSON API over one :class:`~concordia_env.server.session.GameSession`: the state, the
legal moves grouped by kind and tied to the cities, routes, provinces and cards they act on
(:mod:`~concordia_env.server.moves`), a move checked against the legal mask and the decision
number, and a new game. Agents play their seats on the server; the game record is saved after
every move. With ``--analysis SPEC`` a search agent analyses the position on the page in a worker
process (:mod:`~concordia_env.server.analysis`). The command and its options are in
:mod:`concordia_env.cli.serve`; the page and the API are described in ``docs/serve.md``.

Nothing is imported here: ``concordia`` registers the command from
:mod:`concordia_env.cli.serve` at every start, and the session brings in the arena and the
environment, which only serving needs. Import what you use from its module, e.g.
``from concordia_env.server.session import GameSession``.
"""
