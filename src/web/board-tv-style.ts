/**
 * /board?mode=tv: the live board laid out for a shop's screen, appended to
 * the board's style sheet. Once connected (html[data-view="board"]) only the
 * board shows: a one-line head (the title, the link's state and the time of
 * the last update in a corner) and a grid of tiles that fills the rest of the
 * viewport, dark, so the figures read from across the shop, and, in a row
 * under it, the names of any requested rates the stream left out (the
 * script measures that row as --foot, and the tiles make room for it).
 *
 * Every size follows from the viewport (vw, vh) and the grid the page's
 * script picks for the number of tiles: `--cols` × `--rows`, `--chars` the
 * figures of the longest price, `--fit` a correction where the font's figures
 * run wider than reckoned. A price is at most 45 % of its tile's height and
 * its longest figure fits 90 % of the tile's width at 0.6 em a character (the
 * script reckons its choice with the same shares). Nothing scrolls: with any
 * number of tiles the type shrinks instead.
 */
const TV = 'html[data-mode="tv"][data-view="board"]';

export const BOARD_TV_STYLE = `
${TV} { --pad: 1.5vmin; --gap: 1.2vmin; --head: clamp(32px, 6vh, 160px); --foot: 0px; --board-h: calc(100vh - 2 * var(--pad) - var(--head) - var(--gap) - var(--foot)); overflow: hidden; }
${TV} body { background: #0d1117; color: #e6edf3; }
${TV} main { max-width: none; height: 100vh; box-sizing: border-box; margin: 0; padding: var(--pad); display: grid; grid-template-columns: minmax(0, 1fr) auto; grid-template-rows: var(--head) var(--board-h); gap: var(--gap) 2vw; }
${TV} main > h1 { grid-area: 1 / 1; align-self: center; margin: 0; font-size: calc(var(--head) * .5); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
${TV} main > .en, ${TV} form, ${TV} .note { display: none; }
${TV} .bar { grid-area: 1 / 2; align-self: center; margin: 0; flex-wrap: nowrap; gap: 2vw; font-size: calc(var(--head) * .36); }
${TV} #state { padding: .2em .7em; gap: .4em; background: #21262d; }
${TV} #state::before { width: .55em; height: .55em; }
${TV} #state[data-state="open"] { background: #12361f; }
${TV} #updated { direction: rtl; color: #c9d1d9; font-size: 1em; font-variant-numeric: tabular-nums; }
${TV} #forget { padding: .2em .7em; font-size: .7em; background: transparent; color: #8b949e; border: 1px solid #30363d; white-space: nowrap; }
${TV}[data-dropped] main { grid-template-rows: var(--head) var(--board-h) auto; }
${TV} .dropped { grid-column: 1 / -1; grid-row: 3; box-sizing: border-box; margin: 0; padding: .3em .8em; gap: .2em; font-size: clamp(12px, 1.8vh, 40px); background: #161b22; color: #e3b341; border: 1px solid #30363d; }
${TV} .dropped .en { color: #c9d1d9; }
${TV} .message { position: fixed; left: 5vw; right: 5vw; bottom: 5vh; z-index: 2; font-size: clamp(16px, 3vh, 72px); }
${TV} .lost { position: fixed; top: 50%; left: 50%; transform: translate(-50%, -50%); z-index: 2; width: max-content; max-width: 90vw; box-sizing: border-box; margin: 0; padding: 3vh 4vw; gap: 1.5vh; border-radius: 2vmin; font-size: clamp(20px, 6vh, 140px); text-align: center; box-shadow: 0 0 0 100vmax rgba(13, 17, 23, .35); }
${TV} .lost > span { font-size: .45em; }
${TV} ul.board {
  grid-column: 1 / -1; grid-row: 2; height: var(--board-h); min-height: 0; gap: var(--gap);
  grid-template-columns: repeat(var(--cols, 2), minmax(0, 1fr)); grid-template-rows: repeat(var(--rows, 5), minmax(0, 1fr));
  --tile-w: calc((100vw - 2 * var(--pad) - (var(--cols, 2) - 1) * var(--gap)) / var(--cols, 2));
  --tile-h: calc((var(--board-h) - (var(--rows, 5) - 1) * var(--gap)) / var(--rows, 5));
  --price: calc(min(var(--tile-h) * .45, var(--tile-w) * .9 / (var(--chars, 10) * .6)) * var(--fit, 1));
  --label: min(calc(var(--tile-h) * .14), calc(var(--tile-w) * .07));
  --small: min(calc(var(--tile-h) * .1), calc(var(--tile-w) * .045));
}
${TV} ul.board li { box-sizing: border-box; min-height: 0; overflow: hidden; padding: calc(var(--tile-h) * .06) calc(var(--tile-w) * .04); grid-template-columns: minmax(0, 1fr) auto; grid-template-rows: auto minmax(0, 1fr) auto; align-items: center; gap: 0 1.5vw; background: #161b22; border: 1px solid #30363d; border-radius: 1.2vmin; }
${TV} .title { grid-area: 1 / 1; font-size: var(--label); line-height: 1.3; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
${TV} .change { grid-area: 1 / 2; font-size: var(--small); line-height: 1.3; }
${TV} .change.up { color: #3fb950; } ${TV} .change.down { color: #f85149; }
${TV} .change.up::before { content: "▲ "; } ${TV} .change.down::before { content: "▼ "; }
${TV} .value { grid-area: 2 / 1 / 3 / 3; min-width: 0; font-size: var(--price); line-height: 1.1; font-weight: bold; text-align: center; overflow: hidden; color: #fff; }
${TV} .unit { grid-area: 3 / 1; font-size: var(--small); line-height: 1.3; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; color: #8b949e; }
${TV} .time, ${TV} .age { grid-area: 3 / 2; font-size: var(--small); line-height: 1.3; white-space: nowrap; color: #8b949e; }
${TV} .age { color: #e3b341; }
${TV} li[data-status="closed"] .age { color: #8b949e; white-space: normal; }
${TV} li[data-status="stale"] .time { display: none; }
${TV} li[data-status="stale"], ${TV} li[data-status="unavailable"] { background: #0f1318; border-style: dashed; }
${TV} li[data-status="stale"] > :not(.age), ${TV} li[data-status="unavailable"] > * { opacity: .4; }
${TV} li.flash { animation: tv-rise 1.6s ease-out; }
${TV} li.flash[data-move="down"] { animation-name: tv-fall; }
@keyframes tv-rise { from { background: #1f5f2e; } to { background: #161b22; } }
@keyframes tv-fall { from { background: #7a1f1b; } to { background: #161b22; } }
`;
