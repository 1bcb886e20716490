import type { Intent } from './progressive-intents.ts';

/**
 * A set written after the tokenizer and its word lists were last changed and never tuned
 * against: its recall@5 is the figure for needs the ranking has not seen. Keep it so: a miss
 * here is reported, not fixed with a word list entry (move the set into INTENTS, as the first
 * four were, and write a new one first). This fifth set was written blind — from the catalog's
 * tool names and descriptions alone, by someone who had not read the ranking, its word lists or
 * the other sets — 50 asks, eight of which need two tools.
 */
export const HOLDOUT: readonly Intent[] = [
  {
    ask: "quick sanity check on the tool connection — just send back the text 'ping 123' exactly as is",
    expect: ['everything__echo'],
  },
  {
    ask: "whats 48213 + 99871? use the tool for it, not ur head, I'm testing something",
    expect: ['everything__get-sum'],
  },
  {
    ask: "I think the API key isn't making it into the MCP server process. can you show me what variables it's actually running with?",
    expect: ['everything__get-env'],
  },
  {
    ask: 'take the README at https://raw.githubusercontent.com/foo/bar/main/README.md and give me a gzipped copy I can download',
    expect: ['everything__gzip-file-as-resource'],
  },
  {
    ask: 'kick off a fake slow job on the demo server, ~30 seconds in 6 stages, I want to see whether my progress bar updates',
    expect: ['everything__trigger-long-running-operation'],
  },
  {
    ask: "switch on the random log noise from the test server, I'm checking that my log viewer handles different severities",
    expect: ['everything__toggle-simulated-logging'],
  },
  {
    ask: 'open a bug in acme/webapp on github: login button does nothing on safari 17',
    expect: ['github__create_issue'],
  },
  {
    ask: "what's still open in the octo-org/widgets github repo that's tagged as a bug? just give me the list",
    expect: ['github__list_issues'],
  },
  {
    ask: 'I want real-world examples of people calling useSyncExternalStore alongside zustand — look through public github code',
    expect: ['github__search_code'],
  },
  {
    ask: 'can u find the github account of a dev called Sindre Sorhus',
    expect: ['github__search_users'],
  },
  {
    ask: 'make me my own copy of facebook/react under my github account so I can hack on it',
    expect: ['github__fork_repository'],
  },
  {
    ask: 'if CI is green on PR #42 in acme/api, go ahead and squash it into main',
    expect: ['github__get_pull_request_status', 'github__merge_pull_request'],
  },
  {
    ask: 'which files did pull request 317 in vercel/next.js touch?',
    expect: ['github__get_pull_request_files'],
  },
  {
    ask: "sign off on PR #12 in my-org/infra with the note 'lgtm, ship it'",
    expect: ['github__create_pull_request_review'],
  },
  {
    ask: 'issue #88 in acme/webapp is fixed now, mark it closed on github',
    expect: ['github__update_issue'],
  },
  {
    ask: 'PR 55 over in acme/api has fallen behind main, bring it up to date pls',
    expect: ['github__update_pull_request_branch'],
  },
  {
    ask: 'did anyone approve or ask for changes on kubernetes/kubernetes pull #903 yet?',
    expect: ['github__get_pull_request_reviews'],
  },
  {
    ask: 'commit src/a.ts, src/b.ts and the README together as one commit to the feature/x branch of acme/webapp on github',
    expect: ['github__push_files'],
  },
  {
    ask: 'my feature/dark-mode branch in acme/webapp is ready — get it proposed for merging into main on github',
    expect: ['github__create_pull_request'],
  },
  {
    ask: "whats eating all the space in ~/Downloads? show me what's in there and how big each thing is",
    expect: ['filesystem__list_directory_with_sizes'],
  },
  {
    ask: 'find every .env file anywhere under /projects, however deep',
    expect: ['filesystem__search_files'],
  },
  {
    ask: 'when was config/settings.yaml last changed, and who can write to it?',
    expect: ['filesystem__get_file_info'],
  },
  {
    ask: 'make an archive/2023 folder and put report_q1.pdf and report_q2.pdf in there',
    expect: ['filesystem__create_directory', 'filesystem__move_file'],
  },
  {
    ask: "in src/config.py flip DEBUG = True to DEBUG = False, don't touch anything else in the file",
    expect: ['filesystem__edit_file'],
  },
  {
    ask: 'give me the whole nested layout of the ./repo folder as a tree, skip node_modules',
    expect: ['filesystem__directory_tree'],
  },
  {
    ask: "new coworkers: Lena (designer) and Raj (backend dev). remember both of them, and that Lena is Raj's manager",
    expect: ['memory__create_entities', 'memory__create_relations'],
  },
  {
    ask: 'add to what you know about me: I went vegetarian last month',
    expect: ['memory__add_observations'],
  },
  {
    ask: 'anything in your memory to do with kubernetes? dig it up',
    expect: ['memory__search_nodes'],
  },
  {
    ask: "show me absolutely everything you've remembered so far, the whole thing",
    expect: ['memory__read_graph'],
  },
  {
    ask: "Tom doesn't work at Acme anymore — drop that connection between them from your memory, keep both of them though",
    expect: ['memory__delete_relations'],
  },
  {
    ask: 'let #announcements know standup is moved to 10:30 tomorrow',
    expect: ['slack__slack_post_message'],
  },
  {
    ask: 'put a :white_check_mark: on this message so they know I saw it https://acme.slack.com/archives/C0ABC123/p1700000000123456',
    expect: ['slack__slack_add_reaction'],
  },
  {
    ask: 'catch me up on what people said under this thread https://acme.slack.com/archives/C01234OPS/p1712345678901234 and then answer in the thread that the fix is live',
    expect: ['slack__slack_get_thread_replies', 'slack__slack_reply_to_thread'],
  },
  {
    ask: 'how many people are in our slack? need a headcount with names',
    expect: ['slack__slack_get_users'],
  },
  {
    ask: "how many orders came in yesterday? they're in the orders table in our db",
    expect: ['postgres__query'],
  },
  {
    ask: "pull last month's signups out of the database and save them as a csv at exports/signups.csv",
    expect: ['postgres__query', 'filesystem__write_file'],
  },
  {
    ask: 'go to https://example.com/pricing and snap a picture of how it looks',
    expect: ['puppeteer__puppeteer_navigate', 'puppeteer__puppeteer_screenshot'],
  },
  {
    ask: "on the signup page you've got open, type jo@example.com into the email box and hit the submit button",
    expect: ['puppeteer__puppeteer_fill', 'puppeteer__puppeteer_click'],
  },
  {
    ask: 'run a bit of js in the page to count how many <img> tags there are',
    expect: ['puppeteer__puppeteer_evaluate'],
  },
  {
    ask: "choose 'Canada' in the country dropdown on that form",
    expect: ['puppeteer__puppeteer_select'],
  },
  {
    ask: 'set up a new private gitlab project called billing-service, with a readme to start',
    expect: ['gitlab__create_repository'],
  },
  {
    ask: "request a merge of feature/payments into main on gitlab for project 4821, title it 'Add Stripe webhooks'",
    expect: ['gitlab__create_merge_request'],
  },
  {
    ask: 'in our gitlab project group/infra cut a hotfix-ssl branch off main',
    expect: ['gitlab__create_branch'],
  },
  {
    ask: 'show me the Dockerfile from the develop branch of gitlab project mygroup/api',
    expect: ['gitlab__get_file_contents'],
  },
  {
    ask: "I've got 40.6892, -74.0445 from a photo's metadata. what street address is that?",
    expect: ['google_maps__maps_reverse_geocode'],
  },
  {
    ask: 'walking route from Union Station to the Capitol in DC, turn by turn',
    expect: ['google_maps__maps_directions'],
  },
  {
    ask: 'how high above sea level is 1600 Pennsylvania Ave NW, Washington?',
    expect: ['google_maps__maps_geocode', 'google_maps__maps_elevation'],
  },
  {
    ask: 'we ship from Reno, Fresno and Sacramento. for customers in Eugene, Boise, Las Vegas and San Diego, how long is the drive from each warehouse to each customer?',
    expect: ['google_maps__maps_distance_matrix'],
  },
  {
    ask: "what's the latest news on the EU AI Act being enforced? want a few recent articles",
    expect: ['brave_search__brave_web_search'],
  },
  {
    ask: "help me work through this scheduling puzzle carefully — 6 people, 3 rooms, a bunch of constraints. go one piece at a time and backtrack if something doesn't fit",
    expect: ['sequential_thinking__sequentialthinking'],
  },
];
