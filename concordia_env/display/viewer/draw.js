// Concordia drawing (concordia-env): the board in SVG, the player panels and the card display,
// shared by the replay viewer (viewer/template.html) and the play page (server/page.html).
//
// concordiaDrawing(D) draws the static map into <svg id="board"> and the legend into #legend, and
// returns the functions that draw one frame (a flat list of ints, laid out by D.layout: see
// concordia_env/display/viewer/snapshots.py) into the board, #players and #display. D is the static view
// built by concordia_env.display.viewer.snapshots.static_view.
function concordiaDrawing(D) {
  "use strict";
  const board = document.getElementById("board");
  const SVGNS = board.namespaceURI;  // the SVG namespace, as the parser set it
  const NP = D.players;
  const GOD_COLOURS = {Vesta: "#f2c14e", Jupiter: "#c9d6df", Saturnus: "#b7d9a8", Mercurius: "#f6b48f",
                       Mars: "#e99a9a", Minerva: "#c3b1e1", Concordia: "#9ec9f0"};
  const DARK_GOODS = [0, 3];
  const LETTERS = D.goods.map(function (g) { return g[0].toUpperCase(); });

  // ------------------------------------------------------------ helpers
  function get(f, name) {
    const spec = D.layout[name], off = spec[0], shape = spec[1];
    if (shape.length === 0) return f[off];
    if (shape.length === 1) return f.slice(off, off + shape[0]);
    const rows = [];
    for (let r = 0; r < shape[0]; r++) rows.push(f.slice(off + r * shape[1], off + (r + 1) * shape[1]));
    return rows;
  }
  function sum(a) { return a.reduce(function (s, v) { return s + v; }, 0); }
  function el(tag, attrs, parent, text) {
    const e = tag.indexOf("svg:") === 0 ? document.createElementNS(SVGNS, tag.slice(4)) : document.createElement(tag);
    if (attrs) for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }
  function fmt(v) { return String(Math.round(v * 10) / 10); }
  function pts(list) { return list.map(function (p) { return fmt(p[0]) + "," + fmt(p[1]); }).join(" "); }
  function star(cx, cy, r) {
    const p = [];
    for (let i = 0; i < 10; i++) {
      const a = -Math.PI / 2 + i * Math.PI / 5, rr = i % 2 ? r * 0.45 : r;
      p.push([cx + rr * Math.cos(a), cy + rr * Math.sin(a)]);
    }
    return pts(p);
  }
  function triangle(cx, cy, r) { return pts([[cx, cy - r], [cx + r * 0.9, cy + r * 0.65], [cx - r * 0.9, cy + r * 0.65]]); }
  // a good as a coloured token (square or circle) with its initial
  function goodToken(parent, x, y, k, size, round, cls) {
    const g = el("svg:g", {class: cls || "good"}, parent);
    if (round) el("svg:circle", {cx: fmt(x), cy: fmt(y), r: fmt(size / 2), fill: D.good_colours[k], stroke: "#000", "stroke-width": 1}, g);
    else el("svg:rect", {x: fmt(x - size / 2), y: fmt(y - size / 2), width: fmt(size), height: fmt(size), rx: 2,
                         fill: D.good_colours[k], stroke: "#000", "stroke-width": 0.8}, g);
    el("svg:text", {x: fmt(x), y: fmt(y + size * 0.17), "text-anchor": "middle", "font-size": fmt(size * 0.55),
                    "font-weight": 700, fill: DARK_GOODS.indexOf(k) >= 0 ? "#fff" : "#000"}, g, LETTERS[k]);
    return g;
  }
  function anyToken(parent, x, y, size) {
    el("svg:rect", {x: fmt(x - size / 2), y: fmt(y - size / 2), width: fmt(size), height: fmt(size), rx: 2,
                    fill: "#fff", stroke: "#000", "stroke-width": 0.8}, parent);
    el("svg:text", {x: fmt(x), y: fmt(y + size * 0.2), "text-anchor": "middle", "font-size": fmt(size * 0.6),
                    "font-weight": 700}, parent, "?");
  }
  function typeName(t) { return D.cards.types[t].name; }
  function typeGod(t) { return D.cards.types[t].god; }

  // ------------------------------------------------------------ the static map
  const B = D.board;
  clear(board);
  board.setAttribute("viewBox", "0 0 " + B.width + " " + B.height);
  el("svg:rect", {x: 0, y: 0, width: B.width, height: B.height, fill: "#fbf8ee"}, board);
  const gRoutes = el("svg:g", {id: "routes"}, board);
  const routeById = {};
  B.routes.forEach(function (r) {
    routeById[r.id] = r;
    const attrs = {points: pts(r.points), fill: "none", class: r.land ? "route land" : "route sea", "data-route": r.id,
                   stroke: r.land ? D.colours.land : D.colours.sea, "stroke-width": r.land ? 2.2 : 1.8, "stroke-opacity": 0.8};
    if (!r.land) attrs["stroke-dasharray"] = "6 4";
    const line = el("svg:polyline", attrs, gRoutes);
    el("svg:title", null, line, r.name + (r.land ? " (land)" : " (sea)"));
    el("svg:circle", {cx: r.spot[0], cy: r.spot[1], r: 2.2, fill: "#777"}, gRoutes);
  });
  const gLabels = el("svg:g", {id: "provinces"}, board);
  B.provinces.forEach(function (q, i) {
    el("svg:text", {x: fmt(q.label[0] + 16), y: fmt(q.label[1] + 3.5), "font-size": 10, "font-style": "italic",
                    fill: "#6f6f6f", class: "province-name", "data-province": i}, gLabels, q.numeral + " " + q.name);
  });
  const gMarkers = el("svg:g", {id: "markers"}, board);
  const gCities = el("svg:g", {id: "cities"}, board);
  const cityGood = [];  // per city: the <g> to recolour
  B.cities.forEach(function (c, i) {
    const g = el("svg:g", {class: "city", "data-city": i}, gCities);
    el("svg:title", null, g, c.province >= 0 ? c.name + " (" + B.provinces[c.province].name + ")" : c.name);
    if (i === 0) el("svg:polygon", {points: star(c.xy[0], c.xy[1], 13), fill: D.colours.roma, stroke: "#6b5200", "stroke-width": 1.2}, g);
    const slot = el("svg:g", null, g);
    cityGood.push(slot);
    el("svg:text", {x: c.xy[0], y: fmt(c.xy[1] + 21), "text-anchor": "middle", "font-size": 10, fill: "#111",
                    class: "city-name"}, g, c.name);
  });
  const gPieces = el("svg:g", {id: "pieces"}, board);
  (function legend() {
    const L = document.getElementById("legend");
    clear(L);
    const s = el("svg:svg", {width: 760, height: 22, viewBox: "0 0 760 22"}, L);
    let x = 8;
    D.goods.forEach(function (name, k) { goodToken(s, x + 7, 11, k, 14, true); el("svg:text", {x: x + 17, y: 15, "font-size": 11}, s, name); x += 62; });
    el("svg:line", {x1: x, y1: 11, x2: x + 22, y2: 11, stroke: D.colours.land, "stroke-width": 2.2}, s);
    el("svg:text", {x: x + 26, y: 15, "font-size": 11}, s, "land"); x += 56;
    el("svg:line", {x1: x, y1: 11, x2: x + 22, y2: 11, stroke: D.colours.sea, "stroke-width": 1.8, "stroke-dasharray": "6 4"}, s);
    el("svg:text", {x: x + 26, y: 15, "font-size": 11}, s, "sea"); x += 52;
    el("svg:rect", {x: x, y: 6, width: 10, height: 10, fill: "#fff", stroke: "#000"}, s);
    el("svg:text", {x: x + 14, y: 15, "font-size": 11}, s, "house"); x += 52;
    el("svg:circle", {cx: x + 5, cy: 11, r: 5, fill: "#fff", stroke: "#000"}, s);
    el("svg:polygon", {points: triangle(x + 18, 11, 6), fill: "#fff", stroke: "#000"}, s);
    el("svg:text", {x: x + 28, y: 15, "font-size": 11}, s, "land/sea colonist"); x += 124;
    el("svg:circle", {cx: x + 6, cy: 11, r: 6, fill: D.colours.coin_face, stroke: D.colours.coin_edge}, s);
    el("svg:text", {x: x + 16, y: 15, "font-size": 11}, s, "bonus taken");
  })();

  // ------------------------------------------------------------ one frame
  function drawBoard(f) {
    const goods = get(f, "city_good"), houses = get(f, "houses");
    cityGood.forEach(function (slot, c) {
      clear(slot);
      const xy = B.cities[c].xy;
      if (goods[c] >= 0) goodToken(slot, xy[0], xy[1], goods[c], 17, true, "city-good");
      else if (c !== 0) el("svg:circle", {cx: xy[0], cy: xy[1], r: 7, fill: "#ddd", stroke: "#000"}, slot);
    });
    clear(gMarkers);
    const mg = get(f, "marker_good"), ma = get(f, "marker_active");
    B.provinces.forEach(function (q, i) {
      if (mg[i] < 0) return;
      const x = q.label[0] + 6, y = q.label[1];
      if (ma[i]) goodToken(gMarkers, x, y, mg[i], 11, false, "marker");
      else {
        const g = el("svg:g", {class: "marker taken"}, gMarkers);
        el("svg:circle", {cx: fmt(x), cy: fmt(y), r: 5.5, fill: D.colours.coin_face, stroke: D.colours.coin_edge, "stroke-width": 1}, g);
        el("svg:text", {x: fmt(x), y: fmt(y + 3), "text-anchor": "middle", "font-size": 7.5, fill: D.colours.coin_edge, "font-weight": 700}, g, "$");
      }
    });
    clear(gPieces);
    B.cities.forEach(function (c, i) {
      const owners = [];
      for (let p = 0; p < NP; p++) if ((houses[i] >> p) & 1) owners.push(p);
      owners.forEach(function (p, k) {
        const x = c.xy[0] + (k - (owners.length - 1) / 2) * 10, y = c.xy[1] - 16;
        el("svg:rect", {x: fmt(x - 4.5), y: fmt(y - 4.5), width: 9, height: 9, fill: D.player_colours[p], stroke: "#000",
                        "stroke-width": 0.8, class: "house", "data-player": p, "data-city": i}, gPieces);
      });
    });
    const col = get(f, "colonist"), inCity = {};
    const NC = D.colonist_city_places;  // colonist places: city c < NC, else route (place - NC)
    for (let p = 0; p < NP; p++) {
      for (let i = 0; i < 6; i++) {
        const loc = col[p][i], land = i < 3;
        if (loc < 0) continue;
        let x, y;
        if (loc < NC) {
          const key = loc + (land ? "L" : "S");
          const k = inCity[key] = (inCity[key] || 0) + 1;
          x = B.cities[loc].xy[0] + 12 + 9 * (k - 1) + (loc === 0 ? 6 : 0);
          y = B.cities[loc].xy[1] + (land ? -5 : 6);
        } else {
          const r = routeById[loc - NC];
          if (!r) continue;
          x = r.spot[0]; y = r.spot[1];
        }
        const attrs = {fill: D.player_colours[p], stroke: "#000", "stroke-width": 0.8, class: "colonist " + (land ? "land" : "sea"), "data-player": p};
        if (land) { attrs.cx = fmt(x); attrs.cy = fmt(y); attrs.r = 4.8; el("svg:circle", attrs, gPieces); }
        else { attrs.points = triangle(x, y, 6); el("svg:polygon", attrs, gPieces); }
      }
    }
  }

  function cardTags(parent, counts, top) {
    let any = false;
    counts.forEach(function (c, t) {
      if (!c && t !== top) return;
      any = true;
      const s = el("span", {class: "cardtag" + (t === top ? " top" : ""), title: typeGod(t) + (t === top ? ", top of the discard pile" : ""),
                            style: "background:" + GOD_COLOURS[typeGod(t)]}, parent, typeName(t) + (c > 1 ? " \u00d7" + c : ""));
      s.dataset.type = t;
    });
    if (!any) el("span", {style: "color:#999"}, parent, "none");
  }
  // a panel per player; ``winner``: the seat to mark as the winner, or -1
  function drawPlayers(f, winner) {
    const P = document.getElementById("players");
    clear(P);
    const coins = get(f, "coins"), goods = get(f, "goods"), hand = get(f, "hand"), discard = get(f, "discard");
    const top = get(f, "top"), col = get(f, "colonist"), vp = get(f, "vp"), hl = get(f, "houses_left");
    const cur = get(f, "current"), pm = get(f, "pm"), conc = get(f, "concordia");
    for (let p = 0; p < NP; p++) {
      const box = el("div", {class: "player" + (p === cur ? " current" : ""), id: "player-" + p,
                             style: p === cur ? "border-color:" + D.player_colours[p] : ""}, P);
      const head = el("div", {class: "head"}, box);
      el("span", {class: "chip", style: "background:" + D.player_colours[p]}, head);
      el("span", null, head, "Player " + p + " (" + D.agents[p] + ")");
      if (p === cur) el("span", {class: "badge turn"}, head, "to decide");
      if (p === winner) el("span", {class: "badge win"}, head, "winner");
      if (p === pm) el("span", {class: "badge pm", title: "Praefectus Magnus"}, head, "Praefectus Magnus");
      if (p === conc) el("span", {class: "badge conc", title: "took the Concordia card"}, head, "Concordia");
      const st = el("div", {class: "stats"}, box);
      el("span", {class: "vp", "data-field": "vp"}, st, sum(vp[p]) + " VP");
      el("span", {"data-field": "coins"}, st, coins[p] + " sestertii");
      el("span", {"data-field": "houses"}, st, hl[p] + " houses left");
      const landIn = col[p].slice(0, 3).filter(function (v) { return v < 0; }).length;
      const seaIn = col[p].slice(3).filter(function (v) { return v < 0; }).length;
      const used = sum(goods[p]) + landIn + seaIn;
      el("span", null, st, "storehouse " + used + "/" + D.storehouse_slots);
      const gr = el("div", {class: "row"}, box);
      el("span", {class: "lab"}, gr, "goods");
      const gs = el("svg:svg", {width: 330, height: 20, viewBox: "0 0 330 20", style: "vertical-align:middle"}, gr);
      for (let k = 0; k < D.goods.length; k++) {
        goodToken(gs, 10 + 46 * k, 10, k, 16, false);
        el("svg:text", {x: 21 + 46 * k, y: 15, "font-size": 13, "font-weight": goods[p][k] ? 700 : 400,
                        fill: goods[p][k] ? "#000" : "#aaa", class: "good-count"}, gs, String(goods[p][k]));
      }
      el("svg:circle", {cx: 246, cy: 10, r: 5.5, fill: D.player_colours[p], stroke: "#000"}, gs);
      el("svg:text", {x: 254, y: 15, "font-size": 12}, gs, "\u00d7" + landIn);
      el("svg:polygon", {points: triangle(288, 10, 7), fill: D.player_colours[p], stroke: "#000"}, gs);
      el("svg:text", {x: 297, y: 15, "font-size": 12}, gs, "\u00d7" + seaIn);
      const hr = el("div", {class: "row hand"}, box);
      el("span", {class: "lab"}, hr, "hand");
      cardTags(hr, hand[p], -1);
      const dr = el("div", {class: "row discard"}, box);
      el("span", {class: "lab"}, dr, "discard");
      cardTags(dr, discard[p], top[p]);
      const tb = el("table", {class: "gods"}, box);
      const h = el("tr", null, tb), r = el("tr", null, tb);
      D.gods.forEach(function (g, j) {
        el("th", {style: "background:" + GOD_COLOURS[g]}, h, g);
        el("td", null, r, String(vp[p][j]));
      });
    }
  }
  function drawDisplay(f) {
    const box = document.getElementById("display");
    clear(box);
    const disp = get(f, "display");
    document.getElementById("displayTitle").textContent = "Card display (price = card + position; ? = any good) — deck: "
      + get(f, "deck_left") + " cards left";
    disp.forEach(function (cid, j) {
      const c = el("div", {class: "dcard" + (cid < 0 ? " empty" : ""), "data-pos": j}, box);
      if (cid < 0) { el("div", null, c, (j + 1) + ": empty"); return; }
      const t = D.cards.card_type[cid];
      el("span", {class: "pos"}, c, String(j + 1));
      el("div", {class: "name"}, c, typeName(t));
      el("div", {class: "god", style: "background:" + GOD_COLOURS[typeGod(t)] + ";border-radius:3px"}, c, typeGod(t));
      const price = D.cards.prices[cid][j], units = price[0], nAny = price[1], count = units.length + nAny;
      const w = Math.max(60, count * 17 + 4);
      const s = el("svg:svg", {width: w, height: 22, viewBox: "0 0 " + w + " 22"}, c);
      units.forEach(function (k, i) { goodToken(s, 10 + 17 * i, 11, k, 15, false); });
      for (let i = 0; i < nAny; i++) anyToken(s, 10 + 17 * (units.length + i), 11, 15);
    });
  }

  return {board: board, routeById: routeById, GOD_COLOURS: GOD_COLOURS,
          get: get, sum: sum, el: el, clear: clear, fmt: fmt, pts: pts,
          drawBoard: drawBoard, drawPlayers: drawPlayers, drawDisplay: drawDisplay};
}

// The analysis panel of both pages: what a search agent makes of one position, as
// concordia_env.display.analysis.analyse gives it (moves as {action, name, visits, share, value},
// most visited first), drawn into #analysisInfo, #analysisValues and the rows of #analysisMoves.
// A is null while there is no analysis to show; note then says why.
function drawAnalysis(draw, D, A, note) {
  "use strict";
  const el = draw.el, info = document.getElementById("analysisInfo");
  const values = document.getElementById("analysisValues"), rows = document.querySelector("#analysisMoves tbody");
  [info, values, rows].forEach(draw.clear);
  document.getElementById("analysisMoves").hidden = !A || A.over;
  if (!A) { info.textContent = note || ""; return; }
  if (A.over) { info.textContent = "The game is over: nothing to analyse."; return; }
  const who = "player " + A.player + (D.agents[A.player] ? " (" + D.agents[A.player] + ")" : "");
  info.textContent = A.forced ? who + " has one legal move: not searched."
    : who + " to decide \u2014 " + A.iterations + " iterations over " + A.legal + " legal moves";
  if (A.values) {
    el("span", {class: "lab"}, values, "Position value: ");
    A.values.forEach(function (v, p) {
      const s = el("span", {class: "seat-value", "data-player": p}, values);
      el("span", {class: "chip", style: "background:" + D.player_colours[p]}, s);
      el("span", null, s, " player " + p + " " + v.toFixed(3));
    });
  }
  let shown = 0;
  A.moves.forEach(function (m) {
    if (m.visits === 0 && !A.forced) return;  // never visited: counted below
    shown++;
    const tr = el("tr", {"data-action": m.action}, rows);
    el("td", {class: "name"}, tr, m.name);
    const share = el("td", {class: "share"}, tr);
    el("span", {class: "bar", style: "width:" + (100 * m.share).toFixed(1) + "%"}, share);
    el("span", {class: "pct"}, share, (100 * m.share).toFixed(1) + "%");
    el("td", {class: "value"}, tr, m.value === null ? "\u2013" : m.value.toFixed(3));
  });
  if (A.legal > shown) {
    const tr = el("tr", {class: "unvisited"}, rows);
    el("td", {colspan: 3}, tr, (A.legal - shown) + " more legal move" + (A.legal - shown > 1 ? "s" : "")
       + " not visited by the search");
  }
}
