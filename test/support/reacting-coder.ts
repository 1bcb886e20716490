import type { FakeReply } from './fake-chat-completions.ts';

/*
 * A Chat Completions model that codes by reacting to what it observes, one tool call per request:
 * it decides each step from the tool results in the request, never from a script of calls. Given
 * a repository, it checks it out, writes a test and then the code (with a deliberate bug), runs
 * the test, reads the failure and fixes the code from what the failure says it expected, runs the
 * test again until it passes, commits and pushes, and opens the pull request. When an observation
 * shows its workspace lost what it had written (a run resumed on another worker gets a new one),
 * it starts over from the checkout, clearing what is in the way, and writes the fix it already
 * learned.
 */

/** What the coder is asked to do. */
export interface CodingTask {
  readonly repo: string;
  /** The folder the checkout clones into. */
  readonly dir: string;
  readonly branch: string;
  readonly base: string;
  readonly greeting: string;
}

interface Action {
  readonly name: string;
  readonly args: Record<string, unknown>;
  readonly result: string;
}

interface WireMessage {
  readonly role: string;
  readonly content?: unknown;
  readonly tool_calls?: readonly {
    readonly id: string;
    readonly function: { readonly name: string; readonly arguments: string };
  }[];
  readonly tool_call_id?: string;
}

/** The tool calls of this turn, each with the result the request carries for it. */
function actionsOf(messages: readonly WireMessage[]): Action[] {
  const results = new Map<string, string>();
  for (const m of messages)
    if (m.role === 'tool' && m.tool_call_id)
      results.set(m.tool_call_id, typeof m.content === 'string' ? m.content : '');
  const actions: Action[] = [];
  for (const m of messages) {
    for (const call of m.tool_calls ?? []) {
      actions.push({
        name: call.function.name,
        args: argumentsOf(call.function.arguments),
        result: results.get(call.id) ?? '',
      });
    }
  }
  return actions;
}

/** A call's arguments as sent (an object), or none when they do not parse. */
function argumentsOf(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const FAILURE = /FAIL: expected '([^']*)', got '([^']*)'/;

/** The test the coder writes first: it says what it expected and what it got. */
function testScript(greeting: string): string {
  return [
    'out=$(sh greet.sh)',
    `if [ "$out" = "${greeting}" ]; then echo "PASS: greet.sh says ${greeting}"; else echo "FAIL: expected '${greeting}', got '$out'"; exit 1; fi`,
    '',
  ].join('\n');
}

/** The model as a responder for the Chat Completions fake. */
export function reactingCoder(task: CodingTask): (request: unknown) => FakeReply {
  let calls = 0;
  const call = (name: string, args: Record<string, unknown>): FakeReply => ({
    kind: 'completion',
    content: null,
    toolCalls: [{ id: `coder_${++calls}_${name}`, name, arguments: JSON.stringify(args) }],
  });
  const say = (content: string): FakeReply => ({ kind: 'completion', content });
  return (request) => {
    const body = request as { messages?: readonly WireMessage[]; tools?: readonly unknown[] };
    if (!body.tools || body.tools.length === 0)
      return say('I ran out of rounds before the pull request was open.');
    const actions = actionsOf(body.messages ?? []);
    // Calls count on from what the run already asked (a resumed run sends them all again).
    calls = Math.max(calls, actions.length);
    const last = actions.at(-1);
    const opened = actions.find(
      (a) => a.name === 'create_github_pull_request' && /pull request #\d+/i.test(a.result),
    );
    if (opened) return say(`Done: ${opened.result.split('\n')[0] ?? ''}`);
    if (actions.some((a) => a.name === 'workspace_exec' && a.result.includes('PUSHED')))
      return call('create_github_pull_request', {
        repo: task.repo,
        head: task.branch,
        base: task.base,
        title: 'Add a greeting',
        body: 'greet.sh prints the greeting; test.sh checks it and passes.',
      });

    // Everything from here on is about the workspace as it is since the last good checkout.
    const checkouts = actions
      .map((a, i) => ({ a, i }))
      .filter(({ a }) => a.name === 'checkout_github_repo' && a.result.includes('/workspace/'));
    const since = checkouts.length === 0 ? [] : actions.slice((checkouts.at(-1)?.i ?? 0) + 1);
    const learned = actions.map((a) => FAILURE.exec(a.result)?.[1]).find((x) => x !== undefined);
    const lastTest = since
      .filter((a) => a.name === 'workspace_exec' && a.args['command'] === 'sh test.sh')
      .at(-1);
    const lost =
      lastTest !== undefined && !lastTest.result.includes('PASS') && !FAILURE.test(lastTest.result);
    if (checkouts.length === 0 || lost) {
      // A checkout refused because the folder is there (a lost workspace's leftovers): clear it.
      if (last?.name === 'checkout_github_repo' && /already exists/.test(last.result))
        return call('workspace_exec', { command: `rm -rf ${task.dir}` });
      return call('checkout_github_repo', { repo: task.repo });
    }
    const wrote = (path: string) =>
      since.filter((a) => a.name === 'workspace_write_file' && a.args['path'] === path);
    if (wrote(`${task.dir}/test.sh`).length === 0)
      return call('workspace_write_file', {
        path: `${task.dir}/test.sh`,
        content: testScript(task.greeting),
      });
    const code = wrote(`${task.dir}/greet.sh`);
    if (code.length === 0) {
      // The first draft has a typo, unless an earlier failure already said what is expected.
      const greeting = learned ?? task.greeting.replace('hello', 'helo');
      return call('workspace_write_file', {
        path: `${task.dir}/greet.sh`,
        content: `echo "${greeting}"\n`,
      });
    }
    const lastWrite = since.lastIndexOf(code.at(-1)!);
    const tested = since.slice(lastWrite + 1).find((a) => a.name === 'workspace_exec');
    if (!tested) return call('workspace_exec', { command: 'sh test.sh', cwd: task.dir });
    const failure = FAILURE.exec(tested.result);
    if (failure)
      return call('workspace_write_file', {
        path: `${task.dir}/greet.sh`,
        content: `echo "${failure[1]}"\n`,
      });
    return call('workspace_exec', {
      command: `git checkout -q -b ${task.branch} && git add greet.sh test.sh && git commit -q -m "Add a greeting with its test" && git push -q origin ${task.branch} && echo PUSHED`,
      cwd: task.dir,
    });
  };
}
