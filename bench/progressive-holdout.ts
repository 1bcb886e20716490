import type { Intent } from './progressive-intents.ts';

/**
 * A set written after the tokenizer and its word lists were last changed and never tuned
 * against: its recall@5 is the figure for needs the ranking has not seen. Keep it so: a miss
 * here is reported, not fixed with a word list entry (move the set into INTENTS, as the first
 * three were, and write a new one first).
 */
export const HOLDOUT: readonly Intent[] = [
  { ask: 'could you open a PR that bumps the version', expect: ['github__create_pull_request'] },
  { ask: 'what files does pull request 91 change', expect: ['github__get_pull_request_files'] },
  { ask: 'track this as a github issue: search is slow', expect: ['github__create_issue'] },
  { ask: 'show open PRs targeting main', expect: ['github__list_pull_requests'] },
  { ask: 'go ahead and merge PR 14 with squash', expect: ['github__merge_pull_request'] },
  {
    ask: 'rebase my pull request branch onto the latest base',
    expect: ['github__update_pull_request_branch'],
  },
  {
    ask: 'who reviewed PR 3 and what did they decide',
    expect: ['github__get_pull_request_reviews'],
  },
  { ask: 'search the code on github for "TODO(security)"', expect: ['github__search_code'] },
  { ask: 'cut a branch named hotfix-12 in the github repo', expect: ['github__create_branch'] },
  { ask: 'upload these two files to gitlab in one commit', expect: ['gitlab__push_files'] },
  {
    ask: 'gitlab: new merge request from fix/login into main',
    expect: ['gitlab__create_merge_request'],
  },
  {
    ask: 'message the #support channel that the fix is live',
    expect: ['slack__slack_post_message'],
  },
  { ask: 'reply to the thread in slack saying done', expect: ['slack__slack_reply_to_thread'] },
  {
    ask: 'what have people been saying in #random lately',
    expect: ['slack__slack_get_channel_history'],
  },
  { ask: 'list all members of the slack workspace', expect: ['slack__slack_get_users'] },
  { ask: 'put an eyes emoji on that slack message', expect: ['slack__slack_add_reaction'] },
  { ask: 'run select * from orders limit 5', expect: ['postgres__query'] },
  { ask: 'what is the total revenue in the sales table', expect: ['postgres__query'] },
  { ask: 'visit the pricing page', expect: ['puppeteer__puppeteer_navigate'] },
  { ask: 'capture the page as an image', expect: ['puppeteer__puppeteer_screenshot'] },
  { ask: 'click on the "Accept cookies" link', expect: ['puppeteer__puppeteer_click'] },
  { ask: 'put my username into the login field', expect: ['puppeteer__puppeteer_fill'] },
  { ask: 'evaluate window.location in the browser', expect: ['puppeteer__puppeteer_evaluate'] },
  { ask: 'best route to drive from Oslo to Bergen', expect: ['google_maps__maps_directions'] },
  {
    ask: 'how long is the commute from Brooklyn to Midtown by subway',
    expect: ['google_maps__maps_distance_matrix', 'google_maps__maps_directions'],
  },
  { ask: 'give me lat and lng for Times Square', expect: ['google_maps__maps_geocode'] },
  {
    ask: 'restaurants open near the conference venue',
    expect: ['google_maps__maps_search_places', 'brave_search__brave_local_search'],
  },
  { ask: 'what is the elevation of Mount Rainier', expect: ['google_maps__maps_elevation'] },
  {
    ask: 'look this up on the internet: best practices for retries',
    expect: ['brave_search__brave_web_search'],
  },
  { ask: 'print the first 20 lines of main.py', expect: ['filesystem__read_text_file'] },
  { ask: 'write hello world to greet.txt', expect: ['filesystem__write_file'] },
  { ask: 'rename the draft file to final', expect: ['filesystem__move_file'] },
  { ask: 'which files are in the current directory', expect: ['filesystem__list_directory'] },
  { ask: 'find any file named Dockerfile in the project', expect: ['filesystem__search_files'] },
  {
    ask: 'when was notes.md last changed and how large is it',
    expect: ['filesystem__get_file_info'],
  },
  {
    ask: 'store a new entity for the customer Acme in the knowledge graph',
    expect: ['memory__create_entities'],
  },
  { ask: 'what does the graph know about Acme', expect: ['memory__search_nodes'] },
  { ask: 'remove the observation that Ada is on leave', expect: ['memory__delete_observations'] },
  { ask: 'plan this out carefully in steps', expect: ['sequential_thinking__sequentialthinking'] },
  { ask: 'compute 12 plus 30', expect: ['everything__get-sum'] },
];
