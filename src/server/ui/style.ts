/** The UI's one stylesheet, served at /assets/mesh.css. */
export const STYLESHEET = `
:root { --fg: #1d2330; --muted: #667085; --line: #e4e7ec; --bg: #f8f9fb; --accent: #3a5bd9;
  --ok: #1a7f4b; --warn: #b54708; --bad: #b42318; font: 15px/1.45 system-ui, sans-serif; color: var(--fg); }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); }
header { display: flex; align-items: center; gap: 2rem; padding: .7rem 1.5rem; background: #fff; border-bottom: 1px solid var(--line); }
header nav { display: flex; gap: 1.2rem; align-items: center; flex: 1; }
header nav form { margin-left: auto; }
.brand { font-weight: 700; font-size: 1.1rem; color: var(--fg); text-decoration: none; }
a { color: var(--accent); }
main { max-width: 1100px; margin: 0 auto; padding: 1.2rem 1.5rem 3rem; }
h1 { font-size: 1.5rem; margin: .4rem 0 1rem; }
h2 { font-size: 1.15rem; margin: 1.4rem 0 .4rem; }
h2 small { color: var(--muted); font-weight: 400; font-size: .85rem; }
h3 { font-size: .95rem; margin: 1rem 0 .4rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.muted { color: var(--muted); } .small { font-size: .8rem; }
table { width: 100%; border-collapse: collapse; background: #fff; border: 1px solid var(--line); }
th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .8rem; color: var(--muted); font-weight: 600; }
.package { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: .3rem 1rem 1rem; margin: 1rem 0; }
.package table { border: 0; }
details.package { padding: .6rem 1rem; } details.package > summary { cursor: pointer; }
details.package[open] > summary { margin-bottom: .5rem; }
.badge { display: inline-block; font-size: .75rem; padding: .05rem .45rem; border-radius: 999px; background: #eef1f6; }
.badge.effect, .badge.secret { background: #fdecea; color: var(--bad); }
.badge.error { background: #fdecea; color: var(--bad); font-weight: 600; }
.badge.query { background: #e7f5ee; color: var(--ok); }
.badge.public { background: #e8eefc; color: var(--accent); }
.present { color: var(--ok); font-weight: 600; } .absent { color: var(--warn); font-weight: 600; }
.fields { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: .8rem; }
.field { border: 1px solid var(--line); border-radius: 6px; padding: .6rem .8rem; }
.field p { margin: .3rem 0; }
.key { font-family: ui-monospace, monospace; font-weight: 600; }
label { display: block; margin: .2rem 0; }
input, select, textarea { font: inherit; padding: .35rem .5rem; border: 1px solid #c9ced6; border-radius: 5px; width: 100%; margin-top: .2rem; }
input[type=checkbox] { width: auto; }
button { font: inherit; padding: .35rem .9rem; border: 0; border-radius: 5px; background: var(--accent); color: #fff; cursor: pointer; }
a.button { display: inline-block; padding: .35rem .9rem; border-radius: 5px; background: var(--accent); color: #fff; text-decoration: none; }
button.link { background: none; color: var(--accent); padding: 0; }
button.danger { background: var(--bad); }
button.toggle.on { background: var(--ok); } button.toggle.off { background: #98a2b3; }
button:disabled { opacity: .45; cursor: not-allowed; }
form.inline { display: inline; } form.inline input { width: auto; }
.actions { margin: .6rem 0; display: flex; gap: .5rem; }
.audiences label { display: inline-block; margin-right: 1rem; }
.stack { display: grid; gap: .4rem; max-width: 520px; background: #fff; padding: 1rem; border: 1px solid var(--line); border-radius: 8px; }
.flash { padding: .6rem .9rem; border-radius: 6px; } .flash.ok { background: #e7f5ee; } .flash.error { background: #fdecea; }
.tabs { display: flex; gap: .3rem; border-bottom: 1px solid var(--line); margin-bottom: 1rem; }
.tab { padding: .45rem .9rem; text-decoration: none; color: var(--muted); border-bottom: 2px solid transparent; }
.tab.active { color: var(--fg); border-color: var(--accent); font-weight: 600; }
.chat { display: grid; grid-template-columns: 240px 1fr; gap: 1rem; }
.chat aside { display: flex; flex-direction: column; gap: .2rem; }
.chat aside a { padding: .4rem .6rem; border-radius: 5px; text-decoration: none; color: var(--fg); font-size: .85rem; }
.chat aside a.active { background: #e8eefc; }
.messages { list-style: none; padding: 0; display: flex; flex-direction: column; gap: .6rem; }
.message { max-width: 80%; padding: .5rem .8rem; border-radius: 8px; background: #fff; border: 1px solid var(--line); }
.message.inbound { align-self: flex-end; background: #e8eefc; }
.message .meta { font-size: .75rem; color: var(--muted); }
.message .body, .step .body { white-space: pre-wrap; margin: .2rem 0; }
.message.draft { border-style: dashed; }
.message.progress { font-size: .9rem; background: #fafafa; border-left: 3px solid var(--muted); }
.message.draft .body::after, .draft-reply .body::after { content: '▍'; color: var(--muted); }
.draft-reply { margin: .6rem 0; padding: .5rem .8rem; border: 1px dashed var(--line); border-radius: 8px; background: #fff; }
.draft-reply .meta { font-size: .75rem; color: var(--muted); }
.draft-reply .body { white-space: pre-wrap; margin: .2rem 0; }
.send { display: grid; gap: .4rem; }
.steps { list-style: none; padding: 0; display: flex; flex-direction: column; gap: .5rem; }
.step { background: #fff; border: 1px solid var(--line); border-left: 4px solid #c9ced6; border-radius: 6px; padding: .5rem .9rem; }
.step.model_request { border-left-color: var(--accent); } .step.tool_call { border-left-color: var(--warn); }
.step.observation { border-left-color: var(--ok); } .step.reply { border-left-color: #7a5af8; }
.step-head .seq { display: inline-block; min-width: 1.6rem; color: var(--muted); }
.step p { margin: .3rem 0; } .label { font-weight: 600; margin-right: .4rem; }
.withheld ul, .loading ul { margin: .2rem 0; }
pre { background: #f2f4f7; padding: .5rem; border-radius: 5px; overflow-x: auto; white-space: pre-wrap; word-break: break-word; margin: .3rem 0; }
.artifacts { list-style: none; padding: 0; margin: .3rem 0; }
.artifacts li { margin: .3rem 0; }
.artifacts img { display: block; max-width: 100%; max-height: 24rem; border: 1px solid #dde1e7; border-radius: 5px; }
.artifacts audio { display: block; }
.summary { display: grid; grid-template-columns: 160px 1fr; gap: .2rem .8rem; background: #fff; padding: .8rem 1rem; border: 1px solid var(--line); border-radius: 8px; }
.summary dt { color: var(--muted); } .summary dd { margin: 0; }
.status.succeeded, .status.completed { color: var(--ok); } .status.failed, .status.refused, .status.unknown { color: var(--bad); }
ol.activity { list-style: none; margin: .3rem 0 0; padding: 0; font-size: .8rem; color: var(--muted); }
ol.activity li::before { content: '· '; }
.charts { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); }
form.inline label { display: inline-block; margin-right: .6rem; } form.inline select { width: auto; }
figure.chart { margin: 0; background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: .6rem .8rem; }
figure.chart figcaption { font-weight: 600; margin-bottom: .3rem; }
figure.chart svg { display: block; width: 100%; height: auto; }
figure.chart text { font-size: 22px; fill: var(--muted); } figure.chart line.axis { stroke: var(--line); }
.series-0 { fill: #3a5bd9; } .series-1 { fill: #1a7f4b; } .series-2 { fill: #b54708; } .series-3 { fill: #7a5af8; }
.series-4 { fill: #0e9384; } .series-5 { fill: #c11574; } .series-6 { fill: #667085; } .series-7 { fill: #98a2b3; }
.legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .3rem 1rem; font-size: .85rem; }
.legend svg.swatch { width: .8rem; height: .8rem; vertical-align: -1px; }
td.latency svg { width: 10rem; height: .6rem; } td.latency rect.p95 { fill: #fbd8b4; } td.latency rect.p50 { fill: var(--warn); }
.field-error { display: block; color: var(--bad); font-size: .85rem; margin-top: .15rem; }
.endpoint { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: .4rem 1rem .6rem; margin: .6rem 0; }
.endpoint h3.route { text-transform: none; letter-spacing: 0; color: var(--fg); font-size: 1rem; }
.method { display: inline-block; min-width: 3.6rem; font-size: .75rem; font-weight: 700; padding: .1rem .4rem; border-radius: 4px; background: #e8eefc; color: var(--accent); text-align: center; }
.method.post, .method.put, .method.patch { background: #e7f5ee; color: var(--ok); } .method.delete { background: #fdecea; color: var(--bad); }
nav.tags { display: flex; flex-wrap: wrap; gap: .3rem .8rem; }
.run-error { margin: .3rem 0 0; padding: .35rem .6rem; border-radius: 5px; background: #fdecea; color: var(--bad); font-size: .85rem; }
.headline { padding: .6rem .9rem; border-radius: 6px; margin: .4rem 0 .8rem; }
.headline.error { background: #fdecea; color: var(--bad); } .headline.waiting { background: #fff4e5; }
.meters { list-style: none; padding: 0; margin: 0; display: grid; gap: .15rem; }
.meter-row { display: grid; grid-template-columns: 9rem minmax(6rem, 14rem) 1fr; gap: .6rem; align-items: center; font-size: .85rem; }
.meter-row meter { width: 100%; }
.duration { font-size: .8rem; color: var(--muted); margin-left: .4rem; }
svg.waterfall { display: block; width: 100%; height: 6px; margin: .25rem 0 .1rem; }
svg.waterfall rect { fill: #98a2b3; } svg.waterfall rect.track { fill: #eef1f6; }
svg.waterfall.model_request rect:not(.track) { fill: var(--accent); } svg.waterfall.tool_call rect:not(.track) { fill: var(--warn); }
svg.waterfall.observation rect:not(.track) { fill: var(--ok); }
details.withheld summary { cursor: pointer; }
.login { max-width: 420px; margin: 4rem auto; background: #fff; padding: 1.5rem; border: 1px solid var(--line); border-radius: 8px; }
h1 code { word-break: break-all; }
code { overflow-wrap: anywhere; }
canvas.live-view { display: block; max-width: 100%; height: auto; border: 1px solid var(--border, #ccc); cursor: crosshair; }
canvas.live-view:focus { outline: 2px solid #36c; }
.live-state { font-weight: 600; }
@media (max-width: 640px) {
  header { flex-wrap: wrap; gap: .5rem; padding: .6rem .8rem; }
  header nav { flex-wrap: wrap; gap: .4rem .9rem; }
  main { padding: .8rem .7rem 2rem; }
  .chat { grid-template-columns: 1fr; }
  .chat aside { flex-direction: row; overflow-x: auto; }
  .message { max-width: 100%; }
  .summary { grid-template-columns: 1fr; }
  .meter-row { grid-template-columns: 1fr 1fr; }
  .meter-row .meter-text { grid-column: 1 / -1; }
  table { display: block; overflow-x: auto; }
  .tabs { overflow-x: auto; }
  .stack { max-width: 100%; }
  .fields { grid-template-columns: 1fr; }
}
`;
