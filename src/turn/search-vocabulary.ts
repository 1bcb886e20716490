/*
 * The word lists tool_search reads queries with (see search-terms.ts for how they apply). They
 * are general vocabulary of the kinds of work agents are connected to — code hosting, chat,
 * incidents, databases, browsers, maps, the web, files, knowledge graphs, reasoning — not the
 * names of any one server's operations: a server that calls its operation `create_ticket` is
 * found by "file a bug" the same way one that calls it `create_issue` is.
 */

/** Words that carry no meaning for finding an operation. */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an the to of for in on at by with from into onto and or nor but my me i im we our us you ' +
    'your it its this that these those some any there here about up out so just let lets want ' +
    'wanna need needs like also now then please can could would should will shall do does did ' +
    'done is are was were be been being am has have had how via per as if than very much more ' +
    'most thing things stuff something someone anything one ones tool tools use using able help ' +
    'mcp hey ok okay kindly quick quickly real really currently them they their him her his she ' +
    'he it s t d ll re ve no not yes before after again today yesterday tomorrow'
  ).split(' '),
);

/** Abbreviations and their words; applied to documents and queries alike. */
export const ABBREVIATIONS: Readonly<Record<string, readonly string[]>> = {
  pr: ['pull', 'request'],
  prs: ['pull', 'requests'],
  mr: ['merge', 'request'],
  mrs: ['merge', 'requests'],
  repo: ['repository'],
  repos: ['repositories'],
  dir: ['directory'],
  dirs: ['directories'],
  msg: ['message'],
  msgs: ['messages'],
  db: ['database'],
  env: ['environment'],
  envs: ['environment'],
  config: ['configuration'],
  cfg: ['configuration'],
  dm: ['direct', 'message'],
  dms: ['direct', 'messages'],
  org: ['organization'],
  orgs: ['organizations'],
  info: ['information'],
  img: ['image'],
  pic: ['picture'],
  pics: ['pictures'],
  doc: ['document'],
  docs: ['documents'],
  addr: ['address'],
  loc: ['location'],
  coords: ['coordinates'],
  lat: ['latitude'],
  lng: ['longitude'],
  lon: ['longitude'],
  js: ['javascript'],
  sha: ['commit', 'sha'],
  ls: ['list'],
  cat: ['read'],
  stat: ['information'],
  du: ['size'],
  touch: ['create', 'file'],
  pwd: ['directory'],
  rm: ['remove'],
  mv: ['move'],
  cp: ['copy'],
  mkdir: ['create', 'directory'],
  desc: ['description'],
  num: ['number'],
  calc: ['calculate'],
  ts: ['timestamp'],
  url: ['url', 'link'],
  urls: ['urls', 'links'],
  ci: ['ci', 'status', 'checks'],
  sql: ['sql', 'query'],
  kb: ['knowledge'],
  oncall: ['on', 'call'],
  txt: ['text'],
  md: ['markdown'],
  vars: ['variables'],
  eta: ['time', 'duration'],
  lgtm: ['approve', 'review'],
  wip: ['draft'],
};

/**
 * Words that name the same thing as words operations use ("bug" → issue): widened at a weight
 * close to the word itself.
 */
export const EQUIVALENTS: Readonly<Record<string, string>> = {
  // Code hosting and trackers.
  bug: 'issue',
  ticket: 'issue',
  defect: 'issue',
  tracker: 'issue',
  backlog: 'issue',
  changeset: 'commit',
  revision: 'commit',
  codebase: 'repository code',
  // Chat.
  room: 'channel',
  announcement: 'message',
  emoji: 'reaction',
  // Browsers.
  dropdown: 'select',
  combobox: 'select',
  webpage: 'page',
  website: 'page url',
  site: 'page url',
  textbox: 'input field',
  // Maps.
  altitude: 'elevation',
  latitude: 'coordinates',
  longitude: 'coordinates',
  route: 'directions',
  commute: 'travel distance time',
  // Numbers.
  plus: 'sum',
  arithmetic: 'sum',
  math: 'sum',
  total: 'sum',
  // The web.
  internet: 'web',
  online: 'web',
  // Files and images.
  folder: 'directory',
  photo: 'image',
  picture: 'image',
  snapshot: 'screenshot',
  big: 'size',
  large: 'size',
  // Reasoning.
  reason: 'thought thinking',
  think: 'thought thinking',
  ponder: 'thought thinking',
  deliberate: 'thought thinking',
  reflect: 'thought thinking',
};

/**
 * Phrases whose words mislead on their own ("file a bug" is not about files, "how long" not
 * about length), rewritten before the words are read.
 */
export const PHRASES: readonly (readonly [RegExp, string])[] = [
  // What a need points at says which kind of operation it is: a web address, a #channel.
  [/\bhttps?:\/\/\S+/giu, ' url page '],
  [/(^|\s)#[\p{L}][\p{L}\p{N}_-]*/gu, ' channel '],
  [/\blet\s+(\S+\s+){1,4}?know\b/giu, 'notify post message'],
  [
    /\b(file|log|raise|put up|open up|spin up|kick off) (an?|the|this|that|some|my|our) /giu,
    'create $2 ',
  ],
  [/\bopen (an?|new|up an?) /giu, 'create $1 '],
  [/\bdrop (an?|me an?) (note|line|message|word)\b/giu, 'post message'],
  [/\bselect\b.+\bfrom\b/giu, '$& sql query'],
  [/\bon[- ]call\b/giu, 'oncall'],
  [/\badd (\d[\d.]*) (and|to|plus) (\d)/giu, 'sum $1 $2 $3'],
  [/\bhow long\b/giu, 'time duration'],
  [/\bhow far\b/giu, 'distance'],
  [/\b(get|go|drive|walk) from\b/giu, 'directions travel from'],
  [/\bhow (high|tall)\b/giu, 'elevation'],
  [/\bsea level\b/giu, 'elevation'],
  [/\b(close|next) to\b/giu, 'nearby'],
  [/\bstep[- ]by[- ]step\b/giu, 'thought steps'],
  [/\b(work|think|reason|talk) (it |this |that )?through\b/giu, 'thought thinking'],
  [/\bbreak (it |this |that )?down\b/giu, 'thought steps'],
  [/\bby (car|bike|train|bus|foot)\b/giu, 'travel mode'],
  [/\bthumbs[- ]up\b|\+1\b/giu, 'reaction'],
  [/\bcatch (me )?up\b/giu, 'recent history messages'],
  [/\bwhat'?s? (at|is at)\b/giu, 'address'],
  [/\blooks? like\b/giu, 'view'],
  [/\bmouse (over|on)\b/giu, 'hover'],
  [/\bscreen ?(grab|cap|shot)\b/giu, 'screenshot'],
  [/\bhow many\b/giu, 'count query'],
  [/\bwho is\b/giu, 'user profile'],
  // "Google it" is a web search, not the maps of a server that happens to be Google's.
  [/\bgoogle (it|this|that|the|for|how|what|why|whether|around)\b/giu, 'web search $1'],
  // "Track this as an issue" files one: the words after it are the text.
  [/\b(track|log|capture|record) (this|it|that) as\b/giu, 'create'],
  // "Open now", "open late": opening hours, not opening something.
  [/\b(open|closed) (now|late|today|tonight|near|nearby|around|on)\b/giu, 'hours $2'],
  // Coordinates asked for a named place are geocoding (the reverse starts from numbers).
  [
    /\b(lat(itude)?( and |\/|, ?)(lng|lon|long|longitude)|coordinates|coords|gps)( for| of)\b/giu,
    'geocode address coordinates$5',
  ],
];
